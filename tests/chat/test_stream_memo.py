"""The stream's fast paths and the mapping's memo (results kept from one parse of a
growing output to the next): fed one character at a time, a stream gives exactly what
one parse of the whole output gives, however many tool calls came before."""

from __future__ import annotations

import json

import pytest
from chat_corpus import TOOL_FORMATS, TOOLS, render

from gbnfkit.chat import (
    ChatFormat,
    ChatParseError,
    Message,
    MessageDelta,
    MessageStream,
    ToolCall,
    parse_message,
)
from gbnfkit.chat._mapping import Memo, _in_json_string, _node_in_json_string
from gbnfkit.peg import AstNode

# text values with what the fast paths must not take as plain: escapes, quotes, tags,
# held whitespace, non-ASCII, a backslash before a quote
VALUES = [
    'Pa"ris \\ <b>\n  x',
    "line one\n\nline two\t\u00e9\u2603 ",
    'a\\"b\\u00e9 </tool_call ',
    " \n",
]


def _message(fmt: ChatFormat, count: int) -> Message:
    calls = []
    for i in range(count):
        if i % 3 == 2:
            name, args = "search", {"query": VALUES[i % 4], "tags": ["x", VALUES[(i + 1) % 4]]}
        else:
            name, args = "get_weather", {"city": VALUES[i % 4], "days": 1 + i % 14}
        if fmt is ChatFormat.QWEN3_CODER:
            args = {k: v for k, v in args.items() if k != "tags"}
        call_id = f"id{i:07d}" if fmt is ChatFormat.MISTRAL and i % 2 else None
        calls.append(ToolCall(call_id, name, json.dumps(args, ensure_ascii=False)))
    if fmt is ChatFormat.LLAMA3:
        return Message("", "", tuple(calls[:1]))
    reasoning = "Think  it over:\n a \\ b  " if fmt is not ChatFormat.MISTRAL else ""
    if fmt is ChatFormat.QWEN3_CODER:
        reasoning = ""
    return Message("Sure,  I <b>will</b>: a \\ b.", reasoning.strip(), tuple(calls))


def _stream(fmt: ChatFormat, chunks: list[str]) -> tuple[list, Message]:
    stream = MessageStream(fmt, TOOLS)
    deltas = [d for chunk in chunks for d in stream.feed(chunk)]
    deltas += stream.close()
    return deltas, stream.finish()


@pytest.mark.parametrize("fmt", TOOL_FORMATS)
def test_many_tool_calls_fed_one_character_at_a_time(fmt: ChatFormat) -> None:
    message = _message(fmt, 14)
    text = render(message, fmt)
    assert parse_message(text, fmt, TOOLS) == message
    one_by_one, final = _stream(fmt, list(text))
    whole, final_whole = _stream(fmt, [text])
    assert final == final_whole == message
    content = "".join(d.content for d in one_by_one)
    reasoning = "".join(d.reasoning_content for d in one_by_one)
    assert (content, reasoning) == (message.content, message.reasoning_content)
    arguments = [""] * len(message.tool_calls)
    for delta in one_by_one:
        for part in delta.tool_calls:
            arguments[part.index] += part.arguments
    assert arguments == [call.arguments for call in message.tool_calls]
    # a character's delta may come back as the same object, never in the same list
    stream = MessageStream(fmt, TOOLS)
    stream.feed("Hello")
    first, second = stream.feed("x"), stream.feed("x")
    assert first == second == [MessageDelta("x")] and first is not second


@pytest.mark.parametrize("fmt", [f for f in TOOL_FORMATS if f is not ChatFormat.LLAMA3])
def test_settled_calls_and_the_walk_over_them_are_kept_not_read_again(fmt: ChatFormat) -> None:
    """A rebuild goes on after the calls an earlier one settled (a message of many calls
    streamed in time quadratic in their number before), and gives what a parse does."""
    message = _message(fmt, 9)
    text = render(message, fmt)
    stream = MessageStream(fmt, TOOLS)
    memo: Memo = stream._memo
    grew = 0
    for i in range(0, len(text), 2):
        before = len(memo.settled[1])
        stream.feed(text[i : i + 2])
        grew += len(memo.settled[1]) > before
        partial = parse_message(text[: i + 2], fmt, TOOLS, partial=True)
        assert memo.settled[1] == partial.tool_calls[: len(memo.settled[1])]
    assert len(memo.settled[1]) >= len(message.tool_calls) - 1
    assert grew >= len(message.tool_calls) - 1  # one call more at a time, not all again
    assert memo.walked is not None and memo.walked.tools
    assert stream.finish() == message


