r"""Latent Gaussian-process classification (seed 004 "Gaussian Process Models for Classification").

Registered as ``gp`` (CLI ``bayesclass fit --model gp --link logit|probit``); methods
``nuts`` (MCMC over the latents and the hyperparameters) and ``map`` (the Laplace
approximation with type-II maximum-likelihood hyperparameters, the "closed-form" side).
Binary labels; inputs should be standardised (``standardize=True``, ``--standardize``),
since the priors are stated in standard deviations of the inputs.

Model
-----
.. math::

    f \sim GP(0, K_\theta), \qquad z_i = f(x_i), \qquad
    y_i \mid z_i \sim \text{Bernoulli}(g^{-1}(z_i)),

with :math:`g^{-1}` the logistic function (``link="logit"``) or the normal CDF
:math:`\Phi` (``link="probit"``) and the covariance function of seed 004's
illustration, a constant plus a squared exponential with one lengthscale per input
(ARD),

.. math::

    K(x, x') = c^2 + a^2 \exp\Big(-\tfrac12 \sum_j (x_j - x'_j)^2 / \ell_j^2\Big)

(seed 004: :math:`0.5^2 + 3^2 \exp(-5^2 (x - x')^2)`, i.e. :math:`c = 0.5`, :math:`a = 3`,
:math:`\ell = 1/\sqrt{50}`), or a Matérn 5/2 term in place of the squared exponential.

Laplace approximation (seed 004 "Approximate their posterior distribution by a Gaussian")
---------------------------------------------------------------------------------------------
For fixed :math:`\theta` the latent posterior :math:`p(\mathbf z \mid \mathbf y)` is
replaced by :math:`\mathcal N(\hat{\mathbf z}, (K^{-1} + W)^{-1})` at its mode
:math:`\hat{\mathbf z}`, with :math:`W = -\nabla\nabla \log p(\mathbf y \mid \hat{\mathbf z})`
(diagonal); both likelihoods are log-concave, so Newton's method (Rasmussen & Williams,
*GPML*, Algorithm 3.1, in the numerically stable form with
:math:`B = I + W^{1/2} K W^{1/2}`) converges to the unique mode. At a new input the latent
is :math:`\mathcal N(\mathbf k_*^\top \nabla \log p(\mathbf y \mid \hat{\mathbf z}),\;
k_{**} - \mathbf v^\top \mathbf v)`, :math:`\mathbf v = L^{-1} W^{1/2} \mathbf k_*` (Algorithm 3.2),
and the class probability averages the link over it:
:math:`\Phi(\mu / \sqrt{1 + s^2})` exactly for probit; for logit
:math:`\int \sigma(z) \mathcal N(z \mid \mu, s^2) dz` by 64-point Gauss-Hermite quadrature
(scikit-learn instead approximates the sigmoid by five error functions, Williams &
Barber 1998, which differs by < 1e-3).

Type-II maximum likelihood maximises that Laplace evidence over
:math:`\log\theta` by L-BFGS with its exact gradient (GPML Algorithm 5.1, including
the change of the mode with :math:`\theta`; Newton warm-started from the previous mode).

Sampling (seed 004 "Implementing the model with Latent Variables")
-----------------------------------------------------------------------
NUTS samples :math:`\theta = (\ell, a, c)` and the whitened latents
:math:`\mathbf u \sim \mathcal N(0, I)`, :math:`\mathbf z = L_\theta \mathbf u`,
:math:`L_\theta L_\theta^\top = K_\theta(X, X)` (non-centred: the centred form has a funnel
between :math:`\theta` and :math:`\mathbf z`). Every gradient needs :math:`L_\theta` and the
derivative of :math:`L_\theta \mathbf u` with respect to :math:`\theta`; :class:`WhitenedLatent`
builds :math:`K_\theta`, factors it and differentiates in one numba kernel: one triangular inverse
and one matrix product, with the amplitude and constant gradients in O(n^2) from the structure of
K (see the comment above the Op), instead of PyTensor's generic Cholesky gradient (two n x n
triangular solves and a dense product) and a dozen n x n temporaries for the kernel. The kernel
constant :math:`c^2` stays inside K (an explicit offset :math:`c\,b`, :math:`b \sim \mathcal N(0, 1)`,
formed a banana with :math:`c` on which NUTS diverged). Priors, for standardised inputs (:class:`GaussianProcessPrior`):
:math:`\ell_j \sim \text{InverseGamma}(3, 2)`, :math:`a \sim \text{HalfNormal}(3)`,
:math:`c \sim \text{HalfNormal}(1)`.

Hilbert-space approximation (HSGP)
----------------------------------
Above :data:`EXACT_UP_TO` rows (or with ``approximation="hsgp"``) the stationary term is
replaced by its reduced-rank expansion on the Dirichlet Laplacian eigenfunctions of the box
:math:`[-L, L]^d` (Solin & Saerkkae 2020; Riutort-Mayol et al. 2023; PyMC's ``pm.gp.HSGP``,
whose eigenvalues and spectral densities are used):
:math:`f(x) \approx \beta_0 + \sum_{j=1}^{m^d} \beta_j \phi_j(x)`,
:math:`\beta_j \sim \mathcal N(0, a^2 S_\ell(\omega_j))`, :math:`\beta_0 \sim \mathcal N(0, c^2)`.
A gradient costs O(n m^d) instead of O(n^3). The basis is data of the compiled model (computed
once in NumPy, equal to ``pm.gp.hsgp_approx.calc_eigenvectors``), so a refit with new rows
reuses the compiled sampler. The default m = 30 for one input (15 per input for two, 8 for three)
and L = 1.5 times the half-range
resolve lengthscales down to about 0.2 standardised units, where the lengthscale prior has
little mass (Riutort-Mayol et al.'s rule m >= 1.75 c / (l / S) gives 23 for l = 0.2, S = 1.7).
"""


from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

import numpy as np
import pymc as pm
import pytensor.tensor as pt
import scipy.linalg
import scipy.linalg.lapack
import scipy.optimize
import scipy.special
import xarray as xr
from pytensor.gradient import DisconnectedType
from pytensor.graph.basic import Apply
from pytensor.graph.op import Op

from bayesclass.data import Dataset
from bayesclass.models.base import (
    ClassifierModel,
    ConvergenceError,
    check_positive,
    features_as_dataarray,
)

__all__ = [
    "EXACT_UP_TO",
    "HSGP_MAX_BASIS",
    "Approximation",
    "GaussianProcessPrior",
    "KernelName",
    "LaplaceFit",
    "LatentGaussianProcess",
    "Link",
    "WeightLaplaceFit",
    "hsgp_basis",
    "hsgp_frequencies",
    "kernel_gradients",
    "kernel_matrix",
    "laplace_evidence_gradient",
    "laplace_fit",
    "laplace_predict",
    "spectral_density",
    "weight_laplace_fit",
]  # fmt: skip

Link = Literal["logit", "probit"]
KernelName = Literal["exp_quad", "matern52"]
Approximation = Literal["auto", "exact", "hsgp"]
LatentGraph = Literal["fused", "pytensor"]

#: ``approximation="auto"`` uses the exact latent GP up to this many training rows, HSGP above
EXACT_UP_TO = 500
#: the most HSGP basis functions (hsgp_basis ** n_inputs) a model may have
HSGP_MAX_BASIS = 2500

#: Gauss-Hermite nodes and weights for E[sigmoid(z)], z ~ N(mu, s^2)
_HERMITE_NODES, _HERMITE_WEIGHTS = np.polynomial.hermite.hermgauss(64)


def kernel_matrix(
    x1: np.ndarray,
    x2: np.ndarray,
    *,
    lengthscale: float | np.ndarray,
    amplitude: float,
    constant: float = 0.0,
    kernel: KernelName = "exp_quad",
) -> np.ndarray:
    """K(x1, x2) = constant^2 + amplitude^2 k(r), r the ARD-scaled distance (module docstring).

    Parameters
    ----------
    x1, x2 : array of shape (n1, d), (n2, d)
    lengthscale : float or array of shape (d,)
        One lengthscale per input dimension (ARD) or one for all.
    amplitude, constant : float
        Standard deviations of the stationary term and of the constant term.
    kernel : {"exp_quad", "matern52"}
        ``exp(-r^2 / 2)`` or ``(1 + sqrt5 r + 5 r^2 / 3) exp(-sqrt5 r)``.
    """
    scale = _checked_lengthscale(lengthscale, np.shape(x1)[1], kernel)
    a, b = np.asarray(x1, dtype=float) / scale, np.asarray(x2, dtype=float) / scale
    squared = np.maximum((a**2).sum(1)[:, np.newaxis] + (b**2).sum(1)[np.newaxis, :] - 2 * a @ b.T, 0.0)
    if kernel == "exp_quad":
        stationary = np.exp(-0.5 * squared)
    else:
        r = np.sqrt(5.0 * squared)
        stationary = (1.0 + r + r**2 / 3.0) * np.exp(-r)
    return constant**2 + amplitude**2 * stationary


