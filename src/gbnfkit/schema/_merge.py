"""``allOf``: merging sub-schemas into one schema with the same instances."""

from __future__ import annotations

import json
import re
from collections import deque
from collections.abc import Callable
from typing import Any

from gbnfkit._errors import SchemaError
from gbnfkit.schema._instance import ANNOTATIONS, VALIDATION_KEYWORDS, json_equal, pattern_search
from gbnfkit.schema._shapes import check_shapes

__all__ = ["merge_all", "PATTERNS_KEY", "UNSUPPORTED_MERGE"]

PATTERNS_KEY = "$gbnfkit-patterns"
"""Internal keyword: further patterns that the string must also match."""
UNSUPPORTED_MERGE = "$gbnfkit-unmerged"
"""Internal keyword: names of keywords whose values could not be combined."""

_MAX = ("maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties", "maxContains")
_MIN = ("minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties", "minContains")
_TYPES = ("null", "boolean", "object", "array", "number", "string", "integer")

Resolve = Callable[[Any], Any]
_TUPLE_KEYS = ("prefixItems", "items", "additionalItems")
_CONTAINS_KEYS = ("contains", "minContains", "maxContains")
_LIST_KEYS = (PATTERNS_KEY, UNSUPPORTED_MERGE, "$gbnfkit-not-strings", "$gbnfkit-not-patterns")


def _tuple_shape(s: dict[str, Any]) -> tuple[list[Any], Any, bool]:
    """(schemas of the leading items, schema of the items after them, whether a keyword
    gave that schema) for one schema object: ``items`` never looks at another object's
    ``prefixItems``."""
    items = s.get("items")
    if isinstance(items, list):  # draft 4-2019 tuple form
        return list(items), s.get("additionalItems", True), "additionalItems" in s
    prefix = s.get("prefixItems", [])
    if not isinstance(prefix, list):
        raise SchemaError("prefixItems must be an array", keyword="prefixItems")
    return list(prefix), items if "items" in s else True, "items" in s


def _merge_tuples(a: dict[str, Any], b: dict[str, Any], out: dict[str, Any]) -> None:
    """Item schemas of two schema objects intersected position by position."""
    if not any(k in s for s in (a, b) for k in _TUPLE_KEYS):
        return
    pa, ra, ha = _tuple_shape(a)
    pb, rb, hb = _tuple_shape(b)
    prefix = [_both(pa[i] if i < len(pa) else ra, pb[i] if i < len(pb) else rb)
              for i in range(max(len(pa), len(pb)))]
    for k in _TUPLE_KEYS:
        out.pop(k, None)
    if prefix:
        out["prefixItems"] = prefix
    if ha or hb:
        out["items"] = _both(ra, rb)


def _matches_any(patterns: Any, name: str) -> bool:
    try:
        return any(pattern_search(p, name) for p in patterns)
    except re.error as e:
        raise SchemaError(f"invalid pattern in patternProperties: {e}",
                          keyword="patternProperties") from None


def _types(s: dict[str, Any]) -> set[str] | None:
    t = s.get("type")
    if t is None:
        return None
    out = {t} if isinstance(t, str) else set(t)
    if "number" in out:
        out.add("integer")
    return out


def _both(a: Any, b: Any) -> Any:
    if a is True or a == {}:
        return b
    if b is True or b == {}:
        return a
    if a is False or b is False:
        return False
    if json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True):
        return a
    return {"allOf": [a, b]}


