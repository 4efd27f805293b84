r"""Scores and calibration of class probabilities on held-out rows: one path for every estimate.

The posterior (mean over draws), every point estimate (MLE, MAP, posterior mean ...) and every
classical baseline are scored by the same functions, so a comparison is like for like:

- :func:`score_probabilities` (the array core): an ``(n, K)`` array of class probabilities and the
  observed class codes ``0 .. K-1`` give every metric of :data:`METRICS` as a float, with the counts
  of :data:`COUNTS`;
- :func:`score_decisions`: accuracy and balanced accuracy of a baseline that gives classes only;
- :func:`calibration_curve`: the CORP reliability curve of binary forecasts (PAV recalibration)
  and the decomposition of their Brier score;
- :func:`score_table` (the labelled wrapper): one row per named estimate, one column per metric,
  with the classes checked by name.

Definitions (for :math:`n` rows, :math:`K` classes, probabilities :math:`p_{ik}`, observed classes
:math:`y_i`; every metric is a mean over rows, so permuting rows changes none):

``log_loss``
    :math:`-\frac1n \sum_i \log p_{i y_i}`, computed here with ``np.log`` of the observed class's
    probability. scikit-learn's ``log_loss`` (1.9) clips probabilities to
    :math:`[\epsilon, 1 - \epsilon]` (:math:`\epsilon` = machine epsilon), which turns an observed
    class of probability 0 into a finite :math:`-\log \epsilon \approx 36` per row: an estimate
    that calls the observed outcome impossible would get a finite score. Here such a row gives
    :math:`-\log 0 = \infty`, the log loss is ``inf``, and the row is counted in
    ``n_zero_probability`` (on strictly positive probabilities the two agree to 1e-12).
``brier``
    :math:`\frac1n \sum_i \sum_k (p_{ik} - 1[y_i = k])^2`, range [0, 2], the same formula for every
    :math:`K`: scikit-learn's ``brier_score_loss(y, proba, labels=range(K), scale_by_half=False)``
    (multiclass since scikit-learn 1.7). For two classes this is TWICE the textbook binary Brier
    score :math:`\frac1n \sum_i (p_{i1} - y_i)^2` (scikit-learn's default for two classes, which
    halves it).
``accuracy``, ``balanced_accuracy``
    Of the most probable class (ties to the first class in class order: the Bayes decision under the
    0-1 loss, as :func:`bayesclass.inference.prediction.decisions.decide`), by scikit-learn's
    ``accuracy_score`` and ``recall_score(y, decisions, labels=<classes present in y>,
    average="macro")``. The latter is ``balanced_accuracy_score``'s definition (mean recall over the
    classes present in ``y``); it is called so because ``balanced_accuracy_score`` warns and drops a
    predicted code absent from ``y``, such as the ``-1`` of a row without a decision, where this
    counts that row as wrong.
``ece``
    Expected calibration error of the TOP-LABEL confidence :math:`c_i = \max_k p_{ik}` (Guo et al.
    2017), for every :math:`K` (for two classes :math:`c_i \ge 0.5`, so only the upper half of the
    bins is used): ``ece_bins`` equal-width bins :math:`[b/B, (b+1)/B)`, :math:`b = 0 .. B-1`, the
    edges ``np.linspace(0, 1, B + 1)``, the last bin closed at 1;
    :math:`\mathrm{ECE} = \sum_b \frac{n_b}{n} |\mathrm{acc}_b - \mathrm{conf}_b|`. No library in the
    dependencies has it; it is written here (``np.bincount``).
``calibration_mcb``, ``calibration_dsc``, ``calibration_unc``
    The CORP decomposition of the Brier score (Dimitriadis, Gneiting & Jordan 2021): for binary
    forecasts :math:`p` of events :math:`e`, :math:`\hat p` is the PAV (isotonic) recalibration of
    :math:`p` (scikit-learn's ``IsotonicRegression``, equal forecasts pooled) and :math:`\bar e` the
    event rate; with :math:`S` the mean Brier score, miscalibration :math:`\mathrm{MCB} = S(p) -
    S(\hat p) \ge 0`, discrimination :math:`\mathrm{DSC} = S(\bar e) - S(\hat p) \ge 0`, uncertainty
    :math:`\mathrm{UNC} = S(\bar e)`, and :math:`S(p) = \mathrm{MCB} - \mathrm{DSC} +
    \mathrm{UNC}` exactly. For :math:`K` classes: ONE-VS-REST per class, SUMMED over classes. As the
    multiclass Brier score above is the sum of the :math:`K` one-vs-rest binary Brier scores, the
    summed components decompose ``brier`` itself: ``brier = mcb - dsc + unc`` for every :math:`K`
    (for two classes each component is twice that of :func:`calibration_curve` on class 1).
``kl_to_truth`` (when the true :math:`t_{ik} = P(k \mid x_i)` of a known generator is given)
    :math:`\frac1n \sum_i \sum_k t_{ik} \log(t_{ik} / p_{ik})` (``scipy.special.rel_entr``;
    ``inf`` where :math:`p_{ik} = 0 < t_{ik}`).
``truth_coverage`` (when the truth and an interval, e.g. the posterior's 89% ETI, are given)
    The fraction of (row, class) pairs with :math:`\mathrm{low}_{ik} \le t_{ik} \le \mathrm{high}_{ik}`.

Undefined rows. A row of NaN probabilities is one the estimate cannot forecast (a naive Bayes MLE
gives such a row's features probability 0 under every class, so P(class | x) is 0/0). Such rows are
counted in ``n_undefined`` and never dropped silently; ``undefined_rows`` says how they are scored:

- ``"failed"`` (default): every estimate is scored on the same rows. An undefined row is a failed
  forecast: log loss :math:`\infty` (no positive probability is offered for the observed class; for
  the naive Bayes MLE the observed class literally has joint probability 0), and no decision, so it
  counts as wrong in accuracy and balanced accuracy. The metrics that need a probability vector on
  every row (Brier, ECE, the CORP components, KL, coverage) are NaN: no value can stand in for the
  missing vector, and a score over the other rows would compare this estimate on other rows than
  the rest.
- ``"excluded"``: every metric over the defined rows only (``n_rows`` still counts all rows, so
  ``n_rows - n_undefined`` rows were scored). Not like for like with estimates scored on all rows.

Bad input (probabilities outside [0, 1], rows not summing to 1 within ``1e-9``, partly NaN rows, a
shape that does not match the classes, codes outside ``0 .. K-1``, mismatched lengths or class names)
is a ``ValueError`` that names the argument, the offending value and the fix.

References
----------
Dimitriadis, T., Gneiting, T. and Jordan, A. I. (2021). Stable reliability diagrams for probabilistic
classifiers. *PNAS* 118(8), e2016191118.

Guo, C., Pleiss, G., Sun, Y. and Weinberger, K. Q. (2017). On calibration of modern neural
networks. *ICML*.
"""

