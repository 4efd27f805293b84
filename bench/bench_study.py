"""Benchmark of comparison studies (issue 15): throughput on Dask vs serial, per-cell overhead, worker memory, and
the same study against an external scheduler.

The study: 200 small cells, a MAP / exact / NUTS mix on ``seed001_gaussians`` (n = 2,000 generated rows): logistic
regression by NUTS (2 chains x 200 draws, its MLE and MAP beside it), naive Bayes by exact draws, gcc shared by
exact draws (inverse-Wishart prior), over 10 training sizes (20 ... 200) and repeats — 200 cells in all.

- ``serial``: every cell one after another (``run_study(serial=True)``) in a child process pinned like a worker
  (the workers' environment: BLAS, OpenMP, numba and XLA at one thread each), its imports included; the baseline,
  so that the ratio measures parallelism (issue 30: the serial process used 116% CPU before, which capped the ratio).
- ``local``: a ``LocalCluster`` of 2 process workers with one thread each (``bayesclass study --workers 2``).
- ``external``: ``dask scheduler`` and two ``dask worker --nthreads 1`` processes started by this bench on
  localhost, the study run with ``--scheduler tcp://127.0.0.1:PORT`` (proves the flag; same numbers).
- ``guarded`` / ``unguarded`` script: the same study (2 workers) run by ``python script.py``, with its code
  under ``if __name__ == "__main__":`` and as a plain script without the guard (whose workers must not import
  it), twice each in the order guarded, unguarded, unguarded, guarded; ``--scripts`` runs only these. Printed:
  each script's wall time (interpreter start, imports, cluster start, cells) and the study's own time, and whether
  their tables equal each other (and serial's).

Each run writes to a fresh results folder (cold: no record to skip) with its own empty on-disk compile caches
(JAX, PyTensor, numba), so serial and local both start cold; each Dask worker pays its own imports and first
compiles, which are in its time. Printed: wall time, cells per second and cells per core-second of each run, the
throughput ratio local / serial (**target >= 1.7x on 2 cores**, issue 30), the per-cell overhead (**target <=
0.3 s**: the serial run's wall time per cell minus its mean in-cell time (fit + scoring), i.e. the process start,
splitting, diagnostics, recording and bookkeeping outside the fit), the CPU share of the serial process, the peak
memory (VmHWM) of each worker process, and whether the runs gave identical tables. ``--example``: the built-in
example study (``bayesclass study --write-example``, 60 cells), serial against 2 workers only.

Run::

    .venv/bin/python bench/bench_study.py            # ~6 min on 2 cores
    .venv/bin/python bench/bench_study.py --example  # the example study, serial vs 2 workers (~2 min)
    .venv/bin/python bench/bench_study.py --quick    # 6 cells of 2 x 50 draws, each script once, no verdicts
    .venv/bin/python bench/bench_study.py --quick --scripts   # guarded vs unguarded script only
    .venv/bin/python bench/bench_study.py --json out.json
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness import Session, arguments

TARGET_RATIO = 1.7
TARGET_OVERHEAD_S = 0.3

SPEC = """
name = "bench"
seed = 0
training_sizes = {sizes}
repeats = {repeats}
test_fraction = 0.3

[sampler]
draws = {draws}
tune = {draws}
chains = 2

[[models]]
family = "logistic"
method = "nuts"
point_estimates = ["mle", "map"]

[[models]]
family = "naive_bayes"
method = "exact"
point_estimates = ["mle", "map"]

[[models]]
family = "gcc"
options = {{ prior = {{ covariance_prior = "inverse_wishart" }} }}
method = "exact"
point_estimates = ["mle", "map"]
label = "gcc shared"

[[datasets]]
name = "seed001_gaussians"
generator = {{ n = 2000, random_seed = 1 }}
"""

COMPARED = ["dataset", "model", "size", "repeat", "estimate", "metric", "value", "key"]

#: the study run by a script; ``{guard}`` is empty (a plain script) or the main guard
SCRIPT = """
import sys
import time

import bayesclass.study as bs

