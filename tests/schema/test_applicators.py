"""Keywords whose meaning depends on in-place applicators (draft 2020-12): the grammar's
verdict equals ``jsonschema``'s on every listed instance, or the schema is refused with
``SchemaError`` naming the keyword."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest

from gbnfkit import Grammar, SchemaError

OBJ_A = {"properties": {"a": {"type": "integer"}}}
CASES: list[tuple[Any, list[Any]]] = [
    # an applicator sibling sees its subschemas' properties
    ({"allOf": [OBJ_A], "unevaluatedProperties": False}, [{"a": 1}, {"b": 1}, {}]),
    ({"$ref": "#/$defs/a", "$defs": {"a": OBJ_A}, "unevaluatedProperties": False},
     [{"a": 1}, {"a": 1, "b": 2}]),
    # cousins do not see each other
    ({"allOf": [OBJ_A, {"unevaluatedProperties": False}]}, [{"a": 1}, {}, {"b": 1}]),
    ({"allOf": [{"$ref": "#/$defs/u"}], "properties": {"b": True},
      "$defs": {"u": {"unevaluatedProperties": False}}}, [{"b": 1}, {}]),
    # valid anyOf branches add up; oneOf's single valid branch counts
    ({"anyOf": [{"properties": {"a": True}, "required": ["a"]},
                {"properties": {"b": True}, "required": ["b"]}],
      "unevaluatedProperties": False},
     [{"a": 1}, {"b": 1}, {"a": 1, "b": 2}, {"a": 1, "c": 3}, {}]),
    ({"oneOf": [{"properties": {"a": {"type": "integer"}}, "required": ["a"]},
                {"properties": {"b": {"type": "string"}}, "required": ["b"]}],
      "unevaluatedProperties": False},
     [{"a": 1}, {"b": "x"}, {"a": 1, "b": "x"}, {"a": 1, "c": 0}]),
    # bare required lists: a value that is no object satisfies every branch, so it is
    # valid under one branch and invalid under two or more (found by bughunt6's run)
    ({"oneOf": [{"required": []}]}, [None, 1, "s", {}, {"a": 1}]),
    ({"oneOf": [{"required": ["a"]}]}, [None, 1, [], {}, {"a": 1}]),
    ({"oneOf": [{"required": ["a"]}, {"required": ["b"]}]},
     [None, 1, {}, {"a": 1}, {"b": 1}, {"a": 1, "b": 2}]),
    # if/then/else: the failed if contributes nothing
    ({"if": {"required": ["k"]},
      "then": {"properties": {"t": True}}, "else": {"properties": {"e": True}},
      "unevaluatedProperties": False},
     [{"k": 1, "t": 0}, {"k": 1, "e": 0}, {"e": 0}, {"t": 2}, 5]),
    ({"dependentSchemas": {"a": {"properties": {"b": True}}}, "properties": {"a": True},
      "unevaluatedProperties": False}, [{"a": 1, "b": 2}, {"b": 2}, {"a": 1}]),
    # a dependency applies to objects only: it evaluates no array item
    ({"dependentSchemas": {"c": {"items": True}}, "unevaluatedItems": False},
     [[1], [], {"c": 1}, {"d": [1]}]),
    ({"additionalProperties": {"type": "integer"}, "unevaluatedProperties": False},
     [{"x": 1}, {"x": "s"}]),
    ({"patternProperties": {"^p": True}, "unevaluatedProperties": {"type": "string"}},
     [{"p1": 1}, {"q": 1}, {"q": "s"}]),
    # unevaluatedItems
    ({"prefixItems": [{"type": "integer"}], "unevaluatedItems": False}, [[1], [1, 2], []]),
    ({"allOf": [{"prefixItems": [True, True]}], "unevaluatedItems": {"type": "string"}},
     [[1, 2], [1, 2, "x"], [1, 2, 3]]),
    ({"allOf": [{"prefixItems": [True]}, {"unevaluatedItems": False}]}, [[], [1]]),
    ({"items": {"type": "integer"}, "unevaluatedItems": False}, [[1, 2], ["x"]]),
    # prefixItems in an allOf member does not shield items from a sibling's items
    ({"allOf": [{"prefixItems": [{"type": "string"}]}, {"items": {"type": "integer"}}]},
     [["x"], [1], [1, 2], []]),
    ({"prefixItems": [{"type": "string"}], "allOf": [{"items": {"maxLength": 1}}]},
     [["x"], ["xy"], ["x", "y"]]),
    ({"allOf": [{"prefixItems": [{"type": "string"}], "items": False},
                {"prefixItems": [True, True]}]}, [["x"], ["x", 1]]),
    # contains counts
    ({"contains": {"type": "string"}, "minContains": 2, "maxContains": 3},
     [["a"], ["a", "b"], ["a", "b", 1, "c"], ["a", "b", "c", "d"], [1, "a", 2, "b"]]),
    ({"contains": {"const": 0}, "maxContains": 1}, [[], [0], [0, 0], [1, 0, 1]]),
    ({"contains": {"type": "string"}, "minContains": 0}, [[], [1]]),
    ({"contains": {"type": "string"}, "minContains": 0, "maxContains": 0},
     [[], [1], ["s"]]),
    # $ref with siblings: the target does not see their properties
    ({"$ref": "#/$defs/closed", "properties": {"b": True},
      "$defs": {"closed": {"properties": {"a": True}, "additionalProperties": False}}},
     [{"a": 1}, {"b": 1}, {}]),
    ({"allOf": [{"properties": {"x": True}},
                {"patternProperties": {"^y": True}, "additionalProperties": False}]},
     [{"x": 1}, {"y": 1}, {}]),
    # if/then/else by type, const of a property, required
    ({"if": {"type": "string"}, "then": {"minLength": 2}, "else": {"type": "integer"}},
     ["a", "ab", 1, 1.5, None]),
    ({"type": "object", "if": {"required": ["x"]}, "then": {"required": ["y"]}},
     [{"x": 1}, {"x": 1, "y": 2}, {}]),
    # not of various forms
    ({"not": {"enum": [1, "a", None, [1], {"k": 1}]}},
     [1, 1.0, 2, "a", "b", None, [1], [2], {"k": 1}, {"k": 2}, {}, True]),
    ({"not": {"properties": {"a": {"minimum": 3}}, "required": ["a"]}},
     [{"a": 1}, {"a": 5}, {}, 7]),
    ({"not": {"allOf": [{"required": ["s"]}, {"required": ["t"]}]}, "type": "object"},
     [{"s": 1}, {"s": 1, "t": 1}, {}]),
    ({"type": "string", "not": {"pattern": "^a"}, "maxLength": 3}, ["b", "ab", "bbbb"]),
    # oneOf of closed objects: "not closed" is a listed property failing or another key
    ({"oneOf": [{"type": "object", "additionalProperties": False,
                 "properties": {"key": {"type": "string"}}},
                {"type": "object", "additionalProperties": False,
                 "properties": {"keys": {"type": "array"}}}]},
     [{}, {"key": "a"}, {"keys": []}, {"key": "a", "keys": []}, {"key": 1}, {"z": 1}]),
    ({"not": {"properties": {"a": {"type": "string"}}, "additionalProperties": False},
      "minProperties": 1}, [{"a": "s"}, {"a": 1}, {"b": 1}, {"a": "s", "b": 1}, {}, 3]),
    # not of an additionalProperties schema: a member outside the names fails it
    ({"not": {"properties": {"a": True}, "additionalProperties": {"type": "string"}}},
     [{}, {"a": 1}, {"b": "s"}, {"b": 1}, {"a": 1, "b": 2, "c": "s"}, 4]),
    ({"oneOf": [{"type": "object", "properties": {"a": {"type": "integer"}},
                 "additionalProperties": {"type": "string"}},
                {"type": "object", "additionalProperties": {"type": "integer"}}]},
     [{}, {"a": 1}, {"a": 1, "b": "s"}, {"b": 2}, {"b": "s"}, {"a": "x"}, {"a": 1, "b": 2}]),
    ({"properties": {"x": {"minimum": 0}}, "maxProperties": 2,
      "not": {"additionalProperties": {"type": "boolean"}}},
     [{"x": 1}, {"x": 1, "y": 2}, {"y": True}, {"y": True, "z": 0}, {"x": -1, "z": 0}]),
    # overlapping oneOf branches: the overlap is excluded
    ({"oneOf": [{"type": "string", "pattern": "^[a-f0-9]+$"},
                {"type": "string", "pattern": "^[A-F0-9]+$"}]},
     ["ab", "AB", "12", "aB", ""]),
    ({"oneOf": [{"type": "string"}, {"minLength": 3}]}, ["ab", "abc", 1, None, ""]),
    ({"oneOf": [{"type": "integer"}, {"type": "number"}]}, [1, 1.5, 2.0, "x"]),
    # multipleOf between bounds: the multiples listed
    ({"type": "integer", "multipleOf": 16, "minimum": -40, "maximum": 33},
     [-32, -40, 0, 32, 33, 16, 15, 48]),
    ({"type": "integer", "multipleOf": 1.5, "exclusiveMinimum": 0, "maximum": 9},
     [3, 6, 9, 1.5, 0, 4]),
    ({"not": {"oneOf": [{"type": "string"}, {"maxLength": 2}]}},
     ["a", "abc", 1, None, [1]]),
    ({"oneOf": [{"oneOf": [{"const": 1}, {"const": 2}]}, {"type": "string"}, {"minimum": 2}]},
     [1, 2, 3, "s", None]),
    # two anyOf of 9 branches each in one allOf (81 combinations): distributed lazily
    ({"allOf": [{"anyOf": [{"const": i} for i in range(9)]},
                {"anyOf": [{"minimum": i, "maximum": i} for i in range(4, 13)]}]},
     [0, 3, 4, 8, 9, 12]),
    # uniqueItems over a finite item domain
    ({"type": "array", "uniqueItems": True, "items": {"enum": ["a", "b", 1]}, "minItems": 1},
     [[], ["a"], ["a", "a"], ["a", "b", 1], [1, 1.0], [1, "b"], ["b", "a", "a"]]),
    ({"uniqueItems": True, "items": {"type": ["boolean", "null"]}, "maxItems": 2},
     [[True, False], [True, True], [None, False, True], [None]]),
    # overlapping patternProperties, and a pattern that matches a listed name
    ({"patternProperties": {"^a": {"type": "integer"}, "b$": {"minimum": 3}},
      "additionalProperties": {"type": "string"}},
     [{"a": 1}, {"ab": 4}, {"ab": 2}, {"b": 1.5}, {"b": 2}, {"c": "s"}, {"c": 1}, {"a": "s"}]),
    ({"properties": {"ax": {"type": "string"}}, "patternProperties": {"^a": {"maxLength": 2}},
      "additionalProperties": False},
     [{"ax": "s"}, {"ax": "long"}, {"ax": 1}, {"ay": 1}, {"b": 1}]),
    # propertyNames as a finite set of names
    ({"propertyNames": {"enum": ["a", "b"]}, "properties": {"c": True},
      "patternProperties": {"^a": {"type": "integer"}}},
     [{"a": 1}, {"a": "s"}, {"b": "s"}, {"c": 1}, {}, {"d": 1}]),
    # a listed name the names allow is held to the patterns it matches as well
    ({"propertyNames": {"enum": ["ab", "b"]}, "properties": {"ab": {"type": "integer"}},
      "patternProperties": {"^a": {"minimum": 3}, "b$": {"maximum": 5}}},
     [{"ab": 1}, {"ab": 4}, {"ab": 6}, {"ab": "s"}, {"b": 9}, {"b": "s"}]),
    ({"propertyNames": {"not": {"enum": ["x", "y"]}}, "additionalProperties": {"type": "integer"}},
     [{"a": 1}, {"x": 1}, {"y": 2, "b": 3}, {"a": "s"}]),
    # a $ref inside a schema with its own $id resolves against that $id (a bundled document)
    ({"$id": "https://example.com/root.json", "$ref": "https://example.com/item.json",
      "$defs": {"item": {"$id": "item.json", "$ref": "#/$defs/n", "$defs": {"n": {"minimum": 5}}},
                "n": {"type": "string"}}},
     [5, 4, "s", 7.5]),
    ({"$defs": {"x": {"$id": "x.json", "items": {"$ref": "#/$defs/one"},
                      "$defs": {"one": {"const": 1}}}, "one": {"const": 2}},
      "prefixItems": [{"$ref": "x.json"}, {"$ref": "#/$defs/one"}]},
     [[[1], 2], [[2], 2], [[1], 1]]),
    # length with a pattern's automaton
    ({"type": "string", "pattern": "^(ab|c)+$", "minLength": 3, "maxLength": 4},
     ["ab", "abc", "cab", "abab", "ccccc", "c"]),
    ({"type": "string", "pattern": "x", "maxLength": 2}, ["x", "ax", "axa", ""]),
]


def _instances() -> list[tuple[int, Any]]:
    return [(i, v) for i, (_, values) in enumerate(CASES) for v in values]


GRAMMARS: dict[int, Grammar | SchemaError] = {}


def _grammar(i: int) -> Grammar | SchemaError:
    if i not in GRAMMARS:
        try:
            GRAMMARS[i] = Grammar.from_json_schema(CASES[i][0], property_order="any")
        except SchemaError as e:
            GRAMMARS[i] = e
    return GRAMMARS[i]


@pytest.mark.parametrize(("index", "value"), _instances())
def test_verdict_equals_jsonschema(index: int, value: Any) -> None:
    schema = CASES[index][0]
    grammar = _grammar(index)
    assert not isinstance(grammar, SchemaError), (schema, grammar)
    expected = jsonschema.Draft202012Validator(schema).is_valid(value)
    accepted = grammar.match(json.dumps(value)).status.value == "accept"
    assert accepted == expected, (json.dumps(schema), json.dumps(value))


@pytest.mark.parametrize(("schema", "keyword"), [
    ({"contains": {"multipleOf": 3}, "maxContains": 1}, "maxContains"),
    ({"prefixItems": [True], "contains": {"type": "string"}, "unevaluatedItems": False},
     "unevaluatedItems"),
    ({"anyOf": [{"properties": {k: True}} for k in "abcdef"], "unevaluatedProperties": False},
     "unevaluatedProperties"),
    ({"allOf": [{"patternProperties": {"^p": True}}, {"additionalProperties": False}]},
     "additionalProperties"),
    ({"allOf": [{"contains": {"type": "string"}}, {"contains": {"type": "integer"}}]},
     "contains"),
    ({"if": {"properties": {"k": {"const": 1}}, "required": ["k"]},
      "then": {"properties": {"t": True}}, "else": {"properties": {"e": True}},
      "unevaluatedProperties": False}, "unevaluatedProperties"),
])
def test_refused_with_keyword(schema: Any, keyword: str) -> None:
    with pytest.raises(SchemaError) as info:
        Grammar.from_json_schema(schema)
    assert info.value.keyword == keyword


def test_a_long_flat_all_of_is_merged_and_a_recursive_one_refused() -> None:
    """The bound on ``allOf`` merging counted every member: 1,000 flat members were
    refused as "allOf nests too deeply (recursive $ref inside allOf?)".  It counts the
    ``$ref`` and nested ``allOf`` opened, which a recursive ``$ref`` opens without end."""
    flat = {"allOf": [{"type": "object", "properties": {f"p{i}": {"type": "integer"}}}
                      for i in range(1500)]}
    g = Grammar.from_json_schema(flat, whitespace="compact")
    assert g.match('{"p0":1,"p1499":2}').status.value == "accept"
    assert g.match('{"p0":"x"}').status.value == "reject"
    loop = {"$defs": {"a": {"allOf": [{"$ref": "#/$defs/b"}, {"minimum": 1}]},
                      "b": {"allOf": [{"$ref": "#/$defs/a"}]}},
            "allOf": [{"$ref": "#/$defs/a"}]}
    with pytest.raises(SchemaError, match="allOf nests too deeply"):
        Grammar.from_json_schema(loop)
