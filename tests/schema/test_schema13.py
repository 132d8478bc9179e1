"""Issue schema13: ``format: uri`` written exactly (RFC 3986 ``URI``)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gbnfkit import Grammar, SchemaError, SchemaLimits, SchemaOptions
from gbnfkit.schema._formats import FORMAT_PATTERNS
from gbnfkit.schema._instance import pattern_search

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
