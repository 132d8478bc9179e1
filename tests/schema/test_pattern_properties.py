"""``patternProperties`` whose schemas are all the additional properties' schema: a key
outside the listed names takes that schema whether a pattern matches it or not, so the
keys are not split by the patterns (no automaton of the patterns and of their
complement); the language is the same as the split one's."""

from __future__ import annotations

import json
import warnings
from typing import Any

import jsonschema
import pytest

from gbnfkit import Grammar, MatchStatus, SchemaError
from gbnfkit.schema import SchemaWarning

# MaskBench Github_trivial---o9908: before, a 256-state complement automaton of the
# pattern for the other keys and the pattern's own key rule (its first mask ~25 ms)
ANY_KEY = {"type": "object", "patternProperties": {"^.{1,255}$": {}}}


def _accepts(grammar: Grammar, value: Any) -> bool:
    return grammar.match(json.dumps(value)).status is MatchStatus.ACCEPT


def _rules(grammar: Grammar) -> list[str]:
    return [line.split(" ::= ")[0] for line in grammar.to_gbnf().splitlines()]


def test_patterns_with_the_additional_schema_split_no_key() -> None:
    grammar = Grammar.from_json_schema(ANY_KEY)
    rules = _rules(grammar)
    assert not any(r.startswith(("pattern-", "other-key")) for r in rules), rules
    for key in ("", "k", "x" * 255, "x" * 256, "a\nb", "\u2028", "\u00e9t\u00e9"):
        for value in ({}, [1, {"a": None}], "s", 1.5, True, None):
            assert _accepts(grammar, {key: value}), (key, value)
    assert grammar.match('{"a": }').status is MatchStatus.REJECT


SAME: list[dict[str, Any]] = [
    # pattern and additional schema written alike
    {"type": "object", "properties": {"id": {"type": "integer"}},
     "patternProperties": {"^x-": {"type": "string"}},
     "additionalProperties": {"type": "string"}},
    # several patterns, all alike, one of them matching a listed name
    {"type": "object", "properties": {"x-id": {"type": "string", "minLength": 2}},
     "required": ["x-id"],
     "patternProperties": {"^x-": {"type": "string", "maxLength": 3},
                           "^[a-z]+$": {"type": "string", "maxLength": 3}},
     "additionalProperties": {"type": "string", "maxLength": 3}},
    # every key refused outside the names, matched or not
    {"type": "object", "properties": {"a": {"type": "null"}},
     "patternProperties": {"^b": False}, "additionalProperties": False},
    # accept-all schemas written differently (true, {}, annotations only)
    {"type": "object", "patternProperties": {"^[0-9]+$": {"description": "any"},
                                             "^z": True}},
]


@pytest.mark.parametrize("schema", SAME)
def test_the_unsplit_keys_accept_what_the_schema_accepts(schema: dict[str, Any]) -> None:
    grammar = Grammar.from_json_schema(schema)
    assert not any(r.startswith("pattern-") for r in _rules(grammar))
    samples = [
        {}, {"id": 1}, {"x-id": "ab"}, {"x-id": "a"}, {"x-id": "abcd"}, {"a": None},
        {"a": 1}, {"x-id": "ab", "x-y": "abc"}, {"x-id": "ab", "x-y": "abcd"},
        {"x-id": "ab", "q": 5}, {"x-id": "ab", "Q": "s"}, {"x-id": "ab", "Q": "long"},
        {"b": None}, {"bb": 1}, {"c": "x"}, {"12": [1]},
        {"z": {}}, {"id": "1", "x-a": "s"}, {"x-a": 1}, {"other": "s"},
    ]
    validator = jsonschema.Draft202012Validator(schema)
    for value in samples:
        assert _accepts(grammar, value) == validator.is_valid(value), (schema, value)


def test_a_differing_pattern_schema_still_splits_the_keys() -> None:
    schema = {"type": "object", "patternProperties": {"^x-": {"type": "string"}},
              "additionalProperties": {"type": "integer"}}
    grammar = Grammar.from_json_schema(schema)
    assert any(r.startswith("pattern-") for r in _rules(grammar))
    assert _accepts(grammar, {"x-a": "s", "b": 1})
    assert not _accepts(grammar, {"x-a": 1})
    assert not _accepts(grammar, {"b": "s"})


def test_an_unused_pattern_must_still_be_a_valid_regex() -> None:
    with pytest.raises(SchemaError) as info:
        Grammar.from_json_schema({"type": "object", "patternProperties": {"[": {}}})
    assert info.value.keyword == "patternProperties"


def test_a_pattern_the_automata_cannot_read_is_not_refused_when_it_splits_nothing() -> None:
    # a lookahead: refused (strict) or ignored with a warning where the keys are split
    schema = {"type": "object", "patternProperties": {"^(?=a)": {"type": "integer"}},
              "additionalProperties": {"type": "integer"}}
    with warnings.catch_warnings():
        warnings.simplefilter("error", SchemaWarning)
        grammar = Grammar.from_json_schema(schema, strict=True)
    assert _accepts(grammar, {"ab": 1, "b": 2})
    assert not _accepts(grammar, {"ab": "1"})
