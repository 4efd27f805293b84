r"""Which family for these data: every registered family fitted on the same split, ranked two ways.

:func:`compare_models` splits the data once (:func:`bayesclass.data.train_validation_test_split`, stratified,
seeded), then for every family of the registry (or those asked for) that can take the training rows fits it by
its default sampling method with its point estimates (:func:`bayesclass.inference.engines.fit.fit`). A family
that cannot take the data (its ``check_training_data`` refuses it: gcc on categorical columns, gp on three
classes ...) or whose fit fails is listed with the reason from its own check, not skipped and not an error for
the whole comparison.

Two rankings of the fitted families:

- by PSIS-LOO on the training rows (:func:`bayesclass.inference.criticism.loo.compare`, i.e.
  ``arviz_stats.compare``): ``elpd_loo`` per family, the difference to the best and its standard error ``dse``,
  and the Pareto k diagnostics; a family with rows of :math:`k > 0.7` (``PARETO_K_LIMIT``) has an unreliable
  LOO estimate and is ranked by its held-out scores instead (the conclusion says so);
- by held-out scores on each held-out split (log loss, Brier, accuracy; :func:`~bayesclass.inference.evaluation
  .scores.score_table`) of every family's posterior, point estimates and the requested baselines, with the paired
  difference of per-row log losses against the best: :math:`d_i = \ell_{e,i} - \ell_{\text{best},i}`, its mean
  and standard error :math:`\operatorname{sd}(d)/\sqrt{n}` (:func:`~bayesclass.inference.evaluation.conclusions
  .paired_log_loss`).

Each criterion gives ONE :class:`Ranking` (PSIS-LOO over the families whose every training row has Pareto k at most
the limit; held-out log loss of the families' posteriors per split) that names the families it covers and those it
leaves out with why; its first against its second is judged by the one rule of
:func:`~bayesclass.inference.evaluation.conclusions.difference_verdict` (2 SE AND 0.01 nats per row; for PSIS-LOO the
elpd difference and its dse divided by the training rows). The page's sentences and its recommendation are worded
from these records only.

Nothing here branches on a family's name: the families come from the registry, their methods from their
declarations.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from bayesclass._lazy import lazy_import
from bayesclass.data import Dataset, load_test, split_row_indices, train_validation_test_split
from bayesclass.data.arguments import spelled
from bayesclass.data.origin import MissingPolicy
from bayesclass.inference.criticism.loo import PARETO_K_LIMIT, compare, loo
from bayesclass.inference.engines.fit import (
    DEFAULT_STANDARDIZE,
    Standardize,
    as_dataset,
    check_standardize,
    fit,
    resolve_method,
)
from bayesclass.inference.engines.methods import SAMPLERS, methods_of
from bayesclass.inference.engines.sampling import SamplerSettings
from bayesclass.inference.evaluation.conclusions import (
    ConvergenceFinding,
    Omitted,
    ScoreFinding,
    Verdict,
    difference_verdict,
    paired_log_loss,
    result_convergence,
)
from bayesclass.inference.evaluation.heldout import fit_baselines, heldout_estimates, left_out_baselines
from bayesclass.inference.evaluation.scores import score_table
from bayesclass.inference.result import is_stack, result_info, stack_info
from bayesclass.inference.stacking import stack, stack_weights
from bayesclass.models import REGISTRY, ClassifierModel, ConvergenceError, get_model
from bayesclass.models.baselines import BASELINES

if TYPE_CHECKING:
    import pandas as pd
    import xarray as xr
else:
    pd = lazy_import("pandas")
    xr = lazy_import("xarray")

#: the weights computed beside each other: LOO stacking (the stack's own) and pseudo-BMA+
STACK_METHODS = ("stacking", "pseudo_bma_plus")
#: the rows of a split where the families disagree that a comparison keeps (the largest disagreements first)
MAX_DISAGREEMENT_ROWS = 50

__all__ = [
    "MAX_DISAGREEMENT_ROWS",
    "PARETO_K_LIMIT",  # the Pareto k limit the rankings use, for reports to print (they import no criticism)
    "STACK_METHODS",
    "Disagreement",
    "FamilyFit",
    "HeldoutRow",
    "LooRow",
    "ModelComparison",
    "Ranking",
    "RankingAgreement",
    "SplitPredictions",
    "StackOutcome",
    "compare_models",
    "parse_baselines",
    "parse_families",
    "heldout_ranking",
    "loo_ranking",
    "rank_heldout",
    "rank_loo",
    "stack_families",
]


@dataclass(frozen=True)
class FamilyFit:
    """One family of the comparison: its fit on the training rows, or why it has none.

    Parameters
    ----------
    family : str
        The registry name.
    method : str
        The method it was (or would have been) fitted by.
    result : xarray.DataTree or None
        The fitted result (None where the family could not take the data or its fit failed).
    reason : str
        Why there is no result ("" where there is one): the family's own check or the fit's error.
    seconds : float
        Wall-clock seconds of the fit (0 without one).
    cpu_seconds : float
        CPU seconds of this process during the fit, every thread (0 without one): on a machine shared with other
        work, a measure of the fit's cost that the wall clock is not.
    """

    family: str
    method: str
    result: Any = None
    reason: str = ""
    seconds: float = 0.0
    cpu_seconds: float = 0.0


@dataclass(frozen=True)
class LooRow:
    """One family's row of the PSIS-LOO ranking (numbers of ``arviz_stats.compare``).

    Parameters
    ----------
    family : str
        The registry name.
    elpd, se : float
        ``elpd_loo`` and its standard error.
    elpd_diff, dse : float
        The difference to the best family's ``elpd_loo`` (0 for the best) and its standard error.
    p_loo : float
        The effective number of parameters.
    n_high_k : int
        Training rows with Pareto :math:`k >` ``PARETO_K_LIMIT``: the estimate is unreliable where this is not 0.
    max_k : float
        The largest Pareto k.
    notes : str
        ArviZ's warnings, one line each joined by "; " ("" when none).
    verdict : {"real", "negligible", "within noise"} or None, default None
        :func:`~bayesclass.inference.evaluation.conclusions.difference_verdict` of ``elpd_diff`` and ``dse``
        divided by the training rows (nats per row; None for the best).
    """

    family: str
    elpd: float
    se: float
    elpd_diff: float
    dse: float
    p_loo: float
    n_high_k: int
    max_k: float
    notes: str = ""
    verdict: Verdict | None = None


@dataclass(frozen=True)
class HeldoutRow:
    """One estimate's row of a held-out ranking.

    Parameters
    ----------
    label : str
        ``"<family>: <estimate>"`` or ``"baseline: <name>"``.
    log_loss, brier, accuracy : float
        Its held-out scores (NaN where it gives no probabilities).
    difference, standard_error : float
        The mean per-row log-loss difference to the best estimate (0 for the best; NaN without probabilities)
        and its standard error.
    verdict : {"real", "negligible", "within noise"} or None
        :func:`~bayesclass.inference.evaluation.conclusions.difference_verdict` of the difference (None for the
        best and where there is no difference).
    """

    label: str
    log_loss: float
    brier: float
    accuracy: float
    difference: float
    standard_error: float
    verdict: Verdict | None


@dataclass(frozen=True)
class Ranking:
    """One criterion's ranking of the families: those it covers, those left out and why, first against second.

    Parameters
    ----------
    criterion : str
        ``"PSIS-LOO"`` (elpd_loo on the training rows) or ``"held-out log loss"`` (the families' posteriors).
    split : str
        The rows it is on (``"train"`` for PSIS-LOO, else the held-out split).
    n_rows : int
        Those rows.
    families : tuple of str
        The families ranked, best first.
    left_out : tuple of (str, str)
        Every other family asked for, with why it is not ranked (not fitted, no posterior, no PSIS-LOO, rows of
        Pareto k above the limit, undefined probabilities).
    difference, standard_error : float
        Per row: how much worse the second is than the first (mean log-loss difference; for PSIS-LOO the elpd
        difference and its ``dse`` divided by the training rows), and its standard error (NaN with one family).
    verdict : {"real", "negligible", "within noise"} or None
        :func:`~bayesclass.inference.evaluation.conclusions.difference_verdict` (None with one family or none).
    """

    criterion: str
    split: str
    n_rows: int
    families: tuple[str, ...]
    left_out: tuple[tuple[str, str], ...]
    difference: float = math.nan
    standard_error: float = math.nan
    verdict: Verdict | None = None

    @property
    def best(self) -> str | None:
        """The first family (None where none is ranked)."""
        return self.families[0] if self.families else None


@dataclass(frozen=True)
class RankingAgreement:
    """Whether the best family by PSIS-LOO is the best family posterior on a held-out split.

    Parameters
    ----------
    split : str
        The held-out split.
    loo_best, heldout_best : str
        The best family by elpd (among reliable LOO estimates) and by held-out log loss of the posteriors.
    """

    split: str
    loo_best: str
    heldout_best: str

    @property
    def agree(self) -> bool:
        """Whether the two rankings put the same family first."""
        return self.loo_best == self.heldout_best


@dataclass(frozen=True)
class StackOutcome:
    """The stacked predictive of the compared families, or why there is none.

    Parameters
    ----------
    method : str
        How the stack's own weights were computed (``"stacking"``: Yao, Vehtari, Simpson and Gelman 2018).
    weights : dict of str to dict of str to float
        Per weight method of :data:`STACK_METHODS`, family -> weight (each sums to 1; empty without a stack).
    result : xarray.DataTree or None
        The stack (:func:`bayesclass.inference.stacking.stack`), None where it could not be built.
    reason : str
        Why there is no stack ("" where there is one).
    notes : tuple of str
        Warnings of the weights (a member's high Pareto k ...), one each.
    """

    method: str
    weights: dict[str, dict[str, float]] = field(default_factory=dict)
    result: Any = None
    reason: str = ""
    notes: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        """The stack's label in the held-out rankings."""
        return f"stack ({self.method})"


@dataclass(frozen=True)
class SplitPredictions:
    """Every family's (and the stack's) posterior mean probabilities on one held-out split.

    Parameters
    ----------
    split : str
        The held-out split.
    y : numpy.ndarray of shape (n,)
        The rows' class codes.
    class_names : tuple of str
        The classes.
    proba : dict of str to numpy.ndarray
        ``"<family>"`` and ``"stack"`` -> (n, K) posterior mean class probabilities.
    features : pandas.DataFrame
        The rows' inputs in the data's units (category names for coded columns), indexed by row: the row's
        0-based position in the whole table.
    """

    split: str
    y: np.ndarray
    class_names: tuple[str, ...]
    proba: dict[str, np.ndarray]
    features: Any


@dataclass(frozen=True)
class Disagreement:
    """The held-out rows whose predicted class differs between the families' posteriors.

    Parameters
    ----------
    split : str
        The held-out split.
    n_rows : int
        Its rows.
    n_disagree : int
        Rows where two families' posteriors predict different classes (most probable class).
    table : pandas.DataFrame
        At most :data:`MAX_DISAGREEMENT_ROWS` of them, the largest spread of the true class's probability across
        families first; index: the row's 0-based position in the whole table; columns ``"true class"``, then per
        family ``"<family>"`` (its predicted class) and ``"<family> p"`` (that class's probability), then the
        features in the data's units.
    """

    split: str
    n_rows: int
    n_disagree: int
    table: Any


@dataclass(frozen=True)
class ModelComparison:
    """Every family on one split, ranked by PSIS-LOO and by held-out scores (the module docstring).

    Parameters
    ----------
    data_name : str
        The data set.
    n_rows : dict of str to int
        Rows of each part of the split (``train``, ``validation``, ``test``).
    random_seed : int
        The seed of the split and of every fit.
    fits : tuple of FamilyFit
        Every family asked for, in registry order, fitted or with the reason why not.
    loo : tuple of LooRow
        The families with a PSIS-LOO estimate, best first.
    loo_left_out : tuple of (str, str)
        The fitted families without one, and why (a point estimate, too few draws ...).
    heldout : dict of str to tuple of HeldoutRow
        Per held-out split, every estimate, best first by log loss (those without probabilities last).
    findings : dict of str to ScoreFinding or Omitted
        Per held-out split, the best family posterior against the runner-up (paired per-row log losses).
    agreement : tuple of RankingAgreement
        Per held-out split, whether LOO and held-out scores put the same family first.
    score_tables : dict of str to pandas.DataFrame
        Per held-out split, :func:`~bayesclass.inference.evaluation.scores.score_table` of every estimate.
    stack : StackOutcome or None
        The stacked predictive of the families with draws (None where it was not asked for).
    stack_findings : dict of str to ScoreFinding or Omitted
        Per held-out split, the stack against the best family posterior (paired per-row log losses).
    predictions : dict of str to SplitPredictions
        Per held-out split, every family's and the stack's posterior mean probabilities.
    disagreements : dict of str to Disagreement
        Per held-out split, the rows where the families' posteriors predict different classes.
    left_out_baselines : tuple of str
        Baselines asked for that cannot classify the data's number of classes (e.g. two-class ones on three).
    convergence : dict of str to ConvergenceFinding
        Per family with posterior draws, its convergence verdict (``"no_verdict"`` for independent draws).
    rankings : tuple of Ranking
        One per criterion, the one the page's sentences and recommendation state: PSIS-LOO of the families with
        a reliable estimate, then the held-out log loss of the families' posteriors on each held-out split.
    """

    data_name: str
    n_rows: dict[str, int]
    random_seed: int
    fits: tuple[FamilyFit, ...]
    loo: tuple[LooRow, ...]
    loo_left_out: tuple[tuple[str, str], ...]
    heldout: dict[str, tuple[HeldoutRow, ...]]
    findings: dict[str, ScoreFinding | Omitted]
    agreement: tuple[RankingAgreement, ...]
    score_tables: dict[str, Any] = field(default_factory=dict)
    stack: StackOutcome | None = None
    stack_findings: dict[str, ScoreFinding | Omitted] = field(default_factory=dict)
    predictions: dict[str, SplitPredictions] = field(default_factory=dict)
    disagreements: dict[str, Disagreement] = field(default_factory=dict)
    left_out_baselines: tuple[str, ...] = ()
    convergence: dict[str, ConvergenceFinding] = field(default_factory=dict)
    rankings: tuple[Ranking, ...] = ()

    @property
    def results(self) -> dict[str, Any]:
        """The fitted results by family."""
        return {fitted.family: fitted.result for fitted in self.fits if fitted.result is not None}

    @property
    def unavailable(self) -> dict[str, str]:
        """The families without a result, with the reason."""
        return {fitted.family: fitted.reason for fitted in self.fits if fitted.result is None}

    @property
    def unreliable_loo(self) -> tuple[LooRow, ...]:
        """The LOO rows with Pareto k above ``PARETO_K_LIMIT``: rank those by held-out scores."""
        return tuple(row for row in self.loo if row.n_high_k)


def parse_families(value: str | Sequence[str] | None) -> tuple[str, ...]:
    """The families named by ``value``: ``None`` or ``"all"`` for the whole registry, else a list or comma list.

    Parameters
    ----------
    value : str, sequence of str or None
        ``"all"``, ``"logistic,gp"``, ``["logistic", "gp"]`` or None.

    Returns
    -------
    tuple of str
        Registry names, each once, in the registry's order (a list is ``"all"`` restricted to it).

    Raises
    ------
    ValueError
        An unknown name, or no name at all; the message names the value and the choices.
    """
    if value is None or value == "all":
        return tuple(REGISTRY)
    names = value.split(",") if isinstance(value, str) else list(value)
    if not all(isinstance(name, str) for name in names):
        raise TypeError(f"families must be 'all' or names among {', '.join(REGISTRY)}, got {value!r}")
    names = [name.strip() for name in names]
    choices = f"'all' or a comma-separated list of {', '.join(REGISTRY)}"
    unknown = [name for name in names if name not in REGISTRY]
    if unknown or not names or "" in names:
        what = (
            f"unknown famil{'y' if len(unknown) == 1 else 'ies'} {', '.join(map(repr, unknown))}"
            if unknown
            else ("an empty name")
        )
        raise ValueError(f"families={value!r}: {what}; give {choices}")
    return tuple(name for name in REGISTRY if name in names)


def parse_baselines(value: str | Sequence[str]) -> tuple[str, ...]:
    """The baselines named by ``value``: ``"all"``, a comma-separated string or a list of names.

    Parameters
    ----------
    value : str or sequence of str
        ``"all"``, ``"knn,tree"``, ``["knn"]`` or ``()``.

    Returns
    -------
    tuple of str

    Raises
    ------
    ValueError
        An unknown name (the message lists the choices).
    TypeError
        Not a string or a list of strings.
    """
    if value == "all":
        return tuple(BASELINES)
    if not isinstance(value, str) and not (
        isinstance(value, Sequence) and all(isinstance(name, str) for name in value)
    ):
        raise TypeError(f"baselines must be 'all', a comma-separated string or a list of names, got {value!r}")
    names = value.split(",") if isinstance(value, str) else list(value)
    unknown = [name for name in names if name not in BASELINES]
    if unknown:
        raise ValueError(
            f"baselines={value!r}: unknown {', '.join(map(repr, unknown))}; give 'all', () or names among "
            f"{', '.join(BASELINES)}"
        )
    return tuple(names)


def compare_models(
    data: Dataset,
    families: str | Sequence[str] | None = "all",
    *,
    fractions: tuple[float, float, float] = (0.6, 0.2, 0.2),
    standardize: Standardize = DEFAULT_STANDARDIZE,
    method: str = "auto",
    sampler: SamplerSettings | None = None,
    hyperparameters: Mapping[str, Mapping[str, Any]] | None = None,
    baselines: str | Sequence[str] = "all",
    with_stack: bool = True,
    random_seed: int = 0,
    test: Any = None,
    target: str | None = None,
    missing: MissingPolicy | None = None,
) -> ModelComparison:
    """Fit every family that can take ``data`` on one split and rank them by PSIS-LOO and held-out scores.

    With the analyst's own ``test`` table, nothing is split: every family is fitted on all the rows of ``data``
    (PSIS-LOO ranks them on those) and the held-out ranking is on the test table's rows, under the table's name.
    No validation rows are needed: nothing in a comparison is tuned on them.

    Parameters
    ----------
    data : Dataset or pandas.DataFrame
        The whole table (:func:`bayesclass.load`, or a DataFrame with its class column ``target``, coded as
        :func:`~bayesclass.inference.fit` codes one); it is split here (without ``test``), else the training rows.
    families : str or sequence of str, default "all"
        ``"all"`` (every family of the registry), a comma-separated string or a list of registry names.
    fractions : (float, float, float), default (0.6, 0.2, 0.2)
        Shares of training, validation and test rows (stratified by class).
    standardize : bool or "all", default True
        As :func:`bayesclass.fit` (scale the continuous columns: the priors are on standardised inputs; ``False``:
        in the data's units), for every family.
    method : str, default "auto"
        ``"auto"``: each family's default sampling method; another method is used for the families that have it
        (the others are listed with the reason).
    sampler : SamplerSettings, optional
        Draws, tune, chains ... for every family (``None``: the defaults; draws and tune the family's).
    hyperparameters : mapping of str to mapping, optional
        Per family, keyword hyperparameters (default: the family's defaults).
    baselines : "all" or sequence of str, default "all"
        The seeds' classical classifiers scored beside the estimates, fitted once on the training rows: ``"all"``
        (every one of :data:`bayesclass.models.baselines.BASELINES`), a list of their names, or ``()`` for none.
    with_stack : bool, default True
        Also stack the families that have posterior draws (:func:`stack_families`) and score the stack beside them.
    random_seed : int, default 0
        Seed of the split and of every fit.
    test : Dataset, pandas.DataFrame, str or PathLike, optional
        The analyst's own test table (a Dataset, a DataFrame, or a CSV/TSV/parquet file), coded as ``data``
        (:func:`bayesclass.data.load_test`: the same columns, levels and classes; blank cells as
        ``data.missing.policy``); ``fractions`` is then unused.
    target : str, optional
        The class column of a DataFrame ``data`` and of a DataFrame or file ``test``.
    missing : {"error", "drop"}, optional
        With a DataFrame ``data``: a blank cell in a used column refuses it (default "error") or drops its row;
        blank cells of ``test`` follow the same policy (that of ``data`` for a Dataset).

    Returns
    -------
    ModelComparison

    Raises
    ------
    TypeError
        ``data`` not a Dataset, ``families`` or ``baselines`` not names, ``sampler`` not SamplerSettings, ``test``
        none of the accepted kinds.
    ValueError
        Unknown families, hyperparameters of a family not compared or invalid for it, a method that is not a
        sampler, bad split fractions or seed, a bad ``standardize`` (or a constant training column to scale), a
        ``test`` table not coded like ``data`` (a column missing, an unseen level or class; named).
    """
    if not isinstance(data, Dataset):  # a DataFrame is coded as fit codes one; anything else is refused below
        data = as_dataset(data, target=target, missing=missing, features=None, feature_kinds=None, max_levels=None)
    elif missing is not None:
        raise ValueError(
            f"{spelled('missing', missing)} applies to a DataFrame; data is the Dataset {data.name!r}, whose rows are "
            f"fixed (blank cells of its test table follow its policy, {data.missing.policy!r}): drop the argument"
        )
    if not isinstance(data, Dataset):
        raise TypeError(
            f"data must be a bayesclass Dataset (bayesclass.load) or a pandas DataFrame with its class column "
            f"{spelled('target', 'COLUMN')}, got {type(data).__name__}"
        )
    names = parse_families(families)
    unknown = sorted(set(hyperparameters or {}) - set(names))
    if unknown:
        raise ValueError(f"hyperparameters given for {', '.join(unknown)}, not among the families {', '.join(names)}")
    if method not in ("auto", *SAMPLERS):
        raise ValueError(f"method={method!r} must be 'auto' (each family's default) or one of {', '.join(SAMPLERS)}")
    if sampler is not None and not isinstance(sampler, SamplerSettings):
        raise TypeError(f"sampler must be a SamplerSettings (or None), got {type(sampler).__name__}")
    baselines = parse_baselines(baselines)
    if not isinstance(with_stack, bool):
        raise TypeError(f"with_stack must be True or False, got {with_stack!r}")
    models = {name: get_model(name, **(hyperparameters or {}).get(name, {})) for name in names}
    train, heldout, row_ids = heldout_splits(data, fractions, random_seed, test=test, target=target)
    check_standardize(standardize)  # a bad value: before any fit
    settings = sampler if sampler is not None else SamplerSettings()
    fits = tuple(
        fit_family(model, train, method=method, sampler=settings, standardize=standardize, random_seed=random_seed)
        for model in models.values()
    )
    return rank(
        fits,
        heldout,
        n_train=train.n_obs,
        data_name=data.name,
        baselines=baselines,
        random_seed=random_seed,
        with_stack=with_stack,
        row_ids=row_ids,
    )


def heldout_splits(
    data: Dataset, fractions: tuple[float, float, float], random_seed: int, *, test: Any = None, target=None
) -> tuple[Dataset, dict[str, Dataset], dict[str, np.ndarray]]:
    """The training rows, the held-out splits by name and their rows' positions in their table.

    Parameters
    ----------
    data : Dataset
        The table to split, or (with ``test``) the training rows.
    fractions : (float, float, float)
        Shares of training, validation and test rows (without ``test``).
    random_seed : int
        Seed of the split.
    test : Dataset, pandas.DataFrame, str or PathLike, optional
        The analyst's own test table (:func:`bayesclass.data.load_test`, blanks as ``data.missing.policy``).
    target : str, optional
        Its class column (a DataFrame or file).

    Returns
    -------
    (Dataset, dict of str to Dataset, dict of str to numpy.ndarray)
        Without ``test``: the training part and ``{"validation": ..., "test": ...}`` of the stratified split;
        with it: all of ``data`` and ``{<the test table's name>: rows}`` (``"test"`` where that name is "train").
    """
    if test is None:
        train, validation, test_part = train_validation_test_split(data, fractions=fractions, random_seed=random_seed)
        _, validation_rows, test_rows = split_row_indices(data, fractions=fractions, random_seed=random_seed)
        return train, {"validation": validation, "test": test_part}, {"validation": validation_rows, "test": test_rows}
    rows = load_test(test, data, target=target, missing=data.missing.policy)
    name = "test" if rows.name == "train" else rows.name
    return data, {name: rows}, {name: np.arange(rows.n_obs)}


def stack_families(
    fits: Sequence[FamilyFit], *, method: str = "stacking", left_out: Mapping[str, str] | None = None
) -> StackOutcome:
    """The stacked predictive of the fitted families, with its weights by every method of :data:`STACK_METHODS`.

    Parameters
    ----------
    fits : sequence of FamilyFit
        The families, fitted on the same training rows (those without a result are left out).
    method : {"stacking", "pseudo_bma_plus"}, default "stacking"
        The weights the stack mixes by.
    left_out : mapping of str to str, optional
        Families without a PSIS-LOO estimate, with the reason (:func:`rank_loo`): the weights need every member's
        leave-one-out densities, so these are left out of the stack (the notes say so), not the stack.

    Returns
    -------
    StackOutcome
        With the stack, or the reason there is none (fewer than two families with draws and a log-likelihood, a
        member the stack refuses ...); a family the stack cannot take is never an error of the comparison.
    """
    left_out = left_out or {}
    results = {  # a stack mixes posterior predictive densities: members need draws and their log-likelihood
        fitted.family: fitted.result
        for fitted in fits
        if fitted.result is not None
        and {"posterior", "log_likelihood"} <= set(fitted.result.children)
        and fitted.family not in left_out
    }
    skipped = tuple(
        f"{family} is not in the stack: {reason}"
        for family, reason in left_out.items()
        if any(fitted.family == family and fitted.result is not None for fitted in fits)
    )
    if len(results) < 2:
        return StackOutcome(
            method,
            reason=f"{len(results)} famil{'y has' if len(results) == 1 else 'ies have'} posterior draws with a "
            "log-likelihood and a PSIS-LOO estimate: a stack needs two or more",
            notes=skipped,
        )
    weights: dict[str, dict[str, float]] = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            stacked = stack(results, method=method)
            for other in (name for name in STACK_METHODS if name != method):  # the stack's own: from its record
                table = stack_weights(results, method=other)
                weights[other] = {family: float(table.loc[family, "weight"]) for family in results}
        except (TypeError, ValueError) as error:
            return StackOutcome(method, reason=f"the families could not be stacked: {error}")
    info = stack_info(stacked)
    weights[method] = dict(zip(info.labels, info.weights, strict=True))
    notes = skipped + tuple(dict.fromkeys(str(warning.message) for warning in caught))
    return StackOutcome(method, {name: weights[name] for name in STACK_METHODS}, stacked, notes=notes)


def fit_family(
    model: ClassifierModel,
    train: Dataset,
    *,
    method: str,
    sampler: SamplerSettings,
    standardize: Standardize,
    random_seed: int,
) -> FamilyFit:
    """Fit one family to the training rows, or say why it cannot (its own check, or the fit's error).

    Parameters
    ----------
    model : ClassifierModel
        The family instance.
    train : Dataset
        The training rows.
    method, sampler, standardize, random_seed
        As :func:`compare_models`.

    Returns
    -------
    FamilyFit
    """
    name = model.name
    try:
        chosen = resolve_method(model, method, sampler, data=train)
    except ValueError as error:
        return FamilyFit(name, method, reason=str(error))
    if chosen not in methods_of(model):
        return FamilyFit(name, chosen, reason=f"method {chosen!r} is not available{model.unavailable_hint(chosen)}")
    try:
        model.check_training_data(train)
    except ValueError as error:
        return FamilyFit(name, chosen, reason=str(error))
    started, cpu = time.perf_counter(), time.process_time()
    try:
        result = fit(model, train, method=chosen, sampler=sampler, standardize=standardize, random_seed=random_seed)
    except (ValueError, ConvergenceError, RuntimeError) as error:
        return FamilyFit(name, chosen, reason=f"the fit failed: {error}")
    return FamilyFit(name, chosen, result, seconds=time.perf_counter() - started, cpu_seconds=time.process_time() - cpu)


def rank(
    fits: Sequence[FamilyFit],
    heldout: Mapping[str, Dataset],
    *,
    n_train: int,
    data_name: str,
    baselines: Sequence[str] = (),
    random_seed: int = 0,
    with_stack: bool = False,
    row_ids: Mapping[str, np.ndarray] | None = None,
) -> ModelComparison:
    """Rank fitted families (on the same training rows) by PSIS-LOO and by held-out scores.

    Parameters
    ----------
    fits : sequence of FamilyFit
        The families, fitted or with the reason why not.
    heldout : mapping of str to Dataset
        Held-out splits by name.
    n_train : int
        Training rows.
    data_name : str
        The data set's name.
    baselines : sequence of str
        Baselines scored beside the estimates.
    random_seed : int, default 0
        The seed recorded (and of the randomised baselines).
    with_stack : bool, default False
        Stack the families with a PSIS-LOO estimate (:func:`stack_families`) and score the stack beside them.
    row_ids : mapping of str to numpy.ndarray, optional
        Per held-out split, its rows' positions in the whole table (default 0, 1, ...).

    Returns
    -------
    ModelComparison
    """
    results = {fitted.family: fitted.result for fitted in fits if fitted.result is not None}
    loo_rows, loo_left_out = rank_loo(results)
    stacked = stack_families(fits, left_out=dict(loo_left_out)) if with_stack else None
    scored = dict(results)
    if stacked is not None and stacked.result is not None:
        scored[stacked.label] = stacked.result
    rankings, findings, tables, stack_findings, predictions, disagreements = {}, {}, {}, {}, {}, {}
    for split, rows in heldout.items():
        proba, y, table = heldout_proba(scored, rows, baselines=baselines, random_seed=random_seed)
        tables[split] = table
        rankings[split] = rank_heldout(proba, y, table)
        posteriors = {
            label: values for label, values in proba.items() if label.endswith(": posterior") and values is not None
        }
        findings[split] = (
            paired_log_loss(posteriors, y, split=split)
            if posteriors
            else Omitted("scores", "no family has a posterior")
        )
        ids = np.arange(rows.n_obs) if row_ids is None else np.asarray(row_ids[split])
        codes = y if y.size == rows.n_obs else rows.y  # no family fitted: the rows' own codes
        predictions[split] = split_predictions(split, rows, codes, proba, ids, stacked)
        disagreements[split] = disagreement(predictions[split])
        best = findings[split]
        pair = (
            {label: proba.get(label) for label in (stacked.label, best.best)}
            if stacked and isinstance(best, ScoreFinding)
            else {}
        )
        if pair and all(values is not None for values in pair.values()):
            stack_findings[split] = paired_log_loss(
                {label: values for label, values in pair.items() if values is not None}, y, split=split
            )
    reliable = [row for row in loo_rows if not row.n_high_k]
    not_fitted = tuple(
        (fitted.family, "not fitted (its reason is listed with the families)")
        for fitted in fits
        if fitted.result is None
    )
    family_rankings = (
        loo_ranking(results, loo_rows, (*not_fitted, *loo_left_out), n_train=n_train),
        *(
            heldout_ranking(finding, results, not_fitted)
            for finding in findings.values()
            if isinstance(finding, ScoreFinding)
        ),
    )
    agreement = tuple(
        RankingAgreement(split, reliable[0].family, finding.best.removesuffix(": posterior"))
        for split, finding in findings.items()
        if reliable and isinstance(finding, ScoreFinding)
    )
    return ModelComparison(
        data_name=data_name,
        n_rows={"train": n_train, **{split: rows.n_obs for split, rows in heldout.items()}},
        random_seed=random_seed,
        fits=tuple(fits),
        loo=loo_rows,
        loo_left_out=loo_left_out,
        heldout=rankings,
        findings=findings,
        agreement=agreement,
        score_tables=tables,
        stack=stacked,
        stack_findings=stack_findings,
        predictions=predictions,
        disagreements=disagreements,
        left_out_baselines=tuple(left_out_baselines(next(iter(results.values())), baselines)) if results else (),
        convergence={family: family_convergence(result) for family, result in results.items() if "posterior" in result},
        rankings=family_rankings,
    )


def loo_ranking(
    results: Mapping[str, Any], rows: Sequence[LooRow], left_out: Sequence[tuple[str, str]], *, n_train: int
) -> Ranking:
    """The PSIS-LOO :class:`Ranking`: the families whose every training row has Pareto k at most the limit.

    Parameters
    ----------
    results : mapping of str to xarray.DataTree
        The fitted results by family.
    rows : sequence of LooRow
        :func:`rank_loo`'s rows of every family with an estimate, best first.
    left_out : sequence of (str, str)
        The families without an estimate, with why.
    n_train : int
        Training rows.

    Returns
    -------
    Ranking
        Where the best of ``rows`` is unreliable, the reliable families are compared again among themselves
        (``dse`` is relative to the best of those compared).
    """
    reliable = [row for row in rows if not row.n_high_k]
    unreliable = tuple(
        (row.family, f"{row.n_high_k} of {n_train} training rows have Pareto k > {PARETO_K_LIMIT:g} (max "
         f"{row.max_k:.2f}): its elpd_loo is not trusted")
        for row in rows if row.n_high_k
    )  # fmt: skip
    if len(reliable) > 1 and reliable[0] is not rows[0]:  # dse is relative to the best of those compared
        reliable = list(rank_loo({row.family: results[row.family] for row in reliable})[0])
    ranking = Ranking("PSIS-LOO", "train", n_train, tuple(row.family for row in reliable), (*left_out, *unreliable))
    if len(reliable) < 2:
        return ranking
    difference = (reliable[0].elpd - reliable[1].elpd) / n_train
    standard_error = reliable[1].dse / n_train
    return replace(
        ranking,
        difference=difference,
        standard_error=standard_error,
        verdict=difference_verdict(difference, standard_error),
    )


def heldout_ranking(
    finding: ScoreFinding, results: Mapping[str, Any], not_fitted: Sequence[tuple[str, str]]
) -> Ranking:
    """The held-out :class:`Ranking` of the families' posteriors on one split, from its :class:`ScoreFinding`.

    Parameters
    ----------
    finding : ScoreFinding
        :func:`paired_log_loss` of the posteriors (labels ``"<family>: posterior"``).
    results : mapping of str to xarray.DataTree
        The fitted results by family.
    not_fitted : sequence of (str, str)
        The families not fitted, with why.

    Returns
    -------
    Ranking
    """
    families = tuple(label.removesuffix(": posterior") for label, _ in finding.log_losses)
    undefined = tuple(
        (label.removesuffix(": posterior"), f"its probabilities are undefined on {count} of {finding.n_rows} rows")
        for label, count in finding.left_out
    )
    named = {*families, *(family for family, _ in undefined)}
    no_posterior = tuple(
        (family, f"no posterior draws (method {result_info(result).method}), only its point estimates")
        for family, result in results.items()
        if family not in named
    )
    verdict = None if finding.runner_up is None else finding.verdict
    return Ranking(
        "held-out log loss", finding.split, finding.n_rows, families, (*not_fitted, *undefined, *no_posterior),
        finding.difference, finding.standard_error, verdict,
    )  # fmt: skip


def family_convergence(result) -> ConvergenceFinding:
    """The convergence verdict of a fitted result's posterior draws (:func:`~bayesclass.inference.diagnose`).

    Parameters
    ----------
    result : xarray.DataTree
        A fitted result with posterior draws.

    Returns
    -------
    ConvergenceFinding
        Its verdict with the worst r_hat, ESS and divergences (``"no_verdict"`` for independent draws).
    """
    from bayesclass.inference.criticism.diagnostics import diagnose
    from bayesclass.inference.result import result_info

    return result_convergence(result, diagnose(result), method=result_info(result).method)


def rank_loo(results: Mapping[str, Any]) -> tuple[tuple[LooRow, ...], tuple[tuple[str, str], ...]]:
    """The PSIS-LOO ranking of the results that have one, and the others with the reason.

    Parameters
    ----------
    results : mapping of str to xarray.DataTree
        Results fitted on the same training rows, by family.

    Returns
    -------
    (tuple of LooRow, tuple of (str, str))
        The rows best first (``arviz_stats.compare`` through :func:`bayesclass.inference.criticism.loo.compare`
        where two or more families have draws), and the families left out with why.
    """
    summaries, left_out = {}, []
    for name, result in results.items():
        try:
            summary = loo(result)
        except (TypeError, ValueError) as error:  # LooUnavailable included
            left_out.append((name, str(error)))
            continue
        if not (math.isfinite(summary.elpd_loo) and math.isfinite(summary.se)):  # e.g. draws of log-likelihood -inf
            left_out.append((name, f"PSIS-LOO is not finite (elpd_loo {summary.elpd_loo}, se {summary.se}): rank it "
                             "by its held-out scores"))  # fmt: skip
            continue
        summaries[name] = summary
    if not summaries:
        return (), tuple(left_out)
    table: dict[str, dict[str, Any]]
    if len(summaries) == 1:
        ((name, summary),) = summaries.items()
        table = {name: {"elpd_diff": 0.0, "dse": 0.0, "warning": "; ".join(summary.notes)}}
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # returned as the table's warning column
            table = compare({name: results[name] for name in summaries}).to_dict(orient="index")
    rows = [
        LooRow(
            family=name,
            elpd=summaries[name].elpd_loo,
            se=summaries[name].se,
            elpd_diff=float(table[name]["elpd_diff"]),
            dse=float(table[name]["dse"]),
            p_loo=summaries[name].p_loo,
            n_high_k=summaries[name].n_high_k,
            max_k=float(np.nanmax(summaries[name].pareto_k)),
            notes=str(table[name].get("warning", "")),
            verdict=difference_verdict(
                float(table[name]["elpd_diff"]) / summaries[name].n_rows,
                float(table[name]["dse"]) / summaries[name].n_rows,
            )
            if float(table[name]["elpd_diff"])
            else None,
        )
        for name in table
    ]
    return tuple(sorted(rows, key=lambda row: -row.elpd)), tuple(left_out)


def heldout_proba(
    results: Mapping[str, Any], rows: Dataset, *, baselines: Sequence[str] = (), random_seed: int = 0
) -> tuple[dict[str, np.ndarray | None], np.ndarray, Any]:
    """Every family's estimates (and the baselines') on held-out rows, and their score table.

    The baselines are fitted once, on the inputs of the first fitted family (its coding and standardisation).

    Parameters
    ----------
    results : mapping of str to xarray.DataTree
        Results by family (a stack's label -> the stack: its mixture scored under that label, members left out).
    rows : Dataset
        Held-out rows.
    baselines : sequence of str
        Baselines to score.
    random_seed : int, default 0
        Seed of the randomised baselines.

    Returns
    -------
    (dict of str to array or None, numpy.ndarray, pandas.DataFrame)
        ``"<family>: <estimate>"`` (and ``"baseline: <name>"``) -> (n, K) probabilities (None for a baseline
        that only decides), the rows' class codes, and :func:`score_table` of them all.
    """
    proba: dict[str, np.ndarray | None] = {}
    decisions: dict[str, np.ndarray] = {}
    y = np.zeros(0, dtype=int)
    class_names: tuple[str, ...] = ()
    for index, (family, result) in enumerate(results.items()):
        fitted = fit_baselines(result, baselines, random_seed=random_seed) if baselines and index == 0 else None
        estimates = heldout_estimates(result, rows, baselines=fitted)
        y, class_names = estimates.y, estimates.class_names
        if is_stack(result):  # the mixture only: its members are the families' own posteriors, scored above
            proba[family] = estimates.proba[next(iter(estimates.proba))]
            continue
        for label, values in estimates.proba.items():
            proba[label if label.startswith("baseline: ") else f"{family}: {label}"] = values
        decisions.update(estimates.decisions)
    if not proba:
        return proba, y, None
    table = score_table(proba, y, decisions=decisions or None, class_names=class_names)
    return proba, y, table


def rank_heldout(proba: Mapping[str, np.ndarray | None], y: np.ndarray, table) -> tuple[HeldoutRow, ...]:
    """Every estimate best first by held-out log loss, with its paired per-row difference to the best.

    Parameters
    ----------
    proba : mapping of str to array or None
        Label -> (n, K) probabilities (None: decisions only, ranked last by accuracy).
    y : numpy.ndarray
        The rows' class codes.
    table : pandas.DataFrame or None
        :func:`score_table` of the same estimates.

    Returns
    -------
    tuple of HeldoutRow
    """
    if table is None:
        return ()
    scored = {label: values for label, values in proba.items() if values is not None}
    order = sorted(
        table.index,
        key=lambda label: (
            label not in scored or math.isnan(table.loc[label, "log_loss"]),
            table.loc[label, "log_loss"] if label in scored else -table.loc[label, "accuracy"],
        ),
    )
    best = order[0] if order and order[0] in scored else None
    rows = []
    for label in order:
        difference = standard_error = math.nan
        verdict: Verdict | None = None
        if best is not None and label == best:
            difference = standard_error = 0.0
        elif best is not None and label in scored:
            finding = paired_log_loss({best: scored[best], label: scored[label]}, y)
            if isinstance(finding, ScoreFinding):
                sign = 1.0 if finding.best == best else -1.0  # a tie in means keeps the order of the table
                difference, standard_error = sign * finding.difference, finding.standard_error
                verdict = finding.verdict
        rows.append(
            HeldoutRow(
                label=str(label),
                log_loss=float(table.loc[label, "log_loss"]),
                brier=float(table.loc[label, "brier"]),
                accuracy=float(table.loc[label, "accuracy"]),
                difference=float(difference),
                standard_error=float(standard_error),
                verdict=verdict,
            )
        )
    return tuple(rows)


def features_frame(rows: Dataset, row_ids: np.ndarray):
    """The rows' inputs in the data's units: coded columns as their category names, indexed by ``row_ids``.

    Parameters
    ----------
    rows : Dataset
        The rows.
    row_ids : numpy.ndarray of shape (n,)
        Their positions in the whole table.

    Returns
    -------
    pandas.DataFrame
    """
    frame = pd.DataFrame(rows.X, columns=list(rows.feature_names), index=pd.Index(row_ids, name="row"))
    for name, levels in rows.category_names.items():
        if name in frame:
            frame[name] = np.asarray(levels, dtype=object)[frame[name].to_numpy().astype(int)]
    return frame


def split_predictions(
    split: str,
    rows: Dataset,
    y: np.ndarray,
    proba: Mapping[str, np.ndarray | None],
    row_ids: np.ndarray,
    stacked: StackOutcome | None,
) -> SplitPredictions:
    """Each family's posterior mean probabilities (``"<family>: posterior"``) and the stack's on one split.

    Parameters
    ----------
    split : str
        The split.
    rows : Dataset
        Its rows.
    y : numpy.ndarray
        Their class codes.
    proba : mapping of str to array or None
        :func:`heldout_proba`'s probabilities.
    row_ids : numpy.ndarray
        The rows' positions in the whole table.
    stacked : StackOutcome or None
        The stack, whose mixture is ``proba[stacked.label]``.

    Returns
    -------
    SplitPredictions
    """
    families = {
        label.removesuffix(": posterior"): values
        for label, values in proba.items()
        if label.endswith(": posterior") and values is not None
    }
    if stacked is not None and stacked.result is not None and proba.get(stacked.label) is not None:
        families["stack"] = proba[stacked.label]  # type: ignore[assignment]
    return SplitPredictions(split, y, rows.class_names, families, features_frame(rows, row_ids))


def disagreement(predictions: SplitPredictions, *, max_rows: int = MAX_DISAGREEMENT_ROWS) -> Disagreement:
    """The rows where the families' posteriors predict different classes (the stack is not a family here).

    Parameters
    ----------
    predictions : SplitPredictions
        One split's probabilities.
    max_rows : int, default MAX_DISAGREEMENT_ROWS
        Rows kept, the largest spread of the true class's probability across families first.

    Returns
    -------
    Disagreement
    """
    families = [name for name in predictions.proba if name != "stack"]
    n = predictions.y.shape[0]
    columns: dict[str, Any] = {"true class": np.asarray(predictions.class_names, dtype=object)[predictions.y]}
    if len(families) < 2:
        empty = pd.DataFrame(columns, index=predictions.features.index).iloc[:0]
        return Disagreement(predictions.split, n, 0, empty)
    stacked = np.stack([predictions.proba[name] for name in families])  # (F, n, K)
    predicted = stacked.argmax(axis=2)  # (F, n)
    differs = (predicted != predicted[:1]).any(axis=0)
    truth = np.take_along_axis(stacked, predictions.y[None, :, None], axis=2)[..., 0]  # (F, n)
    spread = truth.max(axis=0) - truth.min(axis=0)
    for index, name in enumerate(families):
        columns[name] = np.asarray(predictions.class_names, dtype=object)[predicted[index]]
        columns[f"{name} p"] = np.take_along_axis(stacked[index], predicted[index][:, None], axis=1)[:, 0]
    table = pd.concat([pd.DataFrame(columns, index=predictions.features.index), predictions.features], axis=1)
    order = np.flatnonzero(differs)[np.argsort(-spread[differs], kind="stable")][:max_rows]
    return Disagreement(predictions.split, n, int(differs.sum()), table.iloc[order])
