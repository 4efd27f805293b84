"""Convergence diagnostics of an MCMC fit (NUTS, the GP's Gibbs sampler), condensed into a pass/fail verdict.

Every number comes from ArviZ (``arviz_stats.rhat``, ``ess``, ``mcse``, ``bfmi``,
``summary``); this module only applies the thresholds. The checks, by name (:data:`CHECKS`):

- ``r_hat``: rank-normalised split r_hat <= 1.01 for every parameter element (Vehtari et al. 2021,
  a rule stated for at least 4 chains),
- ``ess_bulk``, ``ess_tail``: bulk and tail ESS >= 400 for every parameter element,
- ``divergences``: 0 divergent transitions after warm-up (NUTS; other samplers have none),
- ``bfmi``: E-BFMI >= 0.3 in every chain (NUTS: where the sampler records the energy),
- ``partial``: the draws are complete (not an interrupted run kept with ``keep_partial``),
- ``stuck_chain``: no chain repeats its whole state in half or more of its successive draws (a stuck chain),
- ``tree_depth``: NUTS trajectories that hit the maximum tree depth; a note, not a failure (the draws are
  valid, the sampler is slow), which adds its advice.

A check that cannot be computed from the draws (r_hat of one chain, r_hat and ESS of fewer than 4 draws per
chain, r_hat of a parameter element that takes one value in every draw, E-BFMI of one draw per chain) is
:class:`~bayesclass.inference.criticism.unavailable.Unavailable`: it fails the verdict with its reason
(:attr:`ConvergenceReport.unavailable`), and its number is NaN, shown as "n/a".

The advice that comes with a report (:attr:`ConvergenceReport.advice`) is computed from what failed,
the settings the sampling method recorded (an option the method does not take is never suggested:
the Gibbs sampler records no ``target_accept``), whether the inputs were standardised, and the
family's own :meth:`~bayesclass.models.base.ClassifierModel.convergence_advice`.

The summary table is computed variable by variable: ``arviz_stats.summary`` (1.3.3) mislabels the rows of a
Dataset that mixes the dims ``(class)`` and ``(feature, class)``.

The table a person reads (:attr:`ConvergenceReport.table`) is condensed where the family declares latent blocks:
the posterior variables outside its
:attr:`~bayesclass.models.base.ClassifierModel.summary_parameter_names` (a latent GP's ``latent``, one element per
training row, or its HSGP ``basis_weight``) are one row each, with their worst values, how many of their elements
fail and which element is worst (:func:`condensed_table`); the hyperparameters keep a row per element.
``diagnose(result, full=True)`` (``bayesclass diagnose --full``) gives every element's row. The verdict is computed
from every element either way (:attr:`ConvergenceReport.element_table`): condensing changes what is shown, never
what is judged.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from bayesclass._lazy import lazy_import
from bayesclass.data.arguments import spelled
from bayesclass.data.constraints import Boolean
from bayesclass.inference.criticism.unavailable import (
    MIN_CHAINS_R_HAT,
    MIN_DRAWS_PER_CHAIN,
    Unavailable,
    chain_shape_text,
    fit_with_more,
)
from bayesclass.inference.result import ResultInfo, result_info

if TYPE_CHECKING:
    import arviz_stats as azs
    import pandas as pd
    import xarray as xr
else:
    azs = lazy_import("arviz_stats")
    pd = lazy_import("pandas")
    xr = lazy_import("xarray")

__all__ = [
    "CHECKS",
    "ConvergenceReport",
    "MAX_R_HAT",
    "MIN_BFMI",
    "MAX_REPEATS",
    "MIN_ESS",
    "condensed_table",
    "convergence_advice",
    "convergence_table",
    "diagnose",
    "stuck_chains",
    "unavailable_checks",
]

MAX_R_HAT = 1.01
MIN_ESS = 400
#: E-BFMI below this in a chain: the momentum resampling cannot explore the energy distribution (Betancourt 2016)
MIN_BFMI = 0.3
#: a chain whose whole state repeats in this share of its successive draws or more is stuck
MAX_REPEATS = 0.5
#: the checks of a verdict, by name (module docstring); ``tree_depth`` is a note, never a failure
CHECKS = ("r_hat", "ess_bulk", "ess_tail", "divergences", "bfmi", "partial", "stuck_chain", "tree_depth")
#: the checks whose failure says the sampler explores the posterior badly (the family's geometry may help)
_EXPLORATION = frozenset({"r_hat", "ess_bulk", "ess_tail", "divergences", "bfmi", "stuck_chain", "tree_depth"})


@dataclass(frozen=True)
class ConvergenceReport:
    """Worst-case diagnostics over all parameter elements, the verdict and what to try.

    Parameters
    ----------
    max_r_hat : float
        Largest rank-normalised split r_hat over every parameter element (NaN where one is undefined).
    min_ess_bulk, min_ess_tail : float
        Smallest bulk and tail effective sample size over every parameter element.
    n_divergences : int
        Divergent transitions after warm-up (0 for a sampler that integrates no trajectories).
    max_mcse_mean : float
        Largest Monte Carlo standard error of a posterior mean.
    passed : bool
        Whether every threshold (module docstring) holds and the draws are complete.
    failures : tuple of str
        One message per failed threshold (empty when ``passed``).
    table : pandas.DataFrame
        The table to read: ArviZ's summary table (``arviz_stats.summary``, 89% equal-tailed intervals), one row per
        parameter element, condensed to one row per latent block where the family declares such blocks
        (:func:`condensed_table`); every element's row with ``diagnose(result, full=True)``.
    element_table : pandas.DataFrame
        ArviZ's summary table with one row per parameter element, summarised variable by variable: what the
        verdict and the worst values are computed from (``table`` itself with ``full=True``).
    failed_checks : tuple of str
        The names (:data:`CHECKS`) of the failed checks, in the order of ``failures``.
    notes : tuple of str
        Observations that do not fail the verdict (trajectories at the maximum tree depth).
    advice : tuple of str
        What to try, computed from the failed checks and notes, the method's recorded settings, the inputs'
        standardisation and the family (empty when nothing failed and nothing was noted).
    min_bfmi : float or None
        Smallest E-BFMI over the chains (None: the sampler records no energy).
    applies : bool
        Whether the verdict applies: False for independent draws (exact conjugate draws, no sampler statistics),
        which have no Markov chain to converge; their worst r_hat over many elements crosses 1.01 by chance, and
        they get no advice. A failed verdict that applies is what ``--strict`` turns into exit code 3.
    unavailable : tuple of Unavailable
        The checks that cannot be computed from these draws, each with why and what to do; each one is also a
        failure (its message in ``failures``, its check in ``failed_checks``).
    """

    max_r_hat: float
    min_ess_bulk: float
    min_ess_tail: float
    n_divergences: int
    max_mcse_mean: float
    passed: bool
    failures: tuple[str, ...]
    table: pd.DataFrame
    element_table: pd.DataFrame
    failed_checks: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    advice: tuple[str, ...] = ()
    min_bfmi: float | None = None
    applies: bool = True
    unavailable: tuple[Unavailable, ...] = ()

    def __str__(self) -> str:
        if not self.applies:  # independent draws: nothing to converge (class docstring)
            verdict = "(no verdict: independent draws, no Markov chain to converge)"
        else:
            verdict = "PASS" if self.passed else "FAIL: " + "; ".join(self.failures)
        bfmi = "" if self.min_bfmi is None else f", min E-BFMI {_shown(self.min_bfmi, '.2f')} (>= {MIN_BFMI})"
        lines = [
            f"convergence {verdict}",
            f"  max r_hat {_shown(self.max_r_hat, '.4f')} (<= {MAX_R_HAT}), min ESS bulk "
            f"{_shown(self.min_ess_bulk, '.0f')} / tail {_shown(self.min_ess_tail, '.0f')} (>= {MIN_ESS}), "
            f"divergences {self.n_divergences} (= 0){bfmi}, max MCSE of the mean {_shown(self.max_mcse_mean, '.3g')}",
        ]
        lines += [f"  note: {note}" for note in self.notes]
        lines += [] if self.applies else [f"  note: {item}" for item in self.unavailable]  # failures where it applies
        lines += [f"  try: {item}" for item in self.advice]
        return "\n".join(lines)


def diagnose(result: xr.DataTree, *, full: bool = False) -> ConvergenceReport:
    """Diagnose the posterior draws of a result (see the module docstring for the checks and the advice).

    Parameters
    ----------
    result : xarray.DataTree
        A fitted result with a ``posterior`` group (and, for NUTS, a ``sample_stats`` group).
    full : bool, default False
        Whether :attr:`ConvergenceReport.table` has a row for every parameter element. By default a latent block
        that the family declares (a latent GP's ``latent``, one element per training row) is one row of its
        worst values (:func:`condensed_table`). The verdict is computed from every element either way.

    Returns
    -------
    ConvergenceReport
        The worst-case diagnostics, the verdict, the advice and ArviZ's summary table.

    Raises
    ------
    ValueError
        The result has no posterior draws (a point estimate).
    InvalidValueError
        ``full`` is not True or False.
    """
    full = Boolean().check(full, argument="full")
    info = result_info(result)
    if "posterior" not in result:
        raise ValueError(
            f"this result was fitted by method {info.method!r} and has no posterior draws to "
            f"diagnose; fit with {spelled('method', 'nuts')} (or {spelled('method', 'exact')} where the model has a "
            "conjugate posterior)"
        )
    posterior = result["posterior"].to_dataset()
    with warnings.catch_warnings():  # ArviZ's 0/0 of too few draws or a constant element: judged below
        warnings.simplefilter("ignore", RuntimeWarning)
        # the table holds arviz_stats' r_hat, ESS and MCSE of every element: computed once, the worst read from it
        table = convergence_table(posterior)
        r_hat = _worst(table["r_hat"], np.max)
        ess_bulk = _worst(table["ess_bulk"], np.min)
        ess_tail = _worst(table["ess_tail"], np.min)
        mcse = _worst(table["mcse_mean"], np.max)
        stats = result["sample_stats"].to_dataset() if "sample_stats" in result.children else None
        bfmi = float(np.min(azs.bfmi(result)["energy"].values)) if stats is not None and "energy" in stats else None
    # a sampler that integrates no trajectories (exact draws, the GP's Gibbs sampler) has no divergences
    divergences = int(stats["diverging"].sum()) if stats is not None and "diverging" in stats else 0
    unavailable = unavailable_checks(posterior, table, r_hat=r_hat, ess=(ess_bulk, ess_tail), bfmi=bfmi)
    stuck = stuck_chains(posterior)
    checks = [
        ("r_hat", not r_hat <= MAX_R_HAT, f"r_hat {r_hat:.4f} > {MAX_R_HAT}"),
        ("ess_bulk", not ess_bulk >= MIN_ESS, f"bulk ESS {ess_bulk:.0f} < {MIN_ESS}"),
        ("ess_tail", not ess_tail >= MIN_ESS, f"tail ESS {ess_tail:.0f} < {MIN_ESS}"),
        ("divergences", divergences > 0, f"{divergences} divergent transitions"),
        ("bfmi", bfmi is not None and not bfmi >= MIN_BFMI, f"E-BFMI {bfmi or 0:.2f} < {MIN_BFMI} in a chain"),
        ("partial", info.partial, f"partial draws: {info.partial_reason}"),
        (
            "stuck_chain",
            bool(stuck),
            "stuck chain " + ", ".join(f"{c} (state repeats in {s:.0%} of its draws)" for c, s in stuck.items()),
        ),
    ]
    missing = {check: str(item) for item in unavailable for check in item.checks}
    failed = tuple((name, missing.get(name, message)) for name, failing, message in checks if failing)
    notes = {}
    hits = _tree_depth_hits(stats)
    if hits:
        draws = int(stats["diverging"].size) if stats is not None and "diverging" in stats else hits
        notes["tree_depth"] = f"{hits} of {draws} draws hit the maximum tree depth (slow, long trajectories)"
    names = tuple(name for name, _ in failed)
    applies = stats is not None  # exact conjugate draws come without sampler statistics
    return ConvergenceReport(
        r_hat,
        ess_bulk,
        ess_tail,
        divergences,
        mcse,
        not failed,
        tuple(dict.fromkeys(message for _, message in failed)),  # one message per unavailable statistic
        table if full else condensed_table(table, posterior, info.model.summary_parameter_names),
        table,
        failed_checks=names,
        notes=tuple(notes.values()),
        advice=convergence_advice((*names, *notes), info, min_ess=min(ess_bulk, ess_tail))
        if applies and (failed or notes)
        else (),
        min_bfmi=bfmi,
        applies=applies,
        unavailable=unavailable,
    )


def stuck_chains(posterior: xr.Dataset) -> dict[int, float]:
    """The stuck chains of ``posterior``: those whose whole state repeats in :data:`MAX_REPEATS` of steps or more.

    Parameters
    ----------
    posterior : xarray.Dataset
        The draws (dims ``chain, draw, ...``).

    Returns
    -------
    dict of int to float
        Chain index -> the share of its successive draws in which no parameter element changed (empty: none
        stuck, or fewer than 2 draws per chain).
    """
    n_chains, n_draws = int(posterior.sizes["chain"]), int(posterior.sizes["draw"])
    if n_draws < 2 or not posterior.data_vars:
        return {}
    moved = np.zeros((n_chains, n_draws - 1), dtype=bool)
    for variable in posterior.data_vars.values():
        values = variable.transpose("chain", "draw", ...).values.reshape(n_chains, n_draws, -1)
        moved |= np.any(values[:, 1:] != values[:, :-1], axis=2)
    repeats = 1.0 - moved.mean(axis=1)
    return {int(chain): float(repeats[chain]) for chain in np.flatnonzero(repeats >= MAX_REPEATS)}


def unavailable_checks(
    posterior: xr.Dataset, table: pd.DataFrame, *, r_hat: float, ess: tuple[float, float], bfmi: float | None
) -> tuple[Unavailable, ...]:
    """The checks that cannot be computed from ``posterior``, each with why (the module docstring lists them).

    Parameters
    ----------
    posterior : xarray.Dataset
        The draws (dims ``chain, draw, ...``).
    table : pandas.DataFrame
        Their summary table (:func:`convergence_table`): the elements whose r_hat or ESS is NaN are named.
    r_hat : float
        The worst r_hat (NaN where one element's is undefined).
    ess : (float, float)
        The smallest bulk and tail ESS.
    bfmi : float or None
        The smallest E-BFMI (None: the sampler records no energy).

    Returns
    -------
    tuple of Unavailable
        One per check that is not available (empty when every check could be computed).
    """
    n_chains, n_draws = int(posterior.sizes["chain"]), int(posterior.sizes["draw"])
    shape = f"the result has {chain_shape_text(n_chains, n_draws)}"
    more_draws = f"{fit_with_more('draws', 1000)}: at least {MIN_DRAWS_PER_CHAIN} per chain"
    unavailable = []
    if n_chains < MIN_CHAINS_R_HAT:
        reason = f"{shape}; r_hat compares {MIN_CHAINS_R_HAT} or more chains"
        unavailable.append(Unavailable("r_hat", reason, fit_with_more("chains", 4), ("r_hat",)))
    if n_draws < MIN_DRAWS_PER_CHAIN:
        measures = "r_hat and ESS" if n_chains >= MIN_CHAINS_R_HAT else "ESS"
        checks = ("r_hat", "ess_bulk", "ess_tail") if n_chains >= MIN_CHAINS_R_HAT else ("ess_bulk", "ess_tail")
        verb = "need" if n_chains >= MIN_CHAINS_R_HAT else "needs"
        reason = f"{shape}; {measures} {verb} {MIN_DRAWS_PER_CHAIN} or more draws per chain"
        name = measures if n_chains >= MIN_CHAINS_R_HAT else "bulk and tail ESS"
        unavailable.append(Unavailable(name, reason, more_draws, checks))
    else:
        for check, label, value in (
            ("r_hat", "r_hat", r_hat),
            ("ess_bulk", "bulk ESS", ess[0]),
            ("ess_tail", "tail ESS", ess[1]),
        ):
            if np.isnan(value) and not (check == "r_hat" and n_chains < MIN_CHAINS_R_HAT):
                unavailable.append(Unavailable(label, _undefined_elements(table, check), "", (check,)))
    if bfmi is not None and np.isnan(bfmi):
        reason = (
            f"{shape}; E-BFMI compares successive draws' energies (2 or more per chain)"
            if n_draws < 2
            else "the energy takes one value in every draw of a chain"
        )
        unavailable.append(Unavailable("E-BFMI", reason, more_draws if n_draws < 2 else "", ("bfmi",)))
    return tuple(unavailable)


def _undefined_elements(table: pd.DataFrame, column: str) -> str:
    """Why ``column`` is NaN for some rows of the summary table: which elements, and what their draws are."""
    undefined = table.index[table[column].isna()]
    # one value in every draw: an sd of 0 up to the rounding of the mean of identical numbers
    constant = [
        name for name in undefined if table.loc[name, "sd"] <= 1e-12 * max(1.0, abs(float(table.loc[name, "mean"])))
    ]
    nonfinite = [name for name in undefined if not np.isfinite(table.loc[name, "mean"])]
    examples = ", ".join(map(str, undefined[:3])) + (", ..." if len(undefined) > 3 else "")
    what = f"{len(undefined)} of {len(table)} parameter elements ({examples})"
    if constant and len(constant) == len(undefined):
        return f"{what} take one value in every draw (no spread for the statistic to measure)"
    if nonfinite:
        return f"{what} have non-finite draws (inf or NaN)"
    return f"{what} give an undefined value"


def convergence_table(posterior: xr.Dataset) -> pd.DataFrame:
    """ArviZ's summary table of ``posterior``, one row per parameter element, labelled ``name[coord, ...]``.

    Each variable is summarised alone: ``arviz_stats.summary`` (1.3.3) of a Dataset that mixes the dims
    ``(class)`` and ``(feature, class)`` attaches the rows of one variable to the labels of another.

    Parameters
    ----------
    posterior : xarray.Dataset
        Draws with dims ``(chain, draw, ...)``.

    Returns
    -------
    pandas.DataFrame
        The rows of every variable in the Dataset's order: mean, sd, 89% equal-tailed interval, MCSE, ESS, r_hat.
    """
    # non-dimension coords (e.g. naive Bayes' category_feature) are labels only; the summary cannot stack them
    labelled = posterior.drop_vars([name for name in posterior.coords if name not in posterior.dims])
    tables = [
        azs.summary(labelled[[name]], kind="all", ci_prob=0.89, ci_kind="eti", round_to="none")
        for name in labelled.data_vars
    ]
    return pd.concat(tables)


def condensed_table(table: pd.DataFrame, posterior: xr.Dataset, shown: tuple[str, ...] | None) -> pd.DataFrame:
    """The summary table with one row per latent block: the variables of ``posterior`` not in ``shown``.

    The variables in ``shown`` (the family's
    :attr:`~bayesclass.models.base.ClassifierModel.summary_parameter_names`, its hyperparameters) keep one row per
    element; each other variable, a latent block such as a latent GP's ``latent`` (one element per training row),
    becomes one row labelled ``name (n elements)`` that holds its worst values: the largest r_hat, MCSE of the mean
    and of the sd, the smallest bulk and tail ESS (NaN where any element's is undefined, as in the verdict), and no
    mean, sd or interval (NaN). Five columns are added to every row: ``elements`` (1 for an element's own row),
    ``r_hat_failing`` and ``ess_failing`` (how many elements have r_hat above :data:`MAX_R_HAT` or bulk or tail
    ESS below :data:`MIN_ESS`, an undefined value counted as failing, as the verdict counts it),
    ``worst_element`` (the block's element of the largest r_hat) and ``lowest_ess_element`` (its element of the
    smallest bulk or tail ESS); an element's own row leaves the two names empty.

    Parameters
    ----------
    table : pandas.DataFrame
        The summary table with one row per element (:func:`convergence_table` of ``posterior``).
    posterior : xarray.Dataset
        The draws the table summarises, its variables in the table's order.
    shown : tuple of str or None
        The variables shown element by element (None: all of them, and ``table`` is returned as it is).

    Returns
    -------
    pandas.DataFrame
        The rows of ``shown`` in order, then one row per latent block; ``table`` itself where there is no block.
    """
    blocks = [str(name) for name in posterior.data_vars if shown is not None and name not in shown]
    if not blocks:
        return table
    draws = int(posterior.sizes["chain"]) * int(posterior.sizes["draw"])
    variables = np.repeat([str(name) for name in posterior.data_vars], [v.size // draws for v in posterior.values()])
    r_hat_fails = ~(table["r_hat"] <= MAX_R_HAT)  # NaN fails, as in the verdict
    ess_fails = ~((table["ess_bulk"] >= MIN_ESS) & (table["ess_tail"] >= MIN_ESS))
    lowest_ess = table[["ess_bulk", "ess_tail"]].min(axis=1, skipna=False)
    rows = table[~np.isin(variables, blocks)].assign(
        elements=1,
        r_hat_failing=r_hat_fails.astype(int),
        ess_failing=ess_fails.astype(int),
        worst_element="",
        lowest_ess_element="",
    )
    summaries = {}
    for name in blocks:  # a handful of variables, each reduced column by column
        within = variables == name
        block = table[within]
        worst: dict[str, object] = dict.fromkeys(table.columns, np.nan)  # no mean, sd or interval of a block
        worst.update({column: _worst(block[column], np.max) for column in ("r_hat", "mcse_mean", "mcse_sd")})
        worst.update({column: _worst(block[column], np.min) for column in ("ess_bulk", "ess_tail")})
        worst.update(
            elements=len(block),
            r_hat_failing=int(r_hat_fails[within].sum()),
            ess_failing=int(ess_fails[within].sum()),
            worst_element=_first_worst(block["r_hat"], largest=True),
            lowest_ess_element=_first_worst(lowest_ess[within], largest=False),
        )
        summaries[f"{name} ({len(block)} elements)"] = worst
    return pd.concat([rows, pd.DataFrame.from_dict(summaries, orient="index")])


def _first_worst(column: pd.Series, *, largest: bool) -> str:
    """The label of the worst value of ``column``: an undefined one (NaN) first, else the largest or smallest."""
    values = column.to_numpy(dtype=float)
    undefined = np.flatnonzero(np.isnan(values))
    if undefined.size:
        return str(column.index[undefined[0]])
    return str(column.index[np.argmax(values) if largest else np.argmin(values)])


def _tree_depth_hits(stats: xr.Dataset | None) -> int:
    """Draws whose trajectory hit the maximum tree depth (0 where the sampler records none)."""
    for name in ("reached_max_treedepth", "maxdepth_reached"):
        if stats is not None and name in stats:
            return int(stats[name].sum())
    return 0


def convergence_advice(checks: tuple[str, ...], info: ResultInfo, *, min_ess: float | None = None) -> tuple[str, ...]:
    """What to try for the failed ``checks`` (and notes), given what the method recorded and the family.

    Each suggestion names the CLI flag and the API keyword to change, with the value to try and the one used.
    An option is suggested only where the method recorded it among its settings (the Gibbs sampler records no
    ``target_accept``), with a value beyond the one used; ``--standardize`` only where continuous inputs were
    not standardised; the family adds its own (:meth:`~bayesclass.models.base.ClassifierModel.convergence_advice`).

    Parameters
    ----------
    checks : tuple of str
        Names of the failed checks and notes (:data:`CHECKS`).
    info : ResultInfo
        The result's recorded facts: its model, method settings, standardisation and data.
    min_ess : float or None, default None
        The smallest bulk or tail ESS of the draws: where an ESS check failed, the draws advised are the draws
        used scaled by ``MIN_ESS / min_ess`` with a 20% margin (ESS grows about in proportion to the draws),
        rounded up to a hundred, at least twice the draws used (None, or r_hat alone failed: twice).

    Returns
    -------
    tuple of str
        One suggestion each, most specific first (empty when no check is named).
    """
    settings = info.sampler_settings  # the options the method took: one it lacks is never suggested
    failed = set(checks)
    advice = []
    if "partial" in failed:
        advice.append("rerun to the end: the draws were interrupted and are incomplete")
    if "r_hat" in failed and "chains" in settings and int(settings["chains"]) < 4:
        advice.append(
            f"4 or more chains ({_setting('chains', 4, settings['chains'])}): the r_hat <= {MAX_R_HAT} rule is "
            "stated for at least 4 chains"
        )
    if "divergences" in failed and "target_accept" in settings:
        accept = float(settings["target_accept"])
        higher = 0.95 if accept < 0.95 else 0.99
        if accept < higher:
            advice.append(f"a higher target acceptance ({_setting('target_accept', higher, accept)}): smaller steps")
    if failed & {"r_hat", "bfmi", "divergences", "stuck_chain"} and "tune" in settings:
        tune = int(settings["tune"])
        advice.append(f"a longer warm-up ({_setting('tune', max(2 * tune, 1000), tune)})")
    if failed & {"r_hat", "ess_bulk", "ess_tail"} and "draws" in settings:
        advice.append(_more_draws(int(settings["draws"]), min_ess if failed & {"ess_bulk", "ess_tail"} else None))
    if "stuck_chain" in failed:
        seed = info.random_seed + 1
        advice.append(
            f"another seed ({spelled('random_seed', seed)}, was {info.random_seed}): a stuck chain often started or "
            "adapted in a bad region"
        )
    if failed & _EXPLORATION:
        advice.extend(info.model.convergence_advice(tuple(sorted(failed))))
        continuous = "continuous" in info.data.feature_kinds
        if continuous and info.standardize_mode == "none":
            advice.append(
                f"standardised features, the default (drop {spelled('standardize', False)}): inputs on one scale are "
                "easier to explore"
            )
    return tuple(advice)


def _setting(name: str, value: object, was: object) -> str:
    """``SamplerSettings(name=value), was old`` (``--name value, was old`` on the command line)."""
    return f"{spelled(name, value, owner='SamplerSettings')}, was {was:g}"


def _more_draws(draws: int, min_ess: float | None) -> str:
    """The advice of more draws: scaled by ``MIN_ESS / min_ess`` with a 20% margin, at least twice ``draws``."""
    scaled = min_ess is not None and bool(np.isfinite(min_ess)) and min_ess > 0
    factor = max(2.0, 1.2 * MIN_ESS / min_ess) if scaled and min_ess else 2.0
    more = int(np.ceil(draws * factor / 100) * 100)
    why = (
        f"the smallest ESS, {min_ess:.0f} from {draws} draws, scaled to {MIN_ESS} with a 20% margin"
        if scaled and factor > 2.0
        else "twice the draws"
    )
    return (
        f"more draws ({_setting('draws', more, draws)}): ESS grows about in proportion to the draws ({why}, "
        "rounded up to a hundred)"
    )


def _shown(value: float, spec: str) -> str:
    """``value`` formatted, or "n/a" where it is NaN (not computable; :attr:`ConvergenceReport.unavailable`)."""
    if np.isnan(value):
        return "n/a"
    return format(value, ".3g" if abs(value) >= 1e6 else spec)  # a stuck chain's r_hat of 7e15, not 16 digits


def _worst(column: pd.Series, reduce) -> float:
    """``np.max``/``np.min`` of a column of the summary table: over every element of every variable.

    A NaN (e.g. the r_hat of a parameter frozen in every draw) propagates and so fails the verdict.
    """
    return float(reduce(column.to_numpy(dtype=float)))
