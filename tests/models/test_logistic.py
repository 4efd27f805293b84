"""Tests of models.logistic: point estimates against scikit-learn and independent optimisers,
the PyMC model's density, class probabilities, invariances, and the posterior against its
MAP / Laplace approximation."""

from __future__ import annotations

import dataclasses
import math
import warnings

import arviz_stats as azs
import numpy as np
import pytensor
import pytest
import scipy.linalg
import scipy.optimize
import scipy.special
import scipy.stats
import xarray as xr
from pytensor.compile.mode import Mode
from sklearn.linear_model import LogisticRegression as SklearnLogisticRegression

from bayesclass import data
from bayesclass.models import (
    LogisticPrior,
    LogisticRegression,
    SeparationError,
    get_model,
    model_from_dict,
)

#: PyTensor functions evaluated a handful of times: all graph rewrites (the numerically stable forms
#: NUTS also gets) but the Python linker, which skips seconds of C compilation per graph
FAST = {"mode": Mode(linker="py", optimizer="fast_run")}


def sklearn_fit(dataset: data.Dataset, C: float):
    """scikit-learn's lbfgs logistic regression at its tightest tolerance, failing on any warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return SklearnLogisticRegression(C=C, tol=1e-12, max_iter=10_000).fit(dataset.X, dataset.y)


def stacked_params(estimate: xr.Dataset, rng: np.random.Generator, n_chain: int = 2, n_draw: int = 3) -> xr.Dataset:
    """A fake 'posterior': the point estimate perturbed independently per (chain, draw)."""

    def perturbed() -> xr.Dataset:
        return estimate.assign({name: var + rng.normal(scale=0.3, size=var.shape) for name, var in estimate.items()})

    chains = [xr.concat([perturbed() for _ in range(n_draw)], dim="draw") for _ in range(n_chain)]
    return xr.concat(chains, dim="chain").transpose("chain", "draw", ...)


# --------------------------------------------------------------------------- hyperparameters


def test_default_hyperparameters():
    model = LogisticRegression()
    assert model.prior == LogisticPrior(weight_sigma=1.0, intercept_sigma=10.0)
    assert (model.link, model.parametrization) == ("logit", "whitened")
    assert get_model("logistic") == model


@pytest.mark.parametrize(
    ("arguments", "pattern"),
    [
        ({"weight_sigma": -1}, r"weight_sigma.*-1"),
        ({"weight_sigma": 0.0}, r"weight_sigma.*0\.0"),
        ({"weight_sigma": math.inf}, r"weight_sigma.*inf"),
        ({"weight_sigma": math.nan}, r"weight_sigma.*nan"),
        ({"weight_sigma": "wide"}, r"weight_sigma.*'wide'"),
        ({"intercept_sigma": -2.5}, r"intercept_sigma.*-2\.5"),
    ],
)
def test_prior_rejects_non_positive_sigma(arguments, pattern):
    with pytest.raises(ValueError, match=pattern):
        LogisticPrior(**arguments)


def test_flat_intercept_is_allowed_only_for_the_intercept():
    assert LogisticPrior(intercept_sigma=math.inf).intercept_sigma == math.inf


@pytest.mark.parametrize(
    ("arguments", "pattern"),
    [
        ({"link": "cloglog"}, r"link must be 'logit' or 'probit'.*'cloglog'"),
        ({"parametrization": "noncentered"}, r"parametrization.*'noncentered'"),
    ],
)
def test_model_rejects_unknown_options(arguments, pattern):
    with pytest.raises(ValueError, match=pattern):
        LogisticRegression(**arguments)


def test_model_rejects_prior_of_wrong_type():
    with pytest.raises(TypeError, match="prior must be a LogisticPrior"):
        LogisticRegression(prior=0.5)
    with pytest.raises(
        ValueError, match=r"prior=\{'weight_scale': 1.0\}.*its fields are weight_sigma, intercept_sigma"
    ):
        LogisticRegression(prior={"weight_scale": 1.0})


def test_model_accepts_its_prior_as_a_dict():
    """One dict-to-prior conversion in the base class serves every family (and from_dict)."""
    assert LogisticRegression(prior={"weight_sigma": 2.0}).prior == LogisticPrior(weight_sigma=2.0)


def test_unknown_point_estimate_kind(gaussians_small):
    with pytest.raises(ValueError, match=r"kind='posterior_mean'.*'mle', 'map'"):
        LogisticRegression().point_estimate(gaussians_small, "posterior_mean")


@pytest.mark.parametrize("prior", [LogisticPrior(), LogisticPrior(weight_sigma=2.5, intercept_sigma=math.inf)])
def test_hyperparameters_round_trip_through_json(prior):
    import json

    model = LogisticRegression(prior=prior, link="probit", parametrization="centered")
    assert model_from_dict(json.loads(model.to_json())) == model


# --------------------------------------------------------------------------- MAP and MLE


def test_binary_map_matches_sklearn(breast_cancer_std, flat_intercept_model):
    for weight_sigma in (1.0, 0.3):
        model = dataclasses.replace(flat_intercept_model, prior=LogisticPrior(weight_sigma, math.inf))
        estimate = model.point_estimate(breast_cancer_std, "map")
        reference = sklearn_fit(breast_cancer_std, C=weight_sigma**2)
        np.testing.assert_allclose(estimate["weights"].values, reference.coef_[0], rtol=0, atol=1e-5)
        np.testing.assert_allclose(estimate["intercept"].values, reference.intercept_[0], rtol=0, atol=1e-5)
        assert estimate.attrs["gradient_norm"] <= 1e-8
        assert estimate.attrs["kind"] == "map"


def test_multiclass_map_matches_sklearn_multinomial(iris, iris_std, flat_intercept_model):
    for dataset in (iris, iris_std):
        estimate = flat_intercept_model.point_estimate(dataset, "map")
        reference = sklearn_fit(dataset, C=1.0)
        proba = flat_intercept_model.class_proba(estimate, dataset.X)
        np.testing.assert_allclose(proba.values, reference.predict_proba(dataset.X), rtol=0, atol=1e-5)
        # scikit-learn's symmetric L2 solution is zero-sum over classes, like ours
        np.testing.assert_allclose(estimate["weights"].values.T, reference.coef_, rtol=0, atol=1e-4)
        assert estimate.attrs["gradient_norm"] <= 1e-8


@pytest.mark.parametrize(
    ("name", "link"),
    [
        ("breast_cancer", "logit"),
        ("breast_cancer", "probit"),
        ("wine", "logit"),
        ("iris", "logit"),
        ("transport", "logit"),
    ],
)
def test_map_reaches_gradient_tolerance(name, link):
    dataset = data.load(name).standardized()
    estimate = LogisticRegression(link=link).point_estimate(dataset, "map")
    assert estimate.attrs["gradient_norm"] <= 1e-8
    assert estimate.attrs["n_iterations"] < 100
    assert all(np.isfinite(estimate[name].values).all() for name in ("intercept", "weights"))


def test_map_that_cannot_reach_the_gradient_tolerance_raises_instead_of_returning(monkeypatch):
    """The shared Newton engine stops at round-off; for logistic regression that is a ConvergenceError whenever
    the gradient norm is still above GRADIENT_TOLERANCE (here made unreachable), never a returned estimate."""
    from bayesclass.models import ConvergenceError, logistic

    monkeypatch.setattr(logistic, "GRADIENT_TOLERANCE", 1e-300)
    dataset = data.seed001_gaussians(300, random_seed=11)  # a fresh Dataset: no cached solve
    with pytest.raises(ConvergenceError, match=r"Newton's method for the MAP did not converge.*round-off.*> 1e-300"):
        LogisticRegression().point_estimate(dataset, "map")


def test_mle_matches_unpenalised_sklearn():
    dataset = data.seed001_gaussians(2000, random_seed=7)
    estimate = LogisticRegression().point_estimate(dataset, "mle")
    reference = sklearn_fit(dataset, C=np.inf)  # scikit-learn >= 1.8 spelling of penalty=None
    np.testing.assert_allclose(estimate["weights"].values, reference.coef_[0], rtol=0, atol=1e-6)
    np.testing.assert_allclose(estimate["intercept"].values, reference.intercept_[0], rtol=0, atol=1e-6)
    assert estimate.attrs["gradient_norm"] <= 1e-8
    assert estimate.attrs["kind"] == "mle"


def test_mle_of_seed001_recovers_the_bayes_optimal_boundary():
    """Seed 001 §B.1: equal-covariance Gaussians give log-odds (mu2-mu1)'x + const exactly."""
    dataset = data.seed001_gaussians(20_000, random_seed=3)
    estimate = LogisticRegression().point_estimate(dataset, "mle")
    mu1, mu2 = data.synthetic.SEED001_MEANS
    prior_c1 = data.synthetic.SEED001_PRIOR_C1
    true_weights = mu2 - mu1  # log-odds of C2 (the second, "positive" class)
    true_intercept = -0.5 * (mu2 @ mu2 - mu1 @ mu1) + math.log((1 - prior_c1) / prior_c1)
    # standard errors at n=20000: about 0.02 (weights) and 0.045 (intercept); bounds are ~5 of them
    np.testing.assert_allclose(estimate["weights"].values, true_weights, atol=0.1)
    assert abs(float(estimate["intercept"]) - true_intercept) < 0.2


