"""MaskBench refusals lifted in issue schema13: ``oneOf`` branches that the finer
analysis of ``schema/_oneof.py`` proves disjoint or separates by member names, and
``format: uri`` written exactly (RFC 3986 ``URI``).  Each grammar is judged both ways
against ``jsonschema`` (Draft 2020-12, with its format checker) on a list of instances:
every valid one accepted, every invalid one refused."""

from __future__ import annotations

import itertools
import json
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gbnfkit import Grammar, SchemaError, SchemaLimits, SchemaOptions
from gbnfkit.schema import json_schema_to_gbnf
from gbnfkit.schema._formats import FORMAT_PATTERNS
from gbnfkit.schema._instance import pattern_search
from gbnfkit.schema._oneof import hitting_sets


def _uri_checker() -> jsonschema.FormatChecker:
    """jsonschema's format checker, with ``uri`` read as the converter's pattern (this
    environment has neither ``rfc3987`` nor ``rfc3986-validator``, without which
    jsonschema does not check ``uri``; ``test_uri_cases`` pins the pattern itself)."""
    checker = jsonschema.FormatChecker()
    checker.checks("uri")(lambda v: not isinstance(v, str)
                          or pattern_search(FORMAT_PATTERNS["uri"], v))
    return checker


def _both_ways(schema: dict[str, Any], instances: list[Any]) -> None:
    """The grammar accepts exactly the instances ``jsonschema`` finds valid."""
    g = Grammar.from_json_schema(schema, property_order="any")
    validator = jsonschema.Draft202012Validator(schema, format_checker=_uri_checker())
    verdicts = [validator.is_valid(v) for v in instances]
    assert any(verdicts) and not all(verdicts)  # the list tells the two apart
    for value, valid in zip(instances, verdicts, strict=True):
        text = json.dumps(value, ensure_ascii=False)
        assert g.match(text).accepted is valid, (text, valid)


def _objects(names: list[str], values: list[Any], most: int = 2) -> list[Any]:
    """Every object of at most ``most`` of the names, each with each value, and some
    values that are no objects."""
    out: list[Any] = [None, 1, "x", [], [1]]
    for n in range(most + 1):
        for keys in itertools.combinations(names, n):
            for vals in itertools.product(values, repeat=n):
                out.append(dict(zip(keys, vals, strict=True)))
    return out


# ---------------------------------------------------------------- oneOf

def test_closed_objects_with_disjoint_names_overlap_only_in_the_empty_object() -> None:
    # MaskBench Github_hard---o3446: a metric's value is a dataset or a template, two
    # closed objects with no name in common; {} satisfies both, so it is no oneOf
    # instance; the recursive template made the negation impossible to write
    node = {"type": "object", "additionalProperties": False,
            "properties": {"name": {"type": "string"},
                           "nodes": {"type": "array", "items": {"$ref": "#/$defs/v"}}}}
    schema = {"$defs": {"v": {"oneOf": [
        {"type": ["string", "integer", "null"]},
        {"type": "object", "additionalProperties": False,
         "properties": {"rows": {"type": "integer"}, "cols": {"type": "string"}}},
        node]}},
        "$ref": "#/$defs/v"}
    values = [1, "a", {"nodes": [1]}, {"nodes": [{}]}, {"nodes": [{"rows": 1}]}]
    _both_ways(schema, _objects(["rows", "cols", "name", "nodes"], values))


