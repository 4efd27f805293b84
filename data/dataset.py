"""The :class:`Dataset` container shared by every model, and input checks for prediction.

A classification data set is a design matrix ``X`` (one row per observation,
one column per feature) and class codes ``y`` in ``0..K-1`` naming classes
``C_1..C_K`` (seed 001 §A; seed 000 §9, "an integer in {1, ..., K}", shifted
to start at 0).
"""

from __future__ import annotations

import hashlib
import json
import logging
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import TYPE_CHECKING

import numpy as np

from bayesclass.data._validation import column_label, first_true, numeric_2d
from bayesclass.data.arguments import spelled
from bayesclass.data.constraints import MAX_ATTR_TEXT, PrintableText, check_finite, check_magnitude
from bayesclass.data.kinds import FEATURE_KINDS, FeatureKind, check_feature_kinds
from bayesclass.data.origin import DataOrigin, MissingPolicy, MissingRecord
from bayesclass.data.table import (
    DEFAULT_MAX_LEVELS,
    CodedTable,
    TableOptions,
    TableSource,
    code_new_rows,
    code_table,
    number_text,
)

if TYPE_CHECKING:
    import pandas as pd


def _names(value: object, *, argument: str, what: str = "name") -> tuple[str, ...]:
    """Validate a sequence of unique, non-empty strings without control characters and return it as a tuple."""
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise ValueError(f"{argument} must be a sequence of strings, got {value!r}; pass e.g. a tuple of str")
    bad = [name for name in value if not isinstance(name, str) or not name]
    if bad:
        raise ValueError(f"{argument} must hold non-empty strings, got {bad[0]!r}; convert names with str()")
    names = tuple(str(name) for name in value)  # plain str, also for numpy.str_ elements
    text = PrintableText(what=what)
    for index, name in enumerate(names):
        text.check(name, argument=f"{argument}[{index}]")
    if len(set(names)) != len(names):
        duplicates = sorted({name for name in names if names.count(name) > 1})
        raise ValueError(f"{argument} must be unique, but {duplicates} repeat; rename the duplicates")
    return names


def _frozen(array: np.ndarray, dtype: type) -> np.ndarray:
    """A C-contiguous, read-only copy of ``array`` with the given dtype."""
    out: np.ndarray = np.array(array, dtype=dtype, order="C", copy=True)
    out.flags.writeable = False
    return out


def _checked_X(value: object, feature_names: tuple[str, ...]) -> np.ndarray:
    """The features as a read-only float64 (n_obs, n_features) array: non-empty, one column per name, finite."""
    X = numeric_2d(value, argument="X")
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D (n_obs, n_features), got shape {X.shape}; reshape it, e.g. X.reshape(-1, 1)")
    if X.shape[0] == 0:
        raise ValueError("X has 0 rows; a Dataset needs at least one observation")
    if X.shape[1] != len(feature_names):
        raise ValueError(
            f"X has {X.shape[1]} columns but feature_names has {len(feature_names)} names "
            f"{feature_names}; pass one name per column"
        )
    if X.shape[1] == 0:
        raise ValueError("X has 0 columns; a Dataset needs at least one feature")
    X = _frozen(X, np.float64)
    check_finite(X, argument="X", feature_names=feature_names, when="building a Dataset")
    check_magnitude(X, argument="X", feature_names=feature_names, when="building a Dataset")
    return X


def _checked_y(value: object, n_obs: int, class_names: tuple[str, ...]) -> np.ndarray:
    """The class codes as a read-only int64 (n_obs,) array, each in ``range(len(class_names))``."""
    y = np.asarray(value)
    if y.dtype.kind not in "iu":
        raise ValueError(
            f"y must hold integer class codes, got dtype {y.dtype}; map labels to codes 0..K-1 "
            "(e.g. np.unique(labels, return_inverse=True)) and pass the labels as class_names"
        )
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D (n_obs,), got shape {y.shape}; pass y.ravel() if it is a column")
    if len(y) != n_obs:
        raise ValueError(f"X has {n_obs} rows but y has {len(y)} entries; pass one class code per row of X")
    out_of_range = (y < 0) | (y >= len(class_names))
    if out_of_range.any():
        row = int(np.argmax(out_of_range))
        raise ValueError(
            f"y[{row}] = {y[row]} is not a class code in range({len(class_names)}) for class_names "
            f"{class_names}; pass codes 0..{len(class_names) - 1} or add the missing class names"
        )
    return _frozen(y, np.int64)


def _checked_truth(value: object, n_obs: int, n_classes: int) -> np.ndarray:
    """The true P(class | x) as a read-only float64 (n_obs, n_classes) array of probability rows."""
    truth = np.asarray(value, dtype=float)
    if truth.shape != (n_obs, n_classes):
        raise ValueError(
            f"true_class_proba has shape {truth.shape}; it must be ({n_obs}, {n_classes}), the true "
            "P(class | x) of every row and class"
        )
    if not np.isfinite(truth).all() or (truth < 0).any() or not np.allclose(truth.sum(axis=1), 1.0, atol=1e-9):
        raise ValueError("true_class_proba rows must be probabilities: finite, non-negative, summing to 1")
    return _frozen(truth, np.float64)


