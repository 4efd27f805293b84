"""What the command line says on stderr besides its results: notes, warnings and debug lines, via stdlib logging.

One handler on the ``bayesclass`` logger and on ``py.warnings`` (where :func:`logging.captureWarnings` sends
Python warnings, the libraries' included) writes one line per record::

    bayesclass: warning: <message>
    bayesclass: note: <message>
    bayesclass: debug: <message>

A warning keeps only its message's first line: no file path of the library that raised it, no source line
(``-v`` adds the warning's category and where it was raised). The verbosity (:func:`configure`): ``-q`` (-1)
shows warnings and errors only, no notes and no progress bars; the default (0) adds notes; ``-v`` (1) adds debug
lines.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import warnings
from collections.abc import Iterator
from typing import TextIO

__all__ = ["LOGGER", "configure"]

#: the package's logger: ``LOGGER.info`` is a note, ``LOGGER.debug`` shows with ``-v``
LOGGER = logging.getLogger("bayesclass")

_LEVELS = {-1: logging.WARNING, 0: logging.INFO, 1: logging.DEBUG}
_NAMES = {logging.DEBUG: "debug", logging.INFO: "note", logging.WARNING: "warning"}


class _OneLine(logging.Formatter):
    """``bayesclass: <level>: <message>`` on one line."""

    def format(self, record: logging.LogRecord) -> str:
        level = _NAMES.get(record.levelno, record.levelname.lower())
        message = record.getMessage().strip()
        return f"bayesclass: {level}: {message.splitlines()[0] if message else message}"


def _format_warning(verbose: bool):
    """A ``warnings.formatwarning`` that gives the message alone (with its category and origin when ``verbose``)."""

    def formatwarning(message, category, filename, lineno, line=None) -> str:
        text = str(message).strip().splitlines()[0] if str(message).strip() else category.__name__
        return f"{text} ({category.__name__} at {filename}:{lineno})" if verbose else text

    return formatwarning


@contextlib.contextmanager
def configure(verbosity: int = 0, *, stream: TextIO | None = None) -> Iterator[logging.Handler]:
    """Route notes, warnings (Python's included) and debug lines to ``stream`` as one-line records.

    Everything is restored when the block ends (handlers, levels, ``warnings`` hooks), so that a program
    calling :func:`bayesclass.cli.main` several times, or tests, are left as they were.

    Parameters
    ----------
    verbosity : {-1, 0, 1}, default 0
        -1 (``-q``): warnings and errors only; 0: also notes; 1 (``-v``): also debug lines and the origin of
        each warning.
    stream : text stream or None, default None
        Where the lines go (None: ``sys.stderr`` at the time of each record).

    Yields
    ------
    logging.Handler
        The handler that writes the lines.

    Raises
    ------
    ValueError
        A verbosity other than -1, 0 or 1.
    """
    if verbosity not in _LEVELS:
        raise ValueError(f"verbosity must be -1 (quiet), 0 or 1 (verbose), got {verbosity!r}")
    handler = _StderrHandler(stream)
    handler.setFormatter(_OneLine())
    loggers = [LOGGER, logging.getLogger("py.warnings")]
    saved = [(logger, logger.level, logger.propagate) for logger in loggers]
    formatwarning = warnings.formatwarning
    for logger in loggers:
        logger.addHandler(handler)
        logger.setLevel(_LEVELS[verbosity])
        logger.propagate = False
    warnings.formatwarning = _format_warning(verbose=verbosity > 0)
    captured_before = logging._warnings_showwarning is not None  # type: ignore[attr-defined]
    logging.captureWarnings(True)
    try:
        yield handler
    finally:
        if not captured_before:
            logging.captureWarnings(False)
        warnings.formatwarning = formatwarning
        for logger, level, propagate in saved:
            logger.removeHandler(handler)
            logger.setLevel(level)
            logger.propagate = propagate


class _StderrHandler(logging.StreamHandler):
    """A stream handler on ``sys.stderr`` as it is when a record is written (tests swap it), or a fixed stream."""

    def __init__(self, stream: TextIO | None) -> None:
        super().__init__(stream if stream is not None else sys.stderr)
        self._fixed = stream is not None

    def emit(self, record: logging.LogRecord) -> None:
        if not self._fixed:
            self.setStream(sys.stderr)
        super().emit(record)
