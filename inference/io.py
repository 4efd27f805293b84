"""Save and load fitted results as netCDF (never pickle), atomically."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from bayesclass._lazy import lazy_import
from bayesclass.inference.result import check_result

if TYPE_CHECKING:
    import xarray as xr
else:
    xr = lazy_import("xarray")

__all__ = ["atomic_write", "check_result", "load", "save"]


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; on success rename it over ``path``.

    An interrupted or failed write never leaves a truncated file behind nor
    destroys an earlier one. The file gets the permissions of a plain ``open``
    (0666 less the umask), not ``mkstemp``'s 0600.

    Parameters
    ----------
    path : str or os.PathLike
        The file to write; its directory must exist.

    Yields
    ------
    pathlib.Path
        The temporary file to write to.

    Raises
    ------
    ValueError
        The directory does not exist.
    """
    path = Path(path)
    if not path.parent.resolve().is_dir():
        raise ValueError(f"directory {str(path.parent)!r} does not exist; create it first")
    temporary = None
    try:  # created inside the try: an interrupt right after creation still removes it
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        os.close(handle)
        yield Path(temporary)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)
        os.replace(temporary, path)
    finally:
        if temporary is not None:
            Path(temporary).unlink(missing_ok=True)


def save(result: xr.DataTree, path: str | os.PathLike) -> Path:
    """Write ``result`` with its provenance attrs to ``path`` (netCDF4, one group per DataTree node), atomically.

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
    with atomic_write(path) as temporary:
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
