"""The one benchmark harness every script in bench/ uses.

- timing: :func:`time_best` (best of N, each repeat doing the real work: ``prepare``
  builds fresh inputs outside the timed call, so per-dataset caches of the models are
  never timed as work; :func:`fresh` is such an input);
- convergence: :func:`convergence` condenses a posterior through
  ``bayesclass.inference.diagnose`` (r_hat, bulk/tail ESS, MCSE, divergences), the same
  numbers a user's ``bayesclass diagnose`` prints;
- verdicts: :class:`Verdicts` prints ``PASS``/``MISS`` lines of ratios against a named
  baseline and records them, one flat record per line (:data:`RECORD_KEYS`); in a ``--quick``
  run nothing is judged (every line information, every record's verdict "info");
- labels: :func:`fitted_by` names the method and backend a fit used, read from its result;
- checking a report: :func:`report_problems` (the schema below; a quick report judged nothing);
- one JSON schema (:data:`SCHEMA`, written atomically by :func:`write_report`)::

      {"schema": "bayesclass-bench/2", "bench": "logistic", "settings": {...},
       "records": [{"bench": "logistic", "case": ..., "baseline": ..., "value": ..., "unit": "x",
                    "target": ">= 3" | null, "verdict": "PASS" | "MISS" | "info", "cache": "cold" | "warm" | null,
                    "seconds": ..., "baseline_seconds": ..., "ess_bulk_min": ..., "ess_tail_min": ...,
                    "r_hat_max": ..., "divergences": ...}],
       "details": {...every measured number, script-specific...},
       "versions": {...}, "machine": {"cpus": ..., "busy_fraction_before_start": ...,
       "load_average_start": [...], "load_average_end": [...], "other_processes_cpu_s": ...},
       "total_seconds": ...}

- the run around it: :func:`arguments` (``--quick``, ``--json PATH``, ``--seed N``, the same in every
  script) and :class:`Session` (header with versions and the machine state, verdicts, footer with the
  CPU time other processes took, the JSON report);
- the machine state before and after a run, package versions, a nutpie warm-up and
  PyMC's own NUTS as a baseline sampler.

The scripts run as files (``python bench/bench_x.py``), so this folder is on
``sys.path`` and they import this module by name.
"""

from __future__ import annotations

import math
import os
import sys
import time

__all__ = [
    "RECORD_KEYS",
    "SCHEMA",
    "Session",
    "Verdicts",
    "arguments",
    "convergence",
    "cpu_snapshot",
    "fitted_by",
    "fresh",
    "machine_busy_fraction",
    "machine_state_at_end",
    "machine_state_before_start",
    "others_cpu_seconds",
    "report_problems",
    "sample_pymc_nuts",
    "calls_per_round",
    "time_best",
    "time_once",
    "verdict",
    "versions",
    "warm_up_nutpie",
    "write_report",
]

SCHEMA = "bayesclass-bench/2"

#: the keys of every record in a report's "records" list (None where a key does not apply)
RECORD_KEYS = (
    "bench",
    "case",
    "baseline",
    "value",
    "unit",
    "target",
    "verdict",
    "cache",
    "seconds",
    "baseline_seconds",
    "ess_bulk_min",
    "ess_tail_min",
    "r_hat_max",
    "divergences",
)

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


def time_best(function, repeats: int = 3, *, prepare=None, number: int = 1) -> tuple[float, object]:
    """(best seconds per call over ``repeats`` rounds, the last return value).

    Each round makes ``number`` calls. ``prepare()``, when given, is called once per call,
    before the round and outside the timed section, and its result is passed to that call:
    give every call fresh inputs (:func:`fresh`) so that a per-dataset cache hit is never
    timed as work ("cold" timings). Without ``prepare``, the calls take no argument.
    """
    best, value = math.inf, None
    for _ in range(repeats):
        inputs = [() if prepare is None else (prepare(),) for _ in range(number)]
        start = time.perf_counter()
        for arguments in inputs:
            value = function(*arguments)
        best = min(best, (time.perf_counter() - start) / number)
        del inputs
    return best, value


def time_once(function, *arguments) -> tuple[float, object]:
    """(seconds, return value) of one call."""
    start = time.perf_counter()
    value = function(*arguments)
    return time.perf_counter() - start, value


def calls_per_round(function, *, prepare=None, budget_s: float = 0.05) -> int:
    """Calls per :func:`time_best` round so that one round lasts about ``budget_s`` (at least 1).

    With ``prepare``, the trial call gets a fresh input too (it is as cold as the timed ones)."""
    seconds, _ = time_once(function, *(() if prepare is None else (prepare(),)))
    return max(1, int(budget_s / max(seconds, 1e-9)))


def fresh(dataset):
    """A new Dataset object with the same contents: the models' per-dataset caches (keyed by the object)
    miss, so the timed call does the whole computation."""
    import dataclasses

    return dataclasses.replace(dataset)


