"""The helpers the families share: the one Newton engine, the Bernoulli link terms, the lazily registered GP Op."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import scipy.integrate
import scipy.optimize
import scipy.special

from bayesclass.models._laplace import newton_maximize
from bayesclass.models._links import (
    bernoulli_log_likelihood,
    bernoulli_terms,
    bernoulli_third_derivative,
    link_average,
)
from bayesclass.models.base import ConvergenceError


def _finite_difference(function, x: np.ndarray, step: float) -> np.ndarray:
    return (function(x + step) - function(x - step)) / (2 * step)


@pytest.mark.parametrize("link", ["logit", "probit"])
@pytest.mark.parametrize("label", [0.0, 1.0])
def test_link_terms_equal_finite_differences_and_stay_finite_in_the_tails(link, label):
    eta = np.array([-40.0, -8.0, -1.3, 0.0, 0.7, 5.0, 40.0])
    y = np.full_like(eta, label)
    log_likelihood, gradient, w = bernoulli_terms(eta, y, link)
    third = bernoulli_third_derivative(eta, y, link)
    assert np.isfinite(log_likelihood).all() and np.isfinite(gradient).all() and np.isfinite(w).all()
    assert np.isfinite(third).all() and (w >= 0).all()
    inverse = scipy.special.expit if link == "logit" else scipy.special.ndtr
    # the log-likelihood itself, where it does not underflow
    moderate = np.abs(eta) < 8
    expected = np.log(inverse((2 * label - 1) * eta[moderate]))  # symmetric inverse links: 1 - F(x) = F(-x)
    np.testing.assert_allclose(log_likelihood[moderate], expected, rtol=1e-9)

    def value(x):
        return bernoulli_terms(x, y, link)[0]

    def first(x):
        return bernoulli_terms(x, y, link)[1]

    def curvature(x):
        return bernoulli_terms(x, y, link)[2]

    inner = np.abs(eta) <= 8  # finite differences themselves lose their digits in the far tails
    np.testing.assert_allclose(gradient, _finite_difference(value, eta, 1e-5), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(w, -_finite_difference(first, eta, 1e-5), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(third[inner], -_finite_difference(curvature, eta, 1e-5)[inner], rtol=1e-5, atol=1e-9)


@pytest.mark.parametrize("link", ["logit", "probit"])
def test_the_pytensor_link_terms_equal_the_numpy_ones_with_finite_gradients_in_the_tails(link):
    """The PyMC models' label likelihood (PyTensor) and the point estimates' (NumPy) are the same function: equal
    values and first derivatives, elementwise, for both labels out to |eta| = 40."""
    import pytensor
    import pytensor.tensor as pt

    eta = np.tile([-40.0, -8.0, -1.3, -1.0, 0.0, 0.7, 5.0, 40.0], 2)
    y = np.repeat([0.0, 1.0], 8)
    variable = pt.vector("eta")
    log_likelihood = bernoulli_log_likelihood(variable, 2.0 * y - 1.0, link)
    function = pytensor.function([variable], [log_likelihood, pytensor.grad(log_likelihood, variable)])
    value, gradient = function(eta)
    expected_terms, expected_gradient, _ = bernoulli_terms(eta, y, link)
    assert np.isfinite(value) and np.isfinite(gradient).all()
    np.testing.assert_allclose(value, expected_terms.sum(), rtol=1e-12)
    # y - expit(eta) is 0 in NumPy where PyTensor keeps 4e-18 (eta = 40): equal to absolute round-off
    np.testing.assert_allclose(gradient, expected_gradient, rtol=1e-9, atol=1e-15)


def test_probit_link_average_is_the_exact_gaussian_integral_and_logit_matches_quadrature():
    mean, variance = np.array([-2.0, 0.3, 1.5]), np.array([0.5, 2.0, 0.1])
    draws = np.random.default_rng(0).standard_normal(400_000)
    for link, inverse in (("probit", scipy.special.ndtr), ("logit", scipy.special.expit)):
        monte_carlo = inverse(mean[:, None] + np.sqrt(variance)[:, None] * draws).mean(axis=1)
        np.testing.assert_allclose(link_average(mean, variance, link), monte_carlo, atol=3e-3)


def _gaussian_average_by_quad(mean: float, sd: float, inverse) -> float:
    """E[inverse(mean + sd z)], z ~ N(0, 1), by adaptive quadrature split at the link's transition z = -mean / sd."""

    def integrand(z):
        return inverse(mean + sd * z) * np.exp(-0.5 * z * z) / np.sqrt(2 * np.pi)

    transition = -mean / sd
    points = [transition] if abs(transition) < 12 else None  # N(0, 1) holds 1 - 4e-33 of its mass in [-12, 12]
    return scipy.integrate.quad(integrand, -12.0, 12.0, points=points, epsabs=1e-12, epsrel=1e-12, limit=200)[0]


