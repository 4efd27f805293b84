r"""Interval coverage of a known truth by every estimate of a result: how often its interval holds the truth.

On data from a generator whose truth is known, the question every statistics course asks of an interval is
how often it covers the truth. :func:`interval_coverage` answers it for every estimate of a fitted result
alike, through the one prediction path (:func:`bayesclass.inference.prediction.predict.predict`):

- the posterior (whatever drew it: NUTS, Gibbs, exact draws, the Laplace approximation): the equal-tailed
  interval of its draws;
- each point estimate (MLE, MAP ...): its Wald / delta-method interval, ``class_proba_<kind>_low/_high`` from
  its Gaussian approximation (:func:`bayesclass.inference.result.gaussian_approximation`). A point estimate
  whose family states no approximation yet has no interval: its coverage is NaN ("not available"), never 0.

Two truths are compared, at each level of :data:`COVERAGE_LEVELS` (89% and 95%):

``coverage_<level>``
    The true class probability :math:`t_{ik} = P(k \mid x_i)`: the share of the (row, class) pairs of the
    test rows with :math:`\mathrm{low}_{ik} \le t_{ik} \le \mathrm{high}_{ik}` (for two classes, the share
    of rows: the two classes' intervals are complements).
``parameter_coverage_<level>``
    The true parameters, where they are comparable: the generator's log-odds is linear in ``x``
    (:func:`bayesclass.data.true_log_odds`) AND the family's parameters are that log-odds' intercept and
    slopes (:meth:`~bayesclass.models.base.ClassifierModel.log_odds_parameters`: a binary logit model). The
    share of the coefficients whose interval covers its true value. The truth is given in the data's units;
    the model may see standardised inputs, so the true coefficients are converted to the model's inputs
    (through the fitted input map :func:`bayesclass.inference.engines.fit.model_inputs`, an affine map
    :math:`z = a + M x`: :math:`w' = M^{-\top} w`, :math:`b' = b - w'^\top a`) before they are compared.
    Elsewhere (class means and variances, a latent curve, probit coefficients, recoded inputs) the column is
    left out: the parameters are not comparable.

The per-row coverages of one fit are dependent (one fit, one interval curve); a study averages them over
repeats, each an independent fit.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from bayesclass._lazy import lazy_import
from bayesclass.data import Dataset, true_log_odds
from bayesclass.inference.engines.fit import model_inputs
from bayesclass.inference.evaluation.conclusions import NOISE_MULTIPLE
from bayesclass.inference.evaluation.heldout import estimate_label, result_codes
from bayesclass.inference.prediction.predict import predict
from bayesclass.inference.result import gaussian_approximation, model_of, result_info
from bayesclass.models.approximation import parameter_labels

if TYPE_CHECKING:
    import pandas as pd
    import scipy.stats
else:
    pd = lazy_import("pandas")
    scipy = lazy_import("scipy")

__all__ = [
    "COVERAGE_LEVELS",
    "VERDICTS",
    "coverage_interval",
    "coverage_level",
    "coverage_metric",
    "coverage_summary",
    "covered_share",
    "interval_coverage",
    "true_coefficients",
]

#: the nominal levels at which studies measure coverage (ArviZ's default interval and the classical 95%)
COVERAGE_LEVELS: tuple[float, ...] = (0.89, 0.95)


def coverage_metric(level: float, *, parameter: bool = False) -> str:
    """The metric name of coverage at ``level``: ``coverage_89``, ``parameter_coverage_95`` ...

    Parameters
    ----------
    level : float
        The nominal level, in (0, 1), a whole percentage.
    parameter : bool, default False
        Coverage of the true parameters rather than the true class probabilities.

    Returns
    -------
    str
        The name.

    Raises
    ------
    ValueError
        ``level`` not a number in (0, 1) that is a whole percentage.
    """
    _check_level(level)
    return f"{'parameter_' if parameter else ''}coverage_{round(level * 100)}"


def covered_share(truth: np.ndarray, low: np.ndarray, high: np.ndarray) -> float:
    """The share of the elements with ``low <= truth <= high`` (NaN where an interval is undefined).

    Parameters
    ----------
    truth, low, high : numpy.ndarray
        Arrays of one shape: the true values and the interval bounds.

    Returns
    -------
    float
        In [0, 1]; NaN for no elements or any NaN bound (an interval that does not exist covers nothing and
        misses nothing).

    Raises
    ------
    ValueError
        Arrays of different shapes, or a NaN truth.
    """
    truth, low, high = (np.asarray(value, dtype=float) for value in (truth, low, high))
    if not truth.shape == low.shape == high.shape:
        raise ValueError(f"truth, low and high must have one shape, got {truth.shape}, {low.shape}, {high.shape}")
    if np.isnan(truth).any():
        raise ValueError("truth has NaN values; coverage needs the true value of every element")
    if truth.size == 0 or np.isnan(low).any() or np.isnan(high).any():
        return float("nan")
    return float(np.mean((low <= truth) & (truth <= high)))


def interval_coverage(result, data: Dataset, *, levels: Sequence[float] = COVERAGE_LEVELS):
    """Coverage of the truth by every estimate's intervals at each level (module docstring).

    Parameters
    ----------
    result : xarray.DataTree
        A fitted result.
    data : Dataset
        Held-out rows with their true class probabilities (generated data).
    levels : sequence of float, default COVERAGE_LEVELS
        Nominal levels, each in (0, 1) and a whole percentage.

    Returns
    -------
    pandas.DataFrame or None
        One row per estimate (labelled as in :func:`bayesclass.inference.evaluation.heldout.evaluate`:
        ``posterior``, ``MAP plug-in`` ...), columns ``coverage_<level>`` and, where the parameters are
        comparable, ``parameter_coverage_<level>``; NaN where an estimate has no interval. None where
        ``data`` has no true class probabilities.

    Raises
    ------
    ValueError
        A level out of range, or ``data`` whose labels are not the result's classes.
    """
    levels = tuple(levels)
    if not levels:
        raise ValueError("levels must name at least one nominal level, e.g. levels=(0.89, 0.95)")
    for level in levels:
        _check_level(level)
    _, truth = result_codes(result, data)
    if truth is None:
        return None
    model = model_of(result)
    predictives = model.predictive_kinds()
    kinds = [group.removeprefix("point_estimate_") for group in result.children if group.startswith("point_estimate_")]
    labels = {"posterior": None} if "posterior" in result else {}
    labels |= {estimate_label(kind, predictive=kind in predictives): kind for kind in kinds}
    coefficients = true_coefficients(result, data)
    columns: dict[str, dict[str, float]] = {}
    for level in levels:
        prediction = predict(result, data, interval_prob=level)
        column = columns.setdefault(coverage_metric(level), {})
        for label, kind in labels.items():
            name = "class_proba" if kind is None else f"class_proba_{kind}"
            if f"{name}_low" in prediction:
                low, high = prediction[f"{name}_low"].values, prediction[f"{name}_high"].values
                column[label] = covered_share(truth, low, high)
            else:
                column[label] = float("nan")  # no interval for this estimate (no Gaussian approximation yet)
        if coefficients is not None:
            names, true_values = coefficients
            column = columns.setdefault(coverage_metric(level, parameter=True), {})
            for label, kind in labels.items():
                bounds = _coefficient_interval(result, kind, names, level)
                column[label] = float("nan") if bounds is None else covered_share(true_values, *bounds)
    return pd.DataFrame(columns, index=pd.Index(list(labels), name="estimate"))


def true_coefficients(result, data: Dataset) -> tuple[tuple[str, ...], np.ndarray] | None:
    """The generator's true log-odds coefficients in the inputs of ``result``'s model, where comparable.

    Parameters
    ----------
    result : xarray.DataTree
        A fitted result.
    data : Dataset
        Rows of the generator (their ``origin`` names it).

    Returns
    -------
    tuple or None
        ``(names, values)``: the model's parameter names (:meth:`~bayesclass.models.base.ClassifierModel.
        log_odds_parameters`) and the true values of their flattened elements, in the model's inputs
        (standardised where the fit standardised); None where the truth is not linear, the family's
        parameters are not log-odds coefficients, or the inputs are not an invertible affine map of the
        data's columns (recoded categories).
    """
    info = result_info(result)
    coefficients = true_log_odds(data)
    names = info.model.log_odds_parameters(len(info.class_names))
    if coefficients is None or names is None or tuple(data.feature_names) != tuple(info.feature_names):
        return None
    if tuple(info.class_names) == tuple(data.class_names)[::-1]:
        coefficients = -coefficients  # the log-odds of the other class
    elif tuple(info.class_names) != tuple(data.class_names):
        return None
    n_features = len(data.feature_names)
    try:
        offset = model_inputs(result, np.zeros((1, n_features)))[0]
        slopes = model_inputs(result, np.eye(n_features)) - offset  # row j: the image of e_j
    except ValueError:
        return None  # inputs the model cannot take at 0 or 1 (categorical codes): not comparable
    if slopes.shape != (n_features, n_features) or np.linalg.matrix_rank(slopes) < n_features:
        return None
    weights = np.linalg.solve(slopes, coefficients[1:])  # z = a + M x with M = slopes.T: w' = M^-T w
    return tuple(names), np.concatenate([[coefficients[0] - weights @ offset], weights])


def _coefficient_interval(
    result, kind: str | None, names: tuple[str, ...], level: float
) -> tuple[np.ndarray, np.ndarray] | None:
    """The intervals of the flattened parameters ``names`` under one estimate (None: no interval)."""
    if kind is None:  # the posterior: the equal-tailed interval of the draws
        posterior = result["posterior"].to_dataset()
        n_draws = posterior.sizes["chain"] * posterior.sizes["draw"]
        flat = [posterior[name].transpose("chain", "draw", ...).values.reshape(n_draws, -1) for name in names]
        draws = np.concatenate(flat, axis=1)
        low, high = np.quantile(draws, [(1 - level) / 2, (1 + level) / 2], axis=0)
        return low, high
    approximation = gaussian_approximation(result, kind)
    if approximation is None:
        return None
    wanted = parameter_labels(result[f"point_estimate_{kind}"].to_dataset(), names)
    position = {label: index for index, label in enumerate(approximation.labels)}
    if any(label not in position for label in wanted):
        return None
    bounds = approximation.conf_int(1.0 - level)[[position[label] for label in wanted]]
    return bounds[:, 0], bounds[:, 1]


def _check_level(level: float) -> None:
    if isinstance(level, bool) or not isinstance(level, (int, float, np.floating)) or not 0.0 < level < 1.0:
        raise ValueError(f"a coverage level must be a number in (0, 1), e.g. 0.95; got {level!r}")
    if abs(level * 100 - round(level * 100)) > 1e-9:
        raise ValueError(f"a coverage level must be a whole percentage (it names a metric), e.g. 0.95; got {level!r}")


#: the verdicts of :func:`coverage_summary`
VERDICTS = ("under-covers", "over-covers", "near nominal", "no standard error", "not available")


def coverage_level(metric: str) -> tuple[float, bool] | None:
    """The nominal level of a coverage metric and whether it is a parameter's: ``"coverage_95"`` -> (0.95, False).

    Parameters
    ----------
    metric : str
        A metric name.

    Returns
    -------
    tuple of (float, bool) or None
        The level and ``parameter``; None for a metric that is not a coverage of :func:`coverage_metric`.
    """
    parameter = metric.startswith("parameter_")
    stem, _, digits = metric.removeprefix("parameter_").rpartition("_")
    if stem != "coverage" or not digits.isdigit() or not 0 < int(digits) < 100:
        return None
    return int(digits) / 100, parameter


def coverage_summary(table):
    """Coverage per data set, model, estimate, metric and training size, over a study's repeats, with a verdict.

    Parameters
    ----------
    table : pandas.DataFrame
        A study's tidy table (:func:`bayesclass.inference.studies.runner.load`): columns ``dataset``, ``model``,
        ``estimate``, ``metric``, ``size``, ``value``, ``key``.

    Returns
    -------
    pandas.DataFrame
        One row per (dataset, model, estimate, metric, size) of the coverage metrics present: ``level``,
        ``parameter``, ``cells`` (cells with an interval), ``total`` (the cells of that data set, model and
        size: an estimate that does not exist in a cell, e.g. an MLE under separation, has no interval there),
        ``mean``, ``se`` (the standard error of that observed proportion: the cells' standard deviation
        (``ddof=1``) / sqrt(cells), the cells being the independent fits; NaN for one cell), ``low`` / ``high``
        (smallest and largest cell), ``interval_low`` / ``interval_high`` (the interval the verdict reads: mean -+
        ``NOISE_MULTIPLE`` se; where every cell has the same coverage, so their spread is 0 and gives no standard
        error, the exact Clopper-Pearson 95% interval of ``scipy.stats.binomtest(...).proportion_ci`` with the
        cells' test rows as the trials (``n_test`` summed; the cells themselves for a parameter coverage or where
        the table has no ``n_test``): the only count there is, which ignores that a fit's rows share one interval
        curve, so that four cells of coverage 1 read like four of 0.99 and 1 beside them, not like no evidence),
        ``difference`` (mean - level) and
        ``verdict``: ``near nominal`` only where that interval contains the level, ``under-covers`` /
        ``over-covers`` where it lies wholly below / above it, ``no standard error`` for a single cell, ``not
        available`` where no cell has an interval (a point estimate without a Gaussian approximation). No floor:
        a floor at the nominal level's binomial error of one trial per cell was 1.5 to 3 times the cells' actual
        standard error at 200 cells and called an over-coverage 4 standard errors high "near nominal".
    """
    columns = ["dataset", "model", "estimate", "metric", "size", "level", "parameter", "cells", "total", "mean",
               "se", "low", "high", "interval_low", "interval_high", "difference", "verdict"]  # fmt: skip
    levels = {metric: coverage_level(str(metric)) for metric in table["metric"].dropna().unique()}
    # (a boolean mask even on no rows: an empty object Series would select columns, leaving none)
    wanted = table[table["metric"].map(lambda metric: levels.get(metric) is not None).astype(bool)]
    totals = wanted.groupby(["dataset", "model", "size"])["key"].nunique()  # an absent MLE has no rows: not its own
    rows = []
    for (dataset, model, estimate, metric, size), group in wanted.groupby(
        ["dataset", "model", "estimate", "metric", "size"], sort=True
    ):
        level, parameter = levels[metric]  # (only coverage metrics are left: never None)
        values = group["value"].to_numpy(dtype=float)
        defined = values[~np.isnan(values)]
        mean = float(defined.mean()) if defined.size else float("nan")
        se = float(defined.std(ddof=1) / np.sqrt(defined.size)) if defined.size > 1 else float("nan")
        per_row = "n_test" in group and not parameter  # a parameter coverage is a share of coefficients, not rows
        rows_tested = group.loc[~np.isnan(values), "n_test"].sum() if per_row else defined.size
        interval = coverage_interval(mean, se, int(defined.size), trials=int(rows_tested))
        if not defined.size:
            verdict = "not available"
        elif defined.size == 1:
            verdict = "no standard error"
        elif interval[1] < level:
            verdict = "under-covers"
        elif interval[0] > level:
            verdict = "over-covers"
        else:
            verdict = "near nominal"
        low, high = (float(defined.min()), float(defined.max())) if defined.size else (float("nan"), float("nan"))
        total = int(totals[(dataset, model, size)])
        rows.append((dataset, model, estimate, metric, size, level, parameter, int(defined.size), total, mean, se,
                     low, high, *interval, mean - level, verdict))  # fmt: skip
    return pd.DataFrame(rows, columns=columns)


def coverage_interval(mean: float, se: float, cells: int, *, trials: int | None = None) -> tuple[float, float]:
    """The interval a coverage verdict reads: the mean -+ ``NOISE_MULTIPLE`` standard errors (:func:`coverage_summary`).

    Parameters
    ----------
    mean : float
        The mean coverage over cells.
    se : float
        Its standard error (the cells' sd / sqrt(cells); NaN for fewer than two cells).
    cells : int
        The cells.
    trials : int, optional
        The trials of the exact interval (the cells' test rows; default ``cells``).

    Returns
    -------
    (float, float)
        ``mean -+ 2 se``; where ``se`` is 0 (identical cells), the Clopper-Pearson 95% interval of
        ``round(mean * trials)`` in ``trials`` (``scipy.stats.binomtest``); NaN, NaN for fewer than two cells.
    """
    if cells < 2 or math.isnan(se):
        return float("nan"), float("nan")
    if se > 0:
        return mean - NOISE_MULTIPLE * se, mean + NOISE_MULTIPLE * se
    trials = cells if trials is None else trials
    exact = scipy.stats.binomtest(round(mean * trials), trials).proportion_ci(confidence_level=0.95)
    return float(exact.low), float(exact.high)
