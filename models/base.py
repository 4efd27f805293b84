"""The model contract every classifier family implements.

A family is a frozen dataclass whose fields are its hyperparameters (priors,
link, covariance kind ...), validated on construction. It provides

``build(data) -> pm.Model``
    the PyMC model, vectorised, with named dims ``class``, ``feature``, ``obs``;
``point_estimate(data, kind) -> xarray.Dataset``
    the closed-form or deterministic-optimiser estimate for ``kind`` in
    :attr:`ClassifierModel.point_estimate_kinds`, with the SAME variable names
    and dims as the PyMC posterior, minus ``chain``/``draw``;
``class_proba_kernel(params) -> ClassProbaKernel``
    the parameter work of prediction done once (transposed weights, Cholesky
    factors, log probabilities ...), returning a function of new rows that gives
    P(class | x) or log P(class | x) per parameter draw as one NumPy array
    ``(obs, class, draw)``, the draws of any leading dims of ``params`` (``chain``,
    ``draw`` ...) flattened. :meth:`ClassifierModel.class_log_proba` and
    :meth:`ClassifierModel.class_proba` (``xarray`` results) and the chunked
    prediction engine (:mod:`bayesclass.inference.prediction.tiles`) all evaluate it: one
    computation per family for draws and point estimates alike.

Every parameter set (posterior or point estimate) carries a ``class``
coordinate holding the class names, so that ``class_log_proba`` can label its
output even for families whose parameters have no ``class`` dim (binary
logistic regression).

The base class implements everything that is common once, over those hooks
(in the manner of scikit-learn's ``_BaseNB``): training-data checks,
``class_log_proba`` and ``class_proba`` (labelled ``xarray`` results of the kernel),
``to_dict``/``from_dict`` for provenance attrs. :func:`kernel_of`, :func:`draws_last`,
:func:`leading_dims_of`, :func:`affine` and :func:`softmax_over_classes` are the helpers families build
their kernels with.
"""

from __future__ import annotations

import abc
import dataclasses
import json
import math
import re
import typing
import warnings
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Literal, cast

import numpy as np

from bayesclass._lazy import lazy_import
from bayesclass.data import Dataset, FeatureKind, check_features
from bayesclass.data.arguments import spelled
from bayesclass.data.constraints import (
    InvalidValueError,
    check_fields,
    check_finite,
    check_positive,
    renamed_fields,
    with_current_names,
)
from bayesclass.models._delta import delta_method_bounds
from bayesclass.models.approximation import GaussianApproximation

if TYPE_CHECKING:
    import pymc as pm
    import scipy
    import xarray as xr
    from _typeshed import DataclassInstance

    from bayesclass.models._transformed_laplace import TransformedPosterior
else:
    scipy = lazy_import("scipy")  # SciPy loads its submodules (scipy.special ...) on first use
    pm = lazy_import("pymc")
    xr = lazy_import("xarray")

__all__ = [
    "ClassProbaKernel",
    "ClassifierModel",
    "ConvergenceError",
    "GaussianApproximation",
    "GenerativeClassifierModel",
    "InvalidHyperparameterError",
    "check_class_codes",
    "NoEstimateError",
    "ReadOnlyArrays",
    "check_finite",
    "affine",
    "check_positive",
    "draws_last",
    "features_as_dataarray",
    "kernel_of",
    "renamed_fields",
    "leading_dims_of",
    "rows_of_class",
    "softmax_over_classes",
]


#: every kind of point estimate a family may offer (:meth:`ClassifierModel.available_point_estimates` lists an
#: instance's): the fit ``method`` values besides the samplers
POINT_ESTIMATE_KINDS: tuple[str, ...] = ("map", "mle", "posterior_mean", "unbiased", "posterior_predictive")


class NoEstimateError(ValueError):
    """A point estimate that does not exist for these data.

    An MLE at infinity, a zero variance, a posterior mode on the boundary ... :func:`inference.fit` records the
    reason beside the posterior instead of failing; asked for directly it is an error.
    """


class InvalidHyperparameterError(InvalidValueError):
    """A hyperparameter of the wrong type or value.

    A ValueError and a TypeError, as scikit-learn's ``InvalidParameterError``, so that either ``except``
    clause catches it.
    """


class ConvergenceError(RuntimeError):
    """An iterative estimate (Newton's method, a MAP optimiser) did not reach its tolerance."""


class ReadOnlyArrays:
    """Dataclass mixin: every array field is made read-only (instances are shared through caches)."""

    def __post_init__(self) -> None:
        for attribute in dataclasses.fields(self):  # type: ignore[arg-type]
            value = getattr(self, attribute.name)
            if isinstance(value, np.ndarray):
                value.flags.writeable = False


def features_as_dataarray(X: Any, params: xr.Dataset, *, argument: str = "X") -> xr.DataArray:
    """Validate new inputs against the fitted features and label them ``(obs, feature)``.

    Parameters
    ----------
    X : array-like of shape (n_obs, n_features) or (n_features,), or Dataset
        New model inputs: an array, one row, or a :class:`data.Dataset`.
    params : xarray.Dataset
        A fitted parameter set; the feature names come from its ``feature`` coordinate.
    argument : str, default "X"
        The name error messages give the input.

    Returns
    -------
    xarray.DataArray
        The checked float inputs, dims ``(obs, feature)``, labelled with the feature names.
    """
    feature_names = tuple(str(name) for name in params.coords["feature"].values)
    values = check_features(X, n_features=len(feature_names), feature_names=feature_names, argument=argument)
    return xr.DataArray(values, dims=("obs", "feature"), coords={"feature": list(feature_names)})


def _accept_every_row(X: np.ndarray, first_row: int) -> None:
    """Accept every row: the ``check`` of a kernel whose model takes any finite input.

    Parameters
    ----------
    X : numpy.ndarray of shape (n_obs, n_features)
        Model inputs (unused).
    first_row : int
        Position of the first row of ``X`` in the caller's input (unused).
    """


