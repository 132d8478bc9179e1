"""JSON Schema keywords: each accepted/rejected as the spec says (spec defaults)."""

from __future__ import annotations

import json
import warnings
from typing import Any

import pytest

import gbnfkit
from gbnfkit import Grammar, SchemaError, json_schema_to_gbnf
from gbnfkit.schema import SchemaOptions, SchemaWarning


def ok(schema: Any, text: str, **options: Any) -> bool:
    return Grammar.from_json_schema(schema, **options).match(text).status.value == "accept"


CASES: list[tuple[Any, list[str], list[str]]] = [
    ({"type": ["string", "null"]}, ['"a"', "null"], ["1", "true"]),
    ({"enum": ["a", 1, None, {"x": [1]}]}, ['"a"', "1", "1.0", "null", '{"x": [1]}'],
     ['"b"', "2", '{"x": []}']),
    ({"const": {"a": [1, True]}}, ['{"a":[1,true]}', '{ "a" : [ 1 , true ] }'],
     ['{"a":[1]}']),
    (True, ["1", '{"a": [null]}'], ["tru"]),
    ({}, ['"x"', "[]"], ["[,]"]),
    ({"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]},
     ['{"a": 1}', '{"a": 1, "b": "extra"}'], ['{"b": 1}', '{"a": "x"}', '{"a": 1, "a2": }']),
    ({"type": "object", "properties": {"a": {"type": "integer"}},
      "additionalProperties": False}, ['{"a": 1}', "{}"], ['{"b": 1}']),
    ({"type": "object", "additionalProperties": {"type": "boolean"}},
     ['{"x": true, "y": false}'], ['{"x": 1}']),
    ({"type": "object", "properties": {"a": {}}, "additionalProperties": {"type": "integer"}},
     ['{"a": "s", "b": 2}'], ['{"a": "s", "b": "t"}']),
    ({"type": "object", "patternProperties": {"^x-": {"type": "integer"}},
      "additionalProperties": False}, ['{"x-a": 1}', "{}"], ['{"y": 1}', '{"x-a": "s"}']),
    ({"type": "object", "minProperties": 1, "maxProperties": 2},
     ['{"a": 1}', '{"a": 1, "b": 2}'], ["{}", '{"a": 1, "b": 2, "c": 3}']),
    ({"type": "array", "items": {"type": "integer"}, "minItems": 1, "maxItems": 3},
     ["[1]", "[1, 2, 3]"], ["[]", "[1, 2, 3, 4]", '["a"]']),
    ({"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}],
      "items": False}, ['["a", 1]', '["a"]', "[]"], ['["a", 1, 2]', "[1]"]),
    ({"type": "array", "prefixItems": [{"type": "string"}], "items": {"type": "integer"}},
     ['["a", 1, 2]'], ['["a", "b"]']),
    ({"type": "array", "items": {"type": "integer"}, "contains": {"const": 5}},
     ["[5]", "[1, 5, 2]"], ["[]", "[1, 2]"]),
    ({"type": "string", "minLength": 2, "maxLength": 3},
     ['"ab"', '"a\\nb"', '"\\u00e9\\u00e9"', '"😀😀"', '"\\ud83d\\ude00x"'],
     ['"a"', '"abcd"', '"\\ud83d"']),
    ({"type": "string", "pattern": "^[a-c]+$"}, ['"abc"', '"\\u0061"'], ['"abd"', '""']),
    ({"type": "string", "pattern": "b"}, ['"abc"', '"b"', '"x\\"b\\"y"'], ['"ac"']),
    ({"type": "string", "pattern": '^"\\\\$'}, ['"\\"\\\\"'], ['"x"']),
    ({"type": "string", "format": "date"}, ['"2024-02-29"', '"2023-12-31"'],
     ['"2023-02-29"', '"2023-13-01"', '"2023-04-31"', '"1900-02-29"']),
    ({"type": "string", "format": "date-time"}, ['"2023-01-02T03:04:05Z"',
                                                 '"2023-01-02t03:04:05.123+05:30"'],
     ['"2023-01-02T24:00:00Z"', '"2023-01-02 03:04:05Z"']),
    ({"type": "string", "format": "time"}, ['"23:59:60Z"'], ['"23:60:00Z"', '"10:00:00"']),
    ({"type": "string", "format": "uuid"}, ['"123e4567-e89b-12d3-a456-426614174000"'],
     ['"123e4567-e89b-12d3-a456-42661417400"']),
    ({"type": "string", "format": "ipv4"}, ['"192.168.0.1"'], ['"256.1.1.1"', '"01.1.1.1"']),
    ({"type": "string", "format": "ipv6"}, ['"::1"', '"fe80::1:2"', '"1:2:3:4:5:6:7:8"'],
     ['"1:2:3:4:5:6:7:8:9"', '":::"']),
    ({"type": "string", "format": "hostname"}, ['"example.com"'], ['"-bad.com"']),
    ({"type": "string", "format": "email"}, ['"a.b@example.com"'], ['"a@"', '"ab"']),
    ({"type": "string", "format": "uri"}, ['"https://x.org/a?b#c"'], ['"no scheme"']),
    ({"type": "integer", "minimum": -5, "exclusiveMaximum": 10},
     ["-5", "0", "9", "-0"], ["-6", "10", "1.5", "01"]),
    ({"type": "number", "exclusiveMinimum": 0, "maximum": 2.5},
     ["0.1", "2.5", "2.50", "1"], ["0", "0.0", "2.51", "-1", "3"]),
    ({"type": "number"}, ["1e5", "-0.5E-3", "12"], ["1.", ".5", "01"]),
    ({"anyOf": [{"type": "string"}, {"type": "integer", "minimum": 3}]}, ['"x"', "3"], ["2"]),
    ({"oneOf": [{"const": 1}, {"const": 2}]}, ["1", "2"], ["3"]),
    ({"allOf": [{"type": "integer", "minimum": 0}, {"maximum": 10}]}, ["0", "10"], ["11"]),
    ({"allOf": [{"type": "object", "properties": {"a": {"type": "string"}}},
                {"required": ["a"]}]}, ['{"a": "x"}'], ["{}", '{"a": 1}']),
    ({"type": "string", "not": {"enum": ["x", "y"]}}, ['"z"', '""', '"xy"'],
     ['"x"', '"y"', '"\\u0078"']),
    ({"not": {"type": "string"}}, ["1", "null"], ['"a"']),
    ({"$defs": {"n": {"type": "integer"}}, "type": "array", "items": {"$ref": "#/$defs/n"}},
     ["[1, 2]"], ['["a"]']),
    ({"definitions": {"n": {"type": "integer"}}, "$ref": "#/definitions/n"}, ["1"], ['"a"']),
    ({"$ref": "#/$defs/node", "$defs": {"node": {
        "type": "object", "properties": {"v": {"type": "integer"},
                                         "kids": {"type": "array",
                                                  "items": {"$ref": "#/$defs/node"}}},
        "required": ["v"], "additionalProperties": False}}},
     ['{"v": 1, "kids": [{"v": 2}, {"v": 3, "kids": []}]}'], ['{"v": 1, "kids": [{}]}']),
    ({"$id": "https://x.org/root.json", "$defs": {"a": {"$anchor": "num", "type": "integer"}},
      "properties": {"p": {"$ref": "#num"}}, "type": "object"}, ['{"p": 1}'], ['{"p": "s"}']),
    ({"properties": {"a": {"type": "integer"}}}, ['"str"', '{"a": 1}'], ['{"a": "x"}']),
    ({"type": "integer", "multipleOf": 7}, ["0", "14", "-21", "700"], ["1", "15", "7.0"]),
    ({"type": "number", "multipleOf": 0.01}, ["1", "1.5", "-2.25", "2.250"], ["1.255"]),
    ({"type": "object", "properties": {"r": {}, "w": {}, "h": {}},
      "oneOf": [{"required": ["r"]}, {"required": ["w", "h"]}]},
     ['{"r": 1}', '{"w": 1, "h": 2}', '{"r": 1, "w": 1}'], ['{"r": 1, "w": 1, "h": 2}', "{}"]),
    ({"oneOf": [{"type": "object", "properties": {"kind": {"const": "a"}}, "required": ["kind"]},
                {"type": "object", "properties": {"kind": {"const": "b"}, "n": {"type": "integer"}},
                 "required": ["kind"]}]},
     ['{"kind": "a"}', '{"kind": "b", "n": 1}'], ['{"kind": "c"}', '{"kind": "b", "n": "x"}']),
    ({"not": {"required": ["a", "b"]}}, ["{}", '{"a": 1}'], ['{"a": 1, "b": 2}', "1"]),
    ({"type": "string", "pattern": "^x-[a-z]+$", "minLength": 4, "maxLength": 5},
     ['"x-ab"', '"x-abc"'], ['"x-a"', '"x-abcd"']),
    ({"type": "string", "format": "date", "maxLength": 10}, ['"2020-01-01"'], ['"2020-1-1"']),
    # enum values are checked against a sibling format with the format's own pattern
    ({"enum": ["2024-02-29", "2023-02-29", "x", 7], "format": "date"}, ['"2024-02-29"', "7"],
     ['"2023-02-29"', '"x"']),
    ({"$schema": "http://json-schema.org/draft-07/schema#",
      "definitions": {"s": {"type": "string"}},
      "properties": {"a": {"$ref": "#/definitions/s", "enum": ["x"]}}},
     ['{"a": "y"}'], ['{"a": 1}']),
    ({"dependentRequired": {"a": ["b"]}, "dependentSchemas": {"c": {"required": ["d"]}}},
     ["{}", '{"a": 1, "b": 2}', '{"c": 1, "d": 2}', "1"], ['{"a": 1}', '{"c": 1}']),
    ({"not": {"pattern": "^a|b"}}, ['"xa"', '""'], ['"ax"', '"xbx"', "1"]),
    ({"type": "object", "properties": {"id": {"type": "integer"}},
      "patternProperties": {"^x-": {"type": "string"}}},
     ['{"id": 1, "x-a": "s", "b": [1]}', '{"y": 1}'],
     ['{"x-a": 1}', '{"id": "s"}', '{"\\u0078-a": 1}']),
    ({"definitions": {"s": {"type": "string"}},
      "properties": {"a": {"$ref": "#/definitions/s", "enum": ["x"]}}},
     ['{"a": "x"}'], ['{"a": "y"}']),
]


@pytest.mark.parametrize(("schema", "good", "bad"), CASES, ids=[str(i) for i in range(len(CASES))])
def test_keywords(schema: Any, good: list[str], bad: list[str]) -> None:
    g = Grammar.from_json_schema(schema)
    for text in good:
        assert g.match(text).status.value == "accept", text
    for text in bad:
        assert g.match(text).status.value != "accept", text


def test_property_order_schema_and_any() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
              "required": ["a", "b"]}
    assert ok(schema, '{"a": 1, "b": 2}')
    assert not ok(schema, '{"b": 2, "a": 1}')
    assert ok(schema, '{"b": 2, "a": 1}', property_order="any")
    assert not ok(schema, '{"b": 2}', property_order="any")
    assert ok(schema, '{"c": 0, "b": 2, "a": 1}', property_order="any")


