"""The typed schema of a fitted result: every root attr, its type and range, and the format version.

A result is an ``xarray.DataTree`` (see :mod:`bayesclass.inference.engines.fit` for its groups). Its root attrs
record how it was made. This module is the only reader and writer of those attrs: :func:`result_info` parses
them once into a frozen :class:`ResultInfo`, checked with the same validators as a user's input (the model's
hyperparameters rebuild through their declared constraints, the sampler settings through
:class:`~bayesclass.inference.engines.sampling.SamplerSettings`), and :func:`write_info` writes one back.
Every other module (prediction, criticism, evaluation, studies, reports, the CLI) reads the typed object.

Formats
-------
``bayesclass_format`` 2 (this version) adds ``data_origin``, the structured origin of the training rows
(:class:`~bayesclass.data.origin.DataOrigin`: built-in source, generator arguments, split part). Formats 0
(no version attr) and 1 are read too: their origin is recovered from the provenance text they wrote.

Optional groups are added within a format, as the covariances were: a reader that does not know one ignores
it, and a file written before it simply lacks it. So it is with the ``posterior_predictive`` group (replicated
labels of the training rows, and features for the generative families;
:mod:`bayesclass.inference.criticism.posterior_predictive`): every fit with draws writes it with the attrs
``posterior_predictive`` (:class:`PosteriorPredictiveRecord`: seed and caps) and ``posterior_predictive_digest``;
a point estimate has none; a format 0-2 file written before it has neither group nor attrs and loads as it is.
A group without its record, a record without its group, or a group that does not fit the result (dims, sizes,
codes outside the classes, values that are not finite, contents that do not match the digest) is refused.
"""

from __future__ import annotations

import ast
import dataclasses
import datetime
import hashlib
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, cast, get_args

import numpy as np

from bayesclass._lazy import lazy_import
from bayesclass.data import DataOrigin, SplitOrigin
from bayesclass.data.coding import treatment_code
from bayesclass.data.constraints import MAX_ATTR_TEXT, MAX_FEATURE_MAGNITUDE, MAX_SEED, control_character
from bayesclass.data.dataset import FEATURE_KINDS, FeatureKind
from bayesclass.data.origin import MissingRecord
from bayesclass.inference.engines.methods import SAMPLERS, method_names
from bayesclass.inference.engines.sampling import BACKENDS, SamplerSettings
from bayesclass.models import ClassifierModel, model_from_dict
from bayesclass.models.approximation import GaussianApproximation
from bayesclass.models.base import POINT_ESTIMATE_KINDS

if TYPE_CHECKING:
    import xarray as xr
else:
    xr = lazy_import("xarray")

__all__ = [
    "COVARIANCE_GROUP_PREFIX",
    "FORMAT_VERSION",
    "READABLE_FORMATS",
    "DataRecord",
    "POSTERIOR_PREDICTIVE_GROUP",
    "PosteriorPredictiveRecord",
    "ResultInfo",
    "STACK_METHODS",
    "StackInfo",
    "StandardizeMode",
    "check_result",
    "check_stack",
    "data_result",
    "is_stack",
    "stack_digest",
    "stack_info",
    "require_stackable",
    "stack_members",
    "write_stack_info",
    "gaussian_approximation",
    "model_of",
    "parameter_groups",
    "parameters_digest",
    "posterior_predictive_digest",
    "result_info",
    "write_info",
]

#: the version of the result layout written by this bayesclass (attr ``bayesclass_format``)
FORMAT_VERSION = 2
#: the versions this bayesclass reads (0: written before the version attr)
READABLE_FORMATS = (0, 1, 2)
#: which columns ``fit(standardize=...)`` scaled: none, the continuous ones, or the binary ones too
StandardizeMode = Literal["none", "continuous", "all"]
#: the group beside ``point_estimate_<kind>`` holding its covariance: ``estimate_covariance_<kind>`` (not a
#: ``point_estimate_*`` name: every such group is an estimate kind)
COVARIANCE_GROUP_PREFIX = "estimate_covariance_"
#: longest text attr accepted (a tampered file cannot make a page of megabytes out of one attr; fitting refuses
#: names that would exceed it)
MAX_TEXT = MAX_ATTR_TEXT
#: the group of replicated training labels (and features) that ArviZ's predictive checks read
POSTERIOR_PREDICTIVE_GROUP = "posterior_predictive"


@dataclass(frozen=True)
class PosteriorPredictiveRecord:
    """How a result's ``posterior_predictive`` group was drawn (root attr ``posterior_predictive``, JSON).

    See :mod:`bayesclass.inference.criticism.posterior_predictive` for the group and the random streams.

    Parameters
    ----------
    random_seed : int
        The seed the labels' and features' streams derive from (the fit's ``random_seed``): the same seed gives
        the same group.
    feature_replicates : int
        The draws whose features are replicated (variable ``X``, dim ``replicate``); 0 where the family generates
        no features (logistic, GP) or one replicate alone exceeds the cap.
    max_feature_replicates : int
        The cap on ``feature_replicates`` the fit applied.
    max_feature_values : int
        The cap on replicates x rows x model inputs the fit applied.
    """

    random_seed: int
    feature_replicates: int
    max_feature_replicates: int
    max_feature_values: int

    def to_dict(self) -> dict[str, int]:
        """The record as a JSON-ready dict.

        Returns
        -------
        dict
            Field name -> integer.
        """
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, values: Any) -> PosteriorPredictiveRecord:
        """The record from its JSON dict, checked: four non-negative integers (caps and seed in range).

        Parameters
        ----------
        values : dict
            As :meth:`to_dict` writes it.

        Returns
        -------
        PosteriorPredictiveRecord

        Raises
        ------
        ValueError
            Keys other than the four fields, or values that are not counts.
        """
        names = [item.name for item in dataclasses.fields(cls)]
        if not isinstance(values, dict) or sorted(values) != sorted(names):
            raise ValueError(f"it should hold exactly the keys {', '.join(names)}")
        for name in names:
            value = values[name]
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**32:
                raise ValueError(f"{name} = {str(value)[:40]!r} should be a count (an integer in [0, 2**32))")
        if values["feature_replicates"] > values["max_feature_replicates"]:
            raise ValueError("feature_replicates exceeds max_feature_replicates")
        return cls(**values)


