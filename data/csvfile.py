"""Read a labelled CSV file into a :class:`~data.dataset.Dataset`."""

from __future__ import annotations

import csv
import hashlib
import io
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bayesclass.data.dataset import Dataset, FeatureKind

MISSING_TOKENS = frozenset({"", "na", "n/a", "nan"})
"""Cell texts (case-insensitive, after stripping blanks) that mean "missing"; they are rejected, never imputed."""


def _as_numbers(column: np.ndarray) -> np.ndarray | None:
    """The column as float64 if every cell parses as a number, else ``None``."""
    try:
        return column.astype(np.float64)
    except ValueError:
        return None


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _first_number(column: np.ndarray) -> int | None:
    """Index of the first cell of a text column that parses as a number (mixed columns are errors)."""
    is_number = np.vectorize(_is_number, otypes=[bool])(column)
    return int(np.argmax(is_number)) if is_number.any() else None


def load_csv(
    path: str | os.PathLike[str],
    *,
    target: str,
    name: str | None = None,
    category_names: Mapping[str, tuple[str, ...]] | None = None,
    class_names: tuple[str, ...] | None = None,
    feature_kinds: Mapping[str, FeatureKind] | None = None,
) -> Dataset:
    """Load a CSV file with a header row; column ``target`` holds the class labels.

    Parsing is done by the standard-library :mod:`csv` module (comma-separated,
    UTF-8, optional BOM; blank lines skipped; cells stripped of surrounding
    blanks). Each non-target column becomes one feature:

    * all cells numeric -> ``"continuous"``, or ``"binary"`` if every value is 0 or 1;
    * text -> codes of the SORTED distinct levels, which are recorded in
      ``category_names``: two levels -> ``"binary"`` (``no``=0, ``yes``=1 as in
      seed 003, transport table), otherwise ``"categorical"``.

    Class names are the sorted distinct target values (numerically sorted when
    all are numbers, then written as ``"0"``, ``"1"``, ``"2.5"``); codes follow
    that order. A single class is accepted here; models reject it.

    Parameters
    ----------
    path : str or PathLike
        The CSV file.
    target : str
        Name of the class-label column.
    name : str, optional
        Dataset name; defaults to the file name without extension.
    category_names, class_names : optional
        The schema of an earlier (training) data set: text columns are coded by
        these levels and labels by these class names, so that new data get the
        same codes as the training data even when they lack some level. A level
        or label outside the schema is a ``ValueError``.
    feature_kinds : Mapping[str, FeatureKind], optional
        Declared kinds of some columns, overriding the inferred ones (see
        :meth:`Dataset.with_feature_kinds`): e.g. ``{"smoker": "continuous"}`` for a 0/1
        dummy that should be standardised and modelled like the other inputs.

    Returns
    -------
    Dataset
        With ``provenance = "CSV file <absolute path> (sha256 <first 12 hex digits>)"``.

    Raises
    ------
    ValueError
        Missing file; no header or no data rows; ragged rows; duplicate column
        names; ``target`` not a column (the columns are listed); a missing cell
        (empty, ``NA``, ``N/A``, ``nan``; line and column named); a column that
        mixes numbers and text; a level or label outside the given schema.
    """
    if not isinstance(target, str) or not target:
        raise ValueError(f"target must be the name of the class column, got {target!r}; pass target=COLUMN")
    table = _read_table(path)
    if target not in table.header:
        raise ValueError(
            f"target column {target!r} is not in CSV file {table.file}; its columns are {table.header}; "
            "pass target=COLUMN (--target on the command line)"
        )
    features = [column for column in table.header if column != target]
    if not features:
        raise ValueError(
            f"CSV file {table.file} has only the target column {target!r}; it needs at least one feature column"
        )
    X, kinds, levels = _encode_features(table, features, category_names or {})
    labels = table.column(target)
    if class_names is not None:
        y = _codes_of(labels, tuple(class_names), file=table.file, column=target, what="label")
    else:
        numeric_labels = _as_numbers(labels)
        if numeric_labels is not None:
            values, y = np.unique(numeric_labels, return_inverse=True)
            class_names = tuple(str(int(v)) if float(v).is_integer() else str(v) for v in values)
        else:
            values, y = np.unique(labels, return_inverse=True)
            class_names = tuple(str(v) for v in values)
    data = Dataset(
        name=table.file.stem if name is None else name,
        X=X,
        y=y.astype(np.int64),
        feature_names=tuple(features),
        class_names=tuple(class_names),
        feature_kinds=kinds,
        description=f"{len(labels)} rows of {table.file.name}, classes from column {target!r}",
        provenance=f"CSV file {table.file} (sha256 {hashlib.sha256(table.raw).hexdigest()[:12]})",
        category_names=levels,
    )
    return data if feature_kinds is None else data.with_feature_kinds(feature_kinds)


