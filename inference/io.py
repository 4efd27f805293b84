"""Save and load fitted results as netCDF (never pickle), atomically."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import xarray as xr

__all__ = ["load", "save"]


def save(result: xr.DataTree, path: str | os.PathLike) -> Path:
    """Write ``result`` with its provenance attrs to ``path`` (netCDF4 via h5netcdf).

    The tree is written to a temporary file in the same directory and renamed
    over ``path``, so an interrupted save never leaves a truncated file behind
    nor destroys an earlier one.
    """
    path = Path(path)
    if path.suffix != ".nc":
        raise ValueError(f"path {str(path)!r} must end in .nc (results are netCDF files)")
    if not path.parent.exists():
        raise ValueError(f"directory {str(path.parent)!r} does not exist; create it first")
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(handle)
    try:
        result.to_netcdf(temporary, engine="h5netcdf")
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return path


def load(path: str | os.PathLike) -> xr.DataTree:
    """Read a result written by :func:`save` fully into memory."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"no result file at {str(path)!r}; fit one with 'bayesclass fit ... --out {path.name}'")
    with xr.open_datatree(path, engine="h5netcdf") as tree:
        return tree.load()
