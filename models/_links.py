"""Bernoulli likelihood terms of the two inverse links, shared by logistic regression and the latent GP.

For a label y in {0, 1}, s = 2y - 1 and a latent value (linear predictor) eta:

- logit: log p(y | eta) = log sigmoid(s eta) = -log(1 + exp(-s eta));
- probit: log p(y | eta) = log Phi(s eta).

:func:`bernoulli_terms` gives the log-likelihood, its first derivative and the
curvature ``W = -d2/deta2`` elementwise (GPML eqs 3.15-3.16 and Table 3.1),
:func:`bernoulli_third_derivative` the third derivative that the Laplace evidence
gradient needs (GPML Algorithm 5.1), both stable in the tails (the probit terms via
``log_ndtr`` and the inverse Mills ratio ``phi(t) / Phi(t)`` in the log domain).
:func:`link_average` is the predictive ``E[g^-1(f)]`` for a Gaussian ``f``;
:func:`log_normal_cdf` is ``log Phi`` for PyTensor graphs.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from bayesclass._lazy import lazy_import

if TYPE_CHECKING:
    import pytensor.tensor as pt
    import scipy
else:
    scipy = lazy_import("scipy")  # SciPy loads its submodules (scipy.special ...) on first use
    pt = lazy_import("pytensor.tensor")

__all__ = [
    "Link",
    "bernoulli_log_likelihood",
    "bernoulli_log_proba",
    "bernoulli_terms",
    "bernoulli_third_derivative",
    "check_link",
    "link_average",
    "log_normal_cdf",
]

Link = Literal["logit", "probit"]

#: (largest latent sd, Gauss-Hermite nodes and weights) for E[sigmoid(z)], z ~ N(mu, s^2): fewer nodes where the
#: latent's sd is small, where they are as exact (the largest error over means in [-15, 15] against adaptive
#: quadrature: 2e-15 for 16 nodes at sd 0.5, 1e-13 for 32 at sd 1); 64 nodes above (9e-11 at sd 2, 1.4e-7 at sd 3,
#: 5e-5 at sd 5)
_HERMITE_RULES = tuple(
    (largest_sd, *np.polynomial.hermite.hermgauss(nodes)) for largest_sd, nodes in ((0.5, 16), (1.0, 32), (np.inf, 64))
)
#: values per block of the Gauss-Hermite average: a (block x 64 nodes) array of 8 MB at most
_QUADRATURE_BLOCK = 16_384


def check_link(link: object) -> None:
    """Raise a ``ValueError`` unless ``link`` is ``"logit"`` or ``"probit"``."""
    if link not in ("logit", "probit"):
        raise ValueError(f"link must be 'logit' or 'probit', got {link!r}")


def _inverse_mills(t: np.ndarray) -> np.ndarray:
    """phi(t) / Phi(t), stable for t << 0."""
    return np.exp(-0.5 * t**2 - 0.5 * np.log(2 * np.pi) - scipy.special.log_ndtr(t))


def bernoulli_log_proba(eta: np.ndarray, sign: np.ndarray, link: Link) -> np.ndarray:
    """``log p(y_i | eta_i)`` elementwise in NumPy, with ``sign = 2 y - 1``.

    ``log sigmoid(s eta)`` (logit) or ``log Phi(s eta)`` (probit); :func:`bernoulli_log_likelihood` is its sum
    in PyTensor.
    """
    margin = sign * eta
    return scipy.special.log_expit(margin) if link == "logit" else scipy.special.log_ndtr(margin)


def bernoulli_terms(eta: np.ndarray, y: np.ndarray, link: Link) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(log p(y_i | eta_i), d/deta_i, W_i = -d2/deta_i2)`` elementwise; ``y`` in {0, 1}."""
    sign = 2.0 * y - 1.0
    log_proba = bernoulli_log_proba(eta, sign, link)
    if link == "logit":
        proba = scipy.special.expit(eta)
        return log_proba, y - proba, proba * (1.0 - proba)
    t = sign * eta
    ratio = _inverse_mills(t)
    return log_proba, sign * ratio, ratio**2 + t * ratio


def bernoulli_third_derivative(eta: np.ndarray, y: np.ndarray, link: Link) -> np.ndarray:
    """``d3 log p(y_i | eta_i) / deta_i3`` elementwise (the derivative of -W)."""
    if link == "logit":
        proba = scipy.special.expit(eta)
        return -proba * (1.0 - proba) * (1.0 - 2.0 * proba)
    sign = 2.0 * y - 1.0
    t = sign * eta
    ratio = _inverse_mills(t)
    return sign * ratio * ((t + ratio) * (t + 2.0 * ratio) - 1.0)


def link_average(mean: np.ndarray, variance: np.ndarray, link: Link) -> np.ndarray:
    """``E[g^-1(f)]`` for ``f ~ N(mean, variance)``.

    ``Phi(mean / sqrt(1 + variance))`` for the probit link (exact), Gauss-Hermite quadrature for the logistic
    (seed 004, GPML eq 3.25): 16, 32 or 64 nodes by the latent's sd (``_HERMITE_RULES``).
    """
    if link == "probit":
        return scipy.special.ndtr(mean / np.sqrt(1.0 + variance))
    if not np.any(variance):  # a point value of f
        return scipy.special.expit(mean)
    mean, scale = np.broadcast_arrays(np.asarray(mean, dtype=float), np.sqrt(2.0 * np.asarray(variance, dtype=float)))
    flat_mean, flat_scale = mean.reshape(-1), scale.reshape(-1)
    rule = np.searchsorted([largest for largest, _, _ in _HERMITE_RULES], flat_scale / np.sqrt(2.0))
    average = np.empty(flat_mean.size)
    for index, (_, nodes, weights) in enumerate(_HERMITE_RULES):  # each value by the fewest nodes exact for its sd
        where = np.flatnonzero(rule == index)
        for start in range(0, where.size, _QUADRATURE_BLOCK):  # blocks bound the (values x nodes) array
            block = where[start : start + _QUADRATURE_BLOCK]
            z = flat_mean[block, np.newaxis] + flat_scale[block, np.newaxis] * nodes
            average[block] = scipy.special.expit(z, out=z) @ weights
    return (average / np.sqrt(np.pi)).reshape(mean.shape)


def bernoulli_log_likelihood(eta: Any, sign: Any, link: Link) -> Any:
    """``sum_i log p(y_i | eta_i)`` in PyTensor, with ``sign = 2 y - 1``.

    ``-softplus(-s eta)`` (logit) or ``log Phi(s eta)`` (probit).
    """
    margin = sign * eta
    return -pt.sum(pt.softplus(-margin)) if link == "logit" else pt.sum(log_normal_cdf(margin))


def log_normal_cdf(x: Any) -> Any:
    """Log Phi(x) in PyTensor, accurate in both tails, with finite gradients in both branches."""
    left = pt.minimum(x, -1.0)
    right = pt.maximum(x, -1.0)
    lower_tail = pt.log(0.5 * pt.erfcx(-left / math.sqrt(2.0))) - 0.5 * left**2
    upper = pt.log1p(-0.5 * pt.erfc(right / math.sqrt(2.0)))
    return pt.switch(x < -1.0, lower_tail, upper)
