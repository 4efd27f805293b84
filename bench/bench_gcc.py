"""Benchmark of the Gaussian class-conditional family (LDA/QDA): NUTS on sufficient statistics, closed forms.

Part 1, NUTS on synthetic data (n = 5,000, d = 10, K = 3 Gaussian classes with distinct means and one
random correlated covariance, ``default_rng(0)``), default priors (LKJ correlations, half-normal
standard deviations, normal means, Dirichlet(1) class probabilities; ``GaussianClassConditionalPrior()``):

``bayesclass``
    ``inference.fit(GaussianClassConditional(covariance=...), data, method="nuts")``: NUTS (the family's
    default backend) on the
    sufficient-statistic model (``build(data)``: class counts, class means and one root of the scatter
    matrix; one triangular solve per gradient). Fitted after ``inference.sampling.clear_compile_cache()``
    (compiles); the shared model is fitted a second time with another seed (compile-cache hit).
``per-observation``
    ``build(data, likelihood="per_observation")``: the textbook per-row model with the SAME priors
    (``pm.MvNormal`` observed on all n rows, ``pm.Categorical`` labels), through the same sampler:
    ``inference.sampling.sample_nuts`` (the family's default backend, as fit uses it; same settings, same
    jitter, same seed; the printed lines name the backend), compiled on
    its own. Sampled with BLAS held to one thread (``threadpoolctl``): nutpie runs its chains in
    parallel threads, and each chain's n x d triangular solves call multi-threaded OpenBLAS, which on
    this 2-core machine made the sampling 2.3-2.6x slower when idle and 35x slower while another
    process kept a core busy. The slowdown itself is measured on a short run (``--threaded-draws``,
    default 20/20) sampled twice, at the default BLAS threads and at one thread: the two runs take
    the same leapfrog steps (identical draws), so the ratio of their sampling times is the cost of
    the threads; their ESS means nothing.

ESS = smallest bulk ESS (``arviz_stats.ess(method="bulk")``) over every element of ``class_prior``,
``class_mean`` and ``covariance``; the smallest tail ESS, the largest r_hat and the divergences are
printed beside it. ESS/s is given per sampling second and per wall second (compile included: for
bayesclass the time around the whole ``fit`` call, which also computes the mle/unbiased/map point
estimates and the provenance; for the per-observation model build + compile + sampling). Both models
define the same posterior and get the same seed, so their chains start on the same path and drift
apart only by rounding (the largest difference of the ``class_mean`` draws is printed). Shared
covariance (LDA) is the headline with draws/tune 1000/1000; per-class covariances (QDA) use 500/500
for both models (``--per-class-draws``; the per-observation QDA model samples about 20x slower than
the LDA one, 0.12 s per draw), or ``--no-per-class``.

Part 2, closed forms vs scikit-learn on synthetic data (n = 200,000, d = 50, K = 3, seed 0):
``GaussianClassConditional(covariance="shared").point_estimate(data, "mle")`` vs
``LinearDiscriminantAnalysis(solver="lsqr").fit(X, y)`` and the default ``solver="svd"``, and
``covariance="per-class"`` vs ``QuadraticDiscriminantAnalysis().fit(X, y)``; best of repeats. The model
keeps its sufficient statistics per Dataset object (``_fitted``, an ``lru_cache``): every timed call gets
a fresh copy of the data, made outside the timed section (cold); one row times the same object again (warm,
the cache hit, for information). Also the largest difference of the predicted class probabilities on
5,000 rows.

Run::

    .venv/bin/python bench/bench_gcc.py            # full run (~4 min on 2 cores)
    .venv/bin/python bench/bench_gcc.py --quick    # LDA 100/100 only, closed forms at n=5,000, d=10
    .venv/bin/python bench/bench_gcc.py --json out.json
"""

from __future__ import annotations

import contextlib
import sys
import time

from harness import Session, arguments, convergence, fitted_by, fresh, time_best, warm_up_nutpie

# Heavy imports (pymc, nutpie, bayesclass, scikit-learn) happen inside functions.

