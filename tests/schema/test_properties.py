"""Property tests: generated valid instances are accepted; mutated instances that
``jsonschema`` rejects are rejected.  Every converted grammar passes the GBNF parser
and its left-recursion check (``Grammar.from_gbnf`` runs both)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from _instances import instances as from_schema
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gbnfkit import Grammar

SCHEMAS: list[dict[str, Any]] = [
    {"type": "object",
     "properties": {"name": {"type": "string", "minLength": 1, "maxLength": 5},
                    "age": {"type": "integer", "minimum": 0, "maximum": 130},
                    "tags": {"type": "array", "items": {"enum": ["a", "b", "c"]},
                             "maxItems": 3},
                    "ok": {"type": "boolean"}},
     "required": ["name", "age"], "additionalProperties": False},
    {"type": "array", "prefixItems": [{"type": "integer", "exclusiveMinimum": -3},
                                      {"type": "string", "pattern": "^[a-z]{2,3}$"}],
     "items": {"type": "null"}, "minItems": 1},
    {"anyOf": [{"type": "integer", "minimum": 10}, {"type": "string", "format": "date"},
               {"type": "object", "additionalProperties": {"type": "integer"},
                "maxProperties": 2}]},
    {"$defs": {"node": {"type": "object",
                        "properties": {"v": {"type": "integer"},
                                       "next": {"anyOf": [{"type": "null"},
                                                          {"$ref": "#/$defs/node"}]}},
                        "required": ["v", "next"], "additionalProperties": False}},
     "$ref": "#/$defs/node"},
    {"type": "object", "properties": {"x": {"type": "number"}, "s": {"type": "string"}},
     "patternProperties": {"^p[0-9]$": {"type": "boolean"}}, "additionalProperties": False},
]
GRAMMARS = [Grammar.from_json_schema(s, property_order="any") for s in SCHEMAS]


def _text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


@pytest.mark.parametrize("index", range(len(SCHEMAS)))
def test_generated_instances_accepted(index: int) -> None:
    schema, grammar = SCHEMAS[index], GRAMMARS[index]

    @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
    @given(from_schema(schema))
    def check(instance: Any) -> None:
        assert grammar.match(_text(instance)).status.value == "accept", _text(instance)

    check()


def _mutations(value: Any) -> st.SearchStrategy[Any]:
    leaf = st.one_of(st.none(), st.booleans(), st.integers(-200, 200), st.text(max_size=4),
                     st.floats(allow_nan=False, allow_infinity=False, width=16))
    if isinstance(value, dict) and value:
        key = st.sampled_from(sorted(value))
        return st.one_of(
            key.map(lambda k: {kk: vv for kk, vv in value.items() if kk != k}),
            st.tuples(key, leaf).map(lambda kv: {**value, kv[0]: kv[1]}),
            st.tuples(st.text(max_size=3), leaf).map(lambda kv: {**value, kv[0]: kv[1]}),
        )
    if isinstance(value, list) and value:
        return st.one_of(st.just(value[:-1]), leaf.map(lambda x: [*value, x]),
                         leaf.map(lambda x: [x, *value[1:]]))
    return leaf


@pytest.mark.parametrize("index", range(len(SCHEMAS)))
def test_mutated_invalid_instances_rejected(index: int) -> None:
    # (valid mutants may be refused only for documented restrictions, e.g. 1.0 as integer)
    schema, grammar = SCHEMAS[index], GRAMMARS[index]
    validator = jsonschema.Draft202012Validator(
        schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)

    @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
    @given(from_schema(schema).flatmap(_mutations))
    def check(mutant: Any) -> None:
        if not validator.is_valid(mutant):
            assert grammar.match(_text(mutant)).status.value != "accept", _text(mutant)

    check()


def test_every_conformance_schema_gives_a_checked_grammar(
    shared_file: Callable[[str], Path],
) -> None:
    """Grammar.from_gbnf parses the text and runs the left-recursion check."""
    import warnings

    from gbnfkit import SchemaError, json_schema_to_gbnf
    from gbnfkit.schema import SchemaWarning

    path = shared_file("conformance/schema.jsonl")
    schemas = [json.loads(line)["schema"] for line in path.read_text("utf-8").splitlines()]
    built = 0
    for schema in schemas + SCHEMAS:
        for options in ({}, {"whitespace": "compact", "property_order": "any"},
                        {"whitespace": "pretty", "closed_objects": True}):
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", SchemaWarning)
                    text = json_schema_to_gbnf(schema, strict=False, **options)
            except SchemaError:
                continue  # refused schemas are checked in test_conformance
            Grammar.from_gbnf(text)
            built += 1
    assert built >= 3 * 60
