"""MaskBench refusals lifted in issue schema12: identity escapes in patterns, formats
``duration``, ``uri-reference`` and ``iri``, ``^`` inside a pattern.  Every text the
grammar accepts is also checked with ``jsonschema`` (Draft 2020-12, its format checker)."""

from __future__ import annotations

import json
import re
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gbnfkit import Grammar, SchemaError
from gbnfkit.schema._formats import FORMAT_PATTERNS
from gbnfkit.schema._instance import pattern_search


def _judge(schema: dict[str, Any], good: list[str], bad: list[str]) -> None:
    g = Grammar.from_json_schema(schema)
    validator = jsonschema.Draft202012Validator(
        schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )
    for text in good:
        assert g.match(text).status.value == "accept", text
        assert validator.is_valid(json.loads(text)), text
    for text in bad:
        assert g.match(text).status.value != "accept", text


def test_identity_escapes_in_a_key_pattern() -> None:
    # MaskBench Github_hard---o47670: '\_' was refused as an unknown escape
    schema = {"type": "object", "additionalProperties": False,
              "patternProperties": {r"^[\w\.\d\_]+$": {"type": "integer"}}}
    _judge(schema, ['{"a_b.1": 1}', '{"_": 2}'], ['{"a-b": 1}', '{" road": 1}', '{"b!": 1}'])


# RFC 3339 Appendix A (the cases of JSON-Schema-Test-Suite's optional/format/duration.json)
_DURATIONS_GOOD = ["P4DT12H30M5S", "P4Y", "PT0S", "P0D", "P1M", "PT1M", "PT36H", "P1DT12H",
                   "P2W", "P1Y2M3DT4H5M6S", "P1Y2M3D", "PT1H2M3S", "P1M2D", "PT1H30M",
                   "P10Y10M10DT10H10M10S", "P1Y2M", "PT1H2M", "PT1M2S", "P01D",
                   "P" + "9" * 40 + "D"]
_DURATIONS_BAD = ["PT1D", "4DT12H30M5S", "P", "P1YT", "PT", "P2D1Y", "P1D2H", "P2S", "P1Y2W",
                  "P\u09e8Y", "P1", "PT0.5S", " P1D", "P1D ", "", "P1Y2D", "PT1H2S", "-P1D",
                  "P1D2T3H", "P1e2D", "P1D\n", "P1WT1H", "P0Y1W", "PT0,5S", "P-1D", "p1d"]


# RFC 3986 (cases of the suite's uri-reference.json, and more)
_URIREF_GOOD = ["http://foo.bar/?baz=qux#quux", "//foo.bar/?baz=qux#quux", "/abc", "abc",
                "#fragment", "http://087.10.0.1/", "http://999.999.999.999/", "", "?query=1",
                "//", "./this:that", "//[V1.fe]/p", "https://json-schema.org/draft-07/schema#",
                "#/definitions/a%20b", "//u:p@[::1]:8080/a/b?c=d/e?#f/g?", "urn:isbn:0451450523",
                "mailto:a@b.c", "//[1:2:3:4:5:6:7:8]", "//[::ffff:1.2.3.4]", "a/b@c/..//d;e=f",
                "x:", "//%41%a0:x@h"]
_URIREF_BAD = ["\\\\WINDOWS\\fileshare", "#frag\\ment", "/foobar\u00ae.txt",
               "https://example.org/foobar\\.txt", "/%zz", '/a"b', "/[::1]",
               "//example.com:abc/p", "//a@b@example.com/", "//[::ffff:192.168.0.01]/p",
               "1:b", "/p\n", "a b", "//[1:2:3:4:5:6:7:8:9]", "#a#b", "//[v.x]", "%4"]


# RFC 3987 (cases of the suite's iri.json, and more)
_IRI_GOOD = ["http://\u0192\u00f8\u00f8.\u00df\u00e5r/?\u2202\u00e9\u0153=\u03c0\u00eex#\u03c0",
             "http://\u0192\u00f8\u00f8.com/blah_(w\u00eek\u00efp\u00e9di\u00e5)_blah#\u00dfit",
             "http://\u0192\u00f8\u00f8.\u00df\u00e5r/?q=Test%20URL-encoded%20stuff",
             "http://-.~_!$&'()*+,;=:%40:80%2f::::::@example.com",
             "http://[2001:0db8:85a3:0000:0000:8a2e:0370:7334]", "http://[2001:db8::1]",
             "http://192.168.0.1/p", "urn:example:resource", "file:/etc/hosts",
             "http://x/\U00010300", "http://x/?q=\U000f0000", "https://example.com"]
_IRI_BAD = ["http://2001:0db8:85a3:0000:0000:8a2e:0370:7334", "/abc",
            "\\\\WINDOWS\\fil\u00eb", "\u00e2\u03c0\u03c0", "http://[::ffff:192.168.0.01]",
            "http://x/\n", "http://x/#\U000f0000", "http://x/\ufffe", "http://x/\ue000",
            "not-an-iri", "http://x/\u0080"]


