"""``python -m bayesclass`` and the ``bayesclass`` command: the command line, interruptible from its first moment.

The console script calls :func:`main` here, which imports the command line itself, so that a Ctrl-C (or SIGTERM)
while the interpreter is still importing it ends like any other interrupt, with exit code 130 and one line, not a
Python traceback.
"""

from __future__ import annotations

import signal
import sys

__all__ = ["main"]


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt(f"signal {signal.Signals(signum).name}")


def main() -> int:
    """Run ``bayesclass`` with ``sys.argv``; an interrupt before the command starts exits 130.

    While the command line is imported, SIGINT and SIGTERM are only recorded: an exception raised inside the
    import of a C extension becomes another error (NumPy's "Importing the numpy C-extensions failed"). Then
    the command line handles them itself (:func:`bayesclass.cli.main`).

    Returns
    -------
    int
        The command's exit code (:func:`bayesclass.cli.main`).
    """
    received: list[int] = []
    try:
        previous = {
            signum: signal.signal(signum, lambda number, frame: received.append(number))
            for signum in (signal.SIGINT, signal.SIGTERM)
            if signal.getsignal(signum) is not signal.SIG_IGN
        }
        try:
            from bayesclass.cli import main as command_line
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, _interrupt if handler is signal.SIG_DFL else handler)
        if received:
            raise KeyboardInterrupt
        return command_line()
    except KeyboardInterrupt:  # before the command line handles interrupts itself
        print("bayesclass: interrupted; nothing was written", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
