"""Streaming cost of gbnfkit.peg: a ~10 KB model output fed one character at a time.

For each workload it prints the CPU time (process time, as the machine may be shared) of
one parse of the whole output (best of 5); the total time of feeding it through an
``IncrementalParser`` one character at a time (``feed`` after every character: the result
of a partial parse of the whole text so far, parsed only when the character does not just
extend the open leaf; then ``finish()``; best of 3); the same with 4-character chunks
(about one token); and the ratios of the streaming totals to one full parse.  Target: the
one-character ratio stays below 50.

Run from the repository root: ``/work/venv/bin/python bench/peg.py``.
"""

from __future__ import annotations

import json
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from gbnfkit import peg  # noqa: E402
from gbnfkit.peg import Parser, ParseStatus  # noqa: E402

TARGET = 10_000


def _words(rng: random.Random, count: int) -> str:
    vocab = ["the", "model", "thinks", "about", "weather", "in", "Paris", "and", "calls",
             "a", "tool", "with", "arguments", "<b>", "x < y", "then", "answers.", "\n"]
    return " ".join(rng.choice(vocab) for _ in range(count))


def _args(rng: random.Random, size: int) -> object:
    items = []
    while len(json.dumps(items)) < size:
        items.append({"id": len(items), "city": _words(rng, 3), "days": rng.randint(1, 9),
                      "metric": rng.random() < 0.5, "temps": [rng.uniform(-5, 30)
                                                              for _ in range(3)],
                      "note": None})
    return {"locations": items}


def hermes(size: int = TARGET) -> tuple[str, Parser, str]:
    """Reasoning, content, then a tool call whose JSON arguments are most of the text."""
    rng = random.Random(1)
    tool = peg.atomic(peg.tag("tool", "<tool_call>" + peg.space() + peg.tag("call", peg.json())
                               + peg.space() + "</tool_call>"))
    parser = (
        peg.optional("<think>" + peg.tag("reasoning", peg.until("</think>")) + "</think>")
        + peg.space() + peg.tag("content", peg.until("<tool_call>"))
        + peg.zero_or_more(peg.space() + tool) + peg.space() + peg.end()
    )
    call = {"name": "get_weather", "arguments": _args(rng, size - 4_000)}
    text = ("<think>" + _words(rng, 150) + "</think>\n" + _words(rng, 180) + "\n<tool_call>\n"
            + json.dumps(call, indent=1) + "\n</tool_call>")
    return "reasoning + content + JSON tool call", parser, text


def json_only() -> tuple[str, Parser, str]:
    """One JSON document (dense: numbers, strings, nesting)."""
    rng = random.Random(2)
    return "JSON document", peg.tag("json", peg.json()) + peg.end(), json.dumps(_args(rng, TARGET))


def xml_params() -> tuple[str, Parser, str]:
    """Qwen3-Coder style calls: raw-text parameter values between XML-like tags."""
    rng = random.Random(3)
    param = peg.tag("param", "<parameter=" + peg.tag("name", peg.chars("[a-z_]")) + ">"
                    + peg.tag("value", peg.until("</parameter>")) + "</parameter>" + peg.space())
    call = ("<tool_call>" + peg.space() + "<function=" + peg.tag("fn", peg.chars("[a-z_]"))
            + ">" + peg.space() + peg.zero_or_more(param) + "</function>" + peg.space()
            + "</tool_call>")
    parser = peg.tag("content", peg.until("<tool_call>")) + peg.zero_or_more(
        peg.atomic(peg.tag("call", call)) + peg.space()) + peg.end()
    parts = [_words(rng, 40), "\n"]
    while sum(map(len, parts)) < TARGET:
        parts.append("<tool_call>\n<function=write_file>\n")
        for name in ("path", "content", "mode"):
            parts.append(f"<parameter={name}>\n{_words(rng, 60)}\n</parameter>\n")
        parts.append("</function>\n</tool_call>\n")
    return "XML tool calls, raw values", parser, "".join(parts)


def content_only() -> tuple[str, Parser, str]:
    """Plain content until a tool call that never comes: the full parse is one str.find."""
    rng = random.Random(4)
    text = _words(rng, TARGET // 5)[:TARGET]
    parser = peg.tag("content", peg.until("<tool_call>")) + peg.end()
    return "content only (one until)", parser, text


def best_of(n: int, fn: Callable[[], object]) -> float:
    times = []
    for _ in range(n):
        t0 = time.process_time()
        fn()
        times.append(time.process_time() - t0)
    return min(times)


def stream(parser: Parser, text: str, chunk: int) -> float:
    t0 = time.process_time()
    inc = parser.incremental()
    for i in range(0, len(text), chunk):
        r = inc.feed(text[i : i + chunk])
        assert r.status is not ParseStatus.FAIL, (i, r)
    final = inc.finish()
    elapsed = time.process_time() - t0
    assert final.status is ParseStatus.SUCCESS and final.end == len(text)
    assert final == parser.parse(text)
    return elapsed


def main() -> None:
    print(f"Python {sys.version.split()[0]}")
    print("| workload | chars | full parse ms | 1-char stream ms | µs/char | ratio |"
          " 4-char stream ms | ratio |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for make in (hermes, json_only, xml_params, content_only):
        name, parser, text = make()
        parser.parse(text)  # compile the program once
        full = best_of(5, lambda p=parser, t=text: p.parse(t))
        one = min(stream(parser, text, 1) for _ in range(3))
        four = min(stream(parser, text, 4) for _ in range(3))
        print(f"| {name} | {len(text):,} | {full * 1e3:.2f} | {one * 1e3:.0f} | "
              f"{one / len(text) * 1e6:.1f} | {one / full:.0f} | {four * 1e3:.0f} | "
              f"{four / full:.0f} |")
    print()
    print("Linearity: the first workload at growing sizes, fed one character at a time")
    print("| chars | full parse ms | 1-char stream ms | µs/char |")
    print("| ---: | ---: | ---: | ---: |")
    for size in (5_000, 10_000, 20_000, 40_000):
        _name, parser, text = hermes(size)
        full = best_of(3, lambda p=parser, t=text: p.parse(t))
        one = min(stream(parser, text, 1) for _ in range(2))
        print(f"| {len(text):,} | {full * 1e3:.2f} | {one * 1e3:.0f} | "
              f"{one / len(text) * 1e6:.1f} |")


if __name__ == "__main__":
    main()
