"""``POST /v1/chat/completions``."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from gbnfkit._errors import ChatParseError, ChatTemplateError
from gbnfkit.chat import ChatParser, Message, MessageDelta, MessageStream
from gbnfkit.server._config import ServerConfig
from gbnfkit.server._constraints import Constraint, OutputKind, constraint_for, tools_offered
from gbnfkit.server._decode import Finish, Job, Outcome
from gbnfkit.server._engine import Engine
from gbnfkit.server._errors import ApiError, ErrorType
from gbnfkit.server._fields import optional_bool
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
from gbnfkit.server._logprobs import TokenLogprob, chat_logprobs
from gbnfkit.server._prompt import ChatPrompt, normalize_messages, tools_instruction
from gbnfkit.server._sampling import Sampling, sampling_of
from gbnfkit.tokens._compiled import CompiledGrammar

__all__ = ["chat_completions", "render_prompt"]


@dataclass(frozen=True)
class _Plan:
    """A validated chat request: the prompt's tokens, the constraint, the sampling."""

    prompt_ids: list[int]
    constraint: Constraint
    sampling: Sampling
    compiled: CompiledGrammar | None = None
    one_tool_call: bool = False


def render_prompt(body: dict[str, Any], engine: Engine) -> ChatPrompt:
    """The request's ``messages`` (and ``tools``, described to the model) through the
    chat template, with the generation prompt.

    Raises:
        ApiError: the messages are malformed or the template refuses them (400), or the
            template fails on them (500).
    """
    if "messages" not in body:
        raise ApiError("'messages' is required", param="messages")
    extra = tools_instruction(engine.chat_format, body["tools"]) if tools_offered(body) else None
    messages = normalize_messages(body["messages"], extra)
    try:
        return engine.render_chat(messages)
    except ChatTemplateError as exc:
        if exc.refused:  # the template's own raise_exception: these messages are at fault
            raise ApiError(
                f"'messages': the chat template refuses them: {exc}", param="messages"
            ) from None
        raise ApiError(
            f"the chat template fails on these messages: {exc}",
            status=500,
            type=ErrorType.SERVER,
            code="chat_template_error",
        ) from None


def _plan(body: dict[str, Any], engine: Engine, config: ServerConfig) -> _Plan:
    check_model(body, engine)
    if "messages" not in body:
        raise ApiError("'messages' is required", param="messages")
    sampling = sampling_of(
        body, cap=config.max_tokens, vocab_size=engine.vocabulary.size, chat=True
    )
    prompt = render_prompt(body, engine)
    prompt_ids = prompt.ids
    if len(prompt_ids) >= engine.context_size:
        raise ApiError(
            f"the prompt has {len(prompt_ids)} tokens; the context holds {engine.context_size}",
            param="messages",
            code="context_length_exceeded",
        )
    # the template may open the reasoning (<think>): then the output starts inside it
    constraint = constraint_for(
        body, engine.chat_format, engine.token_of, chat=True, reasoning_open=prompt.reasoning_open,
        vocab_size=engine.vocabulary.size, cache=engine.request_cache,
    )
    parallel = optional_bool(body, "parallel_tool_calls")
    one_call = parallel is False and constraint.parser is not None and bool(body.get("tools"))
    return _Plan(prompt_ids, constraint, sampling, one_tool_call=one_call)


def _message(text: str, constraint: Constraint) -> Message:
    if constraint.kind is OutputKind.RAW or constraint.parser is None:
        return Message(content=text)
    try:
        return constraint.parser.parse(text)
    except ChatParseError:
        return constraint.parser.parse(text, partial=True)


def _finish(outcome: Outcome, message: Message) -> str:
    if outcome.finish is Finish.LENGTH:
        return "length"
    return "tool_calls" if message.tool_calls else "stop"


def _message_dict(message: Message) -> dict[str, Any]:
    out: dict[str, Any] = {"role": "assistant", "content": message.content}
    if message.reasoning_content:
        out["reasoning_content"] = message.reasoning_content
    if message.tool_calls:
        out["content"] = message.content or None
        out["tool_calls"] = [
            {
                "id": call.id or new_id("call"),
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments},
            }
            for call in message.tool_calls
        ]
    return out


async def _whole(plan: _Plan, engine: Engine, request: Request) -> Response:
    choices, completion, outcomes = [], 0, []
    for index in range(plan.sampling.n):
        job = _job(plan, engine, index)
        outcome = await collect(engine, job, request)
        if outcome is None:
            return Response(status_code=499)
        message = _message(outcome.text, plan.constraint)
        completion += outcome.completion_tokens
        outcomes.append(outcome)
        choices.append(
            {
                "index": index,
                "message": _message_dict(message),
                "logprobs": (
                    chat_logprobs(outcome.logprobs, engine.vocabulary)
                    if plan.sampling.logprobs is not None
                    else None
                ),
                "finish_reason": _finish(outcome, message),
            }
        )
    return JSONResponse(
        {
            "id": new_id("chatcmpl"),
            "object": "chat.completion",
            "created": now(),
            "model": engine.model_id,
            "choices": choices,
            "usage": usage(len(plan.prompt_ids), completion, outcomes[0].cached_prompt_tokens),
            "timings": timings(outcomes),
        }
    )


