"""The whole token trie through a byte automaton at once, one trie level at a time (numpy).

Used for *wide* contexts (free text, where most tokens are accepted), where a trie
walk in Python would visit most of the trie.  Each level of the trie (all nodes of
one depth) is one contiguous array, so a level costs a few numpy operations over its
nodes: a node's state is the table entry for (its parent's state, its byte).  The dense
``state x byte`` table is filled from the automaton's byte classes
(:meth:`ByteAutomaton.classes`), one step per class some trie node asks for, not one
Python step per (state, byte) pair the trie holds.  Whether a rejected token
is uncertain is part of the walk state, and the uncertain tokens' *handover pairs*
(where their tails start, see :mod:`._tails`) are found by climbing from their ends.
Work is proportional to the trie's nodes, not to the vocabulary's total bytes.
"""

from __future__ import annotations

from typing import Final

import numpy as np
import numpy.typing as npt

from gbnfkit.tokens._bytestate import ByteAutomaton, ByteState
from gbnfkit.tokens._trie import ThinTail, TokenTrie
from gbnfkit.tokens._tuning import DEFAULT_TUNING

__all__ = ["WideSplit", "byte_runs", "follow_only", "sorted_pairs", "vector_walk"]

Positions = npt.NDArray[np.int64]


class WideSplit:
    """What :func:`vector_walk` finds (sorted token positions).

    Attributes:
        accepted: tokens the root state accepts (found from ``flags`` when first
            read, if made without them).
        uncertain: tokens it rejects after some state on the path held the bottom marker.
        handover_positions, handover_offsets: every pair (uncertain token ``p``, offset
            ``k``) such that the state after the first ``k`` bytes of ``p`` holds the
            bottom marker (``0 <= k < len(p)``): the token's *tails* are its bytes from
            each such ``k`` on.  Sorted by position, then offset.  Empty when more than
            ``max_tail_tokens`` tokens are uncertain.
        flags: ``accepted`` as one flag per sorted position of the trie (``True`` at
            exactly those positions), when the walk had it at hand (``None`` if not):
            a split accepting most tokens is packed from the few it does not accept
            (``VocabularyIndex.pack_split``), and one pieced together from other walks
            (``CompiledGrammar._walk_by_first_byte``) need not list its positions.

    Read-only once made.  A plain class, not a dataclass: ``accepted`` is filled on
    first use.
    """

    __slots__ = ("_accepted", "uncertain", "handover_positions", "handover_offsets", "flags")

    def __init__(
        self,
        accepted: Positions | None,
        uncertain: Positions,
        handover_positions: Positions,
        handover_offsets: Positions,
        flags: npt.NDArray[np.bool_] | None = None,
    ) -> None:
        if accepted is None and flags is None:
            raise ValueError("a wide split needs its accepted positions or their flags")
        self._accepted = accepted
        self.uncertain = uncertain
        self.handover_positions = handover_positions
        self.handover_offsets = handover_offsets
        self.flags = flags

    @property
    def accepted(self) -> Positions:
        got = self._accepted
        if got is None:
            assert self.flags is not None
            got = self._accepted = np.flatnonzero(self.flags)
        return got


_DEAD: Final = 0  # rejected, no state on the path held the bottom marker
_UNSURE: Final = 1  # rejected after a state on the path held it: uncertain
_ROOT: Final = 2


