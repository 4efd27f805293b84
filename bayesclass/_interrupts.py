"""Interrupts (Ctrl-C, i.e. SIGINT, and SIGTERM) that are never lost and never cut a file in half.

A command runs inside :func:`handling_interrupts`: both signals raise ``KeyboardInterrupt`` and are recorded.
Three things can go wrong with Python's own handling, and each was seen:

- Python loses a ``KeyboardInterrupt`` raised where exceptions are ignored (a garbage-collector or weakref
  callback, a ``__del__``, a ctypes callback: "Exception ignored in ..."), and the command goes on and writes
  its output. The record keeps the interrupt: :func:`atomic_write` completes no file while an interrupt is
  recorded that was neither raised through to the command nor handled (:func:`interrupt_handled`, e.g. draws
  kept with ``--keep-partial``), and the command asks :func:`raise_unhandled_interrupt` at its end.
- An exception raised by a signal handler inside a library that takes a lock and releases it in a ``finally``
  can skip the release: a SIGINT while xarray wrote a netCDF file left xarray's HDF5 lock taken, and the
  process waited for it forever. :func:`deferred_interrupts` holds interrupts back (recorded, raised when the
  block ends) over such code.
- An interrupt landing between the creation of a temporary file and the ``try`` that removes it, or between
  the rename of a finished file and the code that says so, leaves a stray file or a wrong message.
  :func:`atomic_write` chooses the temporary name before the file exists, creates it inside the ``try`` that
  removes it, and renames it and records the finished file (:func:`written_files`) with interrupts deferred.

The handlers live only as long as the outermost :func:`handling_interrupts` block; the caller's are restored at
its end. There the signal is passed on to the caller's handler (a library call, ``bayesclass.cli.main`` run
in-process from a test or a notebook): after the block's cleanup (no file completed, chain processes stopped), a
SIGTERM at its default still ends the process and a caller's own handler still runs; Python's SIGINT handler
would have raised the ``KeyboardInterrupt`` this module raised. Only the ``bayesclass`` program
(:mod:`bayesclass.__main__`) keeps the signal, and exits with code 130.

Interrupts are deferred without any function call between entering the deferral and the guarded work: a
Python signal handler runs only in the main thread, at a function call or a backward jump, and this module's
handler raises only outside deferrals. Threads other than the main one never receive a ``KeyboardInterrupt``
from a signal, so nothing here applies to them.
"""

from __future__ import annotations

import contextlib
import functools
import os
import secrets
import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

__all__ = [
    "NoDrawsYet",
    "before_draws",
    "atomic_write",
    "deferred_interrupts",
    "handling_interrupts",
    "interrupt_handled",
    "interrupt_pending",
    "no_draws_yet",
    "pass_on_interrupt",
    "raise_unhandled_interrupt",
    "written_files",
]

#: the signals that interrupt a command
SIGNALS = (signal.SIGINT, signal.SIGTERM)


class _State:
    """The interrupt record of this process (its main thread)."""

    scopes = 0  # nested handling_interrupts blocks
    deferring = 0  # nested deferrals: the handler records and does not raise
    received: int | None = None  # the last signal not yet raised through or handled
    signalled: int | None = None  # the first signal of the outermost scope, handled or not (pass_on_interrupt)
    handled = 0  # interrupts dealt with (draws kept) in the outermost scope
    written: list[Path] = []  # files completed by atomic_write in the outermost scope


def _handler(signum: int, frame) -> None:
    _State.received = signum
    if _State.signalled is None:
        _State.signalled = signum
    if not _State.deferring:
        raise KeyboardInterrupt(f"signal {signal.Signals(signum).name}")


def interrupt_handled() -> None:
    """The recorded interrupt was dealt with (the draws so far kept): it no longer stops a file or a command."""
    _State.received = None
    _State.handled += 1