def _checked_lengthscale(lengthscale, n_inputs: int, kernel: str) -> np.ndarray:
    """The lengthscales broadcast to (n_inputs,), or a ValueError for a bad kernel name or lengthscale."""
    if kernel not in ("exp_quad", "matern52"):
        raise ValueError(f"kernel must be 'exp_quad' or 'matern52', got {kernel!r}")
    scale = np.broadcast_to(np.asarray(lengthscale, dtype=float), (n_inputs,))
    if not (np.all(np.isfinite(scale)) and np.all(scale > 0)):
        raise ValueError(f"lengthscale must be positive and finite, got {lengthscale!r}")
    return scale


def _likelihood_terms(z: np.ndarray, y: np.ndarray, link: Link) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(log p(y_i | z_i), d/dz, W = -d2/dz2) elementwise; y in {0, 1}."""
    sign = 2.0 * y - 1.0
    if link == "logit":
        proba = scipy.special.expit(z)
        return -np.logaddexp(0.0, -sign * z), y - proba, proba * (1.0 - proba)
    t = sign * z
    log_cdf = scipy.special.log_ndtr(t)
    ratio = np.exp(-0.5 * t**2 - 0.5 * np.log(2 * np.pi) - log_cdf)  # phi(t) / Phi(t), stable for t << 0
    return log_cdf, sign * ratio, ratio**2 + t * ratio


def _damped_newton_step(evaluate, current: np.ndarray, proposed: np.ndarray, objective: float):
    """Halve the Newton step from ``current`` towards ``proposed`` until the objective does not decrease
    (at most 40 times); ``evaluate(candidate) -> (objective, extras)``. Returns (candidate, objective, extras)."""
    for _ in range(40):
        new_objective, extras = evaluate(proposed)
        if new_objective >= objective - 1e-12 * abs(objective):
            break
        proposed = 0.5 * (current + proposed)
    return proposed, new_objective, extras


def _newton_converged(new: np.ndarray, old: np.ndarray, new_objective: float, objective: float, tol: float) -> bool:
    """A step below ``tol`` times max(1, max |new|), or a round-off plateau (no gain, step below 1e-6 of the scale)."""
    step = np.abs(new - old).max()
    scale = max(1.0, np.abs(new).max())
    return step < tol * scale or (new_objective - objective <= 1e-14 * abs(objective) and step < 1e-6 * scale)


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


def laplace_fit(
    x: np.ndarray,
    y: np.ndarray,
    covariance: np.ndarray,
    *,
    link: Link = "logit",
    tol: float = 1e-10,
    max_iter: int = 100,
    start: LaplaceFit | None = None,
) -> LaplaceFit:
    """Mode of p(z | y) and the Gaussian approximation around it, by Newton's method (GPML Alg. 3.1).

    Parameters
    ----------
    x : array (n, d)
        Training inputs (kept for prediction).
    y : array (n,) of 0/1
    covariance : array (n, n)
        K(x, x) for the chosen hyperparameters.
    link : {"logit", "probit"}
    tol : float
        Stop when the largest change of the latent mode is below ``tol`` times max(1, max |z|)
        (or, at round-off, when a step no longer raises the objective).
    start : LaplaceFit, optional
        The fit at nearby hyperparameters: Newton starts from z = K a with its
        a = grad log p(y | z-hat) (a warm start) when that beats z = 0 (the default start).

    Notes
    -----
    Each step is damped (halved until the objective
    :math:`\\Psi = \\log p(\\mathbf y \\mid \\mathbf z) - \\tfrac12 \\mathbf a^\\top \\mathbf z`
    does not decrease), which makes Newton's method safe from any start. The returned
    factor of :math:`B` is the one of the last step (its W differs from the mode's by
    O(tol)) is recomputed at the mode.
    """
    if link not in ("logit", "probit"):
        raise ValueError(f"link must be 'logit' or 'probit', got {link!r}")
    y = np.asarray(y, dtype=float)
    if not np.isin(y, (0.0, 1.0)).all():
        raise ValueError("y must hold the binary labels 0 and 1 (the GP classifier is binary)")
    n = y.size
    a = np.zeros(n)
    z = np.zeros(n)
    log_likelihood, gradient, w = _likelihood_terms(z, y, link)
    objective = log_likelihood.sum()
    if start is not None:  # the warm start, unless z = 0 is better (far from it the likelihood saturates, W ~ 0)
        warm_a = start.gradient
        warm_z = covariance @ warm_a
        warm_terms = _likelihood_terms(warm_z, y, link)
        warm_objective = warm_terms[0].sum() - 0.5 * warm_a @ warm_z
        if warm_objective > objective:
            a, z, objective = warm_a.copy(), warm_z, warm_objective
            log_likelihood, gradient, w = warm_terms
    eye = np.eye(n)
    for iterations in range(1, max_iter + 1):  # noqa: B007 (returned)  Newton iterations, vectorised over observations
        sqrt_w = np.sqrt(w)
        cholesky_b = scipy.linalg.cholesky(eye + sqrt_w[:, np.newaxis] * covariance * sqrt_w, lower=True, check_finite=False)
        b = w * z + gradient
        proposed = b - sqrt_w * scipy.linalg.cho_solve((cholesky_b, True), sqrt_w * (covariance @ b), check_finite=False)

        def evaluate(candidate):
            latent = covariance @ candidate
            terms = _likelihood_terms(latent, y, link)
            return terms[0].sum() - 0.5 * candidate @ latent, (latent, *terms)

        new_a, new_objective, (new_z, log_likelihood, gradient, w) = _damped_newton_step(evaluate, a, proposed, objective)
        done, step = _newton_converged(new_z, z, new_objective, objective, tol), np.abs(new_z - z).max()
        a, z, objective = new_a, new_z, new_objective
        if done:
            break
    else:
        raise ConvergenceError(
            f"the Laplace mode did not converge in {max_iter} Newton steps (last step {step:.3g}); "
            "check the kernel hyperparameters or raise max_iter"
        )
    sqrt_w = np.sqrt(w)  # B's factor at the mode's own W (the last step's differs by O(step))
    cholesky_b = scipy.linalg.cholesky(eye + sqrt_w[:, np.newaxis] * covariance * sqrt_w, lower=True, check_finite=False)
    evidence = -0.5 * gradient @ z + log_likelihood.sum() - np.log(np.diag(cholesky_b)).sum()  # at the mode a = grad
    return LaplaceFit(
        x=np.asarray(x, dtype=float), y=y, link=link, mode=z, gradient=gradient, sqrt_w=sqrt_w,
        cholesky_b=cholesky_b, log_marginal_likelihood=float(evidence), iterations=iterations,
    )  # fmt: skip


def laplace_predict(fit: LaplaceFit, cross_covariance: np.ndarray, prior_variance: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
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
    return mean, variance, _link_average(mean, variance, fit.link)


def _third_derivative(z: np.ndarray, y: np.ndarray, link: Link) -> np.ndarray:
    """d^3 log p(y_i | z_i) / dz_i^3 elementwise (the derivative of -W, GPML Algorithm 5.1 line 9)."""
    if link == "logit":
        proba = scipy.special.expit(z)
        return -proba * (1.0 - proba) * (1.0 - 2.0 * proba)
    sign = 2.0 * y - 1.0
    t = sign * z
    ratio = np.exp(-0.5 * t**2 - 0.5 * np.log(2 * np.pi) - scipy.special.log_ndtr(t))
    return sign * ratio * ((t + ratio) * (t + 2.0 * ratio) - 1.0)


def kernel_gradients(
    x: np.ndarray, *, lengthscale: np.ndarray, amplitude: float, constant: float, kernel: KernelName = "exp_quad", jitter: float = 0.0
) -> tuple[np.ndarray, np.ndarray]:
    """K(x, x) + jitter a^2 I and its derivatives with respect to (log l_1 .. log l_d, log a, log c).

    Returns
    -------
    covariance : array (n, n)
    gradients : array (d + 2, n, n)
    """
    x = np.asarray(x, dtype=float)
    scale = _checked_lengthscale(lengthscale, x.shape[1], kernel)
    n = x.shape[0]
    scaled_differences = (x[:, np.newaxis, :] - x[np.newaxis, :, :]) ** 2 / scale**2  # (n, n, d)
    squared = scaled_differences.sum(axis=-1)
    if kernel == "exp_quad":
        stationary = np.exp(-0.5 * squared)
        radial = stationary  # d k / d log l_j = radial * (x_j - x'_j)^2 / l_j^2
    else:
        r = np.sqrt(5.0 * squared)
        decay = np.exp(-r)
        stationary = (1.0 + r + r**2 / 3.0) * decay
        radial = 5.0 / 3.0 * (1.0 + r) * decay
    eye = np.eye(n)
    covariance = constant**2 + amplitude**2 * (stationary + jitter * eye)
    gradients = np.empty((x.shape[1] + 2, n, n))
    gradients[: x.shape[1]] = amplitude**2 * np.moveaxis(radial[..., np.newaxis] * scaled_differences, -1, 0)
    gradients[-2] = 2.0 * amplitude**2 * (stationary + jitter * eye)
    gradients[-1] = 2.0 * constant**2 * np.ones((n, n))
    return covariance, gradients


def laplace_evidence_gradient(fit: LaplaceFit, covariance: np.ndarray, gradients: np.ndarray) -> np.ndarray:
    """d log q(y | theta) / d theta_j for the Laplace evidence of ``fit`` (GPML Algorithm 5.1).

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
    s2 = 0.5 * variance * _third_derivative(fit.mode, fit.y, fit.link)
    a = fit.gradient
    explicit = 0.5 * np.einsum("i,pij,j->p", a, gradients, a) - 0.5 * np.einsum("ij,pij->p", r, gradients)
    b = gradients @ a  # (p, n)
    implicit = (b - (b @ r) @ covariance) @ s2  # s3 = b - K R b, with K and R symmetric
    return explicit + implicit


