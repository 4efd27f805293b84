"""Session-scoped fits shared by the model and inference tests.

NUTS compiles one model per distinct structure (family + hyperparameters +
feature and class names; see ``inference.sampling``), so every fixture below
that shares a structure with another reuses its compiled model: the
``seed001_gaussians`` fits of different sizes and seeds all hit the same cache
entry. Draw counts are kept as small as the statistical checks allow.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from bayesclass import data, inference
from bayesclass.inference import SamplerSettings
from bayesclass.models import LogisticPrior, LogisticRegression

#: the sampler settings of most NUTS fixtures: fast, enough draws for MCSE-scale checks
FAST_SAMPLER = SamplerSettings(draws=300, tune=300, chains=2, progressbar=False)
#: enough draws for ESS >= 400 on the small, well-conditioned seed001 problem
CONVERGED_SAMPLER = SamplerSettings(draws=1000, tune=500, chains=2, progressbar=False)
NUTS_SEED = 20240611
#: the seed001 fixtures are fitted in the data's units (not the default standardisation): the tests compare their
#: parameters with the model's own estimates on the raw rows, the seed's closed forms and the generator's truth
RAW_UNITS = False


@pytest.fixture(scope="session")
def gaussians_small() -> data.Dataset:
    """Seed 001 §B.1 two-Gaussian data, n=200: overlapping classes (the MLE exists)."""
    return data.seed001_gaussians(200, random_seed=1)


@pytest.fixture(scope="session")
def gaussians_large() -> data.Dataset:
    """The same generative model with n=5000: the posterior is close to its Laplace approximation."""
    return data.seed001_gaussians(5000, random_seed=2)


@pytest.fixture(scope="session")
def breast_cancer_std() -> data.Dataset:
    return data.load("breast_cancer").standardized()


@pytest.fixture(scope="session")
def iris() -> data.Dataset:
    return data.load("iris")


@pytest.fixture(scope="session")
def wine() -> data.Dataset:
    return data.load("wine")


@pytest.fixture(scope="session")
def transport() -> data.Dataset:
    """Seed 003's transport table (Distance, Raining, Flat Tire -> walk/bike/bus/car)."""
    return data.load("transport")


@pytest.fixture(scope="session")
def digits_binary() -> data.Dataset:
    return data.load("digits_binary")


@pytest.fixture(scope="session")
def iris_std(iris) -> data.Dataset:
    return iris.standardized()


@pytest.fixture(scope="session")
def flat_intercept_model() -> LogisticRegression:
    """The model whose MAP is scikit-learn's L2 logistic regression with C=1 (flat intercept)."""
    return LogisticRegression(prior=LogisticPrior(weight_sigma=1.0, intercept_sigma=math.inf))


@pytest.fixture(scope="session")
def nuts_gaussians(gaussians_small):
    """Whitened NUTS fit of the small two-Gaussian data, long enough to pass the convergence thresholds."""
    return inference.fit(
        LogisticRegression(),
        gaussians_small,
        method="nuts",
        sampler=CONVERGED_SAMPLER,
        standardize=RAW_UNITS,
        random_seed=NUTS_SEED,
    )


@pytest.fixture(scope="session")
def nuts_gaussians_centered(gaussians_small):
    """The same posterior sampled through the textbook (centered) parametrisation."""
    return inference.fit(
        LogisticRegression(parametrization="centered"),
        gaussians_small,
        method="nuts",
        sampler=CONVERGED_SAMPLER,
        standardize=RAW_UNITS,
        random_seed=NUTS_SEED,
    )


@pytest.fixture(scope="session")
def nuts_gaussians_large(gaussians_large, nuts_gaussians):
    """Whitened NUTS fit of n=5000 rows; reuses the compiled model of ``nuts_gaussians`` (same structure)."""
    return inference.fit(
        LogisticRegression(),
        gaussians_large,
        method="nuts",
        sampler=CONVERGED_SAMPLER,
        standardize=RAW_UNITS,
        random_seed=NUTS_SEED + 1,
    )


@pytest.fixture(scope="session")
def nuts_iris(iris):
    """Multiclass (softmax, zero-sum) NUTS fit of iris with in-fit standardisation."""
    return inference.fit(
        LogisticRegression(), iris, method="nuts", sampler=FAST_SAMPLER, standardize=True, random_seed=NUTS_SEED
    )


@pytest.fixture(scope="session")
def nuts_breast_cancer():
    """NUTS fit of breast_cancer (completely separable: MAP and posterior exist, the MLE does not)."""
    return inference.fit(
        "logistic",
        data.load("breast_cancer"),
        method="nuts",
        sampler=SamplerSettings(draws=200, tune=200, chains=2, progressbar=False),
        standardize=True,
        random_seed=NUTS_SEED,
    )


@pytest.fixture(scope="session")
def map_gaussians(gaussians_small):
    return inference.fit(LogisticRegression(), gaussians_small, method="map", standardize=RAW_UNITS)


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(12345)