@contextlib.contextmanager
def before_draws(keep_partial: bool, where: str) -> Iterator[None]:
    """A block before a sampler's first kept draw: with ``keep_partial``, an interrupt in it says there are none.

    Parameters
    ----------
    keep_partial : bool
        Whether the draws made so far are to be kept on an interrupt.
    where : str
        What the block does, for the message (e.g. ``"while the model was compiled"``).

    Raises
    ------
    NoDrawsYet
        An interrupt with ``keep_partial`` that no sampler inside the block dealt with (a plain
        ``KeyboardInterrupt`` without ``keep_partial``).
    """
    handled = _State.handled
    try:
        yield
    except NoDrawsYet:
        raise
    except KeyboardInterrupt:
        if not keep_partial or _State.handled != handled:  # draws were kept, then a second interrupt
            raise
        raise no_draws_yet(where) from None


def written_files() -> list[Path]:
    """The files :func:`atomic_write` completed in the current (or last) outermost :func:`handling_interrupts`.

    Returns
    -------
    list of pathlib.Path
        In the order they were completed.
    """
    return list(_State.written)


def raise_unhandled_interrupt() -> None:
    """Raise ``KeyboardInterrupt`` if an interrupt was recorded and neither raised through nor handled.

    Raises
    ------
    KeyboardInterrupt
        A signal arrived whose ``KeyboardInterrupt`` was lost (or is still deferred).
    """
    if _State.received is not None:
        raise KeyboardInterrupt(f"signal {signal.Signals(_State.received).name}")


class NoDrawsYet(KeyboardInterrupt):
    """An interrupt with ``keep_partial`` before the first kept draw: nothing to keep; ``str()`` says where."""


def no_draws_yet(where: str) -> NoDrawsYet:
    """The interrupt to raise when ``keep_partial`` finds no draw to keep, ``where`` saying what was running.

    Parameters
    ----------
    where : str
        E.g. ``"during the warm-up (step 300 of 1000)"``.

    Returns
    -------
    NoDrawsYet
        Its message: ``"no draws yet: interrupted <where>"``.
    """
    return NoDrawsYet(f"no draws yet: interrupted {where}")


def _is_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def interrupt_pending() -> bool:
    """Whether an interrupt is recorded and neither raised through nor handled (see the module docstring).

    Returns
    -------
    bool
        True after a signal whose ``KeyboardInterrupt`` was deferred or lost.
    """
    return _State.received is not None


@contextlib.contextmanager
def handling_interrupts(pass_on: bool = True) -> Iterator[None]:
    """SIGINT and SIGTERM raise ``KeyboardInterrupt`` and are recorded while the block runs (main thread only).

    The outermost block starts a fresh record and list of written files, and keeps Python from printing an
    interrupt it loses ("Exception ignored in ...": it is recorded and raised later); the previous handlers
    are restored at its end, and the first signal that arrived is then passed on to them (module docstring).
    A signal that its parent process set to be ignored (a background job's SIGINT) stays ignored.

    Parameters
    ----------
    pass_on : bool, default True
        Whether the outermost block gives its signal to the restored handlers as it ends
        (:func:`pass_on_interrupt`); False for the command line, which does so itself once it has said what was
        written, or, as the ``bayesclass`` program, ends with exit code 130 instead. Ignored by an inner block.
    """
    if not _is_main_thread():  # signals are handled in the main thread only
        yield
        return
    if _State.scopes:
        _State.scopes += 1
        try:
            yield
        finally:
            _State.scopes -= 1
        return
    _State.received, _State.signalled, _State.written, _State.handled = None, None, [], 0
    previous: dict[int, object] = {}
    previous_hook = sys.unraisablehook
    sys.unraisablehook = functools.partial(_unraisable, previous_hook)
    try:
        for signum in SIGNALS:
            if signal.getsignal(signum) is not signal.SIG_IGN:
                previous[signum] = signal.signal(signum, _handler)
        _State.scopes += 1
        try:
            yield
        finally:
            _State.scopes -= 1
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)  # type: ignore[arg-type]
        sys.unraisablehook = previous_hook
        if pass_on:
            pass_on_interrupt()


