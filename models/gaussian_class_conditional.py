r"""Gaussian class-conditional classifiers: shared covariance (LDA) and per-class covariance (QDA).

Model (seed 001 §B, seed 002 "Gaussian class-conditional densities", seed 000 §9.4, seed 004 "Gaussian Generative
Models")
-----------------------------------------------------------------------------------------------------------------------------
Each class :math:`k = 1..K` has a prior probability :math:`\pi_k` and a
multivariate Gaussian density over the :math:`d` (continuous) features

.. math::

    \pi \sim \text{Dirichlet}(\alpha), \qquad
    p(\mathbf{x} \mid C_k) = \mathcal{N}(\mathbf{x} \mid \boldsymbol\mu_k, \boldsymbol\Sigma_k)

with :math:`\boldsymbol\Sigma_k = \boldsymbol\Sigma` for every class (``covariance="shared"``,
LDA) or one covariance per class (``covariance="per-class"``, QDA). Two priors on
the means and covariances are offered (:class:`GaussianClassConditionalPrior`):

``covariance_prior="lkj"`` (default; sampled by NUTS)
    :math:`\mu_{ki} \sim \mathcal{N}(m_{0i}, s_{0i}^2)`, :math:`\boldsymbol\Sigma = \operatorname{diag}(\sigma)
    \mathbf{C} \operatorname{diag}(\sigma)`
    with standard deviations :math:`\sigma_i \sim \text{HalfNormal}(\tau_i)` and
    correlations :math:`\mathbf{C} \sim \text{LKJ}(\eta)` (``pm.LKJCorr``, which
    returns the Cholesky factor of :math:`\mathbf{C}`).
``covariance_prior="inverse_wishart"`` (conjugate)
    :math:`\boldsymbol\Sigma \sim \mathcal{W}^{-1}(\boldsymbol\Psi_0, \nu_0)`,
    :math:`\boldsymbol\mu_k \mid \boldsymbol\Sigma \sim \mathcal{N}(\mathbf{m}_0, \boldsymbol\Sigma/\kappa_0)`
    (Normal-Inverse-Wishart); ``method="exact"`` draws from its posterior and
    the posterior predictive is a multivariate Student-t (below).

By default (``autoscale=True``) the priors are stated in each feature's units:
:math:`m_0` is the pooled training mean, :math:`s_0 = ` ``mean_sigma`` and
:math:`\tau = ` ``sd_sigma`` times the pooled standard deviation, and
:math:`\boldsymbol\Psi_0 = ` ``wishart_scale`` :math:`\times \operatorname{diag}` (pooled variances).

Posterior variables: ``class_prior`` (class), ``class_mean`` (class, feature),
``covariance`` (feature, other_feature) shared or (class, feature, other_feature)
per class.

Likelihood by sufficient statistics
-----------------------------------
With class counts :math:`N_k`, class means :math:`\bar{\mathbf{x}}_k` and scatter
matrices :math:`\mathbf{S}_k = \sum_{t_n = k} (\mathbf{x}_n - \bar{\mathbf{x}}_k)(\mathbf{x}_n -
\bar{\mathbf{x}}_k)^\top`
the log likelihood (seed 001 eqs 5-6) is

.. math::

    \sum_k N_k \log \pi_k - \sum_k \Big[\frac{N_k}{2} \log |2\pi \boldsymbol\Sigma_k|
      + \tfrac12 \operatorname{tr}\big(\boldsymbol\Sigma_k^{-1} (\mathbf{S}_k + N_k (\bar{\mathbf{x}}_k -
      \boldsymbol\mu_k)(\bar{\mathbf{x}}_k - \boldsymbol\mu_k)^\top)\big)\Big]

exactly, so the PyMC model (:meth:`GaussianClassConditional.build`) sees only
those statistics (``pm.Data``) and a gradient costs :math:`O(K d^3)` whatever
the number of rows. With :math:`\boldsymbol\Sigma_k = \mathbf{L}_k \mathbf{L}_k^\top` and
:math:`\mathbf{S}_k = \mathbf{R}_k \mathbf{R}_k^\top` the trace is the squared Frobenius norm
of one triangular solve :math:`\mathbf{L}_k^{-1} [\mathbf{R}_k, \sqrt{N_k}(\bar{\mathbf{x}}_k - \boldsymbol\mu_k)]`.
``build(data, likelihood="per_observation")`` is the textbook per-row model
(``pm.MvNormal`` observed, ``pm.Categorical`` labels), kept for tests and benchmarks.

Closed forms (``point_estimate(data, kind)``)
--------------------------------------------
``"mle"``
    :math:`\pi_k = N_k/N` (seed 001 eq 7), :math:`\boldsymbol\mu_k = \bar{\mathbf{x}}_k`
    (eqs 8-9), :math:`\boldsymbol\Sigma = \sum_k \frac{N_k}{N}\mathbf{S}_k/N_k = \sum_k \mathbf{S}_k / N`
    (eq 10) shared, :math:`\boldsymbol\Sigma_k = \mathbf{S}_k/N_k` per class.
``"unbiased"``
    the MLE with :math:`\sum_k \mathbf{S}_k/(N - K)` shared, :math:`\mathbf{S}_k/(N_k - 1)` per class.
``"map"``
    the joint posterior mode in :math:`(\pi, \boldsymbol\mu, \boldsymbol\Sigma)`:
    :math:`\pi_k = (N_k + \alpha - 1)/(N + K\alpha - K)`; under the inverse-Wishart
    prior :math:`\boldsymbol\mu_k = \mathbf{m}_k`, :math:`\boldsymbol\Sigma = \boldsymbol\Psi_n/(\nu_n + d + 1 + K)`
    shared and :math:`\boldsymbol\Psi_k/(\nu_k + d + 2)` per class; under the LKJ prior a
    numerical optimum (L-BFGS on an analytic gradient) of the log density
    :math:`\log p(D \mid \cdot) + \log p(\boldsymbol\mu) + \log p(\boldsymbol\Sigma)` with
    :math:`\log p(\boldsymbol\Sigma) = (\eta - 1)\log|\boldsymbol\Sigma| - (\eta - 1 + d/2)\sum_i \log\Sigma_{ii} -
    \sum_i \Sigma_{ii}/(2\tau_i^2)`
    (the LKJ and half-normal densities moved to :math:`\boldsymbol\Sigma` by the
    Jacobian :math:`2^d \prod_i \sigma_i^d` of :math:`(\sigma, \mathbf{C}) \mapsto \boldsymbol\Sigma`).
``"posterior_mean"`` (inverse-Wishart prior)
    :math:`\mathbb{E}[\pi_k] = (N_k + \alpha)/(N + K\alpha)`, :math:`\mathbf{m}_k`,
    :math:`\boldsymbol\Psi/(\nu - d - 1)`.
``"posterior_predictive"`` (inverse-Wishart prior)
    not a plug-in: the exact posterior predictive
    :math:`P(C_k \mid \mathbf{x}, D) \propto \mathbb{E}[\pi_k]\, t_{\nu - d + 1}\big(\mathbf{x} \mid \mathbf{m}_k,
    \tfrac{\kappa_k + 1}{\kappa_k (\nu - d + 1)} \boldsymbol\Psi\big)`, a multivariate
    Student-t per class (:math:`\pi` and :math:`(\boldsymbol\mu, \boldsymbol\Sigma)` are
    independent a posteriori, so the product of the two predictives is exact).
    Stored as ``class_mean`` = :math:`\mathbf{m}_k`, ``covariance`` = :math:`\boldsymbol\Psi/(\nu - d + 1)`,
    ``predictive_scale_factor`` = :math:`(\kappa_k + 1)/\kappa_k` and
    ``predictive_dof`` = :math:`\nu - d + 1` per class; :meth:`GaussianClassConditional.class_log_proba`
    evaluates the Student-t when ``predictive_dof`` is present.

The NIW posterior: :math:`\kappa_k = \kappa_0 + N_k`,
:math:`\mathbf{m}_k = (\kappa_0 \mathbf{m}_0 + N_k \bar{\mathbf{x}}_k)/\kappa_k`, and per class
:math:`\nu_k = \nu_0 + N_k`, :math:`\boldsymbol\Psi_k = \boldsymbol\Psi_0 + \mathbf{S}_k + \frac{\kappa_0
N_k}{\kappa_k}(\bar{\mathbf{x}}_k - \mathbf{m}_0)(\bar{\mathbf{x}}_k - \mathbf{m}_0)^\top`;
shared, :math:`\nu_n = \nu_0 + N` and :math:`\boldsymbol\Psi_n` sums those terms over classes.

Estimates that do not exist (a singular scatter matrix: a class with no more rows
than features for QDA, a feature constant within a class, more features than
rows, collinear features) raise :class:`~models.base.NoEstimateError` naming the
class and the remedy: ``regularization`` (shrinks the ML covariance towards the
diagonal of the pooled feature variances, :math:`(1 - r)\hat{\boldsymbol\Sigma} + r \operatorname{diag}(s^2)`),
the inverse-Wishart prior's MAP, or the NUTS posterior.

Standard errors and Wald intervals (``gaussian_approximation(data, kind)``)
-------------------------------------------------------------------------
Normal approximations over ``class_prior``, ``class_mean`` and ``covariance`` flattened (both copies of each
symmetric covariance element, perfectly correlated), all in closed form or by an analytic Hessian, no bootstrap:
the MLE's inverse Fisher information (= its inverse observed information),
:math:`(\operatorname{diag}\pi - \pi\pi^\top)/N`, :math:`\boldsymbol\Sigma_k/N_k`,
:math:`\operatorname{Cov}(\Sigma_{ij}, \Sigma_{kl}) = (\Sigma_{ik}\Sigma_{jl} + \Sigma_{il}\Sigma_{jk})/N_g`,
blocks independent; the unbiased estimate's exact (Wishart) sampling covariance, plugged in; the MAP's inverse
Hessian of the negative log posterior (closed form under inverse-Wishart, analytic under LKJ). The MAP is the
joint mode in :math:`(\boldsymbol\mu, \boldsymbol\Sigma)`, whose covariance divides :math:`\boldsymbol\Psi` by
:math:`\nu + d + 1 + K` rather than the posterior mean's :math:`\nu - d - 1`: with many features and few rows
per class its Laplace standard errors are narrower than the posterior's sd (wine, 13 features, about 35 rows a
class: 0.058 vs 0.080 for a class mean). None for the posterior mean and the Student-t predictive, for
regularised MLEs, and beyond :data:`MAX_APPROXIMATION_PARAMETERS` parameters
(:meth:`GaussianClassConditional._gaussian_approximation`).

Relation to scikit-learn (1.9)
------------------------------
``LinearDiscriminantAnalysis()`` (solvers ``svd``, ``lsqr``, ``eigen``; no shrinkage)
fits exactly the ``"mle"`` shared-covariance classifier: ``priors_`` are
:math:`N_k/N`, ``means_`` the class means and the covariance the
:math:`N_k/N`-weighted average of the biased (ddof 0) class covariances.
``QuadraticDiscriminantAnalysis()`` (``reg_param=0``) fits the ``"mle"`` per-class
classifier: since scikit-learn 1.6 its class covariances use ddof 0 (earlier
versions divided by :math:`N_k - 1`, which is the ``"unbiased"`` kind here). Its
``reg_param`` shrinks towards the identity in raw units; ``regularization`` here
shrinks towards the pooled variances, which does not depend on the units.

Decision boundaries
-------------------
With a shared covariance :math:`\log P(C_k \mid \mathbf{x}) = a_k(\mathbf{x}) - \log\sum_j e^{a_j(\mathbf{x})}`,
:math:`a_k(\mathbf{x}) = \mathbf{w}_k^\top \mathbf{x} + w_{k0}`,
:math:`\mathbf{w}_k = \boldsymbol\Sigma^{-1}\boldsymbol\mu_k`,
:math:`w_{k0} = -\tfrac12 \boldsymbol\mu_k^\top \boldsymbol\Sigma^{-1}\boldsymbol\mu_k + \log\pi_k`
(seed 001 §D eq 12, seed 002): :meth:`GaussianClassConditional.linear_discriminant`
returns them for a point estimate or for every posterior draw, and
:meth:`GaussianClassConditional.decision_boundary` the hyperplane
:math:`(\mathbf{w}_k - \mathbf{w}_j)^\top \mathbf{x} + (w_{k0} - w_{j0}) = 0` (seed 001 eq 14;
for two classes :math:`\mathbf{w} = \boldsymbol\Sigma^{-1}(\boldsymbol\mu_1 - \boldsymbol\mu_2)`, seed 002).
Per-class covariances give the quadratic log-odds of seed 000 eq 9.16.

Generative sampling
-------------------
:meth:`GaussianClassConditional.simulate` draws synthetic labelled data from a
fitted model (seed 001 §B.1: a class with probability :math:`\pi_k`, then
:math:`\mathbf{x} \sim \mathcal{N}(\boldsymbol\mu_k, \boldsymbol\Sigma_k)`);
:meth:`GaussianClassConditional.sample_features` draws features for given labels
under every posterior draw, which ``inference.posterior_predictive_check`` uses.

Example: seed 001's generator, recovered by the MLE

>>> from bayesclass.data import seed001_gaussians
>>> from bayesclass.models.gaussian_class_conditional import GaussianClassConditional
>>> data = seed001_gaussians(20_000, random_seed=1)
>>> lda = GaussianClassConditional(covariance="shared")
>>> boundary = lda.decision_boundary(lda.point_estimate(data, "mle"), "C1", "C2")
>>> boundary["weight"].round(2).values.tolist(), round(float(boundary["bias"]), 2)   # true: [1, -1], ln(7/3) = 0.85
([0.98, -1.0], 0.88)
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

import numpy as np

from bayesclass._lazy import lazy_import
from bayesclass.data import Dataset
from bayesclass.data.arguments import spelled
from bayesclass.data.constraints import Constrained, Finite, InRange, Positive, renamed_from
from bayesclass.models._transformed_laplace import (
    TransformedPosterior,
    closed_form_posterior,
    numerical_derivatives,
    simplex_log_density,
    simplex_mode,
    simplex_point,
)
from bayesclass.models.approximation import GaussianApproximation
from bayesclass.models.base import (
    ClassProbaKernel,
    ConvergenceError,
    GenerativeClassifierModel,
    NoEstimateError,
    ReadOnlyArrays,
    affine,
    check_class_codes,
    kernel_of,
    rows_of_class,
)

if TYPE_CHECKING:
    import pymc as pm
    import pytensor.tensor as pt
    import scipy
    import xarray as xr
else:
    scipy = lazy_import("scipy")  # SciPy loads its submodules (scipy.special ...) on first use
    pm = lazy_import("pymc")
    pt = lazy_import("pytensor.tensor")
    xr = lazy_import("xarray")

__all__ = [
    "MAX_APPROXIMATION_PARAMETERS",
    "CovarianceKind",
    "CovariancePrior",
    "GaussianClassConditional",
    "GaussianClassConditionalPrior",
]

#: fits of one structure in a process after which nutpie's slower first compile is recovered by its faster
#: sampling, per covariance structure (bench/bench_backends.py, 2026-11-27, idle: the extra first-fit time on a fresh
#: machine over the time saved per refit: 40.4 s / 1.20 s shared; per class 60.7 s / 3.19 s and, in a second run,
#: 64.7 s / 2.34 s, the larger kept; with warm on-disk caches 4-7)
NUTPIE_BREAK_EVEN = {"shared": 34, "per-class": 28}

CovarianceKind = Literal["shared", "per-class"]
CovariancePrior = Literal["lkj", "inverse_wishart"]
Likelihood = Literal["sufficient_statistics", "per_observation"]

#: the most parameters (K + K d + G d^2) whose dense covariance ``gaussian_approximation`` states (8 MB a kind)
MAX_APPROXIMATION_PARAMETERS = 1000


_PRIOR = "GaussianClassConditionalPrior"  # how a message names the prior's class, from Python


def _inverse_wishart() -> str:
    """The conjugate covariance prior, as the user of the current interface sets it (a message's fix)."""
    return spelled("covariance_prior", "inverse_wishart", owner=_PRIOR)


@dataclass(frozen=True, kw_only=True)
class GaussianClassConditionalPrior(Constrained):
    r"""Hyperparameters of the Gaussian class-conditional priors (see the module docstring).

    Parameters
    ----------
    covariance_prior : {"lkj", "inverse_wishart"}
        LKJ correlations with half-normal standard deviations and independent
        normal means (NUTS only), or the conjugate Normal-Inverse-Wishart prior
        (NUTS, exact draws, closed-form MAP, posterior mean and Student-t predictive).
    class_concentration : float
        :math:`\alpha` of the symmetric Dirichlet prior on the class probabilities; 1 is uniform.
    mean_sigma : float
        LKJ prior: standard deviation of the normal prior on every class mean, in
        pooled standard deviations (raw units without ``autoscale``).
    sd_sigma : float
        LKJ prior: scale of the half-normal prior on each feature's standard
        deviation, in pooled standard deviations (raw units without ``autoscale``).
    lkj_eta : float
        LKJ prior: :math:`\eta` of the correlations; 1 is uniform over correlation
        matrices, larger values favour weak correlations.
    mean_strength : float
        Inverse-Wishart prior: :math:`\kappa_0`, the prior on a class mean is worth
        this many observations.
    wishart_dof_offset : float
        Inverse-Wishart prior: :math:`\nu_0 = d + 1 + ` offset (> -2, so that
        :math:`\nu_0 > d - 1`); the default 1 gives the weakest prior whose mean
        :math:`\boldsymbol\Psi_0 / (\nu_0 - d - 1)` exists.
    wishart_scale : float
        Inverse-Wishart prior: :math:`\boldsymbol\Psi_0` = this times the diagonal of the pooled
        feature variances (the identity in raw units without ``autoscale``).
    mean_center : float
        :math:`m_0` of every feature without ``autoscale`` (otherwise the pooled mean).
    autoscale : bool
        State the priors in each feature's own units (pooled training mean and
        standard deviation), so that they do not depend on the units of the data.
    """

    covariance_prior: CovariancePrior = "lkj"
    class_concentration: Annotated[float, Positive()] = 1.0
    mean_sigma: Annotated[float, Positive()] = field(default=10.0, metadata=renamed_from("mean_scale"))
    sd_sigma: Annotated[float, Positive()] = field(default=2.5, metadata=renamed_from("sd_scale"))
    lkj_eta: Annotated[float, Positive()] = 2.0
    mean_strength: Annotated[float, Positive()] = 0.01
    wishart_dof_offset: Annotated[
        float, Finite(), InRange(-2, None, closed="neither", fix="nu_0 = d + 1 + offset must exceed d - 1")
    ] = 1.0
    wishart_scale: Annotated[float, Positive()] = 1.0
    mean_center: Annotated[float, Finite()] = 0.0
    autoscale: bool = True


# ---------------------------------------------------------------------------------------------
# sufficient statistics and posterior hyperparameters


@dataclass(frozen=True, eq=False)
class _Statistics(ReadOnlyArrays):
    """Sufficient statistics of the training data (read-only arrays, shared through a cache)."""

    class_counts: np.ndarray  # (K,)
    class_means: np.ndarray  # (K, d)
    #: (G, d, d) scatter about the class means, summed over each covariance group: G = 1 (shared,
    #: the pooled within-class scatter W = sum_k S_k) or K (per class, S_k)
    scatter: np.ndarray
    pooled_mean: np.ndarray  # (d,)
    pooled_variance: np.ndarray  # (d,) ddof 0


def _statistics(data: Dataset, *, per_class: bool) -> _Statistics:
    """Counts, class means and scatter matrices in a few matrix products (no loop over classes).

    Shared: W = C'C with C the rows centred on their class means (one product).
    Per class: the centred rows are sorted by class into a zero-padded (K, max N_k, d)
    array, so that every S_k comes from one batched matrix product.
    """
    X, y, K = data.X, data.y, data.n_classes
    counts = np.bincount(y, minlength=K).astype(float)
    means = (np.eye(K)[y].T @ X) / counts[:, np.newaxis]
    if per_class:
        order = np.argsort(y, kind="stable")
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.intp)
        padded = np.zeros((K, int(counts.max()), X.shape[1]))
        padded[y[order], np.arange(len(y)) - starts[y[order]]] = X[order] - means[y[order]]
        scatter = padded.transpose(0, 2, 1) @ padded
    else:
        centred = X - means[y]
        scatter = (centred.T @ centred)[np.newaxis]
    return _Statistics(
        class_counts=counts,
        class_means=means,
        scatter=(scatter + scatter.transpose(0, 2, 1)) / 2,
        pooled_mean=X.mean(axis=0),
        pooled_variance=X.var(axis=0),
    )


