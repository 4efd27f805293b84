"""Fast start: time to the first result on a fresh machine, warm starts, and many fits of one structure.

Every timed run is a fresh process. "cold" means a new empty HOME and new empty cache
directories for that process (PyTensor's ``base_compiledir``, ``NUMBA_CACHE_DIR``, JAX's
compilation cache, ``BAYESCLASS_CACHE_DIR``); "warm" is the second run in the same
directories. Each target is printed beside the same work done by a hand-written PyMC model
compiled and sampled by nutpie, measured in the same run with the same cold/warm state.

Parts (issue 12's targets):

1. ``bayesclass --help``: <= 0.5 s (best of 5 processes).
2. ``bayesclass fit --model logistic --data breast_cancer --standardize`` (its default method, NUTS), process start to
   the file written: cold <= 10 s, warm <= 5 s; beside the hand-written logistic model on nutpie.
3. First fit of every family by its default method (NUTS; the GP's Gibbs sampler) on its benchmark data
   (breast_cancer logistic, digits_binary naive Bayes, wine gcc shared and per-class, seed004_gp n=200 gp), a
   child process from start to the saved file: cold <= 15 s each and not slower than the hand-written model on
   nutpie, also cold. Each row names the method (and NUTS backend) it used.
4. ``bayesclass fit --method map`` warm <= 3 s for every family but gp.
5. Sampling efficiency: ESS (bulk, slowest parameter) per sampling second of the default backend
   >= 0.8x the nutpie route (the default before this issue), both in this process after compilation.
6. 100 NUTS fits of logistic on bootstrap resamples of breast_cancer in one process: mean overhead per
   fit (wall minus sampling) <= 0.3 s after the first.

Run: ``python bench/bench_startup.py [--quick] [--json PATH]`` (``--quick``: logistic only, 2 chains x 100
draws, the hand-written model in part 3 only, 5 refits).
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness import Session, arguments, convergence, fitted_by

MARKER = "BENCH-STARTUP-RESULT "
QUICK = "BENCH_STARTUP_QUICK"  # set in the environment of a --quick run, so its child processes draw as few too
CHAINS, DRAWS, TUNE = (2, 100, 100) if os.environ.get(QUICK) else (2, 1000, 1000)
#: family case -> (registry name, hyperparameters, dataset, dataset kwargs, standardize)
FAMILIES = {
    "logistic": ("logistic", {}, "breast_cancer", {}, True),
    "naive_bayes": ("naive_bayes", {}, "digits_binary", {}, False),
    "gcc shared": ("gcc", {"covariance": "shared"}, "wine", {}, False),
    "gcc per-class": ("gcc", {"covariance": "per-class"}, "wine", {}, False),
    "gp": ("gp", {}, "seed004_gp", {"n": 200}, False),
}
REPO = Path(__file__).resolve().parent.parent


def bayesclass_command() -> list[str]:
    """The installed console script (the CLI as a user runs it)."""
    script = Path(sys.executable).with_name("bayesclass")
    return [str(script)] if script.exists() else [sys.executable, "-m", "bayesclass.cli"]


def cache_environment(home: Path) -> dict[str, str]:
    """A process environment whose HOME and every compile cache live under ``home``."""
    env = dict(os.environ)
    for name in ("XLA_FLAGS", "JAX_COMPILATION_CACHE_DIR", "PYTENSOR_FLAGS", "NUMBA_CACHE_DIR"):
        env.pop(name, None)
    env.update(
        HOME=str(home),
        XDG_CACHE_HOME=str(home / ".cache"),
        PYTENSOR_FLAGS=f"base_compiledir={home / 'pytensor'}",
        NUMBA_CACHE_DIR=str(home / "numba"),
        JAX_COMPILATION_CACHE_DIR=str(home / "jax"),
        BAYESCLASS_CACHE_DIR=str(home / "bayesclass"),
    )
    return env


def run_process(command: list[str], home: Path) -> tuple[float, dict]:
    """(wall seconds from process start to exit, the child's result record or {})."""
    start = time.perf_counter()
    completed = subprocess.run(command, env=cache_environment(home), cwd=home, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if completed.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed ({completed.returncode}):\n{completed.stderr[-3000:]}")
    record = {}
    for line in completed.stdout.splitlines():
        if line.startswith(MARKER):
            record = json.loads(line.removeprefix(MARKER))
    return wall, record


def child(kind: str, case: str) -> None:
    """Body of a ``--child KIND CASE`` process: fit once, save, print a result record."""
    name, hyperparameters, dataset, kwargs, standardize = FAMILIES[case]
    if kind == "ours":
        import bayesclass as bc

        data = bc.load(dataset, **kwargs)
        result = bc.fit(  # the family's default method (the GP's Gibbs sampler, NUTS for the others)
            bc.get_model(name, **hyperparameters),
            data,
            standardize=standardize,
            random_seed=0,
            sampler=bc.SamplerSettings(draws=DRAWS, tune=TUNE, chains=CHAINS, progressbar=False),
        )
        bc.save_result(result, Path("result.nc"))
        sample_stats = result["sample_stats"].to_dataset() if "sample_stats" in result.children else None
        stats = convergence(result["posterior"].to_dataset(), sample_stats)
        info = bc.result_info(result)
        record = {
            "backend": fitted_by(result),
            "compile_s": float(info.compile_seconds or 0.0),
            "sampling_s": math.nan if info.sampling_seconds is None else float(info.sampling_seconds),
        }
    else:
        import nutpie

        model = hand_written_model(case)
        start = time.perf_counter()
        compiled = nutpie.compile_pymc_model(model)
        compile_s = time.perf_counter() - start
        start = time.perf_counter()
        trace = nutpie.sample(compiled, draws=DRAWS, tune=TUNE, chains=CHAINS, seed=0, progress_bar=False)
        sampling_s = time.perf_counter() - start
        trace.to_netcdf("result.nc")
        stats = convergence(trace["posterior"].to_dataset(), trace["sample_stats"].to_dataset())
        record = {"backend": "nutpie (hand-written)", "compile_s": compile_s, "sampling_s": sampling_s}
    record.update(ess_bulk_min=stats["min_ess_bulk"], r_hat_max=stats["max_r_hat"], divergences=stats["divergences"])
    print(MARKER + json.dumps(record), flush=True)


def hand_written_model(case: str):
    """The textbook PyMC model of each family's default posterior, as a user would write it."""
    import numpy as np
    import pymc as pm

    import bayesclass as bc

    name, hyperparameters, dataset, kwargs, standardize = FAMILIES[case]
    data = bc.load(dataset, **kwargs)
    X, y = np.asarray(data.X, dtype=float), np.asarray(data.y)
    if name == "logistic":
        X = (X - X.mean(axis=0)) / X.std(axis=0)
        with pm.Model() as model:
            weights = pm.Normal("weights", 0.0, 1.0, shape=X.shape[1])
            intercept = pm.Normal("intercept", 0.0, 10.0)
            pm.Bernoulli("label", logit_p=intercept + pm.math.dot(X, weights), observed=y)
    elif name == "naive_bayes":
        with pm.Model() as model:
            class_prior = pm.Dirichlet("class_prior", a=np.ones(data.n_classes))
            proba = pm.Beta("binary_proba", alpha=1.0, beta=1.0, shape=(data.n_classes, X.shape[1]))
            pm.Categorical("label", p=class_prior, observed=y)
            pm.Bernoulli("features", p=proba[y], observed=X)
    elif name == "gcc":
        # the textbook per-observation model (pm.MvNormal observed, pm.Categorical labels) with the family's priors
        model = bc.get_model(name, **hyperparameters).build(data, likelihood="per_observation")
    else:
        with pm.Model() as model:
            lengthscale = pm.InverseGamma("lengthscale", alpha=3.0, beta=2.0)
            amplitude = pm.HalfNormal("amplitude", sigma=3.0)
            constant = pm.HalfNormal("constant", sigma=1.0)
            covariance = pm.gp.cov.Constant(constant**2) + amplitude**2 * pm.gp.cov.ExpQuad(1, ls=lengthscale)
            latent = pm.gp.Latent(cov_func=covariance).prior("latent", X=X)
            pm.Bernoulli("label", logit_p=latent, observed=y)
    return model


def new_home(root: Path, label: str) -> Path:
    home = Path(tempfile.mkdtemp(prefix=f"{label.replace(' ', '_')}-", dir=root))
    return home


def bench_help(root: Path, repeats: int = 5) -> float:
    home = new_home(root, "help")
    return min(run_process([*bayesclass_command(), "--help"], home)[0] for _ in range(repeats))


def fit_arguments(case: str, method: str | None) -> list[str]:
    """``bayesclass fit`` of ``case`` by ``method`` (None: the family's default method)."""
    name, hyperparameters, dataset, _, standardize = FAMILIES[case]
    flags = [f"--{key.replace('_', '-')}={value}" for key, value in hyperparameters.items()]
    return [
        *bayesclass_command(),
        "fit",
        f"--model={name}",
        f"--data={dataset}",
        *([f"--method={method}"] if method else []),
        *([f"--draws={DRAWS}", f"--tune={TUNE}", f"--chains={CHAINS}"] if os.environ.get(QUICK) and not method else []),
        *flags,
        *(["--standardize"] if standardize else []),
        "--seed=0",
        "--no-progress",
        "--out=result.nc",
    ]


def bench_cli_logistic(root: Path, *, with_hand: bool = True) -> dict:
    """Part 2: the CLI cold and warm, and (``with_hand``) the hand-written model cold and warm."""
    ours_home, hand_home = new_home(root, "cli-ours"), new_home(root, "cli-hand")
    command = fit_arguments("logistic", None)  # its default method (NUTS)
    hand = [sys.executable, str(Path(__file__).resolve()), "--child", "hand", "logistic"]
    out: dict = {"hand_cold": None, "hand_warm": None}
    out["ours_cold"], _ = run_process(command, ours_home)
    if with_hand:
        out["hand_cold"], _ = run_process(hand, hand_home)
    out["ours_warm"], _ = run_process(command, ours_home)
    if with_hand:
        out["hand_warm"], _ = run_process(hand, hand_home)
    return out


def bench_families(root: Path, cases: list[str]) -> dict:
    """Part 3: every family's first fit, cold, ours (child API process) and the hand-written model on nutpie."""
    out = {}
    for case in cases:
        row = {}
        for kind in ("ours", "hand"):
            command = [sys.executable, str(Path(__file__).resolve()), "--child", kind, case]
            wall, record = run_process(command, new_home(root, f"{kind}-{case}"))
            row[kind] = {"wall_s": wall, **record}
            print(
                f"    {case:<14} {kind:<5} cold {wall:6.1f} s  (compile {record['compile_s']:.1f} s, sampling "
                f"{record['sampling_s']:.2f} s, {record['backend']}, ESS {record['ess_bulk_min']:.0f}, r_hat "
                f"{record['r_hat_max']:.3f}, divergences {record['divergences']})",
                flush=True,
            )
        out[case] = row
    return out


def bench_map(root: Path, cases: list[str]) -> dict:
    """Part 4: ``fit --method map`` warm (the same HOME ran it once before)."""
    out = {}
    for case in cases:
        home = new_home(root, f"map-{case}")
        command = fit_arguments(case, "map")
        run_process(command, home)
        out[case] = min(run_process(command, home)[0] for _ in range(2))
    return out


def bench_efficiency(cases: list[str]) -> dict:
    """Part 5: ESS per sampling second, default backend vs nutpie, in this process after compilation."""
    import bayesclass as bc

    out = {}
    for case in cases:
        name, hyperparameters, dataset, kwargs, standardize = FAMILIES[case]
        data = bc.load(dataset, **kwargs)
        row = {}
        backends = ("auto", "nutpie") if bc.get_model(name).nuts_backends[0] != "nutpie" else ("nutpie",)
        for backend in backends:  # a family whose default is nutpie (gp) has nothing to compare
            settings = bc.SamplerSettings(draws=DRAWS, tune=TUNE, chains=CHAINS, backend=backend, progressbar=False)
            model = bc.get_model(name, **hyperparameters)
            bc.fit(model, data, method="nuts", standardize=standardize, random_seed=1, sampler=settings)  # compile
            result = bc.fit(model, data, method="nuts", standardize=standardize, random_seed=2, sampler=settings)
            stats = convergence(result["posterior"].to_dataset(), result["sample_stats"].to_dataset())
            info = bc.result_info(result)
            seconds = float(info.sampling_seconds or math.nan)
            row[str(info.sampler_backend) if backend == "auto" else "nutpie"] = {
                "sampling_s": seconds,
                "ess_bulk_min": stats["min_ess_bulk"],
                "ess_per_s": stats["min_ess_bulk"] / seconds,
                "r_hat_max": stats["max_r_hat"],
                "divergences": stats["divergences"],
            }
        out[case] = row
        text = "; ".join(
            f"{backend} {r['ess_per_s']:.0f} ESS/s (ESS {r['ess_bulk_min']:.0f} in {r['sampling_s']:.2f} s)"
            for backend, r in row.items()
        )
        print(f"    {case:<14} {text}", flush=True)
    return out


def bench_refits(n_fits: int, seed: int) -> dict:
    """Part 6: bootstrap refits of one structure in this process."""
    import numpy as np

    import bayesclass as bc

    data = bc.load("breast_cancer")
    rng = np.random.default_rng(seed)
    settings = bc.SamplerSettings(draws=DRAWS, tune=TUNE, chains=CHAINS, progressbar=False)
    bc.inference.clear_compile_cache()
    walls, overheads, hits = [], [], []
    for index in range(n_fits):
        rows = rng.integers(0, data.n_obs, data.n_obs)
        resample = data.subset(rows, name=f"{data.name}[bootstrap {index}]")
        start = time.perf_counter()
        result = bc.fit(
            bc.LogisticRegression(), resample, method="nuts", standardize=True, random_seed=index, sampler=settings
        )
        wall = time.perf_counter() - start
        walls.append(wall)
        info = bc.result_info(result)
        overheads.append(wall - float(info.sampling_seconds or 0.0))
        hits.append(int(bool(info.compile_cache_hit)))
    later = overheads[1:]
    return {
        "n_fits": n_fits,
        "first_wall_s": walls[0],
        "first_overhead_s": overheads[0],
        "mean_overhead_after_first_s": float(np.mean(later)),
        "max_overhead_after_first_s": float(np.max(later)),
        "mean_wall_after_first_s": float(np.mean(walls[1:])),
        "cache_hits_after_first": int(sum(hits[1:])),
    }


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        child(argv[1], argv[2])
        return 0
    parser = arguments(__doc__, quick="logistic only, 2 chains x 100 draws, the hand-written model in part 3 only, "
                       "5 refits")  # fmt: skip
    parser.add_argument(
        "--cases", help=f"comma-separated families of parts 3-5 (default: all of {', '.join(FAMILIES)})"
    )
    options = parser.parse_args(argv)
    if options.quick and not os.environ.get(QUICK):  # this process and every child draw the quick counts
        os.environ[QUICK] = "1"
        global DRAWS, TUNE
        DRAWS = TUNE = 100
    cases = ["logistic"] if options.quick else list(FAMILIES)
    if options.cases:
        cases = [case.strip() for case in options.cases.split(",")]
        unknown = [case for case in cases if case not in FAMILIES]
        if unknown:
            parser.error(f"--cases: unknown {unknown}; choose among {', '.join(FAMILIES)}")
    root = Path(tempfile.mkdtemp(prefix="bench-startup-"))
    settings = {"draws": DRAWS, "tune": TUNE, "chains": CHAINS, "cases": cases}
    with Session("startup", options, settings) as run:
        verdicts, details = run.verdicts, run.details
        print("1. bayesclass --help (best of 5 processes)")
        details["help_s"] = bench_help(root)
        verdicts.check("bayesclass --help", details["help_s"], 0.5, "<=", baseline="seconds", unit=" s")

        print(
            "\n2. bayesclass fit --model logistic --data breast_cancer --standardize (its default method; to the file)"
        )
        # --quick: the hand-written model's cold start runs in part 3 (the same child), not twice more here
        cli = details["cli_logistic"] = bench_cli_logistic(root, with_hand=not options.quick)
        for state, target in (("cold", 10.0), ("warm", 5.0)):
            ours, hand = cli[f"ours_{state}"], cli[f"hand_{state}"]
            versus = "skipped with --quick" if hand is None else f"{hand:.1f} s ({hand / ours:.1f}x)"
            print(f"    {state}: ours {ours:.1f} s, hand-written PyMC + nutpie {versus}")
            verdicts.check(
                f"CLI logistic fit, {state}",
                ours,
                target,
                "<=",
                baseline="seconds",
                unit=" s",
                cache=state,
                seconds=ours,
                baseline_seconds=hand,
            )

        print("\n3. first fit of every family by its default method, cold (child process: import, fit, save)")
        families = details["families"] = bench_families(root, cases)
        for case, row in families.items():
            ours, hand = row["ours"]["wall_s"], row["hand"]["wall_s"]
            verdicts.check(f"{case}: first fit cold", ours, 15.0, "<=", baseline="seconds", unit=" s", cache="cold")
            verdicts.check(
                f"{case}: hand-written nutpie / ours, cold",
                hand / ours,
                1.0,
                ">=",
                baseline="hand-written PyMC + nutpie",
                cache="cold",
                seconds=ours,
                baseline_seconds=hand,
            )

        print("\n4. bayesclass fit --method map, warm")
        map_cases = [case for case in cases if FAMILIES[case][0] != "gp"]
        details["map_warm_s"] = bench_map(root, map_cases)
        for case, seconds in details["map_warm_s"].items():
            verdicts.check(f"{case}: fit --method map, warm", seconds, 3.0, "<=", baseline="seconds", unit=" s")

        print("\n5. sampling efficiency: ESS bulk (slowest parameter) per sampling second, after compilation")
        efficiency = details["efficiency"] = bench_efficiency(cases)
        for case, row in efficiency.items():
            if len(row) == 1:
                continue  # the default is the nutpie route itself
            default = next(backend for backend in row if backend != "nutpie")
            verdicts.check(
                f"{case}: ESS/s {default} / nutpie",
                row[default]["ess_per_s"] / row["nutpie"]["ess_per_s"],
                0.8,
                ">=",
                baseline="nutpie route (before this issue)",
            )

        n_fits = 5 if options.quick else 100
        print(f"\n6. {n_fits} NUTS fits of logistic on bootstrap resamples of breast_cancer, one process")
        refits = details["refits"] = bench_refits(n_fits, options.seed)
        print(
            f"    first fit {refits['first_wall_s']:.2f} s (overhead {refits['first_overhead_s']:.2f} s); later fits: "
            f"mean wall {refits['mean_wall_after_first_s']:.2f} s, mean overhead "
            f"{refits['mean_overhead_after_first_s']:.3f} s (max {refits['max_overhead_after_first_s']:.3f}), "
            f"compile-cache hits {refits['cache_hits_after_first']}/{n_fits - 1}"
        )
        verdicts.check(
            "refit overhead per fit after the first",
            refits["mean_overhead_after_first_s"],
            0.3,
            "<=",
            baseline="seconds",
            unit=" s",
            cache="warm",
        )
    shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    raise SystemExit(main())
