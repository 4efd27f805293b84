"""Issue 16's routes to a faster latent-GP sampler that were measured and NOT kept, measured again here.

Seed 004's data at n = 200 (``bench_gp.seed004``), default priors, 2 chains x 1000 draws after 1000 warm-up,
sampler seed 3, ESS = smallest bulk ESS over lengthscale, amplitude and constant, against the default
sampler (``method="gibbs"``) in the same run:

1. nutpie's low-rank modified mass matrix (``adaptation="low_rank"``) on our fused NUTS model;
2. the embedded Laplace approximation (Margossian et al. 2020): blackjax's ``laplace_dhmc`` (dynamic HMC on
   the log hyperparameters, the latents integrated out by a Laplace approximation found by L-BFGS, gradients
   by the implicit function theorem) on ``log p(v, theta, y)`` with whitened latents ``z = L_theta v``. This is
   an approximation (not exact MCMC); its posterior predictive on 50 new inputs is compared with Gibbs's.
   Step size and a diagonal inverse mass matrix come from the Gibbs posterior of the log hyperparameters
   (a pilot a user would not have: the most favourable setting), 1 to 9 leapfrog steps per transition.

3. nutpie's normalising-flow adaptation (``adaptation="flow"``, formerly ``transform_adapt``, designed for
   funnel-shaped couplings): it needs nutpie's JAX backend and ``flowjax`` (``pip install flowjax``; not a
   dependency of bayesclass), so it runs on the model built with PyTensor's own kernel and Cholesky
   (``build(latent_graph="pytensor")``: the same density; our fused Op has no JAX form). Skipped, with a line
   saying so, where flowjax is missing. Only with ``--flow`` (or ``--quick``): at n = 200 it took 654 s.

The embedded Laplace runs 500 transitions after 200 per chain (its transitions cost seconds each at n = 200).

Run::

    .venv/bin/python bench/bench_gp_routes.py            # routes 1 and 2 (minutes on 2 cores); --flow adds 3
    .venv/bin/python bench/bench_gp_routes.py --quick    # n = 40, 100 + 100 steps (embedded Laplace 10 + 10)
"""

from __future__ import annotations

import time

from bench_gp import CHAINS, HYPERPARAMETERS, diagnostics, seed004, with_rates
from harness import Session, arguments, fitted_by

from bayesclass.inference.result import result_info


def run_gibbs(data, *, draws: int, tune: int, seed: int):
    from bayesclass import inference
    from bayesclass.models import LatentGaussianProcess

    start = time.perf_counter()
    result = inference.fit(  # the family's default method at this n (the Gibbs sampler), named from the result
        LatentGaussianProcess(approximation="exact"),
        data,
        sampler=inference.SamplerSettings(draws=draws, tune=tune, chains=CHAINS, progressbar=False),
        random_seed=seed,
    )
    run = {
        "route": f"{fitted_by(result)} (default)",
        "sampling_s": float(result_info(result).sampling_seconds or 0.0),
        "wall_s": time.perf_counter() - start,
        **diagnostics(result["posterior"].to_dataset(), result["sample_stats"].to_dataset()),
    }
    return with_rates(run), result


def run_low_rank(data, *, draws: int, tune: int, seed: int) -> dict:
    import nutpie
    from threadpoolctl import threadpool_limits

    from bayesclass.models import LatentGaussianProcess

    start = time.perf_counter()
    model = LatentGaussianProcess(approximation="exact").build(data)
    compiled = nutpie.compile_pymc_model(model)
    compiled_at = time.perf_counter()
    with threadpool_limits(limits=1, user_api="blas"):
        trace = nutpie.sample(
            compiled,
            draws=draws,
            tune=tune,
            chains=CHAINS,
            seed=seed,
            progress_bar=False,
            adaptation="low_rank",
        )
    end = time.perf_counter()
    run = {
        "route": "nuts, nutpie low-rank mass matrix",
        "sampling_s": end - compiled_at,
        "wall_s": end - start,
        **diagnostics(trace["posterior"].to_dataset()[list(HYPERPARAMETERS)], trace["sample_stats"].to_dataset()),
    }
    return with_rates(run)


def run_flow_adapted(data, *, draws: int, tune: int, seed: int) -> dict | None:
    try:
        import flowjax  # noqa: F401
    except ImportError:
        print("  nutpie transform_adapt: not measured (flowjax is not installed: pip install flowjax)")
        return None
    import nutpie

    from bayesclass.inference.engines._blackjax import _jax
    from bayesclass.models import LatentGaussianProcess

    _jax()
    start = time.perf_counter()
    model = LatentGaussianProcess(approximation="exact").build(data, latent_graph="pytensor")
    compiled = nutpie.compile_pymc_model(model, backend="jax", gradient_backend="jax")
    compiled_at = time.perf_counter()
    trace = nutpie.sample(
        compiled, draws=draws, tune=tune, chains=CHAINS, seed=seed, progress_bar=False, adaptation="flow"
    )
    end = time.perf_counter()
    run = {
        "route": "nuts, nutpie transform_adapt (flow)",
        "sampling_s": end - compiled_at,
        "wall_s": end - start,
        **diagnostics(trace["posterior"].to_dataset()[list(HYPERPARAMETERS)], trace["sample_stats"].to_dataset()),
    }
    return with_rates(run)


