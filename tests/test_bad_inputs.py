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


# -- CSV structure, labels and options ------------------------------------------------------------------------

TRAIN = "x,colour,y\n0.5,red,a\n1.5,blue,b\n2.5,red,a\n3.5,green,b\n"
FILES = {
    "train.csv": TRAIN.encode(),
    "header_only.csv": b"x,y\n",
    "empty.csv": b"",
    "duplicate.csv": b"x,x,y\n1,2,a\n3,4,b\n",
    "ragged.csv": b"x,y\n1,a\n2\n",
    "missing.csv": b"x,y\n1,a\nNA,b\n",
    "mixed.csv": b"x,y\n1,a\nfive,b\n",
    "infinite.csv": b"x,y\n1,a\ninf,b\n",
    "decimal_comma.csv": b"x;y\n0,5;a\n1,5;b\n",
    "latin1.csv": "x,drink,y\n1,caf\xe9,a\n2,tea,b\n".encode("latin-1"),
    "only_target.csv": b"y\na\nb\n",
    "one_class.csv": b"x,y\n1,a\n2,a\n3,a\n",
    "new_label.csv": b"x,colour,y\n0.5,red,a\n1.5,blue,zzz\n",
    "new_level.csv": b"x,colour,y\n0.5,purple,a\n",
}
FIT_CSV = ("fit", "--target", "y", "--method", "map")
CLI_CASES = [
    # (case, argv with {dir}, exit code, message fragment)
    ("CSV file missing", (*FIT_CSV, "--data", "{dir}/nope.csv", "--out", "{dir}/r.nc"), "is not an existing file"),
    ("CSV header only", (*FIT_CSV, "--data", "{dir}/header_only.csv", "--out", "{dir}/r.nc"), "but no data rows"),
    ("CSV empty", (*FIT_CSV, "--data", "{dir}/empty.csv", "--out", "{dir}/r.nc"), "has no header"),
    ("CSV duplicate columns", (*FIT_CSV, "--data", "{dir}/duplicate.csv", "--out", "{dir}/r.nc"), "duplicate column"),
    ("CSV ragged row", (*FIT_CSV, "--data", "{dir}/ragged.csv", "--out", "{dir}/r.nc"), "line 3 has 1 cells"),
    ("CSV missing value", (*FIT_CSV, "--data", "{dir}/missing.csv", "--out", "{dir}/r.nc"), "blank cell 'NA'"),
    (
        "CSV text among numbers",
        (*FIT_CSV, "--data", "{dir}/mixed.csv", "--out", "{dir}/r.nc"),
        "mixes text and numbers",
    ),
    ("CSV infinite value", (*FIT_CSV, "--data", "{dir}/infinite.csv", "--out", "{dir}/r.nc"), "is not finite"),
    ("CSV decimal commas", (*FIT_CSV, "--data", "{dir}/decimal_comma.csv", "--out", "{dir}/r.nc"), "--decimal ','"),
    ("CSV Latin-1", (*FIT_CSV, "--data", "{dir}/latin1.csv", "--out", "{dir}/r.nc"), "--encoding latin-1"),
    (
        "CSV unknown encoding",
        (*FIT_CSV, "--data", "{dir}/train.csv", "--encoding", "klingon", "--out", "{dir}/r.nc"),
        "not a known text encoding",
    ),
    (
        "CSV target absent",
        ("fit", "--target", "z", "--data", "{dir}/train.csv", "--out", "{dir}/r.nc"),
        "target column 'z' is not in CSV",
    ),
    (
        "CSV only the target",
        (*FIT_CSV, "--data", "{dir}/only_target.csv", "--out", "{dir}/r.nc"),
        "has only the target column",
    ),
    ("labels of one class", (*FIT_CSV, "--data", "{dir}/one_class.csv", "--out", "{dir}/r.nc"), "single class"),
    (
        "label unseen at predict",
        (
            "predict",
            "--run",
            "{dir}/train.nc",
            "--data",
            "{dir}/new_label.csv",
            "--target",
            "y",
            "--out",
            "{dir}/p.csv",
        ),
        "label 'zzz'",
    ),
    (
        "level unseen at predict",
        ("predict", "--run", "{dir}/train.nc", "--data", "{dir}/new_level.csv", "--out", "{dir}/p.csv"),
        "level 'purple'",
    ),
    (
        "--feature-kind without =",
        (*FIT_CSV, "--data", "{dir}/train.csv", "--feature-kind", "x", "--out", "{dir}/r.nc"),
        "must be COLUMN=KIND",
    ),
    (
        "--feature-kind unknown kind",
        (*FIT_CSV, "--data", "{dir}/train.csv", "--feature-kind", "x=weird", "--out", "{dir}/r.nc"),
        "is not a feature kind",
    ),
    (
        "--feature-kind unknown column",
        (*FIT_CSV, "--data", "{dir}/train.csv", "--feature-kind", "q=binary", "--out", "{dir}/r.nc"),
        "names column(s) 'q'",
    ),
    (
        "--seed beyond 64 bits",
        ("fit", "--data", "iris", "--method", "map", "--seed", str(2**70), "--out", "{dir}/r.nc"),
        "--seed must be an integer in 0..4294967295, got 1180591620717411303424",
    ),
    (
        "--seed negative",
        ("fit", "--data", "iris", "--method", "map", "--seed", "-1", "--out", "{dir}/r.nc"),
        "--seed must be an integer in 0..4294967295",
    ),
    (
        "--method the family lacks",
        ("fit", "--data", "iris", "--method", "exact", "--out", "{dir}/r.nc"),
        "--method exact is not available for --model logistic",
    ),
    ("--draws 0", ("fit", "--data", "iris", "--draws", "0", "--out", "{dir}/r.nc"), "draws must be an integer >= 1"),
    (
        "--target-accept 1.5",
        ("fit", "--data", "iris", "--target-accept", "1.5", "--out", "{dir}/r.nc"),
        "target_accept must be a number in (0, 1)",
    ),
    ("--out not .nc", ("fit", "--data", "iris", "--method", "map", "--out", "{dir}/r.csv"), "must end in .nc"),
    ("--out folder missing", ("fit", "--data", "iris", "--method", "map", "--out", "{dir}/no/r.nc"), "does not exist"),
    (
        "negative prior scale",
        ("fit", "--data", "iris", "--method", "map", "--prior-sigma", "-1", "--out", "{dir}/r.nc"),
        "weight_sigma must be a positive finite number",
    ),
    (
        "flag of another family",
        ("fit", "--data", "iris", "--binary-alpha", "2", "--out", "{dir}/r.nc"),
        "--binary-alpha applies to --model naive_bayes, not logistic",
    ),
    ("unknown family", ("fit", "--data", "iris", "--model", "svm", "--out", "{dir}/r.nc"), "invalid choice: 'svm'"),
    (
        "unknown --features",
        ("fit", "--data", "iris", "--features", "petal,sepal", "--out", "{dir}/r.nc"),
        "are not in 'iris'",
    ),
    ("unknown dataset", ("fit", "--data", "irises", "--out", "{dir}/r.nc"), "unknown dataset name 'irises'"),
    (
        "--interval-prob 2",
        (
            "predict",
            "--run",
            "{dir}/train.nc",
            "--data",
            "{dir}/train.csv",
            "--interval-prob",
            "2",
            "--out",
            "{dir}/p.csv",
        ),
        "interval_prob must be in (0, 1)",
    ),
    (
        "--replicates 0",
        ("check", "--run", "{dir}/nb.nc", "--replicates", "0"),
        "--replicates must be an integer >= 1, got 0",
    ),
    (
        "--decimal other than . or ,",
        (*FIT_CSV, "--data", "{dir}/train.csv", "--decimal", ";", "--out", "{dir}/r.nc"),
        "invalid choice: ';'",
    ),
]


