"""Wide splits of MaskBench schemas that recur across grammars, and what the fixed splits save.

Feeds the instances of MaskBench dev schemas ``--offset .. --offset + --limit`` token
by token (a mask before each token up to the first one rejected) through two
``GrammarCompiler`` of one vocabulary, each schema compiled fresh in both (first
requests, as ``bench/masks.py --modes first``), in turn and in alternating order: one
with its fixed splits emptied (as before them), one as made (``docs/masks.md``, "Fixed
splits").  Records every wide split (``CompiledGrammar._wide_split``) with its
canonical form and CPU time, and prints, for the compiler without fixed splits, the
forms that recur in two schemas or more (the rules of their frames), marking those a
fixed split has; then both compilers' mask CPU time and wide splits.  Pure Python: the
recording replaces a method of a class mypyc compiles.

    PYTHONPATH=src python bench/fixed_splits.py --vocab qwen --limit 30 [--offset 30]
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time
from bisect import bisect_right
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ["GBNFKIT_PURE"] = "1"

import gbnfkit  # noqa: E402
from _workloads import (  # noqa: E402
    VOCABS,
    gbnfkit_vocabulary,
    maskbench_cases,
    maskbench_options,
    replay_masks,
)
from gbnfkit.tokens import _compiled  # noqa: E402


def describe(compiled: Any, key: tuple[int, ...]) -> str:
    """The frames of a context key's first stack as ``rule+offset``."""
    starts, owners = _compiled._rule_starts(compiled.automaton.program.rules)
    names = compiled.grammar.program.rule_names
    out = []
    for p in key[: key.index(-2) if -2 in key else len(key)]:
        if p < 0:
            continue
        at = bisect_right(starts, p) - 1
        rule = owners[at] if owners else at
        out.append(f"{names[rule] if rule < len(names) else 'class'}+{p - starts[at]}")
    return " ".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    maskbench_options(parser, 12, "recurring forms")
    args = parser.parse_args(argv)
    bench = VOCABS[args.vocab]()
    vocab = gbnfkit_vocabulary(bench)
    with_fixed = gbnfkit.GrammarCompiler(vocab, cache_size=0)
    without = gbnfkit.GrammarCompiler(vocab, cache_size=0)
    index = without._index
    index.fixed.clear()
    index.fixed_cuts.clear()
    index.fixed_signatures.clear()
    fixed_forms = set(with_fixed._index.fixed)
    # per form (without fixed splits): the schemas it was split in, its CPU ns, splits,
    # the frames of its first key
    forms: defaultdict[Any, list[Any]] = defaultdict(lambda: [set(), 0, 0, ""])
    wide = {"without": [0, 0], "with": [0, 0]}  # splits, CPU ns
    now = ["without", 0]  # the compiler replaying, the schema
    original = _compiled.CompiledGrammar._wide_split

    def recording(self: Any, key: Any, canon: Any) -> Any:
        t0 = time.process_time_ns()
        entry = original(self, key, canon)
        spent = time.process_time_ns() - t0
        row = wide[now[0]]
        row[0] += 1
        row[1] += spent
        if now[0] == "without":
            form = forms[canon]
            form[0].add(now[1])
            form[1] += spent
            form[2] += 1
            form[3] = form[3] or describe(self, key)
        return entry

    _compiled.CompiledGrammar._wide_split = recording  # type: ignore[method-assign]
    gc.collect()
    gc.freeze()
    bitmask = gbnfkit.allocate_bitmask(1, vocab.size)
    spent = {"without": 0, "with": 0}
    compilers = {"without": without, "with": with_fixed}
    schemas = 0
    try:
        for count, (_, schema, docs) in enumerate(maskbench_cases(args.offset + args.limit)):
            if count < args.offset:
                continue
            try:
                grammar = gbnfkit.Grammar.from_json_schema(schema, property_order="any")
            except gbnfkit.SchemaError:
                continue
            schemas += 1
            order = ("without", "with") if count % 2 else ("with", "without")
            for name in order:
                now[0], now[1] = name, count
                compiler = compilers[name]
                compiler.clear_cache()
                compiled = compiler.compile(grammar)
                spent[name] += replay_masks(compiled, docs, bench.encode, bitmask)[1]
    finally:
        _compiled.CompiledGrammar._wide_split = original  # type: ignore[method-assign]
    total = spent["without"]
    recurring = {c: f for c, f in forms.items() if len(f[0]) >= 2}
    fixed = {c: f for c, f in recurring.items() if c in fixed_forms}
    print(
        f"{args.vocab}, MaskBench schemas {args.offset}..{args.offset + args.limit} "
        f"({schemas} convert), without fixed splits: mask CPU {total / 1e6:.0f} ms, "
        f"{wide['without'][0]} wide splits ({wide['without'][1] / 1e6:.0f} ms) of "
        f"{len(forms)} forms"
    )

    def share(rows: dict[Any, list[Any]]) -> str:
        ns = sum(f[1] for f in rows.values())
        return (
            f"{len(rows)} forms, {sum(f[2] for f in rows.values())} splits, "
            f"{ns / 1e6:.0f} ms ({100 * ns / max(total, 1):.1f}% of the mask time)"
        )

    print(f"  recurring in 2 schemas or more: {share(recurring)}")
    print(f"  of those, with a fixed split: {share(fixed)}")
    print("  schemas splits      ms  fixed  frames (first stack)")
    ranked = sorted(recurring.items(), key=lambda item: -item[1][1])
    for canon, (seen, ns, n, frames) in ranked[: args.top]:
        mark = "yes" if canon in fixed_forms else ""
        print(f"  {len(seen):7d} {n:6d} {ns / 1e6:7.1f}  {mark:5s}  {frames}")
    print(
        f"  mask CPU without / with fixed splits: {total / 1e6:.0f} / "
        f"{spent['with'] / 1e6:.0f} ms (ratio {spent['with'] / max(total, 1):.3f}); wide "
        f"splits {wide['without'][0]} / {wide['with'][0]}; fixed splits "
        f"{len(fixed_forms)}, cuts {len(with_fixed._index.fixed_cuts)}, "
        f"hits {with_fixed._index.fixed_hits}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
