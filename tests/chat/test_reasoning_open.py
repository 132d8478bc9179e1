"""Output that starts inside the reasoning (the prompt ended with ``<think>``): grammar_for's
grammars with ``reasoning_open=True`` agree with ``ChatParser(reasoning_open=True)``.

Property tests: a tool-call tag written inside the reasoning never wakes the lazy grammar
(only a tag after the first ``</think>`` does), and every string generated from the
grammars parses."""

from __future__ import annotations

import random

import pytest
from chat_corpus import DELIMITERS, TOOLS, messages, render
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gbnfkit
from gbnfkit import Trigger, Vocabulary
from gbnfkit.chat import ChatError, ChatFormat, ChatParser, Message, grammar_for, parse_message
from grammar_sampling import sample

# every byte is a token; 256 ends the sequence
VOCABULARY = Vocabulary([bytes([b]) for b in range(256)] + [None], eos_token_ids=[256])
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

CALL_FORMATS = [ChatFormat.HERMES, ChatFormat.DEEPSEEK_R1]
REASONING_FORMATS = [ChatFormat.CONTENT, *CALL_FORMATS]
NO_REASONING = [ChatFormat.LLAMA3, ChatFormat.MISTRAL, ChatFormat.QWEN3_CODER]
# the reader trims ASCII whitespace only, as llama.cpp's parsers do (not U+2028 and the
# other characters str.strip() takes)
_TRIMMED = " \t\r\n"

# the prompt wrote <think>: a tag counts only after the reasoning's first </think>
OPEN = r"(?:[^<]|<(?!/think>))*</think>[\s\S]*?({})[\s\S]*"


def _tag(fmt: ChatFormat) -> str:
    return DELIMITERS[fmt][0]


@pytest.mark.parametrize("fmt", CALL_FORMATS)
def test_auto_wakes_only_after_the_reasoning(fmt: ChatFormat) -> None:
    result = grammar_for(fmt, TOOLS, reasoning_open=True)
    assert result.triggers == (Trigger.pattern_full(OPEN.format(_tag(fmt))),)
    assert result.grammar == grammar_for(fmt, TOOLS).grammar  # the call section alone
    assert ChatParser(fmt, TOOLS, reasoning_open=True).grammar() == result


@pytest.mark.parametrize("fmt", CALL_FORMATS)
def test_required_starts_inside_the_reasoning(fmt: ChatFormat) -> None:
    call = render(Message("", "", parse_message(_sample_call(fmt), fmt, TOOLS).tool_calls), fmt)
    grammar = grammar_for(fmt, TOOLS, "required", reasoning_open=True).grammar
    assert grammar.match(f"plan {_tag(fmt)} or not\n</think>\n\n{call}").accepted
    assert grammar.match(f"</think>{call}").accepted
    assert not grammar.match(call).accepted  # the reasoning must be closed first
    assert not grammar.match(f"<think>plan</think>{call}</think>{call}").accepted
    assert not grammar.match(f"plan</think>Sure. {call}").accepted  # no content
    named = grammar_for(fmt, TOOLS, "get", reasoning_open=True).grammar
    assert not named.match(f"plan</think>{call}").accepted  # get_weather is not 'get'


def test_the_content_format_reads_anything_from_inside_the_reasoning() -> None:
    result = grammar_for("content", TOOLS, reasoning_open=True)
    assert not result.lazy
    for text in ("plan</think>Paris", "still thinking", "a</think>b</think>c", ""):
        assert result.grammar.match(text).accepted


@pytest.mark.parametrize("fmt", NO_REASONING)
def test_formats_without_reasoning_refuse_reasoning_open(fmt: ChatFormat) -> None:
    assert [f for f in ChatFormat if f.has_reasoning] == REASONING_FORMATS
    with pytest.raises(ChatError, match="no reasoning to start in"):
        grammar_for(fmt, TOOLS, reasoning_open=True)
    with pytest.raises(ChatError, match="no reasoning to start in"):
        grammar_for(fmt, TOOLS, "required", reasoning_open=True)


