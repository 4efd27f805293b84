"""Bad input to the GP's data-dependent default: a saved result whose ``method_note`` attr was edited.

A fit whose ``method="auto"`` chose another method than the family's sampler for the data (the latent GP's
``laplace`` on many inputs) records why in the ``method_note`` attr, which ``fit`` prints and reports show. A
result file is untrusted input: each row of :data:`GP_METHOD_NOTE_FILE_CASES` edits that attr of a saved GP fit and
runs ``bayesclass predict`` on it in-process: exit code 2 and a one-line error naming the attr, never a traceback
and never the edited text on a report.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from bayesclass.data import seed004_gp
from bayesclass.inference import fit, save
from bayesclass.inference.result import MAX_TEXT
from bayesclass.models import LatentGaussianProcess
from tests.bad_inputs.harness import assert_one_line_error, run

#: (id, the method_note attr written into a saved GP fit, exit code of ``predict``, fragment of the one-line error)
GP_METHOD_NOTE_FILE_CASES = [
    ("an escape sequence", "laplace \x1b[2J is the default", 2, "attr method_note holds"),
    ("a number", 3.5, 2, "attr method_note should be text"),
    ("text longer than any note", "x" * (MAX_TEXT + 1), 2, "attr method_note should be text"),
]

#: (options after ``fit --model gp --data WIDE.csv --target y`` on 250 rows x 30 inputs, where ``method="auto"`` is
#: laplace, exit code, fragment of the one-line error): a Gibbs-only setting, refused naming why auto chose laplace
GP_AUTO_LAPLACE_CLI_CASES = [
    (("--tune", "100"), 2, "--tune does nothing with --method laplace"),
]


@pytest.fixture(scope="module")
def wide_csv(tmp_path_factory) -> Path:
    """250 rows x 30 inputs: (30 + 2) x 250^3 = 5e8 above the Gibbs bound."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(250, 30))
    rows = [",".join([*(f"x{j}" for j in range(30)), "y"])]
    rows += [",".join([*(f"{value:.6f}" for value in row), "ab"[int(row[0] > 0)]]) for row in x]
    path = tmp_path_factory.mktemp("gp_wide") / "wide.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(("options", "code", "fragment"), GP_AUTO_LAPLACE_CLI_CASES)
def test_a_gibbs_setting_under_an_auto_laplace_is_refused_saying_why(
    wide_csv, tmp_path, capsys, options, code, fragment
):
    base = ("fit", "--model", "gp", "--data", str(wide_csv), "--target", "y", "--out", str(tmp_path / "r.nc"))
    assert run(*base, *options) == code
    error = capsys.readouterr().err
    assert_one_line_error(error, fragment)
    assert "(laplace is the gp's default on 250 rows x 30 inputs" in error
    assert not (tmp_path / "r.nc").exists()


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> tuple[Path, Path]:
    """A saved GP map fit and a CSV of rows to predict."""
    folder = tmp_path_factory.mktemp("gp_default_method")
    save(fit(LatentGaussianProcess(), seed004_gp(30, random_seed=4), method="map"), folder / "map.nc")
    (folder / "rows.csv").write_text("x\n0.1\n0.5\n", encoding="utf-8")
    return folder / "map.nc", folder / "rows.csv"


def _predict(run_file: Path, rows: Path, out: Path) -> int:
    return run("predict", "--run", str(run_file), "--data", str(rows), "--out", str(out), "--no-progress")


def test_an_unedited_file_predicts(saved, tmp_path):
    assert _predict(*saved, tmp_path / "p.csv") == 0


@pytest.mark.parametrize(
    ("note", "code", "fragment"),
    [row[1:] for row in GP_METHOD_NOTE_FILE_CASES],
    ids=[row[0] for row in GP_METHOD_NOTE_FILE_CASES],
)
def test_an_edited_method_note_is_refused(saved, tmp_path, capsys, note, code, fragment):
    run_file, rows = saved
    tree = xr.open_datatree(run_file).load()
    tree.attrs["method_note"] = note
    edited = tmp_path / "edited.nc"
    tree.to_netcdf(edited)
    capsys.readouterr()
    assert _predict(edited, rows, tmp_path / "p.csv") == code
    assert_one_line_error(capsys.readouterr().err, fragment)
