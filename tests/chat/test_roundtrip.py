"""Property tests: every format reads back what it writes, whole, partial and streamed,
and grammar_for's grammars accept what the formats write."""

from __future__ import annotations

import re

import pytest
from chat_corpus import FORMATS, TOOL_FORMATS, TOOLS, constrained_part, messages, render
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gbnfkit.chat import (
    ChatFormat,
    ChatParseError,
    ChatParser,
    Message,
    MessageStream,
    grammar_for,
    parse_message,
)

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _concat(deltas: list, message_calls: int) -> Message:
    content = "".join(d.content for d in deltas)
    reasoning = "".join(d.reasoning_content for d in deltas)
    calls: list[list] = []
    for delta in deltas:
        for part in delta.tool_calls:
            if part.index == len(calls):
                assert part.name is not None, "a tool call's first delta names the tool"
                calls.append([part.id, part.name, part.arguments])
            else:
                assert part.name is None, "the name comes once"
                if part.id is not None:
                    assert calls[part.index][0] is None, "the id comes once"
                    calls[part.index][0] = part.id
                calls[part.index][2] += part.arguments
    from gbnfkit.chat import ToolCall

    return Message(content, reasoning, tuple(ToolCall(*c) for c in calls))


@st.composite
def formatted(draw: st.DrawFn) -> tuple[ChatFormat, Message, str]:
    fmt = draw(st.sampled_from(FORMATS))
    message = draw(messages(fmt))
    return fmt, message, render(message, fmt, compact=draw(st.booleans()))


@SETTINGS
@given(formatted())
def test_parse_reads_back_what_the_format_writes(case: tuple[ChatFormat, Message, str]) -> None:
    fmt, message, text = case
    assert parse_message(text, fmt.value, TOOLS) == message
    if fmt is not ChatFormat.QWEN3_CODER:  # without schemas, qwen3-coder values stay text
        assert parse_message(text, fmt, None) == message  # any tool accepted


@SETTINGS
@given(formatted())
def test_partial_messages_only_grow(case: tuple[ChatFormat, Message, str]) -> None:
    fmt, message, text = case
    reader = ChatParser(fmt, TOOLS)  # parse_message(..., partial=True), parser built once
    previous = Message()
    for end in range(len(text) + 1):
        current = reader.parse(text[:end], partial=True)
        assert current.content.startswith(previous.content)
        assert current.reasoning_content.startswith(previous.reasoning_content)
        assert len(current.tool_calls) >= len(previous.tool_calls)
        for before, now in zip(previous.tool_calls, current.tool_calls, strict=False):
            assert now.name == before.name
            assert before.id is None or now.id == before.id
            assert now.arguments.startswith(before.arguments)
        previous = current
    assert parse_message(text, fmt, TOOLS) == message


def _chunks(text: str, cuts: list[int]) -> list[str]:
    points = sorted({0, len(text), *(c % (len(text) + 1) for c in cuts)})
    return [text[a:b] for a, b in zip(points, points[1:], strict=False)]


@SETTINGS
@given(formatted(), st.lists(st.integers(0, 10_000), max_size=40), st.booleans())
def test_stream_deltas_add_up_to_the_message(
    case: tuple[ChatFormat, Message, str], cuts: list[int], one_by_one: bool
) -> None:
    fmt, message, text = case
    chunks = list(text) if one_by_one else _chunks(text, cuts)
    stream = MessageStream(fmt, TOOLS)
    deltas = []
    for chunk in chunks:
        deltas.extend(stream.feed(chunk))
    deltas.extend(stream.close())
    final = stream.finish()
    assert final == message
    assert final == parse_message(text, fmt, TOOLS)
    assert _concat(deltas, len(final.tool_calls)) == final


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(TOOL_FORMATS), st.data())
def test_grammars_accept_what_the_formats_write(fmt: ChatFormat, data: st.DataObject) -> None:
    message = data.draw(messages(fmt))
    text = render(message, fmt, compact=data.draw(st.booleans()))
    auto = grammar_for(fmt, TOOLS)
    assert auto.lazy
    part = constrained_part(text, auto.triggers)
    if message.tool_calls:
        assert part is not None
        result = auto.grammar.match(part)
        assert result.accepted, (part, result)
        required = grammar_for(fmt, TOOLS, "required")
        assert not required.lazy
        # the eager grammar takes the whole output once content is left out
        calls_only = render(Message("", message.reasoning_content, message.tool_calls), fmt)
        assert required.grammar.match(calls_only).accepted
    else:
        assert part is None
    assert parse_message(text, fmt, TOOLS) == message


