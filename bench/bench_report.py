"""Benchmark of the HTML report (issue 14): generation time after the fit and page size, per family.

Fits (not timed; 2 chains x 1,000 draws unless --quick): logistic regression on ``breast_cancer`` (NUTS,
standardised) scored on its validation rows; naive Bayes on ``digits_binary`` (exact conjugate draws);
gcc with a per-class covariance on ``wine`` (inverse-Wishart prior, exact draws, standardised) with a 0-1 loss
matrix; the latent GP on ``seed004_gp`` (n = 200, standardised; NUTS). Each model is fitted on the training
part of ``train_validation_test_split(seed 0)``, as ``bayesclass compare`` does, and saved.

Timed, each in a FRESH subprocess (cold: nothing imported, no figure drawn yet in the process):

- ``report`` — the result loaded, then ``bayesclass.report(result)`` (the validation rows found from the split
  provenance): the time "after the fit" an analyst waits in ``bayesclass compare --report``, imports of
  matplotlib and arviz_plots included;
- ``cli`` — ``bayesclass report --run r.nc --out r.html`` from process start to the file written.

**Targets**: breast_cancer logistic ``report`` <= 10 s; every page <= 3 MB. The baseline printed beside them is
the same process's ``bayesclass.predict`` of the validation rows plus ``format_comparison`` (the plain-text
comparison ``bayesclass compare`` prints): what the report adds over the text output.

Run::

    .venv/bin/python bench/bench_report.py            # ~6 min on 2 cores, fits included
    .venv/bin/python bench/bench_report.py --quick    # 2 x 250 draws
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_SECONDS = 10.0
TARGET_MB = 3.0

FIT = r"""
import sys, warnings
warnings.simplefilter("ignore")
import bayesclass as bc
from bayesclass.models import GaussianClassConditional, GaussianClassConditionalPrior
case, draws, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
sampler = bc.SamplerSettings(draws=draws, tune=draws, chains=2, progressbar=False)
name, model, method, standardize = {
    "logistic": ("breast_cancer", "logistic", "nuts", True),
    "naive_bayes": ("digits_binary", "naive_bayes", "exact", False),
    "gcc_per_class": ("wine", GaussianClassConditional(covariance="per-class",
                      prior=GaussianClassConditionalPrior(covariance_prior="inverse_wishart")), "exact", True),
    "gp": ("seed004_gp", "gp", "nuts", True),
}[case]
data = bc.load(name, **({"n": 200} if name == "seed004_gp" else {}))
train, validation, test = bc.train_validation_test_split(data, random_seed=0)
result = bc.fit(model, train, method=method, sampler=sampler, standardize=standardize, random_seed=0)
bc.save_result(result, out)
"""

REPORT = r"""
import sys, time, json, warnings
warnings.simplefilter("ignore")
start = time.perf_counter()
import bayesclass as bc
from bayesclass.inference.prediction.decisions import LossMatrix
run, out, loss = sys.argv[1], sys.argv[2], sys.argv[3] == "loss"
result = bc.load_result(run)
loaded = time.perf_counter()
classes = tuple(json.loads(result.attrs["class_names"]))
page = bc.report(result, loss=LossMatrix.zero_one(classes) if loss else None)
bc.write_report(out, page)
done = time.perf_counter()
# the baseline: what the plain-text comparison costs in the same (now warm) process
from bayesclass.inference.evaluation.report_evaluation import validation_rows
heldout, _ = validation_rows(result)
t0 = time.perf_counter()
text = bc.format_comparison(result, heldout)
baseline = time.perf_counter() - t0
print(json.dumps({"load_s": loaded - start, "report_s": done - loaded, "baseline_s": baseline}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="2 x 250 draws")
    parser.add_argument("--json", type=Path, help="also write the numbers as JSON")
    args = parser.parse_args()
    draws = 250 if args.quick else 1000
    cases = ("logistic", "naive_bayes", "gcc_per_class", "gp")
    rows = {}
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        env = {**os.environ, "MPLBACKEND": "Agg"}
        for case in cases:
            run = folder / f"{case}.nc"
            subprocess.run([sys.executable, "-c", FIT, case, str(draws), str(run)], check=True, env=env)
            page = folder / f"{case}.html"
            done = subprocess.run(
                [sys.executable, "-c", REPORT, str(run), str(page), "loss" if case == "gcc_per_class" else "-"],
                check=True,
                env=env,
                capture_output=True,
                text=True,
            )
            timing = json.loads(done.stdout.strip().splitlines()[-1])
            start = time.perf_counter()
            cli_page = folder / f"{case}-cli.html"
            subprocess.run(
                [sys.executable, "-m", "bayesclass.cli", "report", "--run", str(run), "--out", str(cli_page)],
                check=True,
                env=env,
                capture_output=True,
            )
            cli_s = time.perf_counter() - start
            size_mb = page.stat().st_size / 1e6
            rows[case] = {**timing, "cli_s": cli_s, "size_mb": size_mb}
            print(
                f"{case:<14} report {timing['report_s']:6.2f} s (load {timing['load_s']:.2f} s; text comparison "
                f"{timing['baseline_s']:.2f} s, ratio {timing['report_s'] / max(timing['baseline_s'], 1e-9):.1f}x)  "
                f"CLI {cli_s:6.2f} s  size {size_mb:.2f} MB",
                flush=True,
            )
    print()
    logistic = rows["logistic"]["report_s"]
    print(
        f"breast_cancer logistic report after the fit: {logistic:.2f} s (<= {TARGET_SECONDS:g} s) "
        f"{'PASS' if logistic <= TARGET_SECONDS else 'MISS'}"
    )
    largest = max(rows.values(), key=lambda row: row["size_mb"])["size_mb"]
    print(f"largest page: {largest:.2f} MB (<= {TARGET_MB:g} MB) {'PASS' if largest <= TARGET_MB else 'MISS'}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
