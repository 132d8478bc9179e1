"""How a context goes wide (``docs/masks.md``, "Computing a split" and "Shallower
shared contexts"): a narrow walk that at its pace after a few nodes would visit far more
than ``wide`` stops for a wide split at once (``Tuning.early_walk``, ``early_wide``),
still looking for a split kept by canonical form first; a wide context's shallower
context is kept like any context; masks stay exact."""

from __future__ import annotations

import random

import numpy as np
import pytest
from test_masks import _walk_compiled, synthetic_vocabulary

from gbnfkit._grammar import Grammar
from gbnfkit.tokens._bytestate import BOTTOM
from gbnfkit.tokens._compiled import CompiledGrammar, _key_depth
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
