"""A chat template given to the server (``ServerConfig.chat_template``, ``gbnfkit serve
--chat-template-file``): it renders every chat prompt instead of the GGUF's, the tool-call
format is chosen from it, and a template that fails is one error (at load, or per request)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from serve_cases import WEATHER_TOOL, user
from starlette.testclient import TestClient

from gbnfkit import ChatTemplateError
from gbnfkit.chat import ChatFormat
from gbnfkit.server import Engine, ServerConfig, create_app
from gbnfkit.server._prompt import format_from_template

# Mistral's way: [INST] turns, tool calls after [TOOL_CALLS]; nothing like SmolLM2's ChatML
MISTRAL_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}"
    "{% if m.role == 'assistant' %}{{ m.content }}{{ eos_token }}"
    "{% else %}[INST] {{ m.content }} [/INST]{% endif %}{% endfor %}"
    "{# tool calls: [TOOL_CALLS][{...}] #}"
)


@pytest.mark.parametrize(
    ("template", "fmt"),
    [
        (MISTRAL_TEMPLATE, ChatFormat.MISTRAL),
        ("{{ '<|im_start|>' }}{{ messages[0].content }}", ChatFormat.HERMES),
        ("{% if tools %}<tool_call>{% endif %}<|im_start|>", ChatFormat.HERMES),
        ("<function=x>{{ messages }}", ChatFormat.QWEN3_CODER),
        ("<|python_tag|>", ChatFormat.LLAMA3),
        ("<｜tool▁calls▁begin｜>", ChatFormat.DEEPSEEK_R1),
        ("### User: {{ messages[0].content }}\n### Assistant:", ChatFormat.CONTENT),
        (None, ChatFormat.CONTENT),
    ],
)
def test_the_format_follows_the_template_text(template: str | None, fmt: ChatFormat) -> None:
    assert format_from_template(template) is fmt


@pytest.fixture(scope="module")
def mistral() -> Iterator[Engine]:
    """The bundled model (its GGUF template is ChatML) behind Mistral's template."""
    engine = Engine(ServerConfig(ctx_size=512, threads=1, chat_template=MISTRAL_TEMPLATE))
    yield engine
    engine.close()


def test_the_given_template_renders_the_prompt(mistral: Engine) -> None:
    assert mistral.template == MISTRAL_TEMPLATE
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello."},
        {"role": "user", "content": "Bye"},
    ]
    prompt = mistral.render_chat(messages)
    # bos_token and eos_token are the model's (SmolLM2: <|im_start|>, <|im_end|>)
    assert prompt.text == (
        "<|im_start|>[INST] Be brief. [/INST][INST] Hi [/INST]Hello.<|im_end|>[INST] Bye [/INST]"
    )
    assert prompt.ids == mistral.tokenize(prompt.text, add_bos=False)
    assert prompt.ids.count(mistral._llm.token_bos()) == 1


def test_the_tool_call_format_is_chosen_from_the_given_template(mistral: Engine) -> None:
    assert mistral.chat_format is ChatFormat.MISTRAL
    client = TestClient(create_app(ServerConfig(max_tokens=64), engine=mistral))
    with client:
        meta = client.get("/v1/models").json()["data"][0]["meta"]
        assert meta["chat_format"] == "mistral"
        body = {
            "messages": user("What is the weather in Oslo?"),
            "tools": [WEATHER_TOOL],
            "tool_choice": "required",
            "seed": 3,
            "max_tokens": 64,
        }
        reply = client.post("/v1/chat/completions", json=body)
    assert reply.status_code == 200, reply.text
    choice = reply.json()["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    call = choice["message"]["tool_calls"][0]["function"]
    assert call["name"] == "get_weather"
    assert json.loads(call["arguments"])["city"] in {"Paris", "Oslo", "Rome"}
    assert choice["message"]["content"] is None


def test_chat_format_given_wins_over_the_template() -> None:
    engine = Engine(
        ServerConfig(
            ctx_size=256, threads=1, chat_template=MISTRAL_TEMPLATE, chat_format=ChatFormat.LLAMA3
        )
    )
    try:
        assert engine.template == MISTRAL_TEMPLATE and engine.chat_format is ChatFormat.LLAMA3
    finally:
        engine.close()


@pytest.mark.parametrize(
    ("template", "line", "words"),
    [
        ("{% for m in messages %}\n{{ m.content }\n{% endfor %}", 2, "not valid Jinja"),
        ("", None, "the chat template is empty"),
    ],
)
def test_a_template_that_does_not_parse_stops_the_engine(
    template: str, line: int | None, words: str
) -> None:
    with pytest.raises(ChatTemplateError) as caught:
        Engine(ServerConfig(ctx_size=256, threads=1, parallel=2, chat_template=template))
    assert caught.value.line == line and words in str(caught.value)


# refuses a conversation without a system message; fails on a message it cannot add to
STRICT_TEMPLATE = (
    "{% if messages[0].role != 'system' %}{{ raise_exception('a system message comes first') }}"
    "{% endif %}{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}\n"
    "{% if messages | length > 2 %}{{ messages[2].content + 1 }}{% endif %}assistant:"
)


@pytest.fixture(scope="module")
def strict() -> Iterator[TestClient]:
    engine = Engine(ServerConfig(ctx_size=256, threads=1, chat_template=STRICT_TEMPLATE))
    try:
        with TestClient(create_app(ServerConfig(max_tokens=2), engine=engine)) as client:
            yield client
    finally:
        engine.close()


def test_a_request_the_template_refuses_is_a_400(strict: TestClient) -> None:
    reply = strict.post("/v1/chat/completions", json={"messages": user("Hi"), "max_tokens": 1})
    assert reply.status_code == 400
    error = reply.json()["error"]
    assert error["type"] == "invalid_request_error" and error["param"] == "messages"
    assert error["message"] == (
        "'messages': the chat template refuses them: line 1: a system message comes first"
    )


def test_a_request_the_template_fails_on_is_a_500(strict: TestClient) -> None:
    messages = [{"role": "system", "content": "S"}, *user("a"), *user("b")]
    reply = strict.post("/v1/chat/completions", json={"messages": messages, "max_tokens": 1})
    assert reply.status_code == 500
    error = reply.json()["error"]
    assert (error["type"], error["code"]) == ("server_error", "chat_template_error")
    assert error["message"].startswith("the chat template fails on these messages: line 3: ")
    assert "TypeError: can only concatenate str" in error["message"]
    # the server goes on: a conversation the template takes is served
    fine = [{"role": "system", "content": "S"}, *user("a")]
    reply = strict.post("/v1/chat/completions", json={"messages": fine, "max_tokens": 1})
    assert reply.status_code == 200, reply.text

