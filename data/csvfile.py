"""Read a labelled CSV file into a :class:`~data.dataset.Dataset`."""

from __future__ import annotations

import codecs
import csv
import hashlib
import io
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from bayesclass._lazy import lazy_import
from bayesclass.data.arguments import spelled
from bayesclass.data.dataset import Dataset, FeatureKind
from bayesclass.data.origin import MissingPolicy
from bayesclass.data.table import (
    DEFAULT_MAX_LEVELS,
    MISSING_TOKENS,
    TableOptions,
    TableSource,
    code_new_rows,
    code_table,
)

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_import("pandas")

__all__ = [
    "CSV_CHUNK_ROWS",
    "MISSING_TOKENS",
    "CsvChunk",
    "CsvFormat",
    "count_csv_rows",
    "features_from_csv",
    "load_csv",
    "read_csv_chunks",
]

#: delimiters tried when none is given (``delimiter=None``)
DELIMITERS = ",;\t|"


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


def load_csv(
    path: str | os.PathLike[str],
    *,
    target: str,
    name: str | None = None,
    category_names: Mapping[str, tuple[str, ...]] | None = None,
    class_names: tuple[str, ...] | None = None,
    feature_kinds: Mapping[str, FeatureKind] | None = None,
    csv_format: CsvFormat | None = None,
    features: Sequence[str] | str | None = None,
    missing: MissingPolicy = "error",
    max_levels: int = DEFAULT_MAX_LEVELS,
) -> Dataset:
    """Load a CSV file with a header row; column ``target`` holds the class labels.

    Parsing is done by pandas' C parser, every cell read as text (delimiter detected
    or given, decimal mark and encoding given by ``csv_format``; UTF-8 with or without
    a byte-order mark by default; blank lines skipped; cells stripped of surrounding
    blanks; fields of any length; memory proportional to the file). The cells are then
    typed and coded by the one coder of every table (:mod:`bayesclass.data.table`, as
    :meth:`Dataset.from_frame`): each used non-target column becomes one feature:

    * all cells numbers (under the declared decimal mark) -> ``"continuous"``, or
      ``"binary"`` if every value is 0 or 1;
    * text -> codes of the SORTED distinct levels, which are recorded in
      ``category_names``: two levels -> ``"binary"`` (``no``=0, ``yes``=1 as in
      seed 003, transport table), otherwise ``"categorical"``. A text column that
      would be numbers with the other decimal mark is an error naming ``decimal``;
      one with as many levels as rows gets a warning (an identifier is no category);
      one with more than ``max_levels`` levels is refused.

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
        Declared kinds of some columns, overriding the inferred ones: e.g. ``{"smoker": "continuous"}``
        for a 0/1 dummy that should be standardised, ``{"year": "categorical"}`` for numbers that are
        levels (coded by their distinct values).
    csv_format : CsvFormat, optional
        Delimiter, decimal mark and encoding (default: detected delimiter, ``"."``, UTF-8).
    features : sequence of str or str, optional
        The feature columns to use, in order (default: every column but the target).
    missing : {"error", "drop"}
        A blank cell (empty, ``NA``, ``N/A``, ``nan``) in a used column (the target or a feature): refuse the
        file, counting the blanks of every such column (default), or drop its row (recorded in
        ``Dataset.missing``). Blanks in other columns are ignored.
    max_levels : int
        The most levels a categorical column may have (default 50).

    Returns
    -------
    Dataset
        With ``provenance = "CSV file <absolute path> (sha256 <first 12 hex digits>)"``.

    Raises
    ------
    ValueError
        Missing file; no header or no data rows; ragged rows; duplicate column
        names; ``target`` not a column (the columns are listed); blank cells in used
        columns (counted per column, each with its first line); a column that
        mixes numbers and text; a level or label outside the given schema.
    """
    options = TableOptions(missing=missing, max_levels=max_levels)
    if not isinstance(target, str) or not target:
        raise ValueError(
            f"target must be the name of the class column, got {target!r}; pass {spelled('target', metavar='COLUMN')}"
        )
    table = _read_table(path, csv_format or CsvFormat())
    if target not in table.header:
        raise ValueError(
            f"target column {target!r} is not in CSV file {table.file}; its columns are {table.header}"
            f"{table.delimiter_hint()}; pass {spelled('target', metavar='COLUMN')}"
        )
    coded = code_table(
        table.cells,
        target=target,
        features=features,
        feature_kinds=feature_kinds,
        options=options,
        category_names=category_names,
        class_names=class_names,
        source=table.source(table.file.stem if name is None else name),
    )
    return Dataset.from_coded_table(
        coded,
        name=table.file.stem if name is None else name,
        description=f"{len(coded.y)} rows of {table.file.name}, classes from column {target!r}",
        provenance=f"CSV file {table.file} (sha256 {hashlib.sha256(table.raw).hexdigest()[:12]})",
    )


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

    Parameters
    ----------
    path : str or PathLike
        The CSV file.
    feature_names : tuple of str
        The fitted features.
    category_names : Mapping[str, tuple[str, ...]], optional
        The training levels of the coded columns.
    csv_format : CsvFormat, optional
        Delimiter, decimal mark and encoding.

    Returns
    -------
    numpy.ndarray
        float64 (rows, features).
    """
    table = _read_table(path, csv_format or CsvFormat())
    absent = [column for column in feature_names if column not in table.header]
    if absent:
        raise ValueError(
            f"CSV file {table.file} lacks the fitted feature column(s) {absent}; its columns are {table.header}"
        )
    rows = code_new_rows(
        table.cells, feature_names=feature_names, category_names=category_names or {}, source=table.source()
    )
    return rows.X


#: rows per chunk of :func:`read_csv_chunks` by default (about 60 MB of cells as Python strings for 30 columns)
CSV_CHUNK_ROWS = 10_000


@dataclass(frozen=True)
class CsvChunk:
    """Consecutive rows of a CSV file read by :func:`read_csv_chunks`.

    Parameters
    ----------
    X : numpy.ndarray
        float64 (rows, features): the requested feature columns in the requested order, text
        columns coded by the training levels; NaN in a blank cell (``missing="drop"``).
    y : numpy.ndarray or None
        Class codes of the target column (by the training class names), when a target was given;
        -1 where the label is blank (``missing="drop"``).
    lines : numpy.ndarray
        The file line (1-based, as an editor counts) where each row starts.
    complete : numpy.ndarray of bool
        Which rows have every feature (all of them under ``missing="error"``).
    extras : dict of str to numpy.ndarray
        The cells (stripped text) of the ``extra_columns`` asked for, e.g. an id column.
    """

    X: np.ndarray
    y: np.ndarray | None
    lines: np.ndarray
    complete: np.ndarray = field(default_factory=lambda: np.ones(0, dtype=bool))
    extras: dict[str, np.ndarray] = field(default_factory=dict)

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
    missing: MissingPolicy = "error",
    extra_columns: Sequence[str] = (),
) -> Iterator[CsvChunk]:
    """Read the columns ``feature_names`` (and ``target``) of a CSV file of any size, ``chunk_rows`` rows at a time.

    The streaming counterpart of :func:`features_from_csv` / :func:`load_csv` for new data of a
    fitted model: the same format (``csv_format``: delimiter detected from the first lines or
    given, decimal mark, encoding), the same blank-line and blank-cell rules and the same coding
    of text columns by the training levels (``category_names``) and of labels by the training
    class names (:func:`bayesclass.data.table.code_new_rows`), but memory is bounded by one chunk,
    not by the file. Rows are parsed by the standard :mod:`csv` module (quotes respected), which
    numbers lines exactly. Columns not requested are not converted (nor checked, except that every
    row has the header's number of cells).

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
    missing : {"error", "drop"}
        A blank feature cell: an error naming its line (default), or the row marked incomplete
        (``CsvChunk.complete``); a blank label is then -1.
    extra_columns : sequence of str
        Columns whose cells are passed through as text (``CsvChunk.extras``), e.g. an id column.

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
        another number of cells than the header (a ragged row), a missing cell (under
        ``missing="error"``), text in a column fitted as numbers (or numbers with the other decimal
        mark), a value that is not finite, a level or label not seen in training (value, column and
        line named), text that is not in the declared encoding.
    """
    if isinstance(chunk_rows, bool) or not isinstance(chunk_rows, (int, np.integer)) or chunk_rows < 1:
        raise ValueError(f"chunk_rows must be a positive integer (rows per chunk), got {chunk_rows!r}")
    if target is not None and class_names is None:
        raise ValueError("class_names (the fitted classes) must be given with target, to code the labels")
    TableOptions(missing=missing)
    csv_format = csv_format or CsvFormat()
    file = Path(path).expanduser().resolve()
    if not file.is_file():
        raise ValueError(f"path {str(path)!r} is not an existing file (resolved to {file}); check the file name")
    codec = _codec(csv_format.encoding)
    wanted = list(dict.fromkeys([*feature_names, *([target] if target is not None else []), *extra_columns]))
    previous_limit = csv.field_size_limit(2**31 - 1)  # fields of any length, as pandas
    try:
        with open(file, encoding=codec, newline="") as stream:
            rows = _CsvRows(file, stream, csv_format)
            positions = _column_positions(rows, feature_names, target, extra_columns)
            n_read = 0
            while True:
                cells, lines = rows.take(chunk_rows)
                if not lines:
                    break
                n_read += len(lines)
                columns = list(zip(*cells, strict=True))
                frame = pd.DataFrame(
                    {name: np.asarray(columns[positions[name]], dtype=object) for name in wanted}, dtype=object
                )
                coded = code_new_rows(
                    frame,
                    feature_names=feature_names,
                    category_names=category_names or {},
                    target=target,
                    class_names=class_names,
                    missing=missing,
                    source=TableSource(f"CSV file {file}", np.asarray(lines, dtype=np.int64), csv_format.decimal),
                )
                extras = {name: frame[name].str.strip().to_numpy(dtype=object) for name in extra_columns}
                yield CsvChunk(
                    X=coded.X, y=coded.y, lines=np.asarray(lines, dtype=np.int64), complete=coded.complete,
                    extras=extras,
                )  # fmt: skip
            if n_read == 0:
                raise ValueError(
                    f"CSV file {file} has a header but no data rows; it needs at least one data row to predict"
                )
    except UnicodeDecodeError as error:
        raise ValueError(
            f"CSV file {file} is not {csv_format.encoding} text ({error.reason} at byte {error.start} of a block); "
            f"pass its encoding, e.g. {spelled('encoding', 'latin-1', owner='CsvFormat')}"
        ) from None
    finally:
        csv.field_size_limit(previous_limit)


def _column_positions(
    rows: _CsvRows, features: Sequence[str], target: str | None, extra_columns: Sequence[str]
) -> dict[str, int]:
    """Read the header of ``rows``; the position of every column asked for in it (a missing one is an error)."""
    header = rows.header()
    refuse_absent_columns(
        f"CSV file {rows.file}", header, features, target, extra_columns, _delimiter_hint(header, rows.delimiter)
    )
    return {column: header.index(column) for column in [*features, *([target] if target else []), *extra_columns]}


def refuse_absent_columns(
    label: str, header: Sequence[str], features: Sequence[str], target: str | None, extra_columns: Sequence[str],
    hint: str = "",
) -> None:  # fmt: skip
    """Refuse a table lacking a column asked for, each named by its role: fitted feature, target or extra column.

    Parameters
    ----------
    label : str
        How the message names the table, e.g. ``"CSV file /data/new.csv"``.
    header : sequence of str
        The table's column names.
    features : sequence of str
        The fitted feature columns.
    target : str or None
        The label column asked for (``target=``, ``--target``).
    extra_columns : sequence of str
        Columns copied to the output (``id_column=``, ``--id-column``).
    hint : str, default ""
        Appended to the message (e.g. a delimiter hint).

    Raises
    ------
    ValueError
        Naming the absent columns by role, and the table's columns.
    """
    lacking = [name for name in features if name not in header]
    absent = [f"the fitted feature column(s) {lacking}"] if lacking else []
    if target and target not in header:
        absent.append(f"the target column ({spelled('target', target)})")
    absent += [f"the id column ({spelled('id_column', name)})" for name in extra_columns if name not in header]
    if absent:
        raise ValueError(f"{label} lacks {' and '.join(absent)}; its columns are {list(header)}{hint}")


def count_csv_rows(path: str | os.PathLike[str]) -> int:
    """The number of non-blank lines after the first non-blank one (the header).

    These are the data rows of a CSV file whose cells hold no line breaks (an estimate otherwise), for progress
    bars. Reads the file once, in blocks.

    Parameters
    ----------
    path : str or PathLike
        The CSV file.

    Returns
    -------
    int
        The number of data rows (an estimate when a quoted cell holds a line break).
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
            raise ValueError(_header_error(self.file, header))
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
                f"pass {spelled('delimiter', others[0], owner='CsvFormat')})"
            )
    return ""