TARGET_NUTS_VS_PER_OBSERVATION = 20.0  # ESS/s ratio sufficient statistics / per-observation model (nutpie), at least
TARGET_CLOSED_FORM_VS_SKLEARN = 2.0  # closed-form seconds / scikit-learn fit seconds, at most
AGREEMENT_TOLERANCE = 1e-8  # max |P_ours - P_sklearn| printed as "agree"

#: the issue's own measurement: the per-observation LKJ model on breast_cancer with nutpie
ISSUE_PER_OBSERVATION_BREAST_CANCER_ESS_PER_S = 0.45

CHAINS = 2
VARIABLES = ("class_prior", "class_mean", "covariance")
NUTS_N, NUTS_D, NUTS_K = 5_000, 10, 3
CLOSED_N, CLOSED_D, CLOSED_K = 200_000, 50, 3
AGREEMENT_ROWS = 5_000


# ------------------------------------------------------------------------------------------
# data


def synthetic(n_obs: int, n_features: int, n_classes: int, *, mean_scale: float, seed: int = 0):
    """K Gaussian classes, means ~ N(0, mean_scale^2), one random correlated covariance with feature
    scales between e^-1 and e^1, class probabilities proportional to 1..K (unequal)."""
    import numpy as np

    from bayesclass import data

    rng = np.random.default_rng(seed)
    root = rng.standard_normal((n_features, n_features))
    correlation_like = root @ root.T / n_features + 0.5 * np.eye(n_features)
    scales = np.exp(rng.uniform(-1.0, 1.0, n_features))
    covariance = correlation_like * np.outer(scales, scales)
    means = rng.normal(0.0, mean_scale, (n_classes, n_features)) * scales
    proba = np.arange(1, n_classes + 1) / (n_classes * (n_classes + 1) / 2)
    y = rng.choice(n_classes, size=n_obs, p=proba)
    X = means[y] + rng.standard_normal((n_obs, n_features)) @ np.linalg.cholesky(covariance).T
    return data.Dataset(
        name=f"synthetic_gaussian_{n_obs}x{n_features}",
        X=X,
        y=y,
        feature_names=tuple(f"x{j}" for j in range(n_features)),
        class_names=tuple(f"c{k}" for k in range(n_classes)),
        feature_kinds=("continuous",) * n_features,
        description="synthetic Gaussian classes with a shared correlated covariance, for bench_gcc.py",
        provenance=(
            f"bench_gcc.py: default_rng({seed}); R ~ N(0, 1)^(d x d), Sigma = D (R R'/d + I/2) D, D = diag(exp(U(-1, "
            "1))); "
            f"mu_k = D N(0, {mean_scale}^2); P(k) proportional to k+1; x ~ N(mu_y, Sigma); n={n_obs}, d={n_features}, "
            f"K={n_classes}"
        ),
    )


# ------------------------------------------------------------------------------------------
# NUTS


def one_blas_thread():
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1, user_api="blas")


def posterior_stats(posterior, sample_stats) -> dict:
    """Smallest bulk and tail ESS, largest r_hat over every element of VARIABLES, and divergences
    (from ``inference.diagnose``)."""
    return convergence(posterior, sample_stats, var_names=VARIABLES)


def with_rates(run: dict) -> dict:
    run["ess_per_sampling_s"] = run["min_ess_bulk"] / run["sampling_s"]
    run["ess_per_wall_s"] = run["min_ess_bulk"] / run["wall_s"]
    return run


def gcc_model(covariance: str):
    from bayesclass import models

    return models.GaussianClassConditional(covariance=covariance)


