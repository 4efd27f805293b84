"""Command-line flags generated from the model declarations (the registry and its dataclasses).

Every field of a registered family's dataclass, and every field of its nested
prior dataclass, becomes one flag ``--field-name``: its type from the annotation
(``Literal`` -> choices, ``X | None`` -> X, ``bool`` -> ``--x/--no-x``), its help
text from the numpydoc "Parameters" section of the dataclass docstring followed by
the field's declared constraints (:mod:`bayesclass.data.constraints`: "(> 0)",
"(integer >= 2)"), its default from the dataclass. The values themselves are checked
by the dataclass, with the same declarations. Nothing here names a family or a field: adding a family is one
module and one registry line.

``--help`` of a :class:`FamilyHelpParser` (the ``fit`` and ``compare`` commands) shows the common flags and
the flags of one family: the one ``--model`` names in the arguments being parsed, else the default family,
with a line saying that ``--model NAME --help`` shows another family's. Every family's flags are parsed all
the same, so a flag of another family is refused with a clear message by :func:`hyperparameters_from_flags`.
A parser that has parsed nothing yet (documentation, tests) lists every family's flags.

A field can declare, in its ``dataclasses.field(metadata=...)``:

- ``cli_aliases``: extra flag spellings kept for compatibility (``("--prior-sigma",)``);
- ``cli``: ``False`` to keep a field off the command line (none does today).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import functools
import inspect
import re
import typing
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bayesclass.data.arguments import flag_of
from bayesclass.data.constraints import rule_of

__all__ = [
    "CheckedInteger",
    "FamilyField",
    "FamilyHelpParser",
    "HyperparameterFlag",
    "add_hyperparameter_flags",
    "hyperparameter_flags",
    "hyperparameters_from_flags",
]


@dataclass(frozen=True)
class FamilyField:
    """One family's declaration of a flag's field.

    Parameters
    ----------
    prior_field : str or None
        None for a field of the family itself, else the name of the family's field
        that holds the prior dataclass the field belongs to.
    default : object
        The dataclass default (None where the field has a default factory).
    choices : tuple or None
        The values of the field's ``Literal`` annotation; None for a free value.
    help : str
        The field's description in its dataclass docstring ("" if undocumented), then its
        declared constraints in parentheses (``"(> 0)"``).
    """

    prior_field: str | None
    default: Any
    choices: tuple[Any, ...] | None
    help: str


@dataclass(frozen=True)
class HyperparameterFlag:
    """One generated flag and where its value goes.

    ``families`` maps every family that has the field to its :class:`FamilyField`;
    ``choices`` is the union of their choices (a value outside one family's own
    choices is refused for that family by :func:`hyperparameters_from_flags`).
    """

    flag: str
    dest: str
    field: str
    value_type: type
    choices: tuple[Any, ...] | None
    help: str
    aliases: tuple[str, ...]
    families: Mapping[str, FamilyField]


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


#: LaTeX commands of the docstrings' math that read better as a symbol in a terminal
_SYMBOLS = {"sim": "~", "le": "<=", "leq": "<=", "ge": ">=", "geq": ">=", "times": "x", "cdot": "*", "infty": "inf"}


def _plain(text: str) -> str:
    """ReStructuredText markup of a docstring as plain terminal text."""
    text = re.sub(r":\w+:`([^`]*)`", r"\1", text).replace("``", "")  # :math:`x`, ``code``
    text = re.sub(r"\\(?:boldsymbol|mathbf|mathrm|operatorname)\s*", "", text)  # typography only
    text = re.sub(r"\\hat\s*\{([^{}]*)\}", r"\1_hat", text)  # \hat{\Sigma} -> Sigma_hat
    text = re.sub(r"\\(\w+)", lambda command: _SYMBOLS.get(command.group(1), command.group(1)), text)
    return text.replace("{", "").replace("}", "")  # \sigma -> sigma, \sim -> ~


def _value_type(annotation: Any) -> tuple[type, tuple[Any, ...] | None]:
    """(the Python type a flag parses to, the choices of a ``Literal``) of a field annotation.

    The annotation is read through :func:`bayesclass.data.constraints.rule_of` (``Annotated``, ``X | None``).
    """
    rule = rule_of(annotation)
    if rule.choices is not None:
        return type(rule.choices[0]), tuple(rule.choices)
    if rule.base in (bool, int, float, str):
        return rule.base, None
    raise TypeError(f"cannot make a flag of the annotation {annotation!r}")


@dataclass(frozen=True)
class _Declared:
    name: str
    value_type: type
    aliases: tuple[str, ...]
    family_field: FamilyField


@functools.cache
def _declared_fields(family: type) -> tuple[_Declared, ...]:
    """Every flag field of ``family`` and of its prior dataclasses (each class's docstring is parsed once)."""
    found = []
    hints = typing.get_type_hints(family, include_extras=True)
    documented = _documented_parameters(family)
    for field in dataclasses.fields(family):
        annotation = hints[field.name]
        if isinstance(annotation, type) and dataclasses.is_dataclass(annotation):
            nested_hints = typing.get_type_hints(annotation, include_extras=True)
            nested_documented = _documented_parameters(annotation)
            found += [
                _declaration(nested, nested_hints[nested.name], nested_documented, prior_field=field.name)
                for nested in dataclasses.fields(annotation)
                if nested.metadata.get("cli", True)
            ]
        elif field.metadata.get("cli", True):
            found.append(_declaration(field, annotation, documented, prior_field=None))
    return tuple(found)


def _declaration(field: dataclasses.Field, annotation: Any, documented: Mapping[str, str], *, prior_field: str | None):
    value_type, choices = _value_type(annotation)
    default = field.default if field.default is not dataclasses.MISSING else None
    text = documented.get(field.name, "")
    constraints = rule_of(annotation).describe()
    if constraints:
        text = f"{text} ({constraints})" if text else f"({constraints})"
    return _Declared(
        name=field.name,
        value_type=value_type,
        aliases=tuple(field.metadata.get("cli_aliases", ())),
        family_field=FamilyField(prior_field=prior_field, default=default, choices=choices, help=text),
    )


def hyperparameter_flags(registry: Mapping[str, type]) -> list[HyperparameterFlag]:
    """One :class:`HyperparameterFlag` per field name over every family of ``registry``.

    A field name several families share (``link``, ``class_concentration``) is one flag;
    its choices are the union, its type must agree.

    Raises
    ------
    TypeError
        Two families declare a field of the same name with different types, or a
        field's annotation has no flag form (only bool, int, float, str, their
        ``Literal`` and ``X | None``).
    """
    merged: dict[str, dict[str, Any]] = {}
    for family_name, family in registry.items():
        for declared in _declared_fields(family):
            entry = merged.setdefault(declared.name, {"type": declared.value_type, "aliases": (), "families": {}})
            if entry["type"] is not declared.value_type:
                raise TypeError(
                    f"field {declared.name!r} has type {declared.value_type.__name__} in {family_name} but "
                    f"{entry['type'].__name__} in {', '.join(entry['families'])}; one flag needs one type, "
                    "so rename one of the fields"
                )
            entry["aliases"] = (*entry["aliases"], *declared.aliases)
            entry["families"][family_name] = declared.family_field
    return [
        HyperparameterFlag(
            flag=flag_of(name),
            dest=name,
            field=name,
            value_type=entry["type"],
            choices=_union_of_choices(entry["families"].values()),
            help=_shared_help(entry["families"]),
            aliases=tuple(dict.fromkeys(entry["aliases"])),
            families=entry["families"],
        )
        for name, entry in merged.items()
    ]


def _union_of_choices(fields: typing.Iterable[FamilyField]) -> tuple[Any, ...] | None:
    choices = [choice for field in fields for choice in field.choices or ()]
    return tuple(dict.fromkeys(choices)) or None


def _shared_help(families: Mapping[str, FamilyField]) -> str:
    """The one description of a field, or each family's where the families describe it differently."""
    texts = {name: field.help for name, field in families.items() if field.help}
    if len(set(texts.values())) <= 1:
        return next(iter(texts.values()), "")
    return " ".join(f"{name}: {text}" for name, text in texts.items())


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
    defaults = "; ".join(f"{family}: {field.default!r}" for family, field in flag.families.items())
    return f"{flag.help} [default {defaults}]".replace("%", "%%")


def _family_help(flag: HyperparameterFlag, family: str) -> str:
    """The help of ``flag`` as ``family`` declares it: its description, constraints and default only."""
    field = flag.families[family]
    return f"{field.help or flag.help} [default {field.default!r}]".replace("%", "%%")


@dataclass
class _Generated:
    """The generated flags of a parser: each flag's action, the shared group and each family's group."""

    actions: list[tuple[HyperparameterFlag, argparse.Action]]
    shared: argparse._ArgumentGroup | None
    groups: dict[str, argparse._ArgumentGroup]


class CheckedInteger(argparse.Action):
    """An integer flag checked when it is parsed, by the check that guards the value in the library.

    ``parser.add_argument("--seed", action=CheckedInteger, check=require_seed)``: the value is converted with
    ``int`` and passed to ``check(value, argument=FLAG)`` (a :mod:`bayesclass.data.constraints` rule's ``check``,
    or a function such as ``require_seed``), so every command's flag is refused with the same one-line message,
    which names the flag as typed: ``--seed must be an integer >= 0, got -1``. A text that is no integer is
    passed to the check as it is, which refuses it the same way.

    Parameters
    ----------
    option_strings, dest, **kwargs
        As :class:`argparse.Action`.
    check : callable
        ``check(value, *, argument) -> int``; raises ``ValueError`` with the message for a refused value.
    """

    def __init__(self, option_strings, dest, *, check, **kwargs):
        super().__init__(option_strings, dest, **kwargs)
        self.check = check

    def __call__(self, parser, namespace, values, option_string=None):
        """Store ``check(int(values))``, or end with ``parser.error`` and the check's message."""
        flag = option_string or self.dest
        try:
            value = int(values)
        except ValueError:
            value = values  # the check refuses it, saying what it must be
        try:
            setattr(namespace, self.dest, self.check(value, argument=flag))
        except (TypeError, ValueError) as error:
            parser.error(str(error))


class OneLineErrorParser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line on stderr (exit code 2), without the usage block."""

    def error(self, message: str) -> typing.NoReturn:
        """Print ``<prog>: error: <message>`` and where to read the flags, then exit with code 2.

        Parameters
        ----------
        message : str
            argparse's description of the error (e.g. an invalid choice and the valid ones).
        """
        self.exit(2, f"{self.prog}: error: {message}; see '{self.prog} --help'\n")


class FamilyHelpParser(OneLineErrorParser):
    """An argument parser whose ``--help`` shows the common flags and one family's generated flags.

    The family is the one ``--model`` names in the arguments being parsed (``fit --model gp --help``), else
    the default of ``--model``; its flags are shown in one group with that family's own help and default
    (the flags it shares with other families included), the other families' flags are left out, and a line
    says how to see another family's. Parsing is unchanged: every family's flags are accepted by the parser,
    and a flag of another family than ``--model`` is refused by :func:`hyperparameters_from_flags`. Without
    generated flags (:func:`add_hyperparameter_flags`), or before any arguments were parsed, the help is
    argparse's own (every family's flags).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._generated: _Generated | None = None
        self._help_family: str | None = None

    def parse_known_args(self, args=None, namespace=None):  # argparse's signature (typed by overloads there)
        """Note the family named by ``--model`` in ``args`` (for ``--help``), then parse as argparse does.

        Parameters
        ----------
        args : sequence of str or None
            The arguments (None: ``sys.argv[1:]``, as argparse).
        namespace : argparse.Namespace or None
            The namespace to fill.

        Returns
        -------
        tuple
            argparse's ``(namespace, unrecognised arguments)``.
        """
        if self._generated is not None:
            import sys

            self._help_family = model_named_in(sys.argv[1:] if args is None else list(args), self._default_model())
        return super().parse_known_args(args, namespace)

    def _default_model(self) -> str | None:
        model = next((action for action in self._actions if action.dest == "model"), None)
        return None if model is None else model.default

    def format_help(self) -> str:
        """The help text of argparse, showing only the family noted by :meth:`parse_known_args` (class docstring).

        Returns
        -------
        str
            The help text.
        """
        family, generated = self._help_family, self._generated
        if generated is None or family is None or family not in generated.groups:
            return super().format_help()
        with _showing_one_family(generated, family, self._default_model()):
            return super().format_help()


