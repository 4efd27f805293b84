"""Starting worker processes by ``spawn`` from a script without an ``if __name__ == "__main__":`` guard.

``spawn`` (a fresh interpreter per process: nothing inherited from this process's threads) runs the main script
again in every new process, under the name ``__mp_main__``, so that objects defined at its top level can be
unpickled there. A plain script whose code is not under the guard would start its whole job again in each
process, which fails there ("An attempt has been made to start a new process before the current process has
finished its bootstrapping phase"). The Gibbs sampler's chain processes and a study's Dask workers need nothing
of the script (their work is defined in the package), so while :func:`spawn_skips_main_script` is open the main
module is marked as a package's ``__main__`` (``__spec__.name == "__main__"``), which ``spawn`` leaves alone as it
does for ``python -m package``. What the script itself defines or registers (a family added to the registry at
its top level) is then unknown to those processes.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path

__all__ = ["main_is_guarded", "spawn_skips_main_script"]


def main_is_guarded() -> bool:
    """Whether ``spawn`` can start processes as it is: the main module is not an unguarded script.

    Returns
    -------
    bool
        True for interactive sessions, ``python -c``, modules run with ``-m``, the ``bayesclass`` command and
        scripts that mention ``__name__`` and ``"__main__"`` (the guard); False for a script without them.
    """
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if path is None or getattr(getattr(main, "__spec__", None), "name", None) is not None:
        return True
    try:
        source = Path(path).read_text(errors="replace")
    except OSError:
        return False
    return "__name__" in source and "__main__" in source


@contextlib.contextmanager
def spawn_skips_main_script() -> Iterator[bool]:
    """While open, processes started by ``spawn`` do not import this process's main script if it has no guard.

    Guarded scripts, ``python -m``, ``python -c``, interactive sessions and the ``bayesclass`` command are not
    touched (module docstring).

    Yields
    ------
    bool
        Whether the main module was marked.
    """
    from importlib.machinery import ModuleSpec

    main = sys.modules.get("__main__")
    if main is None or main_is_guarded():
        yield False
        return
    saved = main.__spec__
    main.__spec__ = ModuleSpec("__main__", None)
    try:
        yield True
    finally:
        main.__spec__ = saved
