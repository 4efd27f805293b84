"""One door for tables: the cells of a pandas DataFrame typed and coded as a Dataset's columns.

Every table reaches a :class:`~bayesclass.data.Dataset` through this module: a DataFrame
(:meth:`Dataset.from_frame <bayesclass.data.Dataset.from_frame>`), a CSV or TSV file (read by pandas into a
DataFrame of text cells, :func:`~bayesclass.data.load_csv`), a parquet file (read by pyarrow), and the new rows
of a fitted model (:func:`code_new_rows`). So the same table gives the same Dataset whatever its container.

Typing, column by column (only the columns used: the target and the selected features)

* numbers (a numeric dtype, or text cells that all parse as numbers under the decimal mark) -> ``"continuous"``,
  or ``"binary"`` when every value is 0 or 1;
* text (an ``object``/``string`` dtype whose cells are not all numbers), ``bool`` and pandas ``category``
  dtypes -> levels: the sorted distinct values (an ordered ``category`` keeps its order; ``bool`` gives
  ``False``, ``True``), coded 0..L-1; two levels -> ``"binary"`` (the second level is 1), more ->
  ``"categorical"``;
* a column declared ``"categorical"`` (``feature_kinds``) that holds numbers is coded by its distinct values:
  levels are the sorted values written as text (``"2007"``, ``"2.5"``), never the values used as codes.

A categorical column with more than ``max_levels`` levels (default :data:`DEFAULT_MAX_LEVELS` = 50) is refused:
so many levels are usually an identifier or numbers read as text, and every level costs the discriminative
families a coefficient per class. Raise the limit (``max_levels=``, ``--max-levels``) when they are meant.

Missing cells: empty, ``NA``, ``N/A``, ``nan`` (any case, surrounding blanks ignored) and pandas' NA/NaN/None.
They are never imputed. ``missing="error"`` (default) refuses a table with one in a used column, counting the
blanks of every such column; ``missing="drop"`` drops those rows and records how many
(:class:`~bayesclass.data.origin.MissingRecord`).
"""

from __future__ import annotations

import decimal
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any

import numpy as np

from bayesclass._lazy import lazy_import
from bayesclass.data.arguments import spelled
from bayesclass.data.constraints import Constrained, Integer, PrintableText
from bayesclass.data.kinds import FeatureKind, check_feature_kinds
from bayesclass.data.origin import MissingPolicy, MissingRecord

if TYPE_CHECKING:
    import pandas as pd

else:
    pd = lazy_import("pandas")

__all__ = [
    "DEFAULT_MAX_LEVELS",
    "MISSING_TOKENS",
    "CodedTable",
    "NewRows",
    "TableOptions",
    "TableSource",
    "code_new_rows",
    "code_table",
]

MISSING_TOKENS = frozenset({"", "na", "n/a", "nan"})
"""Cell texts (case-insensitive, after stripping blanks) that mean "missing"; they are never imputed."""
#: the most levels a categorical column may have unless the caller raises the limit (``max_levels``)
DEFAULT_MAX_LEVELS = 50
#: a text column with as many levels as rows (and at least this many rows) is probably not a category
UNIQUE_LEVELS_WARNING_ROWS = 10


@dataclass(frozen=True)
class TableOptions(Constrained):
    """How a table is read: what to do with blank cells, and the most levels a categorical column may have.

    Parameters
    ----------
    missing : {"error", "drop"}
        ``"error"``: a blank cell in a used column refuses the table; ``"drop"``: its row is dropped.
    max_levels : int
        The most levels a categorical column may have (at least 2).
    """

    missing: MissingPolicy = "error"
    max_levels: Annotated[int, Integer(minimum=2)] = DEFAULT_MAX_LEVELS