from __future__ import annotations

import numbers
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from bayesclass._lazy import lazy_import

if TYPE_CHECKING:
    import pandas

if TYPE_CHECKING:
    import pandas as pd
    import scipy
else:
    scipy = lazy_import("scipy")  # SciPy loads its submodules (scipy.special ...) on first use
    pd = lazy_import("pandas")

__all__ = [
    "COUNTS",
    "DECISION_METRICS",
    "METRICS",
    "SUM_TOLERANCE",
    "TRUTH_METRICS",
    "UNDEFINED_ROWS",
    "CalibrationCurve",
    "calibration_curve",
    "metric_descriptions",
    "score_decisions",
    "score_probabilities",
    "score_table",
]

#: the metrics of class probabilities, in table order; the last two only where the truth is known
METRICS: tuple[str, ...] = (
    "log_loss",
    "brier",
    "accuracy",
    "balanced_accuracy",
    "ece",
    "calibration_mcb",
    "calibration_dsc",
    "calibration_unc",
    "kl_to_truth",
    "truth_coverage",
)
#: the metrics that need the true P(class | x) of a known generator
TRUTH_METRICS: tuple[str, ...] = ("kl_to_truth", "truth_coverage")
#: the metrics of decisions (a baseline that gives classes, not probabilities)
DECISION_METRICS: tuple[str, ...] = ("accuracy", "balanced_accuracy")
#: the counts returned beside the metrics
COUNTS: tuple[str, ...] = ("n_rows", "n_zero_probability", "n_undefined")
#: how far a row of probabilities may sum from 1
SUM_TOLERANCE = 1e-9

UndefinedRows = Literal["failed", "excluded"]
UNDEFINED_ROWS: tuple[str, ...] = ("failed", "excluded")


def metric_descriptions(*, ece_bins: int = 10) -> dict[str, str]:
    """One line per metric and count (for a report's legend), stating the ECE bins.

    Parameters
    ----------
    ece_bins : int, default 10
        Equal-width bins of the expected calibration error, as stated in its line.

    Returns
    -------
    dict of str to str
        Metric or count column -> what it is.
    """
    ece_bins = _positive_int("ece_bins", ece_bins)
    return {
        "log_loss": "mean -log P(observed class); inf if an observed class has probability 0",
        "brier": "mean over rows of sum_k (p_k - 1[y = k])^2, range [0, 2]",
        "accuracy": "share of rows whose most probable class is the observed one",
        "balanced_accuracy": "mean over the observed classes of the share of their rows classified right",
        "ece": f"expected calibration error of the top-label confidence, {ece_bins} equal-width bins on [0, 1]",
        "calibration_mcb": "CORP miscalibration of the Brier score (PAV), summed over classes one-vs-rest",
        "calibration_dsc": "CORP discrimination of the Brier score (PAV), summed over classes one-vs-rest",
        "calibration_unc": "CORP uncertainty of the Brier score, summed over classes one-vs-rest",
        "kl_to_truth": "mean KL divergence from the true P(class | x) to the estimate",
        "truth_coverage": (
            "share of (row, class) pairs whose true probability lies in the interval (the posterior's ETI, a point "
            "estimate's Wald interval)"
        ),
        "n_rows": "held-out rows",
        "n_zero_probability": "rows whose observed class has probability 0 (log loss inf)",
        "n_undefined": "rows the estimate cannot forecast (NaN probabilities, or no decision)",
    }


