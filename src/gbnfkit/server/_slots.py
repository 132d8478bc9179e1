"""The free slots of an engine, and which one a request gets.

Each slot's model keeps the last sequence it evaluated in its cache, and a prompt that
begins the same way (the same system prompt and tools, an earlier turn of the chat) only
evaluates what differs (``LlamaRunner.start``). So a request takes the free slot whose
cache holds the longest beginning of its prompt, as llama-server picks a slot by prompt
similarity; requests that find no free slot wait in arrival order and take the next slot
freed.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Sequence

from gbnfkit.integrations.llama_cpp import LlamaRunner

__all__ = ["SlotPool"]


class SlotPool:
    """The free slots of one event loop."""

    def __init__(self, runners: Sequence[LlamaRunner]) -> None:
        self._idle: list[LlamaRunner] = list(runners)
        self._waiting: deque[asyncio.Future[LlamaRunner]] = deque()

    async def take(self, prompt_ids: Sequence[int]) -> LlamaRunner:
        """A free slot for ``prompt_ids`` (the one caching most of it), waiting for one."""
        while self._waiting and self._waiting[0].done():  # cancelled, not yet gone
            self._waiting.popleft()
        if self._idle and not self._waiting:
            best = max(
                range(len(self._idle)), key=lambda i: self._idle[i].cached_prefix(prompt_ids)
            )
            return self._idle.pop(best)
        future: asyncio.Future[LlamaRunner] = asyncio.get_running_loop().create_future()
        self._waiting.append(future)
        try:
            return await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self.give(future.result())  # handed over as the request went away
            elif future in self._waiting:
                self._waiting.remove(future)
            raise

    def give(self, runner: LlamaRunner) -> None:
        """Free ``runner``'s slot: to the request waiting longest, else idle."""
        while self._waiting:
            future = self._waiting.popleft()
            if not future.done():
                future.set_result(runner)
                return
        self._idle.append(runner)
