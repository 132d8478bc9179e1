"""Integer range and fixed-point interval grammars are exact."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gbnfkit import Grammar
from gbnfkit.schema._numbers import decimal_interval, int_range


def _grammar(expr: str | None) -> Grammar | None:
    return None if expr is None else Grammar.from_gbnf(f"root ::= {expr}\n")


def _accepts(g: Grammar | None, text: str) -> bool:
    return g is not None and g.match(text).status.value == "accept"


bound = st.one_of(st.none(), st.integers(-2000, 2000))


@settings(max_examples=120, deadline=None)
@given(lo=bound, hi=bound, values=st.lists(st.integers(-3000, 3000), min_size=1, max_size=12))
def test_int_range_exact(lo: int | None, hi: int | None, values: list[int]) -> None:
    g = _grammar(int_range(lo, hi))
    for v in values:
        inside = (lo is None or v >= lo) and (hi is None or v <= hi)
        assert _accepts(g, str(v)) == inside, (lo, hi, v)
    if g is not None:
        assert not _accepts(g, "01")
        assert not _accepts(g, "1.0")


def test_int_range_digit_cap() -> None:
    g = _grammar(int_range(0, None, max_digits=3))
    assert _accepts(g, "999")
    assert not _accepts(g, "1000")


def test_negative_zero_is_zero() -> None:
    assert _accepts(_grammar(int_range(0, 5)), "-0")
    assert not _accepts(_grammar(int_range(1, 5)), "-0")


dec = st.decimals(min_value=-50, max_value=50, places=2, allow_nan=False, allow_infinity=False)


@settings(max_examples=120, deadline=None)
@given(lo=st.one_of(st.none(), dec), hi=st.one_of(st.none(), dec), slo=st.booleans(),
       shi=st.booleans(), values=st.lists(dec, min_size=1, max_size=10))
def test_decimal_interval_exact(lo: Decimal | None, hi: Decimal | None, slo: bool, shi: bool,
                                values: list[Decimal]) -> None:
    g = _grammar(decimal_interval(lo, hi, slo, shi))
    for v in values:
        inside = (lo is None or (v > lo if slo else v >= lo)) and (
            hi is None or (v < hi if shi else v <= hi))
        for text in {format(v, "f"), format(v, ".4f"), str(int(v)) if v == int(v) else ""}:
            if text:
                assert _accepts(g, text) == inside, (lo, hi, slo, shi, text)


def test_large_repetition_bounds_stay_exact() -> None:
    from gbnfkit.schema._numbers import repeat

    g = Grammar.from_gbnf("root ::= " + repeat('"a"', 2, 12_345) + "\n")
    for n, inside in ((1, False), (2, True), (12_345, True), (12_346, False)):
        assert _accepts(g, "a" * n) == inside, n


@settings(max_examples=80, deadline=None)
@given(value=st.floats(allow_nan=False, allow_infinity=False).filter(lambda v: not v.is_integer()),
       zeros=st.integers(1, 3))
def test_a_number_constant_accepts_only_texts_of_its_value(value: float, zeros: int) -> None:
    # a small constant is written 1e-07 by json.dumps: zeros may follow its fraction digits,
    # never its exponent (1e-0700 is another number)
    grammar = Grammar.from_json_schema({"const": value}, whitespace="compact")
    written = json.dumps(value)
    fixed = format(Decimal(written), "f")
    assert _accepts(grammar, written)
    assert _accepts(grammar, fixed + "0" * zeros)
    assert not _accepts(grammar, fixed + "1")
    if "e" in written:
        assert not _accepts(grammar, written + "0" * zeros)


@pytest.mark.parametrize(
    ("lo", "hi"), [(1, 12_345), (2, 11_000), (15, 10_001), (0, 10_999), (16, 12_000), (999, 10_001)]
)
def test_large_repetition_with_a_short_minimum(lo: int, hi: int) -> None:
    """A minimum below 16 with a bound above 10,000 is the first branch's: counts under
    1,000, then one block or more, then the last blocks (docs/schema.md, "JSON
    strings"); no row of ``lo`` copies comes before the blocks (after one, the token
    layer's string states held three parses at once).  A longer minimum keeps its row.
    Same language."""
    from gbnfkit.schema._numbers import repeat

    text = repeat('"a"', lo, hi)
    if 0 < lo < 16:
        assert text[1:].split(" | ")[0] == f'"a"{{{lo},999}}', text
        assert all(b.startswith('("a"{1000})') for b in text[:-1].split(" | ")[1:]), text
    elif lo:
        assert text.startswith(f'"a"{{{lo}}} ('), text
    g = Grammar.from_gbnf("root ::= " + text + "\n")
    q = hi // 1000
    for n in {lo - 1, lo, 998, 999, 1000, 1001, 1999, 2000, 1000 * q - 1, 1000 * q, hi, hi + 1}:
        if n >= 0:
            assert _accepts(g, "a" * n) == (lo <= n <= hi), (lo, hi, n)


@pytest.mark.parametrize(("lo", "hi"), [(9_500, 10_200), (9_999, 10_001), (10_000, 10_999)])
def test_a_length_range_across_10000_narrower_than_a_block(lo: int, hi: int) -> None:
    """``minLength: 9500, maxLength: 10200`` gave ``char{9500} ((char{1000}){0,-1} ...``,
    a GrammarError: fewer than one block more was still split into blocks."""
    schema = {"type": "string", "minLength": lo, "maxLength": hi}
    g = Grammar.from_json_schema(schema, whitespace="compact")
    for n in (lo - 1, lo, hi, hi + 1):
        assert _accepts(g, '"' + "a" * n + '"') == (lo <= n <= hi), n
