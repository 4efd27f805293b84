"""Latent GP classification groundwork (issue 5): kernels, the Laplace approximation, seed 004's generator."""

from __future__ import annotations

import contextlib
import json
import re

import numpy as np
import pymc as pm
import pytensor
import pytensor.tensor as pt
import pytest
import scipy.integrate
import scipy.linalg
import scipy.optimize
import scipy.special
import scipy.stats
import xarray as xr
from pytensor.compile.sharedvalue import SharedVariable
from pytensor.graph.traversal import ancestors
from sklearn.gaussian_process import GaussianProcessClassifier
from sklearn.gaussian_process.kernels import RBF, ConstantKernel, Matern
from threadpoolctl import threadpool_limits

import bayesclass.inference.engines.sampling as sampling_module
from bayesclass import inference
from bayesclass.data import Dataset, load, seed004_gp, seed004_gp_truth
from bayesclass.inference import SamplerSettings
from bayesclass.inference.engines.fit import standardization_of
from bayesclass.models import model_from_dict
from bayesclass.models._kernels import hsgp_basis, hsgp_frequencies, kernel_gradients, kernel_matrix, spectral_density
from bayesclass.models._laplace import (
    LaplaceFit,
    laplace_evidence_gradient,
    laplace_fit,
    laplace_predict,
    weight_laplace_fit,
)
from bayesclass.models._latent_op import WhitenedLatent
from bayesclass.models.base import ConvergenceError
from bayesclass.models.gaussian_process import EXACT_UP_TO, HSGP_MAX_BASIS, GaussianProcessPrior, LatentGaussianProcess

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
    assert negative_log_posterior(start) <= negative_log_posterior(
        start + 1e-3 * np.random.default_rng(0).normal(size=len(y))
    )
    found = scipy.optimize.minimize(
        negative_log_posterior, np.zeros(len(y)), method="L-BFGS-B", options={"maxiter": 5000}
    )
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
    fit = type(fit)(
        x=fit.x,
        y=fit.y,
        link="logit",
        mode=fit.mode,
        gradient=np.array([mean]),
        sqrt_w=np.array([0.0]),
        cholesky_b=np.ones((1, 1)),
        log_marginal_likelihood=0.0,
        iterations=1,
    )
    m, v, proba = laplace_predict(fit, np.ones((1, 1)), np.array([variance]))
    assert m[0] == pytest.approx(mean) and v[0] == pytest.approx(variance)
    exact, _ = scipy.integrate.quad(
        lambda z: scipy.special.expit(z) * np.exp(-0.5 * (z - mean) ** 2 / variance) / np.sqrt(2 * np.pi * variance),
        mean - 12 * np.sqrt(variance),
        mean + 12 * np.sqrt(variance),
        points=[mean],
        limit=200,
    )
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
        point = {
            name: value + rng.normal(scale=0.5, size=np.shape(value))
            for name, value in pymc_model.initial_point().items()
        }
        outputs = pymc_model.replace_rvs_by_values(
            [
                pymc_model["latent"],
                pymc_model["lengthscale"],
                pymc_model["amplitude"],
                pymc_model["constant"],
                pymc_model["latent_whitened"],
                pymc_model.potentials[0],
            ]
        )
        evaluate = pymc_model.compile_fn(outputs, point_fn=True)
        latent, lengthscale, amplitude, constant, whitened, likelihood = evaluate(point)
        x = small_gp_data.X
        covariance = kernel_matrix(
            x, x, lengthscale=lengthscale, amplitude=amplitude, constant=constant, kernel="matern52"
        )
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

    best, covariance = evidence(
        estimate["lengthscale"].values, float(estimate["amplitude"]), float(estimate["constant"])
    )
    np.testing.assert_allclose(estimate["latent"].values, laplace_fit(x, y, covariance).mode, atol=1e-8)
    for factor in (0.7, 1.4):
        assert (
            best
            >= evidence(
                estimate["lengthscale"].values * factor, float(estimate["amplitude"]), float(estimate["constant"])
            )[0]
            - 1e-6
        )
        assert (
            best
            >= evidence(
                estimate["lengthscale"].values, float(estimate["amplitude"]) * factor, float(estimate["constant"])
            )[0]
            - 1e-6
        )
    new = np.linspace(-2, 2, 25)[:, np.newaxis]
    proba = model.class_proba(estimate, new)
    assert proba.dims == ("obs", "class")
    np.testing.assert_allclose(proba.sum("class").values, 1.0, atol=1e-12)
    _, _, expected = laplace_predict(
        laplace_fit(x, y, covariance),
        kernel_matrix(
            x,
            new,
            lengthscale=estimate["lengthscale"].values,
            amplitude=float(estimate["amplitude"]),
            constant=float(estimate["constant"]),
        ),
        np.full(25, float(estimate["amplitude"]) ** 2 + float(estimate["constant"]) ** 2),
    )
    np.testing.assert_allclose(proba.sel({"class": "1"}).values, expected, atol=1e-12)


@pytest.mark.parametrize("link", ["logit", "probit"])
def test_draws_interpolate_their_latent_at_training_inputs(small_gp_data, link):
    """Per draw, f(x_i) | z, theta = z_i at a training input (variance ~0), so P(y=1) = link(z_i) there."""
    model = LatentGaussianProcess(link=link)
    rng = np.random.default_rng(2)
    n = small_gp_data.n_obs
    lengthscale, amplitude, constant = rng.uniform(0.3, 1.0, 3), rng.uniform(1.0, 3.0, 3), rng.uniform(0.1, 1.0, 3)
    x = small_gp_data.X
    latent = np.array(
        [  # a draw of the GP prior per parameter draw (a latent the model can produce)
            np.linalg.cholesky(kernel_matrix(x, x, lengthscale=ell, amplitude=a, constant=c) + 1e-9 * np.eye(n))
            @ rng.normal(size=n)
            for ell, a, c in zip(lengthscale, amplitude, constant, strict=True)
        ]
    )
    draws = xr.Dataset(
        {
            "lengthscale": (("chain", "draw", "feature"), lengthscale.reshape(1, 3, 1)),
            "amplitude": (("chain", "draw"), amplitude.reshape(1, 3)),
            "constant": (("chain", "draw"), constant.reshape(1, 3)),
            "latent": (("chain", "draw", "obs"), latent.reshape(1, 3, n)),
        },
    ).assign_coords(model.coords(small_gp_data))
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
    two_inputs = Dataset(
        name="two",
        X=np.random.default_rng(0).normal(size=(20, 2)),
        y=np.tile([0, 1], 10),
        feature_names=("a", "b"),
        class_names=("0", "1"),
        feature_kinds=("continuous",) * 2,
    )
    estimate = LatentGaussianProcess().point_estimate(two_inputs, "map")
    with pytest.raises(ValueError, match="X"):
        LatentGaussianProcess().class_proba(estimate, np.zeros((3, 1)))  # one input dimension given, two expected


# -- the lengthscale prior (issue 39): an input the labels do not inform can switch off -------------------------------


def test_pc_lengthscale_prior_is_the_stated_density_and_tail_statement():
    """l^(-1/2) ~ Exponential(rate): l is Frechet (inverse Weibull) with shape 1/2 and scale rate^2 (SciPy's), the
    rate from P(l < 0.2) = 0.05; the density is of log l (Jacobian included) and integrates to 1; mass stays far out
    (the base model, l = infinity), where InverseGamma(3, 2) has almost none."""
    prior = GaussianProcessPrior()
    assert prior.lengthscale_prior == "pc"
    rate = -np.log(0.05) * np.sqrt(0.2)
    assert prior.pc_rate == pytest.approx(rate, rel=1e-14)
    frechet = scipy.stats.invweibull(0.5, scale=rate**2)
    t = np.linspace(-5.0, 40.0, 10)
    np.testing.assert_allclose(prior.log_lengthscale_density(t), frechet.logpdf(np.exp(t)) + t, rtol=1e-12)

    def mass(low, high):
        return scipy.integrate.quad(lambda s: np.exp(prior.log_lengthscale_density(s)), low, high, limit=200)[0]

    assert mass(-100.0, np.log(0.2)) == pytest.approx(0.05, rel=1e-7)
    assert mass(-20.0, 400.0) == pytest.approx(1.0, rel=1e-7)  # e^(-t/2) tail: 1e-87 left beyond t = 400
    assert frechet.cdf(prior.lengthscale_median()) == pytest.approx(0.5, rel=1e-12)
    assert mass(np.log(100.0), 400.0) == pytest.approx(1 - np.exp(-rate / 10), rel=1e-7)  # 0.125 beyond 100 sd
    old = GaussianProcessPrior(lengthscale_prior="inverse_gamma")
    inverse_gamma = scipy.stats.invgamma(3.0, scale=2.0)
    np.testing.assert_allclose(old.log_lengthscale_density(t), inverse_gamma.logpdf(np.exp(t)) + t, rtol=1e-12)
    assert old.lengthscale_median() == pytest.approx(inverse_gamma.median(), rel=1e-12)
    assert inverse_gamma.sf(100.0) < 1e-5


def test_lengthscale_prior_options_are_validated():
    for bad in (0, 1, 1.5, -0.1, np.nan):
        with pytest.raises(ValueError, match=r"lengthscale_lower_prob must be a number in \(0, 1\)"):
            GaussianProcessPrior(lengthscale_lower_prob=bad)
    for bad in (0, -1.0, np.inf):
        with pytest.raises(ValueError, match="lengthscale_lower must be a positive finite number"):
            GaussianProcessPrior(lengthscale_lower=bad)
    with pytest.raises(ValueError, match="lengthscale_prior must be 'pc' or 'inverse_gamma', got 'gamma'"):
        GaussianProcessPrior(lengthscale_prior="gamma")


