"""The memory check before work whose arrays are sized by user settings (draws, chains, replicates, rows).

A fit of 10**9 draws, a check of 10**8 replicates or ``predict(return_draws=True)`` on millions of rows would
otherwise run (compiling, sampling for minutes) until NumPy fails to allocate an array, with a traceback.
Each such entry point estimates what it will hold from the sizes the model declares (the values per draw of
its parameters, rows, classes) and calls :func:`require_memory` BEFORE it starts; too much is refused with
:class:`InsufficientMemoryError`, one line giving both numbers and the largest settings that fit.

The estimates are deliberately generous (copies made while converting draws, working tiles). Measured peaks
(the rise of the peak RSS over a fit of 10 draws, 4 chains, on a 2-core machine) were 0.5 to 0.92 times the
estimate: gcc on iris by NUTS, 50,000 draws, 811 of 877 MiB; logistic 639 of 754; naive Bayes on transport by
NUTS, 100,000 draws, 666 of 869; by exact draws, 200,000, 709 of 1,448; the GP's Gibbs sampler, 20,000 draws,
436 of 714 (its chain processes held little more than their imports); ``predict(return_draws=True)`` of 20,000
rows x 4,000 draws, 3,694 of 3,994 MiB; a predictive check of 2,000 replicates of breast_cancer, 1,046 of 1,563.
What is available is ``psutil.virtual_memory().available``, or the room left under the process's cgroup limit
where that is lower (a container).

The environment variable ``BAYESCLASS_MEMORY_LIMIT`` replaces the measured figure: a size (``"8GiB"``,
``"500MB"``, a number of bytes) to budget less than the machine has (a shared machine) or more (swap), or
``"off"`` to skip the check.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = [
    "MEMORY_LIMIT_VARIABLE",
    "InsufficientMemoryError",
    "MemoryCheckError",
    "available_bytes",
    "format_bytes",
    "largest_fitting",
    "parameter_values",
    "require_memory",
    "tile_bytes",
]

#: the environment variable that overrides the available memory (a size) or turns the check off ("off")
MEMORY_LIMIT_VARIABLE = "BAYESCLASS_MEMORY_LIMIT"
_UNITS = {"": 1, "b": 1, "k": 10**3, "kb": 10**3, "m": 10**6, "mb": 10**6, "g": 10**9, "gb": 10**9}
_UNITS |= {"t": 10**12, "tb": 10**12, "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}
_CGROUP = Path("/sys/fs/cgroup")


class MemoryCheckError(ValueError):
    """The memory check refuses work before it starts.

    The work is too large (:class:`InsufficientMemoryError`), or ``BAYESCLASS_MEMORY_LIMIT`` is not a size. The
    command line exits 2 on it.
    """


class InsufficientMemoryError(MemoryCheckError, MemoryError):
    """Settings whose arrays would not fit in the available memory, refused before any work starts.

    A ``ValueError`` (the settings are the bad input: the message names them and the largest that fit; the
    command line exits 2) and a ``MemoryError`` (what it prevents), so either ``except`` catches it.
    """


def format_bytes(n_bytes: float) -> str:
    """``n_bytes`` in binary units, e.g. ``"745.1 GiB"``.

    Parameters
    ----------
    n_bytes : float
        A number of bytes.

    Returns
    -------
    str
        One decimal and the largest unit (B, KiB, MiB, GiB, TiB, PiB) that keeps the number at least 1.
    """
    value = float(n_bytes)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(value) < 1024:
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:,.1f} PiB"


def _parse_size(text: str) -> int:
    match = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]*)?)\s*([a-zA-Z]*)\s*", text)
    if match is None or match.group(2).lower() not in _UNITS:
        raise MemoryCheckError(
            f"{MEMORY_LIMIT_VARIABLE}={text!r} is not a size: give bytes or a size such as '8GiB' or '500MB', "
            "or 'off' to skip the memory check"
        )
    return int(float(match.group(1)) * _UNITS[match.group(2).lower()])


def _read_int(path: Path) -> int | None:
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _cgroup_room() -> int | None:
    """Bytes left under this process's cgroup memory limit (v2 or v1), or None where there is no limit."""
    for limit_file, usage_file, inactive_key in (
        (_CGROUP / "memory.max", _CGROUP / "memory.current", "inactive_file"),
        (
            _CGROUP / "memory" / "memory.limit_in_bytes",
            _CGROUP / "memory" / "memory.usage_in_bytes",
            "total_inactive_file",
        ),
    ):
        limit, usage = _read_int(limit_file), _read_int(usage_file)
        if limit is None or usage is None or limit >= 2**60:  # "max", or v1's "no limit" (a page-rounded 2**63)
            continue
        reclaimable = 0  # the page cache the kernel drops before it fails an allocation
        try:
            for line in (limit_file.parent / "memory.stat").read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == inactive_key and value.isdigit():
                    reclaimable = int(value)
        except OSError:
            pass
        return max(0, limit - usage + reclaimable)
    return None


