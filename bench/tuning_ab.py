"""Same-process A/B of one ``Tuning`` field on MaskBench first requests (gbnfkit only).

For each MaskBench dev schema (``--limit``, ``--offset``) and its first valid instance,
the grammar is compiled for the vocabulary with tuning A and with tuning B, alternately
(A B, then B A, ... ``--reps`` times), each time with the vocabulary index's shared splits
forgotten (as ``bench/masks.py --modes first`` does before each schema), and the
instance's masks are computed token by token.  Printed: the masks' CPU time in all for
A and B (per rep) and their ratio, the accepts' (``accept_token`` between the masks)
and the ratio of both, then the schemas whose mask time moved most.

Both variants run in one process, interleaved, on the same index: on a shared machine
the run-to-run noise of ``bench/masks.py`` (its MaskBench mean moves by +-5% between
two runs of the same tree) hides changes of a few percent, while this ratio repeats to
about +-1%.  It measures one knob of ``gbnfkit.tokens._tuning.Tuning`` (internal), so
a change written behind a field can be measured before its default is chosen.

Usage::

    PYTHONPATH=src python bench/tuning_ab.py --vocab qwen --field top_frame_nodes \\
        --a 1500 --b 0 [--limit 30] [--offset 0] [--reps 2]
"""

from __future__ import annotations

import argparse
import ast
import gc
import time

import _workloads as W
import gbnfkit
from gbnfkit.tokens._index import VocabularyIndex
from gbnfkit.tokens._tuning import Tuning


def _vocabulary(name: str) -> tuple[W.BenchVocab, gbnfkit.Vocabulary]:
    bench = W.VOCABS[name]()
    kwargs: dict[str, object] = {"eos_token_ids": bench.eos_ids}
    if bench.kind == "tiktoken":
        kwargs["special_tokens"] = {bench.tokens[i].decode(): i for i in bench.special_ids}
        return bench, gbnfkit.Vocabulary.from_tiktoken(bench.path, **kwargs)  # type: ignore[arg-type]
    if bench.kind == "gguf":
        return bench, gbnfkit.Vocabulary.from_gguf(bench.path, **kwargs)  # type: ignore[arg-type]
    return bench, gbnfkit.Vocabulary.from_tokenizer_json(bench.path, **kwargs)  # type: ignore[arg-type]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vocab", default="qwen", choices=sorted(W.VOCABS))
    parser.add_argument("--field", required=True, help="a field of Tuning")
    parser.add_argument("--a", required=True, help="value A (a Python literal)")
    parser.add_argument("--b", required=True, help="value B (a Python literal)")
    parser.add_argument("--limit", type=int, default=30)
    parser.add_argument("--offset", type=int, default=0)
    parser.add_argument("--reps", type=int, default=2)
    args = parser.parse_args()
    values = (ast.literal_eval(args.a), ast.literal_eval(args.b))
    tunings = [Tuning(**{args.field: v}) for v in values]
    bench, vocabulary = _vocabulary(args.vocab)
    index = VocabularyIndex(vocabulary)
    cases = list(W.maskbench_cases(args.offset + args.limit))[args.offset :]
    bitmask = gbnfkit.allocate_bitmask(1, vocabulary.size)
    gc.collect()
    gc.freeze()
    total = [0, 0]
    accepts = [0, 0]
    per: dict[str, list[int]] = {}
    for sid, schema, docs in cases:
        try:
            grammar = gbnfkit.Grammar.from_json_schema(schema, property_order="any")
        except gbnfkit.SchemaError:
            continue
        doc = next((d for d in docs if d.valid), None)
        if doc is None:
            continue
        ids = bench.encode(doc.text)
        for rep in range(args.reps):
            for v in (0, 1) if rep % 2 == 0 else (1, 0):
                index.clear_shared()
                compiled = gbnfkit.CompiledGrammar(
                    grammar, vocabulary, index=index, tuning=tunings[v]
                )
                matcher = compiled.matcher()
                spent = accepted = 0
                for token in ids:
                    t0 = time.process_time_ns()
                    matcher.fill_bitmask(bitmask, 0)
                    t1 = time.process_time_ns()
                    ok = matcher.accept_token(token)
                    accepted += time.process_time_ns() - t1
                    spent += t1 - t0
                    if not ok:
                        break
                total[v] += spent
                accepts[v] += accepted
                per.setdefault(sid, [0, 0])[v] += spent
    reps = args.reps
    print(
        f"{args.vocab}, MaskBench {args.offset}-{args.offset + args.limit - 1}, "
        f"{args.field}: A={values[0]!r} {total[0] / 1e6 / reps:.1f} ms, "
        f"B={values[1]!r} {total[1] / 1e6 / reps:.1f} ms, B/A {total[1] / total[0]:.3f}; "
        f"accepts {accepts[0] / 1e6 / reps:.1f} / {accepts[1] / 1e6 / reps:.1f} ms; "
        f"masks + accepts B/A {(total[1] + accepts[1]) / (total[0] + accepts[0]):.3f}"
    )
    moved = sorted(per.items(), key=lambda kv: kv[1][1] / max(kv[1][0], 1))
    for sid, (a, b) in moved[:3] + moved[-3:]:
        print(f"  {sid[:50]:50s} {a / 1e6 / reps:8.1f} {b / 1e6 / reps:8.1f}  {b / max(a, 1):.3f}")


if __name__ == "__main__":
    main()
