"""Constraints declared on dataclass fields and checked in one place.

The manner is scikit-learn's ``_parameter_constraints``, but declared on the fields themselves.

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
import unicodedata
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
    "MAX_ATTR_TEXT",
    "MAX_FEATURE_MAGNITUDE",
    "MAX_SEED",
    "SEED",
    "NumericArray",
    "OneOf",
    "PrintableText",
    "Positive",
    "check_field",
    "check_fields",
    "check_finite",
    "check_magnitude",
    "control_character",
    "check_positive",
    "field_rules",
    "renamed_fields",
    "renamed_from",
    "rule_of",
    "with_current_names",
]


class InvalidValueError(ValueError, TypeError):
    """A value of the wrong type or out of its declared range.

    It is a ``ValueError`` and a ``TypeError``, as scikit-learn's ``InvalidParameterError``, so that either
    ``except`` clause catches it.
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

        Parameters
        ----------
        value : Any
            The value given for the field or argument.
        argument : str
            The name the error message gives the value (a field, a function argument, ``name[i]``).
        optional : bool, default False
            Whether the field also admits ``None`` (the message then says "or None").

        Returns
        -------
        Any
            The value as stored on the instance.

        Raises
        ------
        InvalidValueError
            If the value does not meet the requirement.
        """
        return self._check(value, argument=argument, optional=optional)

    def describe(self) -> str:
        """Short help text for the command line, e.g. ``"> 0"``.

        Returns
        -------
        str
            The requirement in a few words ("" for none).
        """
        return self._describe()

    def _check(self, value: Any, *, argument: str, optional: bool = False) -> Any:
        """Each constraint's own check (see :meth:`check`)."""
        raise NotImplementedError

    def _describe(self) -> str:
        """Each constraint's own help text (see :meth:`describe`)."""
        return ""


@dataclasses.dataclass(frozen=True)
class Finite(Constraint):
    """A finite real number (no NaN, no infinity, no boolean); stored as ``float``.

    Parameters
    ----------
    fix : str, default ""
        Advice appended to the error message ("" for none).
    """

    fix: str = ""

    def _check(self, value: Any, *, argument: str, optional: bool = False) -> float:
        """Return ``value`` as a ``float`` if it is a finite number (see :func:`check_finite`)."""
        return check_finite(value, argument=argument, fix=self.fix, optional=optional)

    def _describe(self) -> str:
        """Help text for the command line: ``"finite"``."""
        return "finite"


@dataclasses.dataclass(frozen=True)
class Positive(Constraint):
    """A number > 0 and finite; stored as ``float``.

    Parameters
    ----------
    allow_inf : bool, default False
        Admit ``math.inf`` too, which the priors use to mean a flat, improper prior.
    fix : str, default ""
        Advice appended to the error message ("" for none).
    """

    allow_inf: bool = False
    fix: str = ""

    def _check(self, value: Any, *, argument: str, optional: bool = False) -> float:
        """Return ``value`` as a ``float`` if it is a number > 0 (see :func:`check_positive`)."""
        return check_positive(value, argument=argument, allow_inf=self.allow_inf, fix=self.fix, optional=optional)

    def _describe(self) -> str:
        """Help text for the command line: ``"> 0"``."""
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
    """A real number between ``low`` and ``high``; stored as ``float``.

    Parameters
    ----------
    low : float or None, default None
        The lower bound (None: unbounded below).
    high : float or None, default None
        The upper bound (None: unbounded above).
    closed : {"both", "left", "right", "neither"}, default "both"
        Which bounds are admitted as values.
    fix : str, default ""
        Advice appended to the error message ("" for none).
    """

    low: float | None = None
    high: float | None = None
    closed: Literal["both", "left", "right", "neither"] = "both"
    fix: str = ""

    def _check(self, value: Any, *, argument: str, optional: bool = False) -> float:
        """Return ``value`` as a ``float`` if it is a number within the interval."""
        requirement = self.describe()
        if not _is_number(value):
            _refuse(argument, requirement, value, fix=self.fix, optional=optional, kind=True)
        number = float(value)
        low_ok = self.low is None or (number >= self.low if self.closed in ("both", "left") else number > self.low)
        high_ok = self.high is None or (number <= self.high if self.closed in ("both", "right") else number < self.high)
        if math.isnan(number) or not (low_ok and high_ok):
            _refuse(argument, requirement, value, fix=self.fix, optional=optional)
        return number

    def _describe(self) -> str:
        """Help text for the command line: the interval."""
        return _interval(self.low, self.high, self.closed)


