"""llama-server's tokenizer endpoints: ``POST /tokenize``, ``/detokenize`` and
``/apply-template`` (the prompt a chat request would run, without running it)."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from gbnfkit.server._chat import render_prompt
from gbnfkit.server._config import ServerConfig
from gbnfkit.server._engine import Engine
from gbnfkit.server._errors import ApiError
from gbnfkit.server._fields import optional_bool, reject_unknown_type
from gbnfkit.server._http import check_model, read_body

__all__ = ["apply_template", "detokenize", "tokenize"]


def _piece(data: bytes) -> str | list[int]:
    """A token's text, or its bytes when they are not whole UTF-8 (as llama-server)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return list(data)


async def _body(request: Request) -> tuple[dict[str, Any], Engine]:
    engine: Engine = request.app.state.engine
    config: ServerConfig = request.app.state.config
    body = await read_body(request, config.max_body_bytes)
    check_model(body, engine)
    return body, engine


async def tokenize(request: Request) -> Response:
    """``{"content", "add_special": false, "parse_special": true, "with_pieces": false}``
    -> ``{"tokens": [id, ...]}`` (with pieces: ``[{"id", "piece"}, ...]``)."""
    body, engine = await _body(request)
    content = body.get("content")
    if not isinstance(content, str):
        raise reject_unknown_type("content", content, "a string")
    ids = engine.tokenize(
        content,
        add_bos=bool(optional_bool(body, "add_special")),
        special=optional_bool(body, "parse_special") is not False,
    )
    if not optional_bool(body, "with_pieces"):
        return JSONResponse({"tokens": ids})
    pieces = [{"id": i, "piece": _piece(engine.detokenize([i]))} for i in ids]
    return JSONResponse({"tokens": pieces})


async def detokenize(request: Request) -> Response:
    """``{"tokens": [id, ...]}`` -> ``{"content"}`` (special tokens written as their text;
    bytes that are not whole UTF-8 as U+FFFD)."""
    body, engine = await _body(request)
    tokens = body.get("tokens")
    if not isinstance(tokens, list) or not all(
        isinstance(t, int) and not isinstance(t, bool) for t in tokens
    ):
        raise reject_unknown_type("tokens", tokens, "an array of token ids")
    size = engine.vocabulary.size
    bad = next((t for t in tokens if not 0 <= t < size), None)
    if bad is not None:
        raise ApiError(
            f"'tokens': token {bad} is not in the vocabulary (0..{size - 1})", param="tokens"
        )
    return JSONResponse({"content": engine.detokenize(tokens).decode("utf-8", errors="replace")})


async def apply_template(request: Request) -> Response:
    """``{"messages", "tools"?}`` -> ``{"prompt"}``: the text a chat request with these
    messages (and tools) gives the model, generation prompt included."""
    body, engine = await _body(request)
    return JSONResponse({"prompt": render_prompt(body, engine).text})