# -- Hilbert-space approximation (HSGP; Solin & Saerkkae 2020, Riutort-Mayol et al. 2023) ----------


def hsgp_frequencies(half_width: np.ndarray, m: int) -> np.ndarray:
    """Square roots of the Laplacian's Dirichlet eigenvalues on the box [-L, L]^d, shape (m^d, d), via PyMC."""
    half_width = np.asarray(half_width, dtype=float)
    return np.sqrt(pm.gp.hsgp_approx.calc_eigenvalues(half_width, [m] * half_width.size))


def hsgp_basis(x: np.ndarray, center: np.ndarray, half_width: np.ndarray, frequencies: np.ndarray) -> np.ndarray:
    """The Laplacian eigenfunctions prod_j sin(omega_j (x_j - center_j + L_j)) / sqrt(L_j), shape (n, m^d).

    Equals ``pm.gp.hsgp_approx.calc_eigenvectors`` (tested); NumPy here so that the basis
    is data of the compiled model and prediction needs no graph compilation.
    """
    shifted = np.asarray(x, dtype=float) - center + half_width  # (n, d)
    return np.prod(np.sin(frequencies.T[np.newaxis] * shifted[:, :, np.newaxis]) / np.sqrt(half_width)[:, np.newaxis], axis=1)


def spectral_density(frequencies: np.ndarray, lengthscale: np.ndarray, kernel: KernelName = "exp_quad") -> np.ndarray:
    """Power spectral density S(omega) of the unit-amplitude stationary kernel, for each row of ``frequencies``.

    ``lengthscale`` may carry leading dims (..., d); the result is (..., m^d). Equals
    PyMC's ``power_spectral_density`` of ``ExpQuad`` and ``Matern52`` (tested).
    """
    if kernel not in ("exp_quad", "matern52"):
        raise ValueError(f"kernel must be 'exp_quad' or 'matern52', got {kernel!r}")
    lengthscale = np.asarray(lengthscale, dtype=float)[..., np.newaxis, :]  # (..., 1, d)
    if not (np.all(np.isfinite(lengthscale)) and np.all(lengthscale > 0)):
        raise ValueError(f"lengthscale must be positive and finite, got {lengthscale.squeeze()!r}")
    d = frequencies.shape[1]
    scaled = (frequencies**2 * lengthscale**2).sum(axis=-1)
    volume = np.prod(lengthscale, axis=-1)
    if kernel == "exp_quad":
        return (2.0 * np.pi) ** (d / 2) * volume * np.exp(-0.5 * scaled)
    power = (d + 5) / 2
    norm = 2.0**d * np.pi ** (d / 2) * scipy.special.gamma(power) * 5.0**2.5 / (0.75 * np.sqrt(np.pi))
    return norm * volume * (5.0 + scaled) ** -power


@dataclass(frozen=True)
class WeightLaplaceFit:
    """The Laplace approximation of a Gaussian-weight model z = Z w, w ~ N(0, I) (the HSGP comparator)."""

    mode: np.ndarray  # w-hat, whitened weights
    covariance: np.ndarray  # (Z^T W Z + I)^-1
    log_marginal_likelihood: float
    iterations: int


def weight_laplace_fit(
    features: np.ndarray, y: np.ndarray, *, link: Link, tol: float = 1e-10, max_iter: int = 100, start: np.ndarray | None = None
) -> WeightLaplaceFit:
    """Mode and Gaussian approximation of p(w | y) for z = features @ w, w ~ N(0, I), by Newton's method.

    The weight-space form of :func:`laplace_fit` (same likelihood terms): each step solves
    (Z^T W Z + I) w = Z^T (W z + grad), O(n p^2) for p weights; the Laplace evidence is
    sum log p(y | z) - |w|^2 / 2 - log det(Z^T W Z + I) / 2.
    """
    if link not in ("logit", "probit"):
        raise ValueError(f"link must be 'logit' or 'probit', got {link!r}")
    y = np.asarray(y, dtype=float)
    if not np.isin(y, (0.0, 1.0)).all():
        raise ValueError("y must hold the binary labels 0 and 1 (the GP classifier is binary)")
    p = features.shape[1]
    w = np.zeros(p) if start is None else np.array(start, dtype=float)
    eye = np.eye(p)
    log_likelihood, gradient, weight = _likelihood_terms(features @ w, y, link)
    objective = log_likelihood.sum() - 0.5 * w @ w
    for iterations in range(1, max_iter + 1):  # noqa: B007 (returned)  Newton iterations, vectorised over observations
        z = features @ w
        factor = scipy.linalg.cho_factor(features.T @ (weight[:, np.newaxis] * features) + eye, lower=True, check_finite=False)
        proposed = scipy.linalg.cho_solve(factor, features.T @ (weight * z + gradient), check_finite=False)

        def evaluate(candidate):
            terms = _likelihood_terms(features @ candidate, y, link)
            return terms[0].sum() - 0.5 * candidate @ candidate, terms

        updated, new_objective, (log_likelihood, gradient, weight) = _damped_newton_step(evaluate, w, proposed, objective)
        done, step = _newton_converged(updated, w, new_objective, objective, tol), np.abs(updated - w).max()
        w, objective = updated, new_objective
        if done:
            break
    else:
        raise ConvergenceError(f"the Laplace mode of the HSGP weights did not converge in {max_iter} Newton steps (last step {step:.3g})")
    log_likelihood, _, weight = _likelihood_terms(features @ w, y, link)
    factor = scipy.linalg.cho_factor(features.T @ (weight[:, np.newaxis] * features) + eye, lower=True, check_finite=False)
    evidence = log_likelihood.sum() - 0.5 * w @ w - np.log(np.diag(factor[0])).sum()
    return WeightLaplaceFit(
        mode=w, covariance=scipy.linalg.cho_solve(factor, eye, check_finite=False), log_marginal_likelihood=float(evidence), iterations=iterations
    )