def _merge_two(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any] | bool:
    out = dict(a)
    _merge_tuples(a, b, out)
    if any(k in a for k in _CONTAINS_KEYS) and any(k in b for k in _CONTAINS_KEYS) and any(
            json.dumps(a.get(k), sort_keys=True) != json.dumps(b.get(k), sort_keys=True)
            for k in _CONTAINS_KEYS):
        # two contains count different items: not one contains of the intersection
        out.setdefault(UNSUPPORTED_MERGE, []).append("contains")
    for key, bv in b.items():
        if key in _TUPLE_KEYS or key in _CONTAINS_KEYS and key in a:
            continue
        if key in _LIST_KEYS:
            out[key] = [*out.get(key, []), *bv]
            continue
        if key not in out:
            out[key] = bv
            continue
        av = out[key]
        if json.dumps(av, sort_keys=True) == json.dumps(bv, sort_keys=True):
            continue
        if key in ANNOTATIONS:
            continue
        if key in _MAX:
            out[key] = min(av, bv)
        elif key in _MIN:
            out[key] = max(av, bv)
        elif key == "type":
            ta, tb = _types(a), _types(b)
            assert ta is not None and tb is not None
            common = [t for t in _TYPES if t in ta and t in tb]
            if not common:
                return False
            out[key] = common if len(common) > 1 else common[0]
        elif key == "required":
            out[key] = list(dict.fromkeys([*av, *bv]))
        elif key in ("enum", "const"):
            va = av if key == "enum" else [av]
            vb = bv if key == "enum" else [bv]
            keep = [v for v in va if any(json_equal(v, w) for w in vb)]
            if not keep:
                return False
            out.pop("const", None)
            out["enum"] = keep
        elif key in ("properties", "patternProperties"):
            merged = dict(av)
            for k, sub in bv.items():
                merged[k] = _both(merged[k], sub) if k in merged else sub
            out[key] = merged
        elif key in ("additionalProperties", "items", "contains", "propertyNames"):
            out[key] = _both(av, bv)
        elif key in ("anyOf", "oneOf"):
            if len(av) * len(bv) > 64:  # distributed later, branch by branch
                out[key] = [{"allOf": [x, {key: bv}]} for x in av]
                continue
            out[key] = [{"allOf": [x, y]} for x in av for y in bv]
        elif key == "uniqueItems":
            out[key] = bool(av) or bool(bv)
        elif key in ("pattern", "format"):
            out.setdefault(PATTERNS_KEY, []).append({key: bv})
        elif key == "not":
            out[key] = {"anyOf": [av, bv]}
        elif key.startswith("$gbnfkit-"):  # internal keywords that cannot be combined
            out.setdefault(UNSUPPORTED_MERGE, []).append("not")
        elif key in ("$defs", "definitions") or key not in VALIDATION_KEYWORDS:
            continue  # an unknown keyword is an annotation
        else:
            out.setdefault(UNSUPPORTED_MERGE, []).append(key)
    # a property that one side lists and the other only allows through additionalProperties
    for side, other in ((a, b), (b, a)):
        extra = other.get("additionalProperties", True)
        if extra is True or extra == {}:
            continue
        if side.get("patternProperties"):
            # keys matching side's patterns would escape other's additionalProperties
            out.setdefault(UNSUPPORTED_MERGE, []).append("additionalProperties")
        props = dict(out.get("properties", {}))
        for k in side.get("properties", {}):
            if k not in other.get("properties", {}) and not _matches_any(
                    other.get("patternProperties", {}), k):
                props[k] = _both(props[k], extra)
        if props:
            out["properties"] = props
    return out


def merge_all(parts: list[Any], resolve: Resolve, pointer: str,
              pointers: list[str] | None = None,
              prepare: Callable[[Any, str], Any] | None = None) -> dict[str, Any] | bool:
    """One schema equivalent to ``allOf: parts``; ``resolve`` inlines a ``$ref``.

    ``pointers`` (default: ``pointer`` for every part) say where each part is written;
    a part whose keyword values are malformed raises the SchemaError it would raise
    outside ``allOf``, with that pointer.  ``prepare(part, pointer)`` rewrites each part
    first (keywords whose meaning depends on the schema object they sit in, such as
    ``unevaluatedProperties``, must be settled before the object is merged with others).
    """
    result: dict[str, Any] | bool = {}
    todo = deque(zip(parts, pointers or [pointer] * len(parts), strict=True))
    # the ``$ref`` and nested ``allOf`` opened, which a recursive ``$ref`` would open
    # without end (the members themselves are as many as the schema lists)
    opened = 0
    while todo:
        part, where = todo.popleft()
        if prepare is not None:
            part = prepare(part, where)
        if part is True:
            continue
        if part is False:
            return False
        if not isinstance(part, dict):
            raise SchemaError("a schema must be an object or a boolean", keyword="allOf",
                              pointer=where)
        if "$ref" in part or "allOf" in part:
            opened += 1
            if opened > 1000:
                raise SchemaError("allOf nests too deeply (recursive $ref inside allOf?)",
                                  keyword="allOf", pointer=pointer)
        if "$ref" in part:
            rest = {k: v for k, v in part.items() if k != "$ref"}
            todo.extendleft([(rest, where), (resolve(part["$ref"]), f"{where}/$ref")])
            continue
        if "allOf" in part:
            members = part["allOf"]
            if not isinstance(members, list):
                raise SchemaError("allOf must be an array", keyword="allOf", pointer=where)
            rest = {k: v for k, v in part.items() if k != "allOf"}
            todo.extendleft([(rest, where), *reversed(
                [(m, f"{where}/allOf/{i}") for i, m in enumerate(members)])])
            continue
        check_shapes(part, where)
        if result is False:
            return False
        assert isinstance(result, dict)
        result = _merge_two(result, part)
        if result is False:
            return False
    return result
