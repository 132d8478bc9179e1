"""A fuzzed request corpus (random JSON bodies, broken grammars, broken schemas) never makes
the server fail: every answer is a 200 or a 4xx with OpenAI's error body, and it keeps
serving."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from serve_cases import SMALL_SCHEMA, WEATHER_TOOL
from starlette.testclient import TestClient

from gbnfkit.server import Engine, ServerConfig, create_app

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.integers(-(10**20), 10**20)
    | st.integers(-(10**400), 10**400)  # beyond a float
    | st.floats(allow_nan=False)
    | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
GBNF_BITS = [
    "root",
    " ::= ",
    '"a"',
    "[a-z]",
    "|",
    "(",
    ")",
    "*",
    "+",
    "?",
    "{2,1}",
    "x",
    "\n",
    "::=",
    '"',
    "[",
    "]",
    "\\",
    "{",
    "}",
    "-",
    "root ::= ",
    "@",
    "<[1]>",
]
SCHEMA_KEYS = [
    "type",
    "properties",
    "items",
    "required",
    "enum",
    "const",
    "$ref",
    "anyOf",
    "minimum",
    "maxLength",
    "pattern",
    "additionalProperties",
    "format",
    "$defs",
]

FIELDS: dict[str, st.SearchStrategy[Any]] = {
    "messages": st.one_of(
        JSON,
        st.lists(
            st.fixed_dictionaries(
                {
                    "role": st.sampled_from(["user", "system", "assistant", "tool", "x"]),
                    "content": JSON | st.text(max_size=30),
                }
            ),
            max_size=3,
        ),
    ),
    "grammar": st.lists(st.sampled_from(GBNF_BITS), max_size=10).map("".join) | JSON,
    "json_schema": st.dictionaries(st.sampled_from(SCHEMA_KEYS), JSON, max_size=3)
    | st.just(SMALL_SCHEMA),
    "response_format": JSON
    | st.fixed_dictionaries(
        {
            "type": st.sampled_from(["text", "json_object", "json_schema", "xml"]),
            "json_schema": st.fixed_dictionaries(
                {"schema": st.dictionaries(st.sampled_from(SCHEMA_KEYS), JSON, max_size=3)}
            ),
        }
    ),
    "tools": JSON | st.just([WEATHER_TOOL]),
    "tool_choice": JSON | st.sampled_from(["auto", "none", "required", "get_weather"]),
    "grammar_lazy": JSON,
    "grammar_triggers": JSON
    | st.lists(
        st.fixed_dictionaries(
            {
                "type": st.sampled_from(["word", "pattern", "pattern_full", "token", "?"]),
                "value": st.text(max_size=6) | st.integers(-5, 60000),
            }
        ),
        max_size=2,
    ),
    "temperature": JSON,
    "top_p": JSON,
    "top_k": JSON,
    "min_p": JSON,
    "seed": JSON,
    "max_tokens": JSON,
    "stop": JSON,
    "n": JSON,
    "logit_bias": JSON,
    "stream": JSON,
    "stream_options": JSON,
    "presence_penalty": JSON,
    "repeat_penalty": JSON,
    "model": JSON,
    "prompt": JSON | st.text(max_size=20),
}
BODIES = st.one_of(JSON, st.fixed_dictionaries({}, optional=FIELDS))


@pytest.fixture(scope="module")
def tiny(engine: Engine) -> Iterator[TestClient]:
    with TestClient(create_app(ServerConfig(max_tokens=2), engine=engine)) as client:
        yield client


def check(response: Any) -> None:
    assert response.status_code == 200 or 400 <= response.status_code < 500, response.text
    if response.status_code != 200:
        error = response.json()["error"]
        assert set(error) == {"message", "type", "param", "code"} and error["message"]
    elif response.headers["content-type"].startswith("text/event-stream"):
        assert response.text.endswith("data: [DONE]\n\n")
        assert '"server_error"' not in response.text


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(body=BODIES, path=st.sampled_from(["/v1/chat/completions", "/v1/completions"]))
def test_random_bodies_never_break_the_server(tiny: TestClient, body: Any, path: str) -> None:
    if isinstance(body, dict) and isinstance(body.get("max_tokens"), int):
        body["max_tokens"] = min(body["max_tokens"], 2)  # beyond 2 is refused anyway
    check(tiny.post(path, content=json.dumps(body).encode()))


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.binary(max_size=60))
def test_random_bytes_never_break_the_server(tiny: TestClient, data: bytes) -> None:
    check(tiny.post("/v1/chat/completions", content=data))


def test_still_serving_after_the_corpus(tiny: TestClient) -> None:
    assert tiny.get("/health").json()["slots_idle"] == 2
    response = tiny.post(
        "/v1/chat/completions",
        json={"messages": [{"role": "user", "content": "Hi"}], "grammar": 'root ::= "ok"'},
    )
    assert response.json()["choices"][0]["message"]["content"] == "ok"
