"""Read a labelled CSV file into a :class:`~data.dataset.Dataset`."""

from __future__ import annotations

import codecs
import csv
import hashlib
import io
import os
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from bayesclass._lazy import lazy_import
from bayesclass.data.dataset import Dataset, FeatureKind

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_import("pandas")

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


#: rows per chunk of :func:`read_csv_chunks` by default (about 60 MB of cells as Python strings for 30 columns)
CSV_CHUNK_ROWS = 10_000


@dataclass(frozen=True)
class CsvChunk:
    """Consecutive rows of a CSV file read by :func:`read_csv_chunks`.

    Attributes
    ----------
    X : numpy.ndarray
        float64 (rows, features): the requested feature columns in the requested order, text
        columns coded by the training levels.
    y : numpy.ndarray or None
        Class codes of the target column (by the training class names), when a target was given.
    lines : numpy.ndarray
        The file line (1-based, as an editor counts) where each row starts.
    """

    X: np.ndarray
    y: np.ndarray | None
    lines: np.ndarray

    def __len__(self) -> int:
        return len(self.lines)


def read_csv_chunks(
    path: str | os.PathLike[str],
    *,
    feature_names: tuple[str, ...],
    category_names: Mapping[str, tuple[str, ...]] | None = None,
    target: str | None = None,
    class_names: tuple[str, ...] | None = None,
    csv_format: CsvFormat | None = None,
    chunk_rows: int = CSV_CHUNK_ROWS,
) -> Iterator[CsvChunk]:
    """Read the columns ``feature_names`` (and ``target``) of a CSV file of any size, ``chunk_rows`` rows at a time.

    The streaming counterpart of :func:`features_from_csv` / :func:`load_csv` for new data of a
    fitted model: the same format (``csv_format``: delimiter detected from the first lines or
    given, decimal mark, encoding), the same blank-line and blank-cell rules and the same coding
    of text columns by the training levels (``category_names``) and of labels by the training
    class names, but memory is bounded by one chunk, not by the file. Rows are parsed by the
    standard :mod:`csv` module (quotes respected), which numbers lines exactly; numbers are
    converted by pandas as in :func:`load_csv`. Columns not requested are not converted (nor
    checked, except that every row has the header's number of cells).

    Parameters
    ----------
    path : str or PathLike
        The CSV file, with a header row.
    feature_names : tuple of str
        The fitted feature columns, in the model's order; other columns are ignored.
    category_names : Mapping[str, tuple[str, ...]], optional
        The training levels of the text columns (a result's ``category_names`` attr).
    target : str, optional
        A label column to read as well (coded by ``class_names``).
    class_names : tuple of str, optional
        The fitted classes; required with ``target``.
    csv_format : CsvFormat, optional
        Delimiter, decimal mark and encoding.
    chunk_rows : int
        Rows per chunk.

    Yields
    ------
    CsvChunk
        Consecutive rows, with the file line of each.

    Raises
    ------
    ValueError
        Raised before the first chunk: a missing file, no header, a header without data rows,
        duplicate or empty column names, a requested column that is not in the header (the
        columns are listed). Raised at the chunk where it occurs, with its line: a row with
        another number of cells than the header (a ragged row), a missing cell, text in a column
        fitted as numbers (or numbers with the other decimal mark), a value that is not finite,
        a level or label not seen in training (value, column and line named), text that is not
        in the declared encoding.
    """
    if isinstance(chunk_rows, bool) or not isinstance(chunk_rows, (int, np.integer)) or chunk_rows < 1:
        raise ValueError(f"chunk_rows must be a positive integer (rows per chunk), got {chunk_rows!r}")
    if target is not None and class_names is None:
        raise ValueError("class_names (the fitted classes) must be given with target, to code the labels")
    csv_format = csv_format or CsvFormat()
    file = Path(path).expanduser().resolve()
    if not file.is_file():
        raise ValueError(f"path {str(path)!r} is not an existing file (resolved to {file}); check the file name")
    codec = _codec(csv_format.encoding)
    known = dict(category_names or {})
    previous_limit = csv.field_size_limit(2**31 - 1)  # fields of any length, as pandas
    try:
        with open(file, encoding=codec, newline="") as stream:
            rows = _CsvRows(file, stream, csv_format)
            positions = _column_positions(rows, [*feature_names, *([target] if target is not None else [])], target)
            n_read = 0
            while True:
                cells, lines = rows.take(chunk_rows)
                if not lines:
                    break
                n_read += len(lines)
                columns = list(zip(*cells, strict=True))
                X = _chunk_features(columns, lines, positions, feature_names, known, file, csv_format.decimal)
                y = None
                if target is not None:
                    assert class_names is not None  # checked above, before the first chunk
                    labels = _stripped(np.asarray(columns[positions[target]], dtype=object), file, target, lines)
                    y = _codes_of(
                        labels,
                        tuple(class_names),
                        file=file,
                        column=target,
                        what="label",
                        decimal=csv_format.decimal,
                        lines=lines,
                    ).astype(np.int64)
                yield CsvChunk(X=X, y=y, lines=np.asarray(lines, dtype=np.int64))
            if n_read == 0:
                raise ValueError(
                    f"CSV file {file} has a header but no data rows; it needs at least one data row to predict"
                )
    except UnicodeDecodeError as error:
        raise ValueError(
            f"CSV file {file} is not {csv_format.encoding} text ({error.reason} at byte {error.start} of a block); "
            "pass its encoding, e.g. encoding='latin-1' (--encoding latin-1 on the command line)"
        ) from None
    finally:
        csv.field_size_limit(previous_limit)


