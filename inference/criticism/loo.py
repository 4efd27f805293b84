"""Leave-one-out cross-validation of fitted results (PSIS-LOO through ``arviz_stats.loo`` and ``compare``).

A NUTS or exact result carries a ``log_likelihood`` group (:func:`bayesclass.inference.engines.fit`):
per draw and training row, the log probability of the row's observed class given its features,
``log P(y_i | x_i, theta)`` from the family's ``class_log_proba``. For the generative families
(naive Bayes, gcc) this is the *conditional* class probability, not the joint ``log p(x_i, y_i)``:
LOO then estimates the held-out predictive accuracy of the classifier, which is comparable
across every family.

:func:`loo` summarises one result: ``elpd_loo``, its standard error, ``p_loo`` and the Pareto
shape ``k`` of every row (rows with ``k > 0.7`` make the estimate unreliable; ArviZ's own
sample-size dependent threshold is reported beside it). :func:`compare` ranks several results
fitted on the same data (same fingerprint) by elpd, with ``elpd_diff``, its standard error
``dse`` and stacking weights.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from bayesclass._lazy import lazy_import
from bayesclass.inference.prediction.tiles import map_row_chunks, tile_rows_for
from bayesclass.inference.result import result_info

if TYPE_CHECKING:
    import arviz_stats as azs
    import xarray as xr
else:
    azs = lazy_import("arviz_stats")
    xr = lazy_import("xarray")

__all__ = ["PARETO_K_LIMIT", "LooSummary", "compare", "loo", "pointwise_log_likelihood"]

#: rows whose Pareto k exceeds this make PSIS-LOO unreliable (Vehtari et al. 2017; the issue's threshold)
PARETO_K_LIMIT = 0.7


def pointwise_log_likelihood(model, posterior, X: np.ndarray, y: np.ndarray, *, workers: int | None = None):
    """The ``log_likelihood`` group of a result: ``log P(y_i | x_i, theta_s)`` per draw and training row.

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
    workers : int, optional
        Threads of the chunked engine (:func:`bayesclass.inference.prediction.tiles.map_row_chunks`).

    Returns
    -------
    xarray.Dataset
        ``y`` with dims ``(chain, draw, obs)``: the conditional class log probability from the family's
        ``class_log_proba`` (for the generative families, not the joint ``log p(x, y)``; module docstring),
        computed tile by tile in bounded memory beyond the output itself.
    """
    kernel = model.class_proba_kernel(posterior)
    values = np.empty((kernel.n_draws, len(y)))  # draws first: reshaped to (chain, draw, obs) without a copy
    rows_per_tile = tile_rows_for(kernel.n_classes * kernel.n_draws, setup_rows=kernel.setup_rows)

    def observed_log_proba(tile):
        inputs, codes = tile
        return kernel(inputs, log=True)[np.arange(len(codes)), codes, :]  # (rows, draws)

    for first, tile_values in map_row_chunks(observed_log_proba, [(X, y)], tile_rows=rows_per_tile, workers=workers):
        values[:, first : first + len(tile_values)] = tile_values.T
    by_draw = values.reshape(*kernel.leading_shape, len(y))
    coords = {dim: kernel.leading_coords[dim] for dim in kernel.leading_dims if dim in kernel.leading_coords}
    return xr.Dataset({"y": ((*kernel.leading_dims, "obs"), by_draw)}, coords=coords)


@dataclass(frozen=True)
class LooSummary:
    """PSIS-LOO of one result.

    Parameters
    ----------
    elpd_loo, se, p_loo : float
        Expected log pointwise predictive density, its standard error, effective number of parameters.
    pareto_k : numpy.ndarray
        Pareto shape per training row.
    n_high_k : int
        Rows with ``pareto_k > PARETO_K_LIMIT``.
    good_k : float
        ArviZ's sample-size dependent threshold (``min(1 - 1/log10(S), 0.7)``).
    n_samples, n_rows : int
        Draws and rows the estimate is computed from.
    """

    elpd_loo: float
    se: float
    p_loo: float
    pareto_k: np.ndarray
    n_high_k: int
    good_k: float
    n_samples: int
    n_rows: int

    def __str__(self) -> str:
        warning = f"; {self.n_high_k} row(s) with Pareto k > {PARETO_K_LIMIT}: unreliable" if self.n_high_k else ""
        return (
            f"elpd_loo {self.elpd_loo:.2f} (se {self.se:.2f}), p_loo {self.p_loo:.2f}, max Pareto k "
            f"{float(np.nanmax(self.pareto_k)):.2f}{warning} ({self.n_rows} rows, {self.n_samples} draws)"
        )


def _checked(result, label: str):
    if not isinstance(result, xr.DataTree):
        raise TypeError(f"{label} must be a result DataTree (bayesclass.fit or bayesclass.load_result)")
    if "posterior" not in result.children:
        raise ValueError(
            f"{label} is a point estimate ({result_info(result).method}): LOO needs posterior draws; fit with "
            "method='nuts' (or 'exact')"
        )
    if "log_likelihood" not in result.children:
        raise ValueError(
            f"{label} has no log_likelihood group (a result written by an older bayesclass or with draws kept "
            "partial?); refit it to compute LOO"
        )
    return result


def loo(result) -> LooSummary:
    """PSIS-LOO of ``result`` (``arviz_stats.loo`` on its ``log_likelihood`` group).

    A row whose log-likelihood is the same in every draw (its observed class has probability 1, or the same
    probability, to float precision: well-separated rows of a generative model) has all importance ratios
    equal, which PSIS cannot fit a tail to (arviz_stats raises "All tail values are the same"); its leave-one-out
    density is exactly that value, with ``p_loo`` contribution 0 and Pareto k 0. Such rows are taken out of the
    ``arviz_stats.loo`` call and added back to ``elpd_loo``; ``se`` is ArviZ's ``sqrt(n var(elpd_i))`` over all
    rows.

    Parameters
    ----------
    result : xarray.DataTree
        A NUTS or exact result with ``posterior`` and ``log_likelihood`` groups.

    Returns
    -------
    LooSummary
        ``elpd_loo``, its standard error, ``p_loo`` and the Pareto k of every training row.

    Raises
    ------
    TypeError
        ``result`` is not a result DataTree.
    ValueError
        The result is a point estimate or has no ``log_likelihood`` group.
    """
    result = _checked(result, "result")
    log_likelihood = result["log_likelihood"]["y"]
    values = log_likelihood.transpose(..., "obs").values.reshape(-1, log_likelihood.sizes["obs"])
    constant = np.all(values == values[:1], axis=0)
    n_rows, n_samples = values.shape[1], values.shape[0]
    if not constant.any():
        estimate = azs.loo(result, pointwise=True)
        pareto_k = np.asarray(estimate.pareto_k).ravel()
        elpd, se, p_loo, good_k = float(estimate.elpd), float(estimate.se), float(estimate.p), float(estimate.good_k)
    else:
        elpd_i = values[0].astype(float).copy()
        pareto_k = np.zeros(n_rows)
        p_loo = 0.0
        good_k = min(1 - 1 / np.log10(n_samples), PARETO_K_LIMIT)
        if not constant.all():
            varying = result.copy()
            varying["log_likelihood"] = xr.DataTree(log_likelihood.isel(obs=~constant).to_dataset(name="y"))
            estimate = azs.loo(varying, pointwise=True)
            elpd_i[~constant] = np.asarray(estimate.elpd_i).ravel()
            pareto_k[~constant] = np.asarray(estimate.pareto_k).ravel()
            p_loo, good_k = float(estimate.p), float(estimate.good_k)
        elpd, se = float(elpd_i.sum()), float(np.sqrt(n_rows * np.var(elpd_i)))
    return LooSummary(
        elpd_loo=elpd,
        se=se,
        p_loo=p_loo,
        pareto_k=pareto_k,
        n_high_k=int(np.sum(pareto_k > PARETO_K_LIMIT)),
        good_k=good_k,
        n_samples=n_samples,
        n_rows=n_rows,
    )


def compare(results: Mapping[str, object]):
    """``arviz_stats.compare`` of several results fitted on the same data.

    Parameters
    ----------
    results : mapping of str to xarray.DataTree
        Two or more NUTS or exact results by the name that labels them in the table.

    Returns
    -------
    pandas.DataFrame
        One row per result, best first (``elpd``, ``elpd_diff``, ``dse``, ``weight`` by stacking, ...).

    Raises
    ------
    ValueError
        Fewer than two results, a result without draws, or results fitted on different data (their data
        fingerprints differ: their elpd are sums over different rows and cannot be compared).
    """
    if len(results) < 2:
        raise ValueError(f"compare needs two or more results, got {len(results)}")
    checked = {name: _checked(result, f"result {name!r}") for name, result in results.items()}
    fingerprints = {name: result_info(result).data.fingerprint for name, result in checked.items()}
    if len(set(fingerprints.values())) > 1:
        listing = ", ".join(f"{name!r}: {data_label(result)}" for name, result in checked.items())
        raise ValueError(
            f"these results were fitted on different data ({listing}); LOO compares models on the same rows only"
        )
    return azs.compare({name: result for name, result in checked.items()}, round_to="none")


def data_label(result) -> str:
    """``name (fingerprint prefix)`` of the data a result was fitted on, for messages."""
    data = result_info(result).data
    return f"{data.name} ({data.fingerprint[:12]})"
