"""Modules imported on first use, so that ``bayesclass --help`` and ``import bayesclass`` start fast.

PyMC, PyTensor, xarray, pandas, SciPy and ArviZ take seconds to import together;
the command line needs none of them to build its parser (the flags come from the
families' dataclasses). A module written ``pm = lazy_import("pymc")`` is imported the
first time one of its attributes is read, and is the real module object from then on.
"""

from __future__ import annotations

import importlib
import sys
import types

__all__ = ["lazy_import"]


class _LazyModule(types.ModuleType):
    """Stands for the module ``name`` until an attribute is read, then takes on its namespace."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.__dict__["_lazy_name"] = name

    def __getattr__(self, attribute: str):
        module = importlib.import_module(self.__dict__["_lazy_name"])
        self.__dict__.update(vars(module))  # later reads find the attributes directly
        return getattr(module, attribute)  # e.g. a submodule SciPy itself loads lazily

    def __repr__(self) -> str:
        return f"<lazily imported module {self.__dict__['_lazy_name']!r}>"


def lazy_import(name: str) -> types.ModuleType:
    """The module ``name``, or a stand-in that imports it on first attribute access.

    The module itself is returned if it is imported already.
    """
    return sys.modules.get(name) or _LazyModule(name)