@dataclass(frozen=True)
class DataRecord:
    """What a result records of its training data.

    Parameters
    ----------
    name : str
        The data set's name (``"breast_cancer[train]"``).
    fingerprint : str
        SHA-256 of its numbers and names (:meth:`bayesclass.data.Dataset.fingerprint`).
    provenance : str
        Where the numbers come from, as prose for readers.
    origin : DataOrigin
        The same, structured: built-in source, generator arguments, split part.
    class_names, feature_names : tuple of str
        The class names (code order) and the columns of the data as given (before any coding).
    feature_kinds : tuple of str
        The kind of each column.
    category_names : Mapping[str, tuple[str, ...]]
        Level names of text columns, by column.
    target_fingerprint : str, default ""
        SHA-256 of the class names and the class codes in row order
        (:attr:`bayesclass.data.Dataset.target_fingerprint`): the same for fits on the same rows and labels
        whatever their features; "" in results written before it was recorded.
    missing : MissingRecord
        What loading the table did about blank cells: the policy and the rows dropped (attr ``data_missing``;
        files written before it have none and read as no row dropped).
    """

    name: str
    fingerprint: str
    provenance: str
    origin: DataOrigin
    class_names: tuple[str, ...]
    feature_names: tuple[str, ...]
    feature_kinds: tuple[FeatureKind, ...]
    category_names: Mapping[str, tuple[str, ...]]
    target_fingerprint: str = ""
    missing: MissingRecord = field(default_factory=MissingRecord)


@dataclass(frozen=True)
class ResultInfo:
    """Everything a result's attrs say, typed and checked (see :func:`result_info`).

    Parameters
    ----------
    model : ClassifierModel
        The family and hyperparameters it was fitted with (rebuilt and validated).
    method : str
        How: a sampler of :data:`~bayesclass.inference.engines.methods.SAMPLERS` or a point estimate kind.
    sampler_settings : Mapping[str, object]
        The sampler settings the method used (empty for a point estimate).
    sampler_backend : str or None
        The NUTS backend used (NUTS only).
    random_seed : int
        The seed of the fit.
    standardize_mode : {"none", "continuous", "all"}
        Which columns were standardised.
    standardized_features : tuple of str
        The model inputs that were standardised.
    treatment_coding : Mapping[str, tuple[str, ...]]
        Levels of each treatment-coded column (the first is the reference).
    model_feature_names : tuple of str
        The inputs the model sees (after treatment coding).
    data : DataRecord
        The training data's record.
    point_estimate_status : Mapping[str, str]
        For each point estimate kind: ``"exists"`` or why it does not.
    package_versions : Mapping[str, str]
        Versions of the packages that made the result.
    created_at : str
        ISO time of the fit (UTC).
    fit_warnings : tuple of str
        Every warning the fit raised, verbatim.
    compile_seconds, sampling_seconds : float or None
        Timings, where the method has them.
    compile_cache_hit : bool or None
        Whether the compiled sampler came from the cache (NUTS only).
    partial : bool
        Whether an interrupted sampler kept its draws (``keep_partial``).
    partial_reason : str
        Why the draws are partial ("" when not).
    method_note : str
        Why the method is the family's default for these data, where that depends on them ("" otherwise).
    posterior_predictive : PosteriorPredictiveRecord or None
        How the ``posterior_predictive`` group was drawn; None where the result has none (a point estimate, or a
        file written before the group existed).
    format_version : int
        The layout version the attrs were written in.
    """

    model: ClassifierModel
    method: str
    sampler_settings: Mapping[str, Any]
    sampler_backend: str | None
    random_seed: int
    standardize_mode: StandardizeMode
    standardized_features: tuple[str, ...]
    treatment_coding: Mapping[str, tuple[str, ...]]
    model_feature_names: tuple[str, ...]
    data: DataRecord
    point_estimate_status: Mapping[str, str]
    package_versions: Mapping[str, str]
    created_at: str
    fit_warnings: tuple[str, ...] = ()
    compile_seconds: float | None = None
    sampling_seconds: float | None = None
    compile_cache_hit: bool | None = None
    partial: bool = False
    partial_reason: str = ""
    method_note: str = ""
    posterior_predictive: PosteriorPredictiveRecord | None = None
    format_version: int = field(default=FORMAT_VERSION)

    @property
    def has_draws(self) -> bool:
        """Whether the method drew from the posterior (else the result holds one point estimate)."""
        return self.method in SAMPLERS

    @property
    def class_names(self) -> tuple[str, ...]:
        """The class names in code order."""
        return self.data.class_names

    @property
    def feature_names(self) -> tuple[str, ...]:
        """The columns of the training data as given."""
        return self.data.feature_names

    @property
    def prior_scale(self) -> str:
        """The scale the family's priors are stated on for this fit, in words (reports show it with the priors)."""
        if self.standardize_mode == "none":
            return "priors in the data's units (fitted with standardize=False / --no-standardize: no input was scaled)"
        scaled = ", ".join(self.standardized_features) or "none"
        kept = "categorical and count" if self.standardize_mode == "all" else "binary, categorical and count"
        return f"priors on standardised inputs (centred, divided by the training sd: {scaled}; {kept} columns as coded)"

    @property
    def mle_status(self) -> str:
        """``"exists"``, why the MLE does not exist, or ``"not computed"``."""
        return self.point_estimate_status.get("mle", "not computed")

    @property
    def timings(self) -> dict[str, float]:
        """The timings the method recorded, by attr name (seconds)."""
        values = {"compile_seconds": self.compile_seconds, "sampling_seconds": self.sampling_seconds}
        return {name: value for name, value in values.items() if value is not None}

    def to_attrs(self) -> dict[str, Any]:
        """The root attrs of a result (netCDF-friendly: strings, numbers, JSON text).

        Returns
        -------
        dict
            Attr name -> value, in the current format.
        """
        data = self.data
        attrs: dict[str, Any] = {
            "bayesclass_format": FORMAT_VERSION,
            "model": self.model.name,
            "model_hyperparameters": self.model.to_json(),
            "method": self.method,
            "sampler_settings": json.dumps(dict(self.sampler_settings)),
            "random_seed": int(self.random_seed),
            "standardize": int(self.standardize_mode != "none"),
            "standardize_mode": self.standardize_mode,
            "standardized_features": json.dumps(list(self.standardized_features)),
            "treatment_coding": json.dumps({name: list(levels) for name, levels in self.treatment_coding.items()}),
            "model_feature_names": json.dumps(list(self.model_feature_names)),
            "data_name": data.name,
            "data_fingerprint": data.fingerprint,
            "data_target_fingerprint": data.target_fingerprint,
            "data_provenance": data.provenance,
            "data_origin": json.dumps(data.origin.to_dict()),
            "class_names": json.dumps(list(data.class_names)),
            "feature_names": json.dumps(list(data.feature_names)),
            "feature_kinds": json.dumps(list(data.feature_kinds)),
            "category_names": json.dumps({name: list(levels) for name, levels in data.category_names.items()}),
            "data_missing": json.dumps(data.missing.to_dict()),
            "point_estimate_status": json.dumps(dict(self.point_estimate_status)),
            "mle_status": self.mle_status,
            "package_versions": json.dumps(dict(self.package_versions)),
            "created_at": self.created_at,
            "fit_warnings": json.dumps(list(self.fit_warnings)),
            "partial": int(self.partial),
        }
        if self.sampler_backend is not None:
            attrs["sampler_backend"] = self.sampler_backend
        attrs.update(self.timings)
        if self.compile_cache_hit is not None:
            attrs["compile_cache_hit"] = int(self.compile_cache_hit)
        if self.partial:
            attrs["partial_reason"] = self.partial_reason
        if self.method_note:
            attrs["method_note"] = self.method_note
        if self.posterior_predictive is not None:
            attrs["posterior_predictive"] = json.dumps(self.posterior_predictive.to_dict())
        return attrs


