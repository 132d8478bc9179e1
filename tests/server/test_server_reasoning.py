"""A chat template that opens the reasoning (``<think>`` ends its generation prompt, as
DeepSeek-R1's, QwQ's and thinking Qwen3 templates do): the output starts inside the
reasoning, and the server reads it so and builds its tool-call grammars for it.

SmolLM2's own template does not open ``<think>``, so these tests serve the bundled model
behind a stand-in template given as ``ServerConfig.chat_template`` (ChatML, then
``<think>\\n``)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from serve_cases import MAX_TOKENS, WEATHER_TOOL, user
from starlette.testclient import TestClient

from gbnfkit.chat import ChatFormat, grammar_for
from gbnfkit.server import Engine, ServerConfig, create_app
from gbnfkit.server._constraints import constraint_for
from gbnfkit.server._prompt import opens_reasoning

THINKING_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n<think>\n{% endif %}"
)


@pytest.fixture(scope="module")
def thinking() -> Iterator[TestClient]:
    """The bundled model behind the stand-in template (``ServerConfig.chat_template``)."""
    opened = Engine(ServerConfig(ctx_size=512, threads=1, chat_template=THINKING_TEMPLATE))
    assert opened.template == THINKING_TEMPLATE
    assert opened.render_chat([{"role": "user", "content": "Hi"}]).reasoning_open
    app = create_app(ServerConfig(max_tokens=MAX_TOKENS), engine=opened)
    try:
        with TestClient(app) as client:
            yield client
    finally:
        opened.close()


def _bias(engine: Engine, text: str, weight: int) -> dict[str, int]:
    """A logit_bias that pushes the model to write ``text``."""
    return {str(token): weight for token in engine.tokenize(text, add_bos=False)}


def _chat(client: TestClient, **body: Any) -> dict[str, Any]:
    response = client.post("/v1/chat/completions", json=body)
    assert response.status_code == 200, response.text
    choice = response.json()["choices"][0]
    assert isinstance(choice, dict)
    return choice


@pytest.mark.parametrize(
    ("prompt", "opens"),
    [
        ("<|im_start|>assistant\n<think>\n", True),
        ("<｜Assistant｜><think>", True),
        ("<|im_start|>assistant\n<think>\n\n  ", True),
        ("<|im_start|>assistant\n<think>\n\n</think>\n\n", False),  # thinking turned off
        ("<|im_start|>assistant\n", False),
        ("<think>\nalready", False),
        ("", False),
    ],
)
def test_a_prompt_opens_the_reasoning_when_it_ends_with_think(prompt: str, opens: bool) -> None:
    assert opens_reasoning(prompt) is opens


def test_the_output_is_reasoning_until_think_closes(thinking: TestClient) -> None:
    plain = {"messages": user("What is the weather in Paris?"), "seed": 1, "max_tokens": 16}
    message = _chat(thinking, **plain)["message"]
    assert message["reasoning_content"] and message["content"] == ""
    # the stream gives the same reasoning as deltas
    response = thinking.post("/v1/chat/completions", json={**plain, "stream": True})
    reasoning = content = ""
    for line in response.text.split("\n\n"):
        if line.startswith("data: {"):
            delta = json.loads(line[len("data: ") :])["choices"][0]["delta"]
            reasoning += delta.get("reasoning_content", "")
            content += delta.get("content") or ""
    assert (reasoning, content) == (message["reasoning_content"], "")


def test_required_tool_calls_come_after_the_reasoning(
    thinking: TestClient, engine: Engine
) -> None:
    body = {
        "messages": user("What is the weather in Paris?"),
        "tools": [WEATHER_TOOL],
        "tool_choice": "required",
        "seed": 1,
    }
    # the eager grammar lets the model think first (it starts inside the reasoning)
    choice = _chat(thinking, **body, max_tokens=12)
    assert choice["message"]["reasoning_content"] and "tool_calls" not in choice["message"]
    # pushed to close the reasoning at once, it must call the tool right after
    choice = _chat(thinking, **body, logit_bias=_bias(engine, "</think>", 8))
    calls = choice["message"]["tool_calls"]
    assert calls and {call["function"]["name"] for call in calls} == {"get_weather"}
    assert json.loads(calls[0]["function"]["arguments"]) == {"city": "Paris"}


def test_a_tool_call_tag_in_the_reasoning_does_not_wake_the_grammar(
    thinking: TestClient, engine: Engine
) -> None:
    choice = _chat(
        thinking,
        messages=user("What is the weather in Paris?"),
        tools=[WEATHER_TOOL],
        seed=1,
        max_tokens=24,
        logit_bias=_bias(engine, "<tool_call>", 8),
    )
    message = choice["message"]
    assert "<tool_call>" in message["reasoning_content"]
    assert "tool_calls" not in message and choice["finish_reason"] == "length"


@pytest.mark.parametrize("fmt", list(ChatFormat))
def test_the_constraint_of_a_prompt_that_opens_the_reasoning(fmt: ChatFormat) -> None:
    body = {"messages": user("Hi"), "tools": [WEATHER_TOOL]}
    constraint = constraint_for(body, fmt, lambda _: None, chat=True, reasoning_open=True)
    assert constraint.parser is not None
    # a format without reasoning reads such output as content (its parser cannot start
    # inside a reasoning block)
    assert constraint.parser.reasoning_open is fmt.has_reasoning
    if fmt is not ChatFormat.CONTENT:
        opened = grammar_for(fmt, [WEATHER_TOOL], reasoning_open=fmt.has_reasoning)
        assert (constraint.grammar, constraint.triggers) == (opened.grammar, opened.triggers)
    untooled = constraint_for(
        {"messages": user("Hi")}, fmt, lambda _: None, chat=True, reasoning_open=True
    )
    assert untooled.parser is not None and untooled.parser.reasoning_open
