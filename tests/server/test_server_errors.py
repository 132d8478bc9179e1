"""Bad requests get a 4xx with OpenAI's error body naming the problem; the server keeps
serving. Also: the API key, cancellation of a client that goes away, the queue."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

import httpx
import pytest
from serve_cases import WEATHER_TOOL, user
from starlette.testclient import TestClient

from gbnfkit import SamplingParams
from gbnfkit.server import Engine, ServerConfig, create_app
from gbnfkit.server._decode import Job, Outcome, Piece


def error_of(response: httpx.Response, status: int = 400) -> dict[str, Any]:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert isinstance(error["message"], str) and error["message"]
    return dict(error)


def post(client: TestClient, **body: Any) -> httpx.Response:
    return client.post("/v1/chat/completions", json={"messages": user("Hi"), **body})


def test_broken_grammar_names_line_and_column(client: TestClient) -> None:
    error = error_of(post(client, grammar='root ::= "a" |\nfoo ::= ( "b"'))
    assert error["param"] == "grammar" and error["code"] == "invalid_grammar"
    assert "line 2, column" in error["message"]


def test_broken_schema_names_the_json_pointer(client: TestClient) -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer", "minimum": "x"}}}
    error = error_of(
        post(
            client,
            response_format={"type": "json_schema", "json_schema": {"name": "s", "schema": schema}},
        )
    )
    assert error["param"] == "response_format.json_schema.schema"
    assert error["code"] == "invalid_schema" and "/properties/a" in error["message"]
    error = error_of(post(client, json_schema={"type": "nonsense"}))
    assert error["param"] == "json_schema" and "invalid JSON Schema at /" in error["message"]


@pytest.mark.parametrize(
    ("body", "param", "words"),
    [
        ({"messages": "hi"}, "messages", "must be a non-empty array"),
        ({"messages": []}, "messages", "must be a non-empty array"),
        ({"messages": [{"role": "robot", "content": "x"}]}, "messages[0].role", "robot"),
        ({"max_tokens": 10**6}, "max_tokens", "at most"),
        ({"max_tokens": 0}, "max_tokens", "at least 1"),
        ({"temperature": "hot"}, "temperature", "a finite number"),
        ({"top_p": 1.5}, "top_p", "between 0 and 1"),
        ({"n": 100}, "n", "at most"),
        ({"seed": -5}, "seed", "at least -1"),
        ({"seed": 2**64}, "seed", "at most"),
        ({"stop": [1]}, "stop", "string"),
        ({"logit_bias": {"999999": 1}}, "logit_bias", "not in the vocabulary"),
        ({"logit_bias": {"abc": 1}}, "logit_bias", "token ids"),
        ({"response_format": {"type": "yaml"}}, "response_format.type", "yaml"),
        ({"grammar": 42}, "grammar", "a string"),
        ({"grammar": 'root ::= "a"', "json_schema": {}}, "grammar", "one of"),
        ({"grammar_lazy": True, "grammar": 'root ::= "a"'}, "grammar_triggers", "needs"),
        (
            {
                "grammar": 'root ::= "a"',
                "grammar_lazy": True,
                "grammar_triggers": [{"type": "glob", "value": "x"}],
            },
            "grammar_triggers[0].type",
            "glob",
        ),
        (
            {
                "grammar": 'root ::= "a"',
                "grammar_lazy": True,
                "grammar_triggers": [{"type": "pattern", "value": "("}],
            },
            "grammar_triggers[0]",
            "",
        ),
        (
            {
                "grammar": 'root ::= "a"',
                "grammar_lazy": True,
                "grammar_triggers": [{"type": "pattern", "value": "a{4294967296}"}],
            },
            "grammar_triggers[0]",
            "",
        ),
        (
            {
                "grammar": 'root ::= "a"',
                "grammar_lazy": True,
                "grammar_triggers": [{"type": "token", "value": "two words"}],
            },
            "grammar_triggers[0].value",
            "one token",
        ),
        (
            {
                "grammar": 'root ::= "a"',
                "grammar_lazy": True,
                "grammar_triggers": [{"type": "token", "value": 10**6}],
            },
            "grammar_triggers[0].value",
            "not a token id of the model",
        ),
        (
            {
                "grammar": 'root ::= "a"',
                "grammar_lazy": True,
                "grammar_triggers": [{"type": "token", "value": -1}],
            },
            "grammar_triggers[0].value",
            "not a token id of the model",
        ),
        ({"tools": [WEATHER_TOOL], "tool_choice": "sometimes"}, "tool_choice", "sometimes"),
        (
            {
                "tools": [WEATHER_TOOL],
                "tool_choice": {"type": "function", "function": {"name": "nope"}},
            },
            "tool_choice",
            "nope",
        ),
        ({"tools": [{"type": "function", "function": {"parameters": {}}}]}, "tools", ""),
        ({"tools": "all"}, "tools", "array"),
        (
            # a tool whose parameters schema has no grammar is the tools' fault
            {"tools": [{"type": "function", "function": {"name": "find", "parameters": {
                "type": "object", "properties": {"q": {"type": "string", "pattern": "("}}}}}]},
            "tools",
            "tool 'find': its parameters schema has no grammar",
        ),
        # a field inside an object is named by its whole path
        (
            {"stream": True, "stream_options": {"include_usage": "yes"}},
            "stream_options.include_usage",
            "'stream_options.include_usage' must be a boolean",
        ),
        (
            {
                "response_format": {
                    "type": "json_schema",
                    "json_schema": {"name": "r", "strict": "yes", "schema": {}},
                }
            },
            "response_format.json_schema.strict",
            "'response_format.json_schema.strict' must be a boolean",
        ),
        ({"max_completion_tokens": 2, "max_tokens": "many"}, "max_tokens", "an integer"),
        ({"max_completion_tokens": 0, "max_tokens": 2}, "max_completion_tokens", "at least 1"),
        ({"logprobs": 2}, "logprobs", "a boolean"),
        ({"logprobs": "yes"}, "logprobs", "a boolean"),
        ({"logprobs": False, "top_logprobs": 3}, "top_logprobs", "needs 'logprobs'"),
        ({"top_logprobs": 99}, "top_logprobs", "at most"),
        *(
            (
                {"response_format": {"type": "json_schema", "json_schema": {"name": name}}},
                "response_format.json_schema.name",
                "1 to 64 letters",
            )
            for name in ("", "a b", "x" * 65, 7, "caf\u00e9")
        ),
        ({"stream_options": {"include_usage": True}}, "stream_options", "'stream': true"),
        (
            {"stream": False, "stream_options": {"include_usage": True}},
            "stream_options",
            "'stream': true",
        ),
        *(
            ({"logit_bias": {key: 1}}, "logit_bias", "token ids")
            for key in (" 5", "5_0", "\u0665", "+5", "")
        ),
        # a message that says what is wrong with an empty value
        ({"stop": ""}, "stop", "must not be empty"),
        ({"stop": ["a", ""]}, "stop", "must not be empty"),
        ({"tools": []}, "tools", "non-empty array of tool definitions, not an empty array"),
        ({"messages": []}, "messages", "not an empty array"),
        ({"tool_choice": "required"}, "tool_choice", "needs 'tools'"),
        ({"tools": [WEATHER_TOOL], "response_format": {"type": "json_object"}}, "tools", "one of"),
        ({"messages": user("word " * 600)}, "messages", "context holds"),
    ],
)
def test_bad_fields_are_named(
    client: TestClient, body: dict[str, Any], param: str, words: str
) -> None:
    error = error_of(post(client, **body))
    assert error["param"] == param and error["type"] == "invalid_request_error"
    assert words in error["message"]


@pytest.mark.parametrize(
    "tool",
    [
        {"type": "code_interpreter"},  # refused by the chat parser
        # refused when the grammar is built: the parameters schema has none
        {"type": "function", "function": {"name": "find", "parameters": {"type": "nonsense"}}},
    ],
)
def test_every_bad_tool_definition_has_the_code_invalid_tools(
    client: TestClient, tool: dict[str, Any]
) -> None:
    """A tool whose parameters schema has no grammar answered with code null, one of the
    wrong type with 'invalid_tools' (README: the codes include invalid_tools)."""
    error = error_of(post(client, tools=[tool]))
    assert (error["param"], error["code"]) == ("tools", "invalid_tools")


def test_an_empty_completion_prompt_is_a_bad_request(client: TestClient) -> None:
    # SmolLM2 adds no BOS token: "" has no tokens, and llama.cpp has nothing to start from
    # (it was a 500, "internal error: ValueError: NULL pointer access")
    for prompt in ("", [""]):
        error = error_of(client.post("/v1/completions", json={"prompt": prompt}))
        assert error["param"] == "prompt" and "empty" in error["message"]
    assert client.post("/v1/completions", json={"prompt": "Hi", "max_tokens": 2}).status_code == 200


def test_a_grammar_that_refuses_its_trigger_word_is_a_bad_request(client: TestClient) -> None:
    # the model soon writes an "e"; the grammar cannot start with it (was a 500, "internal
    # error: TriggerRejected"); text after a word in the same token is resampled instead
    lazy = {
        "grammar": 'root ::= "x"',
        "grammar_lazy": True,
        "grammar_triggers": [{"type": "word", "value": "e"}],
        "seed": 1,
        "max_tokens": 16,
    }
    error = error_of(client.post("/v1/chat/completions", json={"messages": user("Hi"), **lazy}))
    assert error["param"] == "grammar_triggers" and "Trigger.word('e')" in error["message"]


def test_a_grammar_that_nests_past_the_limit_on_the_way_is_a_bad_request(
    client: TestClient,
) -> None:
    # after the forced words the grammar opens a chain of 2,100 rules (one parse stack of
    # 2,100 frames, past Limits.max_stack_depth): the mask that first reaches it raises
    # a LimitError mid-generation (was a 500, "internal error: LimitError")
    chain = "".join(f'r{i} ::= r{i + 1} "x"\n' for i in range(2_100))
    grammar = f'root ::= "Hello world! " r0\n{chain}r2100 ::= "b"\n'
    body = {"messages": user("Hi"), "grammar": grammar, "max_tokens": 8}
    response = client.post("/v1/chat/completions", json=body)
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "grammar_too_large" and "max_stack_depth" in error["message"]


def test_malformed_bodies_unknown_model_and_routes(client: TestClient) -> None:
    error = error_of(client.post("/v1/chat/completions", content=b'{"messages": [}'))
    assert error["code"] == "invalid_json" and "line 1, column" in error["message"]
    error_of(client.post("/v1/chat/completions", content=b"[1, 2]"))
    error_of(client.post("/v1/chat/completions", content=b"\xff\xfe"))
    error = error_of(post(client, model="gpt-4o"), 404)
    assert error["code"] == "model_not_found" and error["param"] == "model"
    error_of(client.get("/v1/nothing"), 404)
    error_of(client.get("/v1/chat/completions"), 405)
    error = error_of(client.post("/v1/completions", json={"prompt": {"a": 1}}))
    assert error["param"] == "prompt"
    for value in (True, "2", -1, 21):
        request = {"prompt": "a", "max_tokens": 1, "logprobs": value}
        assert error_of(client.post("/v1/completions", json=request))["param"] == "logprobs"
    request = {"prompt": "a", "max_tokens": 1, "logprobs": 1, "top_logprobs": 2}
    assert error_of(client.post("/v1/completions", json=request))["param"] == "top_logprobs"
    assert post(client, max_tokens=1, logprobs=False, top_logprobs=None).status_code == 200
    for field, value in (("echo", True), ("suffix", "end"), ("best_of", 2)):
        request = {"prompt": "a", "max_tokens": 1, field: value}
        error = error_of(client.post("/v1/completions", json=request))
        assert error["param"] == field and error["code"] == "unsupported_parameter"
    for field, value in (("echo", "yes"), ("suffix", 3), ("best_of", 0)):
        request = {"prompt": "a", "max_tokens": 1, field: value}
        assert error_of(client.post("/v1/completions", json=request))["param"] == field
    fine = {"prompt": "a", "max_tokens": 1, "echo": False, "suffix": "", "best_of": 1}
    assert client.post("/v1/completions", json=fine).status_code == 200
    error = error_of(client.post("/v1/completions", json={"prompt": [10**7]}))
    assert "not in the vocabulary" in error["message"]
    error = error_of(client.post("/v1/chat/completions", content=b"{" * 100_000 + b"}" * 10))
    assert error["code"] == "invalid_json"
    assert client.get("/health").json()["status"] == "ok"
    assert post(client, max_tokens=2).status_code == 200


def test_oversize_body(engine: Engine) -> None:
    app = create_app(ServerConfig(max_body_bytes=1000), engine=engine)
    with TestClient(app) as small:
        error = error_of(post(small, padding="x" * 2000), 413)
        assert error["code"] == "request_too_large"


def test_an_oversize_body_is_refused_before_it_is_all_read(engine: Engine) -> None:
    app = create_app(ServerConfig(max_body_bytes=1000), engine=engine)
    reads, sent = 0, []

    async def receive() -> dict[str, Any]:  # a client sending 1000 chunks of 1000 bytes
        nonlocal reads
        reads += 1
        return {"type": "http.request", "body": b" " * 1000, "more_body": reads < 1000}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
        "scheme": "http", "path": "/v1/chat/completions", "raw_path": b"/v1/chat/completions",
        "query_string": b"", "root_path": "", "headers": [], "client": ("c", 1),
        "server": ("s", 80),
    }
    asyncio.run(app(scope, receive, send))
    assert sent[0]["status"] == 413
    assert reads <= 2  # the second chunk is beyond the limit: nothing more is read


def test_api_key(engine: Engine) -> None:
    app = create_app(ServerConfig(api_key="sesame", max_tokens=4), engine=engine)
    with TestClient(app) as locked:
        assert locked.get("/health").status_code == 200  # open, for load balancers
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "sesame"}):
            response = locked.get("/v1/models", headers=headers)
            error = error_of(response, 401)
            assert error["type"] == "authentication_error"
        good = {"Authorization": "Bearer sesame"}
        assert locked.get("/v1/models", headers=good).status_code == 200
        response = locked.post("/v1/chat/completions", headers=good, json={"messages": user("Hi")})
        assert response.status_code == 200


def test_a_closed_stream_cancels_its_generation(engine: Engine) -> None:
    async def scenario() -> tuple[int, bool]:
        cancel = threading.Event()
        prompt = engine.chat_prompt([{"role": "user", "content": "Write a long story."}])
        job = Job(prompt, None, SamplingParams(seed=1), 400, (), cancel)
        pieces = engine.generate(job)
        first = await pieces.__anext__()
        assert isinstance(first, Piece)
        await pieces.aclose()  # what Starlette does when the client goes away
        for _ in range(200):  # the slot comes back once the worker has seen the event
            if engine.busy == 0:
                break
            await asyncio.sleep(0.01)
        return engine.busy, cancel.is_set()

    busy, cancelled = asyncio.run(scenario())
    assert cancelled and busy == 0


def test_requests_beyond_the_slots_wait_and_all_finish(engine: Engine) -> None:
    app = create_app(ServerConfig(max_tokens=6), engine=engine)

    async def scenario() -> list[int]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as http:
            bodies = [{"messages": user(f"Count to {i}"), "seed": i} for i in range(5)]
            bodies += [{"messages": user("yes?"), "grammar": 'root ::= "yes" | "no"'}]
            responses = await asyncio.gather(
                *(http.post("/v1/chat/completions", json=b) for b in bodies)
            )
            return [r.status_code for r in responses]

    assert asyncio.run(scenario()) == [200] * 6
    assert engine.busy == 0 and engine.waiting == 0


def test_outcome_counts_tokens_without_eos(engine: Engine) -> None:
    async def scenario() -> Outcome:
        prompt = engine.chat_prompt([{"role": "user", "content": "Yes or no?"}])
        compiled = await engine.compiled(
            __import__("gbnfkit").Grammar.from_gbnf('root ::= "yes" | "no"')
        )
        job = Job(
            prompt, engine.matcher(compiled, ()), SamplingParams(seed=1), 20, (), threading.Event()
        )
        async for item in engine.generate(job):
            if isinstance(item, Outcome):
                return item
        raise AssertionError("no outcome")

    outcome = asyncio.run(scenario())
    ids = engine.tokenize(outcome.text, add_bos=False)
    assert outcome.text in ("yes", "no") and outcome.completion_tokens == len(ids)


@pytest.mark.parametrize(
    ("raw", "param", "words"),
    [
        # a JSON integer too large for a float: range-checked, not an OverflowError
        (b'"temperature": 1' + b"0" * 400, "temperature", "between 0 and 2, not a 401-digit"),
        (b'"repeat_penalty": 1' + b"0" * 400, "repeat_penalty", "finite number, not a 401-digit"),
        (b'"logit_bias": {"1": -1' + b"0" * 400 + b"}", "logit_bias", "not a negative 401-digit"),
        (b'"temperature": NaN', "temperature", "finite number, not NaN"),
        (b'"top_p": -Infinity', "top_p", "between 0 and 1, not -Infinity"),
    ],
)
def test_numbers_a_float_cannot_hold_are_refused_by_name(
    client: TestClient, raw: bytes, param: str, words: str
) -> None:
    body = b'{"messages": [{"role": "user", "content": "Hi"}], ' + raw + b"}"
    error = error_of(client.post("/v1/chat/completions", content=body))
    assert error["param"] == param and words in error["message"], error


def test_a_body_with_an_integer_python_will_not_read_is_invalid_json(
    client: TestClient,
) -> None:
    # Python refuses to convert integers of more than 4,300 digits (a ValueError that is
    # not a JSONDecodeError)
    body = b'{"messages": [{"role": "user", "content": "Hi"}], "seed": 1' + b"0" * 5000 + b"}"
    error = error_of(client.post("/v1/chat/completions", content=body))
    assert error["code"] == "invalid_json" and "digits" in error["message"]


@pytest.mark.parametrize("arguments", ["[" * 100_000, "1" + "0" * 5000, "{nope", "null"])
def test_earlier_tool_call_arguments_that_json_cannot_read_stay_text(
    client: TestClient, arguments: str
) -> None:
    """An assistant turn's tool-call ``arguments`` string is written into the prompt as
    JSON when it parses, else as the text it is: never a 500 (deep nesting, huge ints)."""
    call = {"type": "function", "function": {"name": "f", "arguments": arguments}}
    messages = [*user("Hi"), {"role": "assistant", "content": "", "tool_calls": [call]}]
    response = client.post(
        "/v1/chat/completions", json={"messages": messages, "max_tokens": 1}
    )
    if response.status_code != 200:  # a long argument may not fit the context
        assert error_of(response)["code"] == "context_length_exceeded"


@pytest.mark.parametrize("path", ["/v1/chat/completions", "/v1/completions"])
def test_a_stream_that_fails_reports_a_server_error(
    client: TestClient, engine: Engine, monkeypatch: pytest.MonkeyPatch, path: str
) -> None:
    def broken(*args: object) -> None:
        raise RuntimeError("the slot broke")

    monkeypatch.setattr(engine, "matcher", broken)  # called once the stream has started
    body = {"messages": user("Hi"), "prompt": "Hi", "max_tokens": 2, "stream": True}
    response = client.post(path, json={**body, "grammar": 'root ::= "a"'})
    assert response.status_code == 200 and response.text.endswith("data: [DONE]\n\n")
    event = json.loads(response.text.split("\n\n")[-3][len("data: ") :])
    assert event["error"]["type"] == "server_error"  # not the client's fault
    assert "the slot broke" in event["error"]["message"]


def test_api_error_is_a_gbnfkit_error_and_pickles() -> None:
    # Engine.compiled / Engine.generate (public) raise it: `except GbnfkitError` must catch
    # it, and it must reach a parent process whole, as every gbnfkit exception does
    import pickle

    from gbnfkit import GbnfkitError
    from gbnfkit.server import ApiError

    error = ApiError("too large", status=413, param="messages", code="too_large")
    assert isinstance(error, GbnfkitError)
    back = pickle.loads(pickle.dumps(error))
    assert (type(back), back.status, back.param, back.code, back.body()) == (
        ApiError, 413, "messages", "too_large", error.body())  # fmt: skip
