"""Long chains of rules, each calling the next: the character engine and the byte
automaton expand them as interned stack nodes (work linear in the chain), and refuse a
chain whose expansion is quadratic (optional calls) by ``Limits.max_expansion_size``."""

from __future__ import annotations

import re

import pytest

from gbnfkit import Grammar, GrammarCompiler, LimitError, Limits, Vocabulary, allocate_bitmask

VOCABULARY = Vocabulary([b"a", b"x", b"xx", b"ax", b"</s>"], eos_token_ids=[4])


def _chain(n: int, call: str) -> str:
    """``root ::= r0``, ``r_i ::= <call with r_{i+1}>`` for i < n, ``r_n ::= "a"``."""
    rules = "".join(f"r{i} ::= {call.format(f'r{i + 1}')}\n" for i in range(n))
    return f'root ::= r0\n{rules}r{n} ::= "a"\n'


def _allowed(grammar: Grammar, text: bytes) -> list[int]:
    matcher = GrammarCompiler(VOCABULARY).compile(grammar).matcher()
    if text:
        matcher.accept_text(text.decode())
    bitmask = allocate_bitmask(1, VOCABULARY.size)
    matcher.fill_bitmask(bitmask, 0)
    return [t for t in range(VOCABULARY.size) if bitmask[0, t >> 5] >> (t & 31) & 1]


@pytest.mark.parametrize("call", ['{} "x"', "{}"])
def test_a_long_chain_of_calls_is_one_stack_not_many(call: str) -> None:
    """A chain of 600 calls expands to one stack of 600 frames (or, in tail position,
    one frame): within ``max_stacks=5``, whose bound on the stacks an expansion explored
    (tuples, each a copy of the chain so far: quadratic work) refused it, in the
    character engine and in the byte automaton of masks."""
    n = 600
    x = "x" in call
    grammar = Grammar.from_gbnf(_chain(n, call), limits=Limits(max_stacks=5))
    text = "a" + "x" * n if x else "a"
    assert grammar.match(text).status == "accept"
    assert grammar.match(text[:-1]).status == "prefix"
    assert _allowed(grammar, b"") == ([0, 3] if x else [0])
    assert _allowed(grammar, text.encode()) == [4]
    if x:
        assert _allowed(grammar, text[:-2].encode()) == [1, 2]


@pytest.mark.parametrize("n", [30, 120])
def test_a_chain_of_optional_calls_is_refused_by_max_expansion_size(n: int) -> None:
    """``r_i ::= r_{i+1}? "x"``: ``n`` stacks of up to ``n`` frames (a stack per depth
    where the chain may stop).  Past ``max_expansion_size`` frames the character engine
    and the compiler refuse it with one LimitError naming the rule and the limit (30:
    composed from the closures of the calls; 120: explored stack by stack); within it
    both work."""
    text = _chain(n, '{}? "x"')
    frames = n * (n + 1) // 2
    small = Limits(max_expansion_size=frames // 2)
    grammar = Grammar.from_gbnf(text, limits=small)
    with pytest.raises(LimitError) as info:
        grammar.match("x")
    assert info.value.limit == "max_expansion_size" and info.value.value == frames // 2
    assert "rule 'r0'" in str(info.value) and "max_expansion_size" in str(info.value)
    with pytest.raises(LimitError) as info:
        GrammarCompiler(VOCABULARY).compile(grammar)
    assert info.value.limit == "max_expansion_size" and info.value.value == frames // 2
    # the rule of the chain whose expansion passed the limit (composed: an inner one,
    # such as the rule of the optional call `r9-opt10`)
    assert re.search(r"expanding rule 'r\d+(-opt\d+)?' needs more than", str(info.value))
    roomy = Grammar.from_gbnf(text, limits=Limits(max_expansion_size=4 * frames))
    assert roomy.match("a" + "x" * n).status == "accept"
    assert roomy.match("x" * n).status == "accept"
    assert roomy.match("x" * (n + 1)).status == "reject"
    assert _allowed(roomy, b"") == [0, 1, 2, 3]
    assert _allowed(roomy, b"a" + b"x" * n) == [4]


def test_the_default_expansion_limit_refuses_a_long_chain_of_optional_calls() -> None:
    """At the default limit (2,000,000 frames) a chain of 2,100 optional calls (2.2
    million frames) is refused before its stacks are made."""
    grammar = Grammar.from_gbnf(_chain(2_100, '{}? "x"'))
    with pytest.raises(LimitError) as info:
        GrammarCompiler(VOCABULARY).compile(grammar)
    assert info.value.limit == "max_expansion_size" and info.value.value == 2_000_000
    with pytest.raises(LimitError) as info:
        grammar.match("x")
    assert info.value.limit == "max_expansion_size"
