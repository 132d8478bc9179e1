"""Patterns as automata: the subset construction, and ambiguous anchored patterns
written as their DFA (docs/schema.md, "Patterns")."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gbnfkit import Grammar
from gbnfkit.schema._dfa import Dfa, _on_cycles, dfa_of, minimal, pattern_dfa
from gbnfkit.schema._formats import FORMAT_PATTERNS
from gbnfkit.schema._limits import SchemaLimits
from gbnfkit.schema._regex_length import limit_length
from gbnfkit.schema._regex_parse import parse_regex

URL = r"^(https?:\/\/)?([\da-z\.-]+)\.([a-z\.]{2,6})([\/\w \.-]*)*\/?$"
PATTERNS = [
    URL,
    r"^[a-z]+$",
    r"[a-z]*x",
    r"^(ab|a)c$",
    r"(cat|dog)s?",
    r"^\d{2,3}\.\d+$",
    r"^(\.\d+)+\.?$",
    r"x$|^p",
    "",
]
ALPHABET = "abcdgopstx.-/:019 é"
# \d, \w and \s follow ECMA-262 (ASCII), as re.ASCII does (docs/schema.md)

LIMITS = SchemaLimits()


def _dfa_accepts(dfa: Dfa, text: str) -> bool:
    state = 0
    for ch in text:
        state = dfa.step(state, ord(ch))
    return dfa.accepting[state]


@settings(max_examples=200, deadline=None)
@given(text=st.text(alphabet=ALPHABET, max_size=12), index=st.integers(0, len(PATTERNS) - 1))
def test_dfa_is_search(text: str, index: int) -> None:
    """The subset construction (bit sets, every interval stepped at once) accepts the
    strings ``re.search`` finds the pattern in."""
    pattern = PATTERNS[index]
    dfa = dfa_of(parse_regex(pattern), LIMITS)
    assert _dfa_accepts(dfa, text) == (re.search(pattern, text, re.ASCII) is not None)


@pytest.mark.parametrize("pattern", [URL, r"^[a-z]*x$", r"^(\.\d+)+\.?$",
                                     r"^([a-z.]+)\.([a-z]{2,6})$"])
def test_ambiguous_anchored_patterns_get_a_dfa(pattern: str) -> None:
    """Ambiguous over unbounded input (an ambiguous DFA state on a cycle)."""
    dfa = pattern_dfa(parse_regex(pattern), LIMITS)
    assert dfa is not None
    assert dfa.moves == minimal(dfa_of(parse_regex(pattern), LIMITS)).moves


@settings(max_examples=200, deadline=None)
@given(text=st.text(alphabet=ALPHABET, max_size=12), index=st.integers(0, len(PATTERNS) - 1))
def test_minimal_dfa_same_language(text: str, index: int) -> None:
    dfa = dfa_of(parse_regex(PATTERNS[index]), LIMITS)
    small = minimal(dfa)
    assert _dfa_accepts(small, text) == _dfa_accepts(dfa, text)
    assert len(minimal(small).moves) == len(small.moves) <= len(dfa.moves)


def test_minimal_url_dfa() -> None:
    """149 subset states, 14 distinct (the Myhill-Nerode classes)."""
    dfa = dfa_of(parse_regex(URL), LIMITS)
    assert (len(dfa.moves), len(minimal(dfa).moves)) == (149, 14)


@pytest.mark.parametrize("pattern", [
    r"^[a-z]+$", r"^[A-F\d]{24}$", r"^(cat|dog)s?$", r"^\d{2,3}-x$", r"^$",
    # ambiguous, but an unanchored side (its ".*" is the JSON string body) stays direct
    r"[a-z]*x", r"^[a-z]*x", r"[a-z]*x$",
    # ambiguous only within a bounded stretch (no ambiguous DFA state on a cycle)
    r"^(ab|a)c$", r"^[a-z0-9](?:[a-z0-9-]{0,6}[a-z0-9])?$",
])
def test_deterministic_bounded_or_unanchored_patterns_stay_direct(pattern: str) -> None:
    assert pattern_dfa(parse_regex(pattern), LIMITS) is None


@pytest.mark.parametrize("name", sorted(FORMAT_PATTERNS))
def test_no_format_needs_a_dfa(name: str) -> None:
    """The converter does not ask ``pattern_dfa`` for formats (their construction
    would cost 0.1-5 ms each): they are written as their parse.  Only ``hostname`` and
    ``email`` would get one (minimal DFAs of 126 and 128 states, their subset
    constructions 251 and 257): not measured, left direct."""
    for lo, hi in ((0, None), (0, 10), (2, None)):  # with length limits (narrowed in place)
        narrowed = limit_length(parse_regex(FORMAT_PATTERNS[name]), lo, hi)
        assert not narrowed or (pattern_dfa(narrowed, LIMITS) is None) == (
            name not in ("hostname", "email") or (lo, hi) == (0, 10))
    schema = {"type": "string", "format": name}
    assert "string-dfa" not in Grammar.from_json_schema(schema).to_gbnf()


@pytest.mark.parametrize("name", sorted(FORMAT_PATTERNS))
def test_format_patterns_are_parsed_once_per_process(name: str) -> None:
    """``format_branches``: a format's pattern parsed as ``parse_regex`` parses it, the
    same branches for every conversion after the first (frozen: nothing a conversion does
    changes them), and two conversions of a schema with the format write the same text;
    a text that is no format's pattern is refused, not parsed and kept."""
    from gbnfkit.schema._api import convert_schema
    from gbnfkit.schema._formats import format_branches

    pattern = FORMAT_PATTERNS[name]
    schema = {"type": "object", "properties": {"a": {"type": "string", "format": name},
                                               "b": {"type": "string", "format": name,
                                                     "title": "b"}}}
    first = convert_schema(schema).text
    assert format_branches(pattern) is format_branches(pattern)
    assert list(format_branches(pattern)) == parse_regex(pattern)
    assert convert_schema(schema).text == first
    with pytest.raises(ValueError):
        format_branches(pattern + "x")


