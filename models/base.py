"""The model contract every classifier family implements.

A family is a frozen dataclass whose fields are its hyperparameters (priors,
link, covariance kind ...), validated on construction. It provides

``build(data) -> pm.Model``
    the PyMC model, vectorised, with named dims ``class``, ``feature``, ``obs``;
``point_estimate(data, kind) -> xarray.Dataset``
    the closed-form or deterministic-optimiser estimate for ``kind`` in
    :attr:`ClassifierModel.point_estimate_kinds`, with the SAME variable names
    and dims as the PyMC posterior, minus ``chain``/``draw``;
``class_log_proba(params, X) -> xarray.DataArray``
    log P(class | x) for every row of ``X``, from parameters in the log domain,
    broadcasting over any leading dims of ``params`` (``chain``, ``draw`` ...).

Every parameter set (posterior or point estimate) carries a ``class``
coordinate holding the class names, so that ``class_log_proba`` can label its
output even for families whose parameters have no ``class`` dim (binary
logistic regression).

The base class implements everything that is common once, over those hooks
(in the manner of scikit-learn's ``_BaseNB``): training-data checks,
``class_proba``, ``to_dict``/``from_dict`` for provenance attrs.
"""

from __future__ import annotations

import abc
import dataclasses
import json
import math
import typing
import warnings
from typing import Any, ClassVar, Literal

import numpy as np
import pymc as pm
import scipy.special
import xarray as xr

from bayesclass.data import Dataset, check_features

__all__ = [
    "ClassifierModel",
    "ConvergenceError",
    "GenerativeClassifierModel",
    "InvalidHyperparameterError",
    "check_class_codes",
    "NoEstimateError",
    "ReadOnlyArrays",
    "check_finite",
    "check_positive",
    "features_as_dataarray",
]


class NoEstimateError(ValueError):
    """A point estimate that does not exist for these data (an MLE at infinity, a zero
    variance, a posterior mode on the boundary ...). :func:`inference.fit` records the
    reason beside the posterior instead of failing; asked for directly it is an error."""


class InvalidHyperparameterError(ValueError, TypeError):
    """A hyperparameter of the wrong type or value (a ValueError and a TypeError, as scikit-learn's
    ``InvalidParameterError``, so that either ``except`` clause catches it)."""


class ConvergenceError(RuntimeError):
    """An iterative estimate (Newton's method, a MAP optimiser) did not reach its tolerance."""


def check_positive(value: float, *, argument: str, allow_inf: bool = False) -> float:
    """Return ``value`` as a float, or raise a ``ValueError`` naming ``argument``.

    ``allow_inf`` admits ``math.inf``, which the priors use to mean a flat
    (improper, unpenalised) prior.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float, np.number)):  # True is no scale, "1" no number
        raise ValueError(f"{argument} must be a positive number, got {value!r} ({type(value).__name__})")
    number = float(value)
    if math.isnan(number) or number <= 0 or (math.isinf(number) and not allow_inf):
        hint = " or inf for a flat prior" if allow_inf else ""
        raise ValueError(f"{argument} must be a positive finite number{hint}, got {value!r}")
    return number


def check_finite(value: float, *, argument: str) -> float:
    """Return ``value`` as a float, or raise a ``ValueError`` naming ``argument`` (booleans are refused)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.number)) or not math.isfinite(value):
        raise ValueError(f"{argument} must be a finite number, got {value!r}")
    return float(value)


class ReadOnlyArrays:
    """Dataclass mixin: every array field is made read-only (instances are shared through caches)."""

    def __post_init__(self) -> None:
        for attribute in dataclasses.fields(self):  # type: ignore[arg-type]
            value = getattr(self, attribute.name)
            if isinstance(value, np.ndarray):
                value.flags.writeable = False


