"""Read a labelled CSV file into a :class:`~data.dataset.Dataset`."""

from __future__ import annotations

import csv
import hashlib
import io
import os
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from bayesclass.data.dataset import Dataset, FeatureKind

MISSING_TOKENS = frozenset({"", "na", "n/a", "nan"})
"""Cell texts (case-insensitive, after stripping blanks) that mean "missing"; they are rejected, never imputed."""

#: delimiters tried when none is given (``delimiter=None``)
DELIMITERS = ",;\t|"
#: a text column with as many levels as rows (and at least this many rows) is probably not a category
UNIQUE_LEVELS_WARNING_ROWS = 10


@dataclass(frozen=True)
class CsvFormat:
    """How a CSV file is written.

    Parameters
    ----------
    delimiter : str or None
        The field separator; None detects it among ``, ; TAB |`` from the first lines.
    decimal : {".", ","}
        The decimal mark of numbers (``","``: ``0,1257`` is 0.1257).
    encoding : str
        The text encoding (``"utf-8"``, with or without a byte-order mark; ``"latin-1"``, ...).
    """

    delimiter: str | None = None
    decimal: str = "."
    encoding: str = "utf-8"

    def __post_init__(self) -> None:
        if self.delimiter is not None and (not isinstance(self.delimiter, str) or len(self.delimiter) != 1):
            raise ValueError(f"delimiter must be one character such as ',' or ';', got {self.delimiter!r}")
        if self.decimal not in (".", ","):
            raise ValueError(f"decimal must be '.' or ',', got {self.decimal!r}")
        if not isinstance(self.encoding, str) or not self.encoding:
            raise ValueError(f"encoding must name a text encoding such as 'utf-8' or 'latin-1', got {self.encoding!r}")
        if self.delimiter == self.decimal:
            raise ValueError(
                f"delimiter and decimal are both {self.decimal!r}; a number could not be told from a field"
            )


def _numbers(column: np.ndarray, decimal: str) -> np.ndarray:
    """The cells as float64, NaN where a cell is not a number under the decimal mark ``decimal``."""
    text = pd.Series(column, dtype=object)
    if decimal == ",":
        text = text.str.replace(",", ".", regex=False)
    return pd.to_numeric(text, errors="coerce").to_numpy(dtype=np.float64)


def _parses(column: np.ndarray, decimal: str) -> np.ndarray:
    """Which cells are numbers (``inf``/``nan`` spelled out count: they are then refused as not finite)."""
    numbers = _numbers(column, decimal)
    spelled = pd.Series(column, dtype=object).str.lower().isin(("nan", "+nan", "-nan"))
    return ~np.isnan(numbers) | spelled.to_numpy()


