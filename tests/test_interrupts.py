"""Ctrl-C and SIGTERM: an interrupted fit exits 130 and writes nothing, or, with --keep-partial, writes
the draws it has, marked partial. Real subprocesses receive real signals."""

from __future__ import annotations

import os
import shutil
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
    import bayesclass.__main__ as entry  # the console script's own entry point
    from bayesclass.cli import main

    arguments = sys.argv[1:]
    if arguments[0] == "--one-device":  # JAX imported before PyMC: one XLA device, the chains run in rounds
        import jax  # noqa: F401

        arguments = arguments[1:]
    if arguments[0] == "--warm":  # compile the model's structure first, so that the timed fit samples at once
        arguments = arguments[1:]
        warm = [a if a != "200000" else "20" for a in arguments]
        out = warm.index("--out") + 1
        warm[out] = warm[out] + ".warm.nc"
        main(warm)
    print("ready", flush=True)
    sys.exit(entry.console_main(arguments))
    """
)

FIT = ["fit", "--model", "logistic", "--data", "breast_cancer", "--standardize", "--no-progress", "--seed", "0"]
LONG = ["--draws", "200000", "--tune", "200"]


#: a child's first program: SIGINT back to its default, then exec the real command in the same process (same pid)
RESET_SIGINT = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])"
)


def _interruptible(argv: list[str]) -> list[str]:
    """``argv`` run with SIGINT at its default, so that Python turns it into KeyboardInterrupt even when the tests
    run as a background job (whose shell starts them with SIGINT ignored, which Python and its children keep).

    The reset runs in a small interpreter that then execs ``argv``, not in a ``preexec_fn``: that makes subprocess
    fork this (JAX-importing, multithreaded) process with Python code to run, and JAX warns "os.fork() was called
    ... JAX is multithreaded, so this will likely lead to a deadlock" (84 times in the suite)."""
    return [sys.executable, "-c", RESET_SIGINT, *argv]


