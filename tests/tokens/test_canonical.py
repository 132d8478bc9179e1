"""Canonical forms truncated at the longest token's reach, and wide walks restricted to
the first bytes a context accepts: both must leave every split exactly as it was."""

from __future__ import annotations

import random

import numpy as np
from test_masks import _walk_compiled
from test_widesplit import _by_stepping, assert_flags_match

import gbnfkit
from gbnfkit._grammar import Grammar
from gbnfkit.tokens._byteprogram import END, TEST
from gbnfkit.tokens._bytestate import BOTTOM, ByteState
from gbnfkit.tokens._compiled import CONTEXT_DEPTH, CompiledGrammar, _group_key, _groups, _stacks_of
from gbnfkit.tokens._index import VocabularyIndex
from gbnfkit.tokens._tuning import Tuning
from gbnfkit.tokens._vecwalk import vector_walk
from gbnfkit.tokens._vocabulary import Vocabulary

LONGEST = 41  # the longest token of the vocabulary below


def _vocabulary() -> Vocabulary:
    """Single bytes, and runs of ``a`` with and without a closing ``>`` up to 41 bytes:
    whether ``a * n + >`` is allowed depends on how many ``a`` a repetition has left."""
    tokens: list[bytes | None] = [bytes([b]) for b in range(256)]
    tokens += [b"a" * n for n in range(2, LONGEST + 1)]
    tokens += [b"a" * n + b">" for n in range(1, LONGEST)]
    tokens += [b"<a", b"<aa>", b"z<", b"<>", b"ab", b"ba>"]
    tokens.append(None)  # EOS
    return Vocabulary(tokens, eos_token_ids=[len(tokens) - 1])


def _keys_along(compiled: CompiledGrammar, text: bytes) -> list[tuple[int, ...]]:
    """The context keys (default depth) of the states met while feeding ``text``."""
    automaton = compiled.automaton
    state: ByteState | None = automaton.initial
    keys: list[tuple[int, ...]] = []
    for byte in text:
        assert state is not None
        state = automaton.step(state, byte)
        assert state is not None
        for group in _groups(state.stacks):
            depth = CONTEXT_DEPTH if len(group[0]) > CONTEXT_DEPTH else 0
            keys.append(_group_key(group, depth))
    return keys


def test_counted_repetition_contexts_share_a_form_beyond_the_longest_token() -> None:
    vocabulary = _vocabulary()
    grammar = Grammar.from_gbnf('root ::= "<" [a-z]{0,90} ">" [a-z]*')
    compiled = CompiledGrammar(grammar, vocabulary)
    assert compiled.index.trie.max_depth == LONGEST
    keys = _keys_along(compiled, b"<" + b"a" * 89)
    forms: dict[object, list[tuple[int, ...]]] = {}
    for key in keys:
        form = compiled._canonical(key, 10_000)
        assert form is not None
        forms.setdefault(form, []).append(key)
    # the remaining count is part of the form only while a token can exhaust it
    assert len(keys) - len(forms) >= 89 - 2 * LONGEST
    assert len(forms) >= LONGEST
    for same in forms.values():
        splits = [compiled._wide_split(key, None) for key in same]
        first = splits[0]
        for other in splits[1:]:
            assert np.array_equal(
                first.to_words(compiled.index.nwords), other.to_words(compiled.index.nwords)
            )
            assert first.uncertain_tokens == other.uncertain_tokens
            assert first.tails == other.tails


def test_truncated_forms_keep_shared_masks_exact() -> None:
    """Every split wide and shared by truncated canonical form, between two grammars
    whose repetitions have different bounds."""
    vocabulary = _vocabulary()
    index = VocabularyIndex(vocabulary)
    tuning = Tuning(wide=0, many_first_bytes=0)
    for bound in (70, 95, 70):
        grammar = Grammar.from_gbnf(f'root ::= ("<" [a-z]{{0,{bound}}} ">")+')
        compiled = CompiledGrammar(grammar, vocabulary, index=index, tuning=tuning)
        _walk_compiled(compiled, grammar, random.Random(bound), steps=40)
    assert index.shared


def test_least_lengths_are_lower_bounds() -> None:
    """Against the least lengths found by iterating to the fixpoint."""
    vocabulary = _vocabulary()
    for name in ("json", "c", "arithmetic"):
        compiled = CompiledGrammar(Grammar.builtin(name), vocabulary)
        program = compiled.automaton.program
        inf = 10**9
        exact = [inf] * len(program.rules)
        changed = True
        while changed:
            changed = False
            for rule, alts in enumerate(program.rules):
                for start in alts:
                    total, p = 0, start
                    while program.kind[p] != END and total < inf:
                        total += 1 if program.kind[p] == TEST else exact[program.arg[p]]
                        p += 1
                    if total < exact[rule]:
                        exact[rule] = total
                        changed = True
        for rule in range(len(program.rules)):
            assert compiled._least_length(rule, 0) <= exact[rule]
        assert any(compiled._least_length(rule, 0) > 0 for rule in range(len(program.rules)))