@dataclasses.dataclass(frozen=True)
class ClassProbaKernel:
    """Per-draw class probabilities of new rows, with the work on the parameters done once.

    Returned by :meth:`ClassifierModel.class_proba_kernel`. ``kernel(X)`` evaluates
    P(class | x, theta_s) for every row of ``X`` and every parameter set ``theta_s``
    (``kernel(X, log=True)``: log P, computed in the log domain) as ONE array of
    shape ``(n_obs, n_class, n_draws)``, draws last and contiguous, so that
    summaries over draws (means, exact quantiles) read contiguous memory. A point
    estimate is one "draw" (``n_draws == 1``).

    The result for a row depends only on that row and on the rows evaluated with
    it in the same call through BLAS blocking (the last bits of a matrix product
    may change with the number of rows), never on their values;
    :mod:`bayesclass.inference.prediction.tiles` therefore always evaluates fixed tiles of
    rows, so that predictions are the same floats however the rows are chunked.

    Parameters
    ----------
    evaluate : callable ``(X, log) -> array``
        ``X`` float64 of shape (n_obs, n_features), model inputs already checked
        (finite, the fitted number of columns, :attr:`check` passed); ``log`` asks for log P.
    class_names : tuple of str
        The classes (second axis of the result).
    feature_names : tuple of str
        The model inputs (columns of ``X``).
    leading_dims : tuple of str
        The dims of the parameter draws (``("chain", "draw")``; ``()`` for a point estimate).
    leading_shape : tuple of int
        The sizes of ``leading_dims``; the result's last axis is their C-order flattening.
    leading_coords : Mapping[str, numpy.ndarray], optional
        Coordinate values of the leading dims that have them.
    check : callable ``(X, first_row) -> None``, optional
        Raises a ``ValueError`` naming row ``first_row + i`` for a value this model
        cannot take (a binary feature that is not 0/1, an unseen category code ...).
        By default every row is accepted.
    setup_rows : int, default 1
        Rows below which one call costs mostly its per-call setup (e.g. one Cholesky
        factor per draw for an exact GP): callers evaluate at least this many rows at once.
    draw_weights : numpy.ndarray of shape (n_draws,), optional
        Weights of the draws, summing to 1, where they are not equally likely (a stack's pooled member
        draws); None: every draw weighs ``1 / n_draws``.
    evaluate_blocks : callable ``(X, consume) -> array``, optional
        ``evaluate(X, False)`` that also hands each block of rows to ``consume(rows, block)`` as soon as it
        is normalised, while it is in cache (:meth:`in_blocks`); None: the kernel has no such blocks.
    """

    evaluate: Callable[[np.ndarray, bool], np.ndarray]
    class_names: tuple[str, ...]
    feature_names: tuple[str, ...]
    leading_dims: tuple[str, ...]
    leading_shape: tuple[int, ...]
    leading_coords: Mapping[str, np.ndarray] = dataclasses.field(default_factory=dict)
    check: Callable[[np.ndarray, int], None] = _accept_every_row
    setup_rows: int = 1
    draw_weights: np.ndarray | None = None
    evaluate_blocks: Callable[[np.ndarray, Callable[[slice, np.ndarray], None]], np.ndarray] | None = None

    @property
    def n_draws(self) -> int:
        """The number of parameter sets (1 for a point estimate)."""
        return math.prod(self.leading_shape)

    @property
    def n_classes(self) -> int:
        """The number of classes (second axis of the result)."""
        return len(self.class_names)

    def __call__(self, X: np.ndarray, *, log: bool = False) -> np.ndarray:
        """P(class | x, theta_s) (or its log) of shape ``(n_obs, n_class, n_draws)``; see the class docstring."""
        values = self.evaluate(X, log)
        expected = (X.shape[0], self.n_classes, self.n_draws)
        if values.shape != expected:  # a family bug, not a user error
            raise AssertionError(f"class probability kernel returned shape {values.shape}, expected {expected}")
        return values

    def in_blocks(self, X: np.ndarray, consume: Callable[[slice, np.ndarray], None]) -> np.ndarray:
        """``kernel(X)``, each block of rows handed to ``consume(rows, block)`` as soon as it is computed.

        Per-row reductions (means, intervals) of ``consume`` then read the block from cache, not from memory.
        ``consume`` may overwrite the block (e.g. reorder its draws); the returned array holds what it left.

        Parameters
        ----------
        X : numpy.ndarray of shape (n_obs, n_features)
            Model inputs, as for ``kernel(X)``.
        consume : callable ``(rows, block) -> None``
            Called once per block in row order: ``rows`` the slice of ``X``'s rows, ``block`` their
            probabilities, shape ``(rows, n_class, n_draws)``. A kernel without blocks calls it once, on all rows.

        Returns
        -------
        numpy.ndarray of shape (n_obs, n_class, n_draws)
            The probabilities, as ``consume`` left them.
        """
        if self.evaluate_blocks is None:
            values = self(X)
            consume(slice(0, X.shape[0]), values)
            return values
        values = self.evaluate_blocks(X, consume)
        expected = (X.shape[0], self.n_classes, self.n_draws)
        if values.shape != expected:  # a family bug, not a user error
            raise AssertionError(f"class probability kernel returned shape {values.shape}, expected {expected}")
        return values


def kernel_of(
    params: xr.Dataset,
    evaluate: Callable[[np.ndarray, bool], np.ndarray],
    *,
    leading_dims: tuple[str, ...],
    check: Callable[[np.ndarray, int], None] | None = None,
    setup_rows: int = 1,
) -> ClassProbaKernel:
    """A :class:`ClassProbaKernel` labelled from ``params``.

    The kernel takes its class and feature names from the ``class`` and ``feature`` coordinates of
    ``params``, and the sizes and coordinates of ``leading_dims`` from ``params`` too.

    Parameters
    ----------
    params : xarray.Dataset
        The parameter set (posterior draws or one point estimate) the kernel evaluates.
    evaluate : callable ``(X, log) -> array``
        The family's computation, see :class:`ClassProbaKernel`.
    leading_dims : tuple of str
        The draw dims of ``params`` (``()`` for a point estimate), flattened in this order.
    check : callable ``(X, first_row) -> None``, optional
        Rejects values the model cannot take; None accepts every row.
    setup_rows : int, default 1
        Rows below which one call costs mostly its per-call setup.

    Returns
    -------
    ClassProbaKernel
        The labelled kernel.
    """
    return ClassProbaKernel(
        evaluate=evaluate,
        class_names=tuple(str(name) for name in params.coords["class"].values),
        feature_names=tuple(str(name) for name in params.coords["feature"].values),
        leading_dims=tuple(leading_dims),
        leading_shape=tuple(int(params.sizes[dim]) for dim in leading_dims),
        leading_coords={dim: params[dim].values for dim in leading_dims if dim in params.coords},
        check=check or _accept_every_row,
        setup_rows=setup_rows,
    )


def affine(*blocks: np.ndarray) -> np.ndarray:
    """The columns ``blocks`` side by side and a column of ones.

    One matrix product with coefficients stacked over an offset row then computes ``phi @ A + c`` without a
    second pass over the result.

    Parameters
    ----------
    *blocks : numpy.ndarray of shape (n_obs, k_i)
        Column blocks with the same number of rows.

    Returns
    -------
    numpy.ndarray of shape (n_obs, sum(k_i) + 1)
        The blocks side by side, then a column of ones.
    """
    rows = blocks[0].shape[0]
    return np.hstack([*blocks, np.ones((rows, 1))])


#: bytes of one block of rows that :func:`softmax_over_classes` normalises at a time: its passes (max, subtract,
#: exp, sum, divide) then run in the core's L2 cache instead of memory (1.25x faster on a tile of 209 rows x 10
#: classes x 2,000 draws, 33 MB)
SOFTMAX_BLOCK_BYTES = 2 * 2**20
#: with ``recompute``, :func:`softmax_over_classes` exponentiates values without subtracting each draw's maximum
#: where every draw's sum of exponentials lies in this range; every probability above 1e-200 then has the relative
#: accuracy of ``scipy.special.softmax`` (its numerator is a normal float)
UNSHIFTED_SUM_RANGE = (1e-100, 1e100)


