"""MessageStream: what each chunk yields, what is held back, and the end of a stream."""

from __future__ import annotations

import pytest
from chat_corpus import TOOLS

from gbnfkit.chat import (
    ChatError,
    ChatParseError,
    Message,
    MessageDelta,
    MessageStream,
    ToolCall,
    ToolCallDelta,
    parse_message,
)


def test_a_possible_tag_start_is_held_back_until_decided() -> None:
    stream = MessageStream("hermes", TOOLS)
    assert stream.feed("Hello") == [MessageDelta("Hello")]
    assert stream.feed(" <tool_") == []  # may still open a tool call
    assert stream.feed("box>") == [MessageDelta(" <tool_box>")]
    assert stream.finish() == Message("Hello <tool_box>")


def test_whitespace_before_a_tool_call_is_never_given() -> None:
    stream = MessageStream("hermes", TOOLS)
    deltas = stream.feed("Sure.\n\n")
    deltas += stream.feed('<tool_call>\n{"name": "get_weather", "arguments": {"city": "Pa')
    deltas += stream.feed('ris"}}\n</tool_call>')
    deltas += stream.close()
    assert deltas == [
        MessageDelta("Sure."),
        MessageDelta(tool_calls=(ToolCallDelta(0, None, "get_weather", '{"city": "Pa'),)),
        MessageDelta(tool_calls=(ToolCallDelta(0, arguments='ris"}'),)),
    ]
    assert stream.finish().tool_calls == (ToolCall(None, "get_weather", '{"city": "Paris"}'),)


def test_held_back_text_comes_out_when_the_stream_closes() -> None:
    stream = MessageStream("mistral", TOOLS)
    assert stream.feed("Price: [TOOL_") == [MessageDelta("Price:")]
    assert stream.close() == [MessageDelta(" [TOOL_")]
    assert stream.close() == []
    assert stream.finish() == Message("Price: [TOOL_")


def test_reasoning_streams_as_reasoning_content() -> None:
    stream = MessageStream("deepseek-r1", TOOLS)
    deltas = [d for ch in "<think>\nStep one.\n</think>\n\nDone." for d in stream.feed(ch)]
    assert "".join(d.reasoning_content for d in deltas) == "Step one."
    assert "".join(d.content for d in deltas) == "Done."
    assert all(not (d.content and d.reasoning_content) for d in deltas)


def test_the_mistral_id_arrives_after_the_arguments() -> None:
    stream = MessageStream("mistral", TOOLS)
    text = '[TOOL_CALLS][{"name": "get", "arguments": {}, "id": "abc123def"}]'
    deltas = [d for ch in text for d in stream.feed(ch)] + stream.close()
    calls = [c for d in deltas for c in d.tool_calls]
    assert calls[0] == ToolCallDelta(0, None, "get", "")  # the name, as soon as it is whole
    assert [c.id for c in calls if c.id is not None] == ["abc123def"]
    assert stream.finish().tool_calls == (ToolCall("abc123def", "get", "{}"),)


def test_qwen3_coder_text_values_stream_as_json_strings() -> None:
    stream = MessageStream("qwen3-coder", TOOLS)
    head = '<tool_call>\n<function=search>\n<parameter=query>\nsay "hi"\n'
    deltas = stream.feed(head)
    assert deltas == [
        MessageDelta(tool_calls=(ToolCallDelta(0, None, "search", '{"query": "say \\"hi\\"'),))
    ]
    # the newline may be the one before </parameter>: held back
    assert stream.feed("</parameter>\n</function>\n</tool_call>") == [
        MessageDelta(tool_calls=(ToolCallDelta(0, arguments='"}'),))
    ]
    assert stream.finish().tool_calls[0].arguments == '{"query": "say \\"hi\\""}'


@pytest.mark.parametrize("one_by_one", [True, False])
def test_qwen3_coder_drops_one_leading_newline_of_a_value_not_two(one_by_one: bool) -> None:
    # found by test_roundtrip: fed one character at a time, the second newline was
    # dropped too, and the arguments had to be taken back at </parameter>
    text = "<tool_call>\n<function=get_weather>\n<parameter=city>\n\na\n</parameter>\n"
    text += "</function>\n</tool_call>"
    stream = MessageStream("qwen3-coder", TOOLS)
    chunks = list(text) if one_by_one else [text[:52], text[52:]]
    deltas = [d for chunk in chunks for d in stream.feed(chunk)] + stream.close()
    arguments = "".join(c.arguments for d in deltas for c in d.tool_calls)
    assert arguments == '{"city": "\\na"}'
    assert stream.finish().tool_calls == (ToolCall(None, "get_weather", '{"city": "\\na"}'),)


def test_a_broken_stream_stops_and_close_raises() -> None:
    stream = MessageStream("hermes", TOOLS)
    assert stream.feed("Hi\n<tool_call>") == [MessageDelta("Hi")]
    assert stream.feed('{"name": "nope"') == []
    assert stream.feed(', "arguments": {}}</tool_call>') == []
    with pytest.raises(ChatParseError, match="unknown tool 'nope'"):
        stream.close()
    with pytest.raises(ChatParseError):
        stream.finish()
    assert stream.is_closed


@pytest.mark.parametrize(
    ("fmt", "head", "word"),
    [
        ("hermes", '<tool_call>{"name": "f", "arguments": {"on": ', "fa"),  # False
        ("hermes", '<tool_call>{"name": "f", "arguments": {"x": ', "n"),  # nan
        ("mistral", '[TOOL_CALLS][{"name": "f", "arguments": {"on": ', "tr"),
        ("llama3", '{"name": "f", "parameters": {"x": ', "nu"),
    ],
)
def test_a_word_that_goes_wrong_is_not_taken_back(fmt: str, head: str, word: str) -> None:
    """A word begun in the arguments (``fa`` of ``false``) streams as it comes; when the
    next character breaks it (``fax``), the stream stops there. It raised RuntimeError
    ("would be taken back"), and a partial message dropped the word: the message of the
    longest prefix that does not fail keeps it (found by bughunt6)."""
    stream = MessageStream(fmt)
    given = [d for ch in head + word for d in stream.feed(ch)]
    assert stream.feed("x") == []
    arguments = "".join(c.arguments for d in given for c in d.tool_calls)
    assert arguments == head[head.rindex("{") :] + word
    message = Message(tool_calls=(ToolCall(None, "f", arguments),))
    assert parse_message(head + word + "x", fmt, partial=True) == message
    assert parse_message(head + word + "x}}", fmt, partial=True) == message
    with pytest.raises(ChatParseError) as caught:
        stream.close()
    assert caught.value.position == len(head)


def test_a_closed_stream_takes_no_more_text() -> None:
    stream = MessageStream("content")
    stream.feed("abc")
    assert stream.finish() == Message("abc")
    assert stream.text == "abc"
    with pytest.raises(ChatError, match="closed"):
        stream.feed("d")
    with pytest.raises(TypeError):
        MessageStream("content").feed(b"x")  # type: ignore[arg-type]


def test_delta_to_dict_is_openai_shaped() -> None:
    first = MessageDelta(tool_calls=(ToolCallDelta(0, "id7", "get", "{"),))
    assert first.to_dict() == {
        "tool_calls": [
            {
                "index": 0,
                "id": "id7",
                "type": "function",
                "function": {"name": "get", "arguments": "{"},
            }
        ]
    }
    assert MessageDelta("a", "b").to_dict() == {"content": "a", "reasoning_content": "b"}