@dataclass(frozen=True)
class CalibrationCurve:
    r"""The CORP reliability curve of binary forecasts and the decomposition of their Brier score.

    Parameters
    ----------
    forecast : numpy.ndarray
        The distinct forecast probabilities, ascending.
    recalibrated : numpy.ndarray
        At each forecast, the PAV (isotonic) estimate of the conditional event probability
        P(event | forecast): the curve to plot against ``forecast`` (calibrated: on the diagonal).
    count : numpy.ndarray
        Rows at each forecast.
    mean_score : float
        The mean Brier score :math:`S(p) = \frac1n \sum_i (p_i - e_i)^2`.
    mcb, dsc, unc : float
        Miscalibration, discrimination and uncertainty; ``mean_score = mcb - dsc + unc``.
    """

    forecast: np.ndarray
    recalibrated: np.ndarray
    count: np.ndarray
    mean_score: float
    mcb: float
    dsc: float
    unc: float


def calibration_curve(proba_positive: np.ndarray, y_binary: np.ndarray) -> CalibrationCurve:
    r"""The CORP reliability curve and Brier-score decomposition of binary forecasts.

    CORP (Dimitriadis, Gneiting & Jordan 2021): the forecasts are recalibrated by the
    pool-adjacent-violators algorithm (scikit-learn's ``IsotonicRegression``, increasing, on [0, 1];
    equal forecasts are pooled, so the recalibration is a function of the forecast). With :math:`S`
    the mean Brier score, :math:`\hat p` the recalibrated forecasts and :math:`\bar e` the event rate:

    .. math::

        \mathrm{MCB} = S(p) - S(\hat p), \quad \mathrm{DSC} = S(\bar e) - S(\hat p), \quad
        \mathrm{UNC} = S(\bar e), \qquad S(p) = \mathrm{MCB} - \mathrm{DSC} + \mathrm{UNC}.

    MCB and DSC are non-negative (the identity and the constant :math:`\bar e` are isotonic maps, and
    PAV minimises the Brier score over those); a rounding error below 0 is reported as 0.

    Parameters
    ----------
    proba_positive : array-like of shape (n,)
        Forecast probabilities of the event, in [0, 1].
    y_binary : array-like of shape (n,)
        The outcomes: 1 (or True) where the event happened, else 0.

    Returns
    -------
    CalibrationCurve

    References
    ----------
    Dimitriadis, T., Gneiting, T. and Jordan, A. I. (2021). Stable reliability diagrams for
    probabilistic classifiers. *PNAS* 118(8), e2016191118.
    """
    forecast = _array("proba_positive", proba_positive, ndim=1, hint="one probability per row")
    if forecast.dtype.kind not in "biuf":
        raise ValueError(f"proba_positive must hold probabilities (numbers), got dtype {forecast.dtype}")
    forecast = forecast.astype(float)
    if forecast.size == 0:
        raise ValueError("proba_positive has no rows; a calibration curve needs at least one forecast")
    bad = ~np.isfinite(forecast) | (forecast < 0) | (forecast > 1)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"proba_positive[{i}] = {float(forecast[i])!r} is not a probability in [0, 1]; pass the event's "
            "probabilities (rows an estimate cannot forecast are left out by the caller, see score_probabilities)"
        )
    event = np.asarray(y_binary)
    if event.ndim != 1 or event.shape[0] != forecast.shape[0]:
        raise ValueError(
            f"y_binary has shape {event.shape}, proba_positive {forecast.shape}; give one outcome per forecast"
        )
    if event.dtype != bool and (event.dtype.kind not in "iu" or not np.isin(event, (0, 1)).all()):
        raise ValueError(
            f"y_binary must hold 0/1 integers or booleans, got {_preview(event)}; e.g. pass (y == k) for class k"
        )
    return _corp(forecast, event.astype(float))