def softmax_over_classes(
    values: np.ndarray,
    *,
    recompute: Callable[[np.ndarray], np.ndarray] | None = None,
    each_block: Callable[[slice, np.ndarray], None] | None = None,
) -> np.ndarray:
    """``scipy.special.softmax(values, axis=1)`` computed in place.

    The same operations in the same order (``exp(v - max) / sum``), so that a tile of ``(obs, class, draws)``
    values is not copied three times; rows are normalised in blocks of :data:`SOFTMAX_BLOCK_BYTES` (each row's
    floats do not depend on the block). A row of ``-inf`` under every class becomes NaN.

    With ``recompute`` (for values a family has already shifted near 0 per row, e.g. by subtracting a central
    joint log-likelihood), the values are exponentiated directly, ``exp(v) / sum``, which saves the passes for
    each draw's maximum: equal to scipy's to a few ulps for every probability above 1e-200 wherever each draw's
    sum of exponentials is in :data:`UNSHIFTED_SUM_RANGE`; the rows where it is not are computed again by
    ``recompute`` and normalised as without it.

    Parameters
    ----------
    values : numpy.ndarray of shape (n_obs, n_class, n_draws)
        Unnormalised log probabilities; overwritten.
    recompute : callable, optional
        ``recompute(rows)``: the unnormalised log probabilities of the rows ``rows`` (integer positions) of
        ``values`` again, shape ``(len(rows), n_class, n_draws)``.
    each_block : callable, optional
        ``each_block(rows, block)``, called with each block of rows once normalised (a slice of ``values``'s rows
        and their probabilities), while it is in cache (:meth:`ClassProbaKernel.in_blocks`).

    Returns
    -------
    numpy.ndarray
        ``values`` itself, now probabilities that sum to 1 over axis 1.
    """
    rows = max(1, SOFTMAX_BLOCK_BYTES // max(1, values[:1].nbytes))
    low, high = UNSHIFTED_SUM_RANGE
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        for start in range(0, values.shape[0], rows):  # blocks of rows that stay in cache, not a loop over rows
            block = values[start : start + rows]
            if recompute is None:
                block -= block.max(axis=1, keepdims=True)
            np.exp(block, out=block)
            total = block.sum(axis=1, keepdims=True)
            block /= total
            if recompute is not None:
                unsafe = np.flatnonzero(~((total >= low) & (total <= high)).all(axis=(1, 2)))
                if unsafe.size:  # some draw's exponentials under- or overflow: these rows as without recompute
                    block[unsafe] = softmax_over_classes(recompute(start + unsafe))
            if each_block is not None:
                each_block(slice(start, start + block.shape[0]), block)
    return values


def leading_dims_of(variable: xr.DataArray, *own: str) -> tuple[str, ...]:
    """The dims of ``variable`` other than ``own``: the draw dims of a parameter.

    Parameters
    ----------
    variable : xarray.DataArray
        One parameter of a parameter set.
    *own : str
        The parameter's own dims (``"class"``, ``"feature"`` ...).

    Returns
    -------
    tuple of str
        The remaining dims in their order (``()`` for a point estimate).
    """
    return tuple(str(dim) for dim in variable.dims if dim not in own)


def draws_last(variable: xr.DataArray, leading: tuple[str, ...], *own: str) -> np.ndarray:
    """``variable`` as an array of shape ``(*own sizes, n_draws)``, C-contiguous.

    Parameters
    ----------
    variable : xarray.DataArray
        One parameter of a parameter set.
    leading : tuple of str
        Its draw dims (:func:`leading_dims_of`), flattened last in C order.
    *own : str
        Its own dims, first and in this order.

    Returns
    -------
    numpy.ndarray of shape (*own sizes, n_draws)
        The values, the leading (draw) dims flattened last (size 1 for a point estimate).
    """
    values = variable.transpose(*own, *leading).values
    shape = values.shape[: len(own)]
    return np.ascontiguousarray(values.reshape(*shape, -1))


class ClassifierModel(abc.ABC):
    """Base class of every classifier family (the model contract, see module docstring).

    Subclasses are frozen, keyword-only dataclasses and set :attr:`name`. A field
    typed as a dataclass (the family's prior) also accepts a dict of that
    dataclass's fields: the conversion happens here, once, for every family and for
    :meth:`from_dict`. A subclass that defines ``__post_init__`` calls
    ``super().__post_init__()`` first.
    """

    #: registry name, also the CLI's ``--model`` value
    name: ClassVar[str]
    #: the parameters comparison tables, the forest plot and the convergence table show, one row per element (None:
    #: all of them); a family with one parameter per training row (a latent GP) lists its hyperparameters. Every
    #: other posterior variable is a latent block: the convergence table (``diagnose``, the report) shows it as one
    #: row of its worst values, and ``diagnose(result, full=True)`` lists its elements
    summary_parameter_names: ClassVar[tuple[str, ...] | None] = None
    #: how :func:`bayesclass.inference.engines.fit` presents categorical columns to the family: ``"native"`` (as level
    #: codes, for a family that models them, or refuses them in ``check_training_data``) or ``"treatment"``
    #: (one 0/1 column per level but the first, :mod:`bayesclass.data.coding`, for a family of numeric inputs)
    categorical_coding: ClassVar[Literal["native", "treatment"]] = "native"
    #: the NUTS backends (:mod:`bayesclass.inference.engines.sampling`) that can run the family's graph, the
    #: default first: blackjax needs a JAX form of every Op of the graph
    nuts_backends: ClassVar[tuple[str, ...]] = ("blackjax", "nutpie", "pymc")
    #: what ``fit(method="auto")`` samples the posterior with
    default_sampling_method: ClassVar[str] = "nuts"
    #: the input figure of a report for one input: ``True`` when the family has a latent function of its inputs
    #: that :meth:`latent_predictive` predicts (a latent GP: the latent curve and P(class 1 | x) along the input);
    #: otherwise reports draw the decision boundary over two numeric inputs
    latent_curve: ClassVar[bool] = False
    #: what :meth:`derived_quantities` are, as a report's table title (empty: the family derives none)
    derived_quantities_title: ClassVar[str] = ""
    #: hyperparameter (dotted name of :meth:`to_dict`, e.g. ``"prior.lengthscale_alpha"``) -> the model variable
    #: whose prior statement in :meth:`prior_formulas` it sets (:meth:`hyperparameter_priors`; empty: none stated)
    prior_variables: ClassVar[dict[str, str]] = {}
    #: whether every parameter covered by the MAP's :meth:`gaussian_approximation` is unconstrained (real-valued),
    #: so that N(MAP, inverse Hessian) is the Laplace approximation of the posterior that ``fit(method="laplace")``
    #: draws from (:meth:`has_laplace`, :meth:`laplace_approximation`). A family with constrained parameters
    #: (probabilities, scales) leaves it False and overrides those two methods and :meth:`laplace_parameters`.
    map_approximation_unconstrained: ClassVar[bool] = False
    #: where ``fit(method="laplace")`` takes its Gaussian: ``"map"`` (the MAP's :meth:`gaussian_approximation`,
    #: where :attr:`map_approximation_unconstrained`) or ``"transformed"`` (generic, for constrained parameters: the
    #: mode and inverse Hessian of the PyMC model's log density over its unconstrained value variables, Jacobian
    #: included, mapped back by the model's graph; :mod:`bayesclass.models._transformed_laplace`)
    laplace_space: ClassVar[Literal["map", "transformed"]] = "map"
    #: whether a prediction costs so much per posterior draw (a latent GP: one n x n factor and an n x n solve over
    #: the new rows per draw) that ``predict(draws="auto")`` thins the draws to about the posterior's effective
    #: sample size (:mod:`bayesclass.inference.prediction.draws`); other families predict from every draw
    predicts_from_effective_draws: ClassVar[bool] = False

    def __post_init__(self) -> None:
        """Turn a dict given for a dataclass-typed field (the prior) into that dataclass, then check every field.

        Old names of the prior's fields (:func:`~bayesclass.data.constraints.renamed_fields`) are accepted;
        the converted value's type is checked, then every field's declared constraints
        (:func:`~bayesclass.data.constraints.check_fields`).
        """
        hints = typing.get_type_hints(type(self))
        for attribute in dataclasses.fields(self):  # type: ignore[arg-type]
            declared = hints.get(attribute.name)
            if not (isinstance(declared, type) and dataclasses.is_dataclass(declared)):
                continue
            value = getattr(self, attribute.name)
            if isinstance(value, dict):
                try:
                    value = declared(**with_current_names(declared, value))
                except TypeError as error:
                    if isinstance(error, ValueError):  # a refused value, not an unknown key
                        raise
                    known = ", ".join(field.name for field in dataclasses.fields(declared))
                    raise InvalidHyperparameterError(
                        f"{attribute.name}={value!r}: {error}; its fields are {known}"
                    ) from None
                object.__setattr__(self, attribute.name, value)
            if not isinstance(value, declared):
                raise InvalidHyperparameterError(
                    f"{attribute.name} must be a {declared.__name__} (or a dict of its fields), "
                    f"got {type(value).__name__}: {value!r}"
                )
        check_fields(self)

    # -- hooks ---------------------------------------------------------------------
    @abc.abstractmethod
    def build(self, data: Dataset) -> pm.Model:
        """The PyMC model of ``data``.

        Parameters
        ----------
        data : Dataset
            Training data (already checked by :meth:`check_training_data`).

        Returns
        -------
        pymc.Model
            The model, dims ``class``, ``feature``, ``obs``; coords from :meth:`model_coords`.
        """

    @abc.abstractmethod
    def parameter_names(self, data: Dataset) -> tuple[str, ...]:
        """The parameters of the model of ``data``, as named in the PyMC model, the posterior and every point estimate.

        Parameters
        ----------
        data : Dataset
            Training data.

        Returns
        -------
        tuple of str
            Exactly the parameters this model has (e.g. naive Bayes only has ``binary_proba`` when ``data``
            has binary features).
        """

    @abc.abstractmethod
    def _point_estimate(self, data: Dataset, kind: str) -> xr.Dataset:
        """Family-specific estimate; ``data`` and ``kind`` are already validated."""

    @abc.abstractmethod
    def class_proba_kernel(self, params: xr.Dataset) -> ClassProbaKernel:
        """The prediction function of ``params``, its parameter work done once.

        Parameters
        ----------
        params : xarray.Dataset
            Posterior draws (any leading dims) or one point estimate.

        Returns
        -------
        ClassProbaKernel
            P(class | x) (or its log) of new rows per parameter set; see :class:`ClassProbaKernel`.
        """

    def training_class_log_proba(self, params: xr.Dataset, n_obs: int) -> Callable[[np.ndarray], np.ndarray] | None:
        """The log P(class | training row i, theta_s) read off the draws themselves, where the family has them.

        A latent model whose draws hold the latent value at every training row (the exact GP's ``latent``) has its
        likelihood of those rows without predicting them again; the pointwise log-likelihood and the replicated
        labels of a fit (:func:`~bayesclass.inference.criticism.posterior_predictive.training_draws`) use it.
        By default None: the rows are predicted by :meth:`class_proba_kernel`.

        Parameters
        ----------
        params : xarray.Dataset
            Posterior draws of a fit (any leading dims).
        n_obs : int
            The number of training rows the draws were fitted on.

        Returns
        -------
        callable or None
            ``log_proba(rows) -> array (len(rows), n_class, n_draws)`` for integer row indices, draws flattened in
            the order of :meth:`class_proba_kernel`'s kernel; None where the draws do not hold the rows' values.
        """
        return None

    def coords(self, data: Dataset) -> dict[str, Any]:
        """The coordinates of the model of ``data`` and of its parameter sets.

        A dimension coordinate is a list of labels (``"class": [...]``); a non-dimension
        coordinate is a ``(dims, values)`` tuple (e.g. the training inputs a GP needs for
        prediction). :meth:`model_coords` gives the PyMC model the dimension coordinates;
        :meth:`with_coords` labels a parameter set with those that apply to it. Families
        extend the default ``class`` and ``feature``.

        Parameters
        ----------
        data : Dataset
            Training data.

        Returns
        -------
        dict
            Coordinate name to a list of labels (dimension coordinates) or a ``(dims, values)`` tuple.
        """
        return {"class": list(data.class_names), "feature": list(data.feature_names)}

    def prior_formulas(self, *, n_classes: int | None = None) -> tuple[str, ...]:
        """The prior and likelihood of this instance as plain-text formulas, one statement per line.

        The formulas use the PyMC variable names; reports show them in the model summary.

        Parameters
        ----------
        n_classes : int, optional
            Keep only the statements that apply to that many classes (all when None).

        Returns
        -------
        tuple of str
            One statement per element.
        """
        raise NotImplementedError(f"{type(self).__name__} states no prior_formulas")

    def hyperparameter_priors(self, *, n_classes: int | None = None) -> dict[str, str]:
        """The prior statement each hyperparameter sets, taken from :meth:`prior_formulas`.

        A hyperparameter named in :attr:`prior_variables` gets the statement of :meth:`prior_formulas` (one of
        the ``";  "``-separated parts of a line) that draws its variable, e.g. ``"prior.lengthscale_alpha"`` ->
        ``"lengthscale[feature] ~ InverseGamma(3, 2)"``; a family whose prior uses some hyperparameters only in
        some of its forms overrides this to leave the unused ones out.

        Parameters
        ----------
        n_classes : int, optional
            The statements for that many classes (as :meth:`prior_formulas`).

        Returns
        -------
        dict of str to str
            Dotted hyperparameter name -> its prior statement; a hyperparameter absent sets no stated prior.
        """
        if not self.prior_variables:
            return {}
        statements = [part.strip() for line in self.prior_formulas(n_classes=n_classes) for part in line.split(";  ")]
        priors = {}
        for name, variable in self.prior_variables.items():
            # "variable[dims] ~ ...", "variable[dims] | given ~ ..." or "kind: variable[dims] ~ ..."
            pattern = re.compile(rf"^(?:\w+: )?{re.escape(variable)}(?:\[[^\]]*\])?\s*(?:\|[^~]*)?~")
            found = next((statement for statement in statements if pattern.match(statement)), None)
            if found is not None:
                priors[name] = found
        return priors

    def available_point_estimates(self) -> tuple[str, ...]:
        """The point estimate kinds of this instance.

        Returns
        -------
        tuple of str
            Kinds among ``POINT_ESTIMATE_KINDS``; they may depend on the hyperparameters (e.g. on the
            choice of prior).
        """
        return ("mle", "map")

    def gaussian_approximation(self, data: Dataset, kind: str) -> GaussianApproximation | None:
        """The normal approximation of the point estimate ``kind``: its covariance, standard errors, Wald intervals.

        The covariance is the inverse Hessian of the negative log-likelihood at the MLE (the observed
        information) or of the negative log posterior at the MAP (its Laplace curvature), over the parameters
        of :meth:`parameter_names` flattened by :func:`~bayesclass.models.approximation.flatten_parameters`, in
        the same (possibly standardised) inputs as the estimate. A family declares it by overriding
        :meth:`_gaussian_approximation`; None where it has none (yet).

        Parameters
        ----------
        data : Dataset
            Training data, as given to :meth:`point_estimate`.
        kind : str
            One of :meth:`available_point_estimates`.

        Returns
        -------
        GaussianApproximation or None
            ``params``, ``bse``, ``conf_int(alpha)``, ``cov_params()`` in statsmodels' style; None where the
            family states no curvature for ``kind``.
        """
        self._check_point_estimate(data, kind)
        return self._gaussian_approximation(data, kind)

    def _gaussian_approximation(self, data: Dataset, kind: str) -> GaussianApproximation | None:
        """Family hook of :meth:`gaussian_approximation` (``data`` and ``kind`` validated): None by default."""
        return None

    def class_proba_interval_kernel(
        self, estimate: xr.Dataset, approximation: GaussianApproximation, interval_prob: float
    ) -> Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]] | None:
        """Delta-method intervals of P(class | x) under a point estimate's :meth:`gaussian_approximation`.

        Parameters
        ----------
        estimate : xarray.Dataset
            The point estimate.
        approximation : GaussianApproximation
            Its normal approximation.
        interval_prob : float
            The intervals' probability, in (0, 1).

        Returns
        -------
        callable or None
            ``bounds(X) -> (low, high)``, each of shape ``(n_obs, n_class)``, for model inputs ``X`` checked
            as for :meth:`class_proba_kernel`. By default the delta method on the logit of each class probability,
            by central differences through :meth:`class_proba_kernel` (:mod:`bayesclass.models._delta`); a family
            with a closed form overrides it.
        """
        return delta_method_bounds(self.class_proba_kernel, estimate, approximation, interval_prob)

    def log_odds_parameters(self, n_classes: int) -> tuple[str, ...] | None:
        """The parameters that ARE the intercept and slopes of ``log P(class 1 | x) / P(class 0 | x)``, if any.

        Where a family's parameters are the coefficients of a linear log-odds (a binary logit model), studies
        compare them with a generator's true coefficients (interval coverage of the true parameter); the other
        families' parameters (class means, variances, a latent curve, probit coefficients) are not comparable
        with them and the family returns None (the default).

        Parameters
        ----------
        n_classes : int
            The number of classes of the fitted data.

        Returns
        -------
        tuple of str or None
            Parameter names whose values, flattened in order
            (:func:`~bayesclass.models.approximation.flatten_parameters`), are ``[intercept, slope_1, ...]`` over
            the model's inputs; None where the parameters are not these coefficients.
        """
        return None

    def predictive_kinds(self) -> tuple[str, ...]:
        """The kinds among :meth:`available_point_estimates` that are exact posterior predictive distributions.

        Returns
        -------
        tuple of str
            Kinds that are predictive distributions (e.g. a Student-t predictive), not parameter plug-ins:
            reports label them so.
        """
        return ()

    def default_method_for(self, data: Dataset) -> str:
        """The method ``fit(method="auto")`` runs on ``data``: :attr:`default_sampling_method`.

        A family whose default sampler costs too much on some data (a latent GP's Gibbs sweep on many inputs)
        overrides this with a declared rule, and says why in :meth:`method_note`.

        Parameters
        ----------
        data : Dataset
            The training data.

        Returns
        -------
        str
            A method name of the family.
        """
        return self.default_sampling_method

    def method_note(self, method: str, data: Dataset) -> str:
        """One line on why ``method`` is the family's default for ``data``, where that depends on the data.

        Fits record it with the result (``method_note``) and reports print it beside the method.

        Parameters
        ----------
        method : str
            The method that ran.
        data : Dataset
            The training data.

        Returns
        -------
        str
            ``""``: the default does not depend on the data.
        """
        return ""

    def method_warnings(self, method: str, data: Dataset) -> tuple[str, ...]:
        """Why ``method`` is known to be unreliable for this model on ``data``: ``fit`` warns them before it samples.

        A family whose sampler is known not to be calibrated for some settings overrides this, naming what to use
        instead.

        Parameters
        ----------
        method : str
            The method about to run.
        data : Dataset
            The training data.

        Returns
        -------
        tuple of str
            The warnings (``UserWarning``): none.
        """
        return ()

    def sampling_defaults(self, method: str, n_obs: int) -> dict[str, int]:
        """The draws and tuning steps per chain of a posterior sampler where the settings leave them None.

        ``fit`` resolves ``SamplerSettings(draws=None, tune=None)`` (the default) with them and records the
        numbers used in the result. A family whose sampler needs more (or fewer) steps to pass the convergence
        verdict at its default settings overrides this.

        Parameters
        ----------
        method : str
            The sampling method that runs (e.g. ``"nuts"``, ``"gibbs"``, ``"exact"``).
        n_obs : int
            The number of training rows.

        Returns
        -------
        dict
            ``{"draws": kept draws, "tune": warm-up (or burn-in) steps}`` per chain: 1000 and 1000.
        """
        return {"draws": 1000, "tune": 1000}

    def has_exact(self) -> bool:
        """Whether :meth:`exact_posterior` draws from a conjugate posterior for these hyperparameters.

        Returns
        -------
        bool
            True when this instance has a conjugate posterior.
        """
        return False

    def has_laplace(self) -> bool:
        """Whether :meth:`laplace_approximation` states a Gaussian approximation of the posterior (``"laplace"``).

        Returns
        -------
        bool
            True when :attr:`laplace_space` is ``"transformed"``, or :attr:`map_approximation_unconstrained` and
            the instance has a MAP.
        """
        if self.laplace_space == "transformed":
            return True
        return self.map_approximation_unconstrained and "map" in self.available_point_estimates()

    def laplace_log_density(self, data: Dataset) -> TransformedPosterior | None:
        """The family's own log density over its PyMC model's value variables, where it has one in closed form.

        Where :attr:`laplace_space` is ``"transformed"`` the Laplace approximation is the mode and inverse Hessian
        of the log density of the model's raveled value variables (Jacobian included). A family that can state that
        density and its derivatives without PyTensor declares it here
        (:func:`~bayesclass.models._transformed_laplace.closed_form_posterior`), and no Hessian graph is compiled;
        the default, None, compiles them from :meth:`build`'s model.

        Parameters
        ----------
        data : Dataset
            Training data.

        Returns
        -------
        TransformedPosterior or None
            The same value variables (names, shapes, order), log density (up to a constant), derivatives and map
            to :meth:`parameter_names` as the compiled route's; None where the family states none.
        """
        return None

    def laplace_approximation(self, data: Dataset) -> tuple[xr.Dataset, GaussianApproximation]:
        """The Laplace approximation of the posterior: a Gaussian in an unconstrained space, at the mode.

        By default (:attr:`map_approximation_unconstrained`) the MAP and its :meth:`gaussian_approximation` (the
        inverse Hessian of the negative log posterior), whose draws are the parameters themselves. Where
        :attr:`laplace_space` is ``"transformed"``, the generic approximation over the PyMC model's unconstrained
        value variables (:func:`~bayesclass.models._transformed_laplace.transformed_laplace_approximation`).
        Otherwise a family with constrained parameters overrides this with the approximation over unconstrained
        variables (log scales, log-ratios of probabilities), at the mode of the posterior density in those
        variables (Jacobian included), and :meth:`laplace_parameters` with the map from them back to its
        parameters.

        Parameters
        ----------
        data : Dataset
            Training data (coded, standardised), as given to :meth:`point_estimate`.

        Returns
        -------
        mode : xarray.Dataset
            The mode, one variable per name of ``approximation.names`` (the shapes and dims of the draws).
        approximation : GaussianApproximation
            N(mode, covariance) over the mode's variables flattened.

        Raises
        ------
        ValueError
            Where :meth:`has_laplace` is false.
        """
        if not self.has_laplace():
            raise ValueError(
                f"the {self.name!r} model states no Laplace approximation of its posterior; fit it with "
                f"{spelled('method', 'nuts')}"
            )
        if self.laplace_space == "transformed":
            from bayesclass.models._transformed_laplace import transformed_laplace_approximation

            return transformed_laplace_approximation(self, data)
        approximation = self.gaussian_approximation(data, "map")
        if approximation is None:
            raise ValueError(
                f"the {self.name!r} model states no curvature at its MAP; fit it with {spelled('method', 'nuts')}"
            )
        return self.point_estimate(data, "map")[list(approximation.names)], approximation

    def laplace_parameters(self, draws: xr.Dataset, data: Dataset) -> xr.Dataset:
        """Draws of :meth:`laplace_approximation`'s variables as the model's parameters (:meth:`parameter_names`).

        Parameters
        ----------
        draws : xarray.Dataset
            Draws of the approximation's variables, dims ``(chain, draw, ...)``.
        data : Dataset
            Training data.

        Returns
        -------
        xarray.Dataset
            The parameters, dims ``(chain, draw, ...)``: ``draws`` unchanged here (every parameter unconstrained);
            a family whose approximation is over transformed variables maps them back (e.g. ``exp`` of a log scale).
        """
        if self.laplace_space == "transformed":
            from bayesclass.models._transformed_laplace import transformed_laplace_parameters

            return transformed_laplace_parameters(self, draws, data)
        return draws

    def exact_posterior(self, data: Dataset, *, draws: int, chains: int, random_seed: int) -> xr.Dataset:
        """Independent draws from the exact (conjugate) posterior.

        Only instances whose :meth:`has_exact` is true implement it.

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
            The parameters with dims ``(chain, draw, ...)``.

        Raises
        ------
        ValueError
            Always here: the family has no conjugate posterior.
        """
        raise ValueError(
            f"the {self.name!r} model has no conjugate posterior to draw from exactly; fit it with "
            f"{spelled('method', 'nuts')}"
        )

    def derived_quantities(self, params: xr.Dataset) -> xr.Dataset:
        """Quantities computed from a parameter set that reports show beside the parameters.

        For example the linear discriminants of a shared-covariance Gaussian model; for draws and point
        estimates alike.

        Parameters
        ----------
        params : xarray.Dataset
            Posterior draws or one point estimate.

        Returns
        -------
        xarray.Dataset
            The derived quantities (empty by default).
        """
        return xr.Dataset()

    def convergence_advice(self, failed: tuple[str, ...]) -> tuple[str, ...]:
        """What this family offers when its posterior draws explore badly: its reparametrisations or priors.

        The sampler's own options (warm-up, draws, chains, target acceptance) and standardisation are advised by
        the verdict (:func:`~bayesclass.inference.criticism.diagnostics.diagnose`), from the settings the
        method recorded; a family adds only what depends on its hyperparameters, so never an option of another
        family, nor the value it already has.

        Parameters
        ----------
        failed : tuple of str
            The failed checks and notes of the verdict, by name: ``r_hat``, ``ess_bulk``, ``ess_tail``,
            ``divergences``, ``bfmi``, ``tree_depth`` (``partial`` is never passed alone).

        Returns
        -------
        tuple of str
            Each suggestion, its arguments named by :func:`~bayesclass.data.arguments.spelled` (none by default).
        """
        return ()

    def latent_predictive(self, params: xr.Dataset, X: Any) -> xr.Dataset:
        """The latent function's predictive moments at the inputs ``X`` (families with :attr:`latent_curve` only).

        Parameters
        ----------
        params : xarray.Dataset
            Posterior draws or one point estimate.
        X : array-like of shape (n_obs, n_features)
            Model inputs.

        Returns
        -------
        xarray.Dataset
            ``latent_mean`` and ``latent_variance``.

        Raises
        ------
        NotImplementedError
            Here: the family has no latent function.
        """
        raise NotImplementedError(f"{type(self).__name__} has no latent function (latent_curve is False)")

    def latent_from_proba(self, proba: np.ndarray) -> np.ndarray:
        """The latent value whose inverse link is P(class 1 | x) = ``proba`` (families with :attr:`latent_curve` only).

        Parameters
        ----------
        proba : numpy.ndarray
            Probabilities of class 1.

        Returns
        -------
        numpy.ndarray
            The link function of ``proba``, elementwise.

        Raises
        ------
        NotImplementedError
            Here: the family has no latent function.
        """
        raise NotImplementedError(f"{type(self).__name__} has no latent function (latent_curve is False)")

    def unavailable_hint(self, method: str) -> str:
        """Text appended to the error for a ``method`` this instance lacks but another configuration has.

        Parameters
        ----------
        method : str
            The fit method or point estimate kind asked for.

        Returns
        -------
        str
            A hint beginning with its own separator, or ``""`` (the default).
        """
        return ""

    def repeated_fits_backend(self) -> tuple[str, float] | None:
        """The NUTS backend for many fits of this model's structure in one process, where it beats the default.

        Measured per family by bench/bench_backends.py: a backend that compiles slower but samples faster than
        the default (``nuts_backends[0]``) pays off in a study's worker or a refit loop once the fits of one
        structure number at least its break-even (the extra compile time over the time saved per fit).

        Returns
        -------
        tuple of (str, float) or None
            ``(backend, break-even number of fits)``, or None where the default is as fast for refits too.
        """
        return None

    def cache_key(self, data: Dataset) -> tuple:
        """Everything about ``data`` and ``self`` that shapes the PyMC graph (compile-cache key).

        Parameters
        ----------
        data : Dataset
            Training data.

        Returns
        -------
        tuple
            Hashable key: the hyperparameters as JSON and the names and kinds of the features and classes.
        """
        return (self.to_json(), data.feature_names, data.feature_kinds, data.class_names)

    # -- shared behaviour ------------------------------------------------------------
    def model_coords(self, data: Dataset) -> dict[str, list]:
        """The dimension coordinates of :meth:`coords`, for ``pm.Model(coords=...)``.

        Parameters
        ----------
        data : Dataset
            Training data.

        Returns
        -------
        dict of str to list
            The coordinates of :meth:`coords` that are not ``(dims, values)`` tuples.
        """
        return {name: value for name, value in self.coords(data).items() if not isinstance(value, tuple)}

    def with_coords(self, params: xr.Dataset, data: Dataset) -> xr.Dataset:
        """``params`` labelled with the coordinates of :meth:`coords` that apply to it.

        ``class`` and ``feature`` always (every parameter set names its classes and
        features, even binary logistic regression whose parameters have no ``class``
        dim); any other coordinate when ``params`` has all of its dims.

        Parameters
        ----------
        params : xarray.Dataset
            Posterior draws or one point estimate of the model of ``data``.
        data : Dataset
            The training data.

        Returns
        -------
        xarray.Dataset
            ``params`` with those coordinates assigned.
        """
        dims = set(params.dims)
        labels = {}
        for name, value in self.coords(data).items():
            own = ((value[0],) if isinstance(value[0], str) else value[0]) if isinstance(value, tuple) else (name,)
            if name in ("class", "feature") or set(own) <= dims:
                labels[name] = value
        return params.assign_coords(labels)

    def _check_point_estimate(self, data: Dataset, kind: str) -> None:
        """Refuse a ``kind`` the family lacks (naming the ones it has) and data no model of it can fit."""
        available = self.available_point_estimates()
        if kind not in available:
            raise ValueError(
                f"kind={kind!r} is not a point estimate of this {self.name!r} model; "
                f"choose one of {', '.join(map(repr, available))}{self.unavailable_hint(kind)}"
            )
        self.check_training_data(data)

    def point_estimate(self, data: Dataset, kind: str) -> xr.Dataset:
        """Closed-form / deterministic estimate of the parameters.

        Parameters
        ----------
        data : Dataset
            Training data.
        kind : str
            One of :meth:`available_point_estimates`.

        Returns
        -------
        xarray.Dataset
            Same variable names and dims as the posterior, minus ``chain``/``draw``;
            ``attrs["kind"]`` records ``kind``.
        """
        self._check_point_estimate(data, kind)
        estimate = self._point_estimate(data, kind)
        estimate.attrs["kind"] = kind
        return estimate

    def class_log_proba(self, params: xr.Dataset, X: Any) -> xr.DataArray:
        """Log P(class | x) for every row of ``X``, computed in the log domain (:meth:`class_proba_kernel`).

        Parameters
        ----------
        params : xarray.Dataset
            Posterior draws (any leading dims such as ``chain``, ``draw``) or one point estimate.
        X : array-like of shape (n_obs, n_features) or (n_features,), or Dataset
            Model inputs (standardised / coded as in training; see
            :func:`bayesclass.inference.engines.fit.model_inputs`).

        Returns
        -------
        xarray.DataArray
            Dims ``(*leading, obs, class)``; NaN rows (with a ``RuntimeWarning``, generative
            families) where a row has probability 0 under every class.
        """
        return self._class_proba_array(params, X, log=True)

    def class_proba(self, params: xr.Dataset, X: Any) -> xr.DataArray:
        """P(class | x), equal to ``exp(class_log_proba)`` up to rounding; sums to 1 over ``class``.

        Parameters
        ----------
        params : xarray.Dataset
            Posterior draws (any leading dims such as ``chain``, ``draw``) or one point estimate.
        X : array-like of shape (n_obs, n_features) or (n_features,), or Dataset
            Model inputs, as for :meth:`class_log_proba`.

        Returns
        -------
        xarray.DataArray
            Dims ``(*leading, obs, class)``, the layout of :meth:`class_log_proba`.
        """
        return self._class_proba_array(params, X, log=False)

    def _class_proba_array(self, params: xr.Dataset, X: Any, *, log: bool) -> xr.DataArray:
        kernel = self.class_proba_kernel(params)
        values = check_features(X, n_features=len(kernel.feature_names), feature_names=kernel.feature_names)
        kernel.check(values, 0)
        result = kernel(values, log=log)
        undefined = np.isnan(result).any(axis=(1, 2))
        if undefined.any():
            self._warn_undefined_rows(np.flatnonzero(undefined))
        array = xr.DataArray(
            result.reshape(*result.shape[:2], *kernel.leading_shape),
            dims=("obs", "class", *kernel.leading_dims),
            coords={**kernel.leading_coords, "class": list(kernel.class_names)},
            name="class_log_proba" if log else "class_proba",
        )
        return array.transpose(*kernel.leading_dims, "obs", "class")

    def _warn_undefined_rows(self, rows: np.ndarray) -> None:
        """Called with the rows of NaN class probabilities (rows impossible under every class)."""
        warnings.warn(
            f"{rows.size} row(s) of X (first: row {rows[0]}) have undefined class probabilities (NaN)",
            RuntimeWarning,
            stacklevel=4,
        )

    def check_training_data(self, data: Dataset) -> None:
        """Reject data no model of this family can be fitted to (fewer than 2 classes, empty classes).

        Parameters
        ----------
        data : Dataset
            Training data.

        Raises
        ------
        TypeError
            If ``data`` is not a :class:`~bayesclass.data.Dataset`.
        ValueError
            If ``data`` has rows of fewer than 2 classes, or a class without rows.
        """
        if not isinstance(data, Dataset):
            raise TypeError(f"data must be a bayesclass.data.Dataset (see bayesclass.load), got {type(data).__name__}")
        counts = data.class_counts
        present = np.flatnonzero(counts)
        if present.size < 2:
            only = data.class_names[present[0]] if present.size else "none"
            raise ValueError(
                f"y contains a single class ({only!r}) in {data.name!r}; a classifier needs rows "
                "of at least 2 classes: check the target column or the split"
            )
        empty = [data.class_names[k] for k in np.flatnonzero(counts == 0)]
        if empty:
            raise ValueError(
                f"class(es) {', '.join(map(repr, empty))} of {data.name!r} have no training rows; "
                "drop them from class_names or use a stratified split"
            )

    def to_dict(self) -> dict[str, Any]:
        """Hyperparameters as plain JSON-able values (for provenance attrs).

        Returns
        -------
        dict
            ``"model"`` (the registry name) and every dataclass field, nested priors as dicts.
        """
        return {"model": self.name, **dataclasses.asdict(cast("DataclassInstance", self))}

    def to_json(self) -> str:
        """The hyperparameters of :meth:`to_dict` as one JSON string, keys sorted.

        Returns
        -------
        str
            A canonical JSON text (a compile-cache key).
        """
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> ClassifierModel:
        """Inverse of :meth:`to_dict` (a nested prior given as a dict is rebuilt by ``__post_init__``).

        The names of earlier versions (fields declared with ``metadata={"renamed_from": (...)}``, in the
        family and in its prior) are accepted, so that results written before a rename keep loading.

        Parameters
        ----------
        values : dict
            Output of :meth:`to_dict`; keys that are not fields (``"model"``) are ignored.

        Returns
        -------
        ClassifierModel
            An instance of this family.
        """
        values = with_current_names(cls, values)
        names = {field.name for field in dataclasses.fields(cls)}  # type: ignore[arg-type]
        return cls(**{name: value for name, value in values.items() if name in names})


