"""A small instance checker, used to keep only the ``enum``/``const`` values that
satisfy their sibling keywords.  It answers ``None`` when a keyword is beyond it."""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from gbnfkit.schema._formats import FORMAT_PATTERNS
from gbnfkit.schema._regex_parse import RegexUnsupported, parse_regex, python_regex

__all__ = ["json_equal", "json_type", "check_value", "check_pattern", "pattern_search"]


def pattern_search(pattern: str, text: str) -> bool:
    """Whether ``pattern`` occurs in ``text`` (``re.search``) as the grammar reads the
    pattern: ECMA-262's ``\\d``, ``\\w``, ``\\s``, ``.`` and ``$`` (``parse_regex``), so that
    the values and names checked here agree with the strings the grammar accepts.  A
    pattern ``parse_regex`` refuses (lookaround, ...) is read by Python's ``re``, which
    raises ``re.error`` for an invalid one (also for a count ``re`` cannot hold:
    ``a{4294967296}`` is an OverflowError there, 5,000 digits a ValueError)."""
    if isinstance(pattern, str):
        try:
            pattern = python_regex(parse_regex(pattern))
        except RegexUnsupported:
            pass
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        try:
            return re.search(pattern, text) is not None
        except (OverflowError, ValueError) as e:
            raise re.error(str(e)) from None


def check_pattern(pattern: str) -> None:
    """Raise ``re.error`` if ``pattern`` is not a valid regular expression: one
    ``parse_regex`` reads is; one it refuses is judged by Python's ``re``."""
    try:
        parse_regex(pattern)
    except RegexUnsupported:
        pattern_search(pattern, "")


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


Resolve = Callable[[Any], Any]


def _all3(results: Any) -> bool | None:
    """True if all are True, False if one is False, else None."""
    unknown = False
    for r in results:
        if r is False:
            return False
        if r is None:
            unknown = True
    return None if unknown else True


def _not3(r: bool | None) -> bool | None:
    return None if r is None else not r


