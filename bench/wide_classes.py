"""Wide splits of MaskBench schemas by the character class their context loops on.

Feeds the instances of MaskBench dev schemas ``--offset .. --offset + --limit`` token
by token through one ``GrammarCompiler`` (each schema compiled fresh, a mask before each
token up to the first one rejected: first requests, as ``bench/masks.py --modes first``),
and records every wide split walked from a state without the bottom marker
(``CompiledGrammar._sliced_walk``: a slice's rest walk, or a walk of the full trie), its
CPU time, and the class the state loops on: ``S*`` is the state most of the
state's ASCII bytes lead to (taken again from ``S*``, at most twice, while no ASCII byte
leads ``S*`` back to itself: ``L1``, ``L2``), the class the ASCII bytes that lead ``S*``
back to itself, with ``+U`` when every character of two bytes or more does too (``none``:
no such state within three bytes, as in a counted string; then the widest set of ASCII
bytes that lead the first ``S*`` to one state is named, a counted repetition's class).
Prints the walks' time by class, split into walks a slice served and walks of the full
trie, beside the total mask time (``docs/masks.md``, "Slices"; bench/issue11-journal.md, "Issue
11, 2026-11-26 morning: classes"). Pure Python: the recording replaces a method of a
class mypyc compiles.

    PYTHONPATH=src python bench/wide_classes.py --vocab qwen --limit 30 [--offset 30]
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ["GBNFKIT_PURE"] = "1"

import gbnfkit  # noqa: E402
from _workloads import (  # noqa: E402
    VOCABS,
    compiled_maskbench,
    gbnfkit_vocabulary,
    maskbench_options,
    replay_masks,
)
from gbnfkit.tokens import _compiled  # noqa: E402
from gbnfkit.tokens._bytestate import ByteAutomaton, ByteState  # noqa: E402
from gbnfkit.tokens._slices import Utf8Dfa, loops_on  # noqa: E402

_ASCII = (1 << 128) - 1


def _most_ascii(automaton: ByteAutomaton, state: ByteState) -> ByteState | None:
    """The state most of the ASCII bytes ``state`` accepts lead to."""
    count: Counter[ByteState] = Counter()
    for c in automaton.classes(state):
        part = c & _ASCII
        if part:
            after = automaton.step(state, (part & -part).bit_length() - 1)
            assert after is not None
            count[after] += part.bit_count()
    return count.most_common(1)[0][0] if count else None


def _ranges(bits: int) -> str:
    """ASCII bytes as a regex-like class body (``a-z0-9``...)."""
    out = []
    b = 0
    while b < 128:
        if (bits >> b) & 1:
            e = b
            while e + 1 < 128 and (bits >> (e + 1)) & 1:
                e += 1
            first, last = repr(chr(b))[1:-1], repr(chr(e))[1:-1]
            out.append(first if b == e else f"{first}-{last}")
            b = e + 1
        else:
            b += 1
    return "".join(out)


def loop_class(automaton: ByteAutomaton, root: ByteState, multibyte: Utf8Dfa) -> str:
    """The class ``root``'s context loops on, as described in the module docstring."""
    star = _most_ascii(automaton, root)
    for level in range(3):
        if star is None:
            break
        loop = 0
        for c in automaton.classes(star):
            part = c & _ASCII
            if part and automaton.step(star, (part & -part).bit_length() - 1) is star:
                loop |= part
        if loop:
            wide = loops_on(automaton, star, multibyte, 64)
            return _ranges(loop) + ("+U" if wide else "") + (f" L{level}" if level else "")
        star = _most_ascii(automaton, star)
    # no loop: name the widest set of ASCII bytes that lead the first S* to one state
    # (a counted repetition's class: each character leads to the next count's state)
    star = _most_ascii(automaton, root)
    widest = 0
    for c in automaton.classes(star) if star is not None else ():
        part = c & _ASCII
        if part.bit_count() > widest.bit_count():
            widest = part
    return "none, steps on " + _ranges(widest)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    maskbench_options(parser, 30, "classes")
    args = parser.parse_args(argv)
    bench = VOCABS[args.vocab]()
    vocab = gbnfkit_vocabulary(bench)
    compiler = gbnfkit.GrammarCompiler(vocab, cache_size=0)
    multibyte = Utf8Dfa(((0x80, 0x10FFFF),))
    # class -> [walks served by a slice, their ms, walks of the full trie, their ms]
    table: defaultdict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0, 0.0])
    aside = [0]  # CPU ns spent classifying, inside the masks' time
    original = _compiled.CompiledGrammar._sliced_walk

    def recording(self: Any, root: ByteState, first_bytes: int) -> Any:
        before = self.sliced_walks
        t0 = time.process_time_ns()
        split = original(self, root, first_bytes)
        t1 = time.process_time_ns()
        with self._lock:
            kind = loop_class(self.automaton, root, multibyte)
        row = table[kind]
        at = 0 if self.sliced_walks > before else 2
        row[at] += 1
        row[at + 1] += (t1 - t0) / 1e6
        aside[0] += time.process_time_ns() - t1
        return split

    _compiled.CompiledGrammar._sliced_walk = recording  # type: ignore[method-assign]
    gc.collect()
    gc.freeze()
    bitmask = gbnfkit.allocate_bitmask(1, vocab.size)
    masks = 0
    spent = 0
    try:
        for compiled, docs in compiled_maskbench(compiler, args.limit, args.offset):
            filled, ns = replay_masks(compiled, docs, bench.encode, bitmask)
            masks += filled
            spent += ns
    finally:
        _compiled.CompiledGrammar._sliced_walk = original  # type: ignore[method-assign]
    total = (spent - aside[0]) / 1e6
    walks = sum(row[1] + row[3] for row in table.values())
    print(
        f"{args.vocab}, MaskBench schemas {args.offset}..{args.offset + args.limit}: {masks} masks,"
        f" {total:.0f} ms CPU; wide walks from states without the bottom marker {walks:.0f} ms"
    )
    other = [row for kind, row in table.items() if not kind.startswith("none")]
    full_walks = sum(row[2] for row in other)
    full_ms = sum(row[3] for row in other)
    print(
        f"  full-trie walks whose state loops on some class: {full_walks:.0f} walks,"
        f" {full_ms:.0f} ms ({100 * full_ms / total:.1f}% of the mask time),"
        f" {sum(1 for row in other if row[2])} classes"
    )
    print("  served by a slice      | full trie              | loop class")
    ranked = sorted(table.items(), key=lambda item: -(item[1][1] + item[1][3]))
    for kind, (served, served_ms, full, full_ms) in ranked[: args.top]:
        print(
            f"  {served:5.0f} {served_ms:7.1f} ms {100 * served_ms / total:4.1f}% "
            f"| {full:5.0f} {full_ms:7.1f} ms {100 * full_ms / total:4.1f}% | {kind}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
