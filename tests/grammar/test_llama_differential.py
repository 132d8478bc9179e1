"""The parser against a Python port of llama.cpp's parser, on random grammars.

llama.cpp refuses a grammar -> gbnfkit refuses it too (same category).
llama.cpp builds a grammar -> gbnfkit builds it too, unless a documented divergence
applies (see test_gbnf_conformance.py) or the left recursion is one llama.cpp misses.
"""

# shared data: conformance/gbnf.jsonl

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from gbnf_llama_reference import LlamaCrashes, TooManyStacks, llama_match, llama_verdict
from hypothesis import given, settings
from hypothesis import strategies as st
from test_fuzz import _TOKENS
from test_gbnf_conformance import category, divergent_refusal

from gbnfkit import Grammar, GrammarError
from gbnfkit.grammar import parse_gbnf, to_gbnf

_ITEMS = st.sampled_from(
    ['"a"', '""', "[a-c]", "[^x]", ".", "x", "y", "root", '"a"?', '"a"*', "x?", "y*", "()",
     '("" | "a")', "(x)", "(y)?", '("a"?)', "(x y)", "(x | y)", "x{0,2}", "y{2}", "x{1,}",
     "*", "?", "+", "{0}", "(", ")", "|", "|\n  ", "\n  | ", "#c\n", '"b"{0,1}', "(()|x)"]
)  # fmt: skip
_RULES = {
    "x": st.sampled_from(['"x"', '"" | "x"', "y", 'y | "x"', 'x "a" | "b"', "", '"x" |']),
    "y": st.sampled_from(['"y"', '"" | "y"', "x", 'root "y"', '"y" | ', "x*", "(x)"]),
}


@st.composite
def _grammars(draw: st.DrawFn) -> str:
    body = " ".join(draw(st.lists(_ITEMS, min_size=1, max_size=7)))
    lines = [f"root ::= {body}"]
    for name in draw(st.permutations(["x", "y"])):
        if draw(st.booleans()):
            lines.append(f"{name} ::= {draw(_RULES[name])}")
    return "\n".join(lines)


def _compare(text: str) -> None:
    try:
        expected = llama_verdict(text)
    except LlamaCrashes:
        # only the discarded first definition of a rule refers to root: gbnfkit refuses
        # the second definition
        with pytest.raises(GrammarError, match="is defined twice"):
            parse_gbnf(text)
        return
    try:
        ir = parse_gbnf(text)
    except GrammarError as err:
        if expected is not None:
            # a duplicate rule, or {m,n} with m > n, is found while parsing, before
            # llama.cpp's later checks (the other divergences wait for them)
            immediate = divergent_refusal(text, err) in ("duplicate rule", "min above max")
            assert category(err) == expected or immediate, err.message
            return
        left_recursion_llama_misses = "before consuming any character (the items" in err.message
        assert left_recursion_llama_misses or divergent_refusal(text, err), err.message
        return
    assert expected is None, text
    # and the canonical printout is a grammar llama.cpp builds too
    assert llama_verdict(to_gbnf(ir)) is None, to_gbnf(ir)


@settings(max_examples=600, deadline=None)
@given(_grammars())
def test_same_verdicts_as_llama(text: str) -> None:
    _compare(text)


@settings(max_examples=300, deadline=None)
@given(st.lists(_TOKENS.filter(lambda token: "\x00" not in token), max_size=25).map("".join))
def test_same_verdicts_on_token_soup(text: str) -> None:
    _compare(text)


def test_reference_port_reproduces_the_corpus(shared_file: Callable[[str], Path]) -> None:
    path = shared_file("conformance/gbnf.jsonl")
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if "repetition" in (record["grammar_error"] or ""):
            continue  # llama.cpp's size threshold, left out of the port on purpose
        assert llama_verdict(record["grammar"]) == record["error_kind"], record["id"]


@pytest.mark.parametrize(
    "text",
    [
        'root ::= ("a"?)* "b"',
        'root ::= "a"?* "b"',
        'root ::= (x)* "b"\nx ::= "" | "a"',
        'root ::= x* "b"\nx ::= "" | "a"',
        'root ::= (x y) root | "c"\nx ::= "" | "a"\ny ::= "" | "b"',
        'root ::= x y root | "c"\nx ::= "" | "a"\ny ::= "" | "b"',
        'root ::= (("" | "a")) root | "c"',
        'root ::= ("" | "a") root | "c"',
        'root ::= x | "a"\nx ::= ("" | "b") root',
        'root ::= "a"{0} root | "b"',
        'root ::= ("a"{0}) root | "b"',
        'root ::= (()|x) root | "c"\nx ::= "x"',
    ],
)
def test_group_subtleties(text: str) -> None:
    _compare(text)