def _sample_call(fmt: ChatFormat) -> str:
    if fmt is ChatFormat.HERMES:
        return '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>'
    return (
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n"
        '```json\n{"city": "Oslo"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>'
    )


@st.composite
def opened(draw: st.DrawFn) -> tuple[ChatFormat, Message, str]:
    """A message whose reasoning writes the tool-call tag, and its output after the
    ``<think>`` the prompt wrote."""
    fmt = draw(st.sampled_from(CALL_FORMATS))
    message = draw(messages(fmt))
    alphabet = st.sampled_from(["x", " ", "\n", "<", _tag(fmt), "<think>"])
    pieces = draw(st.lists(alphabet, max_size=8))
    pieces.insert(draw(st.integers(0, len(pieces))), _tag(fmt))
    reasoning = ("plan " + "".join(pieces) + " " + message.reasoning_content).strip(_TRIMMED)
    message = Message(message.content.lstrip(_TRIMMED), reasoning, message.tool_calls)
    text = render(message, fmt, compact=draw(st.booleans()))
    assert text.startswith("<think>")
    return fmt, message, text[len("<think>") :]


@SETTINGS
@given(opened())
def test_a_tag_in_open_reasoning_never_wakes_the_lazy_grammar(
    case: tuple[ChatFormat, Message, str],
) -> None:
    fmt, message, text = case
    assert _tag(fmt) in message.reasoning_content
    assert parse_message(text, fmt, TOOLS, reasoning_open=True) == message
    constraint = grammar_for(fmt, TOOLS, reasoning_open=True)
    matcher = gbnfkit.compile(constraint.grammar, VOCABULARY).matcher(triggers=constraint.triggers)
    data, tag = text.encode(), _tag(fmt).encode()
    closed = data.index(b"</think>") + len(b"</think>")
    # the byte that completes the first tag after the reasoning wakes the grammar
    fires = data.index(tag, closed) + len(tag) - 1 if message.tool_calls else len(data)
    for at, byte in enumerate(data):
        assert matcher.is_allowed(byte), (at, data[: at + 1])
        matcher.accept_token(byte)
        assert matcher.is_active == (at >= fires), (at, data[: at + 1])
    assert matcher.is_complete
    if message.tool_calls:  # the eager grammar takes the output once content is left out
        calls_only = render(Message("", message.reasoning_content, message.tool_calls), fmt)
        required = grammar_for(fmt, TOOLS, "required", reasoning_open=True)
        assert required.grammar.match(calls_only[len("<think>") :]).accepted


@SETTINGS
@given(st.sampled_from(REASONING_FORMATS), st.sampled_from(["auto", "required", "search"]),
       st.randoms(use_true_random=False), st.data())
def test_strings_of_the_grammars_parse(
    fmt: ChatFormat, choice: str, rng: random.Random, data: st.DataObject
) -> None:
    if fmt is ChatFormat.CONTENT and choice != "auto":
        return
    reader = ChatParser(fmt, TOOLS, reasoning_open=True)
    constraint = reader.grammar(choice)
    generated = sample(constraint.grammar.ir, rng)
    if not constraint.lazy:  # the whole output, from inside the reasoning
        message = reader.parse(generated)
        assert (len(message.tool_calls) > 0) == (fmt is not ChatFormat.CONTENT)
        if choice == "search":
            assert {call.name for call in message.tool_calls} == {"search"}
        return
    # a lazy grammar holds the calls: reasoning (tags included), content, then the calls
    message = data.draw(messages(fmt))
    reasoning = f"I may write {_tag(fmt)} here {message.reasoning_content}"
    text = f"{reasoning}</think>\n{message.content}{generated}"
    parsed = reader.parse(text)
    assert parsed.reasoning_content == reasoning.strip(_TRIMMED)
    assert len(parsed.tool_calls) > 0
    matcher = gbnfkit.compile(constraint.grammar, VOCABULARY).matcher(triggers=constraint.triggers)
    matcher.accept_text(text[: text.index("</think>") + len("</think>")])
    assert not matcher.is_active
    matcher.accept_text(text[text.index("</think>") + len("</think>") :])
    assert matcher.is_active and matcher.is_complete
