"""Benchmark of prediction at scale (issue 18): rows x draws in seconds and bounded memory, and a CSV file streamed.

Fits (2 chains x 1,000 draws each, so 2,000 draws): logistic regression on ``breast_cancer`` (NUTS, standardised),
naive Bayes on ``digits_binary`` (exact conjugate draws), gcc with a shared and with a per-class covariance on
``wine`` (inverse-Wishart prior, exact draws, standardised), the latent GP on ``seed004_gp`` (n = 200,
standardised; NUTS) exact and HSGP. New rows: training rows drawn with replacement (seed 0), continuous columns
jittered by 0.1 sd, in the data's units.

Part 1, per family, ``bc.predict(result, X)`` (posterior mean and 89% ETI per class, every point estimate beside
them; no per-draw probabilities kept) on 100,000 rows (the exact GP: 5,000 rows, its cost stated per row). Each
case runs in a FRESH subprocess: the result is loaded and a 16-row prediction warms imports and caches up, then
peak memory is measured as the increase of the resident set: the kernel's high-water mark (VmHWM) is reset to
the current RSS (``echo 5 > /proc/self/clear_refs``) just before the call and VmHWM - VmRSS(before) read after
it. The baseline, in the same subprocess: a plain NumPy computation of the same posterior-mean probabilities
(the per-draw formula of the family written directly with matrix products, blocks of rows of at most ~100 MB,
default BLAS threads, no interval), checked to agree with ours to 1e-9. Timings are the best of 2 (one
for the exact GP), beside the CPU seconds of the process per call (all threads), which a busy machine does not
inflate. **Targets**: <= 10 s for logistic, naive Bayes and both gcc; peak RSS increase <= 1 GB for every
family; ratios ours / NumPy printed for information.

Part 2, ``bayesclass predict --run r.nc --data big.csv --out p.csv`` on a 2,000,000-row CSV file of the 30
breast-cancer features (written by pandas, 6 significant digits) with the logistic fit: wall time, rows per
second, and the peak RSS of the whole CLI process (its VmHWM at exit, imports included). **Target**: peak
<= 1.5 GB.

Run::

    .venv/bin/python bench/bench_predict.py             # full run (~15 min on 2 cores, fits included)
    .venv/bin/python bench/bench_predict.py --quick     # smoke test: 2 x 100 draws, 1,000 rows, 20,000-row CSV
    .venv/bin/python bench/bench_predict.py --json out.json
    .venv/bin/python bench/bench_predict.py --fits DIR  # keep the fitted results in DIR and reuse them
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness import Session, arguments, fitted_by, time_best

TARGET_SECONDS = 10.0  # logistic, naive Bayes, gcc: 100,000 rows x 2,000 draws
#: issue 30 item 5: naive Bayes's prediction of 100,000 rows x 2,000 draws (the sufficient statistics make it a product)
TARGET_SECONDS_BY_CASE = {"naive_bayes": 5.0}
TARGET_MEMORY_GB = 1.0  # every family: peak RSS increase
TARGET_CLI_MEMORY_GB = 1.5  # the streamed 2,000,000-row CSV: peak RSS of the process
GB = 1e9

CASES = {
    # name: (fit, rows in the full run, timed against TARGET_SECONDS)
    "logistic": ("logistic", 100_000, True),
    "naive_bayes": ("naive_bayes", 100_000, True),
    "gcc_shared": ("gcc_shared", 100_000, True),
    "gcc_per_class": ("gcc_per_class", 100_000, True),
    "gp_exact": ("gp_exact", 5_000, False),
    "gp_hsgp": ("gp_hsgp", 100_000, False),
}


# -- fits -------------------------------------------------------------------------------------------


def fit_all(folder: Path, draws: int, only: set[str] | None = None) -> dict[str, Path]:
    """Fit (or reuse) every result of the benchmark (or those named in ``only``); returns the run files."""
    import bayesclass as bc
    from bayesclass.inference import SamplerSettings

    sampler = SamplerSettings(draws=draws, tune=draws, chains=2, progressbar=False)
    inverse_wishart = bc.GaussianClassConditionalPrior(covariance_prior="inverse_wishart")
    specs = {
        "logistic": lambda: bc.fit(
            bc.LogisticRegression(), bc.load("breast_cancer"), standardize=True, sampler=sampler, random_seed=0
        ),
        "naive_bayes": lambda: bc.fit(
            bc.NaiveBayes(), bc.load("digits_binary"), method="exact", sampler=sampler, random_seed=0
        ),
        "gcc_shared": lambda: bc.fit(
            bc.GaussianClassConditional(covariance="shared", prior=inverse_wishart),
            bc.load("wine"),
            method="exact",
            standardize=True,
            sampler=sampler,
            random_seed=0,
        ),
        "gcc_per_class": lambda: bc.fit(
            bc.GaussianClassConditional(covariance="per-class", prior=inverse_wishart),
            bc.load("wine"),
            method="exact",
            standardize=True,
            sampler=sampler,
            random_seed=0,
        ),
        "gp_exact": lambda: bc.fit(
            bc.LatentGaussianProcess(approximation="exact"),
            bc.load("seed004_gp", n=200, random_seed=1),
            standardize=True,
            sampler=sampler,
            random_seed=0,
        ),
        "gp_hsgp": lambda: bc.fit(
            bc.LatentGaussianProcess(approximation="hsgp"),
            bc.load("seed004_gp", n=200, random_seed=1),
            standardize=True,
            sampler=sampler,
            random_seed=0,
        ),
    }
    files = {}
    for name, make in specs.items():
        if only is not None and name not in only:
            continue
        path = folder / f"{name}_{draws}.nc"
        if not path.exists():
            start = time.perf_counter()
            result = make()
            seconds = time.perf_counter() - start
            bc.save_result(result, path)
            print(f"  fitted {name} by {fitted_by(result)} in {seconds:.1f} s -> {path}")
        files[name] = path
    return files


# -- the worker: one case in a fresh process ---------------------------------------------------------


def new_rows(result, n: int, seed: int = 0):
    """n training rows drawn with replacement, continuous columns jittered by 0.1 sd."""
    import numpy as np

    X = result["constant_data"]["X"].values
    kinds = np.array(json.loads(result.attrs["feature_kinds"]))
    rng = np.random.default_rng(seed)
    rows = X[rng.integers(0, len(X), n)].copy()
    continuous = kinds == "continuous"
    rows[:, continuous] += 0.1 * X[:, continuous].std(axis=0) * rng.standard_normal((n, int(continuous.sum())))
    return rows


def numpy_posterior_mean(name: str, result, X, block: int):
    """The posterior-mean class probabilities by the family's per-draw formula written directly in NumPy."""
    import numpy as np
    import scipy.linalg
    import scipy.special

    from bayesclass.inference.engines.fit import model_inputs
    from bayesclass.models._kernels import hsgp_basis, kernel_matrix
    from bayesclass.models._links import link_average

    posterior = result["posterior"].to_dataset().stack(sample=("chain", "draw"))
    Z = model_inputs(result, X)
    pieces = []

    def softmax_mean(joint):  # (rows, draws, classes)
        return scipy.special.softmax(joint, axis=-1).mean(axis=1)

    if name == "logistic":
        W = posterior["weights"].transpose("sample", "feature").values
        b = posterior["intercept"].values
        for start in range(0, len(Z), block):
            eta = Z[start : start + block] @ W.T + b
            pieces.append(np.stack([scipy.special.expit(-eta).mean(1), scipy.special.expit(eta).mean(1)], axis=1))
    elif name == "naive_bayes":
        p = posterior["binary_proba"].transpose("sample", "class", "binary_feature").values
        log_prior = np.log(posterior["class_prior"].transpose("sample", "class").values)
        slope = np.log(p) - np.log1p(-p)  # (S, K, F)
        offset = log_prior + np.log1p(-p).sum(axis=-1)
        for start in range(0, len(Z), block):
            joint = np.einsum("nf,skf->nsk", Z[start : start + block], slope, optimize=True) + offset
            pieces.append(softmax_mean(joint))
    elif name == "gcc_shared":
        mean = posterior["class_mean"].transpose("sample", "class", "feature").values
        sigma = posterior["covariance"].transpose("sample", "feature", "other_feature").values
        log_prior = np.log(posterior["class_prior"].transpose("sample", "class").values)
        weight = np.linalg.solve(sigma[:, None], mean[..., None])[..., 0]  # (S, K, d)
        offset = log_prior - 0.5 * np.sum(mean * weight, axis=-1)
        for start in range(0, len(Z), block):
            joint = np.einsum("nd,skd->nsk", Z[start : start + block], weight, optimize=True) + offset
            pieces.append(softmax_mean(joint))
    elif name == "gcc_per_class":
        mean = posterior["class_mean"].transpose("sample", "class", "feature").values
        sigma = posterior["covariance"].transpose("sample", "class", "feature", "other_feature").values
        log_prior = np.log(posterior["class_prior"].transpose("sample", "class").values)
        factor = np.linalg.cholesky(sigma)
        inverse = np.linalg.inv(factor)  # (S, K, d, d)
        log_det = np.log(np.diagonal(factor, axis1=-2, axis2=-1)).sum(axis=-1)
        for start in range(0, len(Z), block):
            difference = Z[start : start + block][None, None] - mean[:, :, None, :]  # (S, K, n, d)
            q = np.sum((difference @ inverse.swapaxes(-1, -2)) ** 2, axis=-1)  # (S, K, n)
            joint = (-0.5 * q - log_det[..., None] + log_prior[..., None]).transpose(2, 0, 1)
            pieces.append(softmax_mean(joint))
    elif name == "gp_hsgp":
        frequencies = posterior["hsgp_frequency"].transpose("basis", "feature").values[1:]
        center, half_width = posterior["hsgp_center"].values, posterior["hsgp_half_width"].values
        weight = posterior["basis_weight"].transpose("sample", "basis").values
        for start in range(0, len(Z), block):
            rows = Z[start : start + block]
            basis = np.hstack([np.ones((len(rows), 1)), hsgp_basis(rows, center, half_width, frequencies)])
            p1 = scipy.special.expit(basis @ weight.T).mean(axis=1)
            pieces.append(np.stack([1 - p1, p1], axis=1))
    elif name == "gp_exact":
        x = posterior["training_input"].values
        latent = posterior["latent"].transpose("sample", "obs").values
        ell = posterior["lengthscale"].transpose("sample", "feature").values
        a, c = posterior["amplitude"].values, posterior["constant"].values
        total = np.zeros(len(Z))
        for s in range(latent.shape[0]):
            k = kernel_matrix(x, x, lengthscale=ell[s], amplitude=a[s], constant=c[s]) + 1e-6 * a[s] ** 2 * np.eye(
                len(x)
            )
            factor = scipy.linalg.cholesky(k, lower=True)
            alpha = scipy.linalg.solve_triangular(factor, latent[s], lower=True)
            v = scipy.linalg.solve_triangular(
                factor, kernel_matrix(x, Z, lengthscale=ell[s], amplitude=a[s], constant=c[s]), lower=True
            )
            variance = np.maximum(a[s] ** 2 + c[s] ** 2 - (v**2).sum(axis=0), 0.0)
            total += link_average(v.T @ alpha, variance, "logit")
        p1 = total / latent.shape[0]
        pieces.append(np.stack([1 - p1, p1], axis=1))
    return np.concatenate(pieces, axis=0)