def convergence(posterior, sample_stats=None, *, var_names=None) -> dict:
    """Worst-case convergence numbers of ``posterior`` (variables ``var_names``) from the verdict's convergence table.

    Returns ``min_ess_bulk``, ``min_ess_tail``, ``max_r_hat``, ``max_mcse_mean``, ``divergences``
    (None without ``sample_stats``), ``min_ess_bulk_by_variable`` and ``mean_tree_steps`` (NaN
    when the sampler does not report ``n_steps``).
    """
    from bayesclass.inference.criticism.diagnostics import convergence_table

    posterior = posterior if var_names is None else posterior[list(var_names)]
    table = convergence_table(posterior)  # the verdict's own table (a bare posterior has no result attrs)
    by_variable = table["ess_bulk"].groupby(lambda label: str(label).split("[")[0]).min()
    diverging = None if sample_stats is None or "diverging" not in sample_stats else sample_stats["diverging"]
    return {
        "min_ess_bulk": float(table["ess_bulk"].min()),
        "min_ess_tail": float(table["ess_tail"].min()),
        "max_r_hat": float(table["r_hat"].max()),
        "max_mcse_mean": float(table["mcse_mean"].max()),
        "divergences": None if sample_stats is None else (0 if diverging is None else int(diverging.sum())),
        "min_ess_bulk_by_variable": {str(name): float(value) for name, value in by_variable.items()},
        "mean_tree_steps": float(sample_stats["n_steps"].mean())
        if sample_stats is not None and "n_steps" in sample_stats
        else math.nan,
    }


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
    """Print how busy the machine is before a benchmark (and a warning when it is).

    Returns (busy fraction, load average)."""
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


def machine_state_at_end(
    total: float, cpu_before: tuple[float, float] | None
) -> tuple[float | None, tuple[float, float, float]]:
    """Print the run time, the load and the CPU time other processes took since ``cpu_before``.

    Returns (that CPU time, load average)."""
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
    """``pm.sample`` with PyMC's own NUTS.

    Returns (trace, wall seconds, sampling seconds, where the sampling time came from)."""
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


def fitted_by(result) -> str:
    """How ``result`` was fitted, read from the result itself: "nuts (blackjax)", "gibbs", "exact", "map" ...

    Every timed fit is labelled by this, never by a hard-coded string, so a label follows a family's default."""
    from bayesclass.inference.result import result_info

    info = result_info(result)
    return f"{info.method} ({info.sampler_backend})" if info.sampler_backend else info.method


class Verdicts:
    """Ratio lines against named baselines: printed as they are checked, kept as records of one schema."""

    def __init__(self, bench: str, *, quick: bool = False) -> None:
        self.bench = bench
        self.quick = quick  # a --quick run judges nothing: every line is information
        self.records: list[dict] = []

    def check(
        self,
        case: str,
        value: float,
        target: float | None = None,
        sense: str = ">=",
        *,
        baseline: str,
        unit: str = "x",
        cache: str | None = None,
        seconds: float | None = None,
        baseline_seconds: float | None = None,
        run: dict | None = None,
    ) -> bool:
        """Print and record ``case``: ``value`` (ours against ``baseline``) against ``target``.

        ``sense`` is ">=" or "<="; no target: an information line. ``cache`` says whether our side was
        timed "cold" (every per-process cache bypassed or cleared) or "warm" (a cache hit, on purpose).
        ``run``, a :func:`convergence` result, adds our side's ESS, r_hat and divergences to the record.
        In a ``--quick`` run (tiny data, few draws) the target is not judged: the line is information, the
        record's ``target`` null and its ``verdict`` "info" (and the call returns True).
        """
        if sense not in (">=", "<="):
            raise ValueError(f"sense must be '>=' or '<=', got {sense!r}")
        if self.quick:
            target = None
        passed = True if target is None else (value >= target if sense == ">=" else value <= target)
        result = "info" if target is None else verdict(passed)
        state = f"  [{cache}]" if cache else ""
        goal = "(information; --quick judges no target)" if self.quick else "(information)"
        goal = goal if target is None else f"target {sense} {target:g}{unit}   {result}"
        print(f"  {case:<62} {value:9.3g}{unit}   {goal}   vs {baseline}{state}")
        run = run or {}
        record = {
            "bench": self.bench,
            "case": case,
            "baseline": baseline,
            "value": value,
            "unit": unit,
            "target": None if target is None else f"{sense} {target:g}",
            "verdict": result,
            "cache": cache,
            "seconds": seconds,
            "baseline_seconds": baseline_seconds,
            "ess_bulk_min": run.get("min_ess_bulk"),
            "ess_tail_min": run.get("min_ess_tail"),
            "r_hat_max": run.get("max_r_hat"),
            "divergences": run.get("divergences"),
        }
        assert tuple(record) == RECORD_KEYS
        self.records.append(record)
        return passed


def machine_record(busy_before, load_before, others, load_after) -> dict:
    """The "machine" part of the JSON report from what the machine-state functions returned."""
    return {
        "cpus": os.cpu_count(),
        "busy_fraction_before_start": busy_before,
        "load_average_start": list(load_before),
        "load_average_end": list(load_after),
        "other_processes_cpu_s": others,
    }


