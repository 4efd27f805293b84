"""The stacked predictive against its best member, on held-out rows.

For each data set: a 60/20/20 stratified split (seed 0); every family below (logistic regression, naive Bayes and
the NIW Gaussian class-conditional models) fitted on the training part by its default method; the stack of all
of them by LOO stacking and by pseudo-BMA+ weights (arviz_stats.compare); the held-out log loss of each member's
posterior predictive and of each stack on the validation and test parts. The lines name each member's method and
backend, read from its result. ``--quick``: penguins only, 2 chains x 100 draws, stacking by LOO only.

Run::

    .venv/bin/python bench/bench_stacking.py            # about a minute per data set on 2 busy cores
    .venv/bin/python bench/bench_stacking.py --quick    # penguins, 2 x 100 draws, LOO stacking only
    .venv/bin/python bench/bench_stacking.py --json out.json
"""

from __future__ import annotations

import time

import numpy as np
from harness import Session, arguments, fitted_by

import bayesclass as bc
from bayesclass.inference import SamplerSettings
from bayesclass.inference.evaluation.heldout import evaluate
from bayesclass.inference.result import stack_info

NIW = bc.GaussianClassConditionalPrior(covariance_prior="inverse_wishart")
FAMILIES = {  # each by its family's default method (the conjugate NIW prior makes gcc's exact draws the default)
    "logistic": bc.LogisticRegression(),
    "naive_bayes": bc.NaiveBayes(),
    "lda": bc.GaussianClassConditional(covariance="shared", prior=NIW),
    "qda": bc.GaussianClassConditional(covariance="per-class", prior=NIW),
}
DATA = {
    "breast_cancer": lambda: bc.load("breast_cancer"),
    "penguins (4 measurements)": lambda: bc.load("penguins", missing="drop").select_features(
        ["bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g"]
    ),
}


def main() -> None:
    """Fit the members, stack them and print the held-out log losses of each data set (module docstring)."""
    args = arguments(__doc__, quick="penguins only, 2 chains x 100 draws, LOO stacking only",
                     seed="seed of the split and the fits; default 0", seed_default=0).parse_args()  # fmt: skip
    sampler = SamplerSettings(progressbar=False, **(dict(draws=100, tune=100, chains=2) if args.quick else
                                                    dict(draws=500, tune=500, chains=4)))  # fmt: skip
    data = {"penguins (4 measurements)": DATA["penguins (4 measurements)"]} if args.quick else DATA
    methods = ("stacking",) if args.quick else ("stacking", "pseudo_bma_plus")
    settings = {"data": list(data), "draws": sampler.draws, "tune": sampler.tune, "chains": sampler.chains,
                "methods": list(methods)}  # fmt: skip
    with Session("stacking", args, settings) as run:
        for name, loader in data.items():
            run.details[name] = one_data_set(name, loader, sampler, methods, args.seed, run)


def one_data_set(name, loader, sampler, methods, seed, run) -> dict:
    """Fit, stack and score one data set; print its lines and return its numbers."""
    train, validation, test = bc.train_validation_test_split(loader(), random_seed=seed)
    started = time.perf_counter()
    members = {  # each by its family's default method
        label: bc.fit(model, train, sampler=sampler, standardize=True, random_seed=seed)
        for label, model in FAMILIES.items()
    }
    fitted = time.perf_counter() - started
    members = {f"{label} ({fitted_by(result)})": result for label, result in members.items()}
    print(f"\n{name}: {train.n_obs} training, {validation.n_obs} validation, {test.n_obs} test rows "
          f"(fits {fitted:.1f} s: {', '.join(members)})")  # fmt: skip
    run.verdicts.check(f"{name}: fit seconds of all members", fitted, baseline="none (absolute)", unit=" s",
                       seconds=fitted)  # fmt: skip
    numbers: dict = {"fit_seconds": fitted, "members": list(members)}
    for method in methods:
        started = time.perf_counter()
        stacked = bc.stack(members, method=method)
        seconds = time.perf_counter() - started
        weights = list(stack_info(stacked).weights)
        print(f"  {method} weights ({seconds:.1f} s): "
              + ", ".join(f"{label} {w:.3f}" for label, w in zip(members, weights, strict=True)))  # fmt: skip
        numbers[method] = {"seconds": seconds, "weights": weights}
        for split, rows in (("validation", validation), ("test", test)):
            numbers[method][split] = held_out(stacked, members, rows, split)
    return numbers


def held_out(stacked, members: dict, rows, split: str) -> dict:
    """Print and return the stack's held-out log loss against the LOO-selected and the best member."""
    table = evaluate(stacked, rows)
    stack_loss = float(table["log_loss"].iloc[0])
    member_losses = table["log_loss"].iloc[1:]
    best = member_losses.idxmin()
    elpd = np.asarray(stack_info(stacked).elpd_loo)
    chosen = f"member: {list(members)[int(elpd.argmax())]}"  # what LOO selection would have picked

    def short(label: str) -> str:
        return label.removeprefix("member: ")

    prediction = bc.predict(stacked, rows)
    observed = np.arange(rows.n_obs), rows.y  # the members' classes are the rows' (same data)
    row_loss = -np.log(prediction["class_proba"].values[observed])
    print(f"    {split}: stack log loss {stack_loss:.4f}")
    for what, label in (("LOO-selected member", chosen), ("best member in hindsight", best)):
        value = float(member_losses[label])
        member = f"class_proba_member_{list(members).index(short(label))}"
        difference = row_loss + np.log(prediction[member].values[observed])  # paired, per row
        paired_se = float(difference.std(ddof=1) / np.sqrt(rows.n_obs))
        print(f"      {what}: {short(label)} {value:.4f} (stack minus it: {stack_loss - value:+.4f}, "
              f"paired se {paired_se:.4f})")  # fmt: skip
    print("      members: " + ", ".join(f"{short(k)} {v:.4f}" for k, v in member_losses.items()))
    return {"stack_log_loss": stack_loss, "member_log_loss": {short(k): float(v) for k, v in member_losses.items()}}


if __name__ == "__main__":
    main()
