"""The Bayesian-vs-point-estimate comparison table (reports.comparison)."""

from __future__ import annotations

import numpy as np
import pytest

from bayesclass import data, format_comparison, inference
from bayesclass.inference import SamplerSettings
from bayesclass.inference.evaluation.parameters import parameter_comparison
from bayesclass.models import GaussianClassConditional, GaussianClassConditionalPrior

CONJUGATE = GaussianClassConditionalPrior(covariance_prior="inverse_wishart")


@pytest.fixture(scope="module")
def lda_exact():
    training = data.seed001_gaussians(300, random_seed=7)
    model = GaussianClassConditional(covariance="shared", prior=CONJUGATE)
    return model, inference.fit(
        model, training, method="exact", sampler=SamplerSettings(draws=400, chains=2), random_seed=1
    )


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


# -- families with summary_parameter_names: the latent GP shows its hyperparameters only -----------------


@pytest.fixture(scope="module")
def gp_exact_map():
    from bayesclass.models import LatentGaussianProcess

    model = LatentGaussianProcess()
    assert model.summary_parameter_names == ("lengthscale", "amplitude", "constant")
    with one_blas_thread():
        return inference.fit(model, data.seed004_gp(60, random_seed=1), method="map", standardize=True, random_seed=0)


def one_blas_thread():
    """Small Laplace fits: a multithreaded OpenBLAS only spins on them (10x slower on a busy machine)."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1, user_api="blas")


def test_gp_rows_are_the_hyperparameters_only(gp_exact_map):
    rows = parameter_comparison(gp_exact_map)
    assert [row["parameter"] for row in rows] == ["lengthscale[x]", "amplitude", "constant"]
    estimate = gp_exact_map["point_estimate_map"]
    assert {"latent", "laplace_weight"} <= set(estimate.data_vars)  # stored, just not shown
    assert rows[0]["map"] == pytest.approx(float(estimate["lengthscale"].values[0]), rel=1e-12)
    assert rows[1]["map"] == pytest.approx(float(estimate["amplitude"]), rel=1e-12)
    assert rows[2]["map"] == pytest.approx(float(estimate["constant"]), rel=1e-12)
    for row in rows:  # no posterior: the posterior columns are absent
        assert row["mean"] is row["sd"] is row["low"] is row["high"] is None
    text = format_comparison(gp_exact_map, {"held-in": data.seed004_gp(60, random_seed=1)})
    assert "lengthscale[x]" in text and "amplitude" in text
    assert "latent[" not in text and "laplace_weight" not in text and "more parameters" not in text
    assert "MAP plug-in" in text


def test_gp_hsgp_rows_leave_out_the_basis_weights():
    from bayesclass.models import LatentGaussianProcess

    training = data.seed004_gp(80, random_seed=2)
    with one_blas_thread():
        result = inference.fit(
            LatentGaussianProcess(approximation="hsgp", hsgp_basis=8), training, method="map", standardize=True
        )
    assert {"basis_weight", "laplace_weight_covariance"} <= set(result["point_estimate_map"].data_vars)
    assert [row["parameter"] for row in parameter_comparison(result)] == ["lengthscale[x]", "amplitude", "constant"]


def test_gp_rows_with_two_inputs_name_each_lengthscale():
    from bayesclass.models import LatentGaussianProcess

    training = data.load("breast_cancer").select_features("mean radius,mean texture")
    with one_blas_thread():
        result = inference.fit(
            LatentGaussianProcess(approximation="hsgp", hsgp_basis=5), training, method="map", standardize=True
        )
    names = [row["parameter"] for row in parameter_comparison(result)]
    assert names == ["lengthscale[mean radius]", "lengthscale[mean texture]", "amplitude", "constant"]


def test_families_without_a_summary_list_show_every_element(lda_exact, map_gaussians):
    # gcc (shared covariance): every element of every parameter, then the derived linear discriminants
    model, result = lda_exact
    assert model.summary_parameter_names is None
    posterior = result["posterior"].to_dataset()
    derived = model.derived_quantities(posterior)
    expected = sum(
        int(np.prod([size for dim, size in variable.sizes.items() if dim not in ("chain", "draw")]))
        for variable in [*posterior.data_vars.values(), *derived.data_vars.values()]
    )
    names = [row["parameter"] for row in parameter_comparison(result)]
    assert len(names) == expected == len(set(names))
    assert names == [
        "class_prior[C1]",
        "class_prior[C2]",
        "class_mean[C1, x1]",
        "class_mean[C1, x2]",
        "class_mean[C2, x1]",
        "class_mean[C2, x2]",
        "covariance[x1, x1]",
        "covariance[x1, x2]",
        "covariance[x2, x1]",
        "covariance[x2, x2]",
        "discriminant_weight[C1, x1]",
        "discriminant_weight[C1, x2]",
        "discriminant_weight[C2, x1]",
        "discriminant_weight[C2, x2]",
        "discriminant_bias[C1]",
        "discriminant_bias[C2]",
    ]
    # logistic: the intercept and each weight
    names = [row["parameter"] for row in parameter_comparison(map_gaussians)]
    assert names == ["intercept", "weights[x1]", "weights[x2]"]
