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

import functools
import math
from collections.abc import Callable
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

#: E[sigmoid(f)], f ~ N(mu, s^2), for s <= 2: (largest sd, Gauss-Hermite nodes scaled by sqrt(2), weights over
#: sqrt(pi)), fewer nodes where the sd is small, where they are as exact (the largest error over means in [-50, 50]
#: against scipy.integrate.quad: 3e-14 for 16 nodes at sd 0.5, 1e-13 for 32 at sd 1, 7e-11 for 64 at sd 2).
#: Gauss-Hermite cannot go much further: the sigmoid's poles at mu +- i pi lie pi / s from the real axis in the
#: Gaussian's standard variable, and 64 nodes err by 1.3e-7 at s = 3, 5e-5 at s = 5, 6e-3 at s = 12, 6e-2 at s = 120
_HERMITE_RULES = tuple(
    (largest_sd, np.sqrt(2.0) * nodes, weights / np.sqrt(np.pi))
    for largest_sd, (nodes, weights) in (
        (0.5, np.polynomial.hermite.hermgauss(16)),
        (1.0, np.polynomial.hermite.hermgauss(32)),
        (2.0, np.polynomial.hermite.hermgauss(64)),
    )
)
#: Above s = 2 the other side of E[sigmoid(f)] = P(L < f), L ~ Logistic(0, 1) independent of f:
#: E[sigmoid(f)] = E_L[Phi((mu - L) / s)] = int logistic_pdf(l) Phi((mu - l) / s) dl, by the trapezoidal rule with
#: step h = 0.8 on [-20, 20] (51 nodes). The integrand is analytic in the strip |Im l| < pi (the logistic density's
#: poles at +- i pi; Phi is entire), so the rule converges geometrically (Trefethen & Weideman 2014, SIAM Rev.
#: 56:385, Thm 5.1: error <= 2 M / (exp(2 pi a / h) - 1), M bounding int |integrand(x + i b)| dx over |b| < a).
#: With a = 3 and s >= 2, |Phi(u + i v)| <= 1 + |v| exp(v^2 / 2) / sqrt(2 pi) <= 2.85 (|v| <= a / s) and
#: int dx / (4 (sinh(x / 2)^2 + cos(a / 2)^2)) = 21.3 give M <= 60.5 and a discretisation error <= 7.1e-9; the
#: cut tails add <= 2 exp(-20) = 4.1e-9 to the integral and as much to the sum. Bound 1.6e-8 at any mean and any
#: s >= 2; measured against scipy.integrate.quad over means in [-50, 50]: 2e-9 at s = 2 to 4e-10 at s = 1,000
_LOGISTIC_STEP = 0.8
_LOGISTIC_NODES = np.linspace(-20.0, 20.0, 51)
_LOGISTIC_WEIGHTS = _LOGISTIC_STEP * 0.25 / np.cosh(0.5 * _LOGISTIC_NODES) ** 2
#: values per block of the quadrature: a (block x 64 nodes) array of 8 MB at most
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


def _hermite_average(mean: np.ndarray, sd: np.ndarray, nodes: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``E[sigmoid(f)]``, ``f ~ N(mean, sd^2)`` elementwise, by Gauss-Hermite ``nodes`` and ``weights``."""
    z = np.multiply(sd[:, np.newaxis], nodes)  # one (values x nodes) array, updated in place
    z += mean[:, np.newaxis]
    return scipy.special.expit(z, out=z) @ weights


def _logistic_side_average(mean: np.ndarray, sd: np.ndarray) -> np.ndarray:
    """``E[sigmoid(f)] = E_L[Phi((mean - L) / sd)]``, ``L ~ Logistic(0, 1)``, by the trapezoidal rule (sd >= 2)."""
    t = np.subtract(mean[:, np.newaxis], _LOGISTIC_NODES)  # one (values x nodes) array, updated in place
    t /= sd[:, np.newaxis]
    return scipy.special.ndtr(t, out=t) @ _LOGISTIC_WEIGHTS


def link_average(mean: np.ndarray, variance: np.ndarray, link: Link) -> np.ndarray:
    """``E[g^-1(f)]`` for ``f ~ N(mean, variance)``, within 2e-8 of the exact integral at any mean and variance.

    ``Phi(mean / sqrt(1 + variance))`` for the probit link (exact). For the logistic (seed 004, GPML eq 3.25):
    16, 32 or 64 Gauss-Hermite nodes where the latent's sd is at most 0.5, 1 or 2 (``_HERMITE_RULES``), and above
    it the trapezoidal rule over the logistic variable of ``E[sigmoid(f)] = P(L < f)`` (``_LOGISTIC_NODES``, the
    error bound beside them).
    """
    if link == "probit":
        return scipy.special.ndtr(mean / np.sqrt(1.0 + variance))
    if not np.any(variance):  # a point value of f
        return scipy.special.expit(mean)
    mean, sd = np.broadcast_arrays(np.asarray(mean, dtype=float), np.sqrt(np.asarray(variance, dtype=float)))
    flat_mean, flat_sd = mean.reshape(-1), sd.reshape(-1)
    rules: list[Callable[[np.ndarray, np.ndarray], np.ndarray]] = [
        functools.partial(_hermite_average, nodes=nodes, weights=weights) for _, nodes, weights in _HERMITE_RULES
    ]
    rule = np.searchsorted([largest for largest, _, _ in _HERMITE_RULES], flat_sd)
    average = np.empty(flat_mean.size)
    for index, rule_average in enumerate([*rules, _logistic_side_average]):  # each value by the cheapest exact rule
        where = np.flatnonzero(rule == index)
        for start in range(0, where.size, _QUADRATURE_BLOCK):  # blocks bound the (values x nodes) array
            block = where[start : start + _QUADRATURE_BLOCK]
            average[block] = rule_average(flat_mean[block], flat_sd[block])
    return average.reshape(mean.shape)


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