def run_bayesclass(
    dataset, covariance: str, draws: int, tune: int, seed: int, *, blas_one_thread: bool = False
) -> tuple[dict, object]:
    from bayesclass import inference
    from bayesclass.inference.result import result_info

    settings = inference.SamplerSettings(
        draws=draws, tune=tune, chains=CHAINS, progressbar=False, blas_threads=1 if blas_one_thread else None
    )
    with one_blas_thread() if blas_one_thread else contextlib.nullcontext():
        start = time.perf_counter()
        result = inference.fit(gcc_model(covariance), dataset, sampler=settings, random_seed=seed)  # default: NUTS
        wall = time.perf_counter() - start
    info = result_info(result)
    posterior = result["posterior"].to_dataset()
    missing = set(VARIABLES) - set(posterior.data_vars)
    if missing:
        raise RuntimeError(f"the bayesclass posterior lacks {sorted(missing)}")
    run = {
        "covariance": covariance,
        "seed": seed,
        "draws": draws,
        "tune": tune,
        "blas_threads": "1" if blas_one_thread else "default",
        "fitted_by": fitted_by(result),
        "compile_s": float(info.compile_seconds or 0.0),
        "sampling_s": float(info.sampling_seconds or 0.0),
        "wall_s": wall,
        "compile_cache_hit": int(bool(info.compile_cache_hit)),
        **posterior_stats(posterior, result["sample_stats"].to_dataset()),
    }
    return with_rates(run), posterior["class_mean"].values


def run_per_observation(
    dataset, covariance: str, draws: int, tune: int, seed: int, *, blas_one_thread: bool
) -> tuple[dict, object]:
    """The per-row model through inference.sampling.sample_nuts (what fit does), under its own cache key."""
    from bayesclass.inference.engines.nuts import nuts_backend
    from bayesclass.inference.engines.sampling import SamplerSettings, sample_nuts

    model = gcc_model(covariance)
    # sample_nuts holds BLAS to one thread unless told otherwise: the threaded run asks for the libraries' default
    settings = SamplerSettings(
        draws=draws, tune=tune, chains=CHAINS, progressbar=False, blas_threads=1 if blas_one_thread else None
    )
    with one_blas_thread() if blas_one_thread else contextlib.nullcontext():
        start = time.perf_counter()
        pymc_model = model.build(dataset, likelihood="per_observation")
        run = sample_nuts(
            pymc_model,
            cache_key=("bench_gcc", "per_observation", *model.cache_key(dataset)),
            var_names=VARIABLES,
            jitter=tuple(rv.name for rv in pymc_model.free_RVs),
            settings=settings,
            random_seed=seed,
            backend=(backend := nuts_backend(model, settings)),  # the backend fit uses for this family
        )
        wall = time.perf_counter() - start
    out = {
        "covariance": covariance,
        "seed": seed,
        "draws": draws,
        "tune": tune,
        "blas_threads": "1" if blas_one_thread else "default",
        "backend": backend,
        "compile_s": run.compile_seconds,
        "sampling_s": run.sampling_seconds,
        "wall_s": wall,
        "compile_cache_hit": int(run.compile_cache_hit),
        **posterior_stats(run.posterior, run.sample_stats),
    }
    return with_rates(out), run.posterior["class_mean"].values


def max_abs_diff(a, b) -> float:
    import numpy as np

    return float(np.max(np.abs(np.asarray(a) - np.asarray(b))))


def bench_nuts(
    dataset, *, draws: int, tune: int, per_class_draws: int | None, threaded_draws: int | None, seed: int
) -> dict:
    from bayesclass.inference.engines.sampling import clear_compile_cache

    out: dict = {"warm_up_s": warm_up_nutpie(CHAINS)}
    clear_compile_cache()
    rows: dict[str, dict | None] = {}
    rows["shared_bayesclass"], ours = run_bayesclass(dataset, "shared", draws, tune, seed)
    rows["shared_per_observation"], theirs = run_per_observation(
        dataset, "shared", draws, tune, seed, blas_one_thread=True
    )
    out["shared_draw_diff"] = max_abs_diff(ours, theirs)
    rows["shared_bayesclass_warm"], _ = run_bayesclass(dataset, "shared", draws, tune, seed + 1, blas_one_thread=True)
    if threaded_draws:
        # the same short run twice (compiled model reused): default BLAS threads, then one thread
        rows["shared_per_observation_threaded"], threaded = run_per_observation(
            dataset, "shared", threaded_draws, threaded_draws, seed, blas_one_thread=False
        )
        rows["shared_per_observation_threaded_ref"], single = run_per_observation(
            dataset, "shared", threaded_draws, threaded_draws, seed, blas_one_thread=True
        )
        out["threaded_draw_diff"] = max_abs_diff(threaded, single)
    if per_class_draws:
        rows["per_class_bayesclass"], ours = run_bayesclass(
            dataset, "per-class", per_class_draws, per_class_draws, seed
        )
        rows["per_class_per_observation"], theirs = run_per_observation(
            dataset, "per-class", per_class_draws, per_class_draws, seed, blas_one_thread=True
        )
        out["per_class_draw_diff"] = max_abs_diff(ours, theirs)
    out["rows"] = rows
    return out


