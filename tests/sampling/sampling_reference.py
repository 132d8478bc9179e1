"""Straightforward reference samplers: plain Python over lists of ``(token, logit)`` pairs.

Each follows the description of the sampler in llama.cpp (``src/llama-sampling.cpp``),
sorting everything and looping, with none of gbnfkit's shortcuts (thresholds sampled
from the vocabulary, blocked sums, sparse candidates).
"""

from __future__ import annotations

import math

Pairs = list[tuple[int, float]]


def by_logit(pairs: Pairs) -> Pairs:
    return sorted(pairs, key=lambda pair: -pair[1])


def softmax(pairs: Pairs) -> list[float]:
    top = max(logit for _, logit in pairs)
    exps = [math.exp(logit - top) for _, logit in pairs]
    total = sum(exps)
    return [e / total for e in exps]


def distribution(pairs: Pairs) -> dict[int, float]:
    return dict(zip([t for t, _ in pairs], softmax(pairs), strict=True))


def top_k(pairs: Pairs, k: int) -> Pairs:
    if k <= 0:
        return pairs
    return by_logit(pairs)[:k]


def top_p(pairs: Pairs, p: float, min_keep: int) -> Pairs:
    if p >= 1.0:
        return pairs
    ordered = by_logit(pairs)
    probs = softmax(ordered)
    total = 0.0
    for i, prob in enumerate(probs):
        total += prob
        if total >= p and i + 1 >= min_keep:
            return ordered[: i + 1]
    return ordered


def min_p(pairs: Pairs, p: float, min_keep: int) -> Pairs:
    if p <= 0.0:
        return pairs
    ordered = by_logit(pairs)
    probs = softmax(ordered)
    kept = [pair for pair, prob in zip(ordered, probs, strict=True) if prob >= p * probs[0]]
    return kept if len(kept) >= max(min_keep, 1) else ordered[:min_keep]


def typical_p(pairs: Pairs, p: float, min_keep: int) -> Pairs:
    if p >= 1.0:
        return pairs
    ordered = by_logit(pairs)
    probs = softmax(ordered)
    entropy = -sum(q * math.log(q) for q in probs if q > 0)
    scored = sorted(
        range(len(ordered)),
        key=lambda i: abs(-math.log(probs[i]) - entropy) if probs[i] > 0 else math.inf,
    )
    total = 0.0
    for rank, i in enumerate(scored):
        total += probs[i]
        if total > p and (min_keep == 0 or rank >= min_keep - 1):
            return [ordered[j] for j in scored[: rank + 1]]
    return [ordered[j] for j in scored]


def top_n_sigma(pairs: Pairs, n: float) -> Pairs:
    if n <= 0 or len(pairs) <= 1:
        return pairs
    logits = [logit for _, logit in pairs]
    mean = sum(logits) / len(logits)
    std = math.sqrt(sum((x - mean) ** 2 for x in logits) / len(logits))
    top = max(logits)
    return [pair for pair in pairs if pair[1] >= top - n * std]


def xtc_fired(pairs: Pairs, threshold: float, min_keep: int) -> Pairs:
    """XTC when its random draw says to act."""
    ordered = by_logit(pairs)
    probs = softmax(ordered)
    above = sum(1 for q in probs if q >= threshold)
    last = max(above - 1, 0)
    if len(ordered) - last >= min_keep and last > 0:
        return ordered[last:]
    return ordered


def temperature(pairs: Pairs, temp: float) -> Pairs:
    if temp <= 0:
        return by_logit(pairs)[:1]
    return [(t, logit / temp) for t, logit in pairs]


def dynamic_temperature(pairs: Pairs, temp: float, spread: float, exponent: float) -> Pairs:
    if spread <= 0:
        return temperature(pairs, temp)
    if len(pairs) <= 1:
        return pairs
    probs = softmax(pairs)
    entropy = -sum(q * math.log(q) for q in probs if q > 0)
    normalised = entropy / math.log(len(pairs))
    low, high = max(0.0, temp - spread), temp + spread
    return temperature(pairs, low + (high - low) * normalised**exponent)


def penalties(
    pairs: Pairs, history: list[int], last_n: int, repeat: float, freq: float, presence: float
) -> Pairs:
    window = history if last_n < 0 else history[max(0, len(history) - last_n) :] if last_n else []
    out = []
    for token, logit in pairs:
        count = window.count(token)
        if count:
            logit = logit * repeat if logit <= 0 else logit / repeat
            logit -= count * freq + presence
        out.append((token, logit))
    return out


def dry(
    pairs: Pairs,
    history: list[int],
    multiplier: float,
    base: float,
    allowed: int,
    last_n: int,
    breakers: set[int],
) -> Pairs:
    """DRY with single-token breakers, by comparing every earlier suffix (quadratic)."""
    window = history if last_n < 0 else history[max(0, len(history) - last_n) :]
    n = len(window)
    if multiplier == 0 or base < 1 or last_n == 0 or n <= allowed:
        return pairs
    # how many of the last tokens may repeat: up to (not including) the last breaker
    limit = n
    for back in range(n):
        if window[n - 1 - back] in breakers:
            limit = back
            break
    if limit < allowed:
        return pairs
    longest: dict[int, int] = {}
    for end in range(n - 1):  # a suffix ending at `end` that equals the end of the window
        length = 0
        while length <= end and window[end - length] == window[n - 1 - length]:
            length += 1
        length = min(length, limit)
        if length >= allowed:
            follower = window[end + 1]
            longest[follower] = max(longest.get(follower, -1), length)
    # llama.cpp caps the exponent so that base ** exponent stays below float32's maximum
    cap = int(88.7228391 / math.log(base)) if base > 1.000001 else 0
    out = []
    for token, logit in pairs:
        if token in longest and token not in breakers:
            exponent = longest[token] - allowed
            logit -= multiplier * base ** (min(exponent, cap) if cap else exponent)
        out.append((token, logit))
    return out


def mirostat_v2_kept(pairs: Pairs, mu: float) -> Pairs:
    ordered = by_logit(pairs)
    probs = softmax(ordered)
    kept = [pair for pair, q in zip(ordered, probs, strict=True) if -math.log2(q) <= mu]
    return kept or ordered[:1]


def mirostat_v1_k(pairs: Pairs, mu: float, vocab_size: int) -> int:
    probs = softmax(by_logit(pairs))
    m = min(100, len(probs))
    num = sum(
        math.log((i + 2) / (i + 1)) * math.log(probs[i] / probs[i + 1]) for i in range(m - 1)
    )
    den = sum(math.log((i + 2) / (i + 1)) ** 2 for i in range(m - 1))
    s_hat = num / den
    epsilon = s_hat - 1
    k = ((epsilon * 2**mu) / (1 - vocab_size ** (-epsilon))) ** (1 / s_hat)
    return max(int(k), 1)
