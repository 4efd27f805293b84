"""Bad input to interval coverage: levels, hand-made intervals, the generator's arguments, and study records.

:data:`COVERAGE_CASES` are calls of :mod:`bayesclass.inference.evaluation.coverage` (and the logistic generator
with known weights) that must raise a clear error naming the argument and the value. :data:`COVERAGE_RECORD_CASES`
are cell records whose coverage rows are out of range or malformed, sealed with a valid checksum (whoever edits
a record on purpose can recompute it): the record's schema refuses each, naming the metric, never reporting it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from bayesclass.data import logistic_known_weights
from bayesclass.inference.evaluation.coverage import coverage_metric, covered_share, interval_coverage
from bayesclass.inference.studies.records import RECORD_FORMAT, DamagedRecord, seal, verify_record
from bayesclass.inference.studies.runner import _simple_random_sample
from bayesclass.reports.figures.study import learning_curve_plot

KEY = "0123456789abcdef01234567"


@dataclass(frozen=True)
class CoverageCase:
    """A call that must raise ``error`` with ``message`` in its text."""

    name: str
    call: Callable[[], Any]
    error: type[Exception]
    message: str


def _interval_coverage(**arguments: Any) -> Callable[[], Any]:
    def call() -> Any:
        return interval_coverage(None, logistic_known_weights(50, random_seed=1), **arguments)

    return call


COVERAGE_CASES = [
    CoverageCase("level above 1", lambda: coverage_metric(1.5), ValueError, "a number in (0, 1), e.g. 0.95; got 1.5"),
    CoverageCase("level 0", lambda: coverage_metric(0), ValueError, "a number in (0, 1), e.g. 0.95; got 0"),
    CoverageCase("level as text", lambda: coverage_metric("95%"), ValueError, "got '95%'"),
    CoverageCase("level True", lambda: coverage_metric(True), ValueError, "got True"),
    CoverageCase("level NaN", lambda: coverage_metric(math.nan), ValueError, "got nan"),
    CoverageCase("level not a whole percentage", lambda: coverage_metric(0.955), ValueError, "whole percentage"),
    CoverageCase(
        "interval of another shape",
        lambda: covered_share(np.zeros(3), np.zeros(2), np.ones(3)),
        ValueError,
        "must have one shape, got (3,), (2,), (3,)",
    ),
    CoverageCase(
        "truth with NaN", lambda: covered_share(np.array([np.nan]), np.zeros(1), np.ones(1)), ValueError, "NaN"
    ),  # fmt: skip
    CoverageCase("no levels", _interval_coverage(levels=()), ValueError, "at least one nominal level"),
    CoverageCase("a level of 95 (percent)", _interval_coverage(levels=(95,)), ValueError, "got 95"),
    CoverageCase(
        "a class too rare for redraw's samples",
        lambda: _simple_random_sample(np.arange(50_000), (np.arange(50_000) == 7).astype(int), 2, 0),
        ValueError,
        "1000 simple random samples of 2 training rows all missed a class",
    ),
    CoverageCase(
        "coverage figure with 0 columns",
        lambda: learning_curve_plot({"p": {"a": ([1.0], [0.9], [0.8], [1.0])}}, columns=0),
        ValueError,
        "columns must be a whole number >= 1 of panels per row, e.g. 2; got 0",
    ),
    CoverageCase("generator n = 1", lambda: logistic_known_weights(1), ValueError, "n"),
    CoverageCase("generator n as text", lambda: logistic_known_weights("100"), ValueError, "n"),
    CoverageCase("generator seed negative", lambda: logistic_known_weights(50, random_seed=-1), ValueError, "seed"),
]


@pytest.mark.parametrize("case", COVERAGE_CASES, ids=[case.name for case in COVERAGE_CASES])
def test_bad_coverage_input(case: CoverageCase) -> None:
    with pytest.raises(case.error) as raised:
        case.call()
    assert case.message in str(raised.value), str(raised.value)


def _record(rows: list[dict[str, Any]]) -> dict[str, Any]:
    cell = {"study": "s", "model": "logistic", "family": "logistic", "method": "laplace", "dataset": "d", "size": 20,
            "repeat": 0}  # fmt: skip
    return seal({"format": RECORD_FORMAT, "key": KEY, "cell": cell, "status": "ok", "error": None, "rows": rows})


def _row(metric: str, value: Any, estimate: str = "posterior") -> dict[str, Any]:
    return {"estimate": estimate, "kind": "posterior", "metric": metric, "value": value}


@dataclass(frozen=True)
class RecordCase:
    """A sealed record with these rows that :func:`verify_record` refuses with ``message``."""

    name: str
    rows: list[dict[str, Any]]
    message: str


COVERAGE_RECORD_CASES = [
    RecordCase("coverage above 1", [_row("coverage_95", 1.2)], "value of coverage_95 (posterior)"),
    RecordCase("coverage below 0", [_row("coverage_89", -0.1)], "value of coverage_89 (posterior)"),
    RecordCase("coverage infinite", [_row("coverage_89", "inf")], "value of coverage_89 (posterior)"),
    RecordCase(
        "parameter coverage above 1", [_row("parameter_coverage_95", 1.5)], "value of parameter_coverage_95"
    ),  # fmt: skip
    RecordCase("parameter coverage as text", [_row("parameter_coverage_89", "all")], "rows[0].value must be a number"),
    RecordCase("coverage at an unknown level", [_row("coverage_50", 0.5)], "coverage_50"),
    RecordCase("coverage as a list", [_row("coverage_95", [0.9, 1.0])], "got [0.9, 1.0] (list)"),
]


@pytest.mark.parametrize("case", COVERAGE_RECORD_CASES, ids=[case.name for case in COVERAGE_RECORD_CASES])
def test_bad_coverage_record(case: RecordCase) -> None:
    with pytest.raises(DamagedRecord) as raised:
        verify_record(_record(case.rows), key=KEY)
    assert case.message in str(raised.value), str(raised.value)


def test_a_record_with_coverage_rows_round_trips() -> None:
    """In range (NaN: not available) the rows verify, as written; an older record without them still does."""
    rows = [_row("coverage_89", 0.875), _row("coverage_95", 1.0), _row("parameter_coverage_95", 2 / 3),
            _row("coverage_95", "nan", estimate="MLE plug-in")]  # fmt: skip
    import json

    record = json.loads(json.dumps(_record(rows)))
    assert verify_record(record, key=KEY)["rows"] == rows
    assert verify_record(_record([_row("log_loss", 0.5)]), key=KEY)["rows"][0]["value"] == 0.5


#: a coverage study of two cells on the logistic generator (the Laplace posterior: seconds)
SPEC = """name = "coverage"
training_sizes = [30]
repeats = 2