@contextlib.contextmanager
def _showing_one_family(generated: _Generated, family: str, default: str | None) -> Iterator[None]:
    """While formatting the help: ``family``'s flags in its group with its help, every other flag hidden."""
    saved_help = [(action, action.help, action.metavar) for _, action in generated.actions]
    groups = [group for group in (generated.shared, *generated.groups.values()) if group is not None]
    saved_groups = [(group, group.title, group.description, list(group._group_actions)) for group in groups]
    try:
        for flag, action in generated.actions:
            action.help = _family_help(flag, family) if family in flag.families else argparse.SUPPRESS
            choices = flag.families[family].choices if family in flag.families else None
            if choices is not None and action.metavar is None:  # the family's own choices, not the union
                action.metavar = "{" + ",".join(map(str, choices)) + "}"
        own = generated.groups[family]
        if generated.shared is not None:
            shared = [action for action in generated.shared._group_actions if action.help is not argparse.SUPPRESS]
            own._group_actions[:0] = shared
            generated.shared._group_actions[:] = []
        others = ", ".join(name for name in generated.groups if name != family)
        own.title = f"--model {family}" + (" (the default family)" if family == default else "")
        own.description = (
            f"priors on standardised inputs (--no-standardize: data's units); another family's flags: --model NAME "
            f"--help, NAME one of {others}"
        )
        yield
    finally:
        for action, text, metavar in saved_help:
            action.help, action.metavar = text, metavar
        for group, title, description, actions in saved_groups:
            group.title, group.description = title, description
            group._group_actions[:] = actions


