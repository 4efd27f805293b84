r"""The latent GP written as a latent Gaussian model, for samplers that use that structure.

:meth:`LatentGaussianProcess.latent_gaussian_form` describes the family's model as

.. math::

    \vartheta = (\log \ell_1, \dots, \log \ell_d, \log a, \log c), \qquad
    \mathbf z \mid \vartheta \sim \mathcal N(0, C_\vartheta), \qquad
    y_i \mid z_i \sim \text{Bernoulli}(g^{-1}(z_i)),

exact: :math:`\mathbf z = f(X)` with :math:`C_\vartheta = K_\vartheta(X, X)` (jitter included);
HSGP: :math:`\mathbf z = \Phi \boldsymbol\beta`,
:math:`\boldsymbol\beta \sim \mathcal N(0, \mathrm{diag}(s_\vartheta^2))` with the basis :math:`\Phi`
(constant column first) and the prior standard deviations
:math:`s_\vartheta = (c, a \sqrt{S_\ell(\omega_j)})`. Both covariances scale as :math:`a^2` and
:math:`c^2` together (:math:`C_{\vartheta + t e_{a,c}} = e^{2t} C_\vartheta`), which the sampler's
scale move uses.

The functions take the array namespace ``xp`` (NumPy, or ``jax.numpy`` inside a compiled sampler) so
that one formula serves both; the kernel and the spectral density are those of
:mod:`bayesclass.models._kernels`, the priors those of the PyMC model (tested against its log density).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from bayesclass.models._kernels import KernelName, spectral_density, stationary_kernel
from bayesclass.models._links import Link

if TYPE_CHECKING:
    from bayesclass.models.gaussian_process import GaussianProcessPrior

__all__ = ["LatentGaussianForm", "LatentGaussianNames"]


@dataclass(frozen=True)
class LatentGaussianNames:
    """The posterior variables a sampler of a :class:`LatentGaussianForm` writes, and their dims.

    They are named as the family's PyMC model names them (the family fills them in; a sampler never spells them).

    Attributes
    ----------
    lengthscale, amplitude, constant : str
        The hyperparameters: ``exp`` of ``log_theta[:d]``, ``log_theta[d]`` and ``log_theta[d + 1]``.
    latent : str
        The latents: f at the training inputs (exact) or the basis weights (HSGP).
    feature_dim : str
        The dim of the lengthscales (one per input).
    latent_dim : str
        The dim of the latents (one per training row, or one per basis function).
    """

    lengthscale: str
    amplitude: str
    constant: str
    latent: str
    feature_dim: str
    latent_dim: str


@dataclass(frozen=True, eq=False)
class LatentGaussianForm:
    """A binary latent-Gaussian classifier: priors of the log hyperparameters, prior covariance of the latents.

    Attributes
    ----------
    link : {"logit", "probit"}
    labels : array (n,)
        The 0/1 labels.
    n_lengthscales : int
        d: ``log_theta`` is (log lengthscale_1..d, log amplitude, log constant).
    kernel : {"exp_quad", "matern52"}
    jitter : float
        eps of ``K = c^2 + a^2 (k + eps I)``.
    inputs : array (n, d) or None
        Exact GP: the training inputs (the latent is f at each of them).
    basis : array (n, p) or None
        HSGP: the basis at the training inputs, the constant column first (the latent is ``basis @ weights``).
    frequencies : array (p - 1, d) or None
        HSGP: the square roots of the Laplacian's eigenvalues.
    prior : GaussianProcessPrior
    names : LatentGaussianNames
        The posterior variables (and dims) of the hyperparameters and the latents, as the family's model names them.
    latent_updates : int
        A Gibbs sweep's draws of the augmentation and the latents given the hyperparameters (1: once, after the
        hyperparameters; more: again, which costs one (n, n) factorisation each where the hyperparameter step
        costs ~15, and shortens the latents' autocorrelation that the augmentation causes).
    thin : int
        Gibbs sweeps per kept draw (the sweeps between are run and dropped).
    """

    link: Link
    labels: np.ndarray
    n_lengthscales: int
    kernel: KernelName
    jitter: float
    prior: GaussianProcessPrior
    names: LatentGaussianNames
    inputs: np.ndarray | None = None
    basis: np.ndarray | None = None
    frequencies: np.ndarray | None = None
    latent_updates: int = 1
    thin: int = 1

    @property
    def n_hyperparameters(self) -> int:
        return self.n_lengthscales + 2

    @property
    def amplitude_and_constant(self) -> tuple[int, int]:
        """Positions of log a and log c in ``log_theta`` (the scale move shifts both)."""
        return self.n_lengthscales, self.n_lengthscales + 1

    @property
    def exact(self) -> bool:
        return self.basis is None

    def hyperparameters(self, log_theta, xp=np) -> dict[str, object]:
        """``{"lengthscale": (d,), "amplitude": (), "constant": ()}`` of ``log_theta``."""
        d = self.n_lengthscales
        theta = xp.exp(log_theta)
        return {"lengthscale": theta[..., :d], "amplitude": theta[..., d], "constant": theta[..., d + 1]}

    def log_prior(self, log_theta, xp=np):
        """Log p(log theta): the lengthscale prior, HalfNormal amplitude and constant, with the Jacobian of exp."""
        prior = self.prior
        d = self.n_lengthscales
        log_amplitude, log_constant = log_theta[d], log_theta[d + 1]
        lengthscales = xp.sum(prior.log_lengthscale_density(log_theta[:d], xp))

        def half_normal(log_value, sigma):
            return math.log(2.0) - 0.5 * math.log(2.0 * math.pi * sigma**2) - 0.5 * xp.exp(2.0 * log_value) / sigma**2

        return (
            lengthscales
            + half_normal(log_amplitude, prior.amplitude_sigma)
            + log_amplitude
            + half_normal(log_constant, prior.constant_sigma)
            + log_constant
        )

    def covariance(self, log_theta, xp=np):
        """Exact GP: K_theta(X, X) = c^2 + a^2 (k + eps I), (n, n)."""
        parts = self.hyperparameters(log_theta, xp)
        stationary = self.stationary(log_theta[: self.n_lengthscales], xp)
        n = self.inputs.shape[0]
        return parts["constant"] ** 2 + parts["amplitude"] ** 2 * (stationary + self.jitter * xp.eye(n))

    def stationary(self, log_lengthscale, xp=np):
        """Exact GP: k(X, X) of the stationary term alone (unit amplitude, no jitter), (n, n)."""
        scaled = self.inputs / xp.exp(log_lengthscale)
        return stationary_kernel(scaled, scaled, self.kernel, xp)

    def prior_sd(self, log_theta, xp=np):
        """HSGP: the prior standard deviations of the basis weights, (p,): c, then a sqrt(S_l(omega_j))."""
        parts = self.hyperparameters(log_theta, xp)
        density = spectral_density(self.frequencies, parts["lengthscale"], self.kernel, xp)
        return xp.concatenate([parts["constant"][None], parts["amplitude"] * xp.sqrt(density)])

    def initial_log_theta(self) -> np.ndarray:
        """A start: the priors' medians (lengthscale, amplitude, constant)."""
        import scipy.stats

        prior = self.prior
        lengthscale = prior.lengthscale_median()
        half_normal = scipy.stats.halfnorm.median()
        return np.log(
            np.concatenate(
                [
                    np.full(self.n_lengthscales, lengthscale),
                    [prior.amplitude_sigma * half_normal, prior.constant_sigma * half_normal],
                ]
            )
        )