def result_info(result: Any) -> ResultInfo:
    """The typed record of a result's attrs, checked as untrusted input.

    Parameters
    ----------
    result : xarray.DataTree
        A result of :func:`bayesclass.fit` (in memory or read from a file).

    Returns
    -------
    ResultInfo

    Raises
    ------
    TypeError
        ``result`` is not a DataTree.
    ValueError
        One line naming the attr that is missing, malformed or out of range, or a format this version
        does not read; or ``result`` is a stack (:func:`stack_info` reads those).
    """
    if not isinstance(result, xr.DataTree):
        raise TypeError(f"result must be a result DataTree (bayesclass.fit), got {type(result).__name__}")
    if is_stack(result):  # checked here so that every reader of one fit says what a stack is and what takes it
        raise ValueError(
            "the result is a stack of fitted results (bayesclass stack), not one fit: diagnose, check and loo apply "
            "to its members' own result files; predict and report take the stack"
        )
    return _parse(cast("dict[str, Any]", dict(result.attrs)))  # a result's attrs are keyed by name


def write_info(result: Any, info: ResultInfo) -> None:
    """Write ``info`` as the root attrs of ``result`` (replacing them all), in the current format.

    Parameters
    ----------
    result : xarray.DataTree
        The result to label.
    info : ResultInfo
        What to record.
    """
    result.attrs.clear()
    result.attrs.update(info.to_attrs())
    result.attrs["parameters_digest"] = parameters_digest(result)
    if POSTERIOR_PREDICTIVE_GROUP in result.children:
        result.attrs["posterior_predictive_digest"] = posterior_predictive_digest(result)


def model_of(result: Any) -> ClassifierModel:
    """The model a result was fitted with, rebuilt from its attrs.

    Parameters
    ----------
    result : xarray.DataTree
        A result of :func:`bayesclass.fit`.

    Returns
    -------
    ClassifierModel
    """
    return result_info(result).model


def check_result(result: Any) -> ResultInfo:
    """Check a whole result read from a file: its attrs (:func:`result_info`) and the groups they imply.

    A stack is checked by :func:`check_stack`; its first member's records are returned (the shared columns and
    classes).

    Parameters
    ----------
    result : xarray.DataTree
        The result to check.

    Returns
    -------
    ResultInfo
        Its parsed attrs.

    Raises
    ------
    ValueError
        One line naming what is wrong.
    """
    if is_stack(result):
        check_stack(result)
        return result_info(data_result(result))
    info = result_info(result)
    needed = ["observed_data", "constant_data"]
    needed += ["posterior"] if info.has_draws else [f"point_estimate_{info.method}"]
    absent = [group for group in needed if group not in result.children]
    if absent:
        raise ValueError(f"group(s) {', '.join(absent)} are missing for method {info.method!r}")
    constant = result["constant_data"]
    for variable in ("X", "feature_center", "feature_scale"):
        if variable not in constant:
            raise ValueError(f"constant_data has no {variable}")
    if constant["X"].ndim != 2 or constant["X"].shape[1] != len(info.feature_names):
        raise ValueError("constant_data X has another number of columns than attr feature_names")
    scale = constant["feature_scale"].values
    if scale.shape != (len(info.model_feature_names),) or constant["feature_center"].shape != scale.shape:
        raise ValueError("constant_data feature_center/feature_scale do not have one value per model input")
    if not (np.isfinite(scale).all() and (scale > 0).all() and np.isfinite(constant["feature_center"].values).all()):
        raise ValueError("constant_data feature_scale must be positive and finite, feature_center finite")
    _check_training_arrays(result, info)
    for group in parameter_groups(result):
        if group.startswith(COVARIANCE_GROUP_PREFIX):  # checked against its point estimate
            gaussian_approximation(result, group.removeprefix(COVARIANCE_GROUP_PREFIX))
        else:
            _check_parameters(result, group, info)
    digest = str(result.attrs.get("parameters_digest", ""))
    if digest and digest != parameters_digest(result):
        raise ValueError(
            "the parameter arrays do not match their SHA-256 (attr parameters_digest): the file was edited or damaged "
            "after the fit; refit the model"
        )
    _check_posterior_predictive(result, info)
    return info


def gaussian_approximation(result: Any, kind: str) -> GaussianApproximation | None:
    """The stored normal approximation of the point estimate ``kind`` (its covariance), checked; None if none.

    Results written before covariances were stored, and estimates whose family states no curvature, have
    none.

    Parameters
    ----------
    result : xarray.DataTree
        A fitted result.
    kind : str
        A point estimate kind (``"mle"``, ``"map"`` ...).

    Returns
    -------
    GaussianApproximation or None
        The approximation over the estimate's parameters (in the model's inputs, standardised where the fit
        standardised), or None.

    Raises
    ------
    ValueError
        A covariance group without its point estimate, or one that does not fit it (shape, labels, symmetry,
        finite non-negative variances).
    """
    group = f"{COVARIANCE_GROUP_PREFIX}{kind}"
    if group not in result.children:
        return None
    if f"point_estimate_{kind}" not in result.children:
        raise ValueError(f"group {group} has no point_estimate_{kind} beside it")
    try:
        return GaussianApproximation.from_dataset(
            result[group].to_dataset(), result[f"point_estimate_{kind}"].to_dataset()
        )
    except ValueError as error:
        raise ValueError(f"group {group}: {error}") from None


# -- parsing -------------------------------------------------------------------------------------------------------


def parameter_groups(result: Any) -> tuple[str, ...]:
    """The groups of ``result`` that hold parameters: ``posterior``, every ``point_estimate_<kind>`` and its covariance.

    Parameters
    ----------
    result : xarray.DataTree
        A result of :func:`bayesclass.fit`.

    Returns
    -------
    tuple of str
        The group names, ``posterior`` first, then the point estimates and the covariances, each sorted.
    """
    names = sorted(name for name in result.children if name.startswith("point_estimate_"))
    covariances = sorted(name for name in result.children if name.startswith(COVARIANCE_GROUP_PREFIX))
    return (*(["posterior"] if "posterior" in result.children else []), *names, *covariances)


