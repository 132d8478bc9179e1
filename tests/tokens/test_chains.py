"""Counted repetitions' contexts taken to their representative link (``tokens/_chains.py``;
docs/masks.md, "Canonical sharing")."""

from __future__ import annotations

import numpy as np
from test_masks import fast_mask, reference_mask
from test_prewarm import _vocabulary as words_vocabulary

import gbnfkit
from gbnfkit._grammar import Grammar
from gbnfkit.tokens._compiled import _group_key, _key_depth, _stacks_of
from gbnfkit.tokens._vocabulary import Vocabulary

_WORDS = (
    "ab", "abc", "abcdefgh", "abcdefghijkl", "\\u00e9", "\\n", '"', '",', '"}', "é",
    "(", ")", "((b", "bbbb", "bbbbbbbbbb", ">", "<", "a)", "a>", ' "', "{", "}", ":",
)


def _vocabulary() -> Vocabulary:
    return words_vocabulary(_WORDS)


def _walk(grammar: Grammar, text: str) -> tuple[gbnfkit.CompiledGrammar, int]:
    """Masks at every prefix of ``text`` equal the reference's; every context kept
    whose shallower key was taken to another key has that key's canonical form.
    Returns the compiled grammar and how many shallower keys were taken."""
    vocabulary = _vocabulary()
    compiled = gbnfkit.GrammarCompiler(vocabulary).compile(grammar)
    matcher = compiled.matcher()
    start = grammar.start()
    for i in range(len(text) + 1):
        state = start.feed(text[:i].encode())
        expected = reference_mask(state, vocabulary)
        got = fast_mask(matcher, vocabulary.size)
        assert np.array_equal(expected, got), (text[:i], [
            vocabulary.token_bytes(int(t)) for t in np.flatnonzero(expected != got)[:5]
        ])
        if i < len(text):
            matcher.accept_text(text[i])
    taken = 0
    for key in list(compiled._contexts):
        depth = _key_depth(key)
        if depth < 2:
            continue
        top = _group_key(_stacks_of(key), depth - 1)
        normal = compiled._chain_normal(top)
        if normal != top:
            taken += 1
            assert compiled._canonical(normal, 1 << 20) == compiled._canonical(top, 1 << 20)
    return compiled, taken


def test_a_long_counted_string_takes_its_counts_to_one_key() -> None:
    longest = 12  # "abcdefghijkl"
    schema = {"type": "object", "properties": {"s": {"type": "string", "maxLength": 60}}}
    text = '{"s": "' + "ab" * 29 + '"}'
    compiled, taken = _walk(Grammar.from_json_schema(schema), text)
    # every count with at least U = longest + 3 links from it down but the
    # representative's own
    assert compiled._chains is not None
    assert taken >= 60 - (longest + 3) - 5


def test_strings_sharing_links_and_counts_near_the_end() -> None:
    """The converter's links are shared by strings of different maxLength (the same
    rule text): a representative serves both; the last counts keep their own keys."""
    schema = {
        "type": "object",
        "properties": {
            "s": {"type": "string", "maxLength": 40},
            "t": {"type": "string", "maxLength": 25},
        },
    }
    text = '{"s": "' + "a" * 40 + '", "t": "' + "b\\u00e9" * 3 + "x" * 18 + '"}'
    _, taken = _walk(Grammar.from_json_schema(schema), text)
    assert taken


def test_a_long_min_length_row_takes_its_counts_to_one_key() -> None:
    """``minLength`` copies are calls in a row: a count with more than U of them to
    go is taken U calls before the row's end (the optional links after it too)."""
    schema = {
        "type": "object",
        "properties": {"s": {"type": "string", "minLength": 50, "maxLength": 90}},
    }
    text = '{"s": "' + "abc" * 22 + '"}'
    compiled, taken = _walk(Grammar.from_json_schema(schema), text)
    chains = compiled._chains
    assert chains is not None
    assert taken >= 50 - 15 - 5
    assert any(chains.run(p) > 15 for p in range(len(compiled._automaton.program.kind)))


def test_an_item_reaching_its_chain_keeps_its_keys() -> None:
    """The repetition's item reaches its own chain (a nested ``<...>``): a walk from a
    link's frames may then meet the chain through the item as well (other forms), so
    such keys are not taken: the item's reach must hold no link."""
    grammar = Grammar.from_gbnf(
        'root ::= "<" item{0,24} ">"\n'
        'item ::= "a" | root | "(" [b]{0,4} ")"\n'
    )
    text = "<" + "a" * 3 + "<" + "a" * 10 + "(" + "bbb" + ")" + "a" * 3 + ">" + "a" * 5 + ">"
    compiled, _ = _walk(grammar, text)
    chains = compiled._chains
    assert chains is not None
    program = compiled._automaton.program
    outer = [r for r in range(len(program.rules)) if chains.uniform(r) >= 20]
    assert outer
    assert all(not chains._item_rules(chains.link(r)[0], compiled._least_of) for r in outer)


def test_an_item_reaching_its_row_keeps_its_keys() -> None:
    """``item{20}`` is a row of 20 calls in ``root``, and the item reaches ``root``
    (nested): a walk from a frame in the row meets the row's first calls too, so such
    keys are not taken (the item's reach must not hold the row's rule)."""
    grammar = Grammar.from_gbnf(
        'root ::= "(" mid ")"\n'
        'mid ::= "{" inner "}"\n'
        'inner ::= "<" item{20} ">"\n'
        'item ::= [^<>] | inner\n'
    )
    text = "({<" + "a" * 5 + "<" + "a" * 20 + ">" + "a" * 14 + ">})"
    compiled, _ = _walk(grammar, text)
    chains = compiled._chains
    assert chains is not None
    assert any(chains.run(p) >= 20 for p in range(len(compiled._automaton.program.kind)))