@dataclass(frozen=True)
class _Table:
    file: Path
    raw: bytes
    header: list[str]
    cells: pd.DataFrame  # (rows, columns) of text, object dtype: memory proportional to the file
    delimiter: str
    decimal: str
    lines: np.ndarray  # the file line (1-based) where each row starts

    def source(self, name: str = "") -> TableSource:
        return TableSource(f"CSV file {self.file}", self.lines, self.decimal, name or self.file.stem)

    def delimiter_hint(self) -> str:
        """A hint when the only column looks like a whole line of another delimiter."""
        return _delimiter_hint(self.header, self.delimiter)


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
            f"pass its encoding, e.g. {spelled('encoding', 'latin-1', owner='CsvFormat')}"
        ) from None


def _delimiter(text: str, given: str | None) -> str:
    if given is not None:
        return given
    sample = "\n".join(line for line in text[:65536].splitlines()[:50] if line.strip())
    try:
        return csv.Sniffer().sniff(sample, delimiters=DELIMITERS).delimiter
    except csv.Error:
        return ","


def _record_lines(file: Path, text: str, delimiter: str, width: int) -> np.ndarray:
    """The line (1-based) where each data record starts (quotes respected); a ragged record is an error."""
    previous = csv.field_size_limit(2**31 - 1)  # fields of any length
    starts: list[int] = []
    try:
        rows = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
        end, header_seen = 0, False
        for row in rows:
            start, end = end + 1, rows.line_num
            if not row:
                continue
            if not header_seen:
                header_seen = True
                continue
            if len(row) != width:
                raise ValueError(
                    f"CSV file {file}: line {start} has {len(row)} cells but the header has {width}; "
                    f"fix the row (quote cells that contain the delimiter {delimiter!r})"
                )
            starts.append(start)
        return np.asarray(starts, dtype=np.int64)
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
        raise ValueError(_header_error(file, header))
    try:
        cells = pd.read_csv(
            io.StringIO(text),
            sep=delimiter,
            header=None,
            skiprows=1,
            names=list(range(len(header))),
            dtype=object,
            keep_default_na=False,
            na_filter=False,
            skip_blank_lines=True,
            engine="c",
        )
    except pd.errors.ParserError as error:  # a row with more cells than the header
        raise ValueError(f"CSV file {file}: {error}; the header has {len(header)} cells: fix the row") from None
    starts = _record_lines(file, text, delimiter, len(header))
    cells.columns = header
    if len(starts) != len(cells):  # a record pandas and the csv module split differently: count as pandas does
        starts = np.arange(2, len(cells) + 2, dtype=np.int64)
    return _Table(file, raw, header, cells, delimiter, csv_format.decimal, starts)


def _header_error(file: object, header: list[str]) -> str:
    """Why a header with an empty or repeated name is refused; a nameless first column is an index (pandas)."""
    if header and header[0] == "" and "" not in header[1:] and len(set(header)) == len(header):
        return (
            f"CSV file {file}: its first column has no name, as a row index written by pandas' DataFrame.to_csv; "
            "write the file with to_csv(..., index=False), or give the column a name in the header"
        )
    return f"CSV file {file} has empty or duplicate column names {header}; give each column a unique name"
