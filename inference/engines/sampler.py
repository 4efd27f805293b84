"""What a posterior sampling method is: its name, whether a family can use it, and how it runs.

Each method is one module that defines a :class:`Sampler` (``SAMPLER``) and one line in
:mod:`bayesclass.inference.engines.methods` registers it; :func:`~bayesclass.inference.engines.fit.fit`, the
result schema, the CLI's ``--method`` choices and the study spec all read that registry.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Sampler", "SamplerRun", "kept_draws"]


@dataclass(frozen=True)
class SamplerRun:
    """What a sampling method returns to :func:`~bayesclass.inference.engines.fit.fit`.

    Parameters
    ----------
    posterior : xarray.Dataset
        The draws, dims ``(chain, draw, ...)``, with the model's variable names (coordinates are added by ``fit``).
    sample_stats : xarray.Dataset or None
        Per-draw sampler statistics, where the method has any.
    sampler_settings : Mapping[str, object]
        The :class:`~bayesclass.inference.engines.sampling.SamplerSettings` fields the method used (recorded).
    sampler_backend : str or None
        The NUTS backend, for NUTS.
    compile_seconds, sampling_seconds : float or None
        Timings, where they apply.
    compile_cache_hit : bool or None
        Whether a compiled sampler was reused (compiling methods only).
    partial : bool
        An interrupted run that kept its draws (``keep_partial``).
    """

    posterior: Any
    sample_stats: Any = None
    sampler_settings: Mapping[str, Any] = field(default_factory=dict)
    sampler_backend: str | None = None
    compile_seconds: float | None = None
    sampling_seconds: float | None = None
    compile_cache_hit: bool | None = None
    partial: bool = False


def _draws_and_tune(model: Any, training: Any, settings: Any) -> int:
    """The default ``Sampler.stored_steps``: kept draws and warm-up steps per chain.

    Parameters
    ----------
    model : ClassifierModel
        The family instance (unused: the count is the same for every family).
    training : Dataset
        The training data (unused).
    settings : SamplerSettings
        The settings, ``draws`` and ``tune`` set.

    Returns
    -------
    int
        ``draws + tune``.
    """
    draws, tune = settings.resolved_counts()
    return draws + tune


def kept_draws(model: Any, training: Any, settings: Any) -> int:
    """A ``Sampler.stored_steps`` for samplers without warm-up (independent draws): the kept draws per chain.

    Parameters
    ----------
    model : ClassifierModel
        The family instance (unused).
    training : Dataset
        The training data (unused).
    settings : SamplerSettings
        The settings, ``draws`` set.

    Returns
    -------
    int
        ``draws``.
    """
    return settings.resolved_counts()[0]


@dataclass(frozen=True)
class Sampler:
    """One posterior sampling method.

    Parameters
    ----------
    name : str
        The ``method`` value (``fit(method=name)``, ``--method name``).
    description : str
        One line for help texts.
    accepts : callable
        ``accepts(model) -> bool``: whether the family instance can be sampled by this method.
    run : callable
        ``run(model, training, settings, random_seed) -> SamplerRun`` on the (coded, standardised) training data.
    uses_backend : bool
        Whether ``SamplerSettings.backend`` (a NUTS backend) applies to it.
    independent_draws : bool
        Whether its draws are independent (exact draws): there is no Markov chain to converge, so no convergence
        verdict applies (its max r_hat over many elements passes 1.01 by chance).
    settings : tuple of str or None
        The :class:`~bayesclass.inference.engines.sampling.SamplerSettings` fields it reads (None: every one); a
        setting given with a method that ignores it is refused by the command line.
    stored_steps : callable
        ``stored_steps(model, training, settings) -> int``: the steps per chain the method holds in memory while
        it runs (for the memory check before a fit, :mod:`bayesclass.inference._memory`); by default the kept
        draws and the warm-up steps, ``draws + tune``.
    values_per_draw : callable or None
        ``values_per_draw(model, training) -> int``: the float64 values one draw holds, where the method knows them
        without building the family's PyMC model (the memory check); None: counted from the PyMC model
        (:func:`~bayesclass.inference._memory.parameter_values`).
    """

    name: str
    description: str
    accepts: Callable[[Any], bool]
    run: Callable[..., SamplerRun]
    uses_backend: bool = False
    independent_draws: bool = False
    settings: tuple[str, ...] | None = None
    stored_steps: Callable[[Any, Any, Any], int] = _draws_and_tune
    values_per_draw: Callable[[Any, Any], int] | None = None
