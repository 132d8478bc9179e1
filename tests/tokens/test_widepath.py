"""How a context goes wide (``docs/masks.md``, "Computing a split" and "Shallower
shared contexts"): a narrow walk that at its pace after a few nodes would visit far more
than ``wide`` stops for a wide split at once (``Tuning.early_walk``, ``early_wide``),
still looking for a split kept by canonical form first; a wide context's shallower
context is kept like any context; masks stay exact."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest
from test_masks import _walk_compiled, fast_mask, reference_mask, synthetic_vocabulary

from gbnfkit import Vocabulary
from gbnfkit._grammar import Grammar
from gbnfkit.tokens._bytestate import BOTTOM
from gbnfkit.tokens._compiled import CompiledGrammar, _group_key, _key_depth, _stacks_of
from gbnfkit.tokens._tuning import Tuning

# every walk measures its pace after 2 nodes and stops there if it would pass 8
EARLY = Tuning(short_walk=16, wide=64, early_walk=2, early_wide=8)


@pytest.mark.parametrize("name", ["json", "c", "arithmetic"])
def test_masks_stay_exact_with_walks_stopped_early(name: str) -> None:
    grammar = Grammar.builtin(name)
    vocabulary = synthetic_vocabulary("ABCDEFGHIJKLMNOPQRSTUVWXYZ.!?;#<>&|%", seed=7)
    for tuning in (EARLY, Tuning(early_walk=2, early_wide=0)):
        compiled = CompiledGrammar(grammar, vocabulary, tuning=tuning)
        _walk_compiled(compiled, grammar, random.Random(name), steps=12)


def test_walk_stopped_early_still_finds_the_shared_split() -> None:
    """A context whose canonical form is known (a wide context's shallower one) and kept
    by the index is served the kept split even when its walk stops early."""
    vocabulary = synthetic_vocabulary("ABCDEFGHIJKLMNOPQRSTUVWXYZ.!?;#<>&|%", seed=7)
    grammar = Grammar.builtin("json")
    # walks of more than 64 nodes go wide, every walk stops after its first node
    tuning = Tuning(short_walk=16, wide=64, early_walk=1, early_wide=0, top_frame_nodes=0)
    first = CompiledGrammar(grammar, vocabulary, tuning=tuning)
    for seed in range(4):
        _walk_compiled(first, grammar, random.Random(seed), steps=30)
    index = first.index
    second = CompiledGrammar(grammar, vocabulary, index=index, tuning=tuning)
    served = 0
    for key in list(first._contexts):
        canon = second._canonical(key, tuning.max_wide_canonical)
        kept = index.shared.get(canon) if canon is not None else None
        if kept is not None:
            served += second._split(key, known=canon) is kept
    assert served > 3, served


def test_shallower_contexts_are_kept_as_their_own_splits() -> None:
    """A wide context of depth 3 first tries its top two frames' context; that split is
    kept under its own key (a later context with the same top frames, used or not, does
    not split it again), and it is that context's split."""
    vocabulary = synthetic_vocabulary("ABCDEFGHIJKLMNOPQRSTUVWXYZ.!?;#<>&|%", seed=7)
    grammar = Grammar.builtin("c")
    tuning = Tuning(wide=0)  # every context wide: each one tries its shallower context
    compiled = CompiledGrammar(grammar, vocabulary, tuning=tuning)
    _walk_compiled(compiled, grammar, random.Random(5), steps=20)
    shallower = [k for k in compiled._contexts if k[0] == BOTTOM and _key_depth(k) == 2]
    assert len(shallower) > 3, shallower
    fresh = CompiledGrammar(grammar, vocabulary, tuning=tuning)
    nwords = compiled.index.nwords
    for key in shallower:
        kept = compiled._contexts[key]
        again = fresh._split(key)
        assert np.array_equal(kept.to_words(nwords), again.to_words(nwords)), key
        assert kept.uncertain_tokens == again.uncertain_tokens, key


# every walk finishes narrow, whatever its first bytes
NARROW = Tuning(wide=10**9, many_first_bytes=256)


def _shallower_keys(compiled: CompiledGrammar) -> list[tuple[int, ...]]:
    return [k for k in compiled._contexts if k[0] == BOTTOM and _key_depth(k) == 2]


def test_shallower_context_split_at_once_is_its_split() -> None:
    """A shallower context split wide at once (no narrow walk: its deeper context's walk
    went wide) accepts what its narrow split accepts, and leaves uncertain only tokens
    under the narrow split's uncertain subtrees; masks stay exact whether shallower
    contexts are split at once always or never."""
    vocabulary = synthetic_vocabulary("ABCDEFGHIJKLMNOPQRSTUVWXYZ.!?;#<>&|%", seed=7)
    grammar = Grammar.builtin("c")
    runs = {}
    for limit in (10**9, -1):  # every shallower context at once; none
        tuning = Tuning(short_walk=16, wide=64, shallow_at_once=limit)
        compiled = CompiledGrammar(grammar, vocabulary, tuning=tuning)
        for seed in range(3):
            _walk_compiled(compiled, grammar, random.Random(seed), steps=20)
        runs[limit] = compiled
    nwords = runs[-1].index.nwords
    keys = _shallower_keys(runs[-1])
    assert len(keys) > 3, keys
    trie = runs[-1].index.trie
    for key in keys:
        fresh = CompiledGrammar(grammar, vocabulary, tuning=NARROW)
        narrow = fresh._split(key)
        wide = fresh._split(key, narrow=False)
        assert np.array_equal(narrow.to_words(nwords), wide.to_words(nwords)), key
        under = set()
        for node in narrow.uncertain:
            under.update(range(trie.tok_lo[node], trie.tok_hi[node]))
        assert set(wide.uncertain_tokens) <= under, key


# after `<x` the context `big mid tail` walks every `y...` token (its `[a-z]*`), while
# its shallower context `mid tail` finishes after `y` (`"0"?` may be empty)
AT_ONCE_GRAMMAR = """root ::= "<" big "."
big ::= mid [a-z]* ">"
mid ::= "x" tail "0"?
tail ::= "y"
"""


def _at_once_case() -> tuple[Grammar, Vocabulary, int]:
    words = [
        ("y" + first + "".join(rest)).encode()
        for first in "ab"
        for n in range(3)
        for rest in itertools.product("abcdefgh", repeat=n)
    ]
    tokens: list[bytes | None] = [bytes([b]) for b in range(256)]
    tokens += [*words, b"y0", b"y>", b"<x", None]
    vocabulary = Vocabulary(tokens, eos_token_ids=[len(tokens) - 1])
    return Grammar.from_gbnf(AT_ONCE_GRAMMAR), vocabulary, len(tokens) - 2


@pytest.mark.parametrize("limit", [1_024, -1])
def test_shallower_context_goes_wide_at_once_when_it_finishes_narrowly(limit: int) -> None:
    """When a context's narrow walk goes wide, its shallower context is split wide at
    once if the tokens under the bytes after which it finishes are at most
    ``shallow_at_once`` (then it serves the deeper context: one wide split), else walked
    narrow first as before (uncertain subtrees: the deeper context is split wide too);
    masks are exact either way."""
    grammar, vocabulary, opening = _at_once_case()
    tuning = Tuning(short_walk=8, wide=8, early_walk=8, top_frame_nodes=0, shallow_at_once=limit)
    compiled = CompiledGrammar(grammar, vocabulary, tuning=tuning)
    matcher = compiled.matcher()
    assert matcher.accept_token(opening)
    state = grammar.start().feed(b"<x")
    assert np.array_equal(reference_mask(state, vocabulary), fast_mask(matcher, vocabulary.size))
    by_depth = {_key_depth(k): e for k, e in compiled._contexts.items()}
    shallower, deeper = by_depth[2], by_depth[3]
    if limit >= 0:  # 146 tokens under `y`: split at once, wide, and serving the deeper
        assert not shallower.uncertain and shallower.uncertain_tokens
        assert deeper is shallower
    else:
        assert shallower.uncertain and not shallower.uncertain_tokens
        assert deeper is not shallower
    _walk_compiled(compiled, grammar, random.Random(limit), steps=6)


def test_kept_shallower_split_serves_before_the_walk() -> None:
    """A deeper context whose shallower context is kept and serves it takes that split
    before any walk of its own (its walk would pass the same nodes and more); a kept
    split that does not serve (uncertain subtrees) is not taken."""
    grammar, vocabulary, _ = _at_once_case()
    tuning = Tuning(top_frame_nodes=0)  # no split by top frame first
    compiled = CompiledGrammar(grammar, vocabulary, tuning=tuning)
    automaton = compiled.automaton
    after = automaton.feed(automaton.initial, b"<x")
    assert after is not None
    key = _group_key(list(after.stacks), 3)
    top = _group_key(_stacks_of(key), 2)
    nwords = compiled.index.nwords
    own = CompiledGrammar(grammar, vocabulary, tuning=tuning)._split(key)  # its walk finishes
    assert not own.uncertain_tokens
    serving = compiled._split(top, narrow=False)
    assert serving.uncertain_tokens and not serving.uncertain
    compiled._keep_context(top, serving)
    assert compiled._split(key, shallower=True) is serving
    other = CompiledGrammar(grammar, vocabulary, tuning=tuning)
    narrow = other._split(top)
    assert narrow.uncertain
    other._keep_context(top, narrow)
    got = other._split(key, shallower=True)
    assert got is not narrow
    assert np.array_equal(got.to_words(nwords), own.to_words(nwords))
