"""Benchmark of Bayesian logistic regression (issue 2): NUTS speed and MAP speed.

Part 1, NUTS on ``breast_cancer`` (569 x 30, standardised), one posterior, three samplers:

``bayesclass``
    ``inference.fit(LogisticRegression(), data, method="nuts")``: NUTS with the family's default backend
    (the printed row names it) on the
    whitened parametrisation (models/logistic.py), with the per-process compile
    cache of inference/engines/sampling.py.
``hand-written nutpie``
    The textbook PyMC model (``weights ~ N(0, 1)``, ``intercept ~ N(0, 10)``,
    ``Bernoulli(logit_p=intercept + X @ weights)``) compiled with
    ``nutpie.compile_pymc_model`` and sampled with ``nutpie.sample``.
``PyMC NUTS``
    The same hand-written model through ``pm.sample(nuts_sampler="pymc")``
    (PyMC 6 would pick nutpie by default when it is installed).

ESS/s = smallest bulk ESS over every element of ``weights`` and ``intercept``
divided by the sampling seconds; the median over repeats (different seeds) is
compared. Time to first result from a cold compile cache is measured in a
fresh interpreter per sampler whose PyTensor ``base_compiledir`` (which holds
``compiledir`` and PyTensor's numba cache ``numba/``) and ``NUMBA_CACHE_DIR``
point to new empty directories, from before the process starts (imports
included) until the posterior is in memory.

Part 2, MAP vs scikit-learn on synthetic data (n=100,000, d=50): Newton MAP
(flat intercept, ``weight_sigma=1`` = ``C=1``) vs
``sklearn.linear_model.LogisticRegression(C=1.0)`` at its default tolerance,
best of 3 each; also sklearn at ``tol=1e-10`` and the gradient norm of sklearn's
default-tolerance solution under the MAP objective. The model keeps its Newton
solve per Dataset object (``LogisticRegression._newton``, an ``lru_cache``), so
every timed MAP call gets a fresh copy of the data (cold); for comparison the
output also shows the first call of the process (one cold solve) and a call on
the same object again (warm, the cache hit that the old best-of-3 timed).

Run::

    .venv/bin/python bench/bench_logistic.py            # full run (~5 min on 2 cores)
    .venv/bin/python bench/bench_logistic.py --quick    # 300/300 draws, no PyMC NUTS, no cold starts, MAP n=20,000
    .venv/bin/python bench/bench_logistic.py --json out.json
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

from harness import (
    Session,
    Verdicts,
    arguments,
    convergence,
    fitted_by,
    fresh,
    sample_pymc_nuts,
    time_best,
    time_once,
    warm_up_nutpie,
)

# Heavy imports (pymc, nutpie, bayesclass, scikit-learn) happen inside functions, so that a
# ``--cold-run`` child process pays exactly the imports its sampler needs.

REPO_ROOT = Path(__file__).resolve().parent.parent

TARGET_VS_HAND_NUTPIE = 1.0  # ESS/s ratio bayesclass / hand-written nutpie, at least
TARGET_VS_PYMC = 1.5  # ESS/s ratio bayesclass / PyMC's NUTS, at least
TARGET_MAP_VS_SKLEARN = 3.0  # MAP seconds / scikit-learn seconds, at most
TARGET_GRADIENT_NORM = 1e-8  # gradient norm of the MAP, at most

WEIGHT_SIGMA = 1.0
INTERCEPT_SIGMA = 10.0
CHAINS = 2
SAMPLERS = ("bayesclass", "hand_nutpie", "pymc_nuts")
#: row labels; the bayesclass row names the backend its fit recorded once it has run (default: the family's)
LABELS = {"bayesclass": "bayesclass (default)", "hand_nutpie": "hand-written nutpie", "pymc_nuts": "PyMC NUTS"}
COLD_MARKER = "BENCH_COLD_RESULT "


# ------------------------------------------------------------------------------------------
# the three samplers


def breast_cancer():
    from bayesclass import data

    return data.load("breast_cancer").standardized()


def hand_written_model(dataset):
    """The textbook PyMC model of the same posterior as bayesclass's default LogisticRegression."""
    import pymc as pm

    with pm.Model(coords={"feature": list(dataset.feature_names)}) as model:
        weights = pm.Normal("weights", 0.0, WEIGHT_SIGMA, dims="feature")
        intercept = pm.Normal("intercept", 0.0, INTERCEPT_SIGMA)
        pm.Bernoulli("y_obs", logit_p=intercept + pm.math.dot(dataset.X, weights), observed=dataset.y)
    return model


