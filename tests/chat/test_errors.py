"""Output that breaks its format: a clear error when whole, an incomplete message when
partial; and bad formats, tools and tool choices."""

from __future__ import annotations

import pytest
from chat_corpus import TOOLS

from gbnfkit import GbnfkitError
from gbnfkit.chat import (
    ChatError,
    ChatParseError,
    ChatParser,
    Message,
    ToolCall,
    grammar_for,
    parse_message,
)

UNKNOWN_TOOL = [
    ("hermes", 'Hi\n<tool_call>\n{"name": "nope", "arguments": {}}\n</tool_call>', "Hi"),
    ("llama3", '{"name": "nope", "parameters": {}}', ""),
    ("mistral", 'Hi [TOOL_CALLS][{"name": "nope", "arguments": {}}]', "Hi"),
    ("qwen3-coder", "Hi\n<tool_call>\n<function=nope>\n</function>\n</tool_call>", "Hi"),
    (
        "deepseek-r1",
        "Hi<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>nope\n```json\n{}\n"
        "```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
        "Hi",
    ),
]


@pytest.mark.parametrize(("fmt", "text", "content"), UNKNOWN_TOOL)
def test_an_unknown_tool_is_named_with_its_position(fmt: str, text: str, content: str) -> None:
    with pytest.raises(ChatParseError) as caught:
        parse_message(text, fmt, TOOLS)
    error = caught.value
    assert error.position == text.index("nope")
    assert "unknown tool 'nope'" in str(error)
    assert "get_weather" in str(error)
    assert isinstance(error, GbnfkitError) and isinstance(error, ValueError)
    assert "^" in error.excerpt


@pytest.mark.parametrize(("fmt", "text", "content"), UNKNOWN_TOOL)
def test_an_unknown_tool_leaves_a_partial_message_incomplete(
    fmt: str, text: str, content: str
) -> None:
    assert parse_message(text, fmt, TOOLS, partial=True) == Message(content)


NOT_JSON = [
    ("hermes", '<tool_call>{"name": "get_weather", "arguments": {city: "P"}}</tool_call>', "city"),
    ("mistral", '[TOOL_CALLS][{"name": "search", "arguments": {"query": \'x\'}}]', "'x'"),
    ("llama3", '{"name": "get", "parameters": {,}}', ",}"),
    (
        "qwen3-coder",
        "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
        "<parameter=days>\nthree\n</parameter>\n</function>\n</tool_call>",
        "three",
    ),
]


@pytest.mark.parametrize(("fmt", "text", "fault"), NOT_JSON)
def test_arguments_that_are_not_json_are_an_error(fmt: str, text: str, fault: str) -> None:
    with pytest.raises(ChatParseError) as caught:
        parse_message(text, fmt, TOOLS)
    assert caught.value.position == text.index(fault)
    assert caught.value.expected
    assert f"the output does not follow the '{fmt}' format" in str(caught.value)


def test_partial_arguments_stop_before_the_fault() -> None:
    text = NOT_JSON[3][1]
    message = parse_message(text, "qwen3-coder", TOOLS, partial=True)
    assert message.tool_calls == (ToolCall(None, "get_weather", '{"city": "Paris"'),)


def test_a_tool_call_cut_short_is_an_error_only_when_whole() -> None:
    text = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Par'
    with pytest.raises(ChatParseError) as caught:
        parse_message(text, "hermes", TOOLS)
    assert caught.value.position == len(text)
    partial = parse_message(text, "hermes", TOOLS, partial=True)
    assert partial.tool_calls == (ToolCall(None, "get_weather", '{"city": "Par'),)


def test_text_after_the_tool_calls_is_an_error() -> None:
    text = '[TOOL_CALLS][{"name": "get", "arguments": {}}] and more'
    with pytest.raises(ChatParseError) as caught:
        parse_message(text, "mistral", TOOLS)
    assert caught.value.position == text.index("and")


def test_an_unknown_format_names_the_known_ones() -> None:
    with pytest.raises(ChatError, match="unknown chat format 'chatml'.*hermes"):
        parse_message("x", "chatml")


@pytest.mark.parametrize(
    ("tools", "message"),
    [
        ("get", "a list"),
        ([{"type": "function", "function": {"parameters": {}}}], "name"),
        ([{"type": "retrieval"}], "only 'function' tools"),
        ([{"name": "a<b"}], "cannot be written"),
        ([{"name": "a"}, {"name": "a"}], "two tools are called 'a'"),
        ([{"name": "a", "parameters": []}], "JSON Schema object"),
    ],
)
def test_bad_tool_definitions_are_refused(tools: object, message: str) -> None:
    with pytest.raises(ChatError, match=message):
        parse_message("x", "hermes", tools)  # type: ignore[arg-type]