def _checked_kinds(value: object, feature_names: tuple[str, ...]) -> tuple[FeatureKind, ...]:
    """The feature kinds as a tuple, one of :data:`FEATURE_KINDS` per feature."""
    feature_kinds = value
    if isinstance(feature_kinds, Sequence) and not isinstance(feature_kinds, str):
        feature_kinds = tuple(feature_kinds)
    if not isinstance(feature_kinds, tuple) or len(feature_kinds) != len(feature_names):
        raise ValueError(f"feature_kinds must list one kind per feature ({len(feature_names)}), got {value!r}")
    unknown = [kind for kind in feature_kinds if kind not in FEATURE_KINDS]
    if unknown:
        raise ValueError(f"feature_kinds contains {unknown[0]!r}; use one of {FEATURE_KINDS}")
    return feature_kinds


@dataclass(frozen=True, eq=False)
class Dataset:
    """An immutable, validated classification data set.

    Parameters
    ----------
    name : str
        Short identifier (``"iris"``, ``"transport[train]"``).
    X : array_like, shape (n_obs, n_features)
        Features; stored as a read-only, C-contiguous ``float64`` copy. All
        values finite: missing values are never imputed silently.
    y : array_like of int, shape (n_obs,)
        Class codes ``0..K-1`` indexing ``class_names``; stored as read-only ``int64``.
        Classes with no rows are allowed (e.g. a small test split); so is a
        single class present. Models that need every class present check that.
    feature_names, class_names : sequence of str
        Unique column and class names; ``class_names`` fixes ``K``.
    feature_kinds : sequence of FeatureKind
        One per column. ``"binary"`` columns hold only 0/1; ``"categorical"``
        and ``"count"`` columns hold non-negative integers.
    description : str
        One or two sentences for reports.
    provenance : str
        Where the numbers come from: citation/URL/package, or generator,
        arguments and seed.
    category_names : Mapping[str, tuple[str, ...]]
        For binary/categorical columns read from text: level names indexed by
        code, e.g. ``{"Raining": ("no", "yes")}`` (seed 003, transport table).
    true_class_proba : numpy.ndarray of shape (n_obs, n_classes), optional
        The true P(class | x) of every row, where the data come from a known
        generator (seed001_gaussians, seed000_separable, seed004_gp); kept by
        :meth:`subset` and splits, dropped when features are dropped; not part of
        the fingerprint. Scores use it for the KL divergence to the truth.
    origin : DataOrigin
        Structured provenance: the built-in data set or generator (and its arguments) that made the rows,
        and the split part they are, so the rows can be made again (:mod:`bayesclass.data.origin`).
    missing : MissingRecord
        What loading the table did about blank cells (:meth:`from_frame` ``missing=``): the policy, the rows
        dropped and the blanks counted per used column; kept by subsets and splits.

    Raises
    ------
    ValueError
        Naming the argument, the offending value and the fix.

    Notes
    -----
    Instances are hashable by identity (``eq=False``); compare contents with
    :meth:`fingerprint`. Pickling re-runs the validation, so unpickled arrays
    stay read-only.
    """

    name: str
    X: np.ndarray
    y: np.ndarray
    feature_names: tuple[str, ...]
    class_names: tuple[str, ...]
    feature_kinds: tuple[FeatureKind, ...]
    description: str = ""
    provenance: str = ""
    category_names: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    true_class_proba: np.ndarray | None = None
    origin: DataOrigin = field(default_factory=DataOrigin)
    missing: MissingRecord = field(default_factory=MissingRecord)

    def __post_init__(self) -> None:
        def set_(attribute: str, value: object) -> None:  # frozen dataclass: store converted fields once
            object.__setattr__(self, attribute, value)

        for argument in ("name", "description", "provenance"):
            if not isinstance(getattr(self, argument), str):
                raise ValueError(f"{argument} must be a str, got {getattr(self, argument)!r}")
        if not isinstance(self.origin, DataOrigin):
            raise ValueError(f"origin must be a bayesclass.data.origin.DataOrigin, got {type(self.origin).__name__}")
        if not isinstance(self.missing, MissingRecord):
            raise ValueError(
                f"missing must be a bayesclass.data.origin.MissingRecord, got {type(self.missing).__name__}"
            )
        if not self.name:
            raise ValueError("name must be a non-empty string; pass e.g. name='my_data'")
        feature_names = _names(self.feature_names, argument="feature_names", what="feature name")
        class_names = _names(self.class_names, argument="class_names", what="class label")
        if not class_names:
            raise ValueError("class_names is empty; pass one name per class code in y")

        X = _checked_X(self.X, feature_names)
        y = _checked_y(self.y, len(X), class_names)
        if self.true_class_proba is not None:
            set_("true_class_proba", _checked_truth(self.true_class_proba, len(X), len(class_names)))
        feature_kinds = _checked_kinds(self.feature_kinds, feature_names)
        kinds = np.array(feature_kinds)
        self._check_values(X, kinds == "binary", feature_names, "binary", "0 or 1", lambda v: (v != 0) & (v != 1))
        self._check_values(
            X,
            (kinds == "categorical") | (kinds == "count"),
            feature_names,
            "categorical/count",
            "a non-negative integer",
            lambda v: (v < 0) | (v != np.round(v)),
        )

        category_names = self._checked_categories(X, feature_names, feature_kinds)
        set_("feature_names", feature_names)
        set_("class_names", class_names)
        set_("feature_kinds", feature_kinds)
        set_("X", X)
        set_("y", y)
        set_("category_names", category_names)
        self._check_stored_text()

    def _check_stored_text(self) -> None:
        """Each name attr of a result (JSON text, as the schema reads it) fits in :data:`MAX_ATTR_TEXT` characters."""
        levels = {feature: list(names) for feature, names in self.category_names.items()}
        every = [f"{feature}={level}" for feature, names in levels.items() for level in names]
        coded = [f"{feature}={level}" for feature, names in levels.items() for level in names[1:]]  # the reference out
        stored = {
            "name": (self.name, self.name),
            "provenance": (self.provenance, self.provenance),
            "feature_names": (json.dumps(list(self.feature_names)), max(self.feature_names, key=len)),
            "class_names": (json.dumps(list(self.class_names)), max(self.class_names, key=len)),
            "category_names": (json.dumps(levels), max(every or [""], key=len)),
            "feature_names and category_names (as coded names 'feature=level')": (
                json.dumps([*self.feature_names, *coded]),
                max([*self.feature_names, *coded], key=len),
            ),
        }
        for argument, (text, longest) in stored.items():
            if len(text) > MAX_ATTR_TEXT:
                raise ValueError(
                    f"as a result file stores them, {argument} take {len(text):,} characters, more than the "
                    f"{MAX_ATTR_TEXT:,} it holds (the longest, {longest[:40]!r}..., has {len(longest):,}); shorten "
                    "the names, labels or text levels (a long text column is no category: leave it out of the "
                    "features)"
                )

    @staticmethod
    def _check_values(X, columns, feature_names, kind, allowed, is_bad) -> None:
        """Raise if a column of the given kind holds a value ``is_bad`` flags."""
        if not columns.any():
            return
        indices = np.flatnonzero(columns)
        cell = first_true(is_bad(X[:, indices]))
        if cell is not None:
            row, column = cell[0], int(indices[cell[1]])
            raise ValueError(
                f"X[{row}, {column}] = {X[row, column]} in {kind} {column_label(column, feature_names)} "
                f"must be {allowed}; fix the value or declare the column with another feature kind"
            )

    def _checked_categories(self, X, feature_names, feature_kinds) -> Mapping[str, tuple[str, ...]]:
        """Validate ``category_names`` against the columns and freeze it."""
        if not isinstance(self.category_names, Mapping):
            raise ValueError(
                f"category_names must be a mapping feature name -> level names, got {self.category_names!r}"
            )
        checked = {}
        for feature, levels in self.category_names.items():
            if feature not in feature_names:
                raise ValueError(f"category_names has key {feature!r}, which is not in feature_names {feature_names}")
            column = feature_names.index(feature)
            kind = feature_kinds[column]
            if kind not in ("binary", "categorical"):
                raise ValueError(
                    f"category_names[{feature!r}] is given but the feature is {kind!r}; drop it or change the kind"
                )
            levels = _names(levels, argument=f"category_names[{feature!r}]", what="level")
            if kind == "binary" and len(levels) != 2:
                raise ValueError(f"category_names[{feature!r}] = {levels} must name exactly 2 levels (codes 0 and 1)")
            top = X[:, column].max()
            if top >= len(levels):
                raise ValueError(
                    f"column {feature!r} has code {int(top)} but category_names[{feature!r}] names only "
                    f"{len(levels)} levels {levels}; add the missing level names"
                )
            checked[feature] = levels
        return MappingProxyType(checked)

    @classmethod
    def from_frame(
        cls,
        frame: pd.DataFrame,
        *,
        target: str,
        name: str | None = None,
        feature_kinds: Mapping[str, FeatureKind] | None = None,
        features: Sequence[str] | str | None = None,
        missing: MissingPolicy = "error",
        max_levels: int = DEFAULT_MAX_LEVELS,
        category_names: Mapping[str, Sequence[str]] | None = None,
        class_names: Sequence[str] | None = None,
    ) -> Dataset:
        """A Dataset from a pandas DataFrame: column ``target`` holds the class labels, the others are features.

        The one coder of every table (:mod:`bayesclass.data.table`; CSV, TSV and parquet files go through it
        too): numeric columns become ``"continuous"`` (``"binary"`` when all 0/1); text (``object``/``string``
        cells that are not all numbers), ``bool`` and ``category`` columns become levels coded 0..L-1 (two levels
        ``"binary"``, the second level being 1; more ``"categorical"``); a numeric column declared
        ``"categorical"`` is coded by its sorted distinct values. Class names are the distinct labels (numbers
        sorted by value).

        Parameters
        ----------
        frame : pandas.DataFrame
            The table, one row per observation, with unique text column names.
        target : str
            The class column.
        name : str, optional
            The Dataset's name (default ``"frame"``).
        feature_kinds : Mapping[str, FeatureKind], optional
            Declared kinds of some features, overriding the inferred ones (e.g. ``{"year": "categorical"}``).
        features : sequence of str or str, optional
            The feature columns to use, in order (default: every column but the target). Only the used columns
            (these and the target) are checked for blanks.
        missing : {"error", "drop"}
            A blank cell (empty, NA, N/A, nan, pandas NA/NaN/None) in a used column: refuse the table, listing
            the blanks per column (default), or drop its row (counted in :attr:`missing`).
        max_levels : int
            The most levels a categorical column may have (default 50); more is refused.
        category_names, class_names : optional
            A training schema: coded columns keep these levels, labels these classes (new rows get the codes of
            the training data; an unseen level or label is an error).

        Returns
        -------
        Dataset
            With ``provenance`` naming the frame's shape and :attr:`missing` recording the blanks.

        Raises
        ------
        ValueError
            Naming the argument or column, the value and the fix.
        TypeError
            ``frame`` is not a DataFrame.
        """
        options = TableOptions(missing=missing, max_levels=max_levels)
        if name is not None and (not isinstance(name, str) or not name):
            raise ValueError(f"name must be a non-empty string, got {name!r}")
        coded = code_table(
            frame,
            target=target,
            features=features,
            feature_kinds=feature_kinds,
            options=options,
            category_names=category_names,
            class_names=class_names,
            source=TableSource("DataFrame", name=name or "frame"),
        )
        return cls.from_coded_table(
            coded,
            name=name or "frame",
            description=f"{len(coded.y)} rows of a DataFrame, classes from column {target!r}",
            provenance=f"pandas DataFrame ({frame.shape[0]} rows x {frame.shape[1]} columns)",
        )

    @classmethod
    def from_coded_table(cls, coded: CodedTable, *, name: str, description: str, provenance: str) -> Dataset:
        """The Dataset of a table coded by :func:`bayesclass.data.table.code_table` (files and frames alike).

        Parameters
        ----------
        coded : CodedTable
            The coded columns.
        name, description, provenance : str
            As the fields of the same names; ``provenance`` gains the rows dropped for blanks, if any.

        Returns
        -------
        Dataset
        """
        if coded.missing.dropped_rows:
            counts = ", ".join(f"{column} {count}" for column, count in coded.missing.blanks_per_column)
            provenance = f"{provenance}; {coded.missing.dropped_rows} row(s) with blank cells dropped ({counts})"
        if coded.declared_kinds:
            declared = ", ".join(f"{column}={kind}" for column, kind in coded.declared_kinds.items())
            provenance = f"{provenance}; feature kinds declared: {declared}"
        return cls(
            name=name,
            X=coded.X,
            y=coded.y,
            feature_names=coded.feature_names,
            class_names=coded.class_names,
            feature_kinds=coded.feature_kinds,
            description=description,
            provenance=provenance,
            category_names=coded.category_names,
            missing=coded.missing,
        )

    def __reduce__(self):
        arguments = (
            self.name,
            self.X,
            self.y,
            self.feature_names,
            self.class_names,
            self.feature_kinds,
            self.description,
            self.provenance,
            dict(self.category_names),
            self.true_class_proba,
            self.origin,
            self.missing,
        )
        return (type(self), arguments)

    def __repr__(self) -> str:
        return (
            f"Dataset(name={self.name!r}, n_obs={self.n_obs}, n_features={self.n_features}, "
            f"n_classes={self.n_classes}, class_names={self.class_names})"
        )

    @property
    def n_obs(self) -> int:
        """Number of rows (observations)."""
        return int(self.X.shape[0])

    @property
    def n_features(self) -> int:
        """Number of columns (features)."""
        return int(self.X.shape[1])

    @property
    def n_classes(self) -> int:
        """Number of classes ``K = len(class_names)``, including classes with no rows."""
        return len(self.class_names)

    @property
    def class_counts(self) -> np.ndarray:
        """Rows per class, shape ``(K,)``; ``class_counts / n_obs`` is the MLE of the class prior (seed 001 eq 7)."""
        return np.bincount(self.y, minlength=self.n_classes)

    def fingerprint(self) -> str:
        """SHA-256 hex digest of X, y, feature names and class names (stable across runs and platforms)."""
        digest = hashlib.sha256()
        digest.update(np.ascontiguousarray(self.X, dtype="<f8").tobytes())
        digest.update(np.ascontiguousarray(self.y, dtype="<i8").tobytes())
        digest.update(json.dumps([self.feature_names, self.class_names]).encode())
        return digest.hexdigest()

    @property
    def target_fingerprint(self) -> str:
        """SHA-256 hex digest of the class names and the class codes in row order, whatever the features.

        Two fits whose data have the same target fingerprint were fitted on the same rows and labels (in the
        same order), so their pointwise leave-one-out densities can be compared row by row, even with different
        feature columns, coding or standardisation (:func:`bayesclass.inference.criticism.loo.compare`).
        """
        digest = hashlib.sha256()
        digest.update(json.dumps(list(self.class_names)).encode())
        digest.update(np.ascontiguousarray(self.y, dtype="<i8").tobytes())
        return digest.hexdigest()

    def subset(self, indices: Sequence[int] | np.ndarray, *, name: str | None = None) -> Dataset:
        """Rows ``indices`` (integer positions, repeats allowed, or a boolean mask of length ``n_obs``).

        Names, kinds, class names and category names are kept, so codes mean
        the same thing in every subset. ``name`` defaults to ``f"{self.name}[subset]"``.
        """
        index = np.asarray(indices)
        if index.dtype == bool:
            if index.shape != (self.n_obs,):
                raise ValueError(
                    f"indices is a boolean mask of shape {index.shape}; it must have shape ({self.n_obs},)"
                )
            index = np.flatnonzero(index)
        elif index.dtype.kind not in "iu" or index.ndim != 1:
            raise ValueError(
                f"indices must be 1-D integer positions or a boolean mask, got dtype {index.dtype}, shape {index.shape}"
            )
        if index.size == 0:
            raise ValueError("indices selects no rows; a Dataset needs at least one observation")
        bad = (index < 0) | (index >= self.n_obs)
        if bad.any():
            raise ValueError(
                f"indices contains {index[np.argmax(bad)]}, outside 0..{self.n_obs - 1}; pass valid row positions"
            )
        return replace(
            self,
            name=f"{self.name}[subset]" if name is None else name,
            X=self.X[index],
            y=self.y[index],
            true_class_proba=None if self.true_class_proba is None else self.true_class_proba[index],
            provenance=f"{self.provenance}; {index.size} of {self.n_obs} rows",
        )

    def coded_as(self, training: Dataset, *, argument: str = "test") -> Dataset:
        """These rows in ``training``'s coding: its feature columns (by name, in its order), level codes and classes.

        A test table loaded on its own codes its levels and classes by what it holds (a level it lacks shifts the
        codes of the others); this maps them by name onto the training data's, so that a code means the same level
        in both. Columns the training data do not use are left out.

        Parameters
        ----------
        training : Dataset
            The rows the models are fitted on.
        argument : str, default "test"
            How messages name these rows (``"--test-data"`` on the command line).

        Returns
        -------
        Dataset
            The rows with ``training``'s features, kinds, ``category_names`` and ``class_names``.

        Raises
        ------
        ValueError
            A training column missing, a column holding text where the training data hold numbers (or the
            reverse), a level or class not seen in training: each named, with the fix.
        """
        absent = [column for column in training.feature_names if column not in self.feature_names]
        if absent:
            raise ValueError(
                f"{argument}: {self.name!r} lacks the training column(s) {absent}; its columns are "
                f"{list(self.feature_names)}: give a table with the training columns {list(training.feature_names)}"
            )
        rows = self.select_features(training.feature_names, name=self.name)
        X = rows.X.copy()
        for index, column in enumerate(training.feature_names):  # the columns of a table, not a model loop
            levels, own = training.category_names.get(column), rows.category_names.get(column)
            if (levels is None) != (own is None):
                held, fitted = ("text levels", "numbers") if own is not None else ("numbers", "text levels")
                raise ValueError(
                    f"{argument}: column {column!r} holds {held} but the training data hold {fitted} "
                    "in it; give the column as in the training table"
                )
            if levels is not None and own is not None:
                X[:, index] = _recoded(
                    X[:, index].astype(np.int64), own, levels, argument, f"level(s) of column {column!r}"
                )
        y = _recoded(rows.y, rows.class_names, training.class_names, argument, "class(es)")
        same_classes = rows.class_names == training.class_names
        return replace(
            rows,
            X=X,
            y=y,
            feature_kinds=training.feature_kinds,
            class_names=training.class_names,
            category_names=dict(training.category_names),
            true_class_proba=rows.true_class_proba if same_classes else None,
        )

    def select_features(self, names: Sequence[str], *, name: str | None = None) -> Dataset:
        """The columns ``names`` (in that order), e.g. a 2-input slice of a data set for a GP.

        ``name`` defaults to ``f"{self.name}[{', '.join(names)}]"``.
        """
        if isinstance(names, str):
            names = [part.strip() for part in names.split(",") if part.strip()]
        names = tuple(str(feature) for feature in names)
        if not names:
            raise ValueError("names selects no features; give at least one feature name")
        unknown = [feature for feature in names if feature not in self.feature_names]
        if unknown:
            raise ValueError(
                f"feature(s) {', '.join(map(repr, unknown))} are not in {self.name!r}; its features are "
                f"{', '.join(map(repr, self.feature_names))}"
            )
        if len(set(names)) != len(names):
            raise ValueError(f"names repeats a feature: {names!r}")
        columns = [self.feature_names.index(feature) for feature in names]
        return replace(
            self,
            name=f"{self.name}[{', '.join(names)}]" if name is None else name,
            X=self.X[:, columns],
            feature_names=names,
            feature_kinds=tuple(self.feature_kinds[j] for j in columns),
            category_names={feature: levels for feature, levels in self.category_names.items() if feature in names},
            # P(class | all features) is not P(class | these): the truth does not carry over
            true_class_proba=self.true_class_proba if len(columns) == self.n_features else None,
            provenance=f"{self.provenance}; features {', '.join(names)}",
        )

    def with_feature_kinds(
        self,
        kinds: Mapping[str, FeatureKind],
        *,
        argument: str = "feature_kinds",
        max_levels: int = DEFAULT_MAX_LEVELS,
    ) -> Dataset:
        """The same data with the kinds of some columns declared, e.g. ``{"smoker": "continuous"}``.

        A CSV column of 0/1 numbers is read as ``"binary"``; declaring it
        ``"continuous"`` makes ``standardize=True`` scale it and naive Bayes model it as
        Gaussian. The values must suit the new kind: ``"binary"`` 0/1, ``"count"`` non-negative
        integers, ``"continuous"`` numbers (a column read from text levels cannot become continuous
        or count: its codes are not measurements). A column of numbers declared ``"categorical"`` is
        coded by its distinct values: the levels are the sorted values as text (``"2007"``), the codes
        0..L-1, never the values themselves; more than ``max_levels`` levels are refused.

        Parameters
        ----------
        kinds : Mapping[str, FeatureKind]
            Column name -> one of :data:`FEATURE_KINDS`.
        argument : str
            How the caller calls ``kinds`` in error messages (``--feature-kind`` on the CLI).
        max_levels : int
            The most levels a column declared categorical may have (default 50).

        Returns
        -------
        Dataset
            ``self`` when nothing changes.

        Raises
        ------
        ValueError
            An unknown column (the columns are listed), an unknown kind (the kinds are
            listed), or values the kind cannot hold (column, value and fix named).
        """
        kinds = check_feature_kinds(kinds, self.feature_names, owner=self.name, argument=argument)
        for column, kind in kinds.items():
            if kind in ("continuous", "count") and column in self.category_names:
                levels = self.category_names[column]
                raise ValueError(
                    f"{argument}[{column!r}] = {kind!r}, but column {column!r} holds text levels {levels}, whose "
                    "codes are not measurements; declare it 'categorical' (or 'binary' with two levels)"
                )
        feature_kinds = tuple(
            kinds.get(name, kind) for name, kind in zip(self.feature_names, self.feature_kinds, strict=True)
        )
        changed = {
            name: kind for name, kind in kinds.items() if kind != self.feature_kinds[self.feature_names.index(name)]
        }
        if not changed:
            return self
        X, category_names = self.X, dict(self.category_names)
        for column, kind in changed.items():
            if kind == "categorical" and column not in category_names:  # numbers: coded by their distinct values
                X, category_names[column] = _coded_by_values(X, self.feature_names.index(column), column, max_levels)
        return replace(
            self,
            X=X,
            feature_kinds=feature_kinds,
            category_names=category_names,
            provenance=f"{self.provenance}; feature kinds declared: "
            + ", ".join(f"{name}={kind}" for name, kind in changed.items()),
        )

    def discretized(self, feature: str, *, edges: Sequence[float], level_names: Sequence[str] | None = None) -> Dataset:
        """Replace a continuous or count column by a categorical one with ``len(edges) + 1`` levels.

        Level ``k`` holds the values in ``[edges[k-1], edges[k])`` (the first level
        everything below ``edges[0]``, the last everything from ``edges[-1]`` up),
        as ``numpy.digitize`` codes them. Apply the same call, with the same
        ``edges``, to validation, test and prediction sets.

        Parameters
        ----------
        feature : str
            Name of the column to discretise.
        edges : sequence of float
            Strictly increasing, finite cut points.
        level_names : sequence of str, optional
            One name per level (default ``"<e0"``, ``"[e0, e1)"``, ..., ``">=e_last"``).
        """
        if feature not in self.feature_names:
            raise ValueError(
                f"feature {feature!r} is not a column of {self.name!r}; choose one of {self.feature_names}"
            )
        column = self.feature_names.index(feature)
        if self.feature_kinds[column] not in ("continuous", "count"):
            raise ValueError(
                f"feature {feature!r} is {self.feature_kinds[column]!r}; only continuous or count columns can be "
                "discretized"
            )
        cuts = np.asarray(edges, dtype=float)
        if cuts.ndim != 1 or cuts.size == 0 or not np.isfinite(cuts).all() or (np.diff(cuts) <= 0).any():
            raise ValueError(
                f"edges must be a non-empty, strictly increasing sequence of finite numbers, got {edges!r}"
            )
        if level_names is None:
            level_names = [
                f"<{cuts[0]:g}",
                *(f"[{a:g}, {b:g})" for a, b in zip(cuts[:-1], cuts[1:], strict=True)),
                f">={cuts[-1]:g}",
            ]
        names = _names(level_names, argument="level_names")
        if len(names) != cuts.size + 1:
            raise ValueError(
                f"level_names must name len(edges) + 1 = {cuts.size + 1} levels, got {len(names)}: {names}"
            )
        X = self.X.copy()
        X[:, column] = np.digitize(self.X[:, column], cuts)
        kinds = list(self.feature_kinds)
        kinds[column] = "categorical"
        return replace(
            self,
            X=X,
            feature_kinds=tuple(kinds),
            category_names={**self.category_names, feature: names},
            true_class_proba=None,  # P(class | binned x) is not P(class | x)
            provenance=f"{self.provenance}; {feature!r} discretized at {cuts.tolist()} into {list(names)}",
        )

    def standardized(self, *, reference: Dataset | None = None) -> Dataset:
        """Centre and scale the continuous columns: ``(x - mean) / std`` (ddof=0).

        Parameters
        ----------
        reference : Dataset, optional
            Whose mean and std to use (default ``self``). Pass the training set
            when standardising validation/test sets, so that all share one scale.

        Raises
        ------
        ValueError
            If ``reference`` has other feature names or kinds, or a continuous
            column of the reference is constant (std 0).
        """
        reference = self if reference is None else reference
        if not isinstance(reference, Dataset):
            raise ValueError(f"reference must be a Dataset, got {type(reference).__name__}")
        if (reference.feature_names, reference.feature_kinds) != (self.feature_names, self.feature_kinds):
            raise ValueError(
                f"reference {reference.name!r} has features {reference.feature_names} {reference.feature_kinds} but "
                f"{self.name!r} has {self.feature_names} {self.feature_kinds}; pass a reference with the same columns"
            )
        continuous = np.array(self.feature_kinds) == "continuous"
        mean = np.where(continuous, reference.X.mean(axis=0), 0.0)
        std = np.where(continuous, reference.X.std(axis=0), 1.0)
        if (std == 0).any():
            column = int(np.argmax(std == 0))
            raise ValueError(
                f"continuous column {self.feature_names[column]!r} is constant in {reference.name!r} (std 0) and "
                "cannot be standardized; drop the column or declare it with another kind"
            )
        columns = zip(self.feature_names, mean, std, continuous, strict=True)
        scale = ", ".join(
            f"{name}: mean {m:.6g}, std {s:.6g}" for name, m, s, is_continuous in columns if is_continuous
        )
        return replace(
            self,
            X=(self.X - mean) / std,
            provenance=f"{self.provenance}; standardized (ddof=0) with the mean/std of {reference.name!r} ({scale})",
        )