def parameters_digest(result: Any) -> str:
    """SHA-256 of every parameter array of ``result`` (names, dims and float64 values), written as an attr by the fit.

    Parameters
    ----------
    result : xarray.DataTree
        A result of :func:`bayesclass.fit`.

    Returns
    -------
    str
        64 hex digits.
    """
    digest = hashlib.sha256()
    for group in parameter_groups(result):
        dataset = result[group].to_dataset()
        for name in sorted(dataset.data_vars):
            variable = dataset[name]
            digest.update(json.dumps([group, str(name), list(map(str, variable.dims)), list(variable.shape)]).encode())
            digest.update(np.ascontiguousarray(variable.values, dtype="<f8").tobytes())
    return digest.hexdigest()


def posterior_predictive_digest(result: Any) -> str:
    """SHA-256 of the ``posterior_predictive`` group (names, dims, coordinates, values): an attr the fit writes.

    Parameters
    ----------
    result : xarray.DataTree
        A result with the group.

    Returns
    -------
    str
        64 hex digits.
    """
    digest = hashlib.sha256()
    dataset = result[POSTERIOR_PREDICTIVE_GROUP].to_dataset()
    for name in sorted(map(str, dataset.variables)):
        variable = dataset[name]
        kind = "<i8" if np.issubdtype(variable.dtype, np.integer) else "<f8"
        digest.update(json.dumps([name, list(map(str, variable.dims)), list(variable.shape), kind]).encode())
        if variable.dtype.kind in "iufb":
            digest.update(np.ascontiguousarray(variable.values, dtype=kind).tobytes())
        else:  # coordinate names
            digest.update(json.dumps([str(value) for value in variable.values.ravel()]).encode())
    return digest.hexdigest()


def _posterior_predictive_record(attrs: dict[str, Any]) -> PosteriorPredictiveRecord | None:
    if "posterior_predictive" not in attrs:
        return None
    try:
        return PosteriorPredictiveRecord.from_dict(_json(attrs, "posterior_predictive", dict, None))
    except ValueError as error:
        raise ValueError(f"attr posterior_predictive: {error}") from None


def _check_posterior_predictive(result: Any, info: ResultInfo) -> None:
    """The ``posterior_predictive`` group fits the result: one label per draw and row, features as recorded."""
    record = info.posterior_predictive
    present = POSTERIOR_PREDICTIVE_GROUP in result.children
    if record is None and not present:  # a point estimate, or a file written before the group existed
        return
    if record is None:
        raise ValueError(
            "group posterior_predictive has no attr posterior_predictive (its seed and caps) beside it: a fit writes "
            "both, so the file was edited; refit the model or delete the group"
        )
    if not present:
        raise ValueError("attr posterior_predictive records a group posterior_predictive that is missing; refit")
    group = result[POSTERIOR_PREDICTIVE_GROUP].to_dataset()
    allowed = {"y", "X"} if record.feature_replicates else {"y"}
    unknown = sorted(set(map(str, group.data_vars)) ^ allowed)
    if unknown:
        raise ValueError(
            f"group posterior_predictive should hold {' and '.join(sorted(allowed))} (attr posterior_predictive "
            f"records {record.feature_replicates} feature replicates); {', '.join(unknown)} differs"
        )
    posterior = result["posterior"].to_dataset()
    n_obs, n_classes = result["observed_data"]["y"].size, len(info.class_names)
    expected = {"chain": posterior.sizes["chain"], "draw": posterior.sizes["draw"], "obs": n_obs}
    labels = group["y"]
    if dict(zip(labels.dims, labels.shape, strict=True)) != expected or labels.dims != tuple(expected):
        raise ValueError(
            f"group posterior_predictive y has sizes {dict(labels.sizes)}; it needs {expected} (one replicated label "
            "per posterior draw and training row)"
        )
    values = labels.values
    if not np.issubdtype(values.dtype, np.integer) or values.min(initial=0) < 0 or values.max(initial=0) >= n_classes:
        raise ValueError(
            f"group posterior_predictive y must hold class codes 0..{n_classes - 1} (attr class_names), like "
            f"observed_data y; it holds {_value_range(values)}"
        )
    if record.feature_replicates:
        features = group["X"]
        shape = {"replicate": record.feature_replicates, "obs": n_obs, "model_feature": len(info.model_feature_names)}
        if features.dims != tuple(shape) or dict(features.sizes) != shape:
            raise ValueError(f"group posterior_predictive X has sizes {dict(features.sizes)}; it needs {shape}")
        if not np.issubdtype(features.dtype, np.number) or not np.isfinite(features.values).all():
            raise ValueError("group posterior_predictive X holds values that are not finite numbers; refit the model")
    if str(result.attrs.get("posterior_predictive_digest", "")) != posterior_predictive_digest(result):
        raise ValueError(
            "group posterior_predictive does not match its SHA-256 (attr posterior_predictive_digest): the file was "
            "edited or damaged after the fit; refit the model"
        )


def _value_range(values: np.ndarray) -> str:
    """The dtype and range of an array's values, for a one-line message."""
    if not np.issubdtype(values.dtype, np.number):
        return f"dtype {values.dtype}"
    finite = values[np.isfinite(values)]
    span = f" from {finite.min()} to {finite.max()}" if finite.size else ""
    return f"dtype {values.dtype}{span}" + (", NaN among them" if np.isnan(values.astype(float)).any() else "")


def _check_training_arrays(result: Any, info: ResultInfo) -> None:
    """The training rows (constant_data X, observed_data y) agree with the attrs, their fingerprint and scaling."""
    X = result["constant_data"]["X"].values
    if "y" not in result["observed_data"]:
        raise ValueError("observed_data has no y")
    y = result["observed_data"]["y"].values
    if y.shape != (X.shape[0],) or not np.isfinite(X).all():
        raise ValueError("constant_data X must be finite, with one observed_data y per row")
    if np.abs(X).max(initial=0.0) > MAX_FEATURE_MAGNITUDE:
        raise ValueError(
            f"constant_data X holds values beyond {MAX_FEATURE_MAGNITUDE:g} in magnitude; no fit takes them"
        )
    if not np.issubdtype(y.dtype, np.integer) or y.min(initial=0) < 0 or y.max(initial=0) >= len(info.class_names):
        raise ValueError(f"observed_data y must hold class codes 0..{len(info.class_names) - 1} (attr class_names)")
    fingerprint = hashlib.sha256()
    fingerprint.update(np.ascontiguousarray(X, dtype="<f8").tobytes())
    fingerprint.update(np.ascontiguousarray(y, dtype="<i8").tobytes())
    fingerprint.update(json.dumps([list(info.feature_names), list(info.class_names)]).encode())
    if info.data.fingerprint and fingerprint.hexdigest() != info.data.fingerprint:
        raise ValueError(
            "the training rows (constant_data X, observed_data y) or the names do not match attr data_fingerprint: "
            "the file was edited or damaged after the fit; refit the model"
        )
    coded = treatment_code(X, info.feature_names, dict(info.treatment_coding))[0] if info.treatment_coding else X
    if coded.shape[1] != len(info.model_feature_names):
        raise ValueError("attr model_feature_names does not match the coded columns of constant_data X")
    scaled = np.isin(np.array(info.model_feature_names), np.array(info.standardized_features, dtype=object))
    center = np.where(scaled, coded.mean(axis=0), 0.0)
    spread = np.where(scaled, coded.std(axis=0), 1.0)
    constant = result["constant_data"]
    if not (
        np.allclose(constant["feature_center"].values, center, rtol=1e-9, atol=1e-12)
        and np.allclose(constant["feature_scale"].values, spread, rtol=1e-9, atol=1e-12)
    ):
        raise ValueError(
            "constant_data feature_center/feature_scale are not the mean/std of the training columns attr "
            "standardized_features names (0 and 1 for the others): the file was edited; refit the model"
        )