[sampler]
draws = 100
chains = 2

[[models]]
family = "logistic"
method = "laplace"
point_estimates = ["mle"]

[[datasets]]
name = "logistic_known_weights"
generator = { n = 200, random_seed = 1 }
redraw = true
"""


@dataclass(frozen=True)
class SpecCase:
    """``bayesclass study`` of ``SPEC`` with ``old`` replaced by ``new``: exit 2 and ``message`` on one line."""

    name: str
    old: str
    new: str
    message: str


REDRAW_CASES = [
    SpecCase("redraw as text", "redraw = true", 'redraw = "yes"', "redraw must be true or false"),
    SpecCase("redraw as 1", "redraw = true", "redraw = 1", "redraw must be true or false (TOML booleans"),
    SpecCase(
        "redraw of a fixed data set",
        'name = "logistic_known_weights"\ngenerator = { n = 200, random_seed = 1 }',
        'name = "breast_cancer"',
        "redraw = true applies to generated data sets only",
    ),
    SpecCase(
        "redraw with a text seed",
        "random_seed = 1 }",
        'random_seed = "1" }',
        "random_seed",
    ),
]


@pytest.mark.parametrize("case", REDRAW_CASES, ids=[case.name for case in REDRAW_CASES])
def test_bad_redraw_in_a_spec(case: SpecCase, tmp_path, capsys) -> None:
    from tests.bad_inputs.harness import assert_one_line_error, run

    assert case.old in SPEC
    (tmp_path / "spec.toml").write_text(SPEC.replace(case.old, case.new, 1), encoding="utf-8")
    code = run("study", str(tmp_path / "spec.toml"), "--out", str(tmp_path / "out"), "--serial", "--no-progress")
    captured = capsys.readouterr()
    assert code == 2, captured.out + captured.err
    assert_one_line_error(captured.err, case.message)
    errors = [line for line in captured.err.splitlines() if ": error: " in line]
    assert len(errors) == 1 and errors[0].startswith("bayesclass study: error: "), captured.err


def test_redraw_gives_each_repeat_its_own_sample(tmp_path) -> None:
    """With redraw, repeat r is the generator's random_seed + r: other rows, and the same rows when run again."""
    import bayesclass.study as bs
    from bayesclass.inference.studies.runner import cell_data

    (tmp_path / "spec.toml").write_text(SPEC, encoding="utf-8")
    first, second = list(bs.cells(bs.read_spec(tmp_path / "spec.toml")))
    assert first.dataset.load(1).X.tolist() == logistic_known_weights(200, random_seed=2).X.tolist()
    train_0, _ = cell_data(first)
    train_1, _ = cell_data(second)
    assert not np.isin(train_0.X[:, 0], train_1.X[:, 0]).any()  # no row shared: independent samples
    assert cell_data(second)[0].X.tolist() == train_1.X.tolist()
    (tmp_path / "fixed.toml").write_text(SPEC.replace("redraw = true\n", ""), encoding="utf-8")
    fixed = list(bs.cells(bs.read_spec(tmp_path / "fixed.toml")))
    assert fixed[0].key() != first.key()  # redraw is part of the key; without it the keys are the older ones
    assert "redraw" not in fixed[0].dataset.as_dict()


def test_redraw_samples_are_not_stratified() -> None:
    """Simple random samples: the class counts vary from sample to sample (as in the generator), every class kept."""
    y = (np.arange(1400) % 5 == 0).astype(int)  # 20% of class 1
    counts = [int(y[_simple_random_sample(np.arange(1400), y, 20, seed)].sum()) for seed in range(200)]
    assert min(counts) >= 1 and len(set(counts)) >= 5  # stratified, every sample would hold exactly 4
    assert abs(np.mean(counts) - 4) < 0.5
