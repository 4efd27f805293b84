"""Bad input to ``bayesclass compare --model all|LIST --report PAGE`` and to the comparison page's renderer (issue 28).

Each row of :data:`COMPARISON_PAGE_CLI_CASES` runs the command and expects exit code 2 and a fragment of its one-line
error, found before any fit (a page that cannot be written is refused before the minutes of fitting, not after);
each row of :data:`COMPARISON_PAGE_API_CASES` calls the renderer or its figure and expects the exception type and a
fragment naming the argument.
"""

from __future__ import annotations

import math
import sys

import pytest

from bayesclass.reports.figures.comparison import elpd_difference_plot
from bayesclass.reports.model_comparison_page import render_model_comparison
from tests.bad_inputs.harness import assert_one_line_error, run

#: (the --report argument, fragment of stderr); ``{dir}`` is a fresh folder holding a file ``f.txt`` and a folder
#: ``d.html``
COMPARISON_PAGE_CLI_CASES = [
    ("{dir}/m.txt", "--report '{dir}/m.txt' must end in .html"),
    ("{dir}/d.html", "is a directory; give the name of a file to write"),
    ("{dir}/no/such/m.html", "--report directory '{dir}/no/such' does not exist; create it first"),
    ("{dir}/f.txt/m.html", "'{dir}/f.txt' is a file, not a directory"),
    ("", "--report '.' must end in .html"),
    pytest.param(
        "/proc/m.html",
        "--report '/proc/m.html': cannot write in '/proc'",
        marks=pytest.mark.skipif(sys.platform != "linux", reason="/proc is Linux's"),
    ),
]


@pytest.mark.parametrize(("report", "fragment"), COMPARISON_PAGE_CLI_CASES)
def test_a_page_that_cannot_be_written_is_refused_before_any_fit(tmp_path, capsys, monkeypatch, report, fragment):
    (tmp_path / "f.txt").write_text("not a folder")
    (tmp_path / "d.html").mkdir()
    import bayesclass.inference.evaluation.model_comparison as model_comparison

    def no_fit(*args, **kwargs):
        raise AssertionError("compare_models ran: the page should be refused before any fit")

    monkeypatch.setattr(model_comparison, "compare_models", no_fit)
    argv = ("compare", "--model", "logistic,naive_bayes", "--data", "iris", "--no-progress")
    assert run(*argv, "--report", report.format(dir=tmp_path)) == 2
    error = capsys.readouterr().err
    assert_one_line_error(error, fragment.format(dir=tmp_path))
    assert error.strip().count("\n") == 0, error
    assert sorted(path.name for path in tmp_path.iterdir()) == ["d.html", "f.txt"]  # nothing written, no temp left


#: (callable, arguments, keyword arguments, exception type, fragment of its message)
COMPARISON_PAGE_API_CASES = [
    (render_model_comparison, (object(),), {}, TypeError, "comparison must be a ModelComparison"),
    (render_model_comparison, (None,), {}, TypeError, "got NoneType"),
    (elpd_difference_plot, ({},), {}, ValueError, "differences must be a non-empty mapping"),
    (elpd_difference_plot, ({"a": 1.0},), {}, ValueError, "differences['a'] must be an (elpd_diff, dse) pair"),
    (elpd_difference_plot, ({"a": (math.nan, 1.0)},), {}, ValueError, "finite elpd_diff and dse >= 0"),
    (elpd_difference_plot, ({"a": (0.0, -1.0)},), {}, ValueError, "finite elpd_diff and dse >= 0"),
    (elpd_difference_plot, ({"a": (0.0, 0.0)},), {"multiple": 0}, ValueError, "multiple must be a positive number"),
    (elpd_difference_plot, ({"a": (0.0, 0.0)},), {"multiple": True}, ValueError, "multiple must be a positive"),
]


@pytest.mark.parametrize(
    ("function", "args", "kwargs", "error", "fragment"),
    COMPARISON_PAGE_API_CASES,
    ids=[f"{row[0].__name__}-{index}" for index, row in enumerate(COMPARISON_PAGE_API_CASES)],
)
def test_the_renderer_names_the_bad_argument(function, args, kwargs, error, fragment):
    with pytest.raises(error) as raised:
        function(*args, **kwargs)
    assert fragment in str(raised.value)
