"""A request's sampling fields -> ``SamplingParams``, ``max_tokens``, ``stop``, ``n``."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gbnfkit.sampling import SamplingParams
from gbnfkit.server._errors import ApiError
from gbnfkit.server._fields import (
    optional_bool,
    optional_int,
    optional_number,
    optional_object,
    reject_unknown_type,
)

__all__ = ["Sampling", "sampling_of"]

_MAX_STOPS = 4
_MAX_N = 8
_TOKEN_ID = re.compile(r"-?[0-9]+")
_MAX_TOP_LOGPROBS = 20

# request field -> (SamplingParams field, low, high)
_NUMBERS: tuple[tuple[str, str, float | None, float | None], ...] = (
    ("temperature", "temperature", 0.0, 2.0),
    ("top_p", "top_p", 0.0, 1.0),
    ("min_p", "min_p", 0.0, 1.0),
    ("presence_penalty", "presence_penalty", -2.0, 2.0),
    ("frequency_penalty", "frequency_penalty", -2.0, 2.0),
    ("repeat_penalty", "repeat_penalty", 0.0, None),
)


@dataclass(frozen=True)
class Sampling:
    """How to sample: the params (without a seed), the seed, the most tokens, the stop
    strings, the number of choices, whether to stream (and report usage in the stream),
    and the log probabilities to report."""

    params: SamplingParams
    seed: int | None
    max_tokens: int
    stop: tuple[str, ...]
    n: int
    stream: bool
    include_usage: bool
    logprobs: int | None = None
    """Report log probabilities with this many top tokens each (``None``: none)."""
    cache_prompt: bool = True
    """llama-server's ``cache_prompt``: keep the beginning of the prompt a slot's cache
    holds (``False``: evaluate all of it)."""

    def for_choice(self, index: int) -> SamplingParams:
        """The params of choice ``index`` (seed + index when a seed is given)."""
        if self.seed is None:
            return self.params
        return dataclasses.replace(self.params, seed=self.seed + index)


def _stop(body: Mapping[str, Any]) -> tuple[str, ...]:
    value = body.get("stop")
    if value is None:
        return ()
    items = [value] if isinstance(value, str) else value
    if isinstance(items, list) and all(isinstance(s, str) for s in items) and "" in items:
        raise ApiError("'stop' strings must not be empty", param="stop")
    if not isinstance(items, list) or not all(isinstance(s, str) for s in items):
        raise reject_unknown_type("stop", value, "a non-empty string or an array of them")
    if len(items) > _MAX_STOPS:
        raise ApiError(f"'stop' holds at most {_MAX_STOPS} strings", param="stop")
    return tuple(items)


def _logit_bias(body: Mapping[str, Any], vocab_size: int) -> dict[int, float]:
    value = optional_object(body, "logit_bias") or {}
    bias: dict[int, float] = {}
    for key, amount in value.items():
        # a token id in ASCII digits: int() also reads ' 5', '5_0' and other scripts' digits
        if not _TOKEN_ID.fullmatch(key):
            raise ApiError(
                f"'logit_bias' keys are token ids, not {json.dumps(key)[:80]}",
                param="logit_bias",
            )
        token = int(key)
        if not 0 <= token < vocab_size:
            raise ApiError(
                f"'logit_bias': token {token} is not in the vocabulary (0..{vocab_size - 1})",
                param="logit_bias",
            )
        number = optional_number({"logit_bias": amount}, "logit_bias", low=-100, high=100)
        bias[token] = float(number if number is not None else 0.0)
    return bias


def _logprobs_of(body: Mapping[str, Any], *, chat: bool) -> int | None:
    """How many most likely tokens to report beside each sampled token's log probability
    (``None``: no log probabilities). A chat request asks with ``"logprobs": true`` and
    ``top_logprobs`` (how many, 0 when absent); a completion request with ``"logprobs":
    N`` (how many), and has no ``top_logprobs``."""
    value = body.get("logprobs")
    top = optional_int(body, "top_logprobs", low=0, high=_MAX_TOP_LOGPROBS)
    if not chat:
        if top is not None:
            raise ApiError(
                "'top_logprobs' is a chat field; a completion asks for the top tokens "
                "with 'logprobs': N",
                param="top_logprobs",
            )
        return optional_int(body, "logprobs", low=0, high=_MAX_TOP_LOGPROBS)
    if value is not None and not isinstance(value, bool):
        raise reject_unknown_type("logprobs", value, "a boolean")
    if not value:
        if top is not None:
            raise ApiError("'top_logprobs' needs 'logprobs': true", param="top_logprobs")
        return None
    return top or 0


def sampling_of(
    body: Mapping[str, Any], *, cap: int, vocab_size: int, chat: bool
) -> Sampling:
    """The sampling of request ``body`` (a chat request when ``chat``); ``cap``: the
    server's ``max_tokens`` limit."""
    logprobs = _logprobs_of(body, chat=chat)
    values: dict[str, Any] = {}
    for name, field, low, high in _NUMBERS:
        number = optional_number(body, name, low=low, high=high)
        if number is not None:
            values[field] = number
    top_k = optional_int(body, "top_k", low=0)
    if top_k is not None:
        values["top_k"] = top_k
    bias = _logit_bias(body, vocab_size)
    if bias:
        values["logit_bias"] = bias
    try:
        params = SamplingParams(**values)
    except (TypeError, ValueError) as exc:
        raise ApiError(f"sampling: {exc}", param=getattr(exc, "field", None)) from None
    # both are checked; the newer name wins when both are given
    legacy = optional_int(body, "max_tokens", low=1, high=cap)
    max_tokens = optional_int(body, "max_completion_tokens", low=1, high=cap)
    if max_tokens is None:
        max_tokens = legacy
    seed = optional_int(body, "seed", low=-1, high=2**63 - 1)
    if seed == -1:  # llama.cpp's "random"
        seed = None
    options = optional_object(body, "stream_options")
    stream = bool(optional_bool(body, "stream"))
    if options is not None and not stream:  # as OpenAI: it would be silently ignored
        raise ApiError(
            "'stream_options' is only allowed with 'stream': true", param="stream_options"
        )
    options = options or {}
    include_usage = bool(
        optional_bool(options, "include_usage", path="stream_options.include_usage")
    )
    return Sampling(
        params=params,
        seed=seed,
        max_tokens=max_tokens if max_tokens is not None else cap,
        stop=_stop(body),
        n=optional_int(body, "n", low=1, high=_MAX_N) or 1,
        stream=stream,
        include_usage=include_usage,
        logprobs=logprobs,
        cache_prompt=optional_bool(body, "cache_prompt") is not False,
    )
