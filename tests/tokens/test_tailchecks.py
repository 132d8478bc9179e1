"""Checking a wide split's tails from the frames below (``docs/masks.md``, "Tails"):
the tokens found are kept as sparse words or as packed bits; masks equal the
reference's either way."""

from __future__ import annotations

import random

import numpy as np
import pytest
from test_masks import _walk_compiled, synthetic_vocabulary

import gbnfkit
from gbnfkit._grammar import Grammar
from gbnfkit.tokens._tails import Tails
from gbnfkit.tokens._tuning import Tuning

# string bodies (wide splits with tails) followed by different frames below
_SCHEMA = {
    "type": "object",
    "properties": {
        "a": {"type": "string"},
        "b": {"type": "array", "items": {"type": "string", "pattern": "^[a-c]+:[a-c]*$"}},
        "c": {"type": "string", "maxLength": 4},
    },
}


@pytest.mark.parametrize("sparse_tails", [0, 10**9])
@pytest.mark.parametrize("source", ["schema", "json", "c"])
def test_tokens_accepted_through_tails_as_bits_or_words(source: str, sparse_tails: int) -> None:
    """With every tail check kept as packed bits (``sparse_tails`` 0) or as sparse words
    (distinct word indices and their bits), masks equal the reference's."""
    if source == "schema":
        grammar = Grammar.from_json_schema(_SCHEMA, property_order="any")
    else:
        grammar = Grammar.builtin(source)
    vocabulary = synthetic_vocabulary('abcd:{}[]", 0123;=()', seed=11)
    tuning = Tuning(wide=0, many_first_bytes=0, sparse_tails=sparse_tails)
    kinds: set[type] = set()
    for seed in range(3):
        compiled = gbnfkit.CompiledGrammar(grammar, vocabulary, tuning=tuning)
        _walk_compiled(compiled, grammar, random.Random(seed), steps=30)
        for _, found in compiled._tail_checks.values():
            if isinstance(found, tuple):
                word_index, _bits = found
                # one fancy-indexed OR per entry is exact only with distinct indices
                assert len(set(word_index.tolist())) == len(word_index)
                if len(word_index):
                    kinds.add(tuple)
            elif found.any():
                kinds.add(np.ndarray)
    assert kinds == ({np.ndarray} if sparse_tails == 0 else {tuple})


def test_positions_of_chosen_tails_runs_and_gaps() -> None:
    """The tokens of the chosen tails, read run by run, are each chosen tail's tokens
    in turn (runs of consecutive tails, gaps, single tails, the last tail)."""
    starts = (0, 3, 4, 9, 9, 15, 20)
    tails = Tails(tuple(bytes([i]) for i in range(6)), tuple(range(100, 120)), starts)
    rng = random.Random(5)
    for _ in range(300):
        chosen = sorted(rng.sample(range(6), rng.randint(0, 6)))
        expected = [p for i in chosen for p in range(100 + starts[i], 100 + starts[i + 1])]
        assert tails.positions_of(chosen) == expected


@pytest.mark.parametrize("max_contexts", [1, 4096])
def test_states_below_wide_contexts_kept_and_bounded(max_contexts: int) -> None:
    """The states of the frames below wide contexts, kept per grammar between masks
    (``_state_below``), are each the closure of their frames, at most ``max_contexts``
    of them; masks equal the reference's whether they are kept or cleared each time."""
    grammar = Grammar.builtin("c")
    vocabulary = synthetic_vocabulary('abcd:{}[]", 0123;=()', seed=11)
    tuning = Tuning(wide=0, many_first_bytes=0)
    compiled = gbnfkit.CompiledGrammar(
        grammar, vocabulary, tuning=tuning, max_contexts=max_contexts
    )
    _walk_compiled(compiled, grammar, random.Random(4), steps=30)
    assert 0 < len(compiled._belows) <= max_contexts
    for frames, state in compiled._belows.items():
        assert state == compiled.automaton.state_of([frames])
