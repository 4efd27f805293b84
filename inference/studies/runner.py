"""Running a comparison study (:mod:`bayesclass.inference.studies.spec`) on Dask, resumably, and reading its results.

:func:`run_cell` is one cell, start to finish, in whatever process runs it: split and subsample the data (seeded
by the cell's key), fit (:func:`bayesclass.inference.engines.fit`), score every estimate on the test split
(:func:`bayesclass.inference.evaluation.heldout.evaluate`: the posterior, the point estimates the spec names, the
baselines; for a stack, the stack and each member's posterior, with the members' weights, every member fitted on the
cell's training rows), and write the cell's record atomically to ``<out>/cells/<key>.json``, with its checksum
(:mod:`bayesclass.inference.studies.records`, which also verifies every record read back). A cell that raises is
recorded with its error; it never stops the study.

:func:`run_study` submits the cells without a record to Dask distributed (a ``LocalCluster`` of process workers
with one thread each by default: PyTensor compilation is not thread-safe, pymc#7819; or the scheduler at
``scheduler``), shows cells done / failed / remaining with an ETA, and finally writes the tidy table
``<out>/results.parquet``. A script run as ``python script.py`` without an ``if __name__ == "__main__":`` guard
gets the same workers, which do not import it (``spawn`` runs a script's top level again in each new process,
here the whole study; see :mod:`bayesclass.inference.engines._spawn`). Workers write the records themselves, so
killing the client (or a worker) loses no finished cell; rerunning the same command skips every recorded cell. A
changed spec changes the keys of the cells it changes, and only those run again. Each worker process keeps its
compiled models across cells (:mod:`bayesclass.inference.engines.sampling`'s cache): new data of the same structure
do not recompile.

:func:`load` reads the records into one tidy pandas DataFrame: a row per cell x estimate x metric.
"""

from __future__ import annotations

import itertools
import json
import logging
import math
import os
import time
import traceback
import warnings
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from bayesclass._interrupts import deferred_interrupts
from bayesclass._lazy import lazy_import
from bayesclass.data import Dataset
from bayesclass.data.arguments import spelled
from bayesclass.inference.engines._spawn import spawn_skips_main_script
from bayesclass.inference.engines.methods import SAMPLERS
from bayesclass.inference.io import atomic_write
from bayesclass.inference.result import is_stack, result_info, stack_info
from bayesclass.inference.studies.records import RECORD_FORMAT, move_aside, read_records, seal
from bayesclass.inference.studies.spec import (
    MAX_CELLS,
    Cell,
    StudyModel,
    StudySpec,
    cells,
    describe_grid,
    grid_size,
)

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_import("pandas")

__all__ = [
    "RECORD_FORMAT",
    "GridTooLarge",
    "SchedulerUnreachable",
    "cell_data",
    "check_scheduler",
    "current_cells",
    "current_keys",
    "load",
    "load_verified",
    "run_cell",
    "run_study",
]

LOGGER = logging.getLogger("bayesclass.studies")
#: cells submitted to Dask at a time per worker (the rest are made as these finish: a grid is never held whole)
WINDOW_PER_WORKER = 8
#: threads of BLAS and OpenMP in each worker process (one cell per single-threaded process)
WORKER_ENV = {
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "NUMBA_NUM_THREADS": "1",
    "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1",
    # a NUTS fit's chains one after another (blackjax's host devices and nutpie's threads would run them at once)
    "BAYESCLASS_CHAIN_THREADS": "1",
}


