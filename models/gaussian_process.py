r"""Latent Gaussian-process classification (seed 004 "Gaussian Process Models for Classification").

STATUS: groundwork for issue 5, not registered in ``models.REGISTRY`` yet. Built and
tested: the covariance functions; the Laplace (Gaussian) approximation of the latent
posterior (logit and probit), equal to scikit-learn's ``GaussianProcessClassifier``
at fixed hyperparameters; :class:`LatentGaussianProcess` with its PyMC model
(whitened latents, the kernel's constant term as an explicit non-centred offset),
the Laplace ``map`` estimate with type-II maximum-likelihood hyperparameters, and
prediction from draws or the Laplace fit. Open: HSGP, the CLI, the benchmark, and a
sampler that meets the issue's targets. Measured on seed 004's data (n = 100, x
standardised, 2 x 1000/1000 draws, nutpie): this model 28 s of sampling, 3 divergences,
bulk ESS of the amplitude 301 (target_accept 0.95: 59 s, 0 divergences, ESS 932);
``pm.gp.Latent`` with the same priors (constant term inside the kernel) 26 s,
0 divergences, ESS 490. Both cost about 0.5 ms per gradient, the n x n Cholesky factor
and its gradient in numba; the explicit offset gains nothing, and the issue's 3x
target needs a cheaper gradient, not a reparametrisation.

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

from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

import numpy as np
import pymc as pm
import pytensor.tensor as pt
import scipy.linalg
import scipy.optimize
import scipy.special
import xarray as xr

from data import Dataset
from models.base import ClassifierModel, ConvergenceError, check_positive, features_as_dataarray

__all__ = [
    "GaussianProcessPrior", "KernelName", "LatentGaussianProcess", "Link", "LaplaceFit",
    "kernel_matrix", "laplace_fit", "laplace_predict",
]  # fmt: skip

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
    return mean, variance, _link_average(mean, variance, fit.link)


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
        Added to the diagonal of K (relative to its scale) for a stable Cholesky factor.

    Notes
    -----
    NUTS samples the whitened latents :math:`\\mathbf u \\sim \\mathcal N(0, I)` with
    :math:`\\mathbf z = L_\\theta \\mathbf u`, :math:`L_\\theta L_\\theta^\\top = K_\\theta(X, X)`
    (non-centred), jointly with :math:`\\theta`; the centred form has the funnel between
    :math:`\\theta` and :math:`\\mathbf z` that makes NUTS diverge. The ``map`` point
    estimate is the Laplace approximation with :math:`\\theta` by type-II maximum
    likelihood (the Laplace approximation of :math:`\\log p(\\mathbf y \\mid \\theta)`
    maximised by L-BFGS over :math:`\\log\\theta`). Prediction at new inputs: per
    posterior draw, :math:`f_* \\mid \\mathbf z, \\theta` is Gaussian with mean
    :math:`K_{*}^\\top K^{-1}\\mathbf z` and variance :math:`k_{**} - K_*^\\top K^{-1} K_*`, and
    :math:`P(y_* = 1 \\mid \\mathbf z, \\theta)` averages the link over it (exact for probit,
    Gauss-Hermite for logit); the class probability is the average over draws (seed 004:
    "make a prediction for a test case at x* by averaging"). Binary labels only: a
    multiclass dataset is an error.
    """

    link: Link = "logit"
    kernel: KernelName = "exp_quad"
    prior: GaussianProcessPrior = field(default_factory=GaussianProcessPrior)
    jitter: float = 1e-6

    name: ClassVar[str] = "gp"
    point_estimate_kinds: ClassVar[tuple[str, ...]] = ("map",)
    parameter_names: ClassVar[tuple[str, ...]] = ("lengthscale", "amplitude", "constant", "latent")

    def __post_init__(self) -> None:
        if self.link not in ("logit", "probit"):
            raise ValueError(f"link must be 'logit' or 'probit', got {self.link!r}")
        if self.kernel not in ("exp_quad", "matern52"):
            raise ValueError(f"kernel must be 'exp_quad' or 'matern52', got {self.kernel!r}")
        if isinstance(self.prior, dict):
            object.__setattr__(self, "prior", GaussianProcessPrior(**self.prior))
        if not isinstance(self.prior, GaussianProcessPrior):
            raise ValueError(f"prior must be a GaussianProcessPrior, got {self.prior!r}")
        object.__setattr__(self, "jitter", check_positive(self.jitter, argument="jitter"))

    def check_training_data(self, data: Dataset) -> None:
        """The base checks, plus: exactly two classes and continuous inputs."""
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

    def coords(self, data: Dataset) -> dict[str, list[str]]:
        return {"class": list(data.class_names), "feature": list(data.feature_names), "obs": [str(i) for i in range(data.n_obs)]}

    def parameter_coords(self, data: Dataset) -> dict[str, Any]:
        """The coordinates plus the training inputs and labels (``training_input``, ``training_label``),
        which prediction at new inputs conditions on."""
        coords: dict[str, Any] = dict(self.coords(data))
        coords["training_input"] = (("obs", "feature"), np.asarray(data.X, dtype=float))
        coords["training_label"] = (("obs",), np.asarray(data.y, dtype=np.int64))
        return coords

    def cache_key(self, data: Dataset) -> tuple:
        return (*super().cache_key(data), data.n_obs)

    # -- PyMC model -------------------------------------------------------------------------------
    def build(self, data: Dataset) -> pm.Model:
        """The latent GP with whitened latents (class docstring); dims ``feature``, ``obs``."""
        self.check_training_data(data)
        prior = self.prior
        n = data.n_obs
        with pm.Model(coords=self.coords(data)) as model:
            inputs = pm.Data("training_input", np.asarray(data.X, dtype=float), dims=("obs", "feature"))
            labels = pm.Data("training_label", np.asarray(data.y, dtype=np.int64), dims="obs")
            lengthscale = pm.InverseGamma("lengthscale", alpha=prior.lengthscale_alpha, beta=prior.lengthscale_beta, dims="feature")
            amplitude = pm.HalfNormal("amplitude", sigma=prior.amplitude_sigma)
            constant = pm.HalfNormal("constant", sigma=prior.constant_sigma)
            scaled = inputs / lengthscale
            squared = pt.maximum(
                pt.sum(scaled**2, axis=1)[:, np.newaxis] + pt.sum(scaled**2, axis=1)[np.newaxis, :] - 2 * scaled @ scaled.T, 0.0
            )
            if self.kernel == "exp_quad":
                stationary = pt.exp(-0.5 * squared)
            else:
                r = pt.sqrt(5.0 * squared + 1e-12)
                stationary = (1.0 + r + r**2 / 3.0) * pt.exp(-r)
            # the constant term c^2 of the kernel is sampled as an explicit offset b ~ N(0, c^2) (non-centred),
            # which is the same prior on z but keeps c out of the Cholesky factor (no funnel through it)
            covariance = amplitude**2 * (stationary + self.jitter * pt.eye(n))
            whitened = pm.Normal("latent_whitened", 0.0, 1.0, dims="obs")
            offset = pm.Normal("latent_offset_whitened", 0.0, 1.0)
            latent = pm.Deterministic("latent", constant * offset + pt.linalg.cholesky(covariance) @ whitened, dims="obs")
            sign = 2.0 * labels - 1.0
            if self.link == "logit":
                pm.Potential("label_likelihood", -pt.sum(pt.softplus(-sign * latent)))
            else:
                pm.Potential("label_likelihood", pt.sum(pm.logcdf(pm.Normal.dist(0.0, 1.0), sign * latent)))
        return model

    # -- Laplace point estimate -------------------------------------------------------------------
    def _covariance(self, a: np.ndarray, b: np.ndarray, lengthscale, amplitude: float, constant: float) -> np.ndarray:
        return kernel_matrix(a, b, lengthscale=lengthscale, amplitude=amplitude, constant=constant, kernel=self.kernel)

    def _point_estimate(self, data: Dataset, kind: str) -> xr.Dataset:
        x, y, d = np.asarray(data.X, dtype=float), data.y, data.n_features
        eye = np.eye(data.n_obs)

        def negative_evidence(log_theta: np.ndarray) -> float:
            lengthscale, amplitude, constant = np.exp(log_theta[:d]), np.exp(log_theta[d]), np.exp(log_theta[d + 1])
            covariance = self._covariance(x, x, lengthscale, amplitude, constant) + self.jitter * (amplitude**2 + constant**2) * eye
            try:
                return -laplace_fit(x, y, covariance, link=self.link, tol=1e-10).log_marginal_likelihood
            except (ConvergenceError, np.linalg.LinAlgError):
                return np.inf

        start = np.concatenate([np.zeros(d), [np.log(1.0), np.log(0.5)]])
        found = scipy.optimize.minimize(negative_evidence, start, method="L-BFGS-B", bounds=[(-5.0, 5.0)] * (d + 2))
        if not np.isfinite(found.fun):
            raise ConvergenceError(f"type-II maximum likelihood of the GP hyperparameters failed ({found.message})")
        lengthscale, amplitude, constant = np.exp(found.x[:d]), float(np.exp(found.x[d])), float(np.exp(found.x[d + 1]))
        covariance = self._covariance(x, x, lengthscale, amplitude, constant) + self.jitter * (amplitude**2 + constant**2) * eye
        fit = laplace_fit(x, y, covariance, link=self.link)
        return xr.Dataset(
            {
                "lengthscale": (("feature",), lengthscale),
                "amplitude": ((), amplitude),
                "constant": ((), constant),
                "latent": (("obs",), fit.mode),
                "laplace_weight": (("obs",), fit.sqrt_w**2),
            }
        ).assign_coords(self.parameter_coords(data))

    # -- prediction -------------------------------------------------------------------------------
    def class_log_proba(self, params: xr.Dataset, X: Any) -> xr.DataArray:
        """log P(class | x*): the Laplace predictive for the ``map`` estimate, else the per-draw GP conditional
        averaged per draw over f* (class docstring). Dims ``(*leading, obs, class)``."""
        features = features_as_dataarray(X, params).values
        x = params["training_input"].values
        y = params["training_label"].values
        leading = tuple(dim for dim in params["latent"].dims if dim != "obs")
        lengthscale = params["lengthscale"].transpose(*leading, "feature").values.reshape(-1, x.shape[1])
        amplitude = params["amplitude"].transpose(*leading).values.reshape(-1)
        constant = params["constant"].transpose(*leading).values.reshape(-1)
        latent = params["latent"].transpose(*leading, "obs").values.reshape(-1, x.shape[0])
        eye = np.eye(x.shape[0])
        proba = np.empty((latent.shape[0], features.shape[0]))
        for draw in range(latent.shape[0]):  # one n x n Cholesky factor per parameter draw (memory bound)
            ell, a, c = lengthscale[draw], amplitude[draw], constant[draw]
            covariance = self._covariance(x, x, ell, a, c) + self.jitter * (a**2 + c**2) * eye
            cross = self._covariance(x, features, ell, a, c)
            prior_variance = np.full(features.shape[0], a**2 + c**2)
            if "laplace_weight" in params:
                fit = laplace_fit(x, y, covariance, link=self.link)
                _, _, proba[draw] = laplace_predict(fit, cross, prior_variance)
                continue
            factor = scipy.linalg.cholesky(covariance, lower=True)
            v = scipy.linalg.solve_triangular(factor, cross, lower=True)
            mean = v.T @ scipy.linalg.solve_triangular(factor, latent[draw], lower=True)
            variance = np.maximum(prior_variance - (v**2).sum(axis=0), 0.0)
            proba[draw] = _link_average(mean, variance, self.link)
        proba = np.clip(proba, 1e-300, 1.0)
        with np.errstate(divide="ignore"):
            log_proba = np.stack([np.log1p(-np.minimum(proba, 1 - 1e-16)), np.log(proba)], axis=-1)
        shape = tuple(params.sizes[dim] for dim in leading)
        coords = {dim: params[dim].values for dim in leading if dim in params.coords}
        coords["class"] = params["class"].values
        return xr.DataArray(log_proba.reshape(*shape, features.shape[0], 2), dims=(*leading, "obs", "class"), coords=coords)


def _link_average(mean: np.ndarray, variance: np.ndarray, link: Link) -> np.ndarray:
    """E[g^{-1}(f)] for f ~ N(mean, variance): Phi(mean / sqrt(1 + variance)) or Gauss-Hermite for the logistic."""
    if link == "probit":
        return scipy.special.ndtr(mean / np.sqrt(1.0 + variance))
    z = mean[:, np.newaxis] + np.sqrt(2.0 * variance)[:, np.newaxis] * _HERMITE_NODES[np.newaxis, :]
    return scipy.special.expit(z) @ _HERMITE_WEIGHTS / np.sqrt(np.pi)