def _status(key: str) -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    raise KeyError(key)


def _measured(function, repeats: int) -> tuple[float, int, object, float]:
    """(best seconds, peak RSS increase in bytes over the calls, last value, CPU seconds per call: every thread of
    the process, the measure of work that other processes on the machine do not inflate)."""
    try:
        with open("/proc/self/clear_refs", "w") as clear:
            clear.write("5")  # reset VmHWM to the current RSS
        resettable = True
    except OSError:
        resettable = False
    before = _status("VmRSS")
    cpu = os.times()
    seconds, value = time_best(function, repeats)
    cpu_seconds = (os.times().user - cpu.user + os.times().system - cpu.system) / repeats
    peak = _status("VmHWM") if resettable else max(_status("VmHWM"), _status("VmRSS"))
    return seconds, peak - before, value, cpu_seconds


def worker(case: dict) -> dict:
    import numpy as np

    import bayesclass as bc

    result = bc.load_result(case["run"])
    X = new_rows(result, case["rows"])
    block = {"naive_bayes": 250, "gcc_shared": 1000, "gcc_per_class": 100}.get(case["name"], 2000)
    bc.predict(result, X[:16])  # imports, thread pools, caches
    numpy_posterior_mean(case["name"], result, X[:16], block)
    peak_before = _status("VmHWM")
    ours_s, ours_bytes, prediction, ours_cpu = _measured(lambda: bc.predict(result, X), case["repeats"])
    ours_process_peak = max(peak_before, _status("VmHWM"))
    numpy_s, numpy_bytes, reference, numpy_cpu = _measured(
        lambda: numpy_posterior_mean(case["name"], result, X, block), case["repeats"]
    )
    difference = float(np.max(np.abs(prediction["class_proba"].values - reference)))
    posterior = result["posterior"]
    return {
        "case": case["name"],
        "rows": case["rows"],
        "draws": int(posterior.sizes["chain"] * posterior.sizes["draw"]),
        "classes": len(json.loads(result.attrs["class_names"])),
        "ours_s": ours_s,
        "ours_cpu_s": ours_cpu,
        "ours_peak_increase_bytes": ours_bytes,
        "process_peak_rss_bytes": ours_process_peak,
        "numpy_s": numpy_s,
        "numpy_cpu_s": numpy_cpu,
        "numpy_peak_increase_bytes": numpy_bytes,
        "max_abs_difference_of_means": difference,
        "variables": sorted(prediction.data_vars),
    }