def test_a_discriminator_that_is_not_required() -> None:
    # MaskBench Github_hard---o36016: closed field objects told apart by the enum of
    # "type", which no branch requires: an object without it may satisfy several
    common = {"label": {"type": "string"}, "help": {"type": "string"},
              "size": {"$ref": "#/$defs/size"}}
    schema = {"$defs": {"size": {"enum": ["s", "m"]},
                        "tree": {"$ref": "#/$defs/field"},
                        "field": {"oneOf": [
                            {"type": "object", "required": ["label"], "additionalProperties": False,
                             "properties": {"type": {"enum": ["text"]}, "hint": {"type": "string"},
                                            **common}},
                            {"type": "object", "required": ["label"], "additionalProperties": False,
                             "properties": {"type": {"enum": ["number", "decimal"]},
                                            "min": {"type": "number"}, **common}},
                            {"type": "object", "required": ["label"], "additionalProperties": False,
                             "properties": {"type": {"enum": ["group"]},
                                            "fields": {"type": "array",
                                                       "items": {"$ref": "#/$defs/tree"}},
                                            **common}}]}},
              "$ref": "#/$defs/field"}
    values = ["text", "number", "group", "x", 1, "s", [], [{"label": "a"}],
              [{"label": "a", "type": "text"}]]
    _both_ways(schema, _objects(["type", "label", "hint", "min", "fields", "size"], values, 3))


def test_untyped_single_member_branches() -> None:
    # o36016's expressions: each branch allows one member and says no type, so a value
    # that is no object (and {}) satisfies every branch: only {name: value} remains
    schema = {"$defs": {"e": {"oneOf": [
        {"properties": {"and": {"type": "array", "items": {"$ref": "#/$defs/e"}}},
         "additionalProperties": False},
        {"properties": {"not": {"$ref": "#/$defs/e"}}, "additionalProperties": False},
        {"properties": {"value": {"type": "string"}}, "additionalProperties": False}]}},
        "$ref": "#/$defs/e"}
    values = [[], [{"value": "a"}], {"value": "a"}, "a", 1, {}, {"not": 1}]
    _both_ways(schema, _objects(["and", "not", "value"], values))


def test_names_required_by_every_branch_of_a_nested_oneof() -> None:
    # MaskBench Github_medium---o65012: a branch requires value or range (a oneOf of
    # required lists), which the closed branch beside it does not allow
    ref = {"$ref": "#/$defs/f"}
    schema = {"$defs": {"f": {"oneOf": [
        {"type": "object", "additionalProperties": False,
         "properties": {"field": {"type": "string"}, "value": {}, "range": {"type": "array"}},
         "oneOf": [{"required": ["field", "value"]}, {"required": ["field", "range"]}]},
        {"type": "object", "additionalProperties": False, "required": ["field"],
         "properties": {"field": {"type": "string"}}},
        {"type": "object", "additionalProperties": False,
         "properties": {"must": {"type": "array", "items": ref},
                        "should": {"type": "array", "items": ref}}}]}},
        "$ref": "#/$defs/f"}
    values = ["a", 1, [], [{"field": "a"}], [{}], [1]]
    _both_ways(schema, _objects(["field", "value", "range", "must", "should"], values, 3))


def test_branches_sharing_members_with_the_same_schemas() -> None:
    # MaskBench Github_hard---o90420: closed module types with no required member and
    # the same schemas for the members they share: one is the only one satisfied when
    # it has a member that each other one lacks
    config = {"type": "object", "additionalProperties": False,
              "patternProperties": {"^[a-z]+$": {"type": "integer"}}}
    shared = {"config": config, "tags": {"type": "array", "items": {"type": "string"}}}
    schema = {"oneOf": [
        {"type": "object", "additionalProperties": False,
         "properties": {**shared, "triggers": {"type": "array"}, "output": {"type": "string"}}},
        {"type": "object", "additionalProperties": False,
         "properties": {**shared, "actions": {"type": "array"}, "input": {"type": "string"},
                        "output": {"type": "string"}}},
        {"type": "object", "additionalProperties": False,
         "properties": {**shared, "conditions": {"type": "array"},
                        "input": {"type": "string"}}}]}
    values = [[], ["a"], {"a": 1}, {"A": 1}, "s"]
    _both_ways(schema, _objects(["config", "tags", "triggers", "actions", "conditions",
                                 "input", "output"], values, 3))


