"""The latent GP's default method on few and many inputs: Gibbs sweep times and the default fit (issue 28).

``method="auto"`` is the Gibbs sampler where its work per kept draw, (inputs + 2) x rows^3, is at most
``GIBBS_MAX_SWEEP_WORK`` (models/gaussian_process.py), and ``laplace`` above it. Printed per case: rows, inputs,
that work, the method ``auto`` resolves to, and the Gibbs sampler's milliseconds per sweep (one chain, one BLAS
thread, ``--sweeps`` sweeps after one), with the predicted seconds of a default Gibbs fit (1,500 sweeps x 4 chains,
2 at a time on 2 cores). Then the wall seconds of the default fit ``bc.fit(LatentGaussianProcess(), train,
standardize=True)`` on breast_cancer's 60% training split (341 rows x 30 inputs).

Cases: seed 004 at n = 400 (1 input), penguins' sex on bill depth and body mass (n = 333, 2 inputs),
breast_cancer's 60% split (n = 341, 30 inputs).

Run::

    .venv/bin/python bench/bench_gp_default_method.py            # ~1 minute on 2 idle cores
    .venv/bin/python bench/bench_gp_default_method.py --quick    # 5 sweeps a case, default fit at 2 x 100 draws
    .venv/bin/python bench/bench_gp_default_method.py --json out.json
"""

from __future__ import annotations

import time

import numpy as np
from harness import Session, arguments, fitted_by


def cases():
    """(name, standardised training Dataset) of the three cases."""
    from bayesclass.data import load, seed004_gp, train_validation_test_split
    from bayesclass.inference.engines.fit import _apply_standardization, _standardization

    breast, _, _ = train_validation_test_split(load("breast_cancer"), fractions=(0.6, 0.2, 0.2), random_seed=0)
    tables = {
        "seed004_gp n=400": seed004_gp(400, random_seed=1),
        "penguins sex": load("penguins", target="sex", features=["bill_depth_mm", "body_mass_g"], missing="drop"),
        "breast_cancer 60%": breast,
    }
    for name, data in tables.items():
        center, scale = _standardization(data, True)
        yield name, _apply_standardization(data, center, scale, True)


def sweep_milliseconds(data, sweeps: int, seed: int) -> tuple[float, float]:
    """(ms per Gibbs sweep, slice evaluations per sweep) of one chain at one BLAS thread."""
    from threadpoolctl import threadpool_limits

    from bayesclass.inference.engines import gibbs
    from bayesclass.models import LatentGaussianProcess

    form = LatentGaussianProcess().latent_gaussian_form(data)
    gibbs._load_lapack()
    with threadpool_limits(limits=1, user_api="blas"):
        chain = gibbs._Chain(
            form,
            np.random.default_rng(seed),
            form.initial_log_theta(),
            update_hyperparameters=True,
            latent_updates=form.latent_updates,
        )
        chain.sweep()
        start, evaluations = time.perf_counter(), 0
        for _ in range(sweeps):
            evaluations += chain.sweep()[1]
    return 1000 * (time.perf_counter() - start) / sweeps, evaluations / sweeps


def main() -> None:
    """Print each case's sweep time and the default fit's wall time (module docstring)."""
    import bayesclass as bc
    from bayesclass.inference.result import result_info
    from bayesclass.models import LatentGaussianProcess

    options = arguments(__doc__, quick="5 sweeps a case; the default fit at 2 chains x 100 draws").parse_args()
    sweeps = 5 if options.quick else 30
    sampler = bc.SamplerSettings(draws=100, tune=100, chains=2, progressbar=False) if options.quick else None
    model = LatentGaussianProcess()
    with Session("gp_default_method", options, {"sweeps": sweeps, "default_fit_quick": options.quick}) as run:
        for name, data in cases():
            milliseconds, evaluations = sweep_milliseconds(data, sweeps, options.seed)
            record = {
                "case": name,
                "rows": data.n_obs,
                "inputs": data.n_features,
                "work": model.gibbs_sweep_work(data),
                "auto": model.default_method_for(data),
                "ms_per_sweep": milliseconds,
                "evaluations_per_sweep": evaluations,
                "predicted_default_gibbs_s": milliseconds * 1500 * 2 / 1000,
            }
            run.details[name] = record
            print(
                f"{name:18s} n={data.n_obs} d={data.n_features} work {record['work']:.2g} auto={record['auto']:7s} "
                f"{milliseconds:6.1f} ms/sweep ({evaluations:.0f} evaluations), default Gibbs fit ~"
                f"{record['predicted_default_gibbs_s']:.0f} s",
                flush=True,
            )
            run.verdicts.check(f"{name}: Gibbs ms per sweep (1 chain, 1 BLAS thread)", milliseconds,
                               baseline="none (absolute)", unit=" ms")  # fmt: skip
        train, _, _ = bc.train_validation_test_split(bc.load("breast_cancer"), fractions=(0.6, 0.2, 0.2), random_seed=0)
        start = time.perf_counter()
        result = bc.fit(model, train, standardize=True, random_seed=options.seed, sampler=sampler)
        seconds = time.perf_counter() - start
        info = result_info(result)
        run.details["default fit breast_cancer 60%"] = {"method": fitted_by(result), "seconds": seconds}
        print(f"default fit on breast_cancer's 60% split: {fitted_by(result)} in {seconds:.1f} s\n  {info.method_note}")
        run.verdicts.check("default fit on breast_cancer's 60% split", seconds, baseline=fitted_by(result),
                           unit=" s", seconds=seconds)  # fmt: skip


if __name__ == "__main__":
    main()