def test_probit_map_matches_an_independent_optimiser(gaussians_small):
    """Minimise the probit MAP objective with scipy's BFGS on our own numpy objective."""
    sigma_w, sigma_b = 1.5, 4.0
    model = LogisticRegression(prior=LogisticPrior(sigma_w, sigma_b), link="probit")
    design = np.column_stack([np.ones(gaussians_small.n_obs), gaussians_small.X])
    sign = 2.0 * gaussians_small.y - 1.0
    precision = np.array([sigma_b**-2, sigma_w**-2, sigma_w**-2])

    def objective(theta):
        margin = sign * (design @ theta)
        log_cdf = scipy.special.log_ndtr(margin)
        mills = np.exp(scipy.stats.norm.logpdf(margin) - log_cdf)
        value = -log_cdf.sum() + 0.5 * precision @ theta**2
        return value, -design.T @ (sign * mills) + precision * theta

    reference = scipy.optimize.minimize(objective, np.zeros(3), jac=True, method="BFGS", options={"gtol": 1e-10})
    estimate = model.point_estimate(gaussians_small, "map")
    theta = np.r_[float(estimate["intercept"]), estimate["weights"].values]
    np.testing.assert_allclose(theta, reference.x, rtol=0, atol=1e-6)
    assert estimate.attrs["negative_log_objective"] == pytest.approx(reference.fun, rel=1e-12)

    # the exact Hessian behind the Laplace covariance, against central differences of the gradient
    step = 1e-5
    numeric = np.array(
        [(objective(theta + step * e)[1] - objective(theta - step * e)[1]) / (2 * step) for e in np.eye(3)]
    )
    np.testing.assert_allclose(np.linalg.inv(model.laplace_covariance(gaussians_small)), numeric, rtol=1e-5)


