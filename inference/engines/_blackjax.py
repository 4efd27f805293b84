"""NUTS by blackjax on a JAX-compiled log density: the fast-start backend.

nutpie compiles a model with numba, which on a fresh machine takes 40 s for a
logistic regression (bench/README.md, issue 12). Here the same PyMC log density
is translated to JAX (PyMC's ``get_jaxified_graph``) and sampled by blackjax's
NUTS with Stan's windowed adaptation (``blackjax.window_adaptation``: step size
by dual averaging, diagonal mass matrix); XLA compiles the whole warm-up and
sampling loop in 1-3 s.

Compilation is paid once per model structure and data shape:

- the model's data (every ``pm.Data`` the log density reads) are *arguments* of
  the compiled functions, not constants, so a new data set of the same shapes
  reuses the compiled executables (:class:`CompiledDensity` is cached per
  process by the caller under the model's structure key, and keeps its
  executables per argument shape);
- XLA's persistent compilation cache (``jax_compilation_cache_dir``) keeps them
  across processes, in ``jax/`` of :func:`bayesclass._cache.cache_directory`
  (``JAX_COMPILATION_CACHE_DIR`` or a cache directory configured in JAX beforehand wins).

Chains run in parallel, one per XLA host device (``pmap``); PyMC's JAX module
sets ``--xla_force_host_platform_device_count`` before JAX's first import. If JAX
was imported earlier with one device, the chains run one after another. With more
chains than cores (the default 4 chains on 2 cores) the devices share the cores;
vectorising the chains of a core instead (``vmap`` inside ``pmap``) was measured
slower (bench/README.md, ``bench_chains.py``): a vectorised NUTS step lasts as long
as the longest trajectory of its chains.

The warm-up (Stan's windowed adaptation, composed from blackjax's parts) and the draws run
in one compiled loop, split into segments of :data:`SEGMENT_DRAWS` steps, each a call of the
same executable with per-step inputs (the adaptation stage of each step), so that the
numbers of tuning steps and of draws never change what is compiled, an interrupt is
honoured between segments (the draws made so far are kept with ``keep_partial``), and
progress is shown over the warm-up too. XLA calls cannot be cancelled, so interrupts are
deferred to those points. The executable depends on the model structure, the data shapes
and the number of parallel chains.

The sample stats use ArviZ's names: ``diverging``, ``energy``, ``acceptance_rate``,
``n_steps`` (leapfrog steps), ``tree_depth`` (trajectory doublings),
``reached_max_treedepth``, ``lp`` and ``step_size``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bayesclass._cache import cache_directory
from bayesclass._interrupts import no_draws_yet

__all__ = ["CompiledDensity", "SEGMENT_DRAWS", "compile_density", "sample", "structure"]

#: draws per compiled sampling call (an interrupt waits at most one segment)
SEGMENT_DRAWS = 100
#: blackjax's default maximum number of trajectory doublings
MAX_TREE_DEPTH = 10


def _jax():
    """Import JAX configured for sampling: 64-bit floats and the persistent compilation cache."""
    import jax
    import pymc.sampling.jax  # noqa: F401  (sets XLA's host device count before JAX's first import)

    jax.config.update("jax_enable_x64", True)
    if not jax.config.jax_compilation_cache_dir:
        jax.config.update("jax_compilation_cache_dir", str(cache_directory() / "jax"))
    # every executable is worth keeping: a warm start loads them all instead of compiling for seconds
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    return jax


@dataclass
class CompiledDensity:
    """A PyMC model's log density and requested variables as JAX functions of (position, data).

    ``position`` is the flat vector of the model's unconstrained value variables;
    ``data`` the tuple of the model's ``pm.Data`` values, in the order of :attr:`data_names`.
    """

    value_names: tuple[str, ...]
    value_shapes: tuple[tuple[int, ...], ...]
    data_names: tuple[str, ...]
    var_names: tuple[str, ...]
    var_dims: dict[str, tuple[str, ...]]
    logp: Callable
    outputs: Callable
    executables: dict[tuple, object] = field(default_factory=dict)

    def flatten(self, point: dict[str, np.ndarray]) -> np.ndarray:
        """The flat position of a point ``{value name: array}``."""
        return np.concatenate([np.asarray(point[name], dtype=float).ravel() for name in self.value_names])

    def unflatten(self, flat):
        """``{value name: array}`` of a flat position (works on JAX arrays inside a traced function)."""
        pieces, start = {}, 0
        for name, shape in zip(self.value_names, self.value_shapes, strict=True):
            size = int(np.prod(shape, dtype=int))
            pieces[name] = flat[start : start + size].reshape(shape)
            start += size
        return pieces

    def data_of(self, model) -> tuple[np.ndarray, ...]:
        """The values of ``model``'s data containers, in the order the compiled functions take them."""
        named = model.named_vars
        missing = [name for name in self.data_names if name not in named]
        if missing:
            raise RuntimeError(f"compile cache: the model has no data container(s) {missing}; its cache key is wrong")
        return tuple(np.asarray(named[name].get_value()) for name in self.data_names)


