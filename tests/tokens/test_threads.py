"""Matchers of one compiled grammar (and grammars of one GrammarCompiler) advanced in
several threads at once, as the HTTP server's slots do: every mask equals the mask of
the same walk on a grammar compiled apart and run in one thread."""

from __future__ import annotations

import random
import sys
import threading

import numpy as np
import pytest
from test_masks import synthetic_vocabulary

import gbnfkit
from gbnfkit import Grammar, Limits, Vocabulary
from gbnfkit.tokens._byteprogram import lower_program
from gbnfkit.tokens._bytestate import ByteAutomaton, ByteState

VOCABULARY = synthetic_vocabulary("ABCDEFGHIJKLMNOPQRSTUVWXYZ.!?;#<>&|%", seed=7)
SCHEMA = {
    "type": "object",
    "properties": {
        "a": {"type": "string", "maxLength": 20},
        "b": {"type": "array", "items": {"type": "integer"}},
    },
    "required": ["a"],
}
GRAMMARS = [Grammar.builtin(n) for n in ("json", "c", "arithmetic")] + [
    Grammar.from_json_schema(SCHEMA)
]
Walk = list[object]  # masks (bytes) and the tokens taken after them


def _walk(compiled: gbnfkit.CompiledGrammar, vocabulary: Vocabulary, seed: int) -> Walk:
    rng = random.Random(seed)
    matcher = compiled.matcher()
    bitmask = gbnfkit.allocate_bitmask(1, vocabulary.size)
    out: Walk = []
    for _ in range(20):
        matcher.fill_bitmask(bitmask)
        out.append(bitmask.tobytes())
        bits = np.unpackbits(bitmask.view(np.uint8), bitorder="little")[: vocabulary.size]
        choices = [int(i) for i in np.flatnonzero(bits) if i not in vocabulary.eos_token_ids]
        if not choices:
            break
        token = rng.choice(choices)
        matcher.accept_token(token)
        out.append(token)
    return out


def _run_switching_often(threads: list[threading.Thread]) -> None:
    """Start ``threads`` and wait for them, with the interpreter switching between
    threads as often as it can (so their steps interleave)."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(before)


@pytest.mark.parametrize("cached_states", [None, 40])
def test_matchers_in_threads_give_the_single_threaded_masks(cached_states: int | None) -> None:
    """``cached_states``: a bound on each grammar's byte states small enough that the
    intern table is cleared again and again while other threads read transition
    caches (which hold state numbers: ``tokens/_bytestate.py``'s docstring)."""
    grammars = GRAMMARS
    if cached_states is not None:
        limits = Limits(max_cached_states=cached_states)
        grammars = [Grammar.from_gbnf(g.to_gbnf(), g.root, limits=limits) for g in GRAMMARS]
    jobs = [(g, seed) for g in range(len(grammars)) for seed in range(3)]
    expected = {
        (g, seed): _walk(gbnfkit.compile(GRAMMARS[g], VOCABULARY), VOCABULARY, seed)
        for g, seed in jobs
    }
    compiler = gbnfkit.GrammarCompiler(VOCABULARY)
    shared = [gbnfkit.compile(g, VOCABULARY) for g in grammars]
    got: list[tuple[int, int, Walk]] = []
    errors: list[BaseException] = []

    def work(mine: list[tuple[int, int]], through_compiler: bool) -> None:
        try:
            for g, seed in mine:
                compiled = compiler.compile(grammars[g]) if through_compiler else shared[g]
                got.append((g, seed, _walk(compiled, VOCABULARY, seed)))
        except BaseException as exc:  # reported below
            errors.append(exc)

    # two threads on each job list (one forwards, one backwards), half through the compiler
    threads = [
        threading.Thread(target=work, args=(jobs[k % 3 :: 3][:: 1 if k < 3 else -1], k % 2 == 0))
        for k in range(6)
    ]
    _run_switching_often(threads)
    assert not errors
    assert len(got) == 2 * len(jobs)
    for g, seed, walk in got:
        assert walk == expected[g, seed], (grammars[g].root, g, seed)


def test_one_automaton_stepped_in_threads_while_its_table_is_cleared() -> None:
    """Threads stepping one byte automaton whose intern table (16 states) is cleared
    again and again: every step gives the stacks a lone automaton gives.  Transition
    caches hold state numbers, read with no lock while other threads clear the table
    and number new states (``tokens/_bytestate.py``'s docstring: numbers are given once,
    a number no longer held is a miss).  With numbers given again from 0 after a clear
    (the fifteenth pass's reverted version), 16 runs of 16 went wrong here, pure."""
    grammar = Grammar.builtin("json")
    program = lower_program(grammar.program, grammar.limits)
    texts = [
        b'{"a": [1, -2.5e3, "x\\n"], "b": {}}',
        b'[true, false, null, "\\u00e9", 0.5]',
        b'{"key": {"nested": [1, 2, {"x": "yz"}]}, "n": -0}',
        b'"abc\\"def"',
        b"[[[[]]], {}]",
    ]
    alone = ByteAutomaton(program)
    expected: dict[tuple[bytes, int], frozenset[tuple[int, ...]] | None] = {}
    for text in texts:
        state: ByteState | None = alone.initial
        for k, byte in enumerate(text):
            assert state is not None
            state = alone.step(state, byte)
            expected[text, k] = frozenset(state.stacks) if state is not None else None
    shared = ByteAutomaton(program, Limits(max_cached_states=16))
    wrong: list[object] = []

    def work(k: int) -> None:
        try:
            for _ in range(60):
                for text in texts[k:] + texts[:k]:
                    state: ByteState | None = shared.initial
                    for j, byte in enumerate(text):
                        assert state is not None
                        state = shared.step(state, byte)
                        got = frozenset(state.stacks) if state is not None else None
                        if got != expected[text, j]:
                            wrong.append((text, j))
                            return
        except BaseException as exc:  # reported below
            wrong.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    _run_switching_often(threads)
    assert not wrong
    assert shared.numbering.base > 10 * 16  # numbers given past ten full tables