def _constant_within_class(data: Dataset) -> np.ndarray:
    """(K, d) True where a feature takes one value on every row of the class (decided on the values)."""
    highest = np.full((data.n_classes, data.n_features), -np.inf)
    lowest = np.full((data.n_classes, data.n_features), np.inf)
    np.maximum.at(highest, data.y, data.X)
    np.minimum.at(lowest, data.y, data.X)
    return highest == lowest


@dataclass(frozen=True, eq=False)
class _PriorConstants(ReadOnlyArrays):
    """Data-dependent constants of the priors (pooled units when autoscaled)."""

    center: np.ndarray  # m_0 (d,)
    unit: np.ndarray  # feature scale (d,): pooled sd with autoscale, else 1
    mean_sd: np.ndarray  # LKJ: s_0 (d,)
    sd_scale: np.ndarray  # LKJ: tau (d,)
    wishart_scale: np.ndarray  # NIW: diagonal of Psi_0 (d,)
    wishart_dof: float  # NIW: nu_0


@dataclass(frozen=True, eq=False)
class _Conjugate(ReadOnlyArrays):
    """Normal-Inverse-Wishart posterior; ``scale``/``dof`` have a leading group axis (1 shared, K per class)."""

    class_concentration: np.ndarray  # (K,)
    mean: np.ndarray  # m_k (K, d)
    mean_strength: np.ndarray  # kappa_k (K,)
    scale: np.ndarray  # Psi (G, d, d)
    dof: np.ndarray  # nu (G,)


def _scatter_root(scatter: np.ndarray) -> np.ndarray:
    """R with R R' = scatter for symmetric positive semi-definite (..., d, d) (eigendecomposition)."""
    values, vectors = np.linalg.eigh(scatter)
    return vectors * np.sqrt(np.clip(values, 0.0, None))[..., np.newaxis, :]


# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class GaussianClassConditional(GenerativeClassifierModel):
    r"""Gaussian class-conditional classifier (LDA / QDA), registry name ``gcc``.

    Parameters
    ----------
    covariance : {"shared", "per-class"}
        One covariance for every class (linear boundaries, LDA) or one per class
        (quadratic boundaries, QDA, seed 000 eq 9.16).
    prior : GaussianClassConditionalPrior
        Priors; the default is the LKJ prior with weak autoscaled scales.
    regularization : float
        In [0, 1): the ``"mle"`` and ``"unbiased"`` covariances become
        :math:`(1 - r)\hat{\boldsymbol\Sigma} + r \operatorname{diag}(s^2)` with
        :math:`s^2` the pooled feature variances, which makes them exist when
        a class has fewer rows than features, a feature is constant within a
        class, or features are collinear. 0 (default) is the textbook estimate.

    Notes
    -----
    See the module docstring for the model, the sufficient-statistic likelihood,
    the closed forms and the relation to scikit-learn.
    """

    covariance: CovarianceKind = "shared"
    prior: GaussianClassConditionalPrior = field(default_factory=GaussianClassConditionalPrior)
    regularization: Annotated[float, InRange(0, 1, closed="left", fix="e.g. 0.1")] = 0.0

    name: ClassVar[str] = "gcc"
    prior_variables: ClassVar[dict[str, str]] = {
        "prior.class_concentration": "class_prior",
        "prior.mean_sigma": "class_mean",
        "prior.sd_sigma": "feature_sd",
        "prior.lkj_eta": "correlation",
        "prior.mean_strength": "class_mean",
        "prior.wishart_scale": "covariance",
        "prior.wishart_dof_offset": "covariance",
    }
    #: the hyperparameters of each covariance prior (the others set nothing under it)
    _covariance_prior_fields: ClassVar[dict[str, tuple[str, ...]]] = {
        "lkj": ("prior.mean_sigma", "prior.sd_sigma", "prior.lkj_eta"),
        "inverse_wishart": ("prior.mean_strength", "prior.wishart_scale", "prior.wishart_dof_offset"),
    }
    laplace_space = "transformed"  # fit(method="laplace") in the PyMC model's unconstrained space
    derived_quantities_title: ClassVar[str] = (
        "Linear discriminants of the shared covariance: a_k(x) = w_k . x + w_k0 (seed 001 §D, seed 002)"
    )

    @property
    def _shared(self) -> bool:
        return self.covariance == "shared"

    @property
    def _conjugate_prior(self) -> bool:
        return self.prior.covariance_prior == "inverse_wishart"

    def prior_formulas(self, *, n_classes: int | None = None) -> tuple[str, ...]:
        """The prior and likelihood as plain-text formulas, one statement per line (module docstring).

        Parameters
        ----------
        n_classes : int, optional
            Unused: the statements are the same for any number of classes.

        Returns
        -------
        tuple of str
            The class prior and likelihood, the prior of the means and covariance(s) (LKJ or
            inverse-Wishart), and the units of the prior scales.
        """
        prior = self.prior
        per = "[class]" if self.covariance == "per-class" else ""
        units = (
            "m_0, s_j: pooled training mean and standard deviation of feature j"
            if prior.autoscale
            else f"m_0 = {prior.mean_center:g}, s_j = 1 (raw units)"
        )
        head = (
            f"class_prior ~ Dirichlet({prior.class_concentration:g}, ...);  y ~ Categorical(class_prior);  "
            f"x | c ~ MultivariateNormal(class_mean[c], covariance{per})  ({self.covariance} covariance)"
        )
        if prior.covariance_prior == "lkj":
            return (
                head,
                f"class_mean[c, j] ~ Normal(m_0, ({prior.mean_sigma:g} s_j)^2);  feature_sd{per}[j] ~ "
                f"HalfNormal({prior.sd_sigma:g} s_j);  correlation{per} ~ LKJ(eta = {prior.lkj_eta:g})",
                units,
            )
        return (
            head,
            f"covariance{per} ~ InverseWishart(Psi_0 = {prior.wishart_scale:g} diag(s_j^2), nu_0 = d + 1 + "
            f"{prior.wishart_dof_offset:g});  class_mean[c] | covariance ~ MultivariateNormal(m_0, covariance / "
            f"{prior.mean_strength:g})",
            units,
        )

    def hyperparameter_priors(self, *, n_classes: int | None = None) -> dict[str, str]:
        """The base's statements, less the hyperparameters of the covariance prior this instance does not use.

        Parameters
        ----------
        n_classes : int, optional
            As the base method.

        Returns
        -------
        dict of str to str
            Dotted hyperparameter name -> its prior statement.
        """
        unused = {
            name
            for kind, names in self._covariance_prior_fields.items()
            if kind != self.prior.covariance_prior
            for name in names
        }
        return {
            name: statement
            for name, statement in super().hyperparameter_priors(n_classes=n_classes).items()
            if name not in unused
        }

    def available_point_estimates(self) -> tuple[str, ...]:
        """The point estimate kinds of this instance, which depend on the covariance prior.

        Returns
        -------
        tuple of str
            All kinds under the inverse-Wishart prior; ``mle``, ``map``, ``unbiased`` under LKJ.
        """
        if self._conjugate_prior:
            return ("mle", "map", "unbiased", "posterior_mean", "posterior_predictive")
        return ("mle", "map", "unbiased")

    def predictive_kinds(self) -> tuple[str, ...]:
        """The kinds that are exact posterior predictive distributions, not parameter plug-ins.

        Returns
        -------
        tuple of str
            ``("posterior_predictive",)`` (the exact Student-t predictive) under the inverse-Wishart prior,
            none under LKJ.
        """
        return ("posterior_predictive",) if self._conjugate_prior else ()

    def has_exact(self) -> bool:
        """Whether :meth:`exact_posterior` draws from a conjugate posterior for these hyperparameters.

        Returns
        -------
        bool
            True under the conjugate (inverse-Wishart) covariance prior.
        """
        return self._conjugate_prior

    def parameter_names(self, data: Dataset) -> tuple[str, ...]:
        """The parameters of the model of ``data``.

        Parameters
        ----------
        data : Dataset
            Training data (the names are the same for any data).

        Returns
        -------
        tuple of str
            ``("class_prior", "class_mean", "covariance")``.
        """
        return ("class_prior", "class_mean", "covariance")

    def unavailable_hint(self, method: str) -> str:
        """How to get a ``method`` that only the conjugate prior offers.

        Parameters
        ----------
        method : str
            The fit method or point estimate kind asked for.

        Returns
        -------
        str
            Under the LKJ prior, for ``exact``, ``posterior_mean`` or ``posterior_predictive``: the prior to
            choose instead (``"; it needs ..."``); otherwise ``""``.
        """
        if not self._conjugate_prior and method in ("exact", "posterior_mean", "posterior_predictive"):
            return f"; it needs the conjugate prior {_inverse_wishart()}"
        return ""

    # -- data -------------------------------------------------------------------------------------
    def check_training_data(self, data: Dataset) -> None:
        """The base checks, plus: every feature continuous, none constant over the training rows.

        Parameters
        ----------
        data : Dataset
            Training data.

        Raises
        ------
        ValueError
            If the base checks fail, a feature is not continuous, or a feature is constant.
        """
        super().check_training_data(data)
        other = [
            f"{name!r} ({kind})"
            for name, kind in zip(data.feature_names, data.feature_kinds, strict=True)
            if kind != "continuous"
        ]
        if other:
            raise ValueError(
                f"the gcc model needs continuous features; {', '.join(other)} of {data.name!r} are not: drop them, "
                "declare them continuous, or use the naive_bayes model, which models each kind"
            )
        constant = [data.feature_names[j] for j in np.flatnonzero(np.ptp(data.X, axis=0) == 0)]
        if constant:
            raise ValueError(
                f"feature(s) {', '.join(map(repr, constant))} of {data.name!r} are constant over the training rows "
                "(zero variance), so no covariance involving them can be estimated; drop them"
            )

    def repeated_fits_backend(self) -> tuple[str, float] | None:
        """The nutpie backend for many fits of one structure: it samples this model faster than blackjax.

        bench/bench_backends.py (bench/README.md; wine, 4 x 1,000 draws, idle 2-core machine): a refit takes
        1.31 s with nutpie against 2.52 s with blackjax for a shared covariance, 2.33 s against 5.52 s per class
        (blackjax's NUTS costs about 30 us of XLA bookkeeping per leapfrog step besides the 5-11 us gradient, and
        takes more steps per class). nutpie's first compile costs 40-61 s more on a fresh machine, recovered after
        :data:`NUTPIE_BREAK_EVEN` fits of one structure in a process.

        Returns
        -------
        tuple of (str, float)
            ``("nutpie", break-even number of fits)`` for the covariance structure.
        """
        return ("nutpie", NUTPIE_BREAK_EVEN["shared" if self._shared else "per-class"])

    def coords(self, data: Dataset) -> dict[str, Any]:
        """The coordinates of the model of ``data`` and of its parameter sets.

        Parameters
        ----------
        data : Dataset
            Training data.

        Returns
        -------
        dict
            ``class``, ``feature``, ``other_feature`` (second axis of a covariance); the model also has
            ``scatter_column`` and ``feature_pair``.
        """
        names = list(data.feature_names)
        lower = np.tril_indices(len(names), -1)
        return {
            "class": list(data.class_names),
            "feature": names,
            "other_feature": names,
            "scatter_column": [f"column {j}" for j in range(len(names))],
            "feature_pair": [f"{names[i]},{names[j]}" for i, j in zip(*lower, strict=True)],
        }

    @functools.lru_cache(maxsize=4)  # noqa: B019 -- Datasets are immutable; build, draws and estimates share one pass
    def _fitted(self, data: Dataset) -> tuple[_Statistics, _PriorConstants, _Conjugate | None]:
        stats = _statistics(data, per_class=not self._shared)
        prior, d = self.prior, data.n_features
        if prior.autoscale:
            center, unit = stats.pooled_mean.copy(), np.sqrt(stats.pooled_variance)
        else:
            center, unit = np.full(d, prior.mean_center), np.ones(d)
        constants = _PriorConstants(
            center=center,
            unit=unit,
            mean_sd=prior.mean_sigma * unit,
            sd_scale=prior.sd_sigma * unit,
            wishart_scale=prior.wishart_scale * unit**2,
            wishart_dof=d + 1 + prior.wishart_dof_offset,
        )
        conjugate = self._niw_posterior(stats, constants) if self._conjugate_prior else None
        return stats, constants, conjugate

    @functools.lru_cache(maxsize=4)  # noqa: B019 -- as _fitted: the MAP and its Hessian share one optimisation
    def _lkj_mode(self, data: Dataset) -> tuple[np.ndarray, np.ndarray]:
        """The LKJ-prior MAP's means (K, d) and covariances (G, d, d), read-only (NoEstimateError if singular)."""
        stats, constants, _ = self._fitted(data)
        self._check_scatter(stats, data, estimate="LKJ-prior MAP")
        mean, covariance = _lkj_map(stats, constants, self.prior.lkj_eta, shared=self._shared)
        mean.flags.writeable = covariance.flags.writeable = False
        return mean, covariance

    def _niw_posterior(self, stats: _Statistics, constants: _PriorConstants) -> _Conjugate:
        kappa0, n = self.prior.mean_strength, stats.class_counts
        kappa = kappa0 + n
        offset = stats.class_means - constants.center
        between = (kappa0 * n / kappa)[:, np.newaxis, np.newaxis] * offset[:, :, np.newaxis] * offset[:, np.newaxis, :]
        if self._shared:
            scale, dof = stats.scatter + between.sum(axis=0, keepdims=True), np.array([constants.wishart_dof + n.sum()])
        else:
            scale, dof = stats.scatter + between, constants.wishart_dof + n
        return _Conjugate(
            class_concentration=self.prior.class_concentration + n,
            mean=(kappa0 * constants.center + n[:, np.newaxis] * stats.class_means) / kappa[:, np.newaxis],
            mean_strength=kappa,
            scale=scale + np.diag(constants.wishart_scale),
            dof=dof,
        )

    # -- PyMC model -------------------------------------------------------------------------------
    def build(self, data: Dataset, *, likelihood: Likelihood = "sufficient_statistics") -> pm.Model:
        r"""The PyMC model (module docstring).

        Parameters
        ----------
        data : Dataset
            Training data (continuous features).
        likelihood : {"sufficient_statistics", "per_observation"}
            The model on the class counts, means and scatter matrices (default;
            cost independent of the number of rows), or the textbook per-row model
            with the same priors and the same posterior (for tests and benchmarks).

        Returns
        -------
        pymc.Model
            The model, dims as in :meth:`coords` (and ``obs`` for the per-row likelihood).

        Raises
        ------
        ValueError
            If ``likelihood`` is not one of the two forms, or the data fail :meth:`check_training_data`.

        Notes
        -----
        Every data-derived array is a ``pm.Data`` container, so a compiled model is
        reused for new data of the same shape (see ``inference.sampling``). Every
        trace term :math:`\operatorname{tr}(\boldsymbol\Sigma^{-1}\mathbf{B}\mathbf{B}^\top)` of the
        model (scatter, class means, and under the inverse-Wishart prior
        :math:`\boldsymbol\Psi_0` and the prior of the means) is a block of columns of
        ONE triangular solve :math:`\mathbf{L}^{-1}[\mathbf{B}_1, \mathbf{B}_2, \dots]`:
        each solve adds seconds to nutpie's compilation.

        Under the inverse-Wishart prior the free variables are ``class_mean`` and
        the Cholesky factor :math:`\mathbf{L} = \operatorname{diag}(u)\tilde{\mathbf{L}}` of
        :math:`\boldsymbol\Sigma` (``cholesky_log_diagonal`` = :math:`\log\tilde L_{ii}`,
        ``cholesky_lower`` = the strict lower triangle of :math:`\tilde{\mathbf{L}}`, :math:`u` the
        feature units), with the log Jacobian :math:`\sum_i (d - i + 1)\log L_{ii}`
        (0-based :math:`i`) of that map to :math:`\boldsymbol\Sigma`; the density terms are
        ``pm.Potential``\ s.
        """
        if likelihood not in ("sufficient_statistics", "per_observation"):
            raise ValueError(f"likelihood must be 'sufficient_statistics' or 'per_observation', got {likelihood!r}")
        self.check_training_data(data)
        stats, constants, _ = self._fitted(data)
        prior, d, K = self.prior, data.n_features, data.n_classes
        group = () if self._shared else ("class",)
        batch = () if self._shared else (K,)
        # blocks of columns B whose trace terms -1/2 tr(Sigma^-1 B B') enter a potential, and the
        # potentials' multiples of log|L| = sum_i log L_ii
        blocks: dict[str, Any] = {}
        with pm.Model(coords=self.model_coords(data)) as model:
            class_prior = pm.Dirichlet("class_prior", a=np.full(K, prior.class_concentration), dims="class")
            center = pm.Data("mean_prior_center", constants.center, dims="feature")
            if prior.covariance_prior == "lkj":
                class_mean, cholesky, log_diagonal = self._lkj_cholesky(constants, center, d, group, batch)
            else:
                class_mean, cholesky, log_diagonal = self._inverse_wishart_cholesky(
                    constants, center, d, K, group, batch, blocks
                )
            pm.Deterministic(
                "covariance", cholesky @ cholesky.swapaxes(-1, -2), dims=(*group, "feature", "other_feature")
            )
            if likelihood == "per_observation":
                model.add_coord("obs", np.arange(data.n_obs))
                pm.Categorical("label", p=class_prior, observed=data.y, dims="obs")
                y = pm.Data("y", data.y, dims="obs")
                pm.MvNormal(
                    "features",
                    mu=class_mean[y],
                    chol=cholesky if self._shared else cholesky[y],
                    observed=data.X,
                    dims=("obs", "feature"),
                )
            else:
                counts = pm.Data("class_counts", stats.class_counts, dims="class")
                means = pm.Data("class_sample_mean", stats.class_means, dims=("class", "feature"))
                root = _scatter_root(stats.scatter[0] if self._shared else stats.scatter)
                root = pm.Data("scatter_root", root, dims=(*group, "feature", "scatter_column"))
                pm.Potential("class_counts_likelihood", pt.sum(counts * pt.log(class_prior)))
                residual = pt.sqrt(counts)[:, np.newaxis] * (means - class_mean)  # (K, d)
                columns = pt.concatenate([root, residual.T if self._shared else residual[:, :, np.newaxis]], axis=-1)
                blocks["gaussian_likelihood"] = (
                    columns,
                    -pt.sum(counts) if self._shared else -counts,
                    -0.5 * d * np.log(2 * np.pi) * pt.sum(counts),
                )
            _trace_potentials(cholesky, log_diagonal, blocks)
        return model

    def _lkj_cholesky(
        self, constants: _PriorConstants, center: Any, d: int, group: tuple[str, ...], batch: tuple[int, ...]
    ) -> tuple[Any, Any, Any]:
        """The LKJ prior's variables in the current model: ``(class_mean, cholesky, log_diagonal)``.

        Normal class means, half-normal feature standard deviations and LKJ correlations; ``cholesky`` is the
        factor of the covariance (``group``/``batch``: one per class, or none for a shared covariance) and
        ``log_diagonal`` the log of its diagonal.
        """
        prior = self.prior
        mean_sd = pm.Data("mean_prior_sd", constants.mean_sd, dims="feature")
        sd_scale = pm.Data("sd_prior_scale", constants.sd_scale, dims="feature")
        class_mean = pm.Normal("class_mean", mu=center, sigma=mean_sd, dims=("class", "feature"))
        feature_sd = pm.HalfNormal("feature_sd", sigma=sd_scale, dims=(*group, "feature"))
        if d > 1:
            correlation = pm.LKJCorr(  # a fixed shape: LKJCorr's sampler cannot size from a coord
                "correlation_cholesky",
                n=d,
                eta=prior.lkj_eta,
                shape=(*batch, d, d),
                dims=(*group, "feature", "other_feature"),
            )
            cholesky = feature_sd[..., :, np.newaxis] * correlation
        else:
            cholesky = feature_sd[..., :, np.newaxis]
        log_diagonal = pt.log(pt.diagonal(cholesky, axis1=-2, axis2=-1))
        return class_mean, cholesky, log_diagonal

    def _inverse_wishart_cholesky(
        self,
        constants: _PriorConstants,
        center: Any,
        d: int,
        K: int,
        group: tuple[str, ...],
        batch: tuple[int, ...],
        blocks: dict[str, Any],
    ) -> tuple[Any, Any, Any]:
        """The inverse-Wishart prior's variables in the current model: ``(class_mean, cholesky, log_diagonal)``.

        The free variables are ``class_mean`` and the scaled Cholesky factor (:meth:`build`); the prior's
        trace terms and log-determinant multiples are added to ``blocks`` (``covariance_prior`` and
        ``class_mean_prior``), which :func:`_trace_potentials` turns into potentials.
        """
        prior = self.prior
        unit = pm.Data("cholesky_unit", constants.unit, dims="feature")
        psi_root = pm.Data("wishart_scale_root", np.sqrt(constants.wishart_scale), dims="feature")
        raw_log_diagonal = pm.Flat("cholesky_log_diagonal", dims=(*group, "feature"))
        raw = pt.zeros((*batch, d, d))
        rows, columns = np.diag_indices(d)
        raw = pt.set_subtensor(raw[..., rows, columns], pt.exp(raw_log_diagonal))
        if d > 1:
            rows, columns = np.tril_indices(d, -1)
            raw = pt.set_subtensor(raw[..., rows, columns], pm.Flat("cholesky_lower", dims=(*group, "feature_pair")))
        cholesky = unit[:, np.newaxis] * raw
        log_diagonal = pt.log(unit) + raw_log_diagonal
        class_mean = pm.Flat("class_mean", dims=("class", "feature"))
        # Sigma ~ InvWishart(Psi_0, nu_0): |Sigma|^{-(nu_0 + d + 1)/2} exp(-tr(Psi_0 Sigma^-1)/2), and the
        # Jacobian
        exponent = -(constants.wishart_dof + d + 1) + (d + 1 - np.arange(d))
        blocks["covariance_prior"] = (
            pt.broadcast_to(pt.diag(psi_root), (*batch, d, d)),
            None,
            pt.sum(exponent * log_diagonal),
        )
        # mu_k | Sigma ~ N(m_0, Sigma / kappa_0): |Sigma|^{-1/2} per class
        offset = np.sqrt(prior.mean_strength) * (class_mean - center)
        mean_columns = offset.T if self._shared else offset[:, :, np.newaxis]
        blocks["class_mean_prior"] = (mean_columns, -float(K) if self._shared else -1.0, None)
        return class_mean, cholesky, log_diagonal

    def laplace_log_density(self, data: Dataset) -> TransformedPosterior:
        r"""The log density of :meth:`build`'s value variables in numpy, its curvature without a compiled graph.

        ``class_prior`` (PyMC's simplex coordinates) is on its own, in closed form
        (:func:`~bayesclass.models._transformed_laplace.simplex_log_density`, concentrations
        :math:`lpha + N_k`). The rest is the model's density written out over a batch of points:
        :math:`-	frac12 \operatorname{tr}(oldsymbol\Sigma_g^{-1}\mathbf M_g) + w_g \log|\mathbf L_g|` plus the
        priors, with :math:`\mathbf M_g = \mathbf S_g + \sum_{k \in g} N_k (ar{\mathbf x}_k -
        oldsymbol\mu_k)(\cdot)^	op` (under inverse-Wishart also :math:`oldsymbol\Psi_0` and
        :math:`\kappa_0 \sum_k (oldsymbol\mu_k - \mathbf m_0)(\cdot)^	op`), and :math:`\mathbf L_g` from the
        value variables as PyMC's transforms make it: under LKJ ``diag(exp(feature_sd_log__))`` times the
        correlations' Cholesky factor (``cholesky_corr``: the off-diagonal values filled in TensorFlow
        Probability's spiral order below a unit diagonal, each row normalised), the LKJ density
        :math:`\sum_i (2\eta - 2 + d - i)\log 	ilde L_{ii}` and the transform's log Jacobian
        :math:`\sum_i (i + 1)\log 	ilde L_{ii}` (1-based :math:`i`), the half-normal and its log Jacobian;
        under inverse-Wishart :meth:`build`'s potentials. Its gradient is exact (the complex step), its
        Hessian central differences of that gradient
        (:func:`~bayesclass.models._transformed_laplace.numerical_derivatives`, about 1e-8 relative).

        Parameters
        ----------
        data : Dataset
            Training data.

        Returns
        -------
        TransformedPosterior
            Over ``class_prior_simplex__``, then ``class_mean``, ``feature_sd_log__``,
            ``correlation_cholesky_cholesky_corr__`` (LKJ; no correlations for one feature) or
            ``cholesky_log_diagonal``, ``cholesky_lower``, ``class_mean`` (inverse-Wishart), from a start near the
            mode (the class means and the pooled within-class scatter).
        """
        self.check_training_data(data)
        stats, constants, _ = self._fitted(data)
        K = data.n_classes
        concentration = self.prior.class_concentration + stats.class_counts
        density = _TransformedDensity.of(stats, constants, self.prior, shared=self._shared)
        mode = {"class_prior_simplex__": simplex_mode(concentration), **density.start}

        def derivatives(z: np.ndarray) -> list[np.ndarray]:
            value, gradient, hessian = simplex_log_density(z[: K - 1], concentration)
            rest_value, rest_gradient, rest_hessian = numerical_derivatives(density, z[K - 1 :])
            return [
                np.asarray(value + rest_value),
                np.concatenate([gradient, rest_gradient]),
                scipy.linalg.block_diag(hessian, rest_hessian),
            ]

        def parameters(rows_z: np.ndarray) -> list[np.ndarray]:
            factor = density.cholesky(rows_z[:, K - 1 :])[0]
            covariance = factor @ factor.swapaxes(-1, -2)
            return [
                simplex_point(rows_z[:, : K - 1]),
                density.split(rows_z[:, K - 1 :])["class_mean"],
                covariance[:, 0] if self._shared else covariance,
            ]

        group = () if self._shared else ("class",)
        dims = (("class",), ("class", "feature"), (*group, "feature", "other_feature"))
        return closed_form_posterior(mode, derivatives, parameters, self.parameter_names(data), dims)

    # -- exact posterior --------------------------------------------------------------------------
    def exact_posterior(self, data: Dataset, *, draws: int, chains: int, random_seed: int) -> xr.Dataset:
        r"""Independent draws from the Normal-Inverse-Wishart posterior, dims ``(chain, draw, ...)``.

        :math:`\boldsymbol\Sigma^{-1} \sim \text{Wishart}(\boldsymbol\Psi^{-1}, \nu)` by the Bartlett
        decomposition (batched over draws and classes), :math:`\boldsymbol\mu_k \mid \boldsymbol\Sigma
        \sim \mathcal{N}(\mathbf{m}_k, \boldsymbol\Sigma/\kappa_k)`, :math:`\pi \sim
        \text{Dirichlet}(\alpha + N_k)`.

        Parameters
        ----------
        data : Dataset
            Training data.
        draws : int
            Draws per chain.
        chains : int
            Number of chains (independent blocks of draws, laid out as a sampler's).
        random_seed : int
            Seed of the draws.

        Returns
        -------
        xarray.Dataset
            ``class_prior``, ``class_mean`` and ``covariance``, dims ``(chain, draw, ...)``.

        Raises
        ------
        ValueError
            Under the LKJ prior, which has no conjugate posterior.
        """
        if not self._conjugate_prior:
            raise ValueError(
                f"exact draws need the conjugate prior: use {_inverse_wishart()}, or {spelled('method', 'nuts')}"
            )
        self.check_training_data(data)
        conjugate = _required(self._fitted(data)[2])
        rng = np.random.default_rng(random_seed)
        size = (chains, draws)
        covariance = _inverse_wishart_draws(rng, conjugate.scale, conjugate.dof, size)  # (c, t, G, d, d)
        d = covariance.shape[-1]
        factor = np.linalg.cholesky(covariance)
        if self._shared:
            factor = np.broadcast_to(factor, (*size, conjugate.mean.shape[0], d, d))
        noise = rng.standard_normal((*size, *conjugate.mean.shape))
        mean = (
            conjugate.mean + (factor @ noise[..., np.newaxis])[..., 0] / np.sqrt(conjugate.mean_strength)[:, np.newaxis]
        )
        class_prior = rng.dirichlet(conjugate.class_concentration, size=size)
        dims = ("feature", "other_feature") if self._shared else ("class", "feature", "other_feature")
        dataset = xr.Dataset(
            {
                "class_prior": (("chain", "draw", "class"), class_prior),
                "class_mean": (("chain", "draw", "class", "feature"), mean),
                "covariance": (("chain", "draw", *dims), covariance[:, :, 0] if self._shared else covariance),
            },
            coords={"chain": np.arange(chains), "draw": np.arange(draws)},
        )
        return self.with_coords(dataset, data)

    # -- closed forms -----------------------------------------------------------------------------
    def _point_estimate(self, data: Dataset, kind: str) -> xr.Dataset:
        stats, constants, fitted_conjugate = self._fitted(data)
        n, K = stats.class_counts, data.n_classes
        alpha = self.prior.class_concentration
        extra: dict[str, tuple[tuple[str, ...], np.ndarray]] = {}
        if kind in ("mle", "unbiased"):
            class_prior, mean = n / n.sum(), np.array(stats.class_means)
            covariance = self._sample_covariance(stats, data, ddof=0 if kind == "mle" else 1)
        elif kind == "map":
            class_prior = (n + alpha - 1) / (
                n.sum() + K * alpha - K
            )  # every N_k >= 1: the mode exists for any alpha > 0
            if self._conjugate_prior:
                conjugate = _required(fitted_conjugate)
                d = data.n_features
                extra_means = K if self._shared else 1
                mean = np.array(conjugate.mean)
                covariance = conjugate.scale / (conjugate.dof + d + 1 + extra_means)[:, np.newaxis, np.newaxis]
            else:
                mean, covariance = (np.array(array) for array in self._lkj_mode(data))
        elif kind == "posterior_mean":
            conjugate = _required(fitted_conjugate)
            d = data.n_features
            if (conjugate.dof <= d + 1).any():
                raise NoEstimateError(
                    "the posterior mean of the covariance is infinite (nu <= d + 1); raise "
                    f"{spelled('wishart_dof_offset', owner=_PRIOR)} or use {spelled('kind', 'map')}"
                )
            class_prior = conjugate.class_concentration / conjugate.class_concentration.sum()
            mean = np.array(conjugate.mean)
            covariance = conjugate.scale / (conjugate.dof - d - 1)[:, np.newaxis, np.newaxis]
        else:  # posterior_predictive: Student-t per class
            conjugate = _required(fitted_conjugate)
            d = data.n_features
            class_prior = conjugate.class_concentration / conjugate.class_concentration.sum()
            mean = np.array(conjugate.mean)
            dof = conjugate.dof - d + 1
            covariance = conjugate.scale / dof[:, np.newaxis, np.newaxis]
            kappa = conjugate.mean_strength
            extra = {
                "predictive_dof": (("class",), np.broadcast_to(dof, (K,)).copy()),
                "predictive_scale_factor": (("class",), (kappa + 1) / kappa),
            }
        dims = ("feature", "other_feature") if self._shared else ("class", "feature", "other_feature")
        variables = {
            "class_prior": (("class",), class_prior),
            "class_mean": (("class", "feature"), mean),
            "covariance": (dims, covariance[0] if self._shared else covariance),
            **extra,
        }
        return self.with_coords(xr.Dataset(variables), data)

    def _check_scatter(self, stats: _Statistics, data: Dataset, *, estimate: str) -> None:
        """Raise NoEstimateError naming the class (or the shared covariance) whose scatter is singular, and why."""
        d, names = data.n_features, data.class_names
        remedy = (
            "set regularization (e.g. 0.1) to shrink towards the pooled variances, use the inverse-Wishart "
            f"prior's MAP ({_inverse_wishart()}), or the NUTS posterior"
        )
        rows = stats.class_counts.sum() - data.n_classes if self._shared else stats.class_counts - 1
        group_rows = stats.class_counts.sum(keepdims=True) if self._shared else stats.class_counts
        singular = (rows < d) | _singular(stats.scatter, group_rows[:, np.newaxis] * stats.pooled_variance)
        if not singular.any():
            return
        g = int(np.flatnonzero(singular)[0])
        where = "the shared covariance" if self._shared else f"covariance[{names[g]!r}]"
        if self._shared and rows < d:
            why = (
                f"{int(stats.class_counts.sum())} rows in {data.n_classes} classes leave {int(rows)} degrees of "
                "freedom "
                f"for {d} features (d > n - K)"
            )
        elif not self._shared and rows[g] < d:
            why = (
                f"class {names[g]!r} has {int(stats.class_counts[g])} rows for {d} features (a per-class covariance "
                "needs more than d rows)"
            )
        else:
            constant = _constant_within_class(data)
            constant = constant.all(axis=0) if self._shared else constant[g]
            if constant.any():
                feature = data.feature_names[int(np.flatnonzero(constant)[0])]
                within = "every class" if self._shared else f"class {names[g]!r}"
                why = f"feature {feature!r} is constant within {within} (zero variance)"
            else:
                within = "the classes" if self._shared else "that class"
                why = f"the features are linearly dependent (collinear) within {within} (drop a redundant feature)"
        raise NoEstimateError(f"the {estimate} of {where} does not exist: {why}; {remedy}")

    def _sample_covariance(self, stats: _Statistics, data: Dataset, *, ddof: int) -> np.ndarray:
        """(G, d, d) ML (ddof 0) or unbiased (ddof 1 per class, K pooled) covariance, regularised if asked."""
        if self.regularization == 0:
            self._check_scatter(stats, data, estimate="MLE" if ddof == 0 else "unbiased estimate")
        n = stats.class_counts
        if self._shared:
            if ddof and n.sum() <= data.n_classes:
                raise NoEstimateError(
                    f"the unbiased estimate of the shared covariance needs more rows ({int(n.sum())}) than classes "
                    f"({data.n_classes}); use {spelled('kind', 'mle')}"
                )
            covariance = stats.scatter / (n.sum() - (data.n_classes if ddof else 0))
        else:
            if ddof and (n <= 1).any():
                k = int(np.flatnonzero(n <= 1)[0])
                raise NoEstimateError(
                    f"the unbiased estimate of covariance[{data.class_names[k]!r}] needs at least 2 rows of the "
                    f"class; use {spelled('kind', 'mle')}"
                )
            covariance = stats.scatter / (n - ddof)[:, np.newaxis, np.newaxis]
        r = self.regularization
        return (1 - r) * covariance + r * np.diag(stats.pooled_variance)

    def _gaussian_approximation(self, data: Dataset, kind: str) -> GaussianApproximation | None:
        r"""N(estimate, covariance) of the MLE, the unbiased estimate and the MAP; None for the other kinds.

        Over ``class_prior``, ``class_mean`` and ``covariance`` flattened (C order of each variable's dims); the
        covariance's symmetric elements :math:`\Sigma_{ij}` and :math:`\Sigma_{ji}` appear twice, with the same
        (perfectly correlated) rows. All closed forms, no bootstrap:

        ``"mle"``
            the inverse Fisher information, which at the MLE equals the inverse observed information (the
            Hessian of the negative log-likelihood over :math:`\pi` on the simplex, the means and the free
            covariance elements): :math:`(\operatorname{diag}\pi - \pi\pi^\top)/N` for the class prior,
            :math:`\boldsymbol\Sigma_k/N_k` for class mean k (shared: :math:`\boldsymbol\Sigma/N_k`),
            :math:`\operatorname{Cov}(\Sigma_{ij}, \Sigma_{kl}) = (\Sigma_{ik}\Sigma_{jl} +
            \Sigma_{il}\Sigma_{jk})/m` with :math:`m = N_k` per class and :math:`N` shared; the three
            blocks independent.
        ``"unbiased"``
            the exact sampling covariance of that estimator at the estimate (plug-in): the same blocks with the
            Wishart's :math:`m = N_k - 1` per class and :math:`N - K` shared.
        ``"map"``
            the inverse Hessian of the negative log posterior at the MAP, in the coordinates of the mode
            (:math:`\pi` on the simplex, :math:`\boldsymbol\mu`, the free elements of
            :math:`\boldsymbol\Sigma`). Inverse-Wishart prior, in closed form: :math:`(\operatorname{diag}\pi -
            \pi\pi^\top)/A` with :math:`A = N + K\alpha - K`, :math:`\boldsymbol\Sigma/\kappa_k` for the
            means and the covariance block above with :math:`m = \nu_n + d + 1 + K` shared,
            :math:`\nu_k + d + 2` per class (the divisor of the mode). LKJ prior: the analytic Hessian over the
            means and the free covariance elements (the means are then correlated with the covariance),
            inverted; the class prior's block as under inverse-Wishart.

        None (no covariance is stated) for ``posterior_mean`` and the Student-t ``posterior_predictive`` (their
        uncertainty is the posterior itself: ``method="exact"``); for ``mle`` and ``unbiased`` with
        ``regularization > 0`` (a shrinkage estimate, not the MLE, whose sampling covariance has no clean
        closed form); where the covariance would exceed :data:`MAX_APPROXIMATION_PARAMETERS` parameters (a
        dense matrix of that many rows is too large to store in a result); and where the LKJ MAP's Hessian is
        not positive definite. Estimates that do not exist raise as :meth:`point_estimate` does.

        These are asymptotic statements: with few rows per class a variance's Wald interval
        :math:`\hat\Sigma_{ii}(1 \mp z\sqrt{2/m})` reaches below 0 once :math:`m < 2z^2` (about 8 rows at 95%),
        and even at :math:`m = 120` it covers 93.6% rather than 95% (the chi-square's skew); the means' and the
        class prior's intervals are close to nominal much sooner.
        """
        groups = 1 if self._shared else data.n_classes
        size = data.n_classes * (1 + data.n_features) + groups * data.n_features**2
        if (
            kind not in ("mle", "unbiased", "map")
            or (kind != "map" and self.regularization > 0)
            or size > MAX_APPROXIMATION_PARAMETERS
        ):
            return None
        estimate = self._point_estimate(data, kind)
        stats, constants, conjugate = self._fitted(data)
        n, K, d = stats.class_counts, data.n_classes, data.n_features
        _, mean, covariance, _ = _arrays(estimate)
        pi = np.asarray(estimate["class_prior"].values)
        prior_count = float(n.sum() + K * self.prior.class_concentration - K) if kind == "map" else float(n.sum())
        prior_block = (np.diag(pi) - np.outer(pi, pi)) / prior_count
        names = self.parameter_names(data)
        if kind == "map" and conjugate is None:
            joint = _lkj_map_covariance(stats, constants, self.prior.lkj_eta, mean, covariance)
            if joint is None:
                return None
            curvature = (
                "inverse Hessian of the negative log posterior at the MAP (Laplace curvature; analytic, over pi on "
                "the simplex, the means and the free covariance elements; means correlated with the covariance)"
            )
            return GaussianApproximation.of(kind, estimate, names, _block_diagonal((prior_block, joint)), curvature)
        group_counts = np.array([n.sum()]) if self._shared else n
        if kind == "mle":
            mean_counts, covariance_counts = n, group_counts
            curvature = (
                "inverse Fisher information at the MLE (closed form, = inverse observed information): class_prior "
                "(diag pi - pi pi')/N, class_mean Sigma/N_k, covariance (S_ik S_jl + S_il S_jk)/N_g, independent"
            )
        elif kind == "unbiased":
            mean_counts, covariance_counts = n, group_counts - (K if self._shared else 1)
            curvature = (
                "exact sampling covariance of the unbiased estimate, plugged in: multinomial class_prior, "
                "class_mean Sigma/N_k, Wishart covariance (S_ik S_jl + S_il S_jk)/(N_g - K_g), independent"
            )
        else:
            niw = _required(conjugate)
            mean_counts, covariance_counts = niw.mean_strength, niw.dof + d + 1 + (K if self._shared else 1)
            curvature = (
                "inverse Hessian of the negative log posterior at the MAP (Laplace curvature; closed form): "
                "class_prior (diag pi - pi pi')/(N + K alpha - K), class_mean Sigma/kappa_k, covariance "
                "(S_ik S_jl + S_il S_jk)/(nu + d + 1 + K_g), independent"
            )
        group_of_class = np.zeros(K, dtype=int) if self._shared else np.arange(K)
        mean_block = np.einsum(
            "kl,kij->kilj", np.eye(K), covariance[group_of_class] / np.asarray(mean_counts)[:, None, None]
        ).reshape(K * d, K * d)
        covariance_block = _block_diagonal(tuple(_wishart_covariance(covariance, np.asarray(covariance_counts, float))))
        blocks = _block_diagonal((prior_block, mean_block, covariance_block))
        return GaussianApproximation.of(kind, estimate, names, blocks, curvature)

    # -- prediction -------------------------------------------------------------------------------
    def _joint_log_likelihood_kernel(self, params: xr.Dataset) -> ClassProbaKernel:
        r"""Log pi_k + log N(x | mu_k, Sigma_k) up to a class-independent term (seed 001 eq 1, seed 000 eq 9.16).

        For posterior draws (any leading dims) or a point estimate; with ``predictive_dof`` (the
        ``posterior_predictive`` kind) the class densities are multivariate Student-t.

        Notes
        -----
        A shared-covariance Gaussian uses the linear discriminants
        :math:`a_k(\mathbf{x}) = \mathbf{w}_k^\top\mathbf{x} + w_{k0}` (the quadratic term cancels): one
        matrix product with the weights of every class and draw. Otherwise the Mahalanobis distances
        :math:`q_k` come, with many draws, from the precisions contracted with the products
        :math:`x_i x_j` (i <= j) and with x (again one matrix product), or, for few parameter sets,
        from a triangular solve per class, whichever needs the smaller intermediate array. Inputs and
        means are centred on the average class mean first, which leaves every difference unchanged and
        keeps the expansions accurate. The factors, precisions and log-determinants are computed once.
        """
        log_prior, mean, covariance, leading = _arrays(params)
        K, d = mean.shape[-2:]
        log_prior = log_prior.reshape(-1, K)  # (draws, class)
        mean = mean.reshape(-1, K, d)
        covariance = covariance.reshape(-1, *covariance.shape[-3:])
        n_draws = mean.shape[0]
        center = mean.reshape(-1, d).mean(axis=0)
        mean = mean - center
        cholesky = _cholesky(covariance)
        dof = (
            params["predictive_dof"].transpose(*leading, "class").values.reshape(-1, K)
            if "predictive_dof" in params
            else None
        )

        def by_column(values: np.ndarray) -> np.ndarray:  # (draws, class, ...) -> (..., class * draws)
            return np.ascontiguousarray(np.moveaxis(values, (0, 1), (-1, -2)).reshape(*values.shape[2:], K * n_draws))

        if dof is None and covariance.shape[-3] == 1:  # shared Gaussian: linear discriminants
            weight = _solve_spd(cholesky, mean)  # (draws, class, d)
            offset = -0.5 * np.sum(mean * weight, axis=-1) + log_prior
            coefficients = by_column(np.concatenate([weight, offset[..., np.newaxis]], axis=-1))

            def evaluate_discriminants(X: np.ndarray, log: bool) -> np.ndarray:
                joint = affine(X - center) @ coefficients
                return joint.reshape(X.shape[0], K, n_draws)

            return kernel_of(params, evaluate_discriminants, leading_dims=leading)

        log_det = 2 * np.log(np.diagonal(cholesky, axis1=-2, axis2=-1)).sum(axis=-1)  # (draws, G)
        log_det = np.broadcast_to(log_det, (n_draws, K))
        if dof is not None:
            factor = params["predictive_scale_factor"].transpose(*leading, "class").values.reshape(-1, K)
            log_det = log_det + d * np.log(factor)
        else:
            factor = np.ones((n_draws, K))
        inverse = np.linalg.inv(cholesky)  # (draws, G, d, d) lower triangular; see _solve_spd
        # (class, draws) layouts, broadcast against (obs, class, draws)
        log_prior_t, log_det_t, factor_t = log_prior.T.copy(), log_det.T.copy(), factor.T.copy()
        if d <= n_draws * K:  # many parameter sets: contract precisions with x_i x_j and x
            precision = np.broadcast_to(inverse.swapaxes(-1, -2) @ inverse, (n_draws, K, d, d))
            upper = np.triu_indices(d)
            doubled = np.where(upper[0] == upper[1], 1.0, 2.0)  # x'Px = sum_i P_ii x_i^2 + 2 sum_{i<j} P_ij x_i x_j
            projected = (precision @ mean[..., np.newaxis])[..., 0]  # (draws, class, d)
            offset = np.sum(mean * projected, axis=-1)
            if dof is None:  # the Gaussian joint is linear in phi too: fold -q/2 - log|Sigma|/2 + log pi in
                precision, projected, offset = -0.5 * precision, -0.5 * projected, -0.5 * (offset + log_det) + log_prior
            coefficients = by_column(
                np.concatenate([precision[..., upper[0], upper[1]] * doubled, -2 * projected, offset[..., None]], -1)
            )

            def distance(x: np.ndarray) -> np.ndarray:  # (obs, class, draws); the Gaussian joint without dof
                values = affine(x[:, upper[0]] * x[:, upper[1]], x) @ coefficients
                return values.reshape(x.shape[0], K, n_draws)

            if dof is None:
                return kernel_of(params, lambda X, log: distance(X - center), leading_dims=leading)
        else:

            def distance(x: np.ndarray) -> np.ndarray:
                difference = x.T[np.newaxis, np.newaxis] - mean[..., np.newaxis]  # (draws, class, d, obs)
                solved = inverse @ difference  # batched gufunc; see _solve_spd
                return np.moveaxis(np.sum(solved**2, axis=-2), -1, 0).swapaxes(1, 2).copy()

        dof_t = None if dof is None else dof.T.copy()

        def evaluate(X: np.ndarray, log: bool) -> np.ndarray:
            q = distance(X - center)
            if dof_t is None:
                return -0.5 * q - 0.5 * log_det_t + log_prior_t
            q /= factor_t
            nu = dof_t
            return (
                scipy.special.gammaln((nu + d) / 2)
                - scipy.special.gammaln(nu / 2)
                - 0.5 * d * np.log(nu * np.pi)
                - 0.5 * log_det_t
                - 0.5 * (nu + d) * np.log1p(np.clip(q, 0.0, None) / nu)
                + log_prior_t
            )

        return kernel_of(params, evaluate, leading_dims=leading)

    def convergence_advice(self, failed: tuple[str, ...]) -> tuple[str, ...]:
        """What to try when posterior draws explore badly: the conjugate covariance prior, unless it is the prior.

        Parameters
        ----------
        failed : tuple of str
            The failed checks of the verdict, by name (as for the base method).

        Returns
        -------
        tuple of str
            The conjugate covariance prior where the prior is not inverse-Wishart already; else none.
        """
        if self.prior.covariance_prior == "inverse_wishart" or not failed:
            return ()
        return (
            f"the conjugate covariance prior ({_inverse_wishart()}), which also allows {spelled('method', 'exact')}",
        )

    def derived_quantities(self, params: xr.Dataset) -> xr.Dataset:
        """The linear discriminants of a shared-covariance Gaussian parameter set, for reports.

        Parameters
        ----------
        params : xarray.Dataset
            Posterior draws or one point estimate.

        Returns
        -------
        xarray.Dataset
            ``discriminant_weight`` and ``discriminant_bias`` (:meth:`linear_discriminant`) for a
            shared-covariance Gaussian parameter set, so that reports show the boundary with its credible
            band; empty for per-class covariances or the Student-t predictive.
        """
        if "class" in params["covariance"].dims or "predictive_dof" in params:
            return xr.Dataset()
        lda = self.linear_discriminant(params)
        return xr.Dataset({"discriminant_weight": lda["weight"], "discriminant_bias": lda["bias"]})

    def linear_discriminant(self, params: xr.Dataset) -> xr.Dataset:
        r"""The linear discriminants of a shared-covariance Gaussian (seed 001 §D, seed 002).

        :math:`\mathbf{w}_k = \boldsymbol\Sigma^{-1}\boldsymbol\mu_k`,
        :math:`w_{k0} = -\tfrac12\boldsymbol\mu_k^\top\boldsymbol\Sigma^{-1}\boldsymbol\mu_k + \log\pi_k`,
        for a shared-covariance point estimate or every posterior draw.

        Parameters
        ----------
        params : xarray.Dataset
            A shared-covariance Gaussian parameter set: posterior draws or one point estimate.

        Returns
        -------
        xarray.Dataset
            ``weight`` (*leading, class, feature) and ``bias`` (*leading, class).

        Raises
        ------
        ValueError
            For per-class covariances or the Student-t predictive.
        """
        if "class" in params["covariance"].dims or "predictive_dof" in params:
            raise ValueError(
                "linear discriminants exist for a shared-covariance Gaussian only; with per-class covariances "
                "the boundaries are quadratic (seed 000 eq 9.16) and the posterior predictive is a Student-t"
            )
        log_prior, mean, covariance, leading = _arrays(params)
        weight = _solve_spd(_cholesky(covariance), mean)
        bias = -0.5 * np.sum(mean * weight, axis=-1) + log_prior
        coords = {dim: params[dim].values for dim in (*leading, "class", "feature") if dim in params.coords}
        return xr.Dataset(
            {"weight": ((*leading, "class", "feature"), weight), "bias": ((*leading, "class"), bias)}, coords=coords
        )

    def decision_boundary(self, params: xr.Dataset, positive: str, negative: str) -> xr.Dataset:
        r"""The hyperplane :math:`\mathbf{w}^\top\mathbf{x} + w_0 = 0` between two classes (seed 001 eq 14).

        :math:`\mathbf{w} = \mathbf{w}_{pos} - \mathbf{w}_{neg}`, :math:`w_0 = w_{pos,0} - w_{neg,0}`,
        and :math:`\log P(pos \mid \mathbf{x}) / P(neg \mid \mathbf{x}) = \mathbf{w}^\top\mathbf{x} + w_0`.

        Parameters
        ----------
        params : xarray.Dataset
            A shared-covariance Gaussian parameter set: posterior draws or one point estimate.
        positive : str
            The class on the positive side of the hyperplane.
        negative : str
            The class on the negative side.

        Returns
        -------
        xarray.Dataset
            ``weight`` (*leading, feature) and ``bias`` (*leading).

        Raises
        ------
        ValueError
            If ``positive`` or ``negative`` is not a class of ``params``, or :meth:`linear_discriminant` refuses
            ``params``.
        """
        classes = [str(name) for name in params["class"].values]
        for argument, name in (("positive", positive), ("negative", negative)):
            if name not in classes:
                raise ValueError(f"{argument}={name!r} is not a class of these parameters; choose one of {classes}")
        lda = self.linear_discriminant(params)
        return lda.sel({"class": positive}, drop=True) - lda.sel({"class": negative}, drop=True)

    # -- generative sampling ----------------------------------------------------------------------
    def sample_features(
        self, params: xr.Dataset, class_codes: Any, *, random_seed: int, reference: Any = None
    ) -> xr.DataArray:
        r"""Draw :math:`\mathbf{x}_n \sim \mathcal{N}(\boldsymbol\mu_{t_n}, \boldsymbol\Sigma_{t_n})` per row.

        :math:`t_n` is the given class code of row n; the rows are drawn under every parameter set of ``params``
        (each posterior draw, or one point estimate).

        Parameters
        ----------
        params : xarray.Dataset
            Gaussian posterior draws (leading dims such as ``replicate``) or one Gaussian point estimate (not
            the Student-t predictive).
        class_codes : array of int, shape (n_obs,) or (*leading, n_obs)
            The class of every row to draw, shared by every parameter set or one per parameter set and row.
        random_seed : int
            Seed of the draws.
        reference : array of shape (n_obs, n_features), optional
            Ignored: Gaussian features need no observed rows.

        Returns
        -------
        xarray.DataArray
            Dims ``(*leading, obs, feature)``.

        Raises
        ------
        ValueError
            If ``params`` is the Student-t predictive, or a covariance is not positive definite.
        """
        if "predictive_dof" in params:
            raise ValueError(
                "sample from a Gaussian parameter set (posterior draws or mle/map), not the Student-t predictive"
            )
        _, mean, covariance, leading = _arrays(params)
        n_leading = len(leading)
        codes = check_class_codes(class_codes, params.sizes["class"], mean.shape[:n_leading])
        cholesky = _cholesky(covariance)
        rng = np.random.default_rng(random_seed)
        noise = rng.standard_normal((*mean.shape[:-2], codes.shape[-1], mean.shape[-1]))
        if cholesky.shape[-3] == 1:
            draws = rows_of_class(mean, codes, n_leading) + noise @ cholesky[..., 0, :, :].swapaxes(-1, -2)
        else:
            factor = rows_of_class(cholesky, codes, n_leading)  # (*leading, obs, d, d)
            draws = rows_of_class(mean, codes, n_leading) + (factor @ noise[..., np.newaxis])[..., 0]
        coords: dict[str, Any] = {dim: params[dim].values for dim in leading if dim in params.coords}
        coords["feature"] = params["feature"].values
        return xr.DataArray(draws, dims=(*leading, "obs", "feature"), coords=coords)


