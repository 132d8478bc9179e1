"""Each documented size limit of the converter: just under it the schema converts, past
it the converter refuses with ``SchemaError`` naming the keyword (never an unbounded
grammar)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from gbnfkit import Grammar, SchemaError, json_schema_to_gbnf
from gbnfkit.schema._arrays import MAX_UNIQUE_VALUES
from gbnfkit.schema._convert import MAX_GRAMMAR_SIZE, MAX_LISTED_MULTIPLES
from gbnfkit.schema._negate import MAX_NEGATION_SIZE
from gbnfkit.schema._objects import MAX_PATTERN_PROPERTIES


def _unique(n: int) -> dict[str, Any]:
    return {"type": "array", "uniqueItems": True, "items": {"enum": list(range(n))}}


def _patterns(n: int) -> dict[str, Any]:
    return {"type": "object", "patternProperties": {
        f"^{chr(97 + i)}": {"type": "integer", "minimum": i} for i in range(n)}}


def _multiples(count: int) -> dict[str, Any]:
    return {"type": "integer", "multipleOf": 3, "minimum": 0,
            "maximum": 3 * (count - 1)}


def _spread(n: int) -> dict[str, Any]:
    """n branches, each needing two of n properties: sibling properties copied n times."""
    return {"type": "object",
            "properties": {f"p{i}": {"type": "integer", "minimum": i} for i in range(n)},
            "anyOf": [{"required": [f"p{i}", f"p{(i + 1) % n}"]} for i in range(n)]}


def _negated(n: int) -> dict[str, Any]:
    return {"not": {"enum": [f"word{i:05d}" for i in range(n)]}}


@pytest.mark.parametrize(("build", "ok", "too_many", "keyword"), [
    (_unique, MAX_UNIQUE_VALUES, MAX_UNIQUE_VALUES + 1, "uniqueItems"),
    (_patterns, MAX_PATTERN_PROPERTIES, MAX_PATTERN_PROPERTIES + 1, "patternProperties"),
    (_multiples, MAX_LISTED_MULTIPLES, MAX_LISTED_MULTIPLES + 1, "multipleOf"),
    (_spread, 40, 120, "anyOf"),
    (_negated, 100, MAX_NEGATION_SIZE // 10, "not"),
])
def test_limit(build: Any, ok: int, too_many: int, keyword: str) -> None:
    Grammar.from_json_schema(build(ok), property_order="any")
    with pytest.raises(SchemaError) as info:
        json_schema_to_gbnf(build(too_many), property_order="any")
    assert info.value.keyword == keyword


def test_grammar_size_cap_names_the_composition() -> None:
    with pytest.raises(SchemaError) as info:
        json_schema_to_gbnf(_spread(120), property_order="any")
    assert f"{MAX_GRAMMAR_SIZE:,}" in str(info.value)
    assert info.value.pointer is not None and info.value.pointer.startswith("/anyOf/")


def test_unique_items_under_the_limit_is_exact() -> None:
    g = Grammar.from_json_schema(_unique(MAX_UNIQUE_VALUES))
    assert g.match(json.dumps(list(range(MAX_UNIQUE_VALUES)))).status.value == "accept"
    assert g.match("[1, 2, 1]").status.value != "accept"
