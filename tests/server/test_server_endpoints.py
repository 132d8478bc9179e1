"""Every endpoint through the ASGI app (starlette's TestClient), on the bundled model."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
from serve_cases import MAX_TOKENS, SMALL_SCHEMA, WEATHER_TOOL, user
from starlette.testclient import TestClient

from gbnfkit.server import Engine, ServerConfig, create_app


def chat(client: TestClient, **body: Any) -> dict[str, Any]:
    response = client.post("/v1/chat/completions", json=body)
    assert response.status_code == 200, response.text
    return dict(response.json())


def events(client: TestClient, path: str, **body: Any) -> list[dict[str, Any]]:
    response = client.post(path, json={**body, "stream": True})
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/event-stream")
    lines = [line for line in response.text.split("\n\n") if line]
    assert all(line.startswith("data: ") for line in lines)
    assert lines[-1] == "data: [DONE]"
    return [json.loads(line[len("data: ") :]) for line in lines[:-1]]


def without_cache(usage: dict[str, Any]) -> dict[str, Any]:
    """Usage but for the cached prompt tokens, which depend on the requests before."""
    return {k: v for k, v in usage.items() if k != "prompt_tokens_details"}


def test_health_and_models(client: TestClient, engine: Engine) -> None:
    health = client.get("/health").json()
    assert health["status"] == "ok" and health["slots_idle"] == 2
    models = client.get("/v1/models").json()
    assert models["object"] == "list"
    assert [m["id"] for m in models["data"]] == ["SmolLM2-135M-Instruct.Q4_1"]
    assert models["data"][0]["meta"]["chat_format"] == "hermes"
    # the OpenAI client's models.retrieve(id)
    one = client.get("/v1/models/SmolLM2-135M-Instruct.Q4_1")
    assert one.status_code == 200 and one.json() == models["data"][0]
    other = client.get("/v1/models/gpt-4o")
    assert other.status_code == 404
    assert other.json()["error"]["code"] == "model_not_found"


def test_plain_chat_counts_usage(client: TestClient, engine: Engine) -> None:
    result = chat(client, messages=user("Say hello."), max_tokens=5, seed=3)
    assert result["object"] == "chat.completion"
    choice = result["choices"][0]
    assert choice["message"]["role"] == "assistant" and choice["message"]["content"]
    assert choice["finish_reason"] == "length"
    assert result["timings"]["predicted_n"] == 5 and result["timings"]["grammar_ms"] == 0
    prompt = engine.chat_prompt([{"role": "user", "content": "Say hello."}])
    cached = result["usage"]["prompt_tokens_details"]["cached_tokens"]
    assert result["usage"] == {
        "prompt_tokens": len(prompt),
        "completion_tokens": 5,
        "total_tokens": len(prompt) + 5,
        "prompt_tokens_details": {"cached_tokens": cached},
    }
    # the slot's cache keeps what an earlier request began with; the last token is
    # always evaluated (its logits are the first step's)
    assert 0 <= cached < len(prompt)
    assert result["timings"]["cache_n"] + result["timings"]["prompt_n"] == len(prompt)


def test_json_schema_output_validates(client: TestClient) -> None:
    response_format = {
        "type": "json_schema",
        "json_schema": {"name": "r", "schema": SMALL_SCHEMA, "strict": True},
    }
    for seed in (1, 2):
        result = chat(
            client,
            messages=user("Reply in JSON."),
            response_format=response_format,
            seed=seed,
            temperature=1.0,
        )
        choice = result["choices"][0]
        assert choice["finish_reason"] == "stop"
        jsonschema.validate(json.loads(choice["message"]["content"]), SMALL_SCHEMA)


def test_json_object_and_llama_cpp_json_schema(client: TestClient) -> None:
    result = chat(
        client,
        messages=user("A JSON object with one key."),
        response_format={"type": "json_object"},
        seed=1,
        max_tokens=MAX_TOKENS,
    )
    text = result["choices"][0]["message"]["content"]
    assert text.lstrip().startswith("{")
    if result["choices"][0]["finish_reason"] == "stop":
        assert isinstance(json.loads(text), dict)
    result = chat(client, messages=user("JSON please"), json_schema=SMALL_SCHEMA, seed=4)
    jsonschema.validate(json.loads(result["choices"][0]["message"]["content"]), SMALL_SCHEMA)


def test_gbnf_grammar(client: TestClient) -> None:
    result = chat(
        client, messages=user("Is the sky blue?"), grammar='root ::= "yes" | "no"', seed=5
    )
    assert result["choices"][0]["message"]["content"] in ("yes", "no")
    assert result["choices"][0]["finish_reason"] == "stop"


def test_lazy_grammar_with_triggers(client: TestClient) -> None:
    result = chat(
        client,
        messages=user("Count from one to five."),
        grammar='root ::= "ANSWER: " [0-9]',
        grammar_lazy=True,
        grammar_triggers=[{"type": "word", "value": "ANSWER: "}],
        logit_bias={},
        seed=2,
        max_tokens=12,
    )
    text = result["choices"][0]["message"]["content"]
    if "ANSWER: " in text:  # once woken the grammar holds: one digit, then the end
        tail = text[text.index("ANSWER: ") + len("ANSWER: ") :]
        assert len(tail) <= 1 and (tail == "" or tail.isdigit())


def test_required_tool_call_parses_into_the_schema(client: TestClient) -> None:
    result = chat(
        client,
        messages=user("What is the weather in Paris?"),
        tools=[WEATHER_TOOL],
        tool_choice="required",
        parallel_tool_calls=False,
        seed=1,
    )
    choice = result["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    calls = choice["message"]["tool_calls"]
    assert calls and all(call["type"] == "function" and call["id"] for call in calls)
    for call in calls:
        assert call["function"]["name"] == "get_weather"
        arguments = json.loads(call["function"]["arguments"])
        jsonschema.validate(arguments, WEATHER_TOOL["function"]["parameters"])


def test_named_tool_choice_and_none(client: TestClient) -> None:
    other = {
        "type": "function",
        "function": {
            "name": "get_time",
            "parameters": {"type": "object", "properties": {}, "additionalProperties": False},
        },
    }
    named = {"type": "function", "function": {"name": "get_time"}}
    result = chat(
        client,
        messages=user("Weather in Oslo?"),
        tools=[WEATHER_TOOL, other],
        tool_choice=named,
        parallel_tool_calls=False,
        seed=1,
    )
    calls = result["choices"][0]["message"]["tool_calls"]
    assert {call["function"]["name"] for call in calls} == {"get_time"}
    result = chat(
        client,
        messages=user("Weather in Oslo?"),
        tools=[WEATHER_TOOL],
        tool_choice="none",
        seed=1,
        max_tokens=8,
    )
    assert "tool_calls" not in result["choices"][0]["message"]


def test_stream_concatenates_to_the_whole_message(client: TestClient) -> None:
    for extra in (
        {"messages": user("Tell me about cats.")},
        {"messages": user("Weather in Rome?"), "tools": [WEATHER_TOOL], "tool_choice": "required"},
        {
            "messages": user("Reply in JSON"),
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": "r", "schema": SMALL_SCHEMA},
            },
        },
    ):
        body = {**extra, "seed": 7, "max_tokens": 30}
        whole = chat(client, **body)
        chunks = events(
            client, "/v1/chat/completions", **body, stream_options={"include_usage": True}
        )
        assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
        content, calls, finish = "", {}, None
        for chunk in chunks[:-1]:
            assert chunk["object"] == "chat.completion.chunk" and chunk["usage"] is None
            choice = chunk["choices"][0]
            delta = choice["delta"]
            content += delta.get("content") or ""
            for call in delta.get("tool_calls", []):
                entry = calls.setdefault(call["index"], {"name": "", "arguments": ""})
                entry["name"] += call["function"].get("name", "")
                entry["arguments"] += call["function"]["arguments"]
            finish = choice["finish_reason"] or finish
        message = whole["choices"][0]["message"]
        assert content == (message["content"] or "")
        expected = [
            {"name": c["function"]["name"], "arguments": c["function"]["arguments"]}
            for c in message.get("tool_calls", [])
        ]
        assert [calls[i] for i in sorted(calls)] == expected
        assert finish == whole["choices"][0]["finish_reason"]
        # the same counts; the stream's prompt is cached (the whole answer evaluated it)
        assert chunks[-1]["choices"] == [] and without_cache(chunks[-1]["usage"]) == without_cache(
            whole["usage"]
        )


def test_stop_strings_and_n(client: TestClient) -> None:
    result = chat(
        client,
        messages=user("List three fruits, one per line."),
        stop=["\n"],
        seed=1,
        max_tokens=30,
        n=2,
    )
    assert [c["index"] for c in result["choices"]] == [0, 1]
    for choice in result["choices"]:
        assert "\n" not in choice["message"]["content"]
    assert result["usage"]["completion_tokens"] <= 60


def test_sampling_fields_are_taken(client: TestClient) -> None:
    body = {
        "messages": user("Pick a word."),
        "seed": 11,
        "max_tokens": 6,
        "temperature": 0.7,
        "top_p": 0.9,
        "top_k": 20,
        "min_p": 0.01,
        "presence_penalty": 0.5,
        "frequency_penalty": 0.5,
        "repeat_penalty": 1.1,
        "max_completion_tokens": 6,
    }
    first, second = chat(client, **body), chat(client, **body)
    assert first["choices"][0]["message"] == second["choices"][0]["message"]
    # banning the greedy token changes a greedy reply
    greedy = chat(client, messages=user("Hi"), temperature=0, max_tokens=1)
    text = greedy["choices"][0]["message"]["content"]
    token = client.app.state.engine.tokenize(text, add_bos=False)[0]  # type: ignore[attr-defined]
    banned = chat(
        client, messages=user("Hi"), temperature=0, max_tokens=1, logit_bias={str(token): -100}
    )
    assert banned["choices"][0]["message"]["content"] != text


def test_completions(client: TestClient) -> None:
    response = client.post(
        "/v1/completions", json={"prompt": "The capital of France is", "max_tokens": 4, "seed": 1}
    )
    result = response.json()
    assert response.status_code == 200 and result["object"] == "text_completion"
    assert result["usage"]["completion_tokens"] <= 4 and result["choices"][0]["text"]
    result = client.post(
        "/v1/completions",
        json={"prompt": "Answer yes or no:", "grammar": 'root ::= "yes" | "no"', "seed": 1},
    ).json()
    assert result["choices"][0]["text"] in ("yes", "no")
    chunks = events(client, "/v1/completions", prompt="One, two,", max_tokens=6, seed=2)
    streamed = "".join(c["choices"][0]["text"] for c in chunks)
    whole = client.post(
        "/v1/completions", json={"prompt": "One, two,", "max_tokens": 6, "seed": 2}
    ).json()
    assert streamed == whole["choices"][0]["text"]
    assert chunks[-1]["choices"][0]["finish_reason"] == whole["choices"][0]["finish_reason"]


def test_auto_tool_choice_wakes_the_lazy_grammar(engine: Engine) -> None:
    # room for the content the model writes before its call, and the call's closing tag
    # (SmolLM2 writes about 54 tokens here; the module's client stops at MAX_TOKENS)
    app = create_app(ServerConfig(max_tokens=96), engine=engine)
    with TestClient(app) as roomy:
        result = chat(
            roomy,
            messages=user("Write <tool_call> and then call get_weather for Paris."),
            tools=[WEATHER_TOOL],
            parallel_tool_calls=False,
            seed=0,
            temperature=0.2,
        )
    choice = result["choices"][0]
    assert choice["finish_reason"] == "tool_calls", choice
    (call,) = choice["message"]["tool_calls"]
    assert call["function"]["name"] == "get_weather"
    assert json.loads(call["function"]["arguments"]) == {"city": "Paris"}


def test_seed_minus_one_is_random(client: TestClient) -> None:
    result = chat(client, messages=user("Hi"), seed=-1, max_tokens=2)
    assert result["usage"]["completion_tokens"] == 2


def test_chat_logprobs_whole_and_streamed(client: TestClient) -> None:
    for extra in (
        {"messages": user("Tell me about cats.")},
        {"messages": user("Yes or no?"), "grammar": 'root ::= ("yes" | "no") " " [a-z]+'},
        {"messages": user("Weather in Rome?"), "tools": [WEATHER_TOOL], "tool_choice": "required"},
    ):
        body = {**extra, "seed": 5, "max_tokens": 12, "logprobs": True, "top_logprobs": 3}
        whole = chat(client, **body)
        choice = whole["choices"][0]
        content = choice["logprobs"]["content"]
        assert choice["logprobs"]["refusal"] is None
        # one entry per generated token (an end-of-sequence token is not one)
        assert len(content) == whole["usage"]["completion_tokens"]
        for entry in content:
            assert entry["logprob"] <= 0 and bytes(entry["bytes"]).decode("utf-8", "replace")
            top = entry["top_logprobs"]
            assert len(top) == 3 and [t["logprob"] for t in top] == sorted(
                (t["logprob"] for t in top), reverse=True
            )
            # the model's own distribution: the top tokens are its most likely ones
            assert top[0]["logprob"] >= entry["logprob"]
        if "tools" not in extra:  # the text is the tokens' text
            text = b"".join(bytes(e["bytes"]) for e in content).decode()
            assert text == choice["message"]["content"]
        chunks = events(client, "/v1/chat/completions", **body)
        assert chunks[0]["choices"][0]["logprobs"] is None  # the role's chunk
        streamed = [
            e
            for c in chunks[1:]
            for e in (c["choices"][0]["logprobs"] or {"content": []})["content"]
        ]
        assert all(c["choices"][0]["logprobs"] is not None for c in chunks[1:])
        assert [e["token"] for e in streamed] == [e["token"] for e in content]
        assert [e["logprob"] for e in streamed] == [e["logprob"] for e in content]
    plain = chat(client, messages=user("Hi"), max_tokens=2, logprobs=False)
    assert plain["choices"][0]["logprobs"] is None
    no_top = chat(client, messages=user("Hi"), max_tokens=2, logprobs=True)
    assert all(e["top_logprobs"] == [] for e in no_top["choices"][0]["logprobs"]["content"])


def test_completion_logprobs_whole_and_streamed(client: TestClient) -> None:
    body = {"prompt": "One, two,", "max_tokens": 6, "seed": 2, "logprobs": 2}
    whole = client.post("/v1/completions", json=body).json()
    choice = whole["choices"][0]
    logprobs = choice["logprobs"]
    assert "".join(logprobs["tokens"]) == choice["text"]
    assert len(logprobs["tokens"]) == whole["usage"]["completion_tokens"]
    offsets = [len("".join(logprobs["tokens"][:i])) for i in range(len(logprobs["tokens"]))]
    assert logprobs["text_offset"] == offsets
    assert all(
        len(top) <= 2 and max(top.values()) >= lp
        for top, lp in zip(logprobs["top_logprobs"], logprobs["token_logprobs"], strict=True)
    )
    chunks = events(client, "/v1/completions", **body)
    streamed: dict[str, list[Any]] = {"tokens": [], "token_logprobs": [], "text_offset": []}
    for chunk in chunks:
        part = chunk["choices"][0]["logprobs"]
        for key, values in streamed.items():
            values.extend(part[key])
    assert streamed == {key: logprobs[key] for key in streamed}
    # cut by a stop string: the tokens of the cut-off text are not reported
    stopped = client.post("/v1/completions", json={**body, "stop": [","]}).json()["choices"][0]
    assert "".join(stopped["logprobs"]["tokens"]).startswith(stopped["text"])
    assert all(
        offset < max(len(stopped["text"]), 1) for offset in stopped["logprobs"]["text_offset"]
    )


def test_tokenize_detokenize_and_apply_template(client: TestClient, engine: Engine) -> None:
    text = "Grammar 媽 🤗 <|im_end|>"
    ids = client.post("/tokenize", json={"content": text}).json()["tokens"]
    assert ids == engine.tokenize(text, add_bos=False)
    assert engine.token_of("<|im_end|>") in ids  # special tokens' text is read as them
    literal = client.post("/tokenize", json={"content": text, "parse_special": False}).json()
    assert engine.token_of("<|im_end|>") not in literal["tokens"]
    assert client.post("/detokenize", json={"tokens": ids}).json() == {"content": text}
    pieces = client.post("/tokenize", json={"content": text, "with_pieces": True}).json()
    assert [p["id"] for p in pieces["tokens"]] == ids
    # a piece is its text, or its bytes when they are not whole UTF-8 (the emoji's)
    data = b"".join(
        p["piece"].encode() if isinstance(p["piece"], str) else bytes(p["piece"])
        for p in pieces["tokens"]
    )
    assert data.decode() == text
    assert any(isinstance(p["piece"], list) for p in pieces["tokens"])
    half = client.post("/detokenize", json={"tokens": ids[:-2]}).json()["content"]
    assert text.startswith(half.rstrip("\ufffd"))
    messages = user("Hi there")
    prompt = client.post("/apply-template", json={"messages": messages}).json()["prompt"]
    assert prompt == engine.render_chat(messages).text and "Hi there" in prompt
    with_tools = client.post(
        "/apply-template", json={"messages": messages, "tools": [WEATHER_TOOL]}
    ).json()["prompt"]
    assert "get_weather" in with_tools and "get_weather" not in prompt
    for path, body, param in (
        ("/tokenize", {}, "content"),
        ("/tokenize", {"content": 5}, "content"),
        ("/tokenize", {"content": "a", "with_pieces": "yes"}, "with_pieces"),
        ("/detokenize", {"tokens": [1, "2"]}, "tokens"),
        ("/detokenize", {"tokens": [engine.vocabulary.size]}, "tokens"),
        ("/detokenize", {"tokens": [True]}, "tokens"),
        ("/apply-template", {}, "messages"),
        ("/apply-template", {"messages": []}, "messages"),
    ):
        response = client.post(path, json=body)
        assert response.status_code == 400, (path, body)
        assert response.json()["error"]["param"] == param
