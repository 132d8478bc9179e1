"""Narrow trie walks of MaskBench schemas, cold and warm: what new byte-automaton states cost.

Records every narrow walk (``walk_all`` from a context's state, or from a top frame's in a
split by top frame; the walks from the frames below are not recorded) that the first masks of
the first ``--limit`` MaskBench dev schemas make (each schema compiled through one
``GrammarCompiler``, its valid instances fed token by token, a mask before each token),
then replays the recorded walks per grammar, in the same order, in CPU time:

* ``cold``: with a fresh ``ByteAutomaton`` (every state and transition is new, as on a
  first request);
* ``warm``: the same walks again on the automaton the cold pass left (every transition
  cached: the walk's own per-node cost).

``cold - warm`` is what stepping, closing and interning new states costs. Best of
``--repeat`` passes; compare trees by running it under each tree's ``PYTHONPATH`` in turn.

    PYTHONPATH=src python bench/narrow_walks.py --vocab qwen --limit 30
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
# the recording below replaces `_compiled.walk_all`, which mypyc-compiled modules call
# directly: run gbnfkit's modules from their Python source
os.environ["GBNFKIT_PURE"] = "1"

import gbnfkit  # noqa: E402
from _workloads import compiled_maskbench, load_deepseek, load_qwen  # noqa: E402
from gbnfkit.tokens import _compiled  # noqa: E402
from gbnfkit.tokens._bytestate import ByteAutomaton  # noqa: E402
from gbnfkit.tokens._tuning import DEFAULT_TUNING  # noqa: E402
from gbnfkit.tokens._walk import walk_all  # noqa: E402

Walk = tuple[list[tuple[int, ...]], int | None, bool, Any]  # stacks, budget, top frame, slice
Walks = list[tuple[Any, Any, list[Walk]]]


def record(vocab_name: str, limit: int) -> tuple[Any, Walks]:
    """The trie and, per compiled grammar, its program, limits and narrow walks in order."""
    bench = load_qwen() if vocab_name == "qwen" else load_deepseek()
    vocab = gbnfkit.Vocabulary(
        [None if i in set(bench.special_ids) else t for i, t in enumerate(bench.tokens)],
        eos_token_ids=bench.eos_ids,
        special_token_ids=set(bench.special_ids),
    )
    compiler = gbnfkit.GrammarCompiler(vocab, cache_size=0)
    seen: dict[int, tuple[Any, Any, list[Walk]]] = {}
    keep: list[ByteAutomaton] = []  # ids stay unique while recording

    def recording(trie: Any, automaton: ByteAutomaton, root: Any, budget: int | None = None,
                  more: Callable[[int], int] | None = None, tuning: Any = DEFAULT_TUNING,
                  bottoms: list[int] | None = None, piece: Any = None,
                  loops: dict[Any, bool] | None = None) -> Any:
        entry = seen.get(id(automaton))
        if entry is None:
            keep.append(automaton)
            entry = seen[id(automaton)] = (automaton.program, automaton.limits, [])
        entry[2].append((sorted(root.stacks), budget, bottoms is not None, piece))
        return walk_all(trie, automaton, root, budget, more, tuning, bottoms, piece, loops)

    _compiled.walk_all = recording  # type: ignore[assignment]
    try:
        for compiled, docs in compiled_maskbench(compiler, limit):
            for doc in docs:
                if not doc.valid:
                    continue
                matcher = compiled.matcher()
                for token in bench.encode(doc.text):
                    matcher.allowed_token_ids()
                    matcher.accept_token(token)
    finally:
        _compiled.walk_all = walk_all
    return compiler._index.trie, list(seen.values())


def replay(trie: Any, walks: Walks, repeat: int) -> dict[str, float]:
    """Best CPU ms of the cold and warm passes over all recorded walks."""
    tuning = DEFAULT_TUNING

    def more(at: int = 0) -> int:
        return tuning.wide - tuning.short_walk

    best = {"cold": float("inf"), "warm": float("inf")}
    for _ in range(repeat):
        cold = warm = 0
        for program, limits, calls in walks:
            automaton = ByteAutomaton(program, limits)
            roots = [automaton.intern(frozenset(call[0])) for call in calls]
            loops: dict[Any, bool] = {}  # which states loop on the slice's class
            gc.collect()
            t0 = time.process_time_ns()
            for root, (_, budget, top, piece) in zip(roots, calls, strict=True):
                walk_all(trie, automaton, root, budget, more, tuning, [] if top else None,
                         piece, loops)
            t1 = time.process_time_ns()
            for root, (_, budget, top, piece) in zip(roots, calls, strict=True):
                walk_all(trie, automaton, root, budget, more, tuning, [] if top else None,
                         piece, loops)
            t2 = time.process_time_ns()
            cold += t1 - t0
            warm += t2 - t1
        best["cold"] = min(best["cold"], cold / 1e6)
        best["warm"] = min(best["warm"], warm / 1e6)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vocab", choices=["qwen", "deepseek"], default="qwen")
    parser.add_argument("--limit", type=int, default=30, help="first N MaskBench dev schemas")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    trie, walks = record(args.vocab, args.limit)
    gc.collect()
    gc.freeze()
    count = sum(len(calls) for _, _, calls in walks)
    best = replay(trie, walks, args.repeat)
    new_states = best["cold"] - best["warm"]
    per_walk = 1e3 * best["cold"] / count
    print(f"{args.vocab}, {args.limit} MaskBench schemas: {len(walks)} grammars, {count} walks")
    print(
        f"  cold {best['cold']:.0f} ms, warm {best['warm']:.0f} ms, new states (cold - warm)"
        f" {new_states:.0f} ms; per walk cold {per_walk:.0f} µs"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
