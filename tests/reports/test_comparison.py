"""The Bayesian-vs-point-estimate comparison table (reports.comparison)."""

from __future__ import annotations

import numpy as np
import pytest

import data
import inference
from inference import SamplerSettings
from models import GaussianClassConditional, GaussianClassConditionalPrior
from reports.comparison import format_comparison, parameter_comparison

CONJUGATE = GaussianClassConditionalPrior(covariance_prior="inverse_wishart")


@pytest.fixture(scope="module")
def lda_exact():
    training = data.seed001_gaussians(300, random_seed=7)
    model = GaussianClassConditional(covariance="shared", prior=CONJUGATE)
    return model, inference.fit(model, training, method="exact", sampler=SamplerSettings(draws=400, chains=2), random_seed=1)


def test_shared_gaussian_rows_include_the_linear_discriminants_with_bands(lda_exact):
    model, result = lda_exact
    rows = {row["parameter"]: row for row in parameter_comparison(result)}
    per_draw = model.linear_discriminant(result["posterior"].to_dataset())
    for k, name in enumerate(("C1", "C2")):
        for j, feature in enumerate(("x1", "x2")):
            row = rows[f"discriminant_weight[{name}, {feature}]"]
            draws = per_draw["weight"].values[..., k, j]
            assert row["mean"] == pytest.approx(draws.mean(), rel=1e-12)
            assert row["low"] < row["mean"] < row["high"]
        mle = model.linear_discriminant(result["point_estimate_mle"].to_dataset())
        assert rows[f"discriminant_bias[{name}]"]["mle"] == pytest.approx(float(mle["bias"].values[k]), rel=1e-12)
    # the Student-t predictive is not a Gaussian parameter set: no discriminant, shown as absent
    assert rows["discriminant_bias[C1]"]["posterior_predictive"] is None
    text = format_comparison(result)
    assert "discriminant_weight[C1, x1]" in text and "exact pred" in text  # the column label, cut to 10 characters


def test_per_class_gaussian_has_no_linear_discriminant_rows(iris):
    result = inference.fit(GaussianClassConditional(covariance="per-class"), iris, method="mle", random_seed=0)
    names = [row["parameter"] for row in parameter_comparison(result)]
    assert "covariance[setosa, sepal length (cm), sepal length (cm)]" in names
    assert not any(name.startswith("discriminant") for name in names)
    assert np.isfinite([row["mle"] for row in parameter_comparison(result)]).all()
