"""Bad input to studies that stack families (``[[models]] family = "stack"`` with ``members``).

:data:`STUDY_STACK_CASES`: each row writes a spec (or damages a recorded stack study) and runs one ``bayesclass
study`` or ``study-report`` command in-process: the command ends with the row's exit code, its output holds the
row's fragment (naming the key, the value and the fix), and no Python traceback. A spec's problems are found before
any cell runs (exit 2); a member that cannot take a data set fails its cells, each recorded with the member's name
and reason, and the study goes on (exit 0); a record whose stack weight is out of range is left out of the page.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

import bayesclass.study as bs
from bayesclass.inference.studies.records import seal
from tests.bad_inputs.harness import assert_one_line_error, run

#: a stack study of one cell that runs in seconds (naive Bayes by exact draws, logistic by Laplace draws)
STACKED = """name = "tiny stack"
training_sizes = [30]
repeats = 1
metrics = ["log_loss"]

[sampler]
draws = 100
chains = 2

[[models]]
family = "naive_bayes"
method = "exact"

[[models]]
family = "logistic"
method = "laplace"

[[models]]
family = "stack"
members = ["logistic", "naive_bayes"]

[[datasets]]
name = "seed001_gaussians"
generator = { n = 200, random_seed = 1 }
models = ["stack"]
"""
MEMBERS = 'members = ["logistic", "naive_bayes"]'


def _with(old: str, new: str, text: str = STACKED) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


def _spec(text: str) -> Callable[[Path, Path], list[str]]:
    def make(tmp: Path, recorded: Path) -> list[str]:
        (tmp / "spec.toml").write_text(text, encoding="utf-8")
        return ["study", str(tmp / "spec.toml"), "--out", str(tmp / "out"), "--serial", "--no-progress"]

    return make


def _report_after(text: str) -> Callable[[Path, Path], list[str]]:
    """Run the study ``text`` (its cells fail), then ask for its page."""

    def make(tmp: Path, recorded: Path) -> list[str]:
        (tmp / "spec.toml").write_text(text, encoding="utf-8")
        assert run("study", str(tmp / "spec.toml"), "--out", str(tmp / "out"), "--serial", "--no-progress") == 0
        return ["study-report", str(tmp / "out"), "--out", str(tmp / "page.html")]

    return make


def _resealed_weight(value: float) -> Callable[[Path, Path], list[str]]:
    """The recorded stack study, its first record's member weights set to ``value``, the checksum recomputed."""

    def make(tmp: Path, recorded: Path) -> list[str]:
        shutil.copytree(recorded / "out", tmp / "out")
        path = sorted((tmp / "out" / "cells").glob("*.json"))[0]
        record = json.loads(path.read_text())
        for row in record["rows"]:
            if row["metric"] == "stack_weight":
                row["value"] = value
        path.write_text(json.dumps(seal(record)), encoding="utf-8")
        return ["study-report", str(tmp / "out"), "--out", str(tmp / "page.html")]

    return make


#: penguins with its categorical columns: gcc (continuous features only) cannot take it
PENGUINS = 'name = "penguins"\nmissing = "drop"'
GENERATED = 'name = "seed001_gaussians"\ngenerator = { n = 200, random_seed = 1 }'


@dataclass(frozen=True)
class StackCase:
    """One row: the input, the exit code, a fragment of the output (stdout and stderr)."""

    name: str
    make: Callable[[Path, Path], list[str]]
    code: int
    message: str


