"""ONE damped-Newton engine, and the Laplace approximations of the latent GP built on it.

:func:`newton_maximize` is the only Newton solver of the suite: logistic regression's
MLE/MAP (``models/logistic.py``), the function-space Laplace mode of the exact latent
GP (:func:`laplace_fit`, GPML Algorithm 3.1) and the weight-space Laplace mode of its
Hilbert-space approximation (:func:`weight_laplace_fit`) all call it, with

- one step rule: from the current point towards the full Newton point, the step is
  halved (at most 50 times) until the objective does not decrease, which makes
  Newton's method safe from any start on these concave objectives;
- one stopping rule: the gradient norm is at most ``gradient_tolerance``, or the
  iteration has reached round-off (a step that gains nothing, relative 1e-14, and moves
  the point by less than 1e-6 of its scale). What round-off above the tolerance means
  is the caller's declared policy (``at_round_off``): the Laplace fits, whose 1e-12 lies
  below the round-off of larger problems, ``"stop"`` there; logistic regression, whose
  1e-8 is a guarantee, ``"raise"`` a :class:`ConvergenceError` instead of returning a
  point that misses it.

The Laplace pieces: :func:`laplace_predict` (GPML Algorithm 3.2) and
:func:`laplace_evidence_gradient` (GPML Algorithm 5.1, implicit term included).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from bayesclass._lazy import lazy_import
from bayesclass.models._links import Link, bernoulli_terms, bernoulli_third_derivative, check_link, link_average
from bayesclass.models.base import ConvergenceError

if TYPE_CHECKING:
    import scipy
else:
    scipy = lazy_import("scipy")  # SciPy loads its submodules (scipy.special ...) on first use

__all__ = [
    "LaplaceFit",
    "NewtonResult",
    "RoundOffPolicy",
    "WeightLaplaceFit",
    "laplace_covariance",
    "laplace_evidence_gradient",
    "laplace_fit",
    "laplace_predict",
    "newton_maximize",
    "weight_laplace_fit",
]

#: halvings of a Newton step before the engine gives up on finding a non-decreasing point
_MAX_HALVINGS = 50

RoundOffPolicy = Literal["stop", "raise"]


@dataclass(frozen=True)
class NewtonResult:
    """Where :func:`newton_maximize` stopped.

    ``state`` is what ``value`` returned there and ``derivatives`` what ``newton``
    returned there (e.g. the Hessian), so callers need not recompute them.
    """

    point: np.ndarray
    objective: float
    state: Any
    derivatives: Any
    gradient_norm: float
    iterations: int


def newton_maximize(
    value: Callable[[np.ndarray], tuple[float, Any]],
    newton: Callable[[np.ndarray, Any], tuple[np.ndarray, np.ndarray, Any]],
    start: np.ndarray,
    *,
    gradient_tolerance: float,
    max_iterations: int,
    what: str,
    hint: str = "",
    at_round_off: RoundOffPolicy = "stop",
) -> NewtonResult:
    """Maximise a concave objective by damped Newton steps (the module docstring's step and stopping rules).

    Parameters
    ----------
    value : callable
        ``value(x) -> (objective, state)``; ``state`` is whatever ``newton`` needs at ``x``.
    newton : callable
        ``newton(x, state) -> (gradient, newton_point, derivatives)``: the gradient of the
        objective at ``x``, the full Newton iterate ``x + H^-1 g`` and anything worth keeping.
    start : array
        The starting point.
    gradient_tolerance : float
        Stop when the Euclidean norm of the gradient is at most this.
    max_iterations : int
        Newton steps before a :class:`ConvergenceError`.
    what, hint : str
        What is being solved (``"the MAP"``), and advice appended to the error.
    at_round_off : {"stop", "raise"}
        When the iteration reaches round-off with the gradient norm still above
        ``gradient_tolerance``: return that point (``"stop"``), or raise (``"raise"``).

    Raises
    ------
    ConvergenceError
        After ``max_iterations`` steps without meeting the stopping rule, or at
        round-off above the tolerance when ``at_round_off="raise"``.
    """
    if at_round_off not in ("stop", "raise"):
        raise ValueError(f"at_round_off must be 'stop' or 'raise', got {at_round_off!r}")
    point = np.array(start, dtype=float)
    objective, state = value(point)
    gradient_norm = np.inf
    for iteration in range(max_iterations + 1):
        gradient, target, derivatives = newton(point, state)
        gradient_norm = float(np.linalg.norm(gradient))
        if gradient_norm <= gradient_tolerance or iteration == max_iterations:
            break
        candidate = target
        for _ in range(_MAX_HALVINGS):
            new_objective, new_state = value(candidate)
            if new_objective >= objective - 1e-12 * abs(objective):
                break
            candidate = 0.5 * (point + candidate)
        else:  # no non-decreasing point along the Newton direction: stay (round-off, or a non-finite objective)
            candidate, new_objective, new_state = point, objective, state
        step = float(np.abs(candidate - point).max())
        scale = max(1.0, float(np.abs(candidate).max()))
        plateau = new_objective - objective <= 1e-14 * abs(objective) and step < 1e-6 * scale
        point, objective, state = candidate, new_objective, new_state
        if plateau:  # round-off: a further step cannot improve the point
            gradient, _, derivatives = newton(point, state)
            gradient_norm = float(np.linalg.norm(gradient))
            if gradient_norm > gradient_tolerance and at_round_off == "raise":
                raise ConvergenceError(
                    f"{what} did not converge: it reached round-off after {iteration + 1} Newton steps with the "
                    f"gradient norm {gradient_norm:.3g} > {gradient_tolerance:g}{hint}"
                )
            return NewtonResult(point, float(objective), state, derivatives, gradient_norm, iteration + 1)
    if gradient_norm > gradient_tolerance:
        raise ConvergenceError(
            f"{what} did not converge in {max_iterations} Newton steps (gradient norm {gradient_norm:.3g} > "
            f"{gradient_tolerance:g}){hint}"
        )
    return NewtonResult(point, float(objective), state, derivatives, gradient_norm, iteration)


def _check_labels(y: np.ndarray, link: object) -> np.ndarray:
    check_link(link)
    y = np.asarray(y, dtype=float)
    if not np.isin(y, (0.0, 1.0)).all():
        raise ValueError("y must hold the binary labels 0 and 1 (the GP classifier is binary)")
    return y


# -- function space: the exact latent GP (GPML Algorithm 3.1) -------------------------------------------


@dataclass(frozen=True)
class LaplaceFit:
    """The Laplace approximation at the mode (GPML Algorithm 3.1): what prediction needs."""

    x: np.ndarray
    y: np.ndarray
    link: Link
    mode: np.ndarray  # z-hat
    gradient: np.ndarray  # d log p(y | z) / dz at the mode
    sqrt_w: np.ndarray
    cholesky_b: np.ndarray  # chol(I + W^1/2 K W^1/2)
    log_marginal_likelihood: float  # Laplace approximation of log p(y | theta)
    iterations: int


def _b_factor(covariance: np.ndarray, sqrt_w: np.ndarray) -> np.ndarray:
    """The lower Cholesky factor of B = I + W^1/2 K W^1/2."""
    b = np.eye(sqrt_w.size) + sqrt_w[:, np.newaxis] * covariance * sqrt_w
    return scipy.linalg.cholesky(b, lower=True, check_finite=False)


def laplace_fit(
    x: np.ndarray,
    y: np.ndarray,
    covariance: np.ndarray,
    *,
    link: Link = "logit",
    tol: float = 1e-12,
    max_iter: int = 100,
    start: LaplaceFit | None = None,
) -> LaplaceFit:
    r"""Mode of p(z | y) and the Gaussian approximation around it, by Newton's method (GPML Alg. 3.1).

    Parameters
    ----------
    x : array (n, d)
        Training inputs (kept for prediction).
    y : array (n,) of 0/1
    covariance : array (n, n)
        K(x, x) for the chosen hyperparameters.
    link : {"logit", "probit"}
    tol : float
        Gradient tolerance of :func:`newton_maximize` for the gradient
        ``d Psi / dz = grad log p(y | z) - a`` of the objective in the latent values.
    start : LaplaceFit, optional
        The fit at nearby hyperparameters: Newton starts from z = K a with its
        a = grad log p(y | z-hat) (a warm start) when that beats z = 0 (the default start).

    Notes
    -----
    Newton runs over a, with z = K a and the objective
    :math:`\Psi = \log p(\mathbf y \mid \mathbf z) - \tfrac12 \mathbf a^\top \mathbf z`
    (the step of GPML Algorithm 3.1 is the full Newton point). The factor of :math:`B`
    returned is computed at the mode.
    """
    y = _check_labels(y, link)

    def value(a: np.ndarray) -> tuple[float, tuple[np.ndarray, ...]]:
        z = covariance @ a
        terms = bernoulli_terms(z, y, link)
        return float(terms[0].sum() - 0.5 * a @ z), (z, *terms)

    def newton(a: np.ndarray, state: tuple[np.ndarray, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        z, _, gradient, w = state
        sqrt_w = np.sqrt(w)
        cholesky_b = _b_factor(covariance, sqrt_w)
        b = w * z + gradient
        target = b - sqrt_w * scipy.linalg.cho_solve((cholesky_b, True), sqrt_w * (covariance @ b), check_finite=False)
        return gradient - a, target, cholesky_b

    origin = np.zeros(y.size)
    if start is not None and value(start.gradient)[0] > value(origin)[0]:
        origin = start.gradient  # the warm start, unless z = 0 is better (far from it the likelihood saturates)
    result = newton_maximize(
        value,
        newton,
        origin,
        gradient_tolerance=tol,
        max_iterations=max_iter,
        what="the Laplace mode",
        hint="; check the kernel hyperparameters or raise max_iter",
    )
    z, log_likelihood, gradient, w = result.state
    cholesky_b = result.derivatives  # B's factor at the mode's own W
    sqrt_w = np.sqrt(w)
    evidence = -0.5 * gradient @ z + log_likelihood.sum() - np.log(np.diag(cholesky_b)).sum()  # at the mode a = grad
    return LaplaceFit(
        x=np.asarray(x, dtype=float),
        y=y,
        link=link,
        mode=z,
        gradient=gradient,
        sqrt_w=sqrt_w,
        cholesky_b=cholesky_b,
        log_marginal_likelihood=float(evidence),
        iterations=result.iterations,
    )


def laplace_predict(
    fit: LaplaceFit, cross_covariance: np.ndarray, prior_variance: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Latent mean, latent variance and P(y* = 1) at new inputs (GPML Algorithm 3.2).

    Parameters
    ----------
    cross_covariance : array (n_train, n_new)
        K(x_train, x_new).
    prior_variance : array (n_new,)
        k(x_new, x_new).
    """
    mean = cross_covariance.T @ fit.gradient
    v = scipy.linalg.solve_triangular(fit.cholesky_b, fit.sqrt_w[:, np.newaxis] * cross_covariance, lower=True)
    variance = np.maximum(prior_variance - (v**2).sum(axis=0), 0.0)
    return mean, variance, link_average(mean, variance, fit.link)


def laplace_covariance(covariance: np.ndarray, sqrt_w: np.ndarray) -> np.ndarray:
    r"""The Laplace covariance :math:`(K^{-1} + W)^{-1}` of the latent values at the training inputs.

    Computed without :math:`K^{-1}` as :math:`K - V^\top V`, :math:`V = L^{-1} W^{1/2} K`,
    :math:`L L^\top = B = I + W^{1/2} K W^{1/2}` (GPML section 3.4.3; B is well conditioned where K is not).

    Parameters
    ----------
    covariance : array (n, n)
        K(x, x) at the hyperparameters of the fit.
    sqrt_w : array (n,)
        :math:`W^{1/2}` at the mode (``LaplaceFit.sqrt_w``).

    Returns
    -------
    numpy.ndarray of shape (n, n)
        The covariance, symmetrised.
    """
    v = scipy.linalg.solve_triangular(
        _b_factor(covariance, sqrt_w), sqrt_w[:, np.newaxis] * covariance, lower=True, check_finite=False
    )
    result = covariance - v.T @ v
    return 0.5 * (result + result.T)


def laplace_evidence_gradient(fit: LaplaceFit, covariance: np.ndarray, gradients: np.ndarray) -> np.ndarray:
    """D log q(y | theta) / d theta_j for the Laplace evidence of ``fit`` (GPML Algorithm 5.1).

    ``gradients`` holds dK/d theta_j, shape (p, n, n); the implicit dependence of the
    mode on theta (lines 9-14) is included. B^-1 comes from its Cholesky factor (LAPACK potri) and the
    latent variances from one matrix product (scikit-learn solves with n right-hand sides twice and
    runs a general LU solve for line 8).
    """
    sqrt_w, factor = fit.sqrt_w, fit.cholesky_b
    b_inverse, info = scipy.linalg.lapack.dpotri(factor, lower=1)  # B^-1 from its factor (lower triangle)
    if info != 0:
        raise np.linalg.LinAlgError(f"B = I + W^1/2 K W^1/2 could not be inverted (LAPACK info {info})")
    b_inverse = np.tril(b_inverse) + np.tril(b_inverse, -1).T
    r = sqrt_w[:, np.newaxis] * b_inverse * sqrt_w  # W^1/2 B^-1 W^1/2
    # d log q / d z-hat_i = +1/2 Var_i d^3 log p / dz_i^3, Var = diag(K - K R K) the Laplace latent variance (GPML
    # prints eq. 5.23 / Algorithm 5.1 line 9 with a minus sign on the third derivative, which is the derivative of
    # -W; scikit-learn has the same sign as here)
    variance = np.diag(covariance) - np.einsum("ij,ij->i", covariance @ r, covariance)
    s2 = 0.5 * variance * bernoulli_third_derivative(fit.mode, fit.y, fit.link)
    a = fit.gradient
    explicit = 0.5 * np.einsum("i,pij,j->p", a, gradients, a) - 0.5 * np.einsum("ij,pij->p", r, gradients)
    b = gradients @ a  # (p, n)
    implicit = (b - (b @ r) @ covariance) @ s2  # s3 = b - K R b, with K and R symmetric
    return explicit + implicit


# -- weight space: the HSGP approximation --------------------------------------------------------------


@dataclass(frozen=True)
class WeightLaplaceFit:
    """The Laplace approximation of a Gaussian-weight model z = Z w, w ~ N(0, I) (the HSGP comparator)."""

    mode: np.ndarray  # w-hat, whitened weights
    covariance: np.ndarray  # (Z^T W Z + I)^-1
    log_marginal_likelihood: float
    iterations: int


def weight_laplace_fit(
    features: np.ndarray,
    y: np.ndarray,
    *,
    link: Link,
    tol: float = 1e-12,
    max_iter: int = 100,
    start: np.ndarray | None = None,
) -> WeightLaplaceFit:
    """Mode and Gaussian approximation of p(w | y) for z = features @ w, w ~ N(0, I), by Newton's method.

    The weight-space form of :func:`laplace_fit` (same likelihood terms, same engine): each
    step solves (Z^T W Z + I) w = Z^T (W z + grad), O(n p^2) for p weights; the Laplace
    evidence is sum log p(y | z) - |w|^2 / 2 - log det(Z^T W Z + I) / 2.
    """
    y = _check_labels(y, link)
    eye = np.eye(features.shape[1])

    def value(w: np.ndarray) -> tuple[float, tuple[np.ndarray, ...]]:
        z = features @ w
        terms = bernoulli_terms(z, y, link)
        return float(terms[0].sum() - 0.5 * w @ w), (z, *terms)

    def newton(w: np.ndarray, state: tuple[np.ndarray, ...]) -> tuple[np.ndarray, np.ndarray, tuple]:
        z, _, gradient, weight = state
        factor = scipy.linalg.cho_factor(
            features.T @ (weight[:, np.newaxis] * features) + eye, lower=True, check_finite=False
        )
        target = scipy.linalg.cho_solve(factor, features.T @ (weight * z + gradient), check_finite=False)
        return features.T @ gradient - w, target, factor

    result = newton_maximize(
        value,
        newton,
        np.zeros(features.shape[1]) if start is None else start,
        gradient_tolerance=tol,
        max_iterations=max_iter,
        what="the Laplace mode of the HSGP weights",
    )
    w, factor = result.point, result.derivatives
    log_likelihood = result.state[1]
    evidence = log_likelihood.sum() - 0.5 * w @ w - np.log(np.diag(factor[0])).sum()
    return WeightLaplaceFit(
        mode=w,
        covariance=scipy.linalg.cho_solve(factor, eye, check_finite=False),
        log_marginal_likelihood=float(evidence),
        iterations=result.iterations,
    )
