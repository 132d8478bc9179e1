"""Narrow walks that measure their pace early (``Tuning.early_walk``, ``early_wide``;
``docs/masks.md``, "Computing a split"): a walk that at its pace after a few nodes would
visit far more than ``wide`` stops for a wide split at once, still looking for a split
kept by canonical form first, and masks stay exact."""

from __future__ import annotations

import random

import pytest
from test_masks import _walk_compiled, synthetic_vocabulary

from gbnfkit._grammar import Grammar
from gbnfkit.tokens._compiled import CompiledGrammar
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
