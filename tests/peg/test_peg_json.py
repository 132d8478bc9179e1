"""The JSON parsers against Python's json module."""

from __future__ import annotations

import json as pyjson

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gbnfkit import peg
from gbnfkit.peg import ParseStatus

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner,
                                                                 max_size=4),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None)
@given(JSON_VALUES, st.booleans(), st.booleans())
def test_every_json_text_parses_and_matches_the_grammar(
    value: object, indent: bool, ascii_only: bool
) -> None:
    text = pyjson.dumps(value, indent=2 if indent else None, ensure_ascii=ascii_only)
    p = peg.json() + peg.end()
    assert p.parse(text).status is ParseStatus.SUCCESS
    assert p.to_grammar().match(text).status == "accept"


@pytest.mark.parametrize(
    "text",
    ["", "{", "[1,]", "{\"a\" 1}", "01", "1.", "-", "1e", "tru", "nul", '"\\x"', '"a\nb"',
     "{'a': 1}", "[1 2]", '{"a":1,}', "+1", ".5"],
)
def test_invalid_json_fails_and_the_grammar_rejects_it(text: str) -> None:
    p = peg.json() + peg.end()
    assert p.parse(text).status is ParseStatus.FAIL
    assert p.to_grammar().match(text).status != "accept"


def test_the_json_parsers_of_each_kind() -> None:
    def ok(p: peg.Parser, text: str) -> bool:
        return (p + peg.end()).parse(text).status is ParseStatus.SUCCESS

    assert ok(peg.json_object(), '{"a": [1, {"b": null}]}') and not ok(peg.json_object(), "[]")
    assert ok(peg.json_array(), '[{"a": 1}, [2]]') and not ok(peg.json_array(), "{}")
    assert ok(peg.json_string(), '"a\\"b"') and not ok(peg.json_string(), "'a'")
    assert ok(peg.json_number(), "-0.5E+10") and not ok(peg.json_number(), "0x1")
    assert ok(peg.json_bool(), "false") and not ok(peg.json_bool(), "null")
    assert ok(peg.json_null(), "null")
    content = peg.json_string_content()
    assert ok(content + '"', 'a\\u00e9b"') and not ok(content + '"', 'a\nb"')
    assert not ok(content, "a")  # the content needs its closing quote after it


def test_json_member_matches_one_member_with_its_value_parser() -> None:
    name = peg.json_member("name", '"' + peg.tag("name", peg.literal("get_weather")) + '"')
    args = peg.json_member("arguments", peg.tag("args", peg.json()))
    call = "{" + peg.space() + name + peg.space() + "," + peg.space() + args + peg.space() + "}"
    r = call.parse('{"name" : "get_weather", "arguments": {"city": "Paris"}}')
    assert r.status is ParseStatus.SUCCESS
    assert [n.text for n in r.walk()] == ["get_weather", '{"city": "Paris"}']
    assert call.parse('{"name": "other", "arguments": {}}').status is ParseStatus.FAIL
    # a key is written as JSON: quotes inside it are escaped
    assert peg.json_member('a"b', "1").parse('"a\\"b": 1').end == 9


def _mutations(text: str, seed: int) -> list[str]:
    import random

    rng = random.Random(seed)
    out = [text[:i] for i in range(len(text) + 1)]
    for _ in range(10):
        if not text:
            break
        k = rng.randrange(len(text))
        out.append(text[:k] + text[k + 1 :])
        out.append(text[:k] + rng.choice('{}[],:" \\e.-+0x') + text[k:])
    return out


@settings(max_examples=150, deadline=None)
@given(JSON_VALUES, st.booleans(), st.integers(0, 2**32),
       st.sampled_from(["value", "object", "array", "member"]))
def test_the_json_fast_path_agrees_with_the_combinator_definition(
    value: object, indent: bool, seed: int, kind: str
) -> None:
    from peg_reference import reference_parse

    parser = {
        "value": peg.json(),
        "object": peg.json_object(),
        "array": peg.json_array(),
        "member": "<" + peg.json_member("k", peg.json()) + peg.space() + ">",
    }[kind]
    text = pyjson.dumps(value, indent=1 if indent else None)
    if kind == "member":
        text = '<"k": ' + text + " >"
    for candidate in _mutations(text, seed):
        for partial in (False, True):
            status, end, _nodes = reference_parse(parser, candidate, partial)
            got = parser.parse(candidate, partial)
            assert (got.status.value, got.end if status != "fail" else -1) == (status, end), (
                candidate, partial)


@settings(max_examples=60, deadline=None)
@given(JSON_VALUES, st.integers(1, 5))
def test_streamed_json_gives_the_fresh_results(value: object, step: int) -> None:
    parser = peg.tag("v", peg.json()) + peg.end()
    text = pyjson.dumps({"a": value, "b": [value, value]})
    stream = parser.incremental()
    for i in range(0, len(text), step):
        assert stream.feed(text[i : i + step]) == parser.parse(text[: i + step], partial=True)
    assert stream.finish() == parser.parse(text)


@settings(max_examples=15, deadline=None)
@given(JSON_VALUES, st.booleans(), st.integers(0, 2**32))
def test_json_fed_one_character_at_a_time_gives_the_fresh_results(
    value: object, indent: bool, seed: int
) -> None:
    """An open object or array is followed character by character without parsing (the
    frontier's JSON prefix check): right and broken JSON (mutations), every prefix."""
    parser = peg.tag("v", peg.json()) + peg.space() + peg.end()
    text = pyjson.dumps({"a": value, "b": [value, "x\\u00e9\\n"]}, indent=1 if indent else None)
    text = text[:150] + text[-30:]  # long enough for every construct, short enough to repeat
    for candidate in [text, *_mutations(text, seed)[len(text) + 1 :]]:  # no prefixes
        stream = parser.incremental()
        for j, ch in enumerate(candidate, 1):
            assert stream.feed(ch) == parser.parse(candidate[:j], partial=True), candidate[:j]
        assert stream.finish() == parser.parse(candidate)
