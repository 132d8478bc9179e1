"""Hypothesis strategies for gbnfkit.peg: random parsers, and strings sampled from grammars."""

from __future__ import annotations

import random

from hypothesis import strategies as st

from gbnfkit import peg
from gbnfkit.grammar import Alt, CharClass, GrammarIR, Literal, Repeat, RuleRef, Seq
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


_POOL = "xyzé</>\"\\ {}[],:0123456789.-+eEtrufalsn\nABCDFG"


def sample(ir: GrammarIR, rng: random.Random, max_depth: int = 12) -> str:
    """A random string of the grammar ``ir`` (bounded nesting)."""
    out: list[str] = []

    def has_ref(e: object) -> bool:
        if isinstance(e, RuleRef):
            return True
        if isinstance(e, Seq):
            return any(has_ref(i) for i in e.items)
        if isinstance(e, Alt):
            return any(has_ref(o) for o in e.options)
        if isinstance(e, Repeat):
            return has_ref(e.item)
        return False

    def go(e: object, depth: int) -> None:
        if isinstance(e, Literal):
            out.append(e.text)
        elif isinstance(e, CharClass):
            choices = [c for c in _POOL if e.contains(ord(c))]
            if not choices:
                choices = [chr(cp) for lo, _hi in e.ranges for cp in (lo,)] or ["?"]
            out.append(rng.choice(choices))
        elif isinstance(e, RuleRef):
            go(ir.rules[e.name], depth + 1)
        elif isinstance(e, Seq):
            for i in e.items:
                go(i, depth)
        elif isinstance(e, Alt):
            options = list(e.options)
            if depth > max_depth:
                options = [o for o in options if not has_ref(o)] or options[-1:]
            go(rng.choice(options), depth)
        elif isinstance(e, Repeat):
            extra = 0 if depth > max_depth else rng.randint(0, 3)
            count = e.min + extra if e.max is None else rng.randint(e.min, e.max)
            for _ in range(count):
                go(e.item, depth + 1)
        else:
            raise AssertionError(e)

    go(ir.rules[ir.root], 0)
    return "".join(out)
