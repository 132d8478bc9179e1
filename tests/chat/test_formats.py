"""Each chat format on outputs written as the models write them."""

from __future__ import annotations

import pytest
from chat_corpus import TOOLS

from gbnfkit.chat import ChatFormat, Message, ToolCall, formats, parse_message

WEATHER_PARIS = ToolCall(None, "get_weather", '{"city": "Paris", "days": 3}')

CASES = [
    # content: optional reasoning, then everything is content
    ("content", "Just text.", Message("Just text.")),
    ("content", "  spaced  \n", Message("  spaced  \n")),
    ("content", "<think>\nHmm.\n</think>\n\nThe answer.", Message("The answer.", "Hmm.")),
    ("content", "<think>unfinished", Message("", "unfinished")),
    ("content", 'Text <tool_call>{"name": "x"}', Message('Text <tool_call>{"name": "x"}')),
    # hermes (Hermes 2 Pro, Qwen 2.5, Qwen3)
    (
        "hermes",
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}\n'
        "</tool_call>",
        Message("", "", (WEATHER_PARIS,)),
    ),
    (
        "hermes",
        "Let me check.\n<tool_call>\n"
        '{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}\n</tool_call>\n'
        '<tool_call>\n{"name": "search", "arguments": {"query": "Paris events"}}\n</tool_call>',
        Message(
            "Let me check.",
            "",
            (WEATHER_PARIS, ToolCall(None, "search", '{"query": "Paris events"}')),
        ),
    ),
    (
        "hermes",
        "<think>\nThe user wants the weather.\n</think>\n\n<tool_call>\n"
        '{"name": "get", "arguments": {}}\n</tool_call>\n',
        Message("", "The user wants the weather.", (ToolCall(None, "get", "{}"),)),
    ),
    ("hermes", "No tools needed: 2 < 3.", Message("No tools needed: 2 < 3.")),
    ("hermes", "Ends with a tag start <tool_", Message("Ends with a tag start <tool_")),
    # llama3
    (
        "llama3",
        '{"name": "get_weather", "parameters": {"city": "Paris", "days": 3}}',
        Message("", "", (WEATHER_PARIS,)),
    ),
    (
        "llama3",
        '<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris", "days": 3}}',
        Message("", "", (WEATHER_PARIS,)),
    ),
    ("llama3", "Paris is sunny.", Message("Paris is sunny.")),
    ("llama3", '{"answer": 42}', Message('{"answer": 42}')),
    ("llama3", 'It is {"name": "x"}', Message('It is {"name": "x"}')),
    # mistral
    (
        "mistral",
        '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}, '
        '"id": "a1b2c3d4e"}]',
        Message("", "", (ToolCall("a1b2c3d4e", "get_weather", '{"city": "Paris", "days": 3}'),)),
    ),
    (
        "mistral",
        'Checking.\n[TOOL_CALLS] [{"name": "get", "arguments": {}}, '
        '{"name": "search", "arguments": {"query": "x"}}]',
        Message(
            "Checking.",
            "",
            (ToolCall(None, "get", "{}"), ToolCall(None, "search", '{"query": "x"}')),
        ),
    ),
    ("mistral", "Plain [answer].", Message("Plain [answer].")),
    # qwen3-coder
    (
        "qwen3-coder",
        "I will look.\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n"
        "</parameter>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>",
        Message("I will look.", "", (WEATHER_PARIS,)),
    ),
    (
        "qwen3-coder",
        '<tool_call>\n<function=search>\n<parameter=tags>\n["a", "b"]\n</parameter>\n'
        "<parameter=query>\n  two\nlines \n\n</parameter>\n<parameter=verbatim>\ntrue\n"
        "</parameter>\n</function>\n</tool_call>",
        Message(
            "",
            "",
            (
                ToolCall(
                    None,
                    "search",
                    '{"tags": ["a", "b"], "query": "  two\\nlines \\n", "verbatim": true}',
                ),
            ),
        ),
    ),
    (
        "qwen3-coder",
        "<tool_call><function=get></function></tool_call>",
        Message("", "", (ToolCall(None, "get", "{}"),)),
    ),
    # deepseek-r1
    (
        "deepseek-r1",
        "<think>\nWeather first.\n</think>\n\n<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function"
        '<｜tool▁sep｜>get_weather\n```json\n{"city": "Paris", "days": 3}\n```<｜tool▁call▁end｜>\n'
        "<｜tool▁call▁begin｜>function<｜tool▁sep｜>get\n```json\n{}\n```<｜tool▁call▁end｜>"
        "<｜tool▁calls▁end｜>",
        Message("", "Weather first.", (WEATHER_PARIS, ToolCall(None, "get", "{}"))),
    ),
    ("deepseek-r1", "<think>x</think>Sunny.", Message("Sunny.", "x")),
]


@pytest.mark.parametrize(("fmt", "text", "expected"), CASES)
def test_format_reads_model_output(fmt: str, text: str, expected: Message) -> None:
    assert parse_message(text, fmt, TOOLS) == expected


def test_formats_lists_every_format_by_name() -> None:
    assert formats() == ["content", "hermes", "llama3", "mistral", "qwen3-coder", "deepseek-r1"]
    assert [ChatFormat.parse(name) for name in formats()] == list(ChatFormat)
    assert {fmt for fmt, _, _ in CASES} == set(formats())


def test_formats_are_taken_as_enum_members_too() -> None:
    text = "<think>a</think>b"
    assert parse_message(text, ChatFormat.HERMES) == parse_message(text, "hermes")


