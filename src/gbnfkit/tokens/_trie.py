"""A flat byte trie over a vocabulary's text tokens.

Tokens are sorted by their bytes; trie nodes are stored in preorder, so a node's
subtree is the contiguous node range ``i .. end[i]`` and covers the contiguous
range ``tok_lo[i] .. tok_hi[i]`` of sorted token positions.  Rejecting a byte
skips a whole subtree with one jump.  Built with numpy (no per-node Python loop).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import numpy as np
import numpy.typing as npt

from gbnfkit.tokens._tuning import DEFAULT_TUNING

__all__ = ["ThinTail", "TokenTrie"]

_LCP_WIDTH: Final = 32  # common prefixes are compared in numpy up to this many bytes


class ThinTail:
    """The trie's deep thin levels (:meth:`TokenTrie.thin_tail`) in preorder, as Python
    lists, for a walk that goes through them node by node (skipping a rejected node's
    subtree at once) rather than with numpy calls per level.

    Attributes:
        depth: the first depth of the tail (at least 2; ``max_depth + 1``: no tail).
        first, base: the tail's nodes are the numbers ``first + 1 ..`` (level order);
            those of depth ``depth - 1``, ``base .. first``.
        numbers: the tail's node numbers in preorder (``int64`` array).
        parents: per tail node in preorder, where its parent is in a list of the
            nodes of depth ``depth - 1`` (by number) followed by the tail's nodes (in
            preorder): its number minus ``base``, or ``first + 1 - base`` plus its
            index in the tail.
        bytes: per tail node in preorder, its byte.
        ends: per tail node in preorder, the index after its subtree.
    """

    __slots__ = ("base", "bytes", "depth", "ends", "first", "numbers", "parents")

    def __init__(
        self,
        depth: int,
        first: int,
        base: int,
        numbers: npt.NDArray[np.int64],
        parents: list[int],
        bytes_: list[int],
        ends: list[int],
    ) -> None:
        self.depth = depth
        self.first = first
        self.base = base
        self.numbers = numbers
        self.parents = parents
        self.bytes = bytes_
        self.ends = ends


class TokenTrie:
    """The trie of ``tokens`` (``(token_id, bytes)`` pairs, bytes non-empty).

    Attributes:
        sorted_ids: token ids in byte order (``int64`` array).
        sorted_bytes: the bytes of each sorted position.
        buffer, offsets: the same bytes joined (``uint8``), and where each sorted
            position's bytes start in them (``offsets[i] .. offsets[i + 1]``).
        byte, depth, end: per node, its byte, its depth (>= 1) and the node after its subtree.
        here_lo, here_hi: per node, the sorted positions of tokens whose bytes end there
            (empty when equal; tokens with equal bytes share a node).
        tok_lo, tok_hi: per node, the range of sorted positions in its subtree.
        max_depth: the longest token.
        root_child: for each byte, the depth-1 node of tokens starting with it, or -1.
        nodes_below: per byte ``b`` (0 .. 256), the nodes under the first bytes ``< b``.
        no_tokens: the bytes no token starts with (a 256-bit set).
        level_start, level_parent, level_byte, token_flat_end: the nodes in *level
            order* (all of depth 1, then depth 2, ...) numbered from 1 (0 is the root):
            nodes of depth ``d`` have numbers ``level_start[d] + 1 .. level_start[d + 1]``;
            ``level_parent[k]`` and ``level_byte[k]`` are the parent's number and the byte
            of node number ``k + 1``; ``token_flat_end`` gives, per sorted position, the
            number of the node where the token ends; ``level_tok_lo[k]`` and
            ``level_tok_hi[k]`` are ``tok_lo`` and ``tok_hi`` of node number ``k + 1``.
            Used by whole-trie numpy walks.
        padded_buffer: ``buffer`` and zero bytes after it (built on first use).
        level_bounds: per depth ``d`` and byte ``b``, where the nodes of depth ``d``
            under first bytes ``>= b`` start in the level order (an index into
            ``level_parent``; built on first use): the subtrees of the first bytes
            ``b0 .. b1`` hold, at depth ``d``, the indices ``level_bounds[d][b0] ..
            level_bounds[d][b1 + 1]``, since a level is in byte order.
        thin_tail(limit): the levels from the first depth from which every level holds
            at most ``limit`` nodes (built on first use per limit; the default
            ``Tuning.thin_levels``'s with the trie).
    """

    def __init__(self, tokens: Sequence[tuple[int, bytes]]) -> None:
        order = sorted((data, token) for token, data in tokens)
        self.sorted_bytes: list[bytes] = [t[0] for t in order]
        self.sorted_ids: npt.NDArray[np.int64] = np.array([t[1] for t in order], dtype=np.int64)
        n = len(order)
        lengths = np.array([len(b) for b in self.sorted_bytes], dtype=np.int64)
        self.max_depth = int(lengths.max()) if n else 0
        lcp = self._lcp(lengths)
        # token i creates the nodes for depths lcp[i]+1 .. len(i) (none for a duplicate)
        counts = lengths - lcp
        starts = np.concatenate(([0], np.cumsum(counts)[:-1])) if n else counts
        total = int(counts.sum())
        node_tok = np.repeat(np.arange(n, dtype=np.int64), counts)
        node_depth = (np.arange(total, dtype=np.int64) - starts[node_tok]) + lcp[node_tok] + 1
        buffer = np.frombuffer(b"".join(self.sorted_bytes), dtype=np.uint8)
        self.buffer: npt.NDArray[np.uint8] = buffer
        self.offsets: npt.NDArray[np.int64] = np.concatenate(([0], np.cumsum(lengths)))
        offsets = self.offsets[:-1]
        node_byte = buffer[offsets[node_tok] + node_depth - 1] if total else node_depth
        # end[node]: the first node after it with depth <= its depth, i.e. the first node
        # of the first later token whose common prefix with it is shorter than its depth
        node_end = np.full(total, total, dtype=np.int64)
        token_index = np.arange(n, dtype=np.int64)
        for d in range(1, self.max_depth + 1):
            at = np.flatnonzero(node_depth == d)
            if not len(at):
                continue
            breaks = token_index[lcp < d]
            k = np.searchsorted(breaks, node_tok[at], side="right")
            found = k < len(breaks)
            node_end[at[found]] = starts[breaks[k[found]]]
        # the node where each token ends (a duplicate ends where the previous one does)
        last = np.where(counts > 0, starts + counts - 1, -1)
        ends_at = np.maximum.accumulate(last) if n else last
        here_lo = node_tok.copy()
        here_hi = node_tok.copy()
        if n:
            first_of = np.unique(ends_at, return_index=True)
            here_lo[first_of[0]] = first_of[1]
            here_hi[ends_at] = 0
            np.maximum.at(here_hi, ends_at, token_index + 1)
            internal = np.ones(total, dtype=bool)
            internal[ends_at] = False
            here_hi[internal] = here_lo[internal]
        tok_hi = np.where(node_end < total, node_tok[np.minimum(node_end, total - 1)], n)
        self.byte: list[int] = node_byte.tolist()
        self.depth: list[int] = node_depth.tolist()
        self.end: list[int] = node_end.tolist()
        self.here_lo: list[int] = here_lo.tolist()
        self.here_hi: list[int] = here_hi.tolist()
        self.tok_lo: list[int] = node_tok.tolist()
        self.tok_hi: list[int] = tok_hi.tolist() if total else []
        # the nodes level by level (depth 1, 2, ...), for whole-trie numpy walks
        by_level = np.argsort(node_depth, kind="stable")
        level_sizes = np.bincount(node_depth, minlength=self.max_depth + 1)
        self.level_start: list[int] = np.concatenate(([0], np.cumsum(level_sizes))).tolist()
        flat_of = np.empty(total, dtype=np.int64)
        flat_of[by_level] = np.arange(total, dtype=np.int64)
        # parent of a node: the last node before it one level up (preorder)
        parent = np.zeros(total, dtype=np.int64)
        for d in range(2, self.max_depth + 1):
            here = by_level[self.level_start[d] : self.level_start[d + 1]]
            above = by_level[self.level_start[d - 1] : self.level_start[d]]
            parent[here] = above[np.searchsorted(above, here) - 1]
        # int64: whole-trie walks ``take`` through it (int32 indices are converted
        # at every call)
        self.level_parent: npt.NDArray[np.int64] = np.where(
            node_depth[by_level] > 1, flat_of[parent[by_level]] + 1, 0
        )
        self.level_byte: npt.NDArray[np.int32] = node_byte[by_level].astype(np.int32)
        self.token_flat_end: npt.NDArray[np.int64] = (
            flat_of[ends_at] + 1 if n else np.zeros(0, dtype=np.int64)
        )
        self.level_tok_lo: npt.NDArray[np.int64] = node_tok[by_level]
        self.level_tok_hi: npt.NDArray[np.int64] = tok_hi[by_level]
        self.root_child = [-1] * 256
        for node in np.flatnonzero(node_depth == 1).tolist():
            self.root_child[self.byte[node]] = node
        self._children: dict[int, dict[int, int]] = {}
        # per first byte b, the nodes under the first bytes < b (257 entries), and the
        # bytes no token starts with (a 256-bit set)
        self.nodes_below: list[int] = [0] * 257
        self.no_tokens = 0
        for b, child in enumerate(self.root_child):
            size = self.end[child] - child if child >= 0 else 0
            self.nodes_below[b + 1] = self.nodes_below[b] + size
            if child < 0:
                self.no_tokens |= 1 << b
        self._level_bounds: list[list[int]] | None = None
        self._padded: npt.NDArray[np.uint8] | None = None
        self._prefix_nodes: npt.NDArray[np.int32] | None = None
        self._thin: dict[int, ThinTail] = {}
        # the default tail, built now rather than at a first request's first wide split
        self.thin_tail(DEFAULT_TUNING.thin_levels)

    @property
    def padded_buffer(self) -> npt.NDArray[np.uint8]:
        """``buffer`` followed by ``max_depth + 10`` zero bytes (built on first use), so
        that a window of that many bytes may start at any token byte."""
        padded = self._padded
        if padded is None:
            padded = np.concatenate(
                (self.buffer, np.zeros(self.max_depth + 10, dtype=np.uint8))
            )
            self._padded = padded
        return padded

    @property
    def level_bounds(self) -> list[list[int]]:
        bounds = self._level_bounds
        if bounds is None:
            firsts: npt.NDArray[np.uint8] = self.buffer[self.offsets[self.level_tok_lo]]
            edges = np.arange(257)
            starts = self.level_start
            bounds = [[0] * 257] + [
                (np.searchsorted(firsts[starts[d] : starts[d + 1]], edges) + starts[d]).tolist()
                for d in range(1, self.max_depth + 1)
            ]
            self._level_bounds = bounds
        return bounds

    def thin_tail(self, limit: int) -> ThinTail:
        """The nodes of depth ``>= D``, where ``D >= 2`` is the least depth from which
        every level holds at most ``limit`` nodes, in preorder (built on first use per
        ``limit``; the default ``Tuning.thin_levels``'s with the trie).  Depth 1 is
        never in the tail: a walk restricted to some first bytes skips the others there.
        """
        tail = self._thin.get(limit)
        if tail is not None:
            return tail
        starts = self.level_start
        top = self.max_depth
        total = len(self.byte)
        depth = top + 1
        # level d holds the numbers starts[d] + 1 .. starts[d + 1]
        while depth > 2 and starts[depth] - starts[depth - 1] <= limit:
            depth -= 1
        if depth > top:
            none = np.zeros(0, dtype=np.int64)
            tail = ThinTail(depth, total, total, none, [], [], [])
        else:
            first = starts[depth]
            base = starts[depth - 1] + 1
            sizes = [starts[d + 1] - starts[d] for d in range(depth, top + 1)]
            depths = np.repeat(np.arange(depth, top + 1, dtype=np.int64), sizes)
            lo = self.level_tok_lo[first:]
            # preorder: by the first token under a node, an ancestor before its nodes
            order = np.lexsort((depths, lo))
            rank = np.empty(len(order), dtype=np.int64)
            rank[order] = np.arange(len(order), dtype=np.int64)
            # where each parent is in the walk's list: above the tail, or in it
            parent = self.level_parent[first:]
            inside = parent > first
            in_tail = first + 1 - base + rank[np.where(inside, parent - first - 1, 0)]
            where = np.where(inside, in_tail, parent - base)
            # a node's subtree: the nodes after it whose first token is before its end
            ends = np.searchsorted(lo[order], self.level_tok_hi[first:][order], side="left")
            tail = ThinTail(
                depth,
                first,
                base,
                order + first + 1,
                where[order].tolist(),
                self.level_byte[first:][order].tolist(),
                ends.tolist(),
            )
        self._thin[limit] = tail
        return tail

    def first_byte_span(self, first: int, last: int) -> tuple[int, int]:
        """The sorted positions ``lo .. hi`` of the tokens whose first byte is in
        ``first .. last`` (``(0, 0)`` if none)."""
        level = self.level_bounds[1]
        lo, hi = level[first], level[last + 1]
        if lo >= hi:
            return 0, 0
        return int(self.level_tok_lo[lo]), int(self.level_tok_hi[hi - 1])

    @property
    def prefix_nodes(self) -> npt.NDArray[np.int32]:
        """Per byte of ``buffer``: the node number (level order, 0 = root) of the
        token's prefix *before* that byte, so the prefixes of sorted position ``p``
        of lengths ``k = 0 .. len - 1`` are ``prefix_nodes[offsets[p] + k]`` (built
        on first use: one climb of every token to the root, 4 bytes per token byte)."""
        nodes = self._prefix_nodes
        if nodes is None:
            nodes = np.zeros(len(self.buffer), dtype=np.int32)
            node = self.token_flat_end.copy()
            depth = self.offsets[1:] - self.offsets[:-1]
            start = self.offsets[:-1]
            while len(node):
                node = self.level_parent[node - 1]
                depth = depth - 1
                nodes[start + depth] = node
                more = depth > 0
                node, depth, start = node[more], depth[more], start[more]
            nodes.flags.writeable = False
            self._prefix_nodes = nodes
        return nodes

    def children(self, node: int) -> dict[int, int]:
        """``byte -> child node`` of ``node`` (built on first use from the sibling chain).

        Lets a walk from a state that accepts few bytes jump straight to the matching
        children instead of trying every child in turn.  Bounded by the trie's size.
        """
        got = self._children.get(node)
        if got is None:
            got = {}
            child = node + 1
            stop = self.end[node]
            byte = self.byte
            end = self.end
            while child < stop:
                got[byte[child]] = child
                child = end[child]
            self._children[node] = got
        return got

    def _lcp(self, lengths: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """Common prefix length of each sorted token with the one before it (0 for the first)."""
        n = len(self.sorted_bytes)
        lcp = np.zeros(n, dtype=np.int64)
        if n < 2:
            return lcp
        width = min(_LCP_WIDTH, self.max_depth)
        grid = np.full((n, width + 1), -1, dtype=np.int16)
        buffer = np.frombuffer(b"".join(self.sorted_bytes), dtype=np.uint8)
        offsets = np.concatenate(([0], np.cumsum(lengths)[:-1]))
        for j in range(width):
            rows = np.flatnonzero(lengths > j)
            grid[rows, j] = buffer[offsets[rows] + j]
        differ = grid[1:] != grid[:-1]
        differ[:, width] = True
        first = np.argmax(differ, axis=1)
        lcp[1:] = np.minimum(first, np.minimum(lengths[1:], lengths[:-1]))
        data = self.sorted_bytes
        for i in np.flatnonzero(lcp[1:] >= width).tolist():
            a, b = data[i], data[i + 1]
            k = width
            limit = min(len(a), len(b))
            while k < limit and a[k] == b[k]:
                k += 1
            lcp[i + 1] = k
        return lcp

    def __len__(self) -> int:
        return len(self.byte)
