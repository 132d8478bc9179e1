"""Property tests: partial parsing of prefixes, the memo against a naive reference,
incremental parsing against fresh parses, and grammar/parser agreement."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from peg_reference import NotComparable, as_tuples, reference_parse
from peg_strategies import agreeing_parser, any_parser

from gbnfkit import PegError, peg
from gbnfkit.peg import Parser, ParseStatus
from grammar_sampling import sample

TEXTS = st.text(alphabet='xyz "\\é{}', max_size=12)
SETTINGS = settings(max_examples=300, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


def _accepted_samples(p: Parser, seed: int, count: int = 8) -> list[str]:
    """Strings sampled from the parser's grammar (when it has one)."""
    try:
        grammar = p.to_grammar()
    except PegError:
        return []
    rng = random.Random(seed)
    return [sample(grammar.ir, rng) for _ in range(count)]


@SETTINGS
@given(any_parser(), st.lists(TEXTS, max_size=6), st.integers(0, 2**32))
def test_every_prefix_of_an_accepted_text_needs_more_input_or_succeeds(
    p: Parser, texts: list[str], seed: int
) -> None:
    whole = p + peg.end()
    for text in texts + _accepted_samples(p, seed):
        if whole.parse(text).status is not ParseStatus.SUCCESS:
            continue
        for i in range(len(text) + 1):
            status = whole.parse(text[:i], partial=True).status
            assert status is not ParseStatus.FAIL, (p, text, i)


@SETTINGS
@given(any_parser(), TEXTS, st.booleans())
def test_the_memoised_parser_agrees_with_the_naive_reference(
    p: Parser, text: str, partial: bool
) -> None:
    try:
        status, end, nodes = reference_parse(p, text, partial)
    except NotComparable:
        assume(False)
    result = p.parse(text, partial)
    assert result.status.value == status, (p, text)
    if result.status is not ParseStatus.FAIL:
        assert result.end == end
        assert as_tuples(result.nodes) == nodes


@SETTINGS
@given(any_parser(), TEXTS, st.integers(0, 2**32))
def test_incremental_parsing_gives_the_fresh_results(p: Parser, text: str, seed: int) -> None:
    rng = random.Random(seed)
    texts = [text, *_accepted_samples(p, seed, 2)]
    for whole in texts:
        stream = p.incremental()
        i = 0
        while i < len(whole):
            j = min(len(whole), i + rng.randint(1, 3))
            got = stream.feed(whole[i:j])
            assert got == p.parse(whole[:j], partial=True), (p, whole[:j])
            i = j
        assert stream.finish() == p.parse(whole), (p, whole)


@SETTINGS
@given(any_parser(lookahead=False), st.lists(TEXTS, max_size=6), st.integers(0, 2**32))
def test_every_text_the_parser_accepts_matches_its_grammar(
    p: Parser, texts: list[str], seed: int
) -> None:
    whole = p + peg.end()
    grammar = whole.to_grammar()
    rng = random.Random(seed)
    candidates = texts + [sample(grammar.ir, rng) for _ in range(6)]
    for text in candidates:
        if whole.parse(text).status is ParseStatus.SUCCESS:
            assert grammar.match(text).status == "accept", (p, text)


@SETTINGS
@given(agreeing_parser(), st.integers(0, 2**32))
def test_on_agreeing_parsers_the_grammar_and_the_parser_accept_the_same_texts(
    p: Parser, seed: int
) -> None:
    whole = p + peg.end()
    grammar = whole.to_grammar()
    rng = random.Random(seed)
    for _ in range(6):
        text = sample(grammar.ir, rng)
        assert whole.parse(text).status is ParseStatus.SUCCESS, (p, text)
        # a mutation is in both languages or in neither
        if text:
            k = rng.randrange(len(text))
            for mutated in (text[:k] + text[k + 1 :], text[:k] + rng.choice("xz\"A<") + text[k:]):
                in_parser = whole.parse(mutated).status is ParseStatus.SUCCESS
                in_grammar = grammar.match(mutated).status == "accept"
                assert in_parser == in_grammar, (p, mutated)


@SETTINGS
@given(agreeing_parser(depth=2), agreeing_parser(depth=2), st.integers(0, 2**32))
def test_a_lazy_grammar_accepts_what_its_trigger_rules_parse(
    a: Parser, b: Parser, seed: int
) -> None:
    first = peg.trigger_rule("first", "<a>" + a + "</a>")
    second = peg.trigger_rule("second", "<b>" + b + "</b>")
    parser = peg.until_one_of(["<a>", "<b>"]) + peg.zero_or_more(first | second) + peg.end()
    lazy = parser.to_grammar(lazy=True)
    assert [t.value for t in lazy.triggers] == ["<a>", "<b>"]
    rng = random.Random(seed)
    for rule in (first, second):
        for _ in range(3):
            text = sample(rule.to_grammar().ir, rng)
            assert (rule + peg.end()).parse(text).status is ParseStatus.SUCCESS, (rule, text)
            assert lazy.grammar.match(text).status == "accept", (rule, text)