def test_pattern_dfa_gives_up_past_its_limit() -> None:
    # the URL's minimal DFA has 14 states, its subset construction 149
    assert pattern_dfa(parse_regex(URL), SchemaLimits(max_pattern_dfa_states=14)) is not None
    assert pattern_dfa(parse_regex(URL), SchemaLimits(max_pattern_dfa_states=13)) is None
    assert pattern_dfa(parse_regex(URL), SchemaLimits(max_dfa_states=148)) is None


def _schema_grammar(pattern: str) -> tuple[Grammar, str]:
    schema = {"type": "object", "properties": {"u": {"type": "string", "pattern": pattern}},
              "required": ["u"], "additionalProperties": False}
    grammar = Grammar.from_json_schema(schema)
    return grammar, grammar.to_gbnf()


def test_converter_writes_the_dfa_once_per_pattern() -> None:
    grammar, text = _schema_grammar(URL)
    assert "string-dfa" in text
    # the same pattern twice: one automaton
    schema = {"type": "object", "properties": {
        "u": {"type": "string", "pattern": URL}, "v": {"type": "string", "pattern": URL}}}
    twice = Grammar.from_json_schema(schema).to_gbnf()
    assert twice.count("string-dfa-q0 ::=") == 1
    assert "string-dfa-q0-2" not in twice
    _, direct = _schema_grammar(r"^[a-z]+$")
    assert "string-dfa" not in direct


@settings(max_examples=150, deadline=None)
@given(text=st.one_of(
    st.text(alphabet=ALPHABET, max_size=14),
    st.sampled_from(["https://example.com", "http://a.bc/d e/f.g/", "x.yz", "a.b", "é.com",
                     "https://www.facebook.com/", "ab.cdefgh", "ab..c"]),
), ascii_only=st.booleans())
def test_dfa_string_language(text: str, ascii_only: bool) -> None:
    """Through the converter, with every JSON escape: the DFA's grammar accepts the
    strings the pattern is found in, as the direct grammar does."""
    grammar, _ = _schema_grammar(URL)
    doc = json.dumps({"u": text}, ensure_ascii=ascii_only)
    accepted = grammar.match(doc).status.value == "accept"
    assert accepted == (re.search(URL, text, re.ASCII) is not None)


def test_states_on_cycles() -> None:
    """Tarjan's components: a self-loop or a component of two or more states."""
    # 0 -> 1 -> 2 -> 1, 2 -> 3 (3 loops), 0 -> 4 -> 5 -> 6 (6 loops)
    moves = [[1, 4], [2, 2], [1, 3], [3, 3], [5, 5], [6, 6], [6, 6]]
    dfa = Dfa([0, 1], moves, [False] * len(moves))
    assert _on_cycles(dfa) == [False, True, True, True, False, False, True]