def _check_parameters(result: Any, group: str, info: ResultInfo) -> None:
    """One parameter group: finite numbers, class and feature coordinates as the attrs say, draws as recorded."""
    dataset = result[group].to_dataset()
    if not dataset.data_vars:
        raise ValueError(f"group {group} holds no parameters")
    for name, variable in dataset.data_vars.items():
        if not np.issubdtype(variable.dtype, np.number) or not np.isfinite(variable.values).all():
            raise ValueError(
                f"group {group} variable {name} holds values that are not finite numbers; a fit never writes them "
                "(the file was edited or damaged): refit the model"
            )
    expected = {"class": info.class_names, "feature": info.model_feature_names}
    for dim, names in expected.items():
        if dim in dataset.dims and [str(value) for value in dataset[dim].values] != list(names):
            raise ValueError(f"group {group} has {dim} coordinates other than the attrs' {list(names)[:10]}")
    if group != "posterior":
        return
    if any(variable.dims[:2] != ("chain", "draw") for variable in dataset.data_vars.values()):
        raise ValueError("group posterior has variables without the leading dims (chain, draw)")
    settings = info.sampler_settings
    chains, draws = dataset.sizes["chain"], dataset.sizes["draw"]
    # a sampler may keep fewer draws than it ran (thinning) or stop early (partial), never more
    if settings.get("chains", chains) != chains or draws > settings.get("draws", draws):
        raise ValueError(
            f"group posterior has {chains} chains of {draws} draws, but attr sampler_settings records "
            f"{settings.get('chains')} of {settings.get('draws')}"
        )


def _parse(attrs: dict[str, Any]) -> ResultInfo:
    version = attrs.get("bayesclass_format", 0)  # results written before the version attr are format 0
    if isinstance(version, bool) or not isinstance(version, (int, np.integer)):
        raise ValueError(f"attr bayesclass_format should be an integer, got {str(version)[:40]!r}")
    version = int(version)
    if version > FORMAT_VERSION:
        raise ValueError(f"result format {version} is newer than this bayesclass reads ({FORMAT_VERSION}); upgrade it")
    if version not in READABLE_FORMATS:
        raise ValueError(f"result format {version} is not one this bayesclass reads ({READABLE_FORMATS})")
    missing = [
        name
        for name in ("model", "method", "model_hyperparameters", "class_names", "feature_names", "feature_kinds")
        if name not in attrs
    ]
    if missing:
        raise ValueError(f"attrs {', '.join(missing)} are missing: not written by bayesclass fit")
    method = _text(attrs, "method")
    if method not in method_names():
        raise ValueError(f"attr method {method!r} is not one of {', '.join(method_names())}")
    model = _model(attrs)
    data = _data_record(attrs, version)
    model_features = _names(attrs, "model_feature_names", default=None)
    coding = {name: tuple(levels) for name, levels in _json(attrs, "treatment_coding", dict, {}).items()}
    if not all(isinstance(level, str) for levels in coding.values() for level in levels):
        raise ValueError("attr treatment_coding must map columns to lists of level names")
    _printable("treatment_coding", [*coding, *(level for levels in coding.values() for level in levels)])
    mode = attrs.get("standardize_mode", "continuous" if _flag(attrs, "standardize") else "none")
    if mode not in get_args(StandardizeMode):
        raise ValueError(f"attr standardize_mode must be one of {', '.join(get_args(StandardizeMode))}, got {mode!r}")
    status = _json(attrs, "point_estimate_status", dict, {})
    if not all(isinstance(key, str) and isinstance(value, str) for key, value in status.items()):
        raise ValueError("attr point_estimate_status must map estimate kinds to text")
    if "mle_status" in attrs and "mle" not in status and attrs["mle_status"] != "not computed":
        status["mle"] = _text(attrs, "mle_status")  # format 0 kept the MLE's status alone
    versions = _json(attrs, "package_versions", dict, {})
    if not all(isinstance(key, str) and isinstance(value, str) for key, value in versions.items()):
        raise ValueError("attr package_versions must map package names to version text")
    warnings_ = _json(attrs, "fit_warnings", list, [])
    if not all(isinstance(item, str) for item in warnings_):
        raise ValueError("attr fit_warnings must list text")
    partial = _flag(attrs, "partial")
    backend = attrs.get("sampler_backend")
    if backend is not None and backend not in BACKENDS:
        raise ValueError(f"attr sampler_backend must be one of {', '.join(BACKENDS)}, got {str(backend)[:40]!r}")
    cache_hit = _flag(attrs, "compile_cache_hit") if "compile_cache_hit" in attrs else None
    method_note = _text(attrs, "method_note", default="")
    _printable("method_note", [method_note])
    _digest(attrs, "parameters_digest")
    info = ResultInfo(
        model=model,
        method=method,
        sampler_settings=MappingProxyType(_sampler_settings(attrs)),
        sampler_backend=backend,
        random_seed=_seed(attrs),
        standardize_mode=mode,
        standardized_features=_names(attrs, "standardized_features", default=()),
        treatment_coding=MappingProxyType(coding),
        model_feature_names=data.feature_names if model_features is None else model_features,
        data=data,
        point_estimate_status=MappingProxyType(status),
        package_versions=MappingProxyType(versions),
        created_at=_text(attrs, "created_at", default=""),
        fit_warnings=tuple(warnings_),
        compile_seconds=_seconds(attrs, "compile_seconds"),
        sampling_seconds=_seconds(attrs, "sampling_seconds"),
        compile_cache_hit=cache_hit,
        partial=partial,
        partial_reason=_text(attrs, "partial_reason", default="the run was interrupted") if partial else "",
        method_note=method_note,
        posterior_predictive=_posterior_predictive_record(attrs),
        format_version=version,
    )
    _check_consistency(info)
    return info