@dataclass(frozen=True, eq=False)
class TableSource:
    """What a table is, for messages: ``"CSV file /x.csv"`` with the file line of each row, or ``"DataFrame"``.

    Parameters
    ----------
    label : str
        How messages name the table.
    lines : numpy.ndarray, optional
        The file line (1-based) of each row; messages then say ``line N``, else ``row i`` (0-based).
    decimal : {".", ","}
        The decimal mark of numbers written as text.
    name : str
        The data set's name, for messages about its columns (default: the label).
    first_row : int
        The position of the first row in the whole table (a chunk of a larger one), for ``row i``.
    """

    label: str = "DataFrame"
    lines: np.ndarray | None = None
    decimal: str = "."
    name: str = ""
    first_row: int = 0

    def where(self, row: int) -> str:
        """``"line N"`` or ``"row i"``.

        Parameters
        ----------
        row : int
            The row's position in the table.

        Returns
        -------
        str
            Where the row is, as a reader finds it.
        """
        return f"line {int(self.lines[row])}" if self.lines is not None else f"row {self.first_row + row}"

    def take(self, keep: np.ndarray) -> TableSource:
        """The source of the kept rows.

        Parameters
        ----------
        keep : numpy.ndarray of bool
            Which rows are kept.

        Returns
        -------
        TableSource
            With the lines of the kept rows.
        """
        positions = self.lines[keep] if self.lines is not None else np.flatnonzero(keep) + self.first_row
        kind = type(self) if self.lines is not None else _RowSource  # rows of a table keep saying "row i"
        return kind(self.label, positions, self.decimal, self.name)


@dataclass(frozen=True, eq=False)
class _RowSource(TableSource):
    """A TableSource whose ``lines`` hold row positions (kept rows of a table without file lines)."""

    def where(self, row: int) -> str:
        assert self.lines is not None
        return f"row {int(self.lines[row])}"


@dataclass(frozen=True, eq=False)
class CodedTable:
    """The coded columns of a table, ready to become a Dataset.

    Parameters
    ----------
    X : numpy.ndarray
        float64 (rows, features).
    y : numpy.ndarray
        int64 class codes.
    feature_names, class_names : tuple of str
        The features and classes.
    feature_kinds : tuple of str
        One kind per feature.
    category_names : dict of str to tuple of str
        The levels of every coded column, in code order.
    missing : MissingRecord
        What was done about blank cells.
    declared_kinds : dict of str to str
        The kinds the caller declared (``feature_kinds``), for the provenance.
    """

    X: np.ndarray
    y: np.ndarray
    feature_names: tuple[str, ...]
    class_names: tuple[str, ...]
    feature_kinds: tuple[FeatureKind, ...]
    category_names: dict[str, tuple[str, ...]]
    missing: MissingRecord = field(default_factory=MissingRecord)
    declared_kinds: Mapping[str, str] = field(default_factory=dict)


def _numbers(text: Any, decimal: str) -> np.ndarray:
    """The cells as float64, NaN where a cell is not a number under the decimal mark ``decimal``."""
    series = pd.Series(text, dtype=object)
    if decimal == ",":
        series = series.str.replace(",", ".", regex=False)
    return pd.to_numeric(series, errors="coerce").to_numpy(dtype=np.float64)


def _parses(text: Any, decimal: str) -> np.ndarray:
    """Which cells are numbers (``inf``/``nan`` spelled out count: they are then refused as not finite)."""
    numbers = _numbers(text, decimal)
    spelled = pd.Series(text, dtype=object).str.lower().isin(("nan", "+nan", "-nan"))
    return ~np.isnan(numbers) | spelled.to_numpy()


def number_text(value: float) -> str:
    """A number as a level name: ``2007.0`` -> ``"2007"``, ``0.1`` -> ``"0.1"`` (shortest round trip)."""
    return np.format_float_positional(float(value), trim="-")


@dataclass(frozen=True, eq=False)
class _Column:
    """One column's cells: as numbers, as text (stripped), or both (text cells that are numbers)."""

    name: str
    missing: np.ndarray
    numbers: np.ndarray | None = None
    text: np.ndarray | None = None
    cells: np.ndarray | None = None  # the cells as written (for messages), object
    order: tuple[str, ...] | None = None  # an ordered pandas category's level order
    fixed_text: bool = False  # bool/category dtype: levels, never parsed as numbers

    def take(self, keep: np.ndarray) -> _Column:
        def cut(array):
            return None if array is None else array[keep]

        return _Column(
            self.name, self.missing[keep], cut(self.numbers), cut(self.text), cut(self.cells), self.order,
            self.fixed_text,
        )  # fmt: skip


#: what a column of another type holds, and how to make it numbers or text first (by pandas' inferred type)
_UNREADABLE = {
    "datetime": ("dates/times", "convert them to numbers (e.g. days since a reference date) or to text first"),
    "date": ("dates", "convert them to numbers (e.g. days since a reference date) or to text first"),
    "time": ("times of day", "convert them to numbers (e.g. seconds since midnight) or to text first"),
    "period": ("periods", "convert them to numbers or to text first"),
    "timedelta": ("durations", "convert them to numbers first, e.g. column.dt.total_seconds()"),
    "complex": ("complex numbers", "split them into two numeric columns first (numpy.real, numpy.imag)"),
    "bytes": ("bytes", "decode them to text first, e.g. column.str.decode('utf-8')"),
    "interval": ("intervals", "convert them to numbers (e.g. their midpoints) or to text first"),
    "mixed": (
        "values that are not numbers, text or booleans",
        "split lists, arrays and records into one column per element, or write them as text first",
    ),
}
#: the Python types of the cells of an object column that the table reads (numbers, text, booleans)
_READABLE_CELLS = (str, bool, int, float, np.bool_, np.integer, np.floating, decimal.Decimal)


