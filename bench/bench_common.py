"""Helpers shared by the benchmark scripts: package versions, machine load, nutpie warm-up, verdicts.

The scripts run as files (``python bench/bench_x.py``), so this folder is on
``sys.path`` and they import this module by name.
"""

from __future__ import annotations

import math
import os
import sys
import time

__all__ = [
    "best_of", "cpu_snapshot", "machine_busy_fraction", "machine_state_at_end", "machine_state_before_start", "others_cpu_seconds",
    "sample_pymc_nuts", "verdict", "versions", "warm_up_nutpie",
]  # fmt: skip

PACKAGES = ("pymc", "pytensor", "nutpie", "numba", "arviz", "arviz-stats", "numpy", "scipy", "scikit-learn")


def versions(names: tuple[str, ...] = PACKAGES) -> dict:
    """Installed versions of ``names`` and of Python."""
    from importlib import metadata

    found = {}
    for name in names:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = "not installed"
    found["python"] = sys.version.split()[0]
    return found


def best_of(function, repeats: int = 3) -> tuple[float, object]:
    """(the shortest of ``repeats`` wall times of ``function()``, its last return value)."""
    best, value = math.inf, None
    for _ in range(repeats):
        start = time.perf_counter()
        value = function()
        best = min(best, time.perf_counter() - start)
    return best, value


def machine_busy_fraction(seconds: float = 1.0) -> float | None:
    """Fraction of all cores busy over ``seconds`` (from /proc/stat; None where there is none)."""

    def ticks() -> tuple[int, int]:
        with open("/proc/stat") as stat:
            values = [int(v) for v in stat.readline().split()[1:]]
        idle = values[3] + (values[4] if len(values) > 4 else 0)  # idle + iowait
        return sum(values[:8]), idle

    try:
        total_0, idle_0 = ticks()
        time.sleep(seconds)
        total_1, idle_1 = ticks()
    except (OSError, ValueError, IndexError):
        return None
    total = total_1 - total_0
    return None if total <= 0 else 1.0 - (idle_1 - idle_0) / total


def machine_state_before_start() -> tuple[float | None, tuple[float, float, float]]:
    """Print how busy the machine is before a benchmark (and a warning when it is); return (busy fraction, load average)."""
    load = os.getloadavg()
    busy = machine_busy_fraction()
    busy_text = "unknown" if busy is None else f"{100 * busy:.0f}%"
    print(
        f"before start: other processes kept {busy_text} of all cores busy over 1 s; "
        f"load average (1/5/15 min) {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
    )
    if busy is not None and busy > 0.25:
        print(
            "WARNING: the machine is busy before the benchmark starts; timings (multi-threaded BLAS above all) "
            "will be noisy: rerun on an idle machine"
        )
    print()
    return busy, load


def cpu_snapshot() -> tuple[float, float] | None:
    """(busy CPU seconds of the whole machine, CPU seconds of this process and its reaped children)."""
    try:
        with open("/proc/stat") as stat:
            values = [int(v) for v in stat.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    ticks = os.sysconf("SC_CLK_TCK")
    busy = (sum(values[:8]) - values[3] - (values[4] if len(values) > 4 else 0)) / ticks
    own = os.times()
    return busy, own.user + own.system + own.children_user + own.children_system


def others_cpu_seconds(before: tuple[float, float] | None) -> float | None:
    """CPU seconds that OTHER processes used since ``before`` (machine busy time minus our own)."""
    after = cpu_snapshot()
    if before is None or after is None:
        return None
    return max((after[0] - before[0]) - (after[1] - before[1]), 0.0)


def machine_state_at_end(total: float, cpu_before: tuple[float, float] | None) -> tuple[float | None, tuple[float, float, float]]:
    """Print the run time, the load and the CPU time other processes took since ``cpu_before``; return (that time, load)."""
    others = others_cpu_seconds(cpu_before)
    load = os.getloadavg()
    print(
        f"total benchmark time {total:.0f} s; load average (1/5/15 min) at the end: "
        f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f} (the benchmark itself keeps about 1-2 busy)"
    )
    if others is not None:
        share = others / (total * (os.cpu_count() or 1))
        print(f"other processes used {others:.0f} CPU s during the benchmark ({100 * share:.0f}% of all cores)")
        if share > 0.05:
            print("WARNING: other processes competed for the cores during the run; timings are unreliable: rerun idle")
    return others, load


def warm_up_nutpie(chains: int) -> float:
    """Compile and sample a 1-parameter model, so that one-time numba/PyTensor start-up costs of
    the process are not charged to whichever sampler happens to run first."""
    import nutpie
    import pymc as pm

    start = time.perf_counter()
    with pm.Model() as tiny:
        pm.Normal("x", 0.0, 1.0)
    nutpie.sample(nutpie.compile_pymc_model(tiny), draws=10, tune=10, chains=chains, seed=0, progress_bar=False)
    return time.perf_counter() - start


def sample_pymc_nuts(model, *, draws: int, tune: int, chains: int, seed: int):
    """``pm.sample`` with PyMC's own NUTS: (trace, wall seconds, sampling seconds, where the sampling time came from)."""
    import logging

    import pymc as pm

    logging.getLogger("pymc").setLevel(logging.ERROR)  # after the import, which sets INFO
    start = time.perf_counter()
    trace = pm.sample(
        draws=draws,
        tune=tune,
        chains=chains,
        cores=chains,
        nuts_sampler="pymc",
        random_seed=seed,
        progressbar=False,
        compute_convergence_checks=False,
        model=model,
    )
    wall = time.perf_counter() - start
    for attrs, where in ((trace["sample_stats"].attrs, "sample_stats.attrs"), (trace.attrs, "root attrs")):
        if "sampling_time" in attrs:
            return trace, wall, float(attrs["sampling_time"]), where
    return trace, wall, wall, "wall time (no sampling_time attr)"


def verdict(passed: bool) -> str:
    return "PASS" if passed else "MISS"
