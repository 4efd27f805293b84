"""Benchmark of the latent Gaussian-process family (``gp``): Gibbs and NUTS samplers, HSGP, Laplace comparator.

Data: seed 004's illustration (``data.seed004_gp(n, random_seed=1)``: x ~ U(0, 1), one latent draw of
K = 0.5^2 + 3^2 exp(-25 (x - x')^2), logit labels), the input standardised; the priors of ``PRIOR``
(lengthscale ~ InverseGamma(3, 2), the default before issue 39 and the plain PyMC model's, amplitude ~
HalfNormal(3), constant ~ HalfNormal(1)); 2 chains.

Part 1, exact latent GP at n = 200, 1000 draws after 1000 warm-up/burn-in steps per chain, sampler seeds
3-7 (the issue's target: the median over seeds of our ESS/s >= 3x the median of a plain ``pm.gp.Latent``
model sampled with nutpie at one BLAS thread, in the same run; r_hat <= 1.01 and 0 divergences on >= 4 of 5
seeds):

``bayesclass gibbs``
    ``inference.fit(LatentGaussianProcess(approximation="exact"), data)`` (method "auto" = "gibbs": Polya-Gamma
    augmentation, slice-sampled hyperparameters with the latents integrated out, exact Gaussian latent draws,
    scale move; ``inference/engines/gibbs.py``), 5 seeds.
``bayesclass nuts``
    the same model by NUTS (nutpie, fused whitened-latent Op), seeds 3 and 4, for reference.
``pm.gp.Latent``
    the plain model with the SAME priors: ``pm.gp.Latent(cov_func=Constant(c^2) + a^2 ExpQuad(1, ls))``,
    ``gp.prior("f", X)`` (PyMC's own whitening), ``pm.Bernoulli(logit_p=f)``, compiled and sampled with
    ``nutpie`` directly at one BLAS thread (the thread setting of ours, so that the ratio isolates the model
    and sampler), seeds 3-5.

ESS = smallest bulk ESS (``arviz_stats.ess``) over the hyperparameters (lengthscale, amplitude, constant);
ESS/s per sampling second (the issue's unit; burn-in or warm-up included) and per wall second (compile
included). Part 2, exact GP at n = 400 by Gibbs (1500 draws after 500 burn-in sweeps): r_hat <= 1.01,
0 divergences, ESS >= 400 in <= 120 s wall. Part 3, HSGP (m = 30) by Gibbs at n = 10,000 and n = 2,000
(1500 draws after 500): the same diagnostics in <= 60 s each. Part 4, the Laplace comparator at n = 1,000
(``LatentGaussianProcess(approximation="exact", prior=PRIOR).point_estimate(data, "map")``, type-II maximum likelihood
with the exact gradient) vs scikit-learn's ``GaussianProcessClassifier`` with the same kernel
``C(1) * RBF(1) + C(0.25)`` and the same start, ``n_restarts_optimizer=0``; time ratio (target <= 1x) and
scores on 2,000 fresh rows of the same latent function. Part 5, coverage: on data seeds 3-12 at n = 200
(``seed004_gp_truth``), the fraction of training inputs whose true latent lies in the 89% band of the Gibbs
posterior (target >= 80% on each).

Run::

    .venv/bin/python bench/bench_gp.py            # full run (~7 min on 2 cores)
    .venv/bin/python bench/bench_gp.py --quick    # smoke test: part 1 at n = 50 (one seed each), part 4
    .venv/bin/python bench/bench_gp.py --json out.json
"""

from __future__ import annotations

import time

from harness import Session, Verdicts, arguments, convergence, fitted_by, fresh, time_best, warm_up_nutpie

from bayesclass.models import GaussianProcessPrior