def score_probabilities(
    proba: np.ndarray,
    y: np.ndarray,
    *,
    n_classes: int | None = None,
    true_proba: np.ndarray | None = None,
    interval: tuple[np.ndarray, np.ndarray] | None = None,
    ece_bins: int = 10,
    undefined_rows: UndefinedRows = "failed",
) -> dict[str, float]:
    """Every metric of one estimate's class probabilities on held-out rows.

    The definitions, and how undefined (NaN) rows are scored, are in the module docstring.

    Parameters
    ----------
    proba : array-like of shape (n, K)
        P(class | x) per row, classes in the order of the codes of ``y``; each row sums to 1 (within
        :data:`SUM_TOLERANCE`) or is all NaN (the estimate cannot forecast that row).
    y : array-like of int, shape (n,)
        The observed class codes, ``0 .. K-1``.
    n_classes : int, optional
        K; checked against the columns of ``proba`` (default: their number).
    true_proba : array-like of shape (n, K), optional
        The true P(class | x) of a known generator; adds ``kl_to_truth``.
    interval : (low, high) of arrays of shape (n, K), optional
        An interval of each probability (the posterior's ETI); with ``true_proba``, adds
        ``truth_coverage``.
    ece_bins : int
        Equal-width bins of the expected calibration error.
    undefined_rows : {"failed", "excluded"}
        How rows of NaN probabilities are scored (module docstring).

    Returns
    -------
    dict
        The metrics of :data:`METRICS` (those of :data:`TRUTH_METRICS` only when their inputs are
        given) as floats, then the counts of :data:`COUNTS` as ints: ``n_rows``,
        ``n_zero_probability`` (defined rows whose observed class has probability 0; each makes the
        log loss ``inf``) and ``n_undefined`` (NaN rows).

    Raises
    ------
    ValueError
        Bad input: see the module docstring.
    """
    proba = _probabilities("proba", proba, n_classes, allow_undefined=True)
    n, K = proba.shape
    codes = _codes("y", y, n, K)
    ece_bins = _positive_int("ece_bins", ece_bins)
    _choice("undefined_rows", undefined_rows, UNDEFINED_ROWS)
    truth = None if true_proba is None else _probabilities("true_proba", true_proba, K, n_rows=n)
    undefined = np.isnan(proba[:, 0])  # a row is all NaN or none (checked)
    bounds = None
    if interval is not None:
        if truth is None:
            raise ValueError(
                "interval was given without true_proba; truth_coverage needs the true P(class | x) of a known "
                "generator: pass true_proba=..., or leave interval out"
            )
        bounds = _interval(interval, proba.shape, undefined)

    counts = {
        "n_rows": n,
        "n_zero_probability": int((proba[~undefined, codes[~undefined]] == 0).sum()),
        "n_undefined": int(undefined.sum()),
    }
    if undefined_rows == "excluded" and undefined.any():
        keep = ~undefined
        proba, codes, undefined = proba[keep], codes[keep], undefined[keep]
        truth = None if truth is None else truth[keep]
        bounds = None if bounds is None else (bounds[0][keep], bounds[1][keep])
    names = [m for m in METRICS if m not in TRUTH_METRICS]
    names += ["kl_to_truth"] * (truth is not None) + ["truth_coverage"] * (bounds is not None)
    if codes.size == 0:  # every row undefined and excluded: nothing to score
        return {name: np.nan for name in names} | counts

    observed = np.full(codes.size, np.inf)  # -log P(observed class); an undefined row is a failed forecast
    with np.errstate(divide="ignore"):
        observed[~undefined] = -np.log(proba[~undefined, codes[~undefined]])
    decisions = np.where(undefined, -1, np.where(undefined[:, None], 0.0, proba).argmax(axis=1))
    scores = {"log_loss": float(np.mean(observed)), **_decision_scores(decisions, codes)}
    if undefined.any():  # "failed": the metrics of whole probability vectors are not defined
        return {name: scores.get(name, np.nan) for name in names} | counts

    from sklearn.metrics import brier_score_loss

    scores["brier"] = float(brier_score_loss(codes, proba, labels=np.arange(K), scale_by_half=False))
    scores["ece"] = _expected_calibration_error(proba, codes, ece_bins)
    curves = [_corp(proba[:, k], (codes == k).astype(float)) for k in range(K)]
    scores["calibration_mcb"] = float(sum(curve.mcb for curve in curves))
    scores["calibration_dsc"] = float(sum(curve.dsc for curve in curves))
    scores["calibration_unc"] = float(sum(curve.unc for curve in curves))
    if truth is not None:
        scores["kl_to_truth"] = float(np.mean(scipy.special.rel_entr(truth, proba).sum(axis=1)))
    if bounds is not None:
        scores["truth_coverage"] = float(np.mean((bounds[0] <= truth) & (truth <= bounds[1])))
    return {name: scores[name] for name in names} | counts