def model_named_in(args: Sequence[str], default: str | None) -> str | None:
    """The value of the last ``--model NAME`` / ``--model=NAME`` (or an abbreviation) before ``--`` in ``args``.

    Parameters
    ----------
    args : sequence of str
        Command-line arguments.
    default : str or None
        The value when ``--model`` is not given.

    Returns
    -------
    str or None
        The family named, or ``default``.
    """
    named = default
    for index, arg in enumerate(args):
        if arg == "--":
            break
        option, equals, value = arg.partition("=")
        if len(option) >= 4 and "--model".startswith(option):
            if equals:
                named = value
            elif index + 1 < len(args):
                named = args[index + 1]
    return named


def add_hyperparameter_flags(parser: argparse.ArgumentParser, registry: Mapping[str, type]) -> None:
    """Add every generated flag to ``parser``: one argument group per family, one for the shared flags.

    A flag that several families have is added once, to the group of shared flags
    (its default names those families). Each flag's argparse default is ``None``
    ("not given"): the family's own default applies. On a :class:`FamilyHelpParser`, ``--help`` then shows
    one family's flags.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The parser (a :class:`FamilyHelpParser` for the one-family help).
    registry : mapping of str to type
        The families by name.
    """
    shared: list[HyperparameterFlag] = []
    owned: dict[str, list[HyperparameterFlag]] = {}
    for flag in hyperparameter_flags(registry):
        if len(flag.families) == 1:
            owned.setdefault(next(iter(flag.families)), []).append(flag)
        else:
            shared.append(flag)
    generated = _Generated(actions=[], shared=None, groups={})
    if shared:
        generated.shared = parser.add_argument_group("model flags of several families (see each default)")
        generated.actions += _add_flags(generated.shared, shared)
    for family, family_flags in owned.items():
        generated.groups[family] = parser.add_argument_group(f"--model {family}")
        generated.actions += _add_flags(generated.groups[family], family_flags)
    for family in registry:  # a family with shared flags only still gets its group in the one-family help
        if family not in generated.groups:
            generated.groups[family] = parser.add_argument_group(f"--model {family}")
    if isinstance(parser, FamilyHelpParser):
        parser._generated = generated


