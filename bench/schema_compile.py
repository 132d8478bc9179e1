"""Schema compile time by stage: ``Grammar.from_json_schema`` + compile to the first mask.

For every schema of ``../shared/maskbench/dev.jsonl`` (``property_order="any"``, as the
token-level MaskBench run converts them), CPU time of each stage of what a first request
pays, one schema at a time with the compiler's shared splits forgotten before each:

* ``convert``: the JSON Schema to the converter's output (the ``json_schema_to_gbnf``
  text; in a tree that has ``gbnfkit.schema._api.convert_schema``, what
  ``Grammar.from_json_schema`` runs: the text and the notes that build its IR);
* ``parse``: to checked grammar IR (``parse_gbnf`` of the text; with ``convert_schema``,
  its ``.ir()``: the IR from the notes, and the checks);
* ``grammar``: ``Grammar(ir)`` (engine program and engine);
* ``first mask``: ``GrammarCompiler.compile`` (byte lowering) and the first bitmask;
* ``total``: the sum; p50 / p90 / p99 / max in ms over the schemas that convert;
* ``gc``: the part of ``total`` spent in garbage collections (timed by ``gc.callbacks``).

As a server does (``gbnfkit serve``), the process loads the vocabulary once, compiles every
schema through one ``GrammarCompiler`` and moves what it loaded out of the collector's
reach with ``gc.freeze()``; ``--no-freeze`` measures a process that does not (every full
collection then traverses the vocabulary's trie, about 20 ms on DeepSeek's).  ``--tail N``
lists the N slowest schemas with their stages.

With ``--trees A,B`` each source tree (a ``src`` directory) is measured in its own
process, one after the other in the same run, and the ratios B / A are printed: the way
to compare a branch with ``main``::

    python bench/schema_compile.py --trees /work/main/src,src --vocab deepseek
    python bench/schema_compile.py --limit 300 --no-mask   # no vocabulary: front end only
    python bench/schema_compile.py --check   # the IR built from the notes == the parsed text
    python bench/schema_compile.py --limit 500 --tail 20 --no-freeze
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
STAGES = ("convert", "parse", "grammar", "first mask", "total", "gc")


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    k = (len(ordered) - 1) * q / 100.0
    lo = int(k)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def measure(limit: int | None, vocab_name: str | None, freeze: bool = True) -> dict[str, Any]:
    """Per-stage times (ms) of every schema, in this process's gbnfkit."""
    import gbnfkit
    from gbnfkit import Grammar, SchemaError
    from gbnfkit.grammar import parse_gbnf
    from gbnfkit.schema import json_schema_to_gbnf

    try:
        from gbnfkit.schema._api import convert_schema
    except ImportError:  # a tree from before the IR was built without the text
        convert_schema = None
    sys.path.insert(0, str(HERE))
    from _workloads import VOCABS, maskbench_cases

    compiler = bitmask = None
    if vocab_name:
        bench_vocab = VOCABS[vocab_name]()
        vocab = gbnfkit.Vocabulary.from_tokenizer_json(
            bench_vocab.path, eos_token_ids=bench_vocab.eos_ids
        ) if bench_vocab.kind == "tokenizer_json" else gbnfkit.Vocabulary(
            [None if i in set(bench_vocab.special_ids) else t
             for i, t in enumerate(bench_vocab.tokens)],
            eos_token_ids=bench_vocab.eos_ids,
            special_token_ids=set(bench_vocab.special_ids),
        )
        compiler = gbnfkit.GrammarCompiler(vocab, cache_size=0)
        bitmask = gbnfkit.allocate_bitmask(1, vocab.size)
        compiler.compile(Grammar.from_gbnf('root ::= "x"')).matcher().fill_bitmask(bitmask, 0)
    if freeze:  # what the server does once its model and vocabulary are loaded
        gc.collect()
        gc.freeze()
    ns = time.process_time_ns
    collecting = [0, 0]  # start of the collection running, CPU time in collections

    def on_gc(phase: str, _info: dict[str, int]) -> None:
        if phase == "start":
            collecting[0] = ns()
        else:
            collecting[1] += ns() - collecting[0]

    gc.callbacks.append(on_gc)
    times: dict[str, list[float]] = {stage: [] for stage in STAGES}
    ids: list[str] = []
    refused = 0
    warnings.simplefilter("ignore")
    for sid, schema, _docs in maskbench_cases(limit):
        if compiler is not None:
            compiler.clear_cache()
        gc_before = collecting[1]
        t0 = ns()
        try:
            if convert_schema is not None:
                converted = convert_schema(schema, property_order="any")
            else:
                text = json_schema_to_gbnf(schema, property_order="any")
        except SchemaError:
            refused += 1
            continue
        t1 = ns()
        ir = converted.ir() if convert_schema is not None else parse_gbnf(text)
        t2 = ns()
        grammar = Grammar(ir)
        t3 = ns()
        if compiler is not None:
            compiler.compile(grammar).matcher().fill_bitmask(bitmask, 0)
        t4 = ns()
        spans = (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t4 - t0, collecting[1] - gc_before)
        for stage, dt in zip(STAGES, spans, strict=True):
            times[stage].append(dt / 1e6)
        ids.append(sid)
    gc.callbacks.remove(on_gc)
    return {"gbnfkit": str(Path(gbnfkit.__file__).parent), "refused": refused,
            "times": times, "ids": ids, "frozen": freeze}