def _check_consistency(info: ResultInfo) -> None:
    """The attrs agree with one another: unique names, keys that name columns, known estimate kinds, a time."""
    data = info.data
    for name, values in (
        ("class_names", data.class_names),
        ("feature_names", data.feature_names),
        ("model_feature_names", info.model_feature_names),
    ):
        if len(set(values)) != len(values) or not all(values):
            raise ValueError(f"attr {name} must list distinct non-empty names")
    coded = {
        name
        for name, kind in zip(data.feature_names, data.feature_kinds, strict=True)
        if kind in ("binary", "categorical")
    }
    for name, columns in (("category_names", data.category_names), ("treatment_coding", info.treatment_coding)):
        unknown = sorted(set(columns) - coded)
        if unknown:
            raise ValueError(f"attr {name} names {unknown[:5]}, which are not binary or categorical feature_names")
    if not set(info.standardized_features) <= set(info.model_feature_names):
        raise ValueError("attr standardized_features names columns that are not in model_feature_names")
    kinds = sorted(set(info.point_estimate_status) - set(POINT_ESTIMATE_KINDS))
    if kinds:
        raise ValueError(
            f"attr point_estimate_status has unknown estimate kinds {kinds}; kinds are {POINT_ESTIMATE_KINDS}"
        )
    if info.posterior_predictive is not None and not info.has_draws:
        raise ValueError(
            f"attr posterior_predictive is set, but method {info.method!r} draws nothing to replicate the data from"
        )
    if info.partial and not info.has_draws:
        raise ValueError(f"attr partial = 1, but method {info.method!r} draws nothing that an interrupt could cut")
    if info.created_at:
        try:
            datetime.datetime.fromisoformat(info.created_at)
        except ValueError:
            raise ValueError(f"attr created_at = {info.created_at[:40]!r} is not an ISO 8601 time") from None


def _model(attrs: dict[str, Any]) -> ClassifierModel:
    values = _json(attrs, "model_hyperparameters", dict, None)
    try:
        model = model_from_dict(values)
    except (ValueError, TypeError, KeyError) as error:
        raise ValueError(f"attr model_hyperparameters does not describe a valid model ({error})") from None
    if model.name != attrs["model"]:
        raise ValueError(
            f"attr model {str(attrs['model'])[:40]!r} disagrees with model_hyperparameters ({model.name!r})"
        )
    return model


def _data_record(attrs: dict[str, Any], version: int) -> DataRecord:
    feature_names = _names(attrs, "feature_names")
    kinds = _names(attrs, "feature_kinds")
    if len(kinds) != len(feature_names):
        raise ValueError("attrs feature_names and feature_kinds differ in length")
    unknown = sorted(set(kinds) - set(FEATURE_KINDS))
    if unknown:
        raise ValueError(f"attr feature_kinds holds unknown kinds {unknown}; kinds are {', '.join(FEATURE_KINDS)}")
    categories = _json(attrs, "category_names", dict, {})
    if not all(
        isinstance(levels, list) and all(isinstance(level, str) for level in levels) for levels in categories.values()
    ):
        raise ValueError("attr category_names must map columns to lists of level names")
    _printable("category_names", [*categories, *(level for levels in categories.values() for level in levels)])
    name = _text(attrs, "data_name", default="")
    provenance = _text(attrs, "data_provenance", default="")
    if version >= 2:
        try:
            origin = DataOrigin.from_dict(_json(attrs, "data_origin", dict, None))
        except ValueError as error:
            raise ValueError(f"attr data_origin: {error}") from None
    else:
        origin = _legacy_origin(name, provenance)
    try:
        missing = MissingRecord.from_dict(_json(attrs, "data_missing", dict, MissingRecord().to_dict()))
    except ValueError as error:
        raise ValueError(f"attr data_missing: {error}") from None
    return DataRecord(
        name=name,
        fingerprint=_text(attrs, "data_fingerprint", default=""),
        provenance=provenance,
        origin=origin,
        class_names=_names(attrs, "class_names"),
        feature_names=feature_names,
        feature_kinds=cast("tuple[FeatureKind, ...]", kinds),  # checked against FEATURE_KINDS above
        category_names=MappingProxyType({column: tuple(levels) for column, levels in categories.items()}),
        target_fingerprint=_digest(attrs, "data_target_fingerprint"),
        missing=missing,
    )


def _sampler_settings(attrs: dict[str, Any]) -> dict[str, Any]:
    settings = _json(attrs, "sampler_settings", dict, {})
    known = {item.name for item in dataclasses.fields(SamplerSettings)}
    unknown = sorted(set(settings) - known)
    if unknown:
        raise ValueError(
            f"attr sampler_settings has unknown settings {unknown}; settings are {', '.join(sorted(known))}"
        )
    for key in ("draws", "tune", "chains"):  # counts beyond any real run are a tampered file
        value = settings.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 10**9):
            raise ValueError(f"attr sampler_settings has {key} = {value!r}; expected a count")
    try:
        SamplerSettings(**{key: value for key, value in settings.items() if key != "backend" or value != "auto"})
    except (ValueError, TypeError) as error:
        raise ValueError(f"attr sampler_settings: {error}") from None
    return settings


def _json(attrs: dict[str, Any], name: str, kind: type, default: Any) -> Any:
    if name not in attrs:
        if default is None:
            raise ValueError(f"attr {name} is missing")
        return default
    text = attrs[name]
    if not isinstance(text, str) or len(text) > MAX_TEXT:
        raise ValueError(f"attr {name} should be JSON text, got {type(text).__name__}")
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"attr {name} is not valid JSON ({error})") from None
    if not isinstance(value, kind):
        raise ValueError(f"attr {name} should hold a JSON {kind.__name__}, got {type(value).__name__}")
    return value


def _names(attrs: dict[str, Any], name: str, *, default: tuple[str, ...] | None = ()) -> Any:
    if name not in attrs:
        return default
    values = _json(attrs, name, list, [])
    if not all(isinstance(item, str) for item in values):
        raise ValueError(f"attr {name} must list strings")
    _printable(name, values)
    return tuple(values)


def _printable(name: str, values: Any) -> None:
    """Refuse names holding a control character (a fit never writes one: the file was edited)."""
    for value in values:
        char = control_character(value)
        if char is not None:
            raise ValueError(
                f"attr {name} holds {value!r}, with the control character {char!r}; a fit never writes one "
                "(the file was edited): refit the model"
            )


def _text(attrs: dict[str, Any], name: str, *, default: str | None = None) -> str:
    value = attrs.get(name, default)
    if value is None:
        raise ValueError(f"attr {name} is missing")
    if not isinstance(value, str) or len(value) > MAX_TEXT:
        raise ValueError(f"attr {name} should be text, got {str(value)[:40]!r}")
    return value


