"""Patterns with ``minLength``/``maxLength``: the product with a counter that counts
only where the length can still overrun, and a concatenation split by the lengths of
the parts around its widest one (docs/schema.md, "Length limits")."""

from __future__ import annotations

import json
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from gbnfkit import Grammar
from gbnfkit.schema._dfa import dfa_of, minimal, product
from gbnfkit.schema._limits import SchemaLimits
from gbnfkit.schema._regex_length import limit_length
from gbnfkit.schema._regex_parse import parse_regex

LIMITS = SchemaLimits()
PATTERNS = [r"^a{1,3}(\.a{1,3}){1,3}$", r"^(?:a+\s+){0,2}a+$", r"^(ab|a)c?$", r"b",
            r"^[ab]{2,5}-?a{0,2}$", r"^x?(ab)+$"]
ALPHABET = "ab. -cx"
# winget-pkgs' file names: at most 131 characters, maxLength 128
SEGMENTS = r'^[^\.\s\\/:\*\?"<>\|\x01-\x1f]{1,32}(\.[^\.\s\\/:\*\?"<>\|\x01-\x1f]{1,32}){1,3}$'
HTTP = r"^([Hh][Tt][Tt][Pp][Ss]?)://.+$"


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet=ALPHABET, max_size=12), index=st.integers(0, len(PATTERNS) - 1),
       other=st.integers(-1, len(PATTERNS) - 1), lo=st.integers(0, 6),
       span=st.one_of(st.none(), st.integers(0, 8)))
def test_product_with_counter_is_exact(text: str, index: int, other: int, lo: int,
                                       span: int | None) -> None:
    """A pattern, maybe not another, lo..hi characters: as re and len say."""
    hi = None if span is None else lo + span
    dfas = [minimal(dfa_of(parse_regex(PATTERNS[index]), LIMITS))]
    if other >= 0:
        dfas.append(minimal(dfa_of(parse_regex(PATTERNS[other]), LIMITS)))
    dfa = product(dfas, lambda v: v[0] and not (other >= 0 and v[1]) and v[-1], LIMITS,
                  (lo, hi, 1))
    state = 0
    for ch in text:
        state = dfa.step(state, ord(ch))
    expected = (re.search(PATTERNS[index], text) is not None
                and not (other >= 0 and re.search(PATTERNS[other], text) is not None)
                and lo <= len(text) and (hi is None or len(text) <= hi))
    assert dfa.accepting[state] == expected


def test_counter_only_where_the_pattern_can_overrun() -> None:
    """131 characters at most, 128 allowed: 427 product states (6,396 counting every
    character, past the default 2,000)."""
    dfa = minimal(dfa_of(parse_regex(SEGMENTS), LIMITS))
    assert len(product([dfa], all, LIMITS, (0, 128, 1)).moves) < 500
    grammar = Grammar.from_json_schema({"type": "string", "pattern": SEGMENTS,
                                        "maxLength": 128}, strict=True)
    for tail, ok in ((29, True), (30, False), (32, False)):
        text = ".".join(["a" * 32] * 3 + ["b" * tail])
        assert len(text) == 99 + tail
        assert (grammar.match(json.dumps(text)).status.value == "accept") == ok
    assert grammar.match(json.dumps("a" * 32 + ".b")).status.value == "accept"
    assert grammar.match(json.dumps("a" * 33 + ".b")).status.value != "accept"


def test_concatenation_split_by_the_lengths_around_its_widest_part() -> None:
    """``http`` or ``https``, then at most 1,993 or 1,992 characters: two repetitions
    rather than a product of 4,007 states."""
    narrowed = limit_length(parse_regex(HTTP), 0, 2000, 2)
    assert narrowed is not None and len(narrowed) == 1
    assert limit_length(parse_regex(HTTP), 0, 2000, 1) is None
    grammar = Grammar.from_json_schema({"type": "string", "pattern": HTTP,
                                        "maxLength": 2000}, strict=True)
    for text, ok in (("https://" + "x" * 1992, True), ("https://" + "x" * 1993, False),
                     ("HTTP://" + "x" * 1993, True), ("http://" + "x" * 1994, False),
                     ("http://", False), ("httpss://x", False)):
        assert (grammar.match(json.dumps(text)).status.value == "accept") == ok, text


SPLIT = [r"^x?c{0,2}a+b?$", r"^(ab?)c:.+$", r"^a?[bc]*x?a$", r"^[ab]x{2,}c?[ab]?$"]


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet="abcx:", max_size=10), index=st.integers(0, len(SPLIT) - 1),
       lo=st.integers(0, 5), span=st.one_of(st.none(), st.integers(0, 6)))
def test_split_concatenation_is_exact(text: str, index: int, lo: int,
                                      span: int | None) -> None:
    hi = None if span is None else lo + span
    narrowed = limit_length(parse_regex(SPLIT[index]), lo, hi, 12)
    assert narrowed is not None
    accepted = bool(narrowed) and dfa_of(narrowed, LIMITS).accepting[_run(
        dfa_of(narrowed, LIMITS), text)]
    assert accepted == (re.search(SPLIT[index], text) is not None
                        and lo <= len(text) and (hi is None or len(text) <= hi))


def _run(dfa, text: str) -> int:  # type: ignore[no-untyped-def]
    state = 0
    for ch in text:
        state = dfa.step(state, ord(ch))
    return state
