"""The ASGI application: routes, the API key, OpenAI-style errors for everything refused."""

from __future__ import annotations

import contextlib
import hmac
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from gbnfkit.server._chat import chat_completions
from gbnfkit.server._completions import completions
from gbnfkit.server._config import ServerConfig
from gbnfkit.server._engine import Engine
from gbnfkit.server._errors import ApiError, ErrorType
from gbnfkit.server._http import check_model
from gbnfkit.server._tokens import apply_template, detokenize, tokenize

__all__ = ["create_app"]

_OPEN_PATHS = frozenset({"/health"})


async def _health(request: Request) -> Response:
    engine: Engine = request.app.state.engine
    return JSONResponse(
        {
            "status": "ok",
            "slots_idle": engine.slots - engine.busy,
            "slots_processing": engine.busy,
            "requests_waiting": engine.waiting,
        }
    )


def _model_object(engine: Engine) -> dict[str, object]:
    return {
        "id": engine.model_id,
        "object": "model",
        "created": 0,
        "owned_by": "gbnfkit",
        "meta": {
            "chat_format": engine.chat_format.value,
            "n_ctx": engine.context_size,
            "n_vocab": engine.vocabulary.size,
        },
    }


async def _models(request: Request) -> Response:
    engine: Engine = request.app.state.engine
    return JSONResponse({"object": "list", "data": [_model_object(engine)]})


async def _model(request: Request) -> Response:
    """``GET /v1/models/{model}`` (the OpenAI client's ``models.retrieve``)."""
    engine: Engine = request.app.state.engine
    check_model({"model": request.path_params["model"]}, engine)
    return JSONResponse(_model_object(engine))


def _error(exc: ApiError) -> Response:
    return JSONResponse(exc.body(), status_code=exc.status)


async def _api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    return _error(exc)


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    kind = ErrorType.NOT_FOUND if exc.status_code == 404 else ErrorType.INVALID_REQUEST
    message = f"{request.method} {request.url.path}: {exc.detail}"
    return _error(ApiError(message, status=exc.status_code, type=kind))


async def _server_error(request: Request, exc: Exception) -> Response:
    return _error(
        ApiError(f"internal error: {type(exc).__name__}: {exc}", status=500, type=ErrorType.SERVER)
    )


class _ApiKey(BaseHTTPMiddleware):
    def __init__(self, app: Any, key: str) -> None:
        super().__init__(app)
        self._expected = f"Bearer {key}".encode()

    async def dispatch(
        self, request: Request, call_next: Callable[[Request], Awaitable[Response]]
    ) -> Response:
        if request.url.path not in _OPEN_PATHS:
            given = request.headers.get("authorization", "").encode()
            if not hmac.compare_digest(given, self._expected):
                return _error(
                    ApiError(
                        "a valid API key is needed: send 'Authorization: Bearer <key>'",
                        status=401,
                        type=ErrorType.AUTHENTICATION,
                        code="invalid_api_key",
                    )
                )
        return await call_next(request)


def create_app(config: ServerConfig | None = None, *, engine: Engine | None = None) -> Starlette:
    """The OpenAI-compatible ASGI app for ``config`` (see docs in README, "Serving").

    ``engine``: the loaded model slots to serve (default: loaded from ``config`` when the
    app starts, closed when it stops); a given engine is left open.
    """
    config = config or ServerConfig()

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        owned = engine is None
        app.state.engine = engine if engine is not None else Engine(config)
        try:
            yield
        finally:
            if owned:
                app.state.engine.close()

    middleware = [Middleware(_ApiKey, key=config.api_key)] if config.api_key is not None else []
    app = Starlette(
        routes=[
            Route("/health", _health, methods=["GET"]),
            Route("/v1/models", _models, methods=["GET"]),
            Route("/v1/models/{model:path}", _model, methods=["GET"]),
            Route("/v1/chat/completions", chat_completions, methods=["POST"]),
            Route("/v1/completions", completions, methods=["POST"]),
            Route("/tokenize", tokenize, methods=["POST"]),
            Route("/detokenize", detokenize, methods=["POST"]),
            Route("/apply-template", apply_template, methods=["POST"]),
        ],
        middleware=middleware,
        exception_handlers={
            ApiError: _api_error,
            HTTPException: _http_error,
            Exception: _server_error,
        },
        lifespan=lifespan,
    )
    app.state.config = config
    if engine is not None:
        app.state.engine = engine
    return app
