"""Latent GP classification groundwork (issue 5): kernels, the Laplace approximation, seed 004's generator."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.integrate
import scipy.optimize
import scipy.special
import xarray as xr
from sklearn.gaussian_process import GaussianProcessClassifier
from sklearn.gaussian_process.kernels import RBF, ConstantKernel, Matern

import inference
from data import Dataset, load, seed004_gp, seed004_gp_truth
from inference import SamplerSettings
from models.base import ConvergenceError
from models.gaussian_process import GaussianProcessPrior, LatentGaussianProcess, kernel_matrix, laplace_fit, laplace_predict

SEED004_LENGTHSCALE = 1 / np.sqrt(50)  # exp(-5^2 r^2) = exp(-r^2 / (2 l^2))


def seed004_covariance(a, b):
    return kernel_matrix(a, b, lengthscale=SEED004_LENGTHSCALE, amplitude=3.0, constant=0.5)


@pytest.fixture(scope="module")
def seed004_data():
    return seed004_gp(200, random_seed=3)


def test_kernels_match_their_formulas_and_scikit_learn():
    rng = np.random.default_rng(0)
    x1, x2 = rng.uniform(size=(7, 1)), rng.uniform(size=(5, 1))
    explicit = 0.5**2 + 3**2 * np.exp(-(5**2) * (x1 - x2.T) ** 2)  # seed 004's covariance function
    np.testing.assert_allclose(seed004_covariance(x1, x2), explicit, rtol=1e-12)
    a, b = rng.normal(size=(6, 3)), rng.normal(size=(4, 3))
    scales = np.array([0.5, 1.0, 2.0])
    ard = kernel_matrix(a, b, lengthscale=scales, amplitude=1.5, constant=0.0)
    np.testing.assert_allclose(ard, 1.5**2 * RBF(length_scale=scales)(a, b), rtol=1e-12)
    matern = kernel_matrix(a, b, lengthscale=scales, amplitude=1.0, kernel="matern52")
    np.testing.assert_allclose(matern, Matern(length_scale=scales, nu=2.5)(a, b), rtol=1e-10)
    gram = kernel_matrix(a, a, lengthscale=scales, amplitude=1.0, constant=0.3, kernel="matern52")
    assert np.linalg.eigvalsh(gram).min() > -1e-12
    np.testing.assert_allclose(np.diag(gram), 0.3**2 + 1.0, rtol=1e-12)


@pytest.mark.parametrize("bad", [0.0, -1.0, np.nan, [1.0, -0.5]])
def test_non_positive_lengthscale_is_an_error(bad):
    with pytest.raises(ValueError, match="lengthscale must be positive"):
        kernel_matrix(np.zeros((2, 2)), np.zeros((2, 2)), lengthscale=bad, amplitude=1.0)


def test_laplace_logit_agrees_with_scikit_learn(seed004_data):
    """Same kernel, fixed hyperparameters: latent mode to 1e-6, predictive probabilities to 1e-3."""
    x, y = seed004_data.X, seed004_data.y
    fit = laplace_fit(x, y, seed004_covariance(x, x), link="logit")
    kernel = ConstantKernel(0.25, "fixed") + ConstantKernel(9.0, "fixed") * RBF(SEED004_LENGTHSCALE, "fixed")
    reference = GaussianProcessClassifier(kernel=kernel, optimizer=None).fit(x, y)
    np.testing.assert_allclose(fit.mode, reference.base_estimator_.f_cached, atol=1e-6)
    assert fit.log_marginal_likelihood == pytest.approx(reference.log_marginal_likelihood_value_, abs=1e-8)
    new = np.linspace(-0.1, 1.1, 61)[:, np.newaxis]
    mean, variance, proba = laplace_predict(fit, seed004_covariance(x, new), np.full(61, 0.25 + 9.0))
    reference_mean, reference_variance = reference.base_estimator_.latent_mean_and_variance(new)
    np.testing.assert_allclose(mean, reference_mean, atol=1e-8)
    np.testing.assert_allclose(variance, reference_variance, atol=1e-8)
    np.testing.assert_allclose(proba, reference.predict_proba(new)[:, 1], atol=1e-3)


@pytest.mark.parametrize("link", ["logit", "probit"])
def test_laplace_mode_maximises_the_latent_posterior(seed004_data, link):
    x, y = seed004_data.X, seed004_data.y
    covariance = seed004_covariance(x, x)
    fit = laplace_fit(x, y, covariance, link=link)
    # stationarity: z = K grad log p(y | z)
    np.testing.assert_allclose(fit.mode, covariance @ fit.gradient, atol=1e-8)
    # and it is the optimum a generic optimiser finds in whitened coordinates z = L u
    factor = np.linalg.cholesky(covariance + 1e-10 * np.eye(len(y)))
    inverse_link = scipy.special.expit if link == "logit" else scipy.special.ndtr

    def negative_log_posterior(u):
        z = factor @ u
        p = np.clip(inverse_link(z), 1e-300, 1 - 1e-16)
        return 0.5 * u @ u - np.sum(y * np.log(p) + (1 - y) * np.log1p(-p))

    start = np.linalg.solve(factor, fit.mode)
    assert negative_log_posterior(start) <= negative_log_posterior(start + 1e-3 * np.random.default_rng(0).normal(size=len(y)))
    found = scipy.optimize.minimize(negative_log_posterior, np.zeros(len(y)), method="L-BFGS-B", options={"maxiter": 5000})
    assert negative_log_posterior(start) <= found.fun + 1e-6


def test_probit_and_logit_differ_as_expected(seed004_data):
    """Probit's tails are lighter: the same labels give a latent mode of smaller magnitude (logit ~ 1.7 probit)."""
    x, y = seed004_data.X, seed004_data.y
    covariance = seed004_covariance(x, x)
    logit = laplace_fit(x, y, covariance, link="logit").mode
    probit = laplace_fit(x, y, covariance, link="probit").mode
    assert np.abs(probit).mean() < np.abs(logit).mean()
    assert np.corrcoef(logit, probit)[0, 1] > 0.99


