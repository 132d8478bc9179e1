"""Candidates: the tokens still in the running while the sampler chain works.

Two forms keep the per-token cost low on large vocabularies:

* *dense*: ``ids`` is ``None`` and ``logits[i]`` is the logit of token ``i`` for every
  token of the vocabulary (excluded tokens hold ``-inf``).  The logits may be the
  caller's array: they are copied before the first change (``writable``).
* *sparse*: ``ids`` lists the surviving token ids and ``logits`` (float64, all finite)
  their logits; ``is_sorted`` tells whether they are in descending order of logit.

The first truncating sampler (top-k, min-p, ...) turns dense candidates into a few
sparse ones without sorting the vocabulary: see :func:`top_positions`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from gbnfkit._errors import SamplingError

__all__ = [
    "BLOCK",
    "Candidates",
    "block_sums",
    "fits",
    "in_range",
    "softmax",
    "top_positions",
    "total",
]

Floats = npt.NDArray[np.floating[Any]]
Ids = npt.NDArray[np.int64]

# dense arrays at most this long are partitioned directly, without sampling a threshold
_SMALL = 4096
# a threshold is sampled from about this many evenly spaced logits
_SAMPLE = 1024
# sums over a vocabulary go by blocks of this many weights
BLOCK = 256


def block_sums(weights: Floats) -> tuple[npt.NDArray[np.float64], float]:
    """``(sums of the full blocks of BLOCK weights, sum of the rest)``, in float64.

    float32 weights are summed in float32 within a block (numpy's pairwise sum: a relative
    error near 1e-7) and in float64 across blocks; a float64 sum of a float32 array
    would cast every element first, several times slower.
    """
    n = weights.shape[0]
    full = n - n % BLOCK
    sums = weights[:full].reshape(-1, BLOCK).sum(axis=1).astype(np.float64)
    return sums, float(weights[full:].sum(dtype=np.float64))


def total(weights: Floats) -> float:
    """The sum of ``weights`` (see :func:`block_sums`)."""
    if weights.dtype == np.float64 or weights.shape[0] < 4 * BLOCK:
        return float(weights.sum(dtype=np.float64))
    sums, rest = block_sums(weights)
    return float(sums.sum()) + rest


def fits(values: npt.NDArray[np.float64], dtype: np.dtype[Any]) -> bool:
    """Whether every one of ``values`` (changed logits) is within ``dtype``'s finite range:
    the usual case, where :func:`in_range` has nothing to do (False for -inf and NaN)."""
    largest = float(np.finfo(dtype).max)
    return bool(values.max() <= largest) and bool(values.min() >= -largest)


def in_range(
    values: npt.NDArray[np.float64], excluded: npt.NDArray[np.bool_], dtype: np.dtype[Any]
) -> npt.NDArray[np.float64]:
    """``values`` (changed logits) held within ``dtype``'s finite range, ``excluded`` at -inf.

    A bias or penalty only moves a logit: the most extreme amounts make a token the
    most or least likely one, never ``+inf`` (whose softmax is NaN) nor a ban by
    overflow; the tokens that were already excluded (or banned by a ``-inf`` bias) stay
    ``-inf``.
    """
    largest = float(np.finfo(dtype).max)
    out = np.clip(values, -largest, largest)
    out[excluded] = -np.inf
    return out


def softmax(logits: Floats) -> npt.NDArray[np.float64]:
    """Probabilities (float64) of finite ``logits``; ``-inf`` entries get 0."""
    values = np.asarray(logits, dtype=np.float64)
    exp = np.exp(values - values.max())
    result: npt.NDArray[np.float64] = exp / exp.sum()
    return result


def top_positions(values: Floats, k: int) -> Ids:
    """Positions of the ``k`` largest finite entries of ``values`` (fewer if fewer are finite).

    Unordered.  Large arrays are not partitioned whole: a threshold is read from an
    evenly spaced sample so that a few times ``k`` entries pass it, the passing
    entries are counted (one vectorised comparison) and only they are partitioned.
    """
    n = values.shape[0]
    if k <= 0:
        return np.empty(0, dtype=np.int64)
    if k >= n:
        return np.flatnonzero(values > -np.inf)
    if n <= _SMALL or k * 16 > n:
        part = np.argpartition(values, n - k)[n - k :]
        return part[values[part] > -np.inf].astype(np.int64)
    stride = n // _SAMPLE
    sample = values[::stride]
    size = sample.shape[0]
    above = min(size - 1, (4 * k) // stride + 1)
    while True:
        threshold = np.partition(sample, size - 1 - above)[size - 1 - above]
        if threshold == -np.inf:
            chosen = np.flatnonzero(values > -np.inf)
            break
        passing = values >= threshold
        chosen = np.flatnonzero(passing)
        if chosen.shape[0] >= k:
            break
        if above == size - 1:
            chosen = np.flatnonzero(values > -np.inf)
            break
        above = min(size - 1, above * 4)
    if chosen.shape[0] > k:
        sub = values[chosen]
        chosen = chosen[np.argpartition(sub, chosen.shape[0] - k)[chosen.shape[0] - k :]]
    return chosen.astype(np.int64)


class Candidates:
    """Token ids and logits; see the module docstring for the two forms."""

    __slots__ = ("ids", "logits", "owned", "is_sorted", "known_nonempty")

    def __init__(
        self,
        logits: Floats,
        ids: Ids | None = None,
        *,
        owned: bool = False,
        is_sorted: bool = False,
        known_nonempty: bool = False,
    ) -> None:
        self.logits = logits
        self.ids = ids
        self.owned = owned
        self.is_sorted = is_sorted
        # the caller checked that some logit is finite (saves a pass over a vocabulary)
        self.known_nonempty = known_nonempty

    # -- construction --------------------------------------------------------
    @classmethod
    def sparse(cls, ids: Ids, logits: Floats, *, is_sorted: bool = False) -> Candidates:
        """Sparse candidates; entries whose logit is -inf are dropped."""
        values = np.asarray(logits, dtype=np.float64)
        keep = values > -np.inf
        if not keep.all():
            ids, values = ids[keep], values[keep]
        return cls(values, ids.astype(np.int64, copy=False), owned=True, is_sorted=is_sorted)

    # -- queries -------------------------------------------------------------
    @property
    def is_dense(self) -> bool:
        return self.ids is None

    def __len__(self) -> int:
        return int(self.logits.shape[0])

    def count(self) -> int:
        """How many candidates have a finite logit."""
        if self.ids is None:
            return int(np.count_nonzero(self.logits > -np.inf))
        return len(self)

    def token_ids(self) -> Ids:
        if self.ids is None:
            return np.arange(len(self), dtype=np.int64)
        return self.ids

    def locate(
        self, token_ids: Ids, values: npt.NDArray[np.float64]
    ) -> tuple[Ids, npt.NDArray[np.float64]]:
        """``(positions, values)`` for those of ``token_ids`` that are candidates.

        ``values[i]`` belongs to ``token_ids[i]``; the pairs of absent ids are left out.
        """
        if self.ids is None:
            found = (token_ids >= 0) & (token_ids < len(self))
            return token_ids[found], values[found]
        if len(self) == 0:
            return np.empty(0, dtype=np.int64), values[:0]
        order = np.argsort(self.ids, kind="stable")
        sorted_ids = self.ids[order]
        where = np.minimum(np.searchsorted(sorted_ids, token_ids), len(sorted_ids) - 1)
        found = sorted_ids[where] == token_ids
        return order[where[found]].astype(np.int64), values[found]

    def add(self, amounts: Mapping[int, float]) -> Candidates:
        """Add ``amounts[token]`` to the logits of those tokens (``-inf`` drops a sparse one)."""
        if not amounts:
            return self
        ids = np.fromiter(amounts.keys(), dtype=np.int64, count=len(amounts))
        values = np.fromiter(amounts.values(), dtype=np.float64, count=len(amounts))
        positions, values = self.locate(ids, values)
        if positions.shape[0] == 0:
            return self
        logits = self.writable()
        before = logits[positions]
        changed = before + values  # float64 (Sampler runs the chain with overflow warnings off)
        if not fits(changed, logits.dtype):  # a ban, an excluded token, or out of range
            excluded = (before == -np.inf) | (values == -np.inf)
            changed = in_range(changed, excluded, logits.dtype)
        logits[positions] = changed
        if (values == -np.inf).any():
            self.known_nonempty = False
        if self.ids is not None and not (logits[positions] > -np.inf).all():
            return Candidates.sparse(self.ids, logits)
        return self

    # -- changes -------------------------------------------------------------
    def writable(self) -> Floats:
        """The logits, copied first if they are still the caller's."""
        if not self.owned:
            self.logits = self.logits.copy()
            self.owned = True
        self.is_sorted = False
        return self.logits

    def to_sparse(self) -> Candidates:
        """The same candidates in sparse form (dense -inf entries dropped)."""
        if self.ids is not None:
            return self
        keep = np.flatnonzero(self.logits > -np.inf)
        return Candidates.sparse(keep, self.logits[keep])

    def take(self, positions: Ids, *, is_sorted: bool) -> Candidates:
        """Sparse candidates made of the entries at ``positions`` (in that order)."""
        ids = positions if self.ids is None else self.ids[positions]
        return Candidates.sparse(ids, self.logits[positions], is_sorted=is_sorted)

    def sorted(self) -> Candidates:
        """Sparse candidates in descending order of logit."""
        sparse = self.to_sparse()
        if sparse.is_sorted:
            return sparse
        order = np.argsort(-sparse.logits, kind="stable")
        return Candidates(
            sparse.logits[order], sparse.token_ids()[order], owned=True, is_sorted=True
        )

    def top(self, k: int) -> Candidates:
        """The ``k`` candidates with the largest logits, sorted (sparse)."""
        if self.ids is not None and self.is_sorted:
            return Candidates(self.logits[:k], self.ids[:k], owned=True, is_sorted=True)
        positions = top_positions(self.logits, k)
        order = np.argsort(-np.asarray(self.logits[positions], dtype=np.float64), kind="stable")
        return self.take(positions[order], is_sorted=True)

    def require_any(self) -> None:
        """Raise :class:`SamplingError` if no candidate has a finite logit."""
        if self.known_nonempty:
            return
        if len(self) == 0 or not self.logits.max() > -np.inf:
            raise SamplingError("no token can be sampled: every candidate has a logit of -inf")
