"""The cell records of a study folder: their typed schema, their checksum, and reading them as untrusted input.

A record (``<out>/cells/<key>.json``) is written by :func:`bayesclass.inference.studies.runner.run_cell` and
read back by the runner (to skip finished cells) and by the study report. Anything on disk may have been
truncated, edited by hand, copied under another name or written by an older bayesclass, so every record is
checked before one of its numbers is used:

- its structure, field by field, through the declarative constraints of :mod:`bayesclass.data.constraints`
  (:class:`RecordCell`, :class:`RecordRow`, :class:`RecordDiagnostics`): types, ranges, and each metric's value in
  its range (:data:`METRIC_RANGES`: a log loss >= 0, an accuracy in [0, 1] ...);
- its ``checksum``: SHA-256 of the canonical JSON of the record without that field (:func:`checksum`). It catches
  a truncated, damaged or hand-edited record; it is no signature (whoever edits a record on purpose can recompute
  it);
- its ``key``: the file's name, and its ``cell`` the description of the cell of that key where the study's cells
  are known (``current_cells.json``).

A record of format 1 (bayesclass before the checksum) is *unverified*: kept out of the tables like a damaged
one, and run again by the next ``bayesclass study`` of its spec (its file moved aside as ``*.damaged``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from bayesclass.data.constraints import Constrained, Constraint, InRange, Integer, InvalidValueError

__all__ = [
    "METRIC_RANGES",
    "RECORD_FORMAT",
    "DamagedRecord",
    "RecordCell",
    "RecordDiagnostics",
    "RecordRow",
    "checksum",
    "move_aside",
    "read_records",
    "seal",
    "verify_record",
]

#: the layout version of a cell record (2: with its checksum)
RECORD_FORMAT = 2
#: the value range of every metric and count a record may hold (NaN: not defined for that estimate). The
#: calibration terms and the KL divergence are differences of sums, exact to rounding: a few ulps below 0 pass
METRIC_RANGES: dict[str, tuple[float, float]] = {
    "log_loss": (0.0, math.inf),
    "brier": (0.0, 2.0),
    "accuracy": (0.0, 1.0),
    "balanced_accuracy": (0.0, 1.0),
    "ece": (0.0, 1.0),
    "calibration_mcb": (-1e-9, 2.0),
    "calibration_dsc": (-1e-9, 2.0),
    "calibration_unc": (-1e-9, 2.0),
    "kl_to_truth": (-1e-9, math.inf),
    "truth_coverage": (0.0, 1.0),
    # interval coverage of the truth at 89% and 95% (bayesclass.inference.evaluation.coverage); NaN: no interval
    "coverage_89": (0.0, 1.0),
    "coverage_95": (0.0, 1.0),
    "parameter_coverage_89": (0.0, 1.0),
    "parameter_coverage_95": (0.0, 1.0),
    "mean_loss": (-math.inf, math.inf),
    "n_zero_probability": (0.0, math.inf),
    "n_undefined": (0.0, math.inf),
    "n_rows": (1.0, math.inf),
    # a stack member's weight in the stack of its cell (bayesclass.inference.stacking), recorded beside its scores
    "stack_weight": (0.0, 1.0),
}
_KEY = re.compile(r"[0-9a-f]{24}")
_SHA256 = re.compile(r"[0-9a-f]{64}")
_FIELDS = {
    "format", "key", "checksum", "cell", "status", "error", "traceback", "rows", "diagnostics", "timings",
    "point_estimate_status", "worker_pid", "warnings", "peak_rss_gb", "n_train", "n_test",
}  # fmt: skip
_REQUIRED = {"format", "key", "checksum", "cell", "status", "rows"}


def _refuse(argument: str, requirement: str, value: Any, *, optional: bool = False, kind: bool = False) -> None:
    """Raise the constraints' message form: ``<argument> must be <requirement>, got <value>``."""
    none = " or None" if optional else ""
    type_note = f" ({type(value).__name__})" if kind else ""
    raise InvalidValueError(f"{argument} must be {requirement}{none}, got {value!r}{type_note}")


class DamagedRecord(ValueError):
    """A record that is not what this bayesclass wrote: unreadable, malformed, out of range or edited."""


@dataclass(frozen=True)
class Text(Constraint):
    """A non-empty ``str`` (a label, a status text)."""

    def _check(self, value: Any, *, argument: str, optional: bool = False) -> str:
        if not isinstance(value, str) or not value:
            _refuse(argument, "a non-empty text", value, optional=optional, kind=True)
        return value


@dataclass(frozen=True)
class Measured(Constraint):
    """A measured number in ``[low, high]`` or NaN (not defined); stored as ``float``.

    JSON's ``"nan"``, ``"inf"`` and ``"-inf"`` texts (how records keep them) are read as those floats.

    Parameters
    ----------
    low, high : float
        The admitted range (infinite bounds admit the infinity).
    """

    low: float = -math.inf
    high: float = math.inf

    def _check(self, value: Any, *, argument: str, optional: bool = False) -> float:
        if isinstance(value, str) and value in ("nan", "inf", "-inf"):
            value = float(value)
        if isinstance(value, float) and math.isnan(value):
            return value
        return InRange(self.low, self.high).check(value, argument=argument, optional=optional)