@pytest.mark.parametrize(("mean", "variance"), [(0.0, 1.0), (2.0, 0.5), (-3.0, 4.0), (1.0, 1e-8)])
def test_predictive_probability_is_the_latent_average_of_the_link(mean, variance):
    fit = laplace_fit(np.zeros((1, 1)), np.array([1]), np.ones((1, 1)), link="logit")
    # a fit whose prediction has exactly this latent mean and variance: gradient and B chosen by hand
    fit = type(fit)(x=fit.x, y=fit.y, link="logit", mode=fit.mode, gradient=np.array([mean]), sqrt_w=np.array([0.0]),
                    cholesky_b=np.ones((1, 1)), log_marginal_likelihood=0.0, iterations=1)  # fmt: skip
    m, v, proba = laplace_predict(fit, np.ones((1, 1)), np.array([variance]))
    assert m[0] == pytest.approx(mean) and v[0] == pytest.approx(variance)
    exact, _ = scipy.integrate.quad(
        lambda z: scipy.special.expit(z) * np.exp(-0.5 * (z - mean) ** 2 / variance) / np.sqrt(2 * np.pi * variance),
        mean - 12 * np.sqrt(variance), mean + 12 * np.sqrt(variance), points=[mean], limit=200,
    )  # fmt: skip
    assert proba[0] == pytest.approx(exact, abs=1e-10)
    probit_fit = type(fit)(**{**fit.__dict__, "link": "probit"})
    _, _, probit = laplace_predict(probit_fit, np.ones((1, 1)), np.array([variance]))
    draws = np.random.default_rng(1).normal(mean, np.sqrt(variance), size=400_000)
    assert probit[0] == pytest.approx(scipy.special.ndtr(draws).mean(), abs=3e-3)


def test_laplace_rejects_bad_input():
    with pytest.raises(ValueError, match="binary labels 0 and 1"):
        laplace_fit(np.zeros((3, 1)), np.array([0, 1, 2]), np.eye(3))
    with pytest.raises(ValueError, match="link must be 'logit' or 'probit'"):
        laplace_fit(np.zeros((2, 1)), np.array([0, 1]), np.eye(2), link="cauchit")


@pytest.mark.parametrize("link", ["logit", "probit"])
def test_seed004_generator(link):
    truth = seed004_gp_truth(300, random_seed=5, link=link)
    again = seed004_gp_truth(300, random_seed=5, link=link)
    for key in ("x", "latent", "proba", "y"):
        np.testing.assert_array_equal(truth[key], again[key])
    assert np.all((truth["x"] > 0) & (truth["x"] < 1))
    inverse_link = scipy.special.expit if link == "logit" else scipy.special.ndtr
    np.testing.assert_allclose(truth["proba"], inverse_link(truth["latent"]), rtol=1e-12)
    # labels follow the probabilities: the mean label is within 4 binomial standard errors of the mean probability
    assert abs(truth["y"].mean() - truth["proba"].mean()) < 4 * np.sqrt(0.25 / 300)
    # the latent is smooth at the seed's length scale: neighbours in x have close latents
    order = np.argsort(truth["x"])
    assert np.abs(np.diff(truth["latent"][order])).max() < 1.5
    data = seed004_gp(300, random_seed=5, link=link)
    np.testing.assert_array_equal(data.X[:, 0], truth["x"])
    np.testing.assert_array_equal(data.y, truth["y"])
    assert "seed 004" in data.provenance


