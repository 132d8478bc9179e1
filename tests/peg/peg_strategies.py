"""Hypothesis strategies for gbnfkit.peg: random parsers (strings sampled from grammars:
``tests/grammar_sampling.py``)."""

from __future__ import annotations

from hypothesis import strategies as st

from gbnfkit import peg
from gbnfkit.peg import Parser

PLAIN = "xyz"
CLASSES = ["[x-y]", "[^x]", "[xz]", "[a-z]"]


@st.composite
def any_parser(draw: st.DrawFn, depth: int = 3, lookahead: bool = True) -> Parser:
    """Any parser over a small alphabet (ordered choices and greedy loops that a grammar
    would parse differently included)."""
    leaves = [
        st.sampled_from(["x", "y", "xy", "yx", "xyz"]).map(peg.literal),
        st.sampled_from(CLASSES).flatmap(
            lambda c: st.tuples(st.integers(0, 2), st.integers(0, 3)).map(
                lambda m: peg.chars(c, min(m), max(m) if max(m) > 0 else None)
            )
        ),
        st.just(peg.any()),
        st.sampled_from(["yz", "z", "xx"]).map(peg.until),
        st.just(peg.until_one_of(["z", "yx"])),
        st.just(peg.space()),
        st.just(peg.eps()),
        st.just(peg.end()),
        st.just(peg.json_string()),
    ]
    if depth <= 0:
        return draw(st.one_of(leaves))
    sub = any_parser(depth=depth - 1, lookahead=lookahead)
    kinds = ["leaf", "seq", "choice", "repeat", "optional", "tag", "atomic"]
    if lookahead:
        kinds += ["peek", "negate"]
    kind = draw(st.sampled_from(kinds))
    if kind == "leaf":
        return draw(st.one_of(leaves))
    if kind == "seq":
        return peg.sequence(*draw(st.lists(sub, min_size=2, max_size=3)))
    if kind == "choice":
        return peg.choice(*draw(st.lists(sub, min_size=2, max_size=3)))
    if kind == "repeat":
        lo = draw(st.integers(0, 2))
        hi = draw(st.one_of(st.none(), st.integers(lo, lo + 2)))
        return peg.repeat(draw(sub), lo, hi)
    if kind == "optional":
        return peg.optional(draw(sub))
    if kind == "tag":
        return peg.tag(draw(st.sampled_from(["a", "b"])), draw(sub))
    if kind == "atomic":
        return peg.atomic(draw(sub))
    if kind == "peek":
        return peg.peek(draw(sub))
    return peg.negate(draw(sub))


class _Markers:
    """Distinct marker characters: each starts one construct only."""

    def __init__(self) -> None:
        self.free = list("ABCDFGHIJKLMNOPQRSTUVWXYZ!#%&()*+;=?@^_~")

    def take(self) -> str:
        return self.free.pop(0) if self.free else "$"


@st.composite
def agreeing_parser(draw: st.DrawFn, depth: int = 3) -> Parser:
    """A parser whose PEG language equals its grammar's: every alternative, repeated or
    optional item starts with its own marker character, every character run and every
    whitespace run is closed by a marker, and ``until(d)`` (d without a border) comes after
    a marker and before ``d``."""
    markers = _Markers()

    def build(d: int) -> Parser:
        kinds = ["literal", "chars", "until", "json", "string"]
        if d > 0:
            kinds += ["seq", "choice", "repeat", "optional", "tag"] * 2
        kind = draw(st.sampled_from(kinds))
        if kind == "literal":
            return peg.literal(draw(st.sampled_from(["x", "xy", "zyx", "é"])))
        if kind == "chars":
            cls = draw(st.sampled_from(["[x-z]", "[xy]", "[^A-Z0-9!#%&()*+;=?@^_~$]"]))
            lo = draw(st.integers(0, 2))
            hi = draw(st.one_of(st.none(), st.integers(max(lo, 1), 3)))
            return peg.chars(cls, lo, hi) + markers.take()
        if kind == "until":
            delim = draw(st.sampled_from(["</x>", "yz", "z"]))
            # a marker first: the content may start with anything
            return markers.take() + peg.until(delim) + delim
        if kind == "json":
            return peg.json() + peg.space() + markers.take()
        if kind == "string":
            return peg.json_string()
        if kind == "seq":
            return peg.sequence(*[build(d - 1) for _ in range(draw(st.integers(2, 3)))])
        if kind == "choice":
            return peg.choice(*[markers.take() + build(d - 1)
                                for _ in range(draw(st.integers(2, 3)))])
        if kind == "repeat":
            lo = draw(st.integers(0, 2))
            hi = draw(st.one_of(st.none(), st.integers(max(lo, 1), lo + 2)))
            return peg.repeat(markers.take() + build(d - 1), lo, hi)
        if kind == "optional":
            return peg.optional(markers.take() + build(d - 1))
        return peg.tag("t", build(d - 1))

    return build(depth)
