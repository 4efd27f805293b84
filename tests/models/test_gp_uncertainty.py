"""The latent GP's uncertainty: the Laplace Gaussian of its ``map`` estimate, its probability intervals, and
``method="laplace"``.

Checked against an independent implementation: scikit-learn's ``GaussianProcessClassifier`` runs the same
Laplace approximation (logit link, GPML Algorithms 3.1 / 3.2). With the same kernel and the hyperparameters fixed
(``optimizer=None``) at this suite's type-II ML values, its mode, W, latent covariance and latent predictive
variance equal ours. The model's jitter (eps a^2 on K's diagonal) is given to scikit-learn as a ``WhiteKernel``, whose
``diag`` adds it to the prior variance at new inputs too, where this suite has none: it is subtracted there. The
HSGP (weight space) is checked against scikit-learn on the linear kernel ``DotProduct(sigma_0=0)`` of the scaled
basis ``Phi S``: f = Phi S w with w ~ N(0, I) is the GP with covariance Phi S^2 Phi'. The probit link (which
scikit-learn lacks) is checked against the closed forms computed directly.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy
from sklearn.gaussian_process import GaussianProcessClassifier
from sklearn.gaussian_process.kernels import RBF, ConstantKernel, DotProduct, WhiteKernel

import bayesclass as bc
from bayesclass.data import seed004_gp
from bayesclass.inference.criticism.diagnostics import diagnose
from bayesclass.inference.evaluation.parameters import parameter_comparison
from bayesclass.inference.result import gaussian_approximation
from bayesclass.models import LatentGaussianProcess
from bayesclass.models._kernels import hsgp_basis, kernel_matrix, spectral_density

INTERVAL = 0.89
Z = scipy.stats.norm.ppf(0.5 + INTERVAL / 2)
NEW = np.linspace(-0.1, 1.1, 41)[:, np.newaxis]


@pytest.fixture(scope="module")
def data():
    return seed004_gp(200, random_seed=3)


def _fitted(model, data):
    estimate = model.point_estimate(data, "map")
    return estimate, model.gaussian_approximation(data, "map")


def _hyperparameters(estimate):
    return estimate["lengthscale"].values, float(estimate["amplitude"]), float(estimate["constant"])


def _scikit_learn_exact(estimate, model, data):
    lengthscale, amplitude, constant = _hyperparameters(estimate)
    kernel = (
        ConstantKernel(constant**2, "fixed")
        + ConstantKernel(amplitude**2, "fixed") * RBF(lengthscale, "fixed")
        + WhiteKernel(model.jitter * amplitude**2, "fixed")
    )
    return GaussianProcessClassifier(kernel=kernel, optimizer=None).fit(data.X, data.y).base_estimator_


def _latent_covariance(reference, x):
    """Scikit-learn's Laplace covariance of the training latents, K - v'v, from its own factor L and W^1/2."""
    covariance = reference.kernel_(x)
    v = scipy.linalg.solve_triangular(reference.L_, reference.W_sr_[:, np.newaxis] * covariance, lower=True)
    return covariance - v.T @ v


def test_exact_laplace_gaussian_and_intervals_equal_scikit_learns(data):
    model = LatentGaussianProcess()
    estimate, approximation = _fitted(model, data)
    reference = _scikit_learn_exact(estimate, model, data)
    assert approximation.names == ("latent",)
    assert approximation.labels[:2] == ("latent[0]", "latent[1]")
    np.testing.assert_allclose(approximation.params, reference.f_cached, atol=1e-6)
    np.testing.assert_allclose(estimate["laplace_weight"].values, reference.W_sr_**2, atol=1e-6)
    np.testing.assert_allclose(approximation.covariance, _latent_covariance(reference, data.X), atol=1e-6)
    assert "type-II maximum-likelihood" in approximation.curvature and "not included" in approximation.curvature
    mean, variance = reference.latent_mean_and_variance(NEW)
    amplitude = _hyperparameters(estimate)[1]
    variance = variance - model.jitter * amplitude**2  # scikit-learn's WhiteKernel.diag adds the jitter at x*
    low, high = model.class_proba_interval_kernel(estimate, approximation, INTERVAL)(NEW)
    half = Z * np.sqrt(variance)
    np.testing.assert_allclose(low[:, 1], scipy.special.expit(mean - half), atol=1e-6)
    np.testing.assert_allclose(high[:, 1], scipy.special.expit(mean + half), atol=1e-6)
    np.testing.assert_allclose(low[:, 0], 1 - high[:, 1], atol=1e-12)
    np.testing.assert_allclose(high[:, 0], 1 - low[:, 1], atol=1e-12)


def test_hsgp_laplace_gaussian_and_intervals_equal_scikit_learns_on_the_scaled_basis(data):
    model = LatentGaussianProcess(approximation="hsgp", hsgp_basis=20)
    estimate, approximation = _fitted(model, data)
    assert approximation.names == ("basis_weight",)
    assert approximation.labels[0] == "basis_weight[constant]"
    np.testing.assert_allclose(  # the covariance the estimate holds (symmetrised)
        approximation.covariance,
        estimate["laplace_weight_covariance"].transpose("basis", "other_basis").values,
        rtol=1e-12,
        atol=1e-15,
    )
    lengthscale, amplitude, constant = _hyperparameters(estimate)
    frequencies = estimate["hsgp_frequency"].transpose("basis", "feature").values[1:]
    center, half_width = estimate["hsgp_center"].values, estimate["hsgp_half_width"].values
    prior_sd = np.concatenate([[constant], amplitude * np.sqrt(spectral_density(frequencies, lengthscale))])

    def scaled_basis(x):
        return np.hstack([np.ones((len(x), 1)), hsgp_basis(x, center, half_width, frequencies)]) * prior_sd

    features = scaled_basis(data.X)
    reference = (
        GaussianProcessClassifier(kernel=DotProduct(0.0, "fixed"), optimizer=None).fit(features, data.y).base_estimator_
    )
    basis = features / prior_sd
    np.testing.assert_allclose(basis @ approximation.params, reference.f_cached, atol=1e-6)
    np.testing.assert_allclose(
        basis @ approximation.covariance @ basis.T, _latent_covariance(reference, features), atol=1e-6
    )
    mean, variance = reference.latent_mean_and_variance(scaled_basis(NEW))
    low, high = model.class_proba_interval_kernel(estimate, approximation, INTERVAL)(NEW)
    half = Z * np.sqrt(np.maximum(variance, 0.0))
    np.testing.assert_allclose(low[:, 1], scipy.special.expit(mean - half), atol=1e-6)
    np.testing.assert_allclose(high[:, 1], scipy.special.expit(mean + half), atol=1e-6)


@pytest.fixture(scope="module")
def small():
    return seed004_gp(100, random_seed=3)


@pytest.mark.parametrize("link", ["logit", "probit"])
def test_exact_laplace_gaussian_and_intervals_equal_their_closed_forms(small, link):
    """(K^-1 + W)^-1 with W the likelihood's curvature at the mode, and [g(m -+ z s)] of GPML's (3.21), (3.24)."""
    data = small
    model = LatentGaussianProcess(link=link, jitter=1e-3)  # K^-1 is formed directly here: a well-conditioned K
    estimate, approximation = _fitted(model, data)
    assert 0.05 < estimate["lengthscale"].item() < 1  # a latent that varies over the inputs
    lengthscale, amplitude, constant = _hyperparameters(estimate)
    x, sign = data.X, 2.0 * data.y - 1.0
    covariance = kernel_matrix(x, x, lengthscale=lengthscale, amplitude=amplitude, constant=constant)
    covariance += 1e-3 * amplitude**2 * np.eye(len(x))
    mode = approximation.params
    u = sign * mode
    if link == "logit":
        p = scipy.special.expit(mode)
        gradient, w = data.y - p, p * (1 - p)
    else:
        ratio = np.exp(scipy.stats.norm.logpdf(u) - scipy.special.log_ndtr(u))  # phi(u) / Phi(u)
        gradient, w = sign * ratio, ratio * (u + ratio)
    np.testing.assert_allclose(mode, covariance @ gradient, atol=1e-6)  # the mode: z = K grad log p(y | z)
    np.testing.assert_allclose(estimate["laplace_weight"].values, w, rtol=1e-8, atol=1e-12)
    expected = np.linalg.inv(np.linalg.inv(covariance) + np.diag(w))
    np.testing.assert_allclose(approximation.covariance, expected, atol=1e-6 * np.abs(expected).max())
    cross = kernel_matrix(x, NEW, lengthscale=lengthscale, amplitude=amplitude, constant=constant)
    mean = cross.T @ gradient
    variance = (
        amplitude**2 + constant**2 - np.einsum("ij,ij->j", cross, np.linalg.solve(covariance + np.diag(1 / w), cross))
    )
    cdf = scipy.special.expit if link == "logit" else scipy.special.ndtr
    low, high = model.class_proba_interval_kernel(estimate, approximation, INTERVAL)(NEW)
    np.testing.assert_allclose(low[:, 1], cdf(mean - Z * np.sqrt(variance)), atol=1e-6)
    np.testing.assert_allclose(high[:, 1], cdf(mean + Z * np.sqrt(variance)), atol=1e-6)
    assert np.all(high[:, 1] - low[:, 1] > 0)


def _flat(posterior, name):
    values = posterior[name].values
    return values.reshape(values.shape[0] * values.shape[1], -1)


@pytest.mark.parametrize("approximation", ["exact", "hsgp"])
def test_laplace_draws_have_the_mode_and_covariance_with_the_hyperparameters_fixed(data, approximation):
    model = LatentGaussianProcess(approximation=approximation, hsgp_basis=20)
    result = bc.fit(model, data, method="laplace", sampler=bc.SamplerSettings(draws=2500, chains=4), random_seed=5)
    posterior = result["posterior"].to_dataset()
    latent = "latent" if approximation == "exact" else "basis_weight"
    assert list(posterior.data_vars) == list(model.parameter_names(data))
    assert posterior["lengthscale"].dims == ("chain", "draw", "feature")
    assert posterior["amplitude"].dims == posterior["constant"].dims == ("chain", "draw")
    assert posterior[latent].dims == ("chain", "draw", "obs" if approximation == "exact" else "basis")
    estimate = result["point_estimate_map"].to_dataset()
    for name in ("lengthscale", "amplitude", "constant"):  # the type-II ML values in every draw
        np.testing.assert_array_equal(
            _flat(posterior, name), np.broadcast_to(estimate[name].values, _flat(posterior, name).shape)
        )
    stored = gaussian_approximation(result, "map")
    assert stored.names == (latent,)
    draws = _flat(posterior, latent)
    n = len(draws)
    variance = np.diag(stored.covariance)
    assert np.all(np.abs(draws.mean(axis=0) - stored.params) <= 5 * np.sqrt(variance / n) + 1e-12)
    error = np.sqrt((np.outer(variance, variance) + stored.covariance**2) / n)
    assert np.all(np.abs(np.cov(draws, rowvar=False) - stored.covariance) <= 5 * error + 1e-12)


@pytest.fixture(scope="module")
def laplace_result(data):
    return bc.fit(
        LatentGaussianProcess(), data, method="laplace", sampler=bc.SamplerSettings(draws=1000, chains=4), random_seed=2
    )


def test_laplace_predictive_averages_to_the_map_plug_in(laplace_result):
    """Mixing f* | z over z ~ N(z-hat, Sigma) is f* ~ N(m, s^2): the draws' mean probability is the map's."""
    prediction = bc.predict(laplace_result, NEW)
    draws, plug_in = prediction["class_proba"].values, prediction["class_proba_map"].values
    assert np.abs(draws - plug_in).max() < 0.02
    low, high = prediction["class_proba_map_low"].values, prediction["class_proba_map_high"].values
    assert np.all((low <= high) & (low >= 0) & (high <= 1))
    assert np.all(prediction["class_proba_high"].values >= prediction["class_proba_low"].values)


def test_laplace_diagnosis_states_no_verdict_and_names_the_fixed_hyperparameters(laplace_result):
    report = diagnose(laplace_result)
    assert not report.applies
    text = str(report)
    assert "no verdict: independent draws" in text
    assert "lengthscale[x], amplitude, constant" in text and "take one value in every draw" in text


def test_hyperparameters_are_compared_without_a_standard_error(laplace_result):
    rows = parameter_comparison(laplace_result)
    assert [row["parameter"] for row in rows] == ["lengthscale[x]", "amplitude", "constant"]
    for row in rows:
        assert row["map_se"] is None and row["map_low"] is None
        assert row["sd"] == pytest.approx(0.0, abs=1e-12)  # held at the type-II ML value in every draw
        assert row["mean"] == pytest.approx(row["map"], rel=1e-12)


def test_report_says_what_the_map_covariance_covers(laplace_result):
    from bayesclass.inference.evaluation.report_evaluation import estimates
    from bayesclass.inference.result import result_info

    table = estimates(laplace_result, result_info(laplace_result), interval_prob=INTERVAL)
    assert [kind for kind, _ in table.covariance_notes] == ["map"]
    note = table.covariance_notes[0][1]
    assert "over latent only" in note and "type-II maximum-likelihood" in note and "not included" in note