def test_bad_tool_choices_are_refused() -> None:
    with pytest.raises(ChatError, match="neither 'auto', 'required' nor a tool name"):
        grammar_for("hermes", TOOLS, "none")
    with pytest.raises(ChatError, match="no tool calls"):
        grammar_for("content", TOOLS, "required")
    with pytest.raises(ChatError, match="at least one tool"):
        grammar_for("hermes", [])


def test_reasoning_open_keeps_positions_in_the_output() -> None:
    text = 'plan</think>\n<tool_call>{"name": "nope", "arguments": {}}</tool_call>'
    with pytest.raises(ChatParseError) as caught:
        parse_message(text, "hermes", TOOLS, reasoning_open=True)
    assert caught.value.position == text.index("nope")
    assert caught.value.text == text
    message = parse_message("still planning", "deepseek-r1", TOOLS, reasoning_open=True)
    assert message == Message("", "still planning")
    with pytest.raises(ChatError, match="no reasoning to start in"):
        parse_message("x", "mistral", reasoning_open=True)


@pytest.mark.parametrize("fmt", ["hermes", "llama3", "mistral", "qwen3-coder", "deepseek-r1"])
@pytest.mark.parametrize("choice", ["auto", "required", "search"])
def test_a_tool_whose_schema_has_no_grammar_is_a_chat_error_naming_it(
    fmt: str, choice: str
) -> None:
    """A bad tool definition is a ChatError (docs/chat.md), also when only the grammar
    finds it: a parameters schema the converter refuses. Parsing does not need it."""
    broken = {"name": "search", "parameters": {
        "type": "object", "properties": {"q": {"type": "string", "pattern": "("}}}}
    tools = [{"name": "get", "parameters": {"type": "object"}}, broken]
    with pytest.raises(ChatError, match="tool 'search': its parameters") as caught:
        grammar_for(fmt, tools, choice)
    assert "invalid regular expression" in str(caught.value)
    assert not isinstance(caught.value, ChatParseError)
    assert caught.value.tool == "search"
    assert parse_message("Hi", fmt, tools).content == "Hi"


DEEP = "[" * 1000 + "]" * 1000  # deeper than the JSON parser follows (~240 levels)
DEEP_CALLS = [
    ("hermes", '<tool_call>\n{"name": "f", "arguments": {"a": ' + DEEP + "}}\n</tool_call>",
     None),
    ("qwen3-coder", "<tool_call>\n<function=f>\n<parameter=a>\n" + DEEP
     + "\n</parameter>\n</function>\n</tool_call>",
     [{"name": "f", "parameters": {"type": "object", "properties": {"a": {"type": "array"}}}}]),
]


@pytest.mark.parametrize(("fmt", "text", "tools"), DEEP_CALLS)
def test_output_nested_too_deeply_is_a_chat_parse_error(
    fmt: str, text: str, tools: list | None
) -> None:
    """Arguments nested deeper than the parser follows: whole, a ChatParseError where the
    nesting becomes too deep (it was the parser's bare PegError, a 500 in the server);
    partial, the message up to there; streamed, no error until close, which raises it too
    (found by bughunt6). Where Python's recursion limit stops the parser depends on the
    depth of the caller's stack: positions are compared with a margin."""
    opening = text.index("[")
    with pytest.raises(ChatParseError, match="nests too deeply") as caught:
        parse_message(text, fmt, tools)
    assert opening + 100 < caught.value.position < text.index("]")
    partial = parse_message(text, fmt, tools, partial=True)
    (call,) = partial.tool_calls
    if fmt == "hermes":  # the arguments up to the fault
        assert call.arguments.startswith('{"a": ' + "[" * 100) and set(call.arguments[6:]) == {"["}
    else:  # an array parameter shows once whole
        assert call.arguments == "{"
    stream = ChatParser(fmt, tools).stream()
    given = [d for i in range(0, len(text), 7) for d in stream.feed(text[i : i + 7])]
    streamed = "".join(c.arguments for d in given for c in d.tool_calls)
    assert streamed.startswith(call.arguments[:100]) and set(streamed[6:]) <= {"["}
    with pytest.raises(ChatParseError, match="nests too deeply") as closed:
        stream.close()
    assert abs(closed.value.position - caught.value.position) < 20