def _refuse_unreadable(series: pd.Series, name: str, source: TableSource) -> None:
    """Refuse a column of another type than numbers, text, categories or booleans, naming it, its type and the fix.

    Dates, durations, complex numbers, bytes, lists, arrays and records (parquet structs and nested lists) would
    otherwise be coded silently as text levels, or lose their imaginary part.
    """
    dtype = series.dtype
    if pd.api.types.is_bool_dtype(dtype) or isinstance(dtype, pd.CategoricalDtype):
        return
    if pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_complex_dtype(dtype):
        return
    inferred = pd.api.types.infer_dtype(series, skipna=True).removesuffix("64")
    present = series.notna().to_numpy()
    if inferred in ("mixed", "mixed-integer"):  # text and numbers mixed, or cells of other types
        present = present & ~series.map(lambda cell: isinstance(cell, _READABLE_CELLS)).to_numpy(dtype=bool)
        inferred = "mixed"
    if pd.api.types.is_object_dtype(dtype) and inferred in (
        "string",
        "mixed",
    ):  # a lone surrogate (pandas' string dtype holds none)
        lone = series.str.contains("[\ud800-\udfff]", regex=True, na=False).to_numpy(dtype=bool)
        if lone.any():
            row = int(np.argmax(lone))
            PrintableText(what="cell").check(
                series.iloc[row], argument=f"{source.label}, column {name!r}, {source.where(row)}"
            )
    if inferred not in _UNREADABLE or not present.any():
        return
    kind, row = inferred, int(np.argmax(present))
    what, fix = _UNREADABLE[kind]
    cell = series.iloc[row]
    raise ValueError(
        f"{source.label}: column {name!r} holds {what} (dtype {dtype}, e.g. {type(cell).__name__} {str(cell)[:40]!r} "
        f"at {source.where(row)}); bayesclass reads numbers, text, categories and booleans: {fix}"
    )


def _read_column(series: pd.Series, name: str, source: TableSource) -> _Column:
    """Type one column (see the module docstring); blanks are marked, not refused, here."""
    _refuse_unreadable(series, name, source)
    dtype = series.dtype
    absent = series.isna().to_numpy()
    if pd.api.types.is_bool_dtype(dtype) or isinstance(dtype, pd.CategoricalDtype):
        order = None
        if isinstance(dtype, pd.CategoricalDtype):
            labels = [_level_text(category) for category in dtype.categories]
            order = tuple(labels) if dtype.ordered else None
            text = np.asarray(labels, dtype=object)[np.where(absent, 0, series.cat.codes.to_numpy())]
        else:
            text = series.astype(object).where(~absent, "").map(str).to_numpy(dtype=object)
        text = np.where(absent, "", text).astype(object)
        return _Column(name, absent, text=text, cells=text, order=order, fixed_text=True)
    if pd.api.types.is_numeric_dtype(dtype):
        numbers = series.to_numpy(dtype=np.float64, na_value=np.nan)
        cells = series.to_numpy(dtype=object)  # as the dtype writes them: 1 (int), 1.0 (float), as a CSV file holds
        return _Column(name, absent | np.isnan(numbers), numbers=numbers, cells=cells)
    cells = series.astype(object).where(~absent, "").map(str).to_numpy(dtype=object)
    text = pd.Series(cells, dtype=object).str.strip()
    missing = absent | text.str.lower().isin(MISSING_TOKENS).to_numpy()
    text = text.to_numpy(dtype=object)
    present = ~missing
    if not present.any():
        return _Column(name, missing, text=text, cells=text)
    parses = _parses(text, source.decimal) & present
    if parses[present].all():
        return _Column(name, missing, numbers=_numbers(text, source.decimal), text=text, cells=text)
    if parses.any():
        number, word = int(np.argmax(parses)), int(np.argmax(present & ~parses))
        raise ValueError(
            f"{source.label}: column {name!r} mixes text and numbers (text {str(text[word])!r} at "
            f"{source.where(word)}, a number {str(text[number])!r} at {source.where(number)}); make the column all "
            "numbers (correct the text cell) or all text labels"
        )
    other = "," if source.decimal == "." else "."
    if _parses(text[present], other).all():
        first = text[present][0]
        raise ValueError(
            f"{source.label}: column {name!r} holds numbers written with the decimal mark {other!r} (e.g. "
            f"{str(first)!r}); pass {spelled('decimal', other, owner='CsvFormat')}"
        )
    return _Column(name, missing, text=text, cells=text)