# -- the whitened latent z = chol(K_theta) u as one Op, kernel included ---------------------------------------
#
# An exact latent GP spends its gradient on K_theta, its Cholesky factor L and the derivative of z = L u.
# PyTensor differentiates cholesky(K) @ u generically (Murray 2016: a dense product L^T (g u^T) and two
# n x n triangular solves) and builds K and its derivatives from a dozen n x n temporaries. Here, with
# K = c^2 1 1^T + a^2 (R_l + eps I) and u_bar = L^T g, Phi(M) = lower triangle of M with its diagonal halved:
#     K_bar = S (symmetrised) with S = L^-T Phi(u_bar u^T) L^-1,
#     X = Phi(u_bar u^T) L^-1 is lower triangular with rows u_bar_i (sum_{k<i} u_k L^-1[k, :] + u_i L^-1[i, :] / 2),
#     <S, K> = tr Phi(u_bar u^T) = u_bar . u / 2, and <S, 1 1^T> = v^T Phi(u_bar u^T) v with v = L^-1 1, so
#     c_bar = 2 c v^T Phi v,   a_bar = (2 / a) (u_bar . u / 2 - c^2 v^T Phi v)   (O(n^2), no S needed),
#     l_bar_j = sum_ik S_ik dK_ik / dl_j   (S = L^-T X: one triangular inverse, one matrix product),
# and the kernel is built and contracted in one loop over the pairs i > k. One logp + gradient takes 1.1 ms
# against 1.7 ms for the generic path at n = 200, 6.5 ms against 11.3 ms at n = 400 (bench/README.md).


class WhitenedLatent(Op):
    """``(z, L) = (chol(K) @ u, chol(K))``, ``K = c^2 + a^2 (k_l(x, x) + jitter I)``, from ``(x, l, a, c, u)``.

    ``kernel`` is "exp_quad" or "matern52" (:func:`kernel_matrix`); NaN where K is not positive definite.
    """

    __props__ = ("kernel", "jitter")

    def __init__(self, kernel: KernelName, jitter: float):
        self.kernel, self.jitter = kernel, float(jitter)

    def make_node(self, inputs, lengthscale, amplitude, constant, whitened):
        args = [pt.as_tensor_variable(value, dtype="float64") for value in (inputs, lengthscale, amplitude, constant, whitened)]
        return Apply(self, args, [args[4].type(), pt.matrix(dtype="float64").type()])

    def perform(self, node, inputs, outputs):
        x, lengthscale, amplitude, constant, whitened = inputs
        covariance = kernel_matrix(x, x, lengthscale=lengthscale, amplitude=amplitude, constant=constant, kernel=self.kernel)
        covariance[np.diag_indices_from(covariance)] += self.jitter * amplitude**2
        try:
            factor = scipy.linalg.cholesky(covariance, lower=True, check_finite=False)
        except np.linalg.LinAlgError:
            factor = np.full_like(covariance, np.nan)
        outputs[0][0] = factor @ whitened
        outputs[1][0] = factor

    def pullback(self, inputs, outputs, output_gradients):
        if not isinstance(output_gradients[1].type, DisconnectedType):
            raise NotImplementedError("WhitenedLatent: only the latent output is differentiable, not the Cholesky factor")
        latent_gradient = output_gradients[0]
        if isinstance(latent_gradient.type, DisconnectedType):
            latent_gradient = pt.zeros_like(outputs[0])
        x, lengthscale, amplitude, constant, whitened = inputs
        grads = WhitenedLatentGradient(self.kernel)(x, lengthscale, amplitude, constant, whitened, outputs[1], latent_gradient)
        return [pt.zeros_like(x), *grads]


def _whitened_latent_gradient(kernel, x, lengthscale, amplitude, constant, whitened, factor, latent_gradient):
    """(l_bar, a_bar, c_bar, u_bar) of :class:`WhitenedLatent` (comment above); NumPy reference of the numba kernel."""
    u_bar = factor.T @ latent_gradient
    ones_solved = scipy.linalg.solve_triangular(factor, np.ones(len(whitened)), lower=True, check_finite=False)
    weighted = whitened * ones_solved
    quadratic = np.sum(ones_solved * u_bar * (np.cumsum(weighted) - 0.5 * weighted))  # v^T Phi v
    trace = 0.5 * u_bar @ whitened
    lower_inverse, _ = scipy.linalg.lapack.dtrtri(factor, lower=1)
    rows = u_bar[:, np.newaxis] * (np.cumsum(whitened[:, np.newaxis] * lower_inverse, axis=0) - 0.5 * whitened[:, np.newaxis] * lower_inverse)
    s = lower_inverse.T @ rows
    squared_differences = (x[:, np.newaxis, :] - x[np.newaxis, :, :]) ** 2 / lengthscale**2  # (n, n, d)
    r2 = squared_differences.sum(axis=-1)
    if kernel == "exp_quad":
        radial = np.exp(-0.5 * r2)
    else:
        r = np.sqrt(5.0 * r2)
        radial = 5.0 / 3.0 * (1.0 + r) * np.exp(-r)
    lengthscale_bar = amplitude**2 * np.einsum("ik,ikj->j", s * radial, squared_differences) / lengthscale
    amplitude_bar = 2.0 / amplitude * (trace - constant**2 * quadratic)
    return lengthscale_bar, np.asarray(amplitude_bar), np.asarray(2.0 * constant * quadratic), u_bar


class WhitenedLatentGradient(Op):
    """``(l_bar, a_bar, c_bar, u_bar)`` of :class:`WhitenedLatent` from ``(x, l, a, c, u, L, z_bar)``."""

    __props__ = ("kernel",)

    def __init__(self, kernel: KernelName):
        self.kernel = kernel

    def make_node(self, x, lengthscale, amplitude, constant, whitened, factor, latent_gradient):
        args = [x, lengthscale, amplitude, constant, whitened, factor, latent_gradient]
        return Apply(self, args, [lengthscale.type(), amplitude.type(), constant.type(), whitened.type()])

    def perform(self, node, inputs, outputs):
        for slot, value in zip(outputs, _whitened_latent_gradient(self.kernel, *inputs), strict=True):
            slot[0] = value