def _job(plan: _Plan, engine: Engine, index: int) -> Job:
    return Job(
        prompt_ids=plan.prompt_ids,
        matcher=engine.matcher(plan.compiled, plan.constraint.triggers),
        params=plan.sampling.for_choice(index),
        max_tokens=plan.sampling.max_tokens,
        stop=plan.sampling.stop,
        cancel=cancel_event(),
        end_when_complete=plan.one_tool_call,
        logprobs=plan.sampling.logprobs,
        cache_prompt=plan.sampling.cache_prompt,
    )


class _Deltas:
    """Generated text -> OpenAI ``delta`` objects of one choice."""

    def __init__(self, parser: ChatParser | None) -> None:
        self._stream: MessageStream | None = parser.stream() if parser is not None else None
        self._ids: dict[int, str] = {}
        self.tool_calls = 0

    def feed(self, piece: str) -> list[dict[str, Any]]:
        if self._stream is None:
            return [{"content": piece}] if piece else []
        return [self._dict(d) for d in self._stream.feed(piece)]

    def close(self) -> list[dict[str, Any]]:
        if self._stream is None:
            return []
        try:
            return [self._dict(d) for d in self._stream.close()]
        except ChatParseError:
            return []

    def _dict(self, delta: MessageDelta) -> dict[str, Any]:
        out: dict[str, Any] = delta.to_dict()
        for call in out.get("tool_calls", []):
            index = call["index"]
            if "name" in call["function"]:
                self._ids[index] = call.get("id") or new_id("call")
                call["id"] = self._ids[index]
                self.tool_calls = max(self.tool_calls, index + 1)
            else:
                call.pop("id", None)
        return out


async def _events(plan: _Plan, engine: Engine) -> AsyncIterator[str]:
    ident, created = new_id("chatcmpl"), now()
    include_usage = plan.sampling.include_usage

    pending: list[TokenLogprob] = []  # streamed with the next chunk of the choice

    def chunk(index: int, delta: dict[str, Any], finish: str | None = None) -> str:
        logprobs = None
        if plan.sampling.logprobs is not None and "role" not in delta:
            logprobs = chat_logprobs(pending, engine.vocabulary)
            pending.clear()
        body: dict[str, Any] = {
            "id": ident,
            "object": "chat.completion.chunk",
            "created": created,
            "model": engine.model_id,
            "choices": [
                {"index": index, "delta": delta, "logprobs": logprobs, "finish_reason": finish}
            ],
        }
        if include_usage:
            body["usage"] = None
        return sse(body)

    completion = cached = 0
    try:
        for index in range(plan.sampling.n):
            deltas = _Deltas(
                plan.constraint.parser if plan.constraint.kind is OutputKind.CHAT else None
            )
            yield chunk(index, {"role": "assistant", "content": ""})
            job = _job(plan, engine, index)
            outcome: Outcome | None = None
            async for item in stream_job(engine, job):
                if isinstance(item, Outcome):
                    outcome = item
                    break
                pending.extend(item.logprobs)
                for delta in deltas.feed(item.text):
                    yield chunk(index, delta)
            for delta in deltas.close():
                yield chunk(index, delta)
            assert outcome is not None
            completion += outcome.completion_tokens
            if index == 0:
                cached = outcome.cached_prompt_tokens
            finish = (
                "length"
                if outcome.finish is Finish.LENGTH
                else ("tool_calls" if deltas.tool_calls else "stop")
            )
            yield chunk(index, {}, finish)
    except ApiError as exc:
        yield sse(exc.body())
    except Exception as exc:  # the stream has started: report in it, keep serving
        yield failure_event(exc)
    if include_usage:
        yield sse(
            {
                "id": ident,
                "object": "chat.completion.chunk",
                "created": created,
                "model": engine.model_id,
                "choices": [],
                "usage": usage(len(plan.prompt_ids), completion, cached),
            }
        )
    yield sse("[DONE]")


async def chat_completions(request: Request) -> Response:
    engine: Engine = request.app.state.engine
    config: ServerConfig = request.app.state.config
    body = await read_body(request, config.max_body_bytes)
    plan = _plan(body, engine, config)
    plan = dataclasses.replace(plan, compiled=await engine.compiled(plan.constraint.grammar))
    if plan.sampling.stream:
        return StreamingResponse(_events(plan, engine), media_type="text/event-stream")
    return await _whole(plan, engine, request)