def test_hsgp_by_nuts_under_the_pc_prior_warns_at_fit_time():
    """NUTS is not calibrated on the HSGP under the PC prior (tests/inference/test_calibration.py): a fit warns,
    naming the default Gibbs sampler and the InverseGamma prior, and records the warning with the result; the default
    method, NUTS under InverseGamma and NUTS on the exact GP do not warn."""
    import warnings

    data = seed004_gp(30, random_seed=4)
    hsgp = LatentGaussianProcess(approximation="hsgp", hsgp_basis=8)
    message = (
        r"method='nuts' is not calibrated on the HSGP approximation under the PC lengthscale prior .*; use the "
        r"default method='gibbs', or GaussianProcessPrior\(lengthscale_prior='inverse_gamma'\)$"
    )
    few = SamplerSettings(draws=5, tune=5, chains=1, progressbar=False)
    with pytest.warns(UserWarning, match=message):
        result = inference.fit(hsgp, data, method="nuts", sampler=few)
    assert "method='nuts' is not calibrated" in result.attrs["fit_warnings"]
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="method='nuts' is not calibrated", category=UserWarning)
        result = inference.fit(hsgp, data, sampler=few)
    assert result.attrs["method"] == "gibbs"
    inverse_gamma = GaussianProcessPrior(lengthscale_prior="inverse_gamma")
    assert LatentGaussianProcess(approximation="hsgp", prior=inverse_gamma).method_warnings("nuts", data) == ()
    assert hsgp.method_warnings("gibbs", data) == ()


EXACT_NUTS_WARNING = (
    "method='nuts' is not the recommended sampler for the exact GP: it mixes slowly through the lengthscale's long "
    "right tail (read the lengthscale's r_hat and ESS in the convergence verdict); the default method='gibbs' is the "
    "calibrated sampler here"
)


def test_exact_gp_by_nuts_warns_that_gibbs_is_the_calibrated_sampler():
    """Issue 41: NUTS mixes slowly through the exact GP's lengthscale tail (the slow test below): its method warning
    names the Gibbs sampler under either lengthscale prior; the Gibbs sampler and the HSGP under InverseGamma do
    not warn."""
    data = seed004_gp(30, random_seed=4)
    for prior in ("pc", "inverse_gamma"):
        exact = LatentGaussianProcess(approximation="exact", prior=GaussianProcessPrior(lengthscale_prior=prior))
        assert exact.method_warnings("nuts", data) == (EXACT_NUTS_WARNING,)
        assert exact.method_warnings("gibbs", data) == ()
    inverse_gamma = GaussianProcessPrior(lengthscale_prior="inverse_gamma")
    assert LatentGaussianProcess(approximation="hsgp", prior=inverse_gamma).method_warnings("nuts", data) == ()


@pytest.mark.slow
def test_exact_gp_by_nuts_on_the_issues_case_warns_and_the_verdict_fails_on_the_lengthscale():
    """Issue 41's case (seed004_gp, 100 rows, default settings, seed 0; about 200 s): NUTS takes a chain out to a
    lengthscale of 7.7. The fit warns (and records it), and the convergence verdict fails on the lengthscale's
    r_hat and ESS rather than passing the excursion."""
    from bayesclass.inference.criticism.diagnostics import diagnose

    with pytest.warns(UserWarning, match=re.escape(EXACT_NUTS_WARNING)):
        result = inference.fit(LatentGaussianProcess(), seed004_gp(100), method="nuts", random_seed=0)
    assert EXACT_NUTS_WARNING in result.attrs["fit_warnings"]
    lengthscale = result["posterior"]["lengthscale"].values[..., 0]
    assert lengthscale.max() > 7.0  # the excursion
    report = diagnose(result, full=True)
    assert not report.passed and {"r_hat", "ess_bulk"} <= set(report.failed_checks)
    row = report.element_table.loc["lengthscale[x]"]
    assert row["r_hat"] > 1.01 and row["ess_bulk"] < 400  # the lengthscale itself fails, not only a latent


def _with_noise_inputs(data: Dataset, k: int, seed: int) -> Dataset:
    """``data`` with ``k`` more inputs of pure N(0, 1) noise, independent of everything."""
    noise = np.random.default_rng(seed).standard_normal((data.n_obs, k))
    return Dataset(
        name=f"{data.name}_noise",
        X=np.hstack([np.asarray(data.X, dtype=float), noise]),
        y=data.y,
        feature_names=(*data.feature_names, *(f"noise{j}" for j in range(k))),
        class_names=data.class_names,
        feature_kinds=("continuous",) * (data.n_features + k),
    )


def test_a_pure_noise_input_switches_off_in_the_gibbs_posterior():
    """Seed 004 (40 rows) with a pure-noise input beside x: under the PC prior the noise input's posterior
    lengthscale is long (median above 5 sd, its upper decile above 100: switched off, the slice steps reaching
    far out on the log scale); InverseGamma(3, 2) kept such inputs near 1 (issue 39; bench/bench_gp_prior.py)."""
    data = _with_noise_inputs(seed004_gp(40, random_seed=4), 1, seed=104)
    settings = SamplerSettings(draws=200, tune=100, chains=2, progressbar=False)
    result = inference.fit(LatentGaussianProcess(), data, method="gibbs", sampler=settings, standardize=True,
                           random_seed=1)  # fmt: skip
    noise = result.posterior["lengthscale"].sel(feature="noise0").values.ravel()
    assert np.median(noise) > 5.0 and np.quantile(noise, 0.9) > 100.0, np.quantile(noise, [0.1, 0.5, 0.9])


@pytest.mark.slow
def test_with_pure_noise_inputs_the_posterior_predicts_held_out_rows_as_well_as_its_laplace_plug_in():
    """Seed 004 (240 rows: 120 training, 120 held out) with 2 pure-noise inputs, default fit: the posterior
    predictive's held-out log loss is at most the Laplace plug-in's plus one standard error of their paired
    per-row difference (issue 39: under InverseGamma(3, 2) the posterior was the worse on Pima.te)."""
    data = _with_noise_inputs(seed004_gp(240, random_seed=7), 2, seed=107)
    train, test = data.subset(np.arange(120)), data.subset(np.arange(120, 240))
    result = inference.fit(LatentGaussianProcess(), train, standardize=True, random_seed=2)
    prediction = inference.predict(result, test.X)
    rows, y = np.arange(test.n_obs), np.asarray(test.y)
    posterior = -np.log(prediction["class_proba"].values[rows, y])
    plug_in = -np.log(prediction["class_proba_map"].values[rows, y])
    difference = posterior - plug_in
    assert difference.mean() <= difference.std(ddof=1) / np.sqrt(rows.size), (posterior.mean(), plug_in.mean())


@pytest.mark.slow
def test_nuts_covers_the_true_latent(small_gp_data):
    """Seed 004 generator, n = 100 (standardised x): the true latent lies in the 89% posterior band at >= 80% of
    the training inputs. (The issue's n = 200 version belongs to the unfinished part of issue 5.)"""
    truth = seed004_gp_truth(100, random_seed=3)
    training = seed004_gp(100, random_seed=3)
    result = inference.fit(
        LatentGaussianProcess(),
        training,
        method="nuts",
        standardize=True,
        sampler=SamplerSettings(draws=500, tune=500, chains=2, progressbar=False),
        random_seed=4,
    )
    latent = result["posterior"]["latent"].values.reshape(-1, 100)
    low, high = np.quantile(latent, [0.055, 0.945], axis=0)
    assert np.mean((truth["latent"] >= low) & (truth["latent"] <= high)) >= 0.8


# =========================================================================== gradients, damped Newton, type-II ML
# (added: kernel / evidence gradients against finite differences and scikit-learn, warm starts, type-II ML)

KERNELS = ("exp_quad", "matern52")
LINKS = ("logit", "probit")


@contextlib.contextmanager
def one_blas_thread():
    """Dense n x n algebra with one BLAS thread: on a loaded 2-core machine a 2-thread OpenBLAS Cholesky of a
    300 x 300 matrix took 0.5 s instead of 4 ms (spin-waiting threads), which made type-II ML 50x slower.
    Results do not depend on it (nutpie's sampling holds BLAS to one thread in the same way)."""
    with threadpool_limits(limits=1, user_api="blas"):
        yield


def log_likelihood(z, y, link):
    sign = 2.0 * np.asarray(y, dtype=float) - 1.0
    return -np.logaddexp(0.0, -sign * z) if link == "logit" else scipy.special.log_ndtr(sign * z)


def polished_fit(x, y, covariance, *, link="logit"):
    """laplace_fit restarted from its own mode (also exercises the warm start); the evidence of a plain fit and of a
    restarted one agree (test_laplace_fit_evidence_belongs_to_the_returned_mode)."""
    return laplace_fit(x, y, covariance, link=link, start=laplace_fit(x, y, covariance, link=link))


def evidence_and_gradient(x, y, log_theta, *, kernel="exp_quad", link="logit", jitter=0.0, polish=True):
    """Laplace evidence and its gradient with respect to log theta = (log l_1..d, log a, log c)."""
    d = x.shape[1]
    theta = np.exp(log_theta)
    covariance, gradients = kernel_gradients(
        x, lengthscale=theta[:d], amplitude=theta[d], constant=theta[d + 1], kernel=kernel, jitter=jitter
    )
    fit = polished_fit(x, y, covariance, link=link) if polish else laplace_fit(x, y, covariance, link=link)
    return fit.log_marginal_likelihood, laplace_evidence_gradient(fit, covariance, gradients), fit


def central_differences(function, point, step):
    point = np.asarray(point, dtype=float)
    columns = []
    for j in range(point.size):
        shift = np.zeros_like(point)
        shift[j] = step
        columns.append((function(point + shift) - function(point - shift)) / (2 * step))
    return np.stack(columns)


