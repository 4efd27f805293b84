"""Convergence diagnostics of an MCMC fit (NUTS, the GP's Gibbs sampler), condensed into a pass/fail verdict.

Every number comes from ArviZ (``arviz_stats.rhat``, ``ess``, ``mcse``,
``summary``); this module only applies the thresholds:

- rank-normalised split r_hat <= 1.01 for every parameter element,
- bulk and tail ESS >= 400 for every parameter element,
- 0 divergent transitions after warm-up (NUTS; other samplers have none).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from bayesclass._lazy import lazy_import
from bayesclass.inference.result import result_info

if TYPE_CHECKING:
    import arviz_stats as azs
    import pandas as pd
    import xarray as xr
else:
    azs = lazy_import("arviz_stats")
    pd = lazy_import("pandas")
    xr = lazy_import("xarray")

__all__ = ["ConvergenceReport", "MAX_R_HAT", "MIN_ESS", "diagnose"]

MAX_R_HAT = 1.01
MIN_ESS = 400


@dataclass(frozen=True)
class ConvergenceReport:
    """Worst-case diagnostics over all parameter elements, and the verdict.

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
        ArviZ's full summary table (``arviz_stats.summary``, 89% equal-tailed intervals), one row per element.
    """

    max_r_hat: float
    min_ess_bulk: float
    min_ess_tail: float
    n_divergences: int
    max_mcse_mean: float
    passed: bool
    failures: tuple[str, ...]
    table: pd.DataFrame

    def __str__(self) -> str:
        verdict = "PASS" if self.passed else "FAIL: " + "; ".join(self.failures)
        return (
            f"convergence {verdict}\n"
            f"  max r_hat {self.max_r_hat:.4f} (<= {MAX_R_HAT}), min ESS bulk {self.min_ess_bulk:.0f} / "
            f"tail {self.min_ess_tail:.0f} (>= {MIN_ESS}), divergences {self.n_divergences} (= 0), "
            f"max MCSE of the mean {self.max_mcse_mean:.3g}"
        )


def diagnose(result: xr.DataTree) -> ConvergenceReport:
    """Diagnose the posterior of a NUTS result (see the module docstring for the thresholds).

    Parameters
    ----------
    result : xarray.DataTree
        A fitted result with a ``posterior`` group (and, for NUTS, a ``sample_stats`` group).

    Returns
    -------
    ConvergenceReport
        The worst-case diagnostics, the verdict and ArviZ's summary table.

    Raises
    ------
    ValueError
        The result has no posterior draws (a point estimate).
    """
    if "posterior" not in result:
        raise ValueError(
            f"this result was fitted by method {result_info(result).method!r} and has no posterior draws to "
            "diagnose; fit with method='nuts' (or 'exact' where the model has a conjugate posterior)"
        )
    posterior = result["posterior"].to_dataset()
    r_hat = _worst(azs.rhat(posterior), np.max)
    ess_bulk = _worst(azs.ess(posterior, method="bulk"), np.min)
    ess_tail = _worst(azs.ess(posterior, method="tail"), np.min)
    mcse = _worst(azs.mcse(posterior, method="mean"), np.max)
    stats = result["sample_stats"].to_dataset() if "sample_stats" in result.children else None
    # a sampler that integrates no trajectories (exact draws, the GP's Gibbs sampler) has no divergences
    divergences = int(stats["diverging"].sum()) if stats is not None and "diverging" in stats else 0
    failures = []
    if not r_hat <= MAX_R_HAT:
        failures.append(f"r_hat {r_hat:.4f} > {MAX_R_HAT}")
    if not ess_bulk >= MIN_ESS:
        failures.append(f"bulk ESS {ess_bulk:.0f} < {MIN_ESS}")
    if not ess_tail >= MIN_ESS:
        failures.append(f"tail ESS {ess_tail:.0f} < {MIN_ESS}")
    if divergences:
        failures.append(f"{divergences} divergent transitions")
    info = result_info(result)
    if info.partial:
        failures.append(f"partial draws: {info.partial_reason}")
    # non-dimension coords (e.g. naive Bayes' category_feature) are labels only; the summary table cannot stack them
    labelled = posterior.drop_vars([name for name in posterior.coords if name not in posterior.dims])
    table = azs.summary(labelled, kind="all", ci_prob=0.89, ci_kind="eti", round_to="none")
    return ConvergenceReport(r_hat, ess_bulk, ess_tail, divergences, mcse, not failures, tuple(failures), table)


def _worst(statistics: xr.Dataset, reduce) -> float:
    """``np.max``/``np.min`` over every element of every variable.

    A NaN (e.g. the r_hat of a parameter frozen in every draw) propagates and so fails the verdict.
    """
    return float(reduce(np.concatenate([var.values.ravel() for var in statistics.data_vars.values()])))
