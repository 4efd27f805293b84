"""What a report shows, computed: plain frozen records of numbers, arrays, strings and tables.

:func:`bayesclass.inference.evaluation.report_evaluation.evaluate_for_report` fills them from fitted results;
:mod:`bayesclass.reports` renders them without calling a model, a sampler or a random number generator. Every
record pickles, and none holds a result DataTree: the arrays are numpy arrays, the tables pandas DataFrames, the
posterior draws of the convergence plots and the generative check labelled arrays (``xarray.Dataset``), as the
figure functions take them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from bayesclass.inference.criticism.unavailable import Unavailable  # re-exported: what reports show as n/a

if TYPE_CHECKING:
    from bayesclass.inference.evaluation.conclusions import Conclusion, Omitted, ScoreFinding
    from bayesclass.inference.evaluation.model_comparison import HeldoutRow

#: the short name of each point estimate kind, shared by score tables and study records ("MAP plug-in") and the
#: pages rendered from these records (table rows, legends, figure markers)
ESTIMATE_NAMES: dict[str, str] = {
    "map": "MAP",
    "mle": "MLE",
    "posterior_mean": "post. mean",
    "unbiased": "MLE (unbiased var.)",
    "posterior_predictive": "exact predictive (Student-t)",
}

#: the probability of the intervals of the page's headline comparison (mean held-out score -+ z SE)
HEADLINE_INTERVAL_PROB = 0.95

__all__ = [
    "HEADLINE_INTERVAL_PROB",
    "MAX_CALIBRATION_PANELS",
    "calibration_classes",
    "standard_errors_for",
    "Boundary",
    "ESTIMATE_NAMES",
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
    "ParameterPanel",
    "ReportData",
    "RunEvaluation",
    "RunRanking",
    "RunSummary",
    "SamplerStatistics",
    "SplitDecisions",
    "Unavailable",
]

#: how the run's posterior was drawn: a Markov chain sampler, independent exact draws, or none (a point estimate)
DrawKind = Literal["markov_chain", "independent", "point", "stack"]


@dataclass(frozen=True)
class RunSummary:
    """The facts of a run: family, hyperparameters, priors, data, method, sampler, seed, versions, timings.

    Parameters
    ----------
    label : str
        The run's name on the page.
    family : str
        The family's registry name (``"logistic"``, ``"naive_bayes"``, ...).
    family_class : str
        The family's class name.
    hyperparameters : dict
        The family's hyperparameters (``model.to_dict()``).
    prior_formulas : tuple of str
        The family's priors, one formula each, for the run's number of classes; last, the scale they are on
        (``ResultInfo.prior_scale``: standardised inputs or the data's units).
    data_name, data_fingerprint, data_provenance : str
        The training data's name, content fingerprint and provenance.
    n_rows : int
        Training rows.
    feature_names, class_names : tuple of str
        The fitted features and classes.
    standardized_features : tuple of str
        The features :func:`fit` standardized.
    method : str
        The sampling method the run was fitted by.
    draws : {"markov_chain", "independent", "point", "stack"}
        How the posterior was drawn (:data:`DrawKind`; "stack": a mixture of fitted members' draws).
    sampler_settings : dict
        The sampler settings recorded with the result.
    sampler_backend : str or None
        The NUTS backend, where one ran.
    random_seed : int
        The fit's seed.
    timings : tuple of (str, float)
        Named stages of the fit and their seconds.
    compile_cache_hit : bool or None
        Whether the compiled model came from the compile cache (None: nothing was compiled).
    package_versions : tuple of (str, str)
        Package name and version, sorted by name.
    created_at : str
        When the result was made (ISO 8601).
    dropped_rows : int
        Rows of the training table dropped for blank cells (``missing="drop"``; 0 for older results).
    blanks_per_column : tuple of (str, int)
        The blank cells counted per used column of the training table.
    method_description : str
        What the sampling method's draws are, from the method registry (e.g. "independent draws from the exact
        conjugate posterior"); empty for a point estimate.
    hyperparameter_rows : tuple of (str, str, str)
        The hyperparameters as table rows: dotted name (``"prior.lengthscale_alpha"``), value as text, and the
        prior statement it sets (``"lengthscale[feature] ~ InverseGamma(3, 2)"``; "" where it sets none).
    """

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
    dropped_rows: int = 0
    blanks_per_column: tuple[tuple[str, int], ...] = ()
    method_description: str = ""
    hyperparameter_rows: tuple[tuple[str, str, str], ...] = ()


@dataclass(frozen=True)
class SamplerStatistics:
    """A Markov chain sampler's statistics (None: the sampler does not record it).

    Parameters
    ----------
    divergences : int or None
        Divergent transitions after warm-up (None for a sampler that integrates no trajectories).
    hyperparameter_evaluations : float, optional
        Gibbs: the mean number of log-density evaluations of a sweep's hyperparameter slices.
    scale_factor_range : tuple of float, optional
        Gibbs: the 5% and 95% quantiles of the scale move's factor.
    max_treedepth_hits : int, optional
        NUTS transitions that reached the maximum tree depth.
    max_tree_depth : int, optional
        The deepest tree NUTS built.
    bfmi : tuple of float, optional
        E-BFMI per chain.
    step_size : float, optional
        The mean NUTS step size.
    """

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
    the one-line summary of the worst values; ``advice`` what to try when the verdict fails (from what failed,
    the method and the family); ``draws`` the posterior draws of ``parameter_names`` (the family's summary
    parameters) for rank and trace plots. ``statistics`` is None for independent exact draws (no sampler, no verdict).

    Parameters
    ----------
    independent : bool
        Whether the draws are independent (exact draws: no sample stats).
    passed : bool
        The convergence verdict.
    failures : tuple of str
        One message per failed threshold.
    worst : str
        One-line summary of the worst values.
    table : pandas.DataFrame
        One row per parameter element.
    max_r_hat, min_ess : float
        The thresholds applied.
    advice : tuple of str
        What to try when the verdict fails, from the failed checks, the method's settings and the family.
    integrates_trajectories : bool
        Whether the sampler integrates trajectories (divergences apply).
    statistics : SamplerStatistics or None
        The sampler's statistics; None for independent exact draws.
    draws : xarray.Dataset
        The posterior draws of ``parameter_names`` (chain, draw, ...).
    parameter_names : tuple of str
        The family's summary parameters.
    unavailable : tuple of Unavailable, default ()
        The checks that cannot be computed from these draws, with why (each one fails the verdict).
    figures_unavailable : tuple of Unavailable, default ()
        The chain figures that cannot be drawn from these draws (rank plots of one chain), with why.
    summary_table : pandas.DataFrame or None, default None
        The rows to read: the summary parameters' elements and one row of worst values per latent block
        (:func:`~bayesclass.inference.criticism.diagnostics.condensed_table`; ``table`` itself where there is no
        block); None: ``table``.
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
    unavailable: tuple[Unavailable, ...] = ()
    figures_unavailable: tuple[Unavailable, ...] = ()
    summary_table: Any = None  # pandas.DataFrame


@dataclass(frozen=True)
class ParameterPanel:
    """One panel of the estimates' forest plot: the elements of one model variable that share a unit.

    Parameters
    ----------
    title : str
        The model variable (the parameter kind), with the inputs it is over where a variable is split by unit.
    axis_label : str
        What the x axis shows, with its unit (or why it is standardised).
    standardised : bool
        Whether the values are ``(value - posterior mean) / posterior sd`` (the variable's elements are in
        different units, so one axis in the model's own units would collapse the small ones to a point).
    rows : tuple of dict
        The rows of :func:`~bayesclass.inference.evaluation.parameters.parameter_comparison` on the panel's
        scale (the same keys).
    """

    title: str
    axis_label: str
    standardised: bool
    rows: tuple[dict[str, Any], ...]


@dataclass(frozen=True)
class Estimates:
    """The posterior beside every stored point estimate, parameter by parameter.

    Parameters
    ----------
    rows : tuple of dict
        Rows of :func:`~bayesclass.inference.evaluation.parameters.parameter_comparison` (keys ``parameter``,
        ``mean``, ``sd``, ``low``, ``high`` and one key per kind).
    kinds : tuple of str
        The point estimate kinds stored.
    status : tuple of (str, str)
        Per point estimate kind, its status (why an estimate is absent).
    has_posterior : bool
        Whether the run has posterior draws (the posterior columns apply).
    covariance_notes : tuple of (str, str)
        Per point estimate kind whose stored covariance covers none of the rows (e.g. a latent GP's covers its
        latent values, the rows are its hyperparameters): what the covariance is over, so the missing standard
        errors are explained.
    panels : tuple of ParameterPanel
        The rows the forest plot draws (all of at most ``MAX_FOREST_PARAMETERS``, else those furthest from 0:
        :func:`~bayesclass.inference.evaluation.parameters.forest_rows`), grouped by model variable and unit
        (:func:`~bayesclass.inference.evaluation.parameters.parameter_panels`).
    forest_left_out : int, default 0
        The rows the forest plot leaves out (they are in the table).
    """

    rows: tuple[dict[str, Any], ...]
    kinds: tuple[str, ...]
    status: tuple[tuple[str, str], ...]
    has_posterior: bool
    covariance_notes: tuple[tuple[str, str], ...] = ()
    panels: tuple[ParameterPanel, ...] = ()
    forest_left_out: int = 0


@dataclass(frozen=True)
class DecisionRow:
    """One estimate's decisions on a held-out split under the loss matrix.

    Parameters
    ----------
    label : str
        The estimate's row name.
    mean_loss : float
        The mean loss ``L[true, decision]`` over the rows it decided (NaN where it decided none).
    posterior_expected_loss : float or None
        The mean posterior expected loss of these decisions (None without posterior draws).
    n_undecided : int
        Rows the estimate could not decide.
    confusion : numpy.ndarray of shape (n_classes, n_classes)
        Counts: rows the true class, columns the decision.
    """

    label: str
    mean_loss: float
    posterior_expected_loss: float | None
    n_undecided: int
    confusion: np.ndarray  # (K, K): rows the true class, columns the decision


@dataclass(frozen=True)
class SplitDecisions:
    """Every estimate's decisions on one held-out split.

    Parameters
    ----------
    split : str
        The split's name.
    n_rows : int
        Its rows.
    rows : tuple of DecisionRow
        One per estimate.
    has_posterior : bool
        Whether the run has posterior draws (posterior expected losses apply).
    """

    split: str
    n_rows: int
    rows: tuple[DecisionRow, ...]
    has_posterior: bool


@dataclass(frozen=True)
class Decisions:
    """The loss matrix in the run's class order and the decisions on every held-out split.

    Parameters
    ----------
    class_names : tuple of str
        The run's classes.
    loss_matrix : numpy.ndarray of shape (n_classes, n_classes)
        ``L[true, decision]`` in that order.
    splits : tuple of SplitDecisions
        One per held-out split.
    """

    class_names: tuple[str, ...]
    loss_matrix: np.ndarray
    splits: tuple[SplitDecisions, ...]


def standard_errors_for(prob: float) -> float:
    """The multiple of the standard error of a central normal interval of probability ``prob`` (1.96 for 0.95).

    Parameters
    ----------
    prob : float
        The interval's probability, in (0, 1).

    Returns
    -------
    float
        ``z`` with ``P(|Z| <= z) = prob`` for a standard normal ``Z``.
    """
    return NormalDist().inv_cdf(0.5 + prob / 2)


@dataclass(frozen=True)
class HeldoutScores:
    """The scores of every estimate and baseline on one held-out split.

    ``table`` is :func:`bayesclass.inference.evaluation.scores.score_table`'s (one row per estimate);
    ``descriptions`` say what some columns are; ``left_out_baselines`` why some asked-for baselines are
    absent (""); ``standard_errors`` label -> metric -> the standard error of the mean over rows (None where a
    per-row score is infinite).

    Parameters
    ----------
    split : str
        The split's name.
    data_name : str
        The held-out data's name.
    n_rows : int
        Its rows.
    table : pandas.DataFrame
        The score table.
    descriptions : tuple of (str, str)
        Column name and what it is.
    left_out_baselines : str
        Why some asked-for baselines are absent ("" where none is).
    standard_errors : dict
        Label -> metric -> standard error of the mean over rows (None where a per-row score is infinite).
    own_estimates : tuple of str, default ()
        The labels of the run's own estimates in ``table`` (its posterior and point estimates; not baselines), in
        the table's order: the headline comparison of the page.
    """

    split: str
    data_name: str
    n_rows: int
    table: Any  # pandas.DataFrame
    descriptions: tuple[tuple[str, str], ...]
    left_out_baselines: str
    standard_errors: dict[str, dict[str, float | None]]
    own_estimates: tuple[str, ...] = ()

    def interval(self, label: str, metric: str, prob: float = HEADLINE_INTERVAL_PROB) -> tuple[float, float] | None:
        """The normal-approximation interval of one estimate's mean score: mean -+ z SE over the scored rows.

        Parameters
        ----------
        label : str
            The estimate's label (a row of ``table``).
        metric : str
            A column of ``table`` with a standard error ("log_loss", "brier", "accuracy").
        prob : float, default HEADLINE_INTERVAL_PROB
            The interval's probability.

        Returns
        -------
        tuple of (float, float) or None
            (low, high); None where the standard error is undefined (an infinite per-row score, one row, no
            probabilities). Accuracy's interval is clipped to [0, 1], log loss's low end at 0.
        """
        error = self.standard_errors.get(label, {}).get(metric)
        if error is None or label not in self.table.index or metric not in self.table.columns:
            return None
        mean = float(self.table.loc[label, metric])
        half = standard_errors_for(prob) * error
        low, high = mean - half, mean + half
        upper = 1.0 if metric == "accuracy" else math.inf
        return max(low, 0.0), min(high, upper)


@dataclass(frozen=True)
class Calibration:
    """Inputs of the reliability diagrams.

    Parameters
    ----------
    proba : dict of str to numpy.ndarray
        "posterior" or a point estimate kind -> probabilities: (S, n, K) posterior predictive draws or (n, K)
        plug-ins.
    y : numpy.ndarray of shape (n,)
        The rows' class codes.
    class_names : tuple of str
        The run's classes.
    rows : str
        Which rows the diagrams are drawn on (a held-out split, or the training rows).
    n_rows : int
        Their number.
    skipped : tuple of str
        Point estimate kinds left out (their probabilities are undefined somewhere).
    replicate_seed : int
        Seed of the replicated outcomes of the consistency bands.
    classes : tuple of int
        More than two classes: the codes whose one-vs-others diagrams are drawn (:func:`calibration_classes`),
        every class where one panel per estimate and class fits :data:`MAX_CALIBRATION_PANELS`. Two classes:
        ``(1,)``, the event of the single diagram per estimate.
    """

    proba: dict[str, np.ndarray]
    y: np.ndarray
    class_names: tuple[str, ...]
    rows: str
    n_rows: int
    skipped: tuple[str, ...]
    replicate_seed: int
    classes: tuple[int, ...]


#: the most panels (estimates x classes drawn) of the reliability diagrams: arviz_plots refuses more than 40 in one
#: figure, and at the page's width a panel is then already narrow
MAX_CALIBRATION_PANELS = 30


def calibration_classes(y: np.ndarray, n_classes: int, n_estimates: int) -> tuple[int, ...]:
    """The classes whose one-vs-others reliability diagrams a figure of ``n_estimates`` estimates draws.

    Every class where ``n_estimates x n_classes`` panels fit :data:`MAX_CALIBRATION_PANELS`; otherwise as many as
    fit (at least one) of the classes with the most rows in ``y`` (ties: the lower code), in code order. Two
    classes: ``(1,)`` (one diagram per estimate, the event the second class).

    Parameters
    ----------
    y : numpy.ndarray of shape (n,)
        The rows' class codes.
    n_classes : int
        The number of classes.
    n_estimates : int
        The estimates drawn (the posterior and the point estimates).

    Returns
    -------
    tuple of int
        Class codes, ascending.
    """
    if n_classes == 2:
        return (1,)
    fit = max(1, MAX_CALIBRATION_PANELS // max(n_estimates, 1))
    if n_classes <= fit:
        return tuple(range(n_classes))
    counts = np.bincount(np.asarray(y, dtype=np.intp), minlength=n_classes)
    return tuple(sorted(int(k) for k in np.argsort(-counts, kind="stable")[:fit]))


@dataclass(frozen=True)
class DerivedQuantities:
    """The family's derived quantities (e.g. gcc's linear discriminants) beside the point estimates.

    Parameters
    ----------
    title : str
        The family's title for them.
    rows : tuple of dict
        Their rows of :func:`~bayesclass.inference.evaluation.parameters.parameter_comparison`.
    kinds : tuple of str
        The point estimate kinds stored.
    standardized : bool
        Whether they are on the standardized scale of the inputs.
    """

    title: str
    rows: tuple[dict[str, Any], ...]
    kinds: tuple[str, ...]
    standardized: bool


@dataclass(frozen=True)
class Boundary:
    """P(class | x) over a grid of two features, per draw and for each point estimate, with the training points.

    Parameters
    ----------
    features : tuple of (str, str)
        The two features.
    kinds : tuple of (str, str)
        Their kinds.
    numeric : bool
        False: the features are not both numeric (nothing drawn; the other fields keep their defaults).
    axes : tuple of numpy.ndarray, optional
        The grid's points along each feature (G each).
    proba_draws : numpy.ndarray of shape (S, G, G, K), optional
        Per thinned draw, the class probabilities over the grid.
    point_proba : dict of str to numpy.ndarray, optional
        Per point estimate kind, its (G, G, K) probabilities.
    X : numpy.ndarray of shape (n, 2), optional
        The training points in the two features.
    y : numpy.ndarray of shape (n,), optional
        Their class codes.
    class_names : tuple of str
        The run's classes.
    held_fixed : tuple of str
        The other features, held at their training median (or mode).
    derived : DerivedQuantities, optional
        The family's derived quantities, shown beside the figure.
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
    """One input of a latent-function family: latent f and P(class 1 | x) along ``x``, per draw and estimate.

    Parameters
    ----------
    x : numpy.ndarray of shape (m,)
        The points along the input.
    latent_draws : numpy.ndarray of shape (S, m)
        One draw of the latent f per thinned posterior draw.
    proba_draws : numpy.ndarray of shape (S, m)
        P(class 1 | x) per thinned posterior draw.
    X : numpy.ndarray of shape (n,)
        The training inputs.
    y : numpy.ndarray of shape (n,)
        Their class codes.
    true_latent : numpy.ndarray of shape (n,) or None
        The generator's latent at the training rows, where the data carry it.
    point_latent, point_proba : dict of str to numpy.ndarray
        Per point estimate kind, its latent mean and P(class 1 | x) along ``x``.
    feature_name : str
        The input's name.
    class_names : tuple of str
        The run's classes.
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
    """The posterior predictive check of the features and its cells, most extreme first.

    Parameters
    ----------
    check : xarray.Dataset
        The check's Dataset, as the figure takes it.
    cells : tuple of (str, str, str, float, float)
        Class, feature, statistic, observed value and p-value, most extreme first.
    n_replicates : int
        Replicated data sets.
    source : str
        What the replicates were drawn from (``"posterior"``, or a point estimate).
    statistics : tuple of (str, tuple of str, int)
        Per statistic, in the check's order: its name, the feature kinds it applies to, and how many class x
        feature statistics it has.
    cells_in_order : tuple of (str, str, str, float, float)
        The cells in the check's order (statistic by statistic).
    """

    check: Any  # xarray.Dataset
    cells: tuple[tuple[str, str, str, float, float], ...]
    n_replicates: int
    source: str
    statistics: tuple[tuple[str, tuple[str, ...], int], ...] = ()
    cells_in_order: tuple[tuple[str, str, str, float, float], ...] = ()


@dataclass(frozen=True)
class RunEvaluation:
    """Everything a report shows of one run; a section is None where it does not apply.

    Parameters
    ----------
    summary : RunSummary
        The run's facts.
    convergence : Convergence or None
        Its convergence diagnostics (None without posterior draws).
    estimates : Estimates
        The posterior beside every point estimate.
    heldout : tuple of HeldoutScores
        The scores on every held-out split.
    no_heldout_reason : str
        Why there are no held-out scores ("" where there are).
    loo : LooSummary, Unavailable or None
        PSIS-LOO of the run; Unavailable where its draws are too few or their tails flat (why); None without
        draws.
    pareto_k_limit : float
        The Pareto k above which a row makes LOO unreliable.
    calibration : Calibration
        The inputs of the reliability diagrams.
    boundary : Boundary or LatentCurve or None
        The input figure.
    generative : GenerativeCheck or None
        The posterior predictive check of a generative family.
    decisions : Decisions or None
        The decisions under a loss matrix.
    fit_warnings : tuple of str
        The warnings recorded with the fit.
    conclusion : Conclusion or None, default None
        The run's findings (:mod:`bayesclass.inference.evaluation.conclusions`), stated first on the page.
    """

    summary: RunSummary
    convergence: Convergence | None
    estimates: Estimates
    heldout: tuple[HeldoutScores, ...]
    no_heldout_reason: str
    loo: Any  # bayesclass.inference.criticism.loo.LooSummary, Unavailable or None
    pareto_k_limit: float
    calibration: Calibration
    boundary: Boundary | LatentCurve | None
    generative: GenerativeCheck | None
    decisions: Decisions | None
    fit_warnings: tuple[str, ...]
    conclusion: Conclusion | None = None


@dataclass(frozen=True)
class LooComparison:
    """The PSIS-LOO comparison of several runs (``table``, best first), or why there is none.

    Parameters
    ----------
    table : pandas.DataFrame or None
        :func:`~bayesclass.inference.criticism.loo.compare`'s table, best first.
    reason : str, default ""
        Why there is no table.
    """

    table: Any  # pandas.DataFrame or None
    reason: str = ""


@dataclass(frozen=True)
class RunRanking:
    """Several runs ranked on the same held-out rows: each run's own first estimate (its posterior where it has one).

    Parameters
    ----------
    split : str
        The held-out rows' name (the test table's file name on the command line).
    data_name : str
        The held-out data's name.
    n_rows : int
        Its rows.
    estimates : tuple of (str, str)
        Run label -> the estimate of it ranked (``"posterior"``, ``"MAP plug-in"``, ``"stack (stacking)"`` ...).
    rows : tuple of HeldoutRow
        The runs best first by log loss, with the paired per-row difference to the best and its standard error
        (:func:`~bayesclass.inference.evaluation.model_comparison.rank_heldout`).
    standard_errors : dict
        Run label -> metric -> the standard error of its mean score over the rows (None where a per-row score is
        infinite).
    finding : ScoreFinding or Omitted
        The best run against the runner-up (:func:`~bayesclass.inference.evaluation.conclusions.paired_log_loss`):
        the page's conclusion.
    reason : str, default ""
        Why there is no ranking ("" where there is one; ``rows`` is then empty).
    """

    split: str
    data_name: str
    n_rows: int
    estimates: tuple[tuple[str, str], ...]
    rows: tuple[HeldoutRow, ...]
    standard_errors: dict[str, dict[str, float | None]]
    finding: ScoreFinding | Omitted | None
    reason: str = ""


@dataclass(frozen=True)
class ReportData:
    """What a report page shows: every run's evaluation, their LOO comparison, and the evaluation's warnings.

    Parameters
    ----------
    runs : tuple of RunEvaluation
        One per run.
    comparison : LooComparison or None
        Their LOO comparison (several runs).
    interval_prob : float
        Probability mass of the posterior intervals shown.
    warnings : tuple of str
        Every warning the evaluation raised, verbatim.
    bayesclass_version : str
        The version that computed the page.
    ranking : tuple of RunRanking, default ()
        Several runs scored on the same given held-out rows: their ranking per split, the page's opening (the
        runs' own sections are then folded below it).
    """

    runs: tuple[RunEvaluation, ...]
    comparison: LooComparison | None
    interval_prob: float
    warnings: tuple[str, ...]
    bayesclass_version: str
    ranking: tuple[RunRanking, ...] = ()


@dataclass(frozen=True)
class ComparisonData:
    """What ``bayesclass compare`` prints: facts, convergence, parameters and held-out scores of a run.

    Parameters
    ----------
    summary : RunSummary
        The run's facts.
    convergence : str or None
        Its convergence line (None without posterior draws).
    estimates : Estimates
        The parameters side by side.
    interval_prob : float
        Probability mass of the posterior intervals.
    heldout : tuple of HeldoutScores
        The held-out scores of every estimate.
    conclusion : Conclusion or None, default None
        The run's findings (:mod:`bayesclass.inference.evaluation.conclusions`), printed last.
    """

    summary: RunSummary
    convergence: str | None
    estimates: Estimates
    interval_prob: float
    heldout: tuple[HeldoutScores, ...]
    conclusion: Conclusion | None = None