def _register_numba_kernels() -> None:
    """numba implementations for nutpie: LAPACK potrf through PyTensor's numba wrapper, trtri through SciPy's
    cython_lapack in the same way; without them PyTensor's numba backend would run ``perform`` in object mode."""
    import math

    import numba
    from numba.core import types
    from numba.core.extending import get_cython_function_address
    from pytensor.link.numba.cache import _call_cached_ptr
    from pytensor.link.numba.dispatch import basic as numba_basic
    from pytensor.link.numba.dispatch.linalg._LAPACK import int_ptr_to_val, nb_f64p, nb_i32p, val_to_int_ptr
    from pytensor.link.numba.dispatch.linalg.decomposition.cholesky import _cholesky

    @numba_basic.numba_njit
    def trtri_pointer():
        with numba.objmode(ptr=types.intp):
            ptr = get_cython_function_address("scipy.linalg.cython_lapack", "dtrtri")
        return ptr

    trtri_type = types.FunctionType(types.void(nb_i32p, nb_i32p, nb_i32p, nb_f64p, nb_i32p, nb_i32p))

    @numba_basic.numba_njit
    def trtri(uplo, diag, size, matrix, lda, info):
        function = _call_cached_ptr(get_ptr_func=trtri_pointer, func_type_ref=trtri_type, unique_func_name_lit="bayesclass.dtrtri")
        function(uplo, diag, size, matrix, lda, info)

    @numba_basic.numba_njit
    def trmm_pointer():
        with numba.objmode(ptr=types.intp):
            ptr = get_cython_function_address("scipy.linalg.cython_blas", "dtrmm")
        return ptr

    trmm_type = types.FunctionType(
        types.void(nb_i32p, nb_i32p, nb_i32p, nb_i32p, nb_i32p, nb_i32p, nb_f64p, nb_f64p, nb_i32p, nb_f64p, nb_i32p)
    )

    @numba_basic.numba_njit
    def trmm(side, uplo, transa, diag, m, n, alpha, a, lda, b, ldb):
        function = _call_cached_ptr(get_ptr_func=trmm_pointer, func_type_ref=trmm_type, unique_func_name_lit="bayesclass.dtrmm")
        function(side, uplo, transa, diag, m, n, alpha, a, lda, b, ldb)

    @numba_basic.numba_njit
    def lower_transpose_times(lower, matrix):
        """lower^T @ matrix for a lower-triangular, Fortran-ordered ``lower``; ``matrix`` (Fortran-ordered) is overwritten."""
        size = val_to_int_ptr(np.int32(lower.shape[0]))
        alpha = np.ones(1)
        trmm(val_to_int_ptr(ord("L")), val_to_int_ptr(ord("L")), val_to_int_ptr(ord("T")), val_to_int_ptr(ord("N")),
             size, size, alpha.ctypes, lower.ctypes, size, matrix.ctypes, size)  # fmt: skip
        return matrix

    @numba_basic.numba_njit
    def lower_inverse(factor):
        inverse = factor.T.copy().T  # a Fortran-ordered copy (ndarray.copy() in numba is C-ordered)
        size = np.int32(factor.shape[0])
        info = val_to_int_ptr(np.int32(0))
        trtri(val_to_int_ptr(ord("L")), val_to_int_ptr(ord("N")), val_to_int_ptr(size), inverse.ctypes, val_to_int_ptr(size), info)
        if int_ptr_to_val(info) != 0:
            inverse[:] = np.nan
        return inverse

    def make_kernels(matern: bool):
        sqrt5 = math.sqrt(5.0)

        @numba_basic.numba_njit
        def stationary(r2):
            if matern:
                r = sqrt5 * math.sqrt(r2)
                return (1.0 + r + r * r / 3.0) * math.exp(-r)
            return math.exp(-0.5 * r2)

        @numba_basic.numba_njit
        def radial(r2):  # d k / d log l_j = radial * (x_j - x'_j)^2 / l_j^2
            if matern:
                r = sqrt5 * math.sqrt(r2)
                return 5.0 / 3.0 * (1.0 + r) * math.exp(-r)
            return math.exp(-0.5 * r2)

        return stationary, radial

    @numba_basic.numba_funcify.register(WhitenedLatent)
    def _numba_whitened_latent(op, node, **kwargs):
        stationary, _ = make_kernels(op.kernel == "matern52")
        jitter = op.jitter

        @numba_basic.numba_njit
        def whitened_latent_kernel(x, lengthscale, amplitude, constant, whitened):
            n, d = x.shape
            a2, c2 = amplitude.item() ** 2, constant.item() ** 2
            covariance = np.empty((n, n))
            for i in range(n):
                covariance[i, i] = c2 + a2 * (1.0 + jitter)
                for k in range(i):
                    r2 = 0.0
                    for j in range(d):
                        difference = (x[i, j] - x[k, j]) / lengthscale[j]
                        r2 += difference * difference
                    value = c2 + a2 * stationary(r2)
                    covariance[i, k] = value
                    covariance[k, i] = value
            factor = _cholesky(covariance, lower=True, overwrite_a=True)
            latent = np.zeros(n)  # L u over the lower triangle (the factor's layout is not known to numba)
            for i in range(n):
                for k in range(i + 1):
                    latent[i] += factor[i, k] * whitened[k]
            return latent, factor

        return whitened_latent_kernel

    @numba_basic.numba_funcify.register(WhitenedLatentGradient)
    def _numba_whitened_latent_gradient(op, node, **kwargs):
        _, radial = make_kernels(op.kernel == "matern52")

        @numba_basic.numba_njit
        def whitened_latent_gradient_kernel(x, lengthscale, amplitude, constant, whitened, factor, latent_gradient):
            n, d = x.shape
            a, c = amplitude.item(), constant.item()
            u_bar = np.zeros(n)  # L^T z_bar
            for i in range(n):
                for k in range(i + 1):
                    u_bar[k] += factor[i, k] * latent_gradient[i]
            ones_solved = np.empty(n)  # v = L^-1 1 by forward substitution
            for i in range(n):
                total = 1.0
                for k in range(i):
                    total -= factor[i, k] * ones_solved[k]
                ones_solved[i] = total / factor[i, i]
            quadratic, running, trace = 0.0, 0.0, 0.0
            for i in range(n):
                term = whitened[i] * ones_solved[i]
                quadratic += ones_solved[i] * u_bar[i] * (running + 0.5 * term)
                running += term
                trace += 0.5 * u_bar[i] * whitened[i]
            inverse = lower_inverse(factor)
            rows = np.zeros((n, n)).T  # Fortran order: the loops run down columns
            for k in range(n):  # column k of X = Phi(u_bar u^T) L^-1: prefix sums down the column
                running = 0.0
                for i in range(k, n):
                    term = whitened[i] * inverse[i, k]
                    rows[i, k] = u_bar[i] * (running + 0.5 * term)
                    running += term
            s = lower_transpose_times(inverse, rows)  # triangular times triangular: BLAS trmm
            lengthscale_bar = np.zeros(d)
            for i in range(n):
                for k in range(i):
                    r2 = 0.0
                    for j in range(d):
                        difference = (x[i, j] - x[k, j]) / lengthscale[j]
                        r2 += difference * difference
                    weight = (s[i, k] + s[k, i]) * radial(r2)
                    for j in range(d):
                        difference = (x[i, j] - x[k, j]) / lengthscale[j]
                        lengthscale_bar[j] += weight * difference * difference
            lengthscale_bar *= a * a / lengthscale
            amplitude_bar = np.asarray(2.0 / a * (trace - c * c * quadratic))
            constant_bar = np.asarray(2.0 * c * quadratic)
            return lengthscale_bar, amplitude_bar, constant_bar, u_bar

        return whitened_latent_gradient_kernel


_register_numba_kernels()

# ---------------------------------------------------------------------------------------------
# the family (registry name "gp"): PyMC model with whitened latents, Laplace point estimate


@dataclass(frozen=True, kw_only=True)
class GaussianProcessPrior:
    """Weakly-informative priors of the covariance function, for STANDARDISED inputs (fit with ``standardize=True``).

    Parameters
    ----------
    lengthscale_alpha, lengthscale_beta : float
        InverseGamma(alpha, beta) per input dimension (ARD); the default (3, 2) has
        mode 0.5 and mean 1 standard deviation of the input, and little mass below
        0.2 or above 4, where a latent GP is not identified by binary labels.
    amplitude_sigma : float
        HalfNormal scale of :math:`a`, the standard deviation of the stationary term
        (seed 004's illustration has :math:`a = 3`).
    constant_sigma : float
        HalfNormal scale of :math:`c`, the standard deviation of the constant term.
    """

    lengthscale_alpha: float = 3.0
    lengthscale_beta: float = 2.0
    amplitude_sigma: float = 3.0
    constant_sigma: float = 1.0

    def __post_init__(self) -> None:
        for name in ("lengthscale_alpha", "lengthscale_beta", "amplitude_sigma", "constant_sigma"):
            object.__setattr__(self, name, check_positive(getattr(self, name), argument=name))