#: the priors of every fit here: the plain pm.gp.Latent comparator states the same InverseGamma(3, 2) lengthscales
PRIOR = GaussianProcessPrior(lengthscale_prior="inverse_gamma")
TARGET_ESS_RATIO = 3.0  # ESS/s of ours / plain pm.gp.Latent (nutpie), at least
TARGET_N400_SECONDS = 120.0
TARGET_HSGP_SECONDS = 60.0
TARGET_COVERAGE = 0.8
GIBBS_SEEDS, NUTS_SEEDS, BASELINE_SEEDS = (3, 4, 5, 6, 7), (3, 4), (3, 4, 5)
TARGET_DRAWS, TARGET_BURN_IN = 1500, 500  # parts 2, 3
TARGET_LAPLACE_RATIO = 1.0  # our Laplace seconds / scikit-learn GPC fit seconds, at most
MAX_R_HAT, MIN_ESS = 1.01, 400
CHAINS, DATA_SEED = 2, 1
DEFAULT_SEED = 3  # of the sampler
HYPERPARAMETERS = ("lengthscale", "amplitude", "constant")


def seed004(n: int, *, random_seed: int = DATA_SEED):
    """Seed 004's data with x standardised by its own mean and sd (returned for reuse on new rows)."""
    import dataclasses

    from bayesclass.data import seed004_gp

    raw = seed004_gp(n, random_seed=random_seed)
    center, scale = raw.X.mean(axis=0), raw.X.std(axis=0)
    return dataclasses.replace(raw, X=(raw.X - center) / scale), center, scale


def diagnostics(posterior, sample_stats, names=HYPERPARAMETERS) -> dict:
    """Convergence of the hyperparameters (``inference.diagnose``): ESS, r_hat, divergences, tree steps."""
    return convergence(posterior, sample_stats, var_names=names)


def run_ours(data, *, approximation: str, draws: int, tune: int, seed: int, method: str = "auto") -> dict:
    from bayesclass import inference
    from bayesclass.inference.result import result_info
    from bayesclass.models import LatentGaussianProcess

    settings = inference.SamplerSettings(draws=draws, tune=tune, chains=CHAINS, progressbar=False)
    start = time.perf_counter()
    result = inference.fit(
        LatentGaussianProcess(approximation=approximation, prior=PRIOR),
        data,
        method=method,
        sampler=settings,
        random_seed=seed,
    )
    wall = time.perf_counter() - start
    info = result_info(result)
    run = {
        "n": data.n_obs,
        "approximation": approximation,
        "method": info.method,
        "fitted_by": fitted_by(result),  # with the NUTS backend, read from the result
        "seed": seed,
        "draws": draws,
        "tune": tune,
        "compile_s": float(info.compile_seconds or 0.0),
        "compile_cache_hit": int(bool(info.compile_cache_hit)),
        "sampling_s": float(info.sampling_seconds or 0.0),
        "wall_s": wall,
        **diagnostics(result["posterior"].to_dataset(), result["sample_stats"].to_dataset()),
        "latent_mean": result["posterior"]["latent"].mean(("chain", "draw")).values.tolist()
        if "latent" in result["posterior"]
        else None,
    }
    return with_rates(run)


def run_plain_latent(data, *, draws: int, tune: int, blas_threads: int | None, seed: int) -> dict:
    """pm.gp.Latent with the same priors, compiled and sampled by nutpie directly."""
    import contextlib

    import nutpie
    import pymc as pm
    from threadpoolctl import threadpool_limits

    start = time.perf_counter()
    with pm.Model() as model:
        lengthscale = pm.InverseGamma("lengthscale", alpha=3.0, beta=2.0)
        amplitude = pm.HalfNormal("amplitude", sigma=3.0)
        constant = pm.HalfNormal("constant", sigma=1.0)
        covariance = pm.gp.cov.Constant(constant**2) + amplitude**2 * pm.gp.cov.ExpQuad(1, ls=lengthscale)
        latent = pm.gp.Latent(cov_func=covariance).prior("latent", X=data.X)
        pm.Bernoulli("label", logit_p=latent, observed=data.y)
    compiled = nutpie.compile_pymc_model(model)
    compiled_at = time.perf_counter()
    limit = threadpool_limits(limits=blas_threads, user_api="blas") if blas_threads else contextlib.nullcontext()
    with limit:
        trace = nutpie.sample(compiled, draws=draws, tune=tune, chains=CHAINS, seed=seed, progress_bar=False)
    end = time.perf_counter()
    run = {
        "n": data.n_obs,
        "method": "pm.gp.Latent + nutpie",
        "seed": seed,
        "blas_threads": blas_threads or "default",
        "compile_s": compiled_at - start,
        "sampling_s": end - compiled_at,
        "wall_s": end - start,
        **diagnostics(trace["posterior"].to_dataset(), trace["sample_stats"].to_dataset()),
    }
    return with_rates(run)