def posterior_stats(posterior, sample_stats) -> dict:
    """Smallest bulk ESS, largest r_hat over weights and intercept, and divergences (``inference.diagnose``)."""
    return convergence(posterior, sample_stats, var_names=("weights", "intercept"))


def run_bayesclass(dataset, draws: int, tune: int, seed: int) -> dict:
    from bayesclass import inference, models

    model = models.LogisticRegression(
        prior=models.LogisticPrior(weight_sigma=WEIGHT_SIGMA, intercept_sigma=INTERCEPT_SIGMA)
    )
    settings = inference.SamplerSettings(draws=draws, tune=tune, chains=CHAINS, progressbar=False)
    start = time.perf_counter()
    result = inference.fit(model, dataset, sampler=settings, random_seed=seed)  # the default method (NUTS)
    wall = time.perf_counter() - start
    info = inference.result_info(result)
    report = inference.diagnose(result)
    LABELS["bayesclass"] = f"bayesclass ({fitted_by(result)})"  # the method and backend it used
    return {
        "compile_s": float(info.compile_seconds or 0.0),
        "sampling_s": float(info.sampling_seconds or 0.0),
        "wall_s": wall,
        "compile_cache_hit": int(bool(info.compile_cache_hit)),
        "min_ess_bulk": float(report.min_ess_bulk),
        "max_r_hat": float(report.max_r_hat),
        "divergences": int(report.n_divergences),
        "backend": str(info.sampler_backend),
        "fitted_by": fitted_by(result),
    }


def compile_hand_nutpie(dataset) -> tuple[object, float]:
    import nutpie

    model = hand_written_model(dataset)
    start = time.perf_counter()
    compiled = nutpie.compile_pymc_model(model)
    return compiled, time.perf_counter() - start


def sample_hand_nutpie(compiled, draws: int, tune: int, seed: int):
    import nutpie

    start = time.perf_counter()
    trace = nutpie.sample(compiled, draws=draws, tune=tune, chains=CHAINS, seed=seed, progress_bar=False)
    return trace, time.perf_counter() - start


def run_hand_nutpie(compiled, compile_s: float, draws: int, tune: int, seed: int) -> dict:
    trace, sampling = sample_hand_nutpie(compiled, draws, tune, seed)
    stats = posterior_stats(trace["posterior"].to_dataset(), trace["sample_stats"].to_dataset())
    return {"compile_s": compile_s, "sampling_s": sampling, "wall_s": compile_s + sampling, **stats}


def run_pymc(dataset, draws: int, tune: int, seed: int) -> dict:
    trace, wall, sampling, source = sample_pymc_nuts(
        hand_written_model(dataset), draws=draws, tune=tune, chains=CHAINS, seed=seed
    )
    stats = posterior_stats(trace["posterior"].to_dataset(), trace["sample_stats"].to_dataset())
    return {
        "compile_s": max(wall - sampling, 0.0),
        "sampling_s": sampling,
        "wall_s": wall,
        "sampling_time_source": source,
        **stats,
    }


