"""NUTS through nutpie (default) or PyMC's own sampler, with a per-process compile cache.

nutpie compiles a PyMC model once (numba, seconds to tens of seconds). The cache
keys a compiled model by everything that shapes the graph (family and
hyperparameters, feature and class names); a later fit of new data with the
same key swaps the ``pm.Data`` containers in with nutpie's ``with_data`` and
skips compilation, whatever the number of rows.

nutpie runs its chains in threads, one per core; during sampling the BLAS/LAPACK
thread pools are held to one thread each, since a multi-threaded BLAS call inside
every chain oversubscribes the cores (a 200 x 200 Cholesky factor took 10x longer
on 2 cores with 2 chains each using 2 BLAS threads); ``SamplerSettings.blas_threads`` changes it.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pymc as pm
import xarray as xr
from pytensor.compile.sharedvalue import SharedVariable
from threadpoolctl import threadpool_limits

__all__ = ["SamplerSettings", "clear_compile_cache", "sample_nuts"]

Backend = Literal["nutpie", "pymc"]


@dataclass(frozen=True, kw_only=True)
class SamplerSettings:
    """Settings of a NUTS run.

    Parameters
    ----------
    draws, tune : int
        Kept draws and adaptation (warm-up) draws per chain.
    chains : int
        Number of chains (run in parallel where cores allow).
    target_accept : float
        Target mean acceptance probability of the step-size adaptation, in (0, 1).
    backend : {"nutpie", "pymc"}
        nutpie (default; numba-compiled, no PyTensor C/BLAS path) or PyMC's own
        NUTS (the fallback).
    progressbar : bool
        Show sampling progress.
    blas_threads : int or None
        BLAS/LAPACK threads per chain during nutpie sampling (default 1, see the module
        docstring); None leaves the libraries' own setting.
    """

    draws: int = 1000
    tune: int = 1000
    chains: int = 2
    target_accept: float = 0.8
    backend: Backend = "nutpie"
    progressbar: bool = True
    blas_threads: int | None = 1

    def __post_init__(self) -> None:
        for name in ("draws", "tune", "chains"):
            value = getattr(self, name)
            minimum = 0 if name == "tune" else 1
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
                raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
        if not 0.0 < float(self.target_accept) < 1.0:
            raise ValueError(
                f"target_accept must be in (0, 1), e.g. 0.9 to cut divergences; got {self.target_accept!r}"
            )
        threads = self.blas_threads
        if threads is not None and (
            isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or threads < 1
        ):
            raise ValueError(f"blas_threads must be an integer >= 1 or None (the libraries' default), got {threads!r}")
        if self.backend not in ("nutpie", "pymc"):
            raise ValueError(f"backend must be 'nutpie' or 'pymc', got {self.backend!r}")


_COMPILED: dict[tuple, object] = {}


def clear_compile_cache() -> None:
    """Forget every compiled model of this process (for benchmarks of cold starts)."""
    _COMPILED.clear()


@dataclass(frozen=True)
class NutsRun:
    """What :func:`sample_nuts` returns: draws and timings."""

    posterior: xr.Dataset
    sample_stats: xr.Dataset
    compile_seconds: float
    sampling_seconds: float
    compile_cache_hit: bool


def sample_nuts(
    model: pm.Model,
    *,
    cache_key: tuple,
    var_names: tuple[str, ...],
    jitter: tuple[str, ...],
    settings: SamplerSettings,
    random_seed: int,
) -> NutsRun:
    """Sample ``model`` by NUTS and keep ``var_names`` in the posterior.

    ``jitter`` names free variables whose initial value gets a U(-1, 1) jitter
    so that chains start apart (the others start at their support point).
    """
    if settings.backend == "pymc":
        return _sample_pymc(model, var_names=var_names, settings=settings, random_seed=random_seed)
    import nutpie

    start = time.perf_counter()
    data = {name: var.get_value() for name, var in model.named_vars.items() if isinstance(var, SharedVariable)}
    compiled = _COMPILED.get(cache_key)
    hit = compiled is not None
    if hit:
        compiled = compiled.with_data(**data)
    else:
        compiled = nutpie.compile_pymc_model(
            model, var_names=list(var_names), jitter_rvs={model[name] for name in jitter}
        )
        _COMPILED[cache_key] = compiled
    compile_seconds = time.perf_counter() - start
    start = time.perf_counter()
    limit = settings.blas_threads  # one thread per chain by default (module docstring)
    with threadpool_limits(limits=limit, user_api="blas") if limit is not None else contextlib.nullcontext():
        trace = nutpie.sample(
            compiled,
            draws=settings.draws,
            tune=settings.tune,
            chains=settings.chains,
            seed=random_seed,
            target_accept=settings.target_accept,
            progress_bar=settings.progressbar,
            save_warmup=False,
        )
    sampling_seconds = time.perf_counter() - start
    return NutsRun(
        posterior=trace["posterior"].to_dataset()[list(var_names)],
        sample_stats=_numeric(trace["sample_stats"].to_dataset()),
        compile_seconds=compile_seconds,
        sampling_seconds=sampling_seconds,
        compile_cache_hit=hit,
    )


def _sample_pymc(model: pm.Model, *, var_names, settings: SamplerSettings, random_seed: int) -> NutsRun:
    start = time.perf_counter()
    trace = pm.sample(
        draws=settings.draws,
        tune=settings.tune,
        chains=settings.chains,
        random_seed=random_seed,
        target_accept=settings.target_accept,
        nuts_sampler="pymc",
        progressbar=settings.progressbar,
        compute_convergence_checks=False,
        var_names=list(var_names),
        model=model,
    )
    elapsed = time.perf_counter() - start
    stats = trace["sample_stats"].to_dataset()
    sampling = float(stats.attrs.get("sampling_time", elapsed))
    return NutsRun(
        posterior=trace["posterior"].to_dataset()[list(var_names)],
        sample_stats=_numeric(stats),
        compile_seconds=max(elapsed - sampling, 0.0),
        sampling_seconds=sampling,
        compile_cache_hit=False,
    )


def _numeric(stats: xr.Dataset) -> xr.Dataset:
    """Drop object-typed sample stats (messages), which netCDF cannot store."""
    keep = [name for name, var in stats.data_vars.items() if var.dtype.kind in "biuf"]
    return stats[keep]
