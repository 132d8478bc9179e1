"""HTTP plumbing shared by the endpoints: reading the JSON body, the model check, ids,
server-sent events, and running generations while watching for a client that goes away."""

from __future__ import annotations

import asyncio
import json
import threading
import time
import uuid
from collections.abc import AsyncIterator, Mapping
from typing import Any

from starlette.requests import Request

from gbnfkit.server._decode import Job, Outcome, Piece
from gbnfkit.server._engine import Engine
from gbnfkit.server._errors import ApiError, ErrorType

__all__ = [
    "cancel_event",
    "check_model",
    "collect",
    "failure_event",
    "new_id",
    "now",
    "read_body",
    "sse",
    "stream_job",
    "timings",
    "usage",
]

_DISCONNECT_POLL_SECONDS = 0.1


def new_id(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:24]}"


def now() -> int:
    return int(time.time())


async def read_body(request: Request, limit: int) -> dict[str, Any]:
    """The request's JSON object (400 when it is not one, 413 when it is too large)."""
    # read no more than the limit: a huge body is refused, not first held in memory
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise ApiError(
                f"the request body has more than {limit} bytes; this server takes at most "
                f"{limit}",
                status=413,
                code="request_too_large",
            )
        chunks.append(chunk)
    data = b"".join(chunks)
    try:
        body = json.loads(data)
    except UnicodeDecodeError:
        raise ApiError("the request body is not UTF-8 text", code="invalid_json") from None
    except json.JSONDecodeError as exc:
        raise ApiError(
            f"the request body is not JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}",
            code="invalid_json",
        ) from None
    except RecursionError:
        raise ApiError("the request body nests too deeply", code="invalid_json") from None
    except ValueError as exc:  # an integer longer than Python converts (4,300 digits)
        raise ApiError(f"the request body is not usable JSON: {exc}", code="invalid_json") from None
    if not isinstance(body, dict):
        raise ApiError("the request body must be a JSON object", code="invalid_json")
    return body


def check_model(body: Mapping[str, Any], engine: Engine) -> None:
    """404 unless ``model`` is absent or names the served model."""
    model = body.get("model")
    if model is None or model == engine.model_id:
        return
    if not isinstance(model, str):
        raise ApiError("'model' must be a string", param="model")
    raise ApiError(
        f"the model {model!r} does not exist (this server serves {engine.model_id!r})",
        status=404,
        type=ErrorType.NOT_FOUND,
        param="model",
        code="model_not_found",
    )


def sse(data: object) -> str:
    """One server-sent event carrying ``data`` as JSON (or ``[DONE]``)."""
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    return f"data: {text}\n\n"


def failure_event(exc: Exception) -> str:
    """The event reporting a generation that failed after its stream started (the
    status line is sent: the error goes in the stream, and the server keeps serving)."""
    return sse(ApiError(f"generation failed: {exc}", status=500, type=ErrorType.SERVER).body())


def timings(outcomes: list[Outcome]) -> dict[str, float]:
    """llama-server's ``timings`` extension, summed over the choices: prompt tokens taken
    from the cache, prompt tokens evaluated and the time that took (ms), tokens decoded,
    decode time, tokens/s, and the part of decode time spent in the grammar (ms)."""
    tokens = sum(o.completion_tokens for o in outcomes)
    seconds = sum(o.decode_seconds for o in outcomes)
    evaluated = sum(o.prompt_tokens - o.cached_prompt_tokens for o in outcomes)
    prompt_seconds = sum(o.prompt_seconds for o in outcomes)
    return {
        "cache_n": sum(o.cached_prompt_tokens for o in outcomes),
        "prompt_n": evaluated,
        "prompt_ms": 1000 * prompt_seconds,
        "prompt_per_second": evaluated / prompt_seconds if prompt_seconds > 0 else 0.0,
        "predicted_n": tokens,
        "predicted_ms": 1000 * seconds,
        "predicted_per_second": tokens / seconds if seconds > 0 else 0.0,
        "grammar_ms": 1000 * sum(o.grammar_seconds for o in outcomes),
    }


def usage(prompt: int, completion: int, cached: int) -> dict[str, object]:
    """OpenAI's usage; ``cached``: the prompt tokens the first choice found in the model's
    cache (``prompt_tokens_details.cached_tokens``)."""
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": cached},
    }


async def collect(engine: Engine, job: Job, request: Request) -> Outcome | None:
    """Run ``job`` to its end; ``None`` when the client went away (the job is cancelled)."""

    async def run() -> Outcome:
        async for item in engine.generate(job):
            if isinstance(item, Outcome):
                return item
        raise RuntimeError("the generation ended without an outcome")

    task = asyncio.ensure_future(run())
    try:
        while not task.done():
            await asyncio.wait({task}, timeout=_DISCONNECT_POLL_SECONDS)
            if not task.done() and await request.is_disconnected():
                job.cancel.set()
                task.cancel()
                return None
        return task.result()
    finally:
        if not task.done():
            task.cancel()


async def stream_job(engine: Engine, job: Job) -> AsyncIterator[Piece | Outcome]:
    """The pieces and outcome of ``job`` (closing it cancels the job)."""
    async for item in engine.generate(job):
        yield item


def cancel_event() -> threading.Event:
    return threading.Event()
