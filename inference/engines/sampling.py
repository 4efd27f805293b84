"""NUTS through blackjax on JAX, nutpie or PyMC's own sampler, with a per-process compile cache.

Backends (``SamplerSettings.backend``; ``"auto"``, the default, takes the family's
``default_backend``, and the result records the one used in the attr ``sampler_backend``):

``"blackjax"``  the log density compiled by JAX/XLA in 1-3 s, sampled by blackjax's NUTS
                (:mod:`bayesclass.inference.engines._blackjax`); the default of every family whose
                graph has a JAX form. Compiled executables also persist on disk.
``"nutpie"``    numba-compiled (40 s on a fresh machine, seconds when numba's cache is warm),
                nutpie's NUTS with its mass-matrix adaptation; the default of the latent GP,
                whose fused Op has no JAX form.
``"pymc"``      PyMC's own NUTS (the fallback).

A backend a user names is never switched: one the family cannot run is a ``ValueError``.

nutpie compiles a PyMC model once (numba, seconds to tens of seconds). The cache
keys a compiled model by everything that shapes the graph (family and
hyperparameters, feature and class names); a later fit of new data with the
same key swaps the ``pm.Data`` containers in with nutpie's ``with_data`` and
skips compilation, whatever the number of rows.

nutpie runs its chains in threads, one per core; during sampling the BLAS/LAPACK
thread pools are held to one thread each, since a multi-threaded BLAS call inside
every chain oversubscribes the cores (a 200 x 200 Cholesky factor took 10x longer
on 2 cores with 2 chains each using 2 BLAS threads); ``SamplerSettings.blas_threads`` changes it.

Interrupts (Ctrl-C, SIGTERM) are honoured at every stage. numba's compiler calls back into
Python through ctypes, which swallows a ``KeyboardInterrupt`` raised there, and nutpie's
blocking ``sample`` turns one into a silent early stop; so while a run is on, a signal
handler records the interrupt (:func:`interrupt_guard`), the compile step re-raises it when it
returns, and sampling runs in nutpie's background mode, polled, and is cancelled (or, with
``SamplerSettings(keep_partial=True)``, stopped with its draws kept and marked partial).
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal

import numpy as np
from threadpoolctl import threadpool_limits

from bayesclass._interrupts import (
    NoDrawsYet,
    before_draws,
    deferred_interrupts,
    handling_interrupts,
    interrupt_handled,
    interrupt_pending,
    no_draws_yet,
    raise_unhandled_interrupt,
)
from bayesclass._lazy import lazy_import
from bayesclass.data.constraints import Constrained, InRange, Integer

if TYPE_CHECKING:
    import pymc as pm
    import xarray as xr
else:
    pm = lazy_import("pymc")
    xr = lazy_import("xarray")

__all__ = [
    "BACKENDS",
    "NoDrawsYet",
    "SamplerSettings",
    "clear_compile_cache",
    "interrupt_guard",
    "no_draws_yet",
    "sample_nuts",
]

Backend = Literal["auto", "blackjax", "nutpie", "pymc"]
#: the backends that exist, "auto" aside
BACKENDS: tuple[str, ...] = ("blackjax", "nutpie", "pymc")


@dataclass(frozen=True, kw_only=True)
class SamplerSettings(Constrained):
    """Settings of a posterior sampler: NUTS, or the latent GP's Gibbs sampler.

    The Gibbs sampler (``method="gibbs"``) uses ``draws``, ``tune`` as burn-in sweeps, ``chains``,
    ``progressbar`` and ``keep_partial``.

    Parameters
    ----------
    draws, tune : int or None
        Kept draws and adaptation (warm-up) draws per chain (the Gibbs sampler: kept and burn-in sweeps).
        None (the default): the family's default for the method and the number of rows
        (``ClassifierModel.sampling_defaults``: 1000 and 1000, the latent GP's Gibbs sampler its own),
        resolved by ``fit`` and recorded in the result's ``sampler_settings``.
    chains : int
        Number of chains, 4 by default: the r_hat <= 1.01 rule of the verdict is stated for at least 4 chains
        (with 2, the largest of many split r_hats passes 1.01 by chance). blackjax runs them in parallel (one XLA
        host device each), nutpie in threads, the Gibbs sampler in processes.
    target_accept : float
        Target mean acceptance probability of the step-size adaptation, in (0, 1).
    backend : {"auto", "blackjax", "nutpie", "pymc"}
        The NUTS implementation (module docstring). ``"auto"`` takes the family's
        ``default_backend``: blackjax for logistic, naive Bayes and gcc, nutpie for gp.
    progressbar : bool
        Show sampling progress.
    blas_threads : int or None
        BLAS/LAPACK threads per chain during nutpie sampling (default 1, see the module
        docstring); None leaves the libraries' own setting.
    keep_partial : bool
        On an interrupt during nutpie sampling, keep the draws made so far as a result
        marked partial (attr ``partial``; its convergence verdict fails), returned as a
        normal result, instead of discarding them and re-raising the interrupt.
    """

    draws: Annotated[int | None, Integer(minimum=1, fix="None takes the family's default")] = None
    tune: Annotated[int | None, Integer(minimum=0, fix="None takes the family's default")] = None
    chains: Annotated[int, Integer(minimum=1)] = 4
    target_accept: Annotated[float, InRange(0, 1, closed="neither", fix="e.g. 0.9 to cut divergences")] = 0.8
    backend: Backend = "auto"
    progressbar: bool = True
    blas_threads: Annotated[int | None, Integer(minimum=1, fix="None keeps the libraries' default")] = 1
    keep_partial: bool = False

    def resolved_counts(self) -> tuple[int, int]:
        """``(draws, tune)``, which a sampler needs set (``fit`` sets the family's defaults where they are None).

        Returns
        -------
        tuple of int
            The kept draws and the warm-up (burn-in) steps per chain.

        Raises
        ------
        ValueError
            ``draws`` or ``tune`` is None (a sampler called without ``fit``).
        """
        if self.draws is None or self.tune is None:
            raise ValueError(
                f"draws={self.draws!r}, tune={self.tune!r}: a sampler needs both counts; fit() sets the family's "
                "defaults where they are None, a direct call passes numbers (e.g. draws=1000, tune=1000)"
            )
        return self.draws, self.tune


#: what a sampler does before its first draw, for the message of an interrupt with ``keep_partial``
COMPILING = "before the first draw (while the model was compiled)"

#: compiled models of this process: nutpie's (an untyped library) and blackjax's CompiledDensity, by cache key
_COMPILED: dict[tuple, Any] = {}
#: backends whose compiled model depends on the data's shapes (a new number of rows compiles again; XLA); the
#: others compile once per structure whatever the rows (nutpie's numba functions take any shape)
SHAPE_SPECIALISED_BACKENDS = frozenset({"blackjax"})


#: environment variable: how many chains a process may run at once (threads of blackjax's host devices, of nutpie);
#: a study's single-threaded workers set it to 1 (``inference.studies.runner.WORKER_ENV``), so that each worker
#: uses one core and two workers do not contend for two cores with four chain threads
CHAIN_THREADS_ENV = "BAYESCLASS_CHAIN_THREADS"


def chain_threads() -> int | None:
    """How many chains this process may run at once (:data:`CHAIN_THREADS_ENV`), or None: one per core.

    Returns
    -------
    int or None
        The positive integer the variable holds, or None where it is unset or empty.

    Raises
    ------
    ValueError
        The variable holds something other than a positive integer.
    """
    text = os.environ.get(CHAIN_THREADS_ENV, "").strip()
    if not text:
        return None
    if not text.isdigit() or int(text) < 1:
        raise ValueError(
            f"environment variable {CHAIN_THREADS_ENV}={text!r}: it must be a positive whole number of chains run at "
            f"once (e.g. 1), or unset for one chain per core"
        )
    return int(text)


def clear_compile_cache() -> None:
    """Forget every compiled model of this process (for benchmarks of cold starts)."""
    _COMPILED.clear()


class _Interrupt:
    """Whether SIGINT/SIGTERM arrived while :func:`interrupt_guard` was on (the process's interrupt record)."""

    def __init__(self, *, active: bool) -> None:
        self.active = active

    def check(self) -> None:
        """Raise the interrupt that arrived where it could not be raised.

        Either a ctypes callback swallowed it, or the guard defers interrupts to such checks.
        """
        if self.active:
            raise_unhandled_interrupt()

    def handled(self) -> None:
        """The interrupt was dealt with (draws kept as a partial result): the guard does not raise it again."""
        if self.active:
            interrupt_handled()


@contextlib.contextmanager
def interrupt_guard(*, deferred: bool = False) -> Iterator[_Interrupt]:
    """SIGINT and SIGTERM raise ``KeyboardInterrupt`` and are remembered while the block runs.

    Only in the main thread; elsewhere (e.g. in a worker thread) the block runs unguarded. The record is the
    process's (:mod:`bayesclass._interrupts`): an interrupt a library swallowed is still raised by ``check()``,
    and no file is completed after it.

    Parameters
    ----------
    deferred : bool, default False
        A signal is only recorded, and raised by the block's own ``check()`` calls or when the block ends; for
        code that runs inside JAX/XLA, where an exception raised from a signal handler in the middle of a C++
        callback aborts the process at exit.

    Yields
    ------
    _Interrupt
        What arrived: ``check()`` raises a recorded interrupt, ``handled()`` forgets it.
    """
    interrupt = _Interrupt(active=threading.current_thread() is threading.main_thread())
    with handling_interrupts(), deferred_interrupts() if deferred else contextlib.nullcontext():
        yield interrupt
    interrupt.check()  # a deferred signal that arrived after the block's last check, or one a library lost


@dataclass(frozen=True)
class NutsRun:
    """What :func:`sample_nuts` returns: draws and timings (``partial``: interrupted, draws kept on request)."""

    posterior: xr.Dataset
    sample_stats: xr.Dataset
    compile_seconds: float
    sampling_seconds: float
    compile_cache_hit: bool
    partial: bool = False


def sample_nuts(
    model: pm.Model,
    *,
    cache_key: tuple,
    var_names: tuple[str, ...],
    jitter: tuple[str, ...],
    settings: SamplerSettings,
    random_seed: int,
    backend: str,
) -> NutsRun:
    """Sample ``model`` by NUTS with ``backend`` (one of :data:`BACKENDS`) and keep ``var_names``.

    Parameters
    ----------
    model : pymc.Model
        The family's PyMC model built on the training data.
    cache_key : tuple
        What identifies the compiled model (family structure and data shapes) in this process's compile cache.
    var_names : tuple of str
        The variables whose draws are kept.
    jitter : tuple of str
        Free variables whose initial value gets a U(-1, 1) jitter so that chains start apart (the others start
        at their support point).
    settings : SamplerSettings
        Draws, warm-up, chains, target acceptance, progress and interrupt handling.
    random_seed : int
        Seed of the sampler.
    backend : {"blackjax", "nutpie", "pymc"}
        The NUTS implementation (already resolved from ``"auto"``).

    Returns
    -------
    NutsRun
        The draws, sample stats, compile and sampling seconds, and whether the compile cache was hit.
    """
    if backend == "pymc":
        return _sample_pymc(model, var_names=var_names, settings=settings, random_seed=random_seed)
    if backend == "blackjax":
        return _sample_blackjax(
            model, cache_key=cache_key, var_names=var_names, jitter=jitter, settings=settings, random_seed=random_seed
        )
    return _sample_nutpie(
        model, cache_key=cache_key, var_names=var_names, jitter=jitter, settings=settings, random_seed=random_seed
    )


def _sample_nutpie(
    model: pm.Model, *, cache_key, var_names, jitter, settings: SamplerSettings, random_seed: int
) -> NutsRun:
    import nutpie
    from pytensor.compile.sharedvalue import SharedVariable

    with interrupt_guard() as interrupt:
        start = time.perf_counter()
        with before_draws(settings.keep_partial, COMPILING):
            data = {name: var.get_value() for name, var in model.named_vars.items() if isinstance(var, SharedVariable)}
            compiled = _COMPILED.get((cache_key, "nutpie"))
            hit = compiled is not None
            if compiled is not None:
                compiled = compiled.with_data(**data)
            else:
                compiled = nutpie.compile_pymc_model(
                    model, var_names=list(var_names), jitter_rvs={model[name] for name in jitter}
                )
                interrupt.check()  # before caching: an interrupted compile may be incomplete
                _COMPILED[(cache_key, "nutpie")] = compiled
            compile_seconds = time.perf_counter() - start
            interrupt.check()
        start = time.perf_counter()
        limit = settings.blas_threads  # one thread per chain by default (module docstring)
        with threadpool_limits(limits=limit, user_api="blas") if limit is not None else contextlib.nullcontext():
            draws, tune = settings.resolved_counts()
            sampler = nutpie.sample(
                compiled,
                draws=draws,
                tune=tune,
                chains=settings.chains,
                **({"cores": threads} if (threads := chain_threads()) is not None else {}),
                seed=random_seed,
                target_accept=settings.target_accept,
                progress_bar=settings.progressbar,
                save_warmup=False,
                blocking=False,
            )
            partial = False
            try:
                while not _finished(sampler):
                    time.sleep(0.02)  # interruptible, unlike a wait inside nutpie
                trace = sampler.wait()
            except KeyboardInterrupt:
                if not settings.keep_partial:
                    sampler.cancel()
                    raise
                trace, partial = sampler.abort(), True
                if "posterior" not in trace or trace["posterior"].sizes.get("draw", 0) == 0:  # still tuning
                    raise no_draws_yet(f"during the warm-up ({settings.resolved_counts()[1]} tuning steps)") from None
                interrupt.handled()
    sampling_seconds = time.perf_counter() - start
    return NutsRun(
        posterior=trace["posterior"].to_dataset()[list(var_names)],
        sample_stats=_numeric(trace["sample_stats"].to_dataset()),
        compile_seconds=compile_seconds,
        sampling_seconds=sampling_seconds,
        compile_cache_hit=hit,
        partial=partial,
    )


def _sample_blackjax(
    model: pm.Model, *, cache_key, var_names, jitter, settings: SamplerSettings, random_seed: int
) -> NutsRun:
    from bayesclass.inference.engines import _blackjax

    with interrupt_guard(deferred=True) as interrupt:
        start = time.perf_counter()
        with before_draws(settings.keep_partial, COMPILING):
            key = (cache_key, "blackjax", _blackjax.structure(model))
            density: _blackjax.CompiledDensity | None = _COMPILED.get(key)
            point = _blackjax.initial_point(model)
            if density is None:
                density = _blackjax.compile_density(model, var_names, point)
                _COMPILED[key] = density
            translate_seconds = time.perf_counter() - start
            interrupt.check()
        run = _blackjax.sample(
            density,
            model,
            point,
            draws=settings.resolved_counts()[0],
            tune=settings.resolved_counts()[1],
            chains=settings.chains,
            target_accept=settings.target_accept,
            random_seed=random_seed,
            jitter=tuple(model.rvs_to_values[model[name]].name for name in jitter),
            interrupt=interrupt,
            keep_partial=settings.keep_partial,
            progressbar=settings.progressbar,
            max_parallel=chain_threads(),
        )
    coords = {"chain": np.arange(settings.chains), "draw": np.arange(run.draws[var_names[0]].shape[1])}
    posterior = xr.Dataset(
        {name: (("chain", "draw", *density.var_dims[name]), run.draws[name]) for name in var_names}, coords=coords
    )
    stats = xr.Dataset({name: (("chain", "draw"), value) for name, value in run.stats.items()}, coords=coords)
    stats.attrs["inference_library"] = "blackjax"
    return NutsRun(
        posterior=posterior,
        sample_stats=stats,
        compile_seconds=translate_seconds + run.compile_seconds,
        sampling_seconds=run.sampling_seconds,
        compile_cache_hit=not run.compiled_now,
        partial=run.partial,
    )


def _finished(sampler) -> bool:
    """Whether nutpie's background sampler is done (its check reports "not yet" as a TimeoutError)."""
    try:
        return bool(sampler.is_finished)
    except TimeoutError:
        return False


def _sample_pymc(model: pm.Model, *, var_names, settings: SamplerSettings, random_seed: int) -> NutsRun:
    start = time.perf_counter()
    draws, tune = settings.resolved_counts()
    with interrupt_guard() as interrupt:
        trace = pm.sample(
            draws=draws,
            tune=tune,
            chains=settings.chains,
            random_seed=random_seed,
            target_accept=settings.target_accept,
            nuts_sampler="pymc",
            # PyMC's bar draws on standard output, which carries the results: on a file or pipe it would leave its
            # final table and blank lines among them
            progressbar=settings.progressbar and sys.stdout.isatty(),
            compute_convergence_checks=False,
            var_names=list(var_names),
            model=model,
        )
        partial = interrupt_pending()  # PyMC ends on Ctrl-C with the draws so far, without raising
        if partial and not settings.keep_partial:
            interrupt.check()
        if partial and ("posterior" not in trace or trace["posterior"].sizes.get("draw", 0) == 0):
            raise no_draws_yet(f"during the warm-up ({tune} tuning steps)")
        interrupt.handled()
    elapsed = time.perf_counter() - start
    stats = trace["sample_stats"].to_dataset()
    sampling = float(stats.attrs.get("sampling_time", elapsed))
    return NutsRun(
        posterior=trace["posterior"].to_dataset()[list(var_names)],
        sample_stats=_numeric(stats),
        compile_seconds=max(elapsed - sampling, 0.0),
        sampling_seconds=sampling,
        compile_cache_hit=False,
        partial=partial,
    )


def _numeric(stats: xr.Dataset) -> xr.Dataset:
    """Drop object-typed sample stats (messages), which netCDF cannot store."""
    keep = [name for name, var in stats.data_vars.items() if var.dtype.kind in "biuf"]
    return stats[keep]
