"""Command-line flags generated from the model declarations (the registry and its dataclasses).

Every field of a registered family's dataclass, and every field of its nested
prior dataclass, becomes one flag ``--field-name``: its type from the annotation
(``Literal`` -> choices, ``X | None`` -> X, ``bool`` -> ``--x/--no-x``), its help
text from the numpydoc "Parameters" section of the dataclass docstring, its default
from the dataclass. Nothing here names a family or a field: adding a family is one
module and one registry line.

A field can declare, in its ``dataclasses.field(metadata=...)``:

- ``cli_aliases``: extra flag spellings kept for compatibility (``("--prior-sigma",)``);
- ``cli``: ``False`` to keep a field off the command line (none does today).
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import re
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["HyperparameterFlag", "add_hyperparameter_flags", "hyperparameter_flags", "hyperparameters_from_flags"]


@dataclass(frozen=True)
class HyperparameterFlag:
    """One generated flag and where its value goes.

    ``families`` maps every family that has the field to ``(prior field or None, default)``:
    ``None`` for a field of the family itself, else the name of the family's field that
    holds the prior dataclass.
    """

    flag: str
    dest: str
    field: str
    value_type: type
    choices: tuple[str, ...] | None
    help: str
    aliases: tuple[str, ...]
    families: Mapping[str, tuple[str | None, Any]]


def _documented_parameters(cls: type) -> dict[str, str]:
    """``{name: description}`` from the numpydoc "Parameters" section of ``cls``'s docstring."""
    text = inspect.cleandoc(cls.__doc__ or "")
    match = re.search(r"^Parameters\n-+\n(.*?)(?:\n\n[A-Z][a-z]+\n-+\n|\Z)", text, flags=re.S | re.M)
    if not match:
        return {}
    descriptions: dict[str, list[str]] = {}
    current: list[str] = []
    for line in match.group(1).splitlines():
        header = re.match(r"^(\w+(?:\s*,\s*\w+)*)\s*:", line)
        if header and not line.startswith(" "):  # "name : type" or "name_a, name_b : type"
            current = []
            for name in re.split(r"\s*,\s*", header.group(1)):
                descriptions[name] = current
        elif line.strip():
            current.append(line.strip())
    return {name: _plain(" ".join(lines)) for name, lines in descriptions.items()}


def _plain(text: str) -> str:
    """reStructuredText markup of a docstring as plain terminal text."""
    text = re.sub(r":\w+:`([^`]*)`", r"\1", text).replace("``", "")  # :math:`x`, ``code``
    text = re.sub(r"\\(?:boldsymbol|mathbf|mathrm|operatorname)\s*", "", text)  # typography only
    return re.sub(r"\\(\w+)", r"\1", text).replace("{", "").replace("}", "")  # \sigma -> sigma


