"""One generation on one model slot (runs in a worker thread): sampling with the grammar,
stop strings, cancellation, and the text handed out piece by piece as it is decided."""

from __future__ import annotations

import codecs
import enum
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from gbnfkit._errors import SamplingError
from gbnfkit.integrations._decode import (
    AnyMatcher,
    ModelRunner,
    _finished,
    _TimedMatcher,
    take_token,
)
from gbnfkit.sampling import Sampler, SamplingParams
from gbnfkit.server._logprobs import StepLogprobs, TokenLogprob

__all__ = ["Finish", "Job", "Outcome", "Piece", "run_job"]


class Finish(enum.Enum):
    """Why a generation ended, as OpenAI's ``finish_reason`` names it."""

    STOP = "stop"
    """End of sequence or a stop string."""
    LENGTH = "length"
    """``max_tokens`` or the model's context."""
    CANCELLED = "cancelled"
    """The client went away."""


@dataclass
class Job:
    """What to generate: the prompt's tokens, the matcher (``None``: free text), sampling,
    the most tokens, the stop strings, the event that cancels it, and whether a complete
    grammar ends the generation."""

    prompt_ids: Sequence[int]
    matcher: AnyMatcher | None
    params: SamplingParams
    max_tokens: int
    stop: tuple[str, ...]
    cancel: threading.Event
    end_when_complete: bool = False
    """Stop as soon as the (woken) grammar is complete: one tool call, not several."""
    logprobs: int | None = None
    """Record each sampled token's log probability with this many most likely tokens of
    its step (``None``: record none)."""
    cache_prompt: bool = True
    """Keep the beginning of the prompt the runner's cache holds (``False``: the runner
    forgets it first, when it keeps one)."""


@dataclass(frozen=True)
class Piece:
    """Text handed out as it is decided, with the log probabilities of the tokens whose
    text starts in it (or before it, not yet handed out; empty unless the job asks)."""

    text: str
    logprobs: tuple[TokenLogprob, ...] = ()


@dataclass(frozen=True)
class Outcome:
    """The end of a generation: the text (stop string cut off), the tokens sampled (an
    end-of-sequence token not counted), why it ended, and the time spent decoding and in
    the grammar (seconds; the prompt's evaluation not counted)."""

    text: str
    completion_tokens: int
    finish: Finish
    decode_seconds: float
    grammar_seconds: float
    logprobs: tuple[TokenLogprob, ...] = ()
    """One entry per token whose text starts in ``text`` (in order; empty unless the job
    asks): the tokens a stop string cut off are left out."""
    prompt_tokens: int = 0
    """The prompt's tokens."""
    cached_prompt_tokens: int = 0
    """How many of them the model's cache held from an earlier request (not evaluated)."""
    prompt_seconds: float = 0.0
    """The time spent evaluating the rest of the prompt."""


def _held_back(text: str, stops: tuple[str, ...]) -> int:
    """How many characters at the end of ``text`` could start a stop string."""
    hold = 0
    for stop in stops:
        for size in range(min(len(stop) - 1, len(text)), hold, -1):
            if text.endswith(stop[:size]):
                hold = size
                break
    return hold


def _complete(matcher: AnyMatcher | None) -> bool:
    if matcher is None or not matcher.is_complete:
        return False
    return bool(getattr(matcher, "is_active", True))


def _started_before(entries: list[TokenLogprob], start: int, end: int) -> int:
    """The index of the first entry from ``start`` whose text starts at ``end`` or later."""
    while start < len(entries) and entries[start].offset < end:
        start += 1
    return start


def run_job(runner: ModelRunner, job: Job, emit: Callable[[Piece], None]) -> Outcome:
    """Generate ``job`` on ``runner``; ``emit`` gets the text as it is decided.

    The text that may be the start of a stop string is held back until it is not; a
    token's log probability goes out with the piece its text starts in.
    """
    vocabulary = runner.vocabulary
    eos, special = vocabulary.eos_token_ids, vocabulary.special_token_ids
    timed = _TimedMatcher(job.matcher) if job.matcher is not None else None
    sampler = Sampler(job.params, matcher=timed, vocabulary=vocabulary)
    sampler.extend_history(job.prompt_ids)  # as llama-server: penalties see the prompt
    utf8 = codecs.getincrementaldecoder("utf-8")(errors="replace")
    room = job.max_tokens
    if runner.context_size is not None:
        room = min(room, runner.context_size - len(job.prompt_ids))
    evaluating = time.perf_counter()
    forget = getattr(runner, "forget_cache", None)  # a runner keeping a cache
    if not job.cache_prompt and forget is not None:
        forget()
    logits = runner.start(job.prompt_ids)
    started = time.perf_counter()
    cached = int(getattr(runner, "cached_prompt_tokens", 0))  # a runner keeping a cache
    text, sent, count, cut = "", 0, 0, False
    entries: list[TokenLogprob] = []
    handed = 0  # entries emitted
    finish = Finish.LENGTH
    while count < room:
        if job.cancel.is_set():
            finish = Finish.CANCELLED
            break
        step = StepLogprobs(logits, vocabulary.size) if job.logprobs is not None else None
        try:
            token = take_token(sampler, logits)
        except SamplingError:  # complete, nothing more allowed, and no end token to say so
            if not _finished(job.matcher, eos):
                raise
            finish = Finish.STOP
            break
        if token in eos:
            finish = Finish.STOP
            break
        count += 1
        if job.end_when_complete and _complete(job.matcher):
            finish = Finish.STOP
            room = count  # the token is kept, the loop ends after it
        if step is not None and job.logprobs is not None:
            entries.append(step.entry(token, job.logprobs, len(text)))
        data = vocabulary.token_bytes(token)
        if data and token not in special:
            text += utf8.decode(data)
        if job.stop:
            at = min(
                (i for i in (text.find(s, max(sent - len(s), 0)) for s in job.stop) if i >= 0),
                default=-1,
            )
            if at >= 0:
                text, cut, finish = text[:at], True, Finish.STOP
                break
        ready = len(text) - _held_back(text, job.stop)
        if ready > sent:
            end = _started_before(entries, handed, ready)
            emit(Piece(text[sent:ready], tuple(entries[handed:end])))
            sent, handed = ready, end
        if count >= room:
            break
        logits = runner.step(token)
    if not cut:
        text += utf8.decode(b"", final=True)
    else:  # the tokens whose text starts in the cut-off stop string are not the output's
        del entries[_started_before(entries, handed, len(text)) :]
    if (len(text) > sent or len(entries) > handed) and finish is not Finish.CANCELLED:
        emit(Piece(text[sent:], tuple(entries[handed:])))
    return Outcome(
        text=text,
        completion_tokens=count,
        finish=finish,
        decode_seconds=time.perf_counter() - started,
        grammar_seconds=timed.seconds if timed is not None else 0.0,
        logprobs=tuple(entries),
        prompt_tokens=len(job.prompt_ids),
        cached_prompt_tokens=cached,
        prompt_seconds=started - evaluating,
    )