def with_rates(run: dict) -> dict:
    run["ess_per_sampling_s"] = run["min_ess_bulk"] / run["sampling_s"]
    run["ess_per_wall_s"] = run["min_ess_bulk"] / run["wall_s"]
    return run


def converged(run: dict) -> bool:
    return run["max_r_hat"] <= MAX_R_HAT and not run["divergences"] and run["min_ess_bulk"] >= MIN_ESS


def median(values) -> float:
    import statistics

    return float(statistics.median(values))


def show(label: str, run: dict) -> None:
    print(
        f"  {label:<34} sampling {run['sampling_s']:7.1f} s  wall {run['wall_s']:7.1f} s  ESS "
        f"{run['min_ess_bulk']:6.0f} "
        f"(tail {run['min_ess_tail']:5.0f})  r_hat {run['max_r_hat']:.4f}  div {run['divergences']:3d}  "
        f"seed {run.get('seed', '-')}  ESS/s {run['ess_per_sampling_s']:6.2f} (wall "
        f"{run['ess_per_wall_s']:5.2f})"
    )


def target_run(
    title: str, n: int, approximation: str, seconds: float, draws: int, tune: int, seed: int, verdicts: Verdicts
) -> tuple[dict, bool]:
    """One of our fits (the family's default sampler) against the issue's convergence-and-time target."""
    print(f"\n{title}")
    data, _, _ = seed004(n)
    run = run_ours(data, approximation=approximation, draws=draws, tune=tune, seed=seed)
    show(f"bayesclass {run['fitted_by']} ({approximation})", run)
    passed = verdicts.check(
        f"{title}: wall seconds (needs r_hat, ESS, 0 div.)",
        run["wall_s"],
        seconds,
        "<=",
        baseline="(absolute time limit)",
        unit=" s",
        cache="warm" if run["compile_cache_hit"] else "cold",
        seconds=run["wall_s"],
        run=run,
    )
    passed = converged(run) and passed
    print(
        f"  also needs r_hat <= {MAX_R_HAT}, 0 divergences, ESS >= {MIN_ESS}: {'met' if converged(run) else 'NOT met'}"
    )
    return run, passed


