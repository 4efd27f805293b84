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
fitted on the same rows and labels (same target fingerprint: the class of every row, in row order,
whatever the features, family or standardisation) by elpd, with ``elpd_diff``, its standard error
``dse`` and stacking weights. The warnings ArviZ raises on the way (high Pareto k) are returned as
one-line notes in the summary and a ``warning`` column of the table, never printed.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from bayesclass._lazy import lazy_import
from bayesclass.data.arguments import spelled
from bayesclass.data.origin import DataOrigin, MissingRecord, SplitOrigin
from bayesclass.inference.criticism.posterior_predictive import training_draws
from bayesclass.inference.criticism.unavailable import MIN_PSIS_DRAWS, Unavailable, chain_shape_text, fit_with_more
from bayesclass.inference.result import result_info

if TYPE_CHECKING:
    import arviz_stats as azs
    import scipy
    import xarray as xr
else:
    azs = lazy_import("arviz_stats")
    scipy = lazy_import("scipy")
    xr = lazy_import("xarray")

__all__ = [
    "PARETO_K_LIMIT",
    "WEIGHT_METHODS",
    "LooSummary",
    "LooUnavailable",
    "compare",
    "loo",
    "loo_pit_weights",
    "pointwise_log_likelihood",
]

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
        computed tile by tile in bounded memory beyond the output itself (the pass of
        :func:`~bayesclass.inference.criticism.posterior_predictive.training_draws` without the labels).
    """
    return training_draws(model, posterior, X, y, random_seed=None, workers=workers)[0]


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
    notes : tuple of str, default ()
        One line per warning the computation raised (ArviZ's Pareto k warning, stated with its counts), as data
        rather than warnings on stderr.
    """

    elpd_loo: float
    se: float
    p_loo: float
    pareto_k: np.ndarray
    n_high_k: int
    good_k: float
    n_samples: int
    n_rows: int
    notes: tuple[str, ...] = ()

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
            f"{spelled('method', 'nuts')} (or {spelled('method', 'exact')})"
        )
    if "log_likelihood" not in result.children:
        raise ValueError(
            f"{label} has no log_likelihood group (a result written by an older bayesclass or with draws kept "
            "partial?); refit it to compute LOO"
        )
    return result


class LooUnavailable(ValueError):
    """PSIS-LOO cannot be computed from a result's draws; ``unavailable`` says why and what to do.

    A ``ValueError`` (the command line's usage error, exit 2), which the report evaluation keeps as a value.

    Parameters
    ----------
    unavailable : Unavailable
        What is unavailable, why, and the remedy.
    """

    def __init__(self, unavailable: Unavailable) -> None:
        super().__init__(str(unavailable))
        self.unavailable = unavailable


#: arviz_stats' errors of a Pareto tail it cannot fit (too few tail draws; all of them equal)
_TAIL_ERRORS = ("n_draws_tail must be at least", "All tail values are the same")


def _require_psis_draws(values: np.ndarray, posterior_sizes) -> None:
    """Raise :class:`LooUnavailable` where the draws are too few for PSIS's Pareto tail (S < MIN_PSIS_DRAWS)."""
    n_samples = values.shape[0]
    if n_samples < MIN_PSIS_DRAWS:
        shape = chain_shape_text(int(posterior_sizes["chain"]), int(posterior_sizes["draw"]))
        raise LooUnavailable(
            Unavailable(
                "PSIS-LOO",
                f"the result has {n_samples} draw{'s' if n_samples != 1 else ''} in all ({shape}); PSIS-LOO needs "
                f"at least {MIN_PSIS_DRAWS}: it fits a Pareto tail to the largest fifth of each row's importance "
                "ratios, which must hold 5 or more",
                fit_with_more("draws", 1000),
            )
        )


