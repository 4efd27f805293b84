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
from typing import Any, ClassVar

import numpy as np
import pymc as pm
import xarray as xr

from bayesclass.data import Dataset, check_features

__all__ = ["ClassifierModel", "ConvergenceError", "NoEstimateError", "ReadOnlyArrays", "check_finite", "check_positive", "features_as_dataarray"]


class NoEstimateError(ValueError):
    """A point estimate that does not exist for these data (an MLE at infinity, a zero
    variance, a posterior mode on the boundary ...). :func:`inference.fit` records the
    reason beside the posterior instead of failing; asked for directly it is an error."""


class ConvergenceError(RuntimeError):
    """An iterative estimate (Newton's method, a MAP optimiser) did not reach its tolerance."""


def check_positive(value: float, *, argument: str, allow_inf: bool = False) -> float:
    """Return ``value`` as a float, or raise a ``ValueError`` naming ``argument``.

    ``allow_inf`` admits ``math.inf``, which the priors use to mean a flat
    (improper, unpenalised) prior.
    """
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{argument} must be a positive number, got {value!r}") from None
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

    Subclasses are frozen, keyword-only dataclasses and set the class variables
    below.
    """

    #: registry name, also the CLI's ``--model`` value
    name: ClassVar[str]
    #: the ``kind`` values :meth:`point_estimate` accepts
    point_estimate_kinds: ClassVar[tuple[str, ...]] = ("mle", "map")
    #: names of the parameters, as in the PyMC model and the posterior (a family
    #: whose parameters depend on the feature kinds lists them all; a posterior
    #: holds those its model has)
    parameter_names: ClassVar[tuple[str, ...]]
    #: whether :meth:`exact_posterior` draws from a conjugate posterior
    has_exact_posterior: ClassVar[bool] = False
    #: the parameters comparison tables show, one row per element (None: all of them); a family
    #: with one parameter per training row (a latent GP) lists its hyperparameters
    summary_parameter_names: ClassVar[tuple[str, ...] | None] = None

    # -- hooks ---------------------------------------------------------------------
    @abc.abstractmethod
    def build(self, data: Dataset) -> pm.Model:
        """The PyMC model of ``data`` (dims ``class``, ``feature``, ``obs``)."""

    @abc.abstractmethod
    def _point_estimate(self, data: Dataset, kind: str) -> xr.Dataset:
        """Family-specific estimate; ``data`` and ``kind`` are already validated."""

    @abc.abstractmethod
    def class_log_proba(self, params: xr.Dataset, X: Any) -> xr.DataArray:
        """log P(class | x), dims ``(*leading, obs, class)``."""

    def exact_posterior(self, data: Dataset, *, draws: int, chains: int, random_seed: int) -> xr.Dataset:
        """Independent draws from the exact (conjugate) posterior, dims ``(chain, draw, ...)``.

        Only families with :attr:`has_exact_posterior` implement it.
        """
        raise ValueError(
            f"the {self.name!r} model has no conjugate posterior to draw from exactly; fit it with method='nuts'"
        )

    def available_point_estimates(self) -> tuple[str, ...]:
        """The point estimate kinds of this instance (a family whose estimates depend on its
        hyperparameters, e.g. on the choice of prior, narrows :attr:`point_estimate_kinds`)."""
        return self.point_estimate_kinds

    def has_exact(self) -> bool:
        """Whether :meth:`exact_posterior` draws from a conjugate posterior for these hyperparameters."""
        return self.has_exact_posterior

    def derived_quantities(self, params: xr.Dataset) -> xr.Dataset:
        """Quantities computed from a parameter set that reports show beside the parameters (e.g. the
        linear discriminants of a shared-covariance Gaussian model), for draws and point estimates alike.
        Empty by default."""
        return xr.Dataset()

    def unavailable_hint(self, method: str) -> str:
        """Text appended to the error for a ``method`` this instance lacks but another configuration has."""
        return ""

    def methods(self) -> tuple[str, ...]:
        """The ``method`` values :func:`inference.fit` accepts for this family."""
        return ("nuts", *(("exact",) if self.has_exact() else ()), *self.available_point_estimates())

    def parameter_coords(self, data: Dataset) -> dict[str, Any]:
        """Coordinates attached to every parameter set (posterior draws and point estimates).

        Defaults to :meth:`coords`; a family adds non-dimension coordinates here.
        """
        return dict(self.coords(data))

    def cache_key(self, data: Dataset) -> tuple:
        """Everything about ``data`` and ``self`` that shapes the PyMC graph (compile-cache key)."""
        return (self.to_json(), data.feature_names, data.feature_kinds, data.class_names)

    # -- shared behaviour ------------------------------------------------------------
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
            raise TypeError(f"data must be a data.Dataset (see data.load), got {type(data).__name__}")
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

    def coords(self, data: Dataset) -> dict[str, list[str]]:
        """Coordinates shared by the PyMC model and the point estimates."""
        return {"class": list(data.class_names), "feature": list(data.feature_names)}

    def to_dict(self) -> dict[str, Any]:
        """Hyperparameters as plain JSON-able values (for provenance attrs)."""
        return {"model": self.name, **dataclasses.asdict(self)}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> ClassifierModel:
        """Inverse of :meth:`to_dict` (nested prior dataclasses are rebuilt)."""
        types = typing.get_type_hints(cls)
        kwargs = {}
        for field in dataclasses.fields(cls):
            if field.name in values:
                value = values[field.name]
                if dataclasses.is_dataclass(types[field.name]) and isinstance(value, dict):
                    value = types[field.name](**value)
                kwargs[field.name] = value
        return cls(**kwargs)
