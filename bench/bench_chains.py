"""What 4 chains cost against 2: the README's main job end to end, and every family's default fit (issue 30 item 3).

1. **The README job**: ``bayesclass compare --model logistic --data breast_cancer --standardize --seed 0 --report
   report.html`` exactly as the README runs it, once with ``--chains 2`` and once with the default 4 chains, each a
   fresh process timed from its start to its exit (imports, fit, MAP and MLE, held-out scores, the HTML report),
   alternately, after one untimed run of each (the on-disk compile caches warm, as on an analyst's second run).
   **Target: 4 chains <= 1.3x the wall time of 2 chains.**
2. **Per family**: each family's default fit (its default method and backend, the family's default draws) on its
   benchmark data, with 2 and with 4 chains, alternately in this process after an untimed fit of each (the compile
   cache warm); the wall time of ``fit()`` end to end and of its sampling alone, the ratio 4 / 2 printed for
   information, with the smallest bulk ESS per second of wall time and the verdict a user sees.

Run::

    .venv/bin/python bench/bench_chains.py            # best of 3 (~4 min on 2 cores)
    .venv/bin/python bench/bench_chains.py --quick    # 1 repeat, logistic only, no README job
    .venv/bin/python bench/bench_chains.py --json out.json
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness import Session, arguments

import bayesclass as bc
from bayesclass.inference import diagnose
from bayesclass.inference.result import result_info

CHAINS = (2, 4)
TARGET = 1.3
#: case -> (registry name, hyperparameters, dataset, dataset kwargs, standardize)
FAMILIES = {
    "logistic": ("logistic", {}, "breast_cancer", {}, True),
    "naive_bayes": ("naive_bayes", {}, "digits_binary", {}, False),
    "gcc": ("gcc", {}, "wine", {}, True),
    "gp": ("gp", {}, "seed004_gp", {"n": 200}, True),
}
README_JOB = ["compare", "--model", "logistic", "--data", "breast_cancer", "--standardize", "--seed", "0"]


def readme_job(chains: int, folder: Path) -> float:
    """Wall seconds of the README's main job in a fresh process, with ``chains`` chains."""
    script = Path(sys.executable).with_name("bayesclass")
    command = [str(script), *README_JOB, "--report", str(folder / f"report{chains}.html"), "--chains", str(chains)]
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, cwd=folder)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"the README job with {chains} chains failed:\n{done.stderr[-2000:]}")
    return seconds


def family_fit(case: str, chains: int, seed: int):
    """(wall seconds, result) of the family's default fit with ``chains`` chains."""
    name, hyperparameters, dataset, kwargs, standardize = FAMILIES[case]
    data = bc.load(dataset, **kwargs)
    sampler = bc.SamplerSettings(chains=chains, progressbar=False)
    start = time.perf_counter()
    result = bc.fit(bc.get_model(name, **hyperparameters), data, sampler=sampler, standardize=standardize,
                    random_seed=seed)  # fmt: skip
    return time.perf_counter() - start, result


def main() -> None:
    """Time the README job and each family's default fit with 2 and 4 chains, alternately; print the ratios."""
    args = arguments(__doc__, quick="1 repeat, logistic only, no README job", seed="seed of the fits; default 0",
                     seed_default=0)  # fmt: skip
    args = args.parse_args()
    repeats = 1 if args.quick else 3
    cases = ["logistic"] if args.quick else list(FAMILIES)
    settings = {"repeats": repeats, "chains": CHAINS, "cases": cases, "readme_job": not args.quick}
    with Session("chains", args, settings) as run:
        if not args.quick:
            run.section("the README job, each run a fresh process (on-disk compile caches warm), best of "
                        f"{repeats}")  # fmt: skip
            with tempfile.TemporaryDirectory() as folder:
                for chains in CHAINS:  # untimed: warms the on-disk caches of each chain count
                    readme_job(chains, Path(folder))
                job: dict[int, list[float]] = {chains: [] for chains in CHAINS}
                for _ in range(repeats):
                    for chains in CHAINS:
                        job[chains].append(readme_job(chains, Path(folder)))
            for chains in CHAINS:
                print(
                    f"  {chains} chains: {min(job[chains]):6.2f} s (runs {', '.join(f'{t:.2f}' for t in job[chains])})"
                )
            run.verdicts.check("README job, wall time of 4 chains / 2 chains", min(job[4]) / min(job[2]), TARGET,
                               "<=", baseline="the same command with --chains 2", seconds=min(job[4]),
                               baseline_seconds=min(job[2]), cache="warm")  # fmt: skip
            run.details["readme_job_seconds"] = {str(k): v for k, v in job.items()}
        run.section(f"each family's default fit, in this process (compile cache warm), best of {repeats}")
        for case in cases:
            for chains in CHAINS:  # untimed: compiles the executable of each chain count
                family_fit(case, chains, args.seed)
            times: dict[int, list[float]] = {chains: [] for chains in CHAINS}
            sampling: dict[int, list[float]] = {chains: [] for chains in CHAINS}
            reports = {}
            for _ in range(repeats):
                for chains in CHAINS:
                    seconds, result = family_fit(case, chains, args.seed)
                    times[chains].append(seconds)
                    sampling[chains].append(float(result_info(result).sampling_seconds or 0.0))
                    reports[chains] = diagnose(result)
            info = result_info(result)
            method = f"{info.method} ({info.sampler_backend})" if info.sampler_backend else info.method
            for chains in CHAINS:
                report = reports[chains]
                verdict = "converged" if report.passed else "not converged"
                verdict = verdict if report.applies else "n/a (independent draws)"
                print(f"  {case:<12} {method:<16} {chains} chains: {min(times[chains]):6.2f} s wall (sampling "
                      f"{min(sampling[chains]):5.2f} s), min bulk ESS {report.min_ess_bulk:6.0f} "
                      f"({report.min_ess_bulk / min(times[chains]):6.0f} /s), max r_hat {report.max_r_hat:.4f}, "
                      f"verdict {verdict}")  # fmt: skip
            run.verdicts.check(f"{case}: fit wall time, 4 chains / 2 chains", min(times[4]) / min(times[2]),
                               baseline="2 chains", seconds=min(times[4]), baseline_seconds=min(times[2]),
                               cache="warm")  # fmt: skip
            if min(sampling[2]) > 0:
                run.verdicts.check(f"{case}: sampling time, 4 chains / 2 chains", min(sampling[4]) / min(sampling[2]),
                                   baseline="2 chains")  # fmt: skip
            run.details[case] = {"method": method, "seconds": {str(k): v for k, v in times.items()},
                                 "sampling_seconds": {str(k): v for k, v in sampling.items()}}  # fmt: skip


if __name__ == "__main__":
    main()
