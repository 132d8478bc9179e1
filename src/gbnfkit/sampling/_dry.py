"""DRY ("Don't Repeat Yourself"): penalise tokens that would extend a repeated sequence.

The algorithm is llama.cpp's (after koboldcpp): find how far back the text may be
compared (up to the most recent sequence breaker), compute for every earlier position
how long a suffix of the history ends there (a Z-function over the reversed history),
and penalise each token that would extend such a repeat of at least
``allowed_length`` tokens by ``multiplier * base ** (length - allowed_length)``.

Sequence breakers are strings.  A token whose text contains a breaker is a breaker on
its own; a token whose text ends with the start of a breaker is a breaker when the
tokens after it spell the rest.  llama.cpp tokenizes that rest with the model's
tokenizer; gbnfkit only has the vocabulary, so it splits the rest greedily into the
longest tokens (the same result for the single-character default breakers).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Sequence

from gbnfkit.sampling._candidates import Candidates
from gbnfkit.tokens._vocabulary import Vocabulary

__all__ = ["DryPenalty", "breaker_sequences"]

_MAX_BREAKER_BYTES = 40  # llama.cpp truncates longer breakers
_MAX_TAIL_TOKENS = 20  # and the token sequences that finish them
_FLOAT_MAX_LOG = 88.7228391  # log of the largest float32: caps base ** exponent

Breakers = dict[int, list[tuple[int, ...]]]


def _greedy_split(data: bytes, index: dict[bytes, int], longest: int) -> tuple[int, ...]:
    out: list[int] = []
    pos = 0
    while pos < len(data) and len(out) < _MAX_TAIL_TOKENS:
        for size in range(min(longest, len(data) - pos), 0, -1):
            token = index.get(data[pos : pos + size])
            if token is not None:
                out.append(token)
                pos += size
                break
        else:
            break  # a byte no token starts with: the rest cannot be spelled
    return tuple(out)


def breaker_sequences(breakers: Sequence[str], vocabulary: Vocabulary) -> Breakers:
    """``{head token: [tail token sequences]}`` for the given breaker strings.

    An empty tail means the head token is a breaker by itself.
    """
    result: Breakers = {}
    encoded = [b.encode("utf-8")[:_MAX_BREAKER_BYTES] for b in breakers]
    encoded = [b for b in encoded if b]
    special = vocabulary.special_token_ids
    index: dict[bytes, int] = {}
    longest = 0
    if any(len(b) > 1 for b in encoded):
        for token_id, data in enumerate(vocabulary.tokens):
            if data and token_id not in special and data not in index:
                index[data] = token_id
                longest = max(longest, len(data))
    for token_id, word in enumerate(vocabulary.tokens):
        if not word or token_id in special:
            continue
        for breaker in encoded:
            if breaker in word:
                tails = result.setdefault(token_id, [])
                if () not in tails:
                    tails.append(())
                continue
            if len(breaker) == 1:
                continue
            pos = word.find(breaker[0])
            while pos != -1:
                overlap = len(word) - pos
                if overlap < len(breaker) and breaker.startswith(word[pos:]):
                    tail = _greedy_split(breaker[overlap:], index, longest)
                    tails = result.setdefault(token_id, [])
                    if tail not in tails:
                        tails.append(tail)
                pos = word.find(breaker[0], pos + 1)
    return result


def _z_function(values: list[int]) -> list[int]:
    """``z[k]``: the length of the longest common prefix of ``values`` and ``values[k:]``."""
    n = len(values)
    z = [0] * n
    left = right = 0
    for k in range(1, n):
        length = min(right - k, z[k - left]) if k < right else 0
        while k + length < n and values[length] == values[k + length]:
            length += 1
        z[k] = length
        if k + length > right:
            left, right = k, k + length
    return z


class DryPenalty:
    """DRY's history (the last ``last_n`` tokens; ``-1``: all) and its penalty."""

    __slots__ = ("_multiplier", "_base", "_allowed", "_breakers", "_tokens", "_enabled")

    def __init__(
        self,
        multiplier: float,
        base: float,
        allowed_length: int,
        last_n: int,
        breakers: Breakers,
    ) -> None:
        self._multiplier = multiplier
        self._base = base
        self._allowed = allowed_length
        self._breakers = breakers
        self._enabled = multiplier != 0.0 and base >= 1.0 and last_n != 0
        self._tokens: deque[int] = deque(maxlen=None if last_n < 0 else max(last_n, 0))

    @property
    def enabled(self) -> bool:
        return self._enabled

    def push(self, token_id: int) -> None:
        if self._enabled:
            self._tokens.append(token_id)

    def clear(self) -> None:
        self._tokens.clear()

    def _repeat_limit(self, recent: list[int]) -> int:
        """How many of the most recent tokens may count as a repeat (stops at a breaker)."""
        n = len(recent)
        for i in range(n):
            tails = self._breakers.get(recent[i])
            if tails is None:
                continue
            longest = -1
            for tail in tails:
                size = len(tail)
                if longest < size <= i and all(tail[j] == recent[i - j - 1] for j in range(size)):
                    longest = size
            if longest >= 0:
                return i - longest
        return n

    def penalties(self) -> dict[int, float]:
        """``{token: amount to subtract from its logit}`` for the next token."""
        if not self._enabled or len(self._tokens) <= self._allowed:
            return {}
        recent = list(reversed(self._tokens))  # recent[i]: the token i steps back
        limit = self._repeat_limit(recent)
        if limit < self._allowed:
            return {}
        z = _z_function(recent)
        n = len(recent)
        longest: dict[int, int] = {}
        for k in range(1, n):
            length = min(z[k], limit)
            if length >= self._allowed:
                # the suffix ending k tokens back repeats the end; the token after it extends it
                token = recent[k - 1]
                if longest.get(token, -1) < length:
                    longest[token] = length
        cap = int(_FLOAT_MAX_LOG / math.log(self._base)) if self._base > 1.000001 else 0
        out: dict[int, float] = {}
        for token, length in longest.items():
            if () in self._breakers.get(token, ()):
                continue
            exponent = length - self._allowed
            if cap > 0:
                exponent = min(exponent, cap)
            out[token] = self._multiplier * self._base**exponent
        return out

    def apply(self, cands: Candidates) -> Candidates:
        return cands.add({token: -amount for token, amount in self.penalties().items()})
