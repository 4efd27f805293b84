"""Benchmark of the latent GP's DEFAULT Gibbs settings against the verdict, the wall time and the work around sampling.

What a user gets from ``bc.fit(bc.LatentGaussianProcess(), data, standardize=True)`` with every sampler
setting left at its default (4 chains; method "auto" = the Gibbs sampler; the family's draws and burn-in,
``LatentGaussianProcess.sampling_defaults``; the family's sweep, ``latent_gaussian_form``), on these cases:

``seed004_gp n=400``   ``data.seed004_gp(400, random_seed=1)``: the exact GP (up to 500 rows)
``seed004_gp n=2000``  ``data.seed004_gp(2000, random_seed=1)``: HSGP (m = 30), above 500 rows
``README example``     the README's GP example as written: ``bc.load("seed004_gp", n=200, random_seed=1)``,
                       ``LatentGaussianProcess(link="logit")`` (the default link), fit seed 0 (whatever ``--seed`` says)
``penguins``           (``--cases penguins``) Palmer penguins, ``sex ~ bill_depth_mm + body_mass_g``, the rows
                       with a blank in one of those columns dropped (n = 333): the exact GP on two inputs

Each case is judged by the project's verdict (``inference.diagnose``: r_hat <= 1.01, bulk and tail ESS >= 400
for EVERY posterior element: the hyperparameters and every latent value, the exact GP's latent f at each
training row or the HSGP's basis weights). Printed per case: wall seconds of the whole fit, the CPU seconds of
this process and its chain processes, the sampling seconds (burn-in included) and the share of the wall time
outside sampling, then the worst r_hat, bulk ESS and tail ESS over the hyperparameters and over the latent
values, and whether the verdict holds (converged or not).
Then the verdict lines of issue 30 items 4 and 7: the defaults pass the verdict; the wall
time of ``bc.fit`` within :data:`WALL_TARGETS` (exact n = 400: 60 s, HSGP n = 2,000: 30 s, on 2 idle cores);
the share outside sampling (the pointwise log-likelihood, the replicated labels, the Laplace ``map`` estimate
beside the draws, building the result) at most :data:`OUTSIDE_SAMPLING_TARGET` percent.

``--before`` also runs the settings of the issue-25 release with 4 chains: 1000 draws after 1000 burn-in
sweeps, one augmentation-and-latent draw per sweep and no thinning (the form's ``latent_updates`` and
``thin`` set to 1 here).

Run::

    .venv/bin/python bench/bench_gp_defaults.py                # n400, n2000, README example (~2 min, 2 idle cores)
    .venv/bin/python bench/bench_gp_defaults.py --cases n400 --seed 2          # another sampler seed
    .venv/bin/python bench/bench_gp_defaults.py --before       # and the issue-25 release's settings
    .venv/bin/python bench/bench_gp_defaults.py --quick        # smoke test: seed004_gp n = 100
    .venv/bin/python bench/bench_gp_defaults.py --cases penguins --json out.json
"""

from __future__ import annotations

import resource
import time

from harness import Session, arguments

CHAINS = 4
HYPERPARAMETERS = ("lengthscale", "amplitude", "constant")
#: wall seconds of ``bc.fit`` with the defaults on 2 idle cores (issue 30 item 4)
WALL_TARGETS = {"seed004_gp n=400": 60.0, "seed004_gp n=2000": 30.0}
#: the largest share of a default fit's wall time spent outside sampling, percent (issue 30 item 7)
OUTSIDE_SAMPLING_TARGET = 15.0
#: the README's GP example: its fit seed
README_SEED = 0


def penguins():
    """The built-in penguins' sex and two measurements, the rows with a blank in them dropped (333 rows)."""
    from bayesclass.data import load

    return load("penguins", target="sex", features=["bill_depth_mm", "body_mass_g"], missing="drop")


def readme_example():
    """The README's GP example's data: ``bc.load("seed004_gp", n=200, random_seed=1)``."""
    import bayesclass as bc

    return bc.load("seed004_gp", n=200, random_seed=1)


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