def _digest(attrs: dict[str, Any], name: str) -> str:
    """A SHA-256 hex digest attr, or "" where a result written before it was recorded has none."""
    value = _text(attrs, name, default="")
    if value and not re.fullmatch(r"[0-9a-f]{64}", value):
        raise ValueError(f"attr {name} should be a SHA-256 hex digest (64 hex digits), got {value[:40]!r}")
    return value


def _flag(attrs: dict[str, Any], name: str) -> bool:
    value = attrs.get(name, 0)
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value not in (0, 1):
        raise ValueError(f"attr {name} = {str(value)[:40]!r} should be 0 or 1")
    return bool(value)


def _seed(attrs: dict[str, Any]) -> int:
    seed = attrs.get("random_seed", 0)
    if (
        isinstance(seed, bool)
        or not isinstance(seed, (int, float, np.integer, np.floating))
        or not math.isfinite(float(seed))
        or not float(seed).is_integer()
        or not 0 <= int(seed) <= MAX_SEED
    ):
        raise ValueError(f"attr random_seed = {str(seed)[:40]!r} is not a seed (an integer in [0, 2**32))")
    return int(seed)


def _seconds(attrs: dict[str, Any], name: str) -> float | None:
    if name not in attrs:
        return None
    value = attrs[name]
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"attr {name} should be a number of seconds, got {str(value)[:40]!r}") from None
    if not 0 <= value < 1e9:
        raise ValueError(f"attr {name} = {value!r} is not a plausible duration in seconds")
    return value


# -- formats 0 and 1: the origin from the provenance text they wrote -----------------------------------------------

_LEGACY_SPLIT = re.compile(
    r"(train|validation|test) part \((\d+) of (\d+) rows\) of train_validation_test_split\(fractions=(\([^)]*\)), "
    r"random_seed=(\d+), stratify=(True|False)\)"
)
_LEGACY_GENERATED = re.compile(r"generated by data\.(\w+)\(([^)]*)\)")


def _legacy_origin(name: str, provenance: str) -> DataOrigin:
    """The structured origin of a format 0/1 result, read from the prose its data split and generators wrote."""
    base = re.sub(r"\[(train|validation|test)\]$", "", name)
    arguments: tuple[tuple[str, Any], ...] = ()
    generated = _LEGACY_GENERATED.search(provenance)
    if generated:
        try:
            call = ast.parse(f"f({generated.group(2)})", mode="eval").body
            keywords = {keyword.arg: ast.literal_eval(keyword.value) for keyword in call.keywords}  # type: ignore[attr-defined]
            arguments = tuple(sorted((str(key), value) for key, value in keywords.items()))
        except (SyntaxError, ValueError):
            return DataOrigin()
    split = _LEGACY_SPLIT.search(provenance)
    split_origin = None
    if split:
        try:
            split_origin = SplitOrigin.from_dict(
                {
                    "part": split.group(1),
                    "fractions": list(ast.literal_eval(split.group(4))),
                    "random_seed": int(split.group(5)),
                    "stratify": split.group(6) == "True",
                }
            )
        except (SyntaxError, ValueError, TypeError):
            split_origin = None
    return DataOrigin(source=base, arguments=arguments, split=split_origin)


# -- stacks: one result made of fitted members and their weights -----------------------------------------------------

#: how a stack's weights were computed: LOO stacking (Yao et al. 2018) or pseudo-BMA+ (Bayesian-bootstrap pseudo-BMA)
STACK_METHODS = ("stacking", "pseudo_bma_plus")
#: the group of a stack holding its weights (variable ``weight``, dim ``member``)
STACK_WEIGHTS_GROUP = "stack_weights"
#: the most members a stack holds (a tampered file cannot ask for thousands)
MAX_STACK_MEMBERS = 64


@dataclass(frozen=True)
class StackInfo:
    """What a stack's attrs and weights say, typed and checked (see :func:`stack_info`).

    Parameters
    ----------
    method : {"stacking", "pseudo_bma_plus"}
        How the weights were computed.
    labels : tuple of str
        The members' labels, in the order of ``weights`` and of the groups ``member_0``, ``member_1`` ...
    weights : tuple of float
        One weight per member, in [0, 1], summing to 1.
    elpd_loo, elpd_se : tuple of float
        Each member's PSIS-LOO elpd and its standard error, from which the weights were computed.
    created_at : str
        ISO time the stack was made (UTC).
    """

    method: str
    labels: tuple[str, ...]
    weights: tuple[float, ...]
    elpd_loo: tuple[float, ...]
    elpd_se: tuple[float, ...]
    created_at: str = ""

    def to_attrs(self) -> dict[str, Any]:
        """The root attrs of a stack (the weights live in group ``stack_weights``).

        Returns
        -------
        dict
            Attr name -> value.
        """
        return {
            "bayesclass_format": FORMAT_VERSION,
            "bayesclass_stack": 1,
            "stack_method": self.method,
            "stack_members": json.dumps(list(self.labels)),
            "created_at": self.created_at,
        }


def is_stack(result: Any) -> bool:
    """Whether ``result`` is a stack (attr ``bayesclass_stack`` = 1) rather than one fitted result.

    Parameters
    ----------
    result : xarray.DataTree
        A result or a stack.

    Returns
    -------
    bool
    """
    return isinstance(result, xr.DataTree) and "bayesclass_stack" in result.attrs


def stack_members(result: Any) -> dict[str, Any]:
    """The members of a stack by label, each a standalone result DataTree (group ``member_<i>``).

    Parameters
    ----------
    result : xarray.DataTree
        A stack.

    Returns
    -------
    dict of str to xarray.DataTree
    """
    info = stack_info(result)
    return {label: result[f"member_{index}"].copy() for index, label in enumerate(info.labels)}


def data_result(result: Any) -> Any:
    """The result whose records describe ``result``'s training data: itself, or a stack's first member.

    A stack's members share their classes, columns and training rows (:func:`check_stack`).

    Parameters
    ----------
    result : xarray.DataTree
        A result or a stack.

    Returns
    -------
    xarray.DataTree
    """
    return result["member_0"].copy() if is_stack(result) else result


def stack_digest(info: StackInfo, members: Mapping[str, Any]) -> str:
    """SHA-256 of a stack's method, labels, weights and every member's parameter digest (attr ``stack_digest``).

    Parameters
    ----------
    info : StackInfo
        The stack's records.
    members : mapping of str to xarray.DataTree
        Its members by label.

    Returns
    -------
    str
        64 hex digits.
    """
    digest = hashlib.sha256()
    digest.update(json.dumps([info.method, list(info.labels)]).encode())
    digest.update(np.asarray(info.weights, dtype="<f8").tobytes())
    digest.update(np.asarray(info.elpd_loo, dtype="<f8").tobytes())
    digest.update(np.asarray(info.elpd_se, dtype="<f8").tobytes())
    for member in members.values():
        digest.update(parameters_digest(member).encode())
    return digest.hexdigest()