@dataclass(frozen=True, kw_only=True)
class LatentGaussianProcess(ClassifierModel):
    """Binary latent-GP classifier (registry name ``gp``), seed 004.

    Parameters
    ----------
    link : {"logit", "probit"}
    kernel : {"exp_quad", "matern52"}
        The stationary term of the covariance function (plus a constant term).
    prior : GaussianProcessPrior
    jitter : float
        eps: K = c^2 + a^2 (k + eps I), added for a stable Cholesky factor (relative to the amplitude).
    approximation : {"auto", "exact", "hsgp"}
        ``exact``: the latent at every training input (O(n^3) per gradient);
        ``hsgp``: the Hilbert-space approximation (O(n m^d) per gradient);
        ``auto`` (default): exact up to :data:`EXACT_UP_TO` training rows, HSGP above.
    hsgp_basis : int, optional
        m, the number of basis functions per input dimension (m^d in all, at most
        :data:`HSGP_MAX_BASIS`); by default 30, 15, 8 and 5 for 1, 2, 3 and more inputs
        (:meth:`basis_per_input`).
    hsgp_boundary : float
        c > 1: the basis lives on [-L, L] per dimension with L = c times the half-range
        of the (standardised) training inputs.

    Notes
    -----
    NUTS samples the whitened latents :math:`\\mathbf u \\sim \\mathcal N(0, I)` with
    :math:`\\mathbf z = L_\\theta \\mathbf u`, :math:`L_\\theta L_\\theta^\\top = K_\\theta(X, X)`
    (non-centred), jointly with :math:`\\theta`; the centred form has the funnel between
    :math:`\\theta` and :math:`\\mathbf z` that makes NUTS diverge. The ``map`` point
    estimate is the Laplace approximation with :math:`\\theta` by type-II maximum
    likelihood (the Laplace approximation of :math:`\\log p(\\mathbf y \\mid \\theta)`
    maximised by L-BFGS over :math:`\\log\\theta` with its exact gradient, GPML Algorithm
    5.1). Prediction at new inputs: per posterior draw,
    :math:`f_* \\mid \\mathbf z, \\theta` is Gaussian with mean
    :math:`K_{*}^\\top K^{-1}\\mathbf z` and variance :math:`k_{**} - K_*^\\top K^{-1} K_*`, and
    :math:`P(y_* = 1 \\mid \\mathbf z, \\theta)` averages the link over it (exact for probit,
    Gauss-Hermite for logit); the class probability is the average over draws (seed 004:
    "make a prediction for a test case at x* by averaging"). Binary labels only: a
    multiclass dataset is an error.

    HSGP (``approximation="hsgp"``): :math:`f(x) \\approx \\beta_0 + \\sum_j \\beta_j \\phi_j(x)`
    with the Dirichlet Laplacian eigenfunctions :math:`\\phi_j` on :math:`[-L, L]^d` and
    :math:`\\beta_j \\sim \\mathcal N(0, a^2 S_\\ell(\\omega_j))`, :math:`S_\\ell` the spectral
    density of the stationary kernel, and :math:`\\beta_0 \\sim \\mathcal N(0, c^2)` the constant
    term (``basis_weight``, dims ``basis``, first entry ``"constant"``; sampled whitened).
    Its ``map`` is the Laplace approximation in weight space (:func:`weight_laplace_fit`),
    again with type-II maximum-likelihood hyperparameters. A draw predicts
    :math:`g^{-1}(\\beta_0 + \\boldsymbol\\phi(x_*)^\\top\\boldsymbol\\beta)` (f* is a function of the
    weights).
    """

    link: Link = "logit"
    kernel: KernelName = "exp_quad"
    prior: GaussianProcessPrior = field(default_factory=GaussianProcessPrior)
    jitter: float = 1e-6
    approximation: Approximation = "auto"
    hsgp_basis: int | None = None
    hsgp_boundary: float = 1.5

    name: ClassVar[str] = "gp"
    summary_parameter_names: ClassVar[tuple[str, ...] | None] = ("lengthscale", "amplitude", "constant")

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.link not in ("logit", "probit"):
            raise ValueError(f"link must be 'logit' or 'probit', got {self.link!r}")
        if self.kernel not in ("exp_quad", "matern52"):
            raise ValueError(f"kernel must be 'exp_quad' or 'matern52', got {self.kernel!r}")
        object.__setattr__(self, "jitter", check_positive(self.jitter, argument="jitter"))
        if self.approximation not in ("auto", "exact", "hsgp"):
            raise ValueError(f"approximation must be 'auto', 'exact' or 'hsgp', got {self.approximation!r}")
        m = self.hsgp_basis
        if m is not None:
            if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or m < 2:
                raise ValueError(f"hsgp_basis must be an integer >= 2 (basis functions per input dimension, e.g. 30), got {m!r}")
            object.__setattr__(self, "hsgp_basis", int(m))
        boundary = check_positive(self.hsgp_boundary, argument="hsgp_boundary")
        if boundary <= 1.0:
            raise ValueError(f"hsgp_boundary must be > 1 (the basis box is c times the input half-range; 1.2 to 2 is usual), got {self.hsgp_boundary!r}")
        object.__setattr__(self, "hsgp_boundary", boundary)

    def basis_per_input(self, n_inputs: int) -> int:
        """m, the HSGP basis functions per input: ``hsgp_basis``, or by default 30 for one input, 15 for two,
        8 for three and 5 beyond (m^d stays in the hundreds)."""
        if self.hsgp_basis is not None:
            return self.hsgp_basis
        return {1: 30, 2: 15, 3: 8}.get(n_inputs, 5)

    def uses_hsgp(self, data: Dataset) -> bool:
        """Whether ``data`` is modelled by the HSGP approximation (``approximation``, :data:`EXACT_UP_TO`)."""
        return self.approximation == "hsgp" or (self.approximation == "auto" and data.n_obs > EXACT_UP_TO)

    def check_training_data(self, data: Dataset) -> None:
        """The base checks, plus: exactly two classes, continuous inputs, a feasible HSGP basis."""
        super().check_training_data(data)
        if data.n_classes != 2:
            raise ValueError(
                f"the gp model is binary, but {data.name!r} has {data.n_classes} classes "
                f"({', '.join(map(repr, data.class_names))}); multiclass latent GPs (K latent functions with a softmax) "
                "are not implemented: select two classes or use --model logistic / gcc / naive_bayes"
            )
        other = [name for name, kind in zip(data.feature_names, data.feature_kinds, strict=True) if kind != "continuous"]
        if other:
            raise ValueError(f"the gp model needs continuous inputs; {', '.join(map(repr, other))} are not: drop them")
        if self.uses_hsgp(data):
            m = self.basis_per_input(data.n_features)
            size = m**data.n_features
            if size > HSGP_MAX_BASIS:
                raise ValueError(
                    f"hsgp_basis={m} per input gives {size} basis functions for {data.n_features} inputs "
                    f"(at most {HSGP_MAX_BASIS}): lower hsgp_basis, use fewer inputs, or approximation='exact'"
                )
            spread = np.ptp(np.asarray(data.X, dtype=float), axis=0)
            flat = [name for name, width in zip(data.feature_names, spread, strict=True) if not width > 0]
            if flat:
                raise ValueError(f"input(s) {', '.join(map(repr, flat))} are constant: the HSGP basis needs a range; drop them")

    def available_point_estimates(self) -> tuple[str, ...]:
        """``map``: the Laplace approximation at the type-II maximum-likelihood hyperparameters."""
        return ("map",)

    def parameter_names(self, data: Dataset) -> tuple[str, ...]:
        """The hyperparameters, and the latent values at the training inputs (exact) or the basis weights (HSGP)."""
        return ("lengthscale", "amplitude", "constant", "basis_weight" if self.uses_hsgp(data) else "latent")

    def coords(self, data: Dataset) -> dict[str, Any]:
        """``class``, ``feature``, ``obs`` (+ ``basis``, ``other_basis`` for HSGP), plus what prediction at new
        inputs needs: the training inputs and labels (``training_input``, ``training_label``; exact GP) or
        the basis geometry (``hsgp_center``, ``hsgp_half_width``, ``hsgp_frequency``; HSGP)."""
        coords: dict[str, Any] = {"class": list(data.class_names), "feature": list(data.feature_names), "obs": [str(i) for i in range(data.n_obs)]}
        if self.uses_hsgp(data):
            index = np.stack(np.meshgrid(*[np.arange(1, self.basis_per_input(data.n_features) + 1)] * data.n_features), axis=-1).reshape(-1, data.n_features)
            labels = ["constant", *(",".join(map(str, row)) for row in index)]
            coords["basis"] = labels
            coords["other_basis"] = labels
            center, half_width, frequencies = self._hsgp_geometry(data)
            coords["hsgp_center"] = (("feature",), center)
            coords["hsgp_half_width"] = (("feature",), half_width)
            coords["hsgp_frequency"] = (("basis", "feature"), frequencies)
            return coords
        coords["training_input"] = (("obs", "feature"), np.asarray(data.X, dtype=float))
        coords["training_label"] = (("obs",), np.asarray(data.y, dtype=np.int64))
        return coords

    def _hsgp_geometry(self, data: Dataset) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(center, half_width L, frequencies with a zero row for the constant) of the HSGP basis for ``data``."""
        x = np.asarray(data.X, dtype=float)
        low, high = x.min(axis=0), x.max(axis=0)
        center, half_width = (high + low) / 2.0, self.hsgp_boundary * (high - low) / 2.0
        frequencies = np.vstack([np.zeros((1, x.shape[1])), hsgp_frequencies(half_width, self.basis_per_input(x.shape[1]))])
        return center, half_width, frequencies

    def cache_key(self, data: Dataset) -> tuple:
        if self.uses_hsgp(data):  # the graph depends on which weights are centred, not on n
            return (*super().cache_key(data), "hsgp", tuple(bool(flag) for flag in self.hsgp_centered(data)))
        return (*super().cache_key(data), data.n_obs)

    # -- PyMC model -------------------------------------------------------------------------------
    def build(self, data: Dataset, *, latent_graph: LatentGraph = "fused") -> pm.Model:
        """The latent GP with whitened latents, or its HSGP approximation (class docstring); dims ``feature``, ``obs`` (+ ``basis``).

        ``latent_graph="pytensor"`` builds the exact latent from PyTensor's own kernel and
        ``cholesky(K) @ u`` instead of :class:`WhitenedLatent`: the same density, for tests and
        benchmarks.
        """
        if latent_graph not in ("fused", "pytensor"):
            raise ValueError(f"latent_graph must be 'fused' or 'pytensor', got {latent_graph!r}")
        self.check_training_data(data)
        with pm.Model(coords=self.model_coords(data)) as model:
            labels = pm.Data("training_label", np.asarray(data.y, dtype=np.int64), dims="obs")
            lengthscale = pm.InverseGamma("lengthscale", alpha=self.prior.lengthscale_alpha, beta=self.prior.lengthscale_beta, dims="feature")
            amplitude = pm.HalfNormal("amplitude", sigma=self.prior.amplitude_sigma)
            constant = pm.HalfNormal("constant", sigma=self.prior.constant_sigma)
            if self.uses_hsgp(data):
                latent = self._hsgp_latent(data, lengthscale, amplitude, constant)
            else:
                latent = self._exact_latent(data, lengthscale, amplitude, constant, latent_graph)
            sign = 2.0 * labels - 1.0
            if self.link == "logit":
                pm.Potential("label_likelihood", -pt.sum(pt.softplus(-sign * latent)))
            else:
                pm.Potential("label_likelihood", pt.sum(pm.logcdf(pm.Normal.dist(0.0, 1.0), sign * latent)))
        return model

    def _exact_latent(self, data: Dataset, lengthscale, amplitude, constant, latent_graph: LatentGraph):
        inputs = pm.Data("training_input", np.asarray(data.X, dtype=float), dims=("obs", "feature"))
        whitened = pm.Normal("latent_whitened", 0.0, 1.0, dims="obs")
        # the constant term stays inside K (module docstring: an explicit offset c * b made NUTS diverge)
        if latent_graph == "fused":
            latent = WhitenedLatent(self.kernel, self.jitter)(inputs, lengthscale, amplitude, constant, whitened)[0]
            return pm.Deterministic("latent", latent, dims="obs")
        scaled = inputs / lengthscale
        squared = pt.maximum(
            pt.sum(scaled**2, axis=1)[:, np.newaxis] + pt.sum(scaled**2, axis=1)[np.newaxis, :] - 2 * scaled @ scaled.T, 0.0
        )
        if self.kernel == "exp_quad":
            stationary = pt.exp(-0.5 * squared)
        else:
            r = pt.sqrt(5.0 * squared + 1e-12)
            stationary = (1.0 + r + r**2 / 3.0) * pt.exp(-r)
        covariance = constant**2 + amplitude**2 * (stationary + self.jitter * pt.eye(data.n_obs))
        return pm.Deterministic("latent", pt.linalg.cholesky(covariance) @ whitened, dims="obs")

    def _hsgp_latent(self, data: Dataset, lengthscale, amplitude, constant):
        basis, frequencies = self._hsgp_features(data)
        basis_values = pm.Data("hsgp_basis_values", basis, dims=("obs", "basis"))
        stationary = (pm.gp.cov.ExpQuad if self.kernel == "exp_quad" else pm.gp.cov.Matern52)(data.n_features, ls=lengthscale)
        frequency_values = pm.Data("hsgp_frequency_values", frequencies)  # data: a refit swaps it with the basis
        prior_sd = pt.concatenate([constant[np.newaxis], amplitude * pt.sqrt(stationary.power_spectral_density(frequency_values))])
        centered = self.hsgp_centered(data)
        labels = np.asarray(self.model_coords(data)["basis"])
        pm.Model.get_context().add_coords({"basis_centered": labels[centered], "basis_noncentered": labels[~centered]})
        weight = pt.zeros(basis.shape[1])
        if centered.any():
            direct = pm.Normal("basis_weight_centered", 0.0, prior_sd[np.flatnonzero(centered)], dims="basis_centered")
            weight = pt.set_subtensor(weight[np.flatnonzero(centered)], direct)
        if (~centered).any():
            whitened = pm.Normal("basis_weight_whitened", 0.0, 1.0, dims="basis_noncentered")
            weight = pt.set_subtensor(weight[np.flatnonzero(~centered)], prior_sd[np.flatnonzero(~centered)] * whitened)
        weight = pm.Deterministic("basis_weight", weight, dims="basis")
        return basis_values @ weight

    def hsgp_centered(self, data: Dataset) -> np.ndarray:
        """Which HSGP weights NUTS samples centred (``True``) rather than whitened, shape (m^d + 1,).

        A weight the labels pin down (its prior variance times the Fisher information of the labels
        at f = 0 above 1, at the prior medians of the hyperparameters) is sampled centred: whitened,
        the product of its prior sd and its whitened value forms a narrow banana (NUTS diverged on
        it: 28 divergences at n = 10,000 with every weight whitened, 6-14 with this rule). Weights
        the labels barely inform (high frequencies) stay whitened, which avoids the funnel of the
        centred form. (Reading "pinned down" off the Laplace fit at the type-II ML hyperparameters
        instead, or whitening the constant's weight, gave more divergences, 21 and 42.)
        """
        import scipy.stats

        basis, frequencies = self._hsgp_features(data)
        prior = self.prior
        d = data.n_features
        median = np.concatenate([
            np.full(d, scipy.stats.invgamma(prior.lengthscale_alpha, scale=prior.lengthscale_beta).median()),
            [prior.amplitude_sigma * scipy.stats.halfnorm.median(), prior.constant_sigma * scipy.stats.halfnorm.median()],
        ])  # fmt: skip
        curvature = 0.25 if self.link == "logit" else 2.0 / np.pi  # W at f = 0
        information = curvature * np.sum(basis**2, axis=0) * self._hsgp_prior_sd(frequencies, median, d) ** 2
        return information > 1.0

    # -- Laplace point estimate -------------------------------------------------------------------
    def _covariance(self, a: np.ndarray, b: np.ndarray, lengthscale, amplitude: float, constant: float) -> np.ndarray:
        return kernel_matrix(a, b, lengthscale=lengthscale, amplitude=amplitude, constant=constant, kernel=self.kernel)

    def _point_estimate(self, data: Dataset, kind: str) -> xr.Dataset:
        if self.uses_hsgp(data):
            return self._hsgp_laplace(data)
        x, y, d = np.asarray(data.X, dtype=float), data.y, data.n_features
        previous: list[LaplaceFit | None] = [None]  # warm start of Newton's method

        def negative_evidence(log_theta: np.ndarray) -> tuple[float, np.ndarray]:
            theta = np.exp(log_theta)
            covariance, gradients = kernel_gradients(
                x, lengthscale=theta[:d], amplitude=theta[d], constant=theta[d + 1], kernel=self.kernel, jitter=self.jitter
            )
            try:
                fit = laplace_fit(x, y, covariance, link=self.link, tol=1e-10, start=previous[0])
            except (ConvergenceError, np.linalg.LinAlgError):
                previous[0] = None
                return np.inf, np.zeros_like(log_theta)
            previous[0] = fit
            return -fit.log_marginal_likelihood, -laplace_evidence_gradient(fit, covariance, gradients)

        theta = self._type2_maximum_likelihood(negative_evidence, d, jac=True)
        lengthscale, amplitude, constant = theta[:d], float(theta[d]), float(theta[d + 1])
        covariance = self._covariance(x, x, lengthscale, amplitude, constant) + self.jitter * amplitude**2 * np.eye(data.n_obs)
        fit = laplace_fit(x, y, covariance, link=self.link)
        estimate = xr.Dataset(
            {
                "lengthscale": (("feature",), lengthscale),
                "amplitude": ((), amplitude),
                "constant": ((), constant),
                "latent": (("obs",), fit.mode),
                "laplace_weight": (("obs",), fit.sqrt_w**2),
            }
        )
        return self.with_coords(estimate, data)

    @staticmethod
    def _type2_maximum_likelihood(objective, d: int, *, jac: bool) -> np.ndarray:
        """argmax of the Laplace evidence over log theta = (log l, log a, log c), from l = 1, a = 1, c = 0.5."""
        start = np.concatenate([np.zeros(d), [0.0, np.log(0.5)]])
        found = scipy.optimize.minimize(objective, start, jac=jac, method="L-BFGS-B", bounds=[(-5.0, 5.0)] * (d + 2))
        if not np.isfinite(found.fun):
            raise ConvergenceError(f"type-II maximum likelihood of the GP hyperparameters failed ({found.message})")
        return np.exp(found.x)

    def _hsgp_features(self, data: Dataset) -> tuple[np.ndarray, np.ndarray]:
        center, half_width, frequencies = self._hsgp_geometry(data)
        basis = np.hstack([np.ones((data.n_obs, 1)), hsgp_basis(np.asarray(data.X, dtype=float), center, half_width, frequencies[1:])])
        return basis, frequencies[1:]

    def _hsgp_prior_sd(self, frequencies: np.ndarray, theta: np.ndarray, d: int) -> np.ndarray:
        return np.concatenate([[theta[d + 1]], theta[d] * np.sqrt(spectral_density(frequencies, theta[:d], self.kernel))])

    def _hsgp_laplace(self, data: Dataset) -> xr.Dataset:
        y, d = data.y, data.n_features
        basis, frequencies = self._hsgp_features(data)

        def negative_evidence(log_theta: np.ndarray) -> float:  # O(n p^2) per Newton step: finite-difference gradient
            prior_sd = self._hsgp_prior_sd(frequencies, np.exp(log_theta), d)
            try:
                return -weight_laplace_fit(basis * prior_sd, y, link=self.link).log_marginal_likelihood
            except (ConvergenceError, np.linalg.LinAlgError):
                return np.inf

        theta = self._type2_maximum_likelihood(negative_evidence, d, jac=False)
        prior_sd = self._hsgp_prior_sd(frequencies, theta, d)
        fit = weight_laplace_fit(basis * prior_sd, y, link=self.link)
        estimate = xr.Dataset(
            {
                "lengthscale": (("feature",), theta[:d]),
                "amplitude": ((), float(theta[d])),
                "constant": ((), float(theta[d + 1])),
                "basis_weight": (("basis",), prior_sd * fit.mode),
                "laplace_weight_covariance": (("basis", "other_basis"), prior_sd[:, np.newaxis] * fit.covariance * prior_sd),
            }
        )
        return self.with_coords(estimate, data)

    # -- prediction -------------------------------------------------------------------------------
    def latent_predictive(self, params: xr.Dataset, X: Any) -> xr.Dataset:
        """Mean and variance of the latent f(x*) at new inputs, per parameter draw (or for the Laplace fit).

        Exact GP draws: :math:`f_* \\mid \\mathbf z, \\theta` (class docstring); the ``map`` estimate:
        the Laplace predictive (GPML Algorithm 3.2, or its weight-space form for HSGP); HSGP draws:
        :math:`\\beta_0 + \\boldsymbol\\phi(x_*)^\\top\\boldsymbol\\beta` with variance 0.

        Returns
        -------
        xarray.Dataset
            ``latent_mean`` and ``latent_variance``, dims ``(*leading, obs)``.
        """
        features = features_as_dataarray(X, params).values
        if "basis_weight" in params:
            leading = tuple(dim for dim in params["basis_weight"].dims if dim != "basis")
            mean, variance = self._hsgp_moments(params, features, leading)
        else:
            leading = tuple(dim for dim in params["latent"].dims if dim != "obs")
            mean, variance = self._exact_moments(params, features, leading)
        shape = (*(params.sizes[dim] for dim in leading), features.shape[0])
        coords = {dim: params[dim].values for dim in leading if dim in params.coords}
        dims = (*leading, "obs")
        return xr.Dataset(
            {"latent_mean": (dims, mean.reshape(shape)), "latent_variance": (dims, variance.reshape(shape))}, coords=coords
        )

    def class_log_proba(self, params: xr.Dataset, X: Any) -> xr.DataArray:
        """log P(class | x*): the link averaged over :meth:`latent_predictive` (exact for probit, Gauss-Hermite
        for logit), per draw; dims ``(*leading, obs, class)``."""
        moments = self.latent_predictive(params, X)
        proba = np.clip(_link_average(moments["latent_mean"].values, moments["latent_variance"].values, self.link), 1e-300, 1.0)
        with np.errstate(divide="ignore"):
            log_proba = np.stack([np.log1p(-np.minimum(proba, 1 - 1e-16)), np.log(proba)], axis=-1)
        coords = {dim: moments[dim].values for dim in moments.coords}
        coords["class"] = params["class"].values
        return xr.DataArray(log_proba, dims=(*moments["latent_mean"].dims, "class"), coords=coords)

    def _hsgp_moments(self, params: xr.Dataset, features: np.ndarray, leading: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
        frequencies = params["hsgp_frequency"].transpose("basis", "feature").values
        basis = np.hstack(
            [np.ones((features.shape[0], 1)), hsgp_basis(features, params["hsgp_center"].values, params["hsgp_half_width"].values, frequencies[1:])]
        )
        weight = params["basis_weight"].transpose(*leading, "basis").values.reshape(-1, basis.shape[1])
        mean = weight @ basis.T  # (draws, n*)
        if "laplace_weight_covariance" in params:
            covariance = params["laplace_weight_covariance"].transpose("basis", "other_basis").values
            return mean, np.maximum(np.einsum("ij,jk,ik->i", basis, covariance, basis), 0.0)[np.newaxis]
        return mean, np.zeros_like(mean)

    def _exact_moments(self, params: xr.Dataset, features: np.ndarray, leading: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
        x = params["training_input"].values
        y = params["training_label"].values
        lengthscale = params["lengthscale"].transpose(*leading, "feature").values.reshape(-1, x.shape[1])
        amplitude = params["amplitude"].transpose(*leading).values.reshape(-1)
        constant = params["constant"].transpose(*leading).values.reshape(-1)
        latent = params["latent"].transpose(*leading, "obs").values.reshape(-1, x.shape[0])
        eye = np.eye(x.shape[0])
        mean = np.empty((latent.shape[0], features.shape[0]))
        variance = np.empty_like(mean)
        for draw in range(latent.shape[0]):  # one n x n Cholesky factor per parameter draw (memory bound)
            ell, a, c = lengthscale[draw], amplitude[draw], constant[draw]
            covariance = self._covariance(x, x, ell, a, c) + self.jitter * a**2 * eye
            cross = self._covariance(x, features, ell, a, c)
            prior_variance = np.full(features.shape[0], a**2 + c**2)
            if "laplace_weight" in params:
                fit = laplace_fit(x, y, covariance, link=self.link)
                mean[draw], variance[draw], _ = laplace_predict(fit, cross, prior_variance)
                continue
            factor = scipy.linalg.cholesky(covariance, lower=True, check_finite=False)
            v = scipy.linalg.solve_triangular(factor, cross, lower=True, check_finite=False)
            mean[draw] = v.T @ scipy.linalg.solve_triangular(factor, latent[draw], lower=True, check_finite=False)
            variance[draw] = np.maximum(prior_variance - (v**2).sum(axis=0), 0.0)
        return mean, variance


def _link_average(mean: np.ndarray, variance: np.ndarray, link: Link) -> np.ndarray:
    """E[g^{-1}(f)] for f ~ N(mean, variance): Phi(mean / sqrt(1 + variance)) or Gauss-Hermite for the logistic."""
    if link == "probit":
        return scipy.special.ndtr(mean / np.sqrt(1.0 + variance))
    if not np.any(variance):  # a point value of f (HSGP draws)
        return scipy.special.expit(mean)
    z = mean[..., np.newaxis] + np.sqrt(2.0 * variance)[..., np.newaxis] * _HERMITE_NODES
    return scipy.special.expit(z) @ _HERMITE_WEIGHTS / np.sqrt(np.pi)