# ------------------------------------------------------------------------------------------
# closed forms vs scikit-learn


def bench_closed_form(repeats: int, n_obs: int = CLOSED_N, n_features: int = CLOSED_D) -> dict:
    import numpy as np
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis, QuadraticDiscriminantAnalysis

    start = time.perf_counter()
    dataset = synthetic(n_obs, n_features, CLOSED_K, mean_scale=0.3)
    generate_s = time.perf_counter() - start
    X, y = np.asarray(dataset.X), np.asarray(dataset.y)
    subset = X[:AGREEMENT_ROWS]
    out: dict = {
        "n_obs": n_obs,
        "n_features": n_features,
        "n_classes": CLOSED_K,
        "repeats": repeats,
        "generate_s": generate_s,
    }
    for covariance, baselines in (
        (
            "shared",
            {"lda_lsqr": lambda: LinearDiscriminantAnalysis(solver="lsqr"), "lda_svd": LinearDiscriminantAnalysis},
        ),
        ("per-class", {"qda": QuadraticDiscriminantAnalysis}),
    ):
        model = gcc_model(covariance)

        def ours(data, model=model):
            return model.point_estimate(data, "mle")

        def new_copy():  # a fresh Dataset object per repeat: the per-dataset statistics cache misses
            return fresh(dataset)

        ours_s, estimate = time_best(ours, repeats, prepare=new_copy)  # cold
        model.point_estimate(dataset, "mle")
        cached_s, _ = time_best(lambda model=model: model.point_estimate(dataset, "mle"), repeats)  # warm
        proba = model.class_proba(estimate, subset).transpose("obs", "class").values
        with one_blas_thread():
            ours_one_s, _ = time_best(ours, repeats, prepare=new_copy)
        row: dict = {"ours_s": ours_s, "ours_cached_s": cached_s, "ours_one_thread_s": ours_one_s, "baselines": {}}
        for name, make in baselines.items():
            seconds, fitted = time_best(lambda make=make: make().fit(X, y), repeats)
            with one_blas_thread():
                one_s, _ = time_best(lambda make=make: make().fit(X, y), repeats)
            diff = max_abs_diff(proba, fitted.predict_proba(subset))
            row["baselines"][name] = {
                "seconds": seconds,
                "ratio": ours_s / seconds,
                "one_thread_seconds": one_s,
                "one_thread_ratio": ours_one_s / one_s,
                "max_abs_proba_diff": diff,
            }
        out[covariance] = row
    return out


# ------------------------------------------------------------------------------------------
# printing

LABELS = {
    "shared_bayesclass": "LDA bayesclass, 1st fit",
    "shared_per_observation": "LDA per-observation",
    "shared_bayesclass_warm": "LDA bayesclass, 2nd fit",
    "shared_per_observation_threaded": "LDA per-obs, BLAS threads",
    "shared_per_observation_threaded_ref": "LDA per-obs, BLAS 1 thread",
    "per_class_bayesclass": "QDA bayesclass, 1st fit",
    "per_class_per_observation": "QDA per-observation",
}