def test_open_branches_told_apart_by_listed_values() -> None:
    # the shape of MaskBench Github_medium---o35868 (tests/schema/test_limits.py's
    # _addresses): open address objects with a country and states of their own, none
    # required; an object with neither satisfies every branch.  Before, each branch was
    # "this one and not the others" (refused past a lowered max_oneof_chars); now "this
    # one, with its country or its state"
    schema = {"type": "object", "properties": {"street": {"type": "string"}},
              "oneOf": [{"properties": {"country": {"enum": [f"C{i}"]},
                                        "state": {"enum": [f"S{i}", f"T{i}"]},
                                        "zip": {"type": "string"}}} for i in range(3)]}
    g = Grammar.from_json_schema(schema, options=SchemaOptions(
        property_order="any", limits=SchemaLimits(max_oneof_chars=3000)))
    assert g.match('{"country": "C1", "zip": "1"}').accepted
    values = ["C0", "C1", "S0", "T2", "S9", "x", 1]
    _both_ways(schema, _objects(["country", "state", "zip", "street", "other"], values))


def test_a_pattern_and_a_format_that_no_string_satisfies_together() -> None:
    # MaskBench Github_easy---o90313: an absolute URI or a path starting "./"
    schema = {"type": "object", "properties": {"url": {"oneOf": [
        {"type": "string", "format": "uri"},
        {"type": "string", "pattern": "^\\./.+$"}]}}}
    strings = ["https://example.com/s.json", "./s.json", ".", "./", "invalid url", "a:b",
               "s://[::1]", ".a:b"]
    _both_ways(schema, [{"url": s} for s in strings] + [{"url": 1}])


def test_listed_values_outside_the_other_branch() -> None:
    schema = {"oneOf": [{"enum": ["ab", "cd"]},
                        {"type": "string", "pattern": "^[a-z]$", "not": {"const": "q"}}]}
    _both_ways(schema, ["ab", "cd", "a", "q", "abc", 1, ""])


def test_an_overlap_beyond_the_finer_analysis_stays_refused() -> None:
    # two open objects whose shared member has overlapping, different schemas, and a
    # recursive reference that keeps the negation from being written
    schema = {"$defs": {"t": {"oneOf": [
        {"type": "object",
         "properties": {"n": {"type": "integer", "minimum": 0},
                        "kids": {"type": "array", "items": {"$ref": "#/$defs/t"}}}},
        {"type": "object", "properties": {"n": {"type": "integer", "maximum": 5}}}]}},
        "$ref": "#/$defs/t"}
    with pytest.raises(SchemaError) as e:
        Grammar.from_json_schema(schema)
    assert e.value.keyword == "oneOf"


def test_hitting_sets_are_minimal_and_consistent() -> None:
    a, b, c = (True, "a"), (True, "b"), (True, "c")
    not_a = (False, "a")
    assert hitting_sets([{a, b}, {a, c}], 10) == [frozenset({a}), frozenset({b, c})]
    assert hitting_sets([{a}, {not_a}], 10) == []  # no object has a and lacks it
    assert hitting_sets([set()], 10) == []  # a branch within another: never alone
    found = hitting_sets([{a, b}, {c, not_a}], 10)
    assert found is not None and set(found) == {
        frozenset({a, c}), frozenset({b, c}), frozenset({b, not_a})}
    assert hitting_sets([{a, b}, {c, not_a}], 2) is None


# ---------------------------------------------------------------- format: uri

# RFC 3986 section 3 and Appendix A (and what the approximate pattern let through)
_URI_GOOD = ["http://foo.bar/?baz=qux#quux", "urn:isbn:0451450523", "mailto:a@b.c", "x:",
             "http://[::1]:80/a", "http://[v1.fe]/", "http://[V1.fe]/", "s://u:p@h:8080",
             "file:///etc/hosts", "a+b.c-d:rest", "http://087.10.0.1/", "h:%41%a0",
             "s://[1:2:3:4:5:6:1.2.3.4]", "tel:+1-816-555-1212", "s:?#"]
_URI_BAD = ["//foo.bar/", "/abc", "abc", "", "1a:b", "http://[::1/", "http://[x]/",
            "a:%zz", "a:%4", "http://ex ample.com", "a:b#c#d", "s://h:8a/", "s://a@b@c",
            "s://[1:2:3:4:5:6:1.2.3.04]", "a:\n", "a:é", "http://[::1]]", "a:[", "-a:b",
            "s://[v.x]"]


