"""A wide split's uncertain tokens grouped by *tail* (``docs/masks.md``, "Tails").

A tail of an uncertain token is what follows a prefix after which the context's state
has finished its frames (holds the bottom marker): the token is allowed by a group iff
one of its tails is accepted by the frames below the context.  A split keeps each
distinct tail once, sorted (so :func:`gbnfkit.tokens._walk.walk_sorted` shares the
states of common prefixes), with the tokens it stands for.

The grouping is on the cold path of every wide split (thousands of (token, offset)
*handover pairs*), so it is numpy sorts of the tails' bytes, read from the trie's
byte buffer.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from gbnfkit.tokens._bytestate import ByteAutomaton, ByteState
from gbnfkit.tokens._trie import TokenTrie

__all__ = ["SuffixRanks", "Tails", "group_ranked", "group_tails", "tails_by_stepping"]

Positions = npt.NDArray[np.int64]


@dataclass(frozen=True)
class Tails:
    """Uncertain tokens grouped by tail.

    Attributes:
        tails: the distinct tails, sorted.
        positions: the tokens' sorted positions, tail by tail (ascending within one).
        starts: tail ``i``'s tokens are ``positions[starts[i] : starts[i + 1]]``.

    Plain tuples: a mask reads the tokens of the few tails the frames below accept,
    where slicing a tuple costs less than any numpy call.
    """

    tails: tuple[bytes, ...]
    positions: tuple[int, ...]
    starts: tuple[int, ...]

    def positions_of(self, chosen: list[int]) -> list[int]:
        """The tokens of the tails ``chosen`` (indices into ``tails``)."""
        positions = self.positions
        starts = self.starts
        out: list[int] = []
        # consecutive tails' tokens are one slice (the tails a state below accepts are
        # mostly runs: a closing quote's `"`, `",`, `"}`...)
        count = len(chosen)
        k = 0
        while k < count:
            first = chosen[k]
            last = first
            k += 1
            while k < count and chosen[k] == last + 1:
                last += 1
                k += 1
            out += positions[starts[first] : starts[last + 1]]
        return out


def group_tails(trie: TokenTrie, positions: Positions, offsets: Positions) -> Tails | None:
    """Group the handover pairs (token ``positions[i]``, tail ``bytes[offsets[i]:]``),
    sorted by position then offset, by tail; ``None`` if there are none.

    One stable sort by three keys orders the pairs as their tails' byte strings: the
    tail's first 8 bytes, zero-padded, as a big-endian integer; its length, counted
    9 for every longer tail; and, only among the longer tails, their rank in byte
    order.  Two tails with equal first keys where one has at most 8 bytes are a tail
    and its extension by zero bytes or by more (the shorter first, as in byte
    order); the longer tails alone are ranked by comparing rows of their bytes
    (zero-padded, then their length in two big-endian bytes, which compare as byte
    strings do).  Most tails are short, so most bytes are never copied into rows.
    """
    if not len(positions):
        return None
    starts = trie.offsets[positions] + offsets
    lengths = trie.offsets[positions + 1] - starts
    padded = trie.padded_buffer
    # the first 8 bytes of each tail (and what follows it) as a big-endian integer, read
    # through a view with an 8-byte item at every byte, then the bytes past the tail
    # shifted out (a 2-D window and a mask of its rows cost 3-4 times more)
    prefix = _words_at(padded)[starts].astype(np.uint64)  # (`take` copies a strided array)
    cut = ((8 - np.minimum(lengths, 8)) * 8).astype(np.uint64)
    prefix >>= cut
    prefix <<= cut
    # the length counted 9 above 8, then the rank among the longer tails, as one key
    rest = np.minimum(lengths, 9) * (len(positions) + 1)
    long = (lengths > 8).nonzero()[0]
    if len(long):
        rest[long] += _byte_ranks(padded, starts[long], lengths[long])
    order = np.lexsort((rest, prefix))
    p, r = prefix[order], rest[order]
    first = _news(p)
    first[1:] |= r[1:] != r[:-1]
    return _grouped(trie, positions, offsets, order, first)


def _grouped(
    trie: TokenTrie,
    positions: Positions,
    offsets: Positions,
    order: npt.NDArray[np.intp],
    first: npt.NDArray[np.bool_],
) -> Tails:
    """The :class:`Tails` of the pairs taken in ``order`` (their tails in byte order,
    a tail's pairs by position), where ``first`` marks each new tail in that order."""
    heads = order[first]
    data = trie.sorted_bytes
    tails = tuple(
        data[p][k:] for p, k in zip(positions[heads].tolist(), offsets[heads].tolist(), strict=True)
    )
    return Tails(
        tails,
        tuple(positions[order].tolist()),
        _starts(first),
    )


@dataclass(frozen=True)
class SuffixRanks:
    """Every suffix of some tokens of a trie, ranked once in byte order (per
    vocabulary, with a slice: its rest tokens hold the string bodies' handover pairs).

    Attributes:
        base: per sorted position of the trie, where its suffixes start in ``rank``
            (``-1``: a token not ranked).
        rank: the dense rank of suffix ``base[p] + k`` (the bytes of ``p`` from ``k``
            on, ``0 <= k <= len``) among all the ranked suffixes, in byte order:
            equal ranks exactly for equal bytes, a lower rank exactly for bytes that
            sort before.
        texts: the distinct suffixes by rank (a grouping's tails are read from here
            instead of being cut from the tokens' bytes: 1,600 tails cost about 1 ms
            pure to cut).
    """

    base: npt.NDArray[np.int32]
    rank: npt.NDArray[np.int32]
    texts: tuple[bytes, ...]

    @staticmethod
    def build(trie: TokenTrie, positions: list[int]) -> SuffixRanks:
        """The ranks of the suffixes of the tokens at sorted ``positions``."""
        data = trie.sorted_bytes
        base = np.full(len(data), -1, dtype=np.int32)
        suffixes: list[bytes] = []
        for p in positions:
            base[p] = len(suffixes)
            token = data[p]
            suffixes.extend(token[k:] for k in range(len(token) + 1))
        texts = tuple(sorted(set(suffixes)))
        number = {s: i for i, s in enumerate(texts)}
        rank = np.array([number[s] for s in suffixes], dtype=np.int32)
        base.flags.writeable = False
        rank.flags.writeable = False
        return SuffixRanks(base, rank, texts)


def group_ranked(
    trie: TokenTrie, ranks: SuffixRanks, positions: Positions, offsets: Positions
) -> Tails | None:
    """:func:`group_tails` of non-empty handover pairs (sorted by position, then
    offset) from their tails' ranks, one stable sort of integers; ``None`` when some
    pair's token is not ranked."""
    base = ranks.base[positions]
    if base.min() < 0:
        return None
    # rank, then the pair's index (so by position within a tail): one plain sort of
    # distinct integers, far cheaper than a stable argsort
    keys = ranks.rank[base + offsets].astype(np.int64) << 32
    keys |= np.arange(len(keys), dtype=np.int64)
    keys.sort()
    order = (keys & 0xFFFFFFFF).astype(np.intp)
    ordered = keys >> 32
    first = _news(ordered)
    texts = ranks.texts
    return Tails(
        tuple([texts[r] for r in ordered[first].tolist()]),
        tuple(positions[order].tolist()),
        _starts(first),
    )


def _news(ordered: npt.NDArray[np.int64] | npt.NDArray[np.uint64]) -> npt.NDArray[np.bool_]:
    """Per item of the sorted ``ordered`` (not empty), whether it differs from the one
    before (the first one does).  Methods and ufuncs with ``out``, not ``np.ones`` and
    ``np.flatnonzero`` (Python functions: a few µs each, on every wide split's tails)."""
    new = np.empty(len(ordered), dtype=np.bool_)
    new[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
    return new


def _starts(first: npt.NDArray[np.bool_]) -> tuple[int, ...]:
    """:attr:`Tails.starts` from the flags of the pairs that start a tail."""
    found: list[int] = first.nonzero()[0].tolist()
    found.append(len(first))
    return tuple(found)


def _byte_ranks(
    padded: npt.NDArray[np.uint8], starts: Positions, lengths: Positions
) -> Positions:
    """The dense rank (equal strings, equal ranks) of the byte strings
    ``padded[starts[i] : starts[i] + lengths[i]]`` in byte order: each one a row of its
    bytes, zero-padded, then its length in two big-endian bytes, compared byte for
    byte (numpy's unstructured ``void`` order)."""
    width = int(lengths.max())
    rows = _rows_at(padded, width + 2)[starts]
    rows[np.arange(width + 2) >= lengths[:, None]] = 0
    rows[:, width] = lengths >> 8
    rows[:, width + 1] = lengths & 255
    keys = rows.view(f"V{width + 2}").reshape(-1)
    order = keys.argsort(kind="stable")
    keys = keys[order]
    new = np.empty(len(order), dtype=np.bool_)
    new[0] = True
    new[1:] = keys[1:] != keys[:-1]  # (no ufunc loop for `void`)
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.cumsum(new) - 1
    return rank


def _words_at(padded: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint64]:
    """A read-only view of ``padded`` with one big-endian 8-byte integer starting at
    each of its bytes but the last 7 (``sliding_window_view`` costs some 20 µs a call
    in Python; the constructor makes the same strides directly)."""
    words: npt.NDArray[np.uint64] = np.ndarray(
        (len(padded) - 7,), dtype=">u8", buffer=padded, strides=(1,)
    )
    words.flags.writeable = False
    return words


def _rows_at(padded: npt.NDArray[np.uint8], width: int) -> npt.NDArray[np.uint8]:
    """A read-only view of ``padded`` with one row of ``width`` bytes starting at each
    of its bytes but the last ``width - 1`` (as :func:`_words_at`)."""
    rows: npt.NDArray[np.uint8] = np.ndarray(
        (len(padded) - width + 1, width), dtype=np.uint8, buffer=padded, strides=(1, 1)
    )
    rows.flags.writeable = False
    return rows


def tails_by_stepping(
    trie: TokenTrie,
    automaton: ByteAutomaton,
    root: ByteState,
    positions: tuple[int, ...],
    max_tokens: int,
) -> Tails | None:
    """The tails of the uncertain tokens at ``positions`` of the context state ``root``,
    found by stepping each token (for splits read back from a file; a wide split gets
    the same pairs from :func:`gbnfkit.tokens._vecwalk.vector_walk`).  ``None``: no
    tokens, or more than ``max_tokens`` (they are then checked one by one)."""
    if not positions or len(positions) > max_tokens:
        return None
    found: list[int] = []
    cuts: list[int] = []
    data = trie.sorted_bytes
    step = automaton.step
    for pos in positions:
        state: ByteState | None = root
        for k, byte in enumerate(data[pos]):
            assert state is not None
            if state.bottom:
                found.append(pos)
                cuts.append(k)
            state = step(state, byte)
            if state is None:
                break
    return group_tails(trie, np.array(found, dtype=np.int64), np.array(cuts, dtype=np.int64))