def pass_on_interrupt() -> None:
    """Give the signal that reached the last outermost :func:`handling_interrupts` block to the handlers now in place.

    :func:`handling_interrupts` calls it as it ends, after restoring the caller's handlers, unless told not to
    (the command line calls it once it has said what was written). Python's SIGINT handler would have done what
    this module's did (raise ``KeyboardInterrupt``, which went on to the caller or was handled: draws kept with
    ``keep_partial``) and gets nothing; any other disposition (SIGTERM at its default: the process ends; a
    caller's own handler) gets the signal now. Once per block; nothing inside a block or outside the main thread.
    """
    signum = _State.signalled
    if signum is None or _State.scopes or not _is_main_thread():
        return
    _State.signalled = None
    if signal.getsignal(signum) is not signal.default_int_handler:
        signal.raise_signal(signum)


def _unraisable(previous, unraisable) -> None:
    """``sys.unraisablehook`` while interrupts are handled: a lost interrupt is recorded, not printed."""
    if isinstance(unraisable.exc_value, KeyboardInterrupt) and _State.received is not None:
        return  # raised again where it can be (raise_unhandled_interrupt), without "Exception ignored in ..."
    previous(unraisable)


class deferred_interrupts:  # noqa: N801  (used as a context manager, like a function)
    """While the block runs, SIGINT and SIGTERM are recorded; the ``KeyboardInterrupt`` is raised at its end.

    For code an exception from a signal handler must not cut: C libraries that hold a lock (netCDF/HDF5
    writing), the completion of a file. Only inside :func:`handling_interrupts` (elsewhere Python's own
    handlers are in place and the block runs unguarded). A second signal during the block changes nothing:
    the block is short or bounded (a file written at disk speed).
    """

    def __enter__(self) -> None:
        self.main = _is_main_thread()  # other threads receive no signals: nothing to defer there
        if self.main:
            _State.deferring += 1

    def __exit__(self, kind, error, traceback) -> None:
        if not self.main:
            return
        _State.deferring -= 1
        if not _State.deferring and kind is None and _State.scopes:
            raise_unhandled_interrupt()


def _temporary_name(path: Path) -> Path:
    return path.parent / f".{path.name}.{secrets.token_hex(6)}.tmp"


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; when the block ends without error, rename it over ``path``.

    An interrupted or failed write never leaves a truncated file or a temporary file behind nor destroys an
    earlier file, wherever the interrupt lands (module docstring); a file is not completed after an interrupt
    that was recorded and lost. The completed file is listed by :func:`written_files`. The file gets the
    permissions of a plain ``open`` (0666 less the umask). SIGINT and SIGTERM raise ``KeyboardInterrupt``
    while the block runs (:func:`handling_interrupts`).

    Parameters
    ----------
    path : str or os.PathLike
        The file to write; its directory must exist.

    Yields
    ------
    pathlib.Path
        The temporary file to write to (created empty).

    Raises
    ------
    ValueError
        The directory does not exist.
    """
    path = Path(path)
    if not path.parent.resolve().is_dir():
        raise ValueError(f"directory {str(path.parent)!r} does not exist; create it first")
    main = _is_main_thread()
    with handling_interrupts():
        temporary, ours = _temporary_name(path), True  # named before it exists: the finally removes it
        try:
            with deferred_interrupts():
                try:
                    os.close(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
                except FileExistsError:  # not ours (a name chosen at random twice): leave it alone
                    ours = False
                    raise
            yield temporary
            with deferred_interrupts():
                raise_unhandled_interrupt()  # one that Python lost while the file was written
                os.replace(temporary, path)
                _State.written.append(path)
        finally:
            if main:
                _State.deferring += 1  # no call before the removal: an interrupt here only records
            try:
                if ours:
                    temporary.unlink(missing_ok=True)
            finally:
                if main:
                    _State.deferring -= 1
