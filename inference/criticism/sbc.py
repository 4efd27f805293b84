"""Simulation-based calibration (SBC; Talts et al. 2018) over the project's own :func:`fit`.

If parameters are drawn from the prior, data are simulated from them and the posterior is
computed correctly, then the rank of each true parameter among (thinned) posterior draws is
uniform on ``0 .. n_draws``. A fit that is wrong in any direction (a biased likelihood, a
prior that differs from the one sampled, a sampler that does not mix) bends the rank
histogram; its uniformity is tested by a chi-square test.

:func:`simulation_based_calibration` runs the loop for any family through the same
``fit`` a user calls (exact conjugate draws or NUTS), given how to draw the truth and how
to simulate data from it; :func:`prior_draws` draws a family's parameters from its PyMC
prior where the model states the prior as random variables.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from bayesclass._lazy import lazy_import
from bayesclass.data import Dataset
from bayesclass.inference._memory import largest_fitting, parameter_values, require_memory
from bayesclass.inference.engines.fit import fit
from bayesclass.inference.engines.sampling import SamplerSettings
from bayesclass.models.base import ClassifierModel

if TYPE_CHECKING:
    import pymc as pm
    import scipy
    import xarray as xr
else:
    scipy = lazy_import("scipy")  # SciPy loads its submodules (scipy.special ...) on first use
    pm = lazy_import("pymc")
    xr = lazy_import("xarray")

__all__ = ["SbcResult", "prior_draws", "simulation_based_calibration"]


@dataclass(frozen=True)
class SbcResult:
    """Ranks of the true parameters among the posterior draws, and the uniformity test of each variable.

    ``ranks[name]`` has shape (n_simulations, n_elements): every element of the variable;
    ``p_values[name]`` tests that every distinct element's ranks are uniform (the two halves of a symmetric
    matrix count once): the chi-square test of each element's rank histogram (``n_bins`` bins), combined by
    Bonferroni (the smallest p-value times the number of elements, at most 1). The elements of one simulation
    are dependent (the latent values of a GP at nearby inputs rank alike), so their ranks are not pooled into
    one histogram: a pooled chi-square test counts one simulation's error once per element and rejects a
    calibrated posterior far more often than its level says.

    Parameters
    ----------
    ranks : dict of str to numpy.ndarray
        Per variable, the rank of every true element among the thinned draws, shape (n_simulations, n_elements).
    p_values : dict of str to float
        Per variable, the Bonferroni-combined chi-square p-value of its elements' rank histograms.
    n_simulations : int
        Simulated data sets (one fit each).
    n_draws : int
        Thinned posterior draws each truth is ranked among (ranks run over ``0 .. n_draws``).
    n_bins : int
        Bins of each rank histogram.
    method : str
        How :func:`fit` drew the posterior ("exact" or "nuts").
    """

    ranks: dict[str, np.ndarray]
    p_values: dict[str, float]
    n_simulations: int
    n_draws: int
    n_bins: int
    method: str


def prior_draws(model: ClassifierModel, template: Dataset, n: int, *, random_seed: int) -> xr.Dataset:
    """``n`` draws (dim ``draw``) of the parameters of ``model`` from its prior.

    The draws come from PyMC's prior sampling of ``model.build(template)`` (the data only fix the layout;
    likelihood terms are not sampled). Valid for a family whose PyMC model states its prior as random
    variables (naive Bayes with fixed-scale priors).

    Parameters
    ----------
    model : ClassifierModel
        The family whose prior is drawn from.
    template : Dataset
        Data that fix the model's layout (classes, features, levels); its values are not used.
    n : int
        Number of prior draws.
    random_seed : int
        Seed of PyMC's prior sampling.

    Returns
    -------
    xarray.Dataset
        The model's parameters with dim ``draw`` (length ``n``), with the model's coordinates.
    """
    _require_prior_memory(model, template, n)
    names = list(model.parameter_names(template))
    draws = pm.sample_prior_predictive(draws=n, model=model.build(template), var_names=names, random_seed=random_seed)
    return model.with_coords(draws["prior"].to_dataset().isel(chain=0, drop=True)[names], template)


#: copies of the prior draws held at once (PyMC's draws, its InferenceData, the Dataset returned)
PRIOR_DRAW_COPIES = 3


def _require_prior_memory(model: ClassifierModel, template: Dataset, n: int) -> None:
    """Refuse ``n`` prior draws that would not fit in memory, before PyMC draws any."""
    values = parameter_values(model, template)

    def needed(draws: int) -> int:
        return 8 * PRIOR_DRAW_COPIES * draws * values

    require_memory(
        needed(n),
        what=f"{n:,} prior draws of {values:,} values",
        fix=lambda available: f"at most {largest_fitting(needed, available, upper=n):,} prior draws fit; lower n",
    )


def simulation_based_calibration(
    model: ClassifierModel,
    *,
    draw_truth: Callable[[int, np.random.Generator], xr.Dataset],
    simulate: Callable[[xr.Dataset, np.random.Generator], Dataset],
    variables: tuple[str, ...],
    n_simulations: int,
    n_draws: int = 99,
    n_bins: int = 10,
    method: str = "exact",
    sampler: SamplerSettings | None = None,
    random_seed: int = 0,
) -> SbcResult:
    """Run SBC: draw a truth, simulate data, fit, and rank the truth among thinned posterior draws.

    Each of ``n_simulations`` loops draws the truth, simulates data from it, fits, and ranks the truth
    among ``n_draws`` evenly thinned posterior draws.

    Parameters
    ----------
    model : ClassifierModel
        The family that is fitted to every simulated data set.
    draw_truth : callable
        ``draw_truth(s, rng)``: the true parameters of simulation ``s`` (one parameter set, drawn
        from the prior the model states).
    simulate : callable
        ``simulate(truth, rng)``: a Dataset drawn from the model at ``truth``.
    variables : tuple of str
        The posterior variables whose elements are ranked.
    n_simulations : int
        Simulated data sets (one fit each).
    n_draws : int, default 99
        Evenly thinned posterior draws each truth is ranked among.
    n_bins : int, default 10
        Bins of each rank histogram tested for uniformity.
    method : str, default "exact"
        How :func:`fit` draws the posterior ("exact" or "nuts").
    sampler : SamplerSettings, optional
        NUTS settings passed to :func:`fit` (``method="nuts"``).
    random_seed : int, default 0
        Seed of the generator that draws the truths, simulates the data and seeds every fit.

    Returns
    -------
    SbcResult
        The ranks and the uniformity test of each variable.

    Raises
    ------
    InsufficientMemoryError
        A fit whose draws would not fit in memory (each fit is checked by :func:`fit` before it samples).
    """
    rng = np.random.default_rng(random_seed)
    ties_rng = np.random.default_rng([random_seed, 1])  # a stream of its own: the fits' seeds do not depend on ties
    ranks: dict[str, list[np.ndarray]] = {name: [] for name in variables}
    for simulation in range(n_simulations):  # the SBC algorithm's loop over simulated data sets
        truth = draw_truth(simulation, rng)
        data = simulate(truth, rng)
        # the data as the model simulated them: the truth is on that scale, so no standardisation
        result = fit(
            model, data, method=method, sampler=sampler, standardize=False, random_seed=int(rng.integers(2**31))
        )
        posterior = result["posterior"].to_dataset().stack(sample=("chain", "draw"))
        keep = np.linspace(0, posterior.sizes["sample"] - 1, n_draws).round().astype(int)
        posterior = posterior.isel(sample=keep)
        for name in variables:
            below = np.asarray((posterior[name] < truth[name]).sum("sample").values, dtype=np.int64).ravel()
            # draws equal to the truth (an atom: an HSGP weight whose prior sd underflows to 0 is exactly 0 in the
            # truth and in every draw) take a uniform share of the ranks they tie over, as in SBC for discrete values
            ties = np.asarray((posterior[name] == truth[name]).sum("sample").values, dtype=np.int64).ravel()
            ranks[name].append(below + ties_rng.integers(0, ties + 1))
    stacked = {name: np.stack(values) for name, values in ranks.items()}
    edges = np.linspace(0, n_draws + 1, n_bins + 1)
    p_values = {name: _uniform_ranks_p_value(values, edges) for name, values in stacked.items()}
    return SbcResult(stacked, p_values, n_simulations, n_draws, n_bins, method)


def _uniform_ranks_p_value(ranks: np.ndarray, edges: np.ndarray) -> float:
    """Bonferroni-combined chi-square p-value of the rank histograms of the distinct columns of ``ranks``.

    ``ranks`` has shape (n_simulations, n_elements); the p-value is valid whatever the dependence between
    the elements of one simulation.
    """
    # an element that repeats another in every simulation (the mirror half of a covariance) is counted once
    distinct = np.unique(ranks, axis=1)
    counts = np.stack([np.histogram(column, bins=edges)[0] for column in distinct.T], axis=1)  # (bins, elements)
    p_values = scipy.stats.chisquare(counts, axis=0).pvalue
    return float(min(1.0, p_values.min() * distinct.shape[1]))
