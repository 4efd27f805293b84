"""Modules imported on first use, so that ``bayesclass --help`` and ``import bayesclass`` start fast.

PyMC, PyTensor, xarray, pandas, SciPy and ArviZ take seconds to import together;
the command line needs none of them to build its parser (the flags come from the
families' dataclasses). A module written ``pm = lazy_import("pymc")`` is imported the
first time one of its attributes is read, and is the real module object from then on.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types

__all__ = ["import_arviz_base", "lazy_import"]

#: the packages that import ``arviz_base`` first thing (:func:`import_arviz_base` runs before them)
_ARVIZ = frozenset({"arviz", "arviz_base", "arviz_stats", "arviz_plots"})


class _LazyModule(types.ModuleType):
    """Stands for the module ``name`` until an attribute is read, then takes on its namespace."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.__dict__["_lazy_name"] = name

    def __getattr__(self, attribute: str):
        name = self.__dict__["_lazy_name"]
        if name.partition(".")[0] in _ARVIZ:
            import_arviz_base()
        module = importlib.import_module(name)
        self.__dict__.update(vars(module))  # later reads find the attributes directly
        return getattr(module, attribute)  # e.g. a submodule SciPy itself loads lazily

    def __repr__(self) -> str:
        return f"<lazily imported module {self.__dict__['_lazy_name']!r}>"


def lazy_import(name: str) -> types.ModuleType:
    """The module ``name``, or a stand-in that imports it on first attribute access.

    The module itself is returned if it is imported already.
    """
    return sys.modules.get(name) or _LazyModule(name)


def import_arviz_base() -> None:
    """Import ``arviz_base`` without importing jax (about 0.3 s) where numpyro is not installed.

    Why jax gets imported otherwise: ``arviz_base/io_numpyro.py`` runs ``jax = lazy_loader.load("jax")``, which
    puts a lazy proxy of jax in ``sys.modules``, then ``lazy_loader.load("numpyro")``. numpyro is not installed,
    so ``lazy_loader.load`` (0.6) calls ``inspect.stack()`` to record where the failed import came from; that
    calls ``inspect.getmodule``, which reads ``__file__`` of every module in ``sys.modules``, and reading it on
    the jax proxy imports all of jax (scientific-python/lazy-loader#131, python/cpython#139669). Nothing that
    report or diagnose runs uses jax.

    What this does: while ``arviz_base`` alone is imported, ``sys.modules["numpyro"]`` holds lazy_loader's own
    stand-in for a missing module, a ``DelayedImportErrorModule``, so ``lazy_loader.load("numpyro")`` returns it
    at its first check (a module in ``sys.modules``) without the stack walk. That is the object the slow path
    would have returned (it raises ``ModuleNotFoundError`` on use), so ``arviz_base`` ends in the same state.
    The stand-in is removed when the import ends, whatever happens, so nothing later sees numpyro as importable.

    The lazy proxy of jax is taken out of ``sys.modules`` too, where the import put it there unloaded: SciPy's
    array-API checks (``is_jax_array``, run by ``scipy.special.logsumexp``, which arviz_stats' PSIS-LOO calls)
    read ``Array`` from any ``sys.modules["jax"]``, and on the proxy that imports all of jax. Without it
    ``sys.modules`` says what is true, that jax is not imported, and a later ``import jax`` (a NUTS fit) imports
    it as usual. ``arviz_base.io_numpyro`` keeps its reference to the proxy; only its NumPyro converters use it,
    and they need numpyro, which is not installed: ``from_numpyro`` raises ``ModuleNotFoundError`` as before.
    Where numpyro is installed, ``arviz_base`` is imported already, or lazy_loader's stand-in cannot be built
    (another lazy_loader version), ``arviz_base`` is imported plainly.
    """
    if "arviz_base" in sys.modules or "numpyro" in sys.modules or importlib.util.find_spec("numpyro") is not None:
        return
    try:
        from lazy_loader import DelayedImportErrorModule

        frame = {"filename": __file__, "lineno": 0, "function": "import_arviz_base", "code_context": None}
        missing = DelayedImportErrorModule(frame, "numpyro", message="No module named 'numpyro'")
    except (ImportError, TypeError):  # another lazy_loader: the plain import (and its cost)
        importlib.import_module("arviz_base")
        return
    jax_before = sys.modules.get("jax")
    sys.modules["numpyro"] = missing
    try:
        importlib.import_module("arviz_base")
    finally:
        if sys.modules.get("numpyro") is missing:
            del sys.modules["numpyro"]
        if jax_before is None and type(sys.modules.get("jax")) is getattr(importlib.util, "_LazyModule", ()):
            del sys.modules["jax"]  # the unloaded proxy (second paragraph of the docstring)
