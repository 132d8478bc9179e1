"""A Hypothesis strategy for instances of the JSON Schemas used in these tests.

(hypothesis-jsonschema was tried: its object strategy fails with the Hypothesis version
in the dev environment, so the tests carry this small generator for the keywords they use.)
"""

from __future__ import annotations

from datetime import date
from typing import Any

from hypothesis import strategies as st

_LEAF = st.one_of(st.none(), st.booleans(), st.integers(-1000, 1000), st.text(max_size=5))


def instances(schema: Any, root: Any = None) -> st.SearchStrategy[Any]:
    root = schema if root is None else root
    if schema is True or schema == {}:
        return _LEAF
    if "$ref" in schema:
        target = root
        for token in schema["$ref"].lstrip("#/").split("/"):
            target = target[token]
        return st.deferred(lambda: instances(target, root))
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    if "const" in schema:
        return st.just(schema["const"])
    if "anyOf" in schema:
        return st.one_of([instances(s, root) for s in schema["anyOf"]])
    t = schema.get("type")
    if t == "null":
        return st.none()
    if t == "boolean":
        return st.booleans()
    if t == "integer":
        lo = schema.get("minimum", schema.get("exclusiveMinimum", -10**6 - 1) + 1)
        hi = schema.get("maximum", schema.get("exclusiveMaximum", 10**6 + 1) - 1)
        return st.integers(lo, hi)
    if t == "number":
        return st.one_of(st.integers(-10**6, 10**6),
                         st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False))
    if t == "string":
        if schema.get("format") == "date":
            return st.dates(date(1, 1, 1), date(9999, 12, 31)).map(date.isoformat)
        if "pattern" in schema:
            return st.from_regex(schema["pattern"], fullmatch=True)
        return st.text(min_size=schema.get("minLength", 0), max_size=schema.get("maxLength", 8))
    if t == "array":
        prefix = [instances(s, root) for s in schema.get("prefixItems", [])]
        rest = instances(schema.get("items", True), root)
        lo, hi = schema.get("minItems", 0), schema.get("maxItems", len(prefix) + 3)
        return st.integers(max(lo, 0), hi).flatmap(lambda n: st.tuples(*[
            prefix[i] if i < len(prefix) else rest for i in range(n)]).map(list))
    if t == "object":
        props = schema.get("properties", {})
        required = schema.get("required", [])
        optional = [k for k in props if k not in required]
        extra_schema = schema.get("additionalProperties", True)
        extra = st.dictionaries(st.text(min_size=1, max_size=3).filter(lambda k: k not in props),
                                instances(extra_schema, root), max_size=2) \
            if extra_schema is not False else st.just({})
        patterns = [st.dictionaries(st.from_regex(p, fullmatch=True), instances(s, root),
                                    max_size=2) for p, s in
                    schema.get("patternProperties", {}).items()]
        parts = st.tuples(
            st.fixed_dictionaries({k: instances(props[k], root) for k in required},
                                  optional={k: instances(props[k], root) for k in optional}),
            extra, *patterns)

        def combine(ds: tuple[dict[str, Any], ...]) -> dict[str, Any]:
            out: dict[str, Any] = {}
            for d in reversed(ds):
                out.update(d)
            return out

        result = parts.map(combine)
        if "maxProperties" in schema:
            result = result.filter(lambda d: len(d) <= schema["maxProperties"])
        return result
    raise ValueError(f"test generator does not handle {schema!r}")
