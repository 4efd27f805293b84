"""Benchmark of the latent GP's DEFAULT Gibbs settings against the convergence verdict (issue 25 item 6).

What a user gets from ``bc.fit(bc.LatentGaussianProcess(), data, standardize=True)`` with every sampler
setting left at its default (4 chains; method "auto" = the Gibbs sampler; the family's draws and burn-in,
``LatentGaussianProcess.sampling_defaults``; the family's sweep, ``latent_gaussian_form``), on three cases:

``seed004_gp n=400``   ``data.seed004_gp(400, random_seed=1)``: the exact GP (up to 500 rows)
``seed004_gp n=2000``  ``data.seed004_gp(2000, random_seed=1)``: HSGP (m = 30), above 500 rows
``penguins``           Palmer penguins, ``sex ~ bill_depth_mm + body_mass_g``, the rows with a blank in one of
                       those columns dropped (n = 333): the exact GP on two inputs

Each case is judged by the project's verdict (``inference.diagnose``: r_hat <= 1.01, bulk and tail ESS >= 400
for EVERY posterior element: the hyperparameters and every latent value, the exact GP's latent f at each
training row or the HSGP's basis weights). Printed per case: wall seconds of the whole fit, then the worst
r_hat, bulk ESS and tail ESS over the hyperparameters and over the latent values, and the verdict.

``--before`` also runs the settings of the previous release with 4 chains: 1000 draws after 1000 burn-in
sweeps, one augmentation-and-latent draw per sweep and no thinning (the form's ``latent_updates`` and
``thin`` set to 1 here).

Run::

    .venv/bin/python bench/bench_gp_defaults.py                # the three cases, defaults (~10 min on 2 idle cores)
    .venv/bin/python bench/bench_gp_defaults.py --before       # and the previous defaults
    .venv/bin/python bench/bench_gp_defaults.py --quick        # smoke test: seed004_gp n = 60, 150 + 150 sweeps
    .venv/bin/python bench/bench_gp_defaults.py --cases penguins --json out.json
"""

from __future__ import annotations

import time

from harness import Session, arguments

CHAINS = 4
HYPERPARAMETERS = ("lengthscale", "amplitude", "constant")


def penguins():
    """The built-in penguins' sex and two measurements, the rows with a blank in them dropped (333 rows)."""
    from bayesclass.data import load

    return load("penguins", target="sex", features=["bill_depth_mm", "body_mass_g"], missing="drop")


def previous_defaults():
    """A context in which the GP's Gibbs sweep is the previous release's (one latent draw per sweep, no thinning)."""
    import contextlib
    import dataclasses

    from bayesclass.models import LatentGaussianProcess

    @contextlib.contextmanager
    def patched():
        original = LatentGaussianProcess.latent_gaussian_form

        def form(self, data):
            return dataclasses.replace(original(self, data), latent_updates=1, thin=1)

        LatentGaussianProcess.latent_gaussian_form = form
        try:
            yield
        finally:
            LatentGaussianProcess.latent_gaussian_form = original

    return patched()


def run_case(data, *, seed: int, draws: int | None, tune: int | None) -> dict:
    """Fit with the defaults (``draws``/``tune`` None) or given counts; the verdict over hyperparameters and latents."""
    import arviz_stats as azs

    import bayesclass as bc
    from bayesclass.inference import diagnose
    from bayesclass.inference.result import result_info

    settings = bc.SamplerSettings(chains=CHAINS, draws=draws, tune=tune, progressbar=False)
    start = time.perf_counter()
    result = bc.fit(bc.LatentGaussianProcess(), data, sampler=settings, standardize=True, random_seed=seed)
    seconds = time.perf_counter() - start
    posterior = result["posterior"].to_dataset()
    report = diagnose(result)
    groups = {
        "hyper": [name for name in posterior.data_vars if name in HYPERPARAMETERS],
        "latent": [name for name in posterior.data_vars if name not in HYPERPARAMETERS],
    }
    record = {
        "seconds": seconds,
        "sampling_seconds": result_info(result).sampling_seconds,
        "settings": dict(result_info(result).sampler_settings),
        "passed": report.passed,
        "failures": list(report.failures),
    }
    for group, names in groups.items():
        part = posterior[names]
        bulk, tail = azs.ess(part, method="bulk"), azs.ess(part, method="tail")
        record[f"{group}_r_hat"] = max(float(value.max()) for value in azs.rhat(part).data_vars.values())
        record[f"{group}_ess_bulk"] = min(float(value.min()) for value in bulk.data_vars.values())
        record[f"{group}_ess_tail"] = min(float(value.min()) for value in tail.data_vars.values())
    return record


def show(case: str, label: str, record: dict) -> None:
    settings = record["settings"]
    print(
        f"  {case:<18} {label:<8} draws {settings['draws']} tune {settings['tune']} chains {settings['chains']}:"
        f" {record['seconds']:6.1f} s (sampling {record['sampling_seconds']:6.1f} s)"
        f" | hyperparameters r_hat {record['hyper_r_hat']:.4f} bulk ESS {record['hyper_ess_bulk']:5.0f}"
        f" tail {record['hyper_ess_tail']:5.0f}"
        f" | latent values r_hat {record['latent_r_hat']:.4f} bulk ESS {record['latent_ess_bulk']:5.0f}"
        f" tail {record['latent_ess_tail']:5.0f}"
        f" | {'converged' if record['passed'] else 'not converged: ' + '; '.join(record['failures'])}",
        flush=True,
    )


def main() -> None:
    parser = arguments(__doc__, quick="seed004_gp at n = 60 only, 150 draws after 150 sweeps (not the defaults), and "
                       "--before at the same counts", seed="seed of the samplers; default 1")  # fmt: skip
    parser.add_argument("--before", action="store_true", help="also run the previous release's defaults")
    parser.add_argument("--cases", nargs="*", help="run only these cases: n400, n2000, penguins")
    args = parser.parse_args()
    from bayesclass.data import seed004_gp

    cases = {
        "seed004_gp n=400": lambda: seed004_gp(400, random_seed=1),
        "seed004_gp n=2000": lambda: seed004_gp(2000, random_seed=1),
        "penguins": penguins,
    }
    counts = {"draws": 150, "tune": 150} if args.quick else {"draws": None, "tune": None}
    if args.quick:
        cases = {"seed004_gp n=60": lambda: seed004_gp(60, random_seed=1)}
    elif args.cases:
        short = {"n400": "seed004_gp n=400", "n2000": "seed004_gp n=2000", "penguins": "penguins"}
        cases = {short[name]: cases[short[name]] for name in args.cases}
    with Session("gp_defaults", args, {"chains": CHAINS, "before": args.before}) as session:
        session.section("latent GP, default settings, 4 chains: verdict over hyperparameters and latent values")
        for case, load in cases.items():
            data = load()
            record = run_case(data, seed=args.seed, **counts)
            show(case, "quick" if args.quick else "default", record)
            session.details[f"{case} default"] = record
            session.verdicts.check(
                f"{case}: defaults pass the verdict",
                float(record["passed"]),
                1.0,
                baseline="r_hat <= 1.01, bulk/tail ESS >= 400 on every element",
                unit="",
                seconds=record["seconds"],
            )
            if args.before or args.quick:
                with previous_defaults():
                    before = run_case(data, seed=args.seed, **(counts if args.quick else {"draws": 1000, "tune": 1000}))
                show(case, "before", before)
                session.details[f"{case} before"] = before


if __name__ == "__main__":
    main()