@pytest.mark.parametrize("fmt", [ChatFormat.HERMES, ChatFormat.MISTRAL, ChatFormat.DEEPSEEK_R1])
@pytest.mark.parametrize("escape", ["\\u00e9", "\\u00", "\\x", "\\\\", '\\"', "\\/", "\\"])
def test_escapes_in_json_arguments_fed_one_character_at_a_time(
    fmt: ChatFormat, escape: str
) -> None:
    text = render(_message(fmt, 2), fmt)
    at = text.index('"city": "') + len('"city": "') + 2
    broken = text[:at] + escape + text[at:]
    stream = MessageStream(fmt, TOOLS)
    deltas = [d for ch in broken for d in stream.feed(ch)]
    try:
        expected = parse_message(broken, fmt, TOOLS)
    except ChatParseError as error:
        with pytest.raises(ChatParseError) as caught:
            stream.close()
        assert caught.value.position == error.position
        partial = parse_message(broken, fmt, TOOLS, partial=True)
        given = "".join(p.arguments for d in deltas for p in d.tool_calls if p.index == 0)
        assert given == partial.tool_calls[0].arguments
        return
    deltas += stream.close()
    assert stream.finish() == expected
    given = "".join(p.arguments for d in deltas for p in d.tool_calls if p.index == 0)
    assert given == expected.tool_calls[0].arguments


def test_the_memo_resumes_the_scan_of_growing_json_arguments() -> None:
    text = '{"a": "x\\"y", "b": ["}", "c\\\\"], "d": "open \\" still'
    memo = Memo()
    for end in range(1, len(text) + 1):
        node = AstNode("args", 0, end, text[:end])
        assert _node_in_json_string(node, memo) == _in_json_string(text[:end]), end
    # a shorter text than the last one (a failed parse read up to its fault) starts over
    node = AstNode("args", 0, 8, text[:8])
    assert _node_in_json_string(node, memo) == _in_json_string(text[:8])


NEAR_MISSES = {
    ChatFormat.CONTENT: "<think>\nA </thin k </think  x <</think\n</think>\n\nB <b>",
    ChatFormat.HERMES: (
        "<think> a </think </thinkx\n</think>\n\nText <tool_cal x <<tool_call <tool_\n "
        '<tool_call>\n{"name": "get", "arguments": {}}\n</tool_call>'
    ),
    ChatFormat.MISTRAL: 'a [TOOL_ x [[TOOL_CALLS [TOOL_CALLS][{"name": "get", "arguments": {}}]',
    ChatFormat.QWEN3_CODER: (
        "a <tool_ b <tool_call\n<tool_call>\n<function=search>\n<parameter=query>\n"
        "x </param y </parameter\n <</parameter \n\n</parameter>\n</function>\n</tool_call>"
    ),
    ChatFormat.DEEPSEEK_R1: (
        "<think>r </think </think>\n\nx <｜tool▁calls <｜tool▁calls▁begin｜>"
        "<｜tool▁call▁begin｜>function<｜tool▁sep｜>get\n```json\n{}\n```"
        "<｜tool▁call▁end｜><｜tool▁calls▁end｜>"
    ),
}


@pytest.mark.parametrize("fmt", list(NEAR_MISSES))
def test_each_character_gives_what_the_partial_parse_decides(fmt: ChatFormat) -> None:
    """Text that may start a delimiter is held back exactly as long as a parse would, no
    longer: after every character the deltas add up to the partial message."""
    text = NEAR_MISSES[fmt]
    stream = MessageStream(fmt, TOOLS)
    deltas: list = []
    for end in range(1, len(text) + 1):
        deltas += stream.feed(text[end - 1])
        partial = parse_message(text[:end], fmt, TOOLS, partial=True)
        assert _concat(deltas) == partial, (end, text[:end])
    deltas += stream.close()
    assert _concat(deltas) == stream.finish() == parse_message(text, fmt, TOOLS)


def _concat(deltas: list) -> Message:
    calls: list[list] = []
    for delta in deltas:
        for part in delta.tool_calls:
            if part.index == len(calls):
                calls.append([part.id, part.name, ""])
            if part.id is not None:
                calls[part.index][0] = part.id
            calls[part.index][2] += part.arguments
    return Message(
        "".join(d.content for d in deltas),
        "".join(d.reasoning_content for d in deltas),
        tuple(ToolCall(*c) for c in calls),
    )