def score_decisions(
    decisions: np.ndarray,
    y: np.ndarray,
    *,
    n_classes: int,
    undefined_rows: UndefinedRows = "failed",
) -> dict[str, float]:
    """Accuracy and balanced accuracy of class decisions (a baseline that gives no probabilities).

    Parameters
    ----------
    decisions : array-like of int, shape (n,)
        The decided class codes ``0 .. K-1``; ``-1`` where no decision is made (as
        :func:`bayesclass.inference.prediction.decisions.decide` marks undefined rows).
    y : array-like of int, shape (n,)
        The observed class codes.
    n_classes : int
        K.
    undefined_rows : {"failed", "excluded"}
        ``"failed"``: a row without a decision counts as wrong; ``"excluded"``: the scores are over the
        decided rows.

    Returns
    -------
    dict
        ``accuracy``, ``balanced_accuracy`` (floats), ``n_rows`` and ``n_undefined`` (rows with ``-1``).
    """
    K = _n_classes(n_classes)
    _choice("undefined_rows", undefined_rows, UNDEFINED_ROWS)
    decided = _array("decisions", decisions, ndim=1, hint="one class code per row")
    if decided.dtype.kind not in "iu":
        raise ValueError(
            f"decisions must be integer class codes 0..{K - 1} (-1 for no decision), got dtype {decided.dtype} "
            f"({_preview(decided)}); convert labels to codes first"
        )
    if decided.size == 0:
        raise ValueError("decisions has no rows; scores need at least one held-out row")
    outside = (decided < -1) | (decided >= K)
    if outside.any():
        raise ValueError(
            f"decisions contains the code {int(decided[outside][0])}, outside 0..{K - 1} (n_classes={K}) and not "
            "-1 (no decision); decisions must be class codes in the class order"
        )
    codes = _codes("y", y, decided.size, K)
    undefined = decided == -1
    counts = {"n_rows": int(decided.size), "n_undefined": int(undefined.sum())}
    if undefined_rows == "excluded":
        decided, codes = decided[~undefined], codes[~undefined]
        if codes.size == 0:
            return dict.fromkeys(DECISION_METRICS, np.nan) | counts
    return _decision_scores(decided, codes) | counts


def score_table(
    estimates: Mapping[str, Any],
    y: Any,
    *,
    class_names: tuple[str, ...],
    decisions: Mapping[str, Any] | None = None,
    true_proba: Any = None,
    intervals: Mapping[str, tuple[Any, Any]] | None = None,
    ece_bins: int = 10,
    undefined_rows: UndefinedRows = "failed",
) -> pandas.DataFrame:
    """One row per estimate, one column per metric: the posterior, point estimates and baselines alike.

    The labelled wrapper of :func:`score_probabilities` and :func:`score_decisions`: probabilities may
    be ``xarray.DataArray`` s with a ``class`` dimension, whose class coordinate is matched BY NAME to
    ``class_names`` (reordered; missing or unknown classes are an error); plain arrays must have one
    column per class in the order of ``class_names``.

    Parameters
    ----------
    estimates : mapping of str to array-like of shape (n, K), or None
        P(class | x) of each estimate, by name (e.g. ``"posterior"``, ``"map"``, ``"mle"``,
        ``"baseline: knn"``); None for an estimate that gives decisions only (then in ``decisions``).
    y : array-like of shape (n,)
        The observed classes: codes ``0 .. K-1``, or names from ``class_names``.
    class_names : tuple of str
        The K classes, in code order.
    decisions : mapping of str to array-like of int, optional
        Class codes decided by estimates without probabilities (``-1``: no decision); a name not in
        ``estimates`` adds a row after theirs.
    true_proba : array-like of shape (n, K), optional
        The true P(class | x) of a known generator: adds the columns ``kl_to_truth`` and
        ``truth_coverage``.
    intervals : mapping of str to (low, high), optional
        Intervals of the probabilities of some estimates (the posterior's ETI, point estimates' Wald intervals),
        for ``truth_coverage``.
    ece_bins, undefined_rows
        As in :func:`score_probabilities`.

    Returns
    -------
    pandas.DataFrame
        Index ``estimate`` in the given order; columns the metrics of :data:`METRICS` (those of
        :data:`TRUTH_METRICS` only with ``true_proba``), then the counts of :data:`COUNTS`, all float.
        NaN where a metric does not apply (log loss of decisions, coverage of an estimate without an
        interval, ``n_zero_probability`` of decisions); ``inf`` is kept. ``attrs`` holds
        ``class_names``, ``ece_bins``, ``undefined_rows`` and ``metric_descriptions``.
    """
    class_names = _class_names(class_names)
    K = len(class_names)
    if not isinstance(estimates, Mapping):
        raise ValueError(f"estimates must be a mapping of estimate names to probabilities, got {type(estimates)}")
    decisions = {} if decisions is None else decisions
    intervals = {} if intervals is None else intervals
    for label, mapping in (("decisions", decisions), ("intervals", intervals)):
        if not isinstance(mapping, Mapping):
            raise ValueError(f"{label} must be a mapping of estimate names to arrays, got {type(mapping).__name__}")
    names = list(estimates) + [name for name in decisions if name not in estimates]
    if not names:
        raise ValueError("score_table got no estimates and no decisions; give at least one estimate to score")
    for name in names:
        if not isinstance(name, str) or not name:
            raise ValueError(f"estimate names must be non-empty strings, got {name!r}")
    codes = _label_codes(y, class_names)
    truth = None
    if true_proba is not None:  # checked here, so that its error names it rather than the first estimate
        n_rows = codes.shape[0] if codes.ndim == 1 else None
        truth = _probabilities("true_proba", _aligned("true_proba", true_proba, class_names), K, n_rows=n_rows)
    if intervals and truth is None:
        raise ValueError(
            f"intervals were given for {sorted(intervals)} without true_proba; coverage needs the true "
            "P(class | x) of a known generator: pass true_proba=..., or leave intervals out"
        )
    for name in intervals:
        if estimates.get(name) is None:
            raise ValueError(
                f"intervals has an entry for {name!r}, which is not an estimate with probabilities "
                f"(estimates: {list(estimates)}); key intervals by the estimate's name"
            )

    rows: dict[str, dict[str, float]] = {}
    for name in names:
        try:
            rows[name] = _score_estimate(
                estimates.get(name),
                decisions.get(name) if name in decisions else None,
                name in decisions,
                intervals.get(name),
                codes,
                class_names=class_names,
                truth=truth,
                ece_bins=ece_bins,
                undefined_rows=undefined_rows,
            )
        except ValueError as error:
            raise ValueError(f"estimate {name!r}: {error}") from None
    columns = [m for m in METRICS if truth is not None or m not in TRUTH_METRICS] + list(COUNTS)
    table = pd.DataFrame.from_dict(rows, orient="index", columns=columns, dtype=float)
    table.index.name = "estimate"
    table.attrs.update(
        class_names=class_names,
        ece_bins=ece_bins,
        undefined_rows=undefined_rows,
        metric_descriptions={c: d for c, d in metric_descriptions(ece_bins=ece_bins).items() if c in columns},
    )
    return table


