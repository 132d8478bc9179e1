"""Narrow splits made from the split of the context's top frame (``docs/masks.md``,
"Splits by top frame"): the same accepted tokens as a walk of the whole context, and
every token that walk leaves uncertain still checked, so masks stay exact."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from test_masks import _walk_compiled, synthetic_vocabulary

from gbnfkit._grammar import Grammar
from gbnfkit.tokens._compiled import CompiledGrammar, _group_key, _stacks_of
from gbnfkit.tokens._tuning import Tuning
from gbnfkit.tokens._walk import walk_all

# counted whitespace called from many places (as the JSON Schema converter writes it),
# a rule whose end is nullable (the frames below may finish at once), and literals
GRAMMARS = [
    'root ::= "{" ws ( kv ( ws "," ws kv )* )? ws "}" ws\n'
    'kv ::= "\\"" [a-c]{1,3} "\\"" ws ":" ws value\n'
    'value ::= "{" ws "}" | [0-9]+ | "true" | "\\"" [a-z ]* "\\""\n'
    "ws ::= [ \\t\\n]{0,6}",
    'root ::= item+\nitem ::= "(" ws [a-z]* ws ")" ws | "[" ws tail\n'
    'tail ::= "]" | ws\nws ::= [ \\n]{0,4}',
    'root ::= ("x" sp)* "y" sp "z"\nsp ::= " "? " "?',
    # a whitespace loop (c's `ws`): after one item the loop's frame calls an item
    # again, so the top frames are the item's and the loop's
    'root ::= ws ( stmt ws )* "."\nstmt ::= [a-c]+ ws "=" ws [a-c]+ ws ";"\n'
    'ws ::= ( [ \\t\\n] | "#" [a-c ]* "\\n" )*',
]


def _positions(compiled: CompiledGrammar, nodes: tuple[int, ...]) -> set[int]:
    trie = compiled.index.trie
    return {p for node in nodes for p in range(trie.tok_lo[node], trie.tok_hi[node])}


def _accepted(compiled: CompiledGrammar, lo: list[int], hi: list[int]) -> np.ndarray:
    index = compiled.index
    words = np.zeros(index.nwords, dtype=np.uint32)
    word_index, word_bits = index.sparse_ranges(lo, hi)
    words[word_index] |= word_bits
    return words


@pytest.mark.parametrize(
    "tuning", [Tuning(), Tuning(top_frame_nodes=8, jump_subtree=0)], ids=["default", "budget"]
)
def test_splits_by_top_frame_agree_with_whole_walks(tuning: Tuning) -> None:
    """Also with the walks from below budgeted: with ``top_frame_nodes`` 8 their
    subtrees often hold more nodes, and they are walked while at their pace they
    would visit at most 8 (jumping to the few children a state accepts)."""
    vocabulary = synthetic_vocabulary(" \t\n" * 6 + "abc#=;", seed=3)
    used = with_walks = looped = budgeted = 0
    for text in GRAMMARS:
        grammar = Grammar.from_gbnf(text)
        compiled = CompiledGrammar(grammar, vocabulary, tuning=tuning)
        for seed in range(3):
            _walk_compiled(compiled, grammar, random.Random(seed), steps=30)
        automaton = compiled.automaton
        index = compiled.index
        sorted_ids = index.trie.sorted_ids
        for key in list(compiled._contexts):
            root = automaton.intern(frozenset(_stacks_of(key)))
            got = compiled._by_top_frame(key, root)
            if got is None:
                continue
            used += 1
            with_walks += got.base is not None
            stacks = _stacks_of(key)
            frames, bits, _ = compiled._top_frames(stacks, root)
            looped += frames == 2
            top = compiled._tops.get(_group_key(stacks, frames))
            assert top is not None
            size = top.children_with(bits, index.trie)[1] if top.handover else 0
            budgeted += size > tuning.top_frame_nodes
            whole = walk_all(index.trie, automaton, root)
            assert whole is not None
            want = _accepted(compiled, whole[0], whole[1])
            assert np.array_equal(got.to_words(index.nwords), want), key
            # what the whole walk leaves for the frames below is left to them here too
            # (or accepted): a token of a group with this context is never lost
            accepted = set(np.flatnonzero(np.unpackbits(want.view(np.uint8), bitorder="little")))
            missing = {
                p
                for p in _positions(compiled, tuple(whole[2])) - _positions(compiled, got.uncertain)
                if int(sorted_ids[p]) not in accepted
            }
            assert not missing, key

    assert used > 20 and with_walks > 5 and looped > 1, (used, with_walks, looped)
    assert budgeted > 3 or tuning.top_frame_nodes > 8, budgeted


def test_masks_stay_exact_split_by_top_frame_or_not() -> None:
    """The same grammars, masks against the character engine, with the top frame's
    walks allowed any size, and never used."""
    vocabulary = synthetic_vocabulary(" \t\n" * 6 + "abc", seed=4)
    for tuning in (Tuning(top_frame_nodes=10**9, jump_subtree=0), Tuning(top_frame_nodes=0)):
        for text in GRAMMARS:
            grammar = Grammar.from_gbnf(text)
            compiled = CompiledGrammar(grammar, vocabulary, tuning=tuning)
            for seed in range(3):
                _walk_compiled(compiled, grammar, random.Random(seed), steps=30)
            if not tuning.top_frame_nodes:
                assert not compiled._tops


def test_saved_splits_by_top_frame_reload_exact(tmp_path: Path) -> None:
    """A split made from its top frame's is saved with its accepted bits whole, and the
    file reads back as plain narrow splits with the same masks."""
    vocabulary = synthetic_vocabulary(" \t\n" * 6 + "abc", seed=5)
    grammar = Grammar.from_gbnf(GRAMMARS[0])
    first = CompiledGrammar(grammar, vocabulary)
    _walk_compiled(first, grammar, random.Random(7), steps=30)
    based = {k: e for k, e in first._contexts.items() if e.base is not None}
    assert based, "no split was made from its top frame's"
    path = tmp_path / "g.npz"
    first.save(path)
    loaded = CompiledGrammar.load(path, grammar, vocabulary)
    nwords = first.index.nwords
    for key, entry in based.items():
        again = loaded._contexts[key]
        assert again.base is None
        assert np.array_equal(again.to_words(nwords), entry.to_words(nwords))
        assert again.uncertain == entry.uncertain
    _walk_compiled(loaded, grammar, random.Random(7), steps=30)


def test_top_frames_split_from_their_first_context_after_the_first_mask() -> None:
    """The grammar's first mask (computed when it is compiled) walks its contexts whole;
    after it, a context of more than one frame is split from its top frame's split the
    first time that top frame is met (``docs/masks.md``, "Splits by top frame"), and the
    masks stay exact."""
    vocabulary = synthetic_vocabulary(" \t\n" * 6 + "abc", seed=6)
    # its first state's contexts have three frames: a split by top frame would apply
    nested = Grammar.from_gbnf(
        'root ::= a "x"\na ::= b "a" | b "b"\nb ::= "c" ws | "a" ws\nws ::= [ \\t\\n]{0,6}'
    )
    first = CompiledGrammar(nested, vocabulary)
    assert any(len(_stacks_of(key)[0]) > 2 for key in first._contexts)
    assert not first._tops  # the first mask: whole walks only
    _walk_compiled(first, nested, random.Random(8), steps=12)
    grammar = Grammar.from_gbnf(GRAMMARS[0])
    compiled = CompiledGrammar(grammar, vocabulary)
    automaton = compiled.automaton
    state = automaton.step(automaton.initial, ord("{"))
    assert state is not None
    fresh = [key for key in _context_keys(compiled, state) if key not in compiled._contexts]
    compiled.mask(state)
    tops = [
        _group_key(_stacks_of(key), 1)
        for key in fresh
        if len(_stacks_of(key)[0]) > 2 and _group_key(_stacks_of(key), 1) != key
    ]
    assert tops and all(top in compiled._tops for top in tops), (tops, list(compiled._tops))
    _walk_compiled(compiled, grammar, random.Random(8), steps=30)


def _context_keys(compiled: CompiledGrammar, state: object) -> list[tuple[int, ...]]:
    from gbnfkit.tokens._compiled import CONTEXT_DEPTH, _groups

    stacks = state.stacks  # type: ignore[attr-defined]
    return [
        _group_key(group, CONTEXT_DEPTH) if len(group[0]) > CONTEXT_DEPTH else _group_key(group, 0)
        for group in _groups(stacks)
    ]


def test_top_frame_walks_go_on_past_short_walk_at_a_pace_within_wide() -> None:
    """A top frame's walk that passes ``short_walk`` nodes goes on when at its pace it
    would stay within ``wide`` (a comment's frame in c, shared by every context of an
    operator after `/`, was given up and each context walked whole): more top splits
    are kept than with ``wide`` equal to ``short_walk``, and masks stay exact."""
    vocabulary = synthetic_vocabulary(" \t\n" * 6 + "abc#=;", seed=9)
    kept = {}
    for wide in (8, 4000):
        tuning = Tuning(short_walk=8, early_walk=8, wide=wide)
        count = 0
        for text in GRAMMARS:
            grammar = Grammar.from_gbnf(text)
            compiled = CompiledGrammar(grammar, vocabulary, tuning=tuning)
            for seed in range(3):
                _walk_compiled(compiled, grammar, random.Random(seed), steps=30)
            count += sum(top is not None for top in compiled._tops.values())
        kept[wide] = count
    assert kept[4000] > kept[8], kept
