"""Bad, hostile and edge-case input to studies: specs, study folders (records, current_cells.json), the scheduler.

Each row of :data:`STUDY_CASES` builds its input in a temporary folder (a spec, or a copy of a recorded study
folder that it damages) and runs one ``bayesclass study`` or ``study-report`` command in-process: the command
ends with the row's exit code, its output holds the row's fragment, and no Python traceback. Records are
untrusted input: a damaged, edited or foreign record is never reported as measured, and a rerun of the study
moves it aside and runs its cell again. Below the table: the grid is counted without being made, the scheduler
check is fast, every metric has a declared range, and a Dask worker killed mid-study loses no cell.
"""

from __future__ import annotations

import json
import math
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

import bayesclass.study as bs
from bayesclass.inference.studies.records import METRIC_RANGES, seal
from tests.bad_inputs.harness import assert_one_line_error, run

#: a study of two cells that runs in seconds (naive Bayes by exact draws)
TINY = """name = "tiny"
training_sizes = [20]
repeats = 2
metrics = ["log_loss", "accuracy"]

[sampler]
draws = 100
chains = 2

[[models]]
family = "naive_bayes"
method = "exact"
point_estimates = ["map"]

[[datasets]]
name = "seed001_gaussians"
generator = { n = 200, random_seed = 1 }
"""


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> Path:
    """A finished tiny study: ``spec.toml`` beside its results folder ``out/``."""
    folder = tmp_path_factory.mktemp("recorded")
    (folder / "spec.toml").write_text(TINY, encoding="utf-8")
    assert run("study", str(folder / "spec.toml"), "--out", str(folder / "out"), "--serial", "--no-progress") == 0
    return folder


# -- the inputs: each builds files under ``tmp`` (from the recorded study) and returns the command's arguments ------


def _spec(text: str) -> Callable[[Path, Path], list[str]]:
    def make(tmp: Path, recorded: Path) -> list[str]:
        (tmp / "spec.toml").write_text(text, encoding="utf-8")
        return ["study", str(tmp / "spec.toml"), "--out", str(tmp / "out"), "--serial", "--no-progress"]

    return make


def _spec_with(old: str, new: str) -> Callable[[Path, Path], list[str]]:
    assert old in TINY, old
    return _spec(TINY.replace(old, new, 1))


def _spec_argv(*extra: str, text: str = TINY) -> Callable[[Path, Path], list[str]]:
    def make(tmp: Path, recorded: Path) -> list[str]:
        (tmp / "spec.toml").write_text(text, encoding="utf-8")
        return ["study", str(tmp / "spec.toml"), "--out", str(tmp / "out"), "--no-progress", *extra]

    return make


def _spec_folder(tmp: Path, recorded: Path) -> list[str]:
    (tmp / "spec.toml").mkdir()
    return ["study", str(tmp / "spec.toml"), "--out", str(tmp / "out")]


def _copy(tmp: Path, recorded: Path) -> Path:
    """A copy of the recorded study's folder (with its spec beside it); returns the results folder."""
    shutil.copy(recorded / "spec.toml", tmp / "spec.toml")
    shutil.copytree(recorded / "out", tmp / "out")
    return tmp / "out"


def _records(out: Path) -> list[Path]:
    return sorted((out / "cells").glob("*.json"))


def _edit(change: Callable[[list[Path]], None], *, rerun: bool = False) -> Callable[[Path, Path], list[str]]:
    """The recorded study, its records changed by ``change``; then study-report (or, with ``rerun``, the study)."""

    def make(tmp: Path, recorded: Path) -> list[str]:
        out = _copy(tmp, recorded)
        change(_records(out))
        if rerun:
            return ["study", str(tmp / "spec.toml"), "--out", str(out), "--serial", "--no-progress"]
        return ["study-report", str(out), "--out", str(tmp / "page.html")]

    return make


def _truncate(paths: list[Path]) -> None:
    paths[0].write_bytes(paths[0].read_bytes()[:200])


def _json_list(paths: list[Path]) -> None:
    paths[0].write_text("[1, 2, 3]", encoding="utf-8")


def _hand_edited(paths: list[Path]) -> None:
    """Every record claims log loss 0.0123 and accuracy 0.9876 (the checksum not recomputed)."""
    for path in paths:
        record = json.loads(path.read_text())
        for row in record["rows"]:
            row["value"] = {"log_loss": 0.0123, "accuracy": 0.9876}.get(row["metric"], row["value"])
        path.write_text(json.dumps(record), encoding="utf-8")


