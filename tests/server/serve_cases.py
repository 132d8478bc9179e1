"""Requests (and a scripted model) the server tests share."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

MAX_TOKENS = 48
"""The cap of the test apps: short generations keep the tests quick."""

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "enum": ["Paris", "Oslo", "Rome"]}},
            "required": ["city"],
            "additionalProperties": False,
        },
    },
}

SMALL_SCHEMA = {
    "type": "object",
    "properties": {"ok": {"type": "boolean"}, "n": {"type": "integer", "minimum": 0, "maximum": 9}},
    "required": ["ok", "n"],
    "additionalProperties": False,
}


def user(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


class ScriptedModel:
    """A model for the decoding loop that wants the tokens of ``script``, then ``eos``:
    ``logits(wanted)`` makes each step's logits (``vocabulary`` is set by subclasses)."""

    context_size = None

    def __init__(self, script: Sequence[int], eos: int) -> None:
        self._script = list(script)
        self._eos = eos
        self._at = 0

    def logits(self, wanted: int) -> npt.NDArray[np.float32]:
        raise NotImplementedError

    def _next(self) -> npt.NDArray[np.float32]:
        at = self._at
        return self.logits(self._script[at] if at < len(self._script) else self._eos)

    def start(self, prompt_ids: Sequence[int]) -> npt.NDArray[np.float32]:
        self._at = 0
        return self._next()

    def step(self, token_id: int) -> npt.NDArray[np.float32]:
        self._at += 1
        return self._next()