class _Table:
    """The ``state x byte`` table of one walk, filled as the trie asks for entries.

    A walk state is a pair (byte state, whether a state on the path so far held the
    bottom marker), numbered as met; the two rejected ones are ``_DEAD`` and ``_UNSURE``,
    so where a token ends says at once whether it is accepted, rejected or uncertain.
    An entry not filled yet holds -1: a level whose lookups meet -1 fills the entries
    it met and looks up again.  Bytes of one class of a state (:meth:`ByteAutomaton.
    classes`) lead to the same state, so an entry costs one step for its whole class,
    and only the classes of bytes some trie node asks for are stepped: in a complex
    grammar a state has many classes (each letter of a keyword is one) and its nodes'
    children use few of them (``docs/masks.md``, "Computing a split").
    """

    def __init__(
        self,
        automaton: ByteAutomaton,
        root: ByteState,
        merge: dict[ByteState, ByteState] | None = None,
    ) -> None:
        self.automaton = automaton
        self.merge = merge
        self.states: list[tuple[ByteState, bool] | None] = [None, None, (root, root.bottom)]
        self.numbers: dict[tuple[ByteState, bool], int] = {(root, root.bottom): _ROOT}
        self.rows = np.full((16, 256), -1, dtype=np.int32)
        self.rows[_DEAD] = _DEAD
        self.rows[_UNSURE] = _UNSURE
        self.flat = self.rows.reshape(-1)
        self.stepped: dict[int, int] = {}  # walk state -> bytes of the classes stepped

    def fill(self, keys: list[int]) -> None:
        """Fill the entries ``keys`` (walk state ``k >> 8``, byte ``k & 255``), with
        the other bytes of their classes (the numpy work once for all their rows)."""
        automaton = self.automaton
        states = self.states
        stepped = self.stepped
        wanted: dict[int, int] = {}
        for k in keys:
            wanted[k >> 8] = wanted.get(k >> 8, 0) | 1 << (k & 255)
        fresh: list[int] = []  # rows met for the first time, their allowed bytes, rejected
        fresh_bits: list[int] = []
        fresh_rejected: list[int] = []
        chosen: list[int] = []  # classes stepped now, their rows and targets
        rows_of: list[int] = []
        targets: list[int] = []
        for number, bytes_ in wanted.items():
            entry = states[number]
            assert entry is not None
            state, seen = entry
            done = stepped.get(number)
            if done is None:
                done = 0
                fresh.append(number)
                fresh_bits.append(automaton.allowed_bits(state))
                fresh_rejected.append(_UNSURE if seen else _DEAD)
            for c in automaton.classes(state):
                if not c & bytes_ or c & done:
                    continue
                done |= c
                after = automaton.step(state, (c & -c).bit_length() - 1)
                assert after is not None  # some stack accepts every byte of a class
                chosen.append(c)
                rows_of.append(number)
                targets.append(self._number(after, seen))
            stepped[number] = done
        if len(states) > len(self.rows):
            grown = np.full((2 * len(states), 256), -1, dtype=np.int32)
            grown[: len(self.rows)] = self.rows
            self.rows = grown
            self.flat = grown.reshape(-1)
        if not fresh and not chosen:
            return
        # one unpacking for both: the fresh rows' allowed bytes, then the classes
        sets = _members(fresh_bits + chosen)
        count = len(fresh)
        if fresh:
            # the bytes no stack accepts are rejected, the others not filled yet
            rejected = np.array(fresh_rejected, dtype=np.int32)[:, None]
            self.rows[fresh] = np.where(sets[:count], np.int32(-1), rejected)
        if chosen:
            # each byte of a class (classes of one state are disjoint) gets its target
            which, byte = np.nonzero(sets[count:])
            at = np.array(rows_of, dtype=np.int64)[which]
            at <<= 8
            at |= byte
            self.flat[at] = np.array(targets, dtype=np.int32)[which]

    def entry(self, number: int, byte: int) -> int:
        """The walk state after ``byte`` from walk state ``number`` (not ``_DEAD`` nor
        ``_UNSURE``), numbering a new one, without the numpy rows: what :meth:`fill`
        would put there (a byte of a class leads where the class's first byte does)."""
        entry = self.states[number]
        assert entry is not None
        state, seen = entry
        if not self.automaton.allowed_bits(state) >> byte & 1:
            return _UNSURE if seen else _DEAD
        after = self.automaton.step(state, byte)
        assert after is not None
        return self._number(after, seen)

    def _number(self, after: ByteState, seen: bool) -> int:
        """The walk state of ``after`` (the state a byte leads to, mapped through
        ``merge``) when a state above held the bottom marker if ``seen``: numbered
        when first met."""
        if self.merge is not None:
            after = self.merge.get(after, after)
        key = (after, seen or after.bottom)
        got = self.numbers.get(key)
        if got is None:
            got = self.numbers[key] = len(self.states)
            self.states.append(key)
        return got


def _members(sets: list[int]) -> npt.NDArray[np.bool_]:
    """One row of 256 booleans per 256-bit set."""
    bits = np.frombuffer(b"".join(c.to_bytes(32, "little") for c in sets), dtype=np.uint8)
    unpacked = np.unpackbits(bits.reshape(len(sets), 32), axis=1, bitorder="little")
    return unpacked.view(np.bool_)  # zeros and ones: no copy