{guard}start = time.perf_counter()
{indent}table = bs.run(bs.read_spec(sys.argv[1]), sys.argv[2], workers=2, progress=False)
{indent}print(time.perf_counter() - start)
"""


def script_run(spec_path: Path, out: Path, *, guarded: bool) -> tuple[float, float]:
    """(wall time of ``python script.py``, the study's time inside it) for the study run by a script."""
    script = out.with_suffix(".py")
    indent = "    " if guarded else ""
    script.write_text(SCRIPT.format(guard='if __name__ == "__main__":\n    ' if guarded else "", indent=indent))
    start = time.perf_counter()
    done = subprocess.run([sys.executable, str(script), str(spec_path), str(out)], capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"the {'guarded' if guarded else 'unguarded'} script failed:\n{done.stderr[-3000:]}")
    return wall, float(done.stdout.split()[-1])


def scripts(spec, spec_path: Path, scratch: Path, n_cells: int, quick: bool = False) -> dict:
    """Run the study from a guarded and from an unguarded script, twice each in the order guarded, unguarded,
    unguarded, guarded (a load that drifts over the runs weighs on both alike; once each with ``quick``); print
    and return their times."""
    import bayesclass.study as bs

    times: dict[str, list[tuple[float, float]]] = {"guarded": [], "unguarded": []}
    order = ("guarded", "unguarded") if quick else ("guarded", "unguarded", "unguarded", "guarded")
    for run, name in enumerate(order):
        wall, study = script_run(spec_path, scratch / f"{name}{run}", guarded=name == "guarded")
        times[name].append((wall, study))
        print(f"{name:9} script {wall:7.1f} s wall, study {study:7.1f} s  {n_cells / study:5.2f} cells/s", flush=True)
    numbers: dict = {}
    for name, pairs in times.items():
        numbers[f"{name}_script_s"] = [wall for wall, _ in pairs]
        numbers[f"{name}_study_s"] = [study for _, study in pairs]
    means = {name: sum(numbers[f"{name}_study_s"]) / len(numbers[f"{name}_study_s"]) for name in times}
    print(f"mean study time: guarded {means['guarded']:.1f} s, unguarded {means['unguarded']:.1f} s "
          f"(unguarded / guarded {means['unguarded'] / means['guarded']:.2f})")  # fmt: skip
    tables = [bs.load(folder)[COMPARED] for folder in sorted(scratch.glob("*guarded[0-9]"))]
    numbers["scripts_identical"] = all(table.equals(tables[0]) for table in tables)
    print(f"guarded and unguarded scripts' tables identical: {numbers['scripts_identical']}")
    return numbers


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def worker_peaks(out: Path) -> dict[int, float]:
    """Peak RSS (GB) of every process that ran cells, from the VmHWM the cell records carry."""
    peaks: dict[int, float] = {}
    for path in (out / "cells").glob("*.json"):
        record = json.loads(path.read_text())
        pid = record["worker_pid"]
        peaks[pid] = max(peaks.get(pid, 0.0), record.get("peak_rss_gb") or 0.0)
    return peaks


def run_serial(spec_path: Path, out: Path, cache: Path) -> tuple[float, float, float]:
    """(wall s, in-cell s, CPU share) of the study run serially in a child process pinned like a worker.

    The child gets the workers' environment (:data:`WORKER_ENV`: BLAS, OpenMP, numba and XLA at one thread) and
    its own compile caches, so that the ratio local / serial measures parallelism, not the serial process's own
    threads (before: the serial process used 116% CPU, which capped what two workers could add at 1.7x).
    """
    from bayesclass.inference.studies.runner import WORKER_ENV

    env = {**os.environ, **WORKER_ENV, **cache_env(cache)}
    start = time.perf_counter()
    done = subprocess.run([sys.executable, __file__, "--serial-child", str(spec_path), str(out)], env=env,
                          capture_output=True, text=True)  # fmt: skip
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"the serial child failed:\n{done.stderr[-3000:]}")
    in_cell, cpu_share = (float(value) for value in done.stdout.split()[-2:])
    return wall, in_cell, cpu_share


