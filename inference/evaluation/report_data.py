"""What a report shows, computed: plain frozen records of numbers, arrays, strings and tables.

:func:`bayesclass.inference.evaluation.report_evaluation.evaluate_for_report` fills them from fitted results;
:mod:`bayesclass.reports` renders them without calling a model, a sampler or a random number generator. Every
record pickles, and none holds a result DataTree: the arrays are numpy arrays, the tables pandas DataFrames, the
posterior draws of the convergence plots and the generative check labelled arrays (``xarray.Dataset``), as the
figure functions take them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

__all__ = [
    "Boundary",
    "Calibration",
    "ComparisonData",
    "Convergence",
    "DecisionRow",
    "Decisions",
    "DerivedQuantities",
    "Estimates",
    "GenerativeCheck",
    "HeldoutScores",
    "LatentCurve",
    "LooComparison",
    "ReportData",
    "RunEvaluation",
    "RunSummary",
    "SamplerStatistics",
    "SplitDecisions",
]

#: how the run's posterior was drawn: a Markov chain sampler, independent exact draws, or none (a point estimate)
DrawKind = Literal["sampler", "exact", "point"]


@dataclass(frozen=True)
class RunSummary:
    """The facts of a run: family, hyperparameters, priors, data, method, sampler, seed, versions, timings."""

    label: str
    family: str
    family_class: str
    hyperparameters: dict[str, Any]
    prior_formulas: tuple[str, ...]
    data_name: str
    data_fingerprint: str
    data_provenance: str
    n_rows: int
    feature_names: tuple[str, ...]
    class_names: tuple[str, ...]
    standardized_features: tuple[str, ...]
    method: str
    draws: DrawKind
    sampler_settings: dict[str, Any]
    sampler_backend: str | None
    random_seed: int
    timings: tuple[tuple[str, float], ...]
    compile_cache_hit: bool | None
    package_versions: tuple[tuple[str, str], ...]
    created_at: str


@dataclass(frozen=True)
class SamplerStatistics:
    """A Markov chain sampler's statistics (None: the sampler does not record it)."""

    divergences: int | None
    hyperparameter_evaluations: float | None = None
    scale_factor_range: tuple[float, float] | None = None
    max_treedepth_hits: int | None = None
    max_tree_depth: int | None = None
    bfmi: tuple[float, ...] | None = None
    step_size: float | None = None


@dataclass(frozen=True)
class Convergence:
    """The convergence diagnostics of a run's posterior draws.

    ``table`` has one row per parameter element (mean, sd, r_hat, ess_bulk, ess_tail, mcse_mean); ``worst`` is
    the one-line summary of the worst values; ``advice`` what the family says to try when the verdict fails;
    ``draws`` the posterior draws of ``parameter_names`` (the family's summary parameters) for rank and trace
    plots. ``statistics`` is None for independent exact draws (no sampler, no verdict).
    """

    independent: bool
    passed: bool
    failures: tuple[str, ...]
    worst: str
    table: Any  # pandas.DataFrame
    max_r_hat: float
    min_ess: float
    advice: tuple[str, ...]
    integrates_trajectories: bool
    statistics: SamplerStatistics | None
    draws: Any  # xarray.Dataset (chain, draw, ...)
    parameter_names: tuple[str, ...]


@dataclass(frozen=True)
class Estimates:
    """The posterior beside every stored point estimate: rows of ``parameter_comparison`` (dicts ``parameter``,
    ``mean``, ``sd``, ``low``, ``high`` and one key per kind), the kinds, and why an estimate is absent.
    """

    rows: tuple[dict[str, Any], ...]
    kinds: tuple[str, ...]
    status: tuple[tuple[str, str], ...]
    has_posterior: bool


@dataclass(frozen=True)
class DecisionRow:
    """One estimate's decisions on a held-out split under the loss matrix."""

    label: str
    mean_loss: float
    posterior_expected_loss: float | None
    n_undecided: int
    confusion: np.ndarray  # (K, K): rows the true class, columns the decision


@dataclass(frozen=True)
class SplitDecisions:
    """Every estimate's decisions on one held-out split."""

    split: str
    n_rows: int
    rows: tuple[DecisionRow, ...]
    has_posterior: bool


@dataclass(frozen=True)
class Decisions:
    """The loss matrix in the run's class order and the decisions on every held-out split."""

    class_names: tuple[str, ...]
    loss_matrix: np.ndarray
    splits: tuple[SplitDecisions, ...]