@pytest.fixture(scope="module")
def breast_cancer_two():
    """Two standardised inputs (mean radius, mean texture) of every 11th breast_cancer row: a d = 2 ARD problem."""
    full = load("breast_cancer")
    return full.select_features(["mean radius", "mean texture"]).subset(np.arange(0, full.n_obs, 11)).standardized()


@pytest.mark.parametrize("kernel", KERNELS)
def test_kernel_gradients_are_the_derivatives_of_the_covariance(kernel):
    rng = np.random.default_rng(3)
    x = rng.normal(size=(25, 2))
    log_theta = np.log([0.7, 1.6, 1.4, 0.6])  # ARD lengthscales, amplitude, constant
    jitter = 1e-4

    def covariance(log_theta):
        theta = np.exp(log_theta)
        return kernel_gradients(
            x, lengthscale=theta[:2], amplitude=theta[2], constant=theta[3], kernel=kernel, jitter=jitter
        )[0]

    theta = np.exp(log_theta)
    value, gradients = kernel_gradients(
        x, lengthscale=theta[:2], amplitude=theta[2], constant=theta[3], kernel=kernel, jitter=jitter
    )
    expected = kernel_matrix(x, x, lengthscale=theta[:2], amplitude=theta[2], constant=theta[3], kernel=kernel)
    np.testing.assert_allclose(value, expected + jitter * theta[2] ** 2 * np.eye(25), rtol=1e-12, atol=1e-14)
    assert gradients.shape == (4, 25, 25)
    numeric = central_differences(covariance, log_theta, 1e-5)
    np.testing.assert_allclose(gradients, numeric, rtol=1e-7, atol=1e-9)
    # every lengthscale derivative is non-trivial and different (ARD): the test can tell them apart
    assert np.abs(gradients[0] - gradients[1]).max() > 0.1


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("link", LINKS)
@pytest.mark.parametrize("inputs", ["seed004", "breast_cancer_two"])
def test_evidence_gradient_matches_finite_differences(small_gp_data, breast_cancer_two, inputs, link, kernel):
    """GPML Algorithm 5.1 (with the implicit dependence of the mode on theta) is the derivative of the Laplace
    evidence that laplace_fit reports (polished: see polished_fit), for both links and kernels, d = 1 and d = 2
    (ARD)."""
    data = small_gp_data if inputs == "seed004" else breast_cancer_two
    x, y = data.X, data.y
    d = data.n_features
    log_theta = np.log([*([0.6, 1.4][:d]), 1.5, 0.5])
    _, gradient, _ = evidence_and_gradient(x, y, log_theta, kernel=kernel, link=link, jitter=1e-6)
    numeric = central_differences(
        lambda t: evidence_and_gradient(x, y, t, kernel=kernel, link=link, jitter=1e-6)[0], log_theta, 1e-5
    )
    np.testing.assert_allclose(gradient, numeric, rtol=1e-6, atol=1e-8)
    assert np.abs(gradient).max() > 1e-2  # not a trivially flat point


@pytest.mark.parametrize("inputs", ["seed004", "breast_cancer_two"])
def test_evidence_and_its_gradient_equal_scikit_learn(small_gp_data, breast_cancer_two, inputs):
    """Kernel a^2 RBF(l) + c^2, no jitter: scikit-learn's Laplace evidence and its gradient. sklearn's theta is
    (log a^2, log l_1..d, log c^2) (checked from kernel.hyperparameters), so d/d log(a^2) = d/d log(a) / 2."""
    data = small_gp_data if inputs == "seed004" else breast_cancer_two
    x, y = data.X, data.y
    d = data.n_features
    lengthscale, amplitude, constant = np.array([0.6, 1.4][:d]), 1.5, 0.5
    kernel = ConstantKernel(amplitude**2) * RBF(lengthscale if d > 1 else float(lengthscale[0])) + ConstantKernel(
        constant**2
    )
    reference = GaussianProcessClassifier(kernel=kernel, optimizer=None).fit(x, y).base_estimator_
    names = [parameter.name for parameter in reference.kernel_.hyperparameters]
    assert names == ["k1__k1__constant_value", "k1__k2__length_scale", "k2__constant_value"]
    theta = reference.kernel_.theta
    np.testing.assert_allclose(theta, np.log([amplitude**2, *lengthscale, constant**2]), rtol=1e-12)
    value, gradient = reference.log_marginal_likelihood(theta, eval_gradient=True)
    ours, our_gradient, _ = evidence_and_gradient(x, y, np.log([*lengthscale, amplitude, constant]), jitter=0.0)
    assert ours == pytest.approx(value, rel=1e-10)
    # ours: (log l_1..d, log a, log c); sklearn's: (log a^2, log l_1..d, log c^2)
    converted = np.concatenate([[0.5 * our_gradient[d]], our_gradient[:d], [0.5 * our_gradient[d + 1]]])
    np.testing.assert_allclose(converted, gradient, rtol=1e-6, atol=1e-9)