@dataclasses.dataclass(frozen=True)
class Integer(Constraint):
    """An integer (Python or NumPy; no boolean, no float however whole); stored as ``int``.

    Parameters
    ----------
    minimum : int or None, default None
        The smallest value admitted (None: unbounded below).
    maximum : int or None, default None
        The largest value admitted (None: unbounded above).
    fix : str, default ""
        Advice appended to the error message ("" for none; a type error then suggests a whole number).
    """

    minimum: int | None = None
    maximum: int | None = None
    fix: str = ""

    def _check(self, value: Any, *, argument: str, optional: bool = False) -> int:
        """Return ``value`` as an ``int`` if it is an integer in ``minimum..maximum``."""
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

    def _describe(self) -> str:
        """Help text for the command line, e.g. ``"integer >= 2"``."""
        return f"integer{self._bounds()}"


@dataclasses.dataclass(frozen=True)
class OneOf(Constraint):
    """One of ``choices``, what a ``Literal[...]`` annotation declares.

    The value must also have the type of the choice, so that ``True`` is not the choice ``1``.

    Parameters
    ----------
    choices : tuple
        The admitted values.
    fix : str, default ""
        Advice appended to the error message ("" for none).
    """

    choices: tuple[Any, ...]
    fix: str = ""

    def _check(self, value: Any, *, argument: str, optional: bool = False) -> Any:
        """Return ``value`` unchanged if it is one of the choices."""
        if not any(value == choice and type(value) is type(choice) for choice in self.choices):
            _refuse(argument, self.describe(), value, fix=self.fix, optional=optional)
        return value

    def _describe(self) -> str:
        """Help text for the command line: the choices."""
        quoted = [repr(choice) for choice in self.choices]
        return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"


@dataclasses.dataclass(frozen=True)
class Boolean(Constraint):
    """``True`` or ``False`` (what a ``bool`` annotation declares; NumPy's ``bool_`` is stored as ``bool``)."""

    def _check(self, value: Any, *, argument: str, optional: bool = False) -> bool:
        """Return ``value`` as a ``bool`` if it is ``True`` or ``False`` (Python or NumPy)."""
        if not isinstance(value, (bool, np.bool_)):
            _refuse(argument, "True or False", value, optional=optional)
        return bool(value)


@dataclasses.dataclass(frozen=True)
class NumericArray(Constraint):
    """An array of real numbers with ``ndim`` dimensions, stored as a read-only ``float64`` array.

    Parameters
    ----------
    ndim : int or None, default None
        The number of dimensions required (None: any).
    fix : str, default ""
        Advice appended to the error message ("" for none).
    """

    ndim: int | None = None
    fix: str = ""

    def _check(self, value: Any, *, argument: str, optional: bool = False) -> np.ndarray:
        """Return ``value`` as a read-only ``float64`` array if it converts and has ``ndim`` dimensions."""
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
    """Every item of a sequence passes ``constraint`` (the item named ``argument[i]``); stored as a tuple.

    Parameters
    ----------
    constraint : Constraint
        The constraint every item must pass.
    """

    constraint: Constraint

    def _check(self, value: Any, *, argument: str, optional: bool = False) -> tuple[Any, ...]:
        """Return the items of a list or tuple, each checked by ``constraint``, as a tuple."""
        if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
            _refuse(argument, f"a list of values, each {self.constraint.describe()}", value, optional=optional)
        return tuple(self.constraint.check(item, argument=f"{argument}[{i}]") for i, item in enumerate(value))

    def _describe(self) -> str:
        """Help text for the command line, e.g. ``"each > 0"``."""
        return f"each {self.constraint.describe()}"