def test_wide_walk_restricted_to_first_bytes_agrees_with_stepping() -> None:
    """Roots that accept a few first bytes far apart (the walk visits only their
    subtrees, merging a gap only when it is small), and one that holds the bottom."""
    vocabulary = _vocabulary()
    grammar = Grammar.from_gbnf('root ::= ("<" | "z" | "\\x01" | "b") [a-z<>]* | "a" "a"* ">"')
    compiled = gbnfkit.CompiledGrammar(grammar, vocabulary)
    automaton = compiled.automaton
    trie = compiled.index.trie
    roots = [automaton.initial]
    for text in (b"<", b"a", b"aa", b"b"):
        state = automaton.feed(automaton.initial, text)
        assert state is not None
        roots.append(state)
        # its contexts one frame deep: the bottom marker is met after the top frame
        for group in _groups(state.stacks):
            roots.append(automaton.intern(frozenset(_stacks_of(_group_key(group, 1)))))
    # a context whose frames may finish before any byte: every token is decided
    roots += [automaton.intern({*root.stacks, (BOTTOM,)}) for root in roots[1::2]]
    for root in roots:
        split = vector_walk(trie, automaton, root, max_tail_tokens=10**6)
        accepted, uncertain, pairs = _by_stepping(trie, automaton, root)
        assert split.accepted.tolist() == accepted
        assert split.uncertain.tolist() == uncertain
        got = list(
            zip(split.handover_positions.tolist(), split.handover_offsets.tolist(), strict=True)
        )
        assert got == pairs


def test_wide_splits_reuse_parts_by_first_byte_exactly() -> None:
    """Property names other than the known ones: contexts that differ in their first
    character class reach the same state after an ASCII byte; their wide splits reuse
    each other's parts and stay identical to whole walks, and masks stay exact."""
    from test_masks import synthetic_vocabulary

    from gbnfkit.tokens._vecwalk import vector_walk as plain

    vocabulary = synthetic_vocabulary("abcdefghijklmnopqrstuvwxyz", seed=5)
    schema = {
        "type": "object",
        "properties": {name: {"type": "string"} for name in ("alpha", "beta", "bz", "gamma")},
        "additionalProperties": {"type": "string"},
    }
    grammar = Grammar.from_json_schema(schema, property_order="any")
    tuning = Tuning(wide=0, many_first_bytes=0)
    compiled = CompiledGrammar(grammar, vocabulary, tuning=tuning)
    for seed in range(4):
        _walk_compiled(compiled, grammar, random.Random(seed), steps=25)
    assert compiled.parts_reused, "no wide split reused a part of another"
    automaton = compiled.automaton
    trie = compiled.index.trie
    roots = [automaton.intern(frozenset(_stacks_of(key))) for key in compiled._contexts]
    assert roots
    for root in roots:
        assert not root.bottom  # a context's frames are never finished before a byte
        got = compiled._walk_by_first_byte(root)
        want = plain(trie, automaton, root, tuning.max_tail_tokens)
        assert got.accepted.tolist() == want.accepted.tolist()
        assert got.uncertain.tolist() == want.uncertain.tolist()
        assert got.handover_positions.tolist() == want.handover_positions.tolist()
        assert got.handover_offsets.tolist() == want.handover_offsets.tolist()
        assert_flags_match(trie, got)  # copied span by span from the walks reused


def test_equal_forms_have_equal_signatures_and_lookups_still_find_them() -> None:
    """A context's signature, read from its key, is that of its canonical form (so
    equal forms have equal signatures and a lookup skipped for a signature no kept form
    has could not have found a split); splits kept by one grammar are still found by
    another whose contexts sit at other program positions."""
    from test_masks import synthetic_vocabulary

    from gbnfkit.tokens._forms import _form_signature, _key_signature

    vocabulary = _vocabulary()
    grammar = Grammar.from_gbnf('root ::= "<" [a-z]{0,90} ">" [a-z]*')
    compiled = CompiledGrammar(grammar, vocabulary)
    program = compiled.automaton.program
    keys = _keys_along(compiled, b"<" + b"a" * 89 + b">ab")
    by_form: dict[object, set[tuple[int, ...]]] = {}
    for key in keys:
        form = compiled._canonical(key, 10_000)
        assert form is not None
        signature = _key_signature(key, program.kind, program.arg, program.rules)
        assert signature == _form_signature(form)
        by_form.setdefault(form, set()).add(signature)
    assert all(len(signatures) == 1 for signatures in by_form.values())
    # keys that differ share forms: a signature of positions would not be shared
    assert len(set(keys)) > len(by_form)

    vocabulary = synthetic_vocabulary("abcdefghijklmnopqrstuvwxyz", seed=3)
    index = VocabularyIndex(vocabulary)
    tuning = Tuning(wide=0, many_first_bytes=0)
    schemas = [
        {"type": "object", "properties": {"x": {"type": "string"}}},
        {"type": "object", "properties": {"name": {"type": "integer"}, "y": {"type": "string"}}},
    ]
    for seed, schema in enumerate(schemas):
        grammar = Grammar.from_json_schema(schema)
        hits = index.hits
        compiled = CompiledGrammar(grammar, vocabulary, index=index, tuning=tuning)
        _walk_compiled(compiled, grammar, random.Random(seed), steps=30)
        assert sum(index.signatures.values()) == len(index.shared)
    assert index.hits > hits, "the second grammar found no split the first one kept"
    program = compiled.automaton.program
    kept = 0
    for key in compiled._contexts:
        form = compiled._canonical(key, 10_000)
        if form in index.shared:
            kept += 1
            signature = _key_signature(key, program.kind, program.arg, program.rules)
            assert index.may_share(signature)
    assert kept
    index.clear_shared()
    assert not index.signatures