def bench_nuts(draws: int, tune: int, repeats: int, seed: int, samplers: tuple[str, ...] = SAMPLERS) -> dict:
    dataset = breast_cancer()
    warm_up_s = warm_up_nutpie(CHAINS)
    runs: dict[str, list[dict]] = {name: [] for name in samplers}
    compiled, hand_compile_s = compile_hand_nutpie(dataset)  # compiled once, sampled `repeats` times
    for repeat in range(repeats):
        run_seed = seed + repeat
        runs["bayesclass"].append({"seed": run_seed, **run_bayesclass(dataset, draws, tune, run_seed)})
        runs["hand_nutpie"].append(
            {
                "seed": run_seed,
                **run_hand_nutpie(compiled, hand_compile_s if repeat == 0 else 0.0, draws, tune, run_seed),
            }
        )
        if "pymc_nuts" in runs:
            runs["pymc_nuts"].append({"seed": run_seed, **run_pymc(dataset, draws, tune, run_seed)})
    hits = [run for run in runs["bayesclass"] if run["compile_cache_hit"]]
    if not hits:  # a single repeat: one more fit of the same structure, now a compile-cache hit
        hits = [{"seed": seed + repeats, **run_bayesclass(dataset, draws, tune, seed + repeats)}]
    for sampler_runs in runs.values():
        for run in sampler_runs:
            run["ess_per_s"] = run["min_ess_bulk"] / run["sampling_s"]
    summary = {}
    for name, sampler_runs in runs.items():
        compiles = [
            run["compile_s"] for run in sampler_runs if run.get("compile_cache_hit", 0) == 0 and run["compile_s"] > 0
        ]
        summary[name] = {
            "median_ess_per_s": statistics.median(run["ess_per_s"] for run in sampler_runs),
            "median_sampling_s": statistics.median(run["sampling_s"] for run in sampler_runs),
            "median_min_ess_bulk": statistics.median(run["min_ess_bulk"] for run in sampler_runs),
            "compile_s": statistics.median(compiles),
            "max_r_hat": max(run["max_r_hat"] for run in sampler_runs),
            "divergences": sum(run["divergences"] for run in sampler_runs),
        }
    ours = summary["bayesclass"]["median_ess_per_s"]
    return {
        "dataset": {"name": dataset.name, "n_obs": int(dataset.X.shape[0]), "n_features": int(dataset.X.shape[1])},
        "warm_up_s": warm_up_s,
        "runs": runs,
        "summary": summary,
        "bayesclass_cache_hit_fit": hits[0],
        "ratios": {name: ours / summary[name]["median_ess_per_s"] for name in samplers if name != "bayesclass"},
    }


# ------------------------------------------------------------------------------------------
# time to first result from a cold compile cache


def cold_run(name: str, process_start: float, draws: int, tune: int, seed: int) -> None:
    """Body of a ``--cold-run`` child: fit once, print seconds since ``process_start`` (epoch)."""
    dataset = breast_cancer()
    if name == "bayesclass":
        run = run_bayesclass(dataset, draws, tune, seed)
        detail = {"compile_s": run["compile_s"], "sampling_s": run["sampling_s"]}
    elif name == "hand_nutpie":
        compiled, compile_s = compile_hand_nutpie(dataset)
        trace, sampling = sample_hand_nutpie(compiled, draws, tune, seed)
        trace["posterior"].to_dataset()
        detail = {"compile_s": compile_s, "sampling_s": sampling}
    elif name == "pymc_nuts":
        trace, wall, sampling, _ = sample_pymc_nuts(
            hand_written_model(dataset), draws=draws, tune=tune, chains=CHAINS, seed=seed
        )
        detail = {"compile_s": max(wall - sampling, 0.0), "sampling_s": sampling}
    else:
        raise ValueError(f"--cold-run {name!r} is unknown; choose one of {SAMPLERS}")
    first_result_s = time.time() - process_start
    print(COLD_MARKER + json.dumps({"first_result_s": first_result_s, **detail}), flush=True)