def run_worker(case: dict) -> dict:
    """``worker(case)`` in a fresh interpreter."""
    completed = subprocess.run(
        [sys.executable, __file__, "--worker", json.dumps(case)], stdout=subprocess.PIPE, text=True, check=False
    )
    if completed.returncode != 0:
        raise RuntimeError(f"worker {case['name']} failed with exit code {completed.returncode}")
    return json.loads(completed.stdout.strip().splitlines()[-1])


# -- part 2: the CLI on a large CSV ------------------------------------------------------------------


def write_big_csv(result, path: Path, rows: int) -> float:
    import pandas as pd

    start = time.perf_counter()
    names = json.loads(result.attrs["feature_names"])
    block = 200_000
    with open(path, "w", newline="") as stream:
        for first in range(0, rows, block):
            frame = pd.DataFrame(new_rows(result, min(block, rows - first), seed=first), columns=names)
            frame.to_csv(stream, index=False, header=first == 0, float_format="%.6g")
    return time.perf_counter() - start


#: runs the CLI and reports the process's own peak RSS on exit (VmHWM counts from exec: a fork of this large
#: parent would inflate ``ru_maxrss``)
CLI_DRIVER = (
    "import sys\n"
    "from bayesclass.cli import main\n"
    "code = main(sys.argv[1:])\n"
    "print([line for line in open('/proc/self/status') if line.startswith('VmHWM')][0].strip(), file=sys.stderr)\n"
    "sys.exit(code)\n"
)


