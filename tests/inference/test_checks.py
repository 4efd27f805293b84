"""Posterior predictive checks of the features (seed 001 §B.1): inference.posterior_predictive_check."""

from __future__ import annotations

import numpy as np
import pytest

from bayesclass import data, inference
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
    lognormal = np.exp(rng.standard_normal(600))  # strongly right-skewed in both classes
    spread = rng.standard_normal(600) * np.where(y == 0, 0.3, 3.0)  # symmetric, sd 0.3 vs 3
    skewed = data.Dataset(
        name="skewed",
        X=np.column_stack([lognormal, spread]),
        y=y,
        feature_names=("lognormal", "spread"),
        class_names=("a", "b"),
        feature_kinds=("continuous", "continuous"),
    )
    fit = inference.fit(GaussianClassConditional(covariance="shared"), skewed, method="mle", random_seed=0)
    check = posterior_predictive_check(fit, n_replicates=200, random_seed=0)
    assert check.attrs["source"] == "mle point estimate"
    assert np.all(check["p_value_skewness"].sel(feature="lognormal").values == 0.0)
    # one shared covariance cannot give class a sd 0.3 and class b sd 3
    assert float(check["p_value_sd"].sel({"class": "a", "feature": "spread"})) == 1.0
    assert float(check["p_value_sd"].sel({"class": "b", "feature": "spread"})) == 0.0
    per_class = inference.fit(GaussianClassConditional(covariance="per-class"), skewed, method="mle", random_seed=0)
    p = (
        posterior_predictive_check(per_class, n_replicates=200, random_seed=0)["p_value_sd"]
        .sel(feature="spread")
        .values
    )
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


# -- naive Bayes: statistics that fit each feature kind ------------------------------------------------------


def _naive_bayes_data(n: int, *, seed: int, overdispersed: bool = False) -> data.Dataset:
    """Binary, categorical, count and continuous features drawn from a naive Bayes model itself, or (with
    ``overdispersed``) with word proportions that vary from row to row, which a multinomial cannot replicate."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    totals = rng.integers(5, 15, n)
    word_share = np.where(y == 1, 0.7, 0.3)
    if overdispersed:
        word_share = rng.beta(0.3, 0.3, n)  # each row its own share: far more spread than a multinomial
    first = rng.binomial(totals, word_share)
    X = np.column_stack(
        [
            rng.random(n) < np.where(y == 1, 0.8, 0.3),
            rng.choice(3, n, p=[0.6, 0.3, 0.1]),
            first,
            totals - first,
            rng.normal(np.where(y == 1, 2.0, 0.0), 1.0),
        ]
    ).astype(float)
    return data.Dataset(
        name="nb",
        X=X,
        y=y,
        feature_names=("flag", "colour", "word_a", "word_b", "size"),
        class_names=("no", "yes"),
        feature_kinds=("binary", "categorical", "count", "count", "continuous"),
    )


@pytest.fixture(scope="module")
def naive_bayes_check():
    fit = inference.fit("naive_bayes", _naive_bayes_data(400, seed=0), method="exact", random_seed=0)
    return posterior_predictive_check(fit, n_replicates=300, random_seed=0)


def test_naive_bayes_check_has_a_statistic_for_every_kind(naive_bayes_check):
    check = naive_bayes_check
    assert list(check["feature_kind"].values) == ["binary", "categorical", "count", "count", "continuous"]
    for statistics in inference.PPC_STATISTICS_BY_KIND.values():
        for statistic in statistics:
            assert f"p_value_{statistic}" in check
    # each statistic is defined exactly on the features of the kinds it fits (NaN elsewhere)
    defined = {name: ~np.isnan(check[f"observed_{name}"].values[0]) for name in ("mean", "sd", "dispersion")}
    np.testing.assert_array_equal(defined["mean"], [True, False, True, True, True])
    np.testing.assert_array_equal(defined["sd"], [False, False, False, False, True])
    np.testing.assert_array_equal(defined["dispersion"], [False, False, True, True, False])
    assert check["p_value_level_frequency"].dims == ("class", "category_level")
    np.testing.assert_allclose(check["observed_level_frequency"].sum("category_level"), 1.0)
    np.testing.assert_allclose(check["replicated_level_frequency"].sum("category_level"), 1.0)


def test_naive_bayes_fitted_to_its_own_kind_of_data_is_not_flagged(naive_bayes_check):
    p = np.concatenate(
        [naive_bayes_check[name].values.ravel() for name in naive_bayes_check if name.startswith("p_value_")]
    )
    p = p[~np.isnan(p)]
    assert p.size == 2 * (1 + 2 * 2 + 3) + 2 * 3  # mean x4, dispersion x2, sd/skewness x1 per class; 3 levels per class
    assert np.all((p > 0.005) & (p < 0.995)), p


def test_overdispersed_counts_are_flagged():
    fit = inference.fit(
        "naive_bayes", _naive_bayes_data(400, seed=1, overdispersed=True), method="exact", random_seed=0
    )
    check = posterior_predictive_check(fit, n_replicates=300, random_seed=0)
    dispersion = check["p_value_dispersion"].sel(feature=["word_a", "word_b"]).values
    assert np.all(dispersion < 0.025), dispersion  # observed variance-to-mean far above every replicate's