@pytest.mark.parametrize(
    ("dataset", "how"),
    [
        (lambda: data.seed000_separable(200, random_seed=0), "completely"),
        (lambda: data.load("breast_cancer"), "completely"),
        (lambda: data.load("wine"), "completely"),
        (lambda: data.load("iris"), "quasi-completely"),
    ],
    ids=["seed000_separable", "breast_cancer", "wine", "iris"],
)
def test_mle_of_separable_data_raises_separation_error(dataset, how):
    dataset = dataset()
    with pytest.raises(SeparationError, match=rf"MLE does not exist.*{dataset.name}.*\b{how} linearly separable"):
        LogisticRegression().point_estimate(dataset, "mle")
    assert issubclass(SeparationError, ValueError)


def test_map_of_separable_data_is_finite_and_stationary():
    dataset = data.seed000_separable(200, random_seed=0)
    model = LogisticRegression()
    estimate = model.point_estimate(dataset, "map")
    weights = estimate["weights"].values
    assert np.isfinite(weights).all() and np.isfinite(float(estimate["intercept"]))
    assert estimate.attrs["gradient_norm"] <= 1e-8
    # stationarity of the penalised objective: X'(y - p) = w / sigma_w^2 (seed 000 eq 9.47 plus the prior)
    proba = model.class_proba(estimate, dataset.X).values[:, 1]
    np.testing.assert_allclose(dataset.X.T @ (dataset.y - proba), weights, atol=1e-7)
    # separable data are classified perfectly by the MAP
    assert np.array_equal(proba > 0.5, dataset.y == 1)


def test_mle_with_constant_feature_names_it(gaussians_small):
    X = np.column_stack([gaussians_small.X, np.full(gaussians_small.n_obs, 3.0)])
    dataset = dataclasses.replace(
        gaussians_small, X=X, feature_names=("x1", "x2", "always3"), feature_kinds=("continuous",) * 3
    )
    with pytest.raises(ValueError, match="'always3'.*constant"):
        LogisticRegression().point_estimate(dataset, "mle")


