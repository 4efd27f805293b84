"""What 4 chains cost against 2: the README main job's fit (issue 25 item 4).

The fit is the one ``bayesclass compare --model logistic --data breast_cancer --standardize --seed 0`` makes:
the logistic family with its defaults on the 60 % training split of ``breast_cancer`` (seed 0), standardised,
the family's default method (NUTS by its default backend, named in the output from the result) with the
default draws and tuning, seed 0. Both chain counts
run in the same process, alternately, after one untimed warm-up fit of each (the compiled executable depends
on the number of parallel chains); the wall time of a fit is ``fit()`` end to end (compile cache warm).

Printed: the best wall time of each (and of its sampling alone), the ratios 4 chains / 2 chains, and each one's
smallest bulk ESS per second of wall time with its max r_hat and the verdict a user sees
(``bayesclass.inference.diagnose``).

Run::

    .venv/bin/python bench/bench_chains.py            # 3 repeats each (~1-2 min on 2 cores)
    .venv/bin/python bench/bench_chains.py --quick    # 1 repeat each, 100 draws after 100 tuning steps
    .venv/bin/python bench/bench_chains.py --json out.json
"""

from __future__ import annotations

import time

from harness import Session, arguments, fitted_by

import bayesclass as bc
from bayesclass.data import load, train_validation_test_split
from bayesclass.inference import diagnose
from bayesclass.inference.engines.sampling import SamplerSettings
from bayesclass.inference.result import result_info

CHAINS = (2, 4)


def main() -> None:
    """Time the main job's fit with 2 and 4 chains, alternately, and print the ratio."""
    args = arguments(__doc__, quick="1 repeat of each chain count, 100 + 100 draws",
                     seed="seed of the split and the sampler; default 0", seed_default=0)  # fmt: skip
    args = args.parse_args()
    repeats = 1 if args.quick else 3
    # --quick: 100 draws after 100 tuning steps (the point is that every line runs, not the ratio)
    draws = {"draws": 100, "tune": 100} if args.quick else {}
    settings = {"data": "breast_cancer (60% training split)", **draws, "repeats": repeats, "chains": CHAINS}
    with Session("chains", args, settings) as run:
        train, _, _ = train_validation_test_split(load("breast_cancer"), random_seed=args.seed)
        model = bc.LogisticRegression()

        def fit(chains: int):
            sampler = SamplerSettings(chains=chains, progressbar=False, **draws)
            start = time.perf_counter()
            result = bc.fit(model, train, sampler=sampler, standardize=True, random_seed=args.seed)  # default method
            return time.perf_counter() - start, result

        for chains in CHAINS:  # untimed: compiles the executable of each chain count
            fit(chains)
        times: dict[int, list[float]] = {chains: [] for chains in CHAINS}
        sampling: dict[int, list[float]] = {chains: [] for chains in CHAINS}
        runs: dict[int, dict] = {}
        for _ in range(repeats):
            for chains in CHAINS:
                seconds, result = fit(chains)
                times[chains].append(seconds)
                report = diagnose(result)
                sampling[chains].append(float(result_info(result).sampling_seconds or 0.0))
                used = result_info(result).sampler_settings
                runs[chains] = {"min_ess_bulk": report.min_ess_bulk, "min_ess_tail": report.min_ess_tail,
                                "max_r_hat": report.max_r_hat, "divergences": report.n_divergences,
                                "passed": report.passed, "fitted_by": fitted_by(result),
                                "draws": used.get("draws"), "tune": used.get("tune")}  # fmt: skip
        first = runs[CHAINS[0]]
        run.section(f"breast_cancer logistic by {first['fitted_by']}, {first['draws']} draws after {first['tune']} "
                    f"tuning steps, best of {repeats}")  # fmt: skip
        best = {chains: min(values) for chains, values in times.items()}
        for chains in CHAINS:
            numbers = runs[chains]
            verdict = "converged" if numbers["passed"] else "not converged"
            print(f"  {chains} chains: {best[chains]:6.2f} s wall (sampling {min(sampling[chains]):5.2f} s), "
                  f"min bulk ESS {numbers['min_ess_bulk']:6.0f} "
                  f"({numbers['min_ess_bulk'] / best[chains]:6.0f} /s), max r_hat {numbers['max_r_hat']:.4f}, "
                  f"divergences {numbers['divergences']}, diagnose: {verdict}")  # fmt: skip
        ratio = best[4] / best[2]
        run.verdicts.check("sampling time of 4 chains / 2 chains", min(sampling[4]) / min(sampling[2]),
                           baseline="2 chains", unit="x")  # fmt: skip
        run.verdicts.check("wall time of 4 chains / 2 chains", ratio, baseline="2 chains", unit="x", run=runs[4],
                           seconds=best[4], baseline_seconds=best[2])  # fmt: skip
        run.details.update({"seconds": {str(k): v for k, v in times.items()},
                            "sampling_seconds": {str(k): v for k, v in sampling.items()},
                            "convergence": {str(k): v for k, v in runs.items()}})  # fmt: skip


if __name__ == "__main__":
    main()