def bench_cold(draws: int, tune: int, seed: int) -> dict:
    results = {}
    for name in SAMPLERS:
        with (
            tempfile.TemporaryDirectory(prefix="bench-pytensor-") as compiledir,
            tempfile.TemporaryDirectory(prefix="bench-numba-") as numba_cache,
        ):
            env = dict(os.environ)
            # PyTensor keeps its numba cache in base_compiledir/numba, beside (not inside) compiledir:
            # both must be fresh for a cold start of nutpie
            flags = [
                flag
                for flag in env.get("PYTENSOR_FLAGS", "").split(",")
                if flag and not flag.startswith(("compiledir", "base_compiledir"))
            ]
            env["PYTENSOR_FLAGS"] = ",".join(
                [*flags, f"base_compiledir={compiledir}", f"compiledir={Path(compiledir) / 'compiledir'}"]
            )
            env["NUMBA_CACHE_DIR"] = numba_cache
            command = [sys.executable, str(Path(__file__).resolve()), "--cold-run", name, "--seed", str(seed)]
            command += ["--draws", str(draws), "--tune", str(tune)]
            process_start = time.time()
            command += ["--process-start", repr(process_start)]
            completed = subprocess.run(command, env=env, cwd=REPO_ROOT, capture_output=True, text=True)
            process_wall = time.time() - process_start
        lines = [line for line in completed.stdout.splitlines() if line.startswith(COLD_MARKER)]
        if completed.returncode != 0 or not lines:
            tail = (completed.stderr or completed.stdout)[-2000:]
            raise RuntimeError(f"cold run of {name} failed (exit {completed.returncode}):\n{tail}")
        results[name] = {**json.loads(lines[-1][len(COLD_MARKER) :]), "process_wall_s": process_wall}
    return results


# ------------------------------------------------------------------------------------------
# MAP vs scikit-learn


def synthetic(n_obs: int = 100_000, n_features: int = 50):
    import numpy as np
    import scipy.special

    from bayesclass import data

    rng = np.random.default_rng(0)
    X = rng.standard_normal((n_obs, n_features))
    true_weights = rng.normal(0.0, 0.5, n_features)
    y = rng.binomial(1, scipy.special.expit(X @ true_weights + 0.3)).astype(np.int64)
    return data.Dataset(
        name="synthetic",
        X=X,
        y=y,
        feature_names=tuple(f"x{j}" for j in range(n_features)),
        class_names=("0", "1"),
        feature_kinds=("continuous",) * n_features,
        provenance=f"bench_logistic.py: default_rng(0), X ~ N(0, 1), w ~ N(0, 0.5^2), b = 0.3, "
        f"n={n_obs}, d={n_features}",
    )


def map_gradient_norm(X, y, intercept: float, weights, weight_sigma: float) -> float:
    """||gradient|| of the MAP objective (flat intercept): [1 X]'(p - y) + [0, w / sigma^2]."""
    import numpy as np
    import scipy.special

    residual = scipy.special.expit(intercept + X @ weights) - y
    gradient = np.concatenate([[residual.sum()], X.T @ residual + weights / weight_sigma**2])
    return float(np.linalg.norm(gradient))