def _one_edited(paths: list[Path]) -> None:
    _hand_edited(paths[:1])


def _other_key(paths: list[Path]) -> None:
    """The second record's file holds a copy of the first record (its key is the first cell's)."""
    shutil.copy(paths[0], paths[1])


def _resealed(change: Callable[[dict], None]) -> Callable[[list[Path]], None]:
    """Change the first record and recompute its checksum (the structure checks must catch it)."""

    def edit(paths: list[Path]) -> None:
        record = json.loads(paths[0].read_text())
        change(record)
        paths[0].write_text(json.dumps(seal(record)), encoding="utf-8")

    return edit


def _set_metric(metric: str, value) -> Callable[[dict], None]:
    def change(record: dict) -> None:
        for row in record["rows"]:
            if row["metric"] == metric:
                row["value"] = value

    return change


def _format_1(paths: list[Path]) -> None:
    """A record as bayesclass wrote it before the checksum: format 1, no checksum."""
    record = json.loads(paths[0].read_text())
    record["format"] = 1
    del record["checksum"]
    paths[0].write_text(json.dumps(record), encoding="utf-8")


def _current_cells(text: str, *, drop_spec: bool = False) -> Callable[[Path, Path], list[str]]:
    def make(tmp: Path, recorded: Path) -> list[str]:
        out = _copy(tmp, recorded)
        (out / "current_cells.json").write_text(text, encoding="utf-8")
        if drop_spec:
            (out / "spec.toml").unlink()
        return ["study-report", str(out), "--out", str(tmp / "page.html")]

    return make


@dataclass(frozen=True)
class StudyCase:
    """One row: the input, the exit code, a fragment of the output (stdout and stderr) and, optionally, a check of
    the folder afterwards."""

    name: str
    make: Callable[[Path, Path], list[str]]
    code: int
    message: str
    after: Callable[[Path], None] | None = None


def _moved_aside_and_rerun(tmp: Path) -> None:
    """The damaged record is in ``*.damaged``; every cell has one verified record again."""
    out = tmp / "out"
    assert len(list((out / "cells").glob("*.json.damaged"))) >= 1
    assert len(_records(out)) == 2
    table = bs.load(out)
    assert table.attrs["rejected"] == [] and table["key"].nunique() == 2
    assert 0.0123 not in set(table["value"])


def _page_lists_it(tmp: Path) -> None:
    """The page was written, says which record is left out, and shows none of the edited numbers."""
    page = (tmp / "page.html").read_text(encoding="utf-8")
    assert "Records left out" in page
    assert "0.0123" not in page and "0.9876" not in page