def check(limit: int | None) -> None:
    """Compare ``convert_schema(...).ir()`` with ``parse_gbnf`` of its text on every
    schema (IR, rule positions, and the text with ``json_schema_to_gbnf``'s)."""
    from gbnfkit import SchemaError
    from gbnfkit.grammar import parse_gbnf
    from gbnfkit.schema import json_schema_to_gbnf
    from gbnfkit.schema._api import convert_schema

    sys.path.insert(0, str(HERE))
    from _workloads import maskbench_cases

    warnings.simplefilter("ignore")
    same = differ = refused = 0
    for sid, schema, _docs in maskbench_cases(limit):
        try:
            converted = convert_schema(schema, property_order="any")
        except SchemaError:
            refused += 1
            continue
        parsed = parse_gbnf(converted.text)
        ir = converted.ir()
        text = json_schema_to_gbnf(schema, property_order="any")
        if ir == parsed and dict(ir.positions) == dict(parsed.positions) and \
                text == converted.text:
            same += 1
        else:
            differ += 1
            print(f"  differs: {sid}")
    print(f"direct IR == parsed IR: {same} schemas, {differ} differ, {refused} refused")
    if differ:
        raise SystemExit(1)


def report(label: str, data: dict[str, Any], tail: int = 0) -> dict[str, tuple[float, float]]:
    times = data["times"]
    n = len(times["total"])
    frozen = "gc.freeze() after loading" if data["frozen"] else "not frozen"
    print(f"\n{label}: {data['gbnfkit']}  ({n} schemas, {data['refused']} refused; {frozen})")
    print(f"  {'stage':11s} {'p50':>7s} {'p90':>7s} {'p99':>7s} {'max':>7s}  (ms, CPU)")
    out = {}
    for stage in STAGES:
        v = times[stage]
        p50, p90 = _pct(v, 50), _pct(v, 90)
        out[stage] = (p50, p90)
        print(f"  {stage:11s} {p50:7.2f} {p90:7.2f} {_pct(v, 99):7.2f} {max(v or [0]):7.2f}")
    if tail:
        print(f"  the {tail} slowest (ms: {', '.join(STAGES)}):")
        slowest = sorted(range(n), key=lambda i: -times["total"][i])[:tail]
        for i in slowest:
            row = " ".join(f"{times[stage][i]:6.2f}" for stage in STAGES)
            print(f"    {data['ids'][i][:44]:44s} {row}")
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=None, help="first N dev schemas (default all)")
    ap.add_argument("--vocab", default="deepseek", help="bench vocabulary (deepseek, qwen, ...)")
    ap.add_argument("--no-mask", action="store_true", help="skip the compile to the first mask")
    ap.add_argument("--trees", default="", help="comma-separated src directories to compare")
    ap.add_argument("--check", action="store_true",
                    help="compare the directly built IR with the parsed text, no timing")
    ap.add_argument("--no-freeze", action="store_true",
                    help="do not gc.freeze() after loading the vocabulary")
    ap.add_argument("--tail", type=int, default=0, help="list the N slowest schemas")
    ap.add_argument("--json-out", default="", help=argparse.SUPPRESS)  # worker mode
    args = ap.parse_args(argv)
    vocab = None if args.no_mask else args.vocab
    if args.check:
        check(args.limit)
        return
    if args.json_out:
        Path(args.json_out).write_text(
            json.dumps(measure(args.limit, vocab, not args.no_freeze)))
        return
    print(f"schema compile by stage; load {os.getloadavg()[0]:.2f}; vocabulary {vocab}")
    if not args.trees:
        report("this tree", measure(args.limit, vocab, not args.no_freeze), args.tail)
        return
    results = []
    for tree in args.trees.split(","):
        out = Path(f"/tmp/schema_compile_{os.getpid()}_{len(results)}.json")
        cmd = [sys.executable, __file__, "--json-out", str(out), "--vocab", args.vocab]
        cmd += ["--limit", str(args.limit)] if args.limit else []
        cmd += ["--no-mask"] if args.no_mask else []
        cmd += ["--no-freeze"] if args.no_freeze else []
        env = dict(os.environ, PYTHONPATH=str(Path(tree).resolve()))
        subprocess.run(cmd, env=env, check=True)
        results.append((tree, json.loads(out.read_text())))
        out.unlink()
    figures = [report(tree, data, args.tail) for tree, data in results]
    base = figures[0]
    for (tree, _), fig in zip(results[1:], figures[1:], strict=True):
        print(f"\n  ratio {tree} / {results[0][0]} (p50, p90):")
        for stage in STAGES:
            r50 = fig[stage][0] / base[stage][0] if base[stage][0] else float("nan")
            r90 = fig[stage][1] / base[stage][1] if base[stage][1] else float("nan")
            print(f"  {stage:11s} {r50:5.2f}x {r90:5.2f}x")


if __name__ == "__main__":
    main()
