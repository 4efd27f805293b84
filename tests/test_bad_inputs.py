"""Bad and hostile input to the command line, as a table: input -> exit code and message, never a traceback.

Each case builds its files in a temporary folder and runs one ``bayesclass`` command in-process;
the command must end with the expected exit code and a one-line error that contains the
expected fragment (and no Python traceback).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import netCDF4
import numpy as np
import pytest

from bayesclass.cli import main


def run(*argv: str) -> int:
    try:
        return main(list(argv))
    except SystemExit as exit_:  # argparse's own usage errors
        return int(exit_.code)


@pytest.fixture(scope="module")
def good_result(tmp_path_factory) -> Path:
    """A valid MAP result of logistic regression on breast_cancer."""
    path = tmp_path_factory.mktemp("good") / "good.nc"
    assert run("fit", "--data", "breast_cancer", "--standardize", "--method", "map", "--out", str(path)) == 0
    return path


def _tampered(good: Path, folder: Path, **attrs) -> Path:
    """A copy of the good result whose root attrs are overwritten (or deleted where the value is None)."""
    path = folder / "tampered.nc"
    shutil.copy(good, path)
    with netCDF4.Dataset(path, "a") as dataset:
        for name, value in attrs.items():
            if value is None:
                dataset.delncattr(name)
            else:
                dataset.setncattr(name, value)
    return path


def _bytes(content: bytes) -> Callable[[Path, Path], Path]:
    def make(good: Path, folder: Path) -> Path:
        path = folder / "broken.nc"
        path.write_bytes(content)
        return path

    return make


def _truncated(good: Path, folder: Path) -> Path:
    path = folder / "truncated.nc"
    path.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    return path


def _foreign(good: Path, folder: Path) -> Path:
    path = folder / "foreign.nc"
    with netCDF4.Dataset(path, "w") as dataset:
        dataset.createDimension("x", 3)
        dataset.createVariable("temperature", "f8", ("x",))[:] = [1.0, 2.0, 3.0]
    return path


@dataclass(frozen=True)
class Case:
    name: str
    make: Callable[[Path, Path], Path]
    message: str


NOT_A_RESULT = "not a readable bayesclass result"
RESULT_CASES = [
    Case("empty file", _bytes(b""), NOT_A_RESULT),
    Case("random bytes", _bytes(np.random.default_rng(0).bytes(4096)), NOT_A_RESULT),
    Case("text file", _bytes(b"a,b\n1,2\n"), NOT_A_RESULT),
    Case("truncated result", _truncated, NOT_A_RESULT),
    Case("netCDF that is not a result", _foreign, "attrs model, method, model_hyperparameters"),
    Case(
        "invalid JSON in an attr",
        lambda good, folder: _tampered(good, folder, class_names='["malignant", '),
        "attr class_names is not valid JSON",
    ),
    Case(
        "attr of the wrong JSON type",
        lambda good, folder: _tampered(good, folder, feature_names='{"a": 1}'),
        "attr feature_names should hold a JSON list",
    ),
    Case(
        "a negative prior scale",
        lambda good, folder: _tampered(
            good,
            folder,
            model_hyperparameters=json.dumps({"model": "logistic", "prior": {"weight_sigma": -1.0}}),
        ),
        "weight_sigma must be a positive finite number",
    ),
    Case(
        "an unknown family",
        lambda good, folder: _tampered(good, folder, model_hyperparameters=json.dumps({"model": "svm"})),
        "unknown model 'svm'",
    ),
    Case(
        "a bool for a scale",
        lambda good, folder: _tampered(
            good, folder, model_hyperparameters=json.dumps({"model": "logistic", "prior": {"weight_sigma": True}})
        ),
        "weight_sigma must be a positive number, got True",
    ),
    Case(
        "an unknown method",
        lambda good, folder: _tampered(good, folder, method="magic"),
        "attr method 'magic' is not one of",
    ),
    Case(
        "a missing attr",
        lambda good, folder: _tampered(good, folder, feature_names=None),
        "attrs feature_names are missing",
    ),
    Case(
        "a newer format",
        lambda good, folder: _tampered(good, folder, bayesclass_format=99),
        "result format 99 is newer than this bayesclass reads",
    ),
    Case(
        "family and hyperparameters disagree",
        lambda good, folder: _tampered(good, folder, model="gcc"),
        "attr model 'gcc' disagrees with model_hyperparameters ('logistic')",
    ),
]
COMMANDS = {
    "predict": lambda path, folder: (
        "predict",
        "--run",
        str(path),
        "--data",
        "breast_cancer",
        "--out",
        str(folder / "p.csv"),
    ),
    "diagnose": lambda path, folder: ("diagnose", "--run", str(path)),
    "check": lambda path, folder: ("check", "--run", str(path)),
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("case", RESULT_CASES, ids=[case.name for case in RESULT_CASES])
def test_broken_or_tampered_result_files_are_one_line_errors(good_result, tmp_path, capsys, case, command):
    path = case.make(good_result, tmp_path)
    assert run(*COMMANDS[command](path, tmp_path)) == 2
    error = capsys.readouterr().err
    assert case.message in error, error
    assert "Traceback" not in error and error.count("\n") == 1
    assert not (tmp_path / "p.csv").exists()


def test_the_good_result_itself_reads(good_result, tmp_path):
    """The table's cases fail because of what they change, not because the fixture is broken."""
    for command in COMMANDS.values():
        code = run(*command(good_result, tmp_path))
        assert code in (0, 2)  # check refuses a discriminative model (exit 2) with its own message
    assert (tmp_path / "p.csv").exists()
