"""grammar_for: lazy and eager grammars, triggers, and the tools' schemas enforced."""

from __future__ import annotations

import pytest
from chat_corpus import GET, TOOLS, WEATHER

import gbnfkit
from gbnfkit import Trigger, Vocabulary
from gbnfkit.chat import ChatError, ChatFormat, ToolChoice, grammar_for, parse_message

# a tag after an optional leading <think>…</think> block, never inside it
OUTSIDE_REASONING = (
    r"(?:[ \t\n\r]*<think>(?:[^<]|<(?!/think>))*</think>|(?![ \t\n\r]*<think>))[\s\S]*?({})[\s\S]*"
)
TRIGGERS = {
    "hermes": (Trigger.pattern_full(OUTSIDE_REASONING.format("<tool_call>")),),
    "mistral": (Trigger.word("[TOOL_CALLS]"),),
    "qwen3-coder": (Trigger.word("<tool_call>"),),
    "deepseek-r1": (Trigger.pattern_full(OUTSIDE_REASONING.format("<｜tool▁calls▁begin｜>")),),
    "llama3": (Trigger.pattern_full(r'[ \t\n\r]*(<\|python_tag\|>|\{[ \t\n\r]*"name")[\s\S]*'),),
}


@pytest.mark.parametrize("fmt", sorted(TRIGGERS))
def test_auto_is_lazy_and_woken_by_the_start_of_a_tool_call(fmt: str) -> None:
    result = grammar_for(fmt, TOOLS)
    assert result.lazy
    assert result.triggers == TRIGGERS[fmt]
    assert grammar_for(fmt, TOOLS, ToolChoice.AUTO).triggers == TRIGGERS[fmt]


def test_the_content_format_has_an_eager_grammar_of_anything() -> None:
    result = grammar_for("content", TOOLS)
    assert not result.lazy
    assert result.grammar.match("<think>a</think>b").accepted
    assert result.grammar.match("anything at all").accepted


def test_hermes_grammar_enforces_each_tools_schema() -> None:
    grammar = grammar_for("hermes", TOOLS).grammar
    ok = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}</tool_call>'
    assert grammar.match(ok).accepted
    assert not grammar.match(ok.replace("3", "30")).accepted  # maximum 14
    assert not grammar.match(ok.replace('"Paris"', "1")).accepted  # not a string
    assert not grammar.match(ok.replace('"city": "Paris", ', "")).accepted  # city required
    assert not grammar.match(ok.replace("get_weather", "get_time")).accepted  # no such tool


def test_required_is_eager_and_allows_reasoning_first() -> None:
    result = grammar_for("hermes", TOOLS, "required")
    assert not result.lazy and result.triggers == ()
    call = '<tool_call>{"name": "get", "arguments": {}}</tool_call>'
    assert result.grammar.match(call).accepted
    assert result.grammar.match("<think>plan</think>\n" + call).accepted
    assert not result.grammar.match("Sure! " + call).accepted


def test_a_named_tool_choice_allows_that_tool_only() -> None:
    result = grammar_for("mistral", TOOLS, "get")
    assert not result.lazy
    assert result.grammar.match('[TOOL_CALLS][{"name": "get", "arguments": {}}]').accepted
    weather = '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "x"}}]'
    assert not result.grammar.match(weather).accepted
    openai_style = {"type": "function", "function": {"name": "get_weather"}}
    assert grammar_for("mistral", TOOLS, openai_style).grammar.match(weather).accepted


@pytest.mark.parametrize("name", ["auto", "required"])
def test_a_tool_choice_object_naming_a_tool_auto_forces_that_tool(name: str) -> None:
    # the object names a function: a tool called 'auto' is that tool, not ToolChoice.AUTO
    tool = {
        "type": "function",
        "function": {"name": name, "parameters": GET["function"]["parameters"]},
    }
    result = grammar_for("mistral", [tool, WEATHER], {"function": {"name": name}})
    assert not result.lazy
    assert result.grammar.match(f'[TOOL_CALLS][{{"name": "{name}", "arguments": {{}}}}]').accepted
    weather = '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "x"}}]'
    assert not result.grammar.match(weather).accepted
    with pytest.raises(ChatError, match="names no tool"):  # not 'any tool'
        grammar_for("mistral", [WEATHER], {"function": {"name": name}})


