"""Simulation-based calibration of the fits (slow): the rank of the truth among posterior draws is uniform.

Naive Bayes (binary, categorical, count and Gaussian features at once) by its exact conjugate
draws and by NUTS; logistic regression (logit and probit) by NUTS. Labels are fixed and
balanced in the naive Bayes simulations, so ``class_prior`` (whose posterior then does not
see the prior draw) is left out of its ranks. Each variable's ranks must pass the Bonferroni-combined
per-element chi-square test at 0.001 (several variables per family are tested).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import scipy.special
import xarray as xr

from bayesclass import data
from bayesclass.inference import SamplerSettings
from bayesclass.inference.criticism.sbc import prior_draws, simulation_based_calibration
from bayesclass.models import LogisticPrior, LogisticRegression, NaiveBayes, NaiveBayesPrior

pytestmark = pytest.mark.slow

ALPHA = 0.001
NB_ROWS = 40
NB_VARIABLES = ("binary_proba", "category_proba", "count_proba", "gaussian_mean", "gaussian_variance")


def _nb_template(n: int = NB_ROWS) -> data.Dataset:
    """The layout of the simulated data: 2 binary, one 3-level categorical, 2 count and 1 Gaussian feature."""
    rng = np.random.default_rng(0)
    X = np.column_stack(
        [rng.integers(0, 2, (n, 2)), np.arange(n) % 3, rng.poisson(3.0, (n, 2)), rng.normal(size=n)]
    ).astype(float)
    return data.Dataset(
        name="sbc template",
        X=X,
        y=np.arange(n) % 2,
        feature_names=("b1", "b2", "colour", "word_a", "word_b", "size"),
        class_names=("no", "yes"),
        feature_kinds=("binary", "binary", "categorical", "count", "count", "continuous"),
        category_names={"colour": ("red", "green", "blue")},
    )


def _naive_bayes_sbc(method: str, n_simulations: int, sampler=None):
    # fixed-scale priors: autoscaled Gaussian priors depend on the data, which SBC cannot draw from first
    model = NaiveBayes(prior=NaiveBayesPrior(autoscale=False, variance_beta=1.0))
    template = _nb_template()
    prior = prior_draws(model, template, n_simulations, random_seed=1)
    labels = template.y
    totals = np.zeros_like(template.X)
    totals[:, 3:5] = [4, 4]  # every row has 8 words

    def simulate(truth: xr.Dataset, rng: np.random.Generator) -> data.Dataset:
        features = model.sample_features(truth, labels, random_seed=int(rng.integers(2**31)), reference=totals)
        return dataclasses.replace(template, name="sbc", X=features.values)

    return simulation_based_calibration(
        model,
        draw_truth=lambda s, rng: prior.isel(draw=s),
        simulate=simulate,
        variables=NB_VARIABLES,
        n_simulations=n_simulations,
        method=method,
        sampler=sampler,
        random_seed=2,
    )


def _logistic_sbc(link: str, n_simulations: int):
    prior = LogisticPrior(weight_sigma=1.0, intercept_sigma=1.0)
    model = LogisticRegression(prior=prior, link=link)
    rng_design = np.random.default_rng(3)
    X = rng_design.normal(size=(60, 2))
    inverse = scipy.special.expit if link == "logit" else scipy.special.ndtr

    def draw_truth(s: int, rng: np.random.Generator) -> xr.Dataset:
        return xr.Dataset(
            {"intercept": ((), rng.normal(0, prior.intercept_sigma)), "weights": (("feature",), rng.normal(0, 1, 2))},
            coords={"feature": ["x1", "x2"]},
        )

    def simulate(truth: xr.Dataset, rng: np.random.Generator) -> data.Dataset:
        proba = inverse(float(truth["intercept"]) + X @ truth["weights"].values)
        y = (rng.random(len(X)) < proba).astype(int)
        while y.min() == y.max():  # a single class cannot be fitted; this prior makes it very rare
            y = (rng.random(len(X)) < proba).astype(int)
        return data.Dataset(
            name="sbc",
            X=X,
            y=y,
            feature_names=("x1", "x2"),
            class_names=("0", "1"),
            feature_kinds=("continuous", "continuous"),
        )

    sampler = SamplerSettings(draws=250, tune=300, chains=2, progressbar=False)
    return simulation_based_calibration(
        model,
        draw_truth=draw_truth,
        simulate=simulate,
        variables=("intercept", "weights"),
        n_simulations=n_simulations,
        method="nuts",
        sampler=sampler,
        random_seed=4,
    )


def _report(label: str, result) -> None:
    values = ", ".join(f"{name} p={p:.3f}" for name, p in result.p_values.items())
    print(f"SBC {label}: {result.n_simulations} simulations, {result.n_draws} draws, {result.n_bins} bins: {values}")


def test_naive_bayes_exact_draws_are_calibrated():
    result = _naive_bayes_sbc("exact", 300)
    _report("naive Bayes exact", result)
    assert all(p > ALPHA for p in result.p_values.values()), result.p_values
    assert result.ranks["category_proba"].shape == (300, 6)


def test_naive_bayes_nuts_is_calibrated():
    result = _naive_bayes_sbc("nuts", 60, SamplerSettings(draws=250, tune=300, chains=2, progressbar=False))
    _report("naive Bayes NUTS", result)
    assert all(p > ALPHA for p in result.p_values.values()), result.p_values


@pytest.mark.parametrize("link", ["logit", "probit"])
def test_logistic_nuts_is_calibrated(link):
    result = _logistic_sbc(link, 80)
    _report(f"logistic {link} NUTS", result)
    assert all(p > ALPHA for p in result.p_values.values()), result.p_values


def test_sbc_detects_a_wrong_posterior():
    """The check can fail: ranking the truth against draws of a prior twice as wide is flagged."""
    model = NaiveBayes(prior=NaiveBayesPrior(autoscale=False, variance_beta=1.0))
    wide = NaiveBayes(prior=NaiveBayesPrior(autoscale=False, variance_beta=1.0, binary_alpha=5.0))
    template = _nb_template()
    prior = prior_draws(model, template, 200, random_seed=5)

    def simulate(truth, rng):
        X = model.sample_features(truth, template.y, random_seed=int(rng.integers(2**31)), reference=template.X)
        return dataclasses.replace(template, name="sbc", X=X.values)

    result = simulation_based_calibration(
        wide,  # fitted with another prior than the truth was drawn from
        draw_truth=lambda s, rng: prior.isel(draw=s),
        simulate=simulate,
        variables=("binary_proba",),
        n_simulations=200,
        method="exact",
        random_seed=6,
    )
    assert result.p_values["binary_proba"] < ALPHA


# -- Gaussian class-conditional: the conjugate NIW prior (exact draws) and LKJ (NUTS) -------------------------

GCC_ROWS, GCC_FEATURES = 40, 2


def _gcc_dataset(X: np.ndarray, labels: np.ndarray) -> data.Dataset:
    return data.Dataset(
        name="sbc",
        X=X,
        y=labels,
        feature_names=("f1", "f2"),
        class_names=("a", "b"),
        feature_kinds=("continuous", "continuous"),
    )


def _gcc_sbc(model, draw_truth, *, method: str, n_simulations: int, sampler=None):
    labels = np.arange(GCC_ROWS) % 2

    def simulate(truth: xr.Dataset, rng: np.random.Generator) -> data.Dataset:
        X = model.sample_features(truth, labels, random_seed=int(rng.integers(2**31))).values
        return _gcc_dataset(X, labels)

    return simulation_based_calibration(
        model,
        draw_truth=draw_truth,
        simulate=simulate,
        variables=("class_mean", "covariance"),
        n_simulations=n_simulations,
        method=method,
        sampler=sampler,
        random_seed=7,
    )


@pytest.mark.parametrize("covariance", ["shared", "per-class"])
def test_gaussian_class_conditional_exact_niw_draws_are_calibrated(covariance):
    """Truth from the Normal-Inverse-Wishart prior itself (scipy's inverse Wishart), fixed-scale prior."""
    import scipy.stats

    from bayesclass.models import GaussianClassConditional, GaussianClassConditionalPrior

    prior = GaussianClassConditionalPrior(covariance_prior="inverse_wishart", autoscale=False, mean_strength=1.0)
    model = GaussianClassConditional(covariance=covariance, prior=prior)
    d, dof = GCC_FEATURES, GCC_FEATURES + 1 + prior.wishart_dof_offset
    groups = 1 if covariance == "shared" else 2

    def draw_truth(s: int, rng: np.random.Generator) -> xr.Dataset:
        sigma = scipy.stats.invwishart(df=dof, scale=prior.wishart_scale * np.eye(d)).rvs(size=groups, random_state=rng)
        sigma = np.asarray(sigma).reshape(groups, d, d)
        means = np.stack(
            [rng.multivariate_normal(np.zeros(d), sigma[min(k, groups - 1)] / prior.mean_strength) for k in range(2)]
        )
        dims = ("feature", "other_feature") if covariance == "shared" else ("class", "feature", "other_feature")
        return xr.Dataset(
            {
                "class_prior": (("class",), np.array([0.5, 0.5])),
                "class_mean": (("class", "feature"), means),
                "covariance": (dims, sigma[0] if covariance == "shared" else sigma),
            },
            coords={"class": ["a", "b"], "feature": ["f1", "f2"], "other_feature": ["f1", "f2"]},
        )

    result = _gcc_sbc(model, draw_truth, method="exact", n_simulations=300)
    _report(f"gcc {covariance} NIW exact", result)
    assert all(p > ALPHA for p in result.p_values.values()), result.p_values


def test_gaussian_class_conditional_lkj_nuts_is_calibrated():
    from bayesclass.models import GaussianClassConditional, GaussianClassConditionalPrior

    prior = GaussianClassConditionalPrior(autoscale=False, mean_sigma=3.0, sd_sigma=1.0)
    model = GaussianClassConditional(covariance="shared", prior=prior)
    template = _gcc_dataset(np.random.default_rng(0).normal(size=(GCC_ROWS, GCC_FEATURES)), np.arange(GCC_ROWS) % 2)
    draws = prior_draws(model, template, 50, random_seed=8)
    sampler = SamplerSettings(draws=250, tune=300, chains=2, progressbar=False)
    result = _gcc_sbc(model, lambda s, rng: draws.isel(draw=s), method="nuts", n_simulations=50, sampler=sampler)
    _report("gcc shared LKJ NUTS", result)
    assert all(p > ALPHA for p in result.p_values.values()), result.p_values


# -- latent GP: exact latents and the HSGP approximation, by NUTS and by the Gibbs sampler ----------------------


@pytest.mark.parametrize("method", ["nuts", "gibbs"])
@pytest.mark.parametrize("approximation", ["exact", "hsgp"])
def test_latent_gp_nuts_is_calibrated(approximation, method):
    """Truth from the GP prior the PyMC model states (hyperparameters, then latents), labels from the link; the
    posterior drawn by NUTS and by the data-augmentation Gibbs sampler (``method="gibbs"``)."""
    from bayesclass.models import GaussianProcessPrior, LatentGaussianProcess

    # HSGP by NUTS under the default PC lengthscale prior is NOT calibrated (p = 5e-16, issue 39): in the prior's
    # heavy tail every basis weight's prior sd underflows and NUTS does not reach those lengthscales, so a fit there
    # warns (test_hsgp_by_nuts_under_the_pc_prior_warns_at_fit_time). This case pins the InverseGamma(3, 2) prior,
    # where NUTS is calibrated; the Gibbs sampler (the default method) is tested under the default PC prior.
    pinned = (approximation, method) == ("hsgp", "nuts")
    prior = GaussianProcessPrior(lengthscale_prior="inverse_gamma" if pinned else "pc")
    model = LatentGaussianProcess(approximation=approximation, hsgp_basis=10, prior=prior)
    x = np.linspace(-1.5, 1.5, 24)[:, np.newaxis]
    template = data.Dataset(
        name="sbc",
        X=x,
        y=np.arange(24) % 2,
        feature_names=("x",),
        class_names=("0", "1"),
        feature_kinds=("continuous",),
    )
    draws = prior_draws(model, template, 40, random_seed=9)
    latent_name = "basis_weight" if approximation == "hsgp" else "latent"

    def simulate(truth: xr.Dataset, rng: np.random.Generator) -> data.Dataset:
        if approximation == "hsgp":
            latent = model.latent_predictive(truth.expand_dims(chain=1, draw=1), x)["latent_mean"].values.ravel()
        else:
            latent = truth["latent"].values
        y = (rng.random(len(x)) < scipy.special.expit(latent)).astype(int)
        while y.min() == y.max():
            y = (rng.random(len(x)) < scipy.special.expit(latent)).astype(int)
        return data.Dataset(
            name="sbc", X=x, y=y, feature_names=("x",), class_names=("0", "1"), feature_kinds=("continuous",)
        )

    sampler = SamplerSettings(draws=250, tune=400, chains=2, progressbar=False)
    result = simulation_based_calibration(
        model,
        draw_truth=lambda s, rng: draws.isel(draw=s),
        simulate=simulate,
        variables=("lengthscale", "amplitude", "constant", latent_name),
        n_simulations=40,
        method=method,
        sampler=sampler,
        random_seed=10,
    )
    _report(f"gp {approximation} {method}", result)
    assert all(p > ALPHA for p in result.p_values.values()), result.p_values
