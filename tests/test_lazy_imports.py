"""Importing ArviZ through ``bayesclass._lazy`` does not import jax (``import_arviz_base``; issue 29 item 5).

Each test runs a fresh interpreter: what is imported depends on what the process imported before.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("numpyro") is not None or importlib.util.find_spec("jax") is None,
    reason="the jax cost arises only where jax is installed and numpyro is not",
)


def _run(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_arviz_stats_and_scipy_array_checks_leave_jax_unimported():
    """The lazily imported arviz_stats, then SciPy's logsumexp (whose array-API checks read ``sys.modules["jax"]``,
    as arviz_stats' PSIS-LOO does): jax is not imported, and numpyro is not left importable."""
    out = _run(
        """
        import sys
        import numpy as np
        from bayesclass._lazy import lazy_import
        azs = lazy_import("arviz_stats")
        azs.rhat  # first attribute: the real import
        from scipy.special import logsumexp
        logsumexp(np.zeros((4, 3)), axis=0)
        import importlib.util
        import arviz_base.io_numpyro as io_numpyro
        print(type(io_numpyro.numpyro).__name__, "jax" in sys.modules, "jax._src" in sys.modules,
              "numpyro" in sys.modules, importlib.util.find_spec("numpyro"))
        """
    )
    assert out.split() == ["DelayedImportErrorModule", "False", "False", "False", "None"]


def test_numpyro_conversion_still_says_numpyro_is_missing_and_jax_imports_normally():
    out = _run(
        """
        from bayesclass._lazy import import_arviz_base
        import_arviz_base()
        import arviz_base
        for when in ("before", "after"):
            try:
                arviz_base.from_numpyro(posterior=object())
            except ModuleNotFoundError as error:
                print(when, str(error).splitlines()[0].replace(" ", "_"))
            if when == "before":
                import jax
                print(type(jax).__name__, float(jax.numpy.ones(2).sum()))
        """
    )
    assert out.split() == [
        "before",
        "No_module_named_'numpyro'",
        "module",
        "2.0",
        "after",
        "No_module_named_'numpyro'",
    ]
