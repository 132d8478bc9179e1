"""Truncating samplers: top-k, top-p, min-p, typical-p, top-n-sigma and XTC.

Each takes and returns :class:`Candidates` and follows llama.cpp's ``llama-sampling.cpp``
(what disables it, ``min_keep``, ties kept or cut), working on the few surviving
candidates instead of sorting the vocabulary whenever it can.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt

from gbnfkit.sampling._candidates import Candidates, softmax, top_positions
from gbnfkit.sampling._candidates import total as weight_sum

__all__ = ["min_p", "top_k", "top_n_sigma", "top_p", "typical_p", "xtc"]

# top-p first looks for its nucleus among this many of the most likely tokens
_TOP_P_FIRST_TRY = 256
# and then sorts tokens into this many buckets of logits
_TOP_P_BUCKETS = 4096


def top_k(cands: Candidates, k: int) -> Candidates:
    """Keep the ``k`` most likely tokens; ``k <= 0`` disables."""
    if k <= 0:
        return cands
    return cands.top(min(k, len(cands)))


def top_p(cands: Candidates, p: float, min_keep: int) -> Candidates:
    """Keep the most likely tokens until their probabilities add up to ``p``; ``p >= 1`` disables.

    At least ``min_keep`` tokens (and always one) are kept.  The nucleus is looked for
    among the few hundred most likely tokens first; a wider one is found by buckets of
    logits (the tokens of the buckets above the one where the sum reaches ``p`` are kept
    without sorting), as llama.cpp does.
    """
    if p >= 1.0:
        return cands
    logits = cands.logits
    weights = np.exp(logits - logits.max())
    total = weight_sum(weights)
    n = len(cands)
    if cands.ids is not None and cands.is_sorted:
        positions = np.arange(min(_TOP_P_FIRST_TRY, n), dtype=np.int64)
    else:
        positions = top_positions(logits, min(_TOP_P_FIRST_TRY, n))
        positions = positions[np.argsort(-logits[positions], kind="stable")]
    last = _nucleus_size(weights[positions], 0.0, total, p)
    if last is not None and max(last, min_keep) <= positions.shape[0]:
        return cands.take(positions[: max(last, min_keep, 1)], is_sorted=True)
    if positions.shape[0] >= cands.count():
        return cands.take(positions[: max(min_keep, positions.shape[0])], is_sorted=True)
    kept = _nucleus_by_buckets(logits, weights, total, p)
    if kept.shape[0] < min_keep:
        return cands.top(min_keep)
    return cands.take(kept, is_sorted=False)


def _nucleus_size(
    weights: npt.NDArray[np.floating[Any]], before: float, total: float, p: float
) -> int | None:
    """How many of ``weights`` (in descending order) it takes for the share to reach ``p``."""
    cumulative = (before + np.cumsum(weights, dtype=np.float64)) / total
    reached = np.flatnonzero(cumulative >= p)
    return int(reached[0]) + 1 if reached.shape[0] else None


def _nucleus_by_buckets(
    logits: npt.NDArray[np.floating[Any]],
    weights: npt.NDArray[np.floating[Any]],
    total: float,
    p: float,
) -> npt.NDArray[np.int64]:
    """Positions of the top-p nucleus, by buckets of equal width in logit below the top."""
    top = float(logits.max())
    finite = logits > -np.inf
    low = float(logits[finite].min())
    if math.isinf(top - low):  # finite logits further apart than the float range: halve them
        logits, top, low = logits * 0.5, top * 0.5, low * 0.5
    scale = (_TOP_P_BUCKETS - 1) / (top - low) if top > low else 0.0
    with np.errstate(invalid="ignore"):
        buckets = np.minimum((top - logits) * scale, _TOP_P_BUCKETS - 1)
    buckets = np.where(finite, buckets, _TOP_P_BUCKETS - 1).astype(np.int64)
    mass = np.bincount(buckets, weights=weights, minlength=_TOP_P_BUCKETS)
    cumulative = np.cumsum(mass) / total
    crossing = np.flatnonzero(cumulative >= p)
    bucket = int(crossing[0]) if crossing.shape[0] else _TOP_P_BUCKETS - 1
    whole = np.flatnonzero(buckets < bucket)
    inside = np.flatnonzero(buckets == bucket)
    inside = inside[np.argsort(-logits[inside], kind="stable")]
    before = float(cumulative[bucket - 1]) * total if bucket > 0 else 0.0
    last = _nucleus_size(weights[inside], before, total, p)
    return np.concatenate([whole, inside[: last if last is not None else inside.shape[0]]])


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
    with np.errstate(over="ignore"):  # an enormous n: every finite token stays
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
    count = cands.count()
    if probability <= 0.0 or threshold > 0.5 or count < 2:
        return cands
    if rng.random() > probability:
        return cands
    logits = cands.logits
    if threshold > 0.0:
        weights = np.exp(logits - logits.max())
        total = weight_sum(weights)
        # weights > 0 too: a threshold below float32's range would let excluded tokens in
        above = int(np.count_nonzero((weights > 0) & (weights >= threshold * total)))
    else:
        above = count
    last = max(above - 1, 0)  # the most likely tokens to drop: all above but the last
    if count - last < min_keep or last == 0:
        return cands
    dropped = top_positions(logits, last)
    if cands.ids is None:
        kept = cands.writable()
        kept[dropped] = -np.inf
        return cands
    kept_positions = np.delete(np.arange(len(cands), dtype=np.int64), dropped)
    return cands.take(kept_positions, is_sorted=cands.is_sorted)
