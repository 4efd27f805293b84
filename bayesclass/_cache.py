"""Where bayesclass keeps what it can rebuild: compiled samplers and copies of bundled data sets.

``$BAYESCLASS_CACHE_DIR``, else ``$XDG_CACHE_HOME/bayesclass``, else ``~/.cache/bayesclass``.
Everything in it may be deleted at any time; it is rebuilt on the next use.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["cache_directory"]


def cache_directory() -> Path:
    """The cache folder (not created here)."""
    if os.environ.get("BAYESCLASS_CACHE_DIR"):
        return Path(os.environ["BAYESCLASS_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "bayesclass"
