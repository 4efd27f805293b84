"""A statistic that cannot be computed from a result, and why: a value, not an exception.

A legal result (one chain, one draw, a parameter that takes one value in every draw, draws too few for PSIS)
still gets its diagnosis and its page: what cannot be computed is an :class:`Unavailable`, computed in
``inference`` (:mod:`~bayesclass.inference.criticism.diagnostics`, :mod:`~bayesclass.inference.criticism.loo`,
the report evaluation) and shown by the reports as "not available: <reason>". A convergence check that is
unavailable fails the verdict with that reason (it cannot be said to pass).

The thresholds below are ArviZ's (``arviz_stats`` 1.3: ``rhat`` and ``ess`` return NaN below them, the rank
plots' multi-chain test and PSIS's Pareto tail raise); they are stated here so that a result is judged before
ArviZ is called, with a reason that gives the numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

from bayesclass.data.arguments import spelled

__all__ = [
    "MIN_CHAINS_R_HAT",
    "MIN_CHAINS_RANK_PLOT",
    "MIN_DRAWS_PER_CHAIN",
    "MIN_PSIS_DRAWS",
    "Unavailable",
    "chain_shape_text",
    "fit_with_more",
]

#: r_hat compares chains: ArviZ's split r_hat needs at least 2 (the 1.01 rule is stated for 4)
MIN_CHAINS_R_HAT = 2
#: ArviZ's r_hat and ESS need at least 4 draws in each chain
MIN_DRAWS_PER_CHAIN = 4
#: the rank plots' simultaneous band is a multi-chain test: at least 2 chains
MIN_CHAINS_RANK_PLOT = 2
#: PSIS fits a Pareto tail to the largest ``floor(S / 5)`` importance ratios of ``S`` draws (``S r_eff <= 225``),
#: which must hold at least 5 of them: ``S >= 25`` draws in all
MIN_PSIS_DRAWS = 25


@dataclass(frozen=True)
class Unavailable:
    """A statistic (or figure) that cannot be computed from a result, why, and what would make it computable.

    Parameters
    ----------
    name : str
        What is unavailable, as the page and the terminal name it (``"r_hat"``, ``"PSIS-LOO"``, ``"rank plots"``).
    reason : str
        Why, with the numbers (``"the result has 1 chain; r_hat compares 2 or more chains"``).
    remedy : str, default ""
        What to do to have it (:func:`fit_with_more`: ``"fit with more chains, e.g. SamplerSettings(chains=4)"``);
        "" where nothing helps.
    checks : tuple of str, default ()
        The verdict's checks it stands for (:data:`bayesclass.inference.criticism.diagnostics.CHECKS`), which it
        fails; empty for a statistic that is no check (PSIS-LOO, a figure).
    """

    name: str
    reason: str
    remedy: str = ""
    checks: tuple[str, ...] = ()

    def __str__(self) -> str:
        remedy = f" ({self.remedy})" if self.remedy else ""
        return f"{self.name} not available: {self.reason}{remedy}"


def chain_shape_text(n_chains: int, n_draws: int) -> str:
    """``"1 chain of 20 draws"``, ``"4 chains of 1 draw"``: the shape of a result's draws, for reasons.

    Parameters
    ----------
    n_chains, n_draws : int
        Chains, and draws per chain.

    Returns
    -------
    str
        The shape in words.
    """
    chains = f"{n_chains} chain{'s' if n_chains != 1 else ''}"
    draws = f"{n_draws} draw{'s' if n_draws != 1 else ''}"
    return f"{chains} of {draws}"


def fit_with_more(setting: str, value: int) -> str:
    """A remedy of too few chains or draws: ``"fit with more chains, e.g. SamplerSettings(chains=4)"``.

    Parameters
    ----------
    setting : {"chains", "draws"}
        The sampler setting to raise.
    value : int
        The value to try.

    Returns
    -------
    str
        The remedy, worded for the interface in use (:func:`~bayesclass.data.arguments.spelled`).
    """
    return f"fit with more {setting}, e.g. {spelled(setting, value, owner='SamplerSettings')}"