def test_seed004_latent_has_the_seed_covariance():
    """Across many independent draws at the same two inputs, the latent covariance is K(x, x')."""
    draws = np.array([seed004_gp_truth(2, random_seed=s)["latent"] for s in range(4000)])
    xs = np.array([seed004_gp_truth(2, random_seed=s)["x"] for s in range(4000)])
    # the inputs differ per draw; compare E[z_1 z_2] with E[K(x_1, x_2)] (both have mean 0)
    expected = (0.25 + 9 * np.exp(-25 * (xs[:, 0] - xs[:, 1]) ** 2)).mean()
    standard_error = (draws[:, 0] * draws[:, 1]).std() / np.sqrt(len(draws))
    assert abs((draws[:, 0] * draws[:, 1]).mean() - expected) < 4 * standard_error
    assert abs((draws**2).mean() - 9.25) < 4 * (draws**2).std() / np.sqrt(draws.size)


def test_laplace_reports_non_convergence(seed004_data):
    x, y = seed004_data.X, seed004_data.y
    with pytest.raises(ConvergenceError, match="did not converge in 2 Newton steps"):
        laplace_fit(x, y, seed004_covariance(x, x), max_iter=2)


# --------------------------------------------------------------------------- the family (not registered yet)



@pytest.fixture(scope="module")
def small_gp_data():
    return seed004_gp(60, random_seed=11).standardized()


def test_pymc_model_latent_and_likelihood_are_the_textbook_ones(small_gp_data):
    for link in ("logit", "probit"):
        model = LatentGaussianProcess(link=link, kernel="matern52")
        pymc_model = model.build(small_gp_data)
        rng = np.random.default_rng(0)
        point = {name: value + rng.normal(scale=0.5, size=np.shape(value)) for name, value in pymc_model.initial_point().items()}
        outputs = pymc_model.replace_rvs_by_values(
            [pymc_model["latent"], pymc_model["lengthscale"], pymc_model["amplitude"], pymc_model["constant"],
             pymc_model["latent_whitened"], pymc_model.potentials[0]]
        )  # fmt: skip
        evaluate = pymc_model.compile_fn(outputs, point_fn=True)
        latent, lengthscale, amplitude, constant, whitened, likelihood = evaluate(point)
        x = small_gp_data.X
        covariance = kernel_matrix(x, x, lengthscale=lengthscale, amplitude=amplitude, constant=constant, kernel="matern52")
        covariance += model.jitter * amplitude**2 * np.eye(len(x))
        np.testing.assert_allclose(latent, np.linalg.cholesky(covariance) @ whitened, rtol=1e-8, atol=1e-10)
        inverse_link = scipy.special.expit if link == "logit" else scipy.special.ndtr
        p = inverse_link(latent)
        y = small_gp_data.y
        assert likelihood == pytest.approx(np.sum(y * np.log(p) + (1 - y) * np.log1p(-p)), rel=1e-7)


def test_laplace_point_estimate_maximises_the_evidence_and_predicts(small_gp_data):
    model = LatentGaussianProcess()
    estimate = model.point_estimate(small_gp_data, "map")
    x, y = small_gp_data.X, small_gp_data.y

    def evidence(lengthscale, amplitude, constant):
        covariance = kernel_matrix(x, x, lengthscale=lengthscale, amplitude=amplitude, constant=constant)
        covariance += model.jitter * (amplitude**2 + constant**2) * np.eye(len(x))
        return laplace_fit(x, y, covariance).log_marginal_likelihood, covariance

    best, covariance = evidence(estimate["lengthscale"].values, float(estimate["amplitude"]), float(estimate["constant"]))
    np.testing.assert_allclose(estimate["latent"].values, laplace_fit(x, y, covariance).mode, atol=1e-8)
    for factor in (0.7, 1.4):
        assert best >= evidence(estimate["lengthscale"].values * factor, float(estimate["amplitude"]), float(estimate["constant"]))[0] - 1e-6
        assert best >= evidence(estimate["lengthscale"].values, float(estimate["amplitude"]) * factor, float(estimate["constant"]))[0] - 1e-6
    new = np.linspace(-2, 2, 25)[:, np.newaxis]
    proba = model.class_proba(estimate, new)
    assert proba.dims == ("obs", "class")
    np.testing.assert_allclose(proba.sum("class").values, 1.0, atol=1e-12)
    _, _, expected = laplace_predict(laplace_fit(x, y, covariance), kernel_matrix(
        x, new, lengthscale=estimate["lengthscale"].values, amplitude=float(estimate["amplitude"]),
        constant=float(estimate["constant"])), np.full(25, float(estimate["amplitude"]) ** 2 + float(estimate["constant"]) ** 2))  # fmt: skip
    np.testing.assert_allclose(proba.sel({"class": "1"}).values, expected, atol=1e-12)


