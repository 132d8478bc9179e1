"""Property tests: feeding granularity, agreement with a reference matcher, exact allowed()."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from engine_reference import ALPHABET, grammars, inputs, reference_match
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st

from gbnfkit import Grammar, InputRejected, LimitError, State
from gbnfkit.grammar._ir import GrammarIR

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
PROBES = ALPHABET + "\x00\n\"\\\u00ff\u0100\uffff\U00010000\U0010ffff"


@contextmanager
def within_limits() -> Iterator[None]:
    """A generated grammar so ambiguous that a parse state passes ``Limits.max_stacks``
    (nested nullable repetitions, found by hypothesis once in many runs) is not a case of
    these properties: the engine refuses it with the documented LimitError."""
    try:
        yield
    except LimitError as e:
        assert e.limit == "max_stacks"
        reject()


def outcome_whole(g: Grammar, text: str) -> tuple[State | None, int | None]:
    try:
        return g.start().feed(text), None
    except InputRejected as e:
        return None, e.position


def outcome_chars(g: Grammar, text: str) -> tuple[State | None, int | None]:
    s = g.start()
    for i, ch in enumerate(text):
        try:
            s = s.feed(ch)
        except InputRejected as e:
            assert e.position == 0
            return None, i
    return s, None


def outcome_bytes(g: Grammar, text: str, cuts: list[int]) -> tuple[State | None, int | None]:
    data = text.encode()
    points = sorted({min(c, len(data)) for c in cuts} | {0, len(data)})
    s = g.start()
    for a, b in zip(points, points[1:], strict=False):
        try:
            s = s.feed(data[a:b])
        except InputRejected as e:
            done = len(data[: a - len(s.pending_bytes)].decode())
            return None, done + e.position
    return s, None


@SETTINGS
@given(grammars(), inputs, st.lists(st.integers(0, 40), max_size=6))
def test_feed_granularity_does_not_matter(ir: GrammarIR, text: str, cuts: list[int]) -> None:
    with within_limits():
        g = Grammar(ir)  # generated grammars are non-left-recursive by construction
        whole = outcome_whole(g, text)
        assert outcome_chars(g, text) == whole
        by_bytes = outcome_bytes(g, text, cuts)
        assert by_bytes == whole
        if whole[0] is not None:
            assert whole[0].pending_bytes == b""


@SETTINGS
@given(grammars(), inputs)
def test_match_agrees_with_the_reference(ir: GrammarIR, text: str) -> None:
    with within_limits():
        g = Grammar(ir)  # generated grammars are non-left-recursive by construction
        m = g.match(text)
        assert (m.status.value, m.position) == reference_match(ir, text)


@SETTINGS
@given(grammars(), inputs)
def test_allowed_rules_are_exact(ir: GrammarIR, text: str) -> None:
    with within_limits():
        g = Grammar(ir)  # generated grammars are non-left-recursive by construction
        s = g.start()
        for ch in text:
            if not s.allows(ch):
                break
            s = s.feed(ch)
        rules = s.allowed()
        for probe in PROBES:
            by_rules = any(r.matches(probe) for r in rules)
            assert by_rules == s.allows(probe), (probe, rules)
        assert any(str(r) == "<end>" for r in rules) == s.is_complete
        # allowed_bytes: a byte is listed iff feeding it succeeds
        listed = s.allowed_bytes()
        for b in range(256):
            try:
                s.feed(bytes((b,)))
                ok = True
            except InputRejected:
                ok = False
            assert ok == (b in listed), b
