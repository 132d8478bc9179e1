"""States of many groups walked as one context of whole stacks (``docs/masks.md``,
"States of many groups"): the masks equal the reference's whether the union walk is
used, abandoned at its budget, or never tried."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from test_masks import _walk_compiled, synthetic_vocabulary

import gbnfkit
from gbnfkit._grammar import Grammar
from gbnfkit.tokens._tuning import Tuning

# an object whose keys may come in any order: after `{"` or `, "` every remaining key
# is a group of its own, plus the "property name other than these" branches
SCHEMA = {
    "type": "object",
    "properties": {
        name: {"type": "integer"} if i % 2 else {"enum": ["on", "off"]}
        for i, name in enumerate(
            ["ab", "abc", "ac", "b", "ba", "bca", "c", "cab", "cc", "a-b", "b-a", "c-c"]
        )
    },
}


@pytest.mark.parametrize(
    ("tuning", "used"),
    [
        # (keys not joined: joined, the letters and "other name" of a key are one group,
        # ``docs/masks.md``, "Keys as one lexeme")
        (Tuning(union_groups=2, key_positions=0), True),
        (Tuning(union_groups=0, many_first_bytes=256, key_positions=0), True),
        (Tuning(union_groups=2, union_nodes=3, key_positions=0), False),  # all pass the budget
        (Tuning(union_groups=2), False),
        (Tuning(union_groups=10**6), False),
    ],
)
def test_union_walks_of_many_groups_stay_exact(tuning: Tuning, used: bool) -> None:
    grammar = Grammar.from_json_schema(SCHEMA, property_order="any")
    vocabulary = synthetic_vocabulary('abc-{}":, 0123456789onf', seed=5)
    walks = 0
    for seed in range(4):
        compiled = gbnfkit.CompiledGrammar(grammar, vocabulary, tuning=tuning)
        _walk_compiled(compiled, grammar, random.Random(seed), steps=25)
        walks += compiled.union_walks
    assert (walks > 0) == used


@pytest.mark.parametrize("name", ["c", "chess"])
def test_union_walks_of_builtin_grammars_stay_exact(name: str) -> None:
    grammar = Grammar.builtin(name)
    vocabulary = synthetic_vocabulary("ABCDEFGHIJKLMNOPQRSTUVWXYZ.!?;#<>&|%", seed=7)
    compiled = gbnfkit.CompiledGrammar(grammar, vocabulary, tuning=Tuning(union_groups=0))
    _walk_compiled(compiled, grammar, random.Random(name), steps=12)
    assert compiled.union_walks > 0


def test_saved_union_contexts_reload_exact(tmp_path: Path) -> None:
    """A union of contexts is saved and read back like any narrow split."""
    grammar = Grammar.from_json_schema(SCHEMA, property_order="any")
    vocabulary = synthetic_vocabulary('abc-{}":, 0123456789onf', seed=5)
    first = gbnfkit.CompiledGrammar(
        grammar, vocabulary, tuning=Tuning(union_groups=0, key_positions=0)
    )
    for seed in range(4):
        _walk_compiled(first, grammar, random.Random(seed), steps=25)
    assert first.union_walks
    path = tmp_path / "union.npz"
    first.save(path)
    loaded = gbnfkit.CompiledGrammar.load(path, grammar, vocabulary)
    assert len(loaded._contexts) == len(first._contexts)
    for seed in range(3):
        _walk_compiled(loaded, grammar, random.Random(seed), steps=25)