def print_nuts(nuts: dict, info: dict, quick: bool) -> None:
    print(
        f"NUTS on {info['name']} ({info['n_obs']} x {info['n_features']} continuous, {info['n_classes']} classes), "
        f"default LKJ prior, chains={CHAINS}" + ("   [QUICK]" if quick else "")
    )
    print(f"(process warm-up, a 1-parameter nutpie model, took {nuts['warm_up_s']:.1f} s and is charged to nobody)")
    header = (
        f"{'model':<28}{'draws/tune':>12}{'BLAS':>7}{'compile s':>11}{'sampling s':>12}{'wall s':>9}{'min bulk':>10}"
        f"{'min tail':>10}{'ESS/s samp':>12}{'ESS/s wall':>12}{'max r_hat':>11}{'div':>5}{'steps':>7}  by"
    )
    print(header)
    print("-" * len(header))
    for name, run in nuts["rows"].items():
        if run is None:
            continue
        compile_text = f"{run['compile_s']:.2f}" + ("*" if run["compile_cache_hit"] else "")
        print(
            f"{LABELS[name]:<28}{run['draws']:>6}/{run['tune']:<5}{run['blas_threads']:>7}{compile_text:>11}"
            f"{run['sampling_s']:>12.2f}{run['wall_s']:>9.2f}{run['min_ess_bulk']:>10.0f}{run['min_ess_tail']:>10.0f}"
            f"{run['ess_per_sampling_s']:>12.2f}{run['ess_per_wall_s']:>12.2f}{run['max_r_hat']:>11.4f}"
            f"{run['divergences']:>5}{run['mean_tree_steps']:>7.1f}  {run.get('fitted_by') or run.get('backend', '?')}"
        )
    print(
        "  min bulk / min tail = smallest bulk / tail ESS over every element of class_prior, class_mean and covariance"
    )
    print("  ESS/s samp = min bulk / sampling s; ESS/s wall = min bulk / wall s (compile and everything else included)")
    print(
        "  bayesclass wall s = the whole inference.fit call (also the mle/unbiased/map point estimates and the "
        "provenance);"
    )
    print("  per-observation wall s = build + compile + sampling; steps = mean leapfrog steps per draw")
    print("  by = the method and NUTS backend a bayesclass fit used (read from its result); per-observation: the")
    print("  backend fit picks for this family")
    print(
        "  * compile-cache hit (clear_compile_cache() ran before the 1st fit; PyTensor's and numba's on-disk caches are"
    )
    print("    left as they are, so a 1st fit is cold only for this process)")
    print(
        "  BLAS: 'default' = OpenBLAS's own thread count, '1' = threadpoolctl.threadpool_limits(1, 'blas') around "
        "the run"
    )
    if "threaded_draw_diff" in nuts:
        print(
            "  the two short 'LDA per-obs' runs draw the same values (same leapfrog steps): compare their sampling s "
            "only"
        )
    print(
        f"  same posterior, same seed: max |class_mean draw difference| bayesclass vs per-observation = "
        f"LDA {nuts['shared_draw_diff']:.2e}"
        + (f", QDA {nuts['per_class_draw_diff']:.2e}" if "per_class_draw_diff" in nuts else "")
        + (f"; per-obs threaded vs 1 thread {nuts['threaded_draw_diff']:.2e}" if "threaded_draw_diff" in nuts else "")
    )
    print(
        f"  issue's own measurement: per-observation LKJ model on breast_cancer with nutpie, "
        f"{ISSUE_PER_OBSERVATION_BREAST_CANCER_ESS_PER_S} ESS/s"
    )
    print()