def cell_data(cell: Cell) -> tuple[Dataset, Dataset]:
    """(training subsample of ``cell.size`` rows, test split) of the cell's data set.

    The test split is stratified with ``cell.test_fraction`` of the rows, seeded by the study seed and the
    repeat; the training rows a stratified subsample of the rest, seeded likewise (the same rows for every model
    of that repeat and size). A data set drawn afresh per repeat (``redraw``) gets a simple random sample of the
    rest instead, drawn again (seeded) until every class has a row: its training rows are then a sample of the
    generator, as the intervals assume (stratifying fixes the class counts, which narrows the sampling
    variance of the intercept: the intervals would over-cover).

    Parameters
    ----------
    cell : Cell
        The cell.

    Returns
    -------
    train, test : Dataset
        The training subsample and the test split.
    """
    from dataclasses import replace

    from sklearn.model_selection import train_test_split

    data = cell.dataset.load(cell.repeat)
    rows = np.arange(data.n_obs)
    split_seed = (cell.seed * 1_000_003 + cell.repeat) % 2**31
    if cell.dataset.test is not None:  # a fixed test table: every row is in the pool
        pool, test = rows, np.zeros(0, dtype=int)
    else:
        pool, test = train_test_split(rows, test_size=cell.test_fraction, random_state=split_seed, stratify=data.y)
    if cell.size < len(pool) and cell.dataset.redraw:
        pool = _simple_random_sample(pool, data.y, cell.size, split_seed + 1)
    elif cell.size < len(pool):
        pool, _ = train_test_split(pool, train_size=cell.size, random_state=split_seed + 1, stratify=data.y[pool])
    note = f"study {cell.study!r}: repeat {cell.repeat}, seed {cell.seed}, test fraction {cell.test_fraction:g}"

    def part(index: np.ndarray, which: str) -> Dataset:
        index = np.sort(index)
        return replace(
            data,
            name=f"{data.name}[{which} {len(index)}]",
            X=data.X[index],
            y=data.y[index],
            true_class_proba=None if data.true_class_proba is None else data.true_class_proba[index],
            provenance=f"{data.provenance}; {which} rows of {note}",
        )

    if cell.dataset.test is not None:
        return part(pool, "train"), cell.dataset.load_test(data)
    return part(pool, "train"), part(test, "test")


def _simple_random_sample(pool: np.ndarray, y: np.ndarray, size: int, seed: int) -> np.ndarray:
    """``size`` rows of ``pool`` drawn without replacement, again until every class of ``y[pool]`` has one."""
    classes = np.unique(y[pool])
    rng = np.random.default_rng(seed)
    for _ in range(1000):
        chosen = rng.choice(pool, size=size, replace=False)
        if np.unique(y[chosen]).size == classes.size:
            return chosen
    raise ValueError(
        f"1000 simple random samples of {size} training rows all missed a class; a class is too rare for {size} "
        "rows: use larger training sizes, or drop redraw (stratified subsamples)"
    )


def run_cell(cell: Cell, out: str | Path) -> dict:
    """Fit and score one cell and write its record ``<out>/cells/<key>.json`` atomically.

    Parameters
    ----------
    cell : Cell
        The cell.
    out : str or pathlib.Path
        The study's results folder.

    Returns
    -------
    dict
        The record written (a failed cell's records its error and traceback).
    """
    record: dict = {
        "format": RECORD_FORMAT,
        "key": cell.key(),
        "cell": cell.describe(),
        "status": "ok",
        "error": None,
        "rows": [],
        "diagnostics": {},
        "timings": {},
        "point_estimate_status": {},
        "worker_pid": os.getpid(),
    }
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:  # kept in the record, not printed by the workers
        warnings.simplefilter("always")
        _fit_and_score(cell, record)
    record["warnings"] = sorted({f"{w.category.__name__}: {w.message}" for w in caught})
    record["timings"]["cell_seconds"] = time.perf_counter() - start
    record["peak_rss_gb"] = _peak_rss_gb()
    folder = Path(out) / "cells"
    folder.mkdir(parents=True, exist_ok=True)
    record = seal(json.loads(json.dumps(record)))  # the checksum of what a reader will parse back
    with atomic_write(folder / f"{record['key']}.json") as temporary:
        temporary.write_text(json.dumps(record, indent=1, sort_keys=True), encoding="utf-8")
    return record


def _fit_model(model: StudyModel, train: Dataset, cell: Cell):
    """``model`` fitted on ``train`` by its method, with the cell's sampler settings and seed."""
    from bayesclass.inference.engines.fit import fit

    return fit(
        model.build(),
        train,
        method=model.method,
        sampler=cell.sampler,
        standardize=model.standardize,
        random_seed=cell.fit_seed(),
    )


def _diagnostics(result, method: str) -> dict:
    """The record's convergence diagnostics of one fitted result drawn by ``method``.

    Independent draws (exact conjugate draws) have no Markov chain to converge: the verdict does not apply (their
    max r_hat over hundreds of elements passes 1.01 by chance), so they are not diagnosed at all (r_hat, ESS and
    the verdict None). ArviZ's per-element rank normalisation was most of a small study's time outside the fits
    (33 of 82 s of the example study, serial).
    """
    from bayesclass.inference.criticism.diagnostics import diagnose

    if SAMPLERS[method].independent_draws:
        return {"max_r_hat": None, "min_ess_bulk": None, "min_ess_tail": None, "divergences": 0, "passed": None}
    report = diagnose(result)
    return {
        "max_r_hat": report.max_r_hat,
        "min_ess_bulk": report.min_ess_bulk,
        "min_ess_tail": report.min_ess_tail,
        "divergences": report.n_divergences,
        "passed": report.passed,
    }


