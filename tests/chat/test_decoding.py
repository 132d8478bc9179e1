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