class GenerativeClassifierModel(ClassifierModel):
    """A family that models p(x, class | theta) = p(class | theta) p(x | class, theta) (naive Bayes, gcc).

    In the manner of scikit-learn's ``_BaseNB``: a family implements
    :meth:`_joint_log_likelihood_kernel`, and this class turns it into ``log P(class | x)``
    by Bayes' rule ONCE, normalising over classes in the log domain
    (``logsumexp``; seed 000 eqs 9.24-9.26, seed 001 eq 1). A generative family also
    draws features (:meth:`sample_features`), which posterior predictive checks
    (:func:`bayesclass.inference.posterior_predictive_check`) use to compare
    replicated with real data (seed 001 §B.1).
    """

    #: whether :meth:`_joint_log_likelihood_kernel` shifts each row's joint near 0 (by a term the same for every
    #: class), so that Bayes' rule may exponentiate it without each draw's maximum (:func:`softmax_over_classes`
    #: with ``recompute``)
    joint_centred: ClassVar[bool] = False

    @abc.abstractmethod
    def _joint_log_likelihood_kernel(self, params: xr.Dataset) -> ClassProbaKernel:
        """A kernel whose ``evaluate(X, log)`` returns ``log p(x, class | theta)`` for every row, class and draw.

        The result has shape ``(n_obs, n_class, n_draws)``, up to a term that is the same for every class,
        whatever ``log`` says. ``-inf`` where a row is impossible under a class (e.g. a level an MLE gives
        probability 0).
        """

    @abc.abstractmethod
    def sample_features(
        self, params: xr.Dataset, class_codes: Any, *, random_seed: int, reference: Any = None
    ) -> xr.DataArray:
        """Features drawn from ``p(x | class, theta)`` for each class code, under every parameter set of ``params``.

        Parameters
        ----------
        params : xarray.Dataset
            Posterior draws (leading dims such as ``replicate``) or one point estimate.
        class_codes : array of int, shape (n_obs,) or (*leading, n_obs)
            The class of every row to draw: the same for every parameter set, or one per parameter set and row
            (a posterior predictive replicate's classes, drawn per draw; :func:`rows_of_class` gathers either).
        random_seed : int
            Seed of the draws.
        reference : array of shape (n_obs, n_features), optional
            The observed rows the draws stand for, where a feature kind needs them
            (multinomial counts keep each row's total); ignored otherwise.

        Returns
        -------
        xarray.DataArray
            Dims ``(*leading, obs, feature)``, in the units and codes of the training features.
        """

    def class_proba_kernel(self, params: xr.Dataset) -> ClassProbaKernel:
        """Bayes' rule: :meth:`_joint_log_likelihood_kernel` normalised over ``class``.

        In the log domain (``logsumexp``; seed 000 eqs 9.24-9.26, seed 001 eq 1), or as a ``softmax`` for
        probabilities. A row impossible under every class gets NaN.

        Parameters
        ----------
        params : xarray.Dataset
            Posterior draws (any leading dims) or one point estimate.

        Returns
        -------
        ClassProbaKernel
            The joint kernel with its ``evaluate`` normalised over classes.
        """
        joint = self._joint_log_likelihood_kernel(params)
        centred = self.joint_centred

        def evaluate(X: np.ndarray, log: bool) -> np.ndarray:
            if not log:
                return evaluate_blocks(X, None)
            values = joint.evaluate(X, True)
            with np.errstate(invalid="ignore", divide="ignore"):
                return values - scipy.special.logsumexp(values, axis=1, keepdims=True)

        def evaluate_blocks(X: np.ndarray, consume: Callable[[slice, np.ndarray], None] | None) -> np.ndarray:
            again = (lambda rows: joint.evaluate(X[rows], True)) if centred else None
            return softmax_over_classes(joint.evaluate(X, True), recompute=again, each_block=consume)

        return dataclasses.replace(joint, evaluate=evaluate, evaluate_blocks=evaluate_blocks)

    def _warn_undefined_rows(self, rows: np.ndarray) -> None:
        warnings.warn(
            f"{rows.size} row(s) of X (first: row {rows[0]}) have probability 0 under every class with these "
            "parameters (values never seen in any class under the MLE); their class probabilities are NaN. "
            f"Use the posterior, {spelled('kind', 'posterior_mean')}, or a MAP with concentrations > 1",
            RuntimeWarning,
            stacklevel=4,
        )

    def simulate(
        self, params: xr.Dataset, n: int, *, random_seed: int, name: str = "simulated", reference: Any = None
    ) -> Dataset:
        """Synthetic labelled data from one parameter set, as seed 001 §B.1 describes.

        Each row draws a class with probability ``class_prior``, then features from :meth:`sample_features`.

        Parameters
        ----------
        params : xarray.Dataset
            One parameter set (a point estimate, or one posterior draw).
        n : int
            Number of rows.
        random_seed : int
            Seed of the classes and the features.
        name : str
            Name of the returned Dataset.
        reference : array of shape (n, n_features), optional
            Passed on to :meth:`sample_features`: rows whose totals the simulated count
            features keep (naive Bayes with count features needs it).

        Returns
        -------
        Dataset
            ``n`` rows with the classes and feature names and kinds of ``params``.

        Raises
        ------
        ValueError
            If ``params`` holds several parameter sets (select one posterior draw first), ``n`` is
            not a positive integer or ``reference`` does not have ``n`` rows.
        """
        if set(params["class_prior"].dims) != {"class"}:
            raise ValueError("simulate takes one parameter set (a point estimate); select one posterior draw first")
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"n must be a positive integer, got {n!r}")
        if reference is not None and np.shape(reference)[0] != n:
            raise ValueError(f"reference must have n={n} rows (one per simulated row), got shape {np.shape(reference)}")
        rng = np.random.default_rng(random_seed)
        proba = params["class_prior"].values
        codes = rng.choice(proba.size, size=int(n), p=proba / proba.sum())
        X = self.sample_features(params, codes, random_seed=int(rng.integers(2**32)), reference=reference).values
        features = tuple(str(f) for f in params["feature"].values)
        return Dataset(
            name=name,
            X=X,
            y=codes,
            feature_names=features,
            class_names=tuple(str(c) for c in params["class"].values),
            feature_kinds=self.feature_kinds_of(params),
            description=f"{n} rows drawn from a fitted {self.name} model",
            provenance=f"{type(self).__name__}.simulate(n={n}, random_seed={random_seed})",
        )

    def feature_kinds_of(self, params: xr.Dataset) -> tuple[FeatureKind, ...]:
        """The feature kinds of the data ``params`` were fitted to (continuous unless a family says otherwise).

        Parameters
        ----------
        params : xarray.Dataset
            A parameter set of this family.

        Returns
        -------
        tuple of str
            One kind per feature.
        """
        continuous: tuple[FeatureKind, ...] = ("continuous",)
        return continuous * params.sizes["feature"]