def print_closed_form(closed: dict) -> None:
    print(
        f"Closed-form MLE vs scikit-learn on synthetic data, n={closed['n_obs']:,}, d={closed['n_features']}, "
        f"K={closed['n_classes']} (best of {closed['repeats']}; data generated in {closed['generate_s']:.1f} s)"
    )
    header = (
        f"{'estimator':<52}{'seconds':>10}{'ours / it':>11}{'1 BLAS thread s':>17}{'ours / it':>11}{'max |dP|':>11}"
    )
    print(header)
    print("-" * len(header))
    names = {
        "lda_lsqr": "sklearn LinearDiscriminantAnalysis(solver='lsqr')",
        "lda_svd": "sklearn LinearDiscriminantAnalysis() (svd)",
        "qda": "sklearn QuadraticDiscriminantAnalysis()",
    }
    for covariance in ("shared", "per-class"):
        row = closed[covariance]
        print(
            f"{f'bayesclass {covariance} point_estimate(mle)':<52}{row['ours_s']:>10.4f}{'':>11}"
            f"{row['ours_one_thread_s']:>17.4f}"
        )
        print(f"{'  same Dataset again (warm, statistics cache hit)':<52}{row['ours_cached_s']:>10.4f}")
        for name, b in row["baselines"].items():
            print(
                f"{names[name]:<52}{b['seconds']:>10.4f}{b['ratio']:>10.2f}x{b['one_thread_seconds']:>17.4f}"
                f"{b['one_thread_ratio']:>10.2f}x{b['max_abs_proba_diff']:>11.1e}"
            )
    print(
        f"  max |dP| = largest |P_ours(class | x) - predict_proba| over the first {AGREEMENT_ROWS:,} rows "
        f"(agreement tolerance {AGREEMENT_TOLERANCE:g})"
    )
    print("  ours cold: a fresh Dataset per timed call, so the statistics cache misses (check_training_data,")
    print("  sufficient statistics, MLE, xarray Dataset); the warm row is a cache hit and skips the statistics;")
    print("  '1 BLAS thread' = the same timings inside threadpoolctl.threadpool_limits(1, 'blas') (information)")
    print()


def ratio_lines(nuts: dict, closed: dict | None) -> list[dict]:
    """Keyword arguments of one :meth:`Verdicts.check` per ratio (``cache`` = our side's cache state)."""
    rows = nuts["rows"]
    lines: list[dict] = []

    def nuts_lines(prefix: str, ours: dict, theirs: dict, warm: dict | None) -> None:
        baseline = f"{prefix} per-observation model ({theirs.get('backend', '?')}, BLAS 1 thread)"
        common = {"target": TARGET_NUTS_VS_PER_OBSERVATION, "baseline": baseline}
        lines.append(
            {
                **common,
                "case": f"{prefix} NUTS ESS/s (sampling) sufficient statistics / per-observation",
                "value": ours["ess_per_sampling_s"] / theirs["ess_per_sampling_s"],
                "cache": "cold",
                "seconds": ours["sampling_s"],
                "baseline_seconds": theirs["sampling_s"],
                "run": ours,
            }
        )
        lines.append(
            {
                **common,
                "case": f"{prefix} NUTS ESS/s (wall, each compiled) 1st fit / per-observation",
                "value": ours["ess_per_wall_s"] / theirs["ess_per_wall_s"],
                "cache": "cold",
                "seconds": ours["wall_s"],
                "baseline_seconds": theirs["wall_s"],
                "run": ours,
            }
        )
        if warm is None:
            return
        for case, key in (("wall", "wall_s"), ("sampling only", "sampling_s")):
            lines.append(
                {
                    **common,
                    "case": f"{prefix} NUTS ESS/s (wall) 2nd fit / per-observation {case}",
                    "value": warm["ess_per_wall_s"] / (theirs["min_ess_bulk"] / theirs[key]),
                    "cache": "warm",
                    "seconds": warm["wall_s"],
                    "baseline_seconds": theirs[key],
                    "run": warm,
                }
            )

    nuts_lines("LDA", rows["shared_bayesclass"], rows["shared_per_observation"], rows["shared_bayesclass_warm"])
    if rows.get("shared_per_observation_threaded"):
        threaded, single = rows["shared_per_observation_threaded"], rows["shared_per_observation_threaded_ref"]
        lines.append(
            {
                "case": "per-obs sampling s, default BLAS threads / 1 thread",
                "value": threaded["sampling_s"] / single["sampling_s"],
                "baseline": "LDA per-observation model, BLAS 1 thread (same draws)",
                "seconds": threaded["sampling_s"],
                "baseline_seconds": single["sampling_s"],
            }
        )
    if rows.get("per_class_bayesclass"):
        nuts_lines("QDA", rows["per_class_bayesclass"], rows["per_class_per_observation"], None)
    if closed is not None:
        for covariance, name, label, baseline in (
            ("shared", "lda_lsqr", "LDA", "LinearDiscriminantAnalysis(solver='lsqr').fit"),
            ("shared", "lda_svd", "LDA", "LinearDiscriminantAnalysis().fit (svd)"),
            ("per-class", "qda", "QDA", "QuadraticDiscriminantAnalysis().fit"),
        ):
            row = closed[covariance]
            lines.append(
                {
                    "case": f"{label} closed-form MLE / {baseline}",
                    "value": row["baselines"][name]["ratio"],
                    "target": TARGET_CLOSED_FORM_VS_SKLEARN,
                    "sense": "<=",
                    "baseline": f"scikit-learn {baseline}",
                    "cache": "cold",
                    "seconds": row["ours_s"],
                    "baseline_seconds": row["baselines"][name]["seconds"],
                }
            )
    return lines