# ---------------------------------------------------------------------------------------------
# array core (no loops over rows, classes or features)


def _trace_potentials(cholesky, log_diagonal, blocks: dict[str, tuple[Any, Any, Any]]) -> None:
    """One ``pm.Potential`` per block: ``-1/2 ||L^{-1} B||^2 + w * sum_i log L_ii + c``, all B solved at once.

    ``blocks`` maps a potential name to ``(B, w, c)``: B of shape (..., d, m) (columns),
    w a scalar or per-group weight of log|L| (or None), and c an extra term added as it is (or None).
    """
    names = list(blocks)
    if not names:
        return
    widths = [blocks[name][0].shape[-1] for name in names]
    stacked = pt.concatenate([blocks[name][0] for name in names], axis=-1)
    squares = pt.sum(pt.linalg.solve_triangular(cholesky, stacked, lower=True, b_ndim=2) ** 2, axis=-2)  # (..., m)
    log_det = pt.sum(log_diagonal, axis=-1)  # (...,) = log|L|
    start = 0
    for name, width in zip(names, widths, strict=True):  # a handful of named terms, not data
        _, weight, extra = blocks[name]
        value = -0.5 * pt.sum(squares[..., start : start + width])
        start += width
        if weight is not None:
            value = value + pt.sum(weight * log_det)
        if extra is not None:
            value = value + extra
        pm.Potential(name, value)