STUDY_CASES = [
    # the spec
    StudyCase("spec path is a folder", _spec_folder, 2, "is a folder; give the spec's TOML file"),
    StudyCase("spec is JSON, not TOML", _spec('{"training_sizes": [20]}'), 2, "is not valid TOML"),
    StudyCase(
        "two data sets under one label",
        _spec(TINY + '[[datasets]]\nname = "seed001_gaussians"\ngenerator = { n = 300, random_seed = 1 }\n'),
        2,
        "the label 'seed001_gaussians' is used twice",
    ),
    StudyCase(
        "family as a list",
        _spec_with('family = "naive_bayes"', 'family = ["naive_bayes"]'),
        2,
        "family must be a non-empty text, got ['naive_bayes']",
    ),  # fmt: skip
    StudyCase(
        "standardize as a text",
        _spec_with('method = "exact"', 'method = "exact"\nstandardize = "yes"'),
        2,
        "standardize must be true or false",
    ),  # fmt: skip
    StudyCase(
        "baselines not texts",
        _spec_with('method = "exact"', 'method = "exact"\nbaselines = [{ a = 1 }]'),
        2,
        "baselines must be a list of texts",
    ),  # fmt: skip
    StudyCase("name a number", _spec_with('name = "tiny"', "name = 3"), 2, "name must be a non-empty text, got 3"),
    StudyCase(
        "sampler not a table",
        _spec("sampler = 'fast'\n" + TINY.replace("[sampler]\n", "[other]\n")),
        2,
        "sampler must be a table",
    ),  # fmt: skip
    StudyCase(
        "sampler unknown key", _spec_with("chains = 2", "chains = 2\nspeed = 3"), 2, "sampler: unknown key 'speed'"
    ),  # fmt: skip
    StudyCase(
        "data set runs no model",
        _spec_with("generator", "models = []\ngenerator"),
        2,
        "models = [] runs no model on it",
    ),  # fmt: skip
    StudyCase(
        "data set path a number",
        _spec_with('name = "seed001_gaussians"', 'path = 3\ntarget = "y"'),
        2,
        "path must be a non-empty text, got 3",
    ),  # fmt: skip
    StudyCase(
        "data set a built-in's name with a table's path",
        _spec_with('name = "seed001_gaussians"\n', 'name = "seed001_gaussians"\npath = "t.csv"\ntarget = "y"\n'),
        2,
        "name = 'seed001_gaussians' is a built-in data set, and path = 't.csv' a table file; with path, name labels "
        'the table: give it a name that no built-in data set has (e.g. name = "my_seed001_gaussians"), or drop path',
    ),  # fmt: skip
    StudyCase(
        "data set a table's path with a generator",
        _spec_with('name = "seed001_gaussians"\n', 'name = "mine"\npath = "t.csv"\ntarget = "y"\n'),
        2,
        "generator applies to a built-in generated data set, not to the table file",
    ),  # fmt: skip
    StudyCase(
        "generator n of 10**15 rows",
        _spec_with("n = 200", "n = 1000000000000000"),
        2,
        "does not fit in this machine's memory",
    ),  # fmt: skip
    StudyCase("loss matrix a number", _spec("loss_matrix = 3\n" + TINY), 2, "loss_matrix must be a non-empty text"),
    StudyCase(
        "test fraction NaN",
        _spec("test_fraction = nan\n" + TINY),
        2,
        "test_fraction must be a number in (0, 1), got nan",
    ),  # fmt: skip
    StudyCase(
        "negative training size", _spec_with("[20]", "[-20]"), 2, "training_sizes[0] must be an integer >= 2, got -20"
    ),  # fmt: skip
    StudyCase("20-million-cell grid", _spec_with("repeats = 2", "repeats = 10000000"), 2, "10,000,000 cells"),
    StudyCase(
        "largest TOML integer of repeats",
        _spec_with("repeats = 2", "repeats = 9223372036854775807"),
        2,
        "or confirm with --yes",
    ),  # fmt: skip
    # the scheduler
    StudyCase(
        "scheduler where nothing listens",
        _spec_argv("--scheduler", "tcp://127.0.0.1:1"),
        2,
        "no Dask scheduler at 'tcp://127.0.0.1:1'",
    ),  # fmt: skip
    StudyCase(
        "scheduler address malformed", _spec_argv("--scheduler", "tcp://127.0.0.1:port"), 2, "is not HOST:PORT"
    ),  # fmt: skip
    StudyCase("a million workers", _spec_argv("--workers", "1000000"), 2, "--workers 1000000: more than 4 per"),
    # records, read by study-report: left out and listed, never reported as measured
    StudyCase(
        "record truncated to 200 bytes", _edit(_truncate), 0, "not whole JSON (truncated or damaged)", _page_lists_it
    ),  # fmt: skip
    StudyCase("record a JSON list", _edit(_json_list), 0, "not a record: a JSON list", _page_lists_it),
    StudyCase(
        "record edited by hand", _edit(_one_edited), 0, "checksum does not match its content", _page_lists_it
    ),  # fmt: skip
    StudyCase("every record edited by hand", _edit(_hand_edited), 2, "holds no verified cell record"),
    StudyCase("record under another cell's key", _edit(_other_key), 0, "holds the key", _page_lists_it),
    StudyCase(
        "record of format 1 (no checksum)", _edit(_format_1), 0, "unverified: a format 1 record", _page_lists_it
    ),  # fmt: skip
    StudyCase(
        "record accuracy 1.5, resealed",
        _edit(_resealed(_set_metric("accuracy", 1.5))),
        0,
        "value of accuracy",
        _page_lists_it,
    ),  # fmt: skip
    StudyCase(
        "record log loss -1, resealed",
        _edit(_resealed(_set_metric("log_loss", -1.0))),
        0,
        "value of log_loss",
        _page_lists_it,
    ),  # fmt: skip
    StudyCase(
        "record log loss NaN text, resealed",
        _edit(_resealed(_set_metric("log_loss", "huge"))),
        0,
        "value must be",
        _page_lists_it,
    ),  # fmt: skip
    StudyCase(
        "record key a path outside the folder",
        _edit(_resealed(lambda r: r.update(key="../../etc/passwd"))),
        0,
        "key must be 24 hex digits",
        _page_lists_it,
    ),  # fmt: skip
    StudyCase(
        "record of another cell, resealed",
        _edit(_resealed(lambda r: r["cell"].update(size=60))),
        0,
        "is not the cell of its key",
        _page_lists_it,
    ),  # fmt: skip
    StudyCase(
        "record size negative, resealed",
        _edit(_resealed(lambda r: r["cell"].update(size=-3))),
        0,
        "cell.size must be an integer >= 2",
        _page_lists_it,
    ),  # fmt: skip
    # the folder's derived state
    StudyCase("current_cells.json damaged", _current_cells("{x"), 0, "was damaged"),
    StudyCase(
        "current_cells.json damaged, no spec copy", _current_cells("{x", drop_spec=True), 2, "could not be rebuilt"
    ),  # fmt: skip
    # a rerun of the study: the damaged record moved aside, its cell run again, said so
    StudyCase(
        "rerun after a record was truncated", _edit(_truncate, rerun=True), 0, "moved aside", _moved_aside_and_rerun
    ),  # fmt: skip
    StudyCase(
        "rerun after records were edited",
        _edit(_hand_edited, rerun=True),
        0,
        "2 damaged record(s) moved aside",
        _moved_aside_and_rerun,
    ),  # fmt: skip
]