def write_stack_info(result: Any, info: StackInfo) -> None:
    """Write ``info`` as the root attrs of the stack ``result`` (replacing them all), with its digest.

    Parameters
    ----------
    result : xarray.DataTree
        The stack, its member groups already in place.
    info : StackInfo
        What to record.
    """
    result.attrs.clear()
    result.attrs.update(info.to_attrs())
    members = {label: result[f"member_{index}"] for index, label in enumerate(info.labels)}
    result.attrs["stack_digest"] = stack_digest(info, members)


def stack_info(result: Any) -> StackInfo:
    """The typed record of a stack's attrs and weights, checked as untrusted input.

    Parameters
    ----------
    result : xarray.DataTree
        A stack (:func:`bayesclass.inference.stacking.stack`).

    Returns
    -------
    StackInfo

    Raises
    ------
    ValueError
        One line naming the attr, group or weight that is missing, malformed or out of range.
    """
    if not is_stack(result):
        raise ValueError("not a stack (no attr bayesclass_stack); make one with bayesclass stack")
    attrs = cast("dict[str, Any]", dict(result.attrs))
    if _flag(attrs, "bayesclass_stack") is not True:
        raise ValueError("attr bayesclass_stack must be 1")
    method = _text(attrs, "stack_method")
    if method not in STACK_METHODS:
        raise ValueError(f"attr stack_method {method[:40]!r} is not one of {', '.join(STACK_METHODS)}")
    labels = _names(attrs, "stack_members", default=None)
    if labels is None or not 2 <= len(labels) <= MAX_STACK_MEMBERS or len(set(labels)) != len(labels):
        raise ValueError(f"attr stack_members must list 2 to {MAX_STACK_MEMBERS} distinct member labels")
    groups = sorted(name for name in result.children if name.startswith("member_"))
    if groups != sorted(f"member_{index}" for index in range(len(labels))):
        raise ValueError(f"a stack of {len(labels)} members needs groups member_0 .. member_{len(labels) - 1}")
    group = result[STACK_WEIGHTS_GROUP] if STACK_WEIGHTS_GROUP in result.children else {}
    absent = [name for name in ("weight", "elpd_loo", "elpd_se") if name not in group]
    if absent:
        raise ValueError(f"group {STACK_WEIGHTS_GROUP} lacks variable(s) {', '.join(absent)}; stack the members again")
    elpd = [np.asarray(group[name].values) for name in ("elpd_loo", "elpd_se")]
    if any(values.shape != (len(labels),) or not np.issubdtype(values.dtype, np.number) for values in elpd) or not (
        np.isfinite(elpd[0]).all() and np.isfinite(elpd[1]).all() and (elpd[1] >= 0).all()
    ):
        raise ValueError(f"{STACK_WEIGHTS_GROUP} elpd_loo/elpd_se must hold one finite number per member (se >= 0)")
    weights = np.asarray(group["weight"].values)
    if weights.shape != (len(labels),) or not np.issubdtype(weights.dtype, np.number):
        raise ValueError(f"{STACK_WEIGHTS_GROUP} weight must hold one number per member ({len(labels)})")
    if not (np.isfinite(weights).all() and (weights >= 0).all() and (weights <= 1).all()):
        raise ValueError(f"{STACK_WEIGHTS_GROUP} weight holds {weights.tolist()}: every weight must be in [0, 1]")
    if abs(math.fsum(weights.tolist()) - 1.0) > 1e-6:
        raise ValueError(f"{STACK_WEIGHTS_GROUP} weight sums to {math.fsum(weights.tolist()):.6g}, not 1")
    created = _text(attrs, "created_at", default="")
    return StackInfo(
        method=method,
        labels=labels,
        weights=tuple(float(w) for w in weights),
        elpd_loo=tuple(float(value) for value in elpd[0]),
        elpd_se=tuple(float(value) for value in elpd[1]),
        created_at=created,
    )


def require_stackable(members: Mapping[str, Any]) -> None:
    """Raise unless ``members`` can be stacked: fitted results with draws, the same classes, columns and rows.

    Parameters
    ----------
    members : mapping of str to xarray.DataTree
        The results by label.

    Raises
    ------
    ValueError
        One line naming the member and what differs: a stack or a point estimate among them, other class names or
        columns (names, kinds, levels), or other labels in row order (target fingerprints).
    """
    first_label = next(iter(members))
    reference = None
    for label, member in members.items():
        if is_stack(member):
            raise ValueError(f"stack member {label!r} is itself a stack; stack the fitted results themselves")
        try:
            member_info = check_result(member)
        except ValueError as error:
            raise ValueError(f"stack member {label!r}: {error}") from None
        if not member_info.has_draws:
            raise ValueError(
                f"stack member {label!r} is a point estimate ({member_info.method}); a stack mixes posteriors (fit "
                "with method nuts, exact, gibbs or laplace)"
            )
        record = member_info.data
        key = (record.class_names, record.feature_names, record.feature_kinds, dict(record.category_names))
        target = record.target_fingerprint or record.fingerprint
        if reference is None:
            reference = (key, target)
        elif key[0] != reference[0][0]:
            raise ValueError(
                f"stack members {first_label!r} and {label!r} have other classes ({list(reference[0][0])} against "
                f"{list(key[0])}): a stack mixes predictions of the same classes"
            )
        elif key != reference[0]:
            raise ValueError(
                f"stack members {first_label!r} and {label!r} have other columns ({list(reference[0][1])[:10]} against "
                f"{list(key[1])[:10]}, or their kinds or levels): a stack mixes predictions from the same columns"
            )
        elif target != reference[1]:
            raise ValueError(
                f"stack members {first_label!r} and {label!r} were fitted on different rows or labels; a stack's "
                "members are fitted on the same training rows"
            )


def check_stack(result: Any) -> StackInfo:
    """Check a whole stack read from a file: its records, every member (:func:`check_result`) and their agreement.

    The members must hold posterior draws and have been fitted on the same training rows: the same class names,
    columns (names, kinds, levels) and labels in row order (target fingerprints); the digest over the weights and
    the members' parameters (attr ``stack_digest``) must match.

    Parameters
    ----------
    result : xarray.DataTree
        The stack.

    Returns
    -------
    StackInfo

    Raises
    ------
    ValueError
        One line naming the member or record that is wrong.
    """
    info = stack_info(result)
    members = stack_members(result)
    require_stackable(members)
    digest = _text(cast("dict[str, Any]", dict(result.attrs)), "stack_digest", default="")
    if digest != stack_digest(info, members):
        raise ValueError(
            "the stack's weights or members do not match their SHA-256 (attr stack_digest): the file was edited or "
            "damaged after stacking; stack the members again"
        )
    return info
