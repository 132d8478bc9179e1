"""DRY ("Don't Repeat Yourself"): penalise tokens that would extend a repeated sequence.

The algorithm is llama.cpp's (after koboldcpp): find how far back the text may be
compared (up to the most recent sequence breaker), compute for every earlier position
how long a copy of the end of the history ends there (llama.cpp's Z-function over the
reversed history; here vectorised, and stopped at the length beyond which the penalty
no longer grows), and penalise each token that would extend such a repeat of at least
``allowed_length`` tokens by ``multiplier * base ** (length - allowed_length)``.

Sequence breakers are strings.  A token whose text contains a breaker is a breaker on
its own; a token whose text ends with the start of a breaker is a breaker when the
tokens after it spell the rest.  llama.cpp tokenizes that rest with the model's
tokenizer; gbnfkit only has the vocabulary, so it splits the rest greedily into the
longest tokens (the same result for the single-character default breakers).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence

import numpy as np
import numpy.typing as npt

from gbnfkit.sampling._candidates import Candidates
from gbnfkit.tokens._vocabulary import Vocabulary

__all__ = ["DryPenalty", "breaker_sequences"]

_MAX_BREAKER_BYTES = 40  # llama.cpp truncates longer breakers
_MAX_TAIL_TOKENS = 20  # and the token sequences that finish them
_FLOAT_MAX_LOG = 88.7228391  # log of the largest float32: caps base ** exponent
_VECTOR_STEPS = 4  # repeat lengths: vectorised steps over every position, then
_FEW_REPEATS = 64  # one by one when at most this many positions still repeat
_NEAR_BREAKERS = 32  # breakers are looked for one by one among the last tokens first

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


def _repeat_lengths(recent: npt.NDArray[np.int64], longest: int) -> npt.NDArray[np.int64]:
    """``z[k]`` (capped at ``longest``): how many tokens the suffix ending ``k`` tokens back
    shares with the end of the history; ``recent[j]`` is the token ``j`` steps back.

    The first steps are vectorised over every position; usually only the positions where
    the history really repeats survive them, and those are extended one by one.  A history
    that repeats everywhere (a loop of a few tokens) gets a Z-function, linear whatever
    the repeats.
    """
    n = recent.shape[0]
    lengths = np.zeros(n, dtype=np.int64)
    steps = min(longest, n - 1)
    if steps <= 0:
        return lengths
    alive = np.flatnonzero(recent[1:] == recent[0]) + 1  # where the last token occurred
    done = 1
    while alive.shape[0] > _FEW_REPEATS and done < min(steps, _VECTOR_STEPS):
        lengths[alive] = done
        alive = alive[alive + done < n]
        alive = alive[recent[alive + done] == recent[done]]
        done += 1
    if alive.shape[0] == 0:
        return lengths
    lengths[alive] = done
    if done >= steps:
        return lengths
    values = recent.tolist()
    if alive.shape[0] > _FEW_REPEATS:
        return np.minimum(np.array(_z_function(values), dtype=np.int64), longest)
    for k in alive.tolist():
        length = done
        while length < longest and k + length < n and values[length] == values[k + length]:
            length += 1
        lengths[k] = length
    return lengths


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

    __slots__ = (
        "_multiplier",
        "_base",
        "_allowed",
        "_breakers",
        "_heads",
        "_last_n",
        "_tokens",
        "_size",
        "_enabled",
    )

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
        self._heads = np.array(sorted(breakers), dtype=np.int64)
        self._enabled = multiplier != 0.0 and base >= 1.0 and last_n != 0
        self._last_n = last_n
        self._tokens = np.empty(64, dtype=np.int64)  # the history, oldest first
        self._size = 0

    @property
    def enabled(self) -> bool:
        return self._enabled

    def push(self, token_id: int) -> None:
        if not self._enabled:
            return
        if self._size == self._tokens.shape[0]:
            keep = self._size if self._last_n < 0 else min(self._size, self._last_n)
            if keep * 2 <= self._tokens.shape[0]:  # a bounded history: slide it back
                self._tokens[:keep] = self._tokens[self._size - keep : self._size]
            else:
                grown = np.empty(self._tokens.shape[0] * 2, dtype=np.int64)
                grown[:keep] = self._tokens[self._size - keep : self._size]
                self._tokens = grown
            self._size = keep
        self._tokens[self._size] = token_id
        self._size += 1

    def clear(self) -> None:
        self._size = 0

    def _recent(self) -> npt.NDArray[np.int64]:
        """The window of the history, most recent first (a view)."""
        start = 0 if self._last_n < 0 else max(0, self._size - self._last_n)
        return self._tokens[start : self._size][::-1]

    def _heads_from_the_end(self, recent: npt.NDArray[np.int64]) -> Iterator[int]:
        """Where breaker heads are, counted back from the end, nearest first.

        Breakers are usually near (punctuation, new lines): the last tokens are looked at
        one by one, and the rest of the history searched in one pass only if needed.
        """
        for i, token in enumerate(recent[:_NEAR_BREAKERS].tolist()):
            if token in self._breakers:
                yield i
        if recent.shape[0] > _NEAR_BREAKERS:
            far = np.flatnonzero(np.isin(recent[_NEAR_BREAKERS:], self._heads))
            yield from (far + _NEAR_BREAKERS).tolist()

    def _repeat_limit(self, recent: npt.NDArray[np.int64]) -> int:
        """How many of the most recent tokens may count as a repeat (stops at a breaker)."""
        if not self._breakers:
            return int(recent.shape[0])
        for i in self._heads_from_the_end(recent):
            longest = -1
            for tail in self._breakers[int(recent[i])]:
                size = len(tail)
                if longest < size <= i and all(tail[j] == recent[i - j - 1] for j in range(size)):
                    longest = size
            if longest >= 0:
                return i - longest
        return int(recent.shape[0])

    def penalties(self) -> dict[int, float]:
        """``{token: amount to subtract from its logit}`` for the next token."""
        n = self._size if self._last_n < 0 else min(self._size, self._last_n)
        if not self._enabled or n <= self._allowed:
            return {}
        recent = self._recent()
        limit = self._repeat_limit(recent)
        if limit < self._allowed:
            return {}
        cap = int(_FLOAT_MAX_LOG / math.log(self._base)) if self._base > 1.000001 else 0
        # longer repeats than allowed + cap get the same (capped) penalty; with base 1 every
        # repeat of allowed_length or more gets the same one
        longest_useful = limit
        if cap > 0:
            longest_useful = min(limit, self._allowed + cap)
        elif self._base == 1.0:
            longest_useful = min(limit, self._allowed)
        lengths = _repeat_lengths(recent, longest_useful)
        # the suffix ending k tokens back repeats the end: the token after it (k - 1 back)
        # would extend the repeat
        ks = np.flatnonzero(lengths >= self._allowed)
        ks = ks[ks >= 1]
        longest: dict[int, int] = {}
        for token, length in zip(recent[ks - 1].tolist(), lengths[ks].tolist(), strict=True):
            if longest.get(token, -1) < length:
                longest[token] = length
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