@dataclasses.dataclass(frozen=True)
class PrintableText(Constraint):
    """Text without control characters (Unicode category ``Cc``: NUL, tab, newline, ESC, DEL, ...) or lone surrogates.

    Names (columns, class labels, category levels) are shown in pages, tables and SVG figures, where a control
    character is invisible, breaks a row of a table or makes the figure ill-formed XML: they are refused where
    they enter, with the name written escaped (as Python's repr).

    Parameters
    ----------
    what : str, default "name"
        What the text is, for the message (``"column name"``, ``"class label"``).
    fix : str, default ""
        Advice appended to the error message ("" for the default advice).
    """

    what: str = "name"
    fix: str = ""

    def _check(self, value: Any, *, argument: str, optional: bool = False) -> Any:
        """Return ``value`` unchanged if it is text without control characters."""
        if not isinstance(value, str):
            _refuse(argument, "text", value, optional=optional, kind=True)
        bad = control_character(value)
        if bad is not None and unicodedata.category(bad) == "Cs":
            raise InvalidValueError(
                f"{argument}: {self.what} {value!r} holds the lone surrogate {bad!r} (U+{ord(bad):04X}), half of a "
                "character that no text file (UTF-8) can hold; decode the text with its source's encoding, or "
                "replace it"
            )
        if bad is not None:
            fix = self.fix or "rename it without control characters (they are invisible and break HTML/SVG reports)"
            raise InvalidValueError(
                f"{argument}: {self.what} {value!r} holds the control character {bad!r} (U+{ord(bad):04X}); {fix}"
            )
        return value

    def _describe(self) -> str:
        """Help text for the command line."""
        return "text without control characters"


def control_character(value: str) -> str | None:
    """The first control character (Unicode category ``Cc``) or lone surrogate (``Cs``) of ``value``, or None.

    Parameters
    ----------
    value : str
        The text.

    Returns
    -------
    str or None
        The character, or None when there is none.
    """
    return next((char for char in value if unicodedata.category(char) in ("Cc", "Cs")), None)


# -- the two checks also called directly (function arguments, data arrays) ---------------------------


