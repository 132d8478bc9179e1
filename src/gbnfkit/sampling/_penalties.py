"""Logit bias and the repetition, frequency and presence penalties (llama.cpp semantics)."""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Mapping

import numpy as np

from gbnfkit.sampling._candidates import Candidates, fits, in_range

__all__ = ["PenaltyHistory", "apply_logit_bias"]


def apply_logit_bias(cands: Candidates, bias: Mapping[int, float]) -> Candidates:
    """Add ``bias[token]`` to each token's logit (``-inf`` bans the token)."""
    return cands.add(bias)


class PenaltyHistory:
    """The last ``last_n`` accepted tokens and how often each occurs among them.

    ``last_n == -1`` keeps the whole history; ``0`` keeps nothing (penalties off).
    """

    __slots__ = ("_last_n", "_tokens", "_counts")

    def __init__(self, last_n: int) -> None:
        self._last_n = last_n
        self._tokens: deque[int] = deque()
        self._counts: Counter[int] = Counter()

    def push(self, token_id: int) -> None:
        if self._last_n == 0:
            return
        self._tokens.append(token_id)
        self._counts[token_id] += 1
        if self._last_n > 0 and len(self._tokens) > self._last_n:
            old = self._tokens.popleft()
            self._counts[old] -= 1
            if not self._counts[old]:
                del self._counts[old]

    def clear(self) -> None:
        self._tokens.clear()
        self._counts.clear()

    @property
    def counts(self) -> Mapping[int, int]:
        return self._counts

    def apply(
        self, cands: Candidates, repeat: float, frequency: float, presence: float
    ) -> Candidates:
        """Penalise every token of the history once.

        A positive logit is divided by ``repeat`` and a negative one multiplied (so a
        penalty > 1 always makes the token less likely); then ``count * frequency +
        presence`` is subtracted.
        """
        if not self._counts or (repeat == 1.0 and frequency == 0.0 and presence == 0.0):
            return cands
        size = len(self._counts)
        ids = np.fromiter(self._counts.keys(), dtype=np.int64, count=size)
        counts = np.fromiter(self._counts.values(), dtype=np.float64, count=size)
        positions, counts = cands.locate(ids, counts)
        if positions.shape[0] == 0:
            return cands
        logits = cands.writable()
        values = logits[positions].astype(np.float64)
        # (Sampler runs the chain with numpy's overflow and invalid warnings off)
        scaled = np.where(values <= 0, values * repeat, values / repeat)
        changed = scaled - (counts * frequency + presence)
        if not fits(changed, logits.dtype):  # an excluded token, or out of range
            excluded = values == -np.inf
            largest = float(np.finfo(np.float64).max)
            with np.errstate(over="ignore", invalid="ignore"):
                amounts = np.clip(counts * frequency + presence, -largest, largest)
                changed = in_range(scaled, excluded, logits.dtype) - amounts
            changed = in_range(changed, excluded, logits.dtype)
        logits[positions] = changed
        return cands
