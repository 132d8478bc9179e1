"""Streaming cost of gbnfkit.chat: a ~10 KB output fed one character at a time.

For each format, builds an output of about 10 KB (reasoning where the format has it,
prose and code as content, tool calls with long string and structured arguments), then
times one parse of the whole text with the parser built beforehand, one
``parse_message`` call (which builds the parser, as a ``MessageStream`` does once), a
``MessageStream`` fed the whole text in one chunk, and one fed one character at a time
(built for the format and tools, and over the prebuilt ``ChatParser``).
Prints the median CPU time (``time.process_time``: the machine may be shared) of
``--repeat`` runs and the ratios (the issue's target: below 50x).

    python bench/chat.py [--repeat N] [--size CHARS]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from gbnfkit.chat import ChatFormat, ChatParser, MessageStream, parse_message

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "write_file",
            "parameters": {
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "content": {"type": "string"},
                    "mode": {"type": "integer"},
                    "tags": {"type": "array", "items": {"type": "string"}},
                },
                "required": ["path", "content"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "search",
            "parameters": {"type": "object", "properties": {"query": {"type": "string"}}},
        },
    },
]

PROSE = (
    "The function below reads the file line by line, keeps a running count of each word "
    "and returns the ten most common ones; ties keep the order of first appearance. "
)
CODE = (
    "def top_words(path, n=10):\n"
    "    counts = {}\n"
    "    with open(path) as handle:\n"
    "        for line in handle:\n"
    "            for word in line.split():\n"
    "                counts[word] = counts.get(word, 0) + 1\n"
    "    return sorted(counts.items(), key=lambda kv: kv[1] < 0 or -kv[1])[:n]\n"
)


def _calls(fmt: ChatFormat, body: str) -> str:
    args = {"path": "src/words.py", "content": body, "mode": 420, "tags": ["py", "util"]}
    search = {"query": "most common words in a file"}
    if fmt is ChatFormat.HERMES:
        return "".join(
            f'\n<tool_call>\n{{"name": "{name}", "arguments": {json.dumps(a)}}}\n</tool_call>'
            for name, a in (("write_file", args), ("search", search))
        )
    if fmt is ChatFormat.LLAMA3:
        return f'{{"name": "write_file", "parameters": {json.dumps(args)}}}'
    if fmt is ChatFormat.MISTRAL:
        items = [
            f'{{"name": "write_file", "arguments": {json.dumps(args)}, "id": "a1b2c3d4e"}}',
            f'{{"name": "search", "arguments": {json.dumps(search)}, "id": "f5g6h7i8j"}}',
        ]
        return "\n[TOOL_CALLS][" + ", ".join(items) + "]"
    if fmt is ChatFormat.QWEN3_CODER:
        params = "".join(
            f"<parameter={k}>\n{v if isinstance(v, str) else json.dumps(v)}\n</parameter>\n"
            for k, v in args.items()
        )
        return f"\n<tool_call>\n<function=write_file>\n{params}</function>\n</tool_call>"
    if fmt is ChatFormat.DEEPSEEK_R1:
        return (
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>write_file\n"
            f"```json\n{json.dumps(args)}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>"
        )
    return ""


def output(fmt: ChatFormat, size: int) -> str:
    """About ``size`` characters of output in ``fmt``."""
    share = size // 3
    reasoning = ""
    if fmt in (ChatFormat.CONTENT, ChatFormat.HERMES, ChatFormat.DEEPSEEK_R1):
        reasoning = "<think>\n" + (PROSE * (share // len(PROSE) + 1))[:share] + "\n</think>\n\n"
    content = ((PROSE + "\n\n```python\n" + CODE + "```\n") * (share // 600 + 1))[:share]
    if fmt is ChatFormat.LLAMA3:  # one call, or content: the call carries the text
        content = ""
    text = reasoning + content.strip()
    body = (CODE * (size // len(CODE) + 1))[: max(0, size - len(text) - 300)]
    return text + _calls(fmt, body)


def _median(fn: object, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.process_time()
        fn()  # type: ignore[operator]
        times.append(time.process_time() - t0)
    return statistics.median(times)


def measure(fmt: ChatFormat, size: int, repeat: int) -> None:
    """Print one row: ``fmt``'s output parsed whole and streamed one character at a time."""
    tools = TOOLS if fmt is not ChatFormat.CONTENT else None
    text = output(fmt, size)
    reader = ChatParser(fmt, tools)
    expected = parse_message(text, fmt, tools)

    def stream_it() -> None:
        stream = MessageStream(fmt, tools)
        for ch in text:
            stream.feed(ch)
        assert stream.finish() == expected

    def stream_prebuilt() -> None:
        stream = MessageStream(reader)  # shares the parser built beforehand, as A does
        for ch in text:
            stream.feed(ch)
        assert stream.finish() == expected

    def stream_whole() -> None:
        stream = MessageStream(fmt, tools)
        stream.feed(text)
        assert stream.finish() == expected

    whole = _median(lambda: reader.parse(text), repeat)
    one_call = _median(lambda: parse_message(text, fmt, tools), repeat)
    one_chunk = _median(stream_whole, repeat)
    streamed = _median(stream_it, repeat)
    prebuilt = _median(stream_prebuilt, repeat)
    print(
        f"{fmt.value:<12} {len(text):>6} {whole * 1e3:>7.2f} {one_call * 1e3:>7.2f} "
        f"{one_chunk * 1e3:>7.2f} {streamed * 1e3:>8.1f} {prebuilt * 1e3:>8.1f} "
        f"{prebuilt / len(text) * 1e6:>6.2f} {streamed / whole:>6.0f}x "
        f"{prebuilt / whole:>6.0f}x {streamed / one_call:>6.1f}x {streamed / one_chunk:>6.1f}x"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--size", type=int, default=10_000)
    args = ap.parse_args()
    print("CPU times in ms: A = one parse (parser built before), B = parse_message (builds the")
    print("parser), C = a MessageStream fed the whole text at once, D = a MessageStream fed one")
    print("character at a time; E = D with the ChatParser built beforehand (as in A);")
    print("us/ch = E per character; D/A, E/A, D/B, D/C the ratios")
    print(
        f"{'format':<12} {'chars':>6} {'A':>7} {'B':>7} {'C':>7} {'D':>8} {'E':>8} "
        f"{'us/ch':>6} {'D/A':>7} {'E/A':>7} {'D/B':>7} {'D/C':>7}"
    )
    for fmt in ChatFormat:
        measure(fmt, args.size, args.repeat)


if __name__ == "__main__":
    main()