def check_positive(
    value: Any, *, argument: str, allow_inf: bool = False, fix: str = "", optional: bool = False
) -> float:
    """Return ``value`` as a float if it is a number > 0 (finite unless ``allow_inf``).

    Parameters
    ----------
    value : Any
        The value to check.
    argument : str
        The name the error message gives the value.
    allow_inf : bool, default False
        Admit ``math.inf`` (a flat, improper prior's scale).
    fix : str, default ""
        Advice appended to the error message ("" for none).
    optional : bool, default False
        Whether ``None`` is also admitted where the value comes from (the message then says "or None").

    Returns
    -------
    float
        The value as a ``float``.

    Raises
    ------
    InvalidValueError
        Naming ``argument``, if the value is not a number, or not > 0, or infinite without ``allow_inf``.
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

    Parameters
    ----------
    value : Any
        A scalar, or a NumPy array whose first axis is the rows.
    argument : str
        The name the error message gives the value.
    feature_names : tuple of str or None, default None
        Labels of the array's columns in the message (None: column numbers).
    when : str, default "using them"
        What the values must be cleaned before, in the array's message.
    fix : str, default ""
        Advice appended to a scalar's error message ("" for none).
    optional : bool, default False
        Whether ``None`` is also admitted where the scalar comes from (the message then says "or None").

    Returns
    -------
    float or numpy.ndarray
        The scalar as a ``float``, or the array unchanged.

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


#: The most characters one text attr of a result file may hold (names as JSON text, escapes included), at fitting and
#: in reading alike: a tampered file cannot make a page of megabytes out of one attr, and no fit writes more.
MAX_ATTR_TEXT = 100_000
#: The largest magnitude a feature value may have, at fitting and in a result file alike: beyond it a column's
#: squares (its standard deviation, a covariance, a Hessian) come near float64's 1.8e308, and its posterior-predictive
#: replicates, stored as float32 (at most 3.4e38), overflow.
MAX_FEATURE_MAGNITUDE = 1e30


def check_magnitude(
    X: np.ndarray, *, argument: str, feature_names: tuple[str, ...] | None = None, when: str = "fitting"
) -> np.ndarray:
    """Refuse a table of finite numbers holding a value beyond :data:`MAX_FEATURE_MAGNITUDE`, naming its column.

    Parameters
    ----------
    X : numpy.ndarray
        Finite numbers, rows by columns.
    argument : str
        The name the error message gives the table.
    feature_names : tuple of str or None, default None
        Labels of the columns in the message (None: column numbers).
    when : str, default "fitting"
        What the column must be rescaled before, in the message.

    Returns
    -------
    numpy.ndarray
        ``X`` unchanged.

    Raises
    ------
    InvalidValueError
        A value whose magnitude exceeds the bound.
    """
    table = X.reshape(X.shape[0], -1)
    flat = np.flatnonzero(np.abs(table) > MAX_FEATURE_MAGNITUDE)
    if flat.size:
        row, column = divmod(int(flat[0]), table.shape[1])
        label = repr(feature_names[column]) if feature_names is not None and column < len(feature_names) else column
        raise InvalidValueError(
            f"{argument} holds {table[row, column]:g} at row {row}, column {label}, beyond {MAX_FEATURE_MAGNITUDE:g} "
            "in magnitude, where its squares and its posterior-predictive replicates (float32) overflow; rescale "
            f"the column before {when}, e.g. divide it by a power of ten or take its logarithm"
        )
    return X


#: The largest random seed, at fitting and in a result file alike: a seed is an integer in [0, 2**32), the range of
#: NumPy's legacy generators and of the seeds a result records (its own and its posterior predictive's).
MAX_SEED = 2**32 - 1
#: The one definition of a valid seed (``random_seed=``, ``--seed``), checked on input.
SEED = Integer(minimum=0, maximum=MAX_SEED, fix="a seed is an integer in [0, 2**32), e.g. 0")


# -- reading the declarations ---------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class FieldRule:
    """What a field admits: its constraints, whether it admits ``None``, and the plain type underneath.

    Parameters
    ----------
    constraints : tuple of Constraint
        The constraints in the order they apply (a ``Literal``'s :class:`OneOf` and a ``bool``'s
        :class:`Boolean` first).
    optional : bool
        Whether the field admits ``None``.
    base : Any
        The plain type under ``Annotated`` and ``| None``.
    """

    constraints: tuple[Constraint, ...]
    optional: bool
    base: Any

    def check(self, value: Any, *, argument: str) -> Any:
        """Return ``value`` passed through every constraint in order (``None`` as is, where admitted).

        Parameters
        ----------
        value : Any
            The value given for the field.
        argument : str
            The name the error message gives the value.

        Returns
        -------
        Any
            The value as stored (converted by the constraints).

        Raises
        ------
        InvalidValueError
            From the first constraint that refuses the value.
        """
        if value is None and self.optional:
            return None
        for constraint in self.constraints:
            value = constraint.check(value, argument=argument, optional=self.optional)
        return value

    @property
    def choices(self) -> tuple[Any, ...] | None:
        """The choices of the field's :class:`OneOf` (a ``Literal``), or None if it has none."""
        return next((c.choices for c in self.constraints if isinstance(c, OneOf)), None)

    def describe(self) -> str:
        """The constraints as help text.

        Returns
        -------
        str
            The constraints' texts joined by commas ("> 0", "integer >= 2"; "" for none); the choices and
            the booleans are left out, as the command line shows them otherwise.
        """
        texts = [c.describe() for c in self.constraints if not isinstance(c, (OneOf, Boolean))]
        return ", ".join(text for text in texts if text)


