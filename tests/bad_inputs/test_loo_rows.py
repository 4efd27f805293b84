"""Bad input to ``bayesclass loo``: which fits it compares (the same rows and labels, whatever their columns) and
which log-likelihoods it refuses to turn into a PSIS-LOO estimate.

:data:`LOO_ROWS_CLI_CASES` runs ``bayesclass loo`` on pairs of result files made once per module: fits on the
same rows with other ``--features`` are compared (exit 0, both rows printed); fits on other rows, labels or
dropped rows are refused with one line naming the files and what differs (exit 2). :data:`LOO_LOG_LIKELIHOOD_CASES`
edits a saved result's ``log_likelihood`` group: -inf and NaN values are refused naming the rows, values equal up
to rounding (which made PSIS's Pareto fit return NaN) give a finite estimate. ``bayesclass stack`` still refuses
members with other columns (a stack predicts new rows through every member).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import netCDF4
import numpy as np
import pytest

from tests.bad_inputs.harness import assert_one_line_error, run

FAST = ("--method", "exact", "--draws", "150", "--chains", "2", "--seed", "1", "-q")
GAUSSIANS = ("--model", "naive_bayes", "--data", "seed001_gaussians", *FAST)
PENGUINS = ("--model", "naive_bayes", "--data", "penguins", "--missing", "drop", *FAST)


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    """Result files: one data set with all its columns and with one; other rows; penguins with rows dropped."""
    folder = tmp_path_factory.mktemp("loo_rows")
    fits = {
        "all": (*GAUSSIANS, "--rows", "60"),
        "x1": (*GAUSSIANS, "--rows", "60", "--features", "x1"),
        "x2_scaled": (*GAUSSIANS, "--rows", "60", "--features", "x2", "--standardize"),
        "logistic_x1": ("--model", "logistic", "--data", "seed001_gaussians", "--rows", "60", "--features", "x1",
                        "--method", "laplace", "--draws", "150", "--chains", "2", "--seed", "1", "-q"),
        "other_rows": (*GAUSSIANS, "--rows", "70", "--features", "x1"),
        "iris": ("--model", "naive_bayes", "--data", "iris", *FAST),
        "penguins_all": PENGUINS,
        "penguins_sex": (*PENGUINS, "--features", "sex,island"),
        "penguins_bill": (*PENGUINS, "--features", "bill_length_mm,island"),
        "penguins_flipper": (*PENGUINS, "--features", "flipper_length_mm,island"),
    }  # fmt: skip
    paths = {}
    for name, options in fits.items():
        paths[name] = folder / f"{name}.nc"
        assert run("fit", *options, "--out", str(paths[name])) == 0, name
    return paths


#: (runs by fixture name, exit code, fragment of stderr (exit 2) or stdout (exit 0))
LOO_ROWS_CLI_CASES = [
    # the same rows and labels with other columns, scaling or family: compared
    (("all", "x1"), 0, "comparison (arviz_stats.compare"),
    (("x1", "x2_scaled", "all"), 0, "comparison (arviz_stats.compare"),
    (("logistic_x1", "x2_scaled"), 0, "comparison (arviz_stats.compare"),
    (("penguins_all", "penguins_sex"), 0, "comparison (arviz_stats.compare"),  # the 11 blank-sex rows, both
    # other rows or labels: refused, naming both files and what differs
    (("x1", "other_rows"), 2, "were fitted on different rows or labels: 60 rows against 70 rows"),
    (("iris", "all"), 2, "were fitted on different rows or labels: 150 rows against 60 rows"),
    (("penguins_all", "penguins_bill"), 2, "333 rows against 342 rows"),
    (("penguins_bill", "penguins_flipper"), 2, "both dropped 2 rows for blank cells, but in other columns"),
]


@pytest.mark.parametrize(("runs", "code", "fragment"), LOO_ROWS_CLI_CASES)
def test_loo_compares_fits_on_the_same_rows_whatever_their_columns(files, capsys, runs, code, fragment):
    arguments = [item for name in runs for item in ("--run", str(files[name]))]
    assert run("loo", *arguments) == code
    out, error = capsys.readouterr()
    if code == 0:
        assert fragment in out and error == "", error
        table = out[out.index(fragment) :]
        assert all(files[name].name in table for name in runs)  # one row per fit
        assert out.count("elpd_loo") == len(runs) and "nan" not in out
    else:
        assert_one_line_error(error, fragment)
        assert error.count("\n") == 1 and f"'{files[runs[0]]}'" in error and f"'{files[runs[1]]}'" in error


def test_two_features_against_all_prints_both_rows(files, capsys):
    """The issue's case: ``--features x1`` against every column, on the same rows."""
    assert run("loo", "--run", str(files["x1"]), "--run", str(files["all"])) == 0
    out = capsys.readouterr().out
    rows = [Path(line.split()[0]).name for line in out[out.index("comparison") :].splitlines()[2:] if line.strip()]
    assert sorted(rows) == ["all.nc", "x1.nc"]


def test_stack_still_requires_the_same_columns(files, tmp_path, capsys):
    out = tmp_path / "stack.nc"
    assert run("stack", str(files["all"]), str(files["x1"]), "--out", str(out), "-q") == 2
    assert_one_line_error(capsys.readouterr().err, "have other columns (['x1', 'x2'] against ['x1']")
    assert not out.exists()


def _set_log_likelihood(edit):
    def tamper(dataset):
        variable = dataset["log_likelihood"]["y"]
        values = np.array(variable[:])
        edit(values)
        variable[:] = values

    return tamper


def _minus_inf(values):
    values[0, :3, 4] = -np.inf  # three draws give row 4's observed class probability 0
    values[1, 0, 9] = -np.inf


def _nan(values):
    values[0, 0, 2] = np.nan


def _rounding(values):
    """Rows 0..9 predicted with probability 1 up to rounding: log-likelihoods 0 or a few ulps below it."""
    jitter = np.random.default_rng(0).integers(0, 5, size=values[..., :10].shape)
    values[..., :10] = -jitter * np.finfo(float).eps


#: (edit of the saved result's log_likelihood values (chain, draw, obs), exit code, fragment)
LOO_LOG_LIKELIHOOD_CASES = [
    (_minus_inf, 2, "probability 0 (log-likelihood -inf) in some draws of training rows 4, 9 (0-based; in 3, 1 of"),
    (_nan, 2, "the log-likelihood is NaN in 1 (draw, row) pairs, in training rows 2 (0-based)"),
    (_rounding, 0, "elpd_loo "),
]


@pytest.mark.parametrize(("edit", "code", "fragment"), LOO_LOG_LIKELIHOOD_CASES)
def test_loo_of_an_edited_log_likelihood(files, tmp_path, capsys, edit, code, fragment):
    path = tmp_path / "edited.nc"
    shutil.copy(files["all"], path)
    with netCDF4.Dataset(path, "a") as dataset:
        _set_log_likelihood(edit)(dataset)
    assert run("loo", "--run", str(path)) == code
    out, error = capsys.readouterr()
    if code == 0:
        assert fragment in out and "nan" not in out and error == "", error
    else:
        assert_one_line_error(error, fragment)
        assert error.count("\n") == 1
