"""Posterior predictive checks of the features (seed 001 §B.1): inference.posterior_predictive_check."""

from __future__ import annotations

import re

import numpy as np
import pytest

from bayesclass import data, inference
from bayesclass.inference import SamplerSettings, posterior_predictive_check
from bayesclass.inference.engines.fit import model_inputs
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
    # the observed statistics are the real per-class moments of the training features, in the units the model was
    # fitted in (standardised by default)
    X = model_inputs(gaussian_exact_fit, gaussian_exact_fit["constant_data"]["X"].values)
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


def test_naive_bayes_check_on_the_transport_table(transport):
    """Binary and continuous features of seed 003's table: the observed statistics are the table's own, and a
    point estimate's replicates scatter around that estimate (posterior predictive = plug-in replicates)."""
    fit = inference.fit("naive_bayes", transport, method="posterior_mean", random_seed=0)
    check = posterior_predictive_check(fit, n_replicates=4000, random_seed=0)
    assert check.attrs["source"] == "posterior_mean point estimate"
    assert list(check["feature_kind"].values) == ["continuous", "binary", "binary"]
    assert {"p_value_mean", "p_value_sd", "p_value_skewness"} <= set(check.data_vars)
    assert "p_value_dispersion" not in check and "p_value_level_frequency" not in check
    inputs = model_inputs(fit, transport.X)  # the units the model was fitted in (its continuous column standardised)
    for k in range(transport.n_classes):
        rows = inputs[transport.y == k]
        np.testing.assert_array_equal(check["observed_mean"].values[k], rows.mean(axis=0))
    assert np.isnan(check["p_value_sd"].sel(feature=["Raining", "Flat Tire"]).values).all()
    # the mean frequency of 1 over replicates is the estimated P(feature = 1 | class)
    estimate = fit["point_estimate_posterior_mean"]["binary_proba"].transpose("class", "binary_feature")
    replicated = check["replicated_mean"].sel(feature=["Raining", "Flat Tire"]).values  # (replicate, class, feature)
    counts = transport.class_counts[:, np.newaxis]
    standard_error = np.sqrt(estimate.values * (1 - estimate.values) / counts / replicated.shape[0])
    np.testing.assert_array_less(np.abs(replicated.mean(axis=0) - estimate.values), 5 * standard_error)
    # each replicated frequency is a count of ones over the class's real number of rows
    np.testing.assert_allclose(replicated * counts, np.round(replicated * counts), atol=1e-12)


def test_naive_bayes_check_on_binarised_digits_is_not_flagged(digits_binary):
    """640 pixel frequencies (64 pixels x 10 digits) under the exact posterior: a Bernoulli naive Bayes
    reproduces the frequencies it was fitted to, so none is extreme."""
    fit = inference.fit("naive_bayes", digits_binary, method="exact", random_seed=0)
    check = posterior_predictive_check(fit, n_replicates=100, random_seed=0)
    assert list(check.data_vars) == ["feature_kind", "observed_mean", "replicated_mean", "p_value_mean"]
    assert check["replicated_mean"].shape == (100, 10, 64)
    onehot = np.eye(10)[digits_binary.y]
    np.testing.assert_array_equal(
        check["observed_mean"].values, (onehot.T @ digits_binary.X) / digits_binary.class_counts[:, np.newaxis]
    )
    p = check["p_value_mean"].values
    assert np.all((p > 0.005) & (p < 0.995)), np.sort(p.ravel())[[0, -1]]


def test_naive_bayes_check_flags_saturating_pixel_counts():
    """The digits' pixel intensities (counts 0..16) as a multinomial bag of pixels: the mean counts are reproduced,
    but the variance-to-mean ratios are not (intensities saturate at 16 and vary from image to image far more, or
    less, than a multinomial with each image's total allows)."""
    digits = data.load("digits")
    assert set(digits.feature_kinds) == {"count"}
    fit = inference.fit("naive_bayes", digits, method="exact", random_seed=0)
    check = posterior_predictive_check(fit, n_replicates=100, random_seed=0)
    mean = check["p_value_mean"].values
    assert np.all((mean > 0.005) & (mean < 0.995))
    dispersion = check["p_value_dispersion"].values
    defined = ~np.isnan(dispersion)  # a pixel that is 0 in every image of a digit has no ratio
    np.testing.assert_array_equal(defined, check["observed_mean"].values > 0)
    flagged = (dispersion[defined] < 0.025) | (dispersion[defined] > 0.975)
    assert flagged.mean() > 0.75, flagged.mean()