def test_qwen3_coder_grammar_types_parameters_and_requires_the_required() -> None:
    grammar = grammar_for("qwen3-coder", [WEATHER, GET], "required").grammar
    call = (
        "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
        "<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>"
    )
    assert grammar.match(call).accepted
    assert not grammar.match(call.replace("\n3\n", "\nthree\n")).accepted
    no_city = call.replace("<parameter=city>\nParis\n</parameter>\n", "")
    assert not grammar.match(no_city).accepted
    unit = call.replace("</function>", "<parameter=unit>\nkelvin\n</parameter>\n</function>")
    assert not grammar.match(unit).accepted
    assert grammar.match(unit.replace("kelvin", "celsius")).accepted


def test_llama3_auto_grammar_starts_at_the_call() -> None:
    result = grammar_for(ChatFormat.LLAMA3, TOOLS)
    assert result.grammar.match('<|python_tag|>{"name": "get", "parameters": {}}').accepted
    assert result.grammar.match('{"name": "get", "parameters": {}}').accepted
    assert not result.grammar.match('{"name": "other", "parameters": {}}').accepted


def test_tools_none_allows_any_tool_with_any_arguments() -> None:
    grammar = grammar_for("hermes", None, "required").grammar
    assert grammar.match('<tool_call>{"name": "x", "arguments": {"a": [1]}}</tool_call>').accepted


def test_arguments_follow_the_schemas_property_order() -> None:
    # models write the properties in the order the tool lists them
    tool = {
        "name": "move",
        "parameters": {
            "type": "object",
            "properties": {"to": {"type": "string"}, "at": {"type": "integer"}},
            "required": ["to", "at"],
        },
    }
    grammar = grammar_for("hermes", [tool], "required").grammar
    call = '<tool_call>{"name": "move", "arguments": {"to": "x", "at": 1}}</tool_call>'
    assert grammar.match(call).accepted


def test_a_chat_parser_reading_open_reasoning_gives_the_grammar_for_it() -> None:
    from gbnfkit.chat import ChatParser

    opened = ChatParser("hermes", TOOLS, reasoning_open=True)
    expected = grammar_for("hermes", TOOLS, "required", reasoning_open=True)
    assert opened.grammar("required") == expected
    assert ChatParser("hermes", TOOLS).grammar() == grammar_for("hermes", TOOLS)


@pytest.mark.parametrize("lead", ["\x0c", "\x0b", "\xa0", "\u2028"])
def test_the_triggers_read_whitespace_as_the_parser_does(lead: str) -> None:
    """Before ``<think>`` (hermes, deepseek-r1) or a llama3 call, only the parser's
    whitespace (space, tab, newline, carriage return) counts: after a form feed the block
    is content and a tag in it a tool call, which the grammar must constrain; a llama3
    call is content, which it must not. The triggers said ``\\s`` (found by bughunt6)."""
    vocabulary = Vocabulary([bytes([b]) for b in range(256)] + [None], eos_token_ids=[256])

    def wakes(fmt: str, text: str) -> bool:
        constraint = grammar_for(fmt, TOOLS)
        matcher = gbnfkit.compile(constraint.grammar, vocabulary).matcher(
            triggers=constraint.triggers
        )
        matcher.accept_text(text)
        return matcher.is_active

    call = '<tool_call>\n{"name": "get", "arguments": {}}\n</tool_call>'
    output = lead + "<think>hm " + call
    assert parse_message(output, "hermes", TOOLS).tool_calls[0].name == "get"
    assert wakes("hermes", lead + "<think>hm <tool_call>")
    assert not wakes("hermes", " <think>hm <tool_call>")  # reasoning, as the parser reads it
    output = lead + '{"name": "get", "parameters": {}}'
    assert parse_message(output, "llama3", TOOLS).content == output
    assert not wakes("llama3", output)
    assert wakes("llama3", ' \t{"name": "get"')