def available_bytes() -> int | None:
    """The memory a new array may take now.

    Returns
    -------
    int or None
        ``psutil.virtual_memory().available``, or the room under the cgroup limit where lower; the size in
        ``BAYESCLASS_MEMORY_LIMIT`` where set; None when that variable is ``"off"`` (no check).

    Raises
    ------
    MemoryCheckError
        ``BAYESCLASS_MEMORY_LIMIT`` is neither a size nor ``"off"``.
    """
    override = os.environ.get(MEMORY_LIMIT_VARIABLE, "").strip()
    if override.lower() == "off":
        return None
    if override:
        return _parse_size(override)
    import psutil

    available = int(psutil.virtual_memory().available)
    room = _cgroup_room()
    return available if room is None else min(available, room)


def largest_fitting(needed: Callable[[int], float], available: float, *, upper: int) -> int:
    """The largest ``n`` in ``0 .. upper`` with ``needed(n) <= available`` (``needed`` grows with ``n``).

    Parameters
    ----------
    needed : callable
        Bytes needed for the setting ``n`` (non-decreasing in ``n``).
    available : float
        Bytes available.
    upper : int
        The setting asked for (the answer is below it when ``needed(upper)`` does not fit).

    Returns
    -------
    int
        0 when not even ``n = 1`` fits.
    """
    low, high = 0, upper
    while low < high:  # bisection: needed(low) fits (or low = 0), needed(high + 1) does not
        middle = (low + high + 1) // 2
        if needed(middle) <= available:
            low = middle
        else:
            high = middle - 1
    return low


def require_memory(needed: float, *, what: str, fix: Callable[[int], str]) -> None:
    """Refuse work that needs more memory than is available, before it starts.

    Parameters
    ----------
    needed : float
        The estimated peak bytes of the work.
    what : str
        What would hold them, e.g. ``"the fit (4 chains x 1,000,000,000 draws x 3 values)"``.
    fix : callable
        ``fix(available_bytes) -> str``: the largest settings that fit, e.g. ``"at most 1,234,000 draws with 4
        chains"`` (called only when the work does not fit).

    Raises
    ------
    InsufficientMemoryError
        ``needed`` exceeds :func:`available_bytes`.
    """
    available = available_bytes()
    if available is None or needed <= available:
        return
    raise InsufficientMemoryError(
        f"{what} needs about {format_bytes(needed)} of memory, but {format_bytes(available)} is available: "
        f"{fix(available)}"
    )


def parameter_values(model: Any, data: Any) -> int:
    """Values per posterior draw of ``model`` fitted to ``data``, from the dims its PyMC model declares.

    The PyMC model is built (nothing is compiled but, for a dim without labels other than ``obs``, its
    length); each parameter of ``model.parameter_names(data)`` counts the
    product of its dims' lengths (1 for a scalar), or of its static shape where it has no dims.

    Parameters
    ----------
    model : ClassifierModel
        The family instance.
    data : Dataset
        The (coded, standardised) training data.

    Returns
    -------
    int
        The number of float64 values one draw of the posterior holds.
    """
    pymc_model = model.build(data)
    sizes = {name: len(values) for name, values in pymc_model.coords.items() if values is not None}
    sizes.setdefault("obs", data.n_obs)  # the rows' dim (named alike in every family) has no labels
    for dim, length in pymc_model.dim_lengths.items():
        if dim not in sizes:  # a dim without labels other than the rows: its length, from a tiny shape graph
            sizes[dim] = int(length.eval())
    total = 0
    for name in model.parameter_names(data):
        dims = pymc_model.named_vars_to_dims.get(name)
        if dims:
            total += math.prod(sizes[dim] for dim in dims)
        else:
            shape = pymc_model[name].type.shape
            total += math.prod(1 if size is None else size for size in shape)
    return max(1, total)


def tile_bytes(values_per_row: int, n_rows: int, *, workers: int | None = None) -> int:
    """Peak bytes of the tiles in flight when the chunked engine evaluates ``values_per_row`` per row.

    :func:`~bayesclass.inference.prediction.tiles.map_row_chunks` holds ``workers + 1`` tiles, each of at most
    :data:`~bayesclass.inference.prediction.tiles.TILE_BYTES` (or one row, where one row is more; never more
    than ``n_rows`` rows) of float64 values, and twice as much again while a kernel evaluates a tile (e.g. the
    differences of every row from every class mean under every draw) and while it is summarised.

    Parameters
    ----------
    values_per_row : int
        float64 values per row (classes x draws, for class probabilities).
    n_rows : int
        Rows evaluated (a tile holds no more).
    workers : int, optional
        Worker threads; default :func:`~bayesclass.inference.prediction.tiles.default_workers`.

    Returns
    -------
    int
        The bytes.
    """
    from bayesclass.inference.prediction.tiles import TILE_BYTES, default_workers

    row = 8 * values_per_row
    tile = max(min(TILE_BYTES, row * max(1, n_rows)), row)
    return ((default_workers() if workers is None else workers) + 1) * 3 * tile