def write_report(
    path, *, bench: str, settings: dict, records: list[dict], details: dict, machine: dict, total_seconds: float
) -> None:
    """Write one benchmark's numbers as JSON in the schema of the module docstring, atomically."""
    import json

    from bayesclass.inference.io import atomic_write

    report = {
        "schema": SCHEMA,
        "bench": bench,
        "settings": settings,
        "records": records,
        "details": details,
        "versions": versions(),
        "machine": machine,
        "total_seconds": total_seconds,
    }
    with atomic_write(path) as temporary:
        temporary.write_text(json.dumps(report, indent=2, default=float) + "\n")


def arguments(doc: str, *, quick: str, seed: str = "seed of the first fit; default 1", seed_default: int = 1):
    """An argument parser with the options every script has: ``--quick``, ``--json PATH``, ``--seed N``."""
    import argparse

    parser = argparse.ArgumentParser(
        description=doc.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help=f"smoke test: {quick}")
    parser.add_argument("--json", metavar="PATH", help="also write every number as JSON to PATH (bench/README.md)")
    parser.add_argument("--seed", type=int, default=seed_default, help=seed)
    return parser


class Session:
    """One benchmark run: ``with Session("logistic", args, settings) as run: ...``.

    On entry: a header with the package versions, the core count and how busy the machine is.
    Inside: ``run.verdicts`` (:class:`Verdicts`) and ``run.details`` (every measured number).
    On a normal exit: the footer (run time, CPU time other processes took) and, with ``--json``,
    the report written atomically.
    """

    def __init__(self, bench: str, args, settings: dict) -> None:
        self.bench, self.json_path = bench, getattr(args, "json", None)
        self.settings = {**settings, "seed": getattr(args, "seed", None), "quick": bool(getattr(args, "quick", False))}
        self.verdicts = Verdicts(bench, quick=self.settings["quick"])
        self.details: dict = {}

    def __enter__(self) -> Session:
        self.started = time.perf_counter()
        print(f"bench_{self.bench}.py  {' '.join(f'{k} {v}' for k, v in versions().items())}  cpus {os.cpu_count()}")
        settings = ", ".join(f"{key}={value}" for key, value in self.settings.items())
        tag = "   [QUICK: a smoke test, not the benchmark's settings]" if self.quick else ""
        print(f"settings: {settings}{tag}")
        self.busy_before, self.load_before = machine_state_before_start()
        self.cpu_before = cpu_snapshot()
        return self

    @property
    def quick(self) -> bool:
        return self.settings["quick"]

    def section(self, title: str) -> None:
        """Print the heading of a block of verdict lines."""
        print(title + ("   [QUICK]" if self.quick else ""))

    def __exit__(self, kind, value, traceback) -> None:
        if kind is not None:
            return
        total = time.perf_counter() - self.started
        others, load_after = machine_state_at_end(total, self.cpu_before)
        if self.json_path:
            write_report(
                self.json_path,
                bench=self.bench,
                settings=self.settings,
                records=self.verdicts.records,
                details=self.details,
                machine=machine_record(self.busy_before, self.load_before, others, load_after),
                total_seconds=total,
            )
            print(f"wrote {self.json_path}")


def report_problems(report) -> list[str]:
    """What makes ``report`` (a parsed ``--json`` file) break the schema of the module docstring; empty when none.

    A ``--quick`` report (``settings.quick`` true) must judge nothing: every record's verdict is "info"."""
    if not isinstance(report, dict):
        return [f"the report is a {type(report).__name__}, not a JSON object"]
    problems = []
    expected = ("schema", "bench", "settings", "records", "details", "versions", "machine", "total_seconds")
    if tuple(report) != expected:
        problems.append(f"top-level keys {list(report)}, expected {list(expected)}")
    if report.get("schema") != SCHEMA:
        problems.append(f"schema {report.get('schema')!r}, expected {SCHEMA!r}")
    settings = report.get("settings")
    quick = isinstance(settings, dict) and settings.get("quick") is True
    records = report.get("records")
    if not isinstance(records, list):
        return [*problems, f"records is a {type(records).__name__}, not a list"]
    for index, record in enumerate(records):
        if not isinstance(record, dict) or tuple(record) != RECORD_KEYS:
            problems.append(f"record {index} has keys {list(record) if isinstance(record, dict) else record!r}")
            continue
        if record["bench"] != report.get("bench"):
            problems.append(f"record {index} names bench {record['bench']!r}, the report {report.get('bench')!r}")
        if record["verdict"] not in ("PASS", "MISS", "info"):
            problems.append(f"record {index} has verdict {record['verdict']!r}")
        elif (record["target"] is None) != (record["verdict"] == "info"):
            problems.append(f"record {index}: target {record['target']!r} with verdict {record['verdict']!r}")
        if quick and record["verdict"] != "info":
            problems.append(f"record {index} ({record['case']}) judged {record['verdict']} in a --quick run")
    if not isinstance(report.get("total_seconds"), (int, float)):
        problems.append(f"total_seconds is {report.get('total_seconds')!r}")
    return problems