def _recoded(codes: np.ndarray, own: Sequence[str], known: Sequence[str], where: str, what: str) -> np.ndarray:
    """``codes`` of the names ``own`` as codes of the same names in ``known``; a used name not there is an error."""
    position = {name: index for index, name in enumerate(known)}
    mapping = np.array([position.get(name, -1) for name in own], dtype=np.int64)
    unseen = [own[code] for code in np.unique(codes) if mapping[code] < 0]
    if unseen:
        raise ValueError(
            f"{where}: {what} {unseen} not seen in training (known: {list(known)}); drop those rows or refit with them"
        )
    return mapping[codes]


def _coded_by_values(X: np.ndarray, index: int, column: str, max_levels: int) -> tuple[np.ndarray, tuple[str, ...]]:
    """``X`` with column ``index`` replaced by the codes of its sorted distinct values, and those values as text."""
    TableOptions(max_levels=max_levels)  # the limit itself is checked as declared
    distinct, codes = np.unique(X[:, index], return_inverse=True)
    if len(distinct) > max_levels:
        raise ValueError(
            f"column {column!r} has {len(distinct)} distinct values, more than {spelled('max_levels', max_levels)} "
            f"levels for a categorical feature; keep it numeric, or raise the limit with "
            f"{spelled('max_levels', len(distinct))}"
        )
    coded = X.copy()
    coded[:, index] = codes
    return coded, tuple(number_text(value) for value in distinct)


