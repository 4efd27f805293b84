"""Shared helpers of the bad-input table: run one command in-process and read its one-line error."""

from __future__ import annotations

from bayesclass.cli import main


def run(*argv: str) -> int:
    """Run ``bayesclass ARGV`` in-process and return its exit code (argparse's own exits included)."""
    try:
        return main(list(argv))
    except SystemExit as exit_:  # argparse's own usage errors
        return int(exit_.code)


def assert_one_line_error(error: str, fragment: str) -> None:
    """The command's stderr holds ``fragment`` and no Python traceback."""
    assert fragment in error, error
    assert "Traceback" not in error, error
