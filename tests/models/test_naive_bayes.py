"""Tests of models.naive_bayes: the seed 003 transport tables, the closed forms against hand
formulas and scikit-learn, the sufficient-statistic PyMC model against a per-observation one,
NUTS against the exact conjugate posterior, prediction in the log domain, and bad input."""

from __future__ import annotations

import dataclasses
import doctest
import json
import math
import warnings
from importlib import resources
from pathlib import Path

import arviz_stats as azs
import numpy as np
import pandas as pd
import pymc as pm
import pytensor.tensor as pt
import pytest
import scipy.special
import scipy.stats
import xarray as xr
from pytensor.compile.mode import Mode
from sklearn.naive_bayes import BernoulliNB, GaussianNB, MultinomialNB

import bayesclass.models.naive_bayes as naive_bayes_module
from bayesclass import data, inference
from bayesclass.data import Dataset
from bayesclass.inference import SamplerSettings
from bayesclass.inference.engines.methods import methods_of
from bayesclass.models import (
    LogisticRegression,
    NaiveBayes,
    NaiveBayesPrior,
    NoEstimateError,
    get_model,
    model_from_dict,
)

#: PyTensor functions evaluated a handful of times: the Python linker (no C compilation) with the
#: fast_compile rewrites. (With optimizer="fast_run" the Python linker's gradients of the log-odds
#: transformed Beta differ from the C linker's by ~1e-7, which would hide a real difference of that size.)
FAST = {"mode": Mode(linker="py", optimizer="fast_compile")}
NUTS_SEED = 20240611
TRANSPORT_ORDER = ["walk", "bike", "bus", "car"]  # the row order of the seed 003 tables
#: hyperparameters away from every default (and from 1), for the checks that must see each one used
ODD_PRIOR = NaiveBayesPrior(
    class_concentration=1.7,
    binary_alpha=2.5,
    binary_beta=1.3,
    category_concentration=1.4,
    count_concentration=0.6,
    mean_strength=0.8,
    variance_alpha=2.5,
    variance_beta=0.4,
    mean_center=3.0,
    autoscale=False,
)


# --------------------------------------------------------------------------- data and fits


def mixed_dataset(n_per_class: int = 4, seed: int = 7) -> Dataset:
    """Every feature kind, interleaved: counts w1/w2, categorical colour (3 named levels) and size
    (2 unnamed levels), continuous height, binary rain; 3 classes, all present."""
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(3), n_per_class)
    n = y.size
    columns = {
        "w1": rng.poisson(1.0 + 2.0 * y),
        "colour": np.r_[[0, 1, 2], rng.integers(0, 3, n - 3)],
        "height": rng.normal(10.0 + y, 1.0),
        "rain": np.r_[[0, 1], rng.integers(0, 2, n - 2)],
        "size": np.r_[[0, 1], rng.integers(0, 2, n - 2)],
        "w2": 1 + rng.poisson(3.0, n),  # every row has counts
    }
    return Dataset(
        name="mixed",
        X=np.column_stack(list(columns.values())).astype(float),
        y=y,
        feature_names=tuple(columns),
        class_names=("low", "mid", "high"),
        feature_kinds=("count", "categorical", "continuous", "binary", "categorical", "count"),
        category_names={"colour": ("red", "green", "blue")},
    )


@pytest.fixture(scope="module")
def mixed() -> Dataset:
    return mixed_dataset()


@pytest.fixture(scope="module")
def walk_constant(transport) -> Dataset:
    """The transport table with both walks 1 mile long: Distance has variance 0 within 'walk'.
    Same names and kinds as transport, so a NUTS fit reuses transport's compiled model."""
    X = transport.X.copy()
    X[transport.y == transport.class_names.index("walk"), 0] = 1.0
    return dataclasses.replace(transport, X=X)


#: the transport fits are in the data's units (not the default standardisation): the tests compare them with closed
#: forms computed on the raw rows
RAW_UNITS = False


@pytest.fixture(scope="module")
def nuts_transport(transport):
    return inference.fit(
        NaiveBayes(),
        transport,
        method="nuts",
        sampler=SamplerSettings(draws=300, tune=300, chains=2, progressbar=False),
        standardize=RAW_UNITS,
        random_seed=NUTS_SEED,
    )


@pytest.fixture(scope="module")
def exact_transport(transport):
    return inference.fit(
        NaiveBayes(),
        transport,
        method="exact",
        sampler=SamplerSettings(draws=1000, chains=2),
        standardize=RAW_UNITS,
        random_seed=NUTS_SEED,
    )


@pytest.fixture(scope="module")
def nuts_digits(digits_binary):
    return inference.fit(
        NaiveBayes(),
        digits_binary,
        method="nuts",
        sampler=SamplerSettings(draws=1000, tune=1000, chains=2, progressbar=False),
        random_seed=NUTS_SEED,
    )


@pytest.fixture(scope="module")
def exact_digits(digits_binary):
    return inference.fit(
        NaiveBayes(), digits_binary, method="exact", sampler=SamplerSettings(draws=20_000, chains=2), random_seed=1
    )


# --------------------------------------------------------------------------- hand formulas


def class_counts(dataset: Dataset) -> np.ndarray:
    return np.array([np.sum(dataset.y == j) for j in range(dataset.n_classes)], dtype=float)


def columns_of(dataset: Dataset, kind: str) -> np.ndarray:
    return np.array([j for j, k in enumerate(dataset.feature_kinds) if k == kind], dtype=int)


def ones_per_class(dataset: Dataset) -> np.ndarray:
    """N_ij: rows of class j with binary feature i equal to 1, shape (class, binary_feature)."""
    X = dataset.X[:, columns_of(dataset, "binary")]
    return np.array([X[dataset.y == j].sum(axis=0) for j in range(dataset.n_classes)])


def level_counts_per_class(dataset: Dataset) -> list[np.ndarray]:
    """Per categorical feature: (class, level) counts, levels from category_names or max code + 1."""
    out = []
    for column in columns_of(dataset, "categorical"):
        name = dataset.feature_names[column]
        n_levels = (
            len(dataset.category_names[name]) if name in dataset.category_names else int(dataset.X[:, column].max()) + 1
        )
        codes = dataset.X[:, column].astype(int)
        out.append(
            np.array([np.bincount(codes[dataset.y == j], minlength=n_levels) for j in range(dataset.n_classes)], float)
        )
    return out


def words_per_class(dataset: Dataset) -> np.ndarray:
    X = dataset.X[:, columns_of(dataset, "count")]
    return np.array([X[dataset.y == j].sum(axis=0) for j in range(dataset.n_classes)])


def nig_posterior(dataset: Dataset, prior: NaiveBayesPrior) -> dict[str, np.ndarray]:
    """Normal-Inverse-Gamma update per (class, continuous feature), row by row from the textbook formulas."""
    X = dataset.X[:, columns_of(dataset, "continuous")]
    if prior.autoscale:
        m0, b0 = X.mean(axis=0), prior.variance_beta * X.var(axis=0)
    else:
        m0 = np.full(X.shape[1], prior.mean_center)
        b0 = np.full(X.shape[1], prior.variance_beta)
    kappa0, a0 = prior.mean_strength, prior.variance_alpha
    result = {name: np.zeros((dataset.n_classes, X.shape[1])) for name in ("m", "kappa", "a", "b")}
    for j in range(dataset.n_classes):
        for i in range(X.shape[1]):
            x = X[dataset.y == j, i]
            n, mean = len(x), np.mean(x)
            scatter = np.sum((x - mean) ** 2)
            kappa = kappa0 + n
            result["m"][j, i] = (kappa0 * m0[i] + n * mean) / kappa
            result["kappa"][j, i] = kappa
            result["a"][j, i] = a0 + n / 2
            result["b"][j, i] = b0[i] + scatter / 2 + kappa0 * n * (mean - m0[i]) ** 2 / (2 * kappa)
    return result