def _runs(trie: TokenTrie, bits: int) -> list[tuple[int, int]]:
    """The first bytes a walk must visit, as runs ``(first, last)`` of bytes: the bytes
    of ``bits`` and those without tokens, a gap between two runs kept in when it holds
    no more trie nodes than the smaller run (one slice per level costs less then)."""
    # a run starts at a byte of ``bits`` and goes on over the bytes of ``bits`` and
    # those without tokens after it
    runs: list[list[int]] = []
    for first, last in byte_runs(bits | trie.no_tokens):
        inner = bits & ((1 << (last + 1)) - (1 << first))
        if inner:
            runs.append([(inner & -inner).bit_length() - 1, last])
    below = trie.nodes_below

    def nodes(first: int, last: int) -> int:
        return below[last + 1] - below[first]

    merged = [runs[0]] if runs else []
    for run in runs[1:]:
        gap = nodes(merged[-1][1] + 1, run[0] - 1)
        if gap <= min(nodes(*merged[-1]), nodes(*run)):
            merged[-1][1] = run[1]
        else:
            merged.append(run)
    return [(first, last) for first, last in merged]


def byte_runs(bits: int) -> list[tuple[int, int]]:
    """The runs ``(first, last)`` of consecutive bytes of a 256-bit set (one step per
    run, not per byte)."""
    runs: list[tuple[int, int]] = []
    while bits > 0:
        first = (bits & -bits).bit_length() - 1
        shifted = bits >> first
        length = (shifted ^ (shifted + 1)).bit_length() - 1  # its trailing ones
        runs.append((first, first + length - 1))
        bits &= ~((1 << (first + length)) - 1)
    return runs