def laplace_vs_sklearn(n: int, n_new: int, repeats: int = 3) -> dict:
    import numpy as np
    from sklearn.gaussian_process import GaussianProcessClassifier
    from sklearn.gaussian_process.kernels import RBF, ConstantKernel
    from sklearn.metrics import accuracy_score, log_loss

    from bayesclass.data import Dataset, seed004_gp_truth
    from bayesclass.models import LatentGaussianProcess

    truth = seed004_gp_truth(n + n_new, random_seed=DATA_SEED)  # one latent function: the first n rows train
    x = truth["x"][:n, np.newaxis]
    center, scale = x.mean(axis=0), x.std(axis=0)
    data = Dataset(
        name=f"seed004_gp[{n} of {n + n_new}]",
        X=(x - center) / scale,
        y=truth["y"][:n],
        feature_names=("x",),
        class_names=("0", "1"),
        feature_kinds=("continuous",),
    )
    new_rows = {name: values[n:] for name, values in truth.items()}
    x_new = ((new_rows["x"] - center[0]) / scale[0])[:, np.newaxis]
    model = LatentGaussianProcess(approximation="exact", prior=PRIOR)
    ours_s, estimate = time_best(
        lambda dataset: model.point_estimate(dataset, "map"), repeats, prepare=lambda: fresh(data)
    )
    ours = model.class_proba(estimate, x_new).values[:, 1]
    kernel = ConstantKernel(1.0) * RBF(1.0) + ConstantKernel(0.25)
    sklearn_s, classifier = time_best(
        lambda: GaussianProcessClassifier(kernel=kernel, n_restarts_optimizer=0).fit(data.X, data.y), repeats
    )
    theirs = classifier.predict_proba(x_new)[:, 1]
    fitted = classifier.kernel_.get_params()
    scores = {}
    for label, proba in (("ours", ours), ("sklearn", theirs)):
        scores[label] = {
            "accuracy": float(accuracy_score(new_rows["y"], proba > 0.5)),
            "log_loss": float(log_loss(new_rows["y"], proba, labels=[0, 1])),
            "mean_abs_error_vs_true_proba": float(np.abs(proba - new_rows["proba"]).mean()),
        }
    return {
        "n": n,
        "repeats": repeats,
        "ours_s": ours_s,
        "sklearn_s": sklearn_s,
        "ratio": ours_s / sklearn_s,
        "ours_hyperparameters": {
            "lengthscale": float(estimate["lengthscale"].values[0]),
            "amplitude": float(estimate["amplitude"]),
            "constant": float(estimate["constant"]),
        },
        "sklearn_hyperparameters": {
            "lengthscale": float(fitted["k1__k2__length_scale"]),
            "amplitude": float(np.sqrt(fitted["k1__k1__constant_value"])),
            "constant": float(np.sqrt(fitted["k2__constant_value"])),
        },
        "max_abs_proba_difference": float(np.abs(ours - theirs).max()),
        "scores": scores,
    }


def coverage_run(seeds, *, n: int, draws: int, tune: int) -> dict:
    """Part 5: the 89% band of the latent (Gibbs posterior) against the true latent, per data seed."""
    import numpy as np

    from bayesclass import inference
    from bayesclass.data import Dataset, seed004_gp_truth
    from bayesclass.models import LatentGaussianProcess

    coverage = {}
    for seed in seeds:
        truth = seed004_gp_truth(n, random_seed=seed)
        data = Dataset(
            name=f"seed004_gp[{seed}]",
            X=truth["x"][:, np.newaxis],
            y=truth["y"],
            feature_names=("x",),
            class_names=("0", "1"),
            feature_kinds=("continuous",),
        )
        result = inference.fit(
            LatentGaussianProcess(approximation="exact", prior=PRIOR),
            data,
            standardize=True,
            sampler=inference.SamplerSettings(draws=draws, tune=tune, chains=CHAINS, progressbar=False),
            random_seed=seed,
        )
        latent = result["posterior"]["latent"].values.reshape(-1, n)
        low, high = np.quantile(latent, [0.055, 0.945], axis=0)
        posterior = result["posterior"]
        coverage[seed] = {
            "coverage": float(np.mean((truth["latent"] >= low) & (truth["latent"] <= high))),
            "lengthscale": float(posterior["lengthscale"].mean()),
            "amplitude": float(posterior["amplitude"].mean()),
            "constant": float(posterior["constant"].mean()),
        }
        print(
            f"  data seed {seed:2d}: coverage {coverage[seed]['coverage']:.3f}  posterior means "
            + ", ".join(f"{name} {coverage[seed][name]:.3f}" for name in ("lengthscale", "amplitude", "constant"))
        )
    return coverage