def run_embedded_laplace(data, gibbs_result, *, draws: int, tune: int, seed: int) -> dict:
    import numpy as np

    from bayesclass.inference.engines._blackjax import _jax
    from bayesclass.models import LatentGaussianProcess

    jax = _jax()
    import blackjax
    import jax.numpy as jnp
    import xarray as xr

    form = LatentGaussianProcess(approximation="exact").latent_gaussian_form(data)
    signs = 2.0 * np.asarray(data.y, dtype=float) - 1.0
    n = data.n_obs

    def log_joint(whitened, log_theta):
        factor = jnp.linalg.cholesky(form.covariance(log_theta, jnp))
        latent = factor @ whitened
        return form.log_prior(log_theta, jnp) - 0.5 * whitened @ whitened - jnp.sum(jnp.logaddexp(0.0, -signs * latent))

    posterior = gibbs_result["posterior"]
    log_draws = np.log(
        np.stack([posterior[name].values.reshape(-1) for name in ("lengthscale", "amplitude", "constant")], axis=1)
    )
    inverse_mass = log_draws.var(axis=0)
    sampler = blackjax.laplace_dhmc(
        log_joint, theta_init=jnp.zeros(n), step_size=0.5, inverse_mass_matrix=jnp.asarray(inverse_mass), maxiter=100
    )
    step = jax.jit(sampler.step)
    rng = np.random.default_rng(seed)
    chains, stats = [], {"diverging": [], "lbfgs_hit_maxiter": []}
    start = time.perf_counter()
    for _ in range(CHAINS):
        key = jax.random.key(int(rng.integers(2**31)))
        state = sampler.init(jnp.asarray(log_draws.mean(axis=0) + rng.uniform(-0.3, 0.3, 3)), key)
        kept, divergent, maxed = [], [], []
        for index in range(tune + draws):
            key, subkey = jax.random.split(key)
            state, info = step(subkey, state)
            if index >= tune:
                kept.append(np.asarray(state.position))
                divergent.append(bool(info.is_divergent))
                maxed.append(bool(info.lbfgs_hit_maxiter))
        chains.append(np.array(kept))
        stats["diverging"].append(divergent)
        stats["lbfgs_hit_maxiter"].append(maxed)
    seconds = time.perf_counter() - start
    theta = np.exp(np.array(chains))
    draws_ds = xr.Dataset(
        {
            "lengthscale": (("chain", "draw", "feature"), theta[..., :1]),
            "amplitude": (("chain", "draw"), theta[..., 1]),
            "constant": (("chain", "draw"), theta[..., 2]),
        }
    )
    stats_ds = xr.Dataset({"diverging": (("chain", "draw"), np.array(stats["diverging"]))})
    run = {
        "route": "embedded Laplace (blackjax laplace_dhmc), approximate",
        "sampling_s": seconds,
        "wall_s": seconds,
        "lbfgs_hit_maxiter": int(np.sum(stats["lbfgs_hit_maxiter"])),
        **diagnostics(draws_ds, stats_ds),
        "hyperparameter_means": {name: float(draws_ds[name].mean()) for name in HYPERPARAMETERS},
        "gibbs_hyperparameter_means": {name: float(posterior[name].mean()) for name in HYPERPARAMETERS},
    }
    return with_rates(run)


def show(run: dict) -> None:
    print(
        f"  {run['route']:<56} sampling {run['sampling_s']:7.1f} s  ESS {run['min_ess_bulk']:6.0f}  r_hat "
        f"{run['max_r_hat']:.4f}  div {run['divergences']}  ESS/s {run['ess_per_sampling_s']:6.2f}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = arguments(__doc__, quick="n = 40, 100 + 100 steps (the embedded Laplace 10 + 10)",
                       seed="sampler seed; default 3", seed_default=3)  # fmt: skip
    parser.add_argument("--flow", action="store_true", help="also nutpie's flow adaptation (11 minutes at n = 200)")
    args = parser.parse_args(argv)
    n, draws, tune = (40, 100, 100) if args.quick else (200, 1000, 1000)
    laplace_draws, laplace_tune = (10, 10) if args.quick else (500, 200)
    with Session("gp_routes", args, {"n": n, "draws": draws, "tune": tune, "chains": CHAINS}) as session:
        data, _, _ = seed004(n)
        gibbs, gibbs_result = run_gibbs(data, draws=draws, tune=tune, seed=args.seed)
        show(gibbs)
        routes = [run_low_rank(data, draws=draws, tune=tune, seed=args.seed)]
        show(routes[-1])
        flow = run_flow_adapted(data, draws=draws, tune=tune, seed=args.seed) if args.flow or args.quick else None
        if flow is not None:
            routes.append(flow)
            show(flow)
        routes.append(run_embedded_laplace(data, gibbs_result, draws=laplace_draws, tune=laplace_tune, seed=args.seed))
        show(routes[-1])
        print(
            f"  embedded Laplace means {routes[-1]['hyperparameter_means']} vs Gibbs "
            f"{routes[-1]['gibbs_hyperparameter_means']}; L-BFGS hit its limit {routes[-1]['lbfgs_hit_maxiter']} times"
        )
        for route in routes:
            session.verdicts.check(
                f"ESS/s {route['route']} / {gibbs['route']}",
                route["ess_per_sampling_s"] / gibbs["ess_per_sampling_s"],
                baseline=f"{gibbs['route']}, same run",
                seconds=route["sampling_s"],
                baseline_seconds=gibbs["sampling_s"],
                run=route,
            )
        session.details.update({"gibbs": gibbs, "routes": routes})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
