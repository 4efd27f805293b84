"""Ctrl-C and SIGTERM: an interrupted fit exits 130 and writes nothing, or, with --keep-partial, writes
the draws it has, marked partial. Real subprocesses receive real signals."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from bayesclass.inference.io import atomic_write

#: runs in the child: imports first (so that a signal cannot land in an import), then says so, then the CLI
DRIVER = textwrap.dedent(
    """
    import sys
    from bayesclass.cli import main

    arguments = sys.argv[1:]
    if arguments[0] == "--warm":  # compile the model's structure first, so that the timed fit samples at once
        arguments = arguments[1:]
        warm = [a if a != "200000" else "20" for a in arguments]
        out = warm.index("--out") + 1
        warm[out] = warm[out] + ".warm.nc"
        main(warm)
    print("ready", flush=True)
    sys.exit(main(arguments))
    """
)

FIT = ["fit", "--model", "logistic", "--data", "breast_cancer", "--standardize", "--no-progress", "--seed", "0"]
LONG = ["--draws", "200000", "--tune", "200"]


def _interruptible() -> None:
    """In the child before exec: SIGINT back to its default, so that Python turns it into KeyboardInterrupt even
    when the tests run as a background job (whose shell starts it with SIGINT ignored, which Python keeps)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _start(tmp_path: Path, arguments: list[str], *, cold: bool) -> subprocess.Popen:
    environment = dict(os.environ)
    if cold:  # empty compile caches: the compile step lasts long enough to be interrupted
        environment["PYTENSOR_FLAGS"] = f"base_compiledir={tmp_path / 'pytensor'}"
        environment["NUMBA_CACHE_DIR"] = str(tmp_path / "numba")
    return subprocess.Popen(
        [sys.executable, "-c", DRIVER, *arguments],
        cwd=tmp_path,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_interruptible,
    )


def _signal_after_ready(process: subprocess.Popen, signum: int, delay: float) -> tuple[int, str]:
    seen = []
    for line in process.stdout:  # the warm-up fit prints first
        seen.append(line)
        if line.strip() == "ready":
            break
    else:
        raise AssertionError("".join(seen) + process.stderr.read())
    time.sleep(delay)
    process.send_signal(signum)
    _, errors = process.communicate(timeout=300)
    return process.returncode, errors


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupt_during_compilation_exits_130_and_writes_nothing(tmp_path, signum):
    process = _start(tmp_path, [*FIT, *LONG, "--out", "run.nc"], cold=True)
    returncode, errors = _signal_after_ready(process, signum, 1.5)
    assert returncode == 130, errors
    assert "interrupted; nothing was written" in errors and "Traceback" not in errors
    assert list(tmp_path.glob("*.nc")) == [] and list(tmp_path.glob(".run.nc*")) == []


@pytest.mark.parametrize("backend", ["blackjax", "nutpie"])
def test_an_interrupt_during_sampling_exits_130_and_writes_nothing(tmp_path, backend):
    """blackjax (XLA calls cannot be cancelled: the interrupt waits for the segment) and nutpie (sampling in
    the background, polled)."""
    process = _start(tmp_path, ["--warm", *FIT, *LONG, "--backend", backend, "--out", "run.nc"], cold=False)
    returncode, errors = _signal_after_ready(process, signal.SIGINT, 2.0)
    assert returncode == 130, errors
    assert "interrupted; nothing was written" in errors and "Traceback" not in errors
    assert not (tmp_path / "run.nc").exists() and list(tmp_path.glob(".run.nc*")) == []


def test_keep_partial_saves_the_draws_so_far_marked_partial(tmp_path):
    from bayesclass.inference import diagnose, load

    process = _start(tmp_path, ["--warm", *FIT, *LONG, "--keep-partial", "--out", "run.nc"], cold=False)
    returncode, errors = _signal_after_ready(process, signal.SIGINT, 2.0)
    assert returncode == 130, errors
    assert "interrupted: interrupted:" in errors and "saved run.nc" in errors
    result = load(tmp_path / "run.nc")
    assert int(result.attrs["partial"]) == 1
    assert result["posterior"].sizes["draw"] < 200_000
    report = diagnose(result)
    assert not report.passed and any("partial draws" in failure for failure in report.failures)


GP_GIBBS = [
    "fit",
    "--model",
    "gp",
    "--data",
    "seed004_gp",
    "--rows",
    "200",
    "--standardize",
    "--chains",
    "2",
    "--no-progress",
]