def test_tool_calls_need_no_tool_list() -> None:
    text = '<tool_call>{"name": "any.thing", "arguments": {"x": [1, {"y": null}]}}</tool_call>'
    message = parse_message(text, "hermes")
    assert message.tool_calls == (ToolCall(None, "any.thing", '{"x": [1, {"y": null}]}'),)


def test_qwen3_coder_values_stay_text_without_a_schema() -> None:
    text = "<tool_call>\n<function=f>\n<parameter=n>\n3\n</parameter>\n</function>\n</tool_call>"
    assert parse_message(text, "qwen3-coder").tool_calls[0].arguments == '{"n": "3"}'


# a tool as Pydantic writes it: $refs into $defs, Optional[...] as anyOf with null
PYDANTIC = [{"name": "paint", "parameters": {
    "type": "object",
    "properties": {
        "color": {"$ref": "#/$defs/Color"},
        "times": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        "note": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        "label": {"type": ["string", "null"]},
        "where": {"anyOf": [{"$ref": "#/$defs/Spot"}, {"type": "null"}]},
    },
    "required": ["color", "times", "note", "label", "where"],
    "$defs": {
        "Color": {"enum": ["red", "green"], "type": "string"},
        "Spot": {"type": "object", "properties": {"color": {"$ref": "#/$defs/Color"}}},
    },
}}]


def test_qwen3_coder_types_values_by_pydantic_schemas() -> None:
    """``$ref`` is followed and ``anyOf`` read: Optional[int] is JSON, Optional[str] text,
    and the grammar asks for what the parser reads. The parser kept ``5`` of an
    ``anyOf`` integer as the string "5"; the grammar forced JSON quotes on Optional[str]
    text (which then were part of the value); and a ``$ref`` made grammar_for fail
    (found by bughunt6)."""
    from gbnfkit.chat import grammar_for

    def call(color: str, times: str, note: str, label: str, where: str) -> str:
        values = {"color": color, "times": times, "note": note, "label": label, "where": where}
        params = "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in values.items())
        return f"<tool_call>\n<function=paint>\n{params}</function>\n</tool_call>"

    text = call("red", "5", "two coats", "front", '{"color": "green"}')
    assert parse_message(text, "qwen3-coder", PYDANTIC).tool_calls[0].arguments == (
        '{"color": "red", "times": 5, "note": "two coats", "label": "front", '
        '"where": {"color": "green"}}'
    )
    grammar = grammar_for("qwen3-coder", PYDANTIC, "required").grammar
    assert grammar.match(text).accepted
    assert grammar.match(call("red", "null", "null", "x", "null")).accepted
    for bad in (call("blue", "5", "a", "b", "null"), call("red", "five", "a", "b", "null"),
                call("red", "5", "a", "b", '{"color": "blue"}')):
        assert not grammar.match(bad).accepted


def test_message_to_dict_is_an_openai_assistant_message() -> None:
    message = Message("Hi", "hm", (ToolCall("id1", "get", "{}"),))
    assert message.to_dict() == {
        "role": "assistant",
        "content": "Hi",
        "reasoning_content": "hm",
        "tool_calls": [
            {"id": "id1", "type": "function", "function": {"name": "get", "arguments": "{}"}}
        ],
    }


def test_message_to_dict_leaves_out_an_id_the_model_did_not_write() -> None:
    """It wrote ``"id": null``: OpenAI's tool call id is a string (never null), and
    llama.cpp's ``to_json_oaicompat`` leaves an empty id out."""
    message = Message("", tool_calls=(ToolCall(None, "get", "{}"), ToolCall("x", "get", "[]")))
    calls = message.to_dict()["tool_calls"]
    assert calls == [
        {"type": "function", "function": {"name": "get", "arguments": "{}"}},
        {"id": "x", "type": "function", "function": {"name": "get", "arguments": "[]"}},
    ]


def test_a_chat_parser_is_built_once_for_many_outputs() -> None:
    from gbnfkit.chat import ChatParser, MessageDelta

    reader = ChatParser("mistral", TOOLS)
    assert reader.format is ChatFormat.MISTRAL
    assert repr(reader) == "<ChatParser mistral (get_weather, search, get)>"
    text = 'Hi[TOOL_CALLS][{"name": "get", "arguments": {}}]'
    assert reader.parse(text) == parse_message(text, "mistral", TOOLS)
    assert reader.parse("Hi[TOOL", partial=True) == Message("Hi")
    stream = reader.stream()
    assert stream.feed("Hi") == [MessageDelta("Hi")]
    assert stream.finish() == Message("Hi")
    assert reader.grammar("get") == reader.grammar("get")  # equal grammars, built anew
    assert reader.parser.parse(text).is_complete_match


def test_qwen3_coder_survives_a_ref_loop_in_a_parameter_schema() -> None:
    """A ``$ref`` that leads back to itself through ``anyOf`` adds no type: the value is
    what the other branch says (the typing recursed without end)."""
    tools = [{"name": "f", "parameters": {
        "type": "object",
        "properties": {"t": {"$ref": "#/$defs/T"}, "u": {"$ref": "#/$defs/U"}},
        "$defs": {"T": {"anyOf": [{"$ref": "#/$defs/T"}, {"type": "integer"}]},
                  "U": {"$ref": "#/$defs/U"}},
    }}]
    text = ("<tool_call>\n<function=f>\n<parameter=t>\n5\n</parameter>\n<parameter=u>\n5\n"
            "</parameter>\n</function>\n</tool_call>")
    assert parse_message(text, "qwen3-coder", tools).tool_calls[0].arguments == (
        '{"t": 5, "u": "5"}')