def check_features(
    X: object,
    *,
    n_features: int,
    feature_names: Sequence[str] | None = None,
    argument: str = "X",
    category_names: Mapping[str, Sequence[str]] | None = None,
) -> np.ndarray:
    """Validate new inputs for prediction and return them as a 2-D float64 array.

    A pandas DataFrame whose column names are all text is a table: its columns are matched to
    ``feature_names`` BY NAME (any order; a fitted column missing is an error naming it, other columns, such as
    the target or an id, are left out with a note, as in a CSV file) and coded by
    :func:`bayesclass.data.table.code_new_rows` (levels of ``category_names`` by their names); so is a Series with
    named entries, as one row (``frame.iloc[0]``). A DataFrame with unnamed columns (``0, 1, ...``) is taken by
    position, as an array.

    Parameters
    ----------
    X : array_like or Dataset
        New inputs; a :class:`Dataset` contributes its ``X`` (and, when
        ``feature_names`` is given, must have the same feature names). A 1-D
        array of length ``n_features`` is ONE row.
    n_features : int
        Number of features the model was fitted on.
    feature_names : sequence of str, optional
        Fitted feature names, used in error messages.
    argument : str
        Name of the argument in error messages.
    category_names : Mapping[str, sequence of str], optional
        The training levels of coded features, to code a DataFrame's level names.

    Returns
    -------
    numpy.ndarray
        ``float64``, C-contiguous, shape ``(n_rows, n_features)``, all finite.

    Raises
    ------
    ValueError
        Non-numeric values, wrong number of columns, NaN/inf (row and column
        named), or no rows.
    """
    names = None if feature_names is None else tuple(feature_names)
    X, _ = table_rows(X, feature_names=names, category_names=category_names, argument=argument)
    if isinstance(X, Dataset):
        if names is not None and X.feature_names != names:
            raise ValueError(
                f"{argument} is Dataset {X.name!r} with features {X.feature_names} but the model was fitted on "
                f"{names}; pass a Dataset with the same columns in the same order"
            )
        X = X.X
    array = numeric_2d(X, argument=argument)
    fitted = f"{n_features} features" + ("" if names is None else f" ({', '.join(map(repr, names))})")
    if array.ndim == 1:
        if array.shape[0] != n_features:
            raise ValueError(
                f"{argument} is 1-D with {array.shape[0]} values but the model was fitted on {fitted}; pass one row "
                f"of {n_features} values or a 2-D array of shape (n_rows, {n_features})"
            )
        array = array[np.newaxis, :]
    if array.ndim != 2:
        raise ValueError(f"{argument} must be 2-D (n_rows, n_features), got shape {array.shape}")
    if array.shape[1] != n_features:
        raise ValueError(
            f"{argument} has {array.shape[1]} columns but the model was fitted on {fitted}; "
            "pass the same columns in the same order"
        )
    if array.shape[0] == 0:
        raise ValueError(f"{argument} has 0 rows; pass at least one row to predict")
    array = np.ascontiguousarray(array, dtype=np.float64)
    check_finite(array, argument=argument, feature_names=names, when="predicting")
    return array