def _start(tmp_path: Path, arguments: list[str], *, cold: bool) -> subprocess.Popen:
    environment = dict(os.environ)
    if cold:  # empty compile caches: the compile step lasts long enough to be interrupted
        environment["PYTENSOR_FLAGS"] = f"base_compiledir={tmp_path / 'pytensor'}"
        environment["NUMBA_CACHE_DIR"] = str(tmp_path / "numba")
    return subprocess.Popen(
        _interruptible([sys.executable, "-c", DRIVER, *arguments]),
        cwd=tmp_path,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_the_children_start_with_sigint_at_its_default_and_no_fork_warning(tmp_path):
    """Even from a parent that ignores SIGINT (a background job), with JAX's threads running in the parent: the
    child gets Python's KeyboardInterrupt handler, and starting it forks nothing that JAX warns about."""
    import warnings

    import jax.numpy as jnp

    float(jnp.ones(3).sum())  # JAX's thread pool runs in this process now
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            process = _popen(
                tmp_path, [sys.executable, "-c", "import signal; print(signal.getsignal(signal.SIGINT).__name__)"]
            )
            output, errors = process.communicate(timeout=60)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert process.returncode == 0, errors
    assert output.strip() == "default_int_handler", output + errors
    forks = [str(warning.message) for warning in caught if "fork" in str(warning.message)]
    assert forks == []


def test_nothing_forks_a_python_process_that_may_run_jax():
    """JAX warns on every fork of a process that imported it: children start by exec (subprocess without a
    ``preexec_fn``) or by spawn, never by fork, in the package, the benchmarks and the other tests (this module
    quotes the words; the test above checks its own children)."""
    root = Path(__file__).resolve().parents[1]
    forks = ("preexec_" + "fn", "os." + "fork(", 'get_context("' + 'fork")', "start_method('" + "fork')")
    found = [
        f"{path.relative_to(root)}: {needle}"
        for folder in ("bayesclass", "data", "models", "inference", "reports", "tests", "bench")
        for path in sorted((root / folder).rglob("*.py"))
        for needle in forks
        if path != Path(__file__).resolve() and needle in path.read_text(encoding="utf-8")
    ]
    assert found == []


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


# SIGTERM keeps fast checks in the compilation and swallowed-interrupt tests
@pytest.mark.parametrize("signum", [signal.SIGINT, pytest.param(signal.SIGTERM, marks=pytest.mark.slow)])
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


# -- the bad-input table's interrupt rows: each one a real signal sent to a real process, at several delays ------


def _popen(tmp_path: Path, argv: list[str]) -> subprocess.Popen:
    return subprocess.Popen(
        _interruptible(argv), cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def _wait_for_line(process: subprocess.Popen, wanted: str) -> None:
    """Read the child's output up to the line ``wanted`` (so that the signal lands after what it announces)."""
    seen = []
    for line in process.stdout:
        seen.append(line)
        if line.strip() == wanted:
            return
    raise AssertionError("".join(seen) + process.stderr.read())


def _interrupt(process: subprocess.Popen, signum: int, delay: float) -> tuple[int, str, float]:
    """Send ``signum`` after ``delay`` seconds; the exit code, stderr and the seconds from signal to exit."""
    time.sleep(delay)
    process.send_signal(signum)
    sent = time.monotonic()
    try:
        _, errors = process.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        process.kill()
        _, errors = process.communicate()
        raise AssertionError(f"still running 120 s after the signal:\n{errors}") from None
    return process.returncode, errors, time.monotonic() - sent


def _temporary_files(*folders: Path) -> list[Path]:
    return [path for folder in folders for path in folder.rglob("*") if path.name.endswith(".tmp")]


def _assert_told_the_truth(
    folder: Path, returncode: int, errors: str, outputs: tuple[str, ...], *, may_have_ended: bool = True
) -> None:
    """Exit 130, one line and no traceback; the files the line names as written exist, no other output does.

    Or, where the command may have ended before the signal (``may_have_ended``), exit 0 with every output there:
    once a command has ended the signals are ignored while the interpreter shuts down (never killed by one).
    """
    assert _temporary_files(folder) == [], errors
    if returncode == 0 and may_have_ended:
        assert all((folder / name).exists() for name in outputs), errors
        return
    assert returncode == 130, errors
    assert "Traceback" not in errors, errors
    last = errors.strip().splitlines()[-1]
    assert ": interrupted" in last, errors
    present = [name for name in outputs if (folder / name).exists()]
    if "nothing was written" in last:
        assert present == [], errors
    else:
        assert present and all(name in last for name in present), errors
    assert _temporary_files(folder) == [], errors


#: a child that writes ``target`` over and over with atomic_write until a signal stops it, then prints how many
#: writes completed (``in-command``: inside handling_interrupts, as the program's command, which keeps the signal;
#: else as a library call)
REWRITER = textwrap.dedent(
    """
    import contextlib, sys
    from pathlib import Path
    from bayesclass._interrupts import atomic_write, handling_interrupts, written_files

    scope, size = sys.argv[1], int(sys.argv[2])
    target, completed = Path("target.bin"), 0
    padding = b"x" * size
    print("ready", flush=True)
    try:
        with handling_interrupts(pass_on=False) if scope == "in-command" else contextlib.nullcontext():
            while True:
                with atomic_write(target) as temporary:
                    temporary.write_bytes(b"%d|" % (completed + 1) + padding)
                completed += 1
    except KeyboardInterrupt:
        written = len(written_files()) if scope == "in-command" else completed
        print(f"completed {written}", file=sys.stderr)
        sys.exit(130)
    """
)

#: (what, signal, scope, bytes per write): the signal lands anywhere in atomic_write (creating, writing,
#: renaming, removing), at several delays
ATOMIC_WRITE_CASES = [
    ("SIGINT in a command, small files", signal.SIGINT, "in-command", 0),
    ("SIGTERM in a command, small files", signal.SIGTERM, "in-command", 0),
    ("SIGINT in a command, 2 MB files", signal.SIGINT, "in-command", 2_000_000),
    ("SIGINT in a library call", signal.SIGINT, "library", 0),
]


@pytest.mark.parametrize(  # the middle delays are slow; the early and late ones run for every case
    "delay", [0.05, pytest.param(0.21, marks=pytest.mark.slow), pytest.param(0.43, marks=pytest.mark.slow), 0.77]
)
@pytest.mark.parametrize("case", ATOMIC_WRITE_CASES, ids=[case[0] for case in ATOMIC_WRITE_CASES])
def test_an_interrupt_anywhere_in_atomic_write_leaves_no_temporary_file(tmp_path, case, delay):
    """Before: a signal inside ``mkstemp`` (after it created the file) or as a result was written over an existing
    file left a ``.tmp`` file (1 of 6 attempts). Now none is left, the target holds the last completed write, and
    the count of completed writes the process reports (its record of written files) is what is on disk."""
    _, signum, scope, size = case
    (tmp_path / "target.bin").write_bytes(b"0|earlier")
    process = _popen(tmp_path, [sys.executable, "-c", REWRITER, scope, str(size)])
    _wait_for_line(process, "ready")
    returncode, errors, _ = _interrupt(process, signum, delay)
    assert returncode == 130, errors
    assert sorted(path.name for path in tmp_path.iterdir()) == ["target.bin"], errors
    completed = int(errors.split("completed ")[-1])
    content = (tmp_path / "target.bin").read_bytes()
    on_disk = int(content.split(b"|")[0])
    # a library caller's own count can miss the write that completed as the signal arrived; a command's record not
    assert on_disk == completed or (scope == "library" and on_disk == completed + 1), (content[:20], errors)
    assert len(content) == (len(b"0|earlier") if on_disk == 0 else len(b"%d|" % on_disk) + size)


def test_sigterm_in_a_library_call_of_atomic_write_still_ends_the_process(tmp_path):
    """Outside a command the signal is the caller's: SIGTERM at its default ends the process (before, atomic_write
    turned it into a ``KeyboardInterrupt`` the caller could catch and carry on after), once the write it cut is
    undone: the target holds the earlier content or one whole write, and no temporary file is left."""
    (tmp_path / "target.bin").write_bytes(b"0|earlier")
    process = _popen(tmp_path, [sys.executable, "-c", REWRITER, "library", "0"])
    _wait_for_line(process, "ready")
    returncode, errors, _ = _interrupt(process, signal.SIGTERM, 0.3)
    assert returncode == -signal.SIGTERM, errors
    assert "completed" not in errors, errors
    assert sorted(path.name for path in tmp_path.iterdir()) == ["target.bin"], errors
    content = (tmp_path / "target.bin").read_bytes()
    assert content == b"0|earlier" or content == b"%d|" % int(content.split(b"|")[0]), content


#: imports what the commands use first, so that the signal lands in the command's work, not in an import
COMMAND_DRIVER = textwrap.dedent(
    """
    import sys
    import bayesclass.__main__ as entry  # the console script's own entry point
    import bayesclass.cli
    import arviz, pymc, xarray  # noqa: F401
    import bayesclass._report, bayesclass.inference, bayesclass.study  # noqa: F401

    print("ready", flush=True)
    sys.exit(entry.console_main(sys.argv[1:]))
    """
)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> Path:
    """Naive Bayes results of exact draws on breast_cancer and iris (1000 draws, 4 chains), a small study's folder."""
    from bayesclass.cli import main

    folder = tmp_path_factory.mktemp("inputs")
    nb = ["--model", "naive_bayes", "--data", "breast_cancer", "--method", "exact", "--draws", "1000"]
    assert main(["fit", *nb, "--no-progress", "--out", str(folder / "nb.nc")]) == 0
    # PSIS-LOO of nb.nc fails on its own (the likelihood of most rows saturates: 'All tail values are the same');
    # loo is interrupted on iris, where it computes
    iris = ["--model", "naive_bayes", "--data", "iris", "--method", "exact", "--draws", "1000", "-q"]
    assert main(["fit", *iris, "--no-progress", "--out", str(folder / "nb_iris.nc")]) == 0
    (folder / "tiny.toml").write_text(
        'name = "tiny"\nseed = 0\ntraining_sizes = [20, 50]\nrepeats = 2\ntest_fraction = 0.3\n'
        "[sampler]\ndraws = 100\nchains = 2\n"
        '[[models]]\nfamily = "naive_bayes"\nmethod = "exact"\npoint_estimates = ["mle", "map"]\n'
        '[[datasets]]\nname = "seed001_gaussians"\ngenerator = { n = 200, random_seed = 1 }\n'
    )
    assert main(["study", str(folder / "tiny.toml"), "--out", str(folder / "study"), "--serial", "--no-progress"]) == 0
    return folder


NB_FIT = ["--model", "naive_bayes", "--data", "breast_cancer", "--method", "exact", "--draws", "1000", "--no-progress"]

#: (command, its arguments ({inputs} is the fixture's folder), the files it would write): every command, stopped
#: while it works; before, ``report`` of a result could end with exit -2 (killed by the signal) and its page
COMMAND_CASES = [
    ("fit", ["fit", *NB_FIT, "--out", "new.nc"], ("new.nc",)),
    ("compare", ["compare", *NB_FIT, "--out", "c.nc", "--report", "c.html"], ("c.nc", "c.html")),
    ("report", ["report", "--run", "{inputs}/nb.nc", "--out", "page.html"], ("page.html",)),
    ("study-report", ["study-report", "{inputs}/study", "--out", "study.html"], ("study.html",)),
    (
        "predict",
        [
            "predict",
            "--run",
            "{inputs}/nb.nc",
            "--data",
            "breast_cancer",
            "--out",
            "p.csv",
            "--draws-out",
            "d.nc",
            "--no-progress",
        ],
        ("p.csv", "d.nc"),
    ),  # fmt: skip
    ("loo", ["loo", "--run", "{inputs}/nb_iris.nc"], ()),
    ("check", ["check", "--run", "{inputs}/nb.nc"], ()),
    ("diagnose", ["diagnose", "--run", "{inputs}/nb.nc"], ()),
]


@pytest.mark.parametrize(
    "signum",
    [pytest.param(signal.SIGINT, id="SIGINT"), pytest.param(signal.SIGTERM, id="SIGTERM", marks=pytest.mark.slow)],
)
# every command keeps its 0.6 s interrupt in the default run; the start-up phase has its own test below
@pytest.mark.parametrize("delay", [pytest.param(0.1, marks=pytest.mark.slow), 0.6])
@pytest.mark.parametrize("case", COMMAND_CASES, ids=[case[0] for case in COMMAND_CASES])
def test_every_command_interrupted_exits_130_and_says_what_it_wrote(tmp_path, inputs, case, delay, signum):
    _, arguments, outputs = case
    arguments = [argument.replace("{inputs}", str(inputs)) for argument in arguments]
    process = _popen(tmp_path, [sys.executable, "-c", COMMAND_DRIVER, *arguments])
    _wait_for_line(process, "ready")
    returncode, errors, _ = _interrupt(process, signum, delay)
    _assert_told_the_truth(tmp_path, returncode, errors, outputs)
    assert _temporary_files(inputs) == []


#: the console script's own module: a signal while it still imports the command line
STARTUP_DRIVER = 'import sys, bayesclass.__main__ as entry; print("ready", flush=True); sys.exit(entry.console_main())'

#: (what, arguments): before, a signal before the command line was imported or while its parser was built
#: ended in a traceback and exit -2
STARTUP_CASES = [("report, while the command line is imported", ["report", "--run", "x.nc", "--out", "x.html"])]


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("delay", [0.02, 0.06, 0.15])  # not 0: the driver's own line after "ready" is no command's
@pytest.mark.parametrize("case", STARTUP_CASES, ids=[case[0] for case in STARTUP_CASES])
def test_an_interrupt_while_the_command_starts_exits_130_without_a_traceback(tmp_path, case, delay, signum):
    process = _popen(tmp_path, [sys.executable, "-c", STARTUP_DRIVER, *case[1]])
    _wait_for_line(process, "ready")
    returncode, errors, _ = _interrupt(process, signum, delay)
    if returncode == 2 and "no result file" in errors:  # the command had started and ended before the signal
        pytest.skip("the command ended before the signal")
    _assert_told_the_truth(tmp_path, returncode, errors, (), may_have_ended=False)


def _signal_when_file_appears(process, folder: Path, pattern: str, signum: int, delay: float):
    """Send ``signum`` ``delay`` seconds after a file matching ``pattern`` appears in ``folder``."""
    deadline = time.monotonic() + 300
    while not list(folder.glob(pattern)):
        if process.poll() is not None or time.monotonic() > deadline:
            raise AssertionError(f"no {pattern} appeared:\n{process.communicate()[1]}")
        time.sleep(0.005)
    return _interrupt(process, signum, delay)


#: (what, draws of exact naive Bayes on breast_cancer, delays): a large result written by ``fit``, interrupted
#: as its temporary file appears and while netCDF writes it. Before: a SIGINT 0.15 s into writing a 158 MB
#: result left the process waiting for xarray's HDF5 lock (over 60 s, until a second SIGINT); a SIGINT as the
#: file appeared printed both "saved" and "nothing was written" with the file on disk
SAVE_CASES = [
    ("a 55 MB result", 2500, (0.0, 0.15, 0.4)),
    ("a 130 MB result", 6000, (0.15, 0.8, 1.5)),
]


@pytest.mark.parametrize(
    ("case", "delay"),
    [
        pytest.param(
            case, delay, id=f"{case[0]}-{delay}", marks=[pytest.mark.slow] if case[1] > 3000 or delay == 0.4 else []
        )
        for case in SAVE_CASES
        for delay in case[2]
    ],
)
def test_an_interrupt_while_a_result_is_written_ends_promptly_and_tells_the_truth(tmp_path, case, delay):
    arguments = ["fit", "--model", "naive_bayes", "--data", "breast_cancer", "--method", "exact"]
    arguments += ["--draws", str(case[1]), "--no-progress", "--out", "r.nc"]
    process = _popen(tmp_path, [sys.executable, "-c", COMMAND_DRIVER, *arguments])
    _wait_for_line(process, "ready")
    returncode, errors, seconds = _signal_when_file_appears(process, tmp_path, ".r.nc.*.tmp", signal.SIGINT, delay)
    _assert_told_the_truth(tmp_path, returncode, errors, ("r.nc",))
    assert seconds < 20, f"{seconds:.1f} s from the signal to the exit"
    if (tmp_path / "r.nc").exists():  # completed before the signal: the whole result, readable
        from bayesclass.inference import load

        assert load(tmp_path / "r.nc")["posterior"].sizes["draw"] == case[1]


#: a report whose rendering spends its time in garbage-collector callbacks, where Python prints a
#: KeyboardInterrupt ("Exception ignored in ...") and drops it, as it happened in JAX's gc callback
SWALLOWING_DRIVER = textwrap.dedent(
    """
    import gc, sys, time
    import bayesclass._report
    import bayesclass.__main__ as entry

    def slow_callback(phase, info):
        time.sleep(0.05)  # a KeyboardInterrupt raised here is lost

    def report(*args, **kwargs):
        gc.callbacks.append(slow_callback)
        print("rendering", flush=True)
        end = time.monotonic() + 3
        while time.monotonic() < end:
            gc.collect()
        gc.callbacks.remove(slow_callback)
        return "<!doctype html><title>a page</title>"

    bayesclass._report.report = report
    sys.exit(entry.console_main(sys.argv[1:]))
    """
)

#: (signal): before, the interrupt was lost, the page written and the exit code 0
LOST_INTERRUPT_CASES = [("SIGINT", signal.SIGINT), ("SIGTERM", signal.SIGTERM)]


@pytest.mark.parametrize("delay", [0.3, pytest.param(1.2, marks=pytest.mark.slow)])  # 0.3 s for every case
@pytest.mark.parametrize("case", LOST_INTERRUPT_CASES, ids=[case[0] for case in LOST_INTERRUPT_CASES])
def test_an_interrupt_a_library_swallowed_still_stops_the_command(tmp_path, inputs, case, delay):
    arguments = ["report", "--run", str(inputs / "nb.nc"), "--out", "page.html"]
    process = _popen(tmp_path, [sys.executable, "-c", SWALLOWING_DRIVER, *arguments])
    _wait_for_line(process, "rendering")
    returncode, errors, _ = _interrupt(process, case[1], delay)
    _assert_told_the_truth(tmp_path, returncode, errors, ("page.html",), may_have_ended=False)
    assert not (tmp_path / "page.html").exists(), errors


@pytest.fixture(scope="module")
def gibbs_result(tmp_path_factory) -> Path:
    """A latent GP fitted by the Gibbs sampler (2 chains)."""
    from bayesclass.cli import main

    path = tmp_path_factory.mktemp("gibbs") / "gibbs.nc"
    arguments = [*GP_GIBBS[:-1], "--seed", "0", "--draws", "300", "--tune", "50", "--out", str(path)]
    assert main([argument if argument != "200" else "100" for argument in arguments]) == 0
    return path


#: (what): before, a SIGINT 4 s into ``report`` of a Gibbs result ended with exit -2 and the page written
GIBBS_REPORT_CASES = [("report of a Gibbs result",)]


@pytest.mark.slow
@pytest.mark.parametrize("delay", [0.5, 2.0, 4.0])
@pytest.mark.parametrize("case", GIBBS_REPORT_CASES, ids=[case[0] for case in GIBBS_REPORT_CASES])
def test_report_of_a_gibbs_result_interrupted_writes_no_page(tmp_path, gibbs_result, case, delay):
    process = _popen(tmp_path, [sys.executable, "-c", COMMAND_DRIVER, "report", "--run", str(gibbs_result),
                                "--out", "page.html"])  # fmt: skip
    _wait_for_line(process, "ready")
    returncode, errors, _ = _interrupt(process, signal.SIGINT, delay)
    _assert_told_the_truth(tmp_path, returncode, errors, ("page.html",))


#: (what, driver arguments, the messages that may say where it was): --keep-partial before any draw exists says
#: so; before, a 150,000-draw fit stopped while compiling or tuning said only "nothing was written"
KEEP_PARTIAL_CASES = [
    (
        "blackjax, still tuning",
        ["--warm", *FIT, "--draws", "10", "--tune", "200000", "--keep-partial", "--out", "run.nc"],
        ("no draws yet: interrupted during the warm-up (step ",),
    ),
    (
        "gibbs, still in burn-in",
        [*GP_GIBBS, "--seed", "0", "--draws", "10", "--tune", "100000", "--keep-partial", "--out", "run.nc"],
        ("no draws yet: interrupted during the burn-in (sweep ", "no draws yet: interrupted before sampling began"),
    ),
    (
        "nutpie, still tuning",
        [
            "--warm",
            *FIT,
            "--backend",
            "nutpie",
            "--draws",
            "10",
            "--tune",
            "200000",
            "--keep-partial",
            "--out",
            "run.nc",
        ],
        ("no draws yet: interrupted during the warm-up (",),
    ),  # fmt: skip
]


@pytest.mark.parametrize(
    ("case", "delay"),
    [
        pytest.param(
            case,
            delay,
            id=f"{case[0]}-{delay}",
            marks=[pytest.mark.slow] if "nutpie" in case[0] or delay == 5.0 else [],
        )
        for case in KEEP_PARTIAL_CASES
        for delay in (1.0, 5.0)
    ],
)
def test_keep_partial_before_the_first_draw_says_there_are_none(tmp_path, case, delay):
    process = _start(tmp_path, case[1], cold=False)
    returncode, errors = _signal_after_ready(process, signal.SIGINT, delay)
    assert returncode == 130, errors
    assert any(fragment in errors for fragment in case[2]), errors
    assert "nothing was written" in errors and "Traceback" not in errors, errors
    assert not (tmp_path / "run.nc").exists() and _temporary_files(tmp_path) == []


#: (what): more chains than XLA devices run in rounds; before, an interrupt during the first round kept nothing
#: ("interrupted; nothing was written"), as the chains of the later rounds had no draws yet
ROUNDS_CASES = [("4 chains on one XLA device",)]


@pytest.mark.parametrize("delay", [2.0, pytest.param(5.0, marks=pytest.mark.slow)])  # 2 s runs by default
@pytest.mark.parametrize("case", ROUNDS_CASES, ids=[case[0] for case in ROUNDS_CASES])
def test_keep_partial_keeps_every_chain_when_chains_run_in_rounds(tmp_path, case, delay):
    from bayesclass.inference import load

    arguments = ["--one-device", "--warm", *FIT, *LONG, "--keep-partial", "--out", "run.nc"]
    process = _start(tmp_path, arguments, cold=False)
    returncode, errors = _signal_after_ready(process, signal.SIGINT, delay)
    assert returncode == 130, errors
    assert "saved run.nc" in errors, errors
    sizes = load(tmp_path / "run.nc")["posterior"].sizes
    assert sizes["chain"] == 4 and 0 < sizes["draw"] < 200_000


# -- whose signal it is: the program's, or, for main() called in-process, its caller's ----------------------------

#: a fit that runs its second Gibbs chain in a child process for minutes (stopped by the signal)
LONG_GIBBS = [*GP_GIBBS, "--seed", "0", "--draws", "50000", "--tune", "100", "--out", "run.nc"]


def _descendants(pid: int) -> list:
    import psutil

    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []


def _signal_once_a_child_runs(process: subprocess.Popen, signum: int, watched: int | None = None) -> tuple:
    """Send ``signum`` once a process started by ``spawn`` (a Gibbs chain, a Dask worker) runs under ``watched``
    (default the process); the exit code, stderr and the seconds from the signal to the exit. Every process that
    ``watched`` had started by then must be gone within 10 s of the exit."""
    import psutil

    deadline = time.monotonic() + 300
    while not any("spawn_main" in " ".join(child.cmdline()) for child in _descendants(watched or process.pid)):
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise AssertionError(f"no child process started:\n{process.communicate()[1]}")
        time.sleep(0.05)
    time.sleep(0.5)
    children = _descendants(watched or process.pid)
    process.send_signal(signum)
    sent = time.monotonic()
    try:
        _, errors = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        raise AssertionError(f"still running 60 s after the signal:\n{process.communicate()[1]}") from None
    seconds = time.monotonic() - sent
    _, alive = psutil.wait_procs(children, timeout=10)
    assert [" ".join(child.cmdline()) for child in alive] == [], errors
    return process.returncode, errors, seconds


#: (how the command runs, signal, the exit code): the program exits 130; main() in-process gives the signal back
#: to its caller: SIGTERM at its default ends the process, SIGINT raises the caller's KeyboardInterrupt
#: (before, main() in-process returned 130 for both, and a test run under `timeout` carried on for minutes)
OWNER_CASES = [
    ("the bayesclass program, SIGTERM", "program", signal.SIGTERM, 130),
    ("the bayesclass program, SIGINT", "program", signal.SIGINT, 130),
    ("main() in-process, SIGTERM", "in-process", signal.SIGTERM, -signal.SIGTERM),
    ("main() in-process, SIGINT", "in-process", signal.SIGINT, 7),
]

#: main() called in-process: a caller that catches KeyboardInterrupt, says so, and checks its handlers are back
IN_PROCESS_DRIVER = textwrap.dedent(
    """
    import signal, sys
    from bayesclass.cli import main

    before = (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM))
    try:
        main(sys.argv[1:])
    except KeyboardInterrupt:
        restored = before == (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM))
        print(f"the caller got KeyboardInterrupt; its handlers restored: {restored}", file=sys.stderr)
        sys.exit(7)
    """
)


@pytest.mark.parametrize(
    "case",
    [pytest.param(case, id=case[0], marks=[] if case[2] == signal.SIGTERM else [pytest.mark.slow])
     for case in OWNER_CASES],
)  # fmt: skip
def test_an_interrupt_stops_the_command_and_goes_to_whoever_owns_the_signal(tmp_path, case):
    """A real signal to the process only (not its chain process): the chain process is stopped, nothing is
    written, and the exit is the program's 130 or what the caller's own handler makes of the signal."""
    _, how, signum, expected = case
    program = [str(Path(sys.executable).parent / "bayesclass")]
    command = program if how == "program" else [sys.executable, "-c", IN_PROCESS_DRIVER]
    process = _popen(tmp_path, [*command, *LONG_GIBBS])
    returncode, errors, seconds = _signal_once_a_child_runs(process, signum)
    assert returncode == expected, errors
    assert "bayesclass fit: interrupted; nothing was written" in errors and "Traceback" not in errors, errors
    if expected == 7:
        assert errors.strip().splitlines()[-1] == "the caller got KeyboardInterrupt; its handlers restored: True"
    assert sorted(path.name for path in tmp_path.iterdir()) == [], errors
    assert seconds < 15, f"{seconds:.1f} s from the signal to the exit"


@pytest.mark.slow  # 10 s
def test_a_chain_process_whose_parent_was_killed_stops(tmp_path):
    """SIGKILL leaves no cleanup to run: the chain process sees its parent gone and ends within a sweep (before, it
    ran its 50,000 sweeps for minutes, an orphan)."""
    import psutil

    program = str(Path(sys.executable).parent / "bayesclass")
    # no pipes: a chain process left running would hold them open
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    process = subprocess.Popen([program, *LONG_GIBBS], cwd=tmp_path, **quiet)
    deadline = time.monotonic() + 300
    while not (chains := [child for child in _descendants(process.pid) if "spawn_main" in " ".join(child.cmdline())]):
        assert process.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    time.sleep(0.5)
    process.kill()
    process.wait()
    _, alive = psutil.wait_procs(chains, timeout=15)  # it may still be starting (imports) when its parent dies
    for chain in alive:
        chain.kill()
    assert alive == []


#: a study of 400 cells of exact naive Bayes: minutes on 2 Dask workers
LONG_STUDY = (
    'name = "long"\nseed = 0\ntraining_sizes = [20, 50]\nrepeats = 200\ntest_fraction = 0.3\n'
    "[sampler]\ndraws = 100\nchains = 2\n"
    '[[models]]\nfamily = "naive_bayes"\nmethod = "exact"\n'
    '[[datasets]]\nname = "seed001_gaussians"\ngenerator = { n = 200, random_seed = 1 }\n'
)


@pytest.mark.parametrize("how", ["program", pytest.param("in-process", marks=pytest.mark.slow)])  # 8-10 s each
def test_an_interrupted_study_leaves_no_dask_worker_running(tmp_path, how):
    """SIGTERM to a study on a local Dask cluster (the process only): every worker process is stopped, by the
    program (exit 130) or before the signal goes on to main()'s caller (ended by it). Before, a signal while the
    workers started left the cluster to Dask's exit hook, which printed a traceback ("Status.init")."""
    (tmp_path / "long.toml").write_text(LONG_STUDY)
    program = [str(Path(sys.executable).parent / "bayesclass")]
    command = program if how == "program" else [sys.executable, "-c", IN_PROCESS_DRIVER]
    arguments = ["study", "long.toml", "--out", "study", "--workers", "2", "--no-progress"]
    process = _popen(tmp_path, [*command, *arguments])
    returncode, errors, seconds = _signal_once_a_child_runs(process, signal.SIGTERM)
    assert returncode == (130 if how == "program" else -signal.SIGTERM), errors
    assert "bayesclass study: interrupted" in errors and "Traceback" not in errors, errors
    assert seconds < 30, f"{seconds:.1f} s from the signal to the exit"


#: a test file that runs the command line in-process, then one that says the run carried on
IN_PROCESS_TESTS = textwrap.dedent(
    """
    from pathlib import Path
    from bayesclass.cli import main

    def test_a_long_fit():
        main({arguments!r})

    def test_after_it():
        Path("carried-on").touch()
    """
)


def test_the_test_command_under_timeout_stops_within_seconds_of_sigterm(tmp_path):
    """The README's test command, ``timeout ... python -m pytest``, while a test runs ``main()`` in-process: a
    SIGTERM (to ``timeout``, which sends it to pytest and its process group) ends pytest within seconds, after
    the fit's cleanup (its chain process stopped, no file written). Before, the CLI's handler turned it into exit
    130 for that one test, and pytest went on with the next ones (6.5 minutes of them in the issue)."""
    (tmp_path / "test_in_process.py").write_text(IN_PROCESS_TESTS.format(arguments=LONG_GIBBS))
    import psutil

    command = [shutil.which("timeout"), "600", sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    process = _popen(tmp_path, [*command, "test_in_process.py"])

    deadline = time.monotonic() + 120
    while not (pytest_process := [child for child in _descendants(process.pid) if "pytest" in child.cmdline()]):
        assert process.poll() is None and time.monotonic() < deadline, process.communicate()
        time.sleep(0.05)
    returncode, errors, seconds = _signal_once_a_child_runs(process, signal.SIGTERM, watched=pytest_process[0].pid)
    assert returncode == -signal.SIGTERM, errors  # timeout ends as its child did: by the signal
    assert not psutil.pid_exists(pytest_process[0].pid) or pytest_process[0].status() == psutil.STATUS_ZOMBIE
    assert sorted(path.name for path in tmp_path.iterdir() if path.name != "__pycache__") == ["test_in_process.py"]
    assert seconds < 15, f"{seconds:.1f} s from the signal to the exit"


def test_main_in_process_leaves_the_callers_handlers_as_they_were(capsys):
    from bayesclass.cli import main

    def mine(signum, frame):
        raise AssertionError("not called")

    previous = {signum: signal.signal(signum, mine) for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        assert main(["datasets"]) == 0
        assert [signal.getsignal(signum) for signum in previous] == [mine, mine]
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    assert "breast_cancer" in capsys.readouterr().out