def _score_estimate(
    proba: Any,
    decided: Any,
    has_decisions: bool,
    interval: Any,
    codes: np.ndarray,
    *,
    class_names: tuple[str, ...],
    truth: np.ndarray | None,
    ece_bins: int,
    undefined_rows: UndefinedRows,
) -> dict[str, float]:
    """One row of :func:`score_table`: the scores of an estimate's probabilities, or of its decisions."""
    K = len(class_names)
    if proba is not None:
        if has_decisions:
            raise ValueError(
                "has both probabilities and decisions; its decisions are the most probable classes of "
                "its probabilities: give decisions only for an estimate whose probability is None"
            )
        if interval is not None:
            if not isinstance(interval, tuple | list) or len(interval) != 2:
                raise ValueError(f"interval must be a pair (low, high) of arrays, got {type(interval)}")
            interval = tuple(_aligned(f"interval[{i}]", bound, class_names) for i, bound in enumerate(interval))
        return score_probabilities(
            _aligned("proba", proba, class_names),
            codes,
            n_classes=K,
            true_proba=truth,
            interval=interval,
            ece_bins=ece_bins,
            undefined_rows=undefined_rows,
        )
    if has_decisions:
        return score_decisions(decided, codes, n_classes=K, undefined_rows=undefined_rows)
    raise ValueError(
        "has neither probabilities nor decisions; give its probabilities in estimates or its class codes in decisions"
    )


# --- the parts no library has --------------------------------------------------------------------------------


def _corp(forecast: np.ndarray, event: np.ndarray) -> CalibrationCurve:
    """CORP for validated forecasts in [0, 1] and events as floats 0/1."""
    from sklearn.isotonic import IsotonicRegression

    recalibrated = IsotonicRegression(y_min=0.0, y_max=1.0, increasing=True, out_of_bounds="clip").fit_transform(
        forecast, event
    )
    event_rate = float(np.mean(event))
    score = float(np.mean((forecast - event) ** 2))
    score_recalibrated = float(np.mean((recalibrated - event) ** 2))
    uncertainty = float(np.mean((event_rate - event) ** 2))
    distinct, first, count = np.unique(forecast, return_index=True, return_counts=True)
    return CalibrationCurve(
        forecast=distinct,
        recalibrated=recalibrated[first],
        count=count,
        mean_score=score,
        mcb=max(score - score_recalibrated, 0.0),
        dsc=max(uncertainty - score_recalibrated, 0.0),
        unc=uncertainty,
    )


