r"""Latent Gaussian-process classification (seed 004 "Gaussian Process Models for Classification").

STATUS: groundwork for issue 5. This module holds the covariance functions and the
Laplace (Gaussian) approximation of the latent posterior, tested against
scikit-learn's ``GaussianProcessClassifier``; the PyMC model (whitened latents, NUTS
over latents and hyperparameters, HSGP) and its registration as ``gp`` are not built
yet, so the family is not in ``models.REGISTRY``.

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
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import scipy.linalg
import scipy.special

from models.base import ConvergenceError

__all__ = ["KernelName", "Link", "LaplaceFit", "kernel_matrix", "laplace_fit", "laplace_predict"]

Link = Literal["logit", "probit"]
KernelName = Literal["exp_quad", "matern52"]

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
    if kernel not in ("exp_quad", "matern52"):
        raise ValueError(f"kernel must be 'exp_quad' or 'matern52', got {kernel!r}")
    scale = np.broadcast_to(np.asarray(lengthscale, dtype=float), (np.shape(x1)[1],))
    if not (np.all(np.isfinite(scale)) and np.all(scale > 0)):
        raise ValueError(f"lengthscale must be positive and finite, got {lengthscale!r}")
    a, b = np.asarray(x1, dtype=float) / scale, np.asarray(x2, dtype=float) / scale
    squared = np.maximum((a**2).sum(1)[:, np.newaxis] + (b**2).sum(1)[np.newaxis, :] - 2 * a @ b.T, 0.0)
    if kernel == "exp_quad":
        stationary = np.exp(-0.5 * squared)
    else:
        r = np.sqrt(5.0 * squared)
        stationary = (1.0 + r + r**2 / 3.0) * np.exp(-r)
    return constant**2 + amplitude**2 * stationary


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
    x: np.ndarray, y: np.ndarray, covariance: np.ndarray, *, link: Link = "logit", tol: float = 1e-12, max_iter: int = 100
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
        Stop when the largest change of the latent mode is below ``tol``.
    """
    if link not in ("logit", "probit"):
        raise ValueError(f"link must be 'logit' or 'probit', got {link!r}")
    y = np.asarray(y, dtype=float)
    if not np.isin(y, (0.0, 1.0)).all():
        raise ValueError("y must hold the binary labels 0 and 1 (the GP classifier is binary)")
    n = y.size
    z = np.zeros(n)
    iterations = 0
    while True:  # Newton iterations, each vectorised over observations
        iterations += 1
        _, gradient, w = _likelihood_terms(z, y, link)
        sqrt_w = np.sqrt(w)
        cholesky_b = scipy.linalg.cholesky(np.eye(n) + sqrt_w[:, np.newaxis] * covariance * sqrt_w, lower=True)
        b = w * z + gradient
        a = b - sqrt_w * scipy.linalg.cho_solve((cholesky_b, True), sqrt_w * (covariance @ b))
        updated = covariance @ a
        step = np.abs(updated - z).max()
        z = updated
        if step < tol:
            break
        if iterations >= max_iter:
            raise ConvergenceError(
                f"the Laplace mode did not converge in {max_iter} Newton steps (last step {step:.3g}); "
                "check the kernel hyperparameters or raise max_iter"
            )
    log_likelihood, gradient, w = _likelihood_terms(z, y, link)
    sqrt_w = np.sqrt(w)
    cholesky_b = scipy.linalg.cholesky(np.eye(n) + sqrt_w[:, np.newaxis] * covariance * sqrt_w, lower=True)
    a = gradient  # at the mode, z = K grad log p(y | z)
    evidence = -0.5 * a @ z + log_likelihood.sum() - np.log(np.diag(cholesky_b)).sum()
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
    if fit.link == "probit":
        proba = scipy.special.ndtr(mean / np.sqrt(1.0 + variance))
    else:
        z = mean[:, np.newaxis] + np.sqrt(2.0 * variance)[:, np.newaxis] * _HERMITE_NODES[np.newaxis, :]
        proba = scipy.special.expit(z) @ _HERMITE_WEIGHTS / np.sqrt(np.pi)
    return mean, variance, proba