class _Checker:
    def __init__(self, resolve: Resolve | None, legacy_ref: bool) -> None:
        self.resolve = resolve
        self.legacy_ref = legacy_ref
        self.depth = 0

    def check(self, value: Any, schema: Any) -> bool | None:
        if schema is True:
            return True
        if schema is False:
            return False
        if not isinstance(schema, dict):
            return None
        self.depth += 1
        try:
            if self.depth > 100:
                return None
            if self.legacy_ref and "$ref" in schema:  # before 2019-09: siblings ignored
                schema = {"$ref": schema["$ref"]}
            return _all3(self.keyword(value, key, arg, schema) for key, arg in schema.items()
                         if key not in ANNOTATIONS)
        finally:
            self.depth -= 1

    def keyword(self, value: Any, key: str, arg: Any, schema: dict[str, Any]) -> bool | None:
        t = json_type(value)
        number = t in ("integer", "number")
        if key == "type":
            types = [arg] if isinstance(arg, str) else list(arg)
            return t in types or (t == "integer" and "number" in types)
        if key == "enum":
            return any(json_equal(value, v) for v in arg)
        if key == "const":
            return json_equal(value, arg)
        if key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
            if not number:
                return True
            if isinstance(arg, bool) or any(isinstance(schema.get(k), bool) for k in (
                    "exclusiveMinimum", "exclusiveMaximum")):
                return None
            v, a = _num(value), _num(arg)
            return {"minimum": v >= a, "maximum": v <= a, "exclusiveMinimum": v > a,
                    "exclusiveMaximum": v < a}[key]
        if key == "multipleOf":
            return not number or _num(value) % _num(arg) == 0
        if key in ("minLength", "maxLength"):
            return t != "string" or (len(value) >= arg if key == "minLength"
                                     else len(value) <= arg)
        if key == "pattern":
            return t != "string" or self.search(arg, value)
        if key == "$gbnfkit-not-patterns":
            return t != "string" or _all3(_not3(self.search(p, value)) for p in arg)
        if key == "$gbnfkit-not-strings":
            return t != "string" or value not in arg
        if key == "$gbnfkit-from-not":
            return True
        if key == "$gbnfkit-need-other-key":
            if t != "object":
                return True
            found = [self.check(v, arg["value"]) for k, v in value.items()
                     if k not in arg["names"]]
            return True if True in found else (None if None in found else False)
        if key == "$gbnfkit-fraction":
            return not number or t == "number"
        if key == "$gbnfkit-patterns":
            return _all3(self.check(value, spec) for spec in arg)
        if key in ("minItems", "maxItems"):
            return t != "array" or (len(value) >= arg if key == "minItems"
                                    else len(value) <= arg)
        if key in ("minProperties", "maxProperties"):
            return t != "object" or (len(value) >= arg if key == "minProperties"
                                     else len(value) <= arg)
        if key == "required":
            return t != "object" or all(k in value for k in arg)
        if key == "uniqueItems":
            return t != "array" or not arg or not any(
                json_equal(value[i], value[j]) for i in range(len(value))
                for j in range(i + 1, len(value)))
        if key in ("properties", "patternProperties", "additionalProperties"):
            return t != "object" or self.members(value, key, schema)
        if key == "propertyNames":
            return t != "object" or _all3(self.check(k, arg) for k in value)
        if key in ("items", "prefixItems", "additionalItems"):
            return t != "array" or self.items(value, key, schema)
        if key == "contains":
            if t != "array":
                return True
            results = [self.check(v, arg) for v in value]
            if None in results:
                return None
            n = sum(1 for r in results if r)
            lo = schema.get("minContains", 1)
            hi = schema.get("maxContains")
            return n >= lo and (hi is None or n <= hi)
        if key in ("minContains", "maxContains", "then", "else", "$defs", "definitions"):
            return True  # read with contains / if
        if key == "if":
            ok = self.check(value, arg)
            if ok is None:
                return None
            return self.check(value, schema.get("then" if ok else "else", True))
        if key == "allOf":
            return _all3(self.check(value, s) for s in arg)
        if key == "anyOf":
            results = [self.check(value, s) for s in arg]
            return True if True in results else (None if None in results else False)
        if key == "oneOf":
            results = [self.check(value, s) for s in arg]
            return None if None in results else results.count(True) == 1
        if key == "not":
            return _not3(self.check(value, arg))
        if key in ("dependentRequired", "dependentSchemas", "dependencies"):
            if t != "object":
                return True
            return _all3((all(d in value for d in dep) if isinstance(dep, list)
                          else self.check(value, dep)) for name, dep in arg.items()
                         if name in value)
        if key == "$ref" and self.resolve is not None:
            try:
                target = self.resolve(arg)
            except Exception:  # noqa: BLE001 - an unresolvable reference: unknown
                return None
            return self.check(value, target)
        if key == "format" and isinstance(arg, str) and arg not in _KNOWN_FORMATS:
            return True  # an unknown format is an annotation
        if key == "format" and isinstance(arg, str) and arg in FORMAT_PATTERNS:
            # the pattern the grammar enforces the format with (exact or approximate)
            return self.search(FORMAT_PATTERNS[arg], value) if t == "string" else True
        if key in VALIDATION_KEYWORDS or key.startswith("$gbnfkit-"):
            return None
        return True  # an unknown keyword is an annotation: validators ignore it

    def search(self, pattern: Any, text: str) -> bool | None:
        try:
            return pattern_search(pattern, text)
        except (re.error, TypeError):
            return None

    def members(self, value: dict[str, Any], key: str, schema: dict[str, Any]) -> bool | None:
        props = schema.get("properties", {})
        patterns = schema.get("patternProperties", {})
        results: list[bool | None] = []
        for name, v in value.items():
            if key == "properties":
                if name in props:
                    results.append(self.check(v, props[name]))
            elif key == "patternProperties":
                for p, sub in patterns.items():
                    hit = self.search(p, name)
                    results.append(None if hit is None else (self.check(v, sub) if hit
                                                             else True))
            else:
                hits = [self.search(p, name) for p in patterns]
                if None in hits:
                    results.append(None)
                elif name not in props and not any(hits):
                    results.append(self.check(v, schema["additionalProperties"]))
        return _all3(results)

    def items(self, value: list[Any], key: str, schema: dict[str, Any]) -> bool | None:
        items = schema.get("items")
        if key == "prefixItems":
            if isinstance(items, list):
                return True  # draft 4 tuples are read with items
            return _all3(self.check(v, s) for v, s in zip(value, schema[key], strict=False))
        if key == "items":
            if isinstance(items, list):
                return _all3(self.check(v, s) for v, s in zip(value, items, strict=False))
            start = len(schema.get("prefixItems", []))
            return _all3(self.check(v, items) for v in value[start:])
        if not isinstance(items, list):
            return True  # additionalItems without an items array does nothing
        return _all3(self.check(v, schema[key]) for v in value[len(items):])


_KNOWN_FORMATS = frozenset(
    {"date-time", "date", "time", "duration", "email", "idn-email", "hostname",
     "idn-hostname", "ipv4", "ipv6", "uri", "uri-reference", "iri", "iri-reference", "uuid",
     "uri-template", "json-pointer", "relative-json-pointer", "regex"})


def check_value(value: Any, schema: Any, resolve: Resolve | None = None,
                legacy_ref: bool = False) -> bool | None:
    """Whether ``value`` satisfies ``schema``, or ``None`` if a keyword is beyond this
    checker (``format``, ``unevaluated*``, ``$dynamicRef``, a ``$ref`` without
    ``resolve``)."""
    try:
        return _Checker(resolve, legacy_ref).check(value, schema)
    except (TypeError, ValueError, AttributeError, KeyError, ArithmeticError):
        return None  # a malformed keyword value: the converter reports it
