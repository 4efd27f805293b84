"""Tests of models.gaussian_class_conditional (gcc: LDA / QDA): scikit-learn parity, the closed forms
against direct numpy and the module docstring's Normal-Inverse-Wishart formulas, seed 001's generator,
the sufficient-statistic PyMC model against the per-row model and against scipy's densities, NUTS
against the exact conjugate posterior, the exact draws, the LKJ MAP, the Student-t posterior
predictive, prediction, linear discriminants, generative sampling and bad input."""

from __future__ import annotations

import dataclasses
import doctest
import json
import math

import arviz_stats as azs
import numpy as np
import pytest
import scipy.special
import scipy.stats
import xarray as xr
from pytensor.compile.mode import Mode
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis, QuadraticDiscriminantAnalysis

import bayesclass.models.gaussian_class_conditional as gaussian_class_conditional_module
from bayesclass import data, inference
from bayesclass.data import Dataset
from bayesclass.inference import SamplerSettings
from bayesclass.inference.engines.methods import methods_of
from bayesclass.models import (
    GaussianClassConditional,
    GaussianClassConditionalPrior,
    NoEstimateError,
    get_model,
    model_from_dict,
)

#: PyTensor functions evaluated a handful of times: the Python linker (no C compilation, which costs
#: 30-60 s per graph on a cold compile cache) with the fast_compile rewrites
FAST = {"mode": Mode(linker="py", optimizer="fast_compile")}
NUTS_SEED = 20240611
COVARIANCES = ("shared", "per-class")
IW = GaussianClassConditionalPrior(covariance_prior="inverse_wishart")
#: Normal-Inverse-Wishart hyperparameters away from every default (and from 1)
ODD_IW = GaussianClassConditionalPrior(
    covariance_prior="inverse_wishart",
    class_concentration=1.7,
    mean_strength=0.8,
    wishart_dof_offset=2.5,
    wishart_scale=0.6,
)
#: the same in raw units: m_0 = mean_center, Psi_0 = wishart_scale * I
ODD_IW_RAW = dataclasses.replace(ODD_IW, autoscale=False, mean_center=4.0, wishart_scale=0.3)
#: the session fits are in the data's units (not the default standardisation): the tests compare them with closed
#: forms computed on the raw rows
RAW_UNITS = False
#: an LKJ prior strong enough to move the MAP visibly away from the MLE on iris
STRONG_LKJ = GaussianClassConditionalPrior(lkj_eta=3.0, sd_sigma=0.5, mean_sigma=0.3, class_concentration=2.0)


# --------------------------------------------------------------------------- data and fits


def first_features(dataset: Dataset, count: int) -> Dataset:
    return dataclasses.replace(
        dataset,
        X=dataset.X[:, :count],
        feature_names=dataset.feature_names[:count],
        feature_kinds=dataset.feature_kinds[:count],
    )


def with_X(dataset: Dataset, X: np.ndarray) -> Dataset:
    return dataclasses.replace(dataset, X=X)


@pytest.fixture(scope="session")
def small_iris(iris) -> Dataset:
    """7 rows per class, 3 features: small PyTensor graphs with a different K, d and N_k."""
    rows = np.concatenate([np.flatnonzero(iris.y == k)[:7] for k in range(3)])
    return first_features(iris.subset(rows, name="small_iris"), 3)


@pytest.fixture(scope="session")
def unbalanced_iris(iris) -> Dataset:
    """50 setosa, 20 versicolor, 8 virginica rows: unequal kappa_k, nu_k and predictive scale factors per class."""
    return iris.subset(np.r_[0:50, 50:70, 100:108], name="unbalanced_iris")


@pytest.fixture(scope="session")
def seed001_large() -> Dataset:
    return data.seed001_gaussians(20_000, random_seed=1)


@pytest.fixture(scope="session")
def seed001_by_size() -> dict[int, Dataset]:
    return {n: data.seed001_gaussians(n, random_seed=7) for n in (200, 2_000, 20_000)}


@pytest.fixture(scope="session")
def nuts_iris_shared(iris):
    """NUTS on iris, shared covariance, inverse-Wishart prior (the Potential-based parametrisation)."""
    return inference.fit(
        GaussianClassConditional(prior=IW),
        iris,
        method="nuts",
        sampler=SamplerSettings(draws=1000, tune=500, chains=2, progressbar=False),
        standardize=RAW_UNITS,
        random_seed=NUTS_SEED,
    )


@pytest.fixture(scope="session")
def exact_iris_shared(iris):
    return inference.fit(
        GaussianClassConditional(prior=IW),
        iris,
        method="exact",
        sampler=SamplerSettings(draws=20_000, chains=2),
        standardize=RAW_UNITS,
        random_seed=1,
    )


@pytest.fixture(scope="session")
def seed001_lkj_data() -> Dataset:
    return data.seed001_gaussians(2_000, random_seed=5)


@pytest.fixture(scope="session")
def nuts_seed001_lkj(seed001_lkj_data):
    """NUTS under the default (LKJ) prior: the only NUTS fit of the default model."""
    return inference.fit(
        GaussianClassConditional(),
        seed001_lkj_data,
        method="nuts",
        sampler=SamplerSettings(draws=1000, tune=500, chains=2, progressbar=False),
        standardize=RAW_UNITS,
        random_seed=NUTS_SEED,
    )


# --------------------------------------------------------------------------- hand formulas


def class_rows(dataset: Dataset) -> list[np.ndarray]:
    return [dataset.X[dataset.y == k] for k in range(dataset.n_classes)]


def class_counts(dataset: Dataset) -> np.ndarray:
    return np.array([np.sum(dataset.y == k) for k in range(dataset.n_classes)], dtype=float)


def hand_mle(dataset: Dataset, covariance: str) -> dict[str, np.ndarray]:
    """pi = N_k/N, mu_k = class mean, Sigma_k = np.cov(bias=True); shared: sum_k (N_k/N) Sigma_k (seed 001 eq 10)."""
    rows = class_rows(dataset)
    n = class_counts(dataset)
    per_class = np.array([np.cov(r, rowvar=False, bias=True) for r in rows])
    sigma = np.einsum("k,kij->ij", n / n.sum(), per_class) if covariance == "shared" else per_class
    return {"class_prior": n / n.sum(), "class_mean": np.array([r.mean(axis=0) for r in rows]), "covariance": sigma}


def hand_unbiased_covariance(dataset: Dataset, covariance: str) -> np.ndarray:
    """np.cov(ddof=1) per class; shared: the pooled scatter / (N - K)."""
    rows = class_rows(dataset)
    if covariance == "per-class":
        return np.array([np.cov(r, rowvar=False, ddof=1) for r in rows])
    scatter = sum((r - r.mean(axis=0)).T @ (r - r.mean(axis=0)) for r in rows)
    return scatter / (dataset.n_obs - dataset.n_classes)


def prior_center_and_scale(dataset: Dataset, prior: GaussianClassConditionalPrior) -> tuple[np.ndarray, np.ndarray]:
    """m_0 and Psi_0 (module docstring: pooled mean and wishart_scale * diag(pooled variances) with autoscale)."""
    d = dataset.n_features
    if prior.autoscale:
        return dataset.X.mean(axis=0), prior.wishart_scale * np.diag(dataset.X.var(axis=0))
    return np.full(d, prior.mean_center), prior.wishart_scale * np.eye(d)


def hand_niw(dataset: Dataset, prior: GaussianClassConditionalPrior, covariance: str) -> dict[str, np.ndarray]:
    """The Normal-Inverse-Wishart update, class by class, from the module docstring.

    Returns alpha_n (K,), kappa (K,), m (K, d), Psi (G, d, d) and nu (G,), G = 1 shared or K per class.
    """
    d = dataset.n_features
    m0, psi0 = prior_center_and_scale(dataset, prior)
    kappa0, nu0 = prior.mean_strength, d + 1 + prior.wishart_dof_offset
    kappa, m, terms, n = [], [], [], class_counts(dataset)
    for rows in class_rows(dataset):
        xbar = rows.mean(axis=0)
        scatter = (rows - xbar).T @ (rows - xbar)
        kappa.append(kappa0 + len(rows))
        m.append((kappa0 * m0 + len(rows) * xbar) / kappa[-1])
        terms.append(scatter + kappa0 * len(rows) / kappa[-1] * np.outer(xbar - m0, xbar - m0))
    if covariance == "shared":
        psi, nu = (psi0 + sum(terms))[np.newaxis], np.array([nu0 + n.sum()])
    else:
        psi, nu = psi0 + np.array(terms), nu0 + n
    return {"alpha": prior.class_concentration + n, "kappa": np.array(kappa), "m": np.array(m), "psi": psi, "nu": nu}


def squeeze_shared(array: np.ndarray, covariance: str) -> np.ndarray:
    return array[0] if covariance == "shared" else array


def per_class_covariances(params: xr.Dataset, n_classes: int) -> np.ndarray:
    sigma = params["covariance"].values
    return np.broadcast_to(sigma, (n_classes, *sigma.shape)) if sigma.ndim == 2 else sigma


def log_likelihood(dataset: Dataset, mean: np.ndarray, sigma: np.ndarray) -> float:
    """sum over rows of log N(x_n | mu_{t_n}, Sigma_{t_n}) by scipy, one class at a time (no pi terms)."""
    return float(
        sum(
            scipy.stats.multivariate_normal.logpdf(rows, mean[k], sigma[k]).sum()
            for k, rows in enumerate(class_rows(dataset))
        )
    )


def lkj_log_density(dataset: Dataset, prior, mean: np.ndarray, sigma: np.ndarray, shared: bool) -> float:
    """log p(D | mu, Sigma) + log p(mu) + log p(Sigma) under the LKJ prior, from the module docstring:
    mu_ki ~ N(m_0i, s_0i^2), log p(Sigma) = (eta - 1) log|Sigma| - (eta - 1 + d/2) sum_i log Sigma_ii
    - sum_i Sigma_ii / (2 tau_i^2), with autoscaled s_0 = mean_sigma * sd, tau = sd_sigma * sd."""
    sd = dataset.X.std(axis=0)
    m0, s0, tau, eta, d = dataset.X.mean(axis=0), prior.mean_sigma * sd, prior.sd_sigma * sd, prior.lkj_eta, len(sd)
    groups = sigma[:1] if shared else sigma
    log_prior_sigma = sum(
        (eta - 1) * np.linalg.slogdet(s)[1]
        - (eta - 1 + d / 2) * np.log(np.diag(s)).sum()
        - np.sum(np.diag(s) / (2 * tau**2))
        for s in groups
    )
    log_prior_mean = scipy.stats.norm.logpdf(mean, m0, s0).sum()
    return log_likelihood(dataset, mean, sigma) + log_prior_mean + log_prior_sigma