def check_class_codes(class_codes: Any, n_classes: int, leading_shape: tuple[int, ...] = ()) -> np.ndarray:
    """``class_codes`` as an integer array of codes in ``0..n_classes-1``, or a ``ValueError``.

    Parameters
    ----------
    class_codes : array-like of int
        Class codes: one per row, shape ``(n_obs,)``, shared by every parameter set; or, where ``leading_shape``
        is not empty, also one per parameter set and row, shape ``(*leading_shape, n_obs)`` (a posterior
        predictive replicate draws its classes per draw).
    n_classes : int
        Number of classes.
    leading_shape : tuple of int, default ()
        The shape of the parameter sets' draw dims (``()`` for a point estimate).

    Returns
    -------
    numpy.ndarray
        The codes as an array.

    Raises
    ------
    ValueError
        If the codes are not integers in range, or their shape is neither of the two above.
    """
    codes = np.asarray(class_codes)
    shape_ok = codes.ndim == 1 or (len(leading_shape) > 0 and codes.shape[:-1] == tuple(leading_shape))
    if not shape_ok or codes.dtype.kind not in "iu" or (codes < 0).any() or (codes >= n_classes).any():
        per_draw = f" or ({', '.join(map(str, leading_shape))}, n_obs)" if leading_shape else ""
        raise ValueError(
            f"class_codes must be an array of integer codes in 0..{n_classes - 1} of shape (n_obs,){per_draw}, got "
            f"{str(class_codes)[:80]}"
        )
    return codes


def rows_of_class(values: np.ndarray, codes: np.ndarray, n_leading: int) -> np.ndarray:
    """The values of each row's class: ``(*leading, class, *rest)`` -> ``(*leading, obs, *rest)``.

    Parameters
    ----------
    values : numpy.ndarray
        A per-class parameter, its class axis right after the ``n_leading`` draw axes.
    codes : numpy.ndarray of int
        The class of every row, shape ``(obs,)`` (the same for every parameter set) or ``(*leading, obs)``
        (one class per parameter set and row), as :func:`check_class_codes` accepts.
    n_leading : int
        The number of draw axes of ``values``.

    Returns
    -------
    numpy.ndarray
        Shape ``(*leading, obs, *rest)``: one gather, no loop over rows or draws.
    """
    if codes.ndim == 1:
        return np.take(values, codes, axis=n_leading)
    index = codes.reshape(codes.shape + (1,) * (values.ndim - n_leading - 1))
    return np.take_along_axis(values, index, axis=n_leading)
