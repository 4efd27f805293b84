r"""Naive Bayes with conjugate priors: Bernoulli, categorical, multinomial (count) and Gaussian features.

Model (seed 000 §9.5, seed 003 "Naive Bayes", seed 004 "Naive Bayes Models for Binary Inputs")
------------------------------------------------------------------------------------------------
The features are conditionally independent given the class (seed 000 eq 9.17,
9.19), so the class-conditional density is a product of one factor per
feature kind, chosen by the Dataset's ``feature_kinds``:

.. math::

    P(c = j \mid \mathbf{x}) \propto b_j \prod_{i \in \text{binary}} a_{ij}^{x_i}(1 - a_{ij})^{1 - x_i}
        \prod_{i \in \text{categorical}} \theta_{ij x_i}
        \prod_{v \in \text{count}} \phi_{jv}^{x_v}
        \prod_{i \in \text{continuous}} \mathcal{N}(x_i \mid \mu_{ij}, \sigma^2_{ij})

with priors (all hyperparameters in :class:`NaiveBayesPrior`)

=========================  ====================================================  ==============================
variable (dims)            prior                                                 meaning
=========================  ====================================================  ==============================
``class_prior`` (class)    :math:`b \sim \text{Dirichlet}(\beta_c)`              :math:`b_j = P(c=j)`, eq 9.30
``binary_proba``           :math:`a_{ij} \sim \text{Beta}(\alpha, \beta)`        :math:`P(F_i = 1 \mid c=j)`, eq 9.20
(class, binary_feature)
``category_proba``         :math:`\theta_{ij\cdot} \sim \text{Dirichlet}(\gamma)`  :math:`P(F_i = \ell \mid c=j)`
(class, category_level)    per class and categorical feature
``count_proba``            :math:`\phi_{j\cdot} \sim \text{Dirichlet}(\alpha_w)`   word probabilities of the
(class, count_feature)     over all count features of class j                   bag of words (seed 003 "Text")
``gaussian_mean``,         :math:`\sigma^2_{ij} \sim \text{InvGamma}(a_0, b_0)`,  seed 003 "Gaussian Naive Bayes"
``gaussian_variance``      :math:`\mu_{ij} \mid \sigma^2_{ij} \sim \mathcal{N}(m_0, \sigma^2_{ij}/\kappa_0)`
(class, continuous_feature)
=========================  ====================================================  ==============================

A binary feature read from two named levels (text such as ``sex``: ``female``,
``male``; ``bool``) is labelled along ``binary_feature`` by the level coded 1,
``"sex=male"``, as the discriminative families' treatment coding names it
(:mod:`bayesclass.data.coding`), so ``binary_proba`` says which level it is the
probability of; a 0/1 column of numbers keeps its name. The non-dimension coord
``binary_column`` names each entry's column (results written before it existed
have labels that are the column names, and are read as such).

A categorical feature with :math:`L` levels ("categorical" kind, codes
``0..L-1``) has one probability per level in each class; all levels of all
categorical features lie along one ``category_level`` dim, labelled
``"feature=level"``, with the non-dimension coords ``category_feature`` and
``category_code``. Count features ("count" kind, e.g. word counts or the
digits' pixel intensities) together form one multinomial per class, so that
``count_proba`` sums to 1 over ``count_feature`` (scikit-learn's
``MultinomialNB``); the multinomial coefficient does not depend on the class
and cancels in Bayes' rule.

The Gaussian prior is, by default (``autoscale=True``), stated in the
units of each feature: :math:`m_0` is the feature's pooled training mean and
:math:`b_0` is ``variance_beta`` times its pooled training variance
(the feature's scale enters only the prior's location and scale, as with
rstanarm's ``autoscale``). With ``autoscale=False`` the prior is
:math:`m_0 = ` ``mean_center`` and :math:`b_0 =` ``variance_beta``
in raw units.

Likelihood by sufficient statistics
-----------------------------------
The PyMC model sees the data only through per-class counts :math:`N_j`,
binary counts :math:`N_{ij} = \#\{x_i = 1, c = j\}`, level counts, summed
word counts and, for continuous features, :math:`N_j`, the class mean
:math:`\bar x_{ij}` and scatter :math:`S_{ij} = \sum_{c_k = j} (x_{ki} - \bar x_{ij})^2`:

.. math::

    \log p(D \mid \cdot) = \sum_j N_j \log b_j
      + \sum_{ij} [N_{ij} \log a_{ij} + (N_j - N_{ij}) \log(1 - a_{ij})] + \dots
      - \sum_{ij} \Big[\tfrac{N_j}{2} \log(2\pi\sigma^2_{ij})
                       + \frac{S_{ij} + N_j(\bar x_{ij} - \mu_{ij})^2}{2\sigma^2_{ij}}\Big]

written as ``pm.Potential`` terms (``class_counts_likelihood``,
``binary_ones_likelihood``, ``level_counts_likelihood``,
``word_counts_likelihood``, ``continuous_likelihood``). It differs from the
per-observation likelihood by a constant (the binomial and multinomial
coefficients, which depend on the data only and would otherwise be recomputed
at every gradient), so the posterior is identical and the cost of a gradient no
longer grows with the number of rows.

Sampling
--------
The model is the textbook one (``pm.Dirichlet``, ``pm.Beta``, ``pm.InverseGamma``,
``pm.Normal``; PyMC's log-odds / simplex / log transforms). A whitened variant
(additive log-ratios centred and scaled by the posterior moments, as the
logistic model does) was measured on binarised digits and gained nothing: NUTS
on ~650 nearly independent coordinates takes the same step size either way, and
the cost per gradient is the elementwise transforms, which no reparametrisation
removes.

Conjugate posteriors and closed forms
-------------------------------------
Every factor is conjugate, so the posterior is a product of
:math:`b \sim \text{Dirichlet}(\beta_c + N_j)`,
:math:`a_{ij} \sim \text{Beta}(\alpha + N_{ij}, \beta + N_j - N_{ij})` (seed 003
"Why is Beta so convenient?"), Dirichlet posteriors for the level and word
probabilities, and Normal-Inverse-Gamma posteriors

.. math::

    \kappa_n = \kappa_0 + N_j,\quad m_n = \frac{\kappa_0 m_0 + N_j \bar x}{\kappa_n},\quad
    a_n = a_0 + \tfrac{N_j}{2},\quad
    b_n = b_0 + \tfrac{S}{2} + \frac{\kappa_0 N_j (\bar x - m_0)^2}{2\kappa_n}.

:meth:`NaiveBayes.exact_posterior` draws from it independently (``method="exact"``).
The point estimates (``point_estimate(data, kind)``) are

``"mle"``
    :math:`b_j = N_j/N` (eq 9.27), :math:`a_{ij} = N_{ij}/N_j` (eq 9.28), level
    and word frequencies, class means and :math:`\sigma^2 = S/N_j` (seed 003
    "maximum likelihood estimator for :math:`\sigma^2_{ik}`").
``"unbiased"``
    the MLE with the unbiased variance :math:`S/(N_j - 1)` (seed 003 "MVUE").
``"map"``
    the joint posterior mode in the parametrisation above:
    :math:`(N_{ij} + \alpha - 1)/(N_j + \alpha + \beta - 2)` (seed 003 "MAP
    estimate"), :math:`(n_\ell + \gamma - 1)/(N + L\gamma - L)` for Dirichlets,
    :math:`\mu = m_n`, :math:`\sigma^2 = b_n / (a_n + 3/2)`. With the uniform
    default priors (all concentrations 1) the discrete MAP equals the MLE;
    ``binary_alpha = binary_beta = 2`` makes it Laplace smoothing.
``"posterior_mean"``
    :math:`(N_{ij} + \alpha)/(N_j + \alpha + \beta)` (= eq 9.29 for
    :math:`\alpha = \beta`, "Laplace"/additive smoothing), :math:`(N_j + \beta_c)/(N + K\beta_c)`
    (eq 9.30), :math:`\mu = m_n`, :math:`\sigma^2 = b_n/(a_n - 1)`. For binary
    and categorical features the plug-in of this estimate *is* the posterior
    predictive :math:`p(\mathbf{x}, c \mid D)`, because the posterior factorises
    and each parameter enters the joint once.

An estimate that does not exist (an MLE with a zero class variance or a class
without any counts, a MAP of a prior with concentration < 1 on a level the class
never shows ...) raises :class:`~models.base.NoEstimateError` naming the
parameter and the fix.

Relation to scikit-learn
------------------------
* ``BernoulliNB(alpha)``: its ``exp(feature_log_prob_)`` is the posterior mean of
  ``binary_proba`` with ``binary_alpha = binary_beta = alpha``.
* ``MultinomialNB(alpha)``: its ``exp(feature_log_prob_)`` is the posterior mean of
  ``count_proba`` with ``count_concentration = alpha``.
* ``GaussianNB(var_smoothing=0)``: ``theta_``, ``var_`` and ``class_prior_`` are the
  MLE. By default GaussianNB adds ``var_smoothing * max_j Var(x_j)`` (1e-9 times
  the largest pooled feature variance) to every class variance, for numerical
  stability; bayesclass does not: its MLE is the textbook one (a zero class
  variance is an error), and the MAP / posterior mean keep variances positive
  through the inverse-gamma prior instead.
* All three use the empirical class frequencies (``fit_prior=True``), which is
  the MLE of ``class_prior``; the posterior mean is (N_j + beta_c)/(N + K beta_c).

The tests check each of these to 1e-12.

Prediction (seed 000 eqs 9.24-9.26)
-----------------------------------
:meth:`NaiveBayes.class_log_proba` sums log factors and normalises with
``logsumexp``, for posterior draws and point estimates alike, so 10,000
binary features do not underflow. A zero probability (an MLE of a value never
seen in a class, seed 003 "Problem with Max Likelihood") gives that class
probability exactly 0; a row impossible under EVERY class gets NaN
probabilities and a ``RuntimeWarning``.

Example: the zero-probability problem on the transport table (seed 003 "MLE vs MAP")

>>> from bayesclass.data import load
>>> from bayesclass.models.naive_bayes import NaiveBayes
>>> transport = load("transport")                     # Distance, Raining, Flat Tire -> mode
>>> model = NaiveBayes()
>>> rainy = [[1.0, 1.0, 0.0], [10.0, 1.0, 0.0]]       # 1 or 10 miles, raining, no flat tire
>>> mle = model.class_proba(model.point_estimate(transport, "mle"), rainy)
>>> mle.sel({"class": "car"}).values.tolist()          # never a car in the rain, whatever the distance
[0.0, 0.0]
>>> bayes = model.class_proba(model.point_estimate(transport, "posterior_mean"), rainy)
>>> bool((bayes.sel({"class": "car"}) > 0).all())
True
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, ClassVar

import numpy as np

from bayesclass._lazy import lazy_import
from bayesclass.data import Dataset, FeatureKind
from bayesclass.data.arguments import spelled
from bayesclass.data.constraints import Constrained, Finite, Positive, renamed_from
from bayesclass.models._transformed_laplace import (
    TransformedPosterior,
    block_diagonal,
    closed_form_posterior,
    simplex_log_density,
    simplex_mode,
    simplex_point,
)
from bayesclass.models.approximation import GaussianApproximation, parameter_labels
from bayesclass.models.base import (
    ClassProbaKernel,
    GenerativeClassifierModel,
    NoEstimateError,
    ReadOnlyArrays,
    affine,
    check_class_codes,
    draws_last,
    features_as_dataarray,
    kernel_of,
    leading_dims_of,
    rows_of_class,
)

if TYPE_CHECKING:
    import pymc as pm
    import pytensor.tensor as pt
    import scipy
    import xarray as xr
else:
    pm = lazy_import("pymc")
    pt = lazy_import("pytensor.tensor")
    scipy = lazy_import("scipy")
    xr = lazy_import("xarray")

__all__ = ["MAX_COVARIANCE_PARAMETERS", "NaiveBayes", "NaiveBayesPrior"]

#: the most parameters whose dense covariance :meth:`NaiveBayes.gaussian_approximation` states and a result stores
#: (2048 parameters: a 32 MiB matrix per estimate, stored uncompressed in the result file); above it the estimate has
#: no stored covariance (no standard errors), see the method
MAX_COVARIANCE_PARAMETERS = 2048
#: each parameter's support, which its Wald interval is clipped to (the Gaussian means have none)
_SUPPORT = {
    "class_prior": (0.0, 1.0),
    "binary_proba": (0.0, 1.0),
    "category_proba": (0.0, 1.0),
    "count_proba": (0.0, 1.0),
    "gaussian_variance": (0.0, np.inf),
}


@dataclass(frozen=True, kw_only=True)
class NaiveBayesPrior(Constrained):
    r"""Hyperparameters of the naive Bayes priors (see the module docstring).

    Parameters
    ----------
    class_concentration : float
        :math:`\beta_c` of the Dirichlet prior on the class probabilities (eq 9.30);
        1 is uniform.
    binary_alpha, binary_beta : float
        Beta(alpha, beta) prior of P(F_i = 1 | c = j); 1, 1 is uniform (posterior
        mean = Laplace smoothing, eq 9.29 with alpha = 1; scikit-learn's
        ``BernoulliNB(alpha)`` is the posterior mean with alpha = beta).
    category_concentration : float
        Symmetric Dirichlet prior on the levels of each categorical feature, per class.
    count_concentration : float
        Symmetric Dirichlet prior on the word (count-feature) probabilities of a
        class; scikit-learn's ``MultinomialNB(alpha)`` is its posterior mean.
    mean_strength : float
        Continuous features: :math:`\kappa_0`, the prior on a class mean is worth this many observations.
    variance_alpha : float
        Continuous features: :math:`a_0` of the inverse-gamma prior on a class variance.
    variance_beta : float
        Continuous features: :math:`b_0` of that prior, in units of the feature's pooled training
        variance when ``autoscale`` (default), else in raw units.
    mean_center : float
        Continuous features: :math:`m_0` when ``autoscale`` is off (otherwise the pooled mean).
    autoscale : bool
        State the Gaussian prior in each feature's own units (pooled mean and variance).
    """

    class_concentration: Annotated[float, Positive()] = 1.0
    binary_alpha: Annotated[float, Positive()] = 1.0
    binary_beta: Annotated[float, Positive()] = 1.0
    category_concentration: Annotated[float, Positive()] = 1.0
    count_concentration: Annotated[float, Positive()] = 1.0
    mean_strength: Annotated[float, Positive()] = field(default=0.01, metadata=renamed_from("gaussian_mean_strength"))
    variance_alpha: Annotated[float, Positive()] = field(default=1.0, metadata=renamed_from("gaussian_variance_shape"))
    variance_beta: Annotated[float, Positive()] = field(default=0.01, metadata=renamed_from("gaussian_variance_scale"))
    mean_center: Annotated[float, Finite()] = field(default=0.0, metadata=renamed_from("gaussian_mean_center"))
    autoscale: bool = field(default=True, metadata=renamed_from("gaussian_autoscale"))


# ---------------------------------------------------------------------------------------------
# the data seen through the model: which column is which kind, and the sufficient statistics


@dataclass(frozen=True, eq=False)
class _Layout(ReadOnlyArrays):
    """Column indices of each feature kind and the flat layout of the categorical levels."""

    binary: np.ndarray
    categorical: np.ndarray
    count: np.ndarray
    continuous: np.ndarray
    #: per categorical feature: number of levels; per flat level: its categorical feature and code
    level_counts: np.ndarray
    level_feature: np.ndarray
    level_code: np.ndarray
    level_labels: tuple[str, ...]

    @property
    def level_starts(self) -> np.ndarray:
        return np.concatenate([[0], np.cumsum(self.level_counts)[:-1]]).astype(np.intp)


def _layout(data: Dataset) -> _Layout:
    kinds = np.array(data.feature_kinds)
    categorical = np.flatnonzero(kinds == "categorical")
    # levels: as many as category_names names, else the largest training code + 1
    named = np.array([len(data.category_names.get(data.feature_names[j], ())) for j in categorical], dtype=np.intp)
    seen = data.X[:, categorical].max(axis=0, initial=-1).astype(np.intp) + 1
    level_counts = np.where(named > 0, named, seen)
    level_feature = np.repeat(np.arange(categorical.size), level_counts)
    level_code = np.arange(level_feature.size) - np.repeat(np.cumsum(level_counts) - level_counts, level_counts)
    labels = tuple(
        f"{data.feature_names[categorical[f]]}={_level_name(data, categorical[f], code)}"
        for f, code in zip(level_feature, level_code, strict=True)
    )
    return _Layout(
        binary=np.flatnonzero(kinds == "binary"),
        categorical=categorical,
        count=np.flatnonzero(kinds == "count"),
        continuous=np.flatnonzero(kinds == "continuous"),
        level_counts=level_counts,
        level_feature=level_feature,
        level_code=level_code,
        level_labels=labels,
    )


def _level_name(data: Dataset, column: int, code: int) -> str:
    names = data.category_names.get(data.feature_names[column])
    return names[code] if names is not None else str(code)


def _binary_labels(data: Dataset, layout: _Layout) -> list[str]:
    """The ``binary_feature`` label of each binary column: ``"sex=male"``, the level coded 1, for two named levels.

    As the discriminative families' treatment coding names it; a 0/1 column of numbers keeps its name.
    """
    labels = []
    for column in layout.binary:  # labels of the columns, not a model loop
        name = data.feature_names[column]
        levels = data.category_names.get(name, ())
        labels.append(f"{name}={levels[1]}" if len(levels) == 2 else name)
    return labels


def _binary_columns(params: xr.Dataset) -> list[str]:
    """The feature (column) name of each ``binary_feature`` entry of ``params``.

    The non-dimension coordinate ``binary_column`` holds it; results written before the labels said which level is
    1 have none, and there the label is the column's name.
    """
    names = params["binary_column"] if "binary_column" in params.coords else params["binary_feature"]
    return [str(name) for name in names.values]


def _coords(data: Dataset, layout: _Layout) -> dict[str, list[str]]:
    names = np.array(data.feature_names, dtype=object)
    kinds = {
        "binary_feature": _binary_labels(data, layout),
        "category_level": list(layout.level_labels),
        "count_feature": list(names[layout.count]),
        "continuous_feature": list(names[layout.continuous]),
    }
    return {"class": list(data.class_names), "feature": list(data.feature_names)} | {
        dim: labels for dim, labels in kinds.items() if labels
    }


@dataclass(frozen=True, eq=False)
class _Statistics(ReadOnlyArrays):
    """Sufficient statistics of the training data, arrays of shape (class, ...)."""

    class_counts: np.ndarray  # (K,)
    binary_ones: np.ndarray  # (K, d_binary)
    level_counts: np.ndarray  # (K, n_levels)
    word_counts: np.ndarray  # (K, d_count)
    continuous_mean: np.ndarray  # (K, d_continuous)
    continuous_scatter: np.ndarray  # (K, d_continuous)
    constant_within_class: np.ndarray  # (K, d_continuous) bool: every value of the class identical
    pooled_mean: np.ndarray  # (d_continuous,)
    pooled_variance: np.ndarray  # (d_continuous,)


def _statistics(data: Dataset, layout: _Layout) -> _Statistics:
    """One pass of matrix products with the one-hot class matrix (no loops over rows or classes)."""
    onehot = np.eye(data.n_classes)[data.y]  # (N, K)
    class_counts = onehot.sum(axis=0)
    levels = np.zeros((data.n_classes, len(layout.level_labels)))
    if layout.categorical.size:
        flat = layout.level_starts[np.newaxis, :] + data.X[:, layout.categorical].astype(np.intp)
        np.add.at(levels, (np.repeat(data.y, layout.categorical.size), flat.ravel()), 1.0)
    class_sums = onehot.T @ data.X  # (K, d): one product for every kind; columns are selected afterwards
    continuous = data.X[:, layout.continuous]
    mean = class_sums[:, layout.continuous] / class_counts[:, np.newaxis]
    scatter = onehot.T @ (continuous - mean[data.y]) ** 2
    # the scatter of identical values can round to a tiny positive number (0.1 + 0.1 + 0.1 != 0.3):
    # constancy is decided on the values themselves
    highest = np.full(mean.shape, -np.inf)
    lowest = np.full(mean.shape, np.inf)
    np.maximum.at(highest, data.y, continuous)
    np.minimum.at(lowest, data.y, continuous)
    return _Statistics(
        class_counts=class_counts,
        binary_ones=class_sums[:, layout.binary],
        level_counts=levels,
        word_counts=class_sums[:, layout.count],
        continuous_mean=mean,
        continuous_scatter=scatter,
        constant_within_class=highest == lowest,
        pooled_mean=continuous.mean(axis=0),
        pooled_variance=continuous.var(axis=0),
    )


@dataclass(frozen=True, eq=False)
class _Conjugate(ReadOnlyArrays):
    """Posterior hyperparameters: Dirichlet/Beta concentrations and Normal-Inverse-Gamma (m, kappa, a, b)."""

    class_concentration: np.ndarray
    binary_alpha: np.ndarray
    binary_beta: np.ndarray
    level_concentration: np.ndarray
    word_concentration: np.ndarray
    prior_mean: np.ndarray  # m_0 per continuous feature
    prior_variance_scale: np.ndarray  # b_0 per continuous feature
    mean: np.ndarray
    mean_strength: np.ndarray
    variance_shape: np.ndarray
    variance_scale: np.ndarray


# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class NaiveBayes(GenerativeClassifierModel):
    """Naive Bayes over mixed feature kinds with conjugate priors (registry name ``naive_bayes``).

    Parameters
    ----------
    prior : NaiveBayesPrior
        Hyperparameters of every prior; the default is uniform on every probability
        and weak (autoscaled) on the Gaussian means and variances.

    Notes
    -----
    See the module docstring for the model, the sufficient-statistic
    likelihood, the conjugate posterior and the closed-form estimates.
    """

    prior: NaiveBayesPrior = field(default_factory=NaiveBayesPrior)

    name: ClassVar[str] = "naive_bayes"
    joint_centred: ClassVar[bool] = True  # see _joint_log_likelihood_kernel
    prior_variables: ClassVar[dict[str, str]] = {
        "prior.class_concentration": "class_prior",
        "prior.binary_alpha": "binary_proba",
        "prior.binary_beta": "binary_proba",
        "prior.category_concentration": "category_proba",
        "prior.count_concentration": "count_proba",
        "prior.mean_strength": "gaussian_mean",
        "prior.variance_alpha": "gaussian_variance",
        "prior.variance_beta": "gaussian_variance",
    }
    laplace_space = "transformed"  # fit(method="laplace") in the PyMC model's unconstrained space

    def prior_formulas(self, *, n_classes: int | None = None) -> tuple[str, ...]:
        """The prior and likelihood as plain-text formulas, per class c and feature j (module docstring, seed 003).

        Parameters
        ----------
        n_classes : int, optional
            Unused: the statements are the same for any number of classes.

        Returns
        -------
        tuple of str
            The class prior, then one statement per feature kind (binary, categorical, count, continuous);
            a model has those of the kinds its data have.
        """
        prior = self.prior
        units = (
            "m_0 = pooled mean of feature j, b_0 in units of its pooled variance"
            if prior.autoscale
            else f"m_0 = {prior.mean_center:g}, raw units"
        )
        return (
            f"class_prior ~ Dirichlet({prior.class_concentration:g}, ..., {prior.class_concentration:g});  "
            "y ~ Categorical(class_prior)",
            f"binary: binary_proba[c, j] ~ Beta({prior.binary_alpha:g}, {prior.binary_beta:g});  "
            "x_j | c ~ Bernoulli(binary_proba[c, j])",
            f"categorical: category_proba[c, j, :] ~ Dirichlet({prior.category_concentration:g}, ...);  "
            "x_j | c ~ Categorical(category_proba[c, j, :])",
            f"count: count_proba[c, :] ~ Dirichlet({prior.count_concentration:g}, ...);  "
            "counts | c ~ Multinomial(row total, count_proba[c, :])",
            f"continuous: gaussian_variance[c, j] ~ InverseGamma({prior.variance_alpha:g}, "
            f"{prior.variance_beta:g} b_0);  gaussian_mean[c, j] ~ Normal(m_0, gaussian_variance / "
            f"{prior.mean_strength:g});  x_j | c ~ Normal(gaussian_mean, gaussian_variance)  ({units})",
        )

    def available_point_estimates(self) -> tuple[str, ...]:
        """The point estimate kinds of naive Bayes, every one in closed form.

        Returns
        -------
        tuple of str
            ``("mle", "map", "posterior_mean", "unbiased")``.
        """
        return ("mle", "map", "posterior_mean", "unbiased")

    def has_exact(self) -> bool:
        """Whether :meth:`exact_posterior` draws from a conjugate posterior: always, every prior is conjugate.

        Returns
        -------
        bool
            True.
        """
        return True

    def parameter_names(self, data: Dataset) -> tuple[str, ...]:
        """The parameters of the model of ``data``.

        Parameters
        ----------
        data : Dataset
            Training data.

        Returns
        -------
        tuple of str
            ``class_prior`` and the parameters of each feature kind present in ``data`` (``binary_proba``,
            ``category_proba``, ``count_proba``, ``gaussian_mean`` and ``gaussian_variance``).
        """
        layout = _layout(data)
        present = {
            "binary_proba": layout.binary.size,
            "category_proba": layout.categorical.size,
            "count_proba": layout.count.size,
            "gaussian_mean": layout.continuous.size,
            "gaussian_variance": layout.continuous.size,
        }
        return ("class_prior", *(name for name, size in present.items() if size))

    # -- data -------------------------------------------------------------------------------------
    def check_training_data(self, data: Dataset) -> None:
        """The base checks, plus: no continuous feature may be constant over the whole training set.

        Parameters
        ----------
        data : Dataset
            Training data.

        Raises
        ------
        ValueError
            If the base checks fail or a continuous feature is constant over the training rows.
        """
        super().check_training_data(data)
        continuous = np.flatnonzero(np.array(data.feature_kinds) == "continuous")
        constant = [data.feature_names[j] for j in continuous[np.ptp(data.X[:, continuous], axis=0) == 0]]
        if constant:
            raise ValueError(
                f"continuous feature(s) {', '.join(map(repr, constant))} of {data.name!r} are constant over the "
                "training rows, so no class variance can be estimated; drop them"
            )

    def coords(self, data: Dataset) -> dict[str, Any]:
        """The coordinates of the model of ``data`` and of its parameter sets.

        Parameters
        ----------
        data : Dataset
            Training data.

        Returns
        -------
        dict
            ``class``, ``feature``, one dim per feature kind present in ``data``, and the
            ``category_feature`` / ``category_code`` labels of each categorical level.
        """
        layout = _layout(data)
        coords: dict[str, Any] = _coords(data, layout)
        names = np.array(data.feature_names, dtype=object)
        if layout.binary.size:
            coords["binary_column"] = ("binary_feature", list(names[layout.binary]))
        if layout.categorical.size:
            coords["category_feature"] = ("category_level", list(names[layout.categorical][layout.level_feature]))
            coords["category_code"] = ("category_level", layout.level_code.astype(np.int64))
        return coords

    def cache_key(self, data: Dataset) -> tuple:
        """Everything about ``data`` and ``self`` that shapes the PyMC graph (compile-cache key).

        Parameters
        ----------
        data : Dataset
            Training data.

        Returns
        -------
        tuple
            The base key and the number of levels of every categorical feature.
        """
        return (*super().cache_key(data), tuple(_layout(data).level_counts.tolist()))

    # Datasets are immutable: build, exact draws and every estimate share one pass (at most 4 datasets kept)
    @functools.lru_cache(maxsize=4)  # noqa: B019
    def _conjugate(self, data: Dataset) -> tuple[_Layout, _Statistics, _Conjugate]:
        """Layout, sufficient statistics and posterior hyperparameters of ``data`` (read-only arrays)."""
        layout = _layout(data)
        stats = _statistics(data, layout)
        prior = self.prior
        n = stats.class_counts[:, np.newaxis]
        if prior.autoscale:
            m0, b0 = stats.pooled_mean, prior.variance_beta * stats.pooled_variance
        else:
            m0 = np.full(layout.continuous.size, prior.mean_center)
            b0 = np.full(layout.continuous.size, prior.variance_beta)
        kappa0, a0 = prior.mean_strength, prior.variance_alpha
        kappa = kappa0 + n
        mean = (kappa0 * m0 + n * stats.continuous_mean) / kappa
        conjugate = _Conjugate(
            class_concentration=prior.class_concentration + stats.class_counts,
            binary_alpha=prior.binary_alpha + stats.binary_ones,
            binary_beta=prior.binary_beta + n - stats.binary_ones,
            level_concentration=prior.category_concentration + stats.level_counts,
            word_concentration=prior.count_concentration + stats.word_counts,
            prior_mean=m0,
            prior_variance_scale=b0,
            mean=mean,
            mean_strength=kappa * np.ones_like(mean),
            variance_shape=a0 + n / 2 * np.ones_like(mean),
            variance_scale=b0
            + stats.continuous_scatter / 2
            + kappa0 * n * (stats.continuous_mean - m0) ** 2 / (2 * kappa),
        )
        return layout, stats, conjugate

    # -- PyMC model -------------------------------------------------------------------------------
    def build(self, data: Dataset) -> pm.Model:
        """The PyMC model on sufficient statistics (module docstring), dims as in :meth:`coords`.

        Every data-derived array is a ``pm.Data`` container, so a compiled model
        is reused for new data of the same layout (see ``inference.sampling``).

        Parameters
        ----------
        data : Dataset
            Training data.

        Returns
        -------
        pymc.Model
            The model, its likelihood as potentials on the sufficient statistics.
        """
        self.check_training_data(data)
        layout, stats, conjugate = self._conjugate(data)
        prior = self.prior
        K = data.n_classes
        with pm.Model(coords=self.model_coords(data)) as model:
            class_counts = pm.Data("class_counts", stats.class_counts, dims="class")
            class_prior = pm.Dirichlet("class_prior", a=np.full(K, prior.class_concentration), dims="class")
            pm.Potential("class_counts_likelihood", pt.sum(class_counts * pt.log(class_prior)))
            rows = class_counts[:, np.newaxis]
            if layout.binary.size:
                dims = ("class", "binary_feature")
                ones = pm.Data("binary_ones", stats.binary_ones, dims=dims)
                binary_proba = pm.Beta("binary_proba", alpha=prior.binary_alpha, beta=prior.binary_beta, dims=dims)
                pm.Potential(
                    "binary_ones_likelihood",
                    pt.sum(ones * pt.log(binary_proba) + (rows - ones) * pt.log1p(-binary_proba)),
                )
            if layout.categorical.size:
                dims = ("class", "category_level")
                levels = pm.Data("level_counts", stats.level_counts, dims=dims)
                # Dirichlet per (class, feature) block of levels, as normalised Gamma(gamma, 1) weights:
                # one vectorised variable whatever the numbers of levels
                weight = pm.Gamma("category_weight", alpha=prior.category_concentration, beta=1.0, dims=dims)
                block = np.eye(layout.categorical.size)[layout.level_feature]  # (n_levels, d_categorical)
                totals = pt.dot(weight, block)[:, layout.level_feature]
                category_proba = pm.Deterministic("category_proba", weight / totals, dims=dims)
                pm.Potential("level_counts_likelihood", pt.sum(levels * pt.log(category_proba)))
            if layout.count.size:
                dims = ("class", "count_feature")
                words = pm.Data("word_counts", stats.word_counts, dims=dims)
                count_proba = pm.Dirichlet(
                    "count_proba", a=np.full((K, layout.count.size), prior.count_concentration), dims=dims
                )
                pm.Potential("word_counts_likelihood", pt.sum(words * pt.log(count_proba)))
            if layout.continuous.size:
                dims = ("class", "continuous_feature")
                prior_mean = pm.Data("gaussian_prior_mean", conjugate.prior_mean, dims="continuous_feature")
                prior_scale = pm.Data(
                    "gaussian_prior_variance_scale", conjugate.prior_variance_scale, dims="continuous_feature"
                )
                class_mean = pm.Data("continuous_mean", stats.continuous_mean, dims=dims)
                scatter = pm.Data("continuous_scatter", stats.continuous_scatter, dims=dims)
                variance = pm.InverseGamma("gaussian_variance", alpha=prior.variance_alpha, beta=prior_scale, dims=dims)
                mean = pm.Normal(
                    "gaussian_mean", mu=prior_mean, sigma=pt.sqrt(variance / prior.mean_strength), dims=dims
                )
                pm.Potential(
                    "continuous_likelihood",
                    -pt.sum(
                        rows / 2 * pt.log(2 * np.pi * variance)
                        + (scatter + rows * (class_mean - mean) ** 2) / (2 * variance)
                    ),
                )
        return model

    def laplace_log_density(self, data: Dataset) -> TransformedPosterior:
        r"""The log density of :meth:`build`'s value variables in closed form: conjugate blocks, each on its own.

        Every block is its conjugate posterior written in PyMC's unconstrained coordinates, the log Jacobian
        included (which adds 1 to each power of a probability and cancels the weight's and the variance's
        ``-1``), with :math:`a, b, c` the posterior concentrations of :meth:`_conjugate`:

        * ``class_prior`` and each class's ``count_proba`` (simplex): :math:`\sum_k a_k \log p_k`
          (:func:`~bayesclass.models._transformed_laplace.simplex_log_density`), mode :math:`p = a / \sum a`;
        * ``binary_proba`` (log-odds :math:`z`): :math:`a \log\sigma(z) + b \log\sigma(-z)`, gradient
          :math:`a - (a + b)\sigma`, Hessian :math:`-(a + b)\sigma(1 - \sigma)`, mode :math:`z = \log(a / b)`;
        * ``category_weight`` (:math:`v = \log w`, Gamma(:math:`\gamma`, 1) weights normalised per class and
          feature): :math:`\sum_l (c_l v_l - w_l) - N_j \log T`, :math:`T = \sum_{l} w_l` over the feature's
          levels; gradient :math:`c_l - w_l - N_j s_l` (:math:`s = w / T`), Hessian :math:`-\operatorname{diag}(w)
          - N_j(\operatorname{diag} s - s s^	op)` within the feature; mode :math:`T = L\gamma`,
          :math:`w_l = c_l T / (T + N_j)`;
        * ``gaussian_variance`` (:math:`u = \log\sigma^2`) with ``gaussian_mean`` :math:`\mu`:
          :math:`-(a_n + 	frac12) u - e^{-u} Q`, :math:`Q = b_n + \kappa_n(\mu - m_n)^2 / 2`; mode
          :math:`\mu = m_n`, :math:`e^u = b_n / (a_n + 	frac12)`.

        The search for the mode starts at that closed-form mode (and stops there: its gradient is zero).

        Parameters
        ----------
        data : Dataset
            Training data.

        Returns
        -------
        TransformedPosterior
            Over ``class_prior_simplex__``, ``binary_proba_logodds__``, ``category_weight_log__``,
            ``count_proba_simplex__``, ``gaussian_variance_log__``, ``gaussian_mean`` (those present, in the
            model's order).
        """
        self.check_training_data(data)
        layout, stats, conjugate = self._conjugate(data)
        mode = _transformed_mode(layout, stats, conjugate, self.prior.category_concentration)
        sizes = [value.size for value in mode.values()]
        starts = dict(zip(mode, np.cumsum([0, *sizes[:-1]]), strict=True))
        spans = {
            name: slice(start, start + value.size)
            for (name, start), value in zip(starts.items(), mode.values(), strict=True)
        }

        def split(z: np.ndarray) -> dict[str, np.ndarray]:
            return {name: z[..., spans[name]].reshape(*z.shape[:-1], *value.shape) for name, value in mode.items()}

        def derivatives(z: np.ndarray) -> list[np.ndarray]:
            values = split(z)
            hessian = np.zeros((z.size, z.size))
            gradient = np.zeros(z.size)

            def put(name: str, value: np.ndarray, grad: np.ndarray, block: np.ndarray) -> float:
                gradient[spans[name]] = grad.ravel()
                hessian[spans[name], spans[name]] = block
                return float(np.sum(value))

            value, grad, blocks = simplex_log_density(values["class_prior_simplex__"], conjugate.class_concentration)
            total = put("class_prior_simplex__", value, grad, blocks)
            if layout.binary.size:
                terms = _log_odds_terms(values["binary_proba_logodds__"], conjugate.binary_alpha, conjugate.binary_beta)
                total += put("binary_proba_logodds__", *terms)
            if layout.categorical.size:
                terms = _weight_terms(values["category_weight_log__"], conjugate.level_concentration, stats, layout)
                total += put("category_weight_log__", *terms)
            if layout.count.size:
                value, grad, blocks = simplex_log_density(values["count_proba_simplex__"], conjugate.word_concentration)
                total += put("count_proba_simplex__", value, grad, block_diagonal(blocks))
            if layout.continuous.size:
                log_variance, mean, cross = _normal_inverse_gamma_terms(
                    values["gaussian_variance_log__"], values["gaussian_mean"], conjugate
                )
                total += put("gaussian_variance_log__", *log_variance) + put("gaussian_mean", *mean)
                hessian[spans["gaussian_variance_log__"], spans["gaussian_mean"]] = cross
                hessian[spans["gaussian_mean"], spans["gaussian_variance_log__"]] = cross
            return [np.asarray(total), gradient, hessian]

        names = self.parameter_names(data)

        def parameters(rows_z: np.ndarray) -> list[np.ndarray]:
            out = _transformed_parameters(split(rows_z), layout)
            return [out[name] for name in names]

        dims = tuple(_PARAMETER_DIMS[name] for name in names)
        return closed_form_posterior(mode, derivatives, parameters, names, dims)

    # -- exact posterior --------------------------------------------------------------------------
    def exact_posterior(self, data: Dataset, *, draws: int, chains: int, random_seed: int) -> xr.Dataset:
        """Independent draws from the conjugate posterior (module docstring), dims ``(chain, draw, ...)``.

        Dirichlet draws are normalised Gamma draws taken in the log domain
        (``log G = log G' + log(U) / a`` with ``G' ~ Gamma(a + 1)``), so small
        concentrations do not underflow to 0/0.

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
            The parameters of :meth:`parameter_names`, dims ``(chain, draw, ...)``.
        """
        self.check_training_data(data)
        layout, _, conjugate = self._conjugate(data)
        rng = np.random.default_rng(random_seed)
        size = (chains, draws)
        variables: dict[str, tuple[tuple[str, ...], np.ndarray]] = {
            "class_prior": (("class",), _dirichlet_draws(rng, conjugate.class_concentration, size, np.array([0]))),
        }
        if layout.binary.size:
            proba = rng.beta(conjugate.binary_alpha, conjugate.binary_beta, size=size + conjugate.binary_alpha.shape)
            variables["binary_proba"] = (("class", "binary_feature"), proba)
        if layout.categorical.size:
            proba = _dirichlet_draws(rng, conjugate.level_concentration, size, layout.level_starts)
            variables["category_proba"] = (("class", "category_level"), proba)
        if layout.count.size:
            variables["count_proba"] = (
                ("class", "count_feature"),
                _dirichlet_draws(rng, conjugate.word_concentration, size, np.array([0])),
            )
        if layout.continuous.size:
            shape = size + conjugate.mean.shape
            variance = conjugate.variance_scale / rng.gamma(conjugate.variance_shape, size=shape)
            mean = conjugate.mean + np.sqrt(variance / conjugate.mean_strength) * rng.standard_normal(shape)
            variables["gaussian_mean"] = (("class", "continuous_feature"), mean)
            variables["gaussian_variance"] = (("class", "continuous_feature"), variance)
        dataset = xr.Dataset(
            {name: (("chain", "draw", *dims), values) for name, (dims, values) in variables.items()},
            coords={"chain": np.arange(chains), "draw": np.arange(draws)},
        )
        return self.with_coords(dataset, data)

    # -- closed forms -----------------------------------------------------------------------------
    def _point_estimate(self, data: Dataset, kind: str) -> xr.Dataset:
        layout, stats, conjugate = self._conjugate(data)
        n = stats.class_counts[:, np.newaxis]
        variables: dict[str, tuple[tuple[str, ...], np.ndarray]] = {}
        if kind in ("mle", "unbiased"):
            variables["class_prior"] = (("class",), stats.class_counts / stats.class_counts.sum())
            binary = stats.binary_ones / n
            levels = stats.level_counts / n
            words = _normalised(stats.word_counts, data, layout)
            variance = _sample_variance(stats, data, layout, ddof=0 if kind == "mle" else 1)
            mean = stats.continuous_mean
        elif kind == "map":
            variables["class_prior"] = (
                ("class",),
                _dirichlet_mode(conjugate.class_concentration, np.array([0]), "class_prior", ("class",), data, layout),
            )
            binary = _beta_mode(conjugate.binary_alpha, conjugate.binary_beta, data, layout)
            levels = _dirichlet_mode(
                conjugate.level_concentration,
                layout.level_starts,
                "category_proba",
                ("class", "category_level"),
                data,
                layout,
            )
            words = _dirichlet_mode(
                conjugate.word_concentration, np.array([0]), "count_proba", ("class", "count_feature"), data, layout
            )
            mean, variance = conjugate.mean, conjugate.variance_scale / (conjugate.variance_shape + 1.5)
        else:  # posterior_mean
            variables["class_prior"] = (("class",), conjugate.class_concentration / conjugate.class_concentration.sum())
            binary = conjugate.binary_alpha / (conjugate.binary_alpha + conjugate.binary_beta)
            levels = conjugate.level_concentration / _block_sums(conjugate.level_concentration, layout.level_starts)
            words = conjugate.word_concentration / conjugate.word_concentration.sum(axis=-1, keepdims=True)
            mean = conjugate.mean
            if (conjugate.variance_shape <= 1).any():
                raise NoEstimateError(
                    "the posterior mean of a class variance is infinite when a_0 + N_j/2 <= 1; raise "
                    f"{spelled('variance_alpha')} above {1 - stats.class_counts.min() / 2:g} or use "
                    f"{spelled('kind', 'map')}"
                )
            variance = conjugate.variance_scale / (conjugate.variance_shape - 1)
        if layout.binary.size:
            variables["binary_proba"] = (("class", "binary_feature"), binary)
        if layout.categorical.size:
            variables["category_proba"] = (("class", "category_level"), levels)
        if layout.count.size:
            variables["count_proba"] = (("class", "count_feature"), words)
        if layout.continuous.size:
            variables["gaussian_mean"] = (("class", "continuous_feature"), np.array(mean))  # not the cached array
            variables["gaussian_variance"] = (("class", "continuous_feature"), variance)
        return self.with_coords(xr.Dataset(variables), data)

    # -- standard errors --------------------------------------------------------------------------
    def _gaussian_approximation(self, data: Dataset, kind: str) -> GaussianApproximation | None:
        r"""N(estimate, covariance) of the MLE (inverse observed information) or the MAP (inverse Hessian).

        Closed forms, block-diagonal over the parameters of :meth:`parameter_names` flattened in C order of each
        variable's dims (``class`` first). Every probability block is a simplex: ``class_prior``, each
        (class, categorical feature) block of ``category_proba``, each class's ``count_proba``, and each
        ``binary_proba[c, i]`` with its implicit complement :math:`1 - a_{ci}`. Both estimates of a simplex are
        :math:`\hat\theta_\ell = a_\ell / M` with :math:`M = \sum_\ell a_\ell`, where :math:`a_\ell` is the count
        of level :math:`\ell` (MLE) or its posterior concentration minus 1 (MAP); the Hessian of
        :math:`-\sum_\ell a_\ell \log\theta_\ell` in the free coordinates :math:`\theta_1..\theta_{L-1}` is
        :math:`M(\operatorname{diag}(1/\theta_{free}) + 11^\top/\theta_L)` at the estimate, its inverse
        :math:`(\operatorname{diag}\theta_{free} - \theta_{free}\theta_{free}^\top)/M`, and mapped back by
        :math:`B = [I; -1^\top]` (:math:`B \Sigma B^\top`, as the multiclass logistic model does) the covariance of
        the block is

        .. math::

            (\operatorname{diag}\hat\theta - \hat\theta\hat\theta^\top) / M,

        singular (the block sums to 1); a binary probability gets :math:`\hat a(1 - \hat a)/M`. For the MLE
        :math:`M` is the block's number of observations (:math:`N` for the class prior, :math:`N_c` for a
        binary or categorical feature, the class's total count for ``count_proba``), the multinomial's
        :math:`(\operatorname{diag} p - p p^\top)/n`; for the MAP it is the Dirichlet / Beta mode's
        denominator (sum of posterior concentrations minus the number of levels), so with the default uniform
        priors the MAP's covariance equals the MLE's. Gaussian features: the Hessian of the negative
        log-likelihood in :math:`(\mu, \sigma^2)` is diagonal at the MLE, giving :math:`\sigma^2/N_c` and
        :math:`2\sigma^4/N_c`; the negative log posterior (Normal-Inverse-Gamma, density in
        :math:`(\mu, \sigma^2)` as the MAP is defined) is :math:`(a_n + 3/2)\log\sigma^2 +
        (b_n + \kappa_n(\mu - m_n)^2/2)/\sigma^2`, giving :math:`\sigma^2/\kappa_n` and
        :math:`\sigma^4/(a_n + 3/2)`. Mean and variance are uncorrelated at both estimates.

        Boundary estimates: a probability estimated at exactly 0 or 1 (a level, word or binary value a class
        never shows, or always shows) has infinite observed information (MLE) or a mode that is not a
        stationary point (MAP, a concentration of exactly 1), so no regular Gaussian approximation. The
        closed form's limit is used there: its variance and covariances are 0 and its Wald interval is the
        point itself, which is what ``proportion_confint(method="normal")`` gives, and is no confidence
        statement. The ``curvature`` text counts and names them; the posterior's interval is the one to read
        there. (The MLE of a Gaussian feature with a class of one row, or constant within a class, does not
        exist at all: :meth:`point_estimate` raises.)

        Every Wald interval is clipped to its parameter's support (:data:`_SUPPORT`): a probability's to [0, 1],
        as ``proportion_confint(method="normal")`` clips it (2 successes in 14: [0, 0.326], not [-0.040, 0.326]),
        a variance's to [0, inf).

        Other kinds: ``"posterior_mean"`` and ``"unbiased"`` are not extrema of an objective, so they have no
        curvature and get None (the posterior mean's uncertainty is the conjugate posterior itself,
        ``method="exact"``). None too above :data:`MAX_COVARIANCE_PARAMETERS` parameters, whose dense covariance
        would be too large to store (with a warning; the result then shows no standard errors for the estimate).
        """
        if kind not in ("mle", "map"):
            return None
        names = self.parameter_names(data)
        estimate = self.point_estimate(data, kind)
        if _covariance_too_large(kind, sum(estimate[name].size for name in names)):
            return None
        layout, stats, conjugate = self._conjugate(data)
        mle = kind == "mle"
        # name -> (a: counts (MLE) or posterior concentrations - 1 (MAP), the simplex of each element)
        simplex: dict[str, tuple[np.ndarray, np.ndarray]] = {
            "class_prior": (
                stats.class_counts if mle else conjugate.class_concentration - 1,
                np.zeros(data.n_classes, dtype=np.intp),
            ),
            "category_proba": (
                stats.level_counts if mle else conjugate.level_concentration - 1,
                np.arange(data.n_classes)[:, np.newaxis] * layout.categorical.size + layout.level_feature,
            ),
            "count_proba": (
                stats.word_counts if mle else conjugate.word_concentration - 1,
                np.repeat(np.arange(data.n_classes)[:, np.newaxis], layout.count.size, axis=1),
            ),
        }
        totals: dict[str, np.ndarray] = {
            name: _block_sums(np.ravel(a), _group_starts(groups)) for name, (a, groups) in simplex.items()
        }
        totals["binary_proba"] = (
            np.broadcast_to(stats.class_counts[:, np.newaxis], stats.binary_ones.shape)
            if mle
            else conjugate.binary_alpha + conjugate.binary_beta - 2
        )
        blocks: dict[str, np.ndarray] = {
            name: _simplex_covariance(estimate[name].values, totals[name], simplex[name][1])
            for name in ("class_prior", "category_proba", "count_proba")
            if name in names
        }
        if "binary_proba" in names:
            binary = estimate["binary_proba"].values
            blocks["binary_proba"] = np.diag(np.ravel(binary * (1 - binary) / totals["binary_proba"]))
        if "gaussian_mean" in names:
            variance = estimate["gaussian_variance"].values
            n = stats.class_counts[:, np.newaxis]
            mean_size, variance_size = (n, n / 2) if mle else (conjugate.mean_strength, conjugate.variance_shape + 1.5)
            blocks["gaussian_mean"] = np.diag(np.ravel(variance / mean_size))
            blocks["gaussian_variance"] = np.diag(np.ravel(variance**2 / variance_size))
        covariance = scipy.linalg.block_diag(*(blocks[name] for name in names))
        curvature = _curvature_text(kind, names, estimate, covariance)
        return GaussianApproximation.of(kind, estimate, names, covariance, curvature, support=_SUPPORT)

    def class_proba_interval_kernel(
        self, estimate: xr.Dataset, approximation: GaussianApproximation, interval_prob: float
    ) -> Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]:
        r"""Delta-method intervals of P(class | x) on the logit scale, with the gradient in closed form.

        The interval of the generic default (the Wald interval of :math:`\ell_k = \log p_k - \log(1 - p_k)`
        mapped back by ``expit``, so it stays in [0, 1]) with the exact gradient instead of central
        differences: with :math:`J_c(x) = \log p(x, c)` the joint of class :math:`c`,
        :math:`\partial\ell_k/\partial J_k = 1` and :math:`\partial\ell_k/\partial J_c = -p_c/(1 - p_k)`
        for :math:`c \ne k`, and :math:`J_c` depends only on the parameters of class :math:`c`:
        :math:`1/b_c`, :math:`x/a - (1 - x)/(1 - a)`, :math:`[x = \ell]/\theta_\ell`,
        :math:`x_v/\phi_v`, :math:`(x - \mu)/\sigma^2` and :math:`((x - \mu)^2/\sigma^2 - 1)/(2\sigma^2)`.
        :math:`\operatorname{se}(\ell_k) = \sqrt{\nabla^\top\Sigma\nabla}` with the (sparse, block-diagonal)
        covariance of :meth:`gaussian_approximation`; the gradient's extension off each simplex does not matter
        (:math:`\Sigma 1 = 0` along it). Elements of variance 0 (boundary estimates) are left out. A class
        probability of exactly 0 or 1 gets the degenerate interval [p, p]. Per row,
        :math:`M_{cc'} = \sum g_i \Sigma_{ij} g_j` over the covariance's non-zeros with :math:`i` of class :math:`c`
        and :math:`j` of class :math:`c'`, then :math:`\operatorname{var}(\ell_k) = w_k^\top M w_k` with
        :math:`w_{kc} = \partial\ell_k/\partial J_c`. Cost: rows x (the covariance's non-zeros + classes^3),
        where central differences evaluate the model at 2p + 1 parameter sets.

        Parameters
        ----------
        estimate : xarray.Dataset
            The point estimate.
        approximation : GaussianApproximation
            Its normal approximation (over :meth:`parameter_names`, every one with a ``class`` dim first).
        interval_prob : float
            The intervals' probability, in (0, 1).

        Returns
        -------
        callable
            ``bounds(X) -> (low, high)``, each ``(n_obs, n_class)``, for model inputs ``X`` checked as for
            :meth:`class_proba_kernel`.
        """
        z = float(scipy.stats.norm.ppf(0.5 + interval_prob / 2.0))
        kernel = self.class_proba_kernel(estimate)
        K = kernel.n_classes
        active = np.flatnonzero(approximation.bse > 0)
        covariance = scipy.sparse.coo_array(np.asarray(approximation.covariance)[np.ix_(active, active)])
        owner = np.concatenate([np.repeat(np.arange(K), estimate[name].size // K) for name in approximation.names])
        owner = owner[active]
        # M[n, c, c'] = sum over the covariance's non-zeros (i, j) of g_i Sigma_ij g_j with i of class c, j of c':
        # one product of the (rows, non-zeros) gradient pairs with a (non-zeros, K^2) matrix that sums them by class
        first, second = covariance.row, covariance.col
        by_classes = scipy.sparse.csr_array(
            (covariance.data, (np.arange(covariance.nnz), owner[first] * K + owner[second])),
            shape=(covariance.nnz, K * K),
        )
        gradient = _joint_gradient(estimate, approximation.names)
        chunk = max(1, (1 << 22) // max(1, covariance.nnz, K**3))
        others = 1.0 - np.eye(K)

        def bounds(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            low, high = np.empty((X.shape[0], K)), np.empty((X.shape[0], K))
            for start in range(0, X.shape[0], chunk):  # rows in chunks: memory, not a loop inside the model
                rows = slice(start, start + chunk)
                log_proba = kernel(X[rows], log=True)[:, :, 0]  # (n, K)
                with np.errstate(divide="ignore", invalid="ignore"):
                    log_rest = scipy.special.logsumexp(log_proba[:, np.newaxis, :], axis=2, b=others)  # (n, k)
                    centre = log_proba - log_rest
                    # d l_k / d J_c: 1 for c = k, -p_c / (1 - p_k) otherwise
                    share = np.where(others > 0, log_proba[:, np.newaxis, :] - log_rest[:, :, np.newaxis], -np.inf)
                    weight = np.eye(K) - np.exp(share)  # share <= 0 off the diagonal: no overflow
                    g = gradient(X[rows])[:, active]  # (n, p)
                finite = np.isfinite(centre)
                weight[~finite] = 0.0
                pairs = (g[:, first] * g[:, second]) @ by_classes  # (n, K^2)
                variance = np.einsum("nkc,ncd,nkd->nk", weight, pairs.reshape(-1, K, K), weight)
                half = np.where(finite, z * np.sqrt(np.clip(variance, 0.0, None)), 0.0)
                low[rows] = scipy.special.expit(centre - half)
                high[rows] = scipy.special.expit(centre + half)
            return low, high

        return bounds

    # -- prediction -------------------------------------------------------------------------------
    def _joint_log_likelihood_kernel(self, params: xr.Dataset) -> ClassProbaKernel:
        """Log p(class) + sum_i log p(x_i | class) (seed 000 eqs 9.24-9.26), for draws or a point estimate.

        The parameters may have any leading dims (posterior draws) or none (a point estimate); the result is
        ``-inf`` where a row has a value of probability 0 under the class.

        Every factor is linear in a feature map of the row, so the joint is ONE matrix product
        ``[phi(x), 1] @ [A; c]`` with, stacked by rows of ``A``: the binary values x (coefficient
        log p - log(1 - p), constant sum log(1 - p)), the level indicators of the categorical
        columns (log p of the level), the counts (log p of the word; the multinomial
        coefficient is the same for every class and left out), and for Gaussian features
        x^2 and x (coefficients -1/(2 sigma^2) and mu / sigma^2, constant
        -(mu^2 / sigma^2 + log 2 pi sigma^2) / 2, after centring x and mu on the mean of mu,
        which leaves every difference unchanged and keeps the expansion accurate); each row's joint less a
        term the same for every class and draw (:class:`_CentredProduct`).

        ``check`` refuses binary columns that are not 0/1, categorical codes not seen in
        training and negative counts.
        """
        leading = leading_dims_of(params["class_prior"], "class")
        feature_names = [str(name) for name in params["feature"].values]
        with np.errstate(divide="ignore"):
            constant = np.log(draws_last(params["class_prior"], leading, "class"))  # (class, draws)
        n_columns = constant.size
        coefficients: list[np.ndarray] = []  # (rows of phi, class * draws) blocks, in the order phi stacks them
        zeros: list[tuple[int, np.ndarray | None]] = []  # per block of "used" indicators: (size, where p = 0)
        checks = []

        def columns(dim: str) -> np.ndarray:
            names = _binary_columns(params) if dim == "binary_feature" else params[dim].values
            return np.array([feature_names.index(str(name)) for name in names], dtype=np.intp)

        def per_draw(name: str, dim: str) -> np.ndarray:  # (dim, class * draws)
            return draws_last(params[name], leading, dim, "class").reshape(params.sizes[dim], n_columns)

        binary = columns("binary_feature") if "binary_proba" in params else None
        if binary is not None:
            proba = per_draw("binary_proba", "binary_feature")
            log_one, zero_one = _safe_log(proba)
            with np.errstate(divide="ignore"):
                log_zero, zero_zero = _safe_log(1 - proba, log=np.log1p(-proba))
            coefficients.append(log_one - log_zero)
            constant = constant + log_zero.sum(axis=0).reshape(constant.shape)
            zeros += [(binary.size, zero_one), (binary.size, zero_zero)]
            binary_names = np.array(_binary_columns(params), dtype=object)
            checks.append(lambda X, first_row: _check_binary(X[:, binary], binary_names, first_row))
        levels = _Levels.of(params, feature_names) if "category_proba" in params else None
        if levels is not None:
            log_proba, zero = _safe_log(per_draw("category_proba", "category_level"))
            coefficients.append(log_proba)
            zeros.append((log_proba.shape[0], zero))
            checks.append(levels.check)
        counts = columns("count_feature") if "count_proba" in params else None
        if counts is not None:
            log_proba, zero = _safe_log(per_draw("count_proba", "count_feature"))
            coefficients.append(log_proba)
            zeros.append((counts.size, zero))
            names = params["count_feature"].values
            checks.append(lambda X, first_row: _check_counts(X[:, counts], names, first_row))
        gaussian = columns("continuous_feature") if "gaussian_mean" in params else None
        if gaussian is not None:
            mean = per_draw("gaussian_mean", "continuous_feature")
            variance = per_draw("gaussian_variance", "continuous_feature")
            center = mean.mean(axis=1)
            mean = mean - center[:, np.newaxis]
            precision = 1.0 / variance
            coefficients += [-0.5 * precision, mean * precision]
            gaussian_constant = -0.5 * ((mean**2 * precision).sum(axis=0) + np.log(2 * np.pi * variance).sum(axis=0))
            constant = constant + gaussian_constant.reshape(constant.shape)
        product = _CentredProduct.of(np.vstack([*coefficients, constant.reshape(1, -1)]), params.sizes["class"])
        impossible = None
        if any(zero is not None for _, zero in zeros):
            impossible = np.vstack([np.zeros((size, n_columns)) if zero is None else zero for size, zero in zeros])

        def evaluate(X: np.ndarray, log: bool) -> np.ndarray:
            phi, used = [], []
            if binary is not None:
                x = X[:, binary]
                phi.append(x)
                used += [x > 0, (1 - x) > 0]
            if levels is not None:
                indicator = levels.indicator(X)
                phi.append(indicator)
                used.append(indicator > 0)
            if counts is not None:
                phi.append(X[:, counts])
                used.append(X[:, counts] > 0)
            if gaussian is not None:
                x = X[:, gaussian] - center
                phi += [x**2, x]
            joint = product(affine(*phi))
            if impossible is not None:
                hits = np.hstack(used).astype(float) @ impossible
                joint[hits > 0] = -np.inf
            return joint.reshape(X.shape[0], -1, product.n_draws)

        def check(X: np.ndarray, first_row: int) -> None:
            for check_columns in checks:
                check_columns(X, first_row)

        return kernel_of(params, evaluate, leading_dims=leading, check=check)

    # -- generative sampling ----------------------------------------------------------------------
    def sample_features(
        self, params: xr.Dataset, class_codes: Any, *, random_seed: int, reference: Any = None
    ) -> xr.DataArray:
        """Draw every feature of each row from its class's distribution, under every parameter set of ``params``.

        Binary ~ Bernoulli(``binary_proba``), categorical ~ Categorical(``category_proba``) as level
        codes, count features ~ Multinomial(row total, ``count_proba``) with the row totals of
        ``reference`` (required when there are count features), continuous ~
        Normal(``gaussian_mean``, ``gaussian_variance``).

        Parameters
        ----------
        params : xarray.Dataset
            Posterior draws (leading dims such as ``replicate``) or one point estimate.
        class_codes : array of int, shape (n_obs,) or (*leading, n_obs)
            The class of every row to draw, shared by every parameter set or one per parameter set and row.
        random_seed : int
            Seed of the draws.
        reference : array of shape (n_obs, n_features), optional
            The observed rows the draws stand for: each drawn row keeps its row's total of the count
            features. Required when there are count features, ignored otherwise.

        Returns
        -------
        xarray.DataArray
            Dims ``(*leading, obs, feature)``.

        Raises
        ------
        ValueError
            If there are count features and ``reference`` is missing, has another number of rows, or its
            counts are not non-negative whole numbers.
        """
        leading = leading_dims_of(params["class_prior"], "class")
        shape = tuple(params.sizes[dim] for dim in leading)
        codes = check_class_codes(class_codes, params.sizes["class"], shape)
        n_obs = codes.shape[-1]
        rng = np.random.default_rng(random_seed)
        feature_names = [str(name) for name in params["feature"].values]
        draws = np.zeros((*shape, n_obs, len(feature_names)))

        def per_row(name: str) -> np.ndarray:  # (*leading, obs, ...): the parameter of each row's class
            return rows_of_class(params[name].transpose(*leading, "class", ...).values, codes, len(leading))

        def put(dim: str, values: np.ndarray) -> None:
            names = _binary_columns(params) if dim == "binary_feature" else params[dim].values
            columns = [feature_names.index(str(name)) for name in names]
            draws[..., columns] = values

        if "binary_proba" in params:
            proba = per_row("binary_proba")
            put("binary_feature", rng.random(proba.shape) < proba)
        if "category_proba" in params:
            put_levels = _categorical_draws(rng, per_row("category_proba"), params)
            draws[..., put_levels[0]] = put_levels[1]
        if "count_proba" in params:
            if reference is None:
                raise ValueError(
                    "sample_features needs reference= (the observed rows) to draw count features with "
                    "each row's total number of counts"
                )
            rows = features_as_dataarray(reference, params, argument="reference")
            if rows.sizes["obs"] != n_obs:
                raise ValueError(f"reference must have one row per class code ({n_obs}), got {rows.sizes['obs']} rows")
            counts = _columns(rows, params, "count_feature").values
            if ((counts < 0) | (counts != np.round(counts))).any():
                raise ValueError("the count features of reference must be non-negative whole numbers")
            columns = [feature_names.index(str(name)) for name in params["count_feature"].values]
            totals = counts.sum(axis=1).astype(np.int64)
            proba = per_row("count_proba")
            draws[..., columns] = rng.multinomial(np.broadcast_to(totals, proba.shape[:-1]), proba)
        if "gaussian_mean" in params:
            mean, variance = per_row("gaussian_mean"), per_row("gaussian_variance")
            put("continuous_feature", rng.normal(mean, np.sqrt(variance)))
        coords: dict[str, Any] = {dim: params[dim].values for dim in leading if dim in params.coords}
        coords["feature"] = feature_names
        return xr.DataArray(draws, dims=(*leading, "obs", "feature"), coords=coords)

    def feature_kinds_of(self, params: xr.Dataset) -> tuple[FeatureKind, ...]:
        """The feature kinds of the data ``params`` were fitted to, read from its per-kind coordinates.

        Parameters
        ----------
        params : xarray.Dataset
            A parameter set of this family.

        Returns
        -------
        tuple of str
            One kind per feature, in the order of the ``feature`` coordinate.
        """
        kinds: dict[str, FeatureKind] = {}
        if "binary_feature" in params.coords:
            kinds |= dict.fromkeys(_binary_columns(params), "binary")
        kind_of_dim: tuple[tuple[str, FeatureKind], ...] = (
            ("count_feature", "count"),
            ("continuous_feature", "continuous"),
        )
        for dim, kind in kind_of_dim:
            if dim in params.coords:
                kinds |= {str(name): kind for name in params[dim].values}
        if "category_feature" in params.coords:
            kinds |= {str(name): "categorical" for name in params["category_feature"].values}
        return tuple(kinds[str(name)] for name in params["feature"].values)


# ---------------------------------------------------------------------------------------------
# helpers (array core; no loops over rows, classes or features)


@dataclass(frozen=True)
class _CentredProduct:
    """``affine(phi) @ stacked`` less each row's largest class joint under the draws' mean coefficients.

    The shift is the same for every class and draw of a row, so Bayes' rule is unchanged; it keeps the values
    near 0, so that :func:`~bayesclass.models.base.softmax_over_classes` exponentiates them without a pass for
    each draw's maximum (:attr:`NaiveBayes.joint_centred`). It is one more column of the same matrix product
    (``stacked``'s last row is ones); a row whose central joint is not finite is not shifted.
    """

    stacked: np.ndarray  # (phi columns + 1, class * draws), the last row ones
    central: np.ndarray  # (phi columns, class): the mean over draws of the coefficients
    n_draws: int

    @classmethod
    def of(cls, stacked: np.ndarray, n_classes: int) -> _CentredProduct:
        n_draws = stacked.shape[1] // n_classes
        central = stacked.reshape(stacked.shape[0], n_classes, n_draws).mean(axis=2)
        ones = np.ones((1, stacked.shape[1]))
        return cls(np.ascontiguousarray(np.vstack([stacked, ones])), central, n_draws)

    def __call__(self, design: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore"):
            shift = (design @ self.central).max(axis=1)
        shift = np.where(np.isfinite(shift), shift, 0.0)
        return np.hstack([design, -shift[:, np.newaxis]]) @ self.stacked


def _block_sums(values: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Sum over each contiguous block of the last axis, broadcast back to the block's entries."""
    if values.shape[-1] == 0:
        return values
    sums = np.add.reduceat(values, starts, axis=-1)
    return np.repeat(sums, np.diff(np.append(starts, values.shape[-1])), axis=-1)


def _dirichlet_draws(
    rng: np.random.Generator, concentration: np.ndarray, size: tuple[int, ...], starts: np.ndarray
) -> np.ndarray:
    """Dirichlet draws over each contiguous block of the last axis, by log-domain Gamma normalisation."""
    shape = size + concentration.shape
    log_gamma = np.log(rng.gamma(concentration + 1.0, size=shape)) + np.log(rng.uniform(size=shape)) / concentration
    widths = np.diff(np.append(starts, concentration.shape[-1]))
    peak = np.repeat(np.maximum.reduceat(log_gamma, starts, axis=-1), widths, axis=-1)
    shifted = np.exp(log_gamma - peak)
    return shifted / _block_sums(shifted, starts)


def _dirichlet_mode(
    concentration: np.ndarray, starts: np.ndarray, name: str, dims, data: Dataset, layout: _Layout
) -> np.ndarray:
    """Mode (c_l - 1) / (sum c - L) of each block; exists when every c_l >= 1 and the block is not flat."""
    if concentration.size == 0:
        return concentration
    widths = np.diff(np.append(starts, concentration.shape[-1]))
    denominator = _block_sums(concentration, starts) - np.repeat(widths, widths)
    bad = (concentration < 1) | (denominator <= 0)
    if bad.any():
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        label = _label(name, dims, index, data, layout)
        raise NoEstimateError(
            f"the MAP of {label} does not exist: its posterior Dirichlet concentration {concentration[index]:g} "
            "is < 1 (density unbounded at 0) or the block is flat; use a prior concentration >= 1 "
            f"or {spelled('kind', 'posterior_mean')}"
        )
    return (concentration - 1) / denominator


def _beta_mode(alpha: np.ndarray, beta: np.ndarray, data: Dataset, layout: _Layout) -> np.ndarray:
    """Mode (alpha - 1) / (alpha + beta - 2) of Beta posteriors (seed 003 "MAP estimate")."""
    bad = (alpha < 1) | (beta < 1) | (alpha + beta <= 2)
    if bad.any():
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        label = _label("binary_proba", ("class", "binary_feature"), index, data, layout)
        raise NoEstimateError(
            f"the MAP of {label} does not exist: its posterior is Beta({alpha[index]:g}, {beta[index]:g}), "
            f"unbounded at 0 or 1; use binary_alpha, binary_beta >= 1 or {spelled('kind', 'posterior_mean')}"
        )
    return (alpha - 1) / (alpha + beta - 2)


def _normalised(word_counts: np.ndarray, data: Dataset, layout: _Layout) -> np.ndarray:
    totals = word_counts.sum(axis=-1, keepdims=True)
    if word_counts.size and (totals == 0).any():
        empty = data.class_names[int(np.flatnonzero(totals[:, 0] == 0)[0])]
        raise NoEstimateError(
            f"the MLE of count_proba for class {empty!r} does not exist: its rows have no counts at all; "
            f"use {spelled('kind', 'posterior_mean')} or {spelled('kind', 'map')} with count_concentration > 1"
        )
    return word_counts / np.where(totals == 0, 1.0, totals)


def _sample_variance(stats: _Statistics, data: Dataset, layout: _Layout, *, ddof: int) -> np.ndarray:
    n = stats.class_counts[:, np.newaxis]
    bad = (n - ddof <= 0) | stats.constant_within_class
    if bad.any():
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        label = _label("gaussian_variance", ("class", "continuous_feature"), index, data, layout)
        count = int(stats.class_counts[index[0]])
        why = f"the class has {count} row(s)" if count <= max(ddof, 1) else "the feature is constant within the class"
        raise NoEstimateError(
            f"the {'MLE' if ddof == 0 else 'unbiased estimate'} of {label} does not exist ({why}: variance 0 or "
            f"undefined); use {spelled('kind', 'map')} or {spelled('kind', 'posterior_mean')}, which the "
            "inverse-gamma prior keeps positive"
        )
    return stats.continuous_scatter / (n - ddof)


def _joint_gradient(params: xr.Dataset, names: tuple[str, ...]) -> Callable[[np.ndarray], np.ndarray]:
    """``X -> (n_obs, p)``: d log p(x, c) / d theta for every element theta (of class c), flattened as ``names``.

    Every variable has ``class`` first; an element of class c enters only log p(x, c). Inputs are model inputs
    (checked); an element whose value is 0 or 1 may get an infinite gradient (its variance is 0).
    """
    feature_names = [str(name) for name in params["feature"].values]

    def columns(dim: str) -> np.ndarray:
        labels = _binary_columns(params) if dim == "binary_feature" else params[dim].values
        return np.array([feature_names.index(str(label)) for label in labels], dtype=np.intp)

    parts: dict[str, Callable[[np.ndarray], np.ndarray]] = {}  # name -> X -> (n, class, ...)
    prior = params["class_prior"].values
    parts["class_prior"] = lambda X: np.broadcast_to(1.0 / prior, (X.shape[0], prior.size))
    if "binary_proba" in params:
        binary, a = columns("binary_feature"), params["binary_proba"].values
        parts["binary_proba"] = lambda X: X[:, np.newaxis, binary] / a - (1 - X[:, np.newaxis, binary]) / (1 - a)
    if "category_proba" in params:
        levels, theta = _Levels.of(params, feature_names), params["category_proba"].values
        parts["category_proba"] = lambda X: levels.indicator(X)[:, np.newaxis, :] / theta
    if "count_proba" in params:
        counts, phi = columns("count_feature"), params["count_proba"].values
        parts["count_proba"] = lambda X: X[:, np.newaxis, counts] / phi
    if "gaussian_mean" in params:
        gaussian = columns("continuous_feature")
        mean, variance = params["gaussian_mean"].values, params["gaussian_variance"].values
        parts["gaussian_mean"] = lambda X: (X[:, np.newaxis, gaussian] - mean) / variance
        parts["gaussian_variance"] = lambda X: (
            ((X[:, np.newaxis, gaussian] - mean) ** 2 / variance - 1) / (2 * variance)
        )

    def gradient(X: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.hstack([parts[name](X).reshape(X.shape[0], -1) for name in names])

    return gradient


def _covariance_too_large(kind: str, size: int) -> bool:
    """Whether ``size`` parameters are more than :data:`MAX_COVARIANCE_PARAMETERS` (then a warning says so)."""
    if size <= MAX_COVARIANCE_PARAMETERS:
        return False
    warnings.warn(
        f"the {kind} of this naive Bayes model has {size} parameters, more than the {MAX_COVARIANCE_PARAMETERS} "
        "whose dense covariance is stored: no standard errors or Wald intervals for it (fewer features, or the "
        f"posterior's intervals, e.g. {spelled('method', 'exact')})",
        UserWarning,
        stacklevel=4,
    )
    return True


def _group_starts(groups: np.ndarray) -> np.ndarray:
    """Start of each contiguous run of equal simplex ids along the flattened (C-order) elements."""
    flat = np.ravel(groups)
    return np.flatnonzero(np.diff(flat, prepend=-1)).astype(np.intp)


def _simplex_covariance(theta: np.ndarray, totals: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """(diag theta - theta theta') / M within each simplex (equal ``groups``), 0 across, over the flattened elements.

    ``totals`` holds each element's M (its simplex's sum of counts, or of concentrations minus 1). An element with
    theta = 0 (or a simplex with one theta = 1) gets variance and covariances 0, the closed form's limit.
    """
    theta, totals, groups = np.ravel(theta), np.ravel(totals), np.ravel(groups)
    same = groups[:, np.newaxis] == groups[np.newaxis, :]
    return (np.diag(theta) - same * np.outer(theta, theta)) / totals[:, np.newaxis]


#: what each block of a naive Bayes covariance is, per estimate kind (module docstring, ``_gaussian_approximation``)
_BLOCK_TEXT = {
    "mle": {
        "class_prior": "class_prior (diag p - p p')/N",
        "binary_proba": "binary_proba p(1-p)/N_c",
        "category_proba": "category_proba (diag p - p p')/N_c per class and feature",
        "count_proba": "count_proba (diag p - p p')/(total count of the class)",
        "gaussian_mean": "gaussian_mean sigma^2/N_c",
        "gaussian_variance": "gaussian_variance 2 sigma^4/N_c",
    },
    "map": {
        "class_prior": "class_prior (diag p - p p')/M",
        "binary_proba": "binary_proba p(1-p)/M",
        "category_proba": "category_proba (diag p - p p')/M per class and feature",
        "count_proba": "count_proba (diag p - p p')/M per class",
        "gaussian_mean": "gaussian_mean sigma^2/kappa_n",
        "gaussian_variance": "gaussian_variance sigma^4/(a_n + 3/2)",
    },
}


def _curvature_text(kind: str, names: tuple[str, ...], estimate: xr.Dataset, covariance: np.ndarray) -> str:
    """What the covariance is, per block, and which boundary probabilities got a degenerate (zero-width) interval."""
    if kind == "mle":
        head = "inverse observed information at the MLE (closed form, block-diagonal): "
        tail = "; each simplex is singular (it sums to 1)"
    else:
        head = "inverse Hessian of the negative log posterior at the MAP (closed form, block-diagonal): "
        tail = (
            "; M = the Dirichlet/Beta mode's denominator (posterior concentrations summed, minus the levels); "
            "simplex Hessians taken in the free coordinates and mapped back (B Sigma B'), singular (sum to 1)"
        )
    text = head + "; ".join(_BLOCK_TEXT[kind][name] for name in names) + tail
    labels = parameter_labels(estimate, names)
    gaussian = np.array([label.startswith("gaussian_") for label in labels])
    boundary = np.flatnonzero((np.diag(covariance) <= 0) & ~gaussian)
    if boundary.size:
        shown = ", ".join(labels[i] for i in boundary[:3]) + (", ..." if boundary.size > 3 else "")
        text += (
            f". {boundary.size} of {len(labels)} probabilities are estimated at exactly 0 or 1 ({shown}): no "
            "regular Gaussian approximation there (infinite information, or a mode on the boundary), so their "
            "variance is set to 0 and their Wald interval is the point itself, not a confidence statement; "
            "read the posterior's interval for them"
        )
    return text


def _label(name: str, dims: tuple[str, ...], index: tuple[int, ...], data: Dataset, layout: _Layout) -> str:
    names = np.array(data.feature_names, dtype=object)
    axis = {
        "class": list(data.class_names),
        "binary_feature": _binary_labels(data, layout),
        "category_level": list(layout.level_labels),
        "count_feature": list(names[layout.count]),
        "continuous_feature": list(names[layout.continuous]),
    }
    return f"{name}[{', '.join(repr(axis[dim][i]) for dim, i in zip(dims, index, strict=True))}]"


def _safe_log(proba: np.ndarray, *, log: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """log(proba) with 0 where proba == 0, and the mask of those zeros (None if there are none)."""
    zero = proba <= 0
    with np.errstate(divide="ignore"):
        value = np.log(proba) if log is None else log
    if not zero.any():
        return value, None
    return np.where(zero, 0.0, value), zero


def _columns(features: xr.DataArray, params: xr.Dataset, dim: str) -> xr.DataArray:
    """The columns of ``features`` named by the ``dim`` coordinate of ``params``, along ``dim``."""
    names = params[dim].values
    return xr.DataArray(features.sel(feature=names).values, dims=("obs", dim), coords={dim: names})


def _check_binary(x: np.ndarray, names: np.ndarray, first_row: int) -> None:
    bad = (x != 0) & (x != 1)
    if bad.any():
        row, column = np.argwhere(bad)[0]
        raise ValueError(
            f"binary feature {str(names[column])!r} has the value {float(x[row, column])} "
            f"in row {first_row + row} of X; binary features take 0 or 1 (code other values as a categorical feature)"
        )


def _check_counts(x: np.ndarray, names: np.ndarray, first_row: int) -> None:
    if (x < 0).any():
        row, column = np.argwhere(x < 0)[0]
        raise ValueError(
            f"count feature {str(names[column])!r} has the negative value "
            f"{float(x[row, column])} in row {first_row + row} of X; counts must be >= 0"
        )


@dataclass(frozen=True)
class _Levels:
    """The categorical columns of a parameter set: which column each ``category_level`` belongs to and its code."""

    columns: np.ndarray  # (categorical features,) column of X
    names: tuple[str, ...]
    counts: np.ndarray  # levels per categorical feature
    column_of_level: np.ndarray  # (levels,) index into ``columns``
    codes: np.ndarray  # (levels,) the code of each level

    @classmethod
    def of(cls, params: xr.Dataset, feature_names: list[str]) -> _Levels:
        level_feature = params["category_feature"].values
        # levels of one feature are contiguous: number the features in level order
        column_of_level = np.concatenate([[0], np.cumsum(level_feature[1:] != level_feature[:-1])])
        first = np.flatnonzero(np.diff(column_of_level, prepend=-1))
        names = tuple(str(name) for name in level_feature[first])
        return cls(
            columns=np.array([feature_names.index(name) for name in names], dtype=np.intp),
            names=names,
            counts=np.diff(np.append(first, level_feature.size)),
            column_of_level=column_of_level,
            codes=params["category_code"].values,
        )

    def check(self, X: np.ndarray, first_row: int) -> None:
        """Unseen or non-integer codes are errors naming the row."""
        x = X[:, self.columns]
        bad = (x < 0) | (x != np.round(x)) | (x >= self.counts[np.newaxis, :])
        if bad.any():
            row, column = np.argwhere(bad)[0]
            raise ValueError(
                f"categorical feature {self.names[column]!r} has the value {x[row, column]:g} in row "
                f"{first_row + row} of X, which is not one of the codes 0..{self.counts[column] - 1} seen in "
                "training; recode it or refit with that level"
            )

    def indicator(self, X: np.ndarray) -> np.ndarray:
        """(obs, category_level) 0/1 indicator of each row's level."""
        return (X[:, self.columns][:, self.column_of_level] == self.codes[np.newaxis, :]).astype(float)


def _categorical_draws(rng: np.random.Generator, proba: np.ndarray, params: xr.Dataset) -> tuple[list[int], np.ndarray]:
    """(feature columns, level codes drawn) for the categorical features.

    One uniform per row and feature, compared with the cumulative level probabilities of its block (no loop
    over features or levels).

    ``proba`` is (*leading, obs, category_level); levels of one feature are contiguous.
    """
    level_feature = params["category_feature"].values
    feature_names = [str(name) for name in params["feature"].values]
    column_of_level = np.concatenate([[0], np.cumsum(level_feature[1:] != level_feature[:-1])])
    n_features = int(column_of_level[-1]) + 1
    block = np.eye(n_features)[column_of_level]  # (levels, features)
    first = np.flatnonzero(np.diff(column_of_level, prepend=-1))  # the first level of each feature
    cumulative = np.cumsum(proba, axis=-1)
    before = (cumulative - proba)[..., first]  # (..., features): the cumulative sum before each block
    within = cumulative - before[..., column_of_level]  # cumulative probability inside each block
    uniform = rng.random((*proba.shape[:-1], n_features))
    codes = ((within < uniform[..., column_of_level]) @ block).astype(np.int64)
    levels = block.sum(axis=0).astype(np.int64)
    columns = [feature_names.index(str(level_feature[j])) for j in first]
    return columns, np.minimum(codes, levels - 1)


#: the dims of each parameter in :meth:`NaiveBayes.build`'s model
_PARAMETER_DIMS = {
    "class_prior": ("class",),
    "binary_proba": ("class", "binary_feature"),
    "category_proba": ("class", "category_level"),
    "count_proba": ("class", "count_feature"),
    "gaussian_mean": ("class", "continuous_feature"),
    "gaussian_variance": ("class", "continuous_feature"),
}


def _level_totals(layout: _Layout) -> np.ndarray:
    """(levels, categorical features): 1 where the level belongs to the feature (``w @ it`` sums each block)."""
    return np.eye(max(layout.categorical.size, 1))[layout.level_feature]


def _transformed_mode(
    layout: _Layout, stats: _Statistics, conjugate: _Conjugate, category_concentration: float
) -> dict[str, np.ndarray]:
    """The mode of :meth:`NaiveBayes.laplace_log_density` in closed form, by value variable (the model's order)."""
    mode: dict[str, np.ndarray] = {"class_prior_simplex__": simplex_mode(conjugate.class_concentration)}
    if layout.binary.size:
        mode["binary_proba_logodds__"] = np.log(conjugate.binary_alpha / conjugate.binary_beta)
    if layout.categorical.size:
        total = (category_concentration * layout.level_counts)[layout.level_feature]  # T = L gamma at the mode
        rows = stats.class_counts[:, np.newaxis]
        mode["category_weight_log__"] = np.log(conjugate.level_concentration * total / (total + rows))
    if layout.count.size:
        mode["count_proba_simplex__"] = simplex_mode(conjugate.word_concentration)
    if layout.continuous.size:
        mode["gaussian_variance_log__"] = np.log(conjugate.variance_scale / (conjugate.variance_shape + 0.5))
        mode["gaussian_mean"] = conjugate.mean.copy()
    return mode


def _log_odds_terms(z: np.ndarray, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Beta(a, b) in log-odds: value, gradient and (diagonal) Hessian of ``a log sigma(z) + b log sigma(-z)``."""
    sigma = scipy.special.expit(z)
    value = a * scipy.special.log_expit(z) + b * scipy.special.log_expit(-z)
    return value, a - (a + b) * sigma, np.diag((-(a + b) * sigma * (1 - sigma)).ravel())


def _weight_terms(
    v: np.ndarray, concentration: np.ndarray, stats: _Statistics, layout: _Layout
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The log-gamma weights of the categorical levels: value, gradient and Hessian (coupled within a block)."""
    w = np.exp(v)
    level_total = _level_totals(layout)
    share = (w / (w @ level_total)[:, layout.level_feature]).ravel()  # w / T of each level's feature, per class
    counts = np.broadcast_to(stats.class_counts[:, np.newaxis], w.shape).ravel()
    value = np.sum(concentration * v - w) - np.sum(stats.class_counts * np.log(w @ level_total).sum(axis=1))
    block = np.arange(w.shape[0])[:, np.newaxis] * max(layout.categorical.size, 1) + layout.level_feature
    same_block = block.ravel()[:, np.newaxis] == block.ravel()[np.newaxis, :]
    hessian = np.diag(-w.ravel() - counts * share) + counts[:, np.newaxis] * np.outer(share, share) * same_block
    return value, concentration.ravel() - w.ravel() - counts * share, hessian


def _normal_inverse_gamma_terms(
    u: np.ndarray, mu: np.ndarray, conjugate: _Conjugate
) -> tuple[tuple, tuple, np.ndarray]:
    """(log variance terms, mean terms, cross Hessian) of -(a_n + 1/2) u - exp(-u) (b_n + kappa_n (mu - m_n)^2 / 2)."""
    shape, strength = conjugate.variance_shape + 0.5, conjugate.mean_strength
    inverse, offset = np.exp(-u), mu - conjugate.mean
    quadratic = conjugate.variance_scale + strength * offset**2 / 2
    log_variance = (
        -shape * u - inverse * quadratic,
        -shape + inverse * quadratic,
        np.diag((-inverse * quadratic).ravel()),
    )
    mean = (np.zeros(0), -inverse * strength * offset, np.diag((-inverse * strength).ravel()))
    return log_variance, mean, np.diag((inverse * strength * offset).ravel())


def _transformed_parameters(values: dict[str, np.ndarray], layout: _Layout) -> dict[str, np.ndarray]:
    """The parameters of value-variable rows, as PyMC's backward transforms and the model's graph map them."""
    out = {"class_prior": simplex_point(values["class_prior_simplex__"])}
    if layout.binary.size:
        out["binary_proba"] = scipy.special.expit(values["binary_proba_logodds__"])
    if layout.categorical.size:
        w = np.exp(values["category_weight_log__"])
        out["category_proba"] = w / (w @ _level_totals(layout))[..., layout.level_feature]
    if layout.count.size:
        out["count_proba"] = simplex_point(values["count_proba_simplex__"])
    if layout.continuous.size:
        out["gaussian_mean"] = values["gaussian_mean"]
        out["gaussian_variance"] = np.exp(values["gaussian_variance_log__"])
    return out
