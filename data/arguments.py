"""How a message names an argument: in the language of the interface the user is in.

The same bad input is refused from Python and from the command line by the same check, so a message names the
fix through :func:`spelled`, which renders it for the interface in use: from Python ``missing='drop'``,
``GaussianClassConditionalPrior(covariance_prior='inverse_wishart')``, ``method='map'``; from the command line
``--missing drop``, ``--covariance-prior inverse_wishart``, ``--method map``. Python is the default; the command
line speaks for the duration of one command (:func:`speaking`, in :func:`bayesclass.cli.main`), restored
afterwards, so that an in-process ``main()`` leaves its caller's messages in Python.

A flag is ``--`` and the argument's name with ``-`` for ``_`` (:func:`flag_of`), the rule that also names the
flags generated from the families' dataclass fields (:mod:`bayesclass._flags`); :data:`FLAG_NAMES` lists the
arguments whose flag is named otherwise. A boolean is its flag or the flag's ``--no-`` form.
"""

from __future__ import annotations

import contextlib
import shlex
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from typing import Literal

__all__ = ["FLAG_NAMES", "Interface", "flag_of", "interface", "speaking", "spelled"]

#: who reads a message: a Python caller or a command-line user
Interface = Literal["python", "cli"]

_INTERFACE: ContextVar[Interface] = ContextVar("bayesclass_interface", default="python")

#: Python arguments whose command-line flag is not their own name (the flag's name, without ``--``)
FLAG_NAMES: Mapping[str, str] = {
    "kind": "method",  # a point estimate's kind is fitted with --method
    "random_seed": "seed",
    "n_replicates": "replicates",
    "progressbar": "progress",  # --no-progress
    "confirm_large": "yes",  # bayesclass study --yes
}

_NO_VALUE = object()


def interface() -> Interface:
    """The interface the messages of this context are written for.

    Returns
    -------
    {"python", "cli"}
        ``"python"`` unless inside :func:`speaking`.
    """
    return _INTERFACE.get()


@contextlib.contextmanager
def speaking(language: Interface) -> Iterator[None]:
    """Word messages for ``language`` inside the ``with`` block; the previous interface is restored after it.

    Parameters
    ----------
    language : {"python", "cli"}
        The interface of the user.

    Yields
    ------
    None
    """
    token = _INTERFACE.set(language)
    try:
        yield
    finally:
        _INTERFACE.reset(token)


def flag_of(name: str) -> str:
    """The command-line flag of the Python argument ``name``: ``--`` + its name with ``-`` for ``_``.

    Parameters
    ----------
    name : str
        The argument (or dataclass field) name, e.g. ``"covariance_prior"``.

    Returns
    -------
    str
        The flag, e.g. ``"--covariance-prior"``; ``"--seed"`` for ``random_seed`` (:data:`FLAG_NAMES`).
    """
    return "--" + FLAG_NAMES.get(name, name).replace("_", "-")


def spelled(name: str, value: object = _NO_VALUE, *, owner: str = "", metavar: str = "") -> str:
    """The argument ``name`` (set to ``value``) as the user of the current interface writes it.

    Parameters
    ----------
    name : str
        The Python argument or dataclass field.
    value : object, optional
        The value to name: ``repr`` in Python, shell-quoted text on the command line (a boolean: the flag or
        its ``--no-`` form; a list: its items separated by commas). Without it (and without ``metavar``), the
        argument alone: ``variance_alpha`` or ``--variance-alpha`` (with ``owner``, ``owner(name=...)``).
    owner : str, optional
        The class the field belongs to, named in Python only: ``owner(name=value)``.
    metavar : str, optional
        A placeholder for the value, written as it is: ``target=COLUMN`` or ``--target COLUMN``.

    Returns
    -------
    str
        E.g. ``"missing='drop'"`` or ``"--missing drop"``; ``"standardize=False"`` or ``"--no-standardize"``;
        ``"GaussianClassConditionalPrior(covariance_prior='inverse_wishart')"`` or
        ``"--covariance-prior inverse_wishart"``.
    """
    flag = flag_of(name)
    if hasattr(value, "item") and not isinstance(value, str):  # a NumPy scalar as the Python value it holds
        value = value.item()
    if interface() == "cli":
        if isinstance(value, bool):
            return flag if value else "--no-" + flag.removeprefix("--")
        if isinstance(value, (list, tuple)):  # a list flag takes its items separated by commas
            value = ",".join(map(str, value))
        shown = metavar or ("" if value is _NO_VALUE else _quoted(str(value)))
        return f"{flag} {shown}".rstrip()
    if value is _NO_VALUE and not metavar and not owner:
        return name
    shown = metavar or ("..." if value is _NO_VALUE else repr(value))
    return f"{owner}({name}={shown})" if owner else f"{name}={shown}"


def _quoted(text: str) -> str:
    """``text`` as a shell reads it back; a lone mark such as ``,`` is quoted too, so that it is seen."""
    quoted = shlex.quote(text)
    return f"'{text}'" if quoted == text and not any(character.isalnum() for character in text) else quoted
