"""Bad input to the GP's data-dependent default: a saved result whose ``method_note`` attr was edited.

A fit whose ``method="auto"`` chose another method than the family's sampler for the data (the latent GP's
``laplace`` on many inputs) records why in the ``method_note`` attr, which ``fit`` prints and reports show. A
result file is untrusted input: each row of :data:`GP_METHOD_NOTE_FILE_CASES` edits that attr of a saved GP fit and
runs ``bayesclass predict`` on it in-process: exit code 2 and a one-line error naming the attr, never a traceback
and never the edited text on a report.
"""

from __future__ import annotations

from pathlib import Path

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