def test_single_class_training_data_is_rejected(gaussians_small):
    only_first = gaussians_small.subset(gaussians_small.y == 0)
    with pytest.raises(ValueError, match=r"single class \('C1'\)"):
        LogisticRegression().point_estimate(only_first, "map")
    with pytest.raises(ValueError, match="single class"):
        LogisticRegression().build(only_first)


def test_probit_is_binary_only(iris):
    model = LogisticRegression(link="probit")
    for call in (lambda: model.point_estimate(iris, "map"), lambda: model.build(iris)):
        with pytest.raises(ValueError, match=r"probit.*3.*link='logit'"):
            call()


# --------------------------------------------------------------------------- invariances


def test_map_is_invariant_to_row_order(breast_cancer_std, iris_std, rng):
    model = LogisticRegression()
    for dataset in (breast_cancer_std, iris_std):
        order = rng.permutation(dataset.n_obs)
        original = model.point_estimate(dataset, "map")
        permuted = model.point_estimate(dataset.subset(order), "map")
        for name in ("intercept", "weights"):
            np.testing.assert_allclose(permuted[name].values, original[name].values, rtol=0, atol=1e-10)


@pytest.mark.parametrize("link", ["logit", "probit"])
def test_swapping_binary_labels_flips_the_coefficients(breast_cancer_std, link):
    model = LogisticRegression(link=link)
    swapped = dataclasses.replace(
        breast_cancer_std, y=1 - breast_cancer_std.y, class_names=breast_cancer_std.class_names[::-1]
    )
    original = model.point_estimate(breast_cancer_std, "map")
    flipped = model.point_estimate(swapped, "map")
    for name in ("intercept", "weights"):
        np.testing.assert_allclose(flipped[name].values, -original[name].values, rtol=0, atol=1e-10)
    # and the two fits assign the same probability to each named class
    p_original = model.class_proba(original, breast_cancer_std.X)
    p_flipped = model.class_proba(flipped, breast_cancer_std.X)
    xr.testing.assert_allclose(p_flipped.sel({"class": list(p_original["class"].values)}), p_original, atol=1e-10)


def test_multiclass_map_is_zero_sum(iris_std):
    for prior in (LogisticPrior(), LogisticPrior(intercept_sigma=math.inf)):
        estimate = LogisticRegression(prior=prior).point_estimate(iris_std, "map")
        assert estimate["intercept"].dims == ("class",)
        assert estimate["weights"].dims == ("feature", "class")
        np.testing.assert_allclose(estimate["weights"].sum("class").values, 0.0, atol=1e-12)
        np.testing.assert_allclose(estimate["intercept"].sum("class").values, 0.0, atol=1e-12)


def test_point_estimate_layout(gaussians_small, iris):
    binary = LogisticRegression().point_estimate(gaussians_small, "map")
    assert binary["intercept"].dims == ()
    assert binary["weights"].dims == ("feature",)
    assert list(binary["class"].values) == ["C1", "C2"]
    assert list(binary["feature"].values) == ["x1", "x2"]
    multiclass = LogisticRegression().point_estimate(iris, "map")
    assert list(multiclass["class"].values) == list(iris.class_names)
    assert list(multiclass["feature"].values) == list(iris.feature_names)


# --------------------------------------------------------------------------- class probabilities


@pytest.mark.parametrize("link", ["logit", "probit"])
def test_binary_class_proba_is_the_inverse_link(gaussians_small, link):
    model = LogisticRegression(link=link)
    estimate = model.point_estimate(gaussians_small, "map")
    eta = float(estimate["intercept"]) + gaussians_small.X @ estimate["weights"].values
    inverse_link = scipy.special.expit if link == "logit" else scipy.stats.norm.cdf
    proba = model.class_proba(estimate, gaussians_small.X)
    assert proba.dims == ("obs", "class")
    np.testing.assert_allclose(proba.sel({"class": "C2"}).values, inverse_link(eta), rtol=1e-12)
    np.testing.assert_allclose(proba.sum("class").values, 1.0, rtol=1e-12)


def test_multiclass_class_proba_is_the_softmax(iris_std):
    model = LogisticRegression()
    estimate = model.point_estimate(iris_std, "map")
    eta = estimate["intercept"].values + iris_std.X @ estimate["weights"].values
    expected = np.exp(eta) / np.exp(eta).sum(axis=1, keepdims=True)
    proba = model.class_proba(estimate, iris_std.X)
    np.testing.assert_allclose(proba.values, expected, rtol=1e-12)
    np.testing.assert_allclose(proba.sum("class").values, 1.0, rtol=1e-12)
    assert list(proba["class"].values) == list(iris_std.class_names)