def bench_map(n_obs: int = 100_000, n_features: int = 50, repeats: int = 3) -> dict:
    import numpy as np
    import sklearn.linear_model
    from sklearn.exceptions import ConvergenceWarning

    from bayesclass import models

    dataset = synthetic(n_obs, n_features)
    model = models.LogisticRegression(prior=models.LogisticPrior(weight_sigma=WEIGHT_SIGMA, intercept_sigma=math.inf))

    def solve(data):
        return model.point_estimate(data, "map")

    # the first MAP call of the process: one cold solve (nothing cached yet, first use of every code path)
    first_call_s, _ = time_once(solve, fresh(dataset))
    # one more single cold solve, now that every code path has run once: what each timed repeat should match
    single_cold_s, _ = time_once(solve, fresh(dataset))
    # each repeat solves on a fresh Dataset object: the per-dataset solve cache is never timed (cold)
    ours_s, estimate = time_best(solve, repeats, prepare=lambda: fresh(dataset))
    # information: the same object again, what the old best-of-3 timed (a cache hit, warm)
    solve(dataset)
    cache_hit_s, _ = time_best(lambda: solve(dataset), repeats)
    ours = np.concatenate([[float(estimate["intercept"])], estimate["weights"].values])

    def sklearn_fit(**kwargs):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
            fitted = sklearn.linear_model.LogisticRegression(C=WEIGHT_SIGMA**2, **kwargs).fit(dataset.X, dataset.y)
        fitted.converged_ = not any(issubclass(w.category, ConvergenceWarning) for w in caught)
        return fitted

    def sklearn_summary(seconds: float, fitted) -> dict:
        coefficients = np.concatenate([fitted.intercept_, fitted.coef_.ravel()])
        return {
            "seconds": seconds,
            "n_iter": int(np.max(fitted.n_iter_)),
            "converged": bool(fitted.converged_),
            "gradient_norm_under_map_objective": map_gradient_norm(
                dataset.X, dataset.y, float(fitted.intercept_[0]), fitted.coef_.ravel(), WEIGHT_SIGMA
            ),
            "max_abs_coef_diff_to_ours": float(np.max(np.abs(coefficients - ours))),
        }

    default = sklearn_summary(*time_best(sklearn_fit, repeats))
    tight = sklearn_summary(*time_best(lambda: sklearn_fit(tol=1e-10, max_iter=10_000), repeats))
    # information: the same two timings with BLAS held to one thread (the Newton Hessian is one
    # large BLAS product per iteration, and multi-threaded BLAS on few cores can be slower)
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        ours_one_thread_s, _ = time_best(solve, repeats, prepare=lambda: fresh(dataset))
        sklearn_one_thread_s, _ = time_best(sklearn_fit, repeats)
    return {
        "n_obs": int(dataset.X.shape[0]),
        "n_features": int(dataset.X.shape[1]),
        "repeats": repeats,
        "ours": {
            "seconds": ours_s,
            "first_call_seconds": first_call_s,
            "single_cold_seconds": single_cold_s,
            "cache_hit_seconds": cache_hit_s,
            "gradient_norm": float(estimate.attrs["gradient_norm"]),
            "gradient_norm_recomputed": map_gradient_norm(dataset.X, dataset.y, ours[0], ours[1:], WEIGHT_SIGMA),
            "n_iterations": int(estimate.attrs["n_iterations"]),
        },
        "sklearn_default_tol": default,
        "sklearn_tol_1e-10": tight,
        "one_blas_thread": {
            "ours_seconds": ours_one_thread_s,
            "sklearn_default_tol_seconds": sklearn_one_thread_s,
            "ratio": ours_one_thread_s / sklearn_one_thread_s,
        },
        "ratio_vs_sklearn_default": ours_s / default["seconds"],
        "ratio_vs_sklearn_tol_1e-10": ours_s / tight["seconds"],
    }


# ------------------------------------------------------------------------------------------
# printing


def print_nuts(nuts: dict, draws: int, tune: int, repeats: int) -> None:
    info = nuts["dataset"]
    print(
        f"NUTS on {info['name']} ({info['n_obs']} x {info['n_features']}, standardized), draws={draws} tune={tune} "
        f"chains={CHAINS}, {repeats} repeat(s) with seeds {[run['seed'] for run in nuts['runs']['bayesclass']]}"
    )
    print(f"(process warm-up, a 1-parameter nutpie model, took {nuts['warm_up_s']:.1f} s and is charged to nobody)")
    header = (
        f"{'sampler':<22}{'seed':>5}{'compile s':>11}{'sampling s':>12}{'wall s':>9}"
        f"{'min ESS':>9}{'ESS/s':>9}{'max r_hat':>11}{'div':>5}"
    )
    print(header)
    print("-" * len(header))
    for name, sampler_runs in nuts["runs"].items():
        for run in sampler_runs:
            compile_text = f"{run['compile_s']:.2f}" + ("*" if run.get("compile_cache_hit") else "")
            if name == "hand_nutpie" and run["compile_s"] == 0.0:
                compile_text = "(reused)"
            print(
                f"{LABELS[name]:<22}{run['seed']:>5}{compile_text:>11}{run['sampling_s']:>12.2f}{run['wall_s']:>9.2f}"
                f"{run['min_ess_bulk']:>9.0f}{run['ess_per_s']:>9.0f}{run['max_r_hat']:>11.4f}{run['divergences']:>5}"
            )
    print("  * compile-cache hit (inference.sampling keeps compiled models per process)")
    print("  PyMC: compile s = pm.sample wall - sample_stats sampling_time (includes worker start-up and init)")
    print(
        "  bayesclass: wall s = inference.fit (also Newton MAP for the whitening, MAP/MLE point estimates, "
        "separation LP)"
    )
    print()
    print(
        f"{'median over repeats':<22}{'compile s':>11}{'sampling s':>12}{'min ESS':>9}{'ESS/s':>9}"
        f"{'max r_hat':>11}{'div':>5}"
    )
    for name, row in nuts["summary"].items():
        print(
            f"{LABELS[name]:<22}{row['compile_s']:>11.2f}{row['median_sampling_s']:>12.2f}{row['median_min_ess_bulk']:>9.0f}"
            f"{row['median_ess_per_s']:>9.0f}{row['max_r_hat']:>11.4f}{row['divergences']:>5}"
        )
    hit = nuts["bayesclass_cache_hit_fit"]
    print(
        f"bayesclass second fit, same structure (compile_cache_hit={hit['compile_cache_hit']}): total "
        f"{hit['wall_s']:.2f} s "
        f"(compile {hit['compile_s']:.3f} s, sampling {hit['sampling_s']:.2f} s)"
    )
    print()


