"""Benchmark of the HTML report and of ``diagnose`` on a fitted model, per family (issues 14 and 29).

Fits (not timed): each family on the penguins data (``bc.load("penguins", missing="drop")``, 333 rows),
standardised, seed 0, at the default sampler settings (4 chains x 1,000 draws after 1,000 tuning steps; the
default method of each family: logistic NUTS, naive Bayes and gcc exact draws, the GP's Gibbs sampler):

- ``logistic``, ``naive_bayes``: every column;
- ``gcc``: the four measurements (bill length and depth, flipper length, body mass);
- ``gp``: the four measurements, the binary target ``sex`` (the GP is binary), with its latent ``f`` over the
  333 rows in the posterior.

Timed, each in a FRESH subprocess (cold: nothing imported, no figure drawn yet in the process), from the first
line of the script:

- ``load``: ``import bayesclass; bc.load_result(run)`` (xarray, netCDF4, pandas imported, the file read);
- ``report``: after that load, ``bc.report(result)`` and ``bc.write_report`` (what ``bayesclass report --run r.nc``
  does: evaluation, figures, the page written), imports of arviz_stats, matplotlib and arviz_plots included;
- ``diagnose``: after that load, ``bc.diagnose(result)`` and printing it with its summary table (what
  ``bayesclass diagnose --run r.nc`` prints), the import of arviz_stats included;
- ``cli``: ``bayesclass report --run r.nc --out r.html`` and ``bayesclass diagnose --run r.nc`` from process
  start to exit (information).

Each is printed in wall seconds (the targets' measure) and in CPU seconds of the process (``time.process_time``,
all its threads): on the shared 2-core machine other processes stretch the wall time, much less the CPU time.

**Targets** (issue 29): report <= 5 s after the load and diagnose <= 1 s after the load, every family; every
page <= 3 MB (issue 14). ``--quick`` fits logistic only, 2 chains x 100 draws, and prints the seconds
without verdicts. The fits are made in one process before the timings (not timed).

Run::

    .venv/bin/python bench/bench_report.py                  # ~4 min on 2 cores, fits included
    .venv/bin/python bench/bench_report.py --quick          # logistic only, 2 x 100 draws
    .venv/bin/python bench/bench_report.py --fits DIR       # keep the fits in DIR and reuse them
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness import Session, arguments, fitted_by

REPORT_TARGET_S = 5.0
DIAGNOSE_TARGET_S = 1.0
TARGET_MB = 3.0
FAMILIES = ("logistic", "naive_bayes", "gcc", "gp")
QUICK_FAMILIES = ("logistic",)  # every code path of this script (the families differ only in the library's work)

FIT = r"""
import sys, warnings
warnings.simplefilter("ignore")
import bayesclass as bc
quick, seed, folder, families = sys.argv[1] == "quick", int(sys.argv[2]), sys.argv[3], sys.argv[4:]
sampler = bc.SamplerSettings(progressbar=False, **(dict(draws=100, tune=100, chains=2) if quick else {}))
for family in families:
    data = bc.load("penguins", missing="drop", **({"target": "sex"} if family == "gp" else {}))
    if family in ("gcc", "gp"):
        data = data.select_features(["bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g"])
    result = bc.fit(family, data, sampler=sampler, standardize=True, random_seed=seed)
    bc.save_result(result, f"{folder}/{family}-{sys.argv[1]}-seed{seed}.nc")
"""

# one fresh process per measurement: the load, then the report or diagnose, timed from the script's first line
TIMED = r"""
import sys, time, json, warnings
warnings.simplefilter("ignore")
start, start_cpu = time.perf_counter(), time.process_time()
import bayesclass as bc
what, run, out = sys.argv[1], sys.argv[2], sys.argv[3]
result = bc.load_result(run)
loaded, loaded_cpu = time.perf_counter(), time.process_time()
if what == "report":
    bc.write_report(out, bc.report(result))
else:
    report = bc.diagnose(result)
    with open(out, "w") as printed:
        print(report, file=printed)
        print(report.table.to_string(), file=printed)
done, done_cpu = time.perf_counter(), time.process_time()
print(json.dumps({"load_s": loaded - start, "after_load_s": done - loaded, "load_cpu_s": loaded_cpu - start_cpu,
                  "after_load_cpu_s": done_cpu - loaded_cpu}))
"""


def timed(what: str, run: Path, out: Path, env: dict) -> dict:
    """Load ``run`` and time ``what`` ("report" or "diagnose") in a fresh interpreter."""
    done = subprocess.run(
        [sys.executable, "-c", TIMED, what, str(run), str(out)], check=True, env=env, capture_output=True, text=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def cli_seconds(env: dict, *argv: str) -> float:
    """Wall seconds of ``bayesclass ARGV`` from process start to exit."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "bayesclass.cli", *argv], check=True, env=env, capture_output=True)
    return time.perf_counter() - start