@SETTINGS
@given(formatted(), st.lists(st.integers(0, 10_000), max_size=20))
def test_output_that_starts_inside_the_reasoning(
    case: tuple[ChatFormat, Message, str], cuts: list[int]
) -> None:
    fmt, message, text = case
    if not message.reasoning_content:
        return
    assert text.startswith("<think>")
    rest = text[len("<think>") :]  # the prompt ended with <think>
    assert parse_message(rest, fmt, TOOLS, reasoning_open=True) == message
    stream = MessageStream(fmt, TOOLS, reasoning_open=True)
    deltas = [d for chunk in _chunks(rest, cuts) for d in stream.feed(chunk)] + stream.close()
    assert stream.text == rest
    assert _concat(deltas, len(message.tool_calls)) == stream.finish() == message


@SETTINGS
@given(
    formatted(),
    st.integers(0, 10_000),
    st.sampled_from(
        ['"', "}", "<", "x", "\n", "[", "\\", "{", "</think>", "<tool_call>", "[TOOL_CALLS]"]
    ),
    st.lists(st.integers(0, 10_000), max_size=20),
    st.booleans(),
)
def test_a_stream_of_broken_output_never_takes_text_back(
    case: tuple[ChatFormat, Message, str], at: int, inserted: str, cuts: list[int],
    in_word: bool,
) -> None:
    """``in_word``: the output breaks inside a JSON word begun where a value starts
    (``"on": frx``), streamed before the break (bughunt6: the stream took it back, a
    RuntimeError)."""
    fmt, _, text = case
    values = [m.end() for m in re.finditer(r'": ', text)]
    if in_word and values:
        inserted = ("f", "tr", "nul")[at % 3] + inserted
        at = values[at % len(values)]
    at %= len(text) + 1
    broken = text[:at] + inserted + text[at:]
    stream = MessageStream(fmt, TOOLS)
    deltas = [d for chunk in _chunks(broken, cuts) for d in stream.feed(chunk)]
    try:
        expected = parse_message(broken, fmt, TOOLS)
    except ChatParseError as error:
        with pytest.raises(ChatParseError) as caught:
            stream.close()
        assert (caught.value.position, caught.value.message) == (error.position, error.message)
        # what was given stays what the partial reading of the whole output holds
        partial = parse_message(broken, fmt, TOOLS, partial=True)
        assert _concat(deltas, 0) == partial
        return
    deltas += stream.close()
    assert stream.finish() == expected
    assert _concat(deltas, len(expected.tool_calls)) == expected


@SETTINGS
@given(formatted(), st.lists(st.integers(0, 10_000), max_size=40), st.booleans(), st.booleans())
def test_the_format_parser_fed_in_chunks_gives_the_fresh_partial_results(
    case: tuple[ChatFormat, Message, str], cuts: list[int], one_by_one: bool, late: bool
) -> None:
    """``IncrementalParser.feed`` skips the parse when a chunk only extends the open leaf
    (its frontier); every result, read at once or only after later chunks (``late``: its
    tree is built when first read), is the fresh partial parse of the text so far."""
    fmt, _message, text = case
    parser = ChatParser(fmt, TOOLS).parser
    stream = parser.incremental()
    fed = ""
    results = []
    for chunk in list(text) if one_by_one else _chunks(text, cuts):
        fed += chunk
        got = stream.feed(chunk)
        if late:
            results.append((fed, got))
        else:
            assert got == parser.parse(fed, partial=True), (fmt, fed)
    for prefix, got in results:
        assert got == parser.parse(prefix, partial=True), (fmt, prefix)
    assert stream.finish() == parser.parse(text)
