"""The stacked predictive against its best member, on held-out rows.

For each data set: a 60/20/20 stratified split (seed 0); every family below fitted on the training part by its
sampler (NUTS for logistic regression, exact conjugate draws for naive Bayes and the NIW Gaussian class-conditional
models); the stack of all of them by LOO stacking and by pseudo-BMA+ weights (arviz_stats.compare); the held-out
log loss of each member's posterior predictive and of each stack on the validation and test parts.

Run: ``.venv/bin/python bench/bench_stacking.py`` (about a minute per data set on 2 busy cores).
"""

from __future__ import annotations

import time

import numpy as np

import bayesclass as bc
from bayesclass.inference import SamplerSettings
from bayesclass.inference.evaluation.heldout import evaluate
from bayesclass.inference.result import stack_info

NUTS = SamplerSettings(draws=500, tune=500, chains=4, progressbar=False)
EXACT = SamplerSettings(draws=500, chains=4, progressbar=False)
NIW = bc.GaussianClassConditionalPrior(covariance_prior="inverse_wishart")
FAMILIES = {
    "logistic (nuts)": (bc.LogisticRegression(), "nuts", NUTS),
    "naive_bayes (exact)": (bc.NaiveBayes(), "exact", EXACT),
    "lda (exact)": (bc.GaussianClassConditional(covariance="shared", prior=NIW), "exact", EXACT),
    "qda (exact)": (bc.GaussianClassConditional(covariance="per-class", prior=NIW), "exact", EXACT),
}
DATA = {
    "breast_cancer": lambda: bc.load("breast_cancer"),
    "penguins (4 measurements)": lambda: bc.load("penguins", missing="drop").select_features(
        ["bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g"]
    ),
}


def main() -> None:
    for name, loader in DATA.items():
        train, validation, test = bc.train_validation_test_split(loader(), random_seed=0)
        started = time.perf_counter()
        members = {
            label: bc.fit(model, train, method=method, sampler=sampler, standardize=True, random_seed=0)
            for label, (model, method, sampler) in FAMILIES.items()
        }
        fitted = time.perf_counter() - started
        print(f"\n{name}: {train.n_obs} training, {validation.n_obs} validation, {test.n_obs} test rows "
              f"(fits {fitted:.1f} s)")  # fmt: skip
        for method in ("stacking", "pseudo_bma_plus"):
            started = time.perf_counter()
            stacked = bc.stack(members, method=method)
            seconds = time.perf_counter() - started
            weights = ", ".join(
                f"{label} {w:.3f}" for label, w in zip(members, stack_info(stacked).weights, strict=True)
            )
            print(f"  {method} weights ({seconds:.1f} s): {weights}")
            for split, rows in (("validation", validation), ("test", test)):
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


if __name__ == "__main__":
    main()
