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


def _posterior(log_density, gradient, hessian, initial):
    """A :class:`TransformedPosterior` of a closed-form density (no model, nothing to compile)."""
    from bayesclass.models._transformed_laplace import TransformedPosterior

    return TransformedPosterior(
        value_names=("z",),
        value_shapes=((len(initial),),),
        initial=np.asarray(initial, dtype=float),
        value_and_gradient=lambda z: [np.asarray(log_density(z)), np.asarray(gradient(z))],
        hessian=lambda z: np.asarray(hessian(z)),
        parameters=lambda rows: [rows],
        parameter_names=("z",),
        parameter_dims=(("z_dim_0",),),
    )


def test_the_mode_search_refuses_a_density_without_a_mode_and_finds_a_proper_ones():
    """The default run's check of the refusal above (the real families' rows are slow: each runs the mode search
    of a compiled model to its step limit): ``log p(z) = -z0 - z1^2 / 2`` grows without bound as ``z0 -> -inf``
    (as a class's log standard deviation of a constant feature does), so there is no mode and the search says
    so; the same density with ``-z0^2 / 2`` in place of ``-z0`` has its mode at 0, which the search returns."""
    from bayesclass.models._transformed_laplace import _mode

    improper = _posterior(
        lambda z: -z[0] - z[1] ** 2 / 2, lambda z: np.array([-1.0, -z[1]]), lambda z: np.diag([0.0, -1.0]), [0.5, 1.0]
    )
    with pytest.raises(ValueError, match="the Laplace approximation found no mode.*fit with method='nuts' instead"):
        _mode(improper)
    proper = _posterior(lambda z: -(z @ z) / 2, lambda z: -z, lambda z: -np.eye(2), [0.5, 1.0])
    np.testing.assert_allclose(_mode(proper), [0.0, 0.0], atol=1e-8)


@pytest.mark.slow  # runs the mode search of the compiled gcc model to its step limit (about 90 s on 2 cores)
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
