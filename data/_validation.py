"""Small argument checks shared by the ``data`` modules (private)."""

from __future__ import annotations

import numpy as np

from bayesclass.data.constraints import SEED, Integer


def require_int(value: object, *, argument: str, minimum: int) -> int:
    """Return ``value`` as ``int`` if it is an integer >= ``minimum``; else ``ValueError``.

    The check is :class:`bayesclass.data.constraints.Integer`: ``bool`` is rejected, floats are not rounded.
    """
    return Integer(minimum=minimum).check(value, argument=argument)


def require_seed(random_seed: object, *, argument: str = "random_seed") -> int:
    """Validate a seed: an integer in ``[0, 2**32)`` (:data:`~bayesclass.data.constraints.SEED`; ``bool`` refused)."""
    return SEED.check(random_seed, argument=argument)


def first_true(mask: np.ndarray) -> tuple[int, int] | None:
    """(row, column) of the first ``True`` of a 2-D mask in row-major order, or ``None``."""
    flat = np.flatnonzero(mask)
    if flat.size == 0:
        return None
    row, column = divmod(int(flat[0]), mask.shape[1])
    return row, column


def column_label(column: int, feature_names: tuple[str, ...] | None) -> str:
    """``"column 'name'"`` when names are known, else ``"column 2"``."""
    if feature_names is not None and column < len(feature_names):
        return f"column {feature_names[column]!r}"
    return f"column {column}"


def numeric_2d(X: object, *, argument: str) -> np.ndarray:
    """``np.asarray(X)`` if its dtype is boolean, integer or real float; else ``ValueError``."""
    try:
        array = np.asarray(X)
    except ValueError as error:  # ragged nested sequences
        raise ValueError(f"{argument} is not a rectangular array ({error}); pass equal-length rows") from error
    if array.dtype.kind not in "biuf":
        raise ValueError(
            f"{argument} must be numeric (bool, integer or float), got dtype {array.dtype}; "
            "encode text columns as numbers first (load_csv does this for CSV files)"
        )
    return array
