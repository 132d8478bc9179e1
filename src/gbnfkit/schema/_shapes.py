"""Checks that keyword values have the shapes the spec requires."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple

from gbnfkit._errors import SchemaError

__all__ = ["check_shapes", "count_keyword"]


def _is_schema(v: Any) -> bool:
    return isinstance(v, (dict, bool))


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _is_names(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(s, str) for s in v)


def _is_schema_map(v: Any) -> bool:
    return isinstance(v, dict) and all(_is_schema(s) for s in v.values())


def _is_schema_list(v: Any) -> bool:
    return isinstance(v, list) and all(_is_schema(s) for s in v)


def _is_dependencies(v: Any) -> bool:
    return isinstance(v, dict) and all(_is_schema(s) or _is_names(s) for s in v.values())


class _Shape(NamedTuple):
    test: Callable[[Any], bool]  # whether a value has the shape
    what: str  # the shape, as the message says it: "{keyword} must be {what}"


_SCHEMA_MAP = _Shape(_is_schema_map, "an object of schemas")
_SCHEMA = _Shape(_is_schema, "a schema")
_SCHEMA_LIST = _Shape(lambda v: _is_schema_list(v) and bool(v), "a non-empty array of schemas")
_COUNT = _Shape(lambda v: _is_number(v) and v >= 0, "a non-negative integer")
_NUMBER = _Shape(_is_number, "a number")
_BOUND = _Shape(lambda v: _is_number(v) or isinstance(v, bool), "a number")
_STRING = _Shape(lambda v: isinstance(v, str), "a string")

_SHAPES: dict[str, _Shape] = {
    **dict.fromkeys(("properties", "patternProperties", "$defs", "definitions",
                     "dependentSchemas"), _SCHEMA_MAP),
    **dict.fromkeys(("additionalProperties", "contains", "not", "if", "then", "else",
                     "propertyNames", "additionalItems", "unevaluatedItems",
                     "unevaluatedProperties"), _SCHEMA),
    "items": _Shape(lambda v: _is_schema(v) or _is_schema_list(v),
                    "a schema or an array of schemas"),
    **dict.fromkeys(("allOf", "anyOf", "oneOf"), _SCHEMA_LIST),
    # may be empty, under the same message
    "prefixItems": _Shape(_is_schema_list, _SCHEMA_LIST.what),
    **dict.fromkeys(("minLength", "maxLength", "minItems", "maxItems", "minProperties",
                     "maxProperties", "minContains", "maxContains"), _COUNT),
    **dict.fromkeys(("minimum", "maximum", "multipleOf"), _NUMBER),
    # true/false: draft 4's boolean form
    **dict.fromkeys(("exclusiveMinimum", "exclusiveMaximum"), _BOUND),
    **dict.fromkeys(("pattern", "format", "$ref"), _STRING),
    "required": _Shape(_is_names, "an array of strings"),
    "enum": _Shape(lambda v: isinstance(v, list), "an array"),
    "uniqueItems": _Shape(lambda v: isinstance(v, bool), "a boolean"),
    "dependentRequired": _Shape(
        lambda v: isinstance(v, dict) and all(_is_names(s) for s in v.values()),
        "an object of arrays of names"),
    "dependencies": _Shape(_is_dependencies, "an object of arrays of names or schemas"),
    "type": _Shape(lambda v: isinstance(v, str) or _is_names(v),
                   "a string or an array of strings"),
}
"""Each keyword whose value's shape is checked: the test of its value, and what the
message says it must be.  Any other keyword is not looked at."""


def check_shapes(schema: dict[str, Any], ptr: str) -> None:
    """Raise SchemaError naming the first keyword (in the schema's order) whose value has
    the wrong shape."""
    for key, v in schema.items():
        shape = _SHAPES.get(key)
        if shape is not None and not shape.test(v):
            raise SchemaError(f"{key} must be {shape.what}", keyword=key, pointer=ptr)


def count_keyword(schema: dict[str, Any], key: str, ptr: str) -> int | None:
    """The value of a count keyword (``minItems``, ``maxLength``...), ``None`` if absent.

    A fractional bound is rounded inwards (``minItems: 1.5`` is 2, ``maxItems: 2.5`` is 2).

    Raises:
        SchemaError: the value is not a non-negative number.
    """
    v = schema.get(key)
    if v is None:
        return None
    if not _is_number(v) or v < 0:
        raise SchemaError(f"{key} must be a non-negative integer", keyword=key, pointer=ptr)
    return int(math.ceil(v) if key.startswith("min") else math.floor(v))
