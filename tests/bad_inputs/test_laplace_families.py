"""Bad input to ``method="laplace"`` for the constrained families (naive Bayes, gcc).

The Laplace approximation in the unconstrained space needs a mode of the posterior density there. Where the
posterior is improper along a direction (a gcc feature constant within a class under the LKJ prior: the density
grows without bound as that class's standard deviation goes to 0), there is none: the fit fails with a clear
``ValueError`` naming the cause and the fix, and the CLI with a one-line ``fit
failed`` message (exit 1), never a traceback or draws around a point that is not a mode.
"""

from __future__ import annotations

import numpy as np
import pytest

import bayesclass as bc
from bayesclass.data import Dataset
from bayesclass.models import GaussianClassConditional
from tests.bad_inputs.harness import assert_one_line_error, run


def _constant_within_class(covariance: str) -> Dataset:
    """Two classes of 10 rows; feature ``b`` constant within each class (not over all rows)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 2))
    y = np.repeat([0, 1], 10)
    X[:, 1] = np.where(y == 0, 1.5, -0.5) if covariance == "shared" else np.where(y == 0, 1.5, X[:, 1])
    return Dataset(
        name="constant_b",
        X=X,
        y=y,
        feature_names=("a", "b"),
        class_names=("u", "v"),
        feature_kinds=("continuous", "continuous"),
    )


#: (family, data, exception type, message fragment) that ``fit(..., method="laplace")`` refuses
LAPLACE_FAMILY_API_CASES = [
    (
        GaussianClassConditional(covariance="per-class"),
        _constant_within_class("per-class"),
        ValueError,
        "the Laplace approximation found no mode",
    ),
    (
        GaussianClassConditional(covariance="shared"),
        _constant_within_class("shared"),
        ValueError,
        "the Laplace approximation found no mode",
    ),
]

#: (CSV rows of a table with columns a, b, label; exit code, message fragment) of ``fit --method laplace``
LAPLACE_FAMILY_CLI_CASES = [
    (
        ("--model", "gcc", "--covariance", "per-class"),
        1,
        "the Laplace approximation found no mode",
    ),
]


@pytest.mark.slow  # each row runs the mode search to its step limit (about a minute on 2 cores)
@pytest.mark.parametrize(("family", "data", "error", "fragment"), LAPLACE_FAMILY_API_CASES)
def test_api_refuses(family, data, error, fragment):
    with pytest.raises(error, match=fragment):
        bc.fit(family, data, method="laplace", sampler=bc.SamplerSettings(draws=50, chains=1))


@pytest.mark.parametrize(("options", "code", "fragment"), LAPLACE_FAMILY_CLI_CASES)
def test_cli_refuses(tmp_path, capsys, options, code, fragment):
    table = tmp_path / "constant.csv"
    data = _constant_within_class("per-class")
    rows = [f"{a:.17g},{b:.17g},{data.class_names[c]}" for (a, b), c in zip(data.X, data.y, strict=True)]
    table.write_text("a,b,label\n" + "\n".join(rows) + "\n", encoding="utf-8")
    out = tmp_path / "run.nc"
    argv = ("fit", "--data", str(table), "--target", "label", "--method", "laplace", *options, "--out", str(out))
    assert run(*argv) == code
    assert_one_line_error(capsys.readouterr().err, fragment)
    assert not out.exists()