@pytest.mark.parametrize("keep_partial", [False, True], ids=["discard", "keep-partial"])
def test_an_interrupt_stops_the_gibbs_chain_processes(tmp_path, keep_partial):
    """The GP's Gibbs sampler runs its second chain in a process of its own: an interrupt stops both chains, and
    the draws of both are kept (as long as the shorter) or nothing is written."""
    from bayesclass.inference import load

    extra = ["--keep-partial"] if keep_partial else []
    arguments = [*GP_GIBBS, "--seed", "0", "--draws", "20000", "--tune", "100", *extra, "--out", "run.nc"]
    process = _start(tmp_path, arguments, cold=False)
    returncode, errors = _signal_after_ready(process, signal.SIGINT, 8.0)
    assert returncode == 130, errors
    assert "Traceback" not in errors
    if not keep_partial:
        assert "interrupted; nothing was written" in errors
        assert not (tmp_path / "run.nc").exists()
        return
    result = load(tmp_path / "run.nc")
    assert result.attrs["method"] == "gibbs" and int(result.attrs["partial"]) == 1
    sizes = result["posterior"].sizes
    assert sizes["chain"] == 2 and 0 < sizes["draw"] < 20_000
    assert np.isfinite(result["posterior"]["latent"].values).all()  # no unwritten rows of either chain


def test_an_interrupted_write_leaves_no_file_and_keeps_the_old_one(tmp_path):
    target = tmp_path / "result.nc"
    target.write_text("the earlier result")
    with pytest.raises(KeyboardInterrupt), atomic_write(target) as temporary:
        temporary.write_text("half a new res")
        raise KeyboardInterrupt
    assert target.read_text() == "the earlier result"
    assert [path.name for path in tmp_path.iterdir()] == ["result.nc"]


#: a child whose result writing is slow (it writes part of the file, then waits), so the signal lands mid-write
SLOW_WRITE = textwrap.dedent(
    """
    import sys, time
    import xarray as xr
    from bayesclass.cli import main

    def slow_to_netcdf(self, path, **kwargs):
        with open(path, "wb") as stream:
            stream.write(b"CDF half a file")
        print("writing", flush=True)
        time.sleep(30)

    xr.DataTree.to_netcdf = slow_to_netcdf
    print("ready", flush=True)
    sys.exit(main(sys.argv[1:]))
    """
)


def test_an_interrupt_while_the_result_is_written_leaves_no_file(tmp_path):
    (tmp_path / "run.nc").write_bytes(b"an earlier result")
    process = subprocess.Popen(
        [sys.executable, "-c", SLOW_WRITE, "fit", "--data", "iris", "--method", "map", "--out", "run.nc"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_interruptible,
    )
    for line in process.stdout:
        if line.strip() == "writing":
            break
    process.send_signal(signal.SIGINT)
    _, errors = process.communicate(timeout=120)
    assert process.returncode == 130, errors
    assert "interrupted; nothing was written" in errors and "Traceback" not in errors
    assert (tmp_path / "run.nc").read_bytes() == b"an earlier result"  # the earlier file is untouched
    assert sorted(path.name for path in tmp_path.iterdir()) == ["run.nc"]  # no temporary file left


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupt_while_a_csv_is_streamed_exits_130_and_writes_nothing(tmp_path, signum):
    """A long ``bayesclass predict`` over a CSV file (naive Bayes, 500 exact draws, 400,000 rows) stopped
    mid-stream: the rows written so far are removed with their temporary files; an earlier output stays."""
    import numpy as np

    from bayesclass import data, inference
    from bayesclass.inference import SamplerSettings

    training = data.seed001_gaussians(200, random_seed=1)
    result = inference.fit(
        "naive_bayes", training, method="exact", sampler=SamplerSettings(draws=250, chains=2), random_seed=0
    )
    inference.save(result, tmp_path / "run.nc")
    rows = data.seed001_gaussians(400_000, random_seed=2).X
    np.savetxt(tmp_path / "new.csv", rows, delimiter=",", header="x1,x2", comments="", fmt="%.6f")
    (tmp_path / "p.csv").write_text("an earlier file\n")
    arguments = ["predict", "--run", "run.nc", "--data", "new.csv", "--out", "p.csv", "--draws-out", "d.nc"]
    process = _start(tmp_path, arguments, cold=False)
    returncode, errors = _signal_after_ready(process, signum, 3.0)
    assert returncode == 130, errors
    assert "interrupted; nothing was written" in errors and "Traceback" not in errors
    assert (tmp_path / "p.csv").read_text() == "an earlier file\n"
    assert not (tmp_path / "d.nc").exists()
    assert [path.name for path in tmp_path.iterdir() if path.name.startswith(".")] == []
