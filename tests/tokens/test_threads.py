"""Matchers of one compiled grammar (and grammars of one GrammarCompiler) advanced in
several threads at once, as the HTTP server's slots do: every mask equals the mask of
the same walk on a grammar compiled apart and run in one thread."""

from __future__ import annotations

import random
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
from test_masks import synthetic_vocabulary

import gbnfkit
from gbnfkit import Grammar, Vocabulary

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


@contextmanager
def _switching_often() -> Iterator[None]:
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(before)


def test_matchers_in_threads_give_the_single_threaded_masks() -> None:
    jobs = [(g, seed) for g in range(len(GRAMMARS)) for seed in range(3)]
    expected = {
        (g, seed): _walk(gbnfkit.compile(GRAMMARS[g], VOCABULARY), VOCABULARY, seed)
        for g, seed in jobs
    }
    compiler = gbnfkit.GrammarCompiler(VOCABULARY)
    shared = [gbnfkit.compile(g, VOCABULARY) for g in GRAMMARS]
    got: list[tuple[int, int, Walk]] = []
    errors: list[BaseException] = []

    def work(mine: list[tuple[int, int]], through_compiler: bool) -> None:
        try:
            for g, seed in mine:
                compiled = compiler.compile(GRAMMARS[g]) if through_compiler else shared[g]
                got.append((g, seed, _walk(compiled, VOCABULARY, seed)))
        except BaseException as exc:  # reported below
            errors.append(exc)

    # two threads on each job list (one forwards, one backwards), half through the compiler
    threads = [
        threading.Thread(target=work, args=(jobs[k % 3 :: 3][:: 1 if k < 3 else -1], k % 2 == 0))
        for k in range(6)
    ]
    with _switching_often():
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert not errors
    assert len(got) == 2 * len(jobs)
    for g, seed, walk in got:
        assert walk == expected[g, seed], (GRAMMARS[g].root, g, seed)
