"""A wide split's uncertain tokens grouped by *tail* (``docs/masks.md``, "Tails").

A tail of an uncertain token is what follows a prefix after which the context's state
has finished its frames (holds the bottom marker): the token is allowed by a group iff
one of its tails is accepted by the frames below the context.  A split keeps each
distinct tail once, sorted (so :func:`gbnfkit.tokens._walk.walk_sorted` shares the
states of common prefixes), with the tokens it stands for.

The grouping is on the cold path of every wide split (thousands of (token, offset)
*handover pairs*), so it is one numpy sort of the tails' bytes, read from the trie's
byte buffer.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from gbnfkit.tokens._bytestate import ByteAutomaton, ByteState
from gbnfkit.tokens._trie import TokenTrie

__all__ = ["Tails", "group_tails", "tails_by_stepping"]

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
        return [p for i in chosen for p in positions[starts[i] : starts[i + 1]]]


def group_tails(trie: TokenTrie, positions: Positions, offsets: Positions) -> Tails | None:
    """Group the handover pairs (token ``positions[i]``, tail ``bytes[offsets[i]:]``),
    sorted by position then offset, by tail; ``None`` if there are none.

    Each tail becomes one row of bytes, zero-padded, followed by its length (two bytes,
    big-endian): comparing rows byte for byte (numpy's unstructured ``void`` order)
    is then exactly comparing the tails as byte strings, so one stable sort groups the
    pairs and orders the tails, with the tokens of a tail still ascending.
    """
    if not len(positions):
        return None
    starts = trie.offsets[positions] + offsets
    lengths = trie.offsets[positions + 1] - starts
    width = int(lengths.max())
    total = int(lengths.sum())
    within = np.arange(total) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    rows = np.zeros((len(positions), width + 2), dtype=np.uint8)
    rows[np.repeat(np.arange(len(positions)), lengths), within] = trie.buffer[
        np.repeat(starts, lengths) + within
    ]
    rows[:, width] = lengths >> 8
    rows[:, width + 1] = lengths & 255
    keys = rows.view(f"V{width + 2}").ravel()
    order = np.argsort(keys, kind="stable")
    keys = keys[order]
    first = np.ones(len(order), dtype=bool)
    first[1:] = keys[1:] != keys[:-1]
    heads = order[first]
    data = trie.sorted_bytes
    tails = tuple(
        data[p][k:] for p, k in zip(positions[heads].tolist(), offsets[heads].tolist(), strict=True)
    )
    return Tails(
        tails,
        tuple(positions[order].tolist()),
        tuple(np.append(np.flatnonzero(first), len(order)).tolist()),
    )


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
            state = state.trans[byte] if byte in state.trans else step(state, byte)
            if state is None:
                break
    return group_tails(trie, np.array(found, dtype=np.int64), np.array(cuts, dtype=np.int64))