# ------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = arguments(
        __doc__,
        quick="LDA draws=tune=100 only (no QDA, no threaded-BLAS run), closed forms at n=5,000, d=10, one repeat",
        seed="NUTS seed (the 2nd bayesclass fit uses seed+1); default 1",
    )
    parser.add_argument("--draws", type=int, default=None, help="LDA draws per chain (default 1000; 100 with --quick)")
    parser.add_argument(
        "--tune", type=int, default=None, help="LDA tuning draws per chain (default 1000; 100 with --quick)"
    )
    parser.add_argument(
        "--per-class-draws",
        type=int,
        default=None,
        help="draws = tune per chain of both QDA models (default 500; skipped by --quick); the per-observation QDA "
        "model samples at about 0.12 s per draw",
    )
    parser.add_argument("--no-per-class", action="store_true", help="skip the QDA NUTS comparison")
    parser.add_argument(
        "--threaded-draws",
        type=int,
        default=None,
        help="draws = tune of the short per-observation LDA run at default BLAS threads "
        "(default 20; 0 skips; skipped by --quick)",
    )
    parser.add_argument("--no-closed-form", action="store_true", help="skip part 2 (closed forms vs scikit-learn)")
    parser.add_argument(
        "--repeats", type=int, default=None, help="closed-form timing repeats (default 5; 1 with --quick)"
    )
    args = parser.parse_args(argv)
    draws = args.draws or (100 if args.quick else 1000)
    tune = args.tune if args.tune is not None else (100 if args.quick else 1000)
    skip_per_class = args.no_per_class or (args.quick and args.per_class_draws is None)
    per_class_draws = None if skip_per_class else (args.per_class_draws or 500)
    threaded_draws = args.threaded_draws if args.threaded_draws is not None else (0 if args.quick else 20)
    repeats = args.repeats or (1 if args.quick else 5)
    closed_size = (5_000, 10) if args.quick else (CLOSED_N, CLOSED_D)
    settings = {
        "draws": draws,
        "tune": tune,
        "chains": CHAINS,
        "per_class_draws": per_class_draws,
        "threaded_draws": threaded_draws,
        "closed_form_repeats": repeats,
        "closed_form_n_obs": closed_size[0],
        "closed_form_n_features": closed_size[1],
    }
    with Session("gcc", args, settings) as run:
        dataset = synthetic(NUTS_N, NUTS_D, NUTS_K, mean_scale=1.0)
        info = {"name": dataset.name, "n_obs": NUTS_N, "n_features": NUTS_D, "n_classes": NUTS_K}
        nuts = bench_nuts(
            dataset,
            draws=draws,
            tune=tune,
            per_class_draws=per_class_draws,
            threaded_draws=threaded_draws,
            seed=args.seed,
        )
        print_nuts(nuts, info, args.quick)
        closed = None
        if not args.no_closed_form:
            closed = bench_closed_form(repeats, *closed_size)
            print_closed_form(closed)
        run.section("Ratios (cold = every per-process cache missed or cleared; warm = compile-cache hit)")
        for line in ratio_lines(nuts, closed):
            run.verdicts.check(**line)
        print()
        run.details = {"dataset": info, "nuts": nuts, "closed_form": closed}
    return 0


if __name__ == "__main__":
    sys.exit(main())