def test_tools_may_be_left_out_as_in_parse_message() -> None:
    """parse_message, MessageStream and ChatParser take tools=None by default (any tool
    name, any JSON object); grammar_for required the argument: grammar_for('content')
    raised TypeError."""
    assert grammar_for("content") == grammar_for("content", None)
    anything = grammar_for("hermes", tool_choice="required")
    assert anything == grammar_for("hermes", None, "required")
    assert anything.grammar.match('<tool_call>{"name": "x", "arguments": {}}</tool_call>').accepted


def test_partial_must_be_a_bool() -> None:
    # partial="no" was read by its truth value, as partial=True
    from gbnfkit import ArgumentError
    from gbnfkit.chat import parse_message

    with pytest.raises(ArgumentError, match="partial must be True or False"):
        parse_message("hello", "content", partial="no")  # type: ignore[arg-type]


@pytest.mark.parametrize("tool_choice", ["required", "auto"])
def test_whitespace_between_the_parts_is_bounded_so_a_model_cannot_run_on_it(
    tool_choice: str,
) -> None:
    # SmolLM2 wrote newlines after a [TOOL_CALLS][…] section until its token limit: the
    # grammar allows at most two line breaks, then at most twenty spaces or tabs
    grammar = grammar_for("mistral", TOOLS, tool_choice).grammar
    call = '[TOOL_CALLS][{"name": "get", "arguments": {}}]'
    for gap in ("", "\n", "\r\n\n", "\n\n" + " " * 20, "\t "):
        text = call + gap
        assert grammar.match(text).accepted, repr(gap)
        assert parse_message(text, "mistral", TOOLS).tool_calls  # the parser reads it
        spaced = call.replace("[{", "[" + gap + "{")
        assert grammar.match(spaced).accepted, repr(gap)
    for gap in ("\n\n\n", " " * 21, "\n \n", "\r"):
        assert not grammar.match(call + gap).accepted, repr(gap)
        assert not grammar.match(call.replace("[{", "[" + gap + "{")).accepted, repr(gap)
        # the parser still reads any whitespace there
        assert parse_message(call + gap, "mistral", TOOLS).tool_calls


# raw (unquoted) values whose schema allows the closing tag: a pattern, an enum, a const
RAW_CLOSE = {"type": "function", "function": {"name": "f", "parameters": {
    "type": "object",
    "properties": {"a": {"type": "string", "pattern": "^[<>/a-z=]{0,14}$"},
                   "b": {"enum": ["</parameter>", "x\n"]},
                   "d": {"const": "\n</parameter>\n"}},
    "required": ["a", "b"]}}}


@pytest.mark.parametrize("tool_choice", ["required", "auto"])
def test_qwen3_coder_raw_values_never_hold_the_closing_tag(tool_choice: str) -> None:
    """A value the grammar allowed could hold "</parameter>", where the parser ends it and
    then fails (found by walkdiff13): every walked call now parses."""
    import random

    from grammar_sampling import walk

    grammar = grammar_for("qwen3-coder", [RAW_CLOSE], tool_choice).grammar
    call = ("<tool_call>\n<function=f>\n<parameter=a>\n{a}\n</parameter>\n"
            "<parameter=b>\n{b}\n</parameter>\n</function>\n</tool_call>")
    assert grammar.match(call.format(a="<a>/x=", b="x\n")).accepted
    for a, b in (("</parameter>", "x\n"), ("a</parameter>b", "x\n"), ("a", "</parameter>")):
        assert not grammar.match(call.format(a=a, b=b)).accepted, (a, b)
    rng = random.Random(7)
    walked = [walk(grammar, rng, max_length=200) for _ in range(150)]
    assert sum(text is not None for text in walked) > 20
    for text in walked:
        if text is not None:
            assert parse_message(text, "qwen3-coder", [RAW_CLOSE]).tool_calls, text