def print_cold(cold: dict) -> None:
    print("Time to first result from a cold compile cache (fresh interpreter; empty PyTensor base_compiledir,")
    print("which holds compiledir and PyTensor's numba cache, and empty NUMBA_CACHE_DIR; from before process")
    print("start, imports included, to the posterior in memory):")
    print(f"{'sampler':<22}{'first result s':>16}{'of which compile s':>20}{'sampling s':>12}{'process wall s':>16}")
    for name in SAMPLERS:
        row = cold[name]
        print(
            f"{LABELS[name]:<22}{row['first_result_s']:>16.1f}{row['compile_s']:>20.1f}{row['sampling_s']:>12.1f}"
            f"{row['process_wall_s']:>16.1f}"
        )
    print()


def print_ratios(nuts: dict, verdicts: Verdicts) -> None:
    summary = nuts["summary"]
    ours = summary["bayesclass"]
    print("Ratios (median ESS/s per sampling second; bayesclass's compile-cache state does not enter)")
    for other, target in (("hand_nutpie", TARGET_VS_HAND_NUTPIE), ("pymc_nuts", TARGET_VS_PYMC)):
        if other not in summary:
            print(f"  ESS/s bayesclass / {LABELS[other]}: skipped with --quick")
            continue
        verdicts.check(
            f"ESS/s bayesclass / {LABELS[other]}",
            nuts["ratios"][other],
            target,
            baseline=LABELS[other],
            seconds=ours["median_sampling_s"],
            baseline_seconds=summary[other]["median_sampling_s"],
            run={
                "min_ess_bulk": ours["median_min_ess_bulk"],
                "max_r_hat": ours["max_r_hat"],
                "divergences": ours["divergences"],
            },
        )
        print(
            f"    (r_hat max {ours['max_r_hat']:.4f} vs {summary[other]['max_r_hat']:.4f}; "
            f"divergences {ours['divergences']} vs {summary[other]['divergences']})"
        )
    print()