def structure(model) -> tuple:
    """What of ``model``'s data shapes its JAX graph: its dimension lengths and data container shapes.

    This is part of a compiled density's cache key beside the family's own structure key.
    """
    lengths = tuple(
        sorted((name, int(var.get_value())) for name, var in model.dim_lengths.items() if hasattr(var, "get_value"))
    )
    shapes = tuple(
        sorted((name, np.shape(var.get_value())) for name, var in model.named_vars.items() if hasattr(var, "get_value"))
    )
    return lengths, shapes


def initial_point(model) -> dict[str, np.ndarray]:
    """``model.initial_point()``, evaluated by PyTensor's pure-Python linker.

    PyMC compiles its initial-point function with PyTensor's default linker, which on a fresh machine
    first builds PyTensor's C extensions (6 s for the gcc model, more than the whole JAX compilation); the
    same expression (PyMC's ``make_initial_point_expression``: support points, on the unconstrained scale)
    is a handful of small operations, which Python evaluates at once.
    """
    import pytensor
    from pymc.initial_point import make_initial_point_expression
    from pymc.pytensorf import replace_rng_nodes
    from pymc.util import get_transformed_name

    expressions = make_initial_point_expression(
        free_rvs=model.free_RVs,
        rvs_to_transforms=model.rvs_to_transforms,
        initval_strategies=dict(model.rvs_to_initial_values),
        jitter_rvs=None,
        return_transformed=True,
    )
    mode = pytensor.compile.mode.Mode(linker="py", optimizer="fast_compile")
    values = pytensor.function([], replace_rng_nodes(expressions), mode=mode)()
    names = [
        get_transformed_name(rv.name, model.rvs_to_transforms[rv])
        if model.rvs_to_transforms[rv] is not None
        else rv.name
        for rv in model.free_RVs
    ]
    return {name: np.asarray(value) for name, value in zip(names, values, strict=True)}


def compile_density(model, var_names: tuple[str, ...], point: dict[str, np.ndarray]) -> CompiledDensity:
    """Translate ``model``'s log density (with Jacobians) and ``var_names`` to JAX, data as arguments.

    ``point`` is the model's initial point (``model.initial_point()``, which compiles a function of its own:
    computed once per fit by the caller).
    """
    import pytensor.tensor as pt
    from pymc.sampling.jax import get_jaxified_graph
    from pytensor.compile.sharedvalue import SharedVariable
    from pytensor.graph.replace import graph_replace
    from pytensor.graph.traversal import graph_inputs

    _jax()
    value_vars = list(model.value_vars)
    logp = model.logp()
    outputs = model.replace_rvs_by_values([model[name] for name in var_names])
    shared = {var for var in graph_inputs([logp, *outputs]) if isinstance(var, SharedVariable)}
    named = {id(var): name for name, var in model.named_vars.items()}
    # dim lengths shape the graph: they stay constants, and the caller keys the cache by them (dim_lengths)
    lengths = {id(var) for var in model.dim_lengths.values()}
    unnamed = [var for var in shared if id(var) not in named and id(var) not in lengths]
    if unnamed:
        raise RuntimeError(f"the model reads shared variables that are not named pm.Data: {unnamed}")
    data_names = tuple(sorted(named[id(var)] for var in shared if id(var) in named))
    # static shapes, so that shape arithmetic folds to constants (XLA needs static slice bounds); data shapes are
    # therefore part of the cache key (:func:`structure`)
    containers = [model.named_vars[name] for name in data_names]
    inputs = [pt.tensor(name=var.name, dtype=var.type.dtype, shape=np.shape(var.get_value())) for var in containers]
    replacements = dict(zip(containers, inputs, strict=True))
    replacements.update(
        {var: pt.constant(var.get_value(), name=var.name) for var in shared if id(var) in lengths - named.keys()}
    )
    # the value variables too: static shapes let the JAX rewrites fold every shape check
    positions = [pt.tensor(name=var.name, dtype=var.type.dtype, shape=np.shape(point[var.name])) for var in value_vars]
    replacements.update(zip(value_vars, positions, strict=True))
    replaced = graph_replace([logp, *outputs], replacements, strict=False)
    logp_fn = get_jaxified_graph(inputs=positions + inputs, outputs=replaced[:1])
    outputs_fn = get_jaxified_graph(inputs=positions + inputs, outputs=replaced[1:])
    value_names = tuple(var.name for var in value_vars)

    def log_density(flat, data):
        values = density.unflatten(flat)
        return logp_fn(*[values[name] for name in value_names], *data)[0]

    def requested(flat, data):
        values = density.unflatten(flat)
        return tuple(outputs_fn(*[values[name] for name in value_names], *data))

    density = CompiledDensity(
        value_names=value_names,
        value_shapes=tuple(np.shape(point[name]) for name in value_names),
        data_names=data_names,
        var_names=tuple(var_names),
        var_dims={  # nutpie's and ArviZ's names for dims a variable does not declare
            name: tuple(model.named_vars_to_dims.get(name) or (f"{name}_dim_{i}" for i in range(model[name].ndim)))
            for name in var_names
        },
        logp=log_density,
        outputs=requested,
    )
    return density