@pytest.mark.parametrize("link", ["logit", "probit"])
def test_link_average_is_within_1e_6_of_adaptive_quadrature_at_any_mean_and_sd(link):
    """Issue 41: Gauss-Hermite alone erred by 2e-4 at s = 7 and 5e-2 at s = 120; every rule, both sides of the
    rules' borders (sd 0.5, 1, 2) and sds up to 1,000 against scipy.integrate.quad of the defining integral."""
    means = np.linspace(-50.0, 50.0, 21)
    sds = np.array([0.05, 0.5, 0.5001, 1.0, 1.0001, 2.0, 2.0001, 3.0, 7.0, 12.0, 120.0, 1000.0])
    inverse = scipy.special.expit if link == "logit" else scipy.special.ndtr
    mean, sd = (grid.ravel() for grid in np.meshgrid(means, sds))
    expected = [_gaussian_average_by_quad(m, s, inverse) for m, s in zip(mean, sd, strict=True)]
    np.testing.assert_allclose(link_average(mean, sd**2, link), expected, rtol=0, atol=1e-6)
    assert link_average(mean.reshape(12, 21), (sd**2).reshape(12, 21), link).shape == (12, 21)


def test_link_average_gives_the_issues_two_logit_cases():
    """Issue 41's latent Gaussians: seed004_gp unstandardised (s = 120, the model's own 0.4500 where 64 Gauss-Hermite
    nodes gave 0.49997) and synth far from the data (s = 6.9, 0.48932 where they gave 0.48954)."""
    mean, sd = np.array([-15.081084, -0.190903]), np.array([120.0, 6.9])
    average = link_average(mean, sd**2, "logit")
    np.testing.assert_allclose(average, [0.4500, 0.48932], rtol=0, atol=5e-7)
    expected = [_gaussian_average_by_quad(m, s, scipy.special.expit) for m, s in zip(mean, sd, strict=True)]
    np.testing.assert_allclose(average, expected, rtol=0, atol=1e-6)


def _logistic_problem(seed: int = 0):
    rng = np.random.default_rng(seed)
    design = np.column_stack([np.ones(200), rng.normal(size=(200, 3))])
    y = (rng.random(200) < scipy.special.expit(design @ np.array([0.5, 1.0, -2.0, 0.3]))).astype(float)
    penalty = np.array([0.0, 1.0, 1.0, 1.0])

    def objective(beta):  # the penalised log posterior of logistic regression (concave)
        return bernoulli_terms(design @ beta, y, "logit")[0].sum() - 0.5 * penalty @ beta**2

    def value(beta):
        return objective(beta), None

    def newton(beta, _):
        _, gradient, w = bernoulli_terms(design @ beta, y, "logit")
        gradient = design.T @ gradient - penalty * beta
        hessian = design.T @ (w[:, None] * design) + np.diag(penalty)
        return gradient, beta + np.linalg.solve(hessian, gradient), hessian

    return objective, value, newton


def test_the_newton_engine_reaches_scipys_optimum():
    objective, value, newton = _logistic_problem()
    result = newton_maximize(
        value, newton, np.zeros(4), gradient_tolerance=1e-10, max_iterations=50, what="the test MAP"
    )
    reference = scipy.optimize.minimize(
        lambda beta: -objective(beta), np.zeros(4), method="BFGS", options={"gtol": 1e-10}
    )
    np.testing.assert_allclose(result.point, reference.x, atol=1e-6)
    assert result.gradient_norm <= 1e-10 and result.objective >= -reference.fun - 1e-9
    assert result.iterations < 15  # quadratic convergence


def test_the_newton_engine_damps_a_step_that_overshoots_and_reports_non_convergence():
    """From a far start the full Newton step of a saturated logistic likelihood overshoots; halving rescues it."""
    objective, value, newton = _logistic_problem(1)
    far = np.array([30.0, -30.0, 30.0, -30.0])
    result = newton_maximize(value, newton, far, gradient_tolerance=1e-10, max_iterations=100, what="the test MAP")
    reference = newton_maximize(value, newton, np.zeros(4), gradient_tolerance=1e-10, max_iterations=100, what="x")
    np.testing.assert_allclose(result.point, reference.point, atol=1e-8)
    with pytest.raises(ConvergenceError, match=r"the test MAP did not converge in 1 Newton steps.*; try this"):
        newton_maximize(
            value, newton, far, gradient_tolerance=1e-10, max_iterations=1, what="the test MAP", hint="; try this"
        )


@pytest.mark.parametrize("at_round_off", ["stop", "raise"])
def test_the_newton_engine_at_round_off_stops_at_the_optimum_or_raises_as_declared(at_round_off):
    """A tolerance below round-off is never met: "stop" returns scipy's optimum with its gradient norm, "raise"
    raises; both find out in a few steps rather than running to max_iterations."""
    objective, value, newton = _logistic_problem()

    def solve():
        return newton_maximize(
            value,
            newton,
            np.zeros(4),
            gradient_tolerance=1e-300,
            max_iterations=100,
            what="the MAP",
            at_round_off=at_round_off,
        )

    if at_round_off == "raise":
        with pytest.raises(ConvergenceError, match=r"the MAP did not converge: it reached round-off after \d+ Newton"):
            solve()
        return
    result = solve()
    reference = scipy.optimize.minimize(
        lambda beta: -objective(beta), np.zeros(4), method="BFGS", options={"gtol": 1e-10}
    )
    np.testing.assert_allclose(result.point, reference.x, atol=1e-6)
    assert 0 < result.gradient_norm < 1e-9 and result.iterations < 20


