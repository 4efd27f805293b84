"""Comparison studies, the analyst's entry: ``read_spec``, ``run``, ``load``, ``report`` and the example spec.

A study is a declared grid (models x data sets x training sizes x repeats) of fits, each scored by the one
evaluation path; see :mod:`bayesclass.inference.studies.spec` (the spec), :mod:`bayesclass.inference.studies.runner`
(running it on Dask, resumably) and :mod:`bayesclass.reports.study_report` (its page)::

    import bayesclass.study as bs
    bs.write_example("ex.toml")
    table = bs.run(bs.read_spec("ex.toml"), "ex/")     # a pandas DataFrame: cell x estimate x metric
    bs.write_report("ex.html", bs.report("ex/"))
"""

from __future__ import annotations

from pathlib import Path

from bayesclass.inference.io import atomic_write
from bayesclass.inference.studies.runner import load, run_cell
from bayesclass.inference.studies.runner import run_study as run
from bayesclass.inference.studies.spec import (
    EXAMPLE_SPEC,
    EXAMPLES,
    MAX_CELLS,
    STACK_EXAMPLE_SPEC,
    StudySpec,
    cells,
    grid_size,
    read_spec,
)
from bayesclass.reports.html import write_report
from bayesclass.reports.study_report import study_report

__all__ = [
    "EXAMPLES",
    "EXAMPLE_SPEC",
    "MAX_CELLS",
    "STACK_EXAMPLE_SPEC",
    "StudySpec",
    "cells",
    "grid_size",
    "load",
    "read_spec",
    "report",
    "run",
    "run_cell",
    "write_example",
    "write_report",
]


def report(out: str | Path, *, title: str | None = None) -> str:
    """The HTML page of the study whose results are in the folder ``out`` (``bayesclass study ... --out``).

    Parameters
    ----------
    out : str or pathlib.Path
        The study's results folder.
    title : str or None, default None
        The page title (None: ``"bayesclass study: "`` and the studies' names).

    Returns
    -------
    str
        The page as HTML text, for :func:`write_report`.

    Raises
    ------
    ValueError
        If the folder holds no finished cell yet.
    """
    from bayesclass import __version__

    return study_report(out, title=title, version=__version__)


def write_example(path: str | Path, *, example: str = "plugin") -> Path:
    """Write a built-in example spec (:data:`EXAMPLES`, commented) to ``path``, atomically.

    Parameters
    ----------
    path : str or pathlib.Path
        Where to write the spec; it must end in ``.toml``.
    example : {"plugin", "stack"}, default "plugin"
        Which example: the posterior against its plug-ins (:data:`EXAMPLE_SPEC`), or stacking against the best
        single family (:data:`STACK_EXAMPLE_SPEC`).

    Returns
    -------
    pathlib.Path
        The path written.

    Raises
    ------
    ValueError
        If ``path`` does not end in ``.toml``, or ``example`` is not a key of :data:`EXAMPLES`.
    """
    path = Path(path)
    if example not in EXAMPLES:
        raise ValueError(f"example {example!r} is not a built-in example spec; choose among {', '.join(EXAMPLES)}")
    if path.suffix != ".toml":
        raise ValueError(f"the example spec path {str(path)!r} must end in .toml")
    with atomic_write(path) as temporary:
        temporary.write_text(EXAMPLES[example], encoding="utf-8")
    return path