@pytest.mark.parametrize("which", ["binary_logit", "binary_probit", "multiclass"])
def test_class_log_proba_broadcasts_over_leading_dims(which, gaussians_small, iris_std, rng):
    dataset = iris_std if which == "multiclass" else gaussians_small
    model = LogisticRegression(link="probit" if which == "binary_probit" else "logit")
    params = stacked_params(model.point_estimate(dataset, "map"), rng)
    X = dataset.X[:25]
    log_proba = model.class_log_proba(params, X)
    assert log_proba.dims == ("chain", "draw", "obs", "class")
    assert log_proba.shape == (2, 3, 25, dataset.n_classes)
    for chain in range(2):
        for draw in range(3):
            one = model.class_log_proba(params.isel(chain=chain, draw=draw), X)
            np.testing.assert_allclose(log_proba.isel(chain=chain, draw=draw).values, one.values, rtol=1e-14)
    # probabilities sum to 1 for every draw and row
    np.testing.assert_allclose(np.exp(log_proba).sum("class").values, 1.0, rtol=1e-12)
    # draws differ, so the per-draw probabilities must differ too (no accidental broadcasting of one draw)
    assert not np.allclose(log_proba.isel(chain=0, draw=0).values, log_proba.isel(chain=1, draw=2).values)


@pytest.mark.parametrize("link", ["logit", "probit"])
def test_class_log_proba_stays_finite_for_extreme_inputs(gaussians_small, link):
    model = LogisticRegression(link=link)
    estimate = model.point_estimate(gaussians_small, "map")
    X = 1e3 * (gaussians_small.X - gaussians_small.X.mean(axis=0))
    eta = float(estimate["intercept"]) + X @ estimate["weights"].values
    assert np.abs(eta).max() > 1e3  # far beyond where P rounds to exactly 0 or 1
    log_proba = model.class_log_proba(estimate, X)
    assert np.isfinite(log_proba.values).all()
    positive = log_proba.sel({"class": "C2"}).values
    negative = log_proba.sel({"class": "C1"}).values
    # the more likely class has log-probability near 0, the other a large negative, finite number
    assert np.all(np.where(eta > 0, negative < positive, positive < negative))
    if link == "logit":
        tail = eta > 50  # log(1 - expit(eta)) = -eta - log1p(exp(-eta))
        np.testing.assert_allclose(negative[tail], -eta[tail], rtol=1e-12)
    else:
        tail = eta < -50  # Mills-ratio asymptotics: log Phi(x) ~ -x^2/2 - log(-x) - log(sqrt(2 pi))
        asymptotic = -0.5 * eta[tail] ** 2 - np.log(-eta[tail]) - 0.5 * math.log(2 * math.pi)
        np.testing.assert_allclose(positive[tail], asymptotic, rtol=1e-3)


def test_multiclass_class_log_proba_stays_finite_for_extreme_inputs(iris_std):
    model = LogisticRegression()
    estimate = model.point_estimate(iris_std, "map")
    log_proba = model.class_log_proba(estimate, 1e4 * iris_std.X)
    assert np.isfinite(log_proba.values).all()
    assert log_proba.values.min() < -1e3
    np.testing.assert_allclose(scipy.special.logsumexp(log_proba.values, axis=1), 0.0, atol=1e-12)


def test_class_log_proba_checks_the_inputs(gaussians_small):
    model = LogisticRegression()
    estimate = model.point_estimate(gaussians_small, "map")
    with pytest.raises(ValueError, match=r"3 columns.*2 features \('x1', 'x2'\)"):
        model.class_log_proba(estimate, np.ones((4, 3)))
    with pytest.raises(ValueError, match=r"NaN at row 1, column 'x2'"):
        model.class_log_proba(estimate, np.array([[1.0, 2.0], [0.0, np.nan]]))
    one_row = model.class_log_proba(estimate, np.array([1.0, 2.0]))
    assert one_row.sizes == {"obs": 1, "class": 2}