def test_laplace_fit_evidence_belongs_to_the_returned_mode(small_gp_data):
    x, y = small_gp_data.X, small_gp_data.y
    n = len(y)
    log_theta = np.log([0.6, 1.5, 0.5])
    covariance = kernel_gradients(x, lengthscale=0.6, amplitude=1.5, constant=0.5, jitter=0.0)[0]
    fit = laplace_fit(x, y, covariance)
    root = fit.sqrt_w
    np.testing.assert_allclose(root**2, scipy.special.expit(fit.mode) * scipy.special.expit(-fit.mode), rtol=1e-12)
    factor = np.linalg.cholesky(np.eye(n) + root[:, None] * covariance * root)  # B at the returned mode
    evidence = (
        log_likelihood(fit.mode, y, "logit").sum() - 0.5 * fit.gradient @ fit.mode - np.log(np.diag(factor)).sum()
    )
    reference = GaussianProcessClassifier(
        kernel=ConstantKernel(2.25) * RBF(0.6) + ConstantKernel(0.25), optimizer=None
    ).fit(x, y)
    assert reference.log_marginal_likelihood_value_ == pytest.approx(evidence, abs=1e-10)  # sklearn agrees with it
    np.testing.assert_allclose(fit.cholesky_b, factor, atol=1e-10)
    assert fit.log_marginal_likelihood == pytest.approx(evidence, abs=1e-10)
    _, gradient, _ = evidence_and_gradient(x, y, log_theta, polish=False)
    numeric = central_differences(lambda t: evidence_and_gradient(x, y, t, polish=False)[0], log_theta, 1e-5)
    np.testing.assert_allclose(gradient, numeric, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("link", LINKS)
def test_damped_newton_reaches_the_mode_from_a_poor_warm_start(small_gp_data, link):
    """Warm starts from fits at very different hyperparameters (tiny or huge lengthscale, other amplitude and
    constant) reach the mode found from z = 0, to 1e-8: a start laplace_fit keeps (its objective beats z = 0) and
    starts it discards, among them (logit) ones from which a plain Newton step would LOWER the objective."""
    x, y = small_gp_data.X, small_gp_data.y
    n = len(y)
    covariance = kernel_matrix(x, x, lengthscale=0.3, amplitude=3.0, constant=0.5) + 1e-8 * np.eye(n)

    def objective(a):  # Psi = log p(y | K a) - a^T K a / 2, what the damping keeps from decreasing
        return log_likelihood(covariance @ a, y, link).sum() - 0.5 * a @ covariance @ a

    def plain_newton_step(a):  # GPML Algorithm 3.1, one undamped step
        z = covariance @ a
        proba = scipy.special.expit(z) if link == "logit" else None
        if link == "logit":
            gradient, w = y - proba, proba * (1 - proba)
        else:
            sign = 2.0 * y - 1.0
            ratio = np.exp(scipy.stats.norm.logpdf(sign * z) - scipy.special.log_ndtr(sign * z))
            gradient, w = sign * ratio, ratio**2 + sign * z * ratio
        root = np.sqrt(w)
        factor = np.linalg.cholesky(np.eye(n) + root[:, None] * covariance * root)
        b = w * z + gradient
        return b - root * scipy.linalg.cho_solve((factor, True), root * (covariance @ b))

    cold = laplace_fit(x, y, covariance, link=link)
    kept, overshooting = 0, 0
    for lengthscale, amplitude, constant in [(0.02, 8.0, 3.0), (3.0, 10.0, 0.0), (0.05, 1.0, 0.0), (1.0, 1.0, 0.0)]:
        far = kernel_matrix(x, x, lengthscale=lengthscale, amplitude=amplitude, constant=constant) + 1e-8 * np.eye(n)
        poor = laplace_fit(x, y, far, link=link)
        assert isinstance(poor, LaplaceFit)
        start = poor.gradient
        assert objective(start) < objective(cold.gradient) - 1.0  # far from the mode
        kept += objective(start) > objective(np.zeros(n))
        overshooting += objective(plain_newton_step(start)) < objective(start)
        warm = laplace_fit(x, y, covariance, link=link, start=poor)
        np.testing.assert_allclose(warm.mode, cold.mode, atol=1e-8)
        np.testing.assert_allclose(warm.gradient, cold.gradient, atol=1e-8)
        assert warm.log_marginal_likelihood == pytest.approx(cold.log_marginal_likelihood, abs=1e-6)  # see polished_fit
    assert kept >= 1 and kept < 4
    assert overshooting >= (3 if link == "logit" else 0)
    # and a good warm start (nearby hyperparameters) takes fewer Newton steps than a cold one
    nearby = laplace_fit(x, y, covariance * 1.01, link=link)
    assert laplace_fit(x, y, covariance, link=link, start=nearby).iterations < cold.iterations


@pytest.fixture(scope="module")
def type2_data():
    """seed004, n = 150, standardised: an interior type-II optimum (c well above its bound exp(-5))."""
    return seed004_gp(150, random_seed=7).standardized()


@pytest.fixture(scope="module")
def type2_map(type2_data):
    with one_blas_thread():
        return LatentGaussianProcess(approximation="exact").point_estimate(type2_data, "map")


@pytest.fixture(scope="module")
def type2_sklearn(type2_data):
    with one_blas_thread():
        kernel = ConstantKernel(1.0) * RBF(1.0) + ConstantKernel(0.25)
        return GaussianProcessClassifier(kernel=kernel, n_restarts_optimizer=0).fit(type2_data.X, type2_data.y)


def test_type2_maximum_likelihood_agrees_with_scikit_learn(type2_data, type2_map, type2_sklearn):
    """Same kernel c^2 + a^2 RBF(l), same data: the two optimisers agree. Measured on seeds 7, 8, 9 and 12 (all
    interior optima): hyperparameters within 3e-4 relative, probabilities within 2e-4 (sklearn's 5-erf
    approximation of the logistic-Gaussian integral, and our jitter 1e-6 a^2)."""
    x, y = type2_data.X, type2_data.y
    a_squared, lengthscale, c_squared = np.exp(type2_sklearn.base_estimator_.kernel_.theta)
    theirs = np.array([lengthscale, np.sqrt(a_squared), np.sqrt(c_squared)])
    ours = np.array(
        [float(type2_map["lengthscale"].values[0]), float(type2_map["amplitude"]), float(type2_map["constant"])]
    )
    assert ours[2] > 10 * np.exp(-5.0)  # interior: not at the lower bound of the optimiser
    np.testing.assert_allclose(ours, theirs, rtol=2e-3)
    new = np.linspace(-2.5, 2.5, 101)[:, np.newaxis]
    proba = LatentGaussianProcess().class_proba(type2_map, new).sel({"class": "1"}).values
    np.testing.assert_allclose(proba, type2_sklearn.predict_proba(new)[:, 1], atol=1e-3)
    with one_blas_thread():
        best, gradient, _ = evidence_and_gradient(x, y, np.log(ours), jitter=1e-6)
        at_theirs, _, _ = evidence_and_gradient(x, y, np.log(theirs), jitter=1e-6)
        _, away, _ = evidence_and_gradient(x, y, np.log(ours * 1.2), jitter=1e-6)
    # we found at least as good a maximum of our own objective
    assert best >= at_theirs - 1e-6
    assert best == pytest.approx(type2_sklearn.log_marginal_likelihood_value_, abs=1e-4)
    # an interior optimum: the exact gradient vanishes there (and does not 20 % away from it)
    assert np.abs(gradient).max() < 1e-3
    assert np.abs(away).max() > 100 * np.abs(gradient).max()


def test_type2_map_latent_is_the_laplace_mode_at_its_hyperparameters(type2_data, type2_map):
    x, y = type2_data.X, type2_data.y
    lengthscale, amplitude, constant = (
        type2_map["lengthscale"].values,
        float(type2_map["amplitude"]),
        float(type2_map["constant"]),
    )
    covariance = kernel_matrix(
        x, x, lengthscale=lengthscale, amplitude=amplitude, constant=constant
    ) + 1e-6 * amplitude**2 * np.eye(len(y))
    fit = laplace_fit(x, y, covariance)
    np.testing.assert_allclose(type2_map["latent"].values, fit.mode, atol=1e-8)
    np.testing.assert_allclose(type2_map["laplace_weight"].values, fit.sqrt_w**2, rtol=1e-6)
    assert set(type2_map.data_vars) == {"lengthscale", "amplitude", "constant", "latent", "laplace_weight"}


# =========================================================================== the fused whitened-latent Op


def random_points(pymc_model, count, seed):
    rng = np.random.default_rng(seed)
    start = pymc_model.initial_point()
    return [
        {name: value + rng.normal(scale=0.5, size=np.shape(value)) for name, value in start.items()}
        for _ in range(count)
    ]


def logp_and_gradient(pymc_model, mode):
    """The model's log density and its gradient (pytensor.grad over the value variables, raveled), one compile."""
    logp = pymc_model.logp()
    gradient = pt.concatenate([pt.flatten(part) for part in pytensor.grad(logp, pymc_model.value_vars)])
    return pymc_model.compile_fn([logp, gradient], mode=mode, point_fn=True)


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("inputs", ["seed004", "breast_cancer_two"])
def test_whitened_latent_logp_and_gradient_equal_the_pytensor_graph(small_gp_data, breast_cancer_two, inputs, kernel):
    """The fused Op (numba kernels for nutpie, and its NumPy ``perform`` path) gives the same log density and
    gradient as PyTensor's own kernel + cholesky(K) @ u graph, at random points, d = 1 and d = 2 (ARD)."""
    data = small_gp_data if inputs == "seed004" else breast_cancer_two
    model = LatentGaussianProcess(kernel=kernel, approximation="exact")
    fused, reference = model.build(data), model.build(data, latent_graph="pytensor")
    applied = {type(v.owner.op) for v in ancestors([fused["latent"]]) if v.owner is not None}
    assert WhitenedLatent in applied and WhitenedLatent not in {
        type(v.owner.op) for v in ancestors([reference["latent"]]) if v.owner
    }
    points = random_points(fused, 3, seed=1)
    expected = logp_and_gradient(reference, "FAST_COMPILE")
    for mode in ("NUMBA", "FAST_COMPILE"):  # numba kernels; Python perform of both Ops
        function = logp_and_gradient(fused, mode)
        for point in points:
            (logp, gradient), (expected_logp, expected_gradient) = function(point), expected(point)
            np.testing.assert_allclose(logp, expected_logp, rtol=1e-8)
            np.testing.assert_allclose(
                gradient, expected_gradient, rtol=1e-8, atol=1e-8 * np.abs(expected_gradient).max()
            )


def whitened_latent_function(kernel, jitter, mode):
    x, lengthscale, amplitude, constant, whitened = (
        pt.matrix("x"),
        pt.vector("l"),
        pt.scalar("a"),
        pt.scalar("c"),
        pt.vector("u"),
    )
    weights = pt.vector("w")
    latent, factor = WhitenedLatent(kernel, jitter)(x, lengthscale, amplitude, constant, whitened)
    gradients = pytensor.grad(pt.sum(weights * latent), [lengthscale, amplitude, constant, whitened])
    return pytensor.function(
        [x, lengthscale, amplitude, constant, whitened, weights], [latent, factor, *gradients], mode=mode
    )


@pytest.mark.parametrize("mode", ["NUMBA", "FAST_COMPILE"])
def test_whitened_latent_value_and_gradient_of_a_random_functional(mode):
    """z = chol(c^2 + a^2 (k + jitter I)) u and d(w . z)/d(l, a, c, u) against NumPy and finite differences."""
    rng = np.random.default_rng(5)
    x, u, w = rng.normal(size=(12, 2)), rng.normal(size=12), rng.normal(size=12)
    theta = np.array([0.8, 1.3, 1.2, 0.4])
    for kernel in KERNELS:
        function = whitened_latent_function(kernel, 1e-6, mode)
        latent, factor, *gradients = function(x, theta[:2], theta[2], theta[3], u, w)

        def functional(theta, kernel=kernel):
            covariance = kernel_matrix(
                x, x, lengthscale=theta[:2], amplitude=theta[2], constant=theta[3], kernel=kernel
            )
            return w @ (np.linalg.cholesky(covariance + 1e-6 * theta[2] ** 2 * np.eye(12)) @ u)

        covariance = kernel_matrix(x, x, lengthscale=theta[:2], amplitude=theta[2], constant=theta[3], kernel=kernel)
        expected_factor = np.linalg.cholesky(covariance + 1e-6 * theta[2] ** 2 * np.eye(12))
        np.testing.assert_allclose(factor, expected_factor, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(latent, expected_factor @ u, rtol=1e-10, atol=1e-12)
        numeric = central_differences(functional, theta, 1e-6)
        np.testing.assert_allclose(
            np.concatenate([gradients[0], [gradients[1], gradients[2]]]), numeric, rtol=1e-6, atol=1e-8
        )
        np.testing.assert_allclose(gradients[3], expected_factor.T @ w, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("mode", ["NUMBA", "FAST_COMPILE"])
def test_whitened_latent_is_nan_where_the_covariance_is_not_positive_definite(mode):
    """jitter = -2 makes the diagonal of K negative; duplicated inputs with jitter 0 make K singular. Both give
    NaN latents, factor and gradients (NUTS then rejects the point) instead of raising."""
    rng = np.random.default_rng(6)
    x, u, w = rng.normal(size=(10, 2)), rng.normal(size=10), rng.normal(size=10)
    outputs = whitened_latent_function("exp_quad", -2.0, mode)(x, np.array([0.8, 1.2]), 1.3, 0.4, u, w)
    assert all(np.isnan(value).all() for value in outputs)
    duplicated = np.vstack([x[:5], x[:5]])
    latent, *_ = whitened_latent_function("matern52", 0.0, mode)(duplicated, np.array([0.8, 1.2]), 1.3, 0.4, u, w)
    assert np.isnan(latent).all()


def test_gradient_through_the_cholesky_factor_output_is_refused():
    """Only the latent output of WhitenedLatent is differentiable; asking through L is a clear error, not a silent 0."""
    x, lengthscale, amplitude, constant, whitened = (
        pt.matrix("x"),
        pt.vector("l"),
        pt.scalar("a"),
        pt.scalar("c"),
        pt.vector("u"),
    )
    _, factor = WhitenedLatent("exp_quad", 1e-6)(x, lengthscale, amplitude, constant, whitened)
    with pytest.raises(NotImplementedError, match="only the latent output is differentiable"):
        pytensor.grad(pt.sum(factor), amplitude)


# =========================================================================== HSGP: basis, spectral densities,
# weight-space Laplace


@pytest.mark.parametrize("d", [1, 2])
def test_hsgp_basis_equals_pymc_eigenvectors(d):
    rng = np.random.default_rng(8)
    x = rng.uniform(-1.0, 2.0, size=(40, d))
    center, half_width, m = np.full(d, 0.5), np.array([2.3, 3.1][:d]), 7
    frequencies = hsgp_frequencies(half_width, m)
    assert frequencies.shape == (m**d, d)
    eigenvalues = pm.gp.hsgp_approx.calc_eigenvalues(half_width, [m] * d)
    expected = pm.gp.hsgp_approx.calc_eigenvectors(x - center, half_width, eigenvalues, [m] * d).eval()
    np.testing.assert_allclose(hsgp_basis(x, center, half_width, frequencies), expected, rtol=1e-12, atol=1e-14)
    # Dirichlet eigenfunctions of the box: frequencies pi j / (2 L) and zero on the boundary
    assert set(np.round(frequencies[:, 0] * 2 * half_width[0] / np.pi, 10)) == set(range(1, m + 1))
    np.testing.assert_allclose(
        hsgp_basis((center - half_width)[np.newaxis], center, half_width, frequencies), 0.0, atol=1e-12
    )


@pytest.mark.parametrize("d", [1, 2])
@pytest.mark.parametrize("kernel", KERNELS)
def test_spectral_density_equals_pymc(kernel, d):
    """PyMC evaluates Gamma((d + 5) / 2) of Matern52's density in float32 (3.5 is a float32 literal), so for
    d = 2 the two differ by 2e-8 relative; ExpQuad agrees to rounding."""
    rng = np.random.default_rng(9)
    frequencies = hsgp_frequencies(np.array([1.7, 2.6][:d]), 9)
    lengthscale = rng.uniform(0.3, 1.5, size=d)
    covariance = (pm.gp.cov.ExpQuad if kernel == "exp_quad" else pm.gp.cov.Matern52)(d, ls=lengthscale)
    expected = covariance.power_spectral_density(pt.as_tensor(frequencies)).eval()
    np.testing.assert_allclose(spectral_density(frequencies, lengthscale, kernel), expected, rtol=1e-6)
    # leading dims of the lengthscale broadcast (one density per posterior draw)
    stacked = spectral_density(frequencies, np.stack([lengthscale, 2 * lengthscale]), kernel)
    np.testing.assert_allclose(stacked[1], spectral_density(frequencies, 2 * lengthscale, kernel), rtol=1e-14)


@pytest.mark.parametrize("kernel", KERNELS)
def test_spectral_density_is_the_fourier_transform_of_the_kernel(kernel):
    """Bochner, d = 1: k(r) = (1 / 2 pi) int S(w) cos(w r) dw, independently of PyMC."""
    lengthscale = 0.7
    for r in (0.0, 0.4, 1.3):
        integral, _ = scipy.integrate.quad(
            lambda w, r=r: spectral_density(np.array([[w]]), np.array([lengthscale]), kernel)[0] * np.cos(w * r),
            0,
            np.inf,
            limit=400,
        )
        expected = kernel_matrix(
            np.array([[r]]), np.zeros((1, 1)), lengthscale=lengthscale, amplitude=1.0, kernel=kernel
        )[0, 0]
        assert integral / np.pi == pytest.approx(expected, abs=1e-7)


def hsgp_prior_covariance(x, center, half_width, m, lengthscale, amplitude, constant, kernel):
    frequencies = hsgp_frequencies(half_width, m)
    basis = hsgp_basis(x, center, half_width, frequencies)
    return (
        basis @ np.diag(amplitude**2 * spectral_density(frequencies, np.atleast_1d(lengthscale), kernel)) @ basis.T
        + constant**2
    )


@pytest.mark.parametrize(("kernel", "tolerance"), [("exp_quad", 1e-3), ("matern52", 1e-2)])
def test_hsgp_prior_covariance_approximates_the_kernel_inside_the_box(kernel, tolerance):
    """l = 0.5, m = 30, box 1.5 times the half-range of x in [-1, 1]: within the central half of the data the
    reduced-rank covariance Phi diag(a^2 S) Phi^T + c^2 is the kernel to ~3e-4 a^2 (exp_quad; 5e-3 for the
    heavier-tailed Matern 5/2). Near the box edge the Dirichlet boundary pulls it to c^2 (error ~ a^2)."""
    x = np.linspace(-1.0, 1.0, 201)[:, np.newaxis]
    amplitude, constant = 1.3, 0.7
    approx = hsgp_prior_covariance(x, np.zeros(1), np.array([1.5]), 30, 0.5, amplitude, constant, kernel)
    exact = kernel_matrix(x, x, lengthscale=0.5, amplitude=amplitude, constant=constant, kernel=kernel)
    inner = np.abs(x[:, 0]) <= 0.5
    error = np.abs(approx - exact)[np.ix_(inner, inner)].max()
    assert error < tolerance * amplitude**2
    assert np.abs(approx - exact)[-1, -1] > 0.1 * amplitude**2  # the edge of the data is close to the boundary
    # and too few basis functions (m = 5 cannot resolve l = 0.5 on a box of width 3) are visibly worse
    coarse = hsgp_prior_covariance(x, np.zeros(1), np.array([1.5]), 5, 0.5, amplitude, constant, kernel)
    assert np.abs(coarse - exact)[np.ix_(inner, inner)].max() > 5 * error


def test_hsgp_exp_quad_covariance_is_the_dirichlet_kernel_of_the_box():
    """With enough basis functions the HSGP covariance IS the squared exponential with Dirichlet conditions at
    +-L (method of images: sum_n k(s - s' + 4nL) - k(s + s' + 4nL), s = x - center + L), everywhere in the box."""
    x = np.linspace(-1.4, 1.4, 101)[:, np.newaxis]
    center, half_width, lengthscale = np.array([0.1]), np.array([1.5]), 0.5
    approx = hsgp_prior_covariance(x, center, half_width, 30, lengthscale, 1.0, 0.0, "exp_quad")
    s = x[:, 0] - center[0] + half_width[0]

    def k(r):
        return np.exp(-0.5 * r**2 / lengthscale**2)

    images = sum(
        k(s[:, None] - s[None, :] + 4 * n * half_width[0]) - k(s[:, None] + s[None, :] + 4 * n * half_width[0])
        for n in range(-3, 4)
    )
    np.testing.assert_allclose(approx, images, atol=1e-10)


@pytest.fixture(scope="module")
def hsgp_features():
    """seed004 n = 120, standardised; weight-space features Z = [1, Phi(x)] * prior sd (c, a sqrt(S(w))), 21 columns."""
    data = seed004_gp(120, random_seed=4).standardized()
    x = data.X
    center = (x.max(axis=0) + x.min(axis=0)) / 2
    half_width = 1.5 * (x.max(axis=0) - x.min(axis=0)) / 2
    frequencies = hsgp_frequencies(half_width, 20)
    prior_sd = np.concatenate([[0.8], 1.5 * np.sqrt(spectral_density(frequencies, np.array([0.4])))])

    def features(inputs):
        return np.hstack([np.ones((len(inputs), 1)), hsgp_basis(inputs, center, half_width, frequencies)]) * prior_sd

    return data, features


@pytest.mark.parametrize("link", LINKS)
def test_weight_laplace_fit_is_the_mode_and_curvature_of_the_weight_posterior(hsgp_features, link):
    data, features = hsgp_features
    z, y = features(data.X), data.y
    fit = weight_laplace_fit(z, y, link=link)

    def objective(w):
        return log_likelihood(z @ w, y, link).sum() - 0.5 * w @ w

    def gradient(w):
        return central_differences(objective, w, 1e-6)

    assert np.abs(gradient(fit.mode)).max() < 1e-6
    hessian = central_differences(gradient, fit.mode, 1e-4)
    hessian = 0.5 * (hessian + hessian.T)
    assert np.linalg.eigvalsh(hessian).max() < 0  # a maximum
    np.testing.assert_allclose(fit.covariance, np.linalg.inv(-hessian), atol=1e-4)
    for _ in range(3):  # and nothing nearby is higher
        assert objective(fit.mode) >= objective(fit.mode + 1e-2 * np.random.default_rng(_).normal(size=fit.mode.size))


@pytest.mark.parametrize("link", LINKS)
def test_weight_space_laplace_equals_function_space_laplace(hsgp_features, link):
    """z = Z w, w ~ N(0, I) is the GP with K = Z Z^T: same mode, evidence (Sylvester) and predictive, exactly
    (K is singular, rank 21 < n; the B = I + W^1/2 K W^1/2 form needs no jitter)."""
    data, features = hsgp_features
    z, y = features(data.X), data.y
    weights = weight_laplace_fit(z, y, link=link)
    function = polished_fit(data.X, y, z @ z.T, link=link)
    np.testing.assert_allclose(function.mode, z @ weights.mode, atol=1e-9)
    assert function.log_marginal_likelihood == pytest.approx(weights.log_marginal_likelihood, abs=1e-9)
    new = features(np.linspace(-2.5, 2.5, 50)[:, np.newaxis])
    mean, variance, _ = laplace_predict(function, z @ new.T, (new**2).sum(axis=1))
    np.testing.assert_allclose(mean, new @ weights.mode, atol=1e-9)
    np.testing.assert_allclose(variance, np.einsum("ij,jk,ik->i", new, weights.covariance, new), atol=1e-9)
    assert variance.max() > 0.1  # a real predictive spread, not a degenerate check


@pytest.fixture(scope="module")
def hsgp_small_data():
    return seed004_gp(80, random_seed=13).standardized()


def test_pymc_hsgp_model_latent_and_prior_match_numpy(hsgp_small_data):
    """The HSGP PyMC model: its label likelihood is that of z = [1, Phi(x)] @ basis_weight with the NumPy basis at
    the stored geometry, and given the hyperparameters basis_weight ~ N(0, diag(c^2, a^2 S(w_j)))."""
    data = hsgp_small_data
    model = LatentGaussianProcess(approximation="hsgp", hsgp_basis=12)
    pymc_model = model.build(data)
    coords = model.coords(data)
    center, half_width = coords["hsgp_center"][1], coords["hsgp_half_width"][1]
    frequencies = coords["hsgp_frequency"][1]
    assert pymc_model.coords["basis"][0] == "constant" and len(pymc_model.coords["basis"]) == 13
    np.testing.assert_array_equal(frequencies[0], 0.0)
    basis = np.hstack([np.ones((data.n_obs, 1)), hsgp_basis(data.X, center, half_width, frequencies[1:])])
    outputs = pymc_model.replace_rvs_by_values(
        [
            pymc_model["basis_weight"],
            pymc_model["lengthscale"],
            pymc_model["amplitude"],
            pymc_model["constant"],
            pymc_model.potentials[0],
        ]
    )
    evaluate = pymc_model.compile_fn(outputs, point_fn=True, mode="FAST_COMPILE")
    for point in random_points(pymc_model, 3, seed=2):
        weight, _, _, _, likelihood = evaluate(point)
        assert likelihood == pytest.approx(log_likelihood(basis @ weight, data.y, "logit").sum(), rel=1e-10)
    # the prior of the weights given the hyperparameters, by forward draws
    fixed = pm.do(pymc_model, {"lengthscale": np.array([0.6]), "amplitude": 1.7, "constant": 0.9})
    draws = pm.draw(fixed["basis_weight"], draws=4000, random_seed=3)
    expected_sd = np.concatenate([[0.9], 1.7 * np.sqrt(spectral_density(frequencies[1:], np.array([0.6])))])
    np.testing.assert_allclose(draws.std(axis=0), expected_sd, rtol=0.08)
    assert np.all(np.abs(draws.mean(axis=0)) < 4 * expected_sd / np.sqrt(4000))


def test_hsgp_draws_predict_their_own_latent(hsgp_small_data):
    """HSGP draws: f(x*) = beta_0 + phi(x*)^T beta with variance 0, at training and new inputs alike."""
    data = hsgp_small_data
    model = LatentGaussianProcess(approximation="hsgp", hsgp_basis=12)
    coords = model.coords(data)
    rng = np.random.default_rng(4)
    weights = rng.normal(size=(1, 3, 13))
    draws = xr.Dataset({"basis_weight": (("chain", "draw", "basis"), weights)}).assign_coords(coords)
    new = np.linspace(-1.5, 1.5, 17)[:, np.newaxis]
    moments = model.latent_predictive(draws, new)
    assert moments["latent_mean"].dims == ("chain", "draw", "obs")
    center, half_width, frequencies = (
        coords["hsgp_center"][1],
        coords["hsgp_half_width"][1],
        coords["hsgp_frequency"][1],
    )
    basis = np.hstack([np.ones((17, 1)), hsgp_basis(new, center, half_width, frequencies[1:])])
    np.testing.assert_allclose(moments["latent_mean"].values, weights @ basis.T, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(moments["latent_variance"].values, 0.0)
    proba = model.class_proba(draws, new)
    np.testing.assert_allclose(proba.sel({"class": "1"}).values, scipy.special.expit(weights @ basis.T), rtol=1e-12)
    np.testing.assert_allclose(proba.sum("class").values, 1.0, atol=1e-12)


@pytest.mark.parametrize("d", [1, 2])
def test_hsgp_basis_labels_name_their_frequencies(breast_cancer_two, hsgp_small_data, d):
    """Label "i" (d = 1) or "i,j" (d = 2) of dim ``basis`` is the eigenfunction with frequencies pi i / (2 L_1),
    pi j / (2 L_2), the same order as the model's basis columns."""
    data = hsgp_small_data if d == 1 else breast_cancer_two
    model = LatentGaussianProcess(approximation="hsgp", hsgp_basis=6)
    coords = model.coords(data)
    labels = model.coords(data)["basis"]
    half_width, frequencies = coords["hsgp_half_width"][1], coords["hsgp_frequency"][1]
    assert len(labels) == 6**d + 1 and labels[0] == "constant"
    indices = np.array([[int(part) for part in label.split(",")] for label in labels[1:]])
    np.testing.assert_allclose(frequencies[1:], np.pi * indices / (2 * half_width), rtol=1e-12)


def test_hsgp_map_predictive_is_the_function_space_laplace_with_the_reduced_rank_kernel():
    """The HSGP map's latent mean and variance at new inputs equal laplace_fit / laplace_predict with
    K = Z Z^T, Z = [1, Phi] diag(c, a sqrt(S)) at the map hyperparameters."""
    data = seed004_gp(300, random_seed=7).standardized()
    model = LatentGaussianProcess(approximation="hsgp")
    with one_blas_thread():
        estimate = model.point_estimate(data, "map")
    assert estimate["basis_weight"].dims == ("basis",) and estimate["basis_weight"]["basis"].values[0] == "constant"
    center, half_width = estimate["hsgp_center"].values, estimate["hsgp_half_width"].values
    frequencies = estimate["hsgp_frequency"].values[1:]
    prior_sd = np.concatenate(
        [
            [float(estimate["constant"])],
            float(estimate["amplitude"]) * np.sqrt(spectral_density(frequencies, estimate["lengthscale"].values)),
        ]
    )

    def features(inputs):
        return np.hstack([np.ones((len(inputs), 1)), hsgp_basis(inputs, center, half_width, frequencies)]) * prior_sd

    z = features(data.X)
    fit = polished_fit(data.X, data.y, z @ z.T)
    new = np.linspace(-1.7, 1.7, 41)[:, np.newaxis]
    mean, variance, proba = laplace_predict(fit, z @ features(new).T, (features(new) ** 2).sum(axis=1))
    moments = model.latent_predictive(estimate, new)
    np.testing.assert_allclose(moments["latent_mean"].values, mean, atol=1e-7)
    np.testing.assert_allclose(moments["latent_variance"].values, variance, atol=1e-7)
    np.testing.assert_allclose(model.class_proba(estimate, new).sel({"class": "1"}).values, proba, atol=1e-7)
    np.testing.assert_allclose(
        estimate["basis_weight"].values, prior_sd * weight_laplace_fit(z, data.y, link="logit").mode, atol=1e-7
    )


# =========================================================================== HSGP and exact maps on seed 004,
# approximation choice


def seed004_split(n_train, n_test, random_seed):
    """Training Dataset and fresh test inputs (with their true latent and probabilities) of ONE seed-004 latent
    function: the generator draws one GP path per seed, so held-out points must come from the same draw."""
    truth = seed004_gp_truth(n_train + n_test, random_seed=random_seed)
    training = seed004_gp(n_train + n_test, random_seed=random_seed).subset(np.arange(n_train))
    test = {key: value[n_train:] for key, value in truth.items()}
    return training, test


@pytest.fixture(scope="module")
def hsgp_large_map():
    training, test = seed004_split(2000, 400, random_seed=21)
    with one_blas_thread():
        result = inference.fit(LatentGaussianProcess(approximation="hsgp"), training, method="map", standardize=True)
    return result, test


def test_hsgp_map_recovers_the_true_probabilities(hsgp_large_map):
    """n = 2000 (HSGP Laplace, type-II ML): at 400 fresh inputs of the same latent function the predicted
    probability is within 0.05 of the truth on average (measured 0.013; the irreducible part is the estimation
    error of a latent function from 2000 binary labels)."""
    result, test = hsgp_large_map
    assert "basis_weight" in result["point_estimate_map"]
    proba = inference.predict(result, test["x"][:, np.newaxis])["class_proba"].sel({"class": "1"}).values
    assert np.abs(proba - test["proba"]).mean() < 0.05
    assert np.corrcoef(proba, test["proba"])[0, 1] > 0.95


def test_hsgp_map_agrees_with_the_exact_map():
    """n = 300 (seed 7): both type-II ML fits find the same lengthscale and amplitude (within 2 %) and their
    probabilities on the data range agree within 0.01 (measured 1.5e-3; 2e-5 on seeds 5 and 8). The HSGP basis
    (m = 30, box 1.5x the half-range) resolves the fitted lengthscale ~0.6 well, see the covariance test above."""
    data = seed004_gp(300, random_seed=7).standardized()
    with one_blas_thread():
        exact = LatentGaussianProcess(approximation="exact").point_estimate(data, "map")
        hsgp = LatentGaussianProcess(approximation="hsgp").point_estimate(data, "map")
    assert "latent" in exact and "basis_weight" in hsgp
    np.testing.assert_allclose(hsgp["lengthscale"].values, exact["lengthscale"].values, rtol=0.02)
    assert float(hsgp["amplitude"]) == pytest.approx(float(exact["amplitude"]), rel=0.02)
    grid = np.linspace(data.X.min(), data.X.max(), 101)[:, np.newaxis]
    model = LatentGaussianProcess()
    difference = np.abs(model.class_proba(hsgp, grid).values - model.class_proba(exact, grid).values)
    assert difference.max() < 0.01


def test_auto_approximation_switches_to_hsgp_exactly_above_exact_up_to():
    data = seed004_gp(EXACT_UP_TO + 1, random_seed=2)
    at_limit, above = data.subset(np.arange(EXACT_UP_TO)), data
    model = LatentGaussianProcess()
    assert model.approximation == "auto"
    assert not model.uses_hsgp(at_limit) and model.uses_hsgp(above)
    assert "training_input" in model.coords(at_limit) and "hsgp_center" not in model.coords(at_limit)
    assert "hsgp_center" in model.coords(above) and "training_input" not in model.coords(above)
    assert "basis" in model.coords(above) and "basis" not in model.coords(at_limit)
    assert LatentGaussianProcess(approximation="exact").uses_hsgp(above) is False
    assert LatentGaussianProcess(approximation="hsgp").uses_hsgp(data.subset(np.arange(20))) is True
    # the built models differ accordingly
    assert "basis_weight" in model.build(above).named_vars
    assert "latent" in model.build(at_limit).named_vars and "basis_weight" not in model.build(at_limit).named_vars


@pytest.mark.parametrize("approximation", ["exact", "hsgp"])
def test_map_probabilities_sum_to_one_and_ignore_the_row_order(approximation):
    n = 80 if approximation == "exact" else 300
    data = seed004_gp(n, random_seed=7).standardized()
    permutation = np.random.default_rng(0).permutation(n)
    model = LatentGaussianProcess(approximation=approximation)
    with one_blas_thread():
        estimate, permuted = model.point_estimate(data, "map"), model.point_estimate(data.subset(permutation), "map")
    new = np.linspace(-2.0, 2.0, 41)[:, np.newaxis]
    proba = model.class_proba(estimate, new)
    np.testing.assert_allclose(proba.sum("class").values, 1.0, atol=1e-12)
    assert (proba.values > 0).all() and (proba.values < 1).all()
    # measured: 2e-14 (exact, analytic gradient), 1e-7 (HSGP, finite-difference L-BFGS)
    np.testing.assert_allclose(model.class_proba(permuted, new).values, proba.values, atol=1e-5)
    if approximation == "exact":
        np.testing.assert_allclose(permuted["latent"].values, estimate["latent"].values[permutation], atol=1e-8)


def test_model_hyperparameters_survive_the_result_round_trip():
    model = LatentGaussianProcess(
        link="probit",
        kernel="matern52",
        jitter=1e-5,
        approximation="hsgp",
        hsgp_basis=12,
        hsgp_boundary=1.8,
        prior=GaussianProcessPrior(
            lengthscale_alpha=4.0, lengthscale_beta=1.5, amplitude_sigma=2.0, constant_sigma=0.5
        ),
    )
    assert model_from_dict(json.loads(model.to_json())) == model
    result = inference.fit(model, seed004_gp(120, random_seed=3), method="map", standardize=True)
    assert inference.model_of(result) == model
    assert result["point_estimate_map"]["basis_weight"].sizes["basis"] == 13


# =========================================================================== NUTS fits (shared, few draws)


@pytest.fixture(scope="module")
def exact_nuts():
    """Exact latent GP by NUTS, seed004 n = 40 (one compile, ~15 s); draws only for plumbing checks."""
    data = seed004_gp(40, random_seed=11)
    result = inference.fit(
        LatentGaussianProcess(approximation="exact"),
        data,
        method="nuts",
        standardize=True,
        sampler=SamplerSettings(draws=60, tune=150, chains=2, progressbar=False),
        random_seed=1,
    )
    return data, result


@pytest.fixture(scope="module")
def hsgp_nuts():
    """n = 600 > EXACT_UP_TO: the default model ("auto") samples the HSGP; 2 x 200 draws."""
    data = seed004_gp(600, random_seed=12)
    result = inference.fit(
        LatentGaussianProcess(),
        data,
        method="nuts",
        standardize=True,
        sampler=SamplerSettings(draws=200, tune=200, chains=2, progressbar=False),
        random_seed=2,
    )
    return data, result


def test_nuts_draws_interpolate_their_latent_at_the_training_inputs(exact_nuts):
    """f(x_i) | z, theta at a training input returns z_i: latent_mean = K (K + eps I)^-1 z differs from z by at
    most eps ||(K + eps I)^-1 z|| <= sqrt(eps) |u| (eps = jitter a^2, z = L u), and the variance is at most eps."""
    data, result = exact_nuts
    posterior = result["posterior"].to_dataset()
    center, scale = standardization_of(result)
    model = inference.model_of(result)
    moments = model.latent_predictive(posterior, (data.X - center) / scale)
    assert moments["latent_mean"].dims == ("chain", "draw", "obs")
    latent = posterior["latent"].transpose("chain", "draw", "obs").values
    mean, variance = moments["latent_mean"].values, moments["latent_variance"].values
    x = posterior["training_input"].values
    np.testing.assert_allclose(x, (data.X - center) / scale, rtol=1e-12)
    amplitude = posterior["amplitude"].values
    for chain, draw in np.ndindex(amplitude.shape):
        a = amplitude[chain, draw]
        epsilon = model.jitter * a**2
        covariance = kernel_matrix(
            x,
            x,
            lengthscale=posterior["lengthscale"].values[chain, draw],
            amplitude=a,
            constant=posterior["constant"].values[chain, draw],
        ) + epsilon * np.eye(len(x))
        whitened = scipy.linalg.solve_triangular(np.linalg.cholesky(covariance), latent[chain, draw], lower=True)
        assert (
            np.abs(mean[chain, draw] - latent[chain, draw]).max() <= np.sqrt(epsilon) * np.linalg.norm(whitened) + 1e-9
        )
        assert variance[chain, draw].max() <= epsilon * (1 + 1e-6) + 1e-12
    assert np.abs(mean - latent).max() < 0.05 * np.abs(latent).max()


def test_nuts_probabilities_sum_to_one_per_draw(exact_nuts, hsgp_nuts):
    for _, result in (exact_nuts, hsgp_nuts):
        prediction = inference.predict(result, np.linspace(0.0, 1.0, 25)[:, np.newaxis], return_draws=True)
        for name in ("class_proba_draws", "class_proba", "class_proba_map"):
            np.testing.assert_allclose(prediction[name].sum("class").values, 1.0, atol=1e-12)
        draws = prediction["class_proba_draws"]
        assert draws.sizes["chain"] == 2 and draws.sizes["obs"] == 25
        assert (prediction["class_proba_low"] <= prediction["class_proba"]).all()
        assert (prediction["class_proba"] <= prediction["class_proba_high"]).all()


def test_hsgp_nuts_fit_runs_end_to_end_and_agrees_with_its_map(hsgp_nuts):
    """HSGP NUTS (2 x 200 draws, n = 600): basis_weight has dim ``basis`` (first "constant"), a draw predicts its
    own latent (variance 0), and the posterior-mean probabilities are within 0.03 of the HSGP Laplace map's on
    average (measured 0.005)."""
    data, result = hsgp_nuts
    posterior = result["posterior"].to_dataset()
    assert "latent" not in posterior
    assert posterior["basis_weight"].dims == ("chain", "draw", "basis")
    assert posterior["basis"].values[0] == "constant" and posterior.sizes["basis"] == 31
    assert result["sample_stats"]["diverging"].values.mean() < 0.05
    prediction = inference.predict(result, np.linspace(0.0, 1.0, 101)[:, np.newaxis])
    difference = np.abs(prediction["class_proba"] - prediction["class_proba_map"]).sel({"class": "1"}).values
    assert difference.mean() < 0.03 and difference.max() < 0.1
    center, scale = standardization_of(result)
    moments = inference.model_of(result).latent_predictive(posterior, (data.X[:50] - center) / scale)
    np.testing.assert_array_equal(moments["latent_variance"].values, 0.0)
    weights = posterior["basis_weight"].values
    assert np.isfinite(weights).all() and np.abs(moments["latent_mean"].values).max() > 1.0


# =========================================================================== bad input


def test_gp_rejects_bad_input_with_messages_naming_the_argument(iris):
    with pytest.raises(ValueError, match="the gp model is binary, but 'iris' has 3 classes"):
        inference.fit(LatentGaussianProcess(), iris, method="map")
    with pytest.raises(ValueError, match="the gp model is binary"):
        LatentGaussianProcess(approximation="hsgp").build(iris.subset(np.arange(150)))
    with_nan = np.random.default_rng(0).normal(size=(20, 2))
    with_nan[3, 1] = np.nan
    with pytest.raises(ValueError, match=r"X contains NaN at row 3, column 'b'"):
        Dataset(
            name="nan",
            X=with_nan,
            y=np.tile([0, 1], 10),
            feature_names=("a", "b"),
            class_names=("0", "1"),
            feature_kinds=("continuous",) * 2,
        )
    for name in ("lengthscale_alpha", "lengthscale_beta", "amplitude_sigma", "constant_sigma"):
        for bad in (0, -1.0, np.nan, np.inf):
            with pytest.raises(ValueError, match=f"{name} must be a positive finite number"):
                GaussianProcessPrior(**{name: bad})
    for bad in (1, 0, -3, 2.5, 30.0, True, "30"):
        with pytest.raises(ValueError, match="hsgp_basis must be an integer >= 2"):
            LatentGaussianProcess(hsgp_basis=bad)
    for bad in (1.0, 0.5):
        with pytest.raises(ValueError, match="hsgp_boundary must be > 1"):
            LatentGaussianProcess(hsgp_boundary=bad)
    for bad in (-2.0, np.nan, "wide"):
        with pytest.raises(ValueError, match="hsgp_boundary must be a positive"):
            LatentGaussianProcess(hsgp_boundary=bad)
    with pytest.raises(ValueError, match="approximation must be 'auto', 'exact' or 'hsgp', got 'bogus'"):
        LatentGaussianProcess(approximation="bogus")
    with pytest.raises(ValueError, match=r"jitter must be a number in \(0, 0.01\]"):
        LatentGaussianProcess(jitter=0.0)
    with pytest.raises(ValueError, match="latent_graph must be 'fused' or 'pytensor', got 'bogus'"):
        LatentGaussianProcess().build(seed004_gp(20, random_seed=1), latent_graph="bogus")


def test_gp_rejects_infeasible_hsgp_inputs(breast_cancer_std):
    three = breast_cancer_std.select_features(list(breast_cancer_std.feature_names[:3]))
    message = r"hsgp_basis=30 per input gives 27000 basis functions for 3 inputs \(at most 2500\)"
    with pytest.raises(ValueError, match=message):
        LatentGaussianProcess(approximation="hsgp", hsgp_basis=30).build(three)
    with pytest.raises(ValueError, match=message):
        inference.fit(LatentGaussianProcess(approximation="hsgp", hsgp_basis=30), three, method="map")
    assert HSGP_MAX_BASIS == 2500 and 13**3 <= HSGP_MAX_BASIS
    LatentGaussianProcess(approximation="hsgp", hsgp_basis=13).check_training_data(three)  # 2197 functions: fine
    LatentGaussianProcess(approximation="exact").check_training_data(three)  # exact: any number of inputs
    flat = Dataset(
        name="flat",
        X=np.c_[np.random.default_rng(0).normal(size=40), np.ones(40)],
        y=np.tile([0, 1], 20),
        feature_names=("a", "flat"),
        class_names=("0", "1"),
        feature_kinds=("continuous",) * 2,
    )
    with pytest.raises(ValueError, match="input\\(s\\) 'flat' are constant: the HSGP basis needs a range"):
        LatentGaussianProcess(approximation="hsgp").point_estimate(flat, "map")
    with pytest.raises(ValueError, match="'flat' are constant"):
        LatentGaussianProcess(approximation="hsgp").build(flat)
    LatentGaussianProcess(approximation="exact").check_training_data(flat)


def test_prediction_rejects_the_wrong_number_of_inputs():
    two = Dataset(
        name="two",
        X=np.random.default_rng(0).normal(size=(20, 2)),
        y=np.tile([0, 1], 10),
        feature_names=("a", "b"),
        class_names=("0", "1"),
        feature_kinds=("continuous",) * 2,
    )
    result = inference.fit(LatentGaussianProcess(approximation="exact"), two, method="map", standardize=True)
    with pytest.raises(ValueError, match=r"X has 1 columns but the model was fitted on 2 features \('a', 'b'\)"):
        inference.predict(result, np.zeros((3, 1)))
    with pytest.raises(ValueError, match="X is 1-D with 1 values but the model was fitted on 2 features"):
        inference.predict(result, np.zeros(1))
    with pytest.raises(ValueError, match="X contains NaN at row 0, column 'b'"):
        inference.predict(result, np.array([[0.0, np.nan]]))
    assert inference.predict(result, np.zeros(2))["class_proba"].shape == (1, 2)


def test_weight_laplace_fit_rejects_bad_link_and_labels():
    features = np.random.default_rng(0).normal(size=(6, 3))
    with pytest.raises(ValueError, match="link must be 'logit' or 'probit'"):
        weight_laplace_fit(features, np.array([0, 1, 1, 0, 1, 0]), link="cauchit")
    with pytest.raises(ValueError, match="binary labels 0 and 1"):
        weight_laplace_fit(features, np.array([0, 1, 2, 0, 1, 0]), link="logit")


@pytest.mark.parametrize("call", ["kernel_gradients", "spectral_density", "kernel_gradients_lengthscale"])
def test_kernel_helpers_reject_what_kernel_matrix_rejects(call):
    with pytest.raises(ValueError, match="kernel must be|lengthscale must be positive"):
        if call == "kernel_gradients":
            kernel_gradients(np.zeros((3, 1)), lengthscale=1.0, amplitude=1.0, constant=0.0, kernel="periodic")
        elif call == "spectral_density":
            spectral_density(np.ones((3, 1)), np.array([1.0]), "periodic")
        else:
            kernel_gradients(np.zeros((3, 1)), lengthscale=-1.0, amplitude=1.0, constant=0.0)


# =========================================================================== the compile cache swaps data into a
# compiled model


def swapped_logp(model, first, second, points):
    """logp of the model built for ``first`` with the pm.Data of ``second`` set into it (what a compile-cache hit
    does with nutpie's ``with_data``), and of the model built for ``second``, at the same points."""
    assert model.cache_key(first) == model.cache_key(second)  # a cache hit
    compiled, fresh = model.build(first), model.build(second)
    shared = {name: var.get_value() for name, var in fresh.named_vars.items() if isinstance(var, SharedVariable)}
    pm.set_data(shared, model=compiled)
    swapped, expected = compiled.compile_logp(mode="FAST_COMPILE"), fresh.compile_logp(mode="FAST_COMPILE")
    return np.array([swapped(point) for point in points]), np.array([expected(point) for point in points])


def test_exact_model_with_swapped_data_is_the_model_of_the_new_data():
    model = LatentGaussianProcess(approximation="exact")
    first, second = seed004_gp(40, random_seed=1).standardized(), seed004_gp(40, random_seed=2).standardized()
    swapped, expected = swapped_logp(model, first, second, random_points(model.build(second), 3, seed=3))
    np.testing.assert_allclose(swapped, expected, rtol=1e-10)


def test_hsgp_model_with_swapped_data_is_the_model_of_the_new_data():
    """Two standardised seed-004 samples have the same cache key but half-widths 2.572 and 2.541."""
    model = LatentGaussianProcess(approximation="hsgp")
    first, second = seed004_gp(300, random_seed=1).standardized(), seed004_gp(300, random_seed=2).standardized()
    assert model.coords(first)["hsgp_half_width"][1] != pytest.approx(model.coords(second)["hsgp_half_width"][1])
    swapped, expected = swapped_logp(model, first, second, random_points(model.build(second), 3, seed=3))
    np.testing.assert_allclose(swapped, expected, rtol=1e-10)


@pytest.mark.slow
def test_hsgp_nuts_fit_does_not_depend_on_what_was_fitted_before(monkeypatch):
    model = LatentGaussianProcess(approximation="hsgp")
    first, second = seed004_gp(300, random_seed=1).standardized(), seed004_gp(300, random_seed=2).standardized()
    assert model.cache_key(first) == model.cache_key(second)
    sampler = SamplerSettings(draws=30, tune=30, chains=1, progressbar=False)
    monkeypatch.setattr(sampling_module, "_COMPILED", {})  # a private cache: other tests' compiled models stay
    inference.fit(model, first, method="nuts", sampler=sampler, random_seed=5)
    after_first = inference.fit(model, second, method="nuts", sampler=sampler, random_seed=5)
    assert after_first.attrs["compile_cache_hit"] == 1
    monkeypatch.setattr(sampling_module, "_COMPILED", {})
    fresh = inference.fit(model, second, method="nuts", sampler=sampler, random_seed=5)
    assert fresh.attrs["compile_cache_hit"] == 0
    # control: nutpie is deterministic given the seed and the density (a cache hit on the SAME data reproduces it)
    again = inference.fit(model, second, method="nuts", sampler=sampler, random_seed=5)
    assert again.attrs["compile_cache_hit"] == 1
    np.testing.assert_array_equal(again["posterior"]["basis_weight"].values, fresh["posterior"]["basis_weight"].values)
    np.testing.assert_array_equal(
        after_first["posterior"]["basis_weight"].values, fresh["posterior"]["basis_weight"].values
    )


@pytest.mark.slow
def test_nuts_posterior_covers_the_true_latent_at_new_inputs():
    """Seed 004, n = 200 (standardised), exact latent GP, NUTS 2 x 500: at 150 fresh inputs of the same latent
    function per data set, the true latent lies in the 89 % equal-tailed band of f* (one draw of N(latent_mean,
    latent_variance) per posterior draw) at >= 80 % of the points, pooled over four data sets (seeds 3-6, one compile).

    Pooled because all test points of one data set share ONE latent function: coverage per data set is strongly
    correlated across points and ranged 0.68-0.99 over seeds 3-12 (mean 0.88, nominal 0.89; 0.68 and 0.73 where the
    posterior over-smooths, mean lengthscale 0.8-0.9 against the true 0.49). Convergence: 2 x 500 draws give the
    lengthscale a bulk ESS of only ~50-120, so r_hat <= 1.01 held on 3 of those 10 fits (1.003-1.12, seed 4 the worst
    with 13 divergences); checked here is the absence of stuck chains (r_hat <= 1.15) and of frequent divergences."""
    import arviz_stats as azs

    covered = []
    for seed in (3, 4, 5, 6):
        training, test = seed004_split(200, 150, random_seed=seed)
        result = inference.fit(
            LatentGaussianProcess(approximation="exact"),
            training,
            method="nuts",
            standardize=True,
            sampler=SamplerSettings(draws=500, tune=500, chains=2, progressbar=False),
            random_seed=9,
        )
        posterior = result["posterior"].to_dataset()
        rhat = azs.rhat(posterior[["lengthscale", "amplitude", "constant"]], sample_dims=["chain", "draw"])
        assert all(float(rhat[name].max()) <= 1.15 for name in ("lengthscale", "amplitude", "constant")), (seed, rhat)
        assert result["sample_stats"]["diverging"].values.mean() <= 0.02
        center, scale = standardization_of(result)
        with one_blas_thread():
            moments = inference.model_of(result).latent_predictive(
                posterior, (test["x"][:, np.newaxis] - center) / scale
            )
        mean, variance = moments["latent_mean"].values, moments["latent_variance"].values  # (chain, draw, obs)
        draws = np.random.default_rng(10).normal(mean, np.sqrt(variance)).reshape(-1, len(test["x"]))
        low, high = np.quantile(draws, [0.055, 0.945], axis=0)
        covered.append((test["latent"] >= low) & (test["latent"] <= high))
        # the band is informative: narrower than the prior's 89 % band of the latent (+-1.6 sqrt(9.25) = +-4.9)
        assert np.median(high - low) < 2 * 4.9
    assert np.mean(covered) >= 0.8
