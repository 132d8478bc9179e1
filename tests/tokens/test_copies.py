"""Copying and pickling the token layer's objects (multiprocessing with spawn pickles them).

found by bughunt9: pickling a CompiledGrammar, GrammarCompiler, Matcher or LazyMatcher (so
a Sampler with a matcher) raised a bare TypeError (a memoryview in the vocabulary index);
in the compiled build copy.copy / copy.deepcopy of a CompiledGrammar and copy.deepcopy of
a GrammarCompiler raised TypeError too.  Now a CompiledGrammar and a GrammarCompiler
round-trip (rebuilt from what makes them: masks identical), a copy of a CompiledGrammar
is itself, and a matcher raises one ArgumentError naming what to send instead.
"""

from __future__ import annotations

import copy
import pickle
import random
from pathlib import Path

import numpy as np
import pytest
from test_masks import synthetic_vocabulary

import gbnfkit
from gbnfkit import Grammar

VOCAB = synthetic_vocabulary(seed=71)


def _same_masks(a: gbnfkit.CompiledGrammar, b: gbnfkit.CompiledGrammar, seed: int) -> None:
    """Both give the same mask at every step of one random walk."""
    rng = random.Random(seed)
    left, right = a.matcher(), b.matcher()
    for _ in range(30):
        allowed = left.allowed_token_ids()
        assert np.array_equal(allowed, right.allowed_token_ids())
        choices = [int(t) for t in allowed if int(t) not in VOCAB.eos_token_ids]
        if not choices:
            return
        token = rng.choice(choices)
        left.accept_token(token)
        right.accept_token(token)


@pytest.mark.parametrize("name", ["json", "c"])
def test_a_compiled_grammar_pickles_and_gives_the_same_masks(name: str) -> None:
    limits = gbnfkit.Limits(max_stacks=5000)
    grammar = Grammar.from_gbnf(Grammar.builtin(name).to_gbnf(), limits=limits)
    compiled = gbnfkit.compile(grammar, VOCAB)
    again = pickle.loads(pickle.dumps(compiled))
    assert isinstance(again, gbnfkit.CompiledGrammar) and again is not compiled
    assert again.grammar == grammar and again.grammar.limits == limits
    assert again.vocabulary.fingerprint == VOCAB.fingerprint
    _same_masks(compiled, again, seed=73)


def test_compiled_grammars_pickled_together_share_one_index(tmp_path: Path) -> None:
    """Each unpickled CompiledGrammar built its own vocabulary index (about 1 s of CPU and
    100 MB on Qwen's 151k tokens) even when they were pickled together from one
    compiler's; the index now pickles with them, once per pickle."""
    compiler = gbnfkit.GrammarCompiler(VOCAB, cache_dir=tmp_path)
    json_, c = compiler.compile(Grammar.builtin("json")), compiler.compile(Grammar.builtin("c"))
    first, second = pickle.loads(pickle.dumps([json_, c]))
    assert first.index is second.index and first.vocabulary is second.vocabulary
    assert first.index is not compiler._index and first.index.vocabulary is first.vocabulary
    store = first.index.store
    assert store is not None and store.directory == tmp_path
    _same_masks(json_, first, seed=83)
    _same_masks(c, second, seed=89)
    alone = pickle.loads(pickle.dumps(json_))  # another pickle: its own index
    assert alone.index is not first.index


def test_a_compiled_grammar_copies_as_itself() -> None:
    compiled = gbnfkit.compile(Grammar.builtin("json"), VOCAB)
    assert copy.copy(compiled) is compiled
    assert copy.deepcopy(compiled) is compiled
    assert copy.deepcopy([compiled, compiled]) == [compiled, compiled]


def test_a_compiler_pickles_with_its_settings(tmp_path: Path) -> None:
    compiler = gbnfkit.GrammarCompiler(VOCAB, cache_size=3, cache_dir=tmp_path)
    grammar = Grammar.builtin("json")
    compiled = compiler.compile(grammar)
    again = pickle.loads(pickle.dumps(compiler))
    assert isinstance(again, gbnfkit.GrammarCompiler)
    assert again.cache_size == 3 and again.vocabulary.fingerprint == VOCAB.fingerprint
    store = again._index.store
    assert store is not None and store.directory == tmp_path
    _same_masks(compiled, again.compile(grammar), seed=79)


def test_a_compiler_copy_shares_the_index_not_the_cache() -> None:
    compiler = gbnfkit.GrammarCompiler(VOCAB)
    first, second = Grammar.builtin("json"), Grammar.builtin("c")
    kept = compiler.compile(first)
    for other in (copy.copy(compiler), copy.deepcopy(compiler)):
        assert other is not compiler and other._index is compiler._index
        assert other.compile(first) is kept  # the compiled grammars kept are shared
        other.clear_cache()  # the copy's LRU is its own
        assert compiler.compile(first) is kept
    assert copy.copy(compiler).compile(second) is not compiler.compile(second)


def test_matchers_do_not_pickle_with_an_argument_error() -> None:
    compiled = gbnfkit.compile(Grammar.from_gbnf('root ::= "a"+ "b"'), VOCAB)
    matcher = compiled.matcher()
    matcher.accept_text("a")
    lazy = compiled.matcher([gbnfkit.Trigger.word("a")])
    sampler = gbnfkit.Sampler(gbnfkit.SamplingParams(seed=1), matcher.fork())
    for value, name in ((matcher, "a Matcher"), (lazy, "a LazyMatcher"), (sampler, "a Matcher")):
        with pytest.raises(gbnfkit.ArgumentError, match=f"{name} does not pickle.*CompiledGrammar"):
            pickle.dumps(value)
        assert copy.deepcopy(value) is not value  # copies still fork
