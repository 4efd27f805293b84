"""Which NUTS backend each family should use, by measured cost, per use (issue 30 item 1).

For every family whose default method is NUTS or that can be sampled by NUTS on request, and each NUTS
backend it can run (blackjax, nutpie), the wall time of a default fit (4 chains x 1,000 draws after 1,000
tuning steps, which reaches the verdict's 400 bulk ESS; the smallest bulk ESS is printed beside) in three uses:

- ``first``: a one-off fit on a fresh machine: a new process with a new empty HOME and empty PyTensor, numba,
  JAX and bayesclass caches, timed from the process start (imports included) to the result in memory;
- ``new process``: the same one-off fit in a second new process with the caches the first one left on disk
  (what an analyst's second script pays);
- ``refit``: a second fit in the first process on a bootstrap resample of the same size (the structure is
  compiled: what a study cell, a bootstrap or a refit loop pays per fit).

The verdict line per family and use compares the backend ``backend="auto"`` resolves to for that use
(``bayesclass.inference.engines.nuts.nuts_backend``) with the faster of the two: target within 10 % (ratio
<= 1.10). The GP is listed without a verdict: its default method is the Gibbs sampler, and its NUTS model (a
fused latent Op) has no JAX form, so nutpie is its only fast NUTS backend.

Run::

    .venv/bin/python bench/bench_backends.py           # every family (~8 min on 2 idle cores)
    .venv/bin/python bench/bench_backends.py --quick   # logistic, 2 chains x 50 draws, usual caches, no verdicts
"""

from __future__ import annotations

import json
import math
import sys
import tempfile
import time
from pathlib import Path

from bench_startup import cache_environment, new_home
from harness import Session, arguments

MARKER = "BENCH-BACKENDS-RESULT "
BACKENDS = ("blackjax", "nutpie")
#: case -> (registry name, hyperparameters, dataset, standardize)
CASES = {
    "logistic": ("logistic", {}, "breast_cancer", True),
    "naive_bayes": ("naive_bayes", {}, "digits_binary", False),
    "gcc shared": ("gcc", {"covariance": "shared"}, "wine", True),
    "gcc per-class": ("gcc", {"covariance": "per-class"}, "wine", True),
}
USES = ("first", "new process", "refit")
TARGET = 1.10


def child(case: str, backend: str, draws: int, chains: int, spawned_at: float) -> None:
    """Body of a ``--child`` process: a one-off fit, then a refit on a bootstrap resample; print both."""
    import numpy as np

    import bayesclass as bc
    from bayesclass.inference import diagnose

    name, hyperparameters, dataset, standardize = CASES[case]
    data = bc.load(dataset)
    settings = bc.SamplerSettings(draws=draws, tune=draws, chains=chains, backend=backend, progressbar=False)
    rows = np.random.default_rng(1).integers(0, data.n_obs, data.n_obs)
    out = {}
    for use, training, seed in (("one-off", data, 0), ("refit", data.subset(rows, name="bootstrap"), 1)):
        start = time.perf_counter()
        result = bc.fit(bc.get_model(name, **hyperparameters), training, method="nuts", standardize=standardize,
                        random_seed=seed, sampler=settings)  # fmt: skip
        wall = time.perf_counter() - start
        info = bc.result_info(result)
        report = diagnose(result)
        out[use] = {
            "fit_s": wall,
            "from_process_start_s": time.time() - spawned_at,
            "sampling_s": info.sampling_seconds,
            "compile_s": info.compile_seconds,
            "backend": info.sampler_backend,
            "ess_bulk_min": report.min_ess_bulk,
            "r_hat_max": report.max_r_hat,
        }
    print(MARKER + json.dumps(out), flush=True)


def run_child(case: str, backend: str, home: Path | None, draws: int, chains: int) -> dict:
    """Spawn one child in ``home``'s caches (None: this process's environment and caches); its record."""
    import os
    import subprocess

    spawned_at = time.time()
    command = [sys.executable, __file__, "--child", case, backend, str(draws), str(chains), repr(spawned_at)]
    env = cache_environment(home) if home is not None else dict(os.environ)
    completed = subprocess.run(command, env=env, cwd=home, capture_output=True, text=True)
    for line in completed.stdout.splitlines():
        if line.startswith(MARKER):
            return json.loads(line.removeprefix(MARKER))
    raise RuntimeError(f"{case} / {backend}: the child failed:\n{completed.stderr[-3000:]}")


