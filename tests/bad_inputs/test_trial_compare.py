"""Inputs found by trying ``compare --model all`` as an analyst would, from a fresh clone (issue 28).

Each row of :data:`TRIAL_COMPARE_CASES` runs ``bayesclass compare`` on a legal input that the command handled
silently or misleadingly, and expects its exit code and a fragment of its printed text (stdout) that says what
was done; no traceback on stderr.
"""

from __future__ import annotations

import contextlib
import io

import pytest

from tests.bad_inputs.harness import run

SHORT = ("--draws", "50", "--tune", "50", "--chains", "2", "--no-progress", "--seed", "0", "--quiet")

#: (arguments after ``compare``, exit code, fragment of stdout)
TRIAL_COMPARE_CASES = [
    # two-class baselines on three classes were dropped without a word, though "every baseline is scored"
    (
        ("--model", "logistic,naive_bayes", "--data", "penguins", "--missing", "drop", "--baselines", "fisher,knn"),
        0,
        "baselines not scored: fisher (3 classes, more than they classify)",
    ),
    (
        ("--model", "logistic,naive_bayes", "--data", "penguins", "--missing", "drop", "--baselines", "perceptron"),
        0,
        "baselines not scored: perceptron (3 classes, more than they classify)",
    ),
]


@pytest.mark.parametrize(
    ("argv", "code", "fragment"), TRIAL_COMPARE_CASES, ids=[" ".join(row[0]) for row in TRIAL_COMPARE_CASES]
)
def test_compare_says_what_it_left_out(argv, code, fragment):
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        assert run("compare", *argv, *SHORT) == code, stderr.getvalue()
    assert fragment in stdout.getvalue()
    assert "Traceback" not in stderr.getvalue()