def main(argv: list[str] | None = None) -> int:
    parser = arguments(
        __doc__,
        quick="100/100 draws; part 1 at n = 50 with one seed of each sampler, no parts 2, 3 and 5 (pm.gp.Latent's "
        "compilation alone takes a minute), part 4 at n = 50, one repeat",
        seed="first sampler seed of part 1 (the others follow it); default 3",
        seed_default=DEFAULT_SEED,
    )
    args = parser.parse_args(argv)
    draws = tune = 100 if args.quick else 1000
    n_small, n_large, n_hsgp, n_laplace = (50, None, (), 50) if args.quick else (200, 400, (10_000, 2_000), 1_000)
    repeats = 1 if args.quick else 3
    shift = args.seed - DEFAULT_SEED
    gibbs_seeds, nuts_seeds, baseline_seeds = (
        ((args.seed,),) * 3
        if args.quick
        else tuple(tuple(s + shift for s in seeds) for seeds in (GIBBS_SEEDS, NUTS_SEEDS, BASELINE_SEEDS))
    )
    settings = {
        "draws": draws,
        "tune": tune,
        "chains": CHAINS,
        "n": [n_small, n_large, list(n_hsgp), n_laplace],
        "seeds": {"gibbs": gibbs_seeds, "nuts": nuts_seeds, "pm.gp.Latent": baseline_seeds},
        "target_runs": {"draws": TARGET_DRAWS, "burn_in": TARGET_BURN_IN},
    }
    with Session("gp", args, settings) as run:
        verdicts = run.verdicts
        warm_up_nutpie(CHAINS)
        report = run.details

        print(f"\nPart 1: exact latent GP, n = {n_small}, {draws} draws after {tune} per chain")
        data, _, _ = seed004(n_small)
        gibbs = [run_ours(data, approximation="exact", draws=draws, tune=tune, seed=seed) for seed in gibbs_seeds]
        for one in gibbs:
            show(f"bayesclass {one['fitted_by']} (default)", one)
        nuts = [
            run_ours(data, approximation="exact", draws=draws, tune=tune, seed=seed, method="nuts")
            for seed in nuts_seeds
        ]
        for one in nuts:
            show(f"bayesclass {one['fitted_by']}, fused Op", one)
        plain = [run_plain_latent(data, draws=draws, tune=tune, blas_threads=1, seed=seed) for seed in baseline_seeds]
        for one in plain:
            show("pm.gp.Latent + nutpie, 1 BLAS thread", one)
        baseline_rate = median(one["ess_per_sampling_s"] for one in plain)
        gibbs_rate = median(one["ess_per_sampling_s"] for one in gibbs)
        good_seeds = sum(one["max_r_hat"] <= MAX_R_HAT and not one["divergences"] for one in gibbs)
        part1 = verdicts.check(
            "exact n small: median ESS/s gibbs / median pm.gp.Latent",
            gibbs_rate / baseline_rate,
            TARGET_ESS_RATIO,
            baseline="pm.gp.Latent with nutpie, 1 BLAS thread (median over seeds)",
            cache="cold",
            seconds=median(one["sampling_s"] for one in gibbs),
            baseline_seconds=median(one["sampling_s"] for one in plain),
            run=gibbs[0],
        )
        verdicts.check(
            "exact n small: median ESS/s nuts (ours) / median pm.gp.Latent",
            median(one["ess_per_sampling_s"] for one in nuts) / baseline_rate,
            baseline="pm.gp.Latent with nutpie, 1 BLAS thread (median over seeds)",
            cache="cold",
            run=nuts[0],
        )
        verdicts.check(
            "exact n small: median ESS/wall-s gibbs / median pm.gp.Latent",
            median(one["ess_per_wall_s"] for one in gibbs) / median(one["ess_per_wall_s"] for one in plain),
            baseline="pm.gp.Latent with nutpie, 1 BLAS thread (wall, compile included)",
            cache="cold",
        )
        enough = len(gibbs_seeds) - 1 if len(gibbs_seeds) > 1 else 1
        part1 = (
            verdicts.check(
                f"exact n small: gibbs seeds with r_hat <= 1.01 and 0 div. (of {len(gibbs_seeds)})",
                good_seeds,
                enough,
                baseline="(count over sampler seeds)",
                unit="",
            )
            and part1
        )
        report["part1"] = {"gibbs": gibbs, "nuts": nuts, "plain_one_thread": plain}

        part2 = None
        if n_large is not None:
            report["part2"], part2 = target_run(
                f"Part 2: exact latent GP, n = {n_large}, {TARGET_DRAWS} draws after {TARGET_BURN_IN}",
                n_large,
                "exact",
                TARGET_N400_SECONDS,
                TARGET_DRAWS,
                TARGET_BURN_IN,
                args.seed,
                verdicts,
            )
        parts3 = []
        for n in n_hsgp:
            result, passed = target_run(
                f"Part 3: HSGP (m = 30), n = {n:,}, {TARGET_DRAWS} draws after {TARGET_BURN_IN}",
                n,
                "hsgp",
                TARGET_HSGP_SECONDS,
                TARGET_DRAWS,
                TARGET_BURN_IN,
                args.seed,
                verdicts,
            )
            report[f"part3_n{n}"] = result
            parts3.append(passed)
        part3 = all(parts3) if parts3 else None

        print(f"\nPart 4: Laplace comparator vs scikit-learn GaussianProcessClassifier, n = {n_laplace}")
        laplace = laplace_vs_sklearn(n_laplace, 2_000, repeats)
        print(
            f"  ours {laplace['ours_s']:.2f} s (cold: a fresh Dataset per call), scikit-learn "
            f"{laplace['sklearn_s']:.2f} s, best of {repeats}: ratio {laplace['ratio']:.2f}x"
        )
        print(
            f"  hyperparameters ours {laplace['ours_hyperparameters']}, "
            f"scikit-learn {laplace['sklearn_hyperparameters']}"
        )
        for label, scores in laplace["scores"].items():
            print(
                f"  {label:<8} accuracy {scores['accuracy']:.4f}  log loss {scores['log_loss']:.4f}  "
                f"mean |P - true P| {scores['mean_abs_error_vs_true_proba']:.4f}"
            )
        same_accuracy = abs(laplace["scores"]["ours"]["accuracy"] - laplace["scores"]["sklearn"]["accuracy"]) <= 0.005
        print(
            f"  largest |P_ours - P_sklearn| {laplace['max_abs_proba_difference']:.2e}; equal accuracy "
            f"(within 0.005): {same_accuracy}"
        )
        part4 = verdicts.check(
            "Laplace fit seconds ours / scikit-learn GPC",
            laplace["ratio"],
            TARGET_LAPLACE_RATIO,
            "<=",
            baseline="scikit-learn GaussianProcessClassifier (same kernel and start)",
            cache="cold",
            seconds=laplace["ours_s"],
            baseline_seconds=laplace["sklearn_s"],
        )
        report["part4"] = laplace
        part5 = None
        if not args.quick:
            print(
                f"\nPart 5: coverage of the true latent, n = {n_small}, data seeds 3-12 (Gibbs, 1000 draws after 500)"
            )
            coverage = coverage_run(range(3, 13), n=n_small, draws=1000, tune=500)
            part5 = verdicts.check(
                "coverage of the true latent, worst data seed (89% band)",
                min(one["coverage"] for one in coverage.values()),
                TARGET_COVERAGE,
                baseline="(fraction of training inputs)",
                unit="",
            )
            report["part5"] = coverage
        report["parts_passed"] = (
            None
            if run.quick
            else {  # a quick run judges nothing
                "part1": part1,
                "part2": part2,
                "part3": part3,
                "part4": part4 and same_accuracy,
                "part5": part5,
            }
        )
        print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