def _expected_calibration_error(proba: np.ndarray, codes: np.ndarray, bins: int) -> float:
    """Top-label ECE in ``bins`` equal-width bins [b/B, (b+1)/B), the last closed at 1."""
    confidence = proba.max(axis=1)
    correct = (proba.argmax(axis=1) == codes).astype(float)
    which = np.digitize(confidence, np.linspace(0.0, 1.0, bins + 1)[1:-1])
    gap = np.bincount(which, weights=correct, minlength=bins) - np.bincount(which, weights=confidence, minlength=bins)
    return float(np.sum(np.abs(gap)) / proba.shape[0])


def _decision_scores(decisions: np.ndarray, codes: np.ndarray) -> dict[str, float]:
    """scikit-learn's accuracy and balanced accuracy; a decision -1 (none) is wrong, with no warning."""
    from sklearn.metrics import accuracy_score, recall_score

    return {
        "accuracy": float(accuracy_score(codes, decisions)),
        "balanced_accuracy": float(recall_score(codes, decisions, labels=np.unique(codes), average="macro")),
    }


# --- validation ------------------------------------------------------------------------------------------------


def _preview(values: np.ndarray, limit: int = 6) -> str:
    flat = np.asarray(values).ravel()
    shown = ", ".join(repr(v.item() if hasattr(v, "item") else v) for v in flat[:limit])
    return f"[{shown}{', ...' if flat.size > limit else ''}]"


def _array(name: str, value: Any, *, ndim: int, hint: str) -> np.ndarray:
    if value is None:
        raise ValueError(f"{name} is None; {hint}")
    array = np.asarray(value)
    if array.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional ({hint}), got shape {array.shape}")
    return array


def _positive_int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}; e.g. {name}=10")
    return int(value)