def test_closed_objects_option() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    assert ok(schema, '{"a": 1, "z": 2}')
    assert not ok(schema, '{"a": 1, "z": 2}', closed_objects=True)


def test_whitespace_options() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "array"}}}
    pretty = '{\n  "a": [\n    1\n  ]\n}'
    assert ok(schema, pretty)
    assert ok(schema, pretty, whitespace="pretty")
    assert not ok(schema, pretty, whitespace="compact")
    assert ok(schema, '{"a":[1]}', whitespace="compact")
    assert not ok(schema, '{"a": [1]}', whitespace="compact")
    # runs of whitespace are bounded by default, so generation cannot loop on blanks
    assert not ok(schema, "{" + " " * 21 + "}")
    assert ok(schema, "{" + " " * 21 + "}", max_whitespace=None)


def test_json_text_schema_and_rule_names() -> None:
    text = json_schema_to_gbnf(json.dumps({"type": "object", "properties": {
        "home": {"$ref": "#/$defs/address"}, "work": {"$ref": "#/$defs/address"}},
        "$defs": {"address": {"type": "object", "properties": {"street": {"type": "string"}}}}}))
    names = [line.split(" ::= ")[0] for line in text.splitlines()]
    assert len(names) == len(set(names))
    assert "address" in names and "home-kv" in names and "work-kv" in names
    assert text.count("address ::=") == 1