def _level_text(value: object) -> str:
    """A category's name: numbers written as :func:`number_text`, the rest as ``str``."""
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_)):
        return number_text(float(value))
    return str(value)


_RENAME = "rename it without control characters (they are invisible and break the HTML/SVG report)"
_RELABEL = "replace the control characters in the column's cells (they are invisible and break the HTML/SVG report)"


def _printable_levels(levels: Sequence[str], column: str, what: str, source: TableSource) -> None:
    """Refuse a class label or category level holding a control character, naming it and its column."""
    text = PrintableText(what=what, fix=_RELABEL)
    for level in levels:
        text.check(level, argument=f"{source.label}, column {column!r}")


def _header(frame: object, source: TableSource) -> list[str]:
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"frame must be a pandas DataFrame, got {type(frame).__name__}; e.g. pandas.read_csv(path)")
    header = list(frame.columns)
    bad = [column for column in header if not isinstance(column, str) or not column.strip()]
    if bad:
        raise ValueError(
            f"{source.label} has column names that are not non-empty text: {bad[:5]}; rename them, e.g. "
            "frame.columns = [str(c) for c in frame.columns]"
        )
    for column in header:
        PrintableText(what="column name", fix=_RENAME).check(column, argument=source.label)
    if len(set(header)) != len(header):
        repeated = sorted({column for column in header if header.count(column) > 1})
        raise ValueError(f"{source.label} repeats the column name(s) {repeated}; give each column a unique name")
    if len(frame) == 0:
        raise ValueError(f"{source.label} has no rows; it needs at least one data row")
    return header


def _used_features(
    features: Sequence[str] | str | None, header: list[str], target: str, source: TableSource, *, fitted: bool = False
):
    """The feature columns of a table: ``features`` (the user's choice, or with ``fitted`` a fit's), checked."""
    if features is None:
        chosen = [column for column in header if column != target]
        if not chosen:
            raise ValueError(
                f"{source.label} has only the target column {target!r}; it needs at least one feature column"
            )
        return chosen
    if isinstance(features, str):
        features = [part.strip() for part in features.split(",") if part.strip()]
    chosen = [str(feature) for feature in features]
    unknown = [feature for feature in chosen if feature not in header]
    if unknown and fitted:  # the columns of a fit, not a choice the user made: name what the table lacks
        raise ValueError(f"{source.label} lacks the fitted feature column(s) {unknown}; its columns are {header}")
    if not chosen or unknown or target in chosen or len(set(chosen)) != len(chosen):
        raise ValueError(
            f"{spelled('features', chosen)} must name distinct columns of {source.label} other than the target "
            f"{target!r} (unknown: {unknown}); its columns are {header}"
        )
    return chosen


def _blanks(columns: dict[str, _Column], source: TableSource) -> str:
    """The blank cells of ``columns``, each column counted with its first blank (``""`` where there are none)."""
    blanks = {name: column.missing for name, column in columns.items() if column.missing.any()}
    if not blanks:
        return ""
    parts = []
    for name, blank in blanks.items():
        row = int(np.argmax(blank))
        parts.append(
            f"column {name!r} {int(blank.sum())} (first: {_blank_cell(columns[name], row)} at {source.where(row)})"
        )
    total = sum(int(blank.sum()) for blank in blanks.values())
    return f"{source.label} has {total} blank cell(s) in the columns used: {', '.join(parts)}"


def _blank_cell(column: _Column, row: int) -> str:
    """``"blank cell"``, with its text where it is a token such as ``'NA'`` (an empty cell or NaN is just blank)."""
    cell = column.cells[row] if column.cells is not None else None
    return f"blank cell {cell.strip()!r}" if isinstance(cell, str) and cell.strip() else "blank cell"