@dataclass(frozen=True)
class BlackjaxRun:
    """Draws of the requested variables, sample stats and timings of :func:`sample`."""

    draws: dict[str, np.ndarray]
    stats: dict[str, np.ndarray]
    compile_seconds: float
    sampling_seconds: float
    compiled_now: bool
    partial: bool


#: what each step of the one compiled loop does (per-step inputs, so the number of tuning steps and of draws
#: never changes the executable): Stan's windows of :func:`blackjax.adaptation.window_adaptation.build_schedule`
FAST, SLOW, SAMPLING = 0, 1, 2
STAT_NAMES = ("diverging", "energy", "acceptance_rate", "n_steps", "tree_depth", "lp", "step_size")


def schedule(tune: int, total: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per step of the whole run (warm-up then draws, ``total`` steps): stage, window end, warm-up end.

    The stage is :data:`FAST`, :data:`SLOW` or :data:`SAMPLING`; then whether a slow window ends there, and
    whether the warm-up ends there (the step size becomes dual averaging's average).
    """
    from blackjax.adaptation.window_adaptation import build_schedule

    stage = np.full(total, SAMPLING, dtype=np.int32)
    window_end = np.zeros(total, dtype=bool)
    finish = np.zeros(total, dtype=bool)
    if tune:
        windows = np.asarray(build_schedule(tune))
        stage[:tune], window_end[:tune] = windows[:, 0], windows[:, 1].astype(bool)
        finish[tune - 1] = True
    return stage, window_end, finish


def _executables(density: CompiledDensity, *, segment: int, parallel: int, data, flat_size: int):
    """The one compiled executable for these shapes (compiled on first use).

    It runs ``segment`` NUTS steps of ``parallel`` chains with Stan's adaptation driven by per-step inputs,
    returning the requested variables and the sample stats of every step (warm-up steps are dropped by the
    caller).

    The warm-up is composed from blackjax's own parts (its NUTS kernel, its Welford mass-matrix and
    dual-averaging step-size adaptations, its window schedule), as ``blackjax.window_adaptation`` composes
    them, but unrolled into the same loop as the draws, so that one NUTS body is compiled, not two.
    """
    jax = _jax()
    import jax.numpy as jnp
    from blackjax.adaptation.mass_matrix import mass_matrix_adaptation
    from blackjax.adaptation.step_size import dual_averaging_adaptation
    from blackjax.mcmc import nuts

    shapes = tuple((np.shape(value), np.asarray(value).dtype.str) for value in data)
    key = (segment, parallel, flat_size, shapes)
    if key in density.executables:
        return density.executables[key], False
    kernel = nuts.build_kernel()
    mass_init, mass_update, mass_final = mass_matrix_adaptation(is_diagonal_matrix=True)

    def run_segment(carry, keys, stage, window_end, finish, data, target_accept):
        def log_density(flat):
            return density.logp(flat, data)

        _, step_size_update, step_size_final = dual_averaging_adaptation(target_accept)
        step_size_init = dual_averaging_adaptation(target_accept)[0]
        position, step_state, mass_state, step_size, inverse_mass = carry
        # the NUTS state is rebuilt from the position (one gradient per segment), so the carry is plain arrays
        state = nuts.init(position, log_density)

        def one_step(loop, inputs):
            state, step_state, mass_state, step_size, inverse_mass = loop
            step_key, step_stage, is_window_end, is_finish = inputs
            state, info = kernel(step_key, state, log_density, step_size, inverse_mass)
            adapted_step = step_size_update(step_state, info.acceptance_rate)
            adapted_mass = jax.lax.cond(
                step_stage == SLOW, lambda: mass_update(mass_state, state.position), lambda: mass_state
            )
            new = (adapted_step, adapted_mass, jnp.exp(adapted_step.log_step_size), inverse_mass)

            def end_window(values):  # a slow window's end: its mass matrix is used from now on, step size restarts
                step_, mass_, _, _ = values
                mass_ = mass_final(mass_)
                step_ = step_size_init(step_size_final(step_))
                return step_, mass_, jnp.exp(step_.log_step_size), mass_.inverse_mass_matrix

            new = jax.lax.cond(is_window_end, end_window, lambda values: values, new)
            new = (*new[:2], jnp.where(is_finish, step_size_final(new[0]), new[2]), new[3])
            adapting = step_stage != SAMPLING
            kept = jax.tree.map(
                lambda fresh, old: jnp.where(adapting, fresh, old),
                new,
                (step_state, mass_state, step_size, inverse_mass),
            )
            stats = (
                info.is_divergent,
                info.energy,
                info.acceptance_rate,
                info.num_integration_steps,
                info.num_trajectory_expansions,
                state.logdensity,
                step_size,
            )
            return (state, *kept), (density.outputs(state.position, data), stats)

        (state, *rest), per_step = jax.lax.scan(
            one_step, (state, step_state, mass_state, step_size, inverse_mass), (keys, stage, window_end, finish)
        )
        return (state.position, *rest), per_step

    # example arguments as NumPy arrays: an eager jnp operation would cost an XLA compile of its own
    example_carry = _initial_carry(np.zeros((parallel, flat_size)), mass_init)
    per_step = (np.zeros(segment, dtype=np.int32), np.zeros(segment, dtype=bool), np.zeros(segment, dtype=bool))
    compiled = (
        jax.pmap(run_segment, in_axes=(0, 0, None, None, None, None, None))
        .lower(example_carry, np.zeros((parallel, segment, 2), dtype=np.uint32), *per_step, data, 0.8)
        .compile()
    )
    density.executables[key] = (compiled, mass_init)
    return density.executables[key], True


def _initial_carry(positions: np.ndarray, mass_init) -> tuple:
    """(positions, dual-averaging state, mass-matrix state, step size, inverse mass) of a fresh warm-up.

    The chains start at ``positions`` (one row per chain) with step size 1 and a unit diagonal mass matrix,
    as blackjax's warm-up.
    """
    import jax
    from blackjax.adaptation.step_size import dual_averaging_adaptation

    parallel, flat_size = positions.shape
    step_state = dual_averaging_adaptation(0.8)[0](1.0)  # the target enters at update, not at init
    mass_state = mass_init(flat_size)

    def stacked(value):
        value = np.asarray(value)
        return np.broadcast_to(value, (parallel, *value.shape)).copy()

    return (
        positions,
        jax.tree.map(stacked, step_state),
        jax.tree.map(stacked, mass_state),
        np.ones(parallel),
        np.ones((parallel, flat_size)),
    )


def sample(
    density: CompiledDensity,
    model,
    point: dict[str, np.ndarray],
    *,
    draws: int,
    tune: int,
    chains: int,
    target_accept: float,
    random_seed: int,
    jitter: tuple[str, ...],
    interrupt,
    keep_partial: bool,
    progressbar: bool,
    max_parallel: int | None = None,
) -> BlackjaxRun:
    """Run ``chains`` NUTS chains of ``density`` on ``model``'s data (see the module docstring).

    ``point`` is the model's initial point; ``jitter`` names value variables whose start gets a U(-1, 1)
    jitter (chains start apart); ``interrupt`` is the
    :func:`~bayesclass.inference.engines.sampling.interrupt_guard` state; ``max_parallel`` caps the chains run at
    once (None: one per host device; :func:`~bayesclass.inference.engines.sampling.chain_threads`).
    """
    jax = _jax()

    start = time.perf_counter()
    data = density.data_of(model)
    rng = np.random.default_rng(np.random.SeedSequence(random_seed))
    point = {name: np.asarray(value, dtype=float) for name, value in point.items()}
    starts = []
    for _ in range(chains):
        jittered = {
            name: value + (rng.uniform(-1, 1, size=np.shape(value)) if name in jitter else 0.0)
            for name, value in point.items()
        }
        starts.append(density.flatten(jittered))
    flat_size = starts[0].size
    parallel = max(1, min(chains, jax.local_device_count(), max_parallel or chains))
    segment = SEGMENT_DRAWS  # fixed: the numbers of tuning steps and draws never change the compiled executable
    (run, mass_init), compiled_now = _executables(
        density, segment=segment, parallel=parallel, data=data, flat_size=flat_size
    )
    interrupt.check()
    compile_seconds = time.perf_counter() - start
    start = time.perf_counter()
    segments = -(-(tune + draws) // segment)
    stage, window_end, finish = schedule(tune, segments * segment)
    step_keys = rng.integers(0, 2**32, size=(chains, segments * segment, 2), dtype=np.uint32)  # raw threefry keys
    rounds = -(-chains // parallel)
    members = [[c % chains for c in range(r * parallel, (r + 1) * parallel)] for r in range(rounds)]
    carries = [_initial_carry(np.stack([starts[c] for c in chains_of]), mass_init) for chains_of in members]
    pieces: list[list[tuple]] = [[] for _ in range(chains)]  # per chain: (outputs, stats) of each segment
    partial = False
    progress = _Progress(rounds * segments * segment, enabled=progressbar)
    try:
        # segment-major: the rounds (more chains than devices) advance together, so an interrupt leaves every
        # chain about as long as the others
        for index in range(segments):
            steps = slice(index * segment, (index + 1) * segment)
            for round_index, chains_of in enumerate(members):
                owned = chains_of[: chains - round_index * parallel]  # padding chains of the last round are dropped
                carries[round_index], (outputs, stats) = _wait(
                    interrupt,
                    run,
                    carries[round_index],
                    step_keys[chains_of, steps],
                    stage[steps],
                    window_end[steps],
                    finish[steps],
                    data,
                    float(target_accept),
                )
                outputs, stats = [np.asarray(value) for value in outputs], [np.asarray(value) for value in stats]
                for slot, chain in enumerate(owned):
                    pieces[chain].append(([value[slot] for value in outputs], [value[slot] for value in stats]))
                progress.advance(segment)
    except KeyboardInterrupt:
        if not keep_partial:
            raise
        done = min(len(chain) for chain in pieces) * segment
        if done <= tune:
            raise no_draws_yet(f"during the warm-up (step {done} of {tune})") from None
        interrupt.handled()
        partial = True
    finally:
        progress.close()
    n_steps = min(len(chain) for chain in pieces) * segment
    kept = slice(tune, min(n_steps, tune + draws))  # the draws: every step after the warm-up

    def joined(values_of, slot):
        return np.stack([np.concatenate([values_of(piece)[slot] for piece in chain])[kept] for chain in pieces])

    draws_out = {name: joined(lambda piece: piece[0], slot) for slot, name in enumerate(density.var_names)}
    stats_out = {name: joined(lambda piece: piece[1], slot) for slot, name in enumerate(STAT_NAMES)}
    stats_out["diverging"] = stats_out["diverging"].astype(bool)
    stats_out["reached_max_treedepth"] = stats_out["tree_depth"] >= MAX_TREE_DEPTH
    return BlackjaxRun(
        draws=draws_out,
        stats=stats_out,
        compile_seconds=compile_seconds,
        sampling_seconds=time.perf_counter() - start,
        compiled_now=compiled_now,
        partial=partial,
    )


def _wait(interrupt, call, *arguments):
    """Run ``call(*arguments)`` in a worker thread and wait for it, honouring an interrupt while it runs.

    An XLA call cannot be cancelled, and a process that exits while one runs aborts; so on an
    interrupt the call (one sampling segment, or the warm-up) is let finish, its result dropped,
    and the interrupt re-raised.
    """
    box: dict[str, object] = {}

    def work() -> None:
        try:
            box["value"] = call(*arguments)
            jax_block(box["value"])
        except BaseException as error:  # noqa: BLE001  (re-raised in the caller's thread)
            box["error"] = error

    worker = threading.Thread(target=work, daemon=True, name="bayesclass-blackjax")
    worker.start()
    try:
        while worker.is_alive():
            worker.join(0.02)
            interrupt.check()
    except KeyboardInterrupt:
        while worker.is_alive():
            try:
                worker.join()
            except KeyboardInterrupt:  # a second Ctrl-C: the call still has to end first
                continue
        raise
    if "error" in box:
        raise box["error"]
    return box["value"]


def jax_block(value) -> None:
    """Wait until the arrays of ``value`` are computed."""
    import jax

    jax.block_until_ready(value)


#: seconds between the progress lines written where standard error is not interactive (a log file, a pipe)
PLAIN_EVERY_S = 10.0


def _progress_console():
    """The console of the sampling progress: standard error (standard output keeps the results)."""
    from rich.console import Console

    return Console(stderr=True)


class _Progress:
    """Sampling progress on standard error: a rich bar per chain (or one in all) with its rate; nothing when disabled.

    Where standard error is interactive (a terminal, Jupyter) the bars are live and vanish when done. Elsewhere (a
    log file, a pipe, ``python script.py 2>log``) rich draws no transient bar at all, so a plain line with every
    chain's count and rate is written every :data:`PLAIN_EVERY_S` seconds, and one when done where any was (a run
    shorter than that writes nothing). Standard output
    carries the results (``bayesclass fit`` printed a blank line there when the bar stopped).

    Parameters
    ----------
    total : int
        Steps of each chain (or of the one task where ``chains`` is 0).
    enabled : bool
        False: nothing is shown (``SamplerSettings(progressbar=False)``, the CLI's ``--no-progress`` and ``-q``).
    label : str
        What runs.
    chains : int, default 0
        One task per chain ("chain 1" ...); 0: one task in all.
    unit : str, default "steps"
        What a step is, for the rate ("sweeps/s").
    """

    def __init__(
        self, total: int, *, enabled: bool, label: str = "NUTS (blackjax)", chains: int = 0, unit: str = "steps"
    ) -> None:
        self._bar: Any = None
        self.label, self.unit, self.total = label, unit, total
        self.names = [f"chain {index + 1}" for index in range(chains)] if chains else [label]
        self.done = [0] * len(self.names)
        self._tasks: list = []
        self._first: list[tuple[float, int] | None] = [None] * len(self.names)  # (time, count) first seen moving
        self._last = [0.0] * len(self.names)  # the time of each task's last update
        self._start = self._printed = time.perf_counter()
        self._lines = 0
        self.enabled = enabled
        if not enabled:
            return
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        console = _progress_console()
        if console.is_interactive or console.is_jupyter:
            self._bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[rate]}"),
                TimeRemainingColumn(),
                transient=True,
                console=console,
            )
            prefix = f"{label} " if chains else ""
            self._tasks = [self._bar.add_task(prefix + name, total=total, rate="") for name in self.names]
            self._bar.start()

    def rate(self, index: int) -> float | None:
        """Steps per second of task ``index`` from when it was first seen moving to its last update (None before)."""
        first = self._first[index]
        elapsed = self._last[index] - first[0] if first is not None else 0.0
        return (self.done[index] - first[1]) / elapsed if first is not None and elapsed > 0 else None

    def update(self, index: int, completed: int) -> None:
        """Set task ``index`` (a chain) to ``completed`` steps."""
        if not self.enabled or completed == self.done[index]:
            return
        if self._first[index] is None:
            self._first[index] = (time.perf_counter(), self.done[index])
        self.done[index], self._last[index] = completed, time.perf_counter()
        rate = self.rate(index)
        if self._bar is not None:
            shown = f"{rate:.0f} {self.unit}/s" if rate is not None else ""
            self._bar.update(self._tasks[index], completed=completed, rate=shown)
        elif time.perf_counter() - self._printed >= PLAIN_EVERY_S:  # not interactive: a plain line now and then
            self._print()

    def advance(self, steps: int = 1, index: int = 0) -> None:
        """Advance task ``index`` by ``steps``."""
        self.update(index, self.done[index] + steps)

    def _print(self, end: str = "") -> None:
        import sys

        self._printed, self._lines = time.perf_counter(), self._lines + 1
        parts = []
        for index, name in enumerate(self.names):
            rate = self.rate(index)
            parts.append(f"{name} {self.done[index]}/{self.total}" + (f" ({rate:.0f} {self.unit}/s)" if rate else ""))
        prefix = f"{self.label}: " if len(self.names) > 1 else ""
        print(f"{prefix}{', '.join(parts)}{end}", file=sys.stderr, flush=True)

    def close(self) -> None:
        """Stop the bars, or write the last plain line."""
        if self._bar is not None:
            self._bar.stop()
        elif self._lines:
            self._print(f"; {time.perf_counter() - self._start:.1f} s")
