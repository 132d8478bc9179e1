"""Mirostat v1 and v2: sampling that steers the surprise of each token towards ``tau``.

Both keep ``mu`` (starting at ``2 * tau``) and after each token move it by
``eta * (tau - surprise)``, where the surprise is ``-log2`` of the chosen token's
probability among the candidates it was drawn from.  gbnfkit updates ``mu`` only for
the token :meth:`Sampler.sample` returns (llama.cpp also updates it for a token that
the grammar then rejects).
"""

from __future__ import annotations

import math

import numpy as np

from gbnfkit.sampling._candidates import Candidates, top_positions
from gbnfkit.sampling._candidates import total as weight_sum

__all__ = ["MirostatState"]

_V1_TOP = 100  # tokens used to estimate the Zipf exponent (llama.cpp's m)


class MirostatState:
    """``mu`` of one sequence and the two mirostat draws."""

    __slots__ = ("tau", "eta", "mu")

    def __init__(self, tau: float, eta: float) -> None:
        self.tau = tau
        self.eta = eta
        self.mu = 2.0 * tau

    def reset(self) -> None:
        self.mu = 2.0 * self.tau

    def update(self, probability: float) -> None:
        surprise = -math.log2(probability) if probability > 0 else math.inf
        self.mu -= self.eta * (surprise - self.tau)

    def truncate_v1(self, cands: Candidates, vocab_size: int) -> Candidates:
        """Keep the top ``k`` tokens, ``k`` from the Zipf exponent estimated on the top 100."""
        total = cands.count()
        if total <= 1:
            return cands.to_sparse()
        logits = np.asarray(cands.logits, dtype=np.float64)
        top = float(logits.max())
        denominator = float(np.exp(logits[logits > -np.inf] - top).sum())
        head = cands.top(min(_V1_TOP, total))
        probs = np.exp(head.logits - top) / denominator
        count = min(_V1_TOP - 1, len(head) - 1)
        t = np.log(np.arange(2, count + 2) / np.arange(1, count + 1))
        with np.errstate(all="ignore"):
            b = np.log(probs[:count] / probs[1 : count + 1])
            s_hat = np.float64((t * b).sum() / (t * t).sum())
            epsilon = s_hat - 1.0
            k = float(
                np.power(
                    (epsilon * np.power(2.0, self.mu)) / (1.0 - np.power(vocab_size, -epsilon)),
                    1.0 / s_hat,
                )
            )
        keep = max(int(k), 1) if math.isfinite(k) else (total if k > 0 else 1)
        if keep <= len(head):
            assert head.ids is not None
            return Candidates(head.logits[:keep], head.ids[:keep], owned=True, is_sorted=True)
        positions = top_positions(cands.logits, min(keep, total))
        return cands.take(positions, is_sorted=False)

    def truncate_v2(self, cands: Candidates) -> Candidates:
        """Keep the tokens whose surprise is at most ``mu`` (at least the most likely one)."""
        logits = cands.logits
        top = float(logits.max())
        total = weight_sum(np.exp(logits - top))
        # -log2(exp(l - top) / total) <= mu  <=>  l >= top + ln(total) - mu * ln(2)
        floor = top + math.log(total) - self.mu * math.log(2.0)
        kept = np.flatnonzero(logits >= floor)
        if kept.shape[0] == 0:
            kept = np.array([int(np.argmax(logits))], dtype=np.int64)
        return cands.take(kept.astype(np.int64), is_sorted=cands.is_sorted)
