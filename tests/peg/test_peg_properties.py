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
# JSON-like texts for streaming: strings, numbers, nesting, escapes and whitespace
STREAMED = st.text(alphabet='xyz "\\{}[],:0123456789.-eEtrulnfas \n', max_size=24)
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
@given(any_parser(), TEXTS, st.integers(0, 2**32), st.integers(1, 3), st.booleans())
def test_incremental_parsing_gives_the_fresh_results(
    p: Parser, text: str, seed: int, longest: int, late: bool
) -> None:
    """Every result of ``feed`` (chunks of 1 to ``longest`` characters; one character at a
    time included) equals a fresh partial parse of the text so far, whether it is read at
    once or only after later chunks (``late``: ``feed`` may skip the parse and build the
    tree when it is read)."""
    rng = random.Random(seed)
    texts = [text, *_accepted_samples(p, seed, 3)]
    for whole in texts:
        stream = p.incremental()
        results = []
        i = 0
        while i < len(whole):
            j = min(len(whole), i + rng.randint(1, longest))
            got = stream.feed(whole[i:j])
            if late:
                results.append((whole[:j], got))
            else:
                assert got == p.parse(whole[:j], partial=True), (p, whole[:j])
            i = j
        for prefix, got in results:
            assert got == p.parse(prefix, partial=True), (p, prefix)
        assert stream.finish() == p.parse(whole), (p, whole)


@SETTINGS
@given(any_parser(), TEXTS, st.integers(0, 2**32))
def test_a_skipped_parse_matches_in_every_field(p: Parser, text: str, seed: int) -> None:
    """Results given without parsing: status, end, nodes (atomic ones never half-built),
    text, and equality with the fresh result, field by field."""
    for whole in [text, *_accepted_samples(p, seed, 3)]:
        stream = p.incremental()
        for j, ch in enumerate(whole, 1):
            got = stream.feed(ch)
            fresh = p.parse(whole[:j], partial=True)
            assert (got.status, got.end, got.text, got.position, got.expected, got.excerpt) == (
                fresh.status, fresh.end, fresh.text, fresh.position, fresh.expected,
                fresh.excerpt), (p, whole[:j])
            assert got.nodes == fresh.nodes and hash(got) == hash(fresh), (p, whole[:j])


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


_STREAMED_PARSERS = [
    peg.tag("v", peg.json()) + peg.space() + peg.end(),
    peg.tag("c", peg.until("<t>")) + peg.zero_or_more(
        peg.atomic(peg.tag("t", "<t>" + peg.space() + peg.json_object() + peg.space() + "</t>"))
        + peg.space()) + peg.end(),
    peg.tag("s", peg.json_string()) + peg.tag("n", peg.json_number()) + peg.rest(),
    peg.zero_or_more(peg.tag("w", peg.chars("[a-z]")) + peg.space()) + peg.end(),
    "[" + peg.tag("k", peg.until_one_of(["]]", "],"])) + peg.optional(peg.json_array()),
]


@SETTINGS
@given(st.sampled_from(_STREAMED_PARSERS), STREAMED, st.integers(0, 2**32))
def test_streamed_json_and_text_give_the_fresh_results_at_every_character(
    p: Parser, text: str, seed: int
) -> None:
    """Parsers with the leaves that ``feed`` extends without parsing (``until``, JSON
    strings, numbers and whitespace, character runs, literals), fed one character at a
    time: texts that go wrong anywhere, and texts they accept."""
    for whole in [text, *_accepted_samples(p, seed, 4)]:
        stream = p.incremental()
        for j, ch in enumerate(whole, 1):
            assert stream.feed(ch) == p.parse(whole[:j], partial=True), (p, whole[:j])
        assert stream.finish() == p.parse(whole), (p, whole)
