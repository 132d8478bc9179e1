"""grammar_for with gbnfkit's matchers: a lazy matcher sleeps through the content and
holds the tool call to the tools' schemas once the trigger fires."""

from __future__ import annotations

import pytest
from chat_corpus import TOOLS

import gbnfkit
from gbnfkit import InputRejected, Vocabulary
from gbnfkit.chat import grammar_for, parse_message

# every byte is a token; 256 ends the sequence
VOCABULARY = Vocabulary([bytes([b]) for b in range(256)] + [None], eos_token_ids=[256])

OUTPUTS = {
    "hermes": 'Sure.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n'
    "</tool_call>",
    "llama3": '{"name": "get_weather", "parameters": {"city": "Oslo"}}',
    "mistral": 'Sure.[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Oslo"}}]',
    "qwen3-coder": "Sure.\n<tool_call>\n<function=get_weather>\n<parameter=city>\nOslo\n"
    "</parameter>\n</function>\n</tool_call>",
    "deepseek-r1": "<think>\nok\n</think>\n\nSure.<｜tool▁calls▁begin｜>"
    "<｜tool▁call▁begin｜>function"
    '<｜tool▁sep｜>get_weather\n```json\n{"city": "Oslo"}\n```<｜tool▁call▁end｜>'
    "<｜tool▁calls▁end｜>",
}


@pytest.mark.parametrize("fmt", sorted(OUTPUTS))
def test_a_lazy_matcher_wakes_at_the_tool_call_and_accepts_it(fmt: str) -> None:
    constraint = grammar_for(fmt, TOOLS)
    matcher = gbnfkit.compile(constraint.grammar, VOCABULARY).matcher(triggers=constraint.triggers)
    text = OUTPUTS[fmt]
    for byte in text.encode():
        assert matcher.is_allowed(byte), (fmt, matcher.steps)
        matcher.accept_token(byte)
    assert matcher.is_active
    assert matcher.is_complete
    assert parse_message(text, fmt, TOOLS).tool_calls[0].name == "get_weather"


@pytest.mark.parametrize("fmt", sorted(OUTPUTS))
@pytest.mark.parametrize("width", [2, 3, 5])
def test_a_lazy_matcher_wakes_when_tokens_span_the_trigger(fmt: str, width: int) -> None:
    """Tokens of several characters, as a real vocabulary has (``{"``, ``name``, ``":``):
    no token need end where the trigger does. llama3's ``pattern_full`` trigger matched only
    an output that ended right after ``{"name"``, so with such tokens the grammar never woke
    (found by bughunt6)."""
    data = OUTPUTS[fmt].encode()
    pieces = [data[i : i + width] for i in range(0, len(data), width)]
    vocabulary = Vocabulary([bytes([b]) for b in range(256)] + pieces + [None],
                            eos_token_ids=[256 + len(pieces)])
    constraint = grammar_for(fmt, TOOLS)
    matcher = gbnfkit.compile(constraint.grammar, vocabulary).matcher(
        triggers=constraint.triggers
    )
    for index in range(len(pieces)):
        assert matcher.is_allowed(256 + index), (fmt, pieces[index])
        matcher.accept_token(256 + index)
    assert matcher.is_active and matcher.is_complete


def test_once_awake_a_lazy_matcher_refuses_an_unknown_tool() -> None:
    constraint = grammar_for("hermes", TOOLS)
    matcher = gbnfkit.compile(constraint.grammar, VOCABULARY).matcher(triggers=constraint.triggers)
    matcher.accept_text('Sure.\n<tool_call>\n{"name": "get_')
    assert matcher.is_active
    assert matcher.is_allowed(ord("w")) and not matcher.is_allowed(ord("t"))
    with pytest.raises(InputRejected):
        matcher.accept_text("time")


def test_required_constrains_from_the_first_token() -> None:
    constraint = grammar_for("mistral", TOOLS, "required")
    matcher = gbnfkit.compile(constraint.grammar, VOCABULARY).matcher()
    assert not matcher.is_allowed(ord("S"))  # no content before the calls
    matcher.accept_text('[TOOL_CALLS][{"name": "get", "arguments": {}}]')
    assert matcher.is_complete


# reasoning that writes the tool-call tag: the parser reads it as reasoning, so the lazy
# grammar must not wake there (found by test_grammars_accept_what_the_formats_write)
TAGS = {"hermes": "<tool_call>", "deepseek-r1": "<｜tool▁calls▁begin｜>"}


@pytest.mark.parametrize("fmt", sorted(TAGS))
@pytest.mark.parametrize("with_call", [False, True])
def test_a_tool_call_tag_inside_the_reasoning_does_not_wake_the_grammar(
    fmt: str, with_call: bool
) -> None:
    reasoning = f"\n  <think>\nI could write {TAGS[fmt]} here, or {TAGS[fmt]}{{ not JSON.\n</think>"
    call = OUTPUTS[fmt][OUTPUTS[fmt].index(TAGS[fmt]) :] if with_call else ""
    text = reasoning + "\nSure.\n" + call
    constraint = grammar_for(fmt, TOOLS)
    message = parse_message(text, fmt, TOOLS)
    assert TAGS[fmt] in message.reasoning_content
    assert len(message.tool_calls) == int(with_call)
    matcher = gbnfkit.compile(constraint.grammar, VOCABULARY).matcher(triggers=constraint.triggers)
    data, tag = text.encode(), TAGS[fmt].encode()
    fires = data.index(tag, data.index(b"</think>")) + len(tag) - 1 if with_call else len(data)
    for at, byte in enumerate(data):
        assert matcher.is_allowed(byte), (fmt, at)
        matcher.accept_token(byte)
        # asleep through the reasoning, awake once the tag after it is complete
        assert matcher.is_active == (at >= fires), (fmt, at)
    assert matcher.is_complete
    assert matcher.is_active == with_call


@pytest.mark.parametrize("fmt", sorted(TAGS))
def test_a_tool_call_tag_in_reasoning_left_open_does_not_wake_the_grammar(fmt: str) -> None:
    constraint = grammar_for(fmt, TOOLS)
    matcher = gbnfkit.compile(constraint.grammar, VOCABULARY).matcher(triggers=constraint.triggers)
    text = f"<think>calling {TAGS[fmt]}{{\"name\": oops"
    matcher.accept_text(text)
    assert not matcher.is_active and matcher.is_complete
    assert parse_message(text, fmt, TOOLS).reasoning_content == text[len("<think>") :]
