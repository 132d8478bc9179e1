"""``POST /v1/completions``: a prompt (no chat template), the same grammar extensions."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from gbnfkit.server._config import ServerConfig
from gbnfkit.server._constraints import constraint_for
from gbnfkit.server._decode import Finish, Job, Outcome
from gbnfkit.server._engine import Engine
from gbnfkit.server._errors import ApiError
from gbnfkit.server._fields import optional_bool, optional_int, optional_str
from gbnfkit.server._http import (
    cancel_event,
    check_model,
    collect,
    failure_event,
    new_id,
    now,
    read_body,
    sse,
    stream_job,
    timings,
    usage,
)
from gbnfkit.server._logprobs import TokenLogprob, completion_logprobs
from gbnfkit.server._sampling import sampling_of

__all__ = ["completions"]


def _prompt_ids(body: dict[str, Any], engine: Engine) -> list[int]:
    prompt = body.get("prompt")
    if isinstance(prompt, list) and len(prompt) == 1 and isinstance(prompt[0], str):
        prompt = prompt[0]
    if isinstance(prompt, str):
        ids = engine.tokenize(prompt, add_bos=True)
    elif (
        isinstance(prompt, list)
        and prompt
        and all(isinstance(t, int) and not isinstance(t, bool) for t in prompt)
    ):
        size = engine.vocabulary.size
        bad = next((t for t in prompt if not 0 <= t < size), None)
        if bad is not None:
            raise ApiError(
                f"'prompt': token {bad} is not in the vocabulary (0..{size - 1})", param="prompt"
            )
        ids = list(prompt)
    else:
        raise ApiError(
            "'prompt' must be a string (or one string in an array, or token ids)", param="prompt"
        )
    if not ids:
        raise ApiError(
            "'prompt' is empty: it has no tokens (the model adds no BOS token), and the "
            "model needs at least one to start from",
            param="prompt",
        )
    if len(ids) >= engine.context_size:
        raise ApiError(
            f"the prompt has {len(ids)} tokens; the context holds {engine.context_size}",
            param="prompt",
            code="context_length_exceeded",
        )
    return ids


def _no_unsupported(body: dict[str, Any]) -> None:
    """Refuse what would change the answer but is not done (rather than ignore it):
    ``echo``, ``suffix`` (insertion) and ``best_of`` beyond one choice per ``n``."""
    if optional_bool(body, "echo"):
        raise ApiError(
            "'echo': this server does not echo the prompt",
            param="echo",
            code="unsupported_parameter",
        )
    if optional_str(body, "suffix"):
        raise ApiError(
            "'suffix': this server does not insert text before a suffix",
            param="suffix",
            code="unsupported_parameter",
        )
    best_of = optional_int(body, "best_of", low=1)
    if best_of is not None and best_of > 1:
        raise ApiError(
            "'best_of': this server returns every choice it generates (use 'n')",
            param="best_of",
            code="unsupported_parameter",
        )


def _finish(outcome: Outcome) -> str:
    return "length" if outcome.finish is Finish.LENGTH else "stop"


async def completions(request: Request) -> Response:
    engine: Engine = request.app.state.engine
    config: ServerConfig = request.app.state.config
    body = await read_body(request, config.max_body_bytes)
    check_model(body, engine)
    _no_unsupported(body)
    sampling = sampling_of(
        body, cap=config.max_tokens, vocab_size=engine.vocabulary.size, chat=False
    )
    constraint = constraint_for(
        body, engine.chat_format, engine.token_of, chat=False, vocab_size=engine.vocabulary.size,
        cache=engine.request_cache,
    )
    prompt_ids = _prompt_ids(body, engine)
    compiled = await engine.compiled(constraint.grammar)
    triggers = constraint.triggers

    def job(index: int) -> Job:
        return Job(
            prompt_ids=prompt_ids,
            matcher=engine.matcher(compiled, triggers),
            params=sampling.for_choice(index),
            max_tokens=sampling.max_tokens,
            stop=sampling.stop,
            cancel=cancel_event(),
            logprobs=sampling.logprobs,
            cache_prompt=sampling.cache_prompt,
        )

    def logprobs(entries: Sequence[TokenLogprob]) -> dict[str, Any] | None:
        if sampling.logprobs is None:
            return None
        return completion_logprobs(entries, engine.vocabulary)

    if sampling.stream:
        return StreamingResponse(
            _events(engine, job, logprobs, sampling.n, len(prompt_ids), sampling.include_usage),
            media_type="text/event-stream",
        )
    choices, completion, outcomes = [], 0, []
    for index in range(sampling.n):
        outcome = await collect(engine, job(index), request)
        if outcome is None:
            return Response(status_code=499)
        completion += outcome.completion_tokens
        outcomes.append(outcome)
        choices.append(
            {
                "index": index,
                "text": outcome.text,
                "logprobs": logprobs(outcome.logprobs),
                "finish_reason": _finish(outcome),
            }
        )
    return JSONResponse(
        {
            "id": new_id("cmpl"),
            "object": "text_completion",
            "created": now(),
            "model": engine.model_id,
            "choices": choices,
            "usage": usage(len(prompt_ids), completion, outcomes[0].cached_prompt_tokens),
            "timings": timings(outcomes),
        }
    )


async def _events(
    engine: Engine,
    job: Callable[[int], Job],
    logprobs: Callable[[Sequence[TokenLogprob]], dict[str, Any] | None],
    n: int,
    prompt_tokens: int,
    include_usage: bool,
) -> AsyncIterator[str]:
    ident, created = new_id("cmpl"), now()

    def chunk(
        index: int, text: str, finish: str | None, entries: Sequence[TokenLogprob] = ()
    ) -> str:
        body: dict[str, Any] = {
            "id": ident,
            "object": "text_completion",
            "created": created,
            "model": engine.model_id,
            "choices": [
                {
                    "index": index,
                    "text": text,
                    "logprobs": logprobs(entries),
                    "finish_reason": finish,
                }
            ],
        }
        if include_usage:
            body["usage"] = None
        return sse(body)

    completion = cached = 0
    try:
        for index in range(n):
            async for item in stream_job(engine, job(index)):
                if isinstance(item, Outcome):
                    completion += item.completion_tokens
                    if index == 0:
                        cached = item.cached_prompt_tokens
                    yield chunk(index, "", _finish(item))
                    break
                yield chunk(index, item.text, None, item.logprobs)
    except Exception as exc:  # the stream has started: report in it, keep serving
        yield failure_event(exc)
    if include_usage:
        yield sse(
            {
                "id": ident,
                "object": "text_completion",
                "created": created,
                "model": engine.model_id,
                "choices": [],
                "usage": usage(prompt_tokens, completion, cached),
            }
        )
    yield sse("[DONE]")
