"""Constraints declared on dataclass fields and checked in one place (in the manner of scikit-learn's
``_parameter_constraints``, but on the fields themselves).

A field declares what values it takes in its annotation::

    @dataclass(frozen=True, kw_only=True)
    class Prior(Constrained):
        scale: Annotated[float, Positive()] = 1.0
        center: Annotated[float, Finite()] = 0.0
        fraction: Annotated[float, InRange(0, 1, closed="neither")] = 0.5
        basis: Annotated[int | None, Integer(minimum=2)] = None
        link: Literal["logit", "probit"] = "logit"
        autoscale: bool = True

- ``Literal[...]`` IS the choice constraint (a value outside the choices is refused with their list);
- ``bool`` admits only ``True``/``False`` (NumPy's ``bool_`` is turned into ``bool``);
- ``X | None`` admits ``None`` (the field's constraints apply to the other values);
- the constraints of ``Annotated[...]`` apply in the order written; each may convert the value
  (``Positive`` and ``Finite`` return a ``float``, ``Integer`` an ``int``), and the converted value is
  stored on the (frozen) instance.

:func:`check_fields` enforces every field of an instance in declaration order;
:class:`Constrained` calls it from ``__post_init__`` (a subclass with cross-field checks calls
``super().__post_init__()`` first). A refused value raises :class:`InvalidValueError` (a ``ValueError``
and a ``TypeError``) whose message names the argument, the offending value and the fix. A boolean is
never a number (``True`` is no scale), NaN and infinities are refused where a finite number is required.

The same declarations serve the command line (:mod:`bayesclass._flags`): :func:`rule_of` gives a field's
choices and constraints, and :meth:`Constraint.describe` its help text (``"> 0"``).

This module is the lowest layer (``data``): models and inference import it, it imports neither.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import numbers
import types
import typing
from typing import Annotated, Any, Literal

import numpy as np

__all__ = [
    "Boolean",
    "Constrained",
    "Constraint",
    "Each",
    "FieldRule",
    "Finite",
    "InRange",
    "Integer",
    "InvalidValueError",
    "NumericArray",
    "OneOf",
    "Positive",
    "check_field",
    "check_fields",
    "check_finite",
    "check_positive",
    "field_rules",
    "renamed_fields",
    "renamed_from",
    "rule_of",
    "with_current_names",
]


class InvalidValueError(ValueError, TypeError):
    """A value of the wrong type or out of its declared range (a ``ValueError`` and a ``TypeError``, as
    scikit-learn's ``InvalidParameterError``, so that either ``except`` clause catches it).
    """


def _is_number(value: Any) -> bool:
    """A real number that is not a boolean (``True`` is no scale, ``"1"`` no number)."""
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def _refuse(argument: str, requirement: str, value: Any, *, fix: str = "", optional: bool = False, kind=False):
    """Raise the one message form: ``<argument> must be <requirement>, got <value>[ (<type>)][; <fix>]``."""
    none = " or None" if optional else ""
    type_note = f" ({type(value).__name__})" if kind else ""
    tail = f"; {fix}" if fix else ""
    raise InvalidValueError(f"{argument} must be {requirement}{none}, got {value!r}{type_note}{tail}")


class Constraint:
    """One declared requirement of a field's value (subclasses are small frozen dataclasses)."""

    def check(self, value: Any, *, argument: str, optional: bool = False) -> Any:
        """Return ``value`` (possibly converted: ``float``, ``int``) or raise :class:`InvalidValueError`.

        ``optional`` says that the field also admits ``None`` (the message says so).
        """
        raise NotImplementedError

    def describe(self) -> str:
        """Short help text for the command line, e.g. ``"> 0"`` ("" for none)."""
        return ""


@dataclasses.dataclass(frozen=True)
class Finite(Constraint):
    """A finite real number (no NaN, no infinity, no boolean); stored as ``float``."""

    fix: str = ""

    def check(self, value: Any, *, argument: str, optional: bool = False) -> float:
        return check_finite(value, argument=argument, fix=self.fix, optional=optional)

    def describe(self) -> str:
        return "finite"


@dataclasses.dataclass(frozen=True)
class Positive(Constraint):
    """A number > 0 and finite (``allow_inf``: ``math.inf`` too, which the priors use to mean a flat,
    improper prior); stored as ``float``.
    """

    allow_inf: bool = False
    fix: str = ""

    def check(self, value: Any, *, argument: str, optional: bool = False) -> float:
        return check_positive(value, argument=argument, allow_inf=self.allow_inf, fix=self.fix, optional=optional)

    def describe(self) -> str:
        return "> 0, inf for a flat prior" if self.allow_inf else "> 0"


def _interval(low: float | None, high: float | None, closed: str) -> str:
    left = closed in ("both", "left")
    right = closed in ("both", "right")
    if high is None:
        return f"{'>=' if left else '>'} {low:g}"
    if low is None:
        return f"{'<=' if right else '<'} {high:g}"
    return f"a number in {'[' if left else '('}{low:g}, {high:g}{']' if right else ')'}"


@dataclasses.dataclass(frozen=True)
class InRange(Constraint):
    """A real number between ``low`` and ``high`` (None: unbounded on that side); ``closed`` says which
    bounds are admitted: ``"both"``, ``"left"``, ``"right"`` or ``"neither"``. Stored as ``float``.
    """

    low: float | None = None
    high: float | None = None
    closed: Literal["both", "left", "right", "neither"] = "both"
    fix: str = ""

    def check(self, value: Any, *, argument: str, optional: bool = False) -> float:
        requirement = self.describe()
        if not _is_number(value):
            _refuse(argument, requirement, value, fix=self.fix, optional=optional, kind=True)
        number = float(value)
        low_ok = self.low is None or (number >= self.low if self.closed in ("both", "left") else number > self.low)
        high_ok = self.high is None or (number <= self.high if self.closed in ("both", "right") else number < self.high)
        if math.isnan(number) or not (low_ok and high_ok):
            _refuse(argument, requirement, value, fix=self.fix, optional=optional)
        return number

    def describe(self) -> str:
        return _interval(self.low, self.high, self.closed)


@dataclasses.dataclass(frozen=True)
class Integer(Constraint):
    """An integer (Python or NumPy; no boolean, no float however whole) in ``minimum..maximum``
    (None: unbounded); stored as ``int``.
    """

    minimum: int | None = None
    maximum: int | None = None
    fix: str = ""

    def check(self, value: Any, *, argument: str, optional: bool = False) -> int:
        requirement = "an integer" + self._bounds()
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
            fix = self.fix or f"pass a whole number such as {argument}={max(self.minimum or 0, 1)}"
            _refuse(argument, requirement, value, fix=fix, optional=optional, kind=not isinstance(value, float))
        if (self.minimum is not None and value < self.minimum) or (self.maximum is not None and value > self.maximum):
            _refuse(argument, requirement, value, fix=self.fix, optional=optional)
        return int(value)

    def _bounds(self) -> str:
        if self.maximum is None:
            return "" if self.minimum is None else f" >= {self.minimum}"
        if self.minimum is None:
            return f" <= {self.maximum}"
        return f" in {self.minimum}..{self.maximum}"

    def describe(self) -> str:
        return f"integer{self._bounds()}"


@dataclasses.dataclass(frozen=True)
class OneOf(Constraint):
    """One of ``choices`` (what a ``Literal[...]`` annotation declares; the same type as the choice, so that
    ``True`` is not the choice ``1``).
    """

    choices: tuple[Any, ...]
    fix: str = ""

    def check(self, value: Any, *, argument: str, optional: bool = False) -> Any:
        if not any(value == choice and type(value) is type(choice) for choice in self.choices):
            _refuse(argument, self.describe(), value, fix=self.fix, optional=optional)
        return value

    def describe(self) -> str:
        quoted = [repr(choice) for choice in self.choices]
        return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"


@dataclasses.dataclass(frozen=True)
class Boolean(Constraint):
    """``True`` or ``False`` (what a ``bool`` annotation declares; NumPy's ``bool_`` is stored as ``bool``)."""

    def check(self, value: Any, *, argument: str, optional: bool = False) -> bool:
        if not isinstance(value, (bool, np.bool_)):
            _refuse(argument, "True or False", value, optional=optional)
        return bool(value)


@dataclasses.dataclass(frozen=True)
class NumericArray(Constraint):
    """An array of real numbers with ``ndim`` dimensions, stored as a read-only ``float64`` array."""

    ndim: int | None = None
    fix: str = ""

    def check(self, value: Any, *, argument: str, optional: bool = False) -> np.ndarray:
        requirement = f"a {self.ndim}-D array of numbers" if self.ndim is not None else "an array of numbers"
        try:
            array = np.array(value, dtype=float)
        except (TypeError, ValueError):
            _refuse(argument, requirement, value, fix=self.fix, optional=optional)
        if self.ndim is not None and array.ndim != self.ndim:
            _refuse(argument, requirement, value, fix=self.fix, optional=optional)
        array.flags.writeable = False
        return array


@dataclasses.dataclass(frozen=True)
class Each(Constraint):
    """Every item of a sequence passes ``constraint`` (the item named ``argument[i]``); stored as a tuple."""

    constraint: Constraint

    def check(self, value: Any, *, argument: str, optional: bool = False) -> tuple[Any, ...]:
        if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
            _refuse(argument, f"a list of values, each {self.constraint.describe()}", value, optional=optional)
        return tuple(self.constraint.check(item, argument=f"{argument}[{i}]") for i, item in enumerate(value))

    def describe(self) -> str:
        return f"each {self.constraint.describe()}"


# -- the two checks also called directly (function arguments, data arrays) ---------------------------


def check_positive(
    value: Any, *, argument: str, allow_inf: bool = False, fix: str = "", optional: bool = False
) -> float:
    """Return ``value`` as a float if it is a number > 0 (finite unless ``allow_inf``), else raise
    :class:`InvalidValueError` naming ``argument``.
    """
    if not _is_number(value):
        _refuse(argument, "a positive number", value, fix=fix, optional=optional, kind=True)
    number = float(value)
    if math.isnan(number) or number <= 0 or (math.isinf(number) and not allow_inf):
        hint = " or inf for a flat prior" if allow_inf else ""
        _refuse(argument, f"a positive finite number{hint}", value, fix=fix, optional=optional)
    return number


def check_finite(
    value: Any,
    *,
    argument: str,
    feature_names: tuple[str, ...] | None = None,
    when: str = "using them",
    fix: str = "",
    optional: bool = False,
) -> Any:
    """The one finiteness check, for a number and for a table of numbers.

    A scalar (``int``, ``float``, NumPy number; not a boolean) is returned as ``float`` if it is finite.
    A NumPy array (rows by columns) is returned unchanged if every cell is finite; otherwise the message names its
    first NaN/inf cell by row and column (``feature_names`` label the columns) and says to remove or
    impute such values before ``when``.

    Raises
    ------
    InvalidValueError
        A non-finite value, or a scalar that is not a number.
    """
    if isinstance(value, np.ndarray) and value.ndim > 0:
        table = value.reshape(value.shape[0], -1)
        flat = np.flatnonzero(~np.isfinite(table))
        if flat.size:
            row, column = divmod(int(flat[0]), table.shape[1])
            bad = "NaN" if np.isnan(table[row, column]) else table[row, column]
            if feature_names is not None and column < len(feature_names):
                label = f"column {feature_names[column]!r}"
            else:
                label = f"column {column}"
            raise InvalidValueError(
                f"{argument} contains {bad} at row {row}, {label}; "
                f"remove or impute missing or infinite values before {when}"
            )
        return value
    if not _is_number(value) or not math.isfinite(value):
        _refuse(argument, "a finite number", value, fix=fix, optional=optional)
    return float(value)


# -- reading the declarations ---------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class FieldRule:
    """What a field admits: its constraints in order (a ``Literal``'s :class:`OneOf` and a ``bool``'s
    :class:`Boolean` first), whether it admits ``None``, and the plain type underneath.
    """

    constraints: tuple[Constraint, ...]
    optional: bool
    base: Any

    def check(self, value: Any, *, argument: str) -> Any:
        if value is None and self.optional:
            return None
        for constraint in self.constraints:
            value = constraint.check(value, argument=argument, optional=self.optional)
        return value

    @property
    def choices(self) -> tuple[Any, ...] | None:
        return next((c.choices for c in self.constraints if isinstance(c, OneOf)), None)

    def describe(self) -> str:
        """The constraints as help text ("> 0", "integer >= 2"; "" for none)."""
        texts = [c.describe() for c in self.constraints if not isinstance(c, (OneOf, Boolean))]
        return ", ".join(text for text in texts if text)


def rule_of(annotation: Any) -> FieldRule:
    """The :class:`FieldRule` an annotation declares (``Annotated``, ``Literal``, ``bool``, ``X | None``)."""
    constraints: list[Constraint] = []
    optional = False
    base = annotation
    for _ in range(3):  # Annotated[X | None, ...] and Annotated[X, ...] | None alike
        if typing.get_origin(base) is Annotated:
            base, *extras = typing.get_args(base)
            constraints += [extra for extra in extras if isinstance(extra, Constraint)]
        elif typing.get_origin(base) in (typing.Union, types.UnionType):
            members = [member for member in typing.get_args(base) if member is not type(None)]
            optional = optional or len(members) < len(typing.get_args(base))
            if len(members) != 1:
                break
            base = members[0]
        else:
            break
    if typing.get_origin(base) is Literal:
        constraints.insert(0, OneOf(typing.get_args(base)))
    elif base is bool:
        constraints.insert(0, Boolean())
    return FieldRule(constraints=tuple(constraints), optional=optional, base=base)


@functools.cache
def field_rules(cls: type) -> tuple[tuple[str, FieldRule], ...]:
    """``(name, rule)`` of every field of dataclass ``cls``, in declaration order (read once per class)."""
    hints = typing.get_type_hints(cls, include_extras=True)
    return tuple((field.name, rule_of(hints[field.name])) for field in dataclasses.fields(cls))


def check_field(cls: type, name: str, value: Any, *, argument: str | None = None) -> Any:
    """``value`` checked against the declaration of field ``name`` of ``cls`` (for code that validates
    a value before building the dataclass, e.g. to collect every problem of a file at once).
    """
    rule = dict(field_rules(cls))[name]
    return rule.check(value, argument=argument or name)


def check_fields(instance: Any) -> None:
    """Enforce the declared constraints of every field of a dataclass instance, in declaration order,
    storing converted values (``float``, ``int``, ``bool``) on the instance (frozen or not).

    Raises
    ------
    InvalidValueError
        For the first field whose value is refused (the message names it, the value and the fix).
    """
    for name, rule in field_rules(type(instance)):
        value = getattr(instance, name)
        checked = rule.check(value, argument=name)
        if checked is not value:
            object.__setattr__(instance, name, checked)


class Constrained:
    """Dataclass mixin: the declared constraints of the fields are checked on construction
    (:func:`check_fields`). A subclass with cross-field checks calls ``super().__post_init__()`` first.
    """

    def __post_init__(self) -> None:
        check_fields(self)


def renamed_from(*old_names: str, cli: bool = True) -> dict[str, tuple[str, ...]]:
    """Field metadata declaring the names a field had in earlier versions: :meth:`from_dict` (saved results)
    reads them (:func:`renamed_fields`) and, with ``cli``, the command line keeps them as flag aliases.
    """
    metadata: dict[str, tuple[str, ...]] = {"renamed_from": old_names}
    if cli:
        metadata["cli_aliases"] = tuple("--" + name.replace("_", "-") for name in old_names)
    return metadata


def renamed_fields(cls: type) -> dict[str, str]:
    """``{old name: field name}`` from the fields' ``metadata={"renamed_from": (...)}`` declarations: the
    spellings of earlier versions that :meth:`from_dict` and the command line still accept.
    """
    return {old: field.name for field in dataclasses.fields(cls) for old in field.metadata.get("renamed_from", ())}


def with_current_names(cls: type, values: dict[str, Any]) -> dict[str, Any]:
    """``values`` with the old names of :func:`renamed_fields` replaced by the current ones (a value given
    under both names keeps the current name's).
    """
    renames = renamed_fields(cls)
    return {
        renames.get(name, name): value
        for name, value in values.items()
        if renames.get(name, name) == name or renames[name] not in values
    }