@pytest.mark.parametrize(("text", "ok"), [(t, True) for t in _URI_GOOD]
                         + [(t, False) for t in _URI_BAD])
def test_uri_cases(text: str, ok: bool) -> None:
    g = _uri_grammar()
    assert g.match(json.dumps(text)).accepted is ok
    assert g.match(json.dumps(text, ensure_ascii=False)).accepted is ok


_URI_ALPHABET = "aZ09:/?#[]@!$&'()*+,;=-._~%vV\\ \"é"


@settings(max_examples=80, deadline=None)
@given(text=st.text(alphabet=_URI_ALPHABET, max_size=10))
def test_uri_grammar_matches_its_pattern(text: str) -> None:
    """The grammar accepts what the format's pattern fullmatches, through JSON escapes;
    a URI is also a URI reference."""
    uri = pattern_search(FORMAT_PATTERNS["uri"], text)
    assert _uri_grammar().match(json.dumps(text)).accepted is uri
    assert _uri_grammar().match(json.dumps(text, ensure_ascii=False)).accepted is uri
    if uri:
        assert pattern_search(FORMAT_PATTERNS["uri-reference"], text)


def test_uri_beside_a_pattern_takes_the_format_automaton_limit() -> None:
    # MaskBench Github_hard---o90607: allOf [format uri, pattern ^https?://]; RFC 3986's
    # URI needs 844 subset states, past max_dfa_states (400)
    schema = {"type": "string", "allOf": [{"format": "uri"}, {"pattern": "^https?://"}]}
    g = Grammar.from_json_schema(schema)
    assert g.match('"https://a.b/c"').accepted
    assert not g.match('"ftp://a.b/c"').accepted
    assert not g.match('"https://a b"').accepted
    small = SchemaOptions(limits=SchemaLimits(max_format_dfa_states=800))
    with pytest.raises(SchemaError) as e:
        Grammar.from_json_schema(schema, options=small)
    assert e.value.limit == "max_format_dfa_states"


_URI_GRAMMAR: list[Grammar] = []


def _uri_grammar() -> Grammar:
    if not _URI_GRAMMAR:
        _URI_GRAMMAR.append(Grammar.from_json_schema({"type": "string", "format": "uri"}))
    return _URI_GRAMMAR[0]


@pytest.fixture
def parse_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The patterns the converter parses (``parse_regex``'s calls), in order; the
    formats' patterns (parsed once per process, ``format_branches``) parsed anew."""
    from gbnfkit.schema import _convert, _formats, _instance

    calls: list[str] = []
    parse = _convert.parse_regex

    def counted(pattern: str, max_count: int | None = None) -> list[Any]:
        calls.append(pattern)
        return parse(pattern, max_count)

    monkeypatch.setattr(_convert, "parse_regex", counted)
    monkeypatch.setattr(_instance, "parse_regex", counted)
    monkeypatch.setattr(_formats, "parse_regex", counted)
    _formats.format_branches.cache_clear()
    return calls


def test_a_format_pattern_is_parsed_once_per_process(parse_calls: list[str]) -> None:
    # uri's pattern takes ~20 ms to parse; MaskBench documents have up to 24 uri fields
    fields = {f"u{i}": {"type": "string", "format": "uri"} for i in range(8)}
    json_schema_to_gbnf({"type": "object", "properties": fields, "required": sorted(fields)})
    assert parse_calls == [FORMAT_PATTERNS["uri"]]
    json_schema_to_gbnf({"type": "object", "properties": fields})  # the next document
    assert parse_calls == [FORMAT_PATTERNS["uri"]]


def test_a_format_pattern_beside_other_limits_is_parsed_once_too(
    parse_calls: list[str],
) -> None:
    # a format with a pattern beside it goes through the product of automata
    field = {"type": "string", "format": "date", "pattern": "^2"}
    fields = {f"d{i}": field for i in range(4)}
    json_schema_to_gbnf({"type": "object", "properties": fields, "required": sorted(fields)})
    assert parse_calls.count(FORMAT_PATTERNS["date"]) == 1
