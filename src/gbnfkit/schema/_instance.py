"""A small instance checker, used to keep only the ``enum``/``const`` values that
satisfy their sibling keywords.  It answers ``None`` when a keyword is beyond it."""

from __future__ import annotations

import re
import warnings
from decimal import Decimal
from typing import Any

__all__ = ["json_equal", "json_type", "check_value", "py_search"]


def py_search(pattern: str, text: str) -> bool:
    """``re.search`` without Python's FutureWarnings about nested-set syntax;
    raises ``re.error`` for an invalid pattern."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return re.search(pattern, text) is not None

ANNOTATIONS = frozenset(
    {"title", "description", "default", "examples", "$comment", "readOnly", "writeOnly",
     "deprecated", "contentMediaType", "contentEncoding", "$schema", "$id", "$anchor", "$defs",
     "definitions", "$vocabulary", "discriminator", "nullable", "example", "markdownDescription",
     "errorMessage", "x-order"}
)


VALIDATION_KEYWORDS = frozenset(
    {"type", "enum", "const", "multipleOf", "maximum", "exclusiveMaximum", "minimum",
     "exclusiveMinimum", "maxLength", "minLength", "pattern", "maxItems", "minItems",
     "uniqueItems", "maxContains", "minContains", "maxProperties", "minProperties", "required",
     "dependentRequired", "allOf", "anyOf", "oneOf", "not", "if", "then", "else",
     "dependentSchemas", "prefixItems", "items", "contains", "properties", "patternProperties",
     "additionalProperties", "propertyNames", "unevaluatedItems", "unevaluatedProperties",
     "format", "$ref", "$dynamicRef", "$recursiveRef", "dependencies", "additionalItems"}
)


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def json_equal(a: Any, b: Any) -> bool:
    ta, tb = json_type(a), json_type(b)
    if {ta, tb} <= {"integer", "number"}:
        return Decimal(str(a)) == Decimal(str(b))
    if ta != tb:
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    return bool(a == b)


def _num(x: Any) -> Decimal:
    return Decimal(str(x))


def check_value(value: Any, schema: Any) -> bool | None:
    """Whether ``value`` satisfies ``schema`` (no ``$ref``), or ``None`` if unknown."""
    if schema is True or schema == {}:
        return True
    if schema is False:
        return False
    if not isinstance(schema, dict):
        return None
    t = json_type(value)
    for key, arg in schema.items():
        if key in ANNOTATIONS:
            continue
        ok: bool | None
        if key == "type":
            types = [arg] if isinstance(arg, str) else list(arg)
            ok = t in types or (t == "integer" and "number" in types)
        elif key == "enum":
            ok = any(json_equal(value, v) for v in arg)
        elif key == "const":
            ok = json_equal(value, arg)
        elif key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
            if t not in ("integer", "number") or isinstance(arg, bool):
                ok = True if t not in ("integer", "number") else None
            else:
                v, a = _num(value), _num(arg)
                ok = {"minimum": v >= a, "maximum": v <= a, "exclusiveMinimum": v > a,
                      "exclusiveMaximum": v < a}[key]
        elif key in ("minLength", "maxLength"):
            ok = t != "string" or (len(value) >= arg if key == "minLength" else len(value) <= arg)
        elif key == "pattern":
            try:
                ok = t != "string" or py_search(arg, value)
            except re.error:
                ok = None
        elif key in ("minItems", "maxItems"):
            ok = t != "array" or (len(value) >= arg if key == "minItems" else len(value) <= arg)
        elif key == "required":
            ok = t != "object" or all(k in value for k in arg)
        elif key == "properties":
            ok = True
            if t == "object":
                for k, sub in arg.items():
                    if k in value:
                        r = check_value(value[k], sub)
                        if r is not True:
                            ok = r
                            break
        elif key == "items" and isinstance(arg, (dict, bool)):
            ok = True
            if t == "array":
                for item in value:
                    r = check_value(item, arg)
                    if r is not True:
                        ok = r
                        break
        elif key == "additionalProperties" and arg is False:
            ok = t != "object" or set(value) <= set(schema.get("properties", {}))
        elif key in VALIDATION_KEYWORDS:
            return None
        else:
            continue  # an unknown keyword is an annotation: validators ignore it
        if ok is not True:
            return ok
    return True