def features_as_dataarray(X: Any, params: xr.Dataset, *, argument: str = "X") -> xr.DataArray:
    """Validate new inputs against the fitted features and label them ``(obs, feature)``.

    ``X`` may be an array of shape (n_obs, n_features), one row of shape
    (n_features,), or a :class:`data.Dataset`. The feature names come from the
    ``feature`` coordinate of ``params``.
    """
    feature_names = tuple(str(name) for name in params.coords["feature"].values)
    values = check_features(X, n_features=len(feature_names), feature_names=feature_names, argument=argument)
    return xr.DataArray(values, dims=("obs", "feature"), coords={"feature": list(feature_names)})


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
    #: the parameters comparison tables show, one row per element (None: all of them); a family
    #: with one parameter per training row (a latent GP) lists its hyperparameters
    summary_parameter_names: ClassVar[tuple[str, ...] | None] = None
    #: how :func:`bayesclass.inference.fit` presents categorical columns to the family: ``"native"`` (as level
    #: codes, for a family that models them, or refuses them in ``check_training_data``) or ``"treatment"``
    #: (one 0/1 column per level but the first, :mod:`bayesclass.data.coding`, for a family of numeric inputs)
    categorical_coding: ClassVar[Literal["native", "treatment"]] = "native"

    def __post_init__(self) -> None:
        """Turn a dict given for a dataclass-typed field (the prior) into that dataclass, and check its type."""
        hints = typing.get_type_hints(type(self))
        for attribute in dataclasses.fields(self):  # type: ignore[arg-type]
            declared = hints.get(attribute.name)
            if not (isinstance(declared, type) and dataclasses.is_dataclass(declared)):
                continue
            value = getattr(self, attribute.name)
            if isinstance(value, dict):
                try:
                    value = declared(**value)
                except TypeError as error:  # an unknown key
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

    # -- hooks ---------------------------------------------------------------------
    @abc.abstractmethod
    def build(self, data: Dataset) -> pm.Model:
        """The PyMC model of ``data`` (dims ``class``, ``feature``, ``obs``; coords from :meth:`model_coords`)."""

    @abc.abstractmethod
    def parameter_names(self, data: Dataset) -> tuple[str, ...]:
        """The parameters of the model of ``data``, as named in the PyMC model, the posterior and every
        point estimate (exactly those this model has: e.g. naive Bayes only has ``binary_proba`` when
        ``data`` has binary features)."""

    @abc.abstractmethod
    def _point_estimate(self, data: Dataset, kind: str) -> xr.Dataset:
        """Family-specific estimate; ``data`` and ``kind`` are already validated."""

    @abc.abstractmethod
    def class_log_proba(self, params: xr.Dataset, X: Any) -> xr.DataArray:
        """log P(class | x), dims ``(*leading, obs, class)``."""

    def coords(self, data: Dataset) -> dict[str, Any]:
        """The coordinates of the model of ``data`` and of its parameter sets.

        A dimension coordinate is a list of labels (``"class": [...]``); a non-dimension
        coordinate is a ``(dims, values)`` tuple (e.g. the training inputs a GP needs for
        prediction). :meth:`model_coords` gives the PyMC model the dimension coordinates;
        :meth:`with_coords` labels a parameter set with those that apply to it. Families
        extend the default ``class`` and ``feature``.
        """
        return {"class": list(data.class_names), "feature": list(data.feature_names)}

    def available_point_estimates(self) -> tuple[str, ...]:
        """The point estimate kinds of this instance (they may depend on its hyperparameters,
        e.g. on the choice of prior)."""
        return ("mle", "map")

    def predictive_kinds(self) -> tuple[str, ...]:
        """The kinds among :meth:`available_point_estimates` that are exact posterior predictive
        distributions (e.g. a Student-t predictive), not parameter plug-ins: reports label them so."""
        return ()

    def has_exact(self) -> bool:
        """Whether :meth:`exact_posterior` draws from a conjugate posterior for these hyperparameters."""
        return False

    def exact_posterior(self, data: Dataset, *, draws: int, chains: int, random_seed: int) -> xr.Dataset:
        """Independent draws from the exact (conjugate) posterior, dims ``(chain, draw, ...)``.

        Only instances whose :meth:`has_exact` is true implement it.
        """
        raise ValueError(
            f"the {self.name!r} model has no conjugate posterior to draw from exactly; fit it with method='nuts'"
        )

    def derived_quantities(self, params: xr.Dataset) -> xr.Dataset:
        """Quantities computed from a parameter set that reports show beside the parameters (e.g. the
        linear discriminants of a shared-covariance Gaussian model), for draws and point estimates alike.
        Empty by default."""
        return xr.Dataset()

    def unavailable_hint(self, method: str) -> str:
        """Text appended to the error for a ``method`` this instance lacks but another configuration has."""
        return ""

    def cache_key(self, data: Dataset) -> tuple:
        """Everything about ``data`` and ``self`` that shapes the PyMC graph (compile-cache key)."""
        return (self.to_json(), data.feature_names, data.feature_kinds, data.class_names)

    # -- shared behaviour ------------------------------------------------------------
    def methods(self) -> tuple[str, ...]:
        """The ``method`` values :func:`bayesclass.inference.fit` accepts for this instance."""
        return ("nuts", *(("exact",) if self.has_exact() else ()), *self.available_point_estimates())

    def model_coords(self, data: Dataset) -> dict[str, list]:
        """The dimension coordinates of :meth:`coords`, for ``pm.Model(coords=...)``."""
        return {name: value for name, value in self.coords(data).items() if not isinstance(value, tuple)}

    def with_coords(self, params: xr.Dataset, data: Dataset) -> xr.Dataset:
        """``params`` labelled with the coordinates of :meth:`coords` that apply to it.

        ``class`` and ``feature`` always (every parameter set names its classes and
        features, even binary logistic regression whose parameters have no ``class``
        dim); any other coordinate when ``params`` has all of its dims.
        """
        dims = set(params.dims)
        labels = {}
        for name, value in self.coords(data).items():
            own = ((value[0],) if isinstance(value[0], str) else value[0]) if isinstance(value, tuple) else (name,)
            if name in ("class", "feature") or set(own) <= dims:
                labels[name] = value
        return params.assign_coords(labels)

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
        available = self.available_point_estimates()
        if kind not in available:
            raise ValueError(
                f"kind={kind!r} is not a point estimate of this {self.name!r} model; "
                f"choose one of {', '.join(map(repr, available))}{self.unavailable_hint(kind)}"
            )
        self.check_training_data(data)
        estimate = self._point_estimate(data, kind)
        estimate.attrs["kind"] = kind
        return estimate

    def class_proba(self, params: xr.Dataset, X: Any) -> xr.DataArray:
        """P(class | x) = exp(:meth:`class_log_proba`); sums to 1 over ``class``."""
        return np.exp(self.class_log_proba(params, X))

    def check_training_data(self, data: Dataset) -> None:
        """Reject data no model of this family can be fitted to (fewer than 2 classes, empty classes)."""
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
        """Hyperparameters as plain JSON-able values (for provenance attrs)."""
        return {"model": self.name, **dataclasses.asdict(self)}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> ClassifierModel:
        """Inverse of :meth:`to_dict` (a nested prior given as a dict is rebuilt by ``__post_init__``)."""
        names = {field.name for field in dataclasses.fields(cls)}  # type: ignore[arg-type]
        return cls(**{name: value for name, value in values.items() if name in names})


