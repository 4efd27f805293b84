"""Where a Dataset's rows come from, as structured values (the prose ``provenance`` is for readers).

A :class:`DataOrigin` says which built-in data set or generator made the rows (``load(source, **arguments)``
reproduces them) and which part of which split they are. Fits record it, so a report can reproduce the
held-out part of the split a result was fitted on without reading prose.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from bayesclass.data.constraints import MAX_SEED

__all__ = ["DataOrigin", "MissingPolicy", "MissingRecord", "SplitOrigin", "SplitPart"]

SplitPart = Literal["train", "validation", "test"]
#: what loading a table does with a blank cell in a column it uses: refuse the table, or drop the row
MissingPolicy = Literal["error", "drop"]
#: the plain values a generator argument may take (what JSON keeps exactly)
ArgumentValue = int | float | str | bool


@dataclass(frozen=True)
class SplitOrigin:
    """One part of :func:`bayesclass.data.train_validation_test_split`.

    Parameters
    ----------
    part : {"train", "validation", "test"}
        Which part of the split the rows are.
    fractions : tuple of float
        The (train, validation, test) fractions the split was asked for.
    random_seed : int
        The split's seed.
    stratify : bool
        Whether the split was stratified by class.
    """

    part: SplitPart
    fractions: tuple[float, float, float]
    random_seed: int
    stratify: bool

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able values.

        Returns
        -------
        dict
            ``part``, ``fractions`` (a list), ``random_seed`` and ``stratify``.
        """
        return {
            "part": self.part,
            "fractions": list(self.fractions),
            "random_seed": self.random_seed,
            "stratify": self.stratify,
        }

    @classmethod
    def from_dict(cls, value: object) -> SplitOrigin:
        """Rebuild from :meth:`to_dict`, checked as untrusted input.

        Parameters
        ----------
        value : object
            What :meth:`to_dict` wrote (e.g. read back from a file).

        Returns
        -------
        SplitOrigin

        Raises
        ------
        ValueError
            Naming the entry that is missing or out of range.
        """
        if not isinstance(value, dict) or set(value) != {"part", "fractions", "random_seed", "stratify"}:
            raise ValueError(f"a split origin has the keys part, fractions, random_seed and stratify; got {value!r}")
        part, fractions, seed, stratify = value["part"], value["fractions"], value["random_seed"], value["stratify"]
        if part not in get_args(SplitPart):
            raise ValueError(f"split part must be one of {', '.join(get_args(SplitPart))}, got {part!r}")
        if (
            not isinstance(fractions, list)
            or len(fractions) != 3
            or not all(_is_real(f) and 0 < f < 1 for f in fractions)
            or not math.isclose(sum(fractions), 1.0, abs_tol=1e-9)
        ):
            raise ValueError(f"split fractions must be 3 numbers in (0, 1) summing to 1, got {fractions!r}")
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
            raise ValueError(f"split random_seed must be an integer in [0, 2**32), got {seed!r}")
        if not isinstance(stratify, bool):
            raise ValueError(f"split stratify must be true or false, got {stratify!r}")
        return cls(part=part, fractions=tuple(float(f) for f in fractions), random_seed=seed, stratify=stratify)  # type: ignore[arg-type]