def test_probit_and_logit_agree_up_to_the_textbook_scale(gaussians_large):
    """Seed 004 "Probit Models": Phi(eta) ~ expit(1.6..1.8 eta); probit tails are thinner."""
    logit = LogisticRegression(link="logit")
    probit = LogisticRegression(link="probit")
    fit_logit = logit.point_estimate(gaussians_large, "map")
    fit_probit = probit.point_estimate(gaussians_large, "map")
    ratio = fit_logit["weights"].values / fit_probit["weights"].values
    assert np.all((ratio > 1.5) & (ratio < 1.9)), ratio
    assert np.array_equal(np.sign(fit_logit["weights"].values), np.sign(fit_probit["weights"].values))

    p_logit = logit.class_proba(fit_logit, gaussians_large.X).sel({"class": "C2"}).values
    p_probit = probit.class_proba(fit_probit, gaussians_large.X).sel({"class": "C2"}).values
    assert np.abs(p_logit - p_probit).mean() < 0.02
    assert np.array_equal(p_logit > 0.5, p_probit > 0.5) or np.mean((p_logit > 0.5) != (p_probit > 0.5)) < 0.005

    # thinner tails: at the most extreme rows the probit probability is nearer 0 or 1
    eta = float(fit_logit["intercept"]) + gaussians_large.X @ fit_logit["weights"].values
    extreme = np.argsort(np.abs(eta))[-20:]
    closer = np.where(eta[extreme] > 0, p_probit[extreme] > p_logit[extreme], p_probit[extreme] < p_logit[extreme])
    assert closer.all()


# --------------------------------------------------------------------------- the PyMC model


@pytest.mark.parametrize("parametrization", ["centered", "whitened"])
@pytest.mark.parametrize("which", ["binary", "multiclass"])
def test_built_model_has_the_named_dims_and_variables(parametrization, which, gaussians_small, iris_std):
    dataset = iris_std if which == "multiclass" else gaussians_small
    model = LogisticRegression(parametrization=parametrization).build(dataset)
    assert {name: tuple(values) for name, values in model.coords.items() if name != "obs"} == {
        "class": dataset.class_names,
        "feature": dataset.feature_names,
    }
    assert int(model.dim_lengths["obs"].eval()) == dataset.n_obs
    assert {"X", "y", "intercept", "weights", "y_obs"} <= set(model.named_vars)
    dims = model.named_vars_to_dims
    assert dims["X"] == ("obs", "feature")
    assert dims["y_obs"] == ("obs",)
    if which == "binary":
        assert dims["weights"] == ("feature",)
        assert "intercept" not in dims  # a scalar
    else:
        assert dims["weights"] == ("feature", "class")
        assert dims["intercept"] == ("class",)
    n_free = (dataset.n_features + 1) * (1 if which == "binary" else dataset.n_classes - 1)
    if parametrization == "whitened":
        assert [value.name for value in model.value_vars] == ["whitened_coefficients"]
        assert model.initial_point()["whitened_coefficients"].shape == (n_free,)
        assert {"laplace_mode", "laplace_scale", "log_prior"} <= set(model.named_vars)
    else:
        assert "whitened_coefficients" not in model.named_vars
        assert sum(np.size(value) for value in model.initial_point().values()) == n_free
    np.testing.assert_array_equal(model["X"].get_value(), dataset.X)
    np.testing.assert_array_equal(model["y"].get_value(), dataset.y)


def test_centered_model_density_at_the_map(gaussians_small):
    """log p(theta | data) + const: the Newton objective plus the Gaussian normalising constants."""
    sigma_w, sigma_b = 1.0, 10.0
    model = LogisticRegression(prior=LogisticPrior(sigma_w, sigma_b), parametrization="centered")
    estimate = model.point_estimate(gaussians_small, "map")
    pymc_model = model.build(gaussians_small)
    point = {"intercept": estimate["intercept"].values, "weights": estimate["weights"].values}
    normalising = -0.5 * math.log(2 * math.pi * sigma_b**2) - gaussians_small.n_features * 0.5 * math.log(
        2 * math.pi * sigma_w**2
    )
    # PyTensor keeps the constant 10.0 in float32, so log(sigma) carries ~1e-7 error: constants only
    assert pymc_model.compile_logp(**FAST)(point) == pytest.approx(
        -estimate.attrs["negative_log_objective"] + normalising, abs=1e-6
    )
    gradient = pymc_model.compile_dlogp(**FAST)(point)
    assert np.abs(gradient).max() < 1e-7  # the MAP is a stationary point of the PyMC density


