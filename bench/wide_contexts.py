"""The slow first masks of a builtin GBNF workload, with the wide splits each one made.

Replays each document of a workload (``c``, ``json`` or ``arithmetic``: the grammar of
``src/gbnfkit/grammar/builtins`` and the documents of ``bench/workloads``) as
``bench/masks.py``'s ``first`` mode does: the grammar compiled fresh for every document
through one ``GrammarCompiler`` whose cache is cleared first.  Every mask that takes at
least ``--min-ms`` CPU milliseconds is listed with the text before it, the CPU time of the
context splits it made, and each wide split (``CompiledGrammar._wide_split``: a numpy
pass over the trie, or the part of it under some first bytes) with its time and the
rules of its context's top frames, innermost first (``ws-star49/if-stmt``: the loop of
``ws`` where ``if-stmt`` calls it).  Then the wide splits' share of the mask time and
their number and time per context over the run (a context's rules name no position:
``ws-star49/stmt`` counts every place of ``stmt`` that calls ``ws``).

The times are those of the pure-Python modules (the recording wraps methods, which
mypyc-compiled classes do not allow), about 1-1.5x the compiled build's on these masks.

    PYTHONPATH=src python bench/wide_contexts.py --vocab qwen --workload c --min-ms 5
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
# the recording wraps `CompiledGrammar` methods: run gbnfkit's modules from their source
os.environ["GBNFKIT_PURE"] = "1"

import gbnfkit  # noqa: E402
from _mask_engines import Gbnfkit  # noqa: E402
from _workloads import GRAMMAR_WORKLOADS, VOCABS, grammar_workload  # noqa: E402
from gbnfkit.tokens import _compiled  # noqa: E402


class Recorder:
    """Wraps ``_split`` (the outermost call per context) and ``_wide_split``."""

    def __init__(self) -> None:
        self.splits: list[int] = []  # CPU ns of each outermost split of the mask
        self.wide: list[tuple[int, list[str]]] = []  # CPU ns, the context's top rules
        self.depth = 0
        self.split = _compiled.CompiledGrammar._split
        self.wide_split = _compiled.CompiledGrammar._wide_split

    def install(self) -> None:
        recorder = self

        def split(grammar: Any, key: Any, *args: Any, **kwargs: Any) -> Any:
            recorder.depth += 1
            t0 = time.process_time_ns()
            try:
                return recorder.split(grammar, key, *args, **kwargs)
            finally:
                recorder.depth -= 1
                if recorder.depth == 0:
                    recorder.splits.append(time.process_time_ns() - t0)

        def wide_split(grammar: Any, key: Any, canon: Any) -> Any:
            t0 = time.process_time_ns()
            result = recorder.wide_split(grammar, key, canon)
            spent = time.process_time_ns() - t0
            recorder.wide.append((spent, top_rules(grammar, key)))
            return result

        _compiled.CompiledGrammar._split = split  # type: ignore[method-assign]
        _compiled.CompiledGrammar._wide_split = wide_split  # type: ignore[method-assign]

    def clear(self) -> None:
        self.splits.clear()
        self.wide.clear()


def top_rules(grammar: Any, key: Any) -> list[str]:
    """The rules of each stack's top three frames in the context ``key``, innermost first
    (rules the byte lowering added have no name: ``#N``)."""
    names = grammar.grammar.program.rule_names

    def name(position: int) -> str:
        rule = grammar._rule_at(position)
        return names[rule] if 0 <= rule < len(names) else f"#{rule}"

    tops = set()
    for stack in _compiled._stacks_of(key):
        frames = [frame for frame in stack[-3:] if frame >= 0]
        tops.add("/".join(name(frame) for frame in reversed(frames)))
    return sorted(tops)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vocab", default="qwen", choices=sorted(VOCABS))
    parser.add_argument("--workload", default="c", choices=GRAMMAR_WORKLOADS)
    parser.add_argument("--min-ms", type=float, default=5.0, help="list masks this slow")
    args = parser.parse_args()

    bench = VOCABS[args.vocab]()
    workload = grammar_workload(args.workload)
    if workload is None:
        sys.exit(f"no builtin grammar {args.workload!r}")
    builtin = workload.grammar if workload.grammar_kind == "builtin" else None
    engine = Gbnfkit()  # the vocabulary and compiler of bench/masks.py
    engine.setup(bench)
    bitmask = gbnfkit.allocate_bitmask(1, engine.vocab.size)
    recorder = Recorder()
    recorder.install()
    gc.collect()
    gc.freeze()

    print(f"{args.vocab}, {args.workload}: masks of at least {args.min_ms} ms (pure Python)")
    times: list[float] = []
    contexts: Counter[str] = Counter()  # wide splits per context
    spent_in: Counter[str] = Counter()  # their CPU ns
    for doc in workload.documents:
        engine.forget()  # bench/masks.py's first mode
        matcher = engine.compile_gbnf(workload.grammar, builtin).matcher()
        before = b""
        for step, token in enumerate(bench.encode(doc.text)):
            recorder.clear()
            t0 = time.process_time_ns()
            matcher.fill_bitmask(bitmask, 0)
            ms = (time.process_time_ns() - t0) / 1e6
            times.append(ms)
            for spent, tops in recorder.wide:
                context = " + ".join(tops)
                contexts[context] += 1
                spent_in[context] += spent
            if ms >= args.min_ms:
                split_ms = sum(recorder.splits) / 1e6
                print(
                    f"{ms:6.1f} ms {doc.name} step {step} after {before[-30:]!r}: "
                    f"{len(recorder.splits)} splits {split_ms:.1f} ms, "
                    f"{len(recorder.wide)} wide"
                )
                for spent, tops in recorder.wide:
                    print(f"         wide {spent / 1e6:5.1f} ms  {', '.join(tops[:4])}")
            matcher.accept_token(token)
            before += bench.tokens[token]
    total = sum(times)
    wide = sum(spent_in.values()) / 1e6
    times.sort()
    slow = sum(1 for t in times if t > 2.0)
    p99 = times[min(len(times) - 1, int(0.99 * len(times)))]
    print(f"{len(times)} masks, {total:.0f} ms: p99 {p99:.2f} ms, {slow} over 2 ms (pure Python)")
    print(f"wide splits: {sum(contexts.values())}, {wide:.0f} ms ({wide / total:.0%} of the masks)")
    print("wide splits per context over the run (count, ms), the costliest first:")
    for context, ns in spent_in.most_common(15):
        print(f"  {contexts[context]:3} {ns / 1e6:6.1f}  {context}")

if __name__ == "__main__":
    main()
