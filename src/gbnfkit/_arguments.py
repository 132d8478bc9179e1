"""Type checks of public arguments: a wrong type is an :class:`~gbnfkit.ArgumentError`."""

from __future__ import annotations

from typing import Any

from gbnfkit._errors import ArgumentError

__all__ = ["expect"]


def expect(value: Any, kind: type | tuple[type, ...], what: str) -> None:
    """Raise ArgumentError unless ``value`` is an instance of ``kind`` (never a ``bool``
    where an ``int`` is expected)."""
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if isinstance(value, kinds) and not (isinstance(value, bool) and bool not in kinds):
        return
    names = " or ".join(k.__name__ for k in kinds)
    raise ArgumentError(f"{what} must be {names}, not {type(value).__name__} {value!r:.60}")