def _n_classes(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 2:
        raise ValueError(f"n_classes must be an integer >= 2, got {value!r}; pass the number of classes K")
    return int(value)


def _choice(name: str, value: Any, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise ValueError(f"{name}={value!r} is not one of {', '.join(map(repr, choices))}")


def _probabilities(
    name: str, value: Any, n_classes: int | None, *, allow_undefined: bool = False, n_rows: int | None = None
) -> np.ndarray:
    """A float (n, K) array of probabilities; all-NaN rows only where ``allow_undefined``."""
    if value is None:
        raise ValueError(f"{name} is None; pass an array of shape (n_rows, n_classes)")
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be an array of probabilities (numbers), got {type(value).__name__}") from None
    if array.ndim != 2:
        raise ValueError(
            f"{name} must have shape (n_rows, n_classes), got shape {array.shape}; for two classes with P(class 1) "
            "= p pass np.column_stack([1 - p, p])"
        )
    K = array.shape[1] if n_classes is None else _n_classes(n_classes)
    if array.shape[1] != K:
        raise ValueError(
            f"{name} has {array.shape[1]} columns but there are {K} classes (n_classes={K}); give one column per "
            "class, in the class order"
        )
    if K < 2:
        raise ValueError(f"{name} has {K} column(s); class probabilities need at least 2 classes (one column each)")
    if n_rows is not None and array.shape[0] != n_rows:
        raise ValueError(
            f"{name} has {array.shape[0]} rows but there are {n_rows} held-out rows (proba, y); give one row per "
            "held-out row"
        )
    if array.shape[0] == 0:
        raise ValueError(f"{name} has no rows; scores need at least one held-out row")
    missing = np.isnan(array)
    rows_missing = missing.any(axis=1)
    partly = rows_missing & ~missing.all(axis=1)
    if partly.any():
        i = int(np.flatnonzero(partly)[0])
        raise ValueError(
            f"{name} row {i} is partly NaN ({_preview(array[i])}); a row is either probabilities or all NaN (the "
            "estimate cannot forecast that row)"
        )
    if rows_missing.any() and not allow_undefined:
        i = int(np.flatnonzero(rows_missing)[0])
        raise ValueError(f"{name} row {i} is NaN; {name} must give probabilities on every row")
    filled = np.where(missing, 0.5, array)  # NaN rows pass the checks below
    outside = ~np.isfinite(filled) | (filled < 0) | (filled > 1)
    if outside.any():
        i, k = np.argwhere(outside)[0]
        hint = " (log probabilities? pass np.exp of them)" if filled[i, k] < 0 else ""
        raise ValueError(
            f"{name}[{i}, {k}] = {float(array[i, k])!r} is not a probability in [0, 1]{hint}; pass P(class | x)"
        )
    sums = array.sum(axis=1)
    off = ~rows_missing & (np.abs(sums - 1.0) > SUM_TOLERANCE)
    if off.any():
        i = int(np.flatnonzero(off)[0])
        raise ValueError(
            f"{name} row {i} sums to {float(sums[i])!r}, not 1 (tolerance {SUM_TOLERANCE:g}); pass the probabilities "
            "of all classes, normalised (p / p.sum(axis=1, keepdims=True))"
        )
    return array


def _codes(name: str, value: Any, n: int, K: int) -> np.ndarray:
    """Integer class codes 0..K-1, one per row."""
    if value is None:
        raise ValueError(f"{name} is None; pass the observed class codes 0..{K - 1}")
    codes = np.asarray(value)
    if codes.ndim != 1:
        raise ValueError(f"{name} must be 1-dimensional (one class code per row), got shape {codes.shape}")
    if codes.dtype.kind not in "iu":
        raise ValueError(
            f"{name} must be integer class codes 0..{K - 1}, got dtype {codes.dtype} ({_preview(codes)}); convert "
            "labels to codes in the class order first (e.g. Dataset.y)"
        )
    if codes.shape[0] != n:
        raise ValueError(f"{name} has {codes.shape[0]} rows but proba has {n}; give one label per row of proba")
    outside = (codes < 0) | (codes >= K)
    if outside.any():
        raise ValueError(
            f"{name} contains the code {int(codes[outside][0])}, outside 0..{K - 1} (n_classes={K}); codes index "
            "the columns of proba"
        )
    return codes.astype(np.int64, copy=False)


def _interval(interval: Any, shape: tuple[int, int], undefined: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if not isinstance(interval, tuple | list) or len(interval) != 2:
        raise ValueError(f"interval must be a pair (low, high) of arrays of shape {shape}, got {type(interval)}")
    bounds = []
    for i, bound in enumerate(interval):
        try:
            array = np.asarray(bound, dtype=float)
        except (TypeError, ValueError):
            raise ValueError(f"interval[{i}] must be an array of probabilities, got {type(bound).__name__}") from None
        if array.shape != shape:
            raise ValueError(f"interval[{i}] has shape {array.shape}, proba {shape}; give a bound per probability")
        bad = ~undefined[:, None] & (~np.isfinite(array) | (array < 0) | (array > 1))
        if bad.any():
            r, k = np.argwhere(bad)[0]
            raise ValueError(
                f"interval[{i}][{r}, {k}] = {float(array[r, k])!r} is not a probability in [0, 1]; interval bounds "
                "are probabilities (low, high)"
            )
        bounds.append(array)
    low, high = bounds
    crossed = ~undefined[:, None] & (low > high)
    if crossed.any():
        r, k = np.argwhere(crossed)[0]
        raise ValueError(
            f"interval low[{r}, {k}] = {float(low[r, k])!r} exceeds high = {float(high[r, k])!r}; pass (low, high) in "
            "that order"
        )
    return low, high


def _class_names(class_names: Any) -> tuple[str, ...]:
    if isinstance(class_names, str) or not isinstance(class_names, tuple | list):
        raise ValueError(f"class_names must be a tuple of class names, got {class_names!r}")
    names = tuple(str(name) for name in class_names)
    if len(names) < 2 or len(set(names)) != len(names):
        raise ValueError(f"class_names must hold two or more distinct names, got {list(names)}")
    return names


def _label_codes(y: Any, class_names: tuple[str, ...]) -> np.ndarray:
    """Codes from integer codes or from class names."""
    labels = np.asarray(y)
    if labels.dtype.kind in "USO" and labels.ndim == 1:
        index = {name: code for code, name in enumerate(class_names)}
        unknown = sorted({str(label) for label in labels.tolist() if str(label) not in index})
        if unknown:
            raise ValueError(
                f"y holds the label(s) {unknown[:5]} not in class_names {list(class_names)}; give codes or names "
                "of the fitted classes"
            )
        return np.array([index[str(label)] for label in labels.tolist()], dtype=np.int64)
    return labels


def _aligned(name: str, value: Any, class_names: tuple[str, ...]) -> Any:
    """A DataArray's values with rows first and its classes ordered as ``class_names``; other values as given."""
    xarray = sys.modules.get("xarray")  # a value can only be a DataArray if xarray is imported
    if xarray is None or not isinstance(value, xarray.DataArray):
        return value
    if "class" not in value.dims or value.ndim != 2:
        raise ValueError(
            f"{name} has dims {value.dims}; a labelled {name} needs 2 dims, one of them 'class' (average over "
            "draws first, e.g. .mean(('chain', 'draw')))"
        )
    have = [str(c) for c in value["class"].values]
    missing = [c for c in class_names if c not in have]
    unknown = [c for c in have if c not in class_names]
    if missing or unknown or len(set(have)) != len(have):
        raise ValueError(
            f"{name} has the classes {have}, the table {list(class_names)} (missing {missing}, unknown {unknown}); "
            "score probabilities of the same classes"
        )
    order = [have.index(c) for c in class_names]
    return value.transpose(..., "class").values[:, order]