def vector_walk(
    trie: TokenTrie,
    automaton: ByteAutomaton,
    root: ByteState,
    max_tail_tokens: int,
    first_bytes: int = -1,
    level_gap: int = DEFAULT_TUNING.level_gap,
    thin_levels: int = DEFAULT_TUNING.thin_levels,
    merge: dict[ByteState, ByteState] | None = None,
) -> WideSplit:
    """The tokens ``root`` accepts, the uncertain ones, and their handover pairs.

    Same verdicts as :func:`gbnfkit.tokens._walk.walk`: a token is uncertain when it is
    rejected but some state before the rejecting byte held the bottom marker.  Only
    the subtrees of the first bytes ``root`` accepts are walked (unless ``root`` holds
    the bottom marker: every token is then accepted or uncertain); with
    ``first_bytes`` (a 256-bit set; only when ``root`` does not hold the bottom
    marker), only the tokens starting with one of those bytes, the others counted
    rejected.

    Below the first level, the ranges of two runs of first bytes are walked as one
    when at most ``level_gap`` nodes lie between them at that depth (one numpy call
    costs as much as a few thousand nodes): a node between them lies under a first
    byte not walked, so its parent's walk state is ``_DEAD`` (never set) and so is its
    own, which changes no verdict.

    ``merge`` maps states met to states with the same canonical form (the same
    verdict on every token of at most the longest token's length, so on every rest of
    a token below a node): the walk goes on from the latter, whose table rows it has
    already (a counted repetition's states; ``docs/masks.md``, "Slices", open states).

    The trie's deep levels from the first depth from which every level holds at most
    ``thin_levels`` nodes (:meth:`TokenTrie.thin_tail`) are walked node by node in one
    loop (:func:`_walk_tail`) instead of a few numpy calls per level.
    """
    table = _Table(automaton, root, merge)
    total = len(trie.level_byte)
    sid = np.zeros(total + 1, dtype=np.int32)  # per node number (0 = root): its walk state
    sid[0] = _ROOT
    parents = trie.level_parent
    level_bytes = trie.level_byte
    bounds = trie.level_bounds
    if not total:
        none = np.zeros(0, dtype=np.int64)
        return WideSplit(none, none, none, none)
    if root.bottom:
        assert first_bytes == -1
        runs = [(0, 255)]
    else:
        wanted = automaton.allowed_bits(root) & first_bytes
        runs = _runs(trie, wanted)
    tail = trie.thin_tail(thin_levels)
    for d in range(1, tail.depth):
        level = bounds[d]
        ranges: list[int] = []  # flat: lo, hi, lo, hi...
        for first, last in runs:
            lo, hi = level[first], level[last + 1]
            if lo == hi:
                continue
            if ranges and d > 1 and lo - ranges[-1] <= level_gap:
                ranges[-1] = hi  # the nodes between are dead: one call for both runs
            else:
                ranges.append(lo)
                ranges.append(hi)
        if not ranges:
            break  # no node at this depth under the bytes walked, none deeper
        # the nodes meeting entries not filled yet, and their keys
        later: list[tuple[Positions, npt.NDArray[np.int32]]] = []
        for i in range(0, len(ranges), 2):
            lo, hi = ranges[i], ranges[i + 1]
            # ``take`` with int64 indices, not fancy indexing: about 8% of a walk
            keys = sid.take(parents[lo:hi])
            keys <<= 8
            keys |= level_bytes[lo:hi]
            nxt = table.flat.take(keys)
            sid[lo + 1 : hi + 1] = nxt
            if nxt.min() < 0:
                at = np.flatnonzero(nxt < 0)
                later.append((at + (lo + 1), keys.take(at)))
        if later:
            # one fill for the level; the distinct keys, ascending (np.unique would
            # import numpy.ma, 6 ms, at the first wide split of a process); then only
            # the nodes that met an unfilled entry are looked up again
            unfilled = np.concatenate([k for _, k in later]) if len(later) > 1 else later[0][1]
            low = int(unfilled.min())
            table.fill((np.flatnonzero(np.bincount(unfilled - low)) + low).tolist())
            for at, keys in later:
                sid[at] = table.flat.take(keys)
    else:
        if tail.depth <= trie.max_depth:
            _walk_tail(tail, table, sid)
    if root.bottom:
        ends = sid.take(trie.token_flat_end)
        flags = ends > _UNSURE
        accepted = np.flatnonzero(flags)
        uncertain = np.flatnonzero(ends == _UNSURE)
    else:
        flags = np.zeros(len(trie.token_flat_end), dtype=np.bool_)
        # the tokens of the wanted bytes' subtrees (every other token is rejected, not
        # uncertain; a gap walked between two runs may hold bytes ``root`` accepts but
        # ``first_bytes`` leaves out)
        spans = [trie.first_byte_span(a, b) for a, b in byte_runs(wanted)]
        spans = [(a, b) for a, b in spans if a < b]
        if spans:
            # one slice from the first span to the last (ascending), the tokens
            # between two spans rejected: no array of positions to gather through
            low = spans[0][0]
            ends = sid.take(trie.token_flat_end[low : spans[-1][1]])
            if len(spans) > 1:
                between = np.ones(len(ends), dtype=np.bool_)
                for a, b in spans:
                    between[a - low : b - low] = False
                ends[between] = _DEAD
            hit = ends > _UNSURE
            flags[low : low + len(hit)] = hit
            accepted = np.flatnonzero(hit)
            accepted += low
            uncertain = np.flatnonzero(ends == _UNSURE)
            uncertain += low
        else:
            accepted = uncertain = np.zeros(0, dtype=np.int64)
    empty = accepted[:0]
    if not len(uncertain) or len(uncertain) > max_tail_tokens:
        return WideSplit(accepted, uncertain, empty, empty, flags)
    # the handover pairs: the prefixes (of lengths 0 .. len - 1) of each uncertain
    # token whose state holds the bottom marker, read from the trie's prefix nodes in
    # a few numpy calls whatever the tokens' lengths; already in (position, offset) order
    holds = np.array([e is not None and e[0].bottom for e in table.states], dtype=bool)
    begins = trie.offsets.take(uncertain)
    lengths = trie.offsets.take(uncertain + 1)
    lengths -= begins
    # every prefix's byte in the trie's buffer: the k-th prefix of the token whose
    # prefixes start at ``before`` in this list is at ``begins + k``
    before = np.cumsum(lengths)
    before -= lengths
    at = np.repeat(begins - before, lengths)
    at += np.arange(len(at), dtype=np.int64)
    hit = holds.take(sid.take(trie.prefix_nodes.take(at)))
    tokens = np.compress(hit, np.repeat(uncertain, lengths))
    offsets = np.compress(hit, at)
    offsets -= trie.offsets.take(tokens)
    return WideSplit(accepted, uncertain, tokens, offsets, flags)


