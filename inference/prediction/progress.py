"""The progress bar of a prediction over its rows (rich), on standard error.

Drawn on a terminal or in a Jupyter notebook; nothing where standard error is a log file or a pipe (a bar there
would be a stream of control characters), nor when hidden (``bayesclass predict --no-progress`` or ``-q``,
``predict(progress=False)``). A ``delay`` keeps quick predictions silent: the bar appears only once the work has
taken that long, and then shows the rows done, the elapsed and the remaining time.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator

__all__ = ["PREDICTION_PROGRESS_DELAY", "progress_over_rows"]

#: seconds a Python ``predict`` runs before its progress bar appears (quicker predictions draw nothing)
PREDICTION_PROGRESS_DELAY = 1.0


def _progress_console():
    """The console of the progress bar: stderr (stdout keeps the results)."""
    from rich.console import Console

    return Console(stderr=True)


@contextlib.contextmanager
def progress_over_rows(total: int, *, hide: bool = False, delay: float = 0.0) -> Iterator[Callable[[int], None]]:
    """A progress bar over rows (rich) on a terminal or in a notebook, yielding ``advance(n)``.

    With ``hide`` or when stderr is neither (a log file, a pipe), nothing is drawn. On an error the bar is
    cleared, so that the error is the one line left.

    Parameters
    ----------
    total : int
        Rows in all.
    hide : bool, default False
        Draw nothing.
    delay : float, default 0.0
        Seconds before the bar appears; work done sooner draws nothing (the bar then stays on screen, at its end,
        once the work is done).

    Yields
    ------
    callable
        ``advance(n)``: ``n`` more rows are done.
    """
    console = None if hide else _progress_console()
    if console is None or not (console.is_terminal or console.is_jupyter):
        yield lambda n: None
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    progress = Progress(
        SpinnerColumn(),
        TextColumn("predicting"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("rows"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
    )
    task = progress.add_task("rows", total=max(total, 1))
    done = 0
    lock = threading.Lock()
    started = False

    def start() -> None:
        nonlocal started
        with lock:
            if not started:
                started = True
                progress.start()

    timer = threading.Timer(delay, start) if delay > 0 else None
    if timer is None:
        start()
    else:
        timer.daemon = True
        timer.start()

    def advance(n: int) -> None:
        nonlocal done
        done += n
        if done > total:  # the total was counted from lines: a cell with a line break makes it low
            progress.update(task, total=done)
        progress.update(task, completed=done)

    try:
        yield advance
    except BaseException:
        progress.live.transient = True
        raise
    finally:
        if timer is not None:
            timer.cancel()
        with lock:
            if started:
                progress.update(task, total=max(done, 1), completed=done)
                progress.stop()
            started = True  # a timer that fires now starts nothing
