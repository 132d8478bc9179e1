"""Per-token cost of gbnfkit's sampler chain on real vocabularies, with and without a grammar.

Run from the repository root:

    PYTHONPATH=src /work/venv/bin/python bench/sampling.py [--vocab smollm2 qwen] [--docs 3]

For each vocabulary (SmolLM2, 49,152 ids; Qwen, 151,851 ids with logits padded to a multiple
of 128 as the model pads them) the script replays JSON documents from ``bench/workloads/json``
token by token.  Each step gets synthetic logits: Gaussian noise (sd 2) over the whole row
plus a boost on the document's next token, so the chain usually picks it (as a model that
knows the format would).  The sequence then takes the document's token whatever was sampled
(teacher forcing), so every document is replayed to its end.  It prints the median and
mean microseconds per token of ``Sampler.sample`` and of ``Sampler.accept`` (each step
timed three times, the fastest kept: the machine is shared) for several chains:

* no grammar;
* the builtin JSON grammar, llama.cpp's fast path (``grammar_first=False``);
* the same grammar, ``grammar_first=True`` (mask, then the chain);
* the fast path when the model disagrees with the grammar: a special token (never allowed)
  gets the largest logit every step, so every step checks, masks and resamples.

Documents are replayed once before timing, so the grammar's masks are cached and the figures
are the sampler's own cost (``bench/masks.py`` measures the masks).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _workloads import VOCABS, BenchVocab, json_workload  # noqa: E402
from gbnfkit import (  # noqa: E402
    Grammar,
    Sampler,
    SamplingParams,
    Vocabulary,
    compile,
)

CHAINS: dict[str, SamplingParams] = {
    "llama.cpp defaults (top-k 40, top-p 0.95, min-p 0.05, temp 0.8)": SamplingParams(),
    "greedy (temp 0)": SamplingParams(temperature=0.0),
    "temperature only (whole vocabulary)": SamplingParams(top_k=0, top_p=1.0, min_p=0.0),
    "top-p 0.95 without top-k": SamplingParams(top_k=0, min_p=0.0),
    "defaults + repeat 1.1, freq/presence 0.1, DRY 0.8": SamplingParams(
        repeat_penalty=1.1, frequency_penalty=0.1, presence_penalty=0.1, dry_multiplier=0.8
    ),
    "mirostat 2": SamplingParams(mirostat=2),
}

BOOST = 18.0  # added to the document's next token: the chain picks it most of the time


def load_vocabulary(bench: BenchVocab) -> Vocabulary:
    kwargs: dict[str, object] = {"eos_token_ids": bench.eos_ids}
    if bench.kind == "tiktoken":
        kwargs["special_tokens"] = {bench.tokens[i].decode("utf-8"): i for i in bench.special_ids}
        return Vocabulary.from_tiktoken(bench.path, **kwargs)  # type: ignore[arg-type]
    return Vocabulary.from_gguf(bench.path, **kwargs)  # type: ignore[arg-type]


def replay(
    sampler: Sampler,
    docs: list[list[int]],
    width: int,
    noise: list[np.ndarray],
    refused: int | None,
    timed: bool,
) -> tuple[list[float], list[float], int]:
    """Sample every step of every document; returns (sample µs, accept µs, tokens off-document)."""
    sample_us: list[float] = []
    accept_us: list[float] = []
    off = 0
    step = 0
    for ids in docs:
        sampler.reset()
        for want in ids:
            logits = noise[step % len(noise)].copy()
            step += 1
            logits[want] += BOOST
            if refused is not None:
                logits[refused] += BOOST + 4.0
            t0 = time.perf_counter()
            token = sampler.sample(logits)
            t1 = time.perf_counter()
            sampler.accept(want)
            t2 = time.perf_counter()
            if timed:
                sample_us.append((t1 - t0) * 1e6)
                accept_us.append((t2 - t1) * 1e6)
            off += token != want
    return sample_us, accept_us, off


def fmt(values: list[float]) -> str:
    return f"{statistics.median(values):8.1f} {statistics.fmean(values):8.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--vocab", nargs="*", default=["smollm2", "qwen"], choices=list(VOCABS))
    parser.add_argument("--docs", type=int, default=3, help="JSON documents to replay")
    args = parser.parse_args()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"# {platform.python_version()} numpy {np.__version__}, {os.cpu_count()} cores, "
        f"load average {load:.1f}"
    )
    workload = json_workload()
    texts = [d.text for d in workload.documents[: args.docs]]
    for name in args.vocab:
        bench = VOCABS[name]()
        vocabulary = load_vocabulary(bench)
        width = (vocabulary.size + 127) // 128 * 128
        docs = [bench.encode(text) for text in texts]
        tokens = sum(len(d) for d in docs)
        compiled = compile(Grammar.builtin("json"), vocabulary)
        rng = np.random.default_rng(0)
        noise = [(rng.standard_normal(width) * 2).astype(np.float32) for _ in range(8)]
        # a special token: never allowed by the grammar, so every step masks and resamples
        refused = next(i for i in bench.special_ids if i not in bench.eos_ids)
        print(
            f"\n## {name}: {vocabulary.size:,} tokens, logits width {width:,}; "
            f"{len(docs)} JSON documents, {tokens:,} tokens"
        )
        print("µs per token: sample median, mean | accept median, mean | off-document tokens")
        for chain, params in CHAINS.items():
            print(f"\n{chain}")
            modes: list[tuple[str, bool, bool | None, int | None]] = [
                ("no grammar", False, None, None),
                ("json, fast path", True, False, None),
                ("json, grammar first", True, True, None),
                ("json, fast path, model disagrees", True, False, refused),
            ]
            for label, constrained, first, bad in modes:
                p = params.replace(seed=1, grammar_first=bool(first))
                sampler = Sampler(
                    p,
                    compiled.matcher() if constrained else None,
                    vocabulary=vocabulary,
                )
                replay(sampler, docs, width, noise, bad, timed=False)  # warm the masks
                runs = [replay(sampler, docs, width, noise, bad, timed=True) for _ in range(3)]
                sample_us = [min(values) for values in zip(*(r[0] for r in runs), strict=True)]
                accept_us = [min(values) for values in zip(*(r[1] for r in runs), strict=True)]
                off = runs[0][2]
                print(
                    f"  {label:34s} {fmt(sample_us)} | {fmt(accept_us)} | "
                    f"{off}/{len(sample_us)}"
                )


if __name__ == "__main__":
    main()