def rule_of(annotation: Any) -> FieldRule:
    """The :class:`FieldRule` an annotation declares (``Annotated``, ``Literal``, ``bool``, ``X | None``).

    Parameters
    ----------
    annotation : Any
        A field's type annotation, with its extras (``typing.get_type_hints(..., include_extras=True)``).

    Returns
    -------
    FieldRule
        The constraints, whether ``None`` is admitted, and the plain type.
    """
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
    """``(name, rule)`` of every field of dataclass ``cls``, in declaration order (read once per class).

    Parameters
    ----------
    cls : type
        A dataclass.

    Returns
    -------
    tuple of (str, FieldRule)
        Each field's name and rule.
    """
    hints = typing.get_type_hints(cls, include_extras=True)
    return tuple((field.name, rule_of(hints[field.name])) for field in dataclasses.fields(cls))


def check_field(cls: type, name: str, value: Any, *, argument: str | None = None) -> Any:
    """``value`` checked against the declaration of field ``name`` of ``cls``.

    ``cls`` is the dataclass that declares the field. For code that validates a value before building the
    dataclass, e.g. to collect every problem of a file at once.

    Parameters
    ----------
    name : str
        The field's name.
    value : Any
        The value to check.
    argument : str or None, default None
        The name the error message gives the value (None: ``name``).

    Returns
    -------
    Any
        The value as the dataclass would store it.

    Raises
    ------
    InvalidValueError
        If the declaration refuses the value.
    """
    rule = dict(field_rules(cls))[name]
    return rule.check(value, argument=argument or name)


def check_fields(instance: Any) -> None:
    """Enforce the declared constraints of every field of a dataclass instance, in declaration order.

    Converted values (``float``, ``int``, ``bool``) are stored on the instance (frozen or not).

    Parameters
    ----------
    instance : Any
        A dataclass instance.

    Raises
    ------
    InvalidValueError
        For the first field whose value is refused (the message names it, the value and the fix).
    """
    cls: type = type(instance)  # as ``type``: mypy takes a ``type[Any]`` for unhashable
    for name, rule in field_rules(cls):
        value = getattr(instance, name)
        checked = rule.check(value, argument=name)
        if checked is not value:
            object.__setattr__(instance, name, checked)


class Constrained:
    """Dataclass mixin: the declared constraints of the fields are checked on construction.

    The check is :func:`check_fields`. A subclass with cross-field checks calls ``super().__post_init__()``
    first.
    """

    def __post_init__(self) -> None:
        check_fields(self)


def renamed_from(*old_names: str, cli: bool = True) -> dict[str, tuple[str, ...]]:
    """Field metadata declaring the names a field had in earlier versions.

    :meth:`from_dict` (saved results) reads them (:func:`renamed_fields`) and, with ``cli``, the command line
    keeps them as flag aliases.

    Parameters
    ----------
    *old_names : str
        The field's earlier names.
    cli : bool, default True
        Also declare ``--old-name`` flags as aliases on the command line.

    Returns
    -------
    dict of str to tuple of str
        ``{"renamed_from": old_names}``, with ``"cli_aliases"`` too where ``cli``; pass it as a field's
        ``metadata``.
    """
    metadata: dict[str, tuple[str, ...]] = {"renamed_from": old_names}
    if cli:
        metadata["cli_aliases"] = tuple("--" + name.replace("_", "-") for name in old_names)
    return metadata


def renamed_fields(cls: type) -> dict[str, str]:
    """``{old name: field name}`` from the fields' ``metadata={"renamed_from": (...)}`` declarations.

    These are the spellings of earlier versions that :meth:`from_dict` and the command line still accept,
    for the dataclass ``cls``.

    Returns
    -------
    dict of str to str
        Each old name mapped to the current field name.
    """
    return {old: field.name for field in dataclasses.fields(cls) for old in field.metadata.get("renamed_from", ())}


def with_current_names(cls: type, values: dict[str, Any]) -> dict[str, Any]:
    """``values`` with the old names of :func:`renamed_fields` replaced by the current ones.

    The renamed fields are those of the dataclass ``cls``.

    Parameters
    ----------
    values : dict of str to Any
        Values keyed by field name, current or old.

    Returns
    -------
    dict of str to Any
        The values keyed by current names; a value given under both names keeps the current name's.
    """
    renames = renamed_fields(cls)
    return {
        renames.get(name, name): value
        for name, value in values.items()
        if renames.get(name, name) == name or renames[name] not in values
    }
