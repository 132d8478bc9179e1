"""Each documented size limit of the converter: just under it the schema converts, past
it the converter refuses with ``SchemaError`` naming the keyword (never an unbounded
grammar)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from gbnfkit import Grammar, SchemaError, json_schema_to_gbnf
from gbnfkit.schema._arrays import MAX_UNIQUE_VALUES
from gbnfkit.schema._convert import MAX_ALTERNATIVES, MAX_GRAMMAR_SIZE, MAX_LISTED_MULTIPLES
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
    """n branches, each needing two of n properties: sibling properties copied n times.
    The names are single characters: no prefix shared, so a branch's rule of its
    optional keys (left-factored, written once per branch) is n options as well."""
    names = [chr(0x4E00 + i) for i in range(n)]
    return {"type": "object",
            "properties": {name: {"type": "integer", "minimum": i}
                           for i, name in enumerate(names)},
            "anyOf": [{"required": [names[i], names[(i + 1) % n]]} for i in range(n)]}


def _addresses(n: int) -> dict[str, Any]:
    """The shape of MaskBench dev ``Github_medium---o35868.json``: a ``oneOf`` of n country
    branches without ``required``.  They overlap (an object without those keys matches
    them all), so each becomes "this branch and not the others": n - 1 negated objects of
    3 properties, each an ``anyOf``, distributed into one another (about 2 * 3 ** (n - 2)
    alternatives)."""
    return {"type": "object",
            "properties": {"street": {"type": "string", "maxLength": 50}},
            "oneOf": [{"properties": {
                "country": {"enum": [f"C{i}"]},
                "state": {"enum": [f"S{i}-{j}" for j in range(20)]},
                "postalCode": {"type": "string", "maxLength": 10}}} for i in range(n)]}


def _negated(n: int) -> dict[str, Any]:
    return {"not": {"enum": [f"word{i:05d}" for i in range(n)]}}


@pytest.mark.parametrize(("build", "ok", "too_many", "keyword"), [
    (_unique, MAX_UNIQUE_VALUES, MAX_UNIQUE_VALUES + 1, "uniqueItems"),
    (_patterns, MAX_PATTERN_PROPERTIES, MAX_PATTERN_PROPERTIES + 1, "patternProperties"),
    (_multiples, MAX_LISTED_MULTIPLES, MAX_LISTED_MULTIPLES + 1, "multipleOf"),
    (_spread, 40, 320, "anyOf"),
    (_negated, 100, MAX_NEGATION_SIZE // 10, "not"),
    (_addresses, 5, 7, "oneOf"),
])
def test_limit(build: Any, ok: int, too_many: int, keyword: str) -> None:
    Grammar.from_json_schema(build(ok), property_order="any")
    with pytest.raises(SchemaError) as info:
        json_schema_to_gbnf(build(too_many), property_order="any")
    assert info.value.keyword == keyword


def test_grammar_size_cap_names_the_composition() -> None:
    with pytest.raises(SchemaError) as info:
        json_schema_to_gbnf(_spread(320), property_order="any")
    assert f"{MAX_GRAMMAR_SIZE:,}" in str(info.value)
    assert info.value.pointer is not None and info.value.pointer.startswith("/anyOf/")


def test_exploding_one_of_is_refused_before_the_work() -> None:
    # used to take ~25 s (building towards MAX_GRAMMAR_SIZE, refused deep inside the
    # rewrite); now refused at the oneOf itself, naming it and the limit
    schema = {"type": "object", "properties": {"home": {"$ref": "#/definitions/address"}},
              "definitions": {"address": _addresses(10)}}
    with pytest.raises(SchemaError) as info:
        json_schema_to_gbnf(schema, property_order="any")
    assert info.value.keyword == "oneOf"
    assert info.value.pointer == "/definitions/address"
    assert f"more than {MAX_ALTERNATIVES:,} alternatives" in str(info.value)


def test_spread_under_the_limit_is_exact() -> None:
    g = Grammar.from_json_schema(_addresses(5), property_order="any")
    assert g.match('{"country": "C1", "state": "S1-3"}').status.value == "accept"
    assert g.match('{"state": "S2-0"}').status.value == "accept"
    # no key of the branches: every branch holds, so oneOf fails
    assert g.match('{"street": "x"}').status.value != "accept"
    assert g.match('{"country": "C1", "state": "S2-0"}').status.value != "accept"


def test_long_flat_any_of_is_not_counted_as_a_spread() -> None:
    # 2 x 3,000 alternatives, but all written out: four per written branch are allowed
    schema = {"anyOf": [{"const": i} for i in range(3000)],
              "allOf": [{"anyOf": [{"type": "integer"}, {"type": "string"}]}]}
    g = Grammar.from_json_schema(schema, property_order="any")
    assert g.match("2999").status.value == "accept"
    assert g.match("3000").status.value != "accept"


def test_unique_items_under_the_limit_is_exact() -> None:
    g = Grammar.from_json_schema(_unique(MAX_UNIQUE_VALUES))
    assert g.match(json.dumps(list(range(MAX_UNIQUE_VALUES)))).status.value == "accept"
    assert g.match("[1, 2, 1]").status.value != "accept"