@pytest.mark.parametrize(
    ("schema", "keyword", "pointer"),
    [
        ({"type": "array", "uniqueItems": True}, "uniqueItems", ""),
        ({"properties": {"n": {"type": "integer", "multipleOf": 3, "minimum": 1}}},
         "multipleOf", "/properties/n"),
        ({"oneOf": [{"multipleOf": 2}, {"multipleOf": 3}]}, "oneOf", ""),
        ({"type": "string", "format": "iri-reference"}, "format", ""),
        ({"type": "string", "pattern": "^(ab|c)*$", "maxLength": 5000}, "maxLength", ""),
        ({"if": {"multipleOf": 3}, "then": {"minLength": 1}}, "if", ""),
        ({"$ref": "#/$defs/missing"}, "$ref", "/$ref"),
        ({"$ref": "other.json"}, "$ref", "/$ref"),
        ({"type": "string", "pattern": "(?=a)"}, "pattern", ""),
        ({"type": "string", "pattern": "(a"}, "pattern", ""),
        ({"type": "strng"}, "type", ""),
        ({"type": "object", "properties": {"a": {"type": "dependencies"}}}, "type",
         "/properties/a"),
    ],
)
def test_errors_name_keyword_and_pointer(schema: Any, keyword: str, pointer: str) -> None:
    with pytest.raises(SchemaError) as info:
        json_schema_to_gbnf(schema)
    assert info.value.keyword == keyword
    assert info.value.pointer == pointer


