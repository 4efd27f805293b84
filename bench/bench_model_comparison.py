"""Benchmark of "which classifier for these data" (issue 28): the whole comparison at its defaults, and the stack.

What is timed is what an analyst runs: ``bayesclass compare --model all --data DATA --standardize --report
models.html``, as a subprocess with a new, empty HOME (so PyTensor's compile cache and every per-process cache are
cold: interpreter start, imports, every family's compile and fit, PSIS-LOO, the stack, held-out scoring and the
page). Data sets: breast_cancer (569 rows, 30 inputs, 2 classes; every family can take it) and the penguins table
(333 complete rows of 344, ``--missing drop``; text columns island and sex, 3 classes: gcc and the GP cannot take it
and are listed with their reasons), and the penguins' 4 measurements (``--features``; gcc takes them).

Baseline, in the same run: the target of 2 minutes per data set on 2 cores (the ratio printed is wall time /
120 s; **target <= 1**). Printed beside it: the seconds of each family's fit (from the command's own output), and
from the in-process :func:`bayesclass.inference.evaluation.model_comparison.compare_models` of the same split (warm:
this process compiled the models already, which the CLI subprocess did not share): the LOO ranking, the stacking and
pseudo-BMA+ weights, and the stack's held-out log loss against the best single family's, with the paired standard
error of the difference.

Run::

    .venv/bin/python bench/bench_model_comparison.py           # ~6-10 min on 2 cores
    .venv/bin/python bench/bench_model_comparison.py --quick   # penguins' measurements only, 2 chains x 100 draws
    .venv/bin/python bench/bench_model_comparison.py --json out.json

A command that fails is printed and makes the script exit 1 (after the other cases).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness import Session, arguments

TARGET_SECONDS = 120.0
MEASUREMENTS = "bill_length_mm,bill_depth_mm,flipper_length_mm,body_mass_g"
CASES = {  # name -> (CLI data arguments, loader for the in-process comparison)
    "breast_cancer": (["--data", "breast_cancer"], {"name": "breast_cancer"}),
    "penguins": (["--data", "penguins", "--missing", "drop"], {"name": "penguins", "missing": "drop"}),
    "penguins (4 measurements)": (
        ["--data", "penguins", "--missing", "drop", "--features", MEASUREMENTS],
        {"name": "penguins", "missing": "drop", "features": MEASUREMENTS.split(",")},
    ),
}


QUICK_SAMPLER = {"draws": 100, "tune": 100, "chains": 2}


def run_cli(data_arguments: list[str], folder: Path) -> tuple[float, str, int]:
    """Wall seconds, output and exit code of the comparison command in a cold subprocess (new HOME)."""
    home = folder / "home"
    home.mkdir()
    environment = {**os.environ, "HOME": str(home)}
    environment.pop("PYTENSOR_FLAGS", None)
    command = [sys.executable, "-m", "bayesclass", "compare", "--model", "all", *data_arguments, "--standardize",
               "--report", str(folder / "models.html")]  # fmt: skip
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=environment, cwd=folder, check=False)
    return time.perf_counter() - started, done.stdout + done.stderr, done.returncode


def fit_seconds(output: str) -> dict[str, float]:
    """Each family's fit seconds from the command's summary lines."""
    return {
        family: float(seconds)
        for family, seconds in re.findall(r"^\s+(\w+)\s+fitted by \w+\s+in\s+([\d.]+) s", output, re.M)
    }


def in_process(loader: dict, seed: int, quick: bool):
    import bayesclass as bc
    from bayesclass.inference.evaluation.model_comparison import compare_models

    options = dict(loader)
    name, features = options.pop("name"), options.pop("features", None)
    data = bc.load(name, **options)
    if features is not None:
        data = data.select_features(features)
    sampler = bc.SamplerSettings(progressbar=False, **QUICK_SAMPLER) if quick else None
    return compare_models(data, "all", standardize=True, random_seed=seed, sampler=sampler)


def report_stack(comparison, run, case: str) -> None:
    """The rankings, weights and the stack against the best family, printed and kept in the details."""
    details = run.details.setdefault(case, {})
    details["loo"] = [(row.family, row.elpd, row.se, row.elpd_diff, row.dse, row.n_high_k) for row in comparison.loo]
    print("    PSIS-LOO: " + "; ".join(
        f"{row.family} {row.elpd:.2f} (se {row.se:.2f}, diff {-abs(row.elpd_diff):.2f}, dse {row.dse:.2f}, "
        f"{row.n_high_k} rows k>0.7)" for row in comparison.loo
    ))  # fmt: skip
    for family, reason in comparison.unavailable.items():
        print(f"    not fitted: {family}: {reason[:110]}")
    stacked = comparison.stack
    if stacked is None or stacked.result is None:
        print(f"    no stack: {None if stacked is None else stacked.reason}")
        return
    details["weights"] = stacked.weights
    for method, weights in stacked.weights.items():
        print(f"    {method} weights: " + ", ".join(f"{family} {weight:.3f}" for family, weight in weights.items()))
    for split, finding in comparison.stack_findings.items():
        losses = dict(getattr(finding, "log_losses", ()))
        if stacked.label not in losses or len(losses) < 2:
            continue
        family = next(label for label in losses if label != stacked.label)
        difference = losses[stacked.label] - losses[family]
        details[f"stack_vs_best_{split}"] = (losses[stacked.label], family, losses[family], finding.standard_error)
        print(f"    {split}: stack log loss {losses[stacked.label]:.4f} vs best family {family} {losses[family]:.4f}: "
              f"stack minus best {difference:+.4f} (paired se {finding.standard_error:.4f})")  # fmt: skip
    heldout = comparison.heldout.get("test", ())
    if heldout:
        print("    test ranking: " + ", ".join(f"{row.label} {row.log_loss:.4f}" for row in heldout[:6]))


def main() -> None:
    args = arguments(__doc__, quick="penguins' 4 measurements only, 2 chains x 100 draws",
                     seed="seed of the split and fits", seed_default=0).parse_args()  # fmt: skip
    cases = {"penguins (4 measurements)": CASES["penguins (4 measurements)"]} if args.quick else CASES
    sampling = [f"--{key}={value}" for key, value in QUICK_SAMPLER.items()] if args.quick else []
    failed = []
    with Session("model_comparison", args, {"target_s": TARGET_SECONDS, "cases": list(cases)}) as run:
        run.section("whole comparison at defaults, cold subprocess (compare --model all --standardize --report)")
        for case, (data_arguments, _) in cases.items():
            with tempfile.TemporaryDirectory() as folder:
                seconds, output, code = run_cli([*data_arguments, *sampling], Path(folder))
                page = Path(folder) / "models.html"
                written = page.exists() and page.stat().st_size > 0
            run.details.setdefault(case, {}).update(
                {"seconds": seconds, "exit": code, "page": written, "fits": fit_seconds(output)}
            )
            if code != 0:
                print(f"  {case}: the command failed (exit {code}):\n{output[-2000:]}")
                failed.append(case)
            run.verdicts.check(
                f"{case}: wall time / 120 s",
                seconds / TARGET_SECONDS,
                1.0,
                "<=",
                baseline="the 2-minute target",
                cache="cold",
                seconds=seconds,
                baseline_seconds=TARGET_SECONDS,
            )
            fits = fit_seconds(output)
            print(f"    fits: {', '.join(f'{family} {value:.1f} s' for family, value in fits.items())}; "
                  f"the rest (imports, LOO, stack, scoring, page) {seconds - sum(fits.values()):.1f} s; page written: "
                  f"{written}")  # fmt: skip
        run.section("rankings, weights and the stack against the best family (in process, same split and seed)")
        for case, (_, loader) in cases.items():
            print(f"  {case}:")
            report_stack(in_process(loader, args.seed, args.quick), run, case)
    if failed:
        raise SystemExit(f"the comparison command failed on: {', '.join(failed)}")


if __name__ == "__main__":
    main()