def _value_type(annotation: Any) -> tuple[type, tuple[str, ...] | None]:
    """(the Python type a flag parses to, the choices of a ``Literal``) of a field annotation."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        members = [member for member in typing.get_args(annotation) if member is not type(None)]
        if len(members) != 1:
            raise TypeError(f"cannot make a flag of the annotation {annotation!r}")
        return _value_type(members[0])
    if origin is Literal:
        choices = typing.get_args(annotation)
        return type(choices[0]), tuple(choices)
    if annotation in (bool, int, float, str):
        return annotation, None
    raise TypeError(f"cannot make a flag of the annotation {annotation!r}")


def _flag_fields(family: type) -> list[tuple[str | None, dataclasses.Field, Any, str]]:
    """(prior field or None, field, annotation, help) for every field of ``family`` and of its prior dataclasses."""
    found = []
    hints = typing.get_type_hints(family)
    documented = _documented_parameters(family)
    for field in dataclasses.fields(family):
        annotation = hints[field.name]
        if isinstance(annotation, type) and dataclasses.is_dataclass(annotation):
            nested_hints = typing.get_type_hints(annotation)
            nested_documented = _documented_parameters(annotation)
            for nested in dataclasses.fields(annotation):
                if nested.metadata.get("cli", True):
                    help_text = nested_documented.get(nested.name, "")
                    found.append((field.name, nested, nested_hints[nested.name], help_text))
        elif field.metadata.get("cli", True):
            found.append((None, field, annotation, documented.get(field.name, "")))
    return found


def hyperparameter_flags(registry: Mapping[str, type]) -> list[HyperparameterFlag]:
    """One :class:`HyperparameterFlag` per field name over every family of ``registry``.

    A field name several families share (``link``, ``class_concentration``) is one flag;
    its choices are the union, its type must agree.
    """
    merged: dict[str, dict[str, Any]] = {}
    for family_name, family in registry.items():
        for prior_field, field, annotation, help_text in _flag_fields(family):
            value_type, choices = _value_type(annotation)
            default = field.default if field.default is not dataclasses.MISSING else None
            entry = merged.setdefault(
                field.name,
                {"type": value_type, "choices": (), "help": help_text, "aliases": (), "families": {}},
            )
            if entry["type"] is not value_type:
                raise TypeError(
                    f"field {field.name!r} has type {value_type} in {family_name} but {entry['type']} elsewhere"
                )
            entry["choices"] = (*entry["choices"], *(c for c in choices or () if c not in entry["choices"]))
            entry["aliases"] = (*entry["aliases"], *field.metadata.get("cli_aliases", ()))
            entry["families"][family_name] = (prior_field, default)
            entry["help"] = entry["help"] or help_text
    return [
        HyperparameterFlag(
            flag="--" + name.replace("_", "-"),
            dest=name,
            field=name,
            value_type=entry["type"],
            choices=entry["choices"] or None,
            help=entry["help"],
            aliases=tuple(dict.fromkeys(entry["aliases"])),
            families=entry["families"],
        )
        for name, entry in merged.items()
    ]


class _StoreSpelling(argparse.Action):
    """Store the value and remember the spelling the user typed (for messages about that flag)."""

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, values)
        _remember(namespace, self.dest, option_string)


class _BooleanSpelling(argparse.BooleanOptionalAction):
    def __call__(self, parser, namespace, values, option_string=None):
        super().__call__(parser, namespace, values, option_string)
        _remember(namespace, self.dest, option_string)


def _remember(namespace: argparse.Namespace, dest: str, option_string: str | None) -> None:
    spellings = getattr(namespace, "_flag_spellings", None) or {}
    spellings[dest] = option_string
    namespace._flag_spellings = spellings


def _help(flag: HyperparameterFlag) -> str:
    defaults = "; ".join(f"{family}: {default!r}" for family, (_, default) in flag.families.items())
    return f"{flag.help} [default {defaults}]".replace("%", "%%")


def add_hyperparameter_flags(parser: argparse.ArgumentParser, registry: Mapping[str, type]) -> None:
    """Add every generated flag to ``parser``, grouped by the first family that declares it.

    Each flag's argparse default is ``None`` ("not given"): the family's own default applies.
    """
    groups: dict[str, argparse._ArgumentGroup] = {}
    for flag in hyperparameter_flags(registry):
        owner = next(iter(flag.families))
        if owner not in groups:
            groups[owner] = parser.add_argument_group(f"{owner} model (and the families named in a flag's default)")
        group = groups[owner]
        names = (flag.flag, *flag.aliases)
        if flag.value_type is bool:
            group.add_argument(*names, dest=flag.dest, action=_BooleanSpelling, default=None, help=_help(flag))
        else:
            group.add_argument(
                *names,
                dest=flag.dest,
                action=_StoreSpelling,
                type=flag.value_type,
                choices=flag.choices,
                default=None,
                metavar=None if flag.choices else flag.value_type.__name__.upper(),
                help=_help(flag),
            )


def hyperparameters_from_flags(args: argparse.Namespace, model: str, registry: Mapping[str, type]) -> dict[str, Any]:
    """The keyword arguments of family ``model`` from the parsed flags (priors as dicts of their fields).

    Raises
    ------
    ValueError
        A flag that belongs only to other families than ``model`` was given.
    """
    kwargs: dict[str, Any] = {}
    spellings = getattr(args, "_flag_spellings", None) or {}
    for flag in hyperparameter_flags(registry):
        value = getattr(args, flag.dest, None)
        if value is None:
            continue
        if model not in flag.families:
            owners = ", ".join(flag.families)
            raise ValueError(f"{spellings.get(flag.dest) or flag.flag} applies to --model {owners}, not {model}")
        prior_field, _ = flag.families[model]
        if prior_field is None:
            kwargs[flag.field] = value
        else:
            kwargs.setdefault(prior_field, {})[flag.field] = value
    return kwargs