@pytest.mark.parametrize("case", STUDY_CASES, ids=[case.name for case in STUDY_CASES])
def test_bad_study_input(case: StudyCase, recorded: Path, tmp_path: Path, capsys) -> None:
    argv = case.make(tmp_path, recorded)
    code = run(*argv)
    captured = capsys.readouterr()
    output = captured.out + captured.err
    assert code == case.code, (code, output)
    assert_one_line_error(output, case.message)
    if code == 2:  # a usage error: one line, `bayesclass CMD: error: ...`
        errors = [line for line in captured.err.splitlines() if ": error: " in line]
        assert len(errors) == 1 and errors[0].startswith(f"bayesclass {argv[0]}: error: "), captured.err
    if case.after is not None:
        case.after(tmp_path)


# -- beside the table -------------------------------------------------------------------------------------------


def test_a_huge_grid_is_counted_not_made(tmp_path: Path) -> None:
    """20 million cells: counted at once (no cell made), and the first cells come without making the rest."""
    (tmp_path / "spec.toml").write_text(TINY.replace("repeats = 2", "repeats = 10000000"), encoding="utf-8")
    spec = bs.read_spec(tmp_path / "spec.toml")
    started = time.perf_counter()
    grid = bs.cells(spec)
    assert len(grid) == 10_000_000
    first = next(iter(grid))
    assert (first.repeat, first.size) == (0, 20)
    from bayesclass.inference.studies.runner import GridTooLarge

    with pytest.raises(GridTooLarge, match=r"10,000,000 cells .* more than 10,000 .* confirm with confirm_large=True$"):
        bs.run(spec, tmp_path / "out")
    assert time.perf_counter() - started < 10
    assert not (tmp_path / "out").exists()  # refused before anything is written
    small = bs.read_spec(_write(tmp_path / "small.toml", TINY))
    assert len(bs.cells(small)) == len(list(bs.cells(small))) == 2


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_an_unreachable_scheduler_is_refused_within_seconds(tmp_path: Path, capsys) -> None:
    spec = _write(tmp_path / "spec.toml", TINY)
    started = time.perf_counter()
    assert run("study", str(spec), "--out", str(tmp_path / "out"), "--scheduler", "tcp://127.0.0.1:1") == 2
    assert time.perf_counter() - started < 10
    assert not (tmp_path / "out").exists()  # refused before anything is written
    assert "tcp://127.0.0.1:1" in capsys.readouterr().err


def test_every_metric_a_cell_can_record_has_a_declared_range() -> None:
    from bayesclass.inference.evaluation.scores import COUNTS, METRICS

    assert set(METRICS) | set(COUNTS) | {"mean_loss"} <= set(METRIC_RANGES)
    assert METRIC_RANGES["log_loss"] == (0.0, math.inf) and METRIC_RANGES["accuracy"] == (0.0, 1.0)