def cpu_seconds() -> float:
    """CPU seconds of this process and of its finished children (the Gibbs chain processes), user + system."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def run_case(data, *, seed: int, draws: int | None, tune: int | None) -> dict:
    """Fit with the defaults (``draws``/``tune`` None) or given counts; the verdict over hyperparameters and latents."""
    import arviz_stats as azs

    import bayesclass as bc
    from bayesclass.inference import diagnose
    from bayesclass.inference.result import result_info

    settings = bc.SamplerSettings(chains=CHAINS, draws=draws, tune=tune, progressbar=False)
    cpu, start = cpu_seconds(), time.perf_counter()
    result = bc.fit(bc.LatentGaussianProcess(), data, sampler=settings, standardize=True, random_seed=seed)
    seconds = time.perf_counter() - start
    cpu = cpu_seconds() - cpu
    posterior = result["posterior"].to_dataset()
    report = diagnose(result)
    groups = {
        "hyper": [name for name in posterior.data_vars if name in HYPERPARAMETERS],
        "latent": [name for name in posterior.data_vars if name not in HYPERPARAMETERS],
    }
    sampling = result_info(result).sampling_seconds
    record = {
        "seconds": seconds,
        "cpu_seconds": cpu,
        "sampling_seconds": sampling,
        "outside_sampling_percent": 100.0 * (seconds - sampling) / seconds,
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
        f" {record['seconds']:6.1f} s wall, {record['cpu_seconds']:6.1f} s CPU (sampling"
        f" {record['sampling_seconds']:6.1f} s; outside sampling {record['outside_sampling_percent']:4.1f}%)"
        f" | hyperparameters r_hat {record['hyper_r_hat']:.4f} bulk ESS {record['hyper_ess_bulk']:5.0f}"
        f" tail {record['hyper_ess_tail']:5.0f}"
        f" | latent values r_hat {record['latent_r_hat']:.4f} bulk ESS {record['latent_ess_bulk']:5.0f}"
        f" tail {record['latent_ess_tail']:5.0f}"
        f" | {'converged' if record['passed'] else 'not converged: ' + '; '.join(record['failures'])}",
        flush=True,
    )


def check(session: Session, case: str, record: dict) -> None:
    """The verdict lines of ``case``: the verdict, its wall-time target (if any), the share outside sampling."""
    session.verdicts.check(
        f"{case}: defaults pass the verdict",
        float(record["passed"]),
        1.0,
        baseline="r_hat <= 1.01, bulk/tail ESS >= 400 on every element",
        unit="",
        seconds=record["seconds"],
    )
    if case in WALL_TARGETS:
        session.verdicts.check(
            f"{case}: wall seconds of the default fit",
            record["seconds"],
            WALL_TARGETS[case],
            "<=",
            baseline=f"{record['cpu_seconds']:.1f} CPU s; the target holds on 2 idle cores",
            unit=" s",
            seconds=record["seconds"],
        )
    session.verdicts.check(
        f"{case}: share of the fit outside sampling",
        record["outside_sampling_percent"],
        OUTSIDE_SAMPLING_TARGET,
        "<=",
        baseline=f"wall {record['seconds']:.1f} s - sampling {record['sampling_seconds']:.1f} s",
        unit="%",
        seconds=record["seconds"],
    )


def main() -> None:
    parser = arguments(__doc__, quick="seed004_gp at n = 100 only", seed="seed of the samplers; default 1")
    parser.add_argument("--before", action="store_true", help="also run the issue-25 release's settings")
    parser.add_argument("--cases", nargs="*", help="run only these cases: n400, n2000, readme, penguins")
    args = parser.parse_args()
    from bayesclass.data import seed004_gp

    everything = {
        "seed004_gp n=400": (lambda: seed004_gp(400, random_seed=1), args.seed),
        "seed004_gp n=2000": (lambda: seed004_gp(2000, random_seed=1), args.seed),
        "README example": (readme_example, README_SEED),
        "penguins": (penguins, args.seed),
    }
    cases = {name: everything[name] for name in ("seed004_gp n=400", "seed004_gp n=2000", "README example")}
    if args.quick:
        cases = {"seed004_gp n=100": (lambda: seed004_gp(100, random_seed=1), args.seed)}
    elif args.cases:
        short = {"n400": "seed004_gp n=400", "n2000": "seed004_gp n=2000", "readme": "README example"}
        short["penguins"] = "penguins"
        unknown = sorted(set(args.cases) - set(short))
        if unknown:
            parser.error(f"--cases: unknown {', '.join(unknown)}; choose from {', '.join(short)}")
        cases = {short[name]: everything[short[name]] for name in args.cases}
    with Session("gp_defaults", args, {"chains": CHAINS, "before": args.before}) as session:
        session.section("latent GP, default settings, 4 chains: verdict over hyperparameters and latent values")
        for case, (load, seed) in cases.items():
            data = load()
            record = run_case(data, seed=seed, draws=None, tune=None)
            show(case, "default", record)
            session.details[f"{case} default"] = record
            check(session, case, record)
            if args.before:
                with previous_defaults():
                    before = run_case(data, seed=seed, draws=1000, tune=1000)
                show(case, "before", before)
                session.details[f"{case} before"] = before


if __name__ == "__main__":
    main()