def _flat_tail(values: np.ndarray, error: ValueError) -> LooUnavailable:
    """The :class:`LooUnavailable` of arviz_stats' tail ``error``: how many rows repeat their largest ratios."""
    n_samples, n_rows = values.shape
    n_tail = max(int(n_samples // 5), 1)
    largest = np.sort(-values, axis=0)[-n_tail:]  # log importance ratios, up to a constant per row
    flat = int(np.sum(np.ptp(largest, axis=0) == 0))
    return LooUnavailable(
        Unavailable(
            "PSIS-LOO",
            f"PSIS cannot fit a Pareto tail to the importance ratios ({' '.join(str(error).split())}): in {flat} "
            f"of {n_rows} rows the largest {n_tail} of the {n_samples} draws have the same log-likelihood (draws "
            "repeated by a chain that did not move, or too few distinct draws)",
            "check convergence (bayesclass diagnose) and refit with a longer warm-up and more draws",
        )
    )


#: the start of arviz_stats' Pareto k warning, which :func:`_notes` restates with its counts
_PARETO_WARNING = "Estimated shape parameter of Pareto distribution is greater than"


def _notes(caught: list[warnings.WarningMessage], pareto_k: np.ndarray, good_k: float, n_samples: int):
    """The warnings ``caught`` during a LOO computation as one-line notes (no file paths, no repeats)."""
    notes = []
    for warning in caught:
        message = str(warning.message)
        if message.startswith(_PARETO_WARNING):  # restated with the limit the tables count by, and ArviZ's
            n_above, n_warned = int(np.sum(pareto_k > PARETO_K_LIMIT)), int(np.sum(pareto_k > good_k))
            arviz = (
                f"ArviZ warns above {good_k:.2f} for {n_samples} draws: {n_warned} rows"
                if good_k < PARETO_K_LIMIT
                else f"{n_samples} draws"
            )
            notes.append(
                f"Pareto k > {PARETO_K_LIMIT:g} in {n_above} of {len(pareto_k)} rows ({arviz}): their leave-one-out "
                "estimates are unreliable (more draws help; influential rows need a more robust model)"
            )
        else:
            notes.append(f"{warning.category.__name__}: {' '.join(message.split())}")
    return tuple(dict.fromkeys(notes))


def _elpd(result):
    """(``arviz_stats`` ELPD data of ``result`` with pointwise values, the warnings it raised as notes).

    Rows whose log-likelihood is flat across the draws are handled as :func:`loo` describes.
    """
    log_likelihood = result["log_likelihood"]["y"]
    values = log_likelihood.transpose(..., "obs").values.reshape(-1, log_likelihood.sizes["obs"])
    _require_psis_draws(values, log_likelihood.sizes)
    _require_finite(values)
    flat = _flat_rows(values)
    n_samples = values.shape[0]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            if not flat.any():
                estimate = azs.loo(result, pointwise=True)
            else:
                estimate = _loo_with_flat_rows(result, log_likelihood, values, flat)
        except ValueError as error:
            if not str(error).startswith(_TAIL_ERRORS):
                raise
            raise _flat_tail(values, error) from None
    _require_finite_estimate(estimate, values)
    pareto_k = np.asarray(estimate.pareto_k).ravel()
    return estimate, _notes(caught, pareto_k, float(estimate.good_k), n_samples)


#: a row whose log-likelihood varies across the draws by at most this many nats is "flat": its importance
#: ratios lie within a factor ``exp(FLAT_ROW_TOLERANCE)`` of each other, so plain importance sampling is exact to
#: this many nats (the true and the estimated leave-one-out log density both lie between the row's smallest and
#: largest log-likelihood) and PSIS's Pareto tail fit, which breaks down on ratios equal up to rounding, is skipped
FLAT_ROW_TOLERANCE = 1e-6


def _flat_rows(values: np.ndarray) -> np.ndarray:
    """The rows that get plain importance-sampling LOO: flat, or whose largest importance ratios tie.

    A row is flat where its log-likelihood spans at most ``FLAT_ROW_TOLERANCE`` nats. Its ratios' tail ties where
    the largest ``ceil(min(S / 5, 3 sqrt(S)))`` ratios (PSIS's tail for S draws of relative efficiency 1) are equal
    up to ``FLAT_ROW_TOLERANCE``: the ratios have a point mass at their maximum (a class probability clipped at its
    bound in many draws, e.g. the GP's Laplace draws of a near-certain row), there is no tail for PSIS to fit
    (arviz_stats refuses: "All tail values are the same") and none to smooth: the ratios are bounded by that
    maximum, which a fifth of the draws attain, so plain importance sampling has finite variance. Not where the
    ties come from whole draws repeated (``n_tail`` or more draws equal to another in every row: a chain that did not
    move), whose rows are not a posterior sample: PSIS then refuses, naming the cause.

    Parameters
    ----------
    values : numpy.ndarray of shape (S, n)
        Log-likelihood per draw and row.

    Returns
    -------
    numpy.ndarray of bool, shape (n,)
    """
    n_samples = values.shape[0]
    n_tail = int(np.ceil(min(n_samples / 5, 3 * np.sqrt(n_samples))))
    flat = np.ptp(values, axis=0) <= FLAT_ROW_TOLERANCE
    ratios = -values[:, ~flat]
    repeated = n_samples - np.unique(values, axis=0).shape[0]  # whole draws repeated: chains that did not move
    if ratios.size and n_tail >= 2 and repeated < n_tail:
        largest = np.partition(ratios, n_samples - n_tail, axis=0)[n_samples - n_tail :]
        flat[~flat] = np.ptp(largest, axis=0) <= FLAT_ROW_TOLERANCE
    return flat


def _rows_text(rows: np.ndarray) -> str:
    """``"3, 17 and 40"`` (the first ten of ``rows``, 0-based positions in the training data)."""
    shown = ", ".join(str(int(row)) for row in rows[:10])
    return shown + (f" and {len(rows) - 10} more" if len(rows) > 10 else "")


def _require_finite(values: np.ndarray) -> None:
    """Raise :class:`LooUnavailable` naming the rows whose log-likelihood is NaN or -inf in some draw."""
    nan_rows = np.flatnonzero(np.isnan(values).any(axis=0))
    if nan_rows.size:
        raise LooUnavailable(
            Unavailable(
                "PSIS-LOO",
                f"the log-likelihood is NaN in {int(np.isnan(values).sum())} (draw, row) pairs, in training rows "
                f"{_rows_text(nan_rows)} (0-based): the result's log_likelihood group is damaged",
                "refit the model (and report the data if the refit has NaN again)",
            )
        )
    zero_rows = np.flatnonzero((values == -np.inf).any(axis=0))
    if zero_rows.size:
        draws = (values[:, zero_rows] == -np.inf).sum(axis=0)
        raise LooUnavailable(
            Unavailable(
                "PSIS-LOO",
                f"the observed class has probability 0 (log-likelihood -inf) in some draws of training rows "
                f"{_rows_text(zero_rows)} (0-based; in {_rows_text(draws)} of the {values.shape[0]} draws): their "
                "importance ratios are infinite, so their leave-one-out density estimate is 0 (elpd -inf)",
                "check those rows (a label error?) or fit a model that gives every class a positive probability",
            )
        )


def _require_finite_estimate(estimate, values: np.ndarray) -> None:
    """Raise :class:`LooUnavailable` where ``arviz_stats`` returned a non-finite pointwise elpd from finite values."""
    elpd_i = np.asarray(estimate.elpd_i).ravel()
    bad = np.flatnonzero(~np.isfinite(elpd_i))
    if bad.size:
        spread = np.ptp(values[:, bad], axis=0)
        raise LooUnavailable(
            Unavailable(
                "PSIS-LOO",
                f"arviz_stats returned a non-finite leave-one-out density for training rows {_rows_text(bad)} "
                f"(0-based), whose log-likelihood spans {', '.join(f'{s:.3g}' for s in spread[:10])} nats across "
                f"the {values.shape[0]} draws: the Pareto tail fit of their importance ratios failed",
                "check convergence (bayesclass diagnose) and refit with more draws",
            )
        )


def _loo_with_flat_rows(result, log_likelihood, values: np.ndarray, flat: np.ndarray):
    """ELPD data where the rows marked ``flat`` have plain importance-sampling LOO (Pareto k 0; :func:`loo`)."""
    from arviz_stats.utils import ELPDDataLOO
    from scipy.special import logsumexp

    n_samples, n_rows = values.shape
    log_s = np.log(n_samples)
    elpd_i = np.empty(n_rows)
    elpd_i[flat] = log_s - logsumexp(-values[:, flat], axis=0)  # -log mean(1 / p): the harmonic mean of p
    lpd_flat = logsumexp(values[:, flat], axis=0) - log_s
    p_loo = float(np.sum(lpd_flat - elpd_i[flat]))  # >= 0 and at most FLAT_ROW_TOLERANCE per row
    pareto_k = np.zeros(n_rows)
    good_k = min(1 - 1 / np.log10(n_samples), PARETO_K_LIMIT)
    if not flat.all():
        varying = result.copy()
        varying["log_likelihood"] = xr.DataTree(log_likelihood.isel(obs=~flat).to_dataset(name="y"))
        estimate = azs.loo(varying, pointwise=True)
        elpd_i[~flat] = np.asarray(estimate.elpd_i).ravel()
        pareto_k[~flat] = np.asarray(estimate.pareto_k).ravel()
        p_loo, good_k = p_loo + float(estimate.p), float(estimate.good_k)
    obs = log_likelihood["obs"] if "obs" in log_likelihood.coords else None
    return ELPDDataLOO(
        elpd=float(elpd_i.sum()),
        se=float(np.sqrt(n_rows * np.var(elpd_i))),
        p=p_loo,
        n_samples=n_samples,
        n_data_points=n_rows,
        scale="log",
        warning=bool(np.any(pareto_k > good_k)),
        good_k=good_k,
        elpd_i=xr.DataArray(elpd_i, dims=("obs",), coords=None if obs is None else {"obs": obs}),
        pareto_k=xr.DataArray(pareto_k, dims=("obs",), coords=None if obs is None else {"obs": obs}),
    )


def loo_pit_weights(result) -> tuple[xr.Dataset, xr.Dataset]:
    """PSIS log weights and Pareto k of every training row, for ``arviz_stats.loo_pit(result, log_weights, pareto_k)``.

    ``arviz_stats.loo_pit(result)`` smooths each row's importance ratios itself and raises "All tail values are the
    same" where a row's log-likelihood is flat (the same in every draw: classes separated to float precision, e.g.
    gcc on penguins' measurements). These weights treat such rows as :func:`loo` does (plain importance sampling,
    Pareto k 0; :func:`_flat_rows`) and the others as ``loo_pit`` would (``psislw`` with the relative efficiency
    of the posterior's mean ESS), so that ``loo_pit`` takes every result::

        log_weights, pareto_k = loo_pit_weights(result)
        arviz_stats.loo_pit(result, log_weights=log_weights, pareto_k=pareto_k)

    Parameters
    ----------
    result : xarray.DataTree
        A result with ``posterior`` and ``log_likelihood`` groups.

    Returns
    -------
    log_weights : xarray.Dataset
        ``y`` (chain, draw, obs): normalised log weights.
    pareto_k : xarray.Dataset
        ``y`` (obs): the Pareto shape of each row (0 for the flat rows).

    Raises
    ------
    LooUnavailable
        Too few draws for PSIS, or a log-likelihood that is NaN or -inf (as :func:`loo`).
    """
    log_likelihood = _checked(result, "result")["log_likelihood"]["y"].transpose("chain", "draw", "obs")
    values = log_likelihood.values.reshape(-1, log_likelihood.sizes["obs"])
    _require_psis_draws(values, log_likelihood.sizes)
    _require_finite(values)
    flat = _flat_rows(values)
    ratios = -log_likelihood
    log_weights = ratios - xr.apply_ufunc(
        scipy.special.logsumexp, ratios, input_core_dims=[["chain", "draw"]], kwargs={"axis": (-2, -1)}
    )
    pareto_k = xr.zeros_like(log_likelihood.isel(chain=0, draw=0, drop=True))
    if not flat.all():
        ess = azs.ess(result, group="posterior", method="mean")
        r_eff = float(np.mean(np.concatenate([ess[name].values.ravel() for name in ess.data_vars]))) / values.shape[0]
        varying = log_likelihood.isel(obs=np.flatnonzero(~flat))
        smoothed, k = varying.azstats.psislw(r_eff=r_eff, dim=["chain", "draw"])
        log_weights[..., np.flatnonzero(~flat)] = smoothed.transpose("chain", "draw", "obs").values
        pareto_k[np.flatnonzero(~flat)] = k.values
    return log_weights.to_dataset(name="y"), pareto_k.to_dataset(name="y")


def loo(result) -> LooSummary:
    """PSIS-LOO of ``result`` (``arviz_stats.loo`` on its ``log_likelihood`` group).

    A row whose log-likelihood is flat, the same in every draw up to ``FLAT_ROW_TOLERANCE`` (1e-6 nats; its
    observed class has probability 1, or the same probability, to float precision: well-separated rows of a
    generative model), has importance ratios equal up to rounding, to which PSIS's Pareto tail fit breaks down:
    arviz_stats raises "All tail values are the same" where they are exactly equal, and returns a NaN shape or a
    NaN leave-one-out density where they differ in the last bits. Such rows are taken out of the
    ``arviz_stats.loo`` call; their leave-one-out density is the plain importance-sampling estimate
    ``-log mean_s exp(-log p_s)``, exact to within the row's spread (at most 1e-6 nats: the true value and the
    estimate both lie between its smallest and largest log-likelihood), with Pareto k reported as 0 (bounded
    ratios have no tail) and ``p_loo`` contribution ``lpd_i - elpd_i`` (at most the spread). So are the rows whose
    largest ratios tie (the largest ``ceil(min(S / 5, 3 sqrt(S)))``, PSIS's tail, equal to ``FLAT_ROW_TOLERANCE``: a
    probability clipped at its bound in many draws), which have no tail to fit or smooth (:func:`_flat_rows`).
    They are added back to ``elpd_loo``; ``se`` is ArviZ's ``sqrt(n var(elpd_i))`` over all rows. The warnings
    ArviZ raises (high Pareto k) are returned as ``notes``, not shown.

    Parameters
    ----------
    result : xarray.DataTree
        A NUTS or exact result with ``posterior`` and ``log_likelihood`` groups.

    Returns
    -------
    LooSummary
        ``elpd_loo``, its standard error, ``p_loo``, the Pareto k of every training row and the notes.

    Raises
    ------
    TypeError
        ``result`` is not a result DataTree.
    LooUnavailable
        PSIS cannot be computed from these draws: fewer than ``MIN_PSIS_DRAWS`` (25) in all, rows whose largest
        importance ratios are all equal (a chain that did not move), rows whose log-likelihood is NaN or -inf in
        some draw (the observed class has probability 0: an infinite importance ratio), or a Pareto tail fit that
        gave a non-finite density; the message says which rows, with the numbers.
    ValueError
        The result is a point estimate or has no ``log_likelihood`` group.
    """
    estimate, notes = _elpd(_checked(result, "result"))
    pareto_k = np.asarray(estimate.pareto_k).ravel()
    return LooSummary(
        elpd_loo=float(estimate.elpd),
        se=float(estimate.se),
        p_loo=float(estimate.p),
        pareto_k=pareto_k,
        n_high_k=int(np.sum(pareto_k > PARETO_K_LIMIT)),
        good_k=float(estimate.good_k),
        n_samples=int(estimate.n_samples),
        n_rows=int(estimate.n_data_points),
        notes=notes,
    )


#: weight methods of :func:`compare` and the ``arviz_stats.compare`` method each names
WEIGHT_METHODS = {"stacking": "stacking", "pseudo_bma_plus": "BB-pseudo-BMA"}


def compare(results: Mapping[str, object], *, method: str = "stacking"):
    """``arviz_stats.compare`` of several results fitted on the same rows and labels, whatever their features.

    The results must have the same rows: the same number of training rows, the same class names and the same
    class of every row in the same order (their target fingerprints,
    :attr:`bayesclass.data.Dataset.target_fingerprint`, agree). Their features, families, coding and
    standardisation may differ: LOO compares the predictive density of the same labels. A result written
    before the target fingerprint was recorded is compared by its whole-table fingerprint instead.

    Parameters
    ----------
    results : mapping of str to xarray.DataTree
        Two or more NUTS or exact results by the name that labels them in the table.
    method : {"stacking", "pseudo_bma_plus"}, default "stacking"
        The ``weight`` column: LOO stacking of the predictive distributions (Yao, Vehtari, Simpson and Gelman 2018),
        or pseudo-BMA+ (Akaike-type weights of the elpd stabilised by the Bayesian bootstrap; ArviZ's
        ``"BB-pseudo-BMA"``, with its fixed bootstrap seed).

    Returns
    -------
    pandas.DataFrame
        One row per result, best first (``elpd``, ``elpd_diff``, ``dse``, ``weight`` by stacking, ArviZ's
        ``diag_elpd``/``diag_diff``, ...) and ``warning``: the notes of that result's LOO and of the comparison
        (one line each, joined by "; "; "" when none), which are not shown as warnings.

    Raises
    ------
    ValueError
        Fewer than two results, a result without draws, or results fitted on different rows or labels (the
        message names the two runs and what differs: the number of rows, the class names or the labels); a
        :class:`LooUnavailable` names the result whose draws PSIS cannot use.
    """
    if len(results) < 2:
        raise ValueError(f"compare needs two or more results, got {len(results)}")
    if method not in WEIGHT_METHODS:
        raise ValueError(f"method must be one of {', '.join(WEIGHT_METHODS)}, got {method!r}")
    checked = {name: _checked(result, f"result {name!r}") for name, result in results.items()}
    _require_same_rows(checked)
    estimates, notes = {}, {}
    for name, result in checked.items():
        try:
            estimates[name], notes[name] = _elpd(result)
        except LooUnavailable as error:  # say which result
            raise LooUnavailable(replace(error.unavailable, name=f"PSIS-LOO of {name!r}")) from None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = azs.compare(estimates, method=WEIGHT_METHODS[method], round_to="none")
    shared = tuple(f"comparison: {' '.join(str(warning.message).split())}" for warning in caught)
    table["warning"] = ["; ".join((*notes[name], *shared)) for name in table.index]
    return table


def _require_same_rows(results: Mapping[str, xr.DataTree]) -> None:
    """Raise unless every result was fitted on the rows and labels of the first (module docstring)."""
    (first_name, first), *others = results.items()
    for name, result in others:
        difference = _row_difference(first, result)
        if difference:
            raise ValueError(
                f"{first_name!r} ({data_label(first)}) and {name!r} ({data_label(result)}) were fitted on different "
                f"rows or labels: {difference}; LOO compares models on the same rows only (the same data and split, "
                "whatever the features, family or standardisation)"
            )


def _row_difference(first, other) -> str:
    """What differs between the training rows of two results ("" when they are the same rows and labels).

    In turn: the number of rows, the class names, the labels in row order (target fingerprints; the whole-table
    fingerprints for a result written before those were recorded), where the rows come from (the recorded
    source, its row-choosing arguments and split, where both results know them: the arguments that only choose
    or code columns, :data:`COLUMN_ARGUMENTS`, are left out), the rows dropped for blank cells, and the values of
    every column both fits use with the same kind (the same rows have the same values in it). The columns
    themselves may differ: LOO compares the density of the same labels whatever the inputs.
    """
    n_first, n_other = first["log_likelihood"].sizes["obs"], other["log_likelihood"].sizes["obs"]
    if n_first != n_other:
        return f"{n_first} rows against {n_other} rows"
    data_first, data_other = result_info(first).data, result_info(other).data
    if data_first.class_names != data_other.class_names:
        return f"class names {list(data_first.class_names)} against {list(data_other.class_names)}"
    return (
        _label_difference(data_first, data_other)
        or _origin_difference(data_first.origin, data_other.origin)
        or _dropped_difference(data_first.missing, data_other.missing)
        or _column_difference(first, other, data_first, data_other)
    )


def _label_difference(data_first, data_other) -> str:
    """The labels in row order differ (target fingerprints; whole-table fingerprints for older results)."""
    if data_first.target_fingerprint and data_other.target_fingerprint:
        if data_first.target_fingerprint == data_other.target_fingerprint:
            return ""
        return (
            f"the labels differ (same number of rows and classes, but other rows or another row order: target "
            f"fingerprints {data_first.target_fingerprint[:12]} against {data_other.target_fingerprint[:12]})"
        )
    if data_first.fingerprint == data_other.fingerprint:
        return ""
    return (
        "at least one of them was written before bayesclass recorded the target fingerprint, so the whole "
        f"tables were compared and differ (fingerprints {data_first.fingerprint[:12]} against "
        f"{data_other.fingerprint[:12]}); refit it to compare fits on the same rows with other features"
    )


#: load arguments that choose or code the columns, never the rows (``bayesclass.data.load``): fits that differ
#: only in these were fitted on the same rows. ``missing`` chooses rows only through the blank cells it drops,
#: which the results record and :func:`_dropped_difference` compares.
COLUMN_ARGUMENTS = frozenset({"features", "feature_kinds", "max_levels", "missing"})


def _row_arguments(origin: DataOrigin) -> tuple[tuple[str, object], ...]:
    return tuple((name, value) for name, value in origin.arguments if name not in COLUMN_ARGUMENTS)


def _origin_difference(first: DataOrigin, other: DataOrigin) -> str:
    """The recorded sources and row arguments (where both are known) or splits (where both are splits) differ."""
    both_sourced = bool(first.source) and bool(other.source)
    if both_sourced and (first.source, _row_arguments(first)) != (other.source, _row_arguments(other)):
        return f"the rows come from {_origin_text(first)} against {_origin_text(other)}"
    if first.split is not None and other.split is not None and first.split != other.split:
        return f"the rows are {_split_text(first.split)} against {_split_text(other.split)}"
    return ""


def _origin_text(origin: DataOrigin) -> str:
    arguments = ", ".join(f"{name}={value!r}" for name, value in _row_arguments(origin))
    return f"{origin.source}({arguments})" if arguments else origin.source


def _split_text(split: SplitOrigin) -> str:
    fractions = ",".join(f"{fraction:g}" for fraction in split.fractions)
    return (
        f"the {split.part} part of the split {fractions} with seed {split.random_seed}"
        f"{'' if split.stratify else ' (not stratified)'}"
    )


def _dropped_difference(first: MissingRecord, other: MissingRecord) -> str:
    """The rows dropped for blank cells (``missing="drop"``) differ, or cannot be shown to be the same.

    A fit drops the rows with a blank in any column it uses, i.e. in any column its record counts blanks in.
    Where one fit's blank columns are among the other's, its dropped rows are among the other's too, so the
    same number dropped means the same rows; otherwise (each has blank columns the other lacks) they may differ.
    """
    if first.dropped_rows == other.dropped_rows == 0:
        return ""
    blanks_first = [column for column, _ in first.blanks_per_column]
    blanks_other = [column for column, _ in other.blanks_per_column]
    if first.dropped_rows != other.dropped_rows:
        return (
            f"{first.dropped_rows} rows were dropped for blank cells (in {blanks_first or 'no column'}) against "
            f"{other.dropped_rows} (in {blanks_other or 'no column'}): other rows of the table remain"
        )
    if set(blanks_first) <= set(blanks_other) or set(blanks_other) <= set(blanks_first):
        return ""
    return (
        f"both dropped {first.dropped_rows} rows for blank cells, but in other columns ({blanks_first} against "
        f"{blanks_other}), so they may have dropped other rows; fit both on a table without those blanks "
        "(drop the rows blank in any of these columns first)"
    )


def _column_difference(first, other, data_first, data_other) -> str:
    """A column both fits use with the same kind has other values in some rows."""
    kinds_other = dict(zip(data_other.feature_names, data_other.feature_kinds, strict=True))
    shared = [
        name
        for name, kind in zip(data_first.feature_names, data_first.feature_kinds, strict=True)
        if kinds_other.get(name) == kind
        and data_first.category_names.get(name) == data_other.category_names.get(name)  # codes mean the same
    ]
    if not shared or "constant_data" not in first.children or "constant_data" not in other.children:
        return ""
    X_first, X_other = first["constant_data"]["X"], other["constant_data"]["X"]
    for name in shared:
        if name not in X_first["feature"].values or name not in X_other["feature"].values:
            continue
        values_first, values_other = X_first.sel(feature=name).values, X_other.sel(feature=name).values
        differs = (values_first != values_other) & ~(np.isnan(values_first) & np.isnan(values_other))
        if differs.any():
            return (
                f"the column {name!r}, which both use, differs in {int(differs.sum())} of {differs.size} rows "
                "(other rows with the same labels: another split or subset of the data?)"
            )
    return ""


def data_label(result) -> str:
    """``name (fingerprint prefix)`` of the data a result was fitted on, for messages.

    Parameters
    ----------
    result : xarray.DataTree
        A fitted result.

    Returns
    -------
    str
        The data set's name and the first 12 hex digits of its fingerprint.
    """
    data = result_info(result).data
    return f"{data.name} ({data.fingerprint[:12]})"
