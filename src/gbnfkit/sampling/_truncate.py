"""Truncating samplers: top-k, top-p, min-p, typical-p, top-n-sigma and XTC.

Each takes and returns :class:`Candidates` and follows llama.cpp's ``llama-sampling.cpp``
(what disables it, ``min_keep``, ties kept or cut), working on the few surviving
candidates instead of sorting the vocabulary whenever it can.
"""

from __future__ import annotations

import math

import numpy as np

from gbnfkit.sampling._candidates import Candidates, softmax, top_positions

__all__ = ["min_p", "top_k", "top_n_sigma", "top_p", "typical_p", "xtc"]

# top-p first looks for its nucleus among this many of the most likely tokens
_TOP_P_FIRST_TRY = 256


def top_k(cands: Candidates, k: int) -> Candidates:
    """Keep the ``k`` most likely tokens; ``k <= 0`` disables."""
    if k <= 0:
        return cands
    return cands.top(min(k, len(cands)))


def top_p(cands: Candidates, p: float, min_keep: int) -> Candidates:
    """Keep the most likely tokens until their probabilities add up to ``p``; ``p >= 1`` disables.

    At least ``min_keep`` tokens (and always one) are kept.
    """
    if p >= 1.0:
        return cands
    logits = np.asarray(cands.logits)
    top = logits.max()
    exp = np.exp(logits - top)
    total = float(exp.sum(dtype=np.float64))
    tries = [_TOP_P_FIRST_TRY, len(cands)] if len(cands) > 4 * _TOP_P_FIRST_TRY else [len(cands)]
    for limit in tries:
        if cands.ids is not None and cands.is_sorted:
            positions = np.arange(min(limit, len(cands)), dtype=np.int64)
        else:
            positions = top_positions(logits, limit)
            positions = positions[np.argsort(-logits[positions], kind="stable")]
        cumulative = np.cumsum(exp[positions].astype(np.float64)) / total
        reached = np.flatnonzero(cumulative >= p)
        if reached.shape[0]:
            last = max(int(reached[0]) + 1, min_keep, 1)
            if last <= positions.shape[0]:
                return cands.take(positions[:last], is_sorted=True)
    return cands.take(positions, is_sorted=True)


def min_p(cands: Candidates, p: float, min_keep: int) -> Candidates:
    """Keep tokens at least ``p`` times as likely as the most likely one; ``p <= 0`` disables."""
    if p <= 0.0 or len(cands) == 0:
        return cands
    logits = cands.logits
    floor = logits.max() + math.log(p)
    kept = np.flatnonzero(logits >= floor)
    if kept.shape[0] >= max(min_keep, 1):
        if kept.shape[0] == len(cands) and cands.ids is not None:
            return cands
        return cands.take(kept.astype(np.int64), is_sorted=cands.is_sorted)
    return cands.top(min_keep)


def typical_p(cands: Candidates, p: float, min_keep: int) -> Candidates:
    """Locally typical sampling; ``p >= 1`` disables.

    Tokens are ordered by how far their surprise is from the entropy and kept until
    their probabilities exceed ``p`` (and at least ``min_keep``).
    """
    if p >= 1.0:
        return cands
    ordered = cands.sorted()
    probs = softmax(ordered.logits)
    positive = probs > 0
    logs = np.zeros_like(probs)
    logs[positive] = np.log(probs[positive])
    entropy = float(-(probs * logs).sum())
    with np.errstate(divide="ignore"):
        shifted = np.abs(-np.log(probs) - entropy)
    order = np.argsort(shifted, kind="stable")
    cumulative = np.cumsum(probs[order])
    last = len(order)
    for i in np.flatnonzero(cumulative > p):
        if min_keep == 0 or i >= min_keep - 1:
            last = int(i) + 1
            break
    return ordered.take(order[:last].astype(np.int64), is_sorted=False)


def top_n_sigma(cands: Candidates, n: float) -> Candidates:
    """Keep tokens whose logit is within ``n`` standard deviations of the largest.

    ``n <= 0`` disables.  The mean and deviation are over the finite logits.
    """
    if n <= 0.0 or len(cands) <= 1:
        return cands
    logits = cands.logits
    finite = logits > -np.inf
    values = np.asarray(logits[finite] if not finite.all() else logits, dtype=np.float64)
    if values.shape[0] == 0:
        return cands
    top = float(values.max())
    std = float(values.std())
    kept = np.flatnonzero(logits >= top - n * std)
    return cands.take(kept.astype(np.int64), is_sorted=cands.is_sorted)


def xtc(
    cands: Candidates,
    probability: float,
    threshold: float,
    min_keep: int,
    rng: np.random.Generator,
) -> Candidates:
    """Exclude Top Choices: with chance ``probability``, drop every token at least
    ``threshold`` likely except the least likely of them.

    Disabled when ``probability <= 0`` or ``threshold > 0.5``; a random number is drawn
    only when it is enabled and at least two tokens remain (as llama.cpp does).
    """
    if probability <= 0.0 or threshold > 0.5 or cands.count() < 2:
        return cands
    if rng.random() > probability:
        return cands
    ordered = cands.sorted()
    probs = softmax(ordered.logits)
    above = int(np.count_nonzero(probs >= threshold))
    last = max(above - 1, 0)
    if len(ordered) - last >= min_keep and last > 0:
        return Candidates(
            ordered.logits[last:], ordered.token_ids()[last:], owned=True, is_sorted=True
        )
    return ordered