def code_table(
    frame: pd.DataFrame,
    *,
    target: str,
    features: Sequence[str] | str | None = None,
    feature_kinds: Mapping[str, FeatureKind] | None = None,
    options: TableOptions | None = None,
    category_names: Mapping[str, Sequence[str]] | None = None,
    class_names: Sequence[str] | None = None,
    source: TableSource | None = None,
) -> CodedTable:
    """Type and code the target and features of a table (see the module docstring).

    Parameters
    ----------
    frame : pandas.DataFrame
        The table, one row per observation.
    target : str
        The class column.
    features : sequence of str or str, optional
        The feature columns, in order (a comma-separated string is split); default every column but the target.
    feature_kinds : Mapping[str, FeatureKind], optional
        Declared kinds of some features.
    options : TableOptions, optional
        Blank-cell policy and level limit.
    category_names, class_names : optional
        A training schema: coded columns keep these levels and the labels these classes.
    source : TableSource, optional
        How messages name the table and its rows.

    Returns
    -------
    CodedTable
        The coded columns and the missing-value record.

    Raises
    ------
    ValueError
        Naming the column, the value, where it is and the fix.
    """
    source = source or TableSource()
    options = options or TableOptions()
    header = _header(frame, source)
    if not isinstance(target, str) or not target:
        raise ValueError(
            f"target must be the name of the class column, got {target!r}; pass {spelled('target', metavar='COLUMN')}"
        )
    if target not in header:
        raise ValueError(
            f"target column {target!r} is not in {source.label}; its columns are {header}; pass "
            f"{spelled('target', metavar='COLUMN')}"
        )
    used = _used_features(features, header, target, source, fitted=class_names is not None)
    kinds = _declared_kinds(feature_kinds, used, source, target)
    columns = {name: _read_column(frame[name], name, source) for name in [target, *used]}
    training = target if class_names is None else None  # a test table coded by a fit may hold one class
    columns, source, record = _apply_missing(columns, source, options.missing, len(frame), training)
    known = dict(category_names or {})
    coded = [_code_feature(columns[name], kinds.get(name), known.get(name), options, source) for name in used]
    y, classes = _code_target(columns[target], class_names, source)
    _printable_levels(classes, target, "class label", source)
    for name, (_, _, levels) in zip(used, coded, strict=True):
        _printable_levels(levels or (), name, "level", source)
    return CodedTable(
        X=np.column_stack([values for values, _, _ in coded]),
        y=y,
        feature_names=tuple(used),
        class_names=classes,
        feature_kinds=tuple(kind for _, kind, _ in coded),
        category_names={name: levels for name, (_, _, levels) in zip(used, coded, strict=True) if levels},
        missing=record,
        declared_kinds=kinds,
    )


def _declared_kinds(feature_kinds, features: list[str], source: TableSource, target: str) -> dict[str, FeatureKind]:
    if feature_kinds is None:
        return {}
    return check_feature_kinds(feature_kinds, features, owner=source.name or source.label, target=target)


def _apply_missing(
    columns: dict[str, _Column], source: TableSource, policy: str, n_rows: int, target: str | None
) -> tuple[dict[str, _Column], TableSource, MissingRecord]:
    """Refuse or drop the rows with a blank cell in a used column; the record of what was done."""
    blanks = {name: int(column.missing.sum()) for name, column in columns.items() if column.missing.any()}
    if not blanks:
        return columns, source, MissingRecord(policy=policy)  # type: ignore[arg-type]
    if policy == "error":
        incomplete = int(np.logical_or.reduce([column.missing for column in columns.values()]).sum())
        raise ValueError(
            f"{_blanks(columns, source)}; {incomplete} of {n_rows} rows are incomplete. Pass "
            f"{spelled('missing', 'drop')} to drop them, choose other features, or fill the cells in before loading"
        )
    keep = ~np.logical_or.reduce([column.missing for column in columns.values()])
    if not keep.any():
        raise ValueError(
            f"{source.label}: every one of its {n_rows} rows has a blank cell in the columns used "
            f"({', '.join(map(repr, blanks))}); nothing is left after {spelled('missing', 'drop')}; choose other "
            "features"
        )
    if target is not None:
        _refuse_lost_classes(columns[target], keep, source, blanks)
    record = MissingRecord(
        policy="drop", dropped_rows=int(n_rows - keep.sum()), blanks_per_column=tuple(blanks.items())
    )
    return {name: column.take(keep) for name, column in columns.items()}, source.take(keep), record