@pytest.mark.parametrize("at_round_off", ["stop", "raise"])
def test_the_newton_engine_stays_put_when_no_step_gains(at_round_off):
    """When no halving of the step finds a non-decreasing objective (here NaN everywhere but the start, as an
    overflow would give), the engine keeps the current point with ITS state, then applies its round-off policy."""
    start = np.array([1.0, -2.0])

    def value(x):
        objective = -float(x @ x) if np.array_equal(x, start) else np.nan
        return objective, x.copy()  # the state records the point it belongs to

    def newton(x, state):
        return -2 * x, np.zeros_like(x), None

    def solve():
        return newton_maximize(
            value, newton, start, gradient_tolerance=1e-8, max_iterations=10, what="x", at_round_off=at_round_off
        )

    if at_round_off == "raise":
        with pytest.raises(ConvergenceError, match="x did not converge: it reached round-off after 1 Newton steps"):
            solve()
        return
    result = solve()
    np.testing.assert_array_equal(result.point, start)
    np.testing.assert_array_equal(result.state, start)
    assert result.objective == -5.0 and result.iterations == 1 and result.gradient_norm == np.linalg.norm(2 * start)


def test_the_newton_engine_names_a_bad_round_off_policy():
    _, value, newton = _logistic_problem()
    with pytest.raises(ValueError, match=r"at_round_off must be 'stop' or 'raise', got 'ignore'"):
        newton_maximize(
            value, newton, np.zeros(4), gradient_tolerance=1e-8, max_iterations=5, what="x", at_round_off="ignore"
        )


#: run in a fresh interpreter: importing the library loads neither numba nor the numba-dispatch modules that
#: register_numba_kernels imports; the first Op built registers the kernels, and the Op (value and gradient,
#: so both Ops) then compiles in NUMBA mode through them (object mode would warn: an error here), equal to
#: the Python perform path
_FIRST_USE = """
import sys, warnings
import numpy as np
import bayesclass, bayesclass.models
from bayesclass.models._latent_op import register_numba_kernels
numba_modules = [m for m in sys.modules if m == "numba" or m.startswith(("numba.", "pytensor.link.numba.dispatch",
                                                                        "pytensor.link.numba.cache"))]
assert not numba_modules, f"importing bayesclass imported {numba_modules[:5]} ({len(numba_modules)} modules)"
assert register_numba_kernels.cache_info().currsize == 0
model = bayesclass.LatentGaussianProcess(approximation="exact").build(bayesclass.load("seed004_gp", n=20))
assert register_numba_kernels.cache_info().currsize == 1 and "pytensor.link.numba.dispatch.basic" in sys.modules
import pytensor, pytensor.tensor as pt
logp = model.logp()
outputs = [logp, pt.concatenate([pt.flatten(g) for g in pytensor.grad(logp, model.value_vars)])]
with warnings.catch_warnings():
    warnings.filterwarnings("error", message=".*object mode.*")
    compiled = model.compile_fn(outputs, mode="NUMBA", point_fn=True)
reference = model.compile_fn(outputs, mode="FAST_COMPILE", point_fn=True)
rng = np.random.default_rng(2)
point = {name: value + rng.normal(scale=0.5, size=np.shape(value)) for name, value in model.initial_point().items()}
for value, expected in zip(compiled(point), reference(point)):
    np.testing.assert_allclose(value, expected, rtol=1e-9, atol=1e-9 * np.abs(expected).max())
print("ok")
"""

#: unpickling an Op in a fresh interpreter (a Dask worker receiving a graph) is a first use too
_UNPICKLE = """
import pickle, sys
from bayesclass.models._latent_op import register_numba_kernels
assert register_numba_kernels.cache_info().currsize == 0
ops = pickle.loads(sys.stdin.buffer.read())
assert register_numba_kernels.cache_info().currsize == 1
from pytensor.link.numba.dispatch.basic import numba_funcify
from pytensor.graph.op import Op
assert all(numba_funcify.dispatch(type(op)) is not numba_funcify.dispatch(Op) for op in ops)
assert (ops[0].kernel, ops[0].jitter, ops[1].kernel) == ("matern52", 1e-6, "exp_quad")
print("ok")
"""


def test_the_gp_numba_kernels_register_at_first_use_not_at_import():
    completed = subprocess.run([sys.executable, "-c", _FIRST_USE], capture_output=True, text=True, timeout=300)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "ok"


def test_an_unpickled_gp_op_registers_the_numba_kernels():
    import pickle

    from bayesclass.models._latent_op import WhitenedLatent, WhitenedLatentGradient

    ops = pickle.dumps([WhitenedLatent("matern52", 1e-6), WhitenedLatentGradient("exp_quad")])
    completed = subprocess.run([sys.executable, "-c", _UNPICKLE], input=ops, capture_output=True, timeout=300)
    assert completed.returncode == 0, completed.stderr.decode()
    assert completed.stdout.decode().strip() == "ok"
