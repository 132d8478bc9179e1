"""Temperature, greedy choice and dynamic temperature (llama.cpp's ``temp-ext``)."""

from __future__ import annotations

import math

import numpy as np

from gbnfkit.sampling._candidates import Candidates, softmax

__all__ = ["greedy", "temperature"]


def greedy(cands: Candidates) -> Candidates:
    """Only the token with the largest logit (the first of equal ones)."""
    position = int(np.argmax(cands.logits))
    return cands.take(np.array([position], dtype=np.int64), is_sorted=True)


def _scale(cands: Candidates, temp: float) -> Candidates:
    if temp <= 0.0:
        return greedy(cands)
    if temp == 1.0:
        return cands
    with np.errstate(over="ignore", divide="ignore"):
        scaled = cands.logits / temp
    if not np.isfinite(scaled.max()):
        return greedy(cands)  # so small a temperature that the logits overflow: its limit
    return Candidates(scaled, cands.ids, owned=True, is_sorted=cands.is_sorted)


def temperature(cands: Candidates, temp: float, spread: float, exponent: float) -> Candidates:
    """Divide the logits by ``temp`` (``temp <= 0``: keep only the most likely token).

    With ``spread > 0`` (``dynatemp_range``) the temperature is chosen per token in
    ``[max(0, temp - spread), temp + spread]`` from the normalised entropy ``h`` of the
    candidates: ``low + (high - low) * h ** exponent``.
    """
    if spread <= 0.0:
        return _scale(cands, temp)
    count = cands.count()
    if count <= 1:
        return cands
    low = max(0.0, temp - spread)
    high = temp + spread
    sparse = cands.to_sparse()
    probs = softmax(sparse.logits)
    positive = probs[probs > 0]
    entropy = float(-(positive * np.log(positive)).sum())
    normalised = entropy / math.log(count)
    with np.errstate(divide="ignore", over="ignore"):
        dynamic = low + (high - low) * float(np.power(np.float64(normalised), exponent))
    return _scale(sparse, dynamic)
