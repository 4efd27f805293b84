"""``python -m bayesclass`` and the ``bayesclass`` command: the command line, interruptible from its first moment.

The console script calls :func:`console_main` here, which imports the command line itself, so that a Ctrl-C (or
SIGTERM) while the interpreter is still importing it ends like any other interrupt, with exit code 130 and one
line, not a Python traceback. It is the process's own entry and its handling of signals is the process's: code
that runs a command in-process calls :func:`bayesclass.cli.main`, which passes an interrupt on to its caller.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Sequence

__all__ = ["console_main"]

SIGNALS = (signal.SIGINT, signal.SIGTERM)


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt(f"signal {signal.Signals(signum).name}")


def console_main(argv: Sequence[str] | None = None) -> int:
    """Run the ``bayesclass`` program with ``argv``; an interrupt at any moment exits 130 with one line.

    For the console script and ``python -m bayesclass`` only, whose process ends when it returns.

    While the command line is imported, SIGINT and SIGTERM are only recorded: an exception raised inside the
    import of a C extension becomes another error (NumPy's "Importing the numpy C-extensions failed"). Then
    the command line handles them itself (:func:`bayesclass.cli.run`). Once the command has ended, they are
    ignored: its outputs are complete and its exit code stands while the interpreter shuts down (seconds, with
    JAX or Dask loaded), instead of the process being killed by a signal at that point.

    Parameters
    ----------
    argv : sequence of str or None, default None
        The arguments after the program name (None: ``sys.argv[1:]``).

    Returns
    -------
    int
        The command's exit code (:func:`bayesclass.cli.run`), 130 when interrupted.
    """
    received: list[int] = []
    try:
        previous = {
            signum: signal.signal(signum, lambda number, frame: received.append(number))
            for signum in SIGNALS
            if signal.getsignal(signum) is not signal.SIG_IGN
        }
        try:
            from bayesclass.cli import run as command_line
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, _interrupt if handler is signal.SIG_DFL else handler)
        if received:
            raise KeyboardInterrupt
        code = command_line(argv, program=True)
    except KeyboardInterrupt as interrupt:  # before the command line handles interrupts, or just after
        cli = sys.modules.get("bayesclass.cli")
        written = "nothing was written" if cli is None else cli._what_was_written(interrupt)
        print(f"bayesclass: interrupted; {written}", file=sys.stderr)
        code = 130
    for signum in SIGNALS:  # the command has ended: what it wrote and its exit code stand
        signal.signal(signum, signal.SIG_IGN)
    return code


main = console_main  # the name console scripts installed before console_main call

if __name__ == "__main__":
    sys.exit(console_main())