@pytest.mark.parametrize("link", ["logit", "probit"])
def test_draws_interpolate_their_latent_at_training_inputs(small_gp_data, link):
    """Per draw, f(x_i) | z, theta = z_i at a training input (variance ~0), so P(y=1) = link(z_i) there."""
    model = LatentGaussianProcess(link=link)
    rng = np.random.default_rng(2)
    n = small_gp_data.n_obs
    lengthscale, amplitude, constant = rng.uniform(0.3, 1.0, 3), rng.uniform(1.0, 3.0, 3), rng.uniform(0.1, 1.0, 3)
    x = small_gp_data.X
    latent = np.array([  # a draw of the GP prior per parameter draw (a latent the model can produce)
        np.linalg.cholesky(kernel_matrix(x, x, lengthscale=ell, amplitude=a, constant=c) + 1e-9 * np.eye(n)) @ rng.normal(size=n)
        for ell, a, c in zip(lengthscale, amplitude, constant, strict=True)
    ])  # fmt: skip
    draws = xr.Dataset(
        {
            "lengthscale": (("chain", "draw", "feature"), lengthscale.reshape(1, 3, 1)),
            "amplitude": (("chain", "draw"), amplitude.reshape(1, 3)),
            "constant": (("chain", "draw"), constant.reshape(1, 3)),
            "latent": (("chain", "draw", "obs"), latent.reshape(1, 3, n)),
        },
    ).assign_coords(model.parameter_coords(small_gp_data))
    proba = model.class_proba(draws, small_gp_data.X[:10]).sel({"class": "1"}).values  # (chain, draw, obs)
    inverse_link = scipy.special.expit if link == "logit" else scipy.special.ndtr
    np.testing.assert_allclose(proba, inverse_link(draws["latent"].values[..., :10]), atol=2e-3)


def test_family_rejects_bad_input():
    with pytest.raises(ValueError, match="binary.*multiclass latent GPs"):
        LatentGaussianProcess().check_training_data(load("iris"))
    with pytest.raises(ValueError, match="link must be 'logit' or 'probit'"):
        LatentGaussianProcess(link="cauchit")
    with pytest.raises(ValueError, match="kernel must be"):
        LatentGaussianProcess(kernel="periodic")
    for bad in (0.0, -1.0):
        with pytest.raises(ValueError, match="lengthscale_alpha must be a positive finite number"):
            GaussianProcessPrior(lengthscale_alpha=bad)
    two_inputs = Dataset(name="two", X=np.random.default_rng(0).normal(size=(20, 2)), y=np.tile([0, 1], 10),
                         feature_names=("a", "b"), class_names=("0", "1"), feature_kinds=("continuous",) * 2)  # fmt: skip
    estimate = LatentGaussianProcess().point_estimate(two_inputs, "map")
    with pytest.raises(ValueError, match="X"):
        LatentGaussianProcess().class_proba(estimate, np.zeros((3, 1)))  # one input dimension given, two expected


@pytest.mark.slow
def test_nuts_covers_the_true_latent(small_gp_data):
    """Seed 004 generator, n = 100 (standardised x): the true latent lies in the 89% posterior band at >= 80% of
    the training inputs. (The issue's n = 200 version belongs to the unfinished part of issue 5.)"""
    truth = seed004_gp_truth(100, random_seed=3)
    training = seed004_gp(100, random_seed=3)
    result = inference.fit(LatentGaussianProcess(), training, method="nuts", standardize=True,
                           sampler=SamplerSettings(draws=500, tune=500, chains=2, progressbar=False), random_seed=4)  # fmt: skip
    latent = result["posterior"]["latent"].values.reshape(-1, 100)
    low, high = np.quantile(latent, [0.055, 0.945], axis=0)
    assert np.mean((truth["latent"] >= low) & (truth["latent"] <= high)) >= 0.8
