r"""A run's conclusion, computed: the findings a report states in a few sentences, each with its numbers.

Four findings, each built only from numbers the page shows elsewhere (:mod:`bayesclass.reports.conclusion` words
them; nothing here is prose):

(a) :class:`ConvergenceFinding`: the convergence verdict and its numbers (worst r_hat, smallest bulk and tail
    ESS, divergences), or "no verdict" for independent draws (exact conjugate, Laplace) and point estimates;
(b) :class:`ScoreFinding`, one per held-out split: which of the run's estimates (the posterior, each point
    estimate's plug-in, an exact predictive) has the smallest held-out log loss, and the verdict of the paired
    difference to the runner-up (:func:`difference_verdict`, below): with per-row log losses
    :math:`\ell_{e,i} = -\log p_e(y_i \mid x_i)`, :math:`d_i = \ell_{\text{runner-up},i} - \ell_{\text{best},i}`,
    :math:`\bar d` its mean and :math:`\operatorname{se} = \operatorname{sd}(d) / \sqrt{n}` (``ddof=1``);
(c) :class:`MissingEstimate`, one per point estimate that does not exist, with the family's reason (recorded by
    the fit in ``ResultInfo.point_estimate_status``: separation, an empty class, a zero variance ...);
(d) :class:`IntervalFinding`, one per point estimate with a stored covariance: the posterior's equal-tailed
    intervals against the estimate's Wald intervals of the same probability, parameter by parameter (median and
    range of the width ratio posterior / Wald, and the largest shift of the posterior mean from the estimate in
    posterior sds); left out, with the reason, where no estimate stores a covariance or there is no posterior.

(e) :class:`ParetoFinding`: the training rows whose PSIS-LOO Pareto k exceeds ``PARETO_K_LIMIT`` (0.7,
    Vehtari et al. 2017): where there are any, the run's leave-one-out estimate is unreliable (a warning).

A finding that cannot be made is an :class:`Omitted` (its topic and why). Generic over families and estimates:
nothing here branches on a family's or a method's name.

When is a difference real? One rule (:func:`difference_verdict`) for every page (a run's, the several-families
page, a study's): a difference of means :math:`\bar d` with standard error :math:`\operatorname{se}` is

- ``"within noise"`` where :math:`|\bar d| \le 2\,\operatorname{se}` (``NOISE_MULTIPLE``; an undefined standard
  error, one row or one cell, is no evidence either);
- ``"negligible"`` where it is beyond the noise but :math:`|\bar d|` is at most the score's practical threshold
  (:data:`PRACTICAL_THRESHOLDS`): measurable, too small to matter;
- ``"real"`` where it is beyond both (an infinite difference, an observed class given probability 0, is real).

The thresholds, per row (a difference of means over rows or cells, or an elpd difference divided by its rows):

- log loss (and elpd, KL to the truth: the same nats per row): **0.01 nats**. A mean difference of 0.01 nats per row
  is a likelihood ratio of :math:`e^{0.01} \approx 1.01` per row: the observed class's probability about 1%
  higher (relative) on average, e.g. 0.800 against 0.792. Below that two estimates' probabilities lead to the same
  decisions under any loss that is not knife-edge, and a posterior and a plug-in are interchangeable; it takes 100
  rows for such a difference to add up to one nat (odds of e to 1) of evidence.
- Brier score (summed over classes, :mod:`~bayesclass.inference.evaluation.scores`): **0.005** per row, half the
  log loss's. An error :math:`\delta` in a probability :math:`p` costs about :math:`\delta^2 / (2 p (1 - p))` in log
  loss and :math:`2\delta^2` in the (two-class) Brier score: equal at :math:`p = 1/2`, the Brier's half at
  :math:`p \approx 0.85`, typical of a classifier that is right most of the time; so the two thresholds call
  about the same errors in probability negligible.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from bayesclass.inference.criticism.diagnostics import MAX_R_HAT, MIN_ESS
from bayesclass.inference.criticism.loo import PARETO_K_LIMIT, LooSummary
from bayesclass.inference.evaluation.report_data import Estimates

__all__ = [
    "NOISE_MULTIPLE",
    "PRACTICAL_THRESHOLDS",
    "SHIFT_LIMIT",
    "WIDTH_TOLERANCE",
    "Conclusion",
    "ConvergenceFinding",
    "IntervalFinding",
    "MissingEstimate",
    "Omitted",
    "ParetoFinding",
    "ScoreFinding",
    "Verdict",
    "conclude",
    "convergence_finding",
    "difference_verdict",
    "interval_findings",
    "missing_estimates",
    "paired_log_loss",
    "pareto_finding",
]

#: a difference is beyond its noise when it exceeds this many standard errors
NOISE_MULTIPLE = 2.0
#: per score, (the practical threshold per row, its unit): a difference beyond its noise but at most this is
#: "negligible" (the module docstring says why these values); elpd per row and KL are in log loss's nats per row
PRACTICAL_THRESHOLDS: dict[str, tuple[float, str]] = {
    "log_loss": (0.01, "nats per row"),
    "kl_to_truth": (0.01, "nats per row"),
    "brier": (0.005, "per row"),
}
#: a difference at most this is rounding, within noise whatever its standard error: two estimates with the same
#: probabilities (a stack whose weight is all on one member) differ by ~1e-17 with a standard error of ~1e-17
ROUNDING_DIFFERENCE = 1e-9
#: posterior intervals are "wider" / "narrower" than Wald intervals when the median width ratio is outside 1 -+ this
WIDTH_TOLERANCE = 0.05
#: the posterior is "shifted" from a point estimate when a posterior mean lies this many posterior sds from it
SHIFT_LIMIT = 0.5

Topic = Literal["convergence", "scores", "missing", "intervals"]
#: the verdict of a difference (:func:`difference_verdict`)
Verdict = Literal["real", "negligible", "within noise"]


def difference_verdict(difference: float, standard_error: float, *, score: str = "log_loss") -> Verdict:
    """Whether a difference of means is real, beyond its noise but negligible, or within its noise (module docstring).

    Parameters
    ----------
    difference : float
        The mean difference (either sign; an elpd difference divided by its rows for PSIS-LOO).
    standard_error : float
        Its standard error, on the same scale (NaN where undefined: no evidence of a difference).
    score : {"log_loss", "kl_to_truth", "brier"}, default "log_loss"
        The score, whose :data:`PRACTICAL_THRESHOLDS` entry applies.

    Returns
    -------
    {"real", "negligible", "within noise"}
        "real" where ``|difference| > NOISE_MULTIPLE * standard_error`` and above the threshold (an infinite
        difference is real), "negligible" beyond the noise but at most the threshold, else "within noise" (also
        at most ``ROUNDING_DIFFERENCE``, whatever the standard error).

    Raises
    ------
    ValueError
        ``score`` has no practical threshold.
    """
    if score not in PRACTICAL_THRESHOLDS:
        raise ValueError(f"score={score!r} has no practical threshold; give one of {', '.join(PRACTICAL_THRESHOLDS)}")
    size = abs(float(difference))
    if math.isinf(size):
        return "real"
    if not size > NOISE_MULTIPLE * float(standard_error) or size <= ROUNDING_DIFFERENCE:  # NaN: no evidence
        return "within noise"
    return "real" if size > PRACTICAL_THRESHOLDS[score][0] else "negligible"


@dataclass(frozen=True)
class Omitted:
    """A finding that cannot be made from the run's numbers, and why.

    Parameters
    ----------
    topic : {"convergence", "scores", "missing", "intervals"}
        Which sentence is left out.
    reason : str
        Why (e.g. "no held-out rows", "no point estimate stores a covariance").
    """

    topic: Topic
    reason: str


@dataclass(frozen=True)
class ConvergenceFinding:
    """The convergence verdict of the run's posterior draws, with its numbers.

    Parameters
    ----------
    verdict : {"pass", "fail", "no_verdict"}
        "no_verdict": independent draws (exact conjugate, Laplace), which have no Markov chain to converge.
    method : str
        The fit's method.
    n_chains, n_draws : int
        Chains and draws per chain.
    max_r_hat, min_ess_bulk, min_ess_tail : float
        The worst values over every parameter element (NaN where undefined).
    n_divergences : int or None
        Divergent transitions after warm-up (None: the sampler integrates no trajectories).
    failures : tuple of str
        The verdict's failure messages (empty unless ``verdict == "fail"``).
    thresholds : tuple of (float, float)
        The verdict's limits: r_hat at most the first, ESS at least the second.
    """

    verdict: Literal["pass", "fail", "no_verdict"]
    method: str
    n_chains: int
    n_draws: int
    max_r_hat: float
    min_ess_bulk: float
    min_ess_tail: float
    n_divergences: int | None
    failures: tuple[str, ...]
    thresholds: tuple[float, float]

    @property
    def applies(self) -> bool:
        """Whether there is a verdict (not independent draws), as on the ConvergenceReport it was made from."""
        return self.verdict != "no_verdict"

    @property
    def passed(self) -> bool:
        """Whether the verdict passed, as on the ConvergenceReport it was made from."""
        return self.verdict == "pass"


@dataclass(frozen=True)
class ScoreFinding:
    """The best of the run's estimates by held-out log loss, and its paired difference to the runner-up.

    Parameters
    ----------
    split : str
        The held-out split.
    n_rows : int
        Rows scored (rows every compared estimate defines).
    log_losses : tuple of (str, float)
        Each compared estimate's mean log loss, best first.
    difference : float
        Mean of the per-row log-loss differences runner-up minus best (inf where the runner-up gives an observed
        class probability 0; NaN without a runner-up).
    standard_error : float
        Their standard deviation (``ddof=1``) over ``sqrt(n_rows)`` (NaN where undefined: one row, an infinite
        difference, no runner-up).
    verdict : {"real", "negligible", "within noise"}
        :func:`difference_verdict` of the difference and its standard error (log loss's threshold).
    zero_probability_rows : tuple of (str, int)
        Per compared estimate with an infinite log loss, its rows of observed class probability 0.
    left_out : tuple of (str, int)
        Estimates not compared, with their undefined rows (probability 0 under every class, or NaN).
    """

    split: str
    n_rows: int
    log_losses: tuple[tuple[str, float], ...]
    difference: float
    standard_error: float
    verdict: Verdict
    zero_probability_rows: tuple[tuple[str, int], ...] = ()
    left_out: tuple[tuple[str, int], ...] = ()

    @property
    def best(self) -> str:
        """The estimate with the smallest mean log loss."""
        return self.log_losses[0][0]

    @property
    def runner_up(self) -> str | None:
        """The second smallest (None where one estimate is compared)."""
        return self.log_losses[1][0] if len(self.log_losses) > 1 else None

    @property
    def ratio(self) -> float:
        """The difference in standard errors (NaN where the standard error is 0 or undefined)."""
        if not self.standard_error > 0:
            return float("nan")
        return self.difference / self.standard_error


@dataclass(frozen=True)
class MissingEstimate:
    """A point estimate that does not exist for the training rows, and the family's reason.

    Parameters
    ----------
    kind : str
        The point estimate kind (``"mle"``, ``"map"`` ...).
    reason : str
        Why, as the fit recorded it (``ResultInfo.point_estimate_status``).
    n_rows : int
        The training rows it was attempted on.
    n_estimates : int
        The point estimates that do exist beside it.
    """

    kind: str
    reason: str
    n_rows: int
    n_estimates: int


@dataclass(frozen=True)
class IntervalFinding:
    """The posterior's intervals against one point estimate's Wald intervals, over the parameters with both.

    Parameters
    ----------
    kind : str
        The point estimate kind.
    interval_prob : float
        The probability of both intervals.
    n_parameters : int
        Parameter elements with both intervals.
    median_width_ratio, min_width_ratio, max_width_ratio : float
        Width of the posterior's equal-tailed interval over the Wald interval's: median, smallest, largest.
    largest_shift : float
        The largest ``|posterior mean - estimate| / posterior sd``.
    shift_parameter : str
        The parameter where it is.
    """

    kind: str
    interval_prob: float
    n_parameters: int
    median_width_ratio: float
    min_width_ratio: float
    max_width_ratio: float
    largest_shift: float
    shift_parameter: str

    @property
    def width(self) -> Literal["wider", "narrower", "as wide"]:
        """The word for the median ratio: wider / narrower outside ``1 -+ WIDTH_TOLERANCE``, else as wide."""
        if self.median_width_ratio > 1 + WIDTH_TOLERANCE:
            return "wider"
        if self.median_width_ratio < 1 - WIDTH_TOLERANCE:
            return "narrower"
        return "as wide"

    @property
    def shifted(self) -> bool:
        """Whether some posterior mean lies at least ``SHIFT_LIMIT`` posterior sds from the estimate."""
        return self.largest_shift >= SHIFT_LIMIT


@dataclass(frozen=True)
class ParetoFinding:
    """The training rows whose PSIS-LOO Pareto k exceeds the limit: the leave-one-out estimate's reliability.

    Parameters
    ----------
    n_high_k : int
        Training rows with Pareto :math:`k >` ``limit`` (0: the estimate is reliable).
    n_rows : int
        Training rows.
    max_k : float
        The largest Pareto k.
    limit : float
        ``PARETO_K_LIMIT`` (0.7, Vehtari et al. 2017; arviz_stats hard-codes it in its ``good_k`` rule and
        exposes no constant).
    """

    n_high_k: int
    n_rows: int
    max_k: float
    limit: float

    @property
    def reliable(self) -> bool:
        """Whether no row has Pareto k above the limit."""
        return self.n_high_k == 0


@dataclass(frozen=True)
class Conclusion:
    """A run's findings, in the order a report states them.

    Parameters
    ----------
    convergence : ConvergenceFinding or Omitted
        (a) The convergence verdict (Omitted for a point estimate).
    scores : tuple of ScoreFinding or Omitted
        (b) One per held-out split (one Omitted without held-out rows).
    missing : tuple of MissingEstimate
        (c) The point estimates that do not exist (empty where all exist).
    intervals : tuple of IntervalFinding or Omitted
        (d) One per point estimate with a stored covariance (one Omitted where none can be compared).
    pareto : ParetoFinding or None, default None
        (e) The PSIS-LOO Pareto k of the training rows (None without a PSIS-LOO estimate).
    """

    convergence: ConvergenceFinding | Omitted
    scores: tuple[ScoreFinding | Omitted, ...]
    missing: tuple[MissingEstimate, ...]
    intervals: tuple[IntervalFinding | Omitted, ...]
    pareto: ParetoFinding | None = None


def conclude(
    *,
    convergence: ConvergenceFinding | Omitted,
    predicted: Mapping[str, tuple[Mapping[str, Any], np.ndarray]],
    compared: Sequence[str],
    status: Mapping[str, str],
    n_rows: int,
    estimates: Estimates,
    interval_prob: float,
    no_heldout_reason: str = "no held-out rows",
    loo: object = None,
) -> Conclusion:
    """The run's :class:`Conclusion` from numbers already computed for its report.

    Parameters
    ----------
    convergence : ConvergenceFinding or Omitted
        :func:`convergence_finding` of the run's verdict.
    predicted : mapping of str to (mapping of str to array, array)
        Per held-out split: each estimate's (n, K) class probabilities by label, and the rows' class codes.
    compared : sequence of str
        The labels of the run's own estimates among them (the posterior, the plug-ins; baselines are not compared).
    status : mapping of str to str
        Per point estimate kind, "exists" or why not (``ResultInfo.point_estimate_status``).
    n_rows : int
        Training rows.
    estimates : Estimates
        The posterior beside every point estimate (rows of
        :func:`~bayesclass.inference.evaluation.parameters.parameter_comparison`).
    interval_prob : float
        The probability of the posterior and Wald intervals in ``estimates``.
    no_heldout_reason : str, default "no held-out rows"
        Why there are no held-out rows, where ``predicted`` is empty.
    loo : LooSummary, optional
        The run's PSIS-LOO (:func:`bayesclass.inference.criticism.loo.loo`), for :func:`pareto_finding`; anything
        else (None, why it is unavailable) gives no Pareto finding.

    Returns
    -------
    Conclusion
    """
    scores: list[ScoreFinding | Omitted] = []
    for split, (proba, y) in predicted.items():
        chosen = {label: proba[label] for label in compared if proba.get(label) is not None}
        scores.append(paired_log_loss(chosen, y, split=split))
    if not scores:
        scores.append(Omitted("scores", no_heldout_reason))
    return Conclusion(
        convergence=convergence,
        scores=tuple(scores),
        missing=missing_estimates(status, n_rows=n_rows),
        intervals=interval_findings(estimates, interval_prob=interval_prob),
        pareto=pareto_finding(loo) if isinstance(loo, LooSummary) else None,
    )


def pareto_finding(summary: LooSummary) -> ParetoFinding:
    """The Pareto k finding of a PSIS-LOO summary (module docstring, (e)).

    Parameters
    ----------
    summary : LooSummary
        :func:`bayesclass.inference.criticism.loo.loo` of a result (``pareto_k`` per training row, ``n_high_k``).

    Returns
    -------
    ParetoFinding
    """
    pareto_k = np.asarray(summary.pareto_k, dtype=float)
    return ParetoFinding(int(summary.n_high_k), int(pareto_k.size), float(np.nanmax(pareto_k)), PARETO_K_LIMIT)


def convergence_finding(
    report: Any, *, method: str, n_chains: int, n_draws: int, integrates_trajectories: bool
) -> ConvergenceFinding:
    """The convergence finding of a verdict (:func:`bayesclass.inference.criticism.diagnose`).

    Parameters
    ----------
    report : ConvergenceReport
        The verdict: ``max_r_hat``, ``min_ess_bulk``, ``min_ess_tail``, ``n_divergences``, ``passed``,
        ``failures``, ``applies`` (False for independent draws).
    method : str
        The fit's method.
    n_chains, n_draws : int
        Chains and draws per chain.
    integrates_trajectories : bool
        Whether the sampler integrates trajectories (divergences apply; None otherwise).

    Returns
    -------
    ConvergenceFinding
    """
    verdict: Literal["pass", "fail", "no_verdict"] = (
        "no_verdict" if not report.applies else "pass" if report.passed else "fail"
    )
    return ConvergenceFinding(
        verdict=verdict,
        method=method,
        n_chains=int(n_chains),
        n_draws=int(n_draws),
        max_r_hat=float(report.max_r_hat),
        min_ess_bulk=float(report.min_ess_bulk),
        min_ess_tail=float(report.min_ess_tail),
        n_divergences=int(report.n_divergences) if integrates_trajectories else None,
        failures=tuple(report.failures) if verdict == "fail" else (),
        thresholds=(float(MAX_R_HAT), float(MIN_ESS)),
    )


def result_convergence(result: Any, report: Any, *, method: str) -> ConvergenceFinding:
    """The convergence finding of a fitted result's posterior draws, from its verdict.

    Parameters
    ----------
    result : xarray.DataTree
        A fitted result with a ``posterior`` group (its chains and draws; ``sample_stats`` says whether
        trajectories were integrated).
    report : ConvergenceReport
        Its verdict (:func:`bayesclass.inference.criticism.diagnose`).
    method : str
        The fit's method.

    Returns
    -------
    ConvergenceFinding
        :func:`convergence_finding` with the result's chains, draws and sampler kind.
    """
    stats = result["sample_stats"].to_dataset() if "sample_stats" in result.children else None
    return convergence_finding(
        report,
        method=method,
        n_chains=int(result["posterior"].sizes["chain"]),
        n_draws=int(result["posterior"].sizes["draw"]),
        integrates_trajectories=stats is not None and "diverging" in stats,
    )


def paired_log_loss(
    proba: Mapping[str, np.ndarray], y: np.ndarray, *, split: str = "held-out"
) -> ScoreFinding | Omitted:
    """The best estimate by mean log loss and its paired difference to the runner-up (module docstring, (b)).

    Parameters
    ----------
    proba : mapping of str to numpy.ndarray
        Label -> (n, K) class probabilities on the same rows.
    y : numpy.ndarray of shape (n,)
        The rows' class codes.
    split : str, default "held-out"
        The split's name.

    Returns
    -------
    ScoreFinding or Omitted
        Omitted where no estimate defines every row.

    Raises
    ------
    ValueError
        ``y`` not a 1-d array of integer codes, or an array not of shape (n, K) for ``y`` of n codes in [0, K).
    """
    y = np.asarray(y)
    if y.ndim != 1 or not np.issubdtype(y.dtype, np.integer):
        raise ValueError(f"y must be a 1-d array of integer class codes, got shape {y.shape} of {y.dtype}")
    losses: dict[str, np.ndarray] = {}
    left_out: list[tuple[str, int]] = []
    for label, values in proba.items():
        p = np.asarray(values, dtype=float)
        if p.ndim != 2 or p.shape[0] != y.shape[0]:
            raise ValueError(f"proba[{label!r}] has shape {p.shape}; expected ({y.shape[0]}, K) for {y.shape[0]} rows")
        if y.size and not 0 <= y.min() <= y.max() < p.shape[1]:
            raise ValueError(
                f"y has class codes {int(y.min())}..{int(y.max())}, outside the {p.shape[1]} columns of "
                f"proba[{label!r}]; give codes 0..{p.shape[1] - 1}"
            )
        undefined = np.isnan(p).any(axis=1) | (p.sum(axis=1) == 0)
        if undefined.any():
            left_out.append((label, int(undefined.sum())))
            continue
        with np.errstate(divide="ignore"):
            losses[label] = -np.log(p[np.arange(y.size), y])
    if not losses or y.size == 0:
        return Omitted("scores", f"no estimate defines every one of the {y.size} rows of {split}")
    ranked = sorted(losses, key=lambda label: float(losses[label].mean()))
    means = tuple((label, float(losses[label].mean())) for label in ranked)
    zero = tuple((label, int(np.isinf(losses[label]).sum())) for label in ranked if np.isinf(losses[label]).any())
    difference = standard_error = float("nan")
    if len(ranked) > 1:
        best, runner_up = losses[ranked[0]], losses[ranked[1]]
        with np.errstate(invalid="ignore"):
            per_row = runner_up - best  # inf - inf (both give a row probability 0) is NaN: no difference there
        per_row = per_row[~np.isnan(per_row)]
        difference = float(per_row.mean()) if per_row.size else float("nan")
        if np.isfinite(per_row).all() and per_row.size > 1:
            standard_error = float(per_row.std(ddof=1) / np.sqrt(per_row.size))
    verdict = difference_verdict(difference, standard_error)
    return ScoreFinding(split, int(y.size), means, difference, standard_error, verdict, zero, tuple(left_out))


def missing_estimates(status: Mapping[str, str], *, n_rows: int) -> tuple[MissingEstimate, ...]:
    """One :class:`MissingEstimate` per point estimate kind whose status is not "exists".

    Parameters
    ----------
    status : mapping of str to str
        Per kind, "exists" or why not.
    n_rows : int
        The training rows.

    Returns
    -------
    tuple of MissingEstimate
        In the status's order.
    """
    existing = sum(1 for reason in status.values() if reason == "exists")
    return tuple(
        MissingEstimate(kind, reason, int(n_rows), existing) for kind, reason in status.items() if reason != "exists"
    )


def interval_findings(estimates: Estimates, *, interval_prob: float) -> tuple[IntervalFinding | Omitted, ...]:
    """The posterior's intervals against each point estimate's Wald intervals (module docstring, (d)).

    Parameters
    ----------
    estimates : Estimates
        Rows with the posterior's ``mean``, ``sd``, ``low``, ``high`` and, per kind, ``<kind>``, ``<kind>_low``,
        ``<kind>_high`` (None where absent).
    interval_prob : float
        The probability of both intervals.

    Returns
    -------
    tuple of IntervalFinding or Omitted
        One finding per kind with a Wald interval beside a posterior interval; one Omitted (why) where none has.
    """
    if not estimates.has_posterior:
        return (Omitted("intervals", "the result has no posterior draws, so no posterior intervals to compare"),)
    findings: list[IntervalFinding | Omitted] = []
    for kind in estimates.kinds:
        rows = [
            row
            for row in estimates.rows
            if all(
                row.get(key) is not None for key in ("mean", "sd", "low", "high", kind, f"{kind}_low", f"{kind}_high")
            )
        ]
        wald = np.array([row[f"{kind}_high"] - row[f"{kind}_low"] for row in rows], dtype=float)
        posterior = np.array([row["high"] - row["low"] for row in rows], dtype=float)
        usable = wald > 0
        if not usable.any():
            continue
        ratio = posterior[usable] / wald[usable]
        sd = np.array([row["sd"] for row in rows], dtype=float)
        gap = np.abs(np.array([row["mean"] - row[kind] for row in rows], dtype=float))
        with np.errstate(divide="ignore", invalid="ignore"):
            shift = np.where(sd > 0, gap / sd, np.where(gap > 0, np.inf, 0.0))
        where = int(np.argmax(shift))
        findings.append(
            IntervalFinding(
                kind=kind,
                interval_prob=float(interval_prob),
                n_parameters=int(usable.sum()),
                median_width_ratio=float(np.median(ratio)),
                min_width_ratio=float(ratio.min()),
                max_width_ratio=float(ratio.max()),
                largest_shift=float(shift[where]),
                shift_parameter=str(rows[where]["parameter"]),
            )
        )
    if not findings:
        present = list(estimates.kinds)
        reason = (
            f"no point estimate ({', '.join(present)}) stores a covariance, so none has Wald intervals"
            if present
            else "the result stores no point estimate"
        )
        if estimates.covariance_notes:  # covariances over parameters the comparison does not show
            reason = "; ".join(f"{kind}: {note}" for kind, note in estimates.covariance_notes)
        findings.append(Omitted("intervals", reason))
    return tuple(findings)
