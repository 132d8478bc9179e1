"""Checking a wide split's tails from the frames below (``docs/masks.md``, "Tails"):
the tokens found are kept as positions or as packed bits; masks equal the reference's
either way."""

from __future__ import annotations

import random

import numpy as np
import pytest
from test_masks import _walk_compiled, synthetic_vocabulary

import gbnfkit
from gbnfkit._grammar import Grammar
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
def test_tokens_accepted_through_tails_as_bits_or_positions(source: str, sparse_tails: int) -> None:
    """With every tail check kept as packed bits (``sparse_tails`` 0) or as positions,
    masks equal the reference's."""
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
        kinds |= {type(found) for _, found in compiled._tail_checks.values() if len(found)}
    assert kinds == ({np.ndarray} if sparse_tails == 0 else {list})