# a BCP-47 language tag (MaskBench o76654's patternProperties key, shortened): its
# subset construction has 251 states, its minimal DFA 143
BCP47 = (r"^(((([A-Za-z]{2,3}(-([A-Za-z]{3}(-[A-Za-z]{3}){0,2}))?)|[A-Za-z]{4}|"
         r"[A-Za-z]{5,8})(-([A-Za-z]{4}))?(-([A-Za-z]{2}|[0-9]{3}))?"
         r"(-([A-Za-z0-9]{5,8}|[0-9][A-Za-z0-9]{3}))*(-([0-9A-WY-Za-wy-z]"
         r"(-[A-Za-z0-9]{2,8})+))*(-(x(-[A-Za-z0-9]{1,8})+))?)|(x(-[A-Za-z0-9]{1,8})+)|"
         r"((en-GB-oed|i-ami|i-default|sgn-BE-FR)|(art-lojban|zh-min|zh-min-nan)))$")
KEY = r"^[a-zA-Z][a-zA-Z0-9_]*[a-zA-Z0-9]$"


def test_pattern_dfa_bound_is_on_the_minimal_dfa() -> None:
    """``max_pattern_dfa_states`` bounds the rules written (the minimal DFA), not the
    subset construction (bounded by ``max_dfa_states``)."""
    nfa_dfa = dfa_of(parse_regex(BCP47), LIMITS)
    assert len(nfa_dfa.moves) > LIMITS.max_pattern_dfa_states
    dfa = pattern_dfa(parse_regex(BCP47), LIMITS)
    assert dfa is not None and len(dfa.moves) <= LIMITS.max_pattern_dfa_states
    small = SchemaLimits(max_pattern_dfa_states=len(dfa.moves) - 1)
    assert pattern_dfa(parse_regex(BCP47), small) is None


def _keys_grammar(pattern: str, additional: bool | None = False) -> Grammar:
    schema: dict[str, object] = {"type": "object",
                                 "patternProperties": {pattern: {"type": "string"}}}
    if additional is not None:
        schema["additionalProperties"] = additional
    return Grammar.from_json_schema(schema)


def test_key_patterns_get_the_dfa() -> None:
    """A ``patternProperties`` key pattern that is ambiguous is written as its DFA, as a
    string value's, and shares the value's automaton (one per pattern)."""
    for pattern in (BCP47, KEY):
        text = _keys_grammar(pattern).to_gbnf()
        key = next(line for line in text.splitlines() if line.startswith("pattern-key"))
        assert "string-dfa-q0" in key, key
    schema = {"type": "object", "properties": {"u": {"type": "string", "pattern": KEY}},
              "patternProperties": {KEY: {"type": "string"}}}
    text = Grammar.from_json_schema(schema).to_gbnf()
    assert text.count("string-dfa-q0 ::=") == 1
    # deterministic: written as its parse
    direct = _keys_grammar(r"^[a-z]+-[0-9]+$").to_gbnf()
    assert "string-dfa" not in direct


def _escaped(text: str, escape: list[bool]) -> str:
    """``text`` as a JSON string body, the characters flagged in ``escape`` as \\uXXXX."""
    out = []
    for ch, esc in zip(text, escape + [False] * len(text), strict=False):
        if esc and ord(ch) < 0x10000:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(json.dumps(ch)[1:-1])
    return "".join(out)


@settings(max_examples=200, deadline=None)
@given(key=st.one_of(
    st.text(alphabet="enUSxzhiGBm-19a_", max_size=14),
    st.sampled_from(["en-US", "fr-FR", "i-default", "zh-min-nan", "x-a-b", "en-GB-oed",
                     "abcd-Latn-US-1234", "de-DE-u-co-phonebk", "a_1", "ab_", "en--US"]),
), escape=st.lists(st.booleans(), max_size=14), which=st.sampled_from([BCP47, KEY]),
    additional=st.sampled_from([False, None]))
def test_key_pattern_language(key: str, escape: list[bool], which: str,
                              additional: bool | None) -> None:
    """Through the converter, with JSON escapes of the key's characters: the keys the
    DFA's grammar accepts are those ``re.search`` finds the pattern in (and, with
    ``additionalProperties`` left open, every other key too, with its value)."""
    grammar = _keys_grammar(which, additional)
    doc = '{"' + _escaped(key, escape) + '": "v"}'
    accepted = grammar.match(doc).status.value == "accept"
    assert accepted == (additional is None or re.search(which, key, re.ASCII) is not None)