@pytest.fixture(scope="module")
def csv_folder(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("csv")
    for name, content in FILES.items():
        (folder / name).write_bytes(content)
    assert run(*FIT_CSV, "--data", str(folder / "train.csv"), "--out", str(folder / "train.nc")) == 0
    assert (
        run("fit", "--model", "naive_bayes", "--data", "transport", "--method", "map", "--out", str(folder / "nb.nc"))
        == 0
    )
    return folder


@pytest.mark.parametrize(("case", "argv", "message"), CLI_CASES, ids=[case for case, *_ in CLI_CASES])
def test_bad_csv_labels_and_options_are_one_line_usage_errors(csv_folder, capsys, case, argv, message):
    capsys.readouterr()
    arguments = [part.format(dir=csv_folder) for part in argv]
    assert run(*arguments) == 2
    error = capsys.readouterr().err
    assert message in error, error
    assert "Traceback" not in error
    assert not (csv_folder / "r.nc").exists() and not (csv_folder / "p.csv").exists()


def count_cases() -> int:
    """Rows of the bad-input table: every module-level list named ``*_CASES`` here (the result cases once per
    command), in every module of tests/bad_inputs/, and the interrupt cases of tests/test_interrupts.py, each
    driven by a real signal."""
    import importlib
    import pkgutil

    import tests.bad_inputs
    from tests import test_interrupts

    tables = {name: value for name, value in globals().items() if name.endswith("_CASES")}
    count = sum(len(table) for name, table in tables.items() if name != "RESULT_CASES")
    count += len(RESULT_CASES) * len(COMMANDS)
    modules = [test_interrupts]
    for info in pkgutil.iter_modules(tests.bad_inputs.__path__):
        modules.append(importlib.import_module(f"tests.bad_inputs.{info.name}"))
    for module in modules:
        count += sum(len(table) for name, table in vars(module).items() if name.endswith("_CASES"))
    return count


def test_the_table_holds_at_least_120_cases():
    assert count_cases() >= 120


#: (command): its standard output closed by the reader before it prints (``bayesclass datasets | head -0``)
PIPE_CASES = [("datasets",), ("fit", "--data", "iris", "--method", "map", "--out", "{dir}/piped.nc")]


@pytest.mark.parametrize("argv", PIPE_CASES, ids=[" ".join(case[:1]) for case in PIPE_CASES])
def test_a_closed_stdout_ends_with_exit_141_without_a_traceback(csv_folder, argv):
    """As a shell reports SIGPIPE; before, a BrokenPipeError traceback."""
    import subprocess
    import sys

    arguments = [part.format(dir=csv_folder) for part in argv]
    process = subprocess.Popen(
        [sys.executable, "-m", "bayesclass", *arguments], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    process.stdout.close()  # the reader has gone before the command prints
    errors = process.stderr.read().decode()
    assert process.wait(timeout=300) == 141, errors
    assert "Traceback" not in errors