def test_naive_bayes_check_flags_skewed_continuous_features():
    rng = np.random.default_rng(2)
    y = np.repeat([0, 1], 200)
    skewed = data.Dataset(
        name="skewed",
        X=np.column_stack([np.exp(rng.standard_normal(400) + y), rng.random(400) < 0.5]).astype(float),
        y=y,
        feature_names=("income", "owner"),
        class_names=("a", "b"),
        feature_kinds=("continuous", "binary"),
    )
    fit = inference.fit("naive_bayes", skewed, method="exact", random_seed=0)
    check = posterior_predictive_check(fit, n_replicates=200, random_seed=0)
    np.testing.assert_array_equal(check["p_value_skewness"].sel(feature="income").values, 0.0)
    sd = check["p_value_sd"].sel(feature="income").values  # the Gaussian's variance is fitted: not flagged
    assert np.all((sd > 0.01) & (sd < 0.99))


def test_count_statistics_of_a_permuted_replicate_tie_exactly():
    """A replicate that permutes each class's rows has exactly the observed mean and dispersion (a tie the
    mid-p value counts half), whatever the summation order of the batched and the single computation."""
    from bayesclass.inference.criticism.predictive_checks import _class_statistics

    rng = np.random.default_rng(0)
    codes = rng.integers(0, 3, 997)
    counts = rng.poisson(rng.gamma(0.5, 7.0, (997, 40))).astype(float)
    order = np.argsort(codes, kind="stable")
    permuted = np.empty((25, *counts.shape))
    for replicate in range(25):  # shuffle the rows within each class
        shuffled = order[np.argsort(codes[order] + rng.random(order.size), kind="stable")]
        permuted[replicate, order] = counts[shuffled]
    observed = _class_statistics(counts, codes, 3, ("mean", "dispersion"))
    replicated = _class_statistics(permuted, codes, 3, ("mean", "dispersion"))
    for statistic in ("mean", "dispersion"):
        np.testing.assert_array_equal(replicated[statistic], np.broadcast_to(observed[statistic], (25, 3, 40)))


def test_bayesclass_check_summarises_long_tables(tmp_path, capsys):
    """``bayesclass check`` on naive Bayes: one summary line per statistic naming its feature kinds; a table of
    hundreds of cells (10 digits x 64 pixels) lists only its flagged cells, most extreme first."""
    from bayesclass.cli import main

    run_file = tmp_path / "digits.nc"
    inference.save(inference.fit("naive_bayes", data.load("digits"), method="exact", random_seed=0), run_file)
    assert main(["check", "--run", str(run_file), "--replicates", "50"]) == 0
    lines = capsys.readouterr().out.splitlines()
    pattern = re.compile(r"(\w+) \((\w+)\): (\d+) class x feature statistics, (\d+) flagged")
    summary = [match.groups() for match in map(pattern.fullmatch, lines) if match]
    assert [(statistic, kind, cells) for statistic, kind, cells, _ in summary] == [
        ("mean", "count", "640"),
        ("dispersion", "count", "517"),  # a pixel that is 0 in every image of a digit has no ratio
    ]
    flagged = sum(int(count) for *_, count in summary)
    assert flagged > 300 and lines[-1] == f"{flagged} of 1157 statistics flagged"
    rows = [line for line in lines if line.endswith("*")]
    assert len(rows) == 60  # the 60 most extreme flagged cells, not 1157 rows
    p_values = np.array([float(row.split()[-1].rstrip("*")) for row in rows])
    extremeness = np.minimum(p_values, 1 - p_values)
    assert np.all(np.diff(extremeness) >= 0)