def _refuse_lost_classes(target: _Column, keep: np.ndarray, source: TableSource, blanks: dict[str, int]) -> None:
    """Refuse a drop of the rows with blanks that leaves fewer than two classes, saying which it removed."""
    labels = pd.Series(target.cells, dtype=object).map(str).to_numpy(dtype=object)
    before = pd.unique(labels[~target.missing])
    after = pd.unique(labels[keep])
    if len(after) >= 2 or len(before) < 2:
        return
    lost = sorted(set(before.tolist()) - set(after.tolist()))
    removed = int(np.isin(labels[~target.missing], lost).sum())
    raise ValueError(
        f"{source.label}: {spelled('missing', 'drop')} drops the {int((~keep).sum())} row(s) with a blank cell "
        f"(blanks per column: {blanks}), among them all {removed} row(s) of the class(es) {lost}, which leaves the "
        f"single class {str(after[0]) if len(after) else None!r}; fill the blank cells in, or choose features "
        f"without them ({spelled('features', metavar='...')})"
    )


def _code_feature(
    column: _Column,
    declared: FeatureKind | None,
    known: Sequence[str] | None,
    options: TableOptions,
    source: TableSource,
) -> tuple[np.ndarray, FeatureKind, tuple[str, ...] | None]:
    """(values, kind, levels or None) of one feature column without blanks."""
    name = column.name
    as_levels = column.numbers is None or declared == "categorical" or known is not None
    if not as_levels:
        assert column.numbers is not None
        values = _finite(column, source)
        if declared is not None:
            return values, declared, None
        return values, "binary" if bool(np.isin(values, (0.0, 1.0)).all()) else "continuous", None
    if column.numbers is None and declared in ("continuous", "count"):
        levels = tuple(sorted(set(column.text.tolist())))[:5] if column.text is not None else ()
        raise ValueError(
            f"feature_kinds[{name!r}] = {declared!r}, but column {name!r} holds text levels {levels}, whose codes "
            "are not measurements; declare it 'categorical' (or 'binary' with two levels)"
        )
    if known is not None:
        levels = tuple(str(level) for level in known)
        codes = _codes_of(column, levels, source, what="level")
    else:
        codes, levels = _levels(column, source)
        if len(levels) > options.max_levels:
            raise ValueError(
                f"{source.label}: column {name!r} has {len(levels)} distinct levels, more than "
                f"{spelled('max_levels', options.max_levels)}; so many levels are usually an identifier or numbers "
                f"read as text: name the features without it ({spelled('features', metavar='...')}), or raise the "
                f"limit with {spelled('max_levels', len(levels))}"
            )
        if column.numbers is None and len(levels) == len(codes) >= UNIQUE_LEVELS_WARNING_ROWS:
            warnings.warn(
                f"{source.label}: text column {name!r} has a different value in every one of its {len(codes)} rows, "
                "so as a categorical feature each level is seen once; if it is an identifier drop it, if it holds "
                "numbers check delimiter/decimal",
                UserWarning,
                stacklevel=4,
            )
    if declared == "binary" and len(levels) != 2:
        raise ValueError(
            f"feature_kinds[{name!r}] = 'binary', but column {name!r} has {len(levels)} level(s) {levels[:5]}; "
            "declare it 'categorical'"
        )
    kind: FeatureKind = "binary" if len(levels) == 2 and declared is None else "categorical"
    if declared == "binary":
        kind = "binary"
    return codes.astype(np.float64), kind, levels


def _finite(column: _Column, source: TableSource) -> np.ndarray:
    assert column.numbers is not None
    bad = ~np.isfinite(column.numbers)
    if bad.any():
        row = int(np.argmax(bad))
        cell = column.cells[row] if column.cells is not None else column.numbers[row]
        raise ValueError(
            f"{source.label}: value {str(cell)!r} at {source.where(row)}, column {column.name!r} is not finite; "
            "fix or remove the row"
        )
    return column.numbers


def _levels(column: _Column, source: TableSource) -> tuple[np.ndarray, tuple[str, ...]]:
    """(codes, levels) by the column's own levels: sorted values (numbers by value), or an ordered category's order."""
    if column.numbers is not None:
        values = _finite(column, source)
        distinct, codes = np.unique(values, return_inverse=True)
        return codes, tuple(number_text(value) for value in distinct)
    assert column.text is not None
    if column.order is not None:
        present = set(column.text.tolist())
        levels = tuple(level for level in column.order if level in present)
        return pd.Index(levels, dtype=object).get_indexer(pd.Index(column.text, dtype=object)), levels
    codes, found = pd.factorize(pd.Series(column.text, dtype=object), sort=True)
    return codes, tuple(str(level) for level in found)