def _column_positions(rows: _CsvRows, wanted: list[str], target: str | None) -> dict[str, int]:
    """Read the header of ``rows``; the position of every ``wanted`` column in it (a missing one is an error)."""
    header = rows.header()
    absent = [column for column in wanted if column not in header]
    if absent:
        what = "fitted feature column(s)" if target is None or absent != [target] else "target column"
        raise ValueError(
            f"CSV file {rows.file} lacks the {what} {absent}; its columns are {header}"
            f"{_delimiter_hint(header, rows.delimiter)}"
        )
    return {column: header.index(column) for column in wanted}


def _chunk_features(
    columns: list[tuple[str, ...]],
    lines: list[int],
    positions: Mapping[str, int],
    feature_names: tuple[str, ...],
    known: Mapping[str, tuple[str, ...]],
    file: Path,
    decimal: str,
) -> np.ndarray:
    """The feature columns of one chunk as float64 (rows, features): text columns coded by their ``known`` levels."""
    X = np.empty((len(lines), len(feature_names)))
    for j, column in enumerate(feature_names):  # the columns of a file, not a model loop
        text = np.asarray(columns[positions[column]], dtype=object)
        if column in known:
            text = _stripped(text, file, column, lines)
            X[:, j] = _codes_of(text, tuple(known[column]), file=file, column=column, what="level", lines=lines)
        else:
            X[:, j] = _numeric_column(text, file, column, lines, decimal)
    return X


def count_csv_rows(path: str | os.PathLike[str]) -> int:
    """The number of non-blank lines after the first non-blank one (the header).

    These are the data rows of a CSV file whose cells hold no line breaks (an estimate otherwise), for progress
    bars. Reads the file once, in blocks.
    """
    count = 0
    with open(Path(path).expanduser(), "rb") as stream:
        for line in stream:
            if line.strip():
                count += 1
    return max(count - 1, 0)


def _codec(encoding: str) -> str:
    codec = "utf-8-sig" if encoding.lower().replace("_", "-") in ("utf-8", "utf8") else encoding
    try:
        codecs.lookup(codec)
    except LookupError:
        raise ValueError(
            f"encoding {encoding!r} is not a known text encoding; pass e.g. 'utf-8' or 'latin-1'"
        ) from None
    return codec