def _positions(labels: list[object]) -> bool:
    """Whether a table's column labels are no names but the positions 0, 1, ... (``pandas.DataFrame(array)``)."""
    return all(type(label) in (int, np.int64) for label in labels) and labels == list(range(len(labels)))


def table_rows(
    X: object,
    *,
    feature_names: Sequence[str] | None,
    category_names: Mapping[str, Sequence[str]] | None = None,
    argument: str = "X",
    missing: MissingPolicy = "error",
) -> tuple[object, np.ndarray | None]:
    """New rows given as a table, as the fitted columns: matched by name and coded; anything else as it is.

    A pandas DataFrame whose column names are all text (or a Series with named entries, as one row) is coded by
    :func:`bayesclass.data.table.code_new_rows`, the coding of the rows of a table file, with the same policy
    for a blank cell.

    Parameters
    ----------
    X : object
        New rows: a table, or anything :func:`check_features` takes.
    feature_names : sequence of str or None
        The fitted features (None: nothing is matched by name).
    category_names : Mapping[str, sequence of str], optional
        The training levels of the coded features.
    argument : str
        The name of ``X`` in messages.
    missing : {"error", "drop"}
        A blank feature cell refuses the table, or leaves its row incomplete (NaN in that cell).

    Returns
    -------
    rows : object
        The coded rows (float64, the fitted columns in order), or ``X`` unchanged where it is no named table.
    complete : numpy.ndarray of bool or None
        Which coded rows have no blank feature; None where ``X`` is no named table.

    Raises
    ------
    ValueError
        A fitted column missing or repeated, or a cell the model cannot take (named, with where it is).
    """
    names = None if feature_names is None else tuple(feature_names)
    pandas = sys.modules.get("pandas")  # a DataFrame exists only where pandas was imported
    if pandas is None or names is None:
        return X, None
    if isinstance(X, pandas.Series) and not _positions(list(X.index)):
        X = X.to_frame().T  # one row, named by its index (frame.iloc[0])
    if not isinstance(X, pandas.DataFrame):
        return X, None
    columns = list(X.columns)
    if _positions(columns):
        return X, None  # unnamed columns (0, 1, ...): by position, as an array
    other = [column for column in columns if not isinstance(column, str)]
    if other:
        raise ValueError(
            f"DataFrame {argument} has column names that are not text, {other[:5]} (of {columns[:8]}); its columns "
            f"are matched by name: name them as fitted, {list(names)}, or pass {argument}.to_numpy() to take them "
            "by position"
        )
    absent = [name for name in names if name not in columns]
    unknown = [column for column in columns if column not in names]
    if absent:
        also = f" (it has column(s) {unknown} the model was not fitted on)" if unknown else ""
        raise ValueError(
            f"DataFrame {argument} lacks the fitted column(s) {absent}{also}; its columns are matched by name: "
            f"pass a frame holding {list(names)} (any order), or {argument}.to_numpy() to take them by position"
        )
    if unknown:  # as in a CSV file: other columns (the target, ids) are left out, and said so
        logging.getLogger("bayesclass").info(
            "DataFrame %s: column(s) %s the model was not fitted on are not used", argument, unknown
        )
        columns = [column for column in columns if column in names]
        X = X[columns]
    if len(set(columns)) != len(columns):
        repeated = sorted({column for column in columns if columns.count(column) > 1})
        raise ValueError(f"DataFrame {argument} repeats the column name(s) {repeated}; give each column a unique name")
    source = TableSource(label=f"DataFrame {argument}")
    rows = code_new_rows(X, feature_names=names, category_names=category_names, missing=missing, source=source)
    return rows.X, rows.complete