def load_csv(
    path: str | os.PathLike[str],
    *,
    target: str,
    name: str | None = None,
    category_names: Mapping[str, tuple[str, ...]] | None = None,
    class_names: tuple[str, ...] | None = None,
    feature_kinds: Mapping[str, FeatureKind] | None = None,
    csv_format: CsvFormat | None = None,
) -> Dataset:
    """Load a CSV file with a header row; column ``target`` holds the class labels.

    Parsing is done by pandas' C parser, every cell read as text (delimiter detected
    or given, decimal mark and encoding given by ``csv_format``; UTF-8 with or without
    a byte-order mark by default; blank lines skipped; cells stripped of surrounding
    blanks; fields of any length; memory proportional to the file). Each non-target
    column becomes one feature:

    * all cells numbers (under the declared decimal mark) -> ``"continuous"``, or
      ``"binary"`` if every value is 0 or 1;
    * text -> codes of the SORTED distinct levels, which are recorded in
      ``category_names``: two levels -> ``"binary"`` (``no``=0, ``yes``=1 as in
      seed 003, transport table), otherwise ``"categorical"``. A text column that
      would be numbers with the other decimal mark is an error naming ``decimal``;
      one with as many levels as rows gets a warning (an identifier is no category).

    Class names are the distinct target values as spelled in the file (``"1.0"``
    stays ``"1.0"``), sorted numerically when all are numbers; codes follow that
    order. A single class is accepted here; models reject it.

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
        or label outside the schema is a ``ValueError``; numeric labels match by value
        (``"1"`` and ``"1.0"`` are the same class).
    feature_kinds : Mapping[str, FeatureKind], optional
        Declared kinds of some columns, overriding the inferred ones (see
        :meth:`Dataset.with_feature_kinds`): e.g. ``{"smoker": "continuous"}`` for a 0/1
        dummy that should be standardised and modelled like the other inputs.
    csv_format : CsvFormat, optional
        Delimiter, decimal mark and encoding (default: detected delimiter, ``"."``, UTF-8).

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
    table = _read_table(path, csv_format or CsvFormat())
    if target not in table.header:
        raise ValueError(
            f"target column {target!r} is not in CSV file {table.file}; its columns are {table.header}"
            f"{table.delimiter_hint()}; pass target=COLUMN (--target on the command line)"
        )
    features = [column for column in table.header if column != target]
    if not features:
        raise ValueError(
            f"CSV file {table.file} has only the target column {target!r}; it needs at least one feature column"
        )
    X, kinds, levels = _encode_features(table, features, category_names or {})
    labels = table.column(target)
    if class_names is not None:
        y = _codes_of(labels, tuple(class_names), file=table.file, column=target, what="label", decimal=table.decimal)
    else:
        class_names, y = _classes(labels, table.decimal)
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
    csv_format: CsvFormat | None = None,
) -> np.ndarray:
    """The columns ``feature_names`` of an (unlabelled) CSV file, in that order, as a float array.

    Text columns are coded by ``category_names`` (the training levels). Other
    columns are ignored; a missing one is a ``ValueError`` listing the columns.
    """
    table = _read_table(path, csv_format or CsvFormat())
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
    cells: pd.DataFrame  # (rows, columns) of stripped text, object dtype: memory proportional to the file
    delimiter: str
    decimal: str

    def column(self, name: str) -> np.ndarray:
        return self.cells[name].to_numpy(dtype=object)

    def delimiter_hint(self) -> str:
        """A hint when the only column looks like a whole line of another delimiter."""
        if len(self.header) == 1:
            others = [mark for mark in DELIMITERS if mark != self.delimiter and mark in self.header[0]]
            if others:
                return (
                    f" (one column named {self.header[0]!r}: the file seems delimited by {others[0]!r}; "
                    f"pass delimiter={others[0]!r}, --delimiter on the command line)"
                )
        return ""


def _decoded(file: Path, raw: bytes, encoding: str) -> str:
    codec = "utf-8-sig" if encoding.lower().replace("_", "-") in ("utf-8", "utf8") else encoding
    try:
        return raw.decode(codec)
    except LookupError:
        raise ValueError(
            f"encoding {encoding!r} is not a known text encoding; pass e.g. 'utf-8' or 'latin-1'"
        ) from None
    except UnicodeDecodeError as error:
        raise ValueError(
            f"CSV file {file} is not {encoding} text (byte {error.start}: {raw[error.start : error.start + 1]!r}); "
            "pass its encoding, e.g. encoding='latin-1' (--encoding latin-1 on the command line)"
        ) from None


def _delimiter(text: str, given: str | None) -> str:
    if given is not None:
        return given
    sample = "\n".join(line for line in text[:65536].splitlines()[:50] if line.strip())
    try:
        return csv.Sniffer().sniff(sample, delimiters=DELIMITERS).delimiter
    except csv.Error:
        return ","


def _first_ragged_row(text: str, delimiter: str, width: int) -> tuple[int, int] | None:
    """(line number, cells) of the first data row whose number of cells is not ``width`` (quotes respected)."""
    previous = csv.field_size_limit(2**31 - 1)  # fields of any length
    try:
        rows = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
        next(rows, None)  # the header
        for row in rows:
            if row and len(row) != width:
                return rows.line_num, len(row)
        return None
    finally:
        csv.field_size_limit(previous)


def _read_table(path: str | os.PathLike[str], csv_format: CsvFormat) -> _Table:
    file = Path(path).expanduser().resolve()
    if not file.is_file():
        raise ValueError(f"path {str(path)!r} is not an existing file (resolved to {file}); check the file name")
    raw = file.read_bytes()
    text = _decoded(file, raw, csv_format.encoding)
    delimiter = _delimiter(text, csv_format.delimiter)
    lines = (line for line in text.splitlines() if line.strip())
    first = next(lines, None)
    if first is None or next(lines, None) is None:
        raise ValueError(
            f"CSV file {file} has {'no header' if first is None else 'a header but no data rows'}; "
            "it needs a header row and at least one data row"
        )
    header = [cell.strip() for cell in next(csv.reader([first], delimiter=delimiter))]
    if len(set(header)) != len(header) or "" in header:
        raise ValueError(
            f"CSV file {file} has empty or duplicate column names {header}; give each column a unique name"
        )
    try:
        cells = pd.read_csv(
            io.StringIO(text),
            sep=delimiter,
            header=None,
            skiprows=1,
            names=list(range(len(header))),
            dtype=str,
            keep_default_na=False,
            na_filter=False,
            skip_blank_lines=True,
            engine="c",
        )
    except pd.errors.ParserError as error:  # a row with more cells than the header
        raise ValueError(f"CSV file {file}: {error}; the header has {len(header)} cells: fix the row") from None
    ragged = _first_ragged_row(text, delimiter, len(header))
    if ragged is not None:
        raise ValueError(
            f"CSV file {file}: line {ragged[0]} has {ragged[1]} cells but the header has {len(header)}; "
            f"fix the row (quote cells that contain the delimiter {delimiter!r})"
        )
    cells.columns = header
    cells = cells.apply(lambda column: column.str.strip())
    missing = cells.apply(lambda column: column.str.lower().isin(MISSING_TOKENS)).to_numpy()
    if missing.any():
        row, column = divmod(int(np.argmax(missing)), missing.shape[1])
        raise ValueError(
            f"CSV file {file}: missing value {cells.iat[row, column]!r} at line {row + 2}, column "
            f"{header[column]!r}; remove the row or impute the value before loading"
        )
    return _Table(file, raw, header, cells, delimiter, csv_format.decimal)


def _encode_features(
    table: _Table, features: list[str], known_levels: Mapping[str, tuple[str, ...]]
) -> tuple[np.ndarray, tuple[str, ...], dict[str, tuple[str, ...]]]:
    columns: list[np.ndarray] = []
    kinds: list[str] = []
    category_names: dict[str, tuple[str, ...]] = {}
    other_decimal = "," if table.decimal == "." else "."
    for column_name in features:  # the columns of a file, not a model loop
        text = table.column(column_name)
        parses = _parses(text, table.decimal) if column_name not in known_levels else np.zeros(len(text), bool)
        if parses.all():
            numbers = _numbers(text, table.decimal)
            if not np.isfinite(numbers).all():
                row = int(np.argmax(~np.isfinite(numbers)))
                raise ValueError(
                    f"CSV file {table.file}: value {str(text[row])!r} at line {row + 2}, column "
                    f"{column_name!r} is not finite; fix or remove the row"
                )
            columns.append(numbers)
            kinds.append("binary" if bool(np.isin(numbers, (0.0, 1.0)).all()) else "continuous")
            continue
        if parses.any():
            row = int(np.argmax(parses))
            raise ValueError(
                f"CSV file {table.file}: column {column_name!r} mixes text and numbers (e.g. {str(text[row])!r} "
                f"at line {row + 2}); make the column all numbers or all text labels"
            )
        if column_name not in known_levels and _parses(text, other_decimal).all():
            raise ValueError(
                f"CSV file {table.file}: column {column_name!r} holds numbers written with the decimal mark "
                f"{other_decimal!r} (e.g. {str(text[0])!r}); pass decimal={other_decimal!r} "
                f"(--decimal '{other_decimal}' on the command line)"
            )
        if column_name in known_levels:
            levels = tuple(known_levels[column_name])
            codes = _codes_of(text, levels, file=table.file, column=column_name, what="level")
        else:
            codes, found = pd.factorize(pd.Series(text, dtype=object), sort=True)  # no fixed-width string copy
            levels = tuple(str(level) for level in found)
            if len(levels) == len(text) >= UNIQUE_LEVELS_WARNING_ROWS:
                warnings.warn(
                    f"CSV file {table.file}: text column {column_name!r} has a different value in every one of its "
                    f"{len(text)} rows, so as a categorical feature each level is seen once; if it is an identifier "
                    "drop it, if it holds numbers check delimiter/decimal",
                    UserWarning,
                    stacklevel=3,
                )
        columns.append(codes.astype(np.float64))
        kinds.append("binary" if len(levels) == 2 else "categorical")
        category_names[column_name] = levels
    return np.column_stack(columns), tuple(kinds), category_names


def _classes(labels: np.ndarray, decimal: str) -> tuple[tuple[str, ...], np.ndarray]:
    """(class names as spelled in the file, codes): sorted numerically when every label is a number."""
    if _parses(labels, decimal).all():
        values = _numbers(labels, decimal)
        distinct, first, codes = np.unique(values, return_index=True, return_inverse=True)
        return tuple(str(labels[index]) for index in first), codes
    codes, found = pd.factorize(pd.Series(labels, dtype=object), sort=True)
    return tuple(str(level) for level in found), codes


def _codes_of(
    text: np.ndarray, levels: tuple[str, ...], *, file: Path, column: str, what: str, decimal: str | None = None
) -> np.ndarray:
    """Codes of ``text`` in the given ``levels`` (numbers matched by value when ``decimal`` is given and every
    label and level is a number); anything else is an error naming the first unseen value."""
    known = np.asarray(levels, dtype=object)
    if decimal is not None and _parses(text, decimal).all() and _parses(known, decimal).all():
        values, reference = _numbers(text, decimal), _numbers(known, decimal)
        matches = values[:, np.newaxis] == reference[np.newaxis, :]
        codes = np.argmax(matches, axis=1)
        unseen = ~matches.any(axis=1)
    else:
        codes = pd.Index(list(levels), dtype=object).get_indexer(pd.Index(text, dtype=object)).astype(np.int64)
        unseen = codes < 0
    if unseen.any():
        row = int(np.argmax(unseen))
        raise ValueError(
            f"CSV file {file}: {what} {str(text[row])!r} at line {row + 2}, column {column!r} was not seen "
            f"in training (known: {list(levels)}); drop those rows or refit with them"
        )
    return codes
