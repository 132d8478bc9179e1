"""The whole token trie through a byte automaton at once, one trie level at a time (numpy).

Used for *wide* contexts (free text, where most tokens are accepted), where a trie
walk in Python would visit most of the trie.  Each level of the trie (all nodes of
one depth) is one contiguous array, so a level costs a few numpy operations over its
nodes: a node's state is the table entry for (its parent's state, its byte).  States
are numbered as they are met, with a dense ``state x byte`` table filled lazily from
the automaton's cached step; number 0 is the dead state.  Work is proportional to
the trie's nodes, not to the vocabulary's total bytes.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from gbnfkit.tokens._bytestate import ByteAutomaton, ByteState
from gbnfkit.tokens._trie import TokenTrie

__all__ = ["vector_walk"]

_UNKNOWN = -1


def vector_walk(
    trie: TokenTrie, automaton: ByteAutomaton, root: ByteState
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Sorted positions of the tokens ``root`` accepts, and of the uncertain ones.

    Same verdicts as :func:`gbnfkit.tokens._walk.walk`: a token is uncertain when it is
    rejected but some state before the rejecting byte held the bottom marker.
    """
    states: list[ByteState | None] = [None, root]
    numbers: dict[ByteState, int] = {root: 1}
    bottom = [False, root.bottom]
    table = np.full(256 * 8, _UNKNOWN, dtype=np.int32)
    table[:256] = 0
    total = len(trie.level_byte)
    sid = np.zeros(total + 1, dtype=np.int32)  # per node number (0 = root): its state
    sid[0] = 1
    starts = trie.level_start
    for d in range(1, trie.max_depth + 1):
        lo, hi = starts[d], starts[d + 1]
        if lo == hi:
            continue
        keys = sid[trie.level_parent[lo:hi]] * 256 + trie.level_byte[lo:hi]
        nxt = table[keys]
        if nxt.min() < 0:
            for key in np.unique(keys[nxt < 0]).tolist():
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
                        grown = np.full(len(table) * 2, _UNKNOWN, dtype=np.int32)
                        grown[: len(table)] = table
                        table = grown
                table[key] = number
            nxt = table[keys]
        sid[lo + 1 : hi + 1] = nxt
    ends = trie.token_flat_end
    alive = sid[ends] > 0
    accepted = np.flatnonzero(alive)
    if root.bottom:
        return accepted, np.flatnonzero(~alive)
    if not any(bottom):
        return accepted, accepted[:0]
    # a rejected token is uncertain when a state on its path held the bottom marker:
    # mark the subtrees (preorder ranges) below nodes whose state holds it
    marked = np.flatnonzero(np.array(bottom, dtype=bool)[sid[1:]])
    marks = trie.level_node[marked]
    cover = np.bincount(marks, minlength=total + 1) - np.bincount(
        trie.end_array[marks], minlength=total + 1
    )
    covered = np.cumsum(cover[:-1]) > 0
    dead = np.flatnonzero(~alive)
    uncertain = dead[covered[trie.token_end_node[dead]]]
    return accepted, uncertain
