"""Memory of a server compiling many different schemas (issue 11's memory claim).

Run from the repository root:

    /work/venv/bin/python bench/server_memory.py [--vocab deepseek] [--limit 1000] [--passes 1]

One ``GrammarCompiler`` with its defaults (32 compiled grammars, 4,096 shared splits),
as ``gbnfkit serve`` has; MaskBench dev schemas in file order (``--passes`` times over
the first ``--limit``), each compiled and its first valid instance replayed (the mask
before every token). Prints the resident memory (VmRSS) over the process with the
vocabulary and compiler every 100 schemas, then the compiled grammars still alive after
a collection: a leak shows as growth from one pass to the next, or more than
``cache_size`` grammars alive. The bound it is checked against is in ``docs/masks.md``
("Memory bounds").

It also prints what Python's garbage collector pays in such a process (the vocabulary
and compiler ``gc.freeze()``d first, as ``gbnfkit serve`` does): the full collections
that came on their own during the run (count, longest pauses, CPU), and at the end the
tracked objects alive (what every full collection traverses: mostly the byte states of
the compiler's cached grammars), the time of a full collection then, and after
``clear_cache()``.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import gbnfkit  # noqa: E402
from _workloads import VOCABS, gbnfkit_vocabulary, maskbench_cases  # noqa: E402


def rss_mib() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


class FullCollections:
    """CPU time of each full collection that starts on its own (``gc.callbacks``)."""

    def __init__(self) -> None:
        self.pauses_ms: list[float] = []
        self._started = 0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if info["generation"] != 2:
            return
        if phase == "start":
            self._started = time.thread_time_ns()
        else:
            self.pauses_ms.append((time.thread_time_ns() - self._started) / 1e6)


def timed_collect() -> float:
    """CPU ms of one full collection."""
    started = time.thread_time_ns()
    gc.collect()
    return (time.thread_time_ns() - started) / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vocab", choices=sorted(VOCABS), default="deepseek")
    parser.add_argument("--limit", type=int, default=1000, help="MaskBench dev schemas a pass")
    parser.add_argument("--passes", type=int, default=1)
    args = parser.parse_args()
    bench = VOCABS[args.vocab]()
    vocabulary = gbnfkit_vocabulary(bench)
    before = rss_mib()
    compiler = gbnfkit.GrammarCompiler(vocabulary)
    base = rss_mib()
    print(f"{args.vocab} ({vocabulary.size} ids): {before:.0f} MiB with the vocabulary, "
          f"{base:.0f} MiB with the compiler")
    bitmask = gbnfkit.allocate_bitmask(1, vocabulary.size)
    gc.collect()
    gc.freeze()
    fulls = FullCollections()
    gc.callbacks.append(fulls)
    seen = compiled = masks = 0
    start = time.process_time()
    for _ in range(args.passes):
        for _, schema, docs in maskbench_cases(args.limit):
            seen += 1
            try:
                grammar = gbnfkit.Grammar.from_json_schema(schema, property_order="any")
                matcher = compiler.compile(grammar).matcher()
            except gbnfkit.GbnfkitError:
                continue
            compiled += 1
            doc = next((d for d in docs if d.valid), None)
            for token in bench.encode(doc.text) if doc is not None else ():
                matcher.fill_bitmask(bitmask, 0)
                masks += 1
                try:
                    matcher.accept_token(token)
                except gbnfkit.InputRejected:
                    break
            del matcher
            if seen % 100 == 0:
                print(f"{seen} schemas ({compiled} compiled, {masks} masks): "
                      f"+{rss_mib() - base:.0f} MiB, {time.process_time() - start:.0f} s CPU",
                      flush=True)
    gc.callbacks.remove(fulls)
    pauses = sorted(fulls.pauses_ms)
    print(f"full collections during the run: {len(pauses)}, {sum(pauses):.0f} ms CPU, "
          f"longest {', '.join(f'{ms:.0f}' for ms in pauses[:-6:-1])} ms")
    gc.collect()
    tracked = gc.get_objects()
    alive = sum(type(o).__name__ == "CompiledGrammar" for o in tracked)
    states = sum(type(o).__name__ == "ByteState" for o in tracked)
    print(f"end: +{rss_mib() - base:.0f} MiB; compiled grammars alive {alive} "
          f"(cache_size {compiler.cache_size}); tracked objects {len(tracked)} "
          f"({states} byte states), a full collection {timed_collect():.1f} ms CPU")
    del tracked
    compiler.clear_cache()
    gc.collect()
    print(f"after clear_cache(): tracked objects {len(gc.get_objects())}, "
          f"a full collection {timed_collect():.1f} ms CPU")


if __name__ == "__main__":
    main()
