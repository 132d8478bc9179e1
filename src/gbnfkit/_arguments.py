"""Type checks of public arguments (a wrong type is an :class:`~gbnfkit.ArgumentError`),
and reading a number given as any real."""

from __future__ import annotations

import math
import numbers
from typing import Any

from gbnfkit._errors import ArgumentError

__all__ = ["as_float", "expect", "usable_api_key"]


def expect(value: Any, kind: type | tuple[type, ...], what: str) -> None:
    """Raise ArgumentError unless ``value`` is an instance of ``kind`` (never a ``bool``
    where an ``int`` is expected)."""
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if isinstance(value, kinds) and not (isinstance(value, bool) and bool not in kinds):
        return
    names = " or ".join(k.__name__ for k in kinds)
    raise ArgumentError(f"{what} must be {names}, not {type(value).__name__} {value!r:.60}")


def as_float(value: numbers.Real | float) -> float:
    """``float(value)``, or the infinity of ``value``'s sign when it is too large for a
    float (an integer past about 1.8e308, where ``float`` raises OverflowError)."""
    try:
        return float(value)
    except OverflowError:
        return -math.inf if value < 0 else math.inf


def usable_api_key(key: str) -> bool:
    """Whether ``key`` can be an API key that clients send in an HTTP header
    (``Authorization: Bearer <key>``): not empty, printable ASCII, no space at either end
    (HTTP drops those). An empty key must be refused, not taken as "no key"."""
    return bool(key) and key.isascii() and key.isprintable() and key == key.strip()
