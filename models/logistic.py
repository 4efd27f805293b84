r"""Gaussian-prior logistic regression: binary (logit or probit link) and multiclass softmax.

Model
-----
Binary (2 classes; the second class name is the "positive" class :math:`c_1`),
seed 000 eq 9.41 and seed 004 "Probit Models":

.. math::

    P(c_1 \mid \mathbf{x}) = g(b + \mathbf{w}^\top \mathbf{x}), \qquad
    g = \text{logistic } (1 + e^{-a})^{-1} \text{ (link "logit") or }
    g = \Phi \text{ (link "probit")},

    w_j \sim \mathcal{N}(0, \sigma_w^2), \qquad b \sim \mathcal{N}(0, \sigma_b^2).

Multiclass (K >= 3 classes, seed 000 eq 9.43 written with a + sign):

.. math::

    P(c_k \mid \mathbf{x}) = \frac{\exp(b_k + \mathbf{w}_k^\top \mathbf{x})}
                                 {\sum_{\ell} \exp(b_\ell + \mathbf{w}_\ell^\top \mathbf{x})}.

The softmax is unchanged by adding one vector to every :math:`\mathbf{w}_k`, so
the model is made identifiable with **zero-sum** weights and intercepts,
:math:`\sum_k \mathbf{w}_k = 0`, :math:`\sum_k b_k = 0`, with
``pm.ZeroSumNormal(sigma)`` priors. That density is the iid
:math:`\mathcal{N}(0, \sigma^2)` density restricted to the zero-sum subspace, so
the MAP equals the symmetric L2-penalised multinomial fit (scikit-learn's
``LogisticRegression(C=sigma**2)``), whose solution is zero-sum anyway. (The
reference-class form of seed 003 "Multinomial Logistic Regression" has the same
likelihood but puts its prior on differences to the last class, a different
model.) Probit is binary only: a multinomial probit has no closed form.

Point estimates (seed 003 "Computing MLE" / "Computing MAP")
-------------------------------------------------------------
With :math:`\theta = (b, \mathbf{w})` and log-likelihood :math:`\ell(\theta)`
(seed 000 eq 9.46), the MAP minimises

.. math::

    f(\theta) = -\ell(\theta) + \tfrac{1}{2\sigma_b^2} b^2
              + \tfrac{1}{2\sigma_w^2} \mathbf{w}^\top\mathbf{w},

(``intercept_sigma=inf`` leaves the intercept unpenalised) and the MLE drops
both penalties. Both are found by Newton's method with the exact Hessian
(:math:`X^\top \operatorname{diag}(p_i(1-p_i)) X` for the logit link, seed 000
eqs 9.47-9.49) and a backtracking line search, to a gradient norm of ``1e-8``.
The MLE does not exist when the data are (quasi-)linearly separable (seed 000
§9.6: "weights grow without bound"); a linear programme detects that before any
iteration and :class:`SeparationError` says so. MAP and posterior stay finite.

Sampling parametrisation
------------------------
``parametrization="whitened"`` (the default) lets NUTS see the same posterior
through the fixed linear map :math:`\theta = \hat\theta_{MAP} + L^{-\top} z`,
where :math:`L L^\top` is the exact Hessian of :math:`f` at the MAP (the Laplace
approximation). The Jacobian is constant, so the posterior of ``intercept`` and
``weights`` is unchanged, while :math:`z` is close to standard normal: NUTS
takes short, uncorrelated trajectories even on strongly correlated features.
``parametrization="centered"`` builds the textbook model verbatim.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

import numpy as np

from bayesclass._lazy import lazy_import
from bayesclass.data import Dataset
from bayesclass.data.arguments import spelled
from bayesclass.data.constraints import Constrained, Positive
from bayesclass.models._laplace import newton_maximize
from bayesclass.models._links import Link, bernoulli_terms, log_normal_cdf
from bayesclass.models.approximation import GaussianApproximation, flatten_parameters
from bayesclass.models.base import (
    ClassifierModel,
    ClassProbaKernel,
    ConvergenceError,
    NoEstimateError,
    affine,
    draws_last,
    kernel_of,
    leading_dims_of,
    softmax_over_classes,
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

__all__ = ["ConvergenceError", "LogisticPrior", "LogisticRegression", "SeparationError"]

Parametrization = Literal["whitened", "centered"]

#: gradient-norm tolerance of the Newton iterations
GRADIENT_TOLERANCE = 1e-8


class SeparationError(NoEstimateError):
    """The MLE does not exist because the training data are linearly separable."""


@dataclass(frozen=True)
class LogisticPrior(Constrained):
    r"""Gaussian priors of logistic regression.

    Parameters
    ----------
    weight_sigma : float
        Prior standard deviation of every weight, :math:`w_j \sim N(0, \sigma_w^2)`
        (seed 000 §9.6 "weight-decay prior"; MAP = L2 penalty with C = sigma**2), on standardised inputs.
    intercept_sigma : float
        Prior standard deviation of the intercept(s); ``math.inf`` gives a flat,
        unpenalised intercept (as scikit-learn's).
    """

    weight_sigma: Annotated[float, Positive()] = field(default=1.0, metadata={"cli_aliases": ("--prior-sigma",)})
    intercept_sigma: Annotated[float, Positive(allow_inf=True)] = 10.0


@dataclass(frozen=True, kw_only=True)
class LogisticRegression(ClassifierModel):
    """Bayesian logistic regression (see the module docstring for the equations).

    Parameters
    ----------
    prior : LogisticPrior
        Gaussian priors of weights and intercept.
    link : {"logit", "probit"}
        Inverse link of the binary model; multiclass models are softmax (logit).
    parametrization : {"whitened", "centered"}
        How the PyMC model presents the same posterior to NUTS (module docstring).
    """

    name: ClassVar[str] = "logistic"
    prior_variables: ClassVar[dict[str, str]] = {"prior.weight_sigma": "weights", "prior.intercept_sigma": "intercept"}
    #: a categorical column enters as treatment-coded dummies ("colour=green"), never as its codes
    categorical_coding: ClassVar[Literal["native", "treatment"]] = "treatment"
    #: intercept and weights are real-valued: N(MAP, inverse Hessian) is the posterior's Laplace approximation
    map_approximation_unconstrained: ClassVar[bool] = True

    prior: LogisticPrior = field(default_factory=LogisticPrior)
    link: Link = "logit"
    parametrization: Parametrization = "whitened"

    def convergence_advice(self, failed: tuple[str, ...]) -> tuple[str, ...]:
        """What to try when posterior draws explore badly: the other parametrisation (module docstring).

        Parameters
        ----------
        failed : tuple of str
            The failed checks of the verdict, by name (as for the base method).

        Returns
        -------
        tuple of str
            The parametrisation this model does not use, with its flag.
        """
        if not failed:
            return ()
        other = "centered" if self.parametrization == "whitened" else "whitened"
        return (
            f"the {other} parametrisation ({spelled('parametrization', other, owner='LogisticRegression')}, was "
            f"{self.parametrization})",
        )

    def parameter_names(self, data: Dataset) -> tuple[str, ...]:
        """The parameters of the model of ``data``: the intercept(s) and the weights.

        Parameters
        ----------
        data : Dataset
            Training data (the names are the same for any data).

        Returns
        -------
        tuple of str
            ``("intercept", "weights")``.
        """
        return ("intercept", "weights")

    def log_odds_parameters(self, n_classes: int) -> tuple[str, ...] | None:
        """``("intercept", "weights")`` for two classes and the logit link; None otherwise.

        Probit coefficients are on another scale (about 1/1.7 of the logit's) and the multiclass zero-sum
        coefficients are not the log-odds against class 0.

        Parameters
        ----------
        n_classes : int
            The number of classes.

        Returns
        -------
        tuple of str or None
            The parameters whose flattened values are the log-odds' intercept and slopes, or None.
        """
        return ("intercept", "weights") if n_classes == 2 and self.link == "logit" else None

    def prior_formulas(self, *, n_classes: int | None = None) -> tuple[str, ...]:
        """The prior and likelihood as plain-text formulas, one statement per line.

        Two classes: independent normal priors; more classes: the zero-sum normal of the multinomial logit
        (module docstring).

        Parameters
        ----------
        n_classes : int, optional
            Keep only the statements for that many classes (both forms when None).

        Returns
        -------
        tuple of str
            The statements, the parametrization last.
        """
        prior = self.prior
        intercept = (
            "flat (improper)" if math.isinf(prior.intercept_sigma) else f"Normal(0, {prior.intercept_sigma:g}^2)"
        )
        link = "logistic(eta)" if self.link == "logit" else "Phi(eta), the standard normal CDF"
        binary = (
            f"intercept ~ {intercept};  weights[feature] ~ Normal(0, {prior.weight_sigma:g}^2)",
            f"eta = intercept + x . weights;  y ~ Bernoulli(p = {link})",
        )
        multiclass = (
            f"intercept[class] ~ ZeroSumNormal({prior.intercept_sigma:g}) (flat over the sum-zero plane when "
            f"infinite);  weights[feature, class] ~ ZeroSumNormal({prior.weight_sigma:g})",
            "eta[class] = intercept[class] + x . weights[:, class];  y ~ Categorical(softmax(eta))",
        )
        lines: tuple[str, ...]
        if n_classes is None:
            lines = ("two classes:", *binary, "more classes:", *multiclass)
        else:
            lines = binary if n_classes == 2 else multiclass
        return (*lines, f"parametrization: {self.parametrization}")

    def check_training_data(self, data: Dataset) -> None:
        """The base checks, plus: the probit link needs exactly 2 classes.

        Parameters
        ----------
        data : Dataset
            Training data.

        Raises
        ------
        ValueError
            Fewer than 2 classes, a class without rows, or ``link="probit"`` with more than 2 classes.
        """
        super().check_training_data(data)
        self._check_link(data.n_classes, data.class_names)

    # -- helpers -----------------------------------------------------------------------
    def _check_link(self, n_classes: int, class_names: tuple[str, ...]) -> None:
        if self.link == "probit" and n_classes != 2:
            raise ValueError(
                f"{spelled('link', 'probit')} is only defined for 2 classes, the data have {n_classes} "
                f"({', '.join(class_names)}); use {spelled('link', 'logit')} (softmax) for multiclass data"
            )

    def _penalty(self, n_features: int, n_free_classes: int, kind: str) -> np.ndarray:
        """Diagonal of the prior precision over the flattened coefficients (intercept first in each row)."""
        if kind == "mle":
            return np.zeros(n_free_classes * (n_features + 1))
        row = np.full(n_features + 1, self.prior.weight_sigma**-2)
        row[0] = self.prior.intercept_sigma**-2  # 0 for a flat intercept
        return np.tile(row, n_free_classes)

    # -- point estimates ---------------------------------------------------------------
    def _point_estimate(self, data: Dataset, kind: str) -> xr.Dataset:
        solution = self._newton(data, kind)
        estimate = self._coefficients_to_dataset(solution.coefficients, data)
        estimate.attrs.update(
            gradient_norm=solution.gradient_norm,
            n_iterations=solution.n_iterations,
            negative_log_objective=solution.objective,
        )
        return estimate

    # Datasets are immutable: build() and point_estimate() share one solve (at most 4 datasets kept)
    @functools.lru_cache(maxsize=4)  # noqa: B019
    def _newton(self, data: Dataset, kind: str) -> _NewtonSolution:
        self._check_link(data.n_classes, data.class_names)
        design = _design_matrix(data.X)
        if kind == "mle":
            _check_mle_exists(design, data)
        n_free = 1 if data.n_classes == 2 else data.n_classes - 1
        objective = (
            _BinaryObjective(design, data.y, self.link)
            if data.n_classes == 2
            else _SoftmaxObjective(design, data.y, data.n_classes)
        )
        return _minimise_newton(objective, self._penalty(data.n_features, n_free, kind), kind=kind)

    def _coefficients_to_dataset(self, coefficients: np.ndarray, data: Dataset) -> xr.Dataset:
        if data.n_classes == 2:
            variables = {"intercept": ((), coefficients[0]), "weights": (("feature",), coefficients[1:])}
        else:
            full = _zero_sum_basis(data.n_classes) @ coefficients.reshape(data.n_classes - 1, -1)
            variables = {"intercept": (("class",), full[:, 0]), "weights": (("feature", "class"), full[:, 1:].T)}
        return self.with_coords(xr.Dataset(variables), data)

    # -- PyMC model --------------------------------------------------------------------
    def build(self, data: Dataset) -> pm.Model:
        """The PyMC model (module docstring), with data in ``pm.Data`` containers ``X`` and ``y``.

        Data containers (``X``, ``y`` and, when whitened, ``laplace_mode`` and
        ``laplace_scale``) can be swapped for other data of the same number of
        features and classes without rebuilding (``pm.set_data`` or nutpie's
        ``with_data``).

        Parameters
        ----------
        data : Dataset
            Training data; a probit link needs two classes.

        Returns
        -------
        pymc.Model
            The model, dims ``obs``, ``feature`` (and ``class`` for more than two classes).
        """
        self.check_training_data(data)
        self._check_link(data.n_classes, data.class_names)
        binary = data.n_classes == 2
        with pm.Model(coords=self.model_coords(data)) as model:
            X = pm.Data("X", data.X, dims=("obs", "feature"))
            y = pm.Data("y", data.y, dims="obs")
            if self.parametrization == "whitened":
                intercept, weights = self._whitened_coefficients(data)
            else:
                intercept, weights = self._centered_coefficients(binary)
            eta = intercept + pt.dot(X, weights)
            if binary and self.link == "logit":
                pm.Bernoulli("y_obs", logit_p=eta, observed=y, dims="obs")
            elif binary:
                # logit(Phi(eta)) = log Phi(eta) - log Phi(-eta): exact and stable in both tails
                pm.Bernoulli("y_obs", logit_p=log_normal_cdf(eta) - log_normal_cdf(-eta), observed=y, dims="obs")
            else:
                pm.Categorical("y_obs", logit_p=eta, observed=y, dims="obs")
        return model

    def _centered_coefficients(self, binary: bool) -> tuple[Any, Any]:
        sigma_b, sigma_w = self.prior.intercept_sigma, self.prior.weight_sigma
        if binary:
            intercept = pm.Flat("intercept") if math.isinf(sigma_b) else pm.Normal("intercept", 0.0, sigma_b)
            return intercept, pm.Normal("weights", 0.0, sigma_w, dims="feature")
        if math.isinf(sigma_b):
            n_classes = len(pm.modelcontext(None).coords["class"])
            free = pm.Flat("intercept_free", shape=n_classes - 1)
            intercept = pm.Deterministic("intercept", pt.dot(_zero_sum_basis(n_classes), free), dims="class")
        else:
            intercept = pm.ZeroSumNormal("intercept", sigma_b, dims="class")
        return intercept, pm.ZeroSumNormal("weights", sigma_w, dims=("feature", "class"))

    def _whitened_coefficients(self, data: Dataset) -> tuple[Any, Any]:
        solution = self._newton(data, "map")
        cholesky = np.linalg.cholesky(solution.hessian)
        scale = scipy.linalg.solve_triangular(cholesky.T, np.eye(len(cholesky)), lower=False)  # L^{-T}
        mode = pm.Data("laplace_mode", solution.coefficients)
        transform = pm.Data("laplace_scale", scale)
        z = pm.Flat("whitened_coefficients", shape=len(cholesky))
        coefficients = mode + pt.dot(transform, z)
        penalty = self._penalty(data.n_features, len(cholesky) // (data.n_features + 1), "map")
        pm.Potential("log_prior", -0.5 * pt.sum(penalty * coefficients**2))
        if data.n_classes == 2:
            intercept = pm.Deterministic("intercept", coefficients[0])
            weights = pm.Deterministic("weights", coefficients[1:], dims="feature")
            return intercept, weights
        full = pt.dot(_zero_sum_basis(data.n_classes), coefficients.reshape((data.n_classes - 1, -1)))
        intercept = pm.Deterministic("intercept", full[:, 0], dims="class")
        return intercept, pm.Deterministic("weights", full[:, 1:].T, dims=("feature", "class"))

    # -- prediction --------------------------------------------------------------------
    def class_proba_kernel(self, params: xr.Dataset) -> ClassProbaKernel:
        """P(class | x) from ``intercept`` and ``weights`` (any leading dims), eta = b + w'x by one matrix product.

        Binary: g(-eta), g(eta) (seed 000 eq 9.41), and in the log domain log g(-eta), log g(eta)
        (``log_expit`` / ``log_ndtr``, never the log of a rounded probability). Multiclass:
        softmax / log-softmax over classes (seed 000 eq 9.43; ``scipy.special.log_softmax``).

        Parameters
        ----------
        params : xarray.Dataset
            ``intercept`` and ``weights``: posterior draws (any leading dims) or one point estimate.

        Returns
        -------
        ClassProbaKernel
            The prediction function of ``params``.
        """
        weights = params["weights"]
        leading = leading_dims_of(weights, "feature", "class")
        binary = "class" not in weights.dims
        own = ("feature",) if binary else ("feature", "class")
        # (feature, [class,] draws) -> one column per (class, draw): eta comes out (obs, class, draws)
        intercept = draws_last(params["intercept"], leading, *own[1:]).reshape(1, -1)
        slopes = draws_last(weights, leading, *own).reshape(weights.sizes["feature"], -1)
        coefficients = np.vstack([slopes, intercept])  # [x, 1] @ coefficients = w'x + b
        n_draws = intercept.size if binary else intercept.size // weights.sizes["class"]
        cdf, log_cdf = (
            (scipy.special.expit, scipy.special.log_expit)
            if self.link == "logit"
            else (scipy.special.ndtr, scipy.special.log_ndtr)
        )

        def evaluate(X: np.ndarray, log: bool) -> np.ndarray:
            eta = affine(X) @ coefficients
            if not binary:
                eta = eta.reshape(X.shape[0], -1, n_draws)
                return scipy.special.log_softmax(eta, axis=1) if log else softmax_over_classes(eta)
            out = np.empty((X.shape[0], 2, n_draws))
            function = log_cdf if log else cdf
            function(eta, out=out[:, 1])
            np.negative(eta, out=eta)
            function(eta, out=out[:, 0])
            return out

        return kernel_of(params, evaluate, leading_dims=leading)

    def _gaussian_approximation(self, data: Dataset, kind: str) -> GaussianApproximation:
        """N(estimate, inverse exact Hessian) of the MLE (observed information) or the MAP (penalised Hessian).

        Over ``intercept`` then ``weights`` flattened (:func:`~bayesclass.models.approximation.flatten_parameters`).
        Multiclass: the Hessian is over the free coefficients V of the zero-sum parametrisation, full = B V
        linearly, so the covariance of the full coefficients is ``B Sigma_free B'`` (singular: they sum to 0).
        """
        solution = self._newton(data, kind)
        size = len(solution.hessian)
        free_covariance = scipy.linalg.cho_solve(scipy.linalg.cho_factor(solution.hessian), np.eye(size))
        names = self.parameter_names(data)
        to_full = np.column_stack(  # the linear map free -> flattened full coefficients, column by column
            [flatten_parameters(self._coefficients_to_dataset(unit, data), names) for unit in np.eye(size)]
        )
        curvature = (
            "inverse observed information (Hessian of the negative log-likelihood) at the MLE"
            if kind == "mle"
            else "inverse Hessian of the negative log posterior at the MAP (Laplace curvature)"
        )
        estimate = self._coefficients_to_dataset(solution.coefficients, data)
        return GaussianApproximation.of(kind, estimate, names, to_full @ free_covariance @ to_full.T, curvature)

    def class_proba_interval_kernel(
        self, estimate: xr.Dataset, approximation: GaussianApproximation, interval_prob: float
    ) -> Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]:
        r"""Delta-method intervals of P(class | x), as statsmodels' ``get_prediction().conf_int()``.

        Binary: the Wald interval of the linear predictor :math:`\eta = b + w^\top x`,
        :math:`\hat\eta \pm z \sqrt{a^\top \Sigma a}` with :math:`a = (1, x)`, mapped through the inverse
        link (so it stays in (0, 1)); class 0 gets the complement. Multiclass: the delta method on the
        probabilities themselves, :math:`\operatorname{Var} p = J C J^\top` with :math:`C` the covariance of
        :math:`\eta` and :math:`J = \operatorname{diag}(p) - p p^\top`, :math:`p \pm z \operatorname{sd}`
        clipped to [0, 1].

        Parameters
        ----------
        estimate : xarray.Dataset
            The point estimate (``intercept``, ``weights``).
        approximation : GaussianApproximation
            Its normal approximation over ``intercept`` then ``weights``.
        interval_prob : float
            The intervals' probability, in (0, 1).

        Returns
        -------
        callable
            ``bounds(X) -> (low, high)``, each ``(n_obs, n_class)``.
        """
        if approximation.names != ("intercept", "weights"):
            raise ValueError(f"a logistic covariance is over intercept, weights; got {approximation.names}")
        z = scipy.stats.norm.ppf(0.5 + interval_prob / 2.0)
        covariance = np.asarray(approximation.covariance)
        coefficients = approximation.params
        weights = estimate["weights"]
        if "class" not in weights.dims:
            cdf = scipy.special.expit if self.link == "logit" else scipy.special.ndtr

            def binary_bounds(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
                design = _design_matrix(X)
                eta = design @ coefficients
                half = z * np.sqrt(np.clip(((design @ covariance) * design).sum(axis=1), 0.0, None))
                low = np.column_stack([cdf(-(eta + half)), cdf(eta - half)])
                return low, np.column_stack([cdf(-(eta - half)), cdf(eta + half)])

            return binary_bounds
        n_classes = weights.sizes["class"]
        # flattened [intercept; weights] is the (feature + 1, class) matrix M in C order: eta = [1, x] @ M
        matrix = coefficients.reshape(-1, n_classes)
        blocks = covariance.reshape(len(matrix), n_classes, len(matrix), n_classes)

        def softmax_bounds(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            design = _design_matrix(X)
            proba = scipy.special.softmax(design @ matrix, axis=1)
            eta_covariance = np.einsum("ia,akbl,ib->ikl", design, blocks, design, optimize=True)
            jacobian = proba[:, :, None] * np.eye(n_classes)[None] - proba[:, :, None] * proba[:, None, :]
            variance = np.einsum("ikl,ilm,ikm->ik", jacobian, eta_covariance, jacobian, optimize=True)
            half = z * np.sqrt(np.clip(variance, 0.0, None))
            return np.clip(proba - half, 0.0, 1.0), np.clip(proba + half, 0.0, 1.0)

        return softmax_bounds

    def laplace_covariance(self, data: Dataset) -> np.ndarray:
        """Inverse exact Hessian at the MAP over the flattened free coefficients.

        Parameters
        ----------
        data : Dataset
            Training data.

        Returns
        -------
        numpy.ndarray of shape (p, p)
            The Laplace covariance, ``p`` = (n_features + 1) per free class row, intercept first in each row.
        """
        return np.linalg.inv(self._newton(data, "map").hessian)


# ---------------------------------------------------------------------------------------
# Newton's method


@dataclass(frozen=True)
class _NewtonSolution:
    coefficients: np.ndarray  # flattened free coefficients, intercept first in each class row
    hessian: np.ndarray  # exact Hessian of the objective (penalty included) at the solution
    gradient_norm: float
    n_iterations: int
    objective: float

    def __post_init__(self) -> None:
        for array in (self.coefficients, self.hessian):  # shared through the cache: never mutated
            array.flags.writeable = False


def _design_matrix(X: np.ndarray) -> np.ndarray:
    return np.hstack([np.ones((X.shape[0], 1)), X])


class _BinaryObjective:
    """-log-likelihood of the binary model with its gradient and exact Hessian (link terms from ``_links``)."""

    def __init__(self, design: np.ndarray, y: np.ndarray, link: Link) -> None:
        self.design, self.link = design, link
        self.y = y.astype(float)

    def __call__(self, coefficients: np.ndarray, *, derivatives: bool) -> tuple[float, ...]:
        log_likelihood, d_eta, curvature = bernoulli_terms(self.design @ coefficients, self.y, self.link)
        value = -log_likelihood.sum()
        if not derivatives:
            return (value,)
        gradient = -(self.design.T @ d_eta)
        # X' diag(c) X as Z'Z with Z = diag(sqrt c) X: BLAS uses the symmetric product (half the work)
        weighted = self.design * np.sqrt(curvature)[:, None]
        return value, gradient, weighted.T @ weighted


class _SoftmaxObjective:
    """-log-likelihood of the zero-sum softmax model over free coefficients V, W = Q V."""

    def __init__(self, design: np.ndarray, y: np.ndarray, n_classes: int) -> None:
        self.design, self.y, self.n_classes = design, y, n_classes
        self.basis = _zero_sum_basis(n_classes)  # (K, K-1), orthonormal columns
        self.onehot = np.eye(n_classes)[y]

    def __call__(self, coefficients: np.ndarray, *, derivatives: bool) -> tuple[float, ...]:
        n_obs, n_coef = self.design.shape
        free = coefficients.reshape(self.n_classes - 1, n_coef)
        log_proba = scipy.special.log_softmax(self.design @ (self.basis @ free).T, axis=1)
        value = -log_proba[np.arange(n_obs), self.y].sum()
        if not derivatives:
            return (value,)
        proba = np.exp(log_proba)
        gradient = self.basis.T @ ((proba - self.onehot).T @ self.design)
        # Hessian = sum_i Q'(diag p_i - p_i p_i')Q (x) x_i x_i'
        per_class = np.einsum("ik,ia,ib->kab", proba, self.design, self.design, optimize=True)
        first = np.einsum("km,kn,kab->manb", self.basis, self.basis, per_class, optimize=True)
        projected = (proba @ self.basis)[:, :, None] * self.design[:, None, :]
        flat = projected.reshape(n_obs, -1)
        size = (self.n_classes - 1) * n_coef
        hessian = first.reshape(size, size) - flat.T @ flat
        return value, gradient.ravel(), hessian


def _minimise_newton(objective: Any, penalty: np.ndarray, *, kind: str, max_iterations: int = 100) -> _NewtonSolution:
    """Minimise the penalised objective by the suite's one Newton engine (exact Hessian), to ||gradient|| <= 1e-8."""

    def value(coefficients: np.ndarray) -> tuple[float, None]:
        return -(objective(coefficients, derivatives=False)[0] + 0.5 * np.sum(penalty * coefficients**2)), None

    def newton(coefficients: np.ndarray, _: None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        _, gradient, hessian = objective(coefficients, derivatives=True)
        gradient, hessian = gradient + penalty * coefficients, hessian + np.diag(penalty)
        try:
            step = scipy.linalg.cho_solve(scipy.linalg.cho_factor(hessian), gradient)
        except np.linalg.LinAlgError:
            raise ValueError(
                f"the {kind.upper()} objective has a singular Hessian: some features are constant or "
                "collinear in the training data, so their weights are not identifiable; drop them, or use "
                f"{spelled('kind', 'map')} / a finite prior"
            ) from None
        return -gradient, coefficients - step, hessian

    result = newton_maximize(
        value,
        newton,
        np.zeros_like(penalty),
        gradient_tolerance=GRADIENT_TOLERANCE,
        max_iterations=max_iterations,
        what=f"Newton's method for the {kind.upper()}",
        hint=f"; standardise the features, the default (drop {spelled('standardize', False)})",
        at_round_off="raise",  # the returned estimate always meets GRADIENT_TOLERANCE
    )
    return _NewtonSolution(result.point, result.derivatives, result.gradient_norm, result.iterations, -result.objective)


def _zero_sum_basis(n_classes: int) -> np.ndarray:
    """Orthonormal basis (K, K-1) of the zero-sum subspace of R^K (a fixed Helmert-type basis)."""
    return scipy.linalg.null_space(np.ones((1, n_classes)))


# ---------------------------------------------------------------------------------------
# separation


def _check_mle_exists(design: np.ndarray, data: Dataset) -> None:
    """Raise :class:`SeparationError` when the data are (quasi-)linearly separable.

    The log-likelihood is bounded and has no maximiser iff there is a direction
    D of the coefficients along which no row's margin to any other class
    decreases and some increases. The linear programme maximises the summed
    margins over the box -1 <= D <= 1 under "no margin negative"; a positive
    optimum is such a direction (seed 000 §9.6).
    """
    constant = np.flatnonzero(np.ptp(data.X, axis=0) == 0)
    if constant.size:
        names = ", ".join(repr(data.feature_names[j]) for j in constant)
        raise ValueError(
            f"feature(s) {names} are constant in {data.name!r}, so their MLE weights are not identifiable "
            f"(the intercept absorbs them); drop them or use {spelled('kind', 'map')}"
        )
    scaled = design.copy()
    scaled[:, 1:] = (scaled[:, 1:] - scaled[:, 1:].mean(axis=0)) / scaled[:, 1:].std(axis=0)
    n_obs, n_coef = scaled.shape
    n_classes = data.n_classes
    if n_classes == 2:
        margins = scipy.sparse.csr_matrix((2.0 * data.y - 1.0)[:, None] * scaled)
    else:
        # rows (i, k != y_i): (D_{y_i} - D_k) . x_i
        rows = np.repeat(np.arange(n_obs), n_classes - 1)
        others = (data.y[:, None] + np.arange(1, n_classes)[None, :]) % n_classes
        own = np.repeat(data.y, n_classes - 1)
        columns = np.arange(n_coef)
        x_rows = np.repeat(scaled, n_classes - 1, axis=0)
        row_index = np.arange(rows.size)[:, None]
        margins = scipy.sparse.csr_matrix(
            (
                np.concatenate([x_rows, -x_rows], axis=1).ravel(),
                (
                    np.repeat(row_index, 2 * n_coef, axis=1).ravel(),
                    np.concatenate(
                        [own[:, None] * n_coef + columns, others.ravel()[:, None] * n_coef + columns], axis=1
                    ).ravel(),
                ),
            ),
            shape=(rows.size, n_classes * n_coef),
        )
    result = scipy.optimize.linprog(
        -np.asarray(margins.sum(axis=0)).ravel(),
        A_ub=-margins,
        b_ub=np.zeros(margins.shape[0]),
        bounds=(-1.0, 1.0),
        method="highs",
    )
    if result.status == 0 and -result.fun > 1e-6 * n_obs:
        # complete separation iff some direction makes EVERY margin positive: maximise the smallest one
        n_rows, n_coef_total = margins.shape
        smallest = scipy.optimize.linprog(
            np.r_[np.zeros(n_coef_total), -1.0],
            A_ub=scipy.sparse.hstack([-margins, np.ones((n_rows, 1))]),
            b_ub=np.zeros(n_rows),
            bounds=[(-1.0, 1.0)] * n_coef_total + [(0.0, 1.0)],
            method="highs",
        )
        what = "completely" if smallest.status == 0 and -smallest.fun > 1e-9 else "quasi-completely"
        raise SeparationError(
            f"the MLE does not exist: the classes of {data.name!r} are {what} linearly separable, so the "
            "likelihood keeps increasing as the weights grow without bound (seed 000 §9.6). Use "
            f"{spelled('kind', 'map')} (the Gaussian prior keeps the weights finite) or sample the posterior "
            f"({spelled('method', 'nuts')})"
        )
