"""A flat byte trie over a vocabulary's text tokens.

Tokens are sorted by their bytes; trie nodes are stored in preorder, so a node's
subtree is the contiguous node range ``i .. end[i]`` and covers the contiguous
range ``tok_lo[i] .. tok_hi[i]`` of sorted token positions.  Rejecting a byte
skips a whole subtree with one jump.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

__all__ = ["TokenTrie"]


class TokenTrie:
    """The trie of ``tokens`` (``(token_id, bytes)`` pairs, bytes non-empty).

    Attributes:
        sorted_ids: token ids in byte order (``int64`` array).
        sorted_bytes: the bytes of each sorted position.
        byte, depth, end: per node, its byte, its depth (>= 1) and the node after its subtree.
        ends_here: per node, sorted positions of tokens whose bytes end at this node
            (a range ``lo .. hi``, empty when ``lo == hi``; duplicates share a node).
        tok_lo, tok_hi: per node, the range of sorted positions in its subtree.
        max_depth: the longest token.
        root_child: for each byte, the depth-1 node of tokens starting with it, or -1.
    """

    def __init__(self, tokens: Sequence[tuple[int, bytes]]) -> None:
        order = sorted(tokens, key=lambda t: (t[1], t[0]))
        self.sorted_ids: npt.NDArray[np.int64] = np.array([t[0] for t in order], dtype=np.int64)
        self.sorted_bytes: list[bytes] = [t[1] for t in order]
        byte: list[int] = []
        depth: list[int] = []
        end: list[int] = []
        here_lo: list[int] = []
        here_hi: list[int] = []
        tok_lo: list[int] = []
        path: list[int] = []  # node index at each depth - 1 along the current path
        prev = b""
        for pos, data in enumerate(self.sorted_bytes):
            common = 0
            limit = min(len(prev), len(data))
            while common < limit and prev[common] == data[common]:
                common += 1
            if common == len(data) == len(prev):
                here_hi[path[-1]] = pos + 1  # duplicate bytes: same node
                prev = data
                continue
            # close nodes deeper than the common prefix
            while len(path) > common:
                node = path.pop()
                end[node] = len(byte)
            for d in range(common, len(data)):
                node = len(byte)
                byte.append(data[d])
                depth.append(d + 1)
                end.append(-1)
                here_lo.append(pos)
                here_hi.append(pos)
                tok_lo.append(pos)
                path.append(node)
            here_lo[path[-1]] = pos
            here_hi[path[-1]] = pos + 1
            prev = data
        while path:
            end[path.pop()] = len(byte)
        self.byte = byte
        self.depth = depth
        self.end = end
        self.here_lo = here_lo
        self.here_hi = here_hi
        self.tok_lo = tok_lo
        n_tokens = len(self.sorted_bytes)
        self.tok_hi = [tok_lo[end[i]] if end[i] < len(byte) else n_tokens for i in range(len(byte))]
        self.max_depth = max((len(b) for b in self.sorted_bytes), default=0)
        # the node of each first byte (-1: no token starts with it)
        self.root_child = [-1] * 256
        i = 0
        while i < len(byte):
            self.root_child[byte[i]] = i
            i = end[i]

    def __len__(self) -> int:
        return len(self.byte)