def niw_log_density(dataset: Dataset, prior, mean: np.ndarray, sigma: np.ndarray, shared: bool) -> float:
    """log p(D | mu, Sigma) + log InvWishart(Sigma | Psi_0, nu_0) + sum_k log N(mu_k | m_0, Sigma/kappa_0) by scipy."""
    d = dataset.n_features
    m0, psi0 = prior_center_and_scale(dataset, prior)
    nu0, kappa0 = d + 1 + prior.wishart_dof_offset, prior.mean_strength
    groups = sigma[:1] if shared else sigma
    log_prior_sigma = sum(scipy.stats.invwishart.logpdf(s, df=nu0, scale=psi0) for s in groups)
    log_prior_mean = sum(
        scipy.stats.multivariate_normal.logpdf(mean[k], m0, sigma[k] / kappa0) for k in range(len(mean))
    )
    return log_likelihood(dataset, mean, sigma) + log_prior_mean + log_prior_sigma


def assert_coordinatewise_maximum(log_density, mean: np.ndarray, sigma: np.ndarray, shared: bool, step: float) -> None:
    """Moving any class mean entry, or any (symmetric) covariance entry, by +-step standard deviations never
    increases the log density: the estimate is a stationary point (a maximum)."""
    base = log_density(mean, sigma)
    sd = np.sqrt(np.diagonal(sigma, axis1=-2, axis2=-1))  # (K, d)
    worst = -np.inf
    for k, j in np.ndindex(mean.shape):
        for sign in (-1, 1):
            moved = mean.copy()
            moved[k, j] += sign * step * sd[k, j]
            worst = max(worst, log_density(moved, sigma) - base)
    d = sigma.shape[-1]
    for g in range(1 if shared else sigma.shape[0]):
        for i, j in zip(*np.tril_indices(d), strict=True):
            for sign in (-1, 1):
                moved = sigma.copy()
                delta = sign * step * sd[g, i] * sd[g, j]
                rows = slice(None) if shared else g
                moved[rows, i, j] += delta
                if i != j:
                    moved[rows, j, i] += delta
                worst = max(worst, log_density(mean, moved) - base)
    assert worst <= 1e-9 * max(1.0, abs(base)), worst


# --------------------------------------------------------------------------- scikit-learn parity


@pytest.mark.parametrize("solver", ["svd", "lsqr", "eigen"])
def test_mle_shared_is_sklearn_linear_discriminant_analysis(wine, solver):
    model = GaussianClassConditional(covariance="shared")
    mle = model.point_estimate(wine, "mle")
    reference = LinearDiscriminantAnalysis(solver=solver, store_covariance=True).fit(wine.X, wine.y)
    np.testing.assert_allclose(
        model.class_proba(mle, wine.X).values, reference.predict_proba(wine.X), rtol=0, atol=1e-10
    )
    np.testing.assert_allclose(mle["class_mean"].values, reference.means_, rtol=1e-10)
    np.testing.assert_allclose(mle["class_prior"].values, reference.priors_, rtol=1e-10)
    scale = np.abs(reference.covariance_).max()
    np.testing.assert_allclose(mle["covariance"].values, reference.covariance_, rtol=1e-10, atol=1e-10 * scale)
    # the probabilities are far from uniform: the comparison is not vacuous
    assert reference.predict_proba(wine.X).max(axis=1).mean() > 0.95


def test_mle_per_class_is_sklearn_quadratic_discriminant_analysis(wine):
    """scikit-learn >= 1.6 divides the class covariances by N_k (ddof 0), as the MLE does."""
    model = GaussianClassConditional(covariance="per-class")
    mle = model.point_estimate(wine, "mle")
    reference = QuadraticDiscriminantAnalysis().fit(wine.X, wine.y)
    np.testing.assert_allclose(
        model.class_proba(mle, wine.X).values, reference.predict_proba(wine.X), rtol=0, atol=1e-10
    )
    stored = QuadraticDiscriminantAnalysis(store_covariance=True).fit(wine.X, wine.y)
    covariance = np.array(stored.covariance_)
    np.testing.assert_allclose(mle["covariance"].values, covariance, rtol=1e-10, atol=1e-10 * np.abs(covariance).max())
    np.testing.assert_allclose(mle["class_mean"].values, stored.means_, rtol=1e-10)
    np.testing.assert_allclose(mle["class_prior"].values, stored.priors_, rtol=1e-10)


@pytest.mark.parametrize("covariance", COVARIANCES)
def test_unbiased_kind_divides_by_n_minus_one_and_n_minus_k(wine, covariance):
    model = GaussianClassConditional(covariance=covariance)
    unbiased = model.point_estimate(wine, "unbiased")
    expected = hand_unbiased_covariance(wine, covariance)
    np.testing.assert_allclose(unbiased["covariance"].values, expected, rtol=1e-10, atol=1e-10 * np.abs(expected).max())
    mle = model.point_estimate(wine, "mle")
    xr.testing.assert_identical(unbiased["class_mean"], mle["class_mean"])
    xr.testing.assert_identical(unbiased["class_prior"], mle["class_prior"])
    assert unbiased.attrs["kind"] == "unbiased"
    # per class: the MLE is N_k/(N_k - 1) times smaller, not the same number
    ratio = mle["covariance"].values / unbiased["covariance"].values
    n = class_counts(wine)
    expected_ratio = (n.sum() - len(n)) / n.sum() if covariance == "shared" else ((n - 1) / n)[:, None, None]
    np.testing.assert_allclose(ratio, np.broadcast_to(expected_ratio, ratio.shape), rtol=1e-10)


# --------------------------------------------------------------------------- closed forms against numpy


@pytest.mark.parametrize("name", ["iris", "wine"])
@pytest.mark.parametrize("covariance", COVARIANCES)
def test_mle_is_the_class_frequency_mean_and_biased_covariance(name, covariance):
    """Seed 001 eqs 7-10: pi = N_k/N, mu_k = class mean, Sigma = sum_k (N_k/N) S_k/N_k (shared) or S_k/N_k."""
    dataset = data.load(name)
    mle = GaussianClassConditional(covariance=covariance).point_estimate(dataset, "mle")
    hand = hand_mle(dataset, covariance)
    for variable, expected in hand.items():
        np.testing.assert_allclose(mle[variable].values, expected, rtol=1e-12, atol=1e-12 * np.abs(expected).max())
    assert mle.attrs["kind"] == "mle"
    dims = ("feature", "other_feature") if covariance == "shared" else ("class", "feature", "other_feature")
    assert mle["covariance"].dims == dims
    assert mle["class_mean"].dims == ("class", "feature") and mle["class_prior"].dims == ("class",)
    assert list(mle["class"].values) == list(dataset.class_names)
    assert list(mle["feature"].values) == list(mle["other_feature"].values) == list(dataset.feature_names)


@pytest.mark.parametrize("prior", [IW, ODD_IW, ODD_IW_RAW], ids=["default", "odd", "odd_raw_units"])
@pytest.mark.parametrize("covariance", COVARIANCES)
def test_niw_map_and_posterior_mean_are_the_docstring_formulas(iris, prior, covariance):
    """MAP: pi_k = (N_k + a - 1)/(N + K a - K), mu_k = m_k, Sigma = Psi_n/(nu_n + d + 1 + K) shared,
    Psi_k/(nu_k + d + 2) per class. Posterior mean: (N_k + a)/(N + K a), m_k, Psi/(nu - d - 1)."""
    model = GaussianClassConditional(covariance=covariance, prior=prior)
    hand = hand_niw(iris, prior, covariance)
    d, K, n = iris.n_features, iris.n_classes, class_counts(iris)
    a = prior.class_concentration
    map_ = model.point_estimate(iris, "map")
    mean = model.point_estimate(iris, "posterior_mean")
    extra = K if covariance == "shared" else 1
    psi, nu = hand["psi"], hand["nu"][:, None, None]
    np.testing.assert_allclose(
        map_["covariance"].values, squeeze_shared(psi / (nu + d + 1 + extra), covariance), rtol=1e-12
    )
    np.testing.assert_allclose(mean["covariance"].values, squeeze_shared(psi / (nu - d - 1), covariance), rtol=1e-12)
    np.testing.assert_allclose(map_["class_mean"].values, hand["m"], rtol=1e-12)
    np.testing.assert_allclose(mean["class_mean"].values, hand["m"], rtol=1e-12)
    np.testing.assert_allclose(map_["class_prior"].values, (n + a - 1) / (n.sum() + K * a - K), rtol=1e-12)
    np.testing.assert_allclose(mean["class_prior"].values, (n + a) / (n.sum() + K * a), rtol=1e-12)
    assert map_.attrs["kind"] == "map" and mean.attrs["kind"] == "posterior_mean"
    # the prior matters: neither estimate is the MLE
    mle = model.point_estimate(iris, "mle")
    assert not np.allclose(map_["covariance"].values, mle["covariance"].values, rtol=1e-3)


@pytest.mark.parametrize("covariance", COVARIANCES)
def test_niw_map_is_the_joint_mode_of_scipy_densities(iris, covariance):
    """The closed-form MAP maximises log p(D | mu, Sigma) + log InvWishart(Sigma) + log N(mu_k | m_0, Sigma/kappa_0),
    each term evaluated by scipy (an independent check of the (nu + d + 1 + K) divisor)."""
    model = GaussianClassConditional(covariance=covariance, prior=ODD_IW)
    estimate = model.point_estimate(iris, "map")
    shared = covariance == "shared"
    sigma = per_class_covariances(estimate, iris.n_classes).copy()
    assert_coordinatewise_maximum(
        lambda mean, s: niw_log_density(iris, ODD_IW, mean, s, shared),
        estimate["class_mean"].values.copy(),
        sigma,
        shared,
        step=1e-3,
    )


def test_module_docstring_example_runs():
    result = doctest.testmod(gaussian_class_conditional_module, verbose=False)
    assert result.attempted >= 3
    assert result.failed == 0


# --------------------------------------------------------------------------- seed 001


