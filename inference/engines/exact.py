"""The ``exact`` method: independent draws from a conjugate posterior, for families that have one."""

from __future__ import annotations

import time
from typing import Any

from bayesclass.data import Dataset
from bayesclass.inference.engines.sampler import Sampler, SamplerRun, kept_draws
from bayesclass.inference.engines.sampling import SamplerSettings

__all__ = ["SAMPLER"]


def _run(model: Any, training: Dataset, settings: SamplerSettings, random_seed: int) -> SamplerRun:
    start = time.perf_counter()
    posterior = model.exact_posterior(training, draws=settings.draws, chains=settings.chains, random_seed=random_seed)
    return SamplerRun(
        posterior=posterior,
        sampler_settings={"draws": settings.draws, "chains": settings.chains},
        sampling_seconds=time.perf_counter() - start,
    )


SAMPLER = Sampler(
    name="exact",
    description="independent draws from the exact conjugate posterior",
    accepts=lambda model: model.has_exact(),
    run=_run,
    independent_draws=True,
    settings=("draws", "chains"),
    stored_steps=kept_draws,
)