def test_non_strict_warns_and_approximates() -> None:
    schema = {"type": "array", "items": {"type": "integer"}, "uniqueItems": True}
    with pytest.warns(SchemaWarning, match="uniqueItems"):
        g = Grammar.from_json_schema(schema, strict=False)
    assert g.match("[1, 1]").status.value == "accept"  # said so in the warning


def test_contradictions_raise() -> None:
    with pytest.raises(SchemaError, match="no instance"):
        json_schema_to_gbnf({"allOf": [{"type": "string"}, {"type": "integer"}]})
    with pytest.raises(SchemaError, match="no instance"):
        json_schema_to_gbnf(False)


def test_bad_options() -> None:
    with pytest.raises(SchemaError, match="whitespace"):
        json_schema_to_gbnf({}, whitespace="tight")
    with pytest.raises(SchemaError, match="unknown option"):
        json_schema_to_gbnf({}, colour="red")
    with pytest.raises(SchemaError, match="max_whitespace"):
        SchemaOptions(max_whitespace=0)
    with pytest.raises(SchemaError, match="not valid JSON"):
        json_schema_to_gbnf("{nope")


def test_llama_compat_options() -> None:
    opts = SchemaOptions.llama_compat()
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    g = Grammar.from_json_schema(schema, **{f: getattr(opts, f) for f in
                                            opts.__dataclass_fields__})
    assert g.match('{"a": 1}').status.value == "accept"
    assert g.match('{"a": 1, "b": 2}').status.value == "reject"
    assert g.match(' {"a": 1}').status.value == "reject"
    assert g.match('{"a": 12345678901234567}').status.value == "reject"


def test_public_exports() -> None:
    for name in ("json_schema_to_gbnf", "regex_to_gbnf", "SchemaOptions"):
        assert name in gbnfkit.__all__
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gbnfkit.json_schema_to_gbnf({"type": "integer"})