_FORMAT_CASES = [
    (name, text, ok)
    for name, good, bad in (
        ("duration", _DURATIONS_GOOD, _DURATIONS_BAD),
        ("uri-reference", _URIREF_GOOD, _URIREF_BAD),
        ("iri", _IRI_GOOD, _IRI_BAD),
    )
    for text, ok in [(t, True) for t in good] + [(t, False) for t in bad]
]


@pytest.mark.parametrize(("name", "text", "ok"), _FORMAT_CASES)
def test_format_cases(name: str, text: str, ok: bool) -> None:
    g = _grammar(name)
    assert g.match(json.dumps(text)).accepted is ok
    assert g.match(json.dumps(text, ensure_ascii=False)).accepted is ok


def test_maskbench_format_schemas_pass_their_instances() -> None:
    # openrewrite (duration), o71528 (uri-reference), o76630 (iri): refused before
    _judge({"type": "object", "properties": {"d": {"type": "string", "format": "duration"},
                                             "r": {"type": "string", "format": "uri-reference"},
                                             "i": {"type": "string", "format": "iri"}}},
           ['{"d": "PT1M", "r": "https://example.com/schema", "i": "https://example.com"}',
            '{"d": "P1D", "r": "#/definitions/x"}'],
           ['{"d": "invalid-duration"}', '{"i": "not-an-iri"}', '{"r": "a b"}'])


_URI_ALPHABET = "aZ09:/?#[]@!$&'()*+,;=-._~%vV\\ \"é\U000f0000\ue000"


@settings(max_examples=60, deadline=None)
@given(text=st.text(alphabet=_URI_ALPHABET, max_size=10),
       name=st.sampled_from(["uri-reference", "iri", "duration"]))
def test_format_grammars_match_their_patterns(text: str, name: str) -> None:
    """The grammar accepts what the format's pattern fullmatches, through JSON escapes."""
    g = _grammar(name)
    expected = pattern_search(FORMAT_PATTERNS[name], text)
    assert g.match(json.dumps(text)).accepted is expected
    assert g.match(json.dumps(text, ensure_ascii=False)).accepted is expected


_GRAMMARS: dict[str, Grammar] = {}


def _grammar(name: str) -> Grammar:
    if name not in _GRAMMARS:
        _GRAMMARS[name] = Grammar.from_json_schema({"type": "string", "format": name})
    return _GRAMMARS[name]


_ANCHORED_GROUPS = [
    r"^$|(^(?:\S+\s+){0,3}\S+$)",  # MaskBench Github_hard---o21074 (99 words there)
    r"(^a|b)c",
    r"(a|^b)$",
    r"^(?:(^ab|c$)|d)",
    r"x|((^a|b$)|(^c))",
    r"(?:^a|b)(c|d)$",
]


@settings(max_examples=150, deadline=None)
@given(text=st.text(alphabet="abcdx \t", max_size=8),
       index=st.integers(0, len(_ANCHORED_GROUPS) - 1))
def test_anchors_at_the_start_of_a_leading_group(text: str, index: int) -> None:
    """'^' starting an alternative of a group that starts a top-level one (and '$' ending
    one that ends it) are anchors: the grammar accepts what re.search finds, which
    jsonschema's pattern check agrees with."""
    pattern = _ANCHORED_GROUPS[index]
    g = _pattern_grammar(pattern)
    expected = re.search(pattern, text) is not None
    assert g.match(json.dumps(text)).accepted is expected
    assert jsonschema.Draft202012Validator({"pattern": pattern}).is_valid(text) is expected


_PATTERN_GRAMMARS: dict[str, Grammar] = {}


def _pattern_grammar(pattern: str) -> Grammar:
    if pattern not in _PATTERN_GRAMMARS:
        _PATTERN_GRAMMARS[pattern] = Grammar.from_json_schema(
            {"type": "string", "pattern": pattern})
    return _PATTERN_GRAMMARS[pattern]


@pytest.mark.parametrize("pattern", [r"x(^a)", r"(^a)*", r"(^a){2}", r"(a$)b", r"(a$|b)c",
                                     r"(?:a(^b))", r"(^a)?b"])
def test_anchors_elsewhere_stay_refused(pattern: str) -> None:
    with pytest.raises(SchemaError, match="supported only at the"):
        Grammar.from_json_schema({"type": "string", "pattern": pattern})


def test_maskbench_word_count_pattern() -> None:
    words = r"^$|(^(?:\S+\s+){0,99}\S+$)"
    _judge({"type": "object", "properties": {"a": {"type": "string", "pattern": words}}},
           ['{"a": ""}', '{"a": "two words"}', '{"a": "' + "w " * 99 + 'w"}'],
           ['{"a": " lead"}', '{"a": "' + "w " * 100 + 'w"}', '{"a": "trail "}'])
