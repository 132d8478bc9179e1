"""Property tests: streams of tool calls whose arguments are any JSON, written any way
(indented, ASCII-escaped, nested, numbers of every shape), and qwen3-coder parameters of
every schema type with raw values that look like the format's tags: the deltas add up to
the one-shot parse, also when the output is broken, and partial messages only grow."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_roundtrip import _chunks, _concat

from gbnfkit.chat import ChatParseError, ChatParser, Message, MessageStream, parse_message

SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))

_json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**20), 10**20)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)


def _json_call(fmt: str, arguments: str, content: str) -> str:
    if fmt == "hermes":
        return f'{content}<tool_call>\n{{"name": "f", "arguments": {arguments}}}\n</tool_call>'
    if fmt == "mistral":
        return f'{content}[TOOL_CALLS][{{"name": "f", "arguments": {arguments}}}]'
    if fmt == "llama3":
        return f'{{"name": "f", "parameters": {arguments}}}'
    return (
        f"{content}<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n"
        f"```json\n{arguments}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>"
    )


def _streamed(fmt: str, tools: Any, chunks: list[str]) -> tuple[MessageStream, list[Any]]:
    stream = MessageStream(fmt, tools)
    return stream, [delta for chunk in chunks for delta in stream.feed(chunk)]


def _check_stream(fmt: str, tools: Any, text: str, cuts: list[int]) -> Message | None:
    """The stream of ``text`` (in ``cuts`` chunks and one character at a time) against
    ``parse_message``; the message, or None when the output is broken."""
    try:
        expected: Message | None = parse_message(text, fmt, tools)
    except ChatParseError:
        expected = None
    for chunks in (_chunks(text, cuts), list(text)):
        stream, deltas = _streamed(fmt, tools, chunks)
        if expected is None:
            try:
                stream.close()
            except ChatParseError:
                pass
            else:
                raise AssertionError(f"the stream closed on output parse_message refuses: {text!r}")
            assert _concat(deltas, 0) == parse_message(text, fmt, tools, partial=True), text
            continue
        deltas += stream.close()
        assert stream.finish() == expected
        assert _concat(deltas, len(expected.tool_calls)) == expected, (text, chunks)
    return expected


@SETTINGS
@given(
    st.sampled_from(["hermes", "mistral", "deepseek-r1", "llama3"]),
    st.dictionaries(st.text(max_size=5), _json_values, max_size=3),
    st.sampled_from([None, 0, 2]),
    st.booleans(),
    st.lists(st.integers(0, 10_000), max_size=30),
    st.text(max_size=10),
)
def test_json_arguments_written_any_way_stream_as_they_parse(
    fmt: str,
    arguments: dict[str, Any],
    indent: int | None,
    ascii_only: bool,
    cuts: list[int],
    content: str,
) -> None:
    written = json.dumps(arguments, indent=indent, ensure_ascii=ascii_only)
    message = _check_stream(fmt, None, _json_call(fmt, written, content), cuts)
    if message is not None and message.tool_calls:
        (call,) = message.tool_calls
        assert call.arguments == written  # as the model wrote it
        assert json.loads(call.arguments) == arguments


QWEN_TOOLS = [{"name": "f", "parameters": {"type": "object", "properties": {
    "s": {"type": "string"}, "i": {"type": "integer"}, "n": {"type": "number"},
    "b": {"type": "boolean"}, "o": {"type": "object"}, "a": {"type": "array"}, "u": {},
    "m": {"type": ["string", "null"]}}}}]
_raw_value = st.lists(
    st.sampled_from(
        list('ab \n\r\t<>/="\\{}[]:,0129.-e')
        + ["</parameter>", "</parameter", "<parameter=", "</function>", "<tool_call>",
           "</tool_call>", "null", "true", "🙂", "\u2028", "\x00", "\x1f"]
    ),
    max_size=12,
).map("".join)


@SETTINGS
@given(
    st.lists(st.tuples(st.sampled_from("sinboaum"), _raw_value), max_size=4),
    st.lists(st.integers(0, 10_000), max_size=30),
    st.sampled_from(["\n", ""]),
    st.booleans(),
)
def test_qwen3_coder_parameters_of_every_type_stream_as_they_parse(
    parameters: list[tuple[str, str]], cuts: list[int], newline: str, with_tools: bool
) -> None:
    tools = QWEN_TOOLS if with_tools else None
    text = "hi\n<tool_call>\n<function=f>\n" + "".join(
        f"<parameter={name}>{newline}{value}{newline}</parameter>\n" for name, value in parameters
    ) + "</function>\n</tool_call>"
    message = _check_stream("qwen3-coder", tools, text, cuts)
    if message is None:
        return
    for call in message.tool_calls:
        json.loads(call.arguments)
    reader = ChatParser("qwen3-coder", tools)
    previous = Message()
    for end in range(len(text) + 1):
        current = reader.parse(text[:end], partial=True)
        assert current.content.startswith(previous.content)
        for before, now in zip(previous.tool_calls, current.tool_calls, strict=False):
            assert now.arguments.startswith(before.arguments), (text[:end], before, now)
        previous = current