@pytest.mark.parametrize("which", ["binary", "binary_probit", "multiclass"])
def test_whitened_model_density_at_the_map(which, gaussians_small, iris_std):
    dataset = iris_std if which == "multiclass" else gaussians_small
    model = LogisticRegression(link="probit" if which == "binary_probit" else "logit")
    estimate = model.point_estimate(dataset, "map")
    pymc_model = model.build(dataset)
    origin = {"whitened_coefficients": np.zeros_like(pymc_model.initial_point()["whitened_coefficients"])}
    # z = 0 is the MAP; the whitened density has no normalising constants (flat z, potential prior)
    assert pymc_model.compile_logp(**FAST)(origin) == pytest.approx(
        -estimate.attrs["negative_log_objective"], rel=1e-12
    )
    assert np.abs(pymc_model.compile_dlogp(**FAST)(origin)).max() < 1e-7
    # at z = 0 the deterministics are the MAP itself
    coefficients = pytensor.function(
        pymc_model.value_vars,
        pymc_model.replace_rvs_by_values([pymc_model["intercept"], pymc_model["weights"]]),
        **FAST,
    )(origin["whitened_coefficients"])
    np.testing.assert_allclose(coefficients[0], estimate["intercept"].values, atol=1e-12)
    np.testing.assert_allclose(coefficients[1], estimate["weights"].values, atol=1e-12)


@pytest.mark.parametrize(
    ("which", "prior", "link"),
    [
        ("binary", LogisticPrior(), "logit"),
        ("binary", LogisticPrior(weight_sigma=0.5, intercept_sigma=math.inf), "logit"),
        ("binary", LogisticPrior(weight_sigma=2.0, intercept_sigma=3.0), "probit"),
        ("multiclass", LogisticPrior(), "logit"),
        ("multiclass", LogisticPrior(weight_sigma=0.7, intercept_sigma=math.inf), "logit"),
    ],
)
def test_whitened_and_centered_models_are_the_same_posterior(which, prior, link, gaussians_small, iris_std, rng):
    """theta = MAP + L^{-T} z is linear, so log p_whitened(z) - log p_centered(theta(z)) is a constant."""
    dataset = iris_std if which == "multiclass" else gaussians_small
    whitened = LogisticRegression(prior=prior, link=link).build(dataset)
    centered = LogisticRegression(prior=prior, link=link, parametrization="centered").build(dataset)
    to_coefficients = pytensor.function(
        whitened.value_vars, whitened.replace_rvs_by_values([whitened["intercept"], whitened["weights"]]), **FAST
    )
    logp_whitened, logp_centered = whitened.compile_logp(**FAST), centered.compile_logp(**FAST)
    n_free = whitened.initial_point()["whitened_coefficients"].size

    def centered_point(intercept, weights):
        point = {}
        for name, value in (("intercept", intercept), ("weights", weights)):
            if name == "intercept" and math.isinf(prior.intercept_sigma) and which == "multiclass":
                # flat zero-sum intercept: free coordinates in the model's own basis
                basis = scipy.linalg.null_space(np.ones((1, dataset.n_classes)))
                point["intercept_free"] = basis.T @ value
                continue
            variable = centered[name]
            transform = centered.rvs_to_transforms.get(variable)
            value_var = centered.rvs_to_values[variable]
            if transform is not None:
                value = transform.forward(pytensor.tensor.as_tensor(value), *variable.owner.inputs).eval(**FAST)
            point[value_var.name] = value
        return point

    differences = []
    for scale in (0.5, 1.0, 3.0):
        z = scale * rng.normal(size=n_free)
        intercept, weights = to_coefficients(z)
        differences.append(
            logp_whitened({"whitened_coefficients": z}) - logp_centered(centered_point(intercept, weights))
        )
    # the log densities change by tens of nats between these points, their difference not at all
    assert np.ptp(differences) < 1e-8, differences