def test_seed001_mle_recovers_the_generator_within_three_standard_errors(seed001_large):
    """Seed 001 §B.1: P(C1) = 0.7, means [2, 1] and [1, 2], identity covariances."""
    dataset = seed001_large
    N, n = dataset.n_obs, class_counts(dataset)
    true_prior = np.array([0.7, 0.3])
    for covariance in COVARIANCES:
        mle = GaussianClassConditional(covariance=covariance).point_estimate(dataset, "mle")
        assert (np.abs(mle["class_prior"].values - true_prior) <= 3 * np.sqrt(0.7 * 0.3 / N)).all()
        mean_error = np.abs(mle["class_mean"].values - data.synthetic.SEED001_MEANS) / np.sqrt(1 / n)[:, None]
        assert mean_error.max() <= 3, mean_error
        # SE of a covariance entry for identity truth: sqrt((Sigma_ii Sigma_jj + Sigma_ij^2) / N)
        se = np.sqrt((1 + np.eye(2)) / N) if covariance == "shared" else np.sqrt((1 + np.eye(2)) / n[:, None, None])
        covariance_error = np.abs(mle["covariance"].values - np.eye(2)) / se
        assert covariance_error.max() <= 3, covariance_error


def test_seed001_decision_boundary_is_the_true_hyperplane(seed001_large):
    """Seed 001 §D eq 14: w = Sigma^-1 (mu_1 - mu_2) = [1, -1], w_0 = ln(0.7/0.3) (equal norms of the means)."""
    model = GaussianClassConditional(covariance="shared")
    mle = model.point_estimate(seed001_large, "mle")
    boundary = model.decision_boundary(mle, "C1", "C2")
    assert boundary["weight"].dims == ("feature",) and boundary["bias"].dims == ()
    np.testing.assert_allclose(boundary["weight"].values, [1.0, -1.0], rtol=0, atol=0.06)
    assert abs(float(boundary["bias"]) - math.log(0.7 / 0.3)) <= 0.06
    # the hyperplane IS the log-odds of the fitted classifier, and swapping the classes negates it
    X = seed001_large.X[:50]
    log_proba = model.class_log_proba(mle, X)
    log_odds = (log_proba.sel({"class": "C1"}) - log_proba.sel({"class": "C2"})).values
    np.testing.assert_allclose(
        X @ boundary["weight"].values + float(boundary["bias"]), log_odds, rtol=1e-10, atol=1e-10
    )
    swapped = model.decision_boundary(mle, "C2", "C1")
    xr.testing.assert_allclose(swapped, -boundary)


# --------------------------------------------------------------------------- the PyMC model


@pytest.mark.parametrize(  # each layout and each prior runs by default; shared-lkj (the slowest to compile) is slow
    ("covariance", "covariance_prior"),
    [
        pytest.param(
            covariance,
            prior,
            id=f"{covariance}-{prior}",
            marks=[pytest.mark.slow] if (covariance, prior) == ("shared", "lkj") else [],
        )
        for prior in ("lkj", "inverse_wishart")
        for covariance in COVARIANCES
    ],
)
def test_sufficient_statistic_model_is_the_per_observation_model(small_iris, covariance_prior, covariance):
    """Module docstring, "Likelihood by sufficient statistics": the same density (including the 2 pi constant)
    and the same gradient at points far apart in density."""
    model = GaussianClassConditional(
        covariance=covariance, prior=GaussianClassConditionalPrior(covariance_prior=covariance_prior)
    )
    sufficient = model.build(small_iris)
    reference = model.build(small_iris, likelihood="per_observation")
    assert sorted(v.name for v in sufficient.value_vars) == sorted(v.name for v in reference.value_vars)
    logp_sufficient, logp_reference = sufficient.compile_logp(**FAST), reference.compile_logp(**FAST)
    dlogp_sufficient = sufficient.compile_dlogp(vars=sorted(sufficient.free_RVs, key=lambda rv: rv.name), **FAST)
    dlogp_reference = reference.compile_dlogp(vars=sorted(reference.free_RVs, key=lambda rv: rv.name), **FAST)
    rng = np.random.default_rng(2024)
    start = sufficient.initial_point()
    differences, values = [], []
    for _ in range(5):
        point = {key: value + rng.normal(scale=0.5, size=np.shape(value)) for key, value in start.items()}
        values.append(logp_sufficient(point))
        differences.append(values[-1] - logp_reference(point))
        gradient = dlogp_sufficient(point)
        np.testing.assert_allclose(gradient, dlogp_reference(point), rtol=1e-10, atol=1e-8)
        assert np.abs(gradient).max() > 1.0
    assert np.ptp(values) > 1.0  # the points are far apart in density ...
    np.testing.assert_allclose(differences, 0.0, rtol=0, atol=1e-9 + 1e-12 * np.abs(values).max())  # ... and equal


def vech(matrix: np.ndarray) -> np.ndarray:
    return matrix[np.tril_indices(matrix.shape[-1])]


def covariance_from_free(log_diagonal: np.ndarray, lower: np.ndarray, unit: np.ndarray) -> np.ndarray:
    """Sigma = L L', L = diag(unit) L~, L~ with diagonal exp(log_diagonal) and strict lower triangle ``lower``."""
    d = len(log_diagonal)
    factor = np.zeros((d, d))
    factor[np.diag_indices(d)] = np.exp(log_diagonal)
    factor[np.tril_indices(d, -1)] = lower
    factor = unit[:, None] * factor
    return factor @ factor.T


def log_jacobian(log_diagonal: np.ndarray, lower: np.ndarray, unit: np.ndarray, step: float = 1e-6) -> float:
    """log |d vech(Sigma) / d (log_diagonal, lower)| by central differences (no formula shared with the model)."""
    theta = np.concatenate([log_diagonal, lower])
    d = len(log_diagonal)

    def image(vector):
        return vech(covariance_from_free(vector[:d], vector[d:], unit))

    columns = []
    for i in range(theta.size):
        e = np.zeros_like(theta)
        e[i] = step
        columns.append((image(theta + e) - image(theta - e)) / (2 * step))
    return float(np.linalg.slogdet(np.column_stack(columns))[1])


@pytest.mark.parametrize("prior", [ODD_IW, ODD_IW_RAW], ids=["autoscaled", "raw_units"])
@pytest.mark.parametrize("covariance", COVARIANCES)
def test_inverse_wishart_model_density_is_scipys(small_iris, prior, covariance):
    """The Potential-based NIW model (free Cholesky log-diagonal and lower triangle) equals, up to a constant,
    scipy's InvWishart(Psi_0, nu_0) + N(m_0, Sigma/kappa_0) per class mean + the per-row Gaussian likelihood,
    moved to the free variables by a numerically differentiated Jacobian."""
    dataset = small_iris
    model = GaussianClassConditional(covariance=covariance, prior=prior)
    built = model.build(dataset)
    logp = built.compile_logp(**FAST)
    unit = dataset.X.std(axis=0) if prior.autoscale else np.ones(dataset.n_features)
    K, shared = dataset.n_classes, covariance == "shared"
    rng = np.random.default_rng(7)
    start = built.initial_point()
    differences, values = [], []
    for _ in range(5):
        point = dict(start)  # class_prior fixed: its Dirichlet and N_k log pi_k terms are a constant
        for name in ("cholesky_log_diagonal", "cholesky_lower"):
            point[name] = start[name] + rng.normal(scale=0.3, size=np.shape(start[name]))
        point["class_mean"] = dataset.X.mean(axis=0) + rng.normal(scale=0.5, size=(K, dataset.n_features))
        log_diagonal = np.atleast_2d(point["cholesky_log_diagonal"])
        lower = np.atleast_2d(point["cholesky_lower"])
        groups = [covariance_from_free(log_diagonal[g], lower[g], unit) for g in range(len(log_diagonal))]
        sigma = np.array(groups * K if shared else groups)
        reference = niw_log_density(dataset, prior, point["class_mean"], sigma, shared)
        reference += sum(log_jacobian(log_diagonal[g], lower[g], unit) for g in range(len(log_diagonal)))
        values.append(logp(point))
        differences.append(values[-1] - reference)
    assert np.ptp(values) > 10.0
    np.testing.assert_allclose(differences, differences[0], rtol=0, atol=1e-6)


def test_built_model_has_the_named_variables_and_dims(iris):
    for covariance, group in (("shared", ()), ("per-class", ("class",))):
        for prior in (GaussianClassConditionalPrior(), IW):
            built = GaussianClassConditional(covariance=covariance, prior=prior).build(iris)
            dims = built.named_vars_to_dims
            assert dims["class_prior"] == ("class",)
            assert dims["class_mean"] == ("class", "feature")
            assert dims["covariance"] == (*group, "feature", "other_feature")
    with pytest.raises(ValueError, match=r"likelihood must be 'sufficient_statistics' or 'per_observation'"):
        GaussianClassConditional().build(iris, likelihood="rows")


# --------------------------------------------------------------------------- NUTS against the exact posterior


def assert_nuts_matches_exact(nuts: xr.Dataset, exact: xr.Dataset, bound: float = 4.0) -> None:
    """For every element of class_prior, class_mean and covariance: mean and sd within `bound` combined MCSEs."""
    for statistic, reduce in (
        ("mean", lambda d: d.mean(("chain", "draw"))),
        ("sd", lambda d: d.std(("chain", "draw"))),
    ):
        mcse_nuts = azs.mcse(nuts, sample_dims=("chain", "draw"), method=statistic)
        mcse_exact = azs.mcse(exact, sample_dims=("chain", "draw"), method=statistic)
        for name in ("class_prior", "class_mean", "covariance"):
            difference = np.abs(reduce(nuts[name]) - reduce(exact[name]))
            combined = np.sqrt(mcse_nuts[name] ** 2 + mcse_exact[name] ** 2)
            assert (difference <= bound * combined).all(), (statistic, name, float((difference / combined).max()))


def test_nuts_agrees_with_the_exact_posterior_shared(nuts_iris_shared, exact_iris_shared):
    nuts = nuts_iris_shared["posterior"].to_dataset()
    exact = exact_iris_shared["posterior"].to_dataset()
    assert (nuts.sizes["chain"], nuts.sizes["draw"]) == (2, 1000)
    assert (exact.sizes["chain"], exact.sizes["draw"]) == (2, 20_000)
    assert nuts["covariance"].dims == exact["covariance"].dims == ("chain", "draw", "feature", "other_feature")
    assert int(nuts_iris_shared["sample_stats"]["diverging"].sum()) == 0
    assert_nuts_matches_exact(nuts, exact)


@pytest.mark.slow
def test_nuts_agrees_with_the_exact_posterior_per_class(iris):
    model = GaussianClassConditional(covariance="per-class", prior=IW)
    nuts = inference.fit(
        model,
        iris,
        method="nuts",
        sampler=SamplerSettings(draws=1000, tune=500, chains=2, progressbar=False),
        standardize=RAW_UNITS,
        random_seed=NUTS_SEED,
    )
    exact = model.exact_posterior(iris, draws=20_000, chains=2, random_seed=3)
    assert int(nuts["sample_stats"]["diverging"].sum()) == 0
    assert nuts["posterior"]["covariance"].dims == ("chain", "draw", "class", "feature", "other_feature")
    assert_nuts_matches_exact(nuts["posterior"].to_dataset(), exact)