def _walk_tail(tail: ThinTail, table: _Table, sid: npt.NDArray[np.int32]) -> None:
    """Set ``sid`` of the nodes of ``tail`` (the trie's deep thin levels) from their
    parents', in preorder in one Python loop: a live node's walk state is the table's
    entry for (its parent's walk state, its byte), as in the numpy pass per level.  The
    table's rows are read as Python lists, each when first met, and an entry not filled
    yet is filled then.  A node whose state is ``_DEAD`` or ``_UNSURE`` gives it to its
    whole subtree at once (the numpy pass gives it to each node, since those rows map
    every byte to themselves); a node under a first byte the walk skipped has a
    ``_DEAD`` parent (``sid`` starts at 0), as in the numpy pass."""
    # the walk states of the level above the tail, then of the tail's nodes in preorder
    states: list[int] = sid[tail.base : tail.first + 1].tolist()
    above = len(states)
    parents = tail.parents
    bytes_ = tail.bytes
    ends = tail.ends
    count = len(parents)
    states += [_DEAD] * count
    unread = [-1] * 256  # the row of every walk state whose row is not read yet
    rows = [unread] * len(table.states)
    # the tail's nodes given a state other than _DEAD are within first .. last (the
    # others keep sid's initial _DEAD)
    first = count
    last = -1
    i = 0
    while i < count:
        state = states[parents[i]]
        if state > _UNSURE:
            parent = state
            state = rows[parent][bytes_[i]]
            if state < 0:
                state = _tail_entry(table, rows, unread, parent, bytes_[i])
            if state > _UNSURE:
                states[above + i] = state
                if first > i:
                    first = i
                last = i
                i += 1
                continue
        # rejected: so is the whole subtree (left _DEAD, or set _UNSURE)
        end = ends[i]
        if state == _UNSURE:
            states[above + i : above + end] = [_UNSURE] * (end - i)
            if first > i:
                first = i
            last = end - 1
        i = end
    if first <= last:
        sid[tail.numbers[first : last + 1]] = states[above + first : above + last + 1]


def _tail_entry(
    table: _Table, rows: list[list[int]], unread: list[int], state: int, byte: int
) -> int:
    """The entry (``state``, ``byte``) for :func:`_walk_tail`: read from the table's row
    (the row read when first needed), else found by :meth:`_Table.entry` and kept in
    the row read (the numpy rows are not read after the tail, so not written)."""
    row = rows[state]
    if row is unread:
        read: list[int] = table.rows[state].tolist()
        row = rows[state] = read
        if row[byte] >= 0:
            return row[byte]
    got = row[byte] = table.entry(state, byte)
    # the walk states met first now have no row in the numpy table
    rows += [[-1] * 256 for _ in range(len(table.states) - len(rows))]
    return got


def sorted_pairs(positions: Positions, offsets: Positions) -> tuple[Positions, Positions]:
    """Distinct pairs (token position, offset in it) sorted by position, then offset:
    one plain sort of ``position << s | offset`` (a stable ``lexsort`` of two keys
    costs ten times more: 0.7 ms for a string body's 10k pairs)."""
    if not len(positions):
        return positions, offsets
    shift = int(offsets.max()).bit_length()
    keys = positions << shift
    keys |= offsets
    keys.sort()
    return keys >> shift, keys & ((1 << shift) - 1)


def follow_only(trie: TokenTrie, split: WideSplit, follow: int) -> WideSplit:
    """``split`` without the handover pairs whose tail starts with a byte outside
    ``follow`` (a 256-bit set), and without the uncertain tokens left with no pair
    (they are rejected then); the same split if no pair is left out.

    With ``follow`` the bytes that the frames below a context can ever accept first,
    no tail starting with another byte is accepted by them, so the tokens a group
    allows are unchanged (``docs/masks.md``, "Tails").
    """
    positions = split.handover_positions
    if not len(positions):
        return split
    # np.take and np.compress rather than indexing: 7.6 -> 6.6 ms for 30 MaskBench
    # schemas' 157 calls (1.5 million pairs) on Qwen
    at = np.take(trie.offsets, positions)
    at += split.handover_offsets
    table = np.unpackbits(
        np.frombuffer(follow.to_bytes(32, "little"), dtype=np.uint8), bitorder="little"
    ).view(np.bool_)
    keep = np.take(table, np.take(trie.buffer, at))
    if keep.all():
        return split
    kept = np.compress(keep, positions)
    # every pair's token is uncertain and pairs are sorted by position, so the tokens
    # left are the distinct kept positions (np.unique or np.isin would import numpy.ma,
    # 2-6 ms, at the first wide split of a process)
    first = np.empty(len(kept), dtype=np.bool_)
    first[:1] = True
    np.not_equal(kept[1:], kept[:-1], out=first[1:])
    return WideSplit(
        split._accepted, np.compress(first, kept), kept,  # (not listed if not yet)
        np.compress(keep, split.handover_offsets), split.flags,
    )
