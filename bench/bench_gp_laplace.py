"""Laplace (``method="laplace"``) vs the Gibbs sampler (the GP's default) on held-out rows.

Per case: one training / test split; the Gibbs posterior at its defaults and 4 x 1000 Laplace draws (latents from
the Laplace Gaussian at the type-II ML hyperparameters) are fitted on the training rows and predict the test rows.
Printed: the max and mean |P_laplace - P_gibbs| of the predicted P(class 1), the mean width of each one's 89%
interval of P(class 1) (posterior ETI over draws; for the ``map`` estimate the Laplace interval
[g(m - z s), g(m + z s)]), and each one's held-out log loss (and the ``map`` plug-in's).

Cases: ``seed004`` (seed 004's illustration, 300 rows: 180 training, 99 test), ``seed004_probit`` (the same with
the probit link), ``seed004_small`` (60 rows: 36 training, 20 test), ``seed004_hsgp`` (1,500 rows: 900 training,
495 test, HSGP), ``penguins`` (penguins' sex ~ bill depth + body mass, 333 rows: 200 training, 110 test); the split
keeps 60% for training and 33% for testing (the 7% validation part is unused).

Measured (random seed 0; mean / max |P_laplace - P_gibbs|; mean 89% width Laplace ETI / map interval / Gibbs ETI;
log loss Laplace / map / Gibbs; share of test rows whose Laplace / Gibbs ETI covers the true P(y = 1)):

==============  =============  ===================  =====================  ===========
case            |difference|   interval width       held-out log loss      covers truth
==============  =============  ===================  =====================  ===========
seed004         0.009 / 0.032  0.193 / 0.194 / 0.174  0.295 / 0.295 / 0.299  0.92 / 0.92
seed004_probit  0.013 / 0.070  0.175 / 0.178 / 0.131  0.163 / 0.163 / 0.152  0.93 / 0.93
seed004_small   0.035 / 0.088  0.370 / 0.369 / 0.414  0.624 / 0.623 / 0.621  0.45 / 0.50
seed004_hsgp    0.004 / 0.012  0.068 / 0.068 / 0.062  0.198 / 0.198 / 0.199  1.00 / 1.00
penguins        0.014 / 0.071  0.141 / 0.142 / 0.157  0.258 / 0.258 / 0.257  -
==============  =============  ===================  =====================  ===========

Run::

    .venv/bin/python bench/bench_gp_laplace.py [--cases seed004 penguins] [--json out.json]
    .venv/bin/python bench/bench_gp_laplace.py --quick    # seed004_small, 2 chains x 100 draws each
"""

from __future__ import annotations

import time

import numpy as np
from harness import Session, arguments, fitted_by

import bayesclass as bc
from bayesclass.data import load, seed004_gp, train_validation_test_split
from bayesclass.models import LatentGaussianProcess


def _cases():
    return {
        "seed004": (lambda: seed004_gp(300, random_seed=4), "logit"),
        "seed004_probit": (lambda: seed004_gp(300, random_seed=4, link="probit"), "probit"),
        "seed004_small": (lambda: seed004_gp(60, random_seed=4), "logit"),
        "seed004_hsgp": (lambda: seed004_gp(1500, random_seed=4), "logit"),
        "penguins": (
            lambda: load("penguins", target="sex", features=["bill_depth_mm", "body_mass_g"], missing="drop"),
            "logit",
        ),
    }


def _log_loss(proba: np.ndarray, y: np.ndarray) -> float:
    return float(-np.mean(np.log(np.clip(proba[np.arange(len(y)), y], 1e-300, None))))