def _code_target(
    column: _Column, class_names: Sequence[str] | None, source: TableSource
) -> tuple[np.ndarray, tuple[str, ...]]:
    """(codes, class names): labels as spelled, numbers sorted by value.

    A number is named as its first cell spells it: a text cell as written, a number of a numeric dtype as pandas
    writes it to a CSV file (``1`` for an integer, ``1.0`` for a float), so that the same table gives the same
    class names from a DataFrame, a parquet file or that DataFrame written as CSV.
    """
    if class_names is not None:
        classes = tuple(str(name) for name in class_names)
        return _codes_of(column, classes, source, what="label").astype(np.int64), classes
    if column.numbers is not None and not column.fixed_text:
        distinct, first, codes = np.unique(_finite(column, source), return_index=True, return_inverse=True)
        spelling = column.text if column.text is not None else column.cells
        assert spelling is not None
        return codes.astype(np.int64), tuple(str(spelling[index]) for index in first)
    codes, levels = _levels(column, source)
    return np.asarray(codes, dtype=np.int64), levels


def _codes_of(column: _Column, levels: tuple[str, ...], source: TableSource, *, what: str) -> np.ndarray:
    """Codes of the column's cells in the given ``levels``.

    Numbers are matched by value when every cell and level is a number (``"1"`` is ``"1.0"``); anything else by
    its text. A value not among the levels is an error naming it, its column and where it is.
    """
    reference = _level_numbers(levels, source.decimal) if column.numbers is not None else None
    if reference is not None:
        assert column.numbers is not None
        matches = column.numbers[:, np.newaxis] == reference[np.newaxis, :]
        codes = np.argmax(matches, axis=1)
        unseen = ~matches.any(axis=1)
        shown = column.cells if column.cells is not None else column.numbers
    else:
        numbers = column.numbers if column.numbers is not None else np.zeros(0)
        text = column.text if column.text is not None else np.array([number_text(v) for v in numbers], dtype=object)
        codes = pd.Index(list(levels), dtype=object).get_indexer(pd.Index(text, dtype=object)).astype(np.int64)
        unseen = codes < 0
        shown = text
    if unseen.any():
        row = int(np.argmax(unseen))
        raise ValueError(
            f"{source.label}: {what} {str(shown[row])!r} at {source.where(row)}, column {column.name!r} was not seen "
            f"in training (known: {list(levels)}); drop those rows or refit with them"
        )
    return codes


def _level_numbers(levels: tuple[str, ...], decimal: str) -> np.ndarray | None:
    """The levels as numbers when every one is a number (under ``decimal``, or as written by :func:`number_text`)."""
    known = np.asarray(levels, dtype=object)
    for mark in dict.fromkeys((decimal, ".")):
        if len(known) and _parses(known, mark).all():
            return _numbers(known, mark)
    return None


@dataclass(frozen=True, eq=False)
class NewRows:
    """New rows of a fitted model's features, coded by its training schema (:func:`code_new_rows`).

    Parameters
    ----------
    X : numpy.ndarray
        float64 (rows, features); a row with a blank feature holds NaN there.
    y : numpy.ndarray or None
        Class codes of the labels (when a target was read); -1 where a label is blank.
    complete : numpy.ndarray of bool
        Which rows have every feature (the rows that can be predicted).
    """

    X: np.ndarray
    y: np.ndarray | None
    complete: np.ndarray