@pytest.mark.slow
def test_nuts_per_class_lkj_has_no_divergences_and_centres_on_the_mle(iris):
    model = GaussianClassConditional(covariance="per-class")
    nuts = inference.fit(
        model,
        iris,
        method="nuts",
        sampler=SamplerSettings(draws=500, tune=500, chains=2, progressbar=False),
        standardize=False,  # in the units of the MLE it is compared with
        random_seed=NUTS_SEED,
    )
    assert int(nuts["sample_stats"]["diverging"].sum()) == 0
    posterior = nuts["posterior"].to_dataset()
    mle = model.point_estimate(iris, "mle")
    sd = posterior["class_mean"].std(("chain", "draw"))
    assert (np.abs(posterior["class_mean"].mean(("chain", "draw")) - mle["class_mean"]) <= 3 * sd).all()


def test_lkj_nuts_posterior_matches_the_niw_posterior_at_large_n(nuts_seed001_lkj, seed001_lkj_data):
    """Bernstein-von Mises: with n = 2000 and weak priors the LKJ posterior (NUTS) and the NIW posterior (exact)
    have the same means and sds up to the prior's O(1/n) pull; class_prior has the same Dirichlet posterior."""
    assert int(nuts_seed001_lkj["sample_stats"]["diverging"].sum()) == 0
    nuts = nuts_seed001_lkj["posterior"].to_dataset()
    exact = GaussianClassConditional(prior=IW).exact_posterior(seed001_lkj_data, draws=20_000, chains=2, random_seed=4)
    mcse_mean = azs.mcse(nuts, sample_dims=("chain", "draw"), method="mean")
    mcse_sd = azs.mcse(nuts, sample_dims=("chain", "draw"), method="sd")
    for name in ("class_prior", "class_mean", "covariance"):
        sd = exact[name].std(("chain", "draw"))
        slack = 0.0 if name == "class_prior" else 0.25
        mean_gap = np.abs(nuts[name].mean(("chain", "draw")) - exact[name].mean(("chain", "draw")))
        assert (mean_gap <= 4 * mcse_mean[name] + slack * sd + 4 * sd / 200).all(), (name, float((mean_gap / sd).max()))
        sd_gap = np.abs(nuts[name].std(("chain", "draw")) - sd)
        assert (sd_gap <= 4 * mcse_sd[name] + (0.0 if name == "class_prior" else 0.1) * sd).all(), name


# --------------------------------------------------------------------------- the exact posterior


def test_exact_niw_draws_match_the_closed_form_moments(exact_iris_shared, iris):
    """E[Sigma] = Psi/(nu - d - 1) (the posterior_mean kind), E[mu_k] = m_k, Var(mu_k) = E[Sigma]/kappa_k,
    Var(Sigma_ij) of the inverse Wishart, E[pi] = (N_k + a)/(N + K a); within 5 Monte-Carlo standard errors."""
    draws = exact_iris_shared["posterior"].to_dataset()
    hand = hand_niw(iris, IW, "shared")
    d, size = iris.n_features, draws.sizes["chain"] * draws.sizes["draw"]
    psi, nu = hand["psi"][0], hand["nu"][0]
    expected_sigma = psi / (nu - d - 1)
    stored = exact_iris_shared["point_estimate_posterior_mean"].to_dataset()
    np.testing.assert_allclose(stored["covariance"].values, expected_sigma, rtol=1e-12)

    def within_mc_error(variable: xr.DataArray, expected: np.ndarray) -> None:
        error = np.abs(variable.mean(("chain", "draw")).values - expected)
        standard_error = variable.std(("chain", "draw")).values / np.sqrt(size)
        assert (error <= 5 * standard_error).all(), (variable.name, float((error / standard_error).max()))

    within_mc_error(draws["covariance"], expected_sigma)
    within_mc_error(draws["class_mean"], hand["m"])
    within_mc_error(draws["class_prior"], hand["alpha"] / hand["alpha"].sum())
    # second moments (relative MC error of a variance with 40,000 light-tailed draws: about 1%)
    variance_mean = draws["class_mean"].var(("chain", "draw")).values
    np.testing.assert_allclose(variance_mean, np.diag(expected_sigma) / hand["kappa"][:, None], rtol=0.05)
    p = nu - d
    variance_sigma = ((p + 1) * psi**2 + (p - 1) * np.outer(np.diag(psi), np.diag(psi))) / (p * (p - 1) ** 2 * (p - 3))
    np.testing.assert_allclose(draws["covariance"].var(("chain", "draw")).values, variance_sigma, rtol=0.05)


def test_exact_per_class_draws_match_the_closed_form_moments(unbalanced_iris):
    """Per class, with unequal class sizes (kappa_k = 50.8, 20.8, 8.8): E[Sigma_k] = Psi_k/(nu_k - d - 1),
    E[mu_k] = m_k, Var(mu_k) = diag(E[Sigma_k])/kappa_k."""
    dataset = unbalanced_iris
    model = GaussianClassConditional(covariance="per-class", prior=ODD_IW)
    draws = model.exact_posterior(dataset, draws=20_000, chains=2, random_seed=9)
    hand = hand_niw(dataset, ODD_IW, "per-class")
    d, size = dataset.n_features, 40_000
    expected_sigma = hand["psi"] / (hand["nu"] - d - 1)[:, None, None]
    for name, expected in (("covariance", expected_sigma), ("class_mean", hand["m"])):
        error = np.abs(draws[name].mean(("chain", "draw")).values - expected)
        standard_error = draws[name].std(("chain", "draw")).values / np.sqrt(size)
        assert (error <= 5 * standard_error).all(), (name, float((error / standard_error).max()))
    variance_mean = draws["class_mean"].var(("chain", "draw")).values
    expected_variance = np.diagonal(expected_sigma, axis1=1, axis2=2) / hand["kappa"][:, None]
    np.testing.assert_allclose(variance_mean, expected_variance, rtol=0.05)
    estimate = model.point_estimate(dataset, "posterior_mean")
    np.testing.assert_allclose(estimate["covariance"].values, expected_sigma, rtol=1e-12)


@pytest.mark.parametrize("covariance", COVARIANCES)
def test_exact_posterior_is_reproducible_by_seed_and_has_the_layout(iris, covariance):
    model = GaussianClassConditional(covariance=covariance, prior=IW)
    first = model.exact_posterior(iris, draws=30, chains=3, random_seed=5)
    xr.testing.assert_identical(first, model.exact_posterior(iris, draws=30, chains=3, random_seed=5))
    other = model.exact_posterior(iris, draws=30, chains=3, random_seed=6)
    for name in first.data_vars:
        assert not np.allclose(first[name].values, other[name].values), name
    estimate = model.point_estimate(iris, "posterior_mean")
    assert set(first.data_vars) == {"class_prior", "class_mean", "covariance"}
    for name, variable in first.data_vars.items():
        assert variable.dims == ("chain", "draw", *estimate[name].dims), name
        assert variable.shape == (3, 30, *estimate[name].shape), name
    assert list(first["class"].values) == list(iris.class_names)
    assert list(first["feature"].values) == list(iris.feature_names)
    sigma = first["covariance"].values
    np.testing.assert_array_equal(sigma, sigma.swapaxes(-1, -2))
    assert (np.linalg.eigvalsh(sigma) > 0).all()
    np.testing.assert_allclose(first["class_prior"].sum("class").values, 1.0, rtol=0, atol=1e-12)
    assert not np.allclose(first["covariance"].isel(chain=0).values, first["covariance"].isel(chain=1).values)


def test_exact_fit_stores_every_point_estimate(exact_iris_shared, iris):
    tree = exact_iris_shared
    kinds = ("mle", "map", "unbiased", "posterior_mean", "posterior_predictive")
    assert json.loads(tree.attrs["point_estimate_status"]) == {kind: "exists" for kind in kinds}
    model = GaussianClassConditional(prior=IW)
    for kind in kinds:
        xr.testing.assert_identical(tree[f"point_estimate_{kind}"].to_dataset(), model.point_estimate(iris, kind))
    assert inference.model_of(tree) == model
    assert methods_of(model) == ("nuts", "exact", "laplace", *kinds)
    assert methods_of(GaussianClassConditional()) == ("nuts", "laplace", "mle", "map", "unbiased")


def test_posterior_concentrates_at_rate_one_over_sqrt_n(seed001_by_size):
    """Seed 001 data of n = 200, 2,000, 20,000 rows: the exact posterior sd of class_mean and covariance shrinks
    like 1/sqrt(n), and the posterior mean approaches the MLE."""
    model = GaussianClassConditional(prior=IW)
    sds, distances = {}, {}
    for n, dataset in seed001_by_size.items():
        draws = model.exact_posterior(dataset, draws=4_000, chains=1, random_seed=n)
        sds[n] = {name: draws[name].std(("chain", "draw")).values for name in ("class_mean", "covariance")}
        mean, mle = model.point_estimate(dataset, "posterior_mean"), model.point_estimate(dataset, "mle")
        distances[n] = max(
            float(np.abs(mean[name] - mle[name]).max()) for name in ("class_mean", "covariance", "class_prior")
        )
        # the draws' mean is the closed form (within Monte-Carlo error)
        error = np.abs(draws["class_mean"].mean(("chain", "draw")).values - mean["class_mean"].values)
        assert (error <= 5 * sds[n]["class_mean"] / np.sqrt(4_000)).all()
    for small, large in ((200, 2_000), (2_000, 20_000)):
        for name in ("class_mean", "covariance"):
            ratio = sds[small][name] / sds[large][name]
            assert ((ratio > math.sqrt(10) / 1.25) & (ratio < math.sqrt(10) * 1.25)).all(), (name, ratio)
        assert distances[large] < distances[small] / 3, distances
    assert distances[20_000] < 1e-3


# --------------------------------------------------------------------------- the LKJ MAP


@pytest.mark.parametrize("covariance", COVARIANCES)
def test_lkj_map_is_a_maximum_of_the_docstring_log_density(iris, covariance):
    model = GaussianClassConditional(covariance=covariance, prior=STRONG_LKJ)
    estimate = model.point_estimate(iris, "map")
    shared = covariance == "shared"
    mean, sigma = estimate["class_mean"].values.copy(), per_class_covariances(estimate, iris.n_classes).copy()
    assert_coordinatewise_maximum(
        lambda m, s: lkj_log_density(iris, STRONG_LKJ, m, s, shared), mean, sigma, shared, step=1e-3
    )
    # the prior is strong enough that the MAP is not the MLE (the check above is not the MLE's stationarity)
    mle = model.point_estimate(iris, "mle")
    assert np.abs(estimate["class_mean"].values - mle["class_mean"].values).max() > 0.01
    n, a, K = class_counts(iris), STRONG_LKJ.class_concentration, iris.n_classes
    np.testing.assert_allclose(estimate["class_prior"].values, (n + a - 1) / (n.sum() + K * a - K), rtol=1e-12)