@dataclass(frozen=True)
class RecordCell(Constrained):
    """What names a record's cell (:meth:`bayesclass.inference.studies.spec.Cell.describe`).

    Parameters
    ----------
    study, model, family, method, dataset : str
        The study's name, the model's label, its family, how its posterior is drawn, the data set's label.
    size : int
        Training rows (>= 2).
    repeat : int
        The repeat (>= 0).
    """

    study: Annotated[str, Text()]
    model: Annotated[str, Text()]
    family: Annotated[str, Text()]
    method: Annotated[str, Text()]
    dataset: Annotated[str, Text()]
    size: Annotated[int, Integer(minimum=2)]
    repeat: Annotated[int, Integer(minimum=0)]


@dataclass(frozen=True)
class RecordRow(Constrained):
    """One score of a record: an estimate's value of a metric, in the metric's range (:data:`METRIC_RANGES`).

    Parameters
    ----------
    estimate : str
        The estimate's label (``posterior``, ``MAP plug-in``, ``baseline: knn`` ...).
    kind : str
        Its kind (``posterior``, a point estimate kind, ``baseline``).
    metric : str
        A metric or count of :data:`METRIC_RANGES`.
    value : float or None
        Its value (NaN: not defined for this estimate; None: not written by an older bayesclass).
    """

    estimate: Annotated[str, Text()]
    kind: Annotated[str, Text()]
    metric: Literal[tuple(METRIC_RANGES)]  # type: ignore[valid-type]  # the choices, declared once above
    value: Annotated[float | None, Measured()]

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.value is not None:
            low, high = METRIC_RANGES[self.metric]
            Measured(low, high).check(self.value, argument=f"value of {self.metric} ({self.estimate})")


@dataclass(frozen=True)
class RecordDiagnostics(Constrained):
    """A record's convergence diagnostics (all None for a failed cell).

    Parameters
    ----------
    max_r_hat, min_ess_bulk, min_ess_tail : float or None
        The largest r_hat and the smallest ESS over the parameters (>= 0, or NaN).
    divergences : int or None
        Divergent transitions (>= 0).
    passed : bool or None
        The convergence verdict (None for independent exact draws).
    """

    max_r_hat: Annotated[float | None, Measured(0.0)] = None
    min_ess_bulk: Annotated[float | None, Measured(0.0)] = None
    min_ess_tail: Annotated[float | None, Measured(0.0)] = None
    divergences: Annotated[int | None, Integer(minimum=0)] = None
    passed: bool | None = None