@pytest.mark.parametrize(
    ("text", "verdict"),
    [
        # the first definition of root is discarded, and with it the only reference to x
        ('root ::= x\nroot ::= "a"', None),
        # ... but x's symbol id stays, and is a hole in the rules before y's
        ('root ::= x\nroot ::= "a"\ny ::= "b"', "undefined_rule"),
        # the group's generated rule of the discarded definition stays
        ('root ::= (x | "c")\nroot ::= "a"', "undefined_rule"),
        ('root ::= "b" (root)\nroot ::= "a"', None),
        ('root ::= x\nx ::= y\nx ::= "a"', None),
        ('root ::= y x\nx ::= y\nx ::= "a"', "undefined_rule"),
    ],
)
def test_port_checks_the_rules_llama_keeps(text: str, verdict: str | None) -> None:
    """llama.cpp checks the references of the rules it keeps (as the real one does, in
    ``test_llama_cpp_oracle.py``); gbnfkit refuses the duplicate definition."""
    assert llama_verdict(text) == verdict
    _compare(text)


def test_port_knows_where_llama_crashes() -> None:
    with pytest.raises(LlamaCrashes):
        llama_verdict('x ::= root\nx ::= "a"')
    _compare('x ::= root\nx ::= "a"')


# -- matching: the engine against llama.cpp's stacks --------------------------------------

_MATCH_ITEMS = st.sampled_from(
    ['"a"', '""', "[a-c]", "[^a]", ".", "x", "y", '"ab"', '"a"?', '"b"*', "x?", "y*",
     '("a" | "b")', "(x)", "(y)?", "(x y)", "(x | y)", "x{0,2}", "y{2}", "x{1,}",
     '"c"{2,3}', "[b-c]{1,2}", '("a" x)*', '("b" | "")', '("a" "b"?){0,2}', "[a\\-c]",
     "[^b-c]+", '"\\x61"', "(x{2} | y)", "(.){1,3}", "[\\x00-a]", "[^\\U0010FFFF]"]
)  # fmt: skip
_MATCH_RULES = {
    "x": st.sampled_from(['"x"', '"" | "x"', "y", 'y | "a"', '"a" x | "b"', '"x" y?',
                          '[ab] | "c" x', '"a"{1,3}']),
    "y": st.sampled_from(['"y"', '"" | "b"', 'x "b"', '"b" y | "c"', "[^x]", '"b"+',
                          '("a" | "c")*']),
}


@st.composite
def _matched_grammars(draw: st.DrawFn) -> str:
    body = " ".join(draw(st.lists(_MATCH_ITEMS, min_size=1, max_size=5)))
    if draw(st.booleans()):
        body += " | " + " ".join(draw(st.lists(_MATCH_ITEMS, min_size=1, max_size=3)))
    rules = [f"{name} ::= {draw(_MATCH_RULES[name])}" for name in ("x", "y")]
    return "\n".join([f"root ::= {body}", *rules])


@settings(max_examples=150, deadline=None, derandomize=True)
@given(
    _matched_grammars(),
    st.lists(st.text("abcxy\n\U0010ffff", max_size=5), max_size=8),
    st.integers(0, 2**32),
)
def test_same_matches_as_llama(text: str, subjects: list[str], seed: int) -> None:
    """Grammar.match against a port of llama.cpp's stacks, on grammars both build: same
    verdict and, for a rejection, the same refused code point (random texts, and texts
    walked through the grammar with a character of each, appended)."""
    import random

    from grammar_sampling import walk

    if llama_verdict(text) is not None:
        return
    try:
        grammar = Grammar.from_gbnf(text)
    except GrammarError:
        return  # a documented divergence (test_same_verdicts_as_llama checks which)
    rng = random.Random(seed)
    walked = [walk(grammar, rng, max_length=12) for _ in range(3)]
    subjects += [w + extra for w in walked if w is not None for extra in ("", "a", ".")]
    for subject in subjects:
        try:
            expected = llama_match(text, subject)
        except TooManyStacks:
            continue
        result = grammar.match(subject)
        assert (result.status.value, result.position) == expected, (text, subject)