def serial_child(spec_path: Path, out: Path) -> None:
    """Body of ``--serial-child``: run the study serially; print the in-cell seconds and this process's CPU share."""
    import bayesclass.study as bs

    start, cpu_before = time.perf_counter(), os.times()
    table = bs.run(bs.read_spec(spec_path), out, serial=True, progress=False)
    cells = table.drop_duplicates("key")
    cpu = os.times()
    share = (cpu.user + cpu.system - cpu_before.user - cpu_before.system) / (time.perf_counter() - start)
    print(float((cells["fit_seconds"] + cells["score_seconds"]).sum()), share)


def cache_env(cache: Path) -> dict[str, str]:
    """Compile caches of one run under ``cache`` (every run starts from the same empty disk caches)."""
    return {
        "JAX_COMPILATION_CACHE_DIR": str(cache / "jax"),
        "PYTENSOR_FLAGS": f"base_compiledir={cache / 'pytensor'}",
        "NUMBA_CACHE_DIR": str(cache / "numba"),
        "BAYESCLASS_CACHE_DIR": str(cache / "bayesclass"),
    }


def launches(spec, spec_path: Path, scratch: Path, n_cells: int, session: Session, *, scripts_too: bool = True):
    """Serial, local, external and the two scripts; print and return their numbers."""
    import bayesclass.study as bs

    serial_s, in_cell, cpu_share = run_serial(spec_path, scratch / "serial", scratch / "cache-serial")
    serial = bs.load(scratch / "serial")
    overhead = (serial_s - in_cell) / n_cells
    print(
        f"serial   {serial_s:7.1f} s  {n_cells / serial_s:5.2f} cells/s  {n_cells / serial_s:5.2f} cells per "
        f"core-second  (a child process pinned to one thread like a worker, imports included; in-cell "
        f"{in_cell:.1f} s; it used {cpu_share:.0%} CPU)",
        flush=True,
    )

    saved = {name: os.environ.get(name) for name in cache_env(scratch)}
    os.environ.update(cache_env(scratch / "cache-local"))  # the workers inherit this process's environment
    start = time.perf_counter()
    try:
        local = bs.run(spec, scratch / "local", workers=2, progress=False)
    finally:
        for name, value in saved.items():
            os.environ.pop(name) if value is None else os.environ.__setitem__(name, value)
    local_s = time.perf_counter() - start
    print(f"local    {local_s:7.1f} s  {n_cells / local_s:5.2f} cells/s  {n_cells / local_s / 2:5.2f} cells per "
          "core-second  (2 workers x 1 thread, cluster start included)", flush=True)  # fmt: skip
    if not scripts_too:  # the example study: serial against local only
        ratio = serial_s / local_s
        session.verdicts.check("example study: throughput local / serial", ratio, TARGET_RATIO, ">=",
                               baseline="serial run pinned to one thread", seconds=local_s,
                               baseline_seconds=serial_s)  # fmt: skip
        identical = serial[COMPARED].equals(local[COMPARED])
        print(f"serial and local tables identical: {identical}")
        return {"cells": n_cells, "serial_s": serial_s, "local_s": local_s, "ratio": ratio, "identical": identical}

    port = free_port()
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    scheduler = subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", str(port),
         "--dashboard-address", ":0"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
    )  # fmt: skip
    workers = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "distributed.cli.dask_worker",
                f"tcp://127.0.0.1:{port}",
                "--nthreads",
                "1",
                "--nworkers",
                "1",
                "--no-dashboard",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
        )  # fmt: skip
        for _ in range(2)
    ]
    try:
        from distributed import Client

        with Client(f"tcp://127.0.0.1:{port}", timeout="60s") as client:
            client.wait_for_workers(2, timeout=120)
        start = time.perf_counter()
        external = bs.run(spec, scratch / "external", scheduler=f"tcp://127.0.0.1:{port}", progress=False)
        external_s = time.perf_counter() - start
    finally:
        for process in [*workers, scheduler]:
            process.terminate()
        for process in [*workers, scheduler]:
            process.wait(timeout=60)
    print(f"external {external_s:7.1f} s  {n_cells / external_s:5.2f} cells/s  (dask scheduler + 2 dask workers)")

    identical = serial[COMPARED].equals(local[COMPARED]) and serial[COMPARED].equals(external[COMPARED])
    ratio = serial_s / local_s
    peaks = worker_peaks(scratch / "local")
    print()
    session.verdicts.check("throughput local / serial", ratio, TARGET_RATIO, ">=",
                           baseline="serial run pinned to one thread",
                           seconds=local_s, baseline_seconds=serial_s)  # fmt: skip
    session.verdicts.check("per-cell overhead (serial wall - in-cell time, per cell)", overhead, TARGET_OVERHEAD_S,
                           "<=", baseline="none (absolute)", unit=" s")  # fmt: skip
    print("peak RSS per local worker: " + ", ".join(f"{gb:.2f} GB" for gb in sorted(peaks.values())))
    print(f"serial, local and external tables identical: {identical}")
    numbers = scripts(spec, spec_path, scratch, n_cells, session.quick)
    identical = identical and serial[COMPARED].equals(bs.load(scratch / "unguarded1")[COMPARED])
    print(f"... and the unguarded script's: {identical}")
    numbers |= {
        "cells": n_cells, "serial_s": serial_s, "local_s": local_s, "external_s": external_s, "ratio": ratio,
        "overhead_s": overhead, "worker_peak_gb": sorted(peaks.values()), "identical": identical,
    }  # fmt: skip
    return numbers


