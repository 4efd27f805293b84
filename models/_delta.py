r"""Delta-method intervals of predicted class probabilities, for any family with a Gaussian approximation.

For a point estimate :math:`\hat\theta \approx N(\theta, \Sigma)` (:class:`~bayesclass.models.approximation.
GaussianApproximation`) and the family's own prediction function :math:`p_k(x; \theta)`, the interval of
:math:`p_k(x)` is the Wald interval of its logit, mapped back (so it stays in (0, 1)):

.. math::

    \ell_k = \log p_k - \log(1 - p_k), \qquad
    \operatorname{se}(\ell_k) = \sqrt{\nabla_\theta \ell_k^\top\, \Sigma\, \nabla_\theta \ell_k}, \qquad
    p_k \in \operatorname{expit}\bigl(\hat\ell_k \mp z_{1-\alpha/2} \operatorname{se}(\ell_k)\bigr).

The gradient is taken by central differences through the family's
:meth:`~bayesclass.models.base.ClassifierModel.class_proba_kernel` (evaluated once for all perturbed
parameter sets, as draws), with a step of ``1e-4`` standard errors per parameter, so that every perturbed
value stays well inside the parameter's domain whenever its standard error is positive; parameters with a
zero standard error (a boundary estimate) contribute nothing. Where the covariance is singular along a
constraint (probabilities that sum to one, a symmetric matrix stored twice), :math:`J \Sigma J^\top` only sees
the gradient along the constraint surface, so the kernel's extension off it does not matter. For a binary
logit model :math:`\ell_1 = \eta` is the linear predictor, and the interval is statsmodels'
``get_prediction().conf_int()``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from bayesclass._lazy import lazy_import

if TYPE_CHECKING:
    import scipy
    import xarray as xr

    from bayesclass.models.approximation import GaussianApproximation
    from bayesclass.models.base import ClassProbaKernel
else:
    scipy = lazy_import("scipy")
    xr = lazy_import("xarray")

__all__ = ["delta_method_bounds"]

#: central-difference step, in standard errors of each parameter
RELATIVE_STEP = 1e-4
#: float64 values of (rows x classes x perturbed parameter sets) held at once
CHUNK_VALUES = 1 << 22


def _perturbed_estimate(estimate: xr.Dataset, approximation: GaussianApproximation, steps: np.ndarray) -> xr.Dataset:
    """``estimate`` with dims (chain=1, draw=1 + 2k): draw 0 the estimate, then +step and -step per active element."""
    active = np.flatnonzero(steps)
    n_sets = 1 + 2 * active.size
    offsets = np.zeros((n_sets, approximation.params.size))
    offsets[1 + np.arange(active.size), active] = steps[active]
    offsets[1 + active.size + np.arange(active.size), active] = -steps[active]
    perturbed = estimate.expand_dims(chain=1, draw=n_sets).copy(deep=True)
    start = 0
    for name in approximation.names:
        variable = estimate[name]
        size = variable.size
        values = variable.values[np.newaxis] + offsets[:, start : start + size].reshape(n_sets, *variable.shape)
        perturbed[name] = (("chain", "draw", *variable.dims), values[np.newaxis].astype(float))
        start += size
    return perturbed


def _log_odds(log_proba: np.ndarray) -> np.ndarray:
    """The log odds log p_k - log(1 - p_k) of log p (obs, class, sets); 1 - p_k summed over the other classes."""
    n_classes = log_proba.shape[1]
    others = 1.0 - np.eye(n_classes)[np.newaxis, :, :, np.newaxis]
    with np.errstate(divide="ignore"):
        log_rest = scipy.special.logsumexp(log_proba[:, np.newaxis], axis=2, b=others)
    return log_proba - log_rest


def delta_method_bounds(
    kernel_of_params: Callable[[xr.Dataset], ClassProbaKernel],
    estimate: xr.Dataset,
    approximation: GaussianApproximation,
    interval_prob: float,
) -> Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """Delta-method intervals of P(class | x) on the logit scale, for any family (module docstring).

    Parameters
    ----------
    kernel_of_params : callable
        The family's :meth:`~bayesclass.models.base.ClassifierModel.class_proba_kernel`.
    estimate : xarray.Dataset
        The point estimate.
    approximation : GaussianApproximation
        Its normal approximation, over some of ``estimate``'s variables.
    interval_prob : float
        The intervals' probability, in (0, 1).

    Returns
    -------
    callable
        ``bounds(X) -> (low, high)``, each of shape ``(n_obs, n_class)``, for model inputs ``X`` checked as for
        the family's kernel.
    """
    z = float(scipy.stats.norm.ppf(0.5 + interval_prob / 2.0))
    steps = RELATIVE_STEP * approximation.bse
    active = np.flatnonzero(steps > 0)
    covariance = np.asarray(approximation.covariance)[np.ix_(active, active)]
    kernel = kernel_of_params(_perturbed_estimate(estimate, approximation, steps))
    n_sets = 1 + 2 * active.size
    chunk = max(1, CHUNK_VALUES // (kernel.n_classes * n_sets))

    def bounds(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        low = np.empty((X.shape[0], kernel.n_classes))
        high = np.empty_like(low)
        for start in range(0, X.shape[0], chunk):  # rows in chunks: memory, not a loop inside the model
            rows = slice(start, start + chunk)
            log_odds = _log_odds(kernel(X[rows], log=True))
            centre = log_odds[:, :, 0]
            with np.errstate(invalid="ignore"):  # p = 0 or 1 at the estimate: a degenerate interval there
                jacobian = (log_odds[:, :, 1 : 1 + active.size] - log_odds[:, :, 1 + active.size :]) / (
                    2.0 * steps[active]
                )
            jacobian[~np.isfinite(centre)] = 0.0
            variance = np.einsum("nka,ab,nkb->nk", jacobian, covariance, jacobian, optimize=True)
            half = z * np.sqrt(np.clip(variance, 0.0, None))
            low[rows] = scipy.special.expit(centre - half)
            high[rows] = scipy.special.expit(centre + half)
        return low, high

    return bounds