def _add_flags(
    group: argparse._ArgumentGroup, flags: list[HyperparameterFlag]
) -> list[tuple[HyperparameterFlag, argparse.Action]]:
    added = []
    for flag in flags:
        names = (flag.flag, *flag.aliases)
        if flag.value_type is bool:
            action = group.add_argument(*names, dest=flag.dest, action=_BooleanSpelling, default=None, help=_help(flag))
        else:
            action = group.add_argument(
                *names,
                dest=flag.dest,
                action=_StoreSpelling,
                type=flag.value_type,
                choices=flag.choices,
                default=None,
                metavar=None if flag.choices else flag.value_type.__name__.upper(),
                help=_help(flag),
            )
        added.append((flag, action))
    return added


def hyperparameters_from_flags(args: argparse.Namespace, model: str, registry: Mapping[str, type]) -> dict[str, Any]:
    """The keyword arguments of family ``model`` from the parsed flags (priors as dicts of their fields).

    A prior is passed as a dict of the fields given; the family turns it into its
    prior dataclass (:class:`~bayesclass.models.base.ClassifierModel` does that for
    every family), so the defaults of the fields not given stay the dataclass's.

    Raises
    ------
    ValueError
        A flag that belongs only to other families than ``model`` was given, or a
        value among a shared flag's choices that is not one of ``model``'s.
    """
    kwargs: dict[str, Any] = {}
    spellings = getattr(args, "_flag_spellings", None) or {}
    for flag in hyperparameter_flags(registry):
        value = getattr(args, flag.dest, None)
        if value is None:
            continue
        spelling = spellings.get(flag.dest) or flag.flag
        if model not in flag.families:
            raise ValueError(f"{spelling} applies to --model {', '.join(flag.families)}, not {model}")
        declared = flag.families[model]
        if declared.choices is not None and value not in declared.choices:
            raise ValueError(
                f"{spelling} {value} is not available for --model {model}; choose one of "
                f"{', '.join(map(str, declared.choices))}"
            )
        if declared.prior_field is None:
            kwargs[flag.field] = value
        else:
            kwargs.setdefault(declared.prior_field, {})[flag.field] = value
    return kwargs