def main() -> None:
    """Run the study serially, on a local cluster, on an external scheduler and from two scripts."""
    if len(sys.argv) == 4 and sys.argv[1] == "--serial-child":
        serial_child(Path(sys.argv[2]), Path(sys.argv[3]))
        return
    parser = arguments(__doc__, quick="6 cells (2 sizes x 1 repeat) of 2 chains x 50 draws, each script once",
                       seed="unused (the spec's seed is 0)", seed_default=0)  # fmt: skip
    parser.add_argument("--draws", type=int, default=None, help="draws (and tuning steps) per chain: the cell size "
                        "(default 200; 50 with --quick)")  # fmt: skip
    parser.add_argument("--scripts", action="store_true", help="only the guarded vs unguarded script runs")
    parser.add_argument("--example", action="store_true", help="the built-in example study, serial vs 2 workers")
    args = parser.parse_args()
    import bayesclass.study as bs

    draws = args.draws or (50 if args.quick else 200)
    sizes = [20, 40] if args.quick else [20, 40, 60, 80, 100, 120, 140, 160, 180, 200]
    repeats = 1 if args.quick else 7  # 3 models x 10 sizes x 7 repeats = 210 cells (200 or more)
    settings = {"sizes": sizes, "repeats": repeats, "draws": draws, "scripts_only": args.scripts}
    with Session("study", args, settings) as session:
        scratch = Path(tempfile.mkdtemp(prefix="bench_study_"))
        try:
            spec_path = scratch / "spec.toml"
            if args.example:
                from bayesclass.inference.studies.spec import EXAMPLE_SPEC

                spec_path.write_text(EXAMPLE_SPEC)
            else:
                spec_path.write_text(SPEC.format(sizes=sizes, repeats=repeats, draws=draws))
            spec = bs.read_spec(spec_path)
            n_cells = len(bs.cells(spec))
            print(
                f"{n_cells} cells: logistic NUTS, naive Bayes exact, gcc exact; sizes {sizes[0]}..{sizes[-1]}; "
                f"2 chains x {draws} draws",
                flush=True,
            )
            if args.example:
                print(f"the example study instead: {n_cells} cells", flush=True)
                session.details.update(launches(spec, spec_path, scratch, n_cells, session, scripts_too=False))
            elif args.scripts:
                session.details.update(scripts(spec, spec_path, scratch, n_cells, args.quick))
            else:
                session.details.update(launches(spec, spec_path, scratch, n_cells, session))
        finally:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
