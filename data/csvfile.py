"""Read a labelled CSV file into a :class:`~data.dataset.Dataset`."""

from __future__ import annotations

import csv
import hashlib
import io
import os
from pathlib import Path

import numpy as np

from data.dataset import Dataset

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


def load_csv(path: str | os.PathLike[str], *, target: str, name: str | None = None) -> Dataset:
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
        mixes numbers and text.
    """
    file = Path(path).expanduser().resolve()
    if not file.is_file():
        raise ValueError(f"path {str(path)!r} is not an existing file (resolved to {file}); check the file name")
    if not isinstance(target, str) or not target:
        raise ValueError(f"target must be the name of the class column, got {target!r}; pass target=COLUMN")
    raw = file.read_bytes()
    lines = [row for row in csv.reader(io.StringIO(raw.decode("utf-8-sig"), newline="")) if row]
    if len(lines) < 2:
        raise ValueError(f"CSV file {file} has {'no header' if not lines else 'a header but no data rows'}; "
                         "it needs a header row and at least one data row")  # fmt: skip
    header = [cell.strip() for cell in lines[0]]
    if len(set(header)) != len(header) or "" in header:
        raise ValueError(f"CSV file {file} has empty or duplicate column names {header}; give each column a unique name")
    widths = np.array([len(row) for row in lines[1:]])
    if (widths != len(header)).any():
        bad = int(np.argmax(widths != len(header)))
        raise ValueError(f"CSV file {file}: line {bad + 2} has {widths[bad]} cells but the header has {len(header)}; "
                         "fix the row (quote cells that contain commas)")  # fmt: skip
    if target not in header:
        raise ValueError(f"target column {target!r} is not in CSV file {file}; its columns are {header}; "
                         "pass target=COLUMN (--target on the command line)")  # fmt: skip

    cells = np.char.strip(np.array(lines[1:], dtype=str))  # elements are np.str_: use str(...) in messages
    missing = np.isin(np.char.lower(cells), list(MISSING_TOKENS))
    if missing.any():
        row, column = divmod(int(np.argmax(missing)), cells.shape[1])
        raise ValueError(f"CSV file {file}: missing value {str(cells[row, column])!r} at line {row + 2}, column "
                         f"{header[column]!r}; remove the row or impute the value before loading")  # fmt: skip

    columns: list[np.ndarray] = []
    kinds: list[str] = []
    category_names: dict[str, tuple[str, ...]] = {}
    for index, column_name in enumerate(header):
        if column_name == target:
            continue
        text = cells[:, index]
        numbers = _as_numbers(text)
        if numbers is not None:
            if not np.isfinite(numbers).all():
                row = int(np.argmax(~np.isfinite(numbers)))
                raise ValueError(f"CSV file {file}: value {str(text[row])!r} at line {row + 2}, column {column_name!r} is "
                                 "not finite; fix or remove the row")  # fmt: skip
            binary = bool(np.isin(numbers, (0.0, 1.0)).all())
            columns.append(numbers)
            kinds.append("binary" if binary else "continuous")
            continue
        number_row = _first_number(text)
        if number_row is not None:
            example = str(text[number_row])
            raise ValueError(f"CSV file {file}: column {column_name!r} mixes text and numbers (e.g. {example!r} at "
                             f"line {number_row + 2}); make the column all numbers or all text labels")  # fmt: skip
        levels, codes = np.unique(text, return_inverse=True)
        columns.append(codes.astype(np.float64))
        kinds.append("binary" if len(levels) == 2 else "categorical")
        category_names[column_name] = tuple(str(level) for level in levels)

    if not columns:
        raise ValueError(f"CSV file {file} has only the target column {target!r}; it needs at least one feature column")
    labels = cells[:, header.index(target)]
    numeric_labels = _as_numbers(labels)
    if numeric_labels is not None:
        values, y = np.unique(numeric_labels, return_inverse=True)
        class_names = tuple(str(int(v)) if float(v).is_integer() else str(v) for v in values)
    else:
        values, y = np.unique(labels, return_inverse=True)
        class_names = tuple(str(v) for v in values)
    return Dataset(
        name=file.stem if name is None else name,
        X=np.column_stack(columns),
        y=y.astype(np.int64),
        feature_names=tuple(column for column in header if column != target),
        class_names=class_names,
        feature_kinds=tuple(kinds),
        description=f"{len(labels)} rows of {file.name}, classes from column {target!r}",
        provenance=f"CSV file {file} (sha256 {hashlib.sha256(raw).hexdigest()[:12]})",
        category_names=category_names,
    )
