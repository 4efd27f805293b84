"""Small argument checks shared by the ``data`` modules (private)."""

from __future__ import annotations

import numpy as np

from bayesclass.data.constraints import Integer


def require_int(value: object, *, argument: str, minimum: int) -> int:
    """Return ``value`` as ``int`` if it is an integer >= ``minimum``; else ``ValueError``.

    The check is :class:`bayesclass.data.constraints.Integer`: ``bool`` is rejected, floats are not rounded.
    """
    return Integer(minimum=minimum).check(value, argument=argument)


#: seeds are stored in results as 64-bit signed integers (netCDF attrs): 0 <= seed < 2**63
MAX_SEED = 2**63 - 1


def require_seed(random_seed: object, *, argument: str = "random_seed") -> int:
    """Validate a seed: an integer in ``[0, 2**63)`` (stored with the result; ``bool`` refused)."""
    seed = require_int(random_seed, argument=argument, minimum=0)
    if seed > MAX_SEED:
        raise ValueError(f"{argument} must be below 2**63 (the result stores it as a 64-bit integer), got {seed}")
    return seed


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