def run_cli(run_file: Path, data: Path, out: Path) -> dict:
    command = [
        sys.executable,
        "-c",
        CLI_DRIVER,
        "predict",
        "--run",
        str(run_file),
        "--data",
        str(data),
        "--out",
        str(out),
    ]
    start = time.perf_counter()
    completed = subprocess.run(command, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    if completed.returncode != 0:
        raise RuntimeError(f"bayesclass predict failed: {completed.stderr}")
    peak = int(completed.stderr.strip().splitlines()[-1].split()[1]) * 1024  # "VmHWM: <kB> kB"
    with open(out, "rb") as stream:
        lines = sum(1 for _ in stream)
    return {"seconds": seconds, "peak_rss_bytes": peak, "output_rows": lines - 1, "stdout": completed.stdout}


# -- the run ------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    if argv is None and len(sys.argv) > 2 and sys.argv[1] == "--worker":
        print(json.dumps(worker(json.loads(sys.argv[2]))))
        return 0
    parser = arguments(
        __doc__,
        quick="2 x 100 draws, 1,000 rows (exact GP 50), a 20,000-row CSV file; one timing each",
        seed="unused (the fits use seed 0, the new rows seed 0)",
        seed_default=0,
    )
    parser.add_argument("--fits", type=Path, help="folder to keep the fitted results in and reuse them from")
    parser.add_argument("--cases", nargs="+", choices=sorted(CASES), help="part 1 for these cases only, no part 2")
    args = parser.parse_args(argv)
    cases = {name: CASES[name] for name in args.cases} if args.cases else CASES
    draws = 100 if args.quick else 1000
    scale = 100 if args.quick else 1
    cli_rows = 20_000 if args.quick else 2_000_000
    settings = {"draws_per_chain": draws, "chains": 2, "rows": {k: v[1] // scale for k, v in CASES.items()}}
    settings["cli_rows"] = cli_rows
    with Session("predict", args, settings) as run, tempfile.TemporaryDirectory() as scratch:
        folder = args.fits or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        print("fits:")
        files = fit_all(folder, draws, only={fit for fit, _, _ in cases.values()})
        run.section("\nPart 1: bc.predict(result, X), posterior mean + 89% ETI per class, fresh process per case")
        print(
            f"  {'case':<14} {'rows':>8} {'draws':>6} {'K':>3} {'ours s':>8} {'(CPU s)':>8} {'NumPy s':>8} "
            f"{'(CPU s)':>8} {'ratio':>6} {'ours +RSS GB':>12} {'NumPy +RSS GB':>13} {'max |diff|':>10}"
        )
        measured = {}
        for name, (fit, rows, _) in cases.items():
            case = {"name": name, "run": str(files[fit]), "rows": rows // scale}
            case["repeats"] = 1 if (args.quick or name == "gp_exact") else 2
            m = run_worker(case)
            measured[name] = m
            print(
                f"  {name:<14} {m['rows']:>8} {m['draws']:>6} {m['classes']:>3} {m['ours_s']:>8.2f} "
                f"{m['ours_cpu_s']:>8.2f} {m['numpy_s']:>8.2f} {m['numpy_cpu_s']:>8.2f} "
                f"{m['ours_s'] / m['numpy_s']:>6.2f} "
                f"{m['ours_peak_increase_bytes'] / GB:>12.3f} {m['numpy_peak_increase_bytes'] / GB:>13.3f} "
                f"{m['max_abs_difference_of_means']:>10.1e}"
            )
            if m["max_abs_difference_of_means"] > 1e-9:
                print(f"  WARNING: {name}: ours and the NumPy baseline disagree by {m['max_abs_difference_of_means']}")
        print()
        for name, m in measured.items():
            rows, timed = m["rows"], CASES[name][2]
            run.verdicts.check(
                f"{name}: seconds, {rows:,} rows x {m['draws']} draws",
                m["ours_s"],
                TARGET_SECONDS_BY_CASE.get(name, TARGET_SECONDS) if timed else None,
                "<=",
                baseline="(absolute)",
                unit=" s",
                cache="warm",
                seconds=m["ours_s"],
            )
            run.verdicts.check(
                f"{name}: peak RSS increase",
                m["ours_peak_increase_bytes"] / GB,
                TARGET_MEMORY_GB,
                "<=",
                baseline="(absolute)",
                unit=" GB",
                seconds=m["ours_s"],
            )
            run.verdicts.check(
                f"{name}: time ours / plain NumPy posterior mean",
                m["ours_s"] / m["numpy_s"],
                baseline="plain NumPy posterior mean (no interval), default BLAS threads",
                seconds=m["ours_s"],
                baseline_seconds=m["numpy_s"],
            )
        if args.cases:
            run.details["part1"] = measured
            return 0
        gp = measured["gp_exact"]
        per_row = gp["ours_s"] / gp["rows"]
        print(
            f"  exact GP (n = 200 training rows, {gp['draws']} draws): {1e3 * per_row:.2f} ms per new row "
            f"({1e6 * per_row / gp['draws']:.2f} us per row and draw): 100,000 rows take about "
            f"{per_row * 1e5 / 60:.0f} min; NumPy per-draw loop {1e3 * gp['numpy_s'] / gp['rows']:.2f} ms per row"
        )
        run.details["part1"] = measured

        run.section(f"\nPart 2: bayesclass predict on a {cli_rows:,}-row CSV file (logistic, 30 features)")
        import bayesclass as bc

        big = Path(scratch) / "big.csv"
        write_s = write_big_csv(bc.load_result(files["logistic"]), big, cli_rows)
        print(f"  wrote {big.stat().st_size / GB:.2f} GB of CSV in {write_s:.0f} s")
        cli = run_cli(files["logistic"], big, Path(scratch) / "p.csv")
        big.unlink()
        print(
            f"  {cli['seconds']:.1f} s ({cli_rows / cli['seconds']:,.0f} rows/s), peak RSS of the process "
            f"{cli['peak_rss_bytes'] / GB:.2f} GB, {cli['output_rows']:,} rows written"
        )
        run.verdicts.check(
            f"CLI {cli_rows:,} rows: peak RSS of the process",
            cli["peak_rss_bytes"] / GB,
            TARGET_CLI_MEMORY_GB,
            "<=",
            baseline="(absolute)",
            unit=" GB",
            seconds=cli["seconds"],
        )
        run.verdicts.check(f"CLI {cli_rows:,} rows: wall seconds", cli["seconds"], baseline="(absolute)", unit=" s")
        assert cli["output_rows"] == cli_rows, cli
        run.details["part2"] = {key: value for key, value in cli.items() if key != "stdout"}
        print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