def _fitted(cell: Cell, train: Dataset, record: dict):
    """The cell's result (one model's, or the stack of its members) and its estimates' kinds, by row label.

    The fit's timings, point estimate status and diagnostics go into ``record``. A stack's members are fitted
    one by one (a member that cannot take the data raises, naming it); the diagnostics are the worst over them
    (largest r_hat, smallest ESS, all divergences, passed where every sampled member passed).
    """
    from bayesclass.inference.evaluation.heldout import estimate_label, estimate_labels
    from bayesclass.inference.stacking import stack

    fit_start = time.perf_counter()
    if not cell.model.members:
        result = _fit_model(cell.model, train, cell)
        record["timings"]["fit_seconds"] = time.perf_counter() - fit_start
        info = result_info(result)
        record["timings"].update(info.timings)
        record["point_estimate_status"] = dict(info.point_estimate_status)
        record["diagnostics"] = _diagnostics(result, cell.model.method)
        predictive = info.model.predictive_kinds()
        kinds = {"posterior": "posterior"}
        kinds |= {estimate_label(kind, predictive=kind in predictive): kind for kind in cell.model.point_estimates}
        return result, kinds
    fitted, diagnostics = {}, []
    for member in cell.model.members:
        try:
            fitted[member.label] = _fit_model(member, train, cell)
        except Exception as error:
            raise ValueError(
                f"stack member {member.label!r} ({member.family}, {member.method}) could not be fitted on "
                f"{train.n_obs} training rows: {type(error).__name__}: {error}"
            ) from error
        for name, seconds in result_info(fitted[member.label]).timings.items():
            record["timings"][name] = record["timings"].get(name, 0.0) + seconds
        diagnostics.append(_diagnostics(fitted[member.label], member.method))
    record["timings"]["fit_seconds"] = time.perf_counter() - fit_start
    record["diagnostics"] = _worst(diagnostics)
    stack_start = time.perf_counter()
    try:
        result = stack(fitted, method=cell.model.method)
    except (TypeError, ValueError) as error:
        raise ValueError(f"the stack of {', '.join(map(repr, fitted))} could not be built: {error}") from error
    record["timings"]["stack_seconds"] = time.perf_counter() - stack_start
    labels = estimate_labels(result)
    kinds = {label: ("stack" if kind == "posterior" else "member") for kind, label in labels.items()}
    return result, kinds


def _worst(diagnostics: list[dict]) -> dict:
    """The worst of several members' diagnostics (see :func:`_fitted`); NaN-free where any member has a value."""

    def pick(name: str, choose):
        values = [d[name] for d in diagnostics if d[name] is not None and not math.isnan(d[name])]
        return choose(values) if values else None

    verdicts = [d["passed"] for d in diagnostics if d["passed"] is not None]
    return {
        "max_r_hat": pick("max_r_hat", max),
        "min_ess_bulk": pick("min_ess_bulk", min),
        "min_ess_tail": pick("min_ess_tail", min),
        "divergences": sum(int(d["divergences"] or 0) for d in diagnostics),
        "passed": all(verdicts) if verdicts else None,
    }


def _fit_and_score(cell: Cell, record: dict) -> None:
    from bayesclass.inference.evaluation.coverage import interval_coverage
    from bayesclass.inference.evaluation.heldout import estimate_labels, evaluate
    from bayesclass.inference.prediction.decisions import LossMatrix

    try:
        train, test = cell_data(cell)
        record.update(n_train=train.n_obs, n_test=test.n_obs)
        result, kinds = _fitted(cell, train, record)
        loss = None
        if cell.loss_matrix is not None and cell.loss_classes is not None:  # set together (cells)
            loss = LossMatrix(np.array(cell.loss_matrix, dtype=float), cell.loss_classes)
        score_start = time.perf_counter()
        table = evaluate(result, test, baselines=cell.model.baselines, loss=loss, random_seed=cell.fit_seed())
        record["timings"]["score_seconds"] = time.perf_counter() - score_start
        metrics = [column for column in table.columns if cell.metrics is None or column in cell.metrics]
        metrics += [c for c in ("mean_loss", "n_zero_probability", "n_undefined") if c in table and c not in metrics]
        coverage_start = time.perf_counter()
        # None without a known truth; a stack's score table has its interval's truth_coverage, not these levels
        coverage = None if is_stack(result) else interval_coverage(result, test)
        record["timings"]["coverage_seconds"] = time.perf_counter() - coverage_start
        if coverage is not None:
            table = table.join(coverage, how="left")  # the baselines have no interval: NaN, dropped below
            metrics += [column for column in coverage.columns if column not in metrics]
        for label, row in table.iterrows():
            label = str(label)
            if label.startswith("baseline: "):
                kind = "baseline"
            elif label in kinds:
                kind = kinds[label]
            else:
                continue  # a stored point estimate the spec does not ask for
            for metric in metrics:
                if kind == "baseline" and coverage is not None and metric in coverage.columns:
                    continue  # a baseline gives no interval: no coverage row (not even "not available")
                value = float(row[metric])
                record["rows"].append({"estimate": label, "kind": kind, "metric": metric, "value": _json_number(value)})
        if is_stack(result):  # each member's weight in the stack, beside its scores (rows named as in the table)
            labels, weights = estimate_labels(result), stack_info(result).weights
            for index, weight in enumerate(weights):
                label = labels[f"member_{index}"]
                record["rows"].append({"estimate": label, "kind": "member", "metric": "stack_weight", "value": weight})
    except Exception as error:  # recorded, never fatal to the study (KeyboardInterrupt still stops it)
        record["status"] = "error"
        record["error"] = f"{type(error).__name__}: {error}"
        record["traceback"] = traceback.format_exc(limit=6)