def print_map(result: dict, verdicts: Verdicts) -> None:
    ours, default, tight = result["ours"], result["sklearn_default_tol"], result["sklearn_tol_1e-10"]
    print(
        f"MAP vs scikit-learn on synthetic data, n={result['n_obs']:,}, d={result['n_features']} "
        f"(best of {result['repeats']}; ours cold: a fresh Dataset per call, so the solve cache never answers)"
    )
    header = (
        f"{'estimator':<34}{'seconds':>9}{'iterations':>12}{'grad norm (MAP objective)':>27}{'max |coef - ours|':>19}"
    )
    print(header)
    print("-" * len(header))
    print(
        f"{'bayesclass MAP (Newton), cold':<34}{ours['seconds']:>9.3f}{ours['n_iterations']:>12}"
        f"{ours['gradient_norm']:>27.2e}{'-':>19}"
    )
    for label, row in (("sklearn C=1, default tol", default), ("sklearn C=1, tol=1e-10", tight)):
        iterations = f"{row['n_iter']}" + ("" if row["converged"] else " (!)")
        print(
            f"{label:<34}{row['seconds']:>9.3f}{iterations:>12}{row['gradient_norm_under_map_objective']:>27.2e}"
            f"{row['max_abs_coef_diff_to_ours']:>19.2e}"
        )
    print(
        f"  bayesclass MAP, single calls: first of the process (cold, start-up included) "
        f"{ours['first_call_seconds']:.4f} s; one cold solve {ours['single_cold_seconds']:.4f} s; "
        f"same Dataset again (warm, solve-cache hit) {ours['cache_hit_seconds']:.5f} s"
    )
    print(
        f"  (bayesclass gradient norm recomputed in numpy: {ours['gradient_norm_recomputed']:.2e}; (!) = "
        "ConvergenceWarning)"
    )
    sklearn_name = "sklearn LogisticRegression(C=1)"
    verdicts.check(
        "MAP time / sklearn time (default tol)",
        result["ratio_vs_sklearn_default"],
        TARGET_MAP_VS_SKLEARN,
        "<=",
        baseline=f"{sklearn_name}, default tol",
        cache="cold",
        seconds=ours["seconds"],
        baseline_seconds=default["seconds"],
    )
    verdicts.check(
        "MAP time / sklearn time (tol=1e-10)",
        result["ratio_vs_sklearn_tol_1e-10"],
        baseline=f"{sklearn_name}, tol=1e-10",
        cache="cold",
        seconds=ours["seconds"],
        baseline_seconds=tight["seconds"],
    )
    one = result["one_blas_thread"]
    verdicts.check(
        "MAP time / sklearn time (default tol), BLAS 1 thread",
        one["ratio"],
        baseline=f"{sklearn_name}, default tol, BLAS 1 thread",
        cache="cold",
        seconds=one["ours_seconds"],
        baseline_seconds=one["sklearn_default_tol_seconds"],
    )
    verdicts.check(
        "MAP gradient norm", ours["gradient_norm"], TARGET_GRADIENT_NORM, "<=", baseline="(absolute)", unit=""
    )
    print()


# ------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = arguments(
        __doc__,
        quick="draws=300, tune=300, 1 repeat, no PyMC NUTS, no cold-start runs, MAP at n=20,000 (about 30 s)",
        seed="seed of the first repeat (then seed+1, ...); default 1",
    )
    parser.add_argument("--draws", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--tune", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--cold-run", choices=SAMPLERS, help=argparse.SUPPRESS)
    parser.add_argument("--process-start", type=float, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    draws, tune, repeats = (300, 300, 1) if args.quick else (1000, 1000, 2)
    draws = args.draws or draws
    tune = args.tune or tune
    if args.cold_run:
        cold_run(args.cold_run, args.process_start or time.time(), draws, tune, args.seed)
        return 0
    samplers = SAMPLERS[:2] if args.quick else SAMPLERS
    map_size = (20_000, 50) if args.quick else (100_000, 50)
    settings = {"draws": draws, "tune": tune, "chains": CHAINS, "repeats": repeats, "samplers": list(samplers)}
    with Session("logistic", args, {**settings, "map_n_obs": map_size[0], "map_n_features": map_size[1]}) as run:
        nuts = bench_nuts(draws, tune, repeats, args.seed, samplers)
        print_nuts(nuts, draws, tune, repeats)
        cold = None
        if not args.quick:
            cold = bench_cold(draws, tune, args.seed)
            print_cold(cold)
        print_ratios(nuts, run.verdicts)
        map_result = bench_map(*map_size)
        print_map(map_result, run.verdicts)
        run.details = {"nuts": nuts, "cold_start": cold, "map_vs_sklearn": map_result}
    return 0


if __name__ == "__main__":
    sys.exit(main())
