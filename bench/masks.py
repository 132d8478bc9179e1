"""Token-mask benchmark: gbnfkit against llguidance and XGrammar, in one process.

Every engine replays the same token sequences over the same vocabulary: for each token it
computes the full allowed-token bitmask (timed), checks that the true next token is allowed
(a false reject is printed at once), then accepts the token; at the end of a document it
checks that an end-of-sequence token is allowed. Workloads: the ``json``, ``arithmetic`` and
``c`` grammars on the documents in ``bench/workloads/``, and the MaskBench development set
(``../shared/maskbench/dev.jsonl``).

    python bench/masks.py --vocab qwen
    python bench/masks.py --vocab all --maskbench-limit 100
    python bench/masks.py --engines gbnfkit --workloads json,arithmetic

Peers are optional (``bench/requirements-peers.txt``); missing ones are named and skipped.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import itertools
import json
import math
import os
import platform
import resource
import sys
import time
import traceback
from array import array
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _mask_engines import PEERS, Engine, Gbnfkit, Unsupported, installed  # noqa: E402
from _workloads import (  # noqa: E402
    GRAMMAR_WORKLOADS,
    VOCABS,
    BenchVocab,
    Document,
    Workload,
    grammar_workload,
    json_workload,
    maskbench_cases,
)

WARMUP_GBNF = 'root ::= "x"'
# first: every grammar (every document's request) compiled fresh, with what the engine shares
#   between grammars (gbnfkit's per-vocabulary splits, XGrammar's compile cache) forgotten;
# shared: the same, but what earlier grammars of the run left is kept;
# steady: one compile, every document replayed once unmeasured, then measured.
MODES = ("first", "shared", "steady")
SLOW_NS = 10_000_000  # masks slower than 10 ms are listed (the slowest few per workload)


class Clock:
    """What masks and compiles are timed with (``--clock``).

    ``cpu`` (default): CPU time of this process (all its threads), which other jobs on
    a shared machine do not inflate; ``wall``: ``perf_counter``.  Reading the CPU clock
    is a system call (about 0.5 µs); its median cost, measured at start, is taken off
    every mask time.
    """

    ns = staticmethod(time.process_time_ns)
    overhead_ns = 0

    @classmethod
    def use(cls, name: str) -> None:
        cls.ns = staticmethod(time.process_time_ns if name == "cpu" else time.perf_counter_ns)
        gaps = []
        for _ in range(2001):
            t0 = cls.ns()
            gaps.append(cls.ns() - t0)
        cls.overhead_ns = sorted(gaps)[len(gaps) // 2]

    @classmethod
    def seconds(cls) -> float:
        return cls.ns() / 1e9


class GcClock:
    """Time spent in Python's garbage collector, read through ``gc.callbacks``.

    ``total_ns`` grows by each collection's duration (on ``Clock``) when it ends,
    ``collections[g]`` counts the collections of generation ``g`` and ``gen_ns[g]`` their
    time; ``replay`` reads them around each mask, so a mask's time can be split into
    work and collector pauses."""

    total_ns = 0
    collections = [0, 0, 0]
    gen_ns = [0, 0, 0]
    _started = 0
    # gc.collect() before each compile (off with --no-collect: a server never collects
    # by hand, so what a dropped grammar leaves to the collector lands in later masks)
    collect_before_compile = True

    @classmethod
    def callback(cls, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            cls._started = Clock.ns()
        else:
            took = Clock.ns() - cls._started
            cls.total_ns += took
            cls.collections[info["generation"]] += 1
            cls.gen_ns[info["generation"]] += took

    @classmethod
    def install(cls) -> None:
        if cls.callback not in gc.callbacks:
            gc.callbacks.append(cls.callback)


# --------------------------------------------------------------------------- results


@dataclass
class Result:
    """Figures of one engine on one workload and vocabulary."""

    engine: str
    workload: str
    mode: str = "first"
    compile_s: list[float] = field(default_factory=list)
    ttfm_s: list[float] = field(default_factory=list)
    # machine integers, not Python lists: a list of 500k ints is 500k objects that every
    # full garbage collection of the process visits (~10 ms), which would land in masks
    mask_ns: array[int] = field(default_factory=lambda: array("q"))
    accept_ns: array[int] = field(default_factory=lambda: array("q"))
    false_rejects: list[str] = field(default_factory=list)
    eos_missing: list[str] = field(default_factory=list)
    accept_mismatch: list[str] = field(default_factory=list)
    crashes: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    false_accepts: list[str] = field(default_factory=list)
    valid_total: int = 0
    valid_passed: int = 0
    invalid_total: int = 0
    invalid_caught: int = 0
    schemas_passed: int = 0
    schemas_total: int = 0
    rss_peak_kb: int = 0
    rss_growth_kb: int = 0
    rss_workload_kb: int = 0  # resident growth over compile and replay
    sampled: str = ""
    # (mask ns, document, step, the 8 tokens before, collector ns inside that mask)
    slow: list[tuple[int, str, int, list[int], int]] = field(default_factory=list)
    gc_ns: int = 0  # collector time inside the timed masks (GcClock)
    gc_collections: list[int] = field(default_factory=lambda: [0, 0, 0])
    gc_gen_ns: list[int] = field(default_factory=lambda: [0, 0, 0])  # time by generation
    digests: dict[tuple[int, int], bytes] = field(default_factory=dict)

    def stats(self) -> dict[str, float]:
        if not self.mask_ns:
            return {}
        us = np.asarray(self.mask_ns, dtype=np.float64) / 1000.0
        out = {
            "p50": float(np.percentile(us, 50)),
            "p75": float(np.percentile(us, 75)),
            "p99": float(np.percentile(us, 99)),
            "mean": float(us.mean()),
            "max": float(us.max()),
        }
        if self.accept_ns:
            out["accept_mean"] = float(np.mean(self.accept_ns)) / 1000.0
        return out


def _rss_kb() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * (os.sysconf("SC_PAGE_SIZE") // 1024)


def _maxrss_kb() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load {one:.2f} {five:.2f} {fifteen:.2f}"


def _tok_repr(vocab: BenchVocab, tok: int) -> str:
    return f"{tok} {vocab.tokens[tok]!r}"


def _allowed(bitmask: np.ndarray, tok: int) -> bool:
    return bool((int(bitmask[0, tok >> 5]) >> (tok & 31)) & 1)


def _digest(bitmask: np.ndarray, size: int) -> bytes:
    """Hash of the mask bits of ids below `size` (engines differ on the padding bits)."""
    row = bitmask[0].copy()
    if size % 32:
        row[-1] &= np.int32(np.uint32((1 << (size % 32)) - 1).view(np.int32))
    return hashlib.blake2b(row.tobytes(), digest_size=12).digest()


def _any_allowed(bitmask: np.ndarray, toks: Iterable[int]) -> bool:
    return any(_allowed(bitmask, t) for t in toks)


# --------------------------------------------------------------------------- replay


def replay(
    engine: Engine,
    compiled: Any,
    doc: Document,
    ids: list[int],
    vocab: BenchVocab,
    res: Result,
    *,
    doc_index: int,
    first_started: float | None,
    digest: bool,
    check_is_allowed: bool,
) -> None:
    """Replay one document; `first_started` is set when this is the grammar's first mask."""
    bitmask = np.zeros((1, (vocab.size + 31) // 32), dtype=np.int32)
    where = f"{engine.name} {res.workload} {doc.name}"
    try:
        matcher = engine.matcher(compiled)
        for step, tok in enumerate(ids):
            gc0, g0, g1, g2 = GcClock.total_ns, *GcClock.collections
            n0, n1, n2 = GcClock.gen_ns
            t0 = Clock.ns()
            engine.fill(matcher, bitmask)
            dt = max(0, Clock.ns() - t0 - Clock.overhead_ns)
            res.mask_ns.append(dt)
            in_gc = GcClock.total_ns - gc0
            if in_gc:
                res.gc_ns += in_gc
                for g, before, ns in ((0, g0, n0), (1, g1, n1), (2, g2, n2)):
                    res.gc_collections[g] += GcClock.collections[g] - before
                    res.gc_gen_ns[g] += GcClock.gen_ns[g] - ns
            if dt > SLOW_NS and len(res.slow) < 1000:
                res.slow.append((dt, doc.name, step, ids[max(0, step - 8):step], in_gc))
            if first_started is not None:
                res.ttfm_s.append(Clock.seconds() - first_started)
                first_started = None
            if digest:
                res.digests[(doc_index, step)] = _digest(bitmask, vocab.size)
            ok = _allowed(bitmask, tok)
            if check_is_allowed and ok != bool(matcher.is_allowed(tok)):
                res.accept_mismatch.append(
                    f"{where} step {step}: mask bit {ok} but is_allowed() {not ok} "
                    f"for {_tok_repr(vocab, tok)}"
                )
            if not ok:
                if doc.valid:
                    text = b"".join(vocab.tokens[i] for i in ids[:step])[-40:]
                    msg = (f"{where} step {step}/{len(ids)}: token {_tok_repr(vocab, tok)} "
                           f"not allowed after ...{text!r}")
                    res.false_rejects.append(msg)
                    print(f"  !! FALSE REJECT {msg}", flush=True)
                else:
                    res.invalid_caught += 1
                return
            t0 = Clock.ns()
            accepted = engine.accept(matcher, tok)
            res.accept_ns.append(Clock.ns() - t0)
            if not accepted:
                res.accept_mismatch.append(
                    f"{where} step {step}: mask allowed {_tok_repr(vocab, tok)} "
                    "but accept refused it"
                )
                print(f"  !! ACCEPT MISMATCH {res.accept_mismatch[-1]}", flush=True)
                return
        engine.fill(matcher, bitmask)
        if doc.valid:
            if _any_allowed(bitmask, engine.eos_ids()):
                res.valid_passed += 1
            else:
                msg = f"{where}: no end-of-sequence token allowed after the whole document"
                res.eos_missing.append(msg)
                print(f"  !! EOS MISSING {msg}", flush=True)
        elif _any_allowed(bitmask, engine.eos_ids()):
            res.false_accepts.append(f"{where}: invalid instance accepted")
        else:
            res.invalid_caught += 1
    except Exception as exc:  # a crash of the engine is a finding, not the end of the run
        msg = f"{where}: {type(exc).__name__}: {exc}".splitlines()[0][:300]
        res.crashes.append(msg)
        print(f"  !! CRASH {msg}", flush=True)
        if engine.name == "gbnfkit":
            traceback.print_exc(limit=4)


def timed_compile(engine: Engine, res: Result, fn: Any, *args: Any) -> tuple[Any, float]:
    """(compiled, start time) with the compile time and our RSS growth recorded."""
    if GcClock.collect_before_compile:
        gc.collect()
    peak0, rss0 = _maxrss_kb(), _rss_kb()
    started = Clock.seconds()
    compiled = fn(*args)
    res.compile_s.append(Clock.seconds() - started)
    res.rss_peak_kb = max(res.rss_peak_kb, _maxrss_kb() - peak0)
    res.rss_growth_kb = max(res.rss_growth_kb, _rss_kb() - rss0)
    return compiled, started


def _compile_or_note(
    engine: Engine, res: Result, wl: Workload
) -> tuple[Any, float] | None:
    builtin = wl.grammar if wl.grammar_kind == "builtin" else None
    try:
        return timed_compile(engine, res, engine.compile_gbnf, wl.grammar, builtin)
    except Unsupported as exc:
        res.refused.append(f"{engine.name} {wl.name}: {str(exc)[:300]}")
        print(f"  !! REFUSED {res.refused[-1]}", flush=True)
    except Exception as exc:
        res.crashes.append(f"{engine.name} {wl.name} compile: {type(exc).__name__}: {exc}")
        print(f"  !! CRASH {res.crashes[-1]}", flush=True)
    return None


def run_grammar_workload(
    engine: Engine,
    wl: Workload,
    token_ids: list[list[int]],
    vocab: BenchVocab,
    digest: bool,
    slow_ms: float,
    mode: str,
) -> tuple[Result, Any]:
    """One workload in one mode (see ``MODES``)."""
    res = Result(engine.name, wl.name, mode)
    rss0 = _rss_kb()
    compiled: Any = None
    if mode == "steady":
        got = _compile_or_note(engine, res, wl)
        if got is None:
            return res, None
        compiled = got[0]
        scratch = Result(engine.name, wl.name, "warm-up")
        for i, (doc, ids) in enumerate(zip(wl.documents, token_ids, strict=True)):
            replay(engine, compiled, doc, ids, vocab, scratch, doc_index=i, first_started=None,
                   digest=False, check_is_allowed=False)
    for i, (doc, ids) in enumerate(zip(wl.documents, token_ids, strict=True)):
        if engine.name != "gbnfkit" and i >= 2 and slow_ms and res.mask_ns and (
            np.mean(res.mask_ns) > slow_ms * 1e6
        ):
            res.sampled = f"{i} of {len(wl.documents)} documents (mean mask > {slow_ms} ms)"
            print(f"  note: {engine.name} {wl.name} {mode}: replayed {res.sampled}", flush=True)
            break
        started = None
        if mode != "steady":
            # the last document's grammar is let go first: freed when its last reference
            # goes, it would otherwise be freed while this one's first mask is timed
            compiled = got = None
            if mode == "first":
                engine.forget()
            got = _compile_or_note(engine, res, wl)
            if got is None:
                return res, None
            compiled, started = got
        res.valid_total += 1
        replay(engine, compiled, doc, ids, vocab, res, doc_index=i, first_started=started,
               digest=digest and mode == "steady", check_is_allowed=engine.name == "gbnfkit")
    res.rss_workload_kb = _rss_kb() - rss0
    return res, compiled


def run_maskbench(
    engine: Engine,
    cases: list[tuple[str, dict[str, Any], list[Document], list[list[int]]]],
    vocab: BenchVocab,
    generic: Workload | None,
    mode: str,
) -> Result:
    """Per-schema compile and replay; with `generic`, one JSON grammar for every instance.

    ``first``: the engine forgets what it shared between grammars before each schema;
    ``shared``: what earlier schemas left is kept; ``steady``: each schema's instances are
    replayed once unmeasured, then measured.
    """
    res = Result(engine.name, "maskbench", mode)
    shared_compiled = None
    if generic is not None:
        builtin = generic.grammar if generic.grammar_kind == "builtin" else None
        try:
            shared_compiled, _ = timed_compile(
                engine, res, engine.compile_gbnf, generic.grammar, builtin
            )
        except Exception as exc:
            res.crashes.append(f"{engine.name} maskbench generic compile: {exc}")
            return res
    for k, (sid, schema, docs, ids_list) in enumerate(cases):
        res.schemas_total += 1
        if shared_compiled is not None:
            compiled, started = shared_compiled, None
        else:
            if mode == "first":
                engine.forget()
            try:
                compiled, started = timed_compile(engine, res, engine.compile_schema, schema)
            except Unsupported as exc:
                res.refused.append(f"{sid}: {str(exc)[:200]}")
                continue
            except Exception as exc:
                msg = f"{engine.name} {sid} compile: {type(exc).__name__}: {exc}"
                res.crashes.append(msg.splitlines()[0][:300])
                print(f"  !! CRASH {res.crashes[-1]}", flush=True)
                continue
        if mode == "steady":
            scratch = Result(engine.name, "maskbench", "warm-up")
            for i, (doc, ids) in enumerate(zip(docs, ids_list, strict=True)):
                replay(engine, compiled, doc, ids, vocab, scratch, doc_index=i,
                       first_started=None, digest=False, check_is_allowed=False)
            started = None
        before = (len(res.false_rejects), len(res.eos_missing), len(res.false_accepts),
                  len(res.crashes), len(res.accept_mismatch))
        for i, (doc, ids) in enumerate(zip(docs, ids_list, strict=True)):
            if doc.valid:
                res.valid_total += 1
            else:
                res.invalid_total += 1
            replay(engine, compiled, doc, ids, vocab, res, doc_index=k * 1000 + i,
                   first_started=started if i == 0 else None, digest=False,
                   check_is_allowed=False)
        after = (len(res.false_rejects), len(res.eos_missing), len(res.false_accepts),
                 len(res.crashes), len(res.accept_mismatch))
        if before == after:
            res.schemas_passed += 1
        del compiled
    return res


# --------------------------------------------------------------------------- comparison


def mask_disagreements(
    ours: Result, peer: Result, limit: int = 3
) -> tuple[int, int, list[tuple[int, int]]]:
    """(steps compared, steps whose masks differ, first differing (doc, step) keys)."""
    common = [k for k in ours.digests if k in peer.digests]
    diff = [k for k in common if ours.digests[k] != peer.digests[k]]
    return len(common), len(diff), sorted(diff)[:limit]


def mask_at(engine: Engine, compiled: Any, ids: list[int], step: int, size: int) -> np.ndarray:
    bitmask = np.zeros((1, (size + 31) // 32), dtype=np.int32)
    matcher = engine.matcher(compiled)
    for tok in ids[:step]:
        engine.accept(matcher, tok)
    engine.fill(matcher, bitmask)
    return bitmask


def allowed_set(bitmask: np.ndarray, size: int) -> set[int]:
    bits = np.unpackbits(bitmask[0].view(np.uint8), bitorder="little")[:size]
    return set(np.flatnonzero(bits).tolist())


# --------------------------------------------------------------------------- printing


def fmt(x: float | None, digits: int = 1) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return f"{x:,.{digits}f}"


def ratio(a: float | None, b: float | None) -> str:
    if not a or not b:
        return "-"
    return f"{a / b:.2f}x"


def print_table(results: list[Result]) -> None:
    head = (f"  {'workload':<11}{'mode':<7}{'engine':<11}{'compile ms':>11}{'TTFM ms':>10}"
            f"{'p50 µs':>9}{'p99 µs':>9}{'mean µs':>9}{'max µs':>10}{'acc µs':>8}{'tokens':>8}"
            f"{'f.rej':>6}{'eos':>5}{'crash':>6}")
    print(head)
    for r in results:
        s = r.stats()
        comp = np.median(r.compile_s) * 1000 if r.compile_s else None
        ttfm = np.median(r.ttfm_s) * 1000 if r.ttfm_s else None
        print(f"  {r.workload:<11}{r.mode:<7}{r.engine:<11}{fmt(comp):>11}{fmt(ttfm):>10}"
              f"{fmt(s.get('p50')):>9}{fmt(s.get('p99')):>9}{fmt(s.get('mean')):>9}"
              f"{fmt(s.get('max'), 0):>10}{fmt(s.get('accept_mean')):>8}"
              f"{str(len(r.mask_ns)) + ('*' if r.sampled else ''):>8}"
              f"{len(r.false_rejects):>6}{len(r.eos_missing):>5}"
              f"{len(r.crashes) + len(r.accept_mismatch):>6}")
    for r in results:
        if r.sampled:
            print(f"  * {r.engine} {r.workload}: replayed {r.sampled}")


def print_maskbench(r: Result, mode: str) -> None:
    s = r.stats()
    comp = np.asarray(r.compile_s) * 1000 if r.compile_s else None
    ttfm = np.asarray(r.ttfm_s) * 1000 if r.ttfm_s else None
    print(f"  maskbench {r.engine} {r.mode} ({mode}): schemas {r.schemas_total}, "
          f"refused {len(r.refused)}, crashes {len(r.crashes)}, "
          f"all tests right {r.schemas_passed}/{r.schemas_total}; valid instances "
          f"{r.valid_passed}/{r.valid_total} (false rejects {len(r.false_rejects)}, "
          f"EOS missing {len(r.eos_missing)}); invalid caught "
          f"{r.invalid_caught}/{r.invalid_total} (false accepts {len(r.false_accepts)})")
    for line in r.refused[:3] if r.engine == "gbnfkit" else []:
        print(f"    refused: {line}")
    if comp is not None:
        print(f"    compile p50 / p90 / p99 {fmt(float(np.percentile(comp, 50)), 2)} / "
              f"{fmt(float(np.percentile(comp, 90)), 2)} / "
              f"{fmt(float(np.percentile(comp, 99)), 2)} ms")
    if ttfm is not None:
        print(f"    schema to first mask p50 / p90 / p99 "
              f"{fmt(float(np.percentile(ttfm, 50)), 2)} / "
              f"{fmt(float(np.percentile(ttfm, 90)), 2)} / "
              f"{fmt(float(np.percentile(ttfm, 99)), 2)} ms")
    if s:
        print(f"    mask p50 / p75 / p99 / mean / max {fmt(s['p50'])} / {fmt(s['p75'])} / "
              f"{fmt(s['p99'])} / {fmt(s['mean'])} / {fmt(s['max'], 0)} µs over "
              f"{len(r.mask_ns)} tokens")
        total = sum(r.mask_ns)
        print(f"    garbage collector inside masks: {r.gc_ns / 1e6:,.1f} ms of "
              f"{total / 1e6:,.1f} ms ({100 * r.gc_ns / max(1, total):.1f}%), collections "
              f"by generation {' / '.join(str(c) for c in r.gc_collections)} "
              f"({' / '.join(f'{ns / 1e6:,.0f}' for ns in r.gc_gen_ns)} ms)")


def geomean(values: list[float]) -> float:
    return float(math.exp(sum(math.log(v) for v in values) / len(values)))


# --------------------------------------------------------------------------- main


def make_engines(names: list[str], cache_dir: str | None) -> tuple[list[Engine], list[str]]:
    engines: list[Engine] = []
    notes: list[str] = []
    if "gbnfkit" in names:
        missing = Gbnfkit.missing_api()
        if missing:
            notes.append(f"gbnfkit skipped: its token-mask API is not there yet "
                         f"(missing {', '.join(missing)})")
        else:
            engines.append(Gbnfkit(cache_dir))
    for name in names:
        if name in PEERS:
            module, cls = PEERS[name]
            if installed(module):
                engines.append(cls())
            else:
                notes.append(f"{name} not installed (pip install -r bench/requirements-peers.txt)")
    return engines, notes


def machine_header() -> str:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        model = platform.processor()
    return (f"machine: nproc {os.cpu_count()}, {model}, python {platform.python_version()}, "
            f"{_load()}; gbnfkit at {_git_head()}")


def _git_head() -> str:
    """The repository's commit, and whether src/ has uncommitted changes (best effort)."""
    import subprocess

    repo = Path(__file__).resolve().parents[1]
    try:
        head = subprocess.run(["git", "-C", str(repo), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "--", "src"],
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown commit"
    return f"commit {head}" + (" + uncommitted changes in src/" if dirty else "")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--vocab", default="qwen", choices=[*VOCABS, "all"])
    p.add_argument("--engines", default="gbnfkit,llguidance,xgrammar",
                   help="comma-separated subset of gbnfkit,llguidance,xgrammar")
    p.add_argument("--workloads", default="json,arithmetic,c,maskbench",
                   help="comma-separated subset of json,arithmetic,c,maskbench")
    p.add_argument("--max-docs", type=int, default=None,
                   help="documents per grammar workload (default: all)")
    p.add_argument("--maskbench-limit", type=int, default=30,
                   help="first N schemas of the MaskBench dev set (default 30)")
    p.add_argument("--maskbench-all", action="store_true", help="all 1,500 schemas")
    p.add_argument("--maskbench-offset", type=int, default=0,
                   help="skip the first N schemas (e.g. to warm a --cache-dir on others)")
    p.add_argument("--slow-list", type=int, default=3,
                   help=f"how many of gbnfkit's masks over {SLOW_NS // 1_000_000} ms to list "
                        "per workload, slowest first, each with the collector time inside it "
                        "(default 3; the JSON summary keeps up to 1,000)")
    p.add_argument("--slow-peer-ms", type=float, default=5.0,
                   help="a peer whose mean mask time exceeds this replays only the first 2 "
                        "documents of a workload (default 5 ms; 0 = always all)")
    p.add_argument("--modes", default=",".join(MODES),
                   help="comma-separated subset of first,shared,steady (see MODES)")
    p.add_argument("--cache-dir", default=None,
                   help="gbnfkit: GrammarCompiler(cache_dir=...), context splits kept on disk "
                        "(default: none; the 'first' mode then forgets everything shared)")
    p.add_argument("--clock", default="cpu", choices=["cpu", "wall"],
                   help="time masks and compiles by this process's CPU time (default; "
                        "robust on a shared machine) or by wall time")
    p.add_argument("--no-gc-freeze", action="store_true",
                   help="do not gc.freeze() the harness's inputs, nor each engine's loaded "
                        "vocabulary, before timing")
    p.add_argument("--no-collect", action="store_true",
                   help="do not gc.collect() before each compile, as a server does not: "
                        "what a dropped grammar leaves to the collector is then paid "
                        "inside later masks")
    p.add_argument("--no-compare", action="store_true",
                   help="do not compare our masks with the peers' bit for bit")
    p.add_argument("--json-out", type=Path, help="also write the figures as JSON here")
    return p.parse_args(argv)


def grammar_workloads(selected: set[str], max_docs: int | None) -> tuple[list[Workload], list[str]]:
    out: list[Workload] = []
    notes: list[str] = []
    for name in GRAMMAR_WORKLOADS:
        if name in selected:
            wl = grammar_workload(name)
            if wl is None:
                notes.append(f"workload {name} skipped: builtin grammar {name}.gbnf not there yet")
            else:
                out.append(wl)
    for wl in out:
        if max_docs is not None:
            wl.documents = wl.documents[:max_docs]
        if wl.note:
            notes.append(f"workload {wl.name}: {wl.note}")
    return out, notes


def summary_row(r: Result) -> dict[str, Any]:
    s = r.stats()
    return {
        "engine": r.engine, "workload": r.workload, "mode": r.mode,
        "tokens": len(r.mask_ns),
        "compile_ms_median": float(np.median(r.compile_s)) * 1000 if r.compile_s else None,
        "ttfm_ms_median": float(np.median(r.ttfm_s)) * 1000 if r.ttfm_s else None,
        **{f"mask_{k}_us": v for k, v in s.items()},
        "false_rejects": r.false_rejects, "eos_missing": r.eos_missing,
        "crashes": r.crashes, "accept_mismatch": r.accept_mismatch, "refused": len(r.refused),
        "valid": [r.valid_passed, r.valid_total], "invalid": [r.invalid_caught, r.invalid_total],
        "false_accepts": len(r.false_accepts), "schemas_passed": r.schemas_passed,
        "rss_peak_kb": r.rss_peak_kb, "rss_growth_kb": r.rss_growth_kb,
        "rss_workload_kb": r.rss_workload_kb, "sampled": r.sampled,
        "gc_ms": r.gc_ns / 1e6, "gc_collections": r.gc_collections,
        "gc_gen_ms": [ns / 1e6 for ns in r.gc_gen_ns],
        "slow": [[dt / 1e6, name, step, in_gc / 1e6] for dt, name, step, _, in_gc in r.slow],
    }


@dataclass
class Inputs:
    """Everything replayed on one vocabulary, tokenized once for every engine."""

    vocab: BenchVocab
    workloads: list[Workload]
    token_ids: list[list[list[int]]]
    cases: list[tuple[str, dict[str, Any], list[Document], list[list[int]]]]
    generic: Workload | None
    mb_mode: str


def tokenize(vocab: BenchVocab, docs: list[Document]) -> list[list[int]]:
    ids_list = [vocab.encode(d.text) for d in docs]
    for d, ids in zip(docs, ids_list, strict=True):
        vocab.check_tokenization(d.text, ids)
    return ids_list


def prepare(vocab: BenchVocab, args: argparse.Namespace, ours_present: bool) -> Inputs:
    selected = set(args.workloads.split(","))
    workloads, notes = grammar_workloads(selected, args.max_docs)
    for n in notes:
        print(f"  note: {n}")
    token_ids = [tokenize(vocab, wl.documents) for wl in workloads]
    for wl, ids_list in zip(workloads, token_ids, strict=True):
        print(f"  {wl.name}: {len(wl.documents)} documents, {sum(map(len, ids_list))} tokens")
    cases = []
    generic: Workload | None = None
    mb_mode = ""
    if "maskbench" in selected:
        limit = None if args.maskbench_all else args.maskbench_limit
        schema_mode = not ours_present or hasattr(_gbnfkit_grammar(), "from_json_schema")
        if not schema_mode:
            generic = json_workload()
        offset = args.maskbench_offset
        for sid, schema, docs in itertools.islice(
            maskbench_cases(None if limit is None else offset + limit), offset, None
        ):
            if generic is not None:  # a generic JSON grammar cannot reject schema violations
                docs = [d for d in docs if d.valid]
            cases.append((sid, schema, docs, tokenize(vocab, docs)))
        mb_mode = ("per-schema grammars" if schema_mode else
                   "generic json grammar on the valid instances: "
                   "gbnfkit has no Grammar.from_json_schema yet")
        print(f"  maskbench: {len(cases)} schemas, {sum(len(c[2]) for c in cases)} instances, "
              f"{sum(len(i) for c in cases for i in c[3])} tokens ({mb_mode})")
    return Inputs(vocab, workloads, token_ids, cases, generic, mb_mode)


def setup_engine(engine: Engine, vocab: BenchVocab, freeze: bool) -> str:
    """Load the vocabulary and compile a trivial grammar; a line saying how long both took.

    With ``freeze``, what the engine loaded is then ``gc.freeze()``d, as a server does
    once its model and vocabulary are loaded (``gbnfkit serve``; docs/masks.md): a full
    collection would otherwise walk the vocabulary's objects inside some mask."""
    gc.collect()
    t0 = time.perf_counter()
    engine.setup(vocab)
    setup_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    warm = engine.compile_gbnf(WARMUP_GBNF, None)
    engine.fill(engine.matcher(warm), np.zeros((1, (vocab.size + 31) // 32), np.int32))
    warm_s = time.perf_counter() - t0
    if freeze:
        gc.collect()
        gc.freeze()
    extra = f" [{engine.loader_note}]" if isinstance(engine, Gbnfkit) else ""
    return (f"{engine.name} {engine.version}: vocabulary setup {setup_s:.2f} s, "
            f"trivial grammar to first mask {warm_s * 1000:.0f} ms{extra}")


def run_engines(
    engines: list[Engine], inp: Inputs, args: argparse.Namespace, digest: bool
) -> tuple[list[Result], list[Result], dict[str, Any], list[str]]:
    results: list[Result] = []
    maskbench: list[Result] = []
    ours_compiled: dict[str, Any] = {}
    lines: list[str] = []
    for engine in engines:
        lines.append(setup_engine(engine, inp.vocab, not args.no_gc_freeze))
        print(f"  {lines[-1]}", flush=True)
        for mode in args.modes.split(","):
            for wl, ids_list in zip(inp.workloads, inp.token_ids, strict=True):
                res, compiled = run_grammar_workload(engine, wl, ids_list, inp.vocab, digest,
                                                     args.slow_peer_ms, mode)
                results.append(res)
                if isinstance(engine, Gbnfkit) and mode == "steady":
                    ours_compiled[wl.name] = compiled
                # not kept past its workload: every collection of the next workloads
                # (MaskBench's masks among them) would traverse its byte states
                del compiled
        if isinstance(engine, Gbnfkit) and any(w.name == "json" for w in inp.workloads):
            gc.collect()
            cold = engine.cold_first_mask("json")
            lines.append(f"gbnfkit one-shot gbnfkit.compile(Grammar.builtin('json')) + first "
                         f"mask, fresh vocabulary index: {cold * 1000:.0f} ms (target < 1 s)")
            print(f"  {lines[-1]}", flush=True)
        if inp.cases:
            for mode in args.modes.split(","):
                maskbench.append(
                    run_maskbench(engine, inp.cases, inp.vocab, inp.generic, mode)
                )
        if not isinstance(engine, Gbnfkit):
            engine.close()
        gc.collect()
    return results, maskbench, ours_compiled, lines


def report_ratios(
    ours: dict[tuple[str, str], Result], rows: list[Result], peers: list[str]
) -> dict[str, dict[str, float]]:
    """Per-workload ratios and, per mode, the geometric mean of the mean mask time."""
    print("\n  ratios gbnfkit / peer (mean mask, p99 mask, compile, time to first mask):")
    for peer in peers:
        for r in rows:
            key = (r.workload, r.mode)
            if r.engine != peer or key not in ours:
                continue
            o, so, sp = ours[key], ours[key].stats(), r.stats()
            print(f"    {r.workload:<11}{r.mode:<7} vs {peer:<11}"
                  f" mean {ratio(so.get('mean'), sp.get('mean'))}"
                  f"  p99 {ratio(so.get('p99'), sp.get('p99'))}"
                  f"  compile {ratio(_med(o.compile_s), _med(r.compile_s))}"
                  f"  TTFM {ratio(_med(o.ttfm_s), _med(r.ttfm_s))}")
    out: dict[str, dict[str, float]] = {}
    for mode in MODES:
        ours_n = len([r for (_, m), r in ours.items() if m == mode and r.mask_ns])
        geo: dict[str, float] = {}
        for eng in ["gbnfkit", *peers]:
            means = [r.stats()["mean"] for r in rows
                     if r.engine == eng and r.mode == mode and r.mask_ns]
            if means and len(means) == ours_n:
                geo[eng] = geomean(means)
        if not geo:
            continue
        out[mode] = geo
        parts = ", ".join(f"{k} {v:.1f} µs" for k, v in geo.items())
        print(f"  {mode}: geometric mean over workloads of the mean mask time: {parts}")
        if "gbnfkit" in geo and "llguidance" in geo:
            print(f"  {mode}: gbnfkit / llguidance (geometric mean): "
                  f"{geo['gbnfkit'] / geo['llguidance']:.2f}x")
    return out


def run_vocab(name: str, args: argparse.Namespace, engine_names: list[str]) -> dict[str, Any]:
    vocab = VOCABS[name]()
    engines, notes = make_engines(engine_names, args.cache_dir)
    ours_present = any(isinstance(e, Gbnfkit) for e in engines)
    print(f"\n== vocabulary {name}: {vocab.size:,} tokens ({vocab.kind}: {vocab.path.name})"
          f"{'; ' + vocab.note if vocab.note else ''} | {_load()}")
    for n in notes:
        print(f"  note: {n}")
    inp = prepare(vocab, args, ours_present)
    if not args.no_gc_freeze:
        # the harness's own inputs (every document's token ids, the schemas: millions of
        # objects with --maskbench-all) would be walked by every full collection of
        # Python's garbage collector, a cost of the harness, not of an engine
        gc.collect()
        gc.freeze()
    digest = ours_present and not args.no_compare and len(engines) > 1
    results, maskbench, ours_compiled, lines = run_engines(engines, inp, args, digest)

    rows = results + [r for r in maskbench if r.mask_ns]
    print(f"\n  -- {name}: figures ({_load()})")
    print_table(rows)
    for r in maskbench:
        print_maskbench(r, inp.mb_mode)
    ours = {(r.workload, r.mode): r for r in results + maskbench if r.engine == "gbnfkit"}
    peers = [e.name for e in engines if not isinstance(e, Gbnfkit)]
    summary: dict[str, Any] = {"vocab": name, "size": vocab.size, "setup": lines,
                               "maskbench_mode": inp.mb_mode,
                               "results": [summary_row(r) for r in results + maskbench]}
    if ours and peers:
        summary["geomean_us"] = report_ratios(ours, rows, peers)
    for r in results:
        if r.engine == "gbnfkit" and r.compile_s:
            print(f"  gbnfkit memory, {r.workload} {r.mode}: compile peak RSS "
                  f"+{r.rss_peak_kb / 1024:.1f} MiB, resident +{r.rss_growth_kb / 1024:.1f} "
                  f"MiB; compile and replay "
                  f"resident +{r.rss_workload_kb / 1024:.1f} MiB")
    for r in results + maskbench:
        if r.engine == "gbnfkit" and r.slow:
            print(f"  gbnfkit {r.workload} {r.mode}: {len(r.slow)} masks over "
                  f"{SLOW_NS // 1_000_000} ms; slowest:")
            for dt, doc_name, step, before, in_gc in sorted(r.slow, reverse=True)[:args.slow_list]:
                text = b"".join(vocab.tokens[t] for t in before)
                pause = f" ({in_gc / 1e6:,.1f} ms collector)" if in_gc else ""
                print(f"    {dt / 1e6:,.1f} ms{pause}  {doc_name} step {step} after ...{text!r}")
    ours_engine = next((e for e in engines if isinstance(e, Gbnfkit)), None)
    if digest and ours_engine is not None and inp.workloads:
        print("\n  masks compared bit for bit with gbnfkit's (same grammar text, same tokens):")
        for r in results:
            if r.engine == "gbnfkit" or r.mode != "steady" or (r.workload, r.mode) not in ours:
                continue
            steps, ndiff, first = mask_disagreements(ours[(r.workload, r.mode)], r)
            print(f"    {r.workload:<11} vs {r.engine:<11} {ndiff} of {steps} steps differ")
            if ndiff and ours_compiled.get(r.workload) is not None:
                show_diff(ours_engine, ours_compiled[r.workload], r, first, inp, engines)
    if ours_engine is not None:
        ours_engine.close()
    print(f"  ({_load()})")
    return summary


def _med(xs: list[float]) -> float | None:
    return float(np.median(xs)) if xs else None


def _gbnfkit_grammar() -> Any:
    import gbnfkit

    return getattr(gbnfkit, "Grammar", None)


def show_diff(
    ours: Engine,
    compiled: Any,
    peer_res: Result,
    keys: list[tuple[int, int]],
    inp: Inputs,
    engines: list[Engine],
) -> None:
    """Print which tokens differ at the first few disagreeing steps (peer recompiled)."""
    index = [w.name for w in inp.workloads].index(peer_res.workload)
    wl, ids_list, vocab = inp.workloads[index], inp.token_ids[index], inp.vocab
    peer = next(e for e in engines if e.name == peer_res.engine)
    try:
        peer.setup(vocab)
        builtin = wl.grammar if wl.grammar_kind == "builtin" else None
        peer_compiled = peer.compile_gbnf(wl.grammar, builtin)
        for doc_i, step in keys:
            ids = ids_list[doc_i]
            a = allowed_set(mask_at(ours, compiled, ids, step, vocab.size), vocab.size)
            b = allowed_set(mask_at(peer, peer_compiled, ids, step, vocab.size), vocab.size)
            prefix = b"".join(vocab.tokens[i] for i in ids[:step])[-30:]
            only_a = sorted(a - b)[:5]
            only_b = sorted(b - a)[:5]
            print(f"      {wl.documents[doc_i].name} step {step} after ...{prefix!r}: "
                  f"only gbnfkit {len(a - b)} {[vocab.tokens[t] for t in only_a]}, "
                  f"only {peer.name} {len(b - a)} {[vocab.tokens[t] for t in only_b]}")
    finally:
        peer.close()


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    Clock.use(args.clock)
    GcClock.install()
    GcClock.collect_before_compile = not args.no_collect
    engine_names = args.engines.split(",")
    print(machine_header() + f"; clock {args.clock} (overhead {Clock.overhead_ns} ns, "
          "taken off each mask)")
    names = list(VOCABS) if args.vocab == "all" else [args.vocab]
    summaries = [run_vocab(n, args, engine_names) for n in names]
    if args.json_out:
        args.json_out.write_text(json.dumps(summaries, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
