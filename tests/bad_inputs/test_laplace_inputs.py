"""Bad input to ``--method laplace``: families without a Laplace approximation, settings the method ignores.

Each row of :data:`LAPLACE_CLI_CASES` runs ``bayesclass fit`` in-process: exit code 2 and a one-line error naming
the flag and the fix, never a traceback. :data:`LAPLACE_API_CASES` are the ``fit(method="laplace")`` calls the
Python API refuses with a ``ValueError``.
"""

from __future__ import annotations

import pytest

import bayesclass as bc
from bayesclass.data import seed001_gaussians
from bayesclass.models import LogisticRegression, NaiveBayes
from tests.bad_inputs.harness import assert_one_line_error, run

#: (options after ``fit --data seed001_gaussians --rows 40``, exit code, message fragment)
LAPLACE_CLI_CASES = [
    (("--model", "naive_bayes", "--tune", "100"), 2, "--tune does nothing with --method laplace"),
    (("--model", "gcc", "--backend", "nutpie"), 2, "--method laplace is not NUTS: drop the backend"),
    (("--model", "logistic", "--tune", "100"), 2, "--tune does nothing with --method laplace"),
    (("--model", "logistic", "--backend", "nutpie"), 2, "--method laplace is not NUTS: drop the backend"),
]

#: (model, sampler settings, message fragment) that ``fit(..., method="laplace")`` refuses
LAPLACE_API_CASES = [
    (NaiveBayes(), bc.SamplerSettings(backend="nutpie"), "method='laplace' is not NUTS"),
    (LogisticRegression(), bc.SamplerSettings(backend="blackjax"), "method='laplace' is not NUTS"),
]


@pytest.mark.parametrize(("options", "code", "fragment"), LAPLACE_CLI_CASES)
def test_cli_refuses(tmp_path, capsys, options, code, fragment):
    out = tmp_path / "run.nc"
    argv = ("fit", "--data", "seed001_gaussians", "--rows", "40", "--method", "laplace", *options, "--out", str(out))
    assert run(*argv) == code
    assert_one_line_error(capsys.readouterr().err, fragment)
    assert not out.exists()


@pytest.mark.parametrize(("model", "settings", "fragment"), LAPLACE_API_CASES)
def test_api_refuses(model, settings, fragment):
    with pytest.raises(ValueError, match=fragment.replace("(", r"\(")):
        bc.fit(model, seed001_gaussians(40), method="laplace", sampler=settings)