def beta_moments(alpha: np.ndarray, beta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and variance of Beta(alpha, beta); also the marginals of a Dirichlet (beta = total - alpha)."""
    total = alpha + beta
    return alpha / total, alpha * beta / (total**2 * (total + 1))


def assert_within_mc_error(draws: xr.DataArray, mean: np.ndarray, variance: np.ndarray, z: float = 5.0) -> None:
    """Mean of independent draws over (chain, draw) within z analytic standard errors of the truth."""
    n = draws.sizes["chain"] * draws.sizes["draw"]
    error = np.abs(draws.mean(("chain", "draw")).values - mean) / np.sqrt(variance / n)
    assert error.max() <= z, (draws.name, error.max())


# --------------------------------------------------------------------------- seed 003 transport tables


def test_transport_mle_class_prior_and_raining_match_the_seed_tables(transport):
    """Seed 003 "Estimating P(y)" and "Estimating P(x|y)" tables; seed 000 eqs 9.27, 9.28."""
    mle = NaiveBayes().point_estimate(transport, "mle").sel({"class": TRANSPORT_ORDER})
    np.testing.assert_array_equal(mle["class_prior"].values, [0.2, 0.4, 0.2, 0.2])
    np.testing.assert_array_equal(mle["binary_proba"].sel(binary_feature="Raining=yes").values, [1.0, 0.5, 0.5, 0.0])
    assert mle.attrs["kind"] == "mle"


def test_transport_gaussian_mle_matches_the_seed_table(transport):
    """Seed 003 "Gaussian Naive Bayes" table of (mu, sigma) of Distance per mode (MLE, ddof 0)."""
    mle = (
        NaiveBayes().point_estimate(transport, "mle").sel({"class": TRANSPORT_ORDER, "continuous_feature": "Distance"})
    )
    np.testing.assert_array_equal(mle["gaussian_mean"].values, [1.5, 4.0, 1.5, 5.5])
    sd = np.sqrt(mle["gaussian_variance"].values)
    np.testing.assert_array_equal(sd[[0, 2, 3]], [0.5, 0.5, 4.5])
    assert round(sd[1], 3) == 3.674 and round(sd[1], 1) == 3.7  # the table prints 3.7


def test_transport_unbiased_variance_divides_by_n_minus_1(transport):
    """Seed 003 "MVUE": S/(N_j - 1); the means are the MLE's."""
    model = NaiveBayes()
    unbiased = model.point_estimate(transport, "unbiased").sel(continuous_feature="Distance")
    mle = model.point_estimate(transport, "mle").sel(continuous_feature="Distance")
    np.testing.assert_array_equal(
        unbiased["gaussian_variance"].sel({"class": TRANSPORT_ORDER}).values, [0.5, 18.0, 0.5, 40.5]
    )
    xr.testing.assert_identical(unbiased["gaussian_mean"], mle["gaussian_mean"])
    xr.testing.assert_identical(unbiased["binary_proba"], mle["binary_proba"])
    assert unbiased.attrs["kind"] == "unbiased"


# --------------------------------------------------------------------------- the zero-probability problem


def rainy_grid() -> np.ndarray:
    """Raining = yes at distances 0.5 .. 20 miles, with and without a flat tire
    (columns Distance, Raining, Flat Tire)."""
    distances = np.linspace(0.5, 20.0, 40)
    return np.array([[d, 1.0, flat] for d in distances for flat in (0.0, 1.0)])


def test_mle_never_takes_the_car_in_the_rain(transport):
    """Seed 003 "MLE vs MAP": P(Raining=yes | car) = 0 under the MLE, so P(car | rain, any distance) = 0."""
    model = NaiveBayes()
    proba = model.class_proba(model.point_estimate(transport, "mle"), rainy_grid())
    assert not np.isnan(proba.values).any()
    np.testing.assert_array_equal(proba.sel({"class": "car"}).values, 0.0)
    np.testing.assert_allclose(proba.sum("class").values, 1.0, rtol=0, atol=1e-12)


@pytest.mark.parametrize(
    ("prior", "kind"),
    [(NaiveBayesPrior(), "posterior_mean"), (NaiveBayesPrior(binary_alpha=2.0, binary_beta=2.0), "map")],
    ids=["posterior_mean", "map_beta_2_2"],
)
def test_priors_keep_the_car_possible_in_the_rain(transport, prior, kind):
    """Seed 003: "MAP estimation with Beta priors (alpha, beta > 1) ... will never be zero"; eq 9.29."""
    model = NaiveBayes(prior=prior)
    proba = model.class_proba(model.point_estimate(transport, kind), rainy_grid())
    assert (proba.sel({"class": "car"}).values > 0).all()
    np.testing.assert_allclose(proba.sum("class").values, 1.0, rtol=0, atol=1e-12)


@pytest.mark.parametrize("which", ["nuts", "exact"])
def test_posterior_predictions_keep_the_car_possible_in_the_rain(which, nuts_transport, exact_transport):
    result = nuts_transport if which == "nuts" else exact_transport
    prediction = inference.predict(result, rainy_grid(), return_draws=True)
    assert (prediction["class_proba"].sel({"class": "car"}).values > 0).all()
    assert (prediction["class_proba_draws"].sel({"class": "car"}).values > 0).all()
    # the MLE stored beside the draws still has the problem
    np.testing.assert_array_equal(prediction["class_proba_mle"].sel({"class": "car"}).values, 0.0)


def test_module_docstring_example_runs():
    result = doctest.testmod(naive_bayes_module, verbose=False)
    assert result.attempted >= 5
    assert result.failed == 0


# --------------------------------------------------------------------------- closed forms against hand formulas


@pytest.mark.parametrize("name", ["transport", "digits_binary"])
def test_discrete_closed_forms_match_the_hand_formulas(name):
    """MLE eqs 9.27/9.28; MAP (N_ij + a - 1)/(N_j + a + b - 2) (seed 003 "MAP estimate");
    posterior mean (N_ij + a)/(N_j + a + b) (eq 9.29) and (N_j + beta)/(N + K beta) (eq 9.30)."""
    dataset = data.load(name)
    n_j, n_ij = class_counts(dataset), ones_per_class(dataset)
    N, K = n_j.sum(), dataset.n_classes
    column = n_j[:, np.newaxis]

    mle = NaiveBayes().point_estimate(dataset, "mle")
    np.testing.assert_allclose(mle["class_prior"].values, n_j / N, rtol=1e-14)
    np.testing.assert_allclose(mle["binary_proba"].values, n_ij / column, rtol=1e-14)

    alpha, beta, concentration = 3.0, 2.0, 2.5
    model = NaiveBayes(prior=NaiveBayesPrior(binary_alpha=alpha, binary_beta=beta, class_concentration=concentration))
    map_ = model.point_estimate(dataset, "map")
    np.testing.assert_allclose(
        map_["binary_proba"].values, (n_ij + alpha - 1) / (column + alpha + beta - 2), rtol=1e-14
    )
    np.testing.assert_allclose(
        map_["class_prior"].values, (n_j + concentration - 1) / (N + K * concentration - K), rtol=1e-14
    )
    mean = model.point_estimate(dataset, "posterior_mean")
    np.testing.assert_allclose(mean["binary_proba"].values, (n_ij + alpha) / (column + alpha + beta), rtol=1e-14)
    np.testing.assert_allclose(mean["class_prior"].values, (n_j + concentration) / (N + K * concentration), rtol=1e-14)

    # eq 9.29 literally: alpha = beta gives (N_ij + alpha) / (N_j + 2 alpha)
    symmetric = NaiveBayes(prior=NaiveBayesPrior(binary_alpha=0.5, binary_beta=0.5)).point_estimate(
        dataset, "posterior_mean"
    )
    np.testing.assert_allclose(symmetric["binary_proba"].values, (n_ij + 0.5) / (column + 1.0), rtol=1e-14)
    # the default (uniform) prior: the discrete MAP is the MLE
    default_map = NaiveBayes().point_estimate(dataset, "map")
    for variable in ("class_prior", "binary_proba"):
        np.testing.assert_allclose(default_map[variable].values, mle[variable].values, rtol=1e-14, atol=1e-300)


def test_categorical_and_count_closed_forms_match_the_hand_formulas(mixed):
    """Dirichlet blocks: MLE n_l/N_j, MAP (n_l + g - 1)/(N_j + L g - L), posterior mean (n_l + g)/(N_j + L g);
    the count features form ONE multinomial per class."""
    model = NaiveBayes(prior=ODD_PRIOR)
    levels = np.concatenate(level_counts_per_class(mixed), axis=1)
    widths = [block.shape[1] for block in level_counts_per_class(mixed)]
    width = np.repeat(widths, widths)  # L of the block of each level
    n_j = class_counts(mixed)[:, np.newaxis]
    words = words_per_class(mixed)
    g, w = ODD_PRIOR.category_concentration, ODD_PRIOR.count_concentration

    mle = NaiveBayes().point_estimate(mixed, "mle")
    np.testing.assert_allclose(mle["category_proba"].values, levels / n_j, rtol=1e-14)
    np.testing.assert_allclose(mle["count_proba"].values, words / words.sum(axis=1, keepdims=True), rtol=1e-14)
    mean = model.point_estimate(mixed, "posterior_mean")
    np.testing.assert_allclose(mean["category_proba"].values, (levels + g) / (n_j + width * g), rtol=1e-14)
    np.testing.assert_allclose(
        mean["count_proba"].values, (words + w) / (words.sum(axis=1, keepdims=True) + words.shape[1] * w), rtol=1e-14
    )
    map_ = model.point_estimate(mixed, "map")
    np.testing.assert_allclose(map_["category_proba"].values, (levels + g - 1) / (n_j + width * g - width), rtol=1e-14)
    d = words.shape[1]
    np.testing.assert_allclose(
        map_["count_proba"].values, (words + w - 1) / (words.sum(axis=1, keepdims=True) + d * w - d), rtol=1e-14
    )
    # layout of the flat level dim: "feature=level", with the feature and code as non-dim coords
    assert list(mean["category_level"].values) == ["colour=red", "colour=green", "colour=blue", "size=0", "size=1"]
    assert list(mean["category_feature"].values) == ["colour"] * 3 + ["size"] * 2
    assert list(mean["category_code"].values) == [0, 1, 2, 0, 1]
    assert list(mean["count_feature"].values) == ["w1", "w2"]


@pytest.mark.parametrize("name", ["transport", "iris"])
@pytest.mark.parametrize(
    "prior",
    [
        NaiveBayesPrior(),
        NaiveBayesPrior(mean_strength=2.0, variance_alpha=1.5, variance_beta=0.3),
        ODD_PRIOR,
    ],
    ids=["default_autoscale", "autoscale", "raw_units"],
)
def test_gaussian_closed_forms_are_the_normal_inverse_gamma_update(name, prior):
    """E[mu] = mode mu = m_n; E[sigma^2] = b_n/(a_n - 1); joint mode sigma^2 = b_n/(a_n + 3/2)."""
    dataset = data.load(name)
    hand = nig_posterior(dataset, prior)
    model = NaiveBayes(prior=prior)
    mean = model.point_estimate(dataset, "posterior_mean")
    map_ = model.point_estimate(dataset, "map")
    np.testing.assert_allclose(mean["gaussian_mean"].values, hand["m"], rtol=1e-12)
    np.testing.assert_allclose(map_["gaussian_mean"].values, hand["m"], rtol=1e-12)
    np.testing.assert_allclose(mean["gaussian_variance"].values, hand["b"] / (hand["a"] - 1), rtol=1e-12)
    np.testing.assert_allclose(map_["gaussian_variance"].values, hand["b"] / (hand["a"] + 1.5), rtol=1e-12)


def test_autoscale_uses_the_pooled_mean_and_variance(transport):
    """With autoscale, the prior of transport equals the raw-units prior at m0 = pooled mean,
    b0 = scale * pooled var."""
    scale = 0.3
    distance = transport.X[:, 0]
    autoscaled = NaiveBayes(prior=NaiveBayesPrior(variance_beta=scale))
    raw = NaiveBayes(
        prior=NaiveBayesPrior(
            variance_beta=scale * distance.var(),
            mean_center=distance.mean(),
            autoscale=False,
        )
    )
    for kind in ("map", "posterior_mean"):
        xr.testing.assert_allclose(
            autoscaled.point_estimate(transport, kind), raw.point_estimate(transport, kind), rtol=1e-13
        )


# --------------------------------------------------------------------------- scikit-learn parity


@pytest.mark.parametrize("alpha", [1.0, 0.5])
def test_bernoulli_posterior_mean_is_sklearn_bernoulli_nb(digits_binary, alpha):
    reference = BernoulliNB(alpha=alpha).fit(digits_binary.X, digits_binary.y)
    prior = NaiveBayesPrior(binary_alpha=alpha, binary_beta=alpha)
    estimate = NaiveBayes(prior=prior).point_estimate(digits_binary, "posterior_mean")
    np.testing.assert_allclose(estimate["binary_proba"].values, np.exp(reference.feature_log_prob_), rtol=1e-12)


@pytest.mark.parametrize("alpha", [1.0, 0.5])
def test_count_posterior_mean_is_sklearn_multinomial_nb(alpha):
    digits = data.load("digits")
    reference = MultinomialNB(alpha=alpha).fit(digits.X, digits.y)
    estimate = NaiveBayes(prior=NaiveBayesPrior(count_concentration=alpha)).point_estimate(digits, "posterior_mean")
    np.testing.assert_allclose(estimate["count_proba"].values, np.exp(reference.feature_log_prob_), rtol=1e-12)


@pytest.mark.parametrize("name", ["iris", "wine"])
def test_gaussian_mle_is_sklearn_gaussian_nb(name):
    dataset = data.load(name)
    model = NaiveBayes()
    mle = model.point_estimate(dataset, "mle")
    reference = GaussianNB(var_smoothing=0.0).fit(dataset.X, dataset.y)
    np.testing.assert_allclose(mle["gaussian_mean"].values, reference.theta_, rtol=1e-10)
    np.testing.assert_allclose(mle["gaussian_variance"].values, reference.var_, rtol=1e-10)
    np.testing.assert_allclose(mle["class_prior"].values, reference.class_prior_, rtol=1e-10)
    # scikit-learn's default adds 1e-9 times the largest pooled feature variance to every variance
    smoothed = GaussianNB().fit(dataset.X, dataset.y)
    epsilon = 1e-9 * dataset.X.var(axis=0).max()
    np.testing.assert_allclose(smoothed.var_, mle["gaussian_variance"].values + epsilon, rtol=1e-10)
    # and the plug-in predictions agree
    proba = model.class_proba(mle, dataset.X)
    np.testing.assert_allclose(proba.values, reference.predict_proba(dataset.X), rtol=0, atol=1e-10)


def test_bernoulli_predictions_are_sklearn_bernoulli_nb(digits_binary):
    """BernoulliNB(alpha=1) = MLE class prior with the posterior-mean (Laplace) feature probabilities."""
    model = NaiveBayes()
    params = model.point_estimate(digits_binary, "posterior_mean").assign(
        class_prior=model.point_estimate(digits_binary, "mle")["class_prior"]
    )
    reference = BernoulliNB(alpha=1.0).fit(digits_binary.X, digits_binary.y)
    proba = model.class_proba(params, digits_binary.X)
    np.testing.assert_allclose(proba.values, reference.predict_proba(digits_binary.X), rtol=0, atol=1e-10)


# --------------------------------------------------------------------------- the PyMC model


def per_observation_model(dataset: Dataset, prior: NaiveBayesPrior) -> pm.Model:
    """The textbook naive Bayes likelihood, one term per row and cell, with the priors of NaiveBayes.build."""
    kinds = {kind: columns_of(dataset, kind) for kind in ("binary", "categorical", "count", "continuous")}
    y, X, K = dataset.y, dataset.X, dataset.n_classes
    blocks = level_counts_per_class(dataset)
    widths = [block.shape[1] for block in blocks]
    names = np.array(dataset.feature_names)
    coords = {"class": list(dataset.class_names)}
    if kinds["binary"].size:
        coords["binary_feature"] = list(names[kinds["binary"]])
    if kinds["categorical"].size:
        coords["category_level"] = [
            f"{names[c]}={code}" for c, w in zip(kinds["categorical"], widths, strict=True) for code in range(w)
        ]
    if kinds["count"].size:
        coords["count_feature"] = list(names[kinds["count"]])
    if kinds["continuous"].size:
        coords["continuous_feature"] = list(names[kinds["continuous"]])
    with pm.Model(coords=coords) as model:
        class_prior = pm.Dirichlet("class_prior", a=np.full(K, prior.class_concentration), dims="class")
        pm.Categorical("y", p=class_prior, observed=y)
        if kinds["binary"].size:
            binary_proba = pm.Beta(
                "binary_proba", alpha=prior.binary_alpha, beta=prior.binary_beta, dims=("class", "binary_feature")
            )
            pm.Bernoulli("binary_cells", p=binary_proba[y], observed=X[:, kinds["binary"]])
        if kinds["categorical"].size:
            weight = pm.Gamma(
                "category_weight", alpha=prior.category_concentration, beta=1.0, dims=("class", "category_level")
            )
            start = 0
            for column, w in zip(kinds["categorical"], widths, strict=True):
                block = weight[:, start : start + w]
                proba = block / block.sum(axis=1, keepdims=True)
                pm.Categorical(f"cells_{names[column]}", p=proba[y], observed=X[:, column].astype(int))
                start += w
        if kinds["count"].size:
            counts = X[:, kinds["count"]]
            count_proba = pm.Dirichlet(
                "count_proba",
                a=np.full((K, counts.shape[1]), prior.count_concentration),
                dims=("class", "count_feature"),
            )
            pm.Multinomial("count_rows", n=counts.sum(axis=1), p=count_proba[y], observed=counts)
        if kinds["continuous"].size:
            x = X[:, kinds["continuous"]]
            if prior.autoscale:
                m0, b0 = x.mean(axis=0), prior.variance_beta * x.var(axis=0)
            else:
                m0 = np.full(x.shape[1], prior.mean_center)
                b0 = np.full(x.shape[1], prior.variance_beta)
            dims = ("class", "continuous_feature")
            variance = pm.InverseGamma("gaussian_variance", alpha=prior.variance_alpha, beta=b0, dims=dims)
            mean = pm.Normal("gaussian_mean", mu=m0, sigma=pt.sqrt(variance / prior.mean_strength), dims=dims)
            pm.Normal("continuous_cells", mu=mean[y], sigma=pt.sqrt(variance[y]), observed=x)
    return model


def multinomial_log_coefficient(dataset: Dataset) -> float:
    """sum over rows of log(n! / prod x_v!) of the count features (0 without count features)."""
    counts = dataset.X[:, columns_of(dataset, "count")]
    return float(np.sum(scipy.special.gammaln(counts.sum(axis=1) + 1) - scipy.special.gammaln(counts + 1).sum(axis=1)))


@pytest.mark.parametrize("prior", [NaiveBayesPrior(), ODD_PRIOR], ids=["default", "odd"])
@pytest.mark.parametrize("name", ["transport", "mixed"])
def test_sufficient_statistic_model_is_the_per_observation_model(name, prior, transport, mixed):
    """The pm.Potential likelihood differs from the per-row likelihood by the multinomial coefficients only,
    a constant: same posterior, same gradient (module docstring, "Likelihood by sufficient statistics")."""
    dataset = transport if name == "transport" else mixed
    sufficient = NaiveBayes(prior=prior).build(dataset)
    reference = per_observation_model(dataset, prior)
    value_names = sorted(value.name for value in sufficient.value_vars)
    assert value_names == sorted(value.name for value in reference.value_vars)
    order = sorted(sufficient.free_RVs, key=lambda rv: rv.name)
    logp_sufficient = sufficient.compile_logp(**FAST)
    logp_reference = reference.compile_logp(**FAST)
    dlogp_sufficient = sufficient.compile_dlogp(vars=order, **FAST)
    dlogp_reference = reference.compile_dlogp(vars=sorted(reference.free_RVs, key=lambda rv: rv.name), **FAST)

    rng = np.random.default_rng(2024)
    start = sufficient.initial_point()
    differences, values = [], []
    for _ in range(5):
        point = {key: value + rng.normal(size=np.shape(value)) for key, value in start.items()}
        differences.append(logp_reference(point) - logp_sufficient(point))
        values.append(logp_sufficient(point))
        np.testing.assert_allclose(dlogp_sufficient(point), dlogp_reference(point), rtol=0, atol=1e-8)
    assert np.ptp(values) > 1.0  # the points are far apart in density ...
    np.testing.assert_allclose(differences, differences[0], rtol=0, atol=1e-8)  # ... their difference is not
    np.testing.assert_allclose(differences[0], multinomial_log_coefficient(dataset), rtol=0, atol=1e-8)


def test_built_model_has_the_named_variables_and_dims(mixed):
    model = NaiveBayes().build(mixed)
    dims = model.named_vars_to_dims
    assert dims["class_prior"] == ("class",)
    assert dims["binary_proba"] == ("class", "binary_feature")
    assert dims["category_weight"] == dims["category_proba"] == ("class", "category_level")
    assert dims["count_proba"] == ("class", "count_feature")
    assert dims["gaussian_mean"] == dims["gaussian_variance"] == ("class", "continuous_feature")
    assert set(model.potentials) == {
        model[name]
        for name in (
            "class_counts_likelihood",
            "binary_ones_likelihood",
            "level_counts_likelihood",
            "word_counts_likelihood",
            "continuous_likelihood",
        )
    }
    np.testing.assert_array_equal(model["class_counts"].get_value(), class_counts(mixed))
    np.testing.assert_array_equal(model["word_counts"].get_value(), words_per_class(mixed))


# --------------------------------------------------------------------------- NUTS against the exact posterior


def test_nuts_agrees_with_the_exact_posterior_on_binarised_digits(nuts_digits, exact_digits):
    """The acceptance test: for every element of class_prior and binary_proba, mean and sd agree within
    4 combined Monte-Carlo standard errors."""
    nuts = nuts_digits["posterior"].to_dataset()
    exact = exact_digits["posterior"].to_dataset()
    assert nuts.sizes["chain"] == 2 and nuts.sizes["draw"] == 1000
    assert exact.sizes["chain"] == 2 and exact.sizes["draw"] == 20_000
    for statistic, reduce in (
        ("mean", lambda d: d.mean(("chain", "draw"))),
        ("sd", lambda d: d.std(("chain", "draw"))),
    ):
        mcse_nuts, mcse_exact = azs.mcse(nuts, method=statistic), azs.mcse(exact, method=statistic)
        for name in ("class_prior", "binary_proba"):
            difference = np.abs(reduce(nuts[name]) - reduce(exact[name]))
            bound = 4 * np.sqrt(mcse_nuts[name] ** 2 + mcse_exact[name] ** 2)
            assert (difference <= bound).all(), (statistic, name, float((difference / bound).max()))


def test_exact_draws_of_digits_match_the_closed_form_posterior_mean(exact_digits, digits_binary):
    """Beta(1 + N_ij, 1 + N_j - N_ij) and Dirichlet(1 + N_j): means within 5 analytic standard errors."""
    posterior = exact_digits["posterior"]
    n_j, n_ij = class_counts(digits_binary), ones_per_class(digits_binary)
    column = n_j[:, np.newaxis]
    assert_within_mc_error(posterior["binary_proba"], *beta_moments(1 + n_ij, 1 + column - n_ij))
    assert_within_mc_error(posterior["class_prior"], *beta_moments(1 + n_j, (1 + n_j).sum() - 1 - n_j))
    stored = exact_digits["point_estimate_posterior_mean"]
    np.testing.assert_allclose(stored["binary_proba"].values, (1 + n_ij) / (2 + column), rtol=1e-14)


# --------------------------------------------------------------------------- prediction


def test_class_probabilities_sum_to_one_for_draws_and_point_estimates(mixed, transport):
    model = NaiveBayes()
    for dataset in (mixed, transport):
        draws = model.exact_posterior(dataset, draws=50, chains=2, random_seed=3)
        proba = model.class_proba(draws, dataset.X)
        assert proba.dims == ("chain", "draw", "obs", "class")
        assert proba.shape == (2, 50, dataset.n_obs, dataset.n_classes)
        np.testing.assert_allclose(proba.sum("class").values, 1.0, rtol=0, atol=1e-12)
        # each draw is the prediction of that draw alone (no accidental broadcasting)
        one = model.class_proba(draws.isel(chain=1, draw=7), dataset.X)
        np.testing.assert_allclose(proba.isel(chain=1, draw=7).values, one.values, rtol=1e-13)
        for kind in model.available_point_estimates():
            try:
                estimate = model.point_estimate(dataset, kind)
            except NoEstimateError:
                continue
            proba = model.class_proba(estimate, dataset.X)
            assert proba.dims == ("obs", "class")
            assert list(proba["class"].values) == list(dataset.class_names)
            np.testing.assert_allclose(proba.sum("class").values, 1.0, rtol=0, atol=1e-12)


def hand_class_log_proba(dataset: Dataset, params: xr.Dataset, X: np.ndarray) -> np.ndarray:
    """log P(class | x) of ONE parameter set, term by term (seed 000 eqs 9.24-9.26 with every feature kind)."""
    joint = np.log(params["class_prior"].values)[np.newaxis, :].repeat(len(X), axis=0)
    for i, column in enumerate(columns_of(dataset, "binary")):
        a = params["binary_proba"].values[:, i]
        joint += np.where(X[:, [column]] == 1, np.log(a), np.log(1 - a))
    start = 0
    for column, block in zip(columns_of(dataset, "categorical"), level_counts_per_class(dataset), strict=True):
        theta = params["category_proba"].values[:, start : start + block.shape[1]]
        joint += np.log(theta[:, X[:, column].astype(int)]).T
        start += block.shape[1]
    if "count_proba" in params:
        joint += X[:, columns_of(dataset, "count")] @ np.log(params["count_proba"].values).T
    for i, column in enumerate(columns_of(dataset, "continuous")):
        mu, variance = params["gaussian_mean"].values[:, i], params["gaussian_variance"].values[:, i]
        joint += scipy.stats.norm.logpdf(X[:, [column]], loc=mu, scale=np.sqrt(variance))
    return joint - scipy.special.logsumexp(joint, axis=1, keepdims=True)


def test_class_log_proba_of_every_feature_kind_matches_the_hand_formula(mixed):
    model = NaiveBayes(prior=ODD_PRIOR)
    rows = np.vstack([mixed.X, mixed_dataset(seed=8).X])  # training rows and new ones
    for kind in ("posterior_mean", "map"):
        estimate = model.point_estimate(mixed, kind)
        np.testing.assert_allclose(
            model.class_log_proba(estimate, rows).values,
            hand_class_log_proba(mixed, estimate, rows),
            rtol=1e-12,
            atol=1e-12,
        )
    draws = model.exact_posterior(mixed, draws=3, chains=2, random_seed=4)
    log_proba = model.class_log_proba(draws, rows)
    for chain in range(2):
        for draw in range(3):
            expected = hand_class_log_proba(mixed, draws.isel(chain=chain, draw=draw), rows)
            np.testing.assert_allclose(log_proba.isel(chain=chain, draw=draw).values, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(("shift", "scale", "atol"), [(-3e3, 250.0, 1e-13), (1e4, 1.0, 1e-10), (5.0, 1e-3, 1e-10)])
def test_autoscaled_gaussian_predictions_are_invariant_to_the_units(shift, scale, atol):
    """With autoscale the prior moves with each feature's pooled mean and variance, so an affine
    change of units leaves every estimate's class probabilities unchanged (seed 003 Gaussian naive Bayes)."""
    iris = data.load("iris")
    moved = dataclasses.replace(iris, X=iris.X * scale + shift)
    model = NaiveBayes(prior=NaiveBayesPrior(mean_strength=1.0, variance_beta=0.5))
    for kind in model.available_point_estimates():
        original = model.class_proba(model.point_estimate(iris, kind), iris.X)
        changed = model.class_proba(model.point_estimate(moved, kind), moved.X)
        np.testing.assert_allclose(changed.values, original.values, rtol=0, atol=atol)


def test_ten_thousand_binary_features_do_not_underflow():
    """Seed 000 eqs 9.24-9.26: in the log domain; the product of eq 9.23 underflows to 0 for every class."""
    rng = np.random.default_rng(99)
    n_features, y = 10_000, np.repeat(np.arange(3), 20)
    rates = rng.uniform(0.2, 0.8, size=(3, n_features))
    X = (rng.uniform(size=(y.size, n_features)) < rates[y]).astype(float)
    dataset = Dataset(
        name="wide",
        X=X,
        y=y,
        feature_names=tuple(f"f{i}" for i in range(n_features)),
        class_names=("a", "b", "c"),
        feature_kinds=("binary",) * n_features,
    )
    model = NaiveBayes()
    estimate = model.point_estimate(dataset, "posterior_mean")
    log_proba = model.class_log_proba(estimate, X)
    proba = model.class_proba(estimate, X)
    assert np.isfinite(log_proba.values).all() and np.isfinite(proba.values).all()
    np.testing.assert_allclose(proba.sum("class").values, 1.0, rtol=0, atol=1e-12)

    prior, a = estimate["class_prior"].values, estimate["binary_proba"].values
    joint = np.log(prior) + X @ np.log(a).T + (1 - X) @ np.log1p(-a).T  # eq 9.24
    expected = joint - scipy.special.logsumexp(joint, axis=1, keepdims=True)
    np.testing.assert_allclose(log_proba.values, expected, rtol=1e-10, atol=1e-9)
    np.testing.assert_allclose(proba.values, np.exp(expected), rtol=1e-10, atol=1e-300)
    assert (proba.values.max(axis=1) > 0.5).all()
    # the same numbers in probability space (eq 9.23): every numerator, hence the denominator, is 0
    with np.errstate(invalid="ignore"):
        naive = prior * np.stack([np.prod(np.where(X == 1, a[j], 1 - a[j]), axis=1) for j in range(3)], axis=1)
    assert (naive == 0.0).all()


def permuted_features(dataset: Dataset, order: np.ndarray) -> Dataset:
    return dataclasses.replace(
        dataset,
        X=dataset.X[:, order],
        feature_names=tuple(dataset.feature_names[i] for i in order),
        feature_kinds=tuple(dataset.feature_kinds[i] for i in order),
    )


def test_class_proba_is_invariant_to_the_order_of_the_features(mixed):
    model = NaiveBayes(prior=ODD_PRIOR)
    order = np.array([5, 3, 0, 2, 4, 1])
    shuffled = permuted_features(mixed, order)
    for kind in ("posterior_mean", "map"):
        original = model.class_proba(model.point_estimate(mixed, kind), mixed.X)
        permuted = model.class_proba(model.point_estimate(shuffled, kind), mixed.X[:, order])
        np.testing.assert_allclose(permuted.values, original.values, rtol=1e-12)


def test_class_proba_is_invariant_to_relabelling_the_classes(mixed, transport):
    model = NaiveBayes(prior=ODD_PRIOR)
    for dataset in (mixed, transport):
        order = np.arange(dataset.n_classes)[::-1].copy()
        order[[0, 1]] = order[[1, 0]]  # any non-trivial permutation
        new_code = np.argsort(order)  # old code k becomes new_code[k]
        relabelled = dataclasses.replace(
            dataset, y=new_code[dataset.y], class_names=tuple(dataset.class_names[k] for k in order)
        )
        for kind in ("posterior_mean", "map"):
            original = model.class_proba(model.point_estimate(dataset, kind), dataset.X)
            renamed = model.class_proba(model.point_estimate(relabelled, kind), dataset.X)
            assert list(renamed["class"].values) == list(relabelled.class_names)
            np.testing.assert_allclose(renamed.values[:, new_code], original.values, rtol=1e-12)
            xr.testing.assert_allclose(renamed.sel({"class": list(dataset.class_names)}), original, rtol=1e-12)


# --------------------------------------------------------------------------- the exact posterior


def test_exact_posterior_is_reproducible_by_seed_and_has_the_layout(mixed):
    model = NaiveBayes(prior=ODD_PRIOR)
    first = model.exact_posterior(mixed, draws=40, chains=3, random_seed=5)
    xr.testing.assert_identical(first, model.exact_posterior(mixed, draws=40, chains=3, random_seed=5))
    other = model.exact_posterior(mixed, draws=40, chains=3, random_seed=6)
    for name in first.data_vars:
        assert not np.allclose(first[name].values, other[name].values), name
    assert set(first.data_vars) == {
        "class_prior",
        "binary_proba",
        "category_proba",
        "count_proba",
        "gaussian_mean",
        "gaussian_variance",
    }
    estimate = model.point_estimate(mixed, "posterior_mean")
    for name, variable in first.data_vars.items():
        assert variable.dims == ("chain", "draw", *estimate[name].dims), name
        assert variable.shape == (3, 40, *estimate[name].shape), name
    # the chains are not copies of one another
    assert not np.allclose(first["class_prior"].isel(chain=0).values, first["class_prior"].isel(chain=1).values)


def test_exact_dirichlet_draws_lie_on_their_simplices(mixed):
    model = NaiveBayes(prior=NaiveBayesPrior(category_concentration=0.05, count_concentration=0.05))
    draws = model.exact_posterior(mixed, draws=500, chains=2, random_seed=8)
    np.testing.assert_allclose(draws["class_prior"].sum("class").values, 1.0, rtol=0, atol=1e-12)
    np.testing.assert_allclose(draws["count_proba"].sum("count_feature").values, 1.0, rtol=0, atol=1e-12)
    per_block = draws["category_proba"].groupby("category_feature").sum("category_level")
    assert sorted(per_block["category_feature"].values) == ["colour", "size"]
    np.testing.assert_allclose(per_block.values, 1.0, rtol=0, atol=1e-12)
    for name in ("class_prior", "binary_proba", "category_proba", "count_proba"):
        values = draws[name].values
        assert np.isfinite(values).all() and (values >= 0).all() and (values <= 1).all(), name


def test_exact_discrete_draws_match_the_conjugate_posterior(mixed):
    prior = ODD_PRIOR
    draws = NaiveBayes(prior=prior).exact_posterior(mixed, draws=4000, chains=2, random_seed=11)
    n_j = class_counts(mixed)
    column = n_j[:, np.newaxis]
    n_ij = ones_per_class(mixed)
    a, b = prior.binary_alpha + n_ij, prior.binary_beta + column - n_ij
    assert_within_mc_error(draws["binary_proba"], *beta_moments(a, b))
    concentration = prior.class_concentration + n_j
    assert_within_mc_error(draws["class_prior"], *beta_moments(concentration, concentration.sum() - concentration))
    words = prior.count_concentration + words_per_class(mixed)
    total = words.sum(axis=1, keepdims=True)
    assert_within_mc_error(draws["count_proba"], *beta_moments(words, total - words))
    levels = [prior.category_concentration + block for block in level_counts_per_class(mixed)]
    alpha = np.concatenate(levels, axis=1)
    total = np.concatenate(
        [np.repeat(block.sum(axis=1, keepdims=True), block.shape[1], axis=1) for block in levels], axis=1
    )
    assert_within_mc_error(draws["category_proba"], *beta_moments(alpha, total - alpha))


@pytest.mark.parametrize("name", ["iris", "mixed"])
def test_exact_gaussian_draws_match_the_normal_inverse_gamma_posterior(name, mixed):
    """sigma^2 ~ InvGamma(a_n, b_n): mean b_n/(a_n - 1), var b_n^2/((a_n - 1)^2 (a_n - 2));
    mu ~ Student-t(2 a_n) around m_n with variance b_n/((a_n - 1) kappa_n)."""
    dataset = mixed if name == "mixed" else data.load(name)
    prior = NaiveBayesPrior(variance_alpha=2.0)  # a_n > 2: finite variance of the variance draws
    hand = nig_posterior(dataset, prior)
    draws = NaiveBayes(prior=prior).exact_posterior(dataset, draws=5000, chains=2, random_seed=12)
    m, kappa, a, b = hand["m"], hand["kappa"], hand["a"], hand["b"]
    assert_within_mc_error(draws["gaussian_variance"], b / (a - 1), b**2 / ((a - 1) ** 2 * (a - 2)))
    assert_within_mc_error(draws["gaussian_mean"], m, b / ((a - 1) * kappa))
    assert (draws["gaussian_variance"].values > 0).all()


# --------------------------------------------------------------------------- fit and predict


def test_exact_fit_stores_every_point_estimate_and_its_status(exact_transport, transport):
    tree = exact_transport
    assert {
        "posterior",
        "point_estimate_mle",
        "point_estimate_map",
        "point_estimate_posterior_mean",
        "point_estimate_unbiased",
        "observed_data",
        "constant_data",
    } <= set(tree.children)
    assert "sample_stats" not in tree.children
    assert json.loads(tree.attrs["point_estimate_status"]) == {
        kind: "exists" for kind in NaiveBayes().available_point_estimates()
    }
    assert tree.attrs["mle_status"] == "exists"
    assert tree.attrs["method"] == "exact" and tree.attrs["model"] == "naive_bayes"
    assert json.loads(tree.attrs["sampler_settings"]) == {"draws": 1000, "chains": 2}
    model = NaiveBayes()
    for kind in model.available_point_estimates():
        xr.testing.assert_identical(tree[f"point_estimate_{kind}"].to_dataset(), model.point_estimate(transport, kind))
    assert inference.model_of(tree) == model
    report = inference.diagnose(tree)
    assert report.passed, str(report)
    assert report.n_divergences == 0


def test_predict_from_an_exact_fit(exact_transport, transport):
    prediction = inference.predict(exact_transport, transport.X, return_draws=True)
    for kind in NaiveBayes().available_point_estimates():
        assert prediction[f"class_proba_{kind}"].dims == ("obs", "class")
    assert prediction["class_proba_draws"].dims == ("chain", "draw", "obs", "class")
    np.testing.assert_allclose(
        prediction["class_proba"].values, prediction["class_proba_draws"].mean(("chain", "draw")).values
    )
    # the 89% equal-tailed interval holds 89% of the draws of every cell (the mean may lie outside it)
    draws = prediction["class_proba_draws"]
    inside = ((draws >= prediction["class_proba_low"]) & (draws <= prediction["class_proba_high"])).mean(
        ("chain", "draw")
    )
    np.testing.assert_allclose(inside.values, 0.89, rtol=0, atol=0.005)
    model = NaiveBayes()
    np.testing.assert_allclose(
        prediction["class_proba_posterior_mean"].values,
        model.class_proba(model.point_estimate(transport, "posterior_mean"), transport.X).values,
        rtol=1e-12,
    )
    assert set(prediction["predicted"].values) <= set(transport.class_names)


def test_posterior_mean_fit_predicts_with_its_plug_in(transport):
    tree = inference.fit(NaiveBayes(), transport, method="posterior_mean")
    assert "posterior" not in tree.children
    assert [name for name in tree.children if name.startswith("point_estimate_")] == ["point_estimate_posterior_mean"]
    assert json.loads(tree.attrs["point_estimate_status"]) == {"posterior_mean": "exists"}
    prediction = inference.predict(tree, transport.X)
    xr.testing.assert_identical(
        prediction["class_proba"], prediction["class_proba_posterior_mean"].rename("class_proba")
    )
    np.testing.assert_allclose(prediction["class_proba"].sum("class").values, 1.0, rtol=0, atol=1e-12)


def test_exact_method_needs_a_conjugate_family(transport):
    assert "exact" in methods_of(NaiveBayes())
    with pytest.raises(ValueError, match=r"method='exact'.*'nuts'"):
        inference.fit(LogisticRegression(), transport, method="exact")


# --------------------------------------------------------------------------- binary labels say which level is 1


def test_a_binary_text_column_is_labelled_by_its_level_coded_1_in_draws_estimates_and_tables(exact_transport):
    """'Raining=yes' (as the discriminative families' coding names it), and the probability is that of 'yes':
    checked against the class frequencies of 'yes' counted in the shipped text file with pandas."""
    text = pd.read_csv(resources.files("bayesclass.data") / "files" / "transport.csv")
    labels, columns = ["Raining=yes", "Flat Tire=yes"], ["Raining", "Flat Tire"]
    groups = [name for name in exact_transport.children if name == "posterior" or name.startswith("point_estimate_")]
    assert len(groups) == 5
    for group in groups:
        params = exact_transport[group].to_dataset()
        assert list(params["binary_feature"].values) == labels, group
        assert list(params["binary_column"].values) == columns, group
    mle = exact_transport["point_estimate_mle"].to_dataset()["binary_proba"]
    for label, column in zip(labels, columns, strict=True):
        share_of_yes = (text[column] == "yes").groupby(text["Mode"]).mean()
        np.testing.assert_allclose(
            mle.sel(binary_feature=label).values, share_of_yes[list(mle["class"].values)].values, rtol=0, atol=1e-15
        )
    # the convergence table names each row by the label and holds that element's posterior mean
    table = inference.diagnose(exact_transport).table
    posterior = exact_transport["posterior"].to_dataset()["binary_proba"]
    for label in labels:
        row = table.loc[f"binary_proba[walk, {label}]"]
        expected = float(posterior.sel({"class": "walk", "binary_feature": label}).mean())
        assert float(row["mean"]) == pytest.approx(expected, rel=1e-12)


def test_numeric_0_1_columns_keep_their_names_and_a_bool_column_says_true(mixed):
    estimate = NaiveBayes().point_estimate(mixed, "mle")
    assert list(estimate["binary_feature"].values) == list(estimate["binary_column"].values) == ["rain"]
    frame = pd.DataFrame(
        {"wet": [True, False, True, True, False, False, True, False], "y": ["a", "a", "a", "b", "b", "b", "b", "b"]}
    )
    data_wet = Dataset.from_frame(frame, target="y")
    estimate = NaiveBayes().point_estimate(data_wet, "mle")
    assert list(estimate["binary_feature"].values) == ["wet=True"]
    share_true = frame["wet"].groupby(frame["y"]).mean()
    np.testing.assert_allclose(estimate["binary_proba"].sel(binary_feature="wet=True").values, share_true.values)


def old_style(params: xr.Dataset) -> xr.Dataset:
    """``params`` as results written before the labels named the level: labels are the column names."""
    return params.drop_vars("binary_column").assign_coords(binary_feature=params["binary_column"].values)


def test_parameters_labelled_by_column_names_as_in_older_results_predict_and_simulate_the_same(transport):
    model = NaiveBayes()
    for kind in ("map", "posterior_mean"):
        new = model.point_estimate(transport, kind)
        old = old_style(new)
        assert list(old["binary_feature"].values) == ["Raining", "Flat Tire"] and "binary_column" not in old.coords
        xr.testing.assert_identical(model.class_log_proba(old, transport.X), model.class_log_proba(new, transport.X))
        assert model.feature_kinds_of(old) == model.feature_kinds_of(new) == transport.feature_kinds
        xr.testing.assert_identical(
            model.sample_features(old, transport.y, random_seed=3),
            model.sample_features(new, transport.y, random_seed=3),
        )
        with pytest.raises(ValueError, match=r"binary feature 'Raining' has the value 2\.0 in row 0"):
            model.class_proba(old, [[1.0, 2.0, 0.0]])


def test_the_format_1_naive_bayes_file_reads_its_column_name_labels(transport):
    old = inference.load(Path(__file__).parents[1] / "inference" / "format1" / "naive_bayes_exact_transport.nc")
    posterior = old["posterior"].to_dataset()
    assert list(posterior["binary_feature"].values) == ["Raining", "Flat Tire"] and "binary_column" not in posterior
    relabelled = posterior.assign_coords(binary_feature=["Raining=yes", "Flat Tire=yes"]).assign_coords(
        binary_column=("binary_feature", ["Raining", "Flat Tire"])
    )
    model = NaiveBayes()
    assert model.feature_kinds_of(posterior) == transport.feature_kinds
    np.testing.assert_array_equal(
        inference.predict(old, transport.X)["class_proba"].values,
        model.class_proba(relabelled, transport.X).mean(("chain", "draw")).values,
    )


def test_the_labels_and_their_columns_survive_netcdf(exact_transport, transport, tmp_path):
    inference.save(exact_transport, tmp_path / "nb.nc")
    loaded = inference.load(tmp_path / "nb.nc")
    for group in ("posterior", "point_estimate_map"):
        loaded_coords = loaded[group].to_dataset().coords.to_dataset()
        xr.testing.assert_identical(loaded_coords, exact_transport[group].to_dataset().coords.to_dataset())
    np.testing.assert_array_equal(
        inference.predict(loaded, transport.X)["class_proba"].values,
        inference.predict(exact_transport, transport.X)["class_proba"].values,
    )


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("arguments", "pattern"),
    [
        ({"binary_alpha": 0}, r"binary_alpha.*positive.*got 0"),
        ({"binary_alpha": -1}, r"binary_alpha.*positive.*got -1"),
        ({"binary_alpha": math.nan}, r"binary_alpha.*positive.*got nan"),
        ({"class_concentration": "x"}, r"class_concentration.*positive.*'x'"),
        ({"variance_beta": math.inf}, r"variance_beta.*inf"),
        ({"mean_center": math.nan}, r"mean_center.*finite.*nan"),
        ({"autoscale": "yes"}, r"autoscale.*True or False.*'yes'"),
    ],
)
def test_prior_rejects_bad_hyperparameters(arguments, pattern):
    with pytest.raises(ValueError, match=pattern):
        NaiveBayesPrior(**arguments)


def test_model_rejects_a_prior_of_the_wrong_type():
    with pytest.raises(ValueError, match=r"prior must be a NaiveBayesPrior"):
        NaiveBayes(prior=0.5)


def test_prediction_rejects_values_outside_each_feature_kind(transport, mixed):
    model = NaiveBayes()
    estimate = model.point_estimate(transport, "posterior_mean")
    with pytest.raises(ValueError, match=r"binary feature 'Raining' has the value 2\.0 in row 1"):
        model.class_proba(estimate, [[1.0, 0.0, 0.0], [1.0, 2.0, 0.0]])
    estimate = model.point_estimate(mixed, "posterior_mean")
    row = mixed.X[0].copy()
    bad = row.copy()
    bad[0] = -1.0
    with pytest.raises(ValueError, match=r"count feature 'w1' has the negative value -1\.0 in row 0"):
        model.class_proba(estimate, bad)
    for column, code, levels in ((1, 3, r"0\.\.2"), (4, 2, r"0\.\.1"), (1, 1.5, r"0\.\.2"), (4, -1, r"0\.\.1")):
        bad = row.copy()
        bad[column] = code
        pattern = rf"categorical feature .*{mixed.feature_names[column]}.* has the value {code:g} in row 1.*{levels}"
        with pytest.raises(ValueError, match=pattern):
            model.class_proba(estimate, [row, bad])


def test_unseen_category_message_quotes_the_feature_like_the_other_kinds(mixed):
    model = NaiveBayes()
    bad = mixed.X[0].copy()
    bad[1] = 3
    with pytest.raises(ValueError, match=r"^categorical feature 'colour' has the value 3 in row 0"):
        model.class_proba(model.point_estimate(mixed, "posterior_mean"), bad)


def test_a_class_without_training_rows_is_rejected(transport):
    unused = dataclasses.replace(transport, class_names=(*transport.class_names, "plane"))
    model = NaiveBayes()
    with pytest.raises(ValueError, match=r"'plane'.*no training rows"):
        model.point_estimate(unused, "posterior_mean")
    for method in ("exact", "mle"):
        with pytest.raises(ValueError, match=r"'plane'.*no training rows"):
            inference.fit(model, unused, method=method)


def test_a_constant_continuous_feature_is_rejected(transport):
    X = transport.X.copy()
    X[:, 0] = 3.0
    constant = dataclasses.replace(transport, X=X)
    model = NaiveBayes()
    for call in (
        lambda: model.point_estimate(constant, "map"),
        lambda: model.build(constant),
        lambda: inference.fit(model, constant, method="exact"),
    ):
        with pytest.raises(ValueError, match=r"'Distance'.*constant"):
            call()


@pytest.mark.parametrize(
    "value",
    [1.0, 0.1],  # three rows of 0.1 average to 0.10000000000000002: the scatter is 5.8e-34, not 0
)
def test_zero_variance_within_a_class_has_no_mle(value):
    X = np.array([[value], [value], [value], [1.0], [2.0], [3.0]])
    dataset = Dataset(
        name="flat",
        X=X,
        y=np.repeat([0, 1], 3),
        feature_names=("x",),
        class_names=("a", "b"),
        feature_kinds=("continuous",),
    )
    with pytest.raises(NoEstimateError, match=r"MLE of gaussian_variance\['a', 'x'\].*constant within the class"):
        NaiveBayes().point_estimate(dataset, "mle")


def expected_log_variance(dataset: Dataset) -> np.ndarray:
    """Posterior E[log sigma^2] per (class, continuous feature) under the default prior."""
    hand = nig_posterior(dataset, NaiveBayesPrior())
    return np.log(hand["b"]) - scipy.special.digamma(hand["a"])


def test_zero_variance_within_a_class_has_map_posterior_and_draws(walk_constant, transport, nuts_transport):
    model = NaiveBayes()
    with pytest.raises(NoEstimateError, match=r"gaussian_variance\['walk', 'Distance'\]") as error:
        model.point_estimate(walk_constant, "mle")
    assert isinstance(error.value, ValueError)
    for kind in ("map", "posterior_mean"):
        variance = model.point_estimate(walk_constant, kind)["gaussian_variance"].values
        assert np.isfinite(variance).all() and (variance > 0).all()
    for method in ("exact", "nuts"):  # nuts reuses the compiled transport model (nuts_transport: same tune)
        tree = inference.fit(
            model,
            walk_constant,
            method=method,
            sampler=SamplerSettings(draws=200, tune=300, chains=2, progressbar=False),
            standardize=RAW_UNITS,
            random_seed=NUTS_SEED,
        )
        status = json.loads(tree.attrs["point_estimate_status"])
        assert status["map"] == status["posterior_mean"] == "exists"
        assert "gaussian_variance['walk', 'Distance']" in status["mle"]
        assert "gaussian_variance['walk', 'Distance']" in status["unbiased"]
        assert tree.attrs["mle_status"] == status["mle"]
        assert "point_estimate_mle" not in tree.children and "point_estimate_map" in tree.children
        variance = tree["posterior"]["gaussian_variance"]
        assert np.isfinite(variance.values).all() and (variance.values > 0).all()
        # the draws are of THIS data's posterior (for NUTS: the cached model got the new sufficient statistics):
        # E[log sigma^2] = log b_n - digamma(a_n) under InvGamma(a_n, b_n), far from the original table's
        log_variance = np.log(variance).rename("log_variance")
        mcse = azs.mcse(log_variance.to_dataset(), method="mean")["log_variance"].values
        error = np.abs(log_variance.mean(("chain", "draw")).values - expected_log_variance(walk_constant))
        assert (error <= 5 * mcse).all(), (method, error / mcse)
        walk = walk_constant.class_names.index("walk")
        assert (
            abs(expected_log_variance(walk_constant) - expected_log_variance(transport))[walk, 0] > 10 * mcse[walk, 0]
        )
    assert tree.attrs["compile_cache_hit"] == 1


def test_a_single_row_class_has_no_unbiased_variance():
    X = np.array([[0.0], [1.0], [3.0], [5.0], [2.5]])
    dataset = Dataset(
        name="single",
        X=X,
        y=np.array([0, 0, 1, 1, 2]),
        feature_names=("x",),
        class_names=("a", "b", "c"),
        feature_kinds=("continuous",),
    )
    with pytest.raises(NoEstimateError, match=r"unbiased estimate of gaussian_variance\['c', 'x'\].*1 row"):
        NaiveBayes().point_estimate(dataset, "unbiased")


def test_map_of_a_beta_below_one_at_a_zero_count_does_not_exist(transport):
    """Beta(0.5 + 0, 0.5 + 2) for P(Raining | car) is unbounded at 0: no mode; the posterior mean exists."""
    model = NaiveBayes(prior=NaiveBayesPrior(binary_alpha=0.5, binary_beta=0.5))
    with pytest.raises(NoEstimateError, match=r"MAP of binary_proba\['car', 'Raining=yes'\].*posterior_mean"):
        model.point_estimate(transport, "map")
    assert np.isfinite(model.point_estimate(transport, "posterior_mean")["binary_proba"].values).all()


def test_mle_of_a_class_without_any_counts_does_not_exist():
    dataset = Dataset(
        name="words",
        X=np.array([[0, 0], [0, 0], [1, 2], [3, 0]]),
        y=np.array([0, 0, 1, 1]),
        feature_names=("w1", "w2"),
        class_names=("empty", "full"),
        feature_kinds=("count", "count"),
    )
    model = NaiveBayes()
    with pytest.raises(NoEstimateError, match=r"MLE of count_proba for class 'empty'.*posterior_mean"):
        model.point_estimate(dataset, "mle")
    np.testing.assert_allclose(model.point_estimate(dataset, "posterior_mean")["count_proba"].values[0], [0.5, 0.5])


def test_posterior_mean_variance_needs_a_shape_above_one():
    """E[sigma^2] = b_n/(a_n - 1) is infinite when a_n = a_0 + N_j/2 <= 1 (a single row and a_0 <= 1/2)."""
    X = np.array([[0.0], [1.0], [3.0], [5.0], [2.5]])
    dataset = Dataset(
        name="single",
        X=X,
        y=np.array([0, 0, 1, 1, 2]),
        feature_names=("x",),
        class_names=("a", "b", "c"),
        feature_kinds=("continuous",),
    )
    model = NaiveBayes(prior=NaiveBayesPrior(variance_alpha=0.4))
    with pytest.raises(NoEstimateError, match=r"variance_alpha above 0\.5 or use kind='map'"):
        model.point_estimate(dataset, "posterior_mean")
    assert np.isfinite(model.point_estimate(dataset, "map")["gaussian_variance"].values).all()


def test_unknown_point_estimate_kind_is_rejected(transport):
    with pytest.raises(ValueError, match=r"kind='median'.*'mle', 'map', 'posterior_mean', 'unbiased'"):
        NaiveBayes().point_estimate(transport, "median")


def test_a_row_impossible_under_every_class_gets_nan_and_a_warning(digits_binary):
    """pixel_0_0 is 0 in every training digit: under the MLE a 1 there has probability 0 in every class."""
    assert digits_binary.X[:, 0].max() == 0.0
    rows = digits_binary.X[:3].copy()
    rows[1, 0] = 1.0
    model = NaiveBayes()
    with pytest.warns(RuntimeWarning, match=r"1 row\(s\).*row 1.*probability 0 under every class"):
        proba = model.class_proba(model.point_estimate(digits_binary, "mle"), rows)
    assert np.isnan(proba.values[1]).all()
    assert np.isfinite(proba.values[[0, 2]]).all()
    tree = inference.fit(model, digits_binary, method="mle")
    with pytest.warns(RuntimeWarning, match="probability 0 under every class"):
        prediction = inference.predict(tree, rows)
    assert prediction["predicted"].values[1] == ""
    best = np.asarray(digits_binary.class_names)[proba.values[[0, 2]].argmax(axis=1)]
    assert list(prediction["predicted"].values[[0, 2]]) == list(best)
    # the posterior mean never makes a row impossible
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        proba = model.class_proba(model.point_estimate(digits_binary, "posterior_mean"), rows)
    assert np.isfinite(proba.values).all()


# --------------------------------------------------------------------------- provenance and registry


def test_hyperparameters_round_trip_through_to_dict():
    model = NaiveBayes(prior=ODD_PRIOR)
    assert model_from_dict(model.to_dict()) == model
    assert model_from_dict(json.loads(model.to_json())) == model
    assert model.to_dict()["model"] == "naive_bayes"
    assert model_from_dict(NaiveBayes().to_dict()) != model


def test_registry_builds_naive_bayes():
    model = get_model("naive_bayes")
    assert isinstance(model, NaiveBayes)
    assert model == NaiveBayes() and model.prior == NaiveBayesPrior()
    assert get_model("naive_bayes", prior={"binary_alpha": 2.0}).prior.binary_alpha == 2.0
    assert methods_of(model) == ("nuts", "exact", "laplace", "mle", "map", "posterior_mean", "unbiased")


def test_discretized_transport_categorical_mle_is_the_level_frequency(transport):
    """Seed 003's transport table with Distance discretised (short < 1.5 <= medium < 5 <= long): the MLE of
    P(Distance = level | mode) is the frequency table (eq 9.28 for multi-valued features), exactly."""
    coded = transport.discretized("Distance", edges=[1.5, 5.0], level_names=("short", "medium", "long"))
    estimate = NaiveBayes().point_estimate(coded, "mle")["category_proba"]
    assert list(estimate["category_level"].values) == ["Distance=short", "Distance=medium", "Distance=long"]
    expected = {  # trips: bike 1, 1, 10, 4 / bus 1, 2 / car 1, 10 / walk 2, 1
        "bike": [0.5, 0.25, 0.25],
        "bus": [0.5, 0.5, 0.0],
        "car": [0.5, 0.0, 0.5],
        "walk": [0.5, 0.5, 0.0],
    }
    for mode, row in expected.items():
        np.testing.assert_array_equal(estimate.sel({"class": mode}).values, row)


# -- generative sampling (the contract's sample_features) -------------------------------------------------------


def _mixed_dataset(n: int = 400, seed: int = 0) -> data.Dataset:
    """Every feature kind: a binary, a 3-level categorical, two count (word) columns and a continuous one."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    X = np.column_stack(
        [
            rng.random(n) < np.where(y == 1, 0.7, 0.2),
            rng.choice(3, n, p=[0.5, 0.3, 0.2]),
            rng.poisson(np.where(y == 1, 4.0, 1.0)),
            rng.poisson(2.0, n),
            rng.normal(np.where(y == 1, 1.0, -1.0), 1.0),
        ]
    ).astype(float)
    return data.Dataset(
        name="mixed",
        X=X,
        y=y,
        feature_names=("flag", "colour", "word_a", "word_b", "size"),
        class_names=("no", "yes"),
        feature_kinds=("binary", "categorical", "count", "count", "continuous"),
        category_names={"colour": ("red", "green", "blue")},
    )


def test_sample_features_draw_every_kind_from_its_class_distribution():
    """Frequencies and moments of 40,000 draws per class equal the parameters within 5 Monte-Carlo SEs."""
    dataset = _mixed_dataset()
    model = NaiveBayes()
    params = model.point_estimate(dataset, "posterior_mean")
    n = 40_000
    codes = np.repeat([0, 1], n)
    reference = np.zeros((2 * n, 5))
    reference[:, 2:4] = [3, 5]  # every row has 8 words: 3 + 5
    draws = model.sample_features(params, codes, random_seed=3, reference=reference)
    assert draws.dims == ("obs", "feature") and draws.shape == (2 * n, 5)
    x = draws.values
    np.testing.assert_array_equal(x[:, 2] + x[:, 3], 8)  # multinomial rows keep their totals
    for k in (0, 1):
        rows = x[codes == k]
        p = float(params["binary_proba"].isel({"class": k, "binary_feature": 0}))
        assert abs(rows[:, 0].mean() - p) < 5 * np.sqrt(p * (1 - p) / n)
        levels = params["category_proba"].isel({"class": k}).values
        frequencies = np.bincount(rows[:, 1].astype(int), minlength=3) / n
        np.testing.assert_array_less(np.abs(frequencies - levels), 5 * np.sqrt(levels * (1 - levels) / n))
        word = float(params["count_proba"].isel({"class": k, "count_feature": 0}))
        assert abs(rows[:, 2].mean() / 8 - word) < 5 * np.sqrt(word * (1 - word) / (8 * n))
        mean = float(params["gaussian_mean"].isel({"class": k}).squeeze())
        variance = float(params["gaussian_variance"].isel({"class": k}).squeeze())
        assert abs(rows[:, 4].mean() - mean) < 5 * np.sqrt(variance / n)
        assert abs(rows[:, 4].var() / variance - 1) < 5 * np.sqrt(2 / n)


def test_sample_features_over_posterior_draws_and_bad_input():
    dataset = _mixed_dataset(120, seed=1)
    model = NaiveBayes()
    posterior = model.exact_posterior(dataset, draws=4, chains=2, random_seed=0)
    draws = model.sample_features(posterior, dataset.y, random_seed=0, reference=dataset.X)
    assert draws.dims == ("chain", "draw", "obs", "feature") and draws.shape == (2, 4, 120, 5)
    assert set(np.unique(draws.values[..., 1])) <= {0.0, 1.0, 2.0}
    with pytest.raises(ValueError, match=r"class_codes must be an array of integer codes in 0..1"):
        model.sample_features(posterior, np.array([0, 2]), random_seed=0, reference=dataset.X[:2])
    with pytest.raises(ValueError, match="needs reference="):
        model.sample_features(posterior, dataset.y, random_seed=0)
    no_counts = dataset.select_features(["flag", "colour", "size"])
    simulated = model.simulate(model.point_estimate(no_counts, "map"), 50, random_seed=0)
    assert simulated.feature_kinds == no_counts.feature_kinds and simulated.n_obs == 50


def test_sample_features_use_each_parameter_sets_and_each_class_parameters():
    """Degenerate parameters (probabilities 0/1, one-hot levels and words, near-zero variances) that differ by
    draw and class make every draw a known value: each row takes its own class's parameters of its own draw."""
    dataset = _mixed_dataset(60, seed=2)
    model = NaiveBayes()
    params = model.point_estimate(dataset, "posterior_mean").expand_dims(draw=3).copy(deep=True)
    draw = np.arange(3)[:, np.newaxis]  # (draw, class)
    pattern = (draw + np.arange(2)) % 2  # 0/1 by draw and class
    params["binary_proba"].values[..., 0] = pattern
    params["category_proba"].values[:] = np.eye(3)[(draw + np.arange(2)) % 3]  # one level per draw and class
    params["count_proba"].values[:] = np.eye(2)[pattern]  # every word of the row on one column
    params["gaussian_mean"].values[..., 0] = 10.0 * draw + np.arange(2)
    params["gaussian_variance"].values[:] = 1e-12
    codes = np.arange(12) % 2
    reference = np.zeros((12, 5))
    reference[:, 2] = np.arange(12)  # row totals 0..11
    drawn = model.sample_features(params, codes, random_seed=0, reference=reference)
    assert drawn.dims == ("draw", "obs", "feature") and drawn.shape == (3, 12, 5)
    assert list(drawn["feature"].values) == list(dataset.feature_names)
    x = drawn.values
    row_pattern = pattern[:, codes]  # (draw, obs)
    np.testing.assert_array_equal(x[..., 0], row_pattern)
    np.testing.assert_array_equal(x[..., 1], (draw + codes) % 3)
    np.testing.assert_array_equal(x[..., 2], np.where(row_pattern == 0, np.arange(12), 0))
    np.testing.assert_array_equal(x[..., 3], np.where(row_pattern == 1, np.arange(12), 0))
    np.testing.assert_allclose(x[..., 4], 10.0 * draw + codes, atol=1e-4)


def test_sample_features_refuse_a_reference_that_does_not_fit():
    dataset = _mixed_dataset(40, seed=3)
    model = NaiveBayes()
    params = model.point_estimate(dataset, "map")
    with pytest.raises(ValueError, match=r"reference must have one row per class code \(40\), got 39 rows"):
        model.sample_features(params, dataset.y, random_seed=0, reference=dataset.X[:39])
    with pytest.raises(ValueError, match="reference"):
        model.sample_features(params, dataset.y, random_seed=0, reference=dataset.X[:, :4])  # a column short
    negative = dataset.X.copy()
    negative[0, 2] = -1.0
    with pytest.raises(ValueError, match="count features of reference must be non-negative whole numbers"):
        model.sample_features(params, dataset.y, random_seed=0, reference=negative)


def test_simulate_keeps_the_reference_totals_of_count_features():
    dataset = _mixed_dataset(200, seed=4)
    model = NaiveBayes()
    params = model.point_estimate(dataset, "posterior_mean")
    with pytest.raises(ValueError, match="needs reference="):
        model.simulate(params, 200, random_seed=0)
    with pytest.raises(ValueError, match=r"reference must have n=50 rows"):
        model.simulate(params, 50, random_seed=0, reference=dataset.X)
    simulated = model.simulate(params, 200, random_seed=0, reference=dataset.X)
    assert simulated.feature_kinds == dataset.feature_kinds and simulated.n_obs == 200
    np.testing.assert_array_equal(simulated.X[:, 2:4].sum(axis=1), dataset.X[:, 2:4].sum(axis=1))