@dataclass(frozen=True, eq=False)
class _TransformedDensity:
    """gcc's log density over its value variables after ``class_prior`` (:meth:`laplace_log_density`).

    Called on a batch of points ``Z (n, q)`` (complex too: written without ``abs`` or ``conj``), it returns their log
    densities (n,) up to a constant; ``start`` is a point near the mode, by value variable in the model's order.
    """

    stats: _Statistics
    constants: _PriorConstants
    prior: GaussianClassConditionalPrior
    shared: bool
    start: dict[str, np.ndarray]
    exponents: np.ndarray  # the multiples of each log L_ii (LKJ: of the correlations' factor) the priors add
    weight: np.ndarray  # per group: the multiple of log|L| (the likelihood's, and the inverse-Wishart's)

    @classmethod
    def of(
        cls, stats: _Statistics, constants: _PriorConstants, prior: GaussianClassConditionalPrior, *, shared: bool
    ) -> _TransformedDensity:
        """The density of these statistics, and its start: the class means, the within-class covariance."""
        K, d = stats.class_means.shape
        counts = stats.class_counts
        group_counts = np.array([counts.sum()]) if shared else counts
        batch = () if shared else (K,)
        factor = _scatter_start(stats, constants, group_counts)  # (G, d, d)
        start: dict[str, np.ndarray] = {}
        if prior.covariance_prior == "lkj":
            sd = np.sqrt(np.einsum("gij,gij->gi", factor, factor))
            unit_lower = factor / np.einsum("gii->gi", factor)[..., np.newaxis]  # [w, 1] rows: w = L_ij / L_ii
            start["class_mean"] = stats.class_means.copy()
            start["feature_sd_log__"] = np.log(sd).reshape(*batch, d)
            if d > 1:
                order, rows, columns = _spiral(d)
                unconstrained = np.zeros((len(factor), len(order)))
                unconstrained[:, order] = unit_lower[:, rows, columns]
                start["correlation_cholesky_cholesky_corr__"] = unconstrained.reshape(*batch, len(order))
            exponents = (2 * prior.lkj_eta - 2 + d - np.arange(1, d + 1)) + np.arange(2, 2 + d)
            weight = -group_counts
        else:
            start["cholesky_log_diagonal"] = np.log(np.einsum("gii->gi", factor) / constants.unit).reshape(*batch, d)
            if d > 1:
                lower = np.tril_indices(d, -1)
                start["cholesky_lower"] = (factor / constants.unit[:, np.newaxis])[:, lower[0], lower[1]].reshape(
                    *batch, -1
                )
            start["class_mean"] = (
                prior.mean_strength * constants.center + counts[:, np.newaxis] * stats.class_means
            ) / (prior.mean_strength + counts)[:, np.newaxis]
            exponents = -(constants.wishart_dof + d + 1) + (d + 1 - np.arange(d))
            weight = -group_counts - (K if shared else 1)
        return cls(stats, constants, prior, shared, start, exponents, np.asarray(weight, dtype=float))

    def split(self, Z: np.ndarray) -> dict[str, np.ndarray]:
        """``Z (n, q)`` as one array ``(n, *shape)`` per value variable."""
        offsets = np.cumsum([0, *(value.size for value in self.start.values())])
        return {
            name: Z[:, offsets[i] : offsets[i + 1]].reshape(len(Z), *value.shape)
            for i, (name, value) in enumerate(self.start.items())
        }

    def _by_group(self, per_class: np.ndarray) -> np.ndarray:  # (n, K, d, d) -> (n, G, d, d)
        return per_class.sum(axis=1, keepdims=True) if self.shared else per_class

    def cholesky(self, Z: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(L (n, G, d, d), log diag L (n, G, d), the priors' log density (n,)) of each point, as PyMC makes them."""
        values, n = self.split(Z), len(Z)
        constants = self.constants
        G, d = len(self.weight), self.stats.class_means.shape[1]
        diagonal = np.diag_indices(d)
        if self.prior.covariance_prior == "lkj":
            log_sd = values["feature_sd_log__"].reshape(n, G, d)
            unit_lower = np.zeros((n, G, d, d), dtype=Z.dtype)
            unit_lower[..., diagonal[0], diagonal[1]] = 1.0
            if d > 1:
                order, rows, columns = _spiral(d)
                correlations = values["correlation_cholesky_cholesky_corr__"].reshape(n, G, len(order))
                unit_lower[..., rows, columns] = correlations[..., order]
            squared_norm = (unit_lower**2).sum(axis=-1)  # (n, G, d): no conj, the density stays analytic
            log_correlation_diagonal = -0.5 * np.log(squared_norm)
            factor = np.exp(log_sd)[..., np.newaxis] * unit_lower / np.sqrt(squared_norm)[..., np.newaxis]
            log_prior = (
                -0.5 * (((values["class_mean"] - constants.center) / constants.mean_sd) ** 2).sum(axis=(1, 2))
                + (-np.exp(2 * log_sd) / (2 * constants.sd_scale**2) + log_sd).sum(axis=(1, 2))
                + (self.exponents * log_correlation_diagonal).sum(axis=(1, 2))
            )
            return factor, log_sd + log_correlation_diagonal, log_prior
        log_diag = values["cholesky_log_diagonal"].reshape(n, G, d)
        raw = np.zeros((n, G, d, d), dtype=Z.dtype)
        raw[..., diagonal[0], diagonal[1]] = np.exp(log_diag)
        if d > 1:
            lower = np.tril_indices(d, -1)
            raw[..., lower[0], lower[1]] = values["cholesky_lower"].reshape(n, G, -1)
        log_diagonal = np.log(constants.unit) + log_diag
        return constants.unit[:, np.newaxis] * raw, log_diagonal, (self.exponents * log_diagonal).sum(axis=(1, 2))

    def __call__(self, Z: np.ndarray) -> np.ndarray:
        """The log density of each point: -1/2 tr(Sigma_g^-1 M_g) + weight_g log|L_g| + the priors."""
        stats = self.stats
        factor, log_diagonal, log_prior = self.cholesky(Z)
        mean = self.split(Z)["class_mean"]
        residual = stats.class_means - mean  # (n, K, d)
        counts = stats.class_counts[:, np.newaxis, np.newaxis]
        spread = stats.scatter + self._by_group(counts * residual[..., :, np.newaxis] * residual[..., np.newaxis, :])
        if self.prior.covariance_prior != "lkj":
            offset = mean - self.constants.center
            spread = (
                spread
                + np.diag(self.constants.wishart_scale)
                + self.prior.mean_strength * self._by_group(offset[..., :, np.newaxis] * offset[..., np.newaxis, :])
            )
        inverse = np.linalg.inv(factor)
        trace = ((inverse @ spread) * inverse).sum(axis=(-2, -1))  # tr(L^-1 M L^-T), (n, G)
        return log_prior - 0.5 * trace.sum(axis=-1) + (self.weight * log_diagonal.sum(axis=-1)).sum(axis=-1)


def _spiral(d: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """PyMC's ``cholesky_corr`` fill (TensorFlow Probability's spiral, ``upper=False``) of a d x d unit-lower factor.

    Returns ``(order, rows, columns)``: the strict-lower entry ``(rows[i], columns[i])`` holds value ``order[i]``.
    """
    values = np.arange(d * (d - 1) // 2)
    filled = np.concatenate([values[d - 1 :], values[::-1]]).reshape(d - 1, d - 1)
    rows, columns = np.tril_indices(d - 1)
    return filled[rows, columns], rows + 1, columns


def _scatter_start(stats: _Statistics, constants: _PriorConstants, group_counts: np.ndarray) -> np.ndarray:
    """(G, d, d) Cholesky factors of each group's within-class covariance, where the Laplace mode's search starts.

    Shrunk a tenth of the way towards the pooled variances, so that it exists for any data.
    """
    covariance = stats.scatter / group_counts[:, np.newaxis, np.newaxis]
    covariance = 0.9 * covariance + 0.1 * np.diag(constants.unit**2)
    return np.linalg.cholesky(covariance)


def _arrays(params: xr.Dataset) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[str, ...]]:
    """(log class_prior (..., K), class_mean (..., K, d), covariance (..., G, d, d), leading dims)."""
    mean_da = params["class_mean"]
    leading = tuple(str(dim) for dim in mean_da.dims if dim not in ("class", "feature"))
    with np.errstate(divide="ignore"):
        log_prior = np.log(params["class_prior"].transpose(*leading, "class").values)
    mean = mean_da.transpose(*leading, "class", "feature").values
    covariance_da = params["covariance"]
    if "class" in covariance_da.dims:
        covariance = covariance_da.transpose(*leading, "class", "feature", "other_feature").values
    else:
        covariance = covariance_da.transpose(*leading, "feature", "other_feature").values[..., np.newaxis, :, :]
    return log_prior, mean, covariance, leading


def _block_diagonal(blocks: tuple[np.ndarray, ...]) -> np.ndarray:
    """The block-diagonal matrix of square ``blocks`` (SciPy's ``block_diag``)."""
    return np.asarray(scipy.linalg.block_diag(*blocks))


def _wishart_covariance(covariance: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """(G, d*d, d*d) Cov(S_ij, S_kl) = (S_ik S_jl + S_il S_jk) / m_g of every (G, d, d) covariance, C order."""
    G, d, _ = covariance.shape
    pairs = np.einsum("gik,gjl->gijkl", covariance, covariance)
    pairs = pairs + pairs.transpose(0, 1, 2, 4, 3)  # + S_il S_jk
    return pairs.reshape(G, d * d, d * d) / counts[:, np.newaxis, np.newaxis]


def _duplication(d: int) -> np.ndarray:
    """The (d*d, d(d+1)/2) duplication matrix D: vec(S) = D vech(S), vech = the lower triangle row by row."""
    rows, columns = np.tril_indices(d)
    matrix = np.zeros((d * d, rows.size))
    matrix[rows * d + columns, np.arange(rows.size)] = 1.0
    matrix[columns * d + rows, np.arange(rows.size)] = 1.0
    return matrix


def _lkj_map_covariance(
    stats: _Statistics, constants: _PriorConstants, eta: float, mean: np.ndarray, covariance: np.ndarray
) -> np.ndarray | None:
    r"""Inverse Hessian of the negative LKJ-prior log posterior (module docstring) at (``mean``, ``covariance``).

    Over the class means (K*d) then every group's covariance flattened (G*d*d, both copies of each symmetric
    pair, through the duplication matrix); None where the Hessian is not positive definite. With
    :math:`P = \Sigma^{-1}`, :math:`r_k = ar x_k - \mu_k`, :math:`u_k = P r_k`,
    :math:`M = S + \sum_k N_k r_k r_k^	op`, :math:`c = N_g/2 - (\eta - 1)`, :math:`b = \eta - 1 + d/2`:
    :math:`\partial^2/\partial\mu_k^2 = N_k P + \operatorname{diag}(s_0^{-2})`,
    :math:`\partial^2/\partial\mu_{ki}\partial\Sigma_{ab} = N_k P_{ia} u_{kb}`, and the second differential
    over :math:`\Sigma` is :math:`\operatorname{tr}(PMP\,d\Sigma\,P\,d\Sigma) - c \operatorname{tr}(P\,d\Sigma\,P\,
    d\Sigma) - b \sum_i d\Sigma_{ii}^2/\Sigma_{ii}^2`, taken to the free elements by the duplication matrix.
    """
    n = stats.class_counts
    K, d = mean.shape
    G = covariance.shape[0]
    group_of_class = np.zeros(K, dtype=int) if G == 1 else np.arange(K)
    precision = np.linalg.inv(covariance)  # (G, d, d)
    residual = stats.class_means - mean  # (K, d)
    projected = (precision[group_of_class] @ residual[..., np.newaxis])[..., 0]  # u_k (K, d)
    outer = n[:, None, None] * residual[:, :, None] * residual[:, None, :]
    spread = stats.scatter + (outer.sum(axis=0, keepdims=True) if G == 1 else outer)  # M (G, d, d)
    group_counts = np.array([n.sum()]) if G == 1 else n
    c = group_counts / 2 - (eta - 1)
    b = eta - 1 + d / 2
    duplication = _duplication(d)
    v = duplication.shape[1]

    def pair_form(left: np.ndarray, right: np.ndarray) -> np.ndarray:  # tr(A dS B dS) as (G, d*d, d*d), symmetric
        form = np.einsum("gfa,gbe->gabef", left, right).reshape(G, d * d, d * d)
        return (form + form.swapaxes(-1, -2)) / 2

    sandwich = precision @ spread @ precision
    sigma_sigma = pair_form(sandwich, precision) - c[:, None, None] * pair_form(precision, precision)
    diagonal = np.arange(d) * (d + 1)
    sigma_sigma[:, diagonal, diagonal] -= b / np.einsum("gii->gi", covariance) ** 2
    sigma_sigma = duplication.T @ sigma_sigma @ duplication  # (G, v, v)
    mean_mean = np.einsum(
        "kl,kij->kilj", np.eye(K), n[:, None, None] * precision[group_of_class] + np.diag(constants.mean_sd**-2.0)
    ).reshape(K * d, K * d)
    cross = n[:, None, None, None] * precision[group_of_class][:, :, :, None] * projected[:, None, None, :]
    cross = cross.reshape(K, d, d * d) @ duplication  # (K, d, v)
    cross = np.einsum("kg,kiv->kigv", np.eye(G)[group_of_class], cross).reshape(K * d, G * v)
    hessian = np.block([[mean_mean, cross], [cross.T, _block_diagonal(tuple(sigma_sigma))]])
    try:
        factor = scipy.linalg.cho_factor(hessian)
    except np.linalg.LinAlgError:
        return None
    inverse = scipy.linalg.cho_solve(factor, np.eye(hessian.shape[0]))
    to_full = _block_diagonal((np.eye(K * d), *([duplication] * G)))
    return to_full @ inverse @ to_full.T


def _required(conjugate: _Conjugate | None) -> _Conjugate:
    """The Normal-Inverse-Wishart posterior of :meth:`GaussianClassConditional._fitted`, present under that prior.

    Only the inverse-Wishart prior's methods and kinds ask for it, so None here is a bug.
    """
    if conjugate is None:
        raise AssertionError("the Normal-Inverse-Wishart posterior exists under the inverse-Wishart prior only")
    return conjugate


def _cholesky(covariance: np.ndarray) -> np.ndarray:
    try:
        return np.linalg.cholesky(covariance)
    except np.linalg.LinAlgError:
        raise ValueError(
            "a covariance matrix of these parameters is not positive definite (singular or not symmetric); "
            "estimate it with regularization > 0 or from the posterior"
        ) from None


def _solve_spd(cholesky: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """Sigma^{-1} rhs_k for rows rhs (..., K, d) and Sigma = L L' (..., G, d, d).

    Uses the batched inverse of the triangular factor (a NumPy gufunc): SciPy's batched
    ``solve_triangular`` loops over the batch in Python, ~1000x slower for many small matrices.
    """
    inverse = np.linalg.inv(cholesky)
    precision = inverse.swapaxes(-1, -2) @ inverse  # (..., G, d, d)
    return (precision @ rhs[..., np.newaxis])[..., 0]


def _singular(scatter: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """True per (G, d, d) scatter matrix that is singular up to rounding.

    Judged on ``scatter / sqrt(scale_i scale_j)`` with ``scale`` (G, d) the same scatter
    of the pooled data (rows times the pooled feature variances), so that the verdict does
    not depend on the units of the features, and a feature constant within the classes
    (a diagonal entry that is rounding noise next to its pooled variance) counts as singular.
    """
    root = np.sqrt(scale)
    values = np.linalg.eigvalsh(scatter / (root[..., :, np.newaxis] * root[..., np.newaxis, :]))
    return values[..., 0] <= scatter.shape[-1] * np.finfo(float).eps * 100


def _inverse_wishart_draws(
    rng: np.random.Generator, scale: np.ndarray, dof: np.ndarray, size: tuple[int, ...]
) -> np.ndarray:
    """Sigma ~ InvWishart(scale, dof) for every (G, d, d) scale, shape (*size, G, d, d), by Bartlett's decomposition.

    Sigma^{-1} = (C A)(C A)' with C = chol(scale^{-1}), A lower triangular with
    A_ii^2 ~ chi2(dof - i) (0-based i) and A_ij ~ N(0, 1) below the diagonal.
    """
    G, d, _ = scale.shape
    shape = (*size, G, d, d)
    chi2 = rng.chisquare(dof[:, np.newaxis] - np.arange(d), size=(*size, G, d))
    bartlett = np.tril(rng.standard_normal(shape), -1)
    rows, columns = np.diag_indices(d)
    bartlett[..., rows, columns] = np.sqrt(chi2)
    inverse_scale_factor = np.linalg.cholesky(np.linalg.inv(scale))  # (G, d, d)
    root = np.linalg.inv(inverse_scale_factor @ bartlett)  # (C A)^{-1}
    covariance = root.swapaxes(-1, -2) @ root
    return (covariance + covariance.swapaxes(-1, -2)) / 2


#: Newton steps that finish an LKJ-prior MAP where L-BFGS stopped short of the gradient tolerance
NEWTON_FINISH_STEPS = 3


def _newton_finish(
    negative_log_density: Callable[[np.ndarray], tuple[float, np.ndarray]], theta: np.ndarray
) -> tuple[np.ndarray, float, np.ndarray]:
    """Newton steps from ``theta`` (the Hessian by differences of the analytic gradient): (theta, value, gradient).

    Strongly correlated features (crabs' five size measures, standardised or not) leave L-BFGS's line search where
    the rounding of the density hides its slope ("ABNORMAL", gradient 3e-4 at a Newton decrement of 7e-10); there
    the Hessian is well conditioned (6e3) and two Newton steps bring the gradient to 4e-11. A step is taken while
    the Hessian is positive definite and the density does not fall beyond rounding.
    """
    value, gradient = negative_log_density(theta)
    for _ in range(NEWTON_FINISH_STEPS):
        hessian = scipy.optimize.approx_fprime(theta, lambda point: negative_log_density(point)[1], 1e-6)
        try:
            factor = scipy.linalg.cho_factor((hessian + hessian.T) / 2)
        except np.linalg.LinAlgError:
            break
        candidate = theta - scipy.linalg.cho_solve(factor, gradient)
        candidate_value, candidate_gradient = negative_log_density(candidate)
        if not candidate_value <= value + 1e-12 * abs(value):
            break
        theta, value, gradient = candidate, candidate_value, candidate_gradient
    return theta, value, gradient


def _lkj_map(
    stats: _Statistics, constants: _PriorConstants, eta: float, *, shared: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Posterior mode of (mu, Sigma) under the LKJ prior (module docstring), by L-BFGS with the analytic gradient.

    Works in units of ``constants.unit`` (a linear map with constant Jacobian, so the
    mode maps back exactly) with Sigma_g = L_g L_g', L_g's diagonal on the log scale.
    Returns means (K, d) and covariances (G, d, d) in the data's units.
    """
    unit = constants.unit  # in these units the prior centre m_0 is the origin
    n = stats.class_counts
    xbar = (stats.class_means - constants.center) / unit
    scatter = stats.scatter / np.outer(unit, unit)  # (G, d, d)
    s0 = constants.mean_sd / unit
    tau = constants.sd_scale / unit
    K, d = xbar.shape
    G = 1 if shared else K
    group_counts = np.array([n.sum()]) if shared else n
    c = group_counts / 2 - (eta - 1)
    b = eta - 1 + d / 2
    rows, columns = np.tril_indices(d)
    diagonal = rows == columns

    def group_sum(array: np.ndarray) -> np.ndarray:
        return array.sum(axis=0, keepdims=True) if shared else array

    def unpack(theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        mean = theta[: K * d].reshape(K, d)
        packed = theta[K * d :].reshape(G, rows.size)
        cholesky = np.zeros((G, d, d))
        cholesky[:, rows, columns] = np.where(diagonal, np.exp(packed), packed)
        return mean, cholesky

    def negative_log_density(theta: np.ndarray) -> tuple[float, np.ndarray]:
        mean, cholesky = unpack(theta)
        inverse = np.linalg.inv(cholesky)
        precision = inverse.swapaxes(-1, -2) @ inverse  # (G, d, d)
        residual = xbar - mean
        spread = scatter + group_sum(
            n[:, np.newaxis, np.newaxis] * residual[:, :, np.newaxis] * residual[:, np.newaxis, :]
        )
        variances = np.einsum("gii->gi", cholesky @ cholesky.swapaxes(-1, -2))
        log_det = 2 * np.log(np.einsum("gii->gi", cholesky)).sum(axis=-1)
        value = (
            -np.sum(c * log_det)
            - 0.5 * np.sum(precision * spread)
            - b * np.log(variances).sum()
            - np.sum(variances / (2 * tau**2))
            - np.sum(mean**2 / (2 * s0**2))
        )
        class_precision = precision if not shared else np.broadcast_to(precision, (K, d, d))
        grad_mean = n[:, np.newaxis] * (class_precision @ residual[..., np.newaxis])[..., 0] - mean / s0**2
        grad_sigma = (
            -c[:, np.newaxis, np.newaxis] * precision
            + 0.5 * precision @ spread @ precision
            - np.eye(d) * (b / variances + 1 / (2 * tau**2))[:, np.newaxis, :]
        )
        grad_cholesky = 2 * grad_sigma @ cholesky
        grad_packed = grad_cholesky[:, rows, columns] * np.where(diagonal, cholesky[:, rows, columns], 1.0)
        return -value, -np.concatenate([grad_mean.ravel(), grad_packed.ravel()])

    start_cholesky = np.linalg.cholesky(scatter / group_counts[:, np.newaxis, np.newaxis])
    start = np.concatenate(
        [
            xbar.ravel(),
            np.where(
                diagonal, np.log(np.abs(start_cholesky[:, rows, columns]) + 1e-300), start_cholesky[:, rows, columns]
            ).ravel(),
        ]
    )
    result = scipy.optimize.minimize(
        negative_log_density,
        start,
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": 20_000, "gtol": 1e-9, "ftol": 1e-15},
    )
    tolerance = 1e-5 * max(1.0, float(n.sum())) ** 0.5
    theta, value, jacobian = result.x, result.fun, result.jac
    if np.isfinite(value) and np.abs(jacobian).max() > tolerance:
        theta, value, jacobian = _newton_finish(negative_log_density, theta)
    gradient = np.abs(jacobian).max()
    if not np.isfinite(value) or gradient > tolerance:
        raise ConvergenceError(
            f"the LKJ-prior MAP optimiser stopped with gradient {gradient:.3g} ({result.message}); "
            f"use the NUTS posterior or {_inverse_wishart()}"
        )
    mean, cholesky = unpack(theta)
    covariance = cholesky @ cholesky.swapaxes(-1, -2)
    return constants.center + mean * unit, covariance * np.outer(unit, unit)
