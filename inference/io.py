"""Save and load fitted results as netCDF (never pickle), atomically."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from bayesclass._lazy import lazy_import

xr = lazy_import("xarray")

__all__ = ["FORMAT_VERSION", "atomic_write", "check_result", "load", "save"]


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; on success rename it over ``path``.

    An interrupted or failed write never leaves a truncated file behind nor
    destroys an earlier one. The file gets the permissions of a plain ``open``
    (0666 less the umask), not ``mkstemp``'s 0600.
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
    """Write ``result`` with its provenance attrs to ``path`` (netCDF4, one group per DataTree node), atomically."""
    path = Path(path)
    if path.suffix != ".nc":
        raise ValueError(f"path {str(path)!r} must end in .nc (results are netCDF files)")
    with atomic_write(path) as temporary:
        result.to_netcdf(temporary, engine="netcdf4")
    return path


def load(path: str | os.PathLike) -> xr.DataTree:
    """Read a result written by :func:`save` fully into memory, checked as untrusted input.

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


#: the version of the result layout written by this bayesclass (attr ``bayesclass_format``)
FORMAT_VERSION = 1
_JSON_ATTRS = {
    "model_hyperparameters": dict,
    "class_names": list,
    "feature_names": list,
    "feature_kinds": list,
    "category_names": dict,
    "point_estimate_status": dict,
}


def check_result(result: xr.DataTree) -> None:
    """Check a result read from a file: its format version, that every attr the library uses parses and holds
    values of the right type, that the model rebuilds (its hyperparameters pass the same validation as a
    user's), and that the groups its method implies are there. Raises a one-line ``ValueError``."""
    from bayesclass.inference.engines.fit import METHODS, model_of

    attrs = result.attrs
    version = attrs.get("bayesclass_format", 0)  # results written before the version attr are format 0
    if not isinstance(version, (int, np.integer)) or isinstance(version, bool):
        raise ValueError(f"attr bayesclass_format should be an integer, got {version!r}")
    if int(version) > FORMAT_VERSION:
        raise ValueError(
            f"result format {int(version)} is newer than this bayesclass reads ({FORMAT_VERSION}); upgrade bayesclass"
        )
    missing = [name for name in ("model", "method", *_JSON_ATTRS) if name not in attrs]
    if missing:
        raise ValueError(f"attrs {', '.join(missing)} are missing: not written by bayesclass fit")
    for name, kind in _JSON_ATTRS.items():
        try:
            value = json.loads(attrs[name])
        except (TypeError, json.JSONDecodeError) as error:
            raise ValueError(f"attr {name} is not valid JSON ({error})") from None
        if not isinstance(value, kind):
            raise ValueError(f"attr {name} should hold a JSON {kind.__name__}, got {type(value).__name__}")
    names = {name: json.loads(attrs[name]) for name in ("class_names", "feature_names", "feature_kinds")}
    if not all(isinstance(item, str) for items in names.values() for item in items):
        raise ValueError("attrs class_names, feature_names and feature_kinds must list strings")
    if len(names["feature_kinds"]) != len(names["feature_names"]):
        raise ValueError("attrs feature_names and feature_kinds differ in length")
    if attrs["method"] not in METHODS:
        raise ValueError(f"attr method {attrs['method']!r} is not one of {', '.join(METHODS)}")
    try:
        model = model_of(result)
    except (ValueError, TypeError, KeyError) as error:
        raise ValueError(f"attr model_hyperparameters does not describe a valid model ({error})") from None
    if model.name != attrs["model"]:
        raise ValueError(f"attr model {attrs['model']!r} disagrees with model_hyperparameters ({model.name!r})")
    needed = ["observed_data", "constant_data"]
    needed += ["posterior"] if attrs["method"] in ("nuts", "gibbs", "exact") else [f"point_estimate_{attrs['method']}"]
    absent = [group for group in needed if group not in result.children]
    if absent:
        raise ValueError(f"group(s) {', '.join(absent)} are missing for method {attrs['method']!r}")
    constant = result["constant_data"]
    for variable in ("X", "feature_center", "feature_scale"):
        if variable not in constant:
            raise ValueError(f"constant_data has no {variable}")
    if constant["X"].shape[1] != len(names["feature_names"]):
        raise ValueError("constant_data X has another number of columns than attr feature_names")
    if not (np.isfinite(constant["feature_scale"].values).all() and (constant["feature_scale"].values > 0).all()):
        raise ValueError("constant_data feature_scale must be positive and finite")
