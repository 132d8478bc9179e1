"""Counted repetitions with more characters left than ``count_chain`` but too few for
their states to be open (``tokens/_longcount.py``; ``docs/masks.md``, "Slices", "Counted
repetitions: many characters left"): the chain is followed for ``count_chain`` states,
the inside tokens starting at most that many characters are accepted, the others are
stepped one by one.  Every such split is compared with stepping each token's bytes, and
the masks with the reference, along the counted strings of ``test_counted`` with
``count_chain`` small beside the vocabulary's tokens of up to 16 characters."""

from __future__ import annotations

from test_counted import _grammars, _vocabulary
from test_slices import _by_stepping, _follow, _roots, _sliced_walks_equal_stepping

import gbnfkit
from gbnfkit.tokens._longcount import LONG, follows_far, long_count_walk
from gbnfkit.tokens._tuning import Tuning

FIRST_BYTES = (-1, 0x7FFF_FFFF << 96, 1 << 0x22 | 0xFF << 0xC0)


def _splits_equal_stepping(tuning: Tuning) -> tuple[int, int]:
    """Every context state along the documents whose chain is long: its split (under
    all, some and two first bytes) against stepping each token; returns how many roots
    were split this way and how many long inside tokens they stepped."""
    vocabulary = _vocabulary()
    found = stepped_long = 0
    for grammar, document in _grammars():
        compiled = gbnfkit.CompiledGrammar(grammar, vocabulary, tuning=tuning)
        trie = compiled.index.trie
        piece = compiled.index.slices[0]
        automaton = compiled.automaton
        for root in _roots(compiled, document):
            if not follows_far(automaton, root, piece, tuning):
                continue
            accepted, uncertain, pairs = _by_stepping(trie, automaton, root)
            for first_bytes in FIRST_BYTES:
                split = long_count_walk(trie, piece, automaton, root, first_bytes, tuning)
                if split is None:
                    continue
                starts = [(first_bytes >> data[0]) & 1 for data in trie.sorted_bytes]
                assert split.accepted.tolist() == [p for p in accepted if starts[p]]
                assert split.uncertain.tolist() == [p for p in uncertain if starts[p]]
                positions = split.handover_positions.tolist()
                got = list(zip(positions, split.handover_offsets.tolist(), strict=True))
                assert got == [(p, k) for p, k in pairs if starts[p]]
                found += 1
            inside = piece.inside & (piece.chars > tuning.count_chain)
            stepped_long += int(inside.sum())
    return found, stepped_long


def test_long_chains_split_as_stepping_each_token() -> None:
    # count_chain 3: tokens of 4 to 16 characters are stepped, shorter ones accepted
    found, stepped = _splits_equal_stepping(Tuning(count_chain=3))
    assert found > 50, "no long counted chain was split"
    assert stepped > 0
    # none of the chains is long with count_chain past every count of the grammars
    assert _splits_equal_stepping(Tuning(count_chain=200)) == (0, 0)


def test_too_many_long_tokens_are_walked() -> None:
    vocabulary = _vocabulary()
    tuning = Tuning(count_chain=3, count_long_tokens=0)
    grammar, document = _grammars()[4]  # {0, 3 * LONGEST}
    compiled = gbnfkit.CompiledGrammar(grammar, vocabulary, tuning=tuning)
    piece = compiled.index.slices[0]
    roots = [r for r in _roots(compiled, document)]
    far = [r for r in roots if follows_far(compiled.automaton, r, piece, tuning)]
    assert far
    for root in far:
        trie = compiled.index.trie
        assert long_count_walk(trie, piece, compiled.automaton, root, -1, tuning) is None


def test_long_chain_masks_match_the_reference() -> None:
    vocabulary = _vocabulary()
    for tuning in (Tuning(count_chain=3), Tuning(count_chain=5, count_long_tokens=4)):
        for grammar, document in _grammars():
            compiled = gbnfkit.CompiledGrammar(grammar, vocabulary, tuning=tuning)
            _follow(compiled, grammar, vocabulary, document)


def test_noted_chains_split_as_stepping_each_token() -> None:
    """Through the compiled grammar the states of a long chain are noted (``LONG``)
    when first followed, and taken at once later: every sliced walk along the
    documents, twice over, against stepping each token."""
    vocabulary = _vocabulary()
    tuning = Tuning(count_chain=3)
    noted = 0
    for grammar, document in _grammars():
        compiled = gbnfkit.CompiledGrammar(grammar, vocabulary, tuning=tuning)
        for _ in range(2):
            for root in _roots(compiled, document):
                _sliced_walks_equal_stepping(compiled, root)
        noted += sum(got == LONG for kept in compiled._counts.values() for got in kept.values())
    assert noted > 50, "no state of a long chain was noted"
