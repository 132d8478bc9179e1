"""Checks that keyword values have the shapes the spec requires."""

from __future__ import annotations

import math
from typing import Any

from gbnfkit._errors import SchemaError

__all__ = ["check_shapes", "count_keyword"]

_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_SCHEMAS = ("additionalProperties", "contains", "not", "if", "then", "else", "propertyNames",
            "additionalItems", "unevaluatedItems", "unevaluatedProperties")
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
_COUNTS = ("minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties",
           "minContains", "maxContains")
_NUMBERS = ("minimum", "maximum", "multipleOf")
_STRINGS = ("pattern", "format", "$ref")


def _is_schema(v: Any) -> bool:
    return isinstance(v, (dict, bool))


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


# the keywords whose shape is checked (any other is not looked at)
_CHECKED = frozenset([*_SCHEMA_MAPS, *_SCHEMAS, "items", *_SCHEMA_LISTS, *_COUNTS, *_NUMBERS,
                      "exclusiveMinimum", "exclusiveMaximum", *_STRINGS, "required", "enum",
                      "uniqueItems", "dependentRequired", "dependencies", "type"])


def check_shapes(schema: dict[str, Any], ptr: str) -> None:
    """Raise SchemaError naming the first keyword whose value has the wrong shape."""
    for key, v in schema.items():
        if key not in _CHECKED:
            continue
        ok = True
        what = ""
        if key in _SCHEMA_MAPS:
            ok = isinstance(v, dict) and all(_is_schema(s) for s in v.values())
            what = "an object of schemas"
        elif key in _SCHEMAS:
            ok = _is_schema(v)
            what = "a schema"
        elif key == "items":
            ok = _is_schema(v) or (isinstance(v, list) and all(_is_schema(s) for s in v))
            what = "a schema or an array of schemas"
        elif key in _SCHEMA_LISTS:
            ok = isinstance(v, list) and all(_is_schema(s) for s in v) and (
                bool(v) or key == "prefixItems")
            what = "a non-empty array of schemas"
        elif key in _COUNTS:
            ok = _is_number(v) and v >= 0
            what = "a non-negative integer"
        elif key in _NUMBERS or key in ("exclusiveMinimum", "exclusiveMaximum"):
            ok = _is_number(v) or (key.startswith("exclusive") and isinstance(v, bool))
            what = "a number"
        elif key in _STRINGS:
            ok = isinstance(v, str)
            what = "a string"
        elif key == "required":
            ok = isinstance(v, list) and all(isinstance(s, str) for s in v)
            what = "an array of strings"
        elif key == "enum":
            ok = isinstance(v, list)
            what = "an array"
        elif key == "uniqueItems":
            ok = isinstance(v, bool)
            what = "a boolean"
        elif key in ("dependentRequired", "dependencies"):
            ok = isinstance(v, dict) and all(
                _is_schema(s) or (isinstance(s, list) and all(isinstance(x, str) for x in s))
                for s in v.values()) and (key == "dependencies" or all(
                    isinstance(s, list) for s in v.values()))
            what = "an object of arrays of names" + (" or schemas" if key == "dependencies"
                                                     else "")
        elif key == "type":
            ok = isinstance(v, str) or (isinstance(v, list) and all(isinstance(t, str)
                                                                    for t in v))
            what = "a string or an array of strings"
        if not ok:
            raise SchemaError(f"{key} must be {what}", keyword=key, pointer=ptr)


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