def fitted(families: tuple[str, ...], folder: Path, quick: bool, seed: int, env: dict) -> dict[str, Path]:
    """The saved fit of each family in ``folder``: reused where it exists, else fitted now in one process (not
    timed)."""
    mode = "quick" if quick else "default"
    runs = {family: folder / f"{family}-{mode}-seed{seed}.nc" for family in families}
    missing = [family for family, run in runs.items() if not run.exists()]
    if missing:
        subprocess.run([sys.executable, "-c", FIT, mode, str(seed), str(folder), *missing], check=True, env=env)
    return runs


def measure(family: str, run: Path, folder: Path, env: dict) -> dict:
    """Every timing of one family's fit, each in a fresh process."""
    page = folder / f"{family}.html"
    report = timed("report", run, page, env)
    diagnose = timed("diagnose", run, folder / f"{family}-diagnose.txt", env)
    return {
        "load_s": report["load_s"],
        "load_cpu_s": report["load_cpu_s"],
        "report_s": report["after_load_s"],
        "report_cpu_s": report["after_load_cpu_s"],
        "diagnose_load_s": diagnose["load_s"],
        "diagnose_s": diagnose["after_load_s"],
        "diagnose_cpu_s": diagnose["after_load_cpu_s"],
        "report_cli_s": cli_seconds(env, "report", "--run", str(run), "--out", str(folder / f"{family}-cli.html")),
        "diagnose_cli_s": cli_seconds(env, "diagnose", "--run", str(run)),
        "size_mb": page.stat().st_size / 1e6,
    }


def main() -> None:
    parser = arguments(__doc__, quick="logistic only, 2 chains x 100 draws, seconds only (no verdicts)",
                       seed="seed of the fits")  # fmt: skip
    parser.set_defaults(seed=0)
    parser.add_argument("--fits", type=Path, help="folder to keep the fits in and reuse them from (default: a temp)")
    args = parser.parse_args()
    env = {**os.environ, "MPLBACKEND": "Agg"}
    families = QUICK_FAMILIES if args.quick else FAMILIES
    settings = {"data": "penguins (333 rows)", "draws": 100 if args.quick else 1000, "chains": 2 if args.quick else 4,
                "families": list(families)}  # fmt: skip
    with Session("report", args, settings) as session, tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        fits = args.fits or folder
        fits.mkdir(parents=True, exist_ok=True)
        print("wall seconds (CPU seconds of the process, all its threads, in brackets: less sensitive to other load)")
        heads = ("load", 13), ("report", 15), ("diagnose", 13), ("report CLI", 11), ("diagnose CLI", 13)
        print(f"{'family':<12} " + " ".join(f"{head:>{width}}" for head, width in heads) + " page     fitted by")
        import bayesclass as bc

        for family, run in fitted(families, fits, args.quick, args.seed, env).items():
            row = measure(family, run, folder, env) | {"fitted_by": fitted_by(bc.load_result(run))}
            session.details[family] = row
            print(
                f"{family:<12} {row['load_s']:5.2f}s ({row['load_cpu_s']:4.2f}) {row['report_s']:6.2f}s "
                f"({row['report_cpu_s']:5.2f}) {row['diagnose_s']:5.2f}s ({row['diagnose_cpu_s']:4.2f}) "
                f"{row['report_cli_s']:10.2f}s {row['diagnose_cli_s']:12.2f}s {row['size_mb']:.2f} MB  "
                f"{row['fitted_by']}",
                flush=True,
            )
        session.section("report after the load, diagnose after the load, page size")
        for family, row in session.details.items():
            session.verdicts.check(
                f"{family}: report after load",
                row["report_s"] / REPORT_TARGET_S,
                1.0,
                "<=",
                baseline=f"{REPORT_TARGET_S:g} s (report {row['report_s']:.2f} s, load {row['load_s']:.2f} s)",
                cache="cold",
                seconds=row["report_s"],
            )
            session.verdicts.check(
                f"{family}: diagnose after load",
                row["diagnose_s"] / DIAGNOSE_TARGET_S,
                1.0,
                "<=",
                baseline=f"{DIAGNOSE_TARGET_S:g} s (diagnose {row['diagnose_s']:.2f} s, load "
                f"{row['diagnose_load_s']:.2f} s)",
                cache="cold",
                seconds=row["diagnose_s"],
            )
            session.verdicts.check(f"{family}: page size", row["size_mb"], TARGET_MB, "<=", baseline="3 MB", unit=" MB")


if __name__ == "__main__":
    main()