def code_new_rows(
    frame: pd.DataFrame,
    *,
    feature_names: Sequence[str],
    category_names: Mapping[str, Sequence[str]] | None = None,
    target: str | None = None,
    class_names: Sequence[str] | None = None,
    missing: MissingPolicy = "error",
    source: TableSource | None = None,
) -> NewRows:
    """Code new rows (a chunk of a file, or a whole table) by a fitted model's schema.

    A feature fitted as numbers must hold numbers; a coded feature (``category_names``) holds its training levels
    (numbers matched by value); labels are coded by ``class_names``. A blank cell is an error under
    ``missing="error"``; under ``"drop"`` its row is marked incomplete (a blank label only leaves the label empty).

    Parameters
    ----------
    frame : pandas.DataFrame
        The rows, holding at least the feature columns (and ``target``).
    feature_names : sequence of str
        The fitted features, in the model's order.
    category_names : Mapping[str, sequence of str], optional
        The training levels of the coded features.
    target : str, optional
        A label column to code as well.
    class_names : sequence of str, optional
        The fitted classes (required with ``target``).
    missing : {"error", "drop"}
        What a blank cell does.
    source : TableSource, optional
        How messages name the table and its rows.

    Returns
    -------
    NewRows
        The coded rows and which are complete.

    Raises
    ------
    ValueError
        A missing column, a blank cell under ``"error"``, text in a column fitted as numbers, a value that is not
        finite, a level or label not seen in training (value, column and where named).
    """
    source = source or TableSource()
    known = dict(category_names or {})
    absent = [name for name in [*feature_names, *([target] if target else [])] if name not in frame.columns]
    if absent:
        raise ValueError(f"{source.label} lacks the column(s) {absent}; its columns are {list(frame.columns)}")
    if target and class_names is None:
        raise ValueError("class_names (the fitted classes) must be given with target, to code the labels")
    coded = {name: known.get(name) for name in feature_names} | ({target: class_names} if target else {})
    columns = {name: _new_column(frame[name], name, levels, source) for name, levels in coded.items()}
    blanks = _blanks(columns, source)
    if missing == "error" and blanks:
        raise ValueError(
            f"{blanks}; pass {spelled('missing', 'drop')} to leave the probabilities of their rows empty, or fill "
            "the cells in"
        )
    X = np.full((len(frame), len(feature_names)), np.nan)
    complete = np.ones(len(frame), dtype=bool)
    for j, name in enumerate(feature_names):  # the columns of a table, not a model loop
        levels = tuple(known[name]) if name in known else None
        column = columns[name]
        present = ~column.missing
        complete &= present
        if levels is not None:
            X[present, j] = _codes_of(column.take(present), levels, source.take(present), what="level")
        else:
            assert column.numbers is not None
            X[present, j] = column.numbers[present]
    y = None
    if target:
        column = columns[target]
        present = ~column.missing
        y = np.full(len(frame), -1, dtype=np.int64)
        y[present] = _codes_of(column.take(present), tuple(class_names or ()), source.take(present), what="label")
    return NewRows(X=X, y=y, complete=complete)


def _new_column(series: pd.Series, name: str, levels: Sequence[str] | None, source: TableSource) -> _Column:
    """One column of new rows, typed by the training schema: numbers, or cells coded by ``levels``."""
    _refuse_unreadable(series, name, source)
    dtype = series.dtype
    if pd.api.types.is_bool_dtype(dtype) or isinstance(dtype, pd.CategoricalDtype):
        column = _read_column(series, name, source)
    elif pd.api.types.is_numeric_dtype(dtype):
        column = _read_column(series, name, source)
    else:
        absent = series.isna().to_numpy()
        cells = series.astype(object).where(~absent, "").map(str).to_numpy(dtype=object)
        text = pd.Series(cells, dtype=object).str.strip()
        blank = absent | text.str.lower().isin(MISSING_TOKENS).to_numpy()
        text = text.to_numpy(dtype=object)
        numbers = _numbers(text, source.decimal)
        if levels is None or (~blank).any() and np.isfinite(numbers[~blank]).all():
            column = _Column(name, blank, numbers=numbers, text=text, cells=text)
        else:
            column = _Column(name, blank, text=text, cells=text)
    if levels is None and column.numbers is None:
        row = int(np.argmax(~column.missing))
        raise ValueError(
            f"{source.label}: column {name!r} holds text ({str(column.text[row])!r} at {source.where(row)}, "  # type: ignore[index]
            f"column {name!r}) but the model was fitted on numbers in it; give the numeric values"
        )
    if levels is None:
        _check_numbers(column, source)
    return column


def _check_numbers(column: _Column, source: TableSource) -> None:
    """Every present cell of a column fitted as numbers is a finite number; else an error saying why."""
    assert column.numbers is not None
    bad = ~np.isfinite(column.numbers) & ~column.missing
    if not bad.any():
        return
    row = int(np.argmax(bad))
    cell = str(column.cells[row] if column.cells is not None else column.numbers[row]).strip()
    where = f"at {source.where(row)}, column {column.name!r}"
    if _parses(np.array([cell], dtype=object), source.decimal)[0]:
        raise ValueError(f"{source.label}: value {cell!r} {where} is not finite; fix or remove the row")
    other = "," if source.decimal == "." else "."
    if _parses(np.array([cell], dtype=object), other)[0]:
        raise ValueError(
            f"{source.label}: value {cell!r} {where} is a number written with the decimal mark {other!r}; "
            f"pass {spelled('decimal', other, owner='CsvFormat')}"
        )
    raise ValueError(
        f"{source.label}: column {column.name!r} holds text ({cell!r} {where}) but the model was fitted on numbers "
        "in it; give the numeric values"
    )