@dataclass(frozen=True)
class HeldoutScores:
    """The scores of every estimate and baseline on one held-out split.

    ``table`` is :func:`bayesclass.inference.evaluation.scores.score_table`'s (one row per estimate);
    ``descriptions`` say what some columns are; ``left_out_baselines`` why some asked-for baselines are
    absent (""); ``standard_errors`` label -> metric -> the standard error of the mean over rows (None where a
    per-row score is infinite).
    """

    split: str
    data_name: str
    n_rows: int
    table: Any  # pandas.DataFrame
    descriptions: tuple[tuple[str, str], ...]
    left_out_baselines: str
    standard_errors: dict[str, dict[str, float | None]]


@dataclass(frozen=True)
class Calibration:
    """Inputs of the reliability diagrams: "posterior" or a point estimate kind -> probabilities ((S, n, K)
    posterior predictive draws or (n, K) plug-ins), the rows' class codes, and the seed of the replicated
    outcomes of the consistency bands.
    """

    proba: dict[str, np.ndarray]
    y: np.ndarray
    class_names: tuple[str, ...]
    rows: str
    n_rows: int
    skipped: tuple[str, ...]
    replicate_seed: int


@dataclass(frozen=True)
class DerivedQuantities:
    """The family's derived quantities (e.g. gcc's linear discriminants) beside the point estimates."""

    title: str
    rows: tuple[dict[str, Any], ...]
    kinds: tuple[str, ...]
    standardized: bool


@dataclass(frozen=True)
class Boundary:
    """P(class | x) over a grid of two features: per-draw probabilities (S, G, G, K), each point estimate's
    (G, G, K), the training points. ``numeric`` False: the features are not both numeric (nothing drawn).
    """

    features: tuple[str, str]
    kinds: tuple[str, str]
    numeric: bool
    axes: tuple[np.ndarray, np.ndarray] | None = None
    proba_draws: np.ndarray | None = None
    point_proba: dict[str, np.ndarray] | None = None
    X: np.ndarray | None = None
    y: np.ndarray | None = None
    class_names: tuple[str, ...] = ()
    held_fixed: tuple[str, ...] = ()
    derived: DerivedQuantities | None = None


@dataclass(frozen=True)
class LatentCurve:
    """One input of a latent-function family: latent f and P(class 1 | x) per draw along ``x``, each point
    estimate's curves, the training points and, where the generator is known, its true latent.
    """

    x: np.ndarray
    latent_draws: np.ndarray
    proba_draws: np.ndarray
    X: np.ndarray
    y: np.ndarray
    true_latent: np.ndarray | None
    point_latent: dict[str, np.ndarray]
    point_proba: dict[str, np.ndarray]
    feature_name: str
    class_names: tuple[str, ...]


@dataclass(frozen=True)
class GenerativeCheck:
    """The posterior predictive check of the features (``check``: its Dataset, as the figure takes it) and its
    cells (class, feature, statistic, observed, p-value), most extreme first.
    """

    check: Any  # xarray.Dataset
    cells: tuple[tuple[str, str, str, float, float], ...]
    n_replicates: int
    source: str
    #: per statistic, in the check's order: (statistic, the feature kinds it applies to, the class x feature
    #: statistics computed); and every cell in that order (``cells`` is most extreme first)
    statistics: tuple[tuple[str, tuple[str, ...], int], ...] = ()
    cells_in_order: tuple[tuple[str, str, str, float, float], ...] = ()


@dataclass(frozen=True)
class RunEvaluation:
    """Everything a report shows of one run; a section is None where it does not apply."""

    summary: RunSummary
    convergence: Convergence | None
    estimates: Estimates
    heldout: tuple[HeldoutScores, ...]
    no_heldout_reason: str
    loo: Any  # bayesclass.inference.criticism.loo.LooSummary or None
    pareto_k_limit: float
    calibration: Calibration
    boundary: Boundary | LatentCurve | None
    generative: GenerativeCheck | None
    decisions: Decisions | None
    fit_warnings: tuple[str, ...]


@dataclass(frozen=True)
class LooComparison:
    """The PSIS-LOO comparison of several runs (``table``, best first), or why there is none."""

    table: Any  # pandas.DataFrame or None
    reason: str = ""


@dataclass(frozen=True)
class ReportData:
    """What a report page shows: one :class:`RunEvaluation` per run, their LOO comparison (several runs), and
    every warning the evaluation raised, verbatim.
    """

    runs: tuple[RunEvaluation, ...]
    comparison: LooComparison | None
    interval_prob: float
    warnings: tuple[str, ...]
    bayesclass_version: str


@dataclass(frozen=True)
class ComparisonData:
    """What ``bayesclass compare`` prints: the run's facts, its convergence line, the parameters side by side
    and the held-out scores of every estimate.
    """

    summary: RunSummary
    convergence: str | None
    estimates: Estimates
    interval_prob: float
    heldout: tuple[HeldoutScores, ...]