def checksum(record: Mapping[str, Any]) -> str:
    """SHA-256 of the canonical JSON of ``record`` without its ``checksum`` field.

    Canonical: keys sorted, no spaces, ASCII; floats as Python writes them (they read back to the same float, so
    a record read from disk gives the checksum it was written with).

    Parameters
    ----------
    record : mapping
        A cell record.

    Returns
    -------
    str
        64 hex digits.
    """
    body = {key: value for key, value in record.items() if key != "checksum"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def seal(record: dict[str, Any]) -> dict[str, Any]:
    """``record`` with its ``checksum`` set (the last step before writing it).

    Parameters
    ----------
    record : dict
        A cell record without a checksum.

    Returns
    -------
    dict
        The same dict, with ``checksum``.
    """
    record["checksum"] = checksum(record)
    return record


def verify_record(raw: Any, *, key: str, cell: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """``raw`` (a record parsed from JSON) if it is a whole, unedited record of the cell ``key``.

    Parameters
    ----------
    raw : Any
        What ``json.loads`` gave for the record's file.
    key : str
        The cell key it must hold (its file's name).
    cell : mapping or None, default None
        The description of the cell of ``key`` (where the study's cells are known) that its ``cell`` must equal.

    Returns
    -------
    dict
        The record, its values as written (``"inf"`` kept as text; :func:`bayesclass.inference.studies.runner.load`
        converts them).

    Raises
    ------
    DamagedRecord
        Naming what is wrong: not a JSON object, format, unknown or missing fields, a field's type or range, the
        checksum, the key or the cell.
    """
    if not isinstance(raw, dict):
        raise DamagedRecord(f"not a record: a JSON {type(raw).__name__}, not an object")
    if raw.get("format") == 1:
        raise DamagedRecord("unverified: a format 1 record (an older bayesclass) has no checksum")
    if raw.get("format") != RECORD_FORMAT:
        raise DamagedRecord(f"record format {raw.get('format')!r}; this bayesclass reads format {RECORD_FORMAT}")
    missing, unknown = sorted(_REQUIRED - set(raw)), sorted(set(raw) - _FIELDS)
    if missing or unknown:
        raise DamagedRecord(f"fields missing {missing} or unknown {unknown}")
    try:
        _check_structure(raw)
    except InvalidValueError as error:
        raise DamagedRecord(str(error)) from None
    if raw["checksum"] != checksum(raw):
        raise DamagedRecord("its checksum does not match its content: edited or damaged after it was written")
    if raw["key"] != key:
        raise DamagedRecord(f"it holds the key {raw['key']!r} of another cell, not its file's {key!r}")
    if cell is not None and dict(raw["cell"]) != dict(cell):
        raise DamagedRecord(f"its cell {raw['cell']!r} is not the cell of its key, {dict(cell)!r}")
    return raw


def _check_structure(raw: dict[str, Any]) -> None:
    """Every field of a record checked by its declaration (:class:`InvalidValueError` names the first wrong one)."""
    _match(raw["key"], _KEY, "key", "24 hex digits (a cell key)")
    _match(raw["checksum"], _SHA256, "checksum", "64 hex digits (SHA-256)")
    _parts(RecordCell, raw["cell"], "cell")
    if raw["status"] not in ("ok", "error"):
        _refuse("status", "'ok' or 'error'", raw["status"])
    for name in ("error", "traceback"):
        if raw.get(name) is not None and not isinstance(raw[name], str):
            _refuse(name, "a text", raw[name], optional=True, kind=True)
    rows = raw["rows"]
    if not isinstance(rows, list):
        _refuse("rows", "a list of scores", rows, kind=True)
    for index, row in enumerate(rows):
        _parts(RecordRow, row, f"rows[{index}]")
    _parts(RecordDiagnostics, raw.get("diagnostics", {}), "diagnostics")
    timings = raw.get("timings", {})
    if not isinstance(timings, dict):
        _refuse("timings", "a table of seconds", timings, kind=True)
    for name, seconds in timings.items():
        InRange(0, None).check(seconds, argument=f"timings.{name}")
    for name in ("point_estimate_status",):
        value = raw.get(name, {})
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            _refuse(name, "a table of texts", value)
    if not isinstance(raw.get("warnings", []), list) or not all(isinstance(w, str) for w in raw.get("warnings", [])):
        _refuse("warnings", "a list of texts", raw.get("warnings"))
    for name, rule in (("worker_pid", Integer(minimum=0)), ("n_train", Integer(minimum=1)),
                       ("n_test", Integer(minimum=1)), ("peak_rss_gb", InRange(0, None))):  # fmt: skip
        if raw.get(name) is not None:
            rule.check(raw[name], argument=name, optional=True)


def _match(value: Any, pattern: re.Pattern, argument: str, requirement: str) -> None:
    if not isinstance(value, str) or not pattern.fullmatch(value):
        _refuse(argument, requirement, value)


def _parts(cls: type, value: Any, where: str) -> None:
    """``value`` (a JSON object) built as the dataclass ``cls``, every field checked; messages prefixed ``where``."""
    if not isinstance(value, dict):
        _refuse(where, "a JSON object", value, kind=True)
    names = {field.name for field in dataclasses.fields(cls)}
    if set(value) - names:
        _refuse(where, f"an object of the fields {sorted(names)}", value)
    try:
        cls(**value)
    except InvalidValueError as error:
        raise InvalidValueError(f"{where}.{error}") from None
    except TypeError as error:  # a required field missing
        raise InvalidValueError(f"{where}: {error}") from None


def read_records(
    out: str | Path, *, cells: Mapping[str, Mapping[str, Any] | None] | None = None
) -> tuple[list[dict[str, Any]], list[tuple[Path, str]]]:
    """The verified records of a study folder, and every record that is not, with why.

    Parameters
    ----------
    out : str or pathlib.Path
        The study's results folder (its ``cells/``).
    cells : mapping of key to cell description (or None), optional
        Read only the records of these keys, each checked against its cell's description where one is given
        (None: every record in the folder).

    Returns
    -------
    records : list of dict
        The verified records, by file name.
    rejected : list of (pathlib.Path, str)
        Each record that is not read, and why.
    """
    folder = Path(out) / "cells"
    records, rejected = [], []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else ():
        if cells is not None and path.stem not in cells:
            continue  # a cell of an earlier spec: not this study's
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
            records.append(verify_record(raw, key=path.stem, cell=None if cells is None else cells[path.stem]))
        except DamagedRecord as error:
            rejected.append((path, str(error)))
        except (OSError, UnicodeDecodeError, ValueError) as error:  # (json's errors are ValueErrors)
            rejected.append((path, f"unreadable, not whole JSON (truncated or damaged): {error}"))
    return records, rejected


def move_aside(path: Path) -> Path:
    """Rename a damaged record ``<key>.json`` to ``<key>.json.damaged`` (``.damaged.2`` ... if taken).

    Parameters
    ----------
    path : pathlib.Path
        The record's file.

    Returns
    -------
    pathlib.Path
        Where it now is (kept for inspection; no reader of records opens it).
    """
    target = path.with_name(path.name + ".damaged")
    number = 1
    while target.exists():
        number += 1
        target = path.with_name(f"{path.name}.damaged.{number}")
    path.rename(target)
    return target
