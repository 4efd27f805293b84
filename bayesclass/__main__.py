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

    Returns
    -------
    int
        The command's exit code (:func:`bayesclass.cli.main`).
    """
    try:
        if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:  # as Ctrl-C while the command line is imported
            signal.signal(signal.SIGTERM, _interrupt)
        from bayesclass.cli import main as command_line

        return command_line()
    except KeyboardInterrupt:  # before the command line handles interrupts itself
        print("bayesclass: interrupted; nothing was written", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