def _peak_rss_gb() -> float | None:
    """The peak resident memory of this process so far (VmHWM, Linux), in GB; None elsewhere."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024 / 1e9
    except OSError:
        pass
    return None


def _json_number(value: float):
    """JSON has no inf/NaN: kept as the strings "inf", "-inf", "nan" and read back as floats by :func:`load`."""
    if math.isfinite(value):
        return value
    return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")


class GridTooLarge(ValueError):
    """A grid above :data:`~bayesclass.inference.studies.spec.MAX_CELLS` cells run without confirmation."""


class SchedulerUnreachable(ValueError):
    """No Dask scheduler answers at the address given."""


def check_scheduler(address: str, *, timeout: float = 5.0) -> None:
    """Refuse, within ``timeout`` seconds, a scheduler address that is malformed or where nothing listens.

    Parameters
    ----------
    address : str
        A Dask scheduler address, e.g. ``tcp://host:8786``.
    timeout : float, default 5.0
        Seconds to wait for the connection.

    Raises
    ------
    SchedulerUnreachable
        Naming the address and the reason (malformed, unknown host, connection refused, no answer).
    """
    import socket

    from distributed.comm.addressing import parse_address, parse_host_port

    fix = f"start one ('dask scheduler --port 8786') or drop {spelled('scheduler')} to run on a local cluster"
    try:
        scheme, location = parse_address(address)
        if scheme not in ("tcp", "tls"):
            return  # (inproc://, ucx:// ...: Dask's own connection says more)
        host, port = parse_host_port(location)
    except (TypeError, ValueError) as error:
        raise SchedulerUnreachable(
            f"scheduler address {address!r} is not HOST:PORT ({error}); e.g. tcp://host:8786"
        ) from None
    try:
        socket.create_connection((host, port), timeout=timeout).close()
    except TimeoutError:
        raise SchedulerUnreachable(f"no Dask scheduler answers at {address!r} within {timeout:g} s; {fix}") from None
    except OSError as error:
        reason = error.strerror or type(error).__name__
        raise SchedulerUnreachable(f"no Dask scheduler at {address!r} ({reason}); {fix}") from None


def run_study(
    spec: StudySpec,
    out: str | Path,
    *,
    workers: int | None = None,
    scheduler: str | None = None,
    serial: bool = False,
    progress: bool = True,
    on_cell: Callable[[dict], None] | None = None,
    confirm_large: bool = False,
):
    """Run every cell of ``spec`` that has no verified record under ``out``; return :func:`load` of ``out``.

    A record of one of the spec's cells that is damaged, edited or unverified
    (:mod:`bayesclass.inference.studies.records`) is moved aside (``<key>.json.damaged``), its cell run again, and
    each is named in a warning and in the summary.

    Parameters
    ----------
    spec : StudySpec
        From :func:`bayesclass.inference.studies.spec.read_spec`.
    out : path
        The results folder (created): ``cells/<key>.json`` per cell, ``spec.toml`` a copy of the spec's source
        when it is a file, ``current_cells.json`` the spec's cells, ``results.parquet`` the tidy table.
    workers : int, optional
        Process workers of the ``LocalCluster`` (default: the usable cores, at most 4).
    scheduler : str, optional
        Address of an existing Dask scheduler (``tcp://host:8786``); its workers need bayesclass installed and
        ``out`` on a filesystem they share with the client. Checked first (:func:`check_scheduler`).
    serial : bool
        Run the cells one after another in this process (no Dask).
    progress : bool
        Show the progress bar (cells done / failed / remaining, ETA).
    on_cell : callable, optional
        Called with each finished cell's record, in this process.
    confirm_large : bool, default False
        Run a grid of more than :data:`~bayesclass.inference.studies.spec.MAX_CELLS` cells (``--yes``).

    Returns
    -------
    pandas.DataFrame
        :func:`load` of ``out``, restricted to the cells of ``spec`` (also written to ``results.parquet``), with
        ``attrs["summary"]``: the cells run, failed, already recorded, moved aside and lost (their worker died).

    Raises
    ------
    GridTooLarge
        More than ``MAX_CELLS`` cells without ``confirm_large`` (counted, before anything is made or run).
    SchedulerUnreachable
        Nothing answers at ``scheduler``.
    """
    if grid_size(spec) > MAX_CELLS and not confirm_large:
        raise GridTooLarge(
            f"study {spec.name!r} has {describe_grid(spec)}, more than {MAX_CELLS:,} (hours to days of fits); "
            f"make it smaller (repeats, training_sizes) or confirm with {spelled('confirm_large', True)}"
        )
    if scheduler is not None and not serial:
        check_scheduler(scheduler)
    out = Path(out)
    grid = cells(spec)
    expected, done, moved = _prepare(spec, grid, out)
    pending = (cell for cell in grid if cell.key() not in done)
    counts = {"done": 0, "failed": 0, "skipped": len(done), "lost": 0}
    lost: list[str] = []
    start = time.perf_counter()
    with _Progress(len(expected) - len(done), hide=not progress, skipped=counts["skipped"]) as bar:

        def finished(record: dict) -> None:
            outcome = {"ok": "done", "error": "failed"}.get(record["status"], "lost")
            counts[outcome] += 1
            if outcome == "lost":
                lost.append(record["error"])
            bar.advance(outcome != "done")
            if on_cell is not None and outcome != "lost":
                on_cell(record)

        fits = Counter(_structure(cell) for cell in grid if cell.key() not in done)
        if serial or len(done) == len(expected):
            for cell in pending:
                finished(_run_cell_expecting(cell, str(out), fits[_structure(cell)]))
        else:
            _run_on_dask(pending, out, workers=workers, scheduler=scheduler, finished=finished, fits=fits)
    _remove_temporaries(out)  # a worker killed while writing leaves its temporary file (its cell ran again)
    table = load(out, keys=expected)
    with atomic_write(out / "results.parquet") as temporary:
        table.to_parquet(temporary, index=False)
    summary = (
        f"study {spec.name!r}: {len(expected)} cells: {counts['done']} run, {counts['failed']} failed, "
        f"{f'{len(lost)} lost (their worker died), ' if lost else ''}{counts['skipped']} already recorded; "
        f"{time.perf_counter() - start:.1f} s; results in {out}"
    )
    for lines, what in ((moved, "damaged record(s) moved aside, their cells run again"),
                        (lost, "cell(s) not recorded (rerun the same command to run them)")):  # fmt: skip
        if lines:
            summary += f"\n{len(lines)} {what}:\n" + "\n".join(f"  {line}" for line in lines)
    table.attrs["summary"] = summary
    table.attrs["lost"] = lost
    return table


def _prepare(spec: StudySpec, grid: Iterable[Cell], out: Path) -> tuple[dict[str, dict], set[str], list[str]]:
    """Make the folder, record the spec and its cells, move damaged records of them aside.

    Returns the cells (key -> description), the keys with a verified record, and a line per record moved aside.
    """
    out.mkdir(parents=True, exist_ok=True)
    (out / "cells").mkdir(exist_ok=True)
    _remove_temporaries(out)
    if spec.source and Path(spec.source).is_file():
        with atomic_write(out / "spec.toml") as temporary:
            temporary.write_text(Path(spec.source).read_text(encoding="utf-8"), encoding="utf-8")
    expected = {cell.key(): cell.describe() for cell in grid}
    with atomic_write(out / "current_cells.json") as temporary:  # the spec's cells (the report's), derived state
        temporary.write_text(json.dumps({"format": 1, "cells": expected}, sort_keys=True), encoding="utf-8")
    records, rejected = read_records(out, cells=expected)
    moved = []
    for path, reason in rejected:
        aside = move_aside(path)
        moved.append(f"{path.name} -> {aside.name} ({reason})")
        LOGGER.warning(f"study record {path} is not used and its cell runs again: {reason}; moved to {aside.name}")
    return expected, {record["key"] for record in records}, moved


def _remove_temporaries(out: Path) -> None:
    """Remove the temporary files of record writes killed mid-way (SIGKILL: no cleanup ran)."""
    for stale in (out / "cells").glob(".*.tmp"):
        stale.unlink(missing_ok=True)


def _structure(cell: Cell) -> tuple[str, str]:
    """The model and data set of a cell: the cells of one compile the same model structure (every size)."""
    return (cell.model.label, cell.dataset.label)


def _run_cell_expecting(cell: Cell, out: str, fits: float) -> dict:
    """:func:`run_cell` where the process is expected to fit the cell's structure ``fits`` times.

    Backend ``"auto"`` then picks a family's backend for repeated fits where they pay for its slower compile
    (:func:`~bayesclass.inference.engines.nuts.repeated_fits`); the count is not part of the cell's key.
    """
    from bayesclass.inference.engines.nuts import repeated_fits

    with repeated_fits(fits):
        return run_cell(cell, out)


def _run_on_dask(pending: Iterator[Cell], out: Path, *, workers, scheduler, finished, fits: Counter) -> None:
    from distributed import Client, LocalCluster, as_completed

    with ExitStack() as stack:  # closed in reverse: the client, the cluster, then the main script's mark
        if scheduler is not None:
            client = stack.enter_context(Client(scheduler, timeout="10s"))
        else:
            stack.enter_context(spawn_skips_main_script())  # for the cluster's whole life: a dead worker restarts
            nanny = logging.getLogger("distributed.nanny")
            stack.callback(nanny.setLevel, nanny.level)  # restored once the cluster is closed
            # an interrupt waits until the cluster and its client have started and are closed on the way out: one
            # that cut them while the workers started left them to Dask's exit hook (a traceback, "Status.init")
            with deferred_interrupts():
                cluster = LocalCluster(
                    n_workers=workers or min(4, len(os.sched_getaffinity(0))),
                    threads_per_worker=1,
                    processes=True,
                    dashboard_address=None,
                    env=WORKER_ENV,
                )
                stack.enter_context(cluster)
                # closing stops the workers on purpose: no "Worker process still alive after 4.0 seconds, killing"
                stack.callback(nanny.setLevel, logging.ERROR)
                client = stack.enter_context(Client(cluster))
        addresses = sorted(client.scheduler_info()["workers"])
        described: dict[str, Cell] = {}
        homes: dict[tuple, str] = {}  # compiled shape -> the worker that compiles it

        def submit(cell: Cell):
            # the cells of one shape (model, data set, size) go to one worker, which compiles that shape once (a
            # static-shape JAX model recompiles for another number of rows); idle workers may still take them
            # (not with one worker: Dask never gives a task restricted to a dead worker's address to the worker
            # that replaces it when no other is alive, even with allow_other_workers; the study would hang)
            home = None
            per_worker = fits[_structure(cell)] / len(addresses)  # each worker fits its share of the structure
            if len(addresses) > 1 and _compiles_per_shape(cell, per_worker):
                # shapes dealt to the workers in turn as they first appear (a hash of the shape left one worker
                # with 7 of 10 training sizes, idle at the end)
                home = homes.setdefault(_compiled_shape(cell), addresses[len(homes) % len(addresses)])
            described[f"cell-{cell.key()}"] = cell
            return client.submit(_run_cell_expecting, cell, str(out), per_worker, key=f"cell-{cell.key()}",
                                 pure=False, workers=[home] if home else None,
                                 allow_other_workers=home is not None)  # fmt: skip

        window = WINDOW_PER_WORKER * max(1, len(addresses))
        futures = as_completed([submit(cell) for cell in itertools.islice(pending, window)])
        for future in futures:
            try:
                finished(future.result())
            except Exception as error:  # its worker died each time it ran it (killed, out of memory): no record
                cell = described[str(future.key)]
                finished({"status": "lost", "key": cell.key(), "error": _lost(cell, error)})
            described.pop(str(future.key), None)
            future.release()
            following = next(pending, None)
            if following is not None:
                futures.add(submit(following))


def _lost(cell: Cell, error: BaseException) -> str:
    """The line naming a cell without record because its worker died (Dask's ``KilledWorker`` after retries)."""
    c = cell.describe()
    return (
        f"{c['model']} on {c['dataset']}, {c['size']} training rows, repeat {c['repeat']} (key {cell.key()}): "
        f"{type(error).__name__}: {str(error).split('. ')[0][:300]} (the worker process running it died: killed, or "
        "out of memory)"
    )


def _compiles_per_shape(cell: Cell, fits: float) -> bool:
    """Whether a member of the cell's model is fitted by a backend that compiles once per data shape (blackjax).

    Such cells are sent to one worker per shape (model, data set, size), which compiles it once; the others (exact
    draws, point estimates, the Gibbs sampler, nutpie) go to whichever worker is free.
    """
    from bayesclass.inference.engines.fit import resolve_method
    from bayesclass.inference.engines.nuts import nuts_backend
    from bayesclass.inference.engines.sampling import SHAPE_SPECIALISED_BACKENDS

    for member in cell.model.members or (cell.model,):
        model = member.build()
        method = resolve_method(model, member.method, cell.sampler)
        sampler = SAMPLERS.get(method)
        if sampler is not None and sampler.uses_backend:
            if nuts_backend(model, cell.sampler, fits=fits) in SHAPE_SPECIALISED_BACKENDS:
                return True
    return False


def _compiled_shape(cell: Cell) -> tuple:
    """What a shape-specialised compile of the cell's model depends on: model, data set and training size."""
    return (*_structure(cell), cell.size)


class _Progress:
    """rich's progress bar over cells: done / failed / remaining and an ETA."""

    def __init__(self, total: int, *, hide: bool, skipped: int) -> None:
        self.total, self.hide, self.skipped, self.failed = total, hide, skipped, 0

    def __enter__(self) -> _Progress:
        if self.hide:
            return self
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        self.progress = Progress(  # on standard error: standard output holds only the results
            TextColumn("cells"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[failed]} failed, {task.fields[skipped]} already recorded"),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=Console(stderr=True),
        )
        self.progress.__enter__()
        self.task = self.progress.add_task("cells", total=self.total, failed=0, skipped=self.skipped)
        return self

    def advance(self, failed: bool) -> None:
        self.failed += int(failed)
        if not self.hide:
            self.progress.update(self.task, advance=1, failed=self.failed)

    def __exit__(self, *exc) -> None:
        if not self.hide:
            self.progress.__exit__(*exc)


COLUMNS = (
    "study", "dataset", "model", "family", "method", "size", "repeat", "estimate", "kind", "metric", "value",
    "status", "error", "max_r_hat", "min_ess_bulk", "divergences", "converged", "fit_seconds", "sampling_seconds",
    "compile_seconds", "score_seconds", "mle_status", "n_train", "n_test", "key",
)  # fmt: skip


def load(out: str | Path, *, keys: Collection[str] | Mapping[str, Mapping | None] | None = None):
    """The tidy results table of a study folder: a row per cell x estimate x metric, of its verified records.

    As :func:`load_verified`, with the list of records left out in the table's ``attrs["rejected"]``.

    Parameters
    ----------
    out : str or pathlib.Path
        The study's results folder.
    keys : collection of str, or mapping of key to cell description, optional
        As for :func:`load_verified`.

    Returns
    -------
    pandas.DataFrame
        The table of :func:`load_verified`; ``attrs["rejected"]``: ``"<file>: <why>"`` for each record left out.
    """
    table, rejected = load_verified(out, keys=keys)
    table.attrs["rejected"] = rejected
    return table


def load_verified(out: str | Path, *, keys: Collection[str] | Mapping[str, Mapping | None] | None = None):
    """The tidy results table of a study folder and the records left out of it.

    A failed cell has one row with its error and no metric; every row has its cell's diagnostics and timings.
    Every record is verified first (:func:`bayesclass.inference.studies.records.verify_record`: structure, ranges,
    checksum, key, cell): one that does not pass is left out of the table, logged as a warning and listed.

    Parameters
    ----------
    out : str or pathlib.Path
        The study's results folder.
    keys : collection of str, or mapping of key to cell description, optional
        Keep these cells only (e.g. :func:`current_cells`, the last spec's; records of an earlier spec stay on
        disk); with descriptions, each record's cell must match its key's.

    Returns
    -------
    table : pandas.DataFrame
        The columns of :data:`COLUMNS`, sorted by dataset, model, size, repeat, estimate and metric.
    rejected : list of str
        ``"<file>: <why>"`` for each record left out.

    Raises
    ------
    ValueError
        No ``cells/`` folder.
    """
    folder = Path(out) / "cells"
    if not folder.is_dir():
        raise ValueError(f"{str(out)!r} holds no study results (no cells/ folder); run 'bayesclass study SPEC --out'")
    expected = None if keys is None else (dict(keys) if isinstance(keys, Mapping) else dict.fromkeys(keys))
    records, rejected = read_records(out, cells=expected)
    for path, reason in rejected:
        LOGGER.warning(f"study record {path} is left out of the results: {reason}")
    rows = [row for record in records for row in _record_rows(record)]
    table = pd.DataFrame(rows, columns=list(COLUMNS))
    table = table.sort_values(["dataset", "model", "size", "repeat", "estimate", "metric"], kind="stable")
    return table.reset_index(drop=True), [f"{path.name}: {reason}" for path, reason in rejected]


def current_cells(out: str | Path) -> dict[str, dict | None] | None:
    """The cells of the spec last run into ``out``: key -> its description (None where no run has recorded them).

    ``current_cells.json`` is derived state: a damaged one is rebuilt from the spec copy ``out/spec.toml`` where
    that spec reads (a warning says so), else refused with what to do.

    Parameters
    ----------
    out : str or pathlib.Path
        The study's results folder.

    Returns
    -------
    dict or None
        Each cell key and its description (None for the keys of an older layout that listed keys only).

    Raises
    ------
    ValueError
        A damaged ``current_cells.json`` that cannot be rebuilt: naming it, why, and the command that rebuilds it.
    """
    path = Path(out) / "current_cells.json"
    if not path.is_file():
        return None
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(raw, list) and all(isinstance(key, str) for key in raw):  # the first layout: keys only
            return dict.fromkeys(raw)
        if isinstance(raw, dict) and raw.get("format") == 1 and isinstance(raw.get("cells"), dict):
            return {str(key): dict(cell) for key, cell in raw["cells"].items() if isinstance(cell, dict)}
        problem = "not a list of the study's cells"
    except (OSError, UnicodeDecodeError, ValueError) as error:
        problem = f"{type(error).__name__}: {error}"
    return _rebuilt_current_cells(Path(out), problem)


def _rebuilt_current_cells(out: Path, problem: str) -> dict[str, dict | None]:
    """``current_cells.json`` made again from ``out/spec.toml``, or a ValueError saying what to do."""
    from bayesclass.inference.studies.spec import read_spec

    path = out / "current_cells.json"
    rebuild = f"rerun 'bayesclass study SPEC.toml --out {out}' to rebuild it (recorded cells do not run again)"
    try:
        spec = read_spec(out / "spec.toml")
        if grid_size(spec) > MAX_CELLS:
            raise ValueError(describe_grid(spec))
        expected = {cell.key(): cell.describe() for cell in cells(spec)}
    except (ValueError, OSError) as error:
        raise ValueError(
            f"{path} is damaged ({problem}); it is derived state (the cells of the last spec run into {out}) and "
            f"could not be rebuilt from {out / 'spec.toml'} ({str(error).splitlines()[0]}): {rebuild}"
        ) from None
    with atomic_write(path) as temporary:
        temporary.write_text(json.dumps({"format": 1, "cells": expected}, sort_keys=True), encoding="utf-8")
    LOGGER.warning(f"{path} was damaged ({problem}); rebuilt from {out / 'spec.toml'} (derived state)")
    return dict(expected)


def current_keys(out: str | Path) -> set[str] | None:
    """The keys of the cells of the spec last run into ``out`` (None where no run has recorded them).

    Parameters
    ----------
    out : str or pathlib.Path
        The study's results folder.

    Returns
    -------
    set of str or None
        The cell keys (see :func:`current_cells`).
    """
    found = current_cells(out)
    return None if found is None else set(found)


def _record_rows(record: dict) -> list[dict]:
    """The tidy rows of one verified cell record."""
    diagnostics, timings = record.get("diagnostics", {}), record.get("timings", {})
    common = {
        **record["cell"],
        "status": record["status"],
        "error": record.get("error"),
        "max_r_hat": diagnostics.get("max_r_hat"),
        "min_ess_bulk": diagnostics.get("min_ess_bulk"),
        "divergences": diagnostics.get("divergences"),
        "converged": diagnostics.get("passed"),
        "fit_seconds": timings.get("fit_seconds"),
        "sampling_seconds": timings.get("sampling_seconds"),
        "compile_seconds": timings.get("compile_seconds"),
        "score_seconds": timings.get("score_seconds"),
        "mle_status": record.get("point_estimate_status", {}).get("mle"),
        "n_train": record.get("n_train"),
        "n_test": record.get("n_test"),
        "key": record["key"],
    }
    rows = []
    if record["status"] != "ok" or not record["rows"]:
        rows.append({**common, "estimate": None, "kind": None, "metric": None, "value": math.nan})
    for row in record["rows"]:
        rows.append({**common, **row, "value": math.nan if row["value"] is None else float(row["value"])})
    return rows