def test_records_carry_a_checksum_that_reads_back(recorded: Path) -> None:
    from bayesclass.inference.studies.records import checksum

    for path in _records(recorded / "out"):
        record = json.loads(path.read_text())
        assert record["format"] == 2 and record["checksum"] == checksum(record)


# -- faults of the distributed engine ---------------------------------------------------------------------------

#: four cells of a few seconds each, so that a worker is killed while it runs one
FOUR_CELLS = TINY.replace("training_sizes = [20]", "training_sizes = [20, 40]").replace("draws = 100", "draws = 2000")


def _worker_processes():
    """The Dask worker processes this test process spawned (``multiprocessing`` spawn children)."""
    import psutil

    found = []
    for child in psutil.Process().children(recursive=True):
        try:
            if any("spawn_main" in part for part in child.cmdline()):
                found.append(child)
        except psutil.Error:
            continue
    return found


def _every_cell_recorded_once(spec, out: Path) -> None:
    keys = {cell.key() for cell in bs.cells(spec)}
    files = _records(out)
    assert sorted(path.stem for path in files) == sorted(keys)  # one file per cell, no other
    table = bs.load(out, keys=keys)
    assert table.attrs["rejected"] == [] and set(table["status"]) == {"ok"}
    assert not list((out / "cells").glob(".*.tmp"))  # the killed write's temporary file is gone


def test_a_worker_sigkilled_mid_study_loses_no_cell(tmp_path: Path) -> None:
    """SIGKILL one of two LocalCluster workers while it runs a cell: its nanny starts another, Dask runs the cell
    again, and the study ends with every cell recorded exactly once."""
    import signal
    import threading

    spec = bs.read_spec(_write(tmp_path / "spec.toml", FOUR_CELLS))
    out = tmp_path / "out"
    killed: list[int] = []
    at_kill: list[int] = []

    def kill_one_worker() -> None:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and not killed:
            workers = _worker_processes()
            # both workers started and one cell recorded: the workers are busy with the next ones
            recorded = len(list((out / "cells").glob("*.json")))
            if len(workers) == 2 and recorded >= 1:
                workers[0].send_signal(signal.SIGKILL)
                killed.append(workers[0].pid)
                at_kill.append(recorded)
            time.sleep(0.05)

    killer = threading.Thread(target=kill_one_worker, daemon=True)
    killer.start()
    table = bs.run(spec, out, workers=2, progress=False)
    killer.join(timeout=10)
    assert killed and at_kill[0] < 4, "no worker was killed mid-study"
    assert "4 cells: 4 run, 0 failed" in table.attrs["summary"] and table.attrs["lost"] == []
    pids = {json.loads(path.read_text())["worker_pid"] for path in _records(out)}
    assert killed[0] not in pids or len(pids) >= 2  # (a cell it finished before the kill keeps its record)
    _every_cell_recorded_once(spec, out)


def test_a_cell_whose_worker_runs_out_of_memory_is_named_and_the_rest_recorded(tmp_path: Path, capsys) -> None:
    """A worker with too little memory for a cell: its nanny terminates it (out of memory) each time it runs the
    cell, Dask gives up on the cell after its allowed failures, and the study ends naming each such cell, with no
    record for it (a rerun runs it again) and exit code 1 on the command line."""
    import dask
    from distributed import LocalCluster

    from bayesclass.inference.engines._spawn import spawn_skips_main_script

    spec_path = _write(tmp_path / "spec.toml", TINY)
    spec = bs.read_spec(spec_path)
    out = tmp_path / "out"
    with (
        dask.config.set({"distributed.scheduler.allowed-failures": 1}),
        spawn_skips_main_script(),
        LocalCluster(n_workers=1, threads_per_worker=1, memory_limit="250MB", dashboard_address=None) as cluster,
    ):
        code = run("study", str(spec_path), "--out", str(out), "--scheduler", cluster.scheduler_address,
                   "--no-progress")  # fmt: skip
    captured = capsys.readouterr()
    assert code == 1, captured.out + captured.err
    assert "Traceback" not in captured.err
    assert "2 cell(s) not recorded" in captured.out and "0 run, 0 failed, 2 lost" in captured.out
    for cell in bs.cells(spec):
        assert f"naive_bayes on seed001_gaussians, 20 training rows, repeat {cell.repeat}" in captured.out
        assert not (out / "cells" / f"{cell.key()}.json").exists()
    assert "cell(s) not recorded" in captured.err  # the one-line error of exit code 1
