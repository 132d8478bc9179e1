"""Reading the fields of a JSON request body, each mistake an :class:`ApiError` naming the field."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from gbnfkit._arguments import as_float
from gbnfkit.server._errors import ApiError

__all__ = [
    "optional_bool",
    "optional_int",
    "optional_number",
    "optional_object",
    "optional_str",
    "reject_unknown_type",
]


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string" if value else "an empty string"
    if isinstance(value, list):
        return "an array" if value else "an empty array"
    return "an object" if value else "an empty object"


def reject_unknown_type(name: str, value: object, expected: str) -> ApiError:
    """The error for ``value`` of field ``name`` not being ``expected``."""
    return ApiError(f"'{name}' must be {expected}, not {_kind(value)}", param=name)


def optional_number(
    body: Mapping[str, Any],
    name: str,
    *,
    low: float | None = None,
    high: float | None = None,
) -> float | None:
    """A finite number field (``None`` when absent or null), within ``[low, high]``."""
    value = body.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise reject_unknown_type(name, value, "a finite number")
    # an int compares exactly with the bounds, however large; float() may overflow
    if (low is not None and value < low) or (high is not None and value > high):
        bounds = (
            f"between {low:g} and {high:g}"
            if low is not None and high is not None
            else (f"at least {low:g}" if low is not None else f"at most {high:g}")
        )
        raise ApiError(f"'{name}' must be {bounds}, not {_number_text(value)}", param=name)
    number = as_float(value)
    if not math.isfinite(number):
        raise ApiError(f"'{name}' must be a finite number, not {_number_text(value)}", param=name)
    return number


def _number_text(value: float) -> str:
    """``value`` for a message: JSON's spelling of NaN and the infinities (as Python's
    ``json`` reads them), and the length of an integer too long to show."""
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return f"{value:g}"
    digits = len(str(abs(value)))
    if digits > 20:
        return f"{'a negative' if value < 0 else 'a'} {digits}-digit integer"
    return str(value)


def optional_int(
    body: Mapping[str, Any], name: str, *, low: int | None = None, high: int | None = None
) -> int | None:
    """An integer field (``None`` when absent or null), within ``[low, high]``."""
    value = body.get(name)
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise reject_unknown_type(name, value, "an integer")
    if low is not None and value < low:
        raise ApiError(f"'{name}' must be at least {low}, not {value}", param=name)
    if high is not None and value > high:
        raise ApiError(
            f"'{name}' must be at most {high} on this server, not {value}",
            param=name,
            code="too_large",
        )
    return value


def optional_bool(body: Mapping[str, Any], name: str, *, path: str | None = None) -> bool | None:
    """A boolean field; ``path``: the field's name in the request when ``body`` is an
    object inside it (``stream_options.include_usage``), for the error's message and
    ``param``."""
    value = body.get(name)
    if value is None:
        return None
    if not isinstance(value, bool):
        raise reject_unknown_type(path or name, value, "a boolean")
    return value


def optional_str(body: Mapping[str, Any], name: str) -> str | None:
    value = body.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise reject_unknown_type(name, value, "a string")
    return value


def optional_object(body: Mapping[str, Any], name: str) -> dict[str, Any] | None:
    value = body.get(name)
    if value is None:
        return None
    if not isinstance(value, dict):
        raise reject_unknown_type(name, value, "an object")
    return value
