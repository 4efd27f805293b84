"""What the ``posterior_predictive`` group costs (issue 29 item 4): file size and fit time, per family.

Fits, as an analyst's default run: the penguins table (``load("penguins", missing="drop")``, 333 rows), 4 chains x
1,000 draws (``SamplerSettings()``), standardised, seed 0, ``method="auto"``: logistic (NUTS, 7 columns) and naive
Bayes (NUTS, 7 columns of three kinds) on every column; gcc (NUTS, LKJ prior) on the four measurements; the GP
(Gibbs) on the four measurements with ``target="sex"`` (it is binary).

Measured per family:

- the saved file with the group (``after``) and the same result with the group and its attrs removed, saved the
  same way (``before``: what the fit wrote before the group existed), in MB;
- the added fit time: the pass over the training rows that computes ``log_likelihood`` alone
  (``training_draws(random_seed=None)``, what the fit ran before) against the same pass drawing the labels too,
  plus building the group (the features of the generative families); best of 2, seconds;
- ``arviz_stats.loo_pit`` and ``arviz_plots.plot_ppc_pava`` on the loaded file: ok, or ArviZ's error.

Results (2026-11-27, 2 busy cores; sizes exact, times +-15%):

============  ======  =========  ========  ===========  =================  ========================================
family        method  before MB  after MB  fit s (all)  added s            ArviZ on the saved file
============  ======  =========  ========  ===========  =================  ========================================
logistic      nuts    11.81      13.15     5.7          0.10 (0.08->0.18)  loo_pit and plot_ppc_pava ok
naive_bayes   nuts    12.48      15.69     6.5          0.13 (0.15->0.27)  ok (200 feature replicates, 7 columns)
gcc           nuts    11.98      14.40     6.1          0.12 (0.16->0.28)  pava ok; loo_pit: ArviZ's "All tail values
                                                                           are the same" (one row has log P = 0 in
                                                                           every draw); ok with ``loo_pit_weights``
gp            gibbs   22.68      24.02     138.6        0.54 (12.8->13.4)  ok
============  ======  =========  ========  ===========  =================  ========================================

The labels (int8, 4,000 x 333) are 1.33 MB; naive Bayes' features 200 x 333 x 7 float32 = 1.86 MB, gcc's 200 x 333
x 4 = 1.07 MB. The GP's pass over its training rows costs 12.8 s with or without the labels: drawing them in the same
pass as the log-likelihood is what keeps them at 0.5 s.

Run::

    .venv/bin/python bench/bench_posterior_predictive.py            # ~4 min on 2 cores (the GP's Gibbs fit: 2 min)
    .venv/bin/python bench/bench_posterior_predictive.py --quick    # 2 x 100 draws, 120 rows, one timing each
    .venv/bin/python bench/bench_posterior_predictive.py --json out.json

Each family is fitted by its default method; the line names the method and backend the result records.
"""

from __future__ import annotations

import dataclasses
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
from harness import Session, arguments, fitted_by

import bayesclass as bc
from bayesclass.inference.criticism import posterior_predictive as pp
from bayesclass.inference.criticism.loo import loo_pit_weights
from bayesclass.inference.engines.fit import model_inputs, standardization_of
from bayesclass.inference.result import result_info, write_info

MEASUREMENTS = ["bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g"]


def _data(family: str, rows: int | None = None) -> bc.Dataset:
    data = bc.load("penguins", missing="drop", **({"target": "sex"} if family == "gp" else {}))
    data = data.select_features(MEASUREMENTS) if family in ("gcc", "gp") else data
    if rows is None:
        return data
    return data.subset(np.unique(np.linspace(0, data.n_obs - 1, rows).astype(int)))  # every class: rows run in order