def test_probit_likelihood_in_pytensor_matches_scipy_in_both_tails(gaussians_small):
    """The PyMC probit likelihood uses a two-branch log Phi; check it where log(Phi) would underflow."""
    model = LogisticRegression(link="probit", parametrization="centered")
    pymc_model = model.build(gaussians_small)
    weights = np.array([-30.0, 25.0])  # margins reach several hundred in both directions
    intercept = 1.0
    point = {"intercept": np.asarray(intercept), "weights": weights}
    eta = intercept + gaussians_small.X @ weights
    sign = 2.0 * gaussians_small.y - 1.0
    assert (sign * eta).min() < -40 and (sign * eta).max() > 40
    terms = pymc_model.compile_logp(vars=[pymc_model["y_obs"]], sum=False, **FAST)(point)
    expected = scipy.special.log_ndtr(sign * eta)
    np.testing.assert_allclose(np.asarray(terms[0]), expected, rtol=1e-10, atol=1e-12)
    gradient = pymc_model.compile_dlogp(**FAST)(point)
    assert np.isfinite(gradient).all()


# --------------------------------------------------------------------------- the posterior by NUTS


def test_whitened_and_centered_nuts_agree_within_mcse(nuts_gaussians, nuts_gaussians_centered):
    whitened = nuts_gaussians["posterior"].to_dataset()
    centered = nuts_gaussians_centered["posterior"].to_dataset()
    mcse_w, mcse_c = azs.mcse(whitened, method="mean"), azs.mcse(centered, method="mean")
    for name in ("intercept", "weights"):
        difference = np.abs(whitened[name].mean(("chain", "draw")) - centered[name].mean(("chain", "draw")))
        bound = 4 * np.sqrt(mcse_w[name] ** 2 + mcse_c[name] ** 2)
        assert (difference < bound).all(), (name, difference.values, bound.values)
    # the sd agree too (relative MC error of an sd from >= 300 effective draws is < 5%)
    for name in ("intercept", "weights"):
        ratio = whitened[name].std(("chain", "draw")) / centered[name].std(("chain", "draw"))
        assert (np.abs(ratio - 1) < 0.2).all(), ratio.values


def test_posterior_mean_is_near_the_map_for_large_n(nuts_gaussians_large):
    posterior = nuts_gaussians_large["posterior"].to_dataset()
    estimate = nuts_gaussians_large["point_estimate_map"].to_dataset()
    mcse = azs.mcse(posterior, method="mean")
    for name in ("intercept", "weights"):
        mean = posterior[name].mean(("chain", "draw"))
        sd = posterior[name].std(("chain", "draw"))
        # Monte-Carlo error plus the O(1/n) mean-mode gap, small against the O(1/sqrt(n)) sd at n = 5000
        bound = 4 * mcse[name] + 0.1 * sd
        assert (np.abs(mean - estimate[name]) < bound).all(), (name, (mean - estimate[name]).values, bound.values)


def test_posterior_sd_is_near_the_laplace_sd_for_large_n(nuts_gaussians_large, gaussians_large):
    posterior = nuts_gaussians_large["posterior"].to_dataset()
    laplace_sd = np.sqrt(np.diag(LogisticRegression().laplace_covariance(gaussians_large)))  # (b, w1, w2)
    sampled_sd = np.r_[
        float(posterior["intercept"].std(("chain", "draw"))), posterior["weights"].std(("chain", "draw")).values
    ]
    np.testing.assert_allclose(sampled_sd, laplace_sd, rtol=0.1)
    # the posterior sd shrinks like 1/sqrt(n): n=5000 against the n=200 MAP curvature
    small = data.seed001_gaussians(200, random_seed=1)
    small_sd = np.sqrt(np.diag(LogisticRegression().laplace_covariance(small)))
    assert np.all(small_sd / laplace_sd > 3)


def test_multiclass_posterior_draws_are_zero_sum_and_normalised(nuts_iris):
    posterior = nuts_iris["posterior"].to_dataset()
    assert posterior["weights"].dims == ("chain", "draw", "feature", "class")
    np.testing.assert_allclose(posterior["weights"].sum("class").values, 0.0, atol=1e-10)
    np.testing.assert_allclose(posterior["intercept"].sum("class").values, 0.0, atol=1e-10)
    model = LogisticRegression()
    iris_std = data.load("iris").standardized()
    proba = model.class_proba(posterior, iris_std.X[::10])
    assert proba.dims == ("chain", "draw", "obs", "class")
    np.testing.assert_allclose(proba.sum("class").values, 1.0, rtol=1e-12)


@pytest.mark.parametrize("value", [True, "1.0", None, [1.0]])
def test_prior_scales_must_be_numbers(value):
    """A bool is not a scale and a string is not a number: refused, never coerced (True would be 1.0)."""
    with pytest.raises(ValueError, match=r"weight_sigma must be a positive number, got"):
        LogisticPrior(weight_sigma=value)
