"""The whole vocabulary through a byte automaton at once, one byte column at a time (numpy).

Used for *wide* contexts (free text, where most tokens are accepted), where a trie
walk in Python would visit most of the trie.  Tokens are ordered by length,
longest first, so the tokens that have a byte at column ``j`` are a prefix of
that order and each column is one contiguous array.  States are numbered as they
are met, with a dense ``state x byte`` table filled lazily from the automaton's
cached step; number 0 is the dead state.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from gbnfkit.tokens._bytestate import ByteAutomaton, ByteState

__all__ = ["ByteColumns", "vector_walk"]

_UNKNOWN = -1


class ByteColumns:
    """Token bytes by column: ``columns[j]`` holds byte ``j`` of the ``counts[j]`` longest tokens.

    Attributes:
        order: sorted positions (see :class:`TokenTrie`) in order of decreasing length.
    """

    def __init__(self, sorted_bytes: list[bytes]) -> None:
        lengths = np.array([len(b) for b in sorted_bytes], dtype=np.int64)
        self.order: npt.NDArray[np.int64] = np.argsort(-lengths, kind="stable").astype(np.int64)
        ordered = lengths[self.order]
        buffer = np.frombuffer(b"".join(sorted_bytes[i] for i in self.order.tolist()), np.uint8)
        starts = np.concatenate(([0], np.cumsum(ordered)[:-1])) if len(ordered) else ordered
        max_len = int(ordered[0]) if len(ordered) else 0
        self.columns: list[npt.NDArray[np.int64]] = []
        self.counts: list[int] = []
        for j in range(max_len):
            count = int(np.searchsorted(-ordered, -j, side="left"))
            self.counts.append(count)
            self.columns.append(buffer[starts[:count] + j].astype(np.int64))


def vector_walk(
    columns: ByteColumns, automaton: ByteAutomaton, root: ByteState
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Sorted positions of the tokens ``root`` accepts, and of the uncertain ones.

    Same verdicts as :func:`gbnfkit.tokens._walk.walk`: a token is uncertain when it is
    rejected but some state before the rejecting byte held the bottom marker.
    """
    states: list[ByteState | None] = [None, root]
    numbers: dict[ByteState, int] = {root: 1}
    bottom = [False, root.bottom]
    table = np.full(256 * 8, _UNKNOWN, dtype=np.int64)
    table[:256] = 0
    total = len(columns.order)
    sid = np.ones(total, dtype=np.int64)
    flag = np.full(total, root.bottom, dtype=bool)
    bottom_arr = np.array(bottom, dtype=bool)
    for j, col in enumerate(columns.columns):
        n = columns.counts[j]
        cur = sid[:n]
        keys = cur * 256 + col
        nxt = table[keys]
        unknown = nxt == _UNKNOWN
        if unknown.any():
            present = np.zeros(len(table), dtype=bool)
            present[keys[unknown]] = True
            for key in np.flatnonzero(present).tolist():
                state = states[key >> 8]
                assert state is not None
                after = automaton.step(state, key & 255)
                if after is None:
                    table[key] = 0
                    continue
                number = numbers.get(after)
                if number is None:
                    number = numbers[after] = len(states)
                    states.append(after)
                    bottom.append(after.bottom)
                    if len(states) * 256 > len(table):
                        grown = np.full(len(table) * 2, _UNKNOWN, dtype=np.int64)
                        grown[: len(table)] = table
                        table = grown
                table[key] = number
            bottom_arr = np.array(bottom, dtype=bool)
            nxt = table[keys]
        flag[:n] |= bottom_arr[cur]
        sid[:n] = nxt
    accepted = columns.order[sid > 0]
    uncertain = columns.order[(sid == 0) & flag]
    return accepted, uncertain
