"""The official ``openai`` client against a live server on loopback (the bundled model)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import jsonschema
import openai
import pytest
from live_server import live_server
from serve_cases import SMALL_SCHEMA, WEATHER_TOOL

from gbnfkit.server import Engine, ServerConfig

KEY = "test-key"
MESSAGES: Any = [{"role": "user", "content": "What is the weather in Paris?"}]


@pytest.fixture(scope="module")
def base_url(engine: Engine) -> Iterator[str]:
    with live_server(engine, ServerConfig(api_key=KEY, max_tokens=48)) as url:
        yield url


@pytest.fixture(scope="module")
def api(base_url: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=base_url, api_key=KEY, max_retries=0, timeout=120)


@pytest.fixture(scope="module")
def model(api: openai.OpenAI) -> str:
    return api.models.list().data[0].id


def test_json_schema_outputs_validate(api: openai.OpenAI, model: str) -> None:
    for seed in (1, 2, 3):
        completion = api.chat.completions.create(
            model=model,
            messages=[{"role": "user", "content": "Reply with JSON."}],
            response_format={
                "type": "json_schema",
                "json_schema": {"name": "r", "schema": SMALL_SCHEMA, "strict": True},
            },
            seed=seed,
        )
        text = completion.choices[0].message.content
        assert text is not None
        jsonschema.validate(json.loads(text), SMALL_SCHEMA)
        assert completion.usage is not None and completion.usage.completion_tokens > 0


def test_tool_calls_parse_into_the_tool_schema(api: openai.OpenAI, model: str) -> None:
    completion = api.chat.completions.create(
        model=model,
        messages=MESSAGES,
        tools=[WEATHER_TOOL],
        tool_choice="required",
        parallel_tool_calls=False,
        seed=1,
    )
    choice = completion.choices[0]
    assert choice.finish_reason == "tool_calls" and choice.message.tool_calls
    for call in choice.message.tool_calls:
        assert call.function.name == "get_weather"
        jsonschema.validate(
            json.loads(call.function.arguments), WEATHER_TOOL["function"]["parameters"]
        )


def test_streamed_deltas_make_the_message(api: openai.OpenAI, model: str) -> None:
    for extra in (
        {},
        {"tools": [WEATHER_TOOL], "tool_choice": "required", "parallel_tool_calls": False},
    ):
        whole = api.chat.completions.create(
            model=model, messages=MESSAGES, seed=9, max_tokens=24, **extra
        )
        stream = api.chat.completions.create(
            model=model,
            messages=MESSAGES,
            seed=9,
            max_tokens=24,
            stream=True,
            stream_options={"include_usage": True},
            **extra,
        )
        content, arguments, names, usage = "", "", "", None
        for chunk in stream:
            if chunk.usage is not None:
                usage = chunk.usage
            for choice in chunk.choices:
                content += choice.delta.content or ""
                for call in choice.delta.tool_calls or []:
                    names += (call.function.name or "") if call.function else ""
                    arguments += (call.function.arguments or "") if call.function else ""
        message = whole.choices[0].message
        assert content == (message.content or "")
        calls = message.tool_calls or []
        assert names == "".join(c.function.name for c in calls)
        assert arguments == "".join(c.function.arguments for c in calls)
        assert usage is not None and whole.usage is not None
        # the same counts; the stream's prompt is cached (the whole answer evaluated it)
        for field in ("prompt_tokens", "completion_tokens", "total_tokens"):
            assert getattr(usage, field) == getattr(whole.usage, field)


def test_completions_endpoint(api: openai.OpenAI, model: str) -> None:
    completion = api.completions.create(model=model, prompt="Paris is", max_tokens=4, seed=1)
    assert completion.choices[0].text and completion.usage is not None


def test_refusals_are_openai_errors(base_url: str, api: openai.OpenAI, model: str) -> None:
    stranger = openai.OpenAI(base_url=base_url, api_key="wrong", max_retries=0)
    with pytest.raises(openai.AuthenticationError):
        stranger.models.list()
    with pytest.raises(openai.NotFoundError):
        api.chat.completions.create(model="gpt-4o", messages=MESSAGES)
    with pytest.raises(openai.BadRequestError) as caught:
        api.chat.completions.create(
            model=model, messages=MESSAGES, extra_body={"grammar": 'root ::= "a" "'}
        )
    assert caught.value.code == "invalid_grammar" and "line 1" in caught.value.message


def test_logprobs_parse_in_the_client(api: openai.OpenAI, model: str) -> None:
    completion = api.chat.completions.create(
        model=model,
        messages=[{"role": "user", "content": "Yes or no?"}],
        extra_body={"grammar": 'root ::= "yes" | "no"'},
        logprobs=True,
        top_logprobs=2,
        seed=1,
    )
    choice = completion.choices[0]
    assert choice.logprobs is not None and choice.logprobs.content is not None
    tokens = choice.logprobs.content
    assert "".join(t.token for t in tokens) == choice.message.content
    assert all(len(t.top_logprobs) == 2 and t.logprob <= 0 for t in tokens)
    legacy = api.completions.create(model=model, prompt="One, two,", max_tokens=3, logprobs=1)
    assert legacy.choices[0].logprobs is not None
    assert "".join(legacy.choices[0].logprobs.tokens or []) == legacy.choices[0].text
