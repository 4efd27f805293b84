"""The ``posterior_predictive`` group of a result: replicated labels of the training rows, and features.

Every fit with draws (NUTS, Gibbs, exact conjugate or Laplace draws) stores, beside ``log_likelihood``, the group
ArviZ's predictive checks read (``arviz_plots.plot_ppc_pava``, ``arviz_stats.loo_pit`` and friends, called on the
result as it is):

``y`` (chain, draw, obs)
    One replicated class code per posterior draw ``s`` and training row ``i``,
    ``y_rep[s, i] ~ Categorical(P(class | x_i, theta_s))``, the conditional class probabilities of the family's
    ``class_log_proba`` (the same distribution whose log density of the observed class is ``log_likelihood``'s
    ``y``; for the generative families the conditional, not the joint). Coded like ``observed_data``'s ``y``
    (0 .. classes - 1, attr ``class_names``), stored as the smallest signed integer type that holds the codes.
``X`` (replicate, obs, model_feature) — generative families only (naive Bayes, gcc)
    Replicated features of the training rows: for each of ``R`` evenly spaced draws (coordinates
    ``replicate_chain`` and ``replicate_draw`` name them), ``x_rep[r, i] ~ p(x | class = y_rep[s_r, i], theta_{s_r})``
    from the family's own ``sample_features`` (its one hook), in the model's inputs (after treatment coding)
    with the standardisation undone, i.e. in the units of ``constant_data``'s ``X``, as float32 (exact for codes
    and counts below 2**24; a replicate needs no more digits). ``R`` is capped (:func:`feature_replicates`: at
    most :data:`MAX_FEATURE_REPLICATES` draws and :data:`MAX_REPLICATED_FEATURE_VALUES` values, 8 MiB) because
    draws x rows x features grows fast (4,000 draws of penguins' 333 rows x 7 columns would be 75 MB in float64;
    200 replicates in float32 are 1.9 MB); the labels keep every draw, as ``loo_pit`` weighs them with the draws
    of ``log_likelihood``.

Randomness: the labels of rows ``256 b .. 256 b + 255`` come from ``numpy.random.default_rng(SeedSequence(seed,
spawn_key=(LABEL_STREAM, b)))``, the features from ``SeedSequence(seed, spawn_key=(FEATURE_STREAM,))``, ``seed``
being the fit's ``random_seed``: the same seed gives the same group, however the rows are cut into tiles and
whatever the number of threads. A result's root attr ``posterior_predictive`` (read by
:class:`~bayesclass.inference.result.PosteriorPredictiveRecord`) records the seed and the caps.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from bayesclass._lazy import lazy_import
from bayesclass.inference.prediction.tiles import map_row_chunks, tile_rows_for
from bayesclass.inference.result import PosteriorPredictiveRecord
from bayesclass.models.base import GenerativeClassifierModel

if TYPE_CHECKING:
    import xarray as xr
else:
    xr = lazy_import("xarray")

__all__ = [
    "LABEL_BLOCK_ROWS",
    "MAX_FEATURE_REPLICATES",
    "MAX_REPLICATED_FEATURE_VALUES",
    "feature_replicates",
    "label_dtype",
    "replicated_features",
    "training_draws",
]

#: rows per block of uniforms of the replicated labels (one seeded stream per block: tiling cannot change them)
LABEL_BLOCK_ROWS = 256
#: the most posterior draws whose features are replicated (the labels keep every draw); as many as
#: :func:`~bayesclass.inference.criticism.predictive_checks.posterior_predictive_check` compares by default
MAX_FEATURE_REPLICATES = 200
#: the most replicated feature values (replicates x rows x model inputs) a result stores: 8 MiB of float32
MAX_REPLICATED_FEATURE_VALUES = 2**21
#: spawn keys of the two random streams derived from the fit's seed
LABEL_STREAM, FEATURE_STREAM = 0x5050_4C41, 0x5050_4645


def label_dtype(n_classes: int) -> np.dtype:
    """The smallest signed integer type that holds the codes ``0 .. n_classes - 1``.

    Parameters
    ----------
    n_classes : int
        The number of classes.

    Returns
    -------
    numpy.dtype
    """
    return np.promote_types(np.int8, np.min_scalar_type(-max(1, int(n_classes))))


def feature_replicates(n_draws: int, n_obs: int, n_inputs: int) -> int:
    """How many draws get replicated features: ``min(draws, MAX_FEATURE_REPLICATES, MAX_VALUES // (rows x inputs))``.

    Parameters
    ----------
    n_draws : int
        Posterior draws over all chains.
    n_obs, n_inputs : int
        Training rows and model inputs.

    Returns
    -------
    int
        The number of replicates (0 where one replicate alone would exceed the value cap).
    """
    return int(min(n_draws, MAX_FEATURE_REPLICATES, MAX_REPLICATED_FEATURE_VALUES // max(1, n_obs * n_inputs)))


def _label_uniforms(seed: int, first: int, n_rows: int, n_draws: int) -> np.ndarray:
    """(rows, draws) uniforms of rows ``first .. first + n_rows - 1``, from one seeded stream per row block."""
    start, stop = first // LABEL_BLOCK_ROWS, -(-(first + n_rows) // LABEL_BLOCK_ROWS)
    blocks = [  # a few blocks per tile of hundreds of rows
        np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(LABEL_STREAM, block))).random(
            (LABEL_BLOCK_ROWS, n_draws)
        )
        for block in range(start, stop)
    ]
    offset = first - start * LABEL_BLOCK_ROWS
    return np.concatenate(blocks)[offset : offset + n_rows]


def training_draws(
    model, posterior: xr.Dataset, X: np.ndarray, y: np.ndarray, *, random_seed: int | None, workers: int | None = None
) -> tuple[xr.Dataset, np.ndarray | None]:
    """The pointwise log-likelihood of the training rows and, with a seed, their replicated labels, in one pass.

    Each tile of rows evaluates the family's class probabilities under every draw once; the log probability of
    the observed class is the ``log_likelihood`` group, and a uniform per draw and row against the cumulative
    probabilities draws the replicated class (module docstring).

    Parameters
    ----------
    model : ClassifierModel
        The fitted family.
    posterior : xarray.Dataset
        Its draws (dims ``chain, draw, ...``).
    X : numpy.ndarray of shape (n_obs, n_inputs)
        The training rows in the model's inputs (after coding and standardisation).
    y : numpy.ndarray of shape (n_obs,)
        Their class codes.
    random_seed : int or None
        The fit's seed; None draws no labels.
    workers : int, optional
        Threads of the chunked engine (:func:`bayesclass.inference.prediction.tiles.map_row_chunks`).

    Returns
    -------
    log_likelihood : xarray.Dataset
        ``y`` with dims ``(chain, draw, obs)``: ``log P(y_i | x_i, theta_s)``.
    labels : numpy.ndarray of shape (chain, draw, obs), or None
        The replicated class codes (:func:`label_dtype`), None without a seed.
    """
    kernel = model.class_proba_kernel(posterior)
    n_draws, n_obs = kernel.n_draws, len(y)
    at_rows = model.training_class_log_proba(posterior, n_obs)  # the family's own values at the rows, where it has them
    values = np.empty((n_draws, n_obs))  # draws first: reshaped to (chain, draw, obs) without a copy
    labels = None if random_seed is None else np.empty((n_draws, n_obs), dtype=label_dtype(kernel.n_classes))
    rows_per_tile = tile_rows_for(kernel.n_classes * n_draws, setup_rows=kernel.setup_rows)

    def evaluate(tile: tuple[np.ndarray, ...]) -> tuple[np.ndarray, np.ndarray | None]:
        inputs, codes, rows = tile
        log_proba = kernel(inputs, log=True) if at_rows is None else at_rows(rows)  # (rows, classes, draws)
        observed = log_proba[np.arange(len(codes)), codes, :]
        if random_seed is None:
            return observed, None
        cumulative = np.cumsum(np.exp(log_proba), axis=1)[:, :-1, :]  # (rows, classes - 1, draws)
        uniform = _label_uniforms(random_seed, int(rows[0]), len(rows), n_draws)
        return observed, (cumulative < uniform[:, np.newaxis, :]).sum(axis=1)

    chunks = [(X, y, np.arange(n_obs))]
    for first, (observed, drawn) in map_row_chunks(evaluate, chunks, tile_rows=rows_per_tile, workers=workers):
        values[:, first : first + len(observed)] = observed.T
        if labels is not None and drawn is not None:
            labels[:, first : first + len(observed)] = drawn.T
    coords = {dim: kernel.leading_coords[dim] for dim in kernel.leading_dims if dim in kernel.leading_coords}
    dims = (*kernel.leading_dims, "obs")
    log_likelihood = xr.Dataset({"y": (dims, values.reshape(*kernel.leading_shape, n_obs))}, coords=coords)
    return log_likelihood, None if labels is None else labels.reshape(*kernel.leading_shape, n_obs)


def replicated_features(
    model,
    posterior: xr.Dataset,
    labels: np.ndarray,
    X: np.ndarray,
    standardization: tuple[np.ndarray, np.ndarray],
    *,
    random_seed: int,
) -> xr.DataArray | None:
    """Features replicated under evenly spaced draws, given the draws' replicated labels (generative families).

    Parameters
    ----------
    model : ClassifierModel
        The fitted family: a generative one replicates through its ``sample_features``; any other gives None.
    posterior : xarray.Dataset
        Its draws (dims ``chain, draw, ...``).
    labels : numpy.ndarray of shape (chain, draw, obs)
        The replicated labels (:func:`training_draws`).
    X : numpy.ndarray of shape (n_obs, n_inputs)
        The training rows in the model's inputs (count features keep each row's total).
    standardization : (center, scale)
        Per model input, undone on the replicated features.
    random_seed : int
        The fit's seed.

    Returns
    -------
    xarray.DataArray or None
        ``X`` with dims ``(replicate, obs, model_feature)`` and coordinates ``replicate_chain``,
        ``replicate_draw``; None for a discriminative family or where no replicate fits the cap.
    """
    chains, draws, n_obs = labels.shape
    n_replicates = feature_replicates(chains * draws, n_obs, X.shape[1])
    if not isinstance(model, GenerativeClassifierModel) or n_replicates < 1:
        return None
    picks = np.linspace(0, chains * draws - 1, n_replicates).round().astype(np.int64)
    chain, draw = np.divmod(picks, draws)
    params = posterior.isel(chain=xr.DataArray(chain, dims="replicate"), draw=xr.DataArray(draw, dims="replicate"))
    params = params.drop_vars([name for name in ("chain", "draw") if name in params.coords])
    seed = int(np.random.SeedSequence(random_seed, spawn_key=(FEATURE_STREAM,)).generate_state(1)[0])
    sampled = model.sample_features(params, labels[chain, draw], random_seed=seed, reference=X)
    center, scale = standardization
    values = (sampled.transpose("replicate", "obs", "feature").values * scale + center).astype(np.float32)
    coords: dict[str, Any] = {
        "replicate_chain": ("replicate", posterior["chain"].values[chain]),
        "replicate_draw": ("replicate", posterior["draw"].values[draw]),
        "model_feature": [str(name) for name in sampled["feature"].values],
    }
    return xr.DataArray(values, dims=("replicate", "obs", "model_feature"), coords=coords)


def posterior_predictive_group(
    model,
    posterior: xr.Dataset,
    labels: np.ndarray,
    X: np.ndarray,
    standardization: tuple[np.ndarray, np.ndarray],
    *,
    random_seed: int,
) -> tuple[xr.Dataset, PosteriorPredictiveRecord]:
    """The ``posterior_predictive`` group of a fit and its record (module docstring).

    Parameters
    ----------
    model, posterior, labels, X, standardization, random_seed
        As in :func:`replicated_features`.

    Returns
    -------
    group : xarray.Dataset
        ``y`` (chain, draw, obs) and, for a generative family, ``X`` (replicate, obs, model_feature).
    record : PosteriorPredictiveRecord
        The seed and the caps, for the result's attrs.
    """
    coords = {dim: posterior[dim].values for dim in ("chain", "draw")}
    group = xr.Dataset({"y": (("chain", "draw", "obs"), labels)}, coords=coords)
    features = replicated_features(model, posterior, labels, X, standardization, random_seed=random_seed)
    if features is not None:
        group["X"] = features
    record = PosteriorPredictiveRecord(
        random_seed=int(random_seed),
        feature_replicates=0 if features is None else features.sizes["replicate"],
        max_feature_replicates=MAX_FEATURE_REPLICATES,
        max_feature_values=MAX_REPLICATED_FEATURE_VALUES,
    )
    return group, record
