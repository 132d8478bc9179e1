"""``ServerConfig``: its fields are checked (and converted) when it is made, not when the
engine loads or a request comes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gbnfkit import ArgumentError, ChatError
from gbnfkit.chat import ChatFormat
from gbnfkit.server import ServerConfig


@pytest.mark.parametrize(
    ("fields", "words"),
    [
        ({"parallel": "2"}, "ServerConfig.parallel must be int"),
        ({"parallel": 0}, "ServerConfig.parallel must be at least 1"),
        ({"max_tokens": 2.5}, "ServerConfig.max_tokens must be int"),
        ({"ctx_size": True}, "ServerConfig.ctx_size must be int"),
        ({"threads": 0}, "ServerConfig.threads must be at least 1"),
        ({"threads": "4"}, "ServerConfig.threads must be int"),
        ({"model": 3}, "ServerConfig.model must be str or PathLike"),
        ({"chat_format": 1}, "ServerConfig.chat_format must be str or ChatFormat"),
        ({"chat_template": b"{{ x }}"}, "ServerConfig.chat_template must be str"),
    ],
)
def test_a_bad_field_is_an_argument_error_naming_it(fields: dict[str, Any], words: str) -> None:
    with pytest.raises(ArgumentError) as caught:
        ServerConfig(**fields)
    assert words in str(caught.value)
    assert isinstance(caught.value, ValueError)  # as before: except ValueError still works


def test_names_and_str_paths_are_converted_at_once() -> None:
    """A chat format given by name was kept as a str: the engine served it as its chat
    format and GET /v1/models (``engine.chat_format.value``) answered 500."""
    config = ServerConfig(chat_format="qwen3-coder", model="models/x.gguf")
    assert config.chat_format is ChatFormat.QWEN3_CODER
    assert config.model == Path("models/x.gguf")
    assert ServerConfig(chat_format=ChatFormat.HERMES).chat_format is ChatFormat.HERMES
    with pytest.raises(ChatError, match="unknown chat format 'xml'"):
        ServerConfig(chat_format="xml")


@pytest.mark.parametrize("key", ["", " k", "k ", "clé", "a\nb"])
def test_an_api_key_no_client_can_send_is_refused(key: str) -> None:
    """An empty key turned the check off (the app was made without it), so
    ``gbnfkit serve --api-key "$KEY"`` with KEY unset served everyone; a key with
    non-ASCII text could never be matched (headers arrive as Latin-1)."""
    with pytest.raises(ArgumentError, match="ServerConfig.api_key"):
        ServerConfig(api_key=key)
    assert ServerConfig(api_key="sk-1 2").api_key == "sk-1 2"


def test_the_repr_does_not_show_the_api_key() -> None:
    """A config in a log line or a traceback's locals showed the server's key."""
    config = ServerConfig(api_key="sk-secret-123", max_tokens=7)
    assert "sk-secret-123" not in repr(config) and "max_tokens=7" in repr(config)