def _size_measures(seed: int = 0) -> Dataset:
    """Five measures of one size (as crabs' FL, RW, CL, CW, BD: correlations above 0.99), two classes."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, 150)
    size = rng.normal(30.0, 6.0, 150)
    shift = np.array([0.0, 0.8, 0.0, 0.0, 0.5]) * y[:, None]
    X = size[:, None] * np.array([0.5, 0.4, 1.0, 1.15, 0.45]) + shift + rng.normal(0.0, 0.3, (150, 5))
    names = ("FL", "RW", "CL", "CW", "BD")
    return Dataset(name="size_measures", X=X, y=y, feature_names=names, class_names=("B", "O"),
                   feature_kinds=("continuous",) * 5)  # fmt: skip


@pytest.mark.parametrize("covariance", COVARIANCES)
def test_lkj_map_of_strongly_correlated_features_is_a_maximum(covariance):
    """L-BFGS stops short on these (gradient 1e-4 to 6e-4, "ABNORMAL" line search, before Newton's finish); the
    default prior's MAP is found all the same, the docstring density's maximum."""
    dataset = _size_measures()
    model = GaussianClassConditional(covariance=covariance)
    estimate = model.point_estimate(dataset, "map")
    shared = covariance == "shared"
    mean, sigma = estimate["class_mean"].values.copy(), per_class_covariances(estimate, 2).copy()
    assert_coordinatewise_maximum(
        lambda m, s: lkj_log_density(dataset, model.prior, m, s, shared), mean, sigma, shared, step=1e-3
    )


def test_lkj_map_approaches_the_mle_as_n_grows(seed001_by_size):
    distances = {covariance: [] for covariance in COVARIANCES}
    for dataset in seed001_by_size.values():
        for covariance in COVARIANCES:
            model = GaussianClassConditional(covariance=covariance, prior=STRONG_LKJ)
            map_, mle = model.point_estimate(dataset, "map"), model.point_estimate(dataset, "mle")
            distances[covariance].append(
                max(float(np.abs(map_[name] - mle[name]).max()) for name in ("class_mean", "covariance"))
            )
    for covariance, values in distances.items():
        assert values[1] < values[0] / 5 and values[2] < values[1] / 5, (covariance, values)
        assert values[2] < 2e-3 < values[0], (covariance, values)


def test_lkj_map_per_class_needs_more_rows_than_features(iris):
    rows = np.r_[0:4, 50:100, 100:150]  # 4 setosa rows for 4 features
    few = iris.subset(rows)
    model = GaussianClassConditional(covariance="per-class")
    with pytest.raises(NoEstimateError, match=r"MAP of covariance\['setosa'\].*4 rows for 4 features.*regularization"):
        model.point_estimate(few, "map")
    # d + 1 rows (every feature varying) and it exists
    enough = model.point_estimate(iris.subset(np.r_[[0, 1, 3, 5, 10], 50:150]), "map")
    assert (np.linalg.eigvalsh(enough["covariance"].values) > 0).all()


# --------------------------------------------------------------------------- the Student-t posterior predictive


@pytest.mark.parametrize("prior", [IW, ODD_IW_RAW], ids=["default", "odd_raw_units"])
@pytest.mark.parametrize("covariance", COVARIANCES)
def test_posterior_predictive_is_scipys_multivariate_t(unbalanced_iris, prior, covariance):
    """P(C_k | x, D) proportional to E[pi_k] t_{nu - d + 1}(x | m_k, (kappa_k + 1)/(kappa_k (nu - d + 1)) Psi);
    unequal class sizes, so that the per-class scale factors and degrees of freedom do not cancel."""
    iris = unbalanced_iris
    model = GaussianClassConditional(covariance=covariance, prior=prior)
    predictive = model.point_estimate(iris, "posterior_predictive")
    hand = hand_niw(iris, prior, covariance)
    d, K = iris.n_features, iris.n_classes
    dof = np.broadcast_to(hand["nu"] - d + 1, (K,))
    np.testing.assert_allclose(predictive["predictive_dof"].values, dof, rtol=1e-12)
    np.testing.assert_allclose(
        predictive["predictive_scale_factor"].values, (hand["kappa"] + 1) / hand["kappa"], rtol=1e-12
    )
    rows = np.vstack([iris.X, np.random.default_rng(3).normal(iris.X.mean(axis=0), 3 * iris.X.std(axis=0), (200, d))])
    psi = np.broadcast_to(hand["psi"], (K, d, d))
    joint = np.column_stack(
        [
            scipy.stats.multivariate_t.logpdf(
                rows, loc=hand["m"][k], shape=(hand["kappa"][k] + 1) / (hand["kappa"][k] * dof[k]) * psi[k], df=dof[k]
            )
            for k in range(K)
        ]
    ) + np.log(hand["alpha"] / hand["alpha"].sum())
    expected = joint - scipy.special.logsumexp(joint, axis=1, keepdims=True)
    log_proba = model.class_log_proba(predictive, rows)
    np.testing.assert_allclose(log_proba.values, expected, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(np.exp(log_proba).sum("class").values, 1.0, rtol=0, atol=1e-12)
    # the stored parameters as documented: covariance * predictive_scale_factor is the t's shape matrix
    shape = per_class_covariances(predictive, K) * predictive["predictive_scale_factor"].values[:, None, None]
    np.testing.assert_allclose(
        shape,
        (hand["kappa"] + 1)[:, None, None] / (hand["kappa"][:, None, None] * dof[:, None, None]) * psi,
        rtol=1e-12,
    )
    # and not the Gaussian plug-in of the posterior mean
    plug_in = model.class_log_proba(model.point_estimate(iris, "posterior_mean"), rows)
    assert np.abs(plug_in.values - expected).max() > 1e-3


@pytest.mark.parametrize("covariance", COVARIANCES)
def test_posterior_predictive_approaches_the_posterior_mean_plug_in(seed001_by_size, covariance):
    model = GaussianClassConditional(covariance=covariance, prior=IW)
    grid = np.random.default_rng(0).normal(1.5, 2.0, size=(500, 2))
    gaps = []
    for dataset in seed001_by_size.values():
        predictive = model.class_proba(model.point_estimate(dataset, "posterior_predictive"), grid)
        plug_in = model.class_proba(model.point_estimate(dataset, "posterior_mean"), grid)
        gaps.append(float(np.abs(predictive - plug_in).max()))
    assert gaps[1] < gaps[0] / 3 and gaps[2] < gaps[1] / 3, gaps
    assert gaps[2] < 0.01, gaps


# --------------------------------------------------------------------------- prediction


@pytest.mark.parametrize("covariance", COVARIANCES)
def test_class_probabilities_sum_to_one_for_point_estimates_and_draws(iris, covariance):
    model = GaussianClassConditional(covariance=covariance, prior=IW)
    rows = np.vstack([iris.X, iris.X.mean(axis=0) + 10 * iris.X.std(axis=0)])  # training rows and a far one
    for kind in model.available_point_estimates():
        log_proba = model.class_log_proba(model.point_estimate(iris, kind), rows)
        assert log_proba.dims == ("obs", "class") and log_proba.shape == (len(rows), 3)
        assert list(log_proba["class"].values) == list(iris.class_names)
        assert np.isfinite(log_proba.values).all()
        np.testing.assert_allclose(scipy.special.logsumexp(log_proba.values, axis=1), 0.0, rtol=0, atol=1e-12)
    draws = model.exact_posterior(iris, draws=20, chains=2, random_seed=3)
    log_proba = model.class_log_proba(draws, rows)
    assert log_proba.dims == ("chain", "draw", "obs", "class")
    assert log_proba.shape == (2, 20, len(rows), 3)
    np.testing.assert_allclose(scipy.special.logsumexp(log_proba.values, axis=-1), 0.0, rtol=0, atol=1e-12)
    # each draw is the prediction of that draw alone (no accidental broadcasting across draws)
    for chain, draw in ((0, 0), (1, 13)):
        one = model.class_log_proba(draws.isel(chain=chain, draw=draw), rows)
        np.testing.assert_allclose(log_proba.isel(chain=chain, draw=draw).values, one.values, rtol=1e-10, atol=1e-10)


def test_class_log_proba_of_nuts_draws_keeps_chain_and_draw(nuts_seed001_lkj, seed001_lkj_data):
    model = GaussianClassConditional()
    posterior = nuts_seed001_lkj["posterior"].to_dataset()
    log_proba = model.class_log_proba(posterior, seed001_lkj_data.X[:40])
    assert log_proba.dims == ("chain", "draw", "obs", "class") and log_proba.shape == (2, 1000, 40, 2)
    np.testing.assert_allclose(scipy.special.logsumexp(log_proba.values, axis=-1), 0.0, rtol=0, atol=1e-12)
    one = model.class_log_proba(posterior.isel(chain=1, draw=500), seed001_lkj_data.X[:40])
    np.testing.assert_allclose(log_proba.isel(chain=1, draw=500).values, one.values, rtol=1e-10, atol=1e-12)


def hand_gaussian_log_proba(params: xr.Dataset, X: np.ndarray) -> np.ndarray:
    """log P(class | x) of ONE Gaussian parameter set by scipy's multivariate normal density."""
    K = params.sizes["class"]
    sigma = per_class_covariances(params, K)
    joint = np.column_stack(
        [scipy.stats.multivariate_normal.logpdf(X, params["class_mean"].values[k], sigma[k]) for k in range(K)]
    ) + np.log(params["class_prior"].values)
    return joint - scipy.special.logsumexp(joint, axis=1, keepdims=True)


@pytest.mark.parametrize("covariance", COVARIANCES)
def test_class_log_proba_is_bayes_rule_with_scipy_densities(wine, covariance):
    model = GaussianClassConditional(covariance=covariance, prior=IW)
    for kind in ("mle", "map", "unbiased", "posterior_mean"):
        estimate = model.point_estimate(wine, kind)
        np.testing.assert_allclose(
            model.class_log_proba(estimate, wine.X).values,
            hand_gaussian_log_proba(estimate, wine.X),
            rtol=1e-8,
            atol=1e-8,
        )
    draws = model.exact_posterior(wine, draws=3, chains=2, random_seed=4)
    log_proba = model.class_log_proba(draws, wine.X[:30])
    for chain, draw in np.ndindex(2, 3):
        expected = hand_gaussian_log_proba(draws.isel(chain=chain, draw=draw), wine.X[:30])
        np.testing.assert_allclose(log_proba.isel(chain=chain, draw=draw).values, expected, rtol=1e-8, atol=1e-8)


@pytest.mark.parametrize("covariance", COVARIANCES)
def test_a_single_feature_works_for_every_estimate(iris, covariance):
    """d = 1: no correlations (no LKJCorr, no Cholesky lower triangle); the MLE is the univariate Gaussian."""
    petal = dataclasses.replace(
        iris, X=iris.X[:, 2:3], feature_names=iris.feature_names[2:3], feature_kinds=iris.feature_kinds[2:3]
    )
    model = GaussianClassConditional(covariance=covariance, prior=IW)
    for kind in model.available_point_estimates():
        proba = model.class_proba(model.point_estimate(petal, kind), petal.X)
        np.testing.assert_allclose(proba.sum("class").values, 1.0, rtol=0, atol=1e-12)
    mle = model.point_estimate(petal, "mle")
    np.testing.assert_allclose(
        model.class_log_proba(mle, petal.X).values, hand_gaussian_log_proba(mle, petal.X), rtol=1e-10, atol=1e-10
    )
    draws = model.exact_posterior(petal, draws=5, chains=2, random_seed=0)
    assert model.class_proba(draws, petal.X).shape == (2, 5, 150, 3)
    assert model.sample_features(draws, petal.y[:4], random_seed=0).shape == (2, 5, 4, 1)
    assert GaussianClassConditional(covariance=covariance).build(petal).named_vars_to_dims["covariance"][-2:] == (
        "feature",
        "other_feature",
    )


def permuted_features(dataset: Dataset, order: np.ndarray) -> Dataset:
    return dataclasses.replace(
        dataset,
        X=dataset.X[:, order],
        feature_names=tuple(dataset.feature_names[i] for i in order),
        feature_kinds=tuple(dataset.feature_kinds[i] for i in order),
    )


@pytest.mark.parametrize("covariance", COVARIANCES)
def test_class_proba_is_invariant_to_the_order_of_the_features(wine, covariance):
    order = np.random.default_rng(1).permutation(wine.n_features)
    shuffled = permuted_features(wine, order)
    model = GaussianClassConditional(covariance=covariance, prior=IW)
    for kind in ("mle", "map", "posterior_predictive"):
        original = model.class_proba(model.point_estimate(wine, kind), wine.X)
        permuted = model.class_proba(model.point_estimate(shuffled, kind), shuffled.X)
        np.testing.assert_allclose(permuted.values, original.values, rtol=0, atol=1e-10)
    permuted_mle = model.point_estimate(shuffled, "mle")
    xr.testing.assert_allclose(
        permuted_mle["covariance"].sel(feature=list(wine.feature_names), other_feature=list(wine.feature_names)),
        model.point_estimate(wine, "mle")["covariance"],
        rtol=1e-12,
    )


@pytest.mark.parametrize(("shift", "scale"), [(1e3, 1.0), (-50.0, 1e3), (3.0, 1e-2), (0.0, -2.0)])
@pytest.mark.parametrize("covariance", COVARIANCES)
def test_mle_predictions_are_invariant_to_an_affine_change_of_units(iris, covariance, shift, scale):
    """LDA/QDA are affine equivariant: x_j -> scale * x_j + shift leaves the MLE classifier's probabilities unchanged;
    with autoscale so does the NIW prior's (it moves with the pooled mean and sd)."""
    X = iris.X.copy()
    X[:, 1] = scale * X[:, 1] + shift
    moved = with_X(iris, X)
    for prior, kinds in ((GaussianClassConditionalPrior(), ("mle", "unbiased")), (IW, ("posterior_predictive",))):
        model = GaussianClassConditional(covariance=covariance, prior=prior)
        for kind in kinds:
            original = model.class_proba(model.point_estimate(iris, kind), iris.X)
            changed = model.class_proba(model.point_estimate(moved, kind), moved.X)
            np.testing.assert_allclose(changed.values, original.values, rtol=0, atol=1e-9)


@pytest.mark.parametrize("covariance", COVARIANCES)
def test_mle_exists_whatever_the_units_of_a_feature(wine, covariance):
    X = wine.X.copy()
    X[:, 0] *= 1e-4
    moved = with_X(wine, X)
    model = GaussianClassConditional(covariance=covariance)
    original = model.class_proba(model.point_estimate(wine, "mle"), wine.X)
    changed = model.class_proba(model.point_estimate(moved, "mle"), moved.X)  # raises NoEstimateError
    np.testing.assert_allclose(changed.values, original.values, rtol=0, atol=1e-9)


def test_one_row_of_shape_d_is_one_observation(iris):
    model = GaussianClassConditional(covariance="per-class")
    estimate = model.point_estimate(iris, "mle")
    one = model.class_proba(estimate, iris.X[60])
    assert one.dims == ("obs", "class") and one.shape == (1, 3)
    np.testing.assert_allclose(one.values[0], model.class_proba(estimate, iris.X).values[60], rtol=1e-12)
    # a Dataset with the same columns is accepted as X
    np.testing.assert_allclose(model.class_proba(estimate, iris).values, model.class_proba(estimate, iris.X).values)


@pytest.mark.parametrize(
    ("X", "pattern"),
    [
        (np.ones((2, 3)), r"^X has 3 columns but the model was fitted on 4 features"),
        (np.ones(5), r"^X is 1-D with 5 values"),
        (np.array([[1.0, 2.0, np.nan, 0.5]]), r"^X contains NaN at row 0, column 'petal length \(cm\)'"),
        (np.array([[1.0, 2.0, 3.0, 0.5], [1.0, np.inf, 3.0, 0.5]]), r"^X contains inf at row 1"),
        (np.empty((0, 4)), r"^X has 0 rows"),
    ],
)
def test_prediction_rejects_bad_rows_naming_x(iris, X, pattern):
    model = GaussianClassConditional()
    with pytest.raises(ValueError, match=pattern):
        model.class_log_proba(model.point_estimate(iris, "mle"), X)


# --------------------------------------------------------------------------- linear discriminants


def softmax_of(lda: xr.Dataset, X: np.ndarray) -> np.ndarray:
    a = X @ lda["weight"].values.swapaxes(-1, -2) + lda["bias"].values[..., None, :]
    return np.exp(a - scipy.special.logsumexp(a, axis=-1, keepdims=True))


def test_linear_discriminant_is_sigma_inverse_mu_and_reproduces_the_probabilities(wine):
    model = GaussianClassConditional(covariance="shared")
    mle = model.point_estimate(wine, "mle")
    lda = model.linear_discriminant(mle)
    assert lda["weight"].dims == ("class", "feature") and lda["bias"].dims == ("class",)
    sigma, mu, pi = mle["covariance"].values, mle["class_mean"].values, mle["class_prior"].values
    weight = np.linalg.solve(sigma, mu.T).T
    np.testing.assert_allclose(lda["weight"].values, weight, rtol=1e-8)
    np.testing.assert_allclose(lda["bias"].values, -0.5 * np.sum(mu * weight, axis=1) + np.log(pi), rtol=1e-8)
    np.testing.assert_allclose(softmax_of(lda, wine.X), model.class_proba(mle, wine.X).values, rtol=0, atol=1e-9)


def test_linear_discriminant_per_posterior_draw(iris):
    model = GaussianClassConditional(covariance="shared", prior=IW)
    draws = model.exact_posterior(iris, draws=25, chains=2, random_seed=8)
    lda = model.linear_discriminant(draws)
    assert lda["weight"].dims == ("chain", "draw", "class", "feature")
    assert lda["bias"].dims == ("chain", "draw", "class")
    assert lda["weight"].shape == (2, 25, 3, 4)
    np.testing.assert_allclose(softmax_of(lda, iris.X), model.class_proba(draws, iris.X).values, rtol=0, atol=1e-9)
    one = model.linear_discriminant(draws.isel(chain=1, draw=4))
    xr.testing.assert_allclose(
        lda.isel(chain=1, draw=4).drop_vars(["chain", "draw"]), one.drop_vars(["chain", "draw"], errors="ignore")
    )
    boundary = model.decision_boundary(draws, "versicolor", "virginica")
    assert boundary["weight"].dims == ("chain", "draw", "feature") and boundary["bias"].dims == ("chain", "draw")


def test_linear_discriminant_of_nuts_draws(nuts_seed001_lkj, seed001_lkj_data):
    model = GaussianClassConditional()
    posterior = nuts_seed001_lkj["posterior"].to_dataset()
    lda = model.linear_discriminant(posterior)
    assert lda["weight"].dims == ("chain", "draw", "class", "feature") and lda["weight"].shape == (2, 1000, 2, 2)
    X = seed001_lkj_data.X[:30]
    np.testing.assert_allclose(softmax_of(lda, X), model.class_proba(posterior, X).values, rtol=0, atol=1e-9)
    # the posterior of the boundary covers the truth w = [1, -1]
    weight = model.decision_boundary(posterior, "C1", "C2")["weight"]
    low, high = weight.quantile([0.001, 0.999], dim=("chain", "draw")).values
    assert ((low < [1.0, -1.0]) & ([1.0, -1.0] < high)).all(), (low, high)


def test_linear_discriminant_needs_a_shared_gaussian(iris):
    model = GaussianClassConditional(covariance="per-class", prior=IW)
    for kind in ("mle", "posterior_mean"):
        with pytest.raises(ValueError, match=r"shared-covariance Gaussian only"):
            model.linear_discriminant(model.point_estimate(iris, kind))
    shared = GaussianClassConditional(prior=IW)
    with pytest.raises(ValueError, match=r"Student-t"):
        shared.linear_discriminant(shared.point_estimate(iris, "posterior_predictive"))
    with pytest.raises(ValueError, match=r"positive='rose' is not a class.*'setosa'"):
        shared.decision_boundary(shared.point_estimate(iris, "mle"), "rose", "setosa")


# --------------------------------------------------------------------------- generative sampling


@pytest.mark.parametrize("covariance", COVARIANCES)
def test_simulated_data_refit_recovers_the_parameters(iris, covariance):
    """Seed 001 §B.1 sampling from the iris MLE; the MLE of 50,000 simulated rows is within 5 standard errors."""
    model = GaussianClassConditional(covariance=covariance)
    truth = model.point_estimate(iris, "mle")
    simulated = model.simulate(truth, 50_000, random_seed=0)
    assert simulated.n_obs == 50_000 and simulated.feature_names == iris.feature_names
    assert simulated.class_names == iris.class_names and simulated.feature_kinds == iris.feature_kinds
    refit = model.point_estimate(simulated, "mle")
    N, n = simulated.n_obs, class_counts(simulated)
    pi = truth["class_prior"].values
    assert (np.abs(refit["class_prior"].values - pi) <= 5 * np.sqrt(pi * (1 - pi) / N)).all()
    sigma = per_class_covariances(truth, 3)
    mean_se = np.sqrt(np.diagonal(sigma, axis1=1, axis2=2) / n[:, None])
    assert (np.abs(refit["class_mean"].values - truth["class_mean"].values) <= 5 * mean_se).all()
    variances = np.diagonal(sigma, axis1=1, axis2=2)
    entry_se = np.sqrt((variances[:, :, None] * variances[:, None, :] + sigma**2) / n[:, None, None])
    if covariance == "shared":
        entry_se = np.sqrt((variances[0][:, None] * variances[0][None, :] + sigma[0] ** 2) / N)
    error = np.abs(refit["covariance"].values - truth["covariance"].values) / entry_se
    assert error.max() <= 5, error.max()
    # same seed, same data; another seed, other data
    again = model.simulate(truth, 50_000, random_seed=0)
    np.testing.assert_array_equal(again.X, simulated.X)
    np.testing.assert_array_equal(again.y, simulated.y)
    assert not np.array_equal(model.simulate(truth, 50_000, random_seed=1).X, simulated.X)


def crafted_draws(covariance: str) -> xr.Dataset:
    """Two 'posterior draws' with far-apart means and very different spreads per draw and class."""
    means = np.array([[[0.0, 0.0], [100.0, 100.0]], [[-100.0, 0.0], [0.0, -100.0]]])  # (draw, class, feature)
    sds = np.array([[0.01, 1.0], [1.0, 0.01]])  # (draw, class)
    if covariance == "shared":
        sigma = np.array([np.diag([0.01, 4.0]), np.diag([9.0, 0.25])])  # (draw, feature, other)
        dims = ("chain", "draw", "feature", "other_feature")
    else:
        sigma = sds[:, :, None, None] ** 2 * np.eye(2)
        dims = ("chain", "draw", "class", "feature", "other_feature")
    return xr.Dataset(
        {
            "class_prior": (("chain", "draw", "class"), np.full((1, 2, 2), 0.5)),
            "class_mean": (("chain", "draw", "class", "feature"), means[None]),
            "covariance": (dims, sigma[None]),
        },
        coords={"chain": [0], "draw": [0, 1], "class": ["a", "b"], "feature": ["u", "v"], "other_feature": ["u", "v"]},
    )


@pytest.mark.parametrize("covariance", COVARIANCES)
def test_sample_features_uses_each_draws_and_each_class_parameters(covariance):
    params = crafted_draws(covariance)
    model = GaussianClassConditional(covariance=covariance)
    codes = np.tile([0, 1], 4_000)
    features = model.sample_features(params, codes, random_seed=2)
    assert features.dims == ("chain", "draw", "obs", "feature") and features.shape == (1, 2, 8_000, 2)
    values = features.values[0]
    for draw in range(2):
        for k in range(2):
            rows = values[draw, codes == k]
            sigma = (
                params["covariance"].values[0, draw]
                if covariance == "shared"
                else params["covariance"].values[0, draw, k]
            )
            sd = np.sqrt(np.diag(sigma))
            mean = params["class_mean"].values[0, draw, k]
            assert (np.abs(rows.mean(axis=0) - mean) <= 5 * sd / np.sqrt(len(rows))).all(), (draw, k)
            np.testing.assert_allclose(rows.std(axis=0), sd, rtol=0.05)
    again = model.sample_features(params, codes, random_seed=2)
    xr.testing.assert_identical(again, features)
    one = model.sample_features(params.isel(chain=0, draw=1), codes[:5], random_seed=2)
    assert one.dims == ("obs", "feature") and one.shape == (5, 2)


def test_sample_features_of_exact_draws_has_chain_draw_obs_feature(iris):
    model = GaussianClassConditional(covariance="per-class", prior=IW)
    draws = model.exact_posterior(iris, draws=10, chains=2, random_seed=1)
    features = model.sample_features(draws, iris.y[::10], random_seed=3)
    assert features.dims == ("chain", "draw", "obs", "feature") and features.shape == (2, 10, 15, 4)
    assert list(features["feature"].values) == list(iris.feature_names)
    assert np.isfinite(features.values).all()


def test_sampling_rejects_bad_arguments(iris):
    model = GaussianClassConditional(prior=IW)
    mle = model.point_estimate(iris, "mle")
    for codes in (np.array([0, 3]), np.array([-1]), np.array([0.0, 1.0]), np.array([[0, 1]])):
        with pytest.raises(ValueError, match=r"class_codes must be an array of integer codes in 0\.\.2"):
            model.sample_features(mle, codes, random_seed=0)
    with pytest.raises(ValueError, match=r"not the Student-t predictive"):
        model.sample_features(model.point_estimate(iris, "posterior_predictive"), np.array([0]), random_seed=0)
    for n in (0, -5, 2.5, True):
        with pytest.raises(ValueError, match=r"n must be a positive integer"):
            model.simulate(mle, n, random_seed=0)
    draws = model.exact_posterior(iris, draws=2, chains=1, random_seed=0)
    with pytest.raises(ValueError, match=r"one parameter set.*select one posterior draw"):
        model.simulate(draws, 10, random_seed=0)


# --------------------------------------------------------------------------- bad input


def assert_clear_error(call, error_type, pattern: str) -> str:
    """The call raises ``error_type`` matching ``pattern``, and never a bare LinAlgError (a ValueError subclass)."""
    with pytest.raises(error_type, match=pattern) as raised:
        call()
    assert not isinstance(raised.value, np.linalg.LinAlgError), repr(raised.value)
    return str(raised.value)


@pytest.mark.parametrize("kind", ["mle", "unbiased"])
def test_qda_with_fewer_rows_than_features_names_the_class_and_regularization(iris, kind):
    few = iris.subset(np.r_[0:3, 50:100, 100:150])  # 3 setosa rows, 4 features
    model = GaussianClassConditional(covariance="per-class")
    assert_clear_error(
        lambda: model.point_estimate(few, kind),
        NoEstimateError,
        r"covariance\['setosa'\] does not exist: class 'setosa' has 3 rows for 4 features.*regularization \(e\.g\. "
        r"0\.1\)",
    )
    regularized = GaussianClassConditional(covariance="per-class", regularization=0.1)
    estimate = regularized.point_estimate(few, kind)
    assert (np.linalg.eigvalsh(estimate["covariance"].values) > 0).all()
    proba = regularized.class_proba(estimate, iris.X)
    assert np.isfinite(proba.values).all()
    np.testing.assert_allclose(proba.sum("class").values, 1.0, rtol=0, atol=1e-12)
    # and the NIW prior's estimates exist on the same data
    niw = GaussianClassConditional(covariance="per-class", prior=IW)
    for prior_kind in ("map", "posterior_mean", "posterior_predictive"):
        assert np.isfinite(niw.class_proba(niw.point_estimate(few, prior_kind), iris.X).values).all()


def test_regularization_is_the_documented_shrinkage(iris):
    r = 0.3
    for covariance in COVARIANCES:
        plain = GaussianClassConditional(covariance=covariance).point_estimate(iris, "mle")
        shrunk = GaussianClassConditional(covariance=covariance, regularization=r).point_estimate(iris, "mle")
        expected = (1 - r) * plain["covariance"].values + r * np.diag(iris.X.var(axis=0))
        np.testing.assert_allclose(shrunk["covariance"].values, expected, rtol=1e-12)
        xr.testing.assert_identical(shrunk["class_mean"], plain["class_mean"])


def test_regularized_shared_unbiased_estimate_with_no_degrees_of_freedom_is_an_error():
    dataset = Dataset(
        name="two_rows",
        X=np.array([[0.0, 1.0], [1.0, 3.0]]),
        y=np.array([0, 1]),
        feature_names=("u", "v"),
        class_names=("a", "b"),
        feature_kinds=("continuous", "continuous"),
    )
    model = GaussianClassConditional(covariance="shared", regularization=0.1)
    with pytest.raises(NoEstimateError, match=r"unbiased"):
        estimate = model.point_estimate(dataset, "unbiased")
        assert np.isfinite(estimate["covariance"].values).all(), estimate["covariance"].values


def test_a_feature_constant_within_one_class_has_no_qda_mle(iris):
    X = iris.X.copy()
    X[iris.y == 1, 2] = 4.0  # petal length constant within versicolor
    constant = with_X(iris, X)
    message = assert_clear_error(
        lambda: GaussianClassConditional(covariance="per-class").point_estimate(constant, "mle"),
        NoEstimateError,
        r"covariance\['versicolor'\].*feature 'petal length \(cm\)' is constant within class 'versicolor'",
    )
    assert "regularization" in message
    # the shared MLE exists (the other classes vary), and so does the regularised QDA
    assert np.isfinite(GaussianClassConditional().point_estimate(constant, "mle")["covariance"].values).all()
    regularized = GaussianClassConditional(covariance="per-class", regularization=0.05)
    assert np.isfinite(regularized.class_proba(regularized.point_estimate(constant, "mle"), X).values).all()


def test_a_feature_constant_within_every_class_has_no_lda_mle(iris):
    X = iris.X.copy()
    X[:, 3] = np.array([0.2, 1.3, 2.0])[iris.y]  # petal width constant within each class, not overall
    assert_clear_error(
        lambda: GaussianClassConditional().point_estimate(with_X(iris, X), "mle"),
        NoEstimateError,
        r"shared covariance does not exist: feature 'petal width \(cm\)' is constant within every "
        r"class.*regularization",
    )


def test_more_features_than_rows_has_no_shared_mle():
    rng = np.random.default_rng(0)
    wide = Dataset(
        name="wide",
        X=rng.normal(size=(6, 8)),
        y=np.repeat([0, 1], 3),
        feature_names=tuple(f"f{i}" for i in range(8)),
        class_names=("a", "b"),
        feature_kinds=("continuous",) * 8,
    )
    model = GaussianClassConditional()
    for kind, estimate in (("mle", "MLE"), ("unbiased", "unbiased estimate"), ("map", "LKJ-prior MAP")):
        assert_clear_error(
            lambda kind=kind: model.point_estimate(wide, kind),
            NoEstimateError,
            rf"{estimate} of the shared covariance does not exist: 6 rows in 2 classes leave 4 degrees of freedom "
            r"for 8 features.*regularization",
        )
    for kind in ("mle", "unbiased"):
        regularized = GaussianClassConditional(regularization=0.2)
        proba = regularized.class_proba(regularized.point_estimate(wide, kind), wide.X)
        np.testing.assert_allclose(proba.sum("class").values, 1.0, rtol=0, atol=1e-12)
    niw = GaussianClassConditional(prior=IW)
    for kind in ("map", "posterior_mean", "posterior_predictive"):
        assert np.isfinite(niw.class_proba(niw.point_estimate(wide, kind), wide.X).values).all()


@pytest.mark.parametrize("covariance", COVARIANCES)
def test_collinear_features_have_no_mle(iris, covariance):
    X = iris.X.copy()
    X[:, 3] = X[:, 0] + 2 * X[:, 1]
    model = GaussianClassConditional(covariance=covariance)
    for kind in ("mle", "unbiased", "map"):
        assert_clear_error(
            lambda kind=kind: model.point_estimate(with_X(iris, X), kind),
            NoEstimateError,
            r"does not exist: the features are linearly dependent \(collinear\).*regularization",
        )


def test_a_feature_constant_over_all_rows_is_rejected_by_name(iris):
    X = iris.X.copy()
    X[:, 1] = 3.0
    constant = with_X(iris, X)
    model = GaussianClassConditional(prior=IW)
    calls = (
        lambda: model.point_estimate(constant, "posterior_mean"),
        lambda: model.build(constant),
        lambda: model.exact_posterior(constant, draws=5, chains=1, random_seed=0),
        lambda: inference.fit(model, constant, method="exact"),
    )
    for call in calls:
        assert_clear_error(
            call, ValueError, r"feature\(s\) 'sepal width \(cm\)' of 'iris' are constant over the training rows.*drop"
        )


def test_one_class_and_empty_classes_are_rejected(iris):
    model = GaussianClassConditional()
    assert_clear_error(
        lambda: model.point_estimate(iris.subset(np.arange(10)), "mle"),
        ValueError,
        r"y contains a single class \('setosa'\).*at least 2 classes",
    )
    assert_clear_error(
        lambda: model.point_estimate(iris.subset(np.r_[0:10, 50:60]), "mle"),
        ValueError,
        r"class\(es\) 'virginica'.*no training rows",
    )


def test_non_continuous_features_are_rejected():
    rng = np.random.default_rng(0)
    mixed = Dataset(
        name="mixed",
        X=np.column_stack([rng.normal(size=10), rng.normal(size=10), np.tile([0.0, 1.0], 5)]),
        y=np.repeat([0, 1], 5),
        feature_names=("u", "v", "rain"),
        class_names=("a", "b"),
        feature_kinds=("continuous", "continuous", "binary"),
    )
    model = GaussianClassConditional(prior=IW)
    for call in (
        lambda: model.point_estimate(mixed, "mle"),
        lambda: model.build(mixed),
        lambda: model.exact_posterior(mixed, draws=5, chains=1, random_seed=0),
    ):
        assert_clear_error(call, ValueError, r"continuous features; 'rain' \(binary\) of 'mixed' are not.*naive_bayes")


@pytest.mark.parametrize(
    ("arguments", "pattern"),
    [
        ({"covariance": "diagonal"}, r"covariance must be 'shared' or 'per-class', got 'diagonal'"),
        ({"regularization": 1.0}, r"regularization must be a number in \[0, 1\).*got 1\.0"),
        ({"regularization": -0.1}, r"regularization must be a number in \[0, 1\).*got -0\.1"),
        ({"regularization": True}, r"regularization must be a number"),
        ({"prior": 0.5}, r"prior must be a GaussianClassConditionalPrior"),
    ],
)
def test_model_rejects_bad_hyperparameters(arguments, pattern):
    with pytest.raises(ValueError, match=pattern):
        GaussianClassConditional(**arguments)


@pytest.mark.parametrize(
    ("arguments", "pattern"),
    [
        ({"lkj_eta": -1.0}, r"lkj_eta must be a positive finite number, got -1"),
        ({"lkj_eta": 0}, r"lkj_eta must be a positive"),
        ({"mean_strength": math.inf}, r"mean_strength must be a positive finite number"),
        ({"wishart_dof_offset": -2.0}, r"wishart_dof_offset must be > -2.*got -2\.0"),
        ({"wishart_dof_offset": -3}, r"wishart_dof_offset must be > -2"),
        ({"wishart_dof_offset": math.nan}, r"wishart_dof_offset must be a finite number"),
        ({"mean_center": "zero"}, r"mean_center must be a finite number"),
        ({"covariance_prior": "wishart"}, r"covariance_prior must be 'lkj' or 'inverse_wishart', got 'wishart'"),
        ({"autoscale": "yes"}, r"autoscale must be True or False"),
    ],
)
def test_prior_rejects_bad_hyperparameters(arguments, pattern):
    with pytest.raises(ValueError, match=pattern):
        GaussianClassConditionalPrior(**arguments)


def test_the_weakest_inverse_wishart_prior_still_has_a_map_and_predictive(iris):
    """wishart_dof_offset just above -2: nu_0 just above d - 1; the posterior has nu >> d, so every kind exists."""
    model = GaussianClassConditional(covariance="per-class", prior=dataclasses.replace(IW, wishart_dof_offset=-1.9))
    for kind in model.available_point_estimates():
        proba = model.class_proba(model.point_estimate(iris, kind), iris.X)
        np.testing.assert_allclose(proba.sum("class").values, 1.0, rtol=0, atol=1e-12)


def test_exact_draws_under_the_lkj_prior_name_the_inverse_wishart_prior(iris):
    model = GaussianClassConditional()
    assert not model.has_exact()
    assert "posterior_mean" not in model.available_point_estimates()
    assert_clear_error(
        lambda: model.exact_posterior(iris, draws=5, chains=1, random_seed=0),
        ValueError,
        r"covariance_prior='inverse_wishart'",
    )


@pytest.mark.parametrize("request_", ["fit_exact", "posterior_mean", "posterior_predictive"])
def test_conjugate_only_requests_under_the_lkj_prior_name_the_inverse_wishart_prior(iris, request_):
    model = GaussianClassConditional()
    call = {
        "fit_exact": lambda: inference.fit(model, iris, method="exact"),
        "posterior_mean": lambda: model.point_estimate(iris, "posterior_mean"),
        "posterior_predictive": lambda: model.point_estimate(iris, "posterior_predictive"),
    }[request_]
    assert_clear_error(call, ValueError, r"inverse_wishart")


def test_non_positive_definite_parameters_are_a_clear_error(iris):
    model = GaussianClassConditional()
    estimate = model.point_estimate(iris, "mle")
    broken = estimate.assign(covariance=-estimate["covariance"])
    for call in (
        lambda: model.class_proba(broken, iris.X),
        lambda: model.linear_discriminant(broken),
        lambda: model.sample_features(broken, np.array([0, 1]), random_seed=0),
    ):
        assert_clear_error(call, ValueError, r"not positive definite.*regularization > 0")


def test_unknown_point_estimate_kind_is_rejected(iris):
    with pytest.raises(ValueError, match=r"kind='median'.*'mle', 'map', 'unbiased'"):
        GaussianClassConditional().point_estimate(iris, "median")


# --------------------------------------------------------------------------- provenance and registry


def test_registry_builds_the_gcc_family():
    model = get_model("gcc", covariance="per-class")
    assert isinstance(model, GaussianClassConditional)
    assert model == GaussianClassConditional(covariance="per-class")
    assert model.prior == GaussianClassConditionalPrior() and model.regularization == 0.0
    built = get_model("gcc", prior={"covariance_prior": "inverse_wishart", "mean_strength": 2.0})
    assert built.prior == GaussianClassConditionalPrior(covariance_prior="inverse_wishart", mean_strength=2.0)
    assert GaussianClassConditional.name == "gcc" and GaussianClassConditional().to_dict()["model"] == "gcc"


def test_hyperparameters_round_trip_through_to_dict():
    model = GaussianClassConditional(covariance="per-class", prior=ODD_IW_RAW, regularization=0.25)
    assert model_from_dict(model.to_dict()) == model
    assert model_from_dict(json.loads(model.to_json())) == model
    rebuilt = model_from_dict(json.loads(model.to_json()))
    assert isinstance(rebuilt.prior, GaussianClassConditionalPrior) and rebuilt.prior.autoscale is False
    assert model_from_dict(GaussianClassConditional().to_dict()) != model
    lkj = GaussianClassConditional(prior=STRONG_LKJ)
    assert model_from_dict(lkj.to_dict()) == lkj


@pytest.mark.parametrize("covariance", COVARIANCES)
def test_student_t_predictive_is_the_posterior_average_of_the_joint_density(iris, covariance):
    """p(class | x, D) = E[pi_k N(x | mu_k, Sigma_k)] / sum_j E[...] over the exact posterior (Monte Carlo),
    which the Student-t kind gives in closed form; the average of the per-draw CONDITIONAL probabilities
    (the 'posterior (draws)' prediction) is a different quantity and differs measurably on small data."""
    small = iris.subset(np.arange(0, 150, 5))  # 10 rows per class, 4 features: a wide posterior
    model = GaussianClassConditional(covariance=covariance, prior=IW)
    draws = model.exact_posterior(small, draws=100_000, chains=1, random_seed=0)
    x = iris.X[::7]
    d = x.shape[1]
    mean = draws["class_mean"].values[0]  # (draw, K, d)
    covariance_draws = draws["covariance"].values[0]
    if covariance == "shared":
        covariance_draws = np.broadcast_to(covariance_draws[:, np.newaxis], (*mean.shape, d))
    factor = np.linalg.cholesky(covariance_draws)  # (draw, K, d, d)
    difference = x.T[np.newaxis, np.newaxis] - mean[..., np.newaxis]  # (draw, K, d, obs)
    solved = np.linalg.inv(factor) @ difference
    log_density = -0.5 * (solved**2).sum(-2) - np.log(np.diagonal(factor, axis1=-2, axis2=-1)).sum(-1)[..., np.newaxis]
    joint = np.log(draws["class_prior"].values[0])[:, :, np.newaxis] + log_density  # (draw, K, obs)
    averaged = scipy.special.logsumexp(joint, axis=0)
    monte_carlo = np.exp(averaged - scipy.special.logsumexp(averaged, axis=0)).T  # (obs, K)
    student_t = model.class_proba(model.point_estimate(small, "posterior_predictive"), x).values
    conditional_average = model.class_proba(draws, x).mean(("chain", "draw")).values
    np.testing.assert_allclose(monte_carlo, student_t, atol=0.01)
    assert np.abs(conditional_average - student_t).max() > 0.02