STUDY_STACK_CASES = [
    StackCase("stack without members", _spec(_with(MEMBERS + "\n", "")), 2, "(stack): members is missing"),
    StackCase(
        "stack of one member",
        _spec(_with(MEMBERS, 'members = ["logistic"]')),
        2,
        "members = ['logistic'] names one model; a stack needs two or more",
    ),
    StackCase(
        "member listed twice",
        _spec(_with(MEMBERS, 'members = ["logistic", "logistic"]')),
        2,
        "members ['logistic'] listed more than once",
    ),
    StackCase(
        "unknown member",
        _spec(_with(MEMBERS, 'members = ["logistic", "svm"]')),
        2,
        "unknown member 'svm'; give the label of a [[models]] entry",
    ),
    StackCase(
        "member a text, not a list",
        _spec(_with(MEMBERS, 'members = "logistic, naive_bayes"')),
        2,
        "members must be a list of texts, got 'logistic, naive_bayes'; e.g. members = [\"...\"]",
    ),
    StackCase(
        "member a stack",
        _spec(
            STACKED.replace(
                "[[datasets]]",
                '[[models]]\nfamily = "stack"\nlabel = "outer"\nmembers = ["stack", "logistic"]\n\n[[datasets]]',
            )
        ),  # fmt: skip
        2,
        "member 'stack' is a stack; stack the families themselves",
    ),
    StackCase(
        "stack weighed by an unknown method",
        _spec(_with(MEMBERS, MEMBERS + '\nmethod = "bma"')),
        2,
        "method 'bma' is not a way to weigh a stack; choose 'stacking' or 'pseudo_bma_plus'",
    ),
    StackCase(
        "point estimates on a stack",
        _spec(_with(MEMBERS, MEMBERS + '\npoint_estimates = ["map"]')),
        2,
        "(stack): point_estimates applies to a member, not to the stack",
    ),
    StackCase(
        "options on a stack",
        _spec(_with(MEMBERS, MEMBERS + '\noptions = { link = "probit" }')),
        2,
        "(stack): options applies to a member, not to the stack",
    ),
    StackCase(
        "members on one family",
        _spec(_with('method = "laplace"', 'method = "laplace"\nmembers = ["naive_bayes"]')),
        2,
        'members applies to family = "stack" only',
    ),
    StackCase(
        "two stacks under the default label",
        _spec(
            STACKED.replace(
                "[[datasets]]", '[[models]]\nfamily = "stack"\nmembers = ["naive_bayes", "gcc"]\n\n[[datasets]]'
            )
        ),  # fmt: skip
        2,
        "the label 'stack' is used twice",
    ),
    StackCase(
        "unknown baseline on a stack",
        _spec(_with(MEMBERS, MEMBERS + '\nbaselines = ["oracle"]')),
        2,
        "(stack): unknown baseline(s) ['oracle']",
    ),
    StackCase(
        "unknown family names stacks",
        _spec(_with('family = "logistic"', 'family = "stacked"')),
        2,
        "unknown family 'stacked'; choose among gcc, gp, logistic, naive_bayes (or \"stack\" with members",
    ),
    StackCase(
        "member cannot take the data (gcc on categorical penguins)",
        _spec(_with(GENERATED, PENGUINS, _with(MEMBERS, 'members = ["naive_bayes", "gcc"]'))),
        0,
        "1 failed",
    ),
    StackCase(
        "the page of a stack whose member cannot take the data",
        _report_after(_with(GENERATED, PENGUINS, _with(MEMBERS, 'members = ["naive_bayes", "gcc"]'))),
        0,
        "wrote",
    ),
    StackCase(
        "the page of a study whose every cell failed (no stack)",
        _report_after('name = "fail"\ntraining_sizes = [30]\n[[models]]\nfamily = "gcc"\n[[datasets]]\n' + PENGUINS),
        0,
        "wrote",
    ),
    StackCase("stack weight 1.5, resealed", _resealed_weight(1.5), 0, "value of stack_weight"),
    StackCase("stack weight -0.5, resealed", _resealed_weight(-0.5), 0, "value of stack_weight"),
    StackCase(
        "--example without --write-example",
        lambda tmp, recorded: ["study", str(tmp / "spec.toml"), "--out", str(tmp / "out"), "--example", "stack"],
        2,
        "--example stack picks the spec that --write-example writes",
    ),
    StackCase(
        "unknown example",
        lambda tmp, recorded: ["study", "--write-example", str(tmp / "ex.toml"), "--example", "stacks"],
        2,
        "example 'stacks' is not a built-in example spec; choose among plugin, stack",
    ),
]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> Path:
    """A finished stack study of two cells: ``spec.toml`` beside its results folder ``out/``."""
    folder = tmp_path_factory.mktemp("recorded_stack")
    (folder / "spec.toml").write_text(_with("repeats = 1", "repeats = 2"), encoding="utf-8")
    assert run("study", str(folder / "spec.toml"), "--out", str(folder / "out"), "--serial", "--no-progress") == 0
    return folder


@pytest.mark.parametrize("case", STUDY_STACK_CASES, ids=[case.name for case in STUDY_STACK_CASES])
def test_study_stack_case(case: StackCase, recorded: Path, tmp_path: Path, capsys) -> None:
    argv = case.make(tmp_path, recorded)
    capsys.readouterr()  # the output of making the input (a study run first) is not the row's
    code = run(*argv)
    out, err = capsys.readouterr()
    assert code == case.code, (code, out, err)
    assert_one_line_error(out + err, case.message)
    if case.code == 2:
        assert err.startswith("bayesclass study: error: ") and not (tmp_path / "out" / "cells").exists()


def test_a_member_that_cannot_take_the_data_is_named_in_its_cell_and_on_the_page(tmp_path) -> None:
    text = _with(GENERATED, PENGUINS, _with(MEMBERS, 'members = ["naive_bayes", "gcc"]'))
    (tmp_path / "spec.toml").write_text(text, encoding="utf-8")
    table = bs.run(bs.read_spec(tmp_path / "spec.toml"), tmp_path / "out", serial=True, progress=False)
    (error,) = table["error"].dropna().unique()
    assert error.startswith("ValueError: stack member 'gcc' (gcc, nuts) could not be fitted on 30 training rows")
    assert "needs continuous features" in error
    page = bs.report(tmp_path / "out")
    assert "stack member &#39;gcc&#39; (gcc, nuts) could not be fitted" in page


def test_a_spec_with_several_stack_problems_lists_them_all(tmp_path) -> None:
    text = _with(MEMBERS, 'members = ["logistic", "logistic", "svm"]\nmethod = "bma"\nstandardize = false')
    (tmp_path / "spec.toml").write_text(text, encoding="utf-8")
    with pytest.raises(ValueError) as raised:
        bs.read_spec(tmp_path / "spec.toml")
    message = str(raised.value)
    assert "has 4 problem(s)" in message, message
    for fragment in ("standardize applies to a member", "listed more than once", "unknown member 'svm'",
                     "method 'bma'"):  # fmt: skip
        assert fragment in message