class GenerativeClassifierModel(ClassifierModel):
    """A family that models p(x, class | theta) = p(class | theta) p(x | class, theta) (naive Bayes, gcc).

    In the manner of scikit-learn's ``_BaseNB``: a family implements
    :meth:`_joint_log_likelihood`, and this class turns it into ``log P(class | x)``
    by Bayes' rule ONCE, normalising over classes in the log domain
    (``logsumexp``; seed 000 eqs 9.24-9.26, seed 001 eq 1). A generative family also
    draws features (:meth:`sample_features`), which posterior predictive checks
    (:func:`bayesclass.inference.posterior_predictive_check`) use to compare
    replicated with real data (seed 001 §B.1).
    """

    @abc.abstractmethod
    def _joint_log_likelihood(self, params: xr.Dataset, features: xr.DataArray) -> xr.DataArray:
        """``log p(x, class | theta)`` for every row and class, up to a term that is the same for every class.

        ``features`` are validated ``(obs, feature)`` inputs; the result has dims
        ``(*leading, obs, class)`` in any order, and ``-inf`` where a row is impossible
        under a class (e.g. a level an MLE gives probability 0).
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
        class_codes : array of int, shape (n_obs,)
            The class of every row to draw.
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

    def class_log_proba(self, params: xr.Dataset, X: Any) -> xr.DataArray:
        """log P(class | x) by Bayes' rule: :meth:`_joint_log_likelihood` normalised over ``class``.

        Returns
        -------
        xarray.DataArray
            Dims ``(*leading, obs, class)``; NaN rows (with a ``RuntimeWarning``) where
            the row has probability 0 under every class.
        """
        features = features_as_dataarray(X, params)
        joint = self._joint_log_likelihood(params, features).transpose(..., "obs", "class")
        with np.errstate(invalid="ignore"):
            normaliser = scipy.special.logsumexp(joint.values, axis=-1, keepdims=True)
            values = joint.values - normaliser
        undefined = np.isneginf(normaliser[..., 0])
        if undefined.any():
            rows = np.flatnonzero(undefined.reshape(-1, undefined.shape[-1]).any(axis=0))
            warnings.warn(
                f"{rows.size} row(s) of X (first: row {rows[0]}) have probability 0 under every class with these "
                "parameters (values never seen in any class under the MLE); their class probabilities are NaN. "
                "Use the posterior, kind='posterior_mean', or a MAP with concentrations > 1",
                RuntimeWarning,
                stacklevel=3,
            )
        return joint.copy(data=values).assign_coords({"class": params["class"].values})

    def simulate(self, params: xr.Dataset, n: int, *, random_seed: int, name: str = "simulated") -> Dataset:
        """Synthetic labelled data from one parameter set, as seed 001 §B.1 describes: a class with
        probability ``class_prior``, then features from :meth:`sample_features`.

        Raises
        ------
        ValueError
            If ``params`` holds several parameter sets (select one posterior draw first) or ``n`` is
            not a positive integer.
        """
        if set(params["class_prior"].dims) != {"class"}:
            raise ValueError("simulate takes one parameter set (a point estimate); select one posterior draw first")
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"n must be a positive integer, got {n!r}")
        rng = np.random.default_rng(random_seed)
        proba = params["class_prior"].values
        codes = rng.choice(proba.size, size=int(n), p=proba / proba.sum())
        X = self.sample_features(params, codes, random_seed=int(rng.integers(2**32))).values
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

    def feature_kinds_of(self, params: xr.Dataset) -> tuple[str, ...]:
        """The feature kinds of the data ``params`` were fitted to (continuous unless a family says otherwise)."""
        return ("continuous",) * params.sizes["feature"]


def check_class_codes(class_codes: Any, n_classes: int) -> np.ndarray:
    """``class_codes`` as a 1-D integer array of codes in ``0..n_classes-1``, or a ``ValueError``."""
    codes = np.asarray(class_codes)
    if codes.ndim != 1 or codes.dtype.kind not in "iu" or (codes < 0).any() or (codes >= n_classes).any():
        raise ValueError(f"class_codes must be a 1-D array of integer codes in 0..{n_classes - 1}, got {class_codes!r}")
    return codes
