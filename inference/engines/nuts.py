"""The ``nuts`` method: NUTS on the family's PyMC model with the backend the settings name.

The backends and their settings are in :mod:`bayesclass.inference.engines.sampling`.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import math
from collections.abc import Iterator
from typing import Any

from bayesclass.data import Dataset
from bayesclass.data.arguments import spelled
from bayesclass.inference.engines.sampler import Sampler, SamplerRun
from bayesclass.inference.engines.sampling import SamplerSettings, sample_nuts

__all__ = ["SAMPLER", "nuts_backend", "repeated_fits"]

#: how many fits of one structure the current context expects in this process (0: a one-off fit; set by
#: :func:`repeated_fits`)
_REPEATED: contextvars.ContextVar[float] = contextvars.ContextVar("bayesclass_repeated_fits", default=0)


@contextlib.contextmanager
def repeated_fits(fits: float = math.inf) -> Iterator[None]:
    """Within this context, ``backend="auto"`` picks each family's backend for repeated fits of one structure.

    A study's cells and refit loops fit one compiled structure many times: a backend that compiles slowly but
    samples fast pays off there (the family's ``repeated_fits_backend()``, chosen by bench/bench_backends.py) once
    the fits number at least its break-even; a one-off fit wants the fast compile (the default).
    The result records the backend used.

    Parameters
    ----------
    fits : float, default inf
        How many fits of each structure this process is expected to make (a study: its cells per model and data
        set, per worker).

    Yields
    ------
    None
    """
    token = _REPEATED.set(fits)
    try:
        yield
    finally:
        _REPEATED.reset(token)


def nuts_backend(model: Any, sampler: SamplerSettings, *, fits: float | None = None) -> str:
    """The NUTS backend ``sampler`` asks for.

    Parameters
    ----------
    model : ClassifierModel
        The family instance to sample.
    sampler : SamplerSettings
        Its ``backend``: ``"auto"`` (the family's default) or a backend name.
    fits : float or None, default None
        How many fits of this structure the process makes (0: a one-off fit; a study's cells, refits:
        :func:`repeated_fits`); None reads the current context.

    Returns
    -------
    str
        For ``"auto"``: the family's ``repeated_fits_backend()`` where it has one and the fits reach its
        break-even, else its default (``nuts_backends[0]``); otherwise the one named.

    Raises
    ------
    ValueError
        A named backend the family cannot run (a named backend is never switched).
    """
    if sampler.backend == "auto":
        fits = _REPEATED.get() if fits is None else fits
        refits = model.repeated_fits_backend()
        if refits is not None and fits >= max(2, refits[1]):
            return refits[0]
        return model.nuts_backends[0]
    if sampler.backend not in model.nuts_backends:
        raise ValueError(
            f"{spelled('backend', sampler.backend)} cannot sample the {model.name!r} model; choose one of "
            f"{', '.join(map(repr, model.nuts_backends))} or 'auto' (its default, {model.nuts_backends[0]!r})"
        )
    return sampler.backend


def _run(model: Any, training: Dataset, settings: SamplerSettings, random_seed: int) -> SamplerRun:
    backend = nuts_backend(model, settings)
    pymc_model = model.build(training)
    run = sample_nuts(
        pymc_model,
        cache_key=model.cache_key(training),
        var_names=model.parameter_names(training),
        jitter=tuple(rv.name for rv in pymc_model.free_RVs),
        settings=settings,
        random_seed=random_seed,
        backend=backend,
    )
    return SamplerRun(
        posterior=run.posterior,
        sample_stats=run.sample_stats,
        sampler_settings=dataclasses.asdict(settings),
        sampler_backend=backend,
        compile_seconds=run.compile_seconds,
        sampling_seconds=run.sampling_seconds,
        compile_cache_hit=run.compile_cache_hit,
        partial=run.partial,
    )


SAMPLER = Sampler(
    name="nuts",
    description="the No-U-Turn sampler on the family's PyMC model (backend: blackjax, nutpie or pymc)",
    accepts=lambda model: True,
    run=_run,
    uses_backend=True,
)
