"""Posterior predictive checks of the features (seed 001 §B.1): inference.posterior_predictive_check."""

from __future__ import annotations

import numpy as np
import pytest

from bayesclass import data
from bayesclass import inference
from bayesclass.inference import SamplerSettings, posterior_predictive_check
from bayesclass.models import GaussianClassConditional, GaussianClassConditionalPrior

CONJUGATE = GaussianClassConditionalPrior(covariance_prior="inverse_wishart")


@pytest.fixture(scope="session")
def gaussian_exact_fit():
    """Exact NIW posterior of data drawn from the model itself (seed 001 generator)."""
    model = GaussianClassConditional(covariance="shared", prior=CONJUGATE)
    training = data.seed001_gaussians(400, random_seed=3)
    return inference.fit(model, training, method="exact", sampler=SamplerSettings(draws=500, chains=2), random_seed=4)


def test_layout_and_class_sizes(gaussian_exact_fit):
    check = posterior_predictive_check(gaussian_exact_fit, n_replicates=120, random_seed=0)
    assert check["replicated_mean"].dims == ("replicate", "class", "feature")
    assert check.sizes == {"replicate": 120, "class": 2, "feature": 2}
    assert check.attrs["source"] == "posterior draws"
    for statistic in inference.PPC_STATISTICS:
        p = check[f"p_value_{statistic}"].values
        assert np.all((p >= 0) & (p <= 1))
    # the observed statistics are the real per-class moments of the training features
    X = gaussian_exact_fit["constant_data"]["X"].values
    y = gaussian_exact_fit["observed_data"]["y"].values
    for k in range(2):
        np.testing.assert_allclose(check["observed_mean"].values[k], X[y == k].mean(axis=0), rtol=1e-12)
        np.testing.assert_allclose(check["observed_sd"].values[k], X[y == k].std(axis=0), rtol=1e-12)


def test_a_well_specified_model_reproduces_its_data(gaussian_exact_fit):
    check = posterior_predictive_check(gaussian_exact_fit, n_replicates=400, random_seed=1)
    for statistic in inference.PPC_STATISTICS:
        p = check[f"p_value_{statistic}"].values
        assert np.all((p > 0.01) & (p < 0.99)), (statistic, p)
    # replicated class means scatter around the posterior mean of class_mean
    posterior_mean = gaussian_exact_fit["posterior"]["class_mean"].mean(("chain", "draw")).values
    replicated = check["replicated_mean"].values
    standard_error = replicated.std(axis=0) / np.sqrt(replicated.shape[0])
    assert np.all(np.abs(replicated.mean(axis=0) - posterior_mean) < 5 * standard_error)


def test_skewed_features_and_unequal_spreads_are_flagged():
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1], 300)
    X = np.column_stack([
        np.exp(rng.standard_normal(600)),                   # log-normal: strongly right-skewed in both classes
        rng.standard_normal(600) * np.where(y == 0, 0.3, 3.0),  # symmetric, sd 0.3 vs 3
    ])  # fmt: skip
    skewed = data.Dataset(name="skewed", X=X, y=y, feature_names=("lognormal", "spread"), class_names=("a", "b"),
                          feature_kinds=("continuous", "continuous"))  # fmt: skip
    fit = inference.fit(GaussianClassConditional(covariance="shared"), skewed, method="mle", random_seed=0)
    check = posterior_predictive_check(fit, n_replicates=200, random_seed=0)
    assert check.attrs["source"] == "mle point estimate"
    assert np.all(check["p_value_skewness"].sel(feature="lognormal").values == 0.0)
    # one shared covariance cannot give class a sd 0.3 and class b sd 3
    assert float(check["p_value_sd"].sel({"class": "a", "feature": "spread"})) == 1.0
    assert float(check["p_value_sd"].sel({"class": "b", "feature": "spread"})) == 0.0
    per_class = inference.fit(GaussianClassConditional(covariance="per-class"), skewed, method="mle", random_seed=0)
    p = posterior_predictive_check(per_class, n_replicates=200, random_seed=0)["p_value_sd"].sel(feature="spread").values
    assert np.all((p > 0.01) & (p < 0.99))


def test_p_values_do_not_depend_on_standardization(iris):
    model = GaussianClassConditional(covariance="per-class")
    raw = inference.fit(model, iris, method="mle", random_seed=0)
    standardized = inference.fit(model, iris, method="mle", standardize=True, random_seed=0)
    first = posterior_predictive_check(raw, n_replicates=100, random_seed=5)
    second = posterior_predictive_check(standardized, n_replicates=100, random_seed=5)
    for statistic in inference.PPC_STATISTICS:
        np.testing.assert_array_equal(first[f"p_value_{statistic}"].values, second[f"p_value_{statistic}"].values)


def test_same_seed_same_replicates_and_bad_arguments(gaussian_exact_fit, iris):
    first = posterior_predictive_check(gaussian_exact_fit, n_replicates=30, random_seed=9)
    second = posterior_predictive_check(gaussian_exact_fit, n_replicates=30, random_seed=9)
    np.testing.assert_array_equal(first["replicated_sd"].values, second["replicated_sd"].values)
    with pytest.raises(ValueError, match="n_replicates must be a positive integer"):
        posterior_predictive_check(gaussian_exact_fit, n_replicates=0)
    logistic = inference.fit("logistic", iris, method="map", random_seed=0)
    with pytest.raises(ValueError, match="cannot generate features"):
        posterior_predictive_check(logistic)


def test_a_map_fit_replicates_from_the_map(iris):
    fit = inference.fit(GaussianClassConditional(), iris, method="map", random_seed=0)
    check = posterior_predictive_check(fit, n_replicates=400, random_seed=0)
    assert check.attrs["source"] == "map point estimate"
    estimate = fit["point_estimate_map"]["class_mean"].values
    replicated = check["replicated_mean"].values
    standard_error = replicated.std(axis=0) / np.sqrt(replicated.shape[0])
    assert np.all(np.abs(replicated.mean(axis=0) - estimate) < 5 * standard_error)
