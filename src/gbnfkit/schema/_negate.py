"""``not``: the negation of a schema pushed down to keywords a grammar can take.

A schema object is the conjunction of its keywords (a few keywords only make sense
together: ``properties``/``patternProperties``/``additionalProperties``, the item
keywords, the ``contains`` counts), so ``not S`` is the ``anyOf`` of the negations of
its conjuncts.  Each conjunct's negation is again a schema: ``not {minLength: 3}`` is
"a string of at most 2 characters", ``not {required: [a, b]}`` is "an object without
``a`` or without ``b``", ``not {const: 5}`` is "anything but a number equal to 5"
(numbers below or above it), ``not {pattern: p}`` a string in the complement automaton
of ``p``, and so on.  What has no such negation (``multipleOf``, ``format``,
``uniqueItems``, ``propertyNames``, an ``additionalProperties`` schema beside
``properties``...) raises :class:`Unnegatable` naming the keyword.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

from gbnfkit.schema._instance import ANNOTATIONS, VALIDATION_KEYWORDS, json_type
from gbnfkit.schema._shapes import check_shapes

__all__ = ["Unnegatable", "negate", "NOT_STRINGS", "NOT_PATTERNS",
           "FROM_NOT", "FRACTION", "NEED_OTHER_KEY"]

NOT_STRINGS = "$gbnfkit-not-strings"
"""Internal keyword: a string must be none of these values."""
NOT_PATTERNS = "$gbnfkit-not-patterns"
"""Internal keyword: a string must match none of these patterns."""
FROM_NOT = "$gbnfkit-from-not"
"""Internal marker: this part's ``properties``/``items`` come from a negation, so they
evaluate nothing (``unevaluated*`` beside them is refused)."""
NEED_OTHER_KEY = "$gbnfkit-need-other-key"
"""Internal keyword ``{"names": [...], "value": schema}``: an object must have a member
whose key is none of the names and whose value matches the schema."""
FRACTION = "$gbnfkit-fraction"
"""Internal keyword: a number that is not an integer (written without exponent)."""

_TYPES = ("null", "boolean", "object", "array", "number", "string")
_GROUPS = (("properties", "patternProperties", "additionalProperties"),
           ("prefixItems", "items", "additionalItems"),
           ("contains", "minContains", "maxContains"),
           ("if", "then", "else"))
_OPPOSITE = {"minLength": ("maxLength", "string", -1), "maxLength": ("minLength", "string", 1),
             "minItems": ("maxItems", "array", -1), "maxItems": ("minItems", "array", 1),
             "minProperties": ("maxProperties", "object", -1),
             "maxProperties": ("minProperties", "object", 1)}
_BOUNDS = {"minimum": "exclusiveMaximum", "exclusiveMinimum": "maximum",
           "maximum": "exclusiveMinimum", "exclusiveMaximum": "minimum"}

Resolve = Callable[[Any], Any]


class Unnegatable(Exception):
    """``not`` of this keyword has no grammar form (``limit``: the field of
    ``SchemaLimits`` that was reached, if that is why)."""

    def __init__(self, keyword: str, reason: str, limit: str | None = None) -> None:
        self.keyword = keyword
        self.limit = limit
        super().__init__(reason)


def _any(options: list[Any]) -> Any:
    kept: list[Any] = []
    seen: set[str] = set()
    for o in options:
        if o is True or o == {}:
            return True
        if o is False:
            continue
        key = json.dumps(o, sort_keys=True)
        if key not in seen:
            seen.add(key)
            kept.append(o)
    if not kept:
        return False
    return kept[0] if len(kept) == 1 else {"anyOf": kept}


def _all(parts: list[Any]) -> Any:
    kept = [p for p in parts if p is not True and p != {}]
    if any(p is False for p in kept):
        return False
    if not kept:
        return True
    return kept[0] if len(kept) == 1 else {"allOf": kept}


def _mark(schema: Any) -> Any:
    """A positive part of a negation: its properties/items evaluate nothing."""
    return {**schema, FROM_NOT: True} if isinstance(schema, dict) and schema else schema


def _types_except(banned: set[str]) -> list[str]:
    return [t for t in _TYPES if t not in banned]


class _Negator:
    def __init__(self, resolve: Resolve) -> None:
        self.resolve = resolve
        self.depth = 0

    def neg(self, schema: Any) -> Any:
        if schema is True:
            return False
        if schema is False:
            return True
        if not isinstance(schema, dict):
            raise Unnegatable("not", "a schema must be an object or a boolean")
        self.depth += 1
        try:
            if self.depth > 50:
                raise Unnegatable("not", "not nests too deeply (a recursive $ref?)")
            return self._neg(schema)
        finally:
            self.depth -= 1

    def _neg(self, schema: dict[str, Any]) -> Any:
        check_shapes(schema, "")
        schema = {k: v for k, v in schema.items() if k not in ANNOTATIONS}
        if "$ref" in schema:
            target = self.resolve(schema.pop("$ref"))
            return self.neg({"allOf": [target, schema]} if schema else target)
        options: list[Any] = []
        done: set[str] = set()
        for group in _GROUPS:
            if any(k in schema for k in group):
                part = {k: schema[k] for k in group if k in schema}
                done.update(group)
                options.append(self.group(part))
        for key, value in schema.items():
            if key not in done:
                options.append(self.keyword(key, value, schema))
        return _any(options)

    # -------------------------------------------------------------- groups
    def group(self, part: dict[str, Any]) -> Any:
        if "if" in part:
            i, t, e = part.get("if", True), part.get("then", True), part.get("else", True)
            if "if" not in part:
                return False
            # not (if I then T else E) = (I and not T) or (not I and not E)
            return _any([_all([_mark(i), self.neg(t)]), _all([self.neg(i), self.neg(e)])])
        if "properties" in part or "patternProperties" in part or \
                "additionalProperties" in part:
            return self.object_members(part)
        if "contains" in part:
            if set(part) != {"contains"}:
                raise Unnegatable("minContains", "not of contains with minContains/"
                                  "maxContains is not supported")
            return {"type": "array", "items": self.neg(part["contains"]), FROM_NOT: True}
        if "contains" not in part and set(part) <= {"minContains", "maxContains"}:
            return False  # without contains they do nothing
        items = part.get("items", True)
        if "prefixItems" in part or isinstance(items, list):
            raise Unnegatable("prefixItems", "not of a tuple (prefixItems) is not supported")
        if "items" not in part:
            return False  # additionalItems without an items array does nothing
        return {"type": "array", "contains": self.neg(items), FROM_NOT: True}

    def object_members(self, part: dict[str, Any]) -> Any:
        extra = part.get("additionalProperties", True)
        if part.get("patternProperties"):
            raise Unnegatable("patternProperties", "not of patternProperties is not "
                              "supported")
        props = part.get("properties", {})
        options = [{"type": "object", "required": [k], "properties": {k: self.neg(s)},
                    FROM_NOT: True} for k, s in props.items()]
        if extra is not True and extra != {}:
            # or a member outside the listed names whose value fails additionalProperties
            options.append({"type": "object", "properties": {k: True for k in props},
                            NEED_OTHER_KEY: {"names": sorted(props), "value": self.neg(extra)},
                            FROM_NOT: True})
        return _any(options)

    # -------------------------------------------------------------- single keywords
    def keyword(self, key: str, value: Any, schema: dict[str, Any]) -> Any:
        if key == "type":
            types = {value} if isinstance(value, str) else set(value)
            if not types <= {*_TYPES, "integer"}:
                raise Unnegatable("type", f"unknown type in {value!r}")
            if "integer" in types and "number" not in types:
                # the numbers with a fraction (written without exponent: a restriction)
                types.add("number")
                return _any([{"type": _types_except(types)} if _types_except(types)
                              else False, {"type": "number", FRACTION: True}])
            if "number" in types:
                types.add("integer")
            return {"type": _types_except(types)} if _types_except(types) else False
        if key in ("enum", "const"):
            values = value if key == "enum" else [value]
            return self.not_values(values)
        if key == "required":
            return _any([{"type": "object", "properties": {k: False}} for k in value])
        if key in _OPPOSITE:
            other, t, step = _OPPOSITE[key]
            bound = math.ceil(value) - 1 if step < 0 else math.floor(value) + 1
            if bound < 0:
                return False
            return {"type": t, other: bound}
        if key in _BOUNDS:
            if isinstance(value, bool):
                raise Unnegatable(key, "not of a draft-4 boolean exclusive bound is not "
                                  "supported")
            other = _BOUNDS[key]
            draft4 = schema.get("exclusive" + key[0].upper() + key[1:])
            if isinstance(draft4, bool) and draft4:
                raise Unnegatable(key, "not of a draft-4 exclusive bound is not supported")
            return {"type": "number", other: value}
        if key == "pattern":
            return {"type": "string", NOT_PATTERNS: [value]}
        if key == NOT_PATTERNS:
            return _any([{"type": "string", "pattern": p} for p in value])
        if key == FROM_NOT:
            return False
        if key == NEED_OTHER_KEY:
            return {"properties": {k: True for k in value["names"]},
                    "additionalProperties": self.neg(value["value"]), FROM_NOT: True}
        if key == FRACTION:
            return {"type": ["null", "boolean", "object", "array", "string", "integer"]}
        if key == NOT_STRINGS:
            return {"enum": list(value)} if value else False
        if key == "$gbnfkit-patterns":
            return _any([self.keyword(k, v, spec) for spec in value for k, v in spec.items()])
        if key == "allOf":
            return _any([self.neg(s) for s in value])
        if key == "anyOf":
            return _all([self.neg(s) for s in value])
        if key == "not":
            return _mark(value)
        if key == "oneOf":
            # none of the branches holds, or two of them do
            pairs = [_mark({"allOf": [a, b]}) for n, a in enumerate(value)
                     for b in value[n + 1:]]
            return _any([_all([self.neg(s) for s in value]), *pairs])
        if key == "uniqueItems":
            if value is False:
                return False
            raise Unnegatable(key, "not of uniqueItems (an array with a repeated item) is "
                              "not supported")
        if key == "dependentRequired" or (key == "dependencies" and all(
                isinstance(v, list) for v in value.values())):
            return _any([{"type": "object", "required": [name], "properties": {d: False}}
                         for name, deps in value.items() for d in deps])
        if key in ("dependentSchemas", "dependencies"):
            out = []
            for name, dep in value.items():
                need = [name, *dep] if isinstance(dep, list) else [name]
                neg = self.neg({"required": need[1:]}) if isinstance(dep, list) else \
                    self.neg(dep)
                out.append(_all([{"type": "object", "required": [name]}, neg]))
            return _any(out)
        if key in VALIDATION_KEYWORDS or key.startswith("$gbnfkit-"):
            raise Unnegatable(key, f"not of {key} is not supported")
        return False  # an unknown keyword is an annotation: it always holds

    def not_values(self, values: list[Any]) -> Any:
        """Anything but these JSON values."""
        by_type: dict[str, list[Any]] = {}
        for v in values:
            t = json_type(v)
            by_type.setdefault("number" if t == "integer" else t, []).append(v)
        options: list[Any] = [{"type": _types_except(set(by_type))}] if \
            _types_except(set(by_type)) else []
        if "boolean" in by_type:
            rest = [b for b in (True, False) if b not in by_type["boolean"]]
            if rest:
                options.append({"enum": rest})
        if "string" in by_type:
            options.append({"type": "string", NOT_STRINGS: by_type["string"]})
        if "number" in by_type:
            points = sorted({float(v) if isinstance(v, float) else v
                             for v in by_type["number"]})
            lo: Any = None
            for p in points:
                piece: dict[str, Any] = {"type": "number", "exclusiveMaximum": p}
                if lo is not None:
                    piece["exclusiveMinimum"] = lo
                options.append(piece)
                lo = p
            options.append({"type": "number", "exclusiveMinimum": lo})
        if "object" in by_type:
            options.append(_all([{"type": "object"}] + [self.not_object(v)
                                                        for v in by_type["object"]]))
        if "array" in by_type:
            options.append(_all([{"type": "array"}] + [self.not_array(v)
                                                       for v in by_type["array"]]))
        return _any(options)

    def not_object(self, value: dict[str, Any]) -> Any:
        options: list[Any] = [{"type": "object", "minProperties": len(value) + 1}]
        for k, v in value.items():
            options.append({"type": "object", "properties": {k: False}})
            options.append({"type": "object", "required": [k],
                            "properties": {k: self.not_values([v])}, FROM_NOT: True})
        return _any(options)

    def not_array(self, value: list[Any]) -> Any:
        n = len(value)
        options: list[Any] = [{"type": "array", "minItems": n + 1}]
        if n:
            options.append({"type": "array", "maxItems": n - 1})
        for i, v in enumerate(value):
            options.append({"type": "array", "minItems": n, FROM_NOT: True,
                            "prefixItems": [True] * i + [self.not_values([v])]})
        return _any(options)


def negate(schema: Any, resolve: Resolve, max_chars: int) -> Any:
    """A schema (without ``not`` at its top) for the instances ``schema`` rejects.

    Raises:
        Unnegatable: a keyword has no negation a grammar can express, or the negation
            would exceed ``max_chars`` characters of JSON (``max_negation_chars``).
    """
    try:
        out = _Negator(resolve).neg(schema)
    except (TypeError, ValueError, AttributeError, KeyError) as e:  # malformed values
        raise Unnegatable("not", f"malformed schema under not: {e}") from None
    if len(json.dumps(out)) > max_chars:
        raise Unnegatable("not", f"the negation is larger than {max_chars} "
                          "characters of schema", "max_negation_chars")
    return out