def measure(name: str, seed: int = 0, sampler: bc.SamplerSettings | None = None) -> dict:
    """The agreement numbers of one case (module docstring); ``sampler`` replaces both samplers' settings."""
    make, link = _cases()[name]
    data = make()
    train, test = _two_way(data, seed)
    model = LatentGaussianProcess(link=link, approximation="hsgp" if name.endswith("hsgp") else "auto")
    out: dict = {"case": name, "n_train": train.n_obs, "n_test": test.n_obs}
    predictions = {}
    for method in ("gibbs", "laplace"):
        start = time.perf_counter()
        settings = sampler or (bc.SamplerSettings(draws=1000, chains=4) if method == "laplace" else None)
        result = bc.fit(model, train, method=method, sampler=settings, standardize=True, random_seed=seed)
        out[f"{method}_seconds"] = round(time.perf_counter() - start, 2)
        out[f"{method}_fitted_by"] = fitted_by(result)
        predictions[method] = bc.predict(result, test.X)
    y = np.asarray(test.y)
    gibbs, laplace = (predictions[m]["class_proba"].values[:, 1] for m in ("gibbs", "laplace"))
    out["max_abs_diff"] = float(np.abs(laplace - gibbs).max())
    out["mean_abs_diff"] = float(np.abs(laplace - gibbs).mean())
    for method, prediction in predictions.items():
        width = prediction["class_proba_high"].values[:, 1] - prediction["class_proba_low"].values[:, 1]
        out[f"{method}_eti_width"] = float(width.mean())
        out[f"{method}_log_loss"] = _log_loss(prediction["class_proba"].values, y)
    plug_in = predictions["laplace"]
    out["map_interval_width"] = float(
        (plug_in["class_proba_map_high"].values[:, 1] - plug_in["class_proba_map_low"].values[:, 1]).mean()
    )
    out["map_log_loss"] = _log_loss(plug_in["class_proba_map"].values, y)
    if data.true_class_proba is not None:
        truth = np.asarray(test.true_class_proba)[:, 1]
        for method, prediction in predictions.items():
            low, high = prediction["class_proba_low"].values[:, 1], prediction["class_proba_high"].values[:, 1]
            out[f"{method}_eti_covers_truth"] = float(np.mean((low <= truth) & (truth <= high)))
    return out


def _two_way(data, seed):
    """60% for training, 33% for testing (stratified), through the suite's splitter."""
    train, validation, test = train_validation_test_split(data, fractions=(0.6, 0.07, 0.33), random_seed=seed)
    return train, test


def main() -> None:
    """Measure the cases named by ``--cases`` (all by default) and print one JSON line each."""
    parser = arguments(__doc__, quick="seed004_small only, 2 chains x 100 draws for each method",
                       seed="seed of the split and the fits; default 0", seed_default=0)  # fmt: skip
    parser.add_argument("--cases", nargs="*", choices=list(_cases()), default=None, help="default: all")
    args = parser.parse_args()
    cases = args.cases or (["seed004_small"] if args.quick else list(_cases()))
    sampler = bc.SamplerSettings(draws=100, tune=100, chains=2, progressbar=False) if args.quick else None
    with Session("gp_laplace", args, {"cases": cases}) as run:
        for name in cases:
            row = measure(name, args.seed, sampler)
            print(f"{name}: Gibbs ({row['gibbs_fitted_by']}) {row['gibbs_seconds']} s, Laplace "
                  f"({row['laplace_fitted_by']}) {row['laplace_seconds']} s; mean / max |P_laplace - P_gibbs| "
                  f"{row['mean_abs_diff']:.3f} / {row['max_abs_diff']:.3f}; log loss Laplace / map / Gibbs "
                  f"{row['laplace_log_loss']:.3f} / {row['map_log_loss']:.3f} / {row['gibbs_log_loss']:.3f}",
                  flush=True)  # fmt: skip
            run.verdicts.check(f"{name}: Laplace fit seconds / Gibbs fit seconds",
                               row["laplace_seconds"] / max(row["gibbs_seconds"], 1e-9), baseline="Gibbs fit",
                               seconds=row["laplace_seconds"], baseline_seconds=row["gibbs_seconds"])  # fmt: skip
            run.details[name] = row


if __name__ == "__main__":
    main()