def features_from_csv(
    path: str | os.PathLike[str],
    *,
    feature_names: tuple[str, ...],
    category_names: Mapping[str, tuple[str, ...]] | None = None,
) -> np.ndarray:
    """The columns ``feature_names`` of an (unlabelled) CSV file, in that order, as a float array.

    Text columns are coded by ``category_names`` (the training levels). Other
    columns are ignored; a missing one is a ``ValueError`` listing the columns.
    """
    table = _read_table(path)
    absent = [column for column in feature_names if column not in table.header]
    if absent:
        raise ValueError(
            f"CSV file {table.file} lacks the fitted feature column(s) {absent}; its columns are {table.header}"
        )
    known = category_names or {}
    values, _, found_levels = _encode_features(table, list(feature_names), known)
    text = [column for column in found_levels if column not in known]
    if text:  # a column fitted as numbers holds text here: its own codes would mean nothing
        example = str(table.column(text[0])[0])
        raise ValueError(
            f"CSV file {table.file}: column {text[0]!r} holds text (e.g. {example!r}) but the model was "
            "fitted on numbers in it; give the numeric values"
        )
    return values


@dataclass(frozen=True)
class _Table:
    file: Path
    raw: bytes
    header: list[str]
    cells: np.ndarray  # (rows, columns) of stripped strings

    def column(self, name: str) -> np.ndarray:
        return self.cells[:, self.header.index(name)]


def _read_table(path: str | os.PathLike[str]) -> _Table:
    file = Path(path).expanduser().resolve()
    if not file.is_file():
        raise ValueError(f"path {str(path)!r} is not an existing file (resolved to {file}); check the file name")
    raw = file.read_bytes()
    lines = [row for row in csv.reader(io.StringIO(raw.decode("utf-8-sig"), newline="")) if row]
    if len(lines) < 2:
        raise ValueError(
            f"CSV file {file} has {'no header' if not lines else 'a header but no data rows'}; "
            "it needs a header row and at least one data row"
        )
    header = [cell.strip() for cell in lines[0]]
    if len(set(header)) != len(header) or "" in header:
        raise ValueError(
            f"CSV file {file} has empty or duplicate column names {header}; give each column a unique name"
        )
    widths = np.array([len(row) for row in lines[1:]])
    if (widths != len(header)).any():
        bad = int(np.argmax(widths != len(header)))
        raise ValueError(
            f"CSV file {file}: line {bad + 2} has {widths[bad]} cells but the header has {len(header)}; "
            "fix the row (quote cells that contain commas)"
        )
    cells = np.char.strip(np.array(lines[1:], dtype=str))  # elements are np.str_: use str(...) in messages
    missing = np.isin(np.char.lower(cells), list(MISSING_TOKENS))
    if missing.any():
        row, column = divmod(int(np.argmax(missing)), cells.shape[1])
        raise ValueError(
            f"CSV file {file}: missing value {str(cells[row, column])!r} at line {row + 2}, column "
            f"{header[column]!r}; remove the row or impute the value before loading"
        )
    return _Table(file, raw, header, cells)


def _encode_features(
    table: _Table, features: list[str], known_levels: Mapping[str, tuple[str, ...]]
) -> tuple[np.ndarray, tuple[str, ...], dict[str, tuple[str, ...]]]:
    columns: list[np.ndarray] = []
    kinds: list[str] = []
    category_names: dict[str, tuple[str, ...]] = {}
    for column_name in features:
        text = table.column(column_name)
        numbers = _as_numbers(text) if column_name not in known_levels else None
        if numbers is not None:
            if not np.isfinite(numbers).all():
                row = int(np.argmax(~np.isfinite(numbers)))
                raise ValueError(
                    f"CSV file {table.file}: value {str(text[row])!r} at line {row + 2}, column "
                    f"{column_name!r} is not finite; fix or remove the row"
                )
            columns.append(numbers)
            kinds.append("binary" if bool(np.isin(numbers, (0.0, 1.0)).all()) else "continuous")
            continue
        number_row = _first_number(text) if column_name not in known_levels else None
        if number_row is not None:
            example = str(text[number_row])
            raise ValueError(
                f"CSV file {table.file}: column {column_name!r} mixes text and numbers (e.g. {example!r} "
                f"at line {number_row + 2}); make the column all numbers or all text labels"
            )
        if column_name in known_levels:
            levels = tuple(known_levels[column_name])
            codes = _codes_of(text, levels, file=table.file, column=column_name, what="level")
        else:
            found, codes = np.unique(text, return_inverse=True)
            levels = tuple(str(level) for level in found)
        columns.append(codes.astype(np.float64))
        kinds.append("binary" if len(levels) == 2 else "categorical")
        category_names[column_name] = levels
    return np.column_stack(columns), tuple(kinds), category_names


def _codes_of(text: np.ndarray, levels: tuple[str, ...], *, file: Path, column: str, what: str) -> np.ndarray:
    """Codes of ``text`` in the given ``levels``; anything else is an error naming the first unseen value."""
    lookup = np.asarray(levels, dtype=str)
    order = np.argsort(lookup)
    position = np.clip(np.searchsorted(lookup[order], text), 0, len(levels) - 1)
    codes = order[position]
    unseen = lookup[codes] != text
    if unseen.any():
        row = int(np.argmax(unseen))
        raise ValueError(
            f"CSV file {file}: {what} {str(text[row])!r} at line {row + 2}, column {column!r} was not seen "
            f"in training (known: {list(levels)}); drop those rows or refit with them"
        )
    return codes