class _CsvRows:
    """The records of an open CSV text stream, with the line where each starts (blank lines skipped)."""

    def __init__(self, file: Path, stream, csv_format: CsvFormat) -> None:
        self.file = file
        head = stream.read(65536)
        stream.seek(0)
        self.delimiter = _delimiter(head, csv_format.delimiter)
        self.reader = csv.reader(stream, delimiter=self.delimiter)
        self.last_line = 0  # the line where the previous record ended
        self.width = 0

    def _next(self) -> tuple[list[str], int] | None:
        for record in self.reader:
            start = self.last_line + 1
            self.last_line = self.reader.line_num
            if record:  # a blank line is an empty record: skipped, as pandas does
                return record, start
        return None

    def header(self) -> list[str]:
        found = self._next()
        if found is None:
            raise ValueError(f"CSV file {self.file} has no header; it needs a header row and at least one data row")
        header = [cell.strip() for cell in found[0]]
        if len(set(header)) != len(header) or "" in header:
            raise ValueError(
                f"CSV file {self.file} has empty or duplicate column names {header}; give each column a unique name"
            )
        self.width = len(header)
        return header

    def take(self, n: int) -> tuple[list[list[str]], list[int]]:
        """Up to ``n`` records and their lines; a record of another width than the header is an error."""
        cells: list[list[str]] = []
        lines: list[int] = []
        while len(lines) < n:
            found = self._next()
            if found is None:
                break
            record, line = found
            if len(record) != self.width:
                raise ValueError(
                    f"CSV file {self.file}: line {line} has {len(record)} cells but the header has {self.width}; "
                    f"fix the row (quote cells that contain the delimiter {self.delimiter!r})"
                )
            cells.append(record)
            lines.append(line)
        return cells, lines


def _delimiter_hint(header: list[str], delimiter: str) -> str:
    if len(header) == 1:
        others = [mark for mark in DELIMITERS if mark != delimiter and mark in header[0]]
        if others:
            return (
                f" (one column named {header[0]!r}: the file seems delimited by {others[0]!r}; "
                f"pass delimiter={others[0]!r}, --delimiter on the command line)"
            )
    return ""


def _stripped(text: np.ndarray, file: Path, column: str, lines: list[int]) -> np.ndarray:
    """Cells stripped of surrounding blanks; a missing cell (:data:`MISSING_TOKENS`) is an error naming its line."""
    stripped = pd.Series(text, dtype=object).str.strip()
    missing = stripped.str.lower().isin(MISSING_TOKENS).to_numpy()
    if missing.any():
        row = int(np.argmax(missing))
        raise ValueError(
            f"CSV file {file}: missing value {str(stripped.iat[row])!r} at line {lines[row]}, column {column!r}; "
            "remove the row or impute the value before loading"
        )
    return stripped.to_numpy(dtype=object)


def _numeric_column(text: np.ndarray, file: Path, column: str, lines: list[int], decimal: str) -> np.ndarray:
    """The cells of a column fitted as numbers, as float64.

    The first cell that is not a finite number under the decimal mark ``decimal`` is an error saying why
    (missing, text, the other decimal mark, not finite).
    """
    numbers = _numbers(text, decimal)
    bad = ~np.isfinite(numbers)
    if not bad.any():
        return numbers
    row = int(np.argmax(bad))
    cell = str(text[row]).strip()
    where = f"at line {lines[row]}, column {column!r}"
    if cell.lower() in MISSING_TOKENS:
        raise ValueError(
            f"CSV file {file}: missing value {cell!r} {where}; remove the row or impute the value before loading"
        )
    if _parses(np.array([cell], dtype=object), decimal)[0]:
        raise ValueError(f"CSV file {file}: value {cell!r} {where} is not finite; fix or remove the row")
    other = "," if decimal == "." else "."
    if _parses(np.array([cell], dtype=object), other)[0]:
        raise ValueError(
            f"CSV file {file}: value {cell!r} {where} is a number written with the decimal mark {other!r}; "
            f"pass decimal={other!r} (--decimal '{other}' on the command line)"
        )
    raise ValueError(
        f"CSV file {file}: column {column!r} holds text ({cell!r} {where}) but the model was fitted on numbers "
        "in it; give the numeric values"
    )


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
) -> tuple[np.ndarray, tuple[FeatureKind, ...], dict[str, tuple[str, ...]]]:
    columns: list[np.ndarray] = []
    kinds: list[FeatureKind] = []
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
    text: np.ndarray,
    levels: tuple[str, ...],
    *,
    file: Path,
    column: str,
    what: str,
    decimal: str | None = None,
    lines: list[int] | None = None,
) -> np.ndarray:
    """Codes of ``text`` in the given ``levels``.

    Numbers are matched by value when ``decimal`` is given and every label and level is a number; anything
    else is an error naming the first unseen value and its line (``lines[row]``, or ``row + 2`` for a whole
    file without blank lines).
    """
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
            f"CSV file {file}: {what} {str(text[row])!r} at line {row + 2 if lines is None else lines[row]}, "
            f"column {column!r} was not seen "
            f"in training (known: {list(levels)}); drop those rows or refit with them"
        )
    return codes
