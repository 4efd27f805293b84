r"""Which posterior draws predict new rows: every draw, or about as many as the posterior's effective sample size.

A latent GP's prediction costs one n x n Cholesky factor and an n x n triangular product over the new rows per
draw (:attr:`~bayesclass.models.base.ClassifierModel.predicts_from_effective_draws`), most of it spent on draws
whose information is already in the others: 4,000 autocorrelated draws of a default fit carry the information of
about their effective sample size (ESS). With ``draws="auto"`` (the default of :func:`~bayesclass.inference.
prediction.predict.predict`) such a family predicts from every ``step``-th draw of each chain,

.. math::

    \text{step} = \max\Big(1, \Big\lfloor \frac{N}{\max(\widehat{\text{ESS}}, S_{\min})} \Big\rfloor\Big),

with :math:`N` the draws over all chains, :math:`\widehat{\text{ESS}}` the smallest bulk ESS over every element
of every posterior variable (``arviz_stats.ess``, the diagnose table's) and :math:`S_{\min}` =
:data:`MIN_PREDICTION_DRAWS`: about :math:`\widehat{\text{ESS}}` draws, nearly independent, so that the
Monte-Carlo error of the posterior-mean probability, :math:`\text{sd}_s(p_s) / \sqrt{\text{ESS}}`, is about that of
every draw (an AR(1) chain with ESS = N/4 loses 12% of its ESS to such thinning, i.e. 6% more error). Every other
family, and ``draws="all"``, predicts from every draw. The prediction states which draws it used
(:meth:`DrawSelection.statement`) and the Monte-Carlo error of its mean and interval
(:meth:`DrawSelection.error_statement`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np

from bayesclass._lazy import lazy_import

if TYPE_CHECKING:
    import arviz_stats as azs
    import xarray as xr
else:
    azs = lazy_import("arviz_stats")
    xr = lazy_import("xarray")

__all__ = ["MIN_PREDICTION_DRAWS", "PREDICTION_DRAWS", "DrawSelection", "PredictionDraws", "select_draws"]

PredictionDraws = Literal["auto", "all"]
#: the options of ``predict(draws=...)`` and ``bayesclass predict --draws``
PREDICTION_DRAWS: tuple[str, ...] = ("auto", "all")
#: the fewest draws a thinned prediction keeps (ArviZ's 100 per chain for 4 chains): the interval's endpoints are
#: quantiles of at least this many nearly independent draws
MIN_PREDICTION_DRAWS = 400


@dataclass(frozen=True)
class DrawSelection:
    """The posterior draws a prediction used.

    Parameters
    ----------
    step : int
        Every ``step``-th draw of each chain (1: every draw).
    kept : int
        Draws used, over all chains.
    total : int
        Draws of the posterior, over all chains.
    ess : float or None
        The posterior's smallest bulk ESS (None where it was not computed: a family that predicts from every draw,
        or ``draws="all"``).
    """

    step: int
    kept: int
    total: int
    ess: float | None = None

    def statement(self) -> str:
        """Which draws, in words (the prediction's ``draws`` attr).

        Returns
        -------
        str
            The statement.
        """
        if self.step == 1:
            return f"every one of the {self.total:,} posterior draws"
        return (
            f"{self.kept:,} of {self.total:,} posterior draws (every {self.step}th of each chain: about the "
            f"posterior's effective sample size, its smallest bulk ESS being {self.ess:,.0f}; draws='all' uses every "
            "draw)"
        )

    def error_statement(self, interval_prob: float) -> str:
        r"""The Monte-Carlo error of the mean and of the interval's endpoints, in words (``monte_carlo_error``).

        With :math:`E = \min(\text{kept}, \widehat{\text{ESS}})` effective draws, the mean is within about
        :math:`2\,\text{sd}/\sqrt{E}` of the exact posterior mean, and an endpoint at level :math:`q` is the
        exact quantile at a level within about :math:`2\sqrt{q(1-q)/E}` of :math:`q` (95% bounds; the level of an
        empirical quantile of E independent draws has standard error :math:`\sqrt{q(1-q)/E}`).

        Parameters
        ----------
        interval_prob : float
            The interval's probability.

        Returns
        -------
        str
            The statement.
        """
        effective = self.kept if self.ess is None else min(self.kept, self.ess)
        tail = (1.0 - interval_prob) / 2.0
        level = 2.0 * math.sqrt(tail * (1.0 - tail) / max(effective, 1.0))
        return (
            f"class_proba is within about 2 sd / sqrt({effective:,.0f}) of the exact posterior mean (sd: the per-draw "
            f"probabilities' standard deviation); class_proba_low/_high are quantiles at levels within about "
            f"{level:.3f} of {tail:g} and {1 - tail:g} (95% Monte-Carlo bounds, {effective:,.0f} effective draws)"
        )


def select_draws(posterior: xr.Dataset, *, thin: bool) -> tuple[xr.Dataset, DrawSelection]:
    """The draws that predict: every draw, or (``thin``) every ``step``-th draw of each chain (module docstring).

    Parameters
    ----------
    posterior : xarray.Dataset
        Posterior draws, dims ``(chain, draw, ...)``.
    thin : bool
        Thin to about the posterior's effective sample size (the family predicts from effective draws and the
        caller asked for ``draws="auto"``).

    Returns
    -------
    posterior : xarray.Dataset
        The draws to predict from (``posterior`` itself when every draw is used).
    selection : DrawSelection
        Which they are.
    """
    chains, draws = posterior.sizes.get("chain", 1), posterior.sizes.get("draw", 1)
    total = chains * draws
    if not thin or total <= MIN_PREDICTION_DRAWS:
        return posterior, DrawSelection(step=1, kept=total, total=total)
    ess = _smallest_bulk_ess(posterior)
    step = max(1, total // max(math.ceil(ess), MIN_PREDICTION_DRAWS))
    if step == 1:
        return posterior, DrawSelection(step=1, kept=total, total=total, ess=ess)
    thinned = posterior.isel(draw=slice(None, None, step))
    return thinned, DrawSelection(step=step, kept=chains * thinned.sizes["draw"], total=total, ess=ess)


def _smallest_bulk_ess(posterior: xr.Dataset) -> float:
    """The smallest finite bulk ESS over every element of every variable with draws (``arviz_stats.ess``)."""
    sampled = posterior[[name for name, values in posterior.data_vars.items() if {"chain", "draw"} <= set(values.dims)]]
    values = np.concatenate([np.ravel(array.values) for array in azs.ess(sampled, method="bulk").data_vars.values()])
    finite = values[np.isfinite(values)]
    return float(finite.min()) if finite.size else float(posterior.sizes["chain"] * posterior.sizes["draw"])