@dataclass(frozen=True)
class DataOrigin:
    """The structured origin of a Dataset's rows.

    Parameters
    ----------
    source : str
        The built-in data set or generator that made the rows (``bayesclass.data.load(source, **arguments)``
        makes them again); ``""`` when no built-in source can (a CSV file, an array).
    arguments : tuple of (str, value) pairs
        The generator's keyword arguments (e.g. ``(("n", 200), ("random_seed", 1))``); empty for fixed data.
    split : SplitOrigin or None
        The part of a train/validation/test split the rows are, if they are one.
    """

    source: str = ""
    arguments: tuple[tuple[str, ArgumentValue], ...] = ()
    split: SplitOrigin | None = field(default=None)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able values.

        Returns
        -------
        dict
            ``source``, ``arguments`` (a dict) and ``split`` (a dict or None).
        """
        return {
            "source": self.source,
            "arguments": dict(self.arguments),
            "split": None if self.split is None else self.split.to_dict(),
        }

    @classmethod
    def from_dict(cls, value: object) -> DataOrigin:
        """Rebuild from :meth:`to_dict`, checked as untrusted input.

        Parameters
        ----------
        value : object
            What :meth:`to_dict` wrote.

        Returns
        -------
        DataOrigin

        Raises
        ------
        ValueError
            Naming the entry that is malformed.
        """
        if not isinstance(value, dict) or set(value) != {"source", "arguments", "split"}:
            raise ValueError(f"a data origin has the keys source, arguments and split; got {value!r}")
        source, arguments = value["source"], value["arguments"]
        if not isinstance(source, str) or len(source) > 200:
            raise ValueError(f"data origin source must be a short string, got {source!r}")
        if not isinstance(arguments, dict) or not all(
            isinstance(key, str) and isinstance(item, (int, float, str, bool)) for key, item in arguments.items()
        ):
            raise ValueError(f"data origin arguments must map names to numbers or strings, got {arguments!r}")
        if any(isinstance(item, float) and not math.isfinite(item) for item in arguments.values()):
            raise ValueError(f"data origin arguments must be finite, got {arguments!r}")
        split = None if value["split"] is None else SplitOrigin.from_dict(value["split"])
        return cls(source=source, arguments=tuple(sorted(arguments.items())), split=split)


@dataclass(frozen=True)
class MissingRecord:
    """What loading a table did about blank cells in the columns it used (the target and the features).

    Parameters
    ----------
    policy : {"error", "drop"}
        ``"error"``: a blank cell refused the table (so none was there); ``"drop"``: rows with one were dropped.
    dropped_rows : int
        How many rows were dropped (0 under ``"error"``).
    blanks_per_column : tuple of (str, int) pairs
        The blank cells counted in each used column that had any, in column order (before dropping).
    """

    policy: MissingPolicy = "error"
    dropped_rows: int = 0
    blanks_per_column: tuple[tuple[str, int], ...] = ()

    def __post_init__(self) -> None:
        if self.policy not in get_args(MissingPolicy):
            raise ValueError(f"missing must be 'error' or 'drop', got {self.policy!r}")
        if isinstance(self.dropped_rows, bool) or not isinstance(self.dropped_rows, int) or self.dropped_rows < 0:
            raise ValueError(f"dropped_rows must be a count (an integer >= 0), got {self.dropped_rows!r}")
        counts = self.blanks_per_column
        if not isinstance(counts, tuple) or not all(
            isinstance(pair, tuple)
            and len(pair) == 2
            and isinstance(pair[0], str)
            and isinstance(pair[1], int)
            and not isinstance(pair[1], bool)
            and pair[1] > 0
            for pair in counts
        ):
            raise ValueError(f"blanks_per_column must be (column, count > 0) pairs, got {counts!r}")

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able values.

        Returns
        -------
        dict
            ``policy``, ``dropped_rows`` and ``blanks_per_column`` (a dict column -> count).
        """
        return {
            "policy": self.policy,
            "dropped_rows": self.dropped_rows,
            "blanks_per_column": dict(self.blanks_per_column),
        }

    @classmethod
    def from_dict(cls, value: object) -> MissingRecord:
        """Rebuild from :meth:`to_dict`, checked as untrusted input.

        Parameters
        ----------
        value : object
            What :meth:`to_dict` wrote.

        Returns
        -------
        MissingRecord

        Raises
        ------
        ValueError
            Naming the entry that is malformed.
        """
        if not isinstance(value, dict) or set(value) != {"policy", "dropped_rows", "blanks_per_column"}:
            raise ValueError(
                f"a missing-value record has the keys policy, dropped_rows and blanks_per_column; got {value!r}"
            )
        counts = value["blanks_per_column"]
        if not isinstance(counts, dict):
            raise ValueError(f"blanks_per_column must map columns to counts, got {counts!r}")
        return cls(policy=value["policy"], dropped_rows=value["dropped_rows"], blanks_per_column=tuple(counts.items()))


def _is_real(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
