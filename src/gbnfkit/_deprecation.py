"""Helpers that keep an old spelling working for one release, with a DeprecationWarning."""

from __future__ import annotations

import warnings
from typing import cast

__all__ = ["CallableBool", "callable_bool"]


class CallableBool:
    """A read-only boolean that an old caller may still call like a method.

    ``Matcher.is_complete`` used to be a method; it is now a property returning this
    object.  It behaves like its ``bool`` value (truth, ``==``, ``hash``, ``repr``,
    ``int``, ``&``/``|``/``^``), and calling it — the old spelling
    ``matcher.is_complete()`` — returns that ``bool`` with a :class:`DeprecationWarning`.
    The differences from a real ``bool``: ``matcher.is_complete is True`` is false,
    ``isinstance(..., bool)`` too, and ``json.dumps`` refuses it; write
    ``if matcher.is_complete:`` or ``bool(matcher.is_complete)``.

    The properties are annotated ``-> bool`` (:func:`callable_bool` makes it), so a
    user's type checker sees the documented spelling, ``x: bool = matcher.is_complete``
    passes ``mypy --strict``; the deprecated call is left out of the types on purpose
    (a checker flags it, the run only warns).
    """

    __slots__ = ("_value", "_name")

    def __init__(self, value: bool, name: str) -> None:
        self._value = bool(value)
        self._name = name

    def __call__(self) -> bool:
        warnings.warn(
            f"{self._name} is a property now; write `{self._name}` without parentheses "
            "(calling it will stop working in the next release)",
            DeprecationWarning,
            stacklevel=2,
        )
        return self._value

    def __bool__(self) -> bool:
        return self._value

    def __index__(self) -> int:
        return int(self._value)

    def __int__(self) -> int:
        return int(self._value)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, CallableBool):
            return self._value == other._value
        if isinstance(other, (bool, int)):
            return self._value == other
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    def __hash__(self) -> int:
        return hash(self._value)

    def __lt__(self, other: object) -> bool:
        if isinstance(other, (bool, int, CallableBool)):
            return int(self._value) < int(other)
        return NotImplemented

    def __le__(self, other: object) -> bool:
        if isinstance(other, (bool, int, CallableBool)):
            return int(self._value) <= int(other)
        return NotImplemented

    def __gt__(self, other: object) -> bool:
        if isinstance(other, (bool, int, CallableBool)):
            return int(self._value) > int(other)
        return NotImplemented

    def __ge__(self, other: object) -> bool:
        if isinstance(other, (bool, int, CallableBool)):
            return int(self._value) >= int(other)
        return NotImplemented

    def __float__(self) -> float:
        return float(self._value)

    def __format__(self, spec: str) -> str:
        return format(self._value, spec)

    def __repr__(self) -> str:
        return repr(self._value)

    __str__ = __repr__

    def __and__(self, other: object) -> bool:
        if isinstance(other, (bool, CallableBool)):
            return self._value and bool(other)
        return NotImplemented

    def __or__(self, other: object) -> bool:
        if isinstance(other, (bool, CallableBool)):
            return self._value or bool(other)
        return NotImplemented

    def __xor__(self, other: object) -> bool:
        if isinstance(other, (bool, CallableBool)):
            return self._value != bool(other)
        return NotImplemented

    __rand__ = __and__
    __ror__ = __or__
    __rxor__ = __xor__


def callable_bool(value: bool, name: str) -> bool:
    """A :class:`CallableBool` of ``value``, typed as the ``bool`` it stands for (what a
    property that was a method returns, ``name`` naming it in the warning)."""
    return cast(bool, CallableBool(value, name))