def auto_backend(case: str, use: str) -> str:
    """The backend ``backend="auto"`` resolves to for ``case`` and ``use``."""
    import bayesclass as bc
    from bayesclass.inference.engines.nuts import nuts_backend

    name, hyperparameters, _, _ = CASES[case]
    fits = math.inf if use == "refit" else 0  # refits: many fits of one compiled structure
    return nuts_backend(bc.get_model(name, **hyperparameters), bc.SamplerSettings(), fits=fits)


def main() -> None:
    """Measure every case and backend in each use; print the table and the verdicts."""
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        case, backend, draws, chains, spawned = sys.argv[2:7]
        child(case, backend, int(draws), int(chains), float(spawned))
        return
    parser = arguments(
        __doc__,
        quick="logistic only, 2 chains x 50 draws, one process per backend in the usual "
        "caches (no cold start), no verdicts",
    )
    parser.add_argument("--cases", nargs="+", choices=sorted(CASES), default=None)
    args = parser.parse_args()
    cases = args.cases or (["logistic"] if args.quick else list(CASES))
    draws, chains = (50, 2) if args.quick else (1000, 4)
    settings = {"cases": cases, "draws": draws, "tune": draws, "chains": chains, "backends": BACKENDS}
    with Session("backends", args, settings) as run, tempfile.TemporaryDirectory() as root:
        table = {}
        for case in cases:
            for backend in BACKENDS:
                if args.quick:  # a smoke test: the usual caches, one process standing for both one-off uses
                    first = again = run_child(case, backend, None, draws, chains)
                else:
                    home = new_home(Path(root), f"{case}-{backend}".replace(" ", "_"))
                    first = run_child(case, backend, home, draws, chains)
                    again = run_child(case, backend, home, draws, chains)
                table[case, backend] = {
                    "first": first["one-off"]["from_process_start_s"],
                    "new process": again["one-off"]["from_process_start_s"],
                    "refit": first["refit"]["fit_s"],
                    "ess": min(r["ess_bulk_min"] for r in (first["one-off"], first["refit"], again["one-off"])),
                    "r_hat": max(r["r_hat_max"] for r in (first["one-off"], first["refit"], again["one-off"])),
                    "compile_first_s": first["one-off"]["compile_s"],
                    "sampling_refit_s": first["refit"]["sampling_s"],
                    "recorded": first["one-off"]["backend"],
                }
                row = table[case, backend]
                print(f"  {case:<14} {backend:<9} first {row['first']:6.1f} s  new process {row['new process']:6.1f} s"
                      f"  refit {row['refit']:6.2f} s  (compile {row['compile_first_s']:.1f} s; min bulk ESS "
                      f"{row['ess']:.0f}, max r_hat {row['r_hat']:.4f}; recorded backend {row['recorded']})",
                      flush=True)  # fmt: skip
            for use in USES:
                times = {backend: table[case, backend][use] for backend in BACKENDS}
                chosen = auto_backend(case, use)
                best = min(times.values())
                run.verdicts.check(
                    f"{case}, {use}: auto ({chosen}) / the faster backend ({min(times, key=times.get)})",
                    times[chosen] / best, TARGET, "<=", baseline="the faster of blackjax and nutpie",
                    seconds=times[chosen], baseline_seconds=best, cache="cold" if use != "refit" else "warm",
                )  # fmt: skip
            faster, slower = sorted(BACKENDS, key=lambda backend: table[case, backend]["refit"])
            saved = table[case, slower]["refit"] - table[case, faster]["refit"]
            for use in ("first", "new process"):
                extra = table[case, faster][use] - table[case, slower][use]
                if extra > 0 and saved > 0:
                    print(
                        f"  {case}: {faster} refits {saved:.2f} s faster; its {use} fit costs {extra:.1f} s more: "
                        f"break-even after {math.ceil(extra / saved)} fits of one structure in a process"
                    )
        run.details["table"] = {f"{case} | {backend}": row for (case, backend), row in table.items()}


if __name__ == "__main__":
    main()