def _best(function, repeats: int = 2) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def _arviz(path: Path) -> str:
    import arviz_plots
    import arviz_stats

    result = bc.load_result(path)
    many = len(result_info(result).class_names) > 2
    arviz_plots.plot_ppc_pava(result, **({"data_type": "categorical"} if many else {}))
    try:
        arviz_stats.loo_pit(result)
        return "loo_pit and plot_ppc_pava ok"
    except ValueError as error:
        log_weights, pareto_k = loo_pit_weights(result)
        arviz_stats.loo_pit(result, log_weights=log_weights, pareto_k=pareto_k)
        return f"pava ok; loo_pit: {error} (ok with loo_pit_weights)"


def measure(family: str, sampler: bc.SamplerSettings, folder: Path, rows: int | None = None, repeats: int = 2) -> dict:
    """Sizes before/after, the added time and ArviZ's verdict for one family (module docstring)."""
    start = time.perf_counter()
    result = bc.fit(family, _data(family, rows), sampler=sampler, standardize=True, random_seed=0)
    fit_seconds = time.perf_counter() - start
    info = result_info(result)
    after, before = folder / f"{family}_after.nc", folder / f"{family}_before.nc"
    bc.save_result(result, after)
    old = result.copy()
    del old["posterior_predictive"]
    write_info(old, dataclasses.replace(info, posterior_predictive=None))
    bc.save_result(old, before)
    X = model_inputs(result, result["constant_data"]["X"].values)
    y = result["observed_data"]["y"].values
    posterior = result["posterior"].to_dataset()
    alone = _best(lambda: pp.training_draws(info.model, posterior, X, y, random_seed=None), repeats)
    labels = pp.training_draws(info.model, posterior, X, y, random_seed=0)[1]
    with_labels = _best(lambda: pp.training_draws(info.model, posterior, X, y, random_seed=0), repeats)
    group = _best(
        lambda: pp.posterior_predictive_group(
            info.model, posterior, labels, X, standardization_of(result), random_seed=0
        ),
        repeats,
    )
    return {
        "family": family,
        "method": fitted_by(result),
        "before_mb": before.stat().st_size / 1e6,
        "after_mb": after.stat().st_size / 1e6,
        "fit_s": fit_seconds,
        "log_likelihood_s": alone,
        "with_labels_s": with_labels,
        "group_s": group,
        "added_s": with_labels + group - alone,
        "arviz": _arviz(after),
    }


def main() -> None:
    """Measure every family and print one line each (module docstring)."""
    args = arguments(__doc__, quick="2 chains x 100 draws on 120 of the rows, one timing each",
                     seed="unused (every fit has seed 0)", seed_default=0).parse_args()  # fmt: skip
    sampler = (
        bc.SamplerSettings(draws=100, tune=100, chains=2, progressbar=False)
        if args.quick
        else bc.SamplerSettings(progressbar=False)
    )
    rows, repeats = (120, 1) if args.quick else (None, 2)
    warnings.simplefilter("ignore")
    settings = {"data": f"penguins ({rows or 'all'} rows)", "draws": sampler.draws, "chains": sampler.chains}
    with Session("posterior_predictive", args, settings) as run, tempfile.TemporaryDirectory() as folder:
        for family in ("logistic", "naive_bayes", "gcc", "gp"):
            row = measure(family, sampler, Path(folder), rows, repeats)
            print(
                f"{row['family']:<12} {row['method']:<6} before {row['before_mb']:6.2f} MB  after "
                f"{row['after_mb']:6.2f} MB  fit {row['fit_s']:6.1f} s  added {row['added_s']:5.2f} s "
                f"(log-likelihood pass {row['log_likelihood_s']:.2f} -> {row['with_labels_s']:.2f} s, group "
                f"{row['group_s']:.3f} s)  {row['arviz']}",
                flush=True,
            )
            run.verdicts.check(f"{family}: file size with the group / without", row["after_mb"] / row["before_mb"],
                               baseline=f"the same result without posterior_predictive ({row['method']})")  # fmt: skip
            run.details[family] = row


if __name__ == "__main__":
    main()
