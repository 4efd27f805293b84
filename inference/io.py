"""Save and load fitted results as netCDF (never pickle), atomically.

:func:`atomic_write` (defined in :mod:`bayesclass._interrupts`, below every layer) is the one way files that
users keep are written.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from bayesclass._interrupts import atomic_write, deferred_interrupts
from bayesclass._lazy import lazy_import
from bayesclass.inference.result import check_result

if TYPE_CHECKING:
    import xarray as xr
else:
    xr = lazy_import("xarray")

__all__ = ["atomic_write", "check_result", "load", "save"]


def save(result: xr.DataTree, path: str | os.PathLike) -> Path:
    """Write ``result`` with its provenance attrs to ``path`` (netCDF4, one group per DataTree node), atomically.

    An interrupt (Ctrl-C, SIGTERM) while the file is written takes effect when netCDF has written it (at disk
    speed, seconds for hundreds of MB), then the temporary file is removed: raised in the middle of netCDF's
    writing, it would leave xarray's HDF5 lock taken and the process hanging (:mod:`bayesclass._interrupts`).

    Parameters
    ----------
    result : xarray.DataTree
        A fitted result.
    path : str or os.PathLike
        The file, ending in ``.nc``.

    Returns
    -------
    pathlib.Path
        The file written.
    """
    path = Path(path)
    if path.suffix != ".nc":
        raise ValueError(f"path {str(path)!r} must end in .nc (results are netCDF files)")
    with atomic_write(path) as temporary, deferred_interrupts():
        result.to_netcdf(temporary, engine="netcdf4")
    return path


def load(path: str | os.PathLike) -> xr.DataTree:
    """Read a result written by :func:`save` fully into memory, checked as untrusted input.

    Parameters
    ----------
    path : str or os.PathLike
        The result file.

    Returns
    -------
    xarray.DataTree
        The result, loaded into memory (the file is closed).

    Raises
    ------
    ValueError
        ``"not a readable bayesclass result: <path> (<reason>)"`` for a missing, truncated,
        empty or foreign file, a result of a newer format, or attrs that do not pass the
        checks a user's input gets (see :func:`check_result`).
    """
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"no result file at {str(path)!r}; fit one with 'bayesclass fit ... --out {path.name}'")
    try:
        with xr.open_datatree(path, engine="netcdf4") as tree:
            result = tree.load()
    except Exception as error:  # netCDF/HDF5 raise OSError, ValueError, KeyError ... for broken files
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise ValueError(f"not a readable bayesclass result: {path} (not a netCDF file: {reason})") from None
    try:
        check_result(result)
    except ValueError as error:
        raise ValueError(f"not a readable bayesclass result: {path} ({error})") from None
    return result
