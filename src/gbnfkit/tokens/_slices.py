"""Slices: the tokens wholly inside free text of a fixed character class, decided at once.

``docs/masks.md``, "Slices".  For a class ``K`` of code points (:data:`SLICE_CLASSES`,
a fixed list: the raw characters of a JSON string), a vocabulary's tokens split into
those *inside* ``K`` (their bytes are a prefix of the UTF-8 encoding of a string of
``K*``; they may end inside a character) and the *rest*.  Both are computed once per
vocabulary (:class:`Slice`, held by the vocabulary index, like the trie): the inside
tokens as a flag per sorted position, the rest as a small trie of their own.

At a wide split of a state ``S``, :func:`covered_bytes` finds the first bytes ``b``
under which every inside token is accepted: when the state after ``b`` equals the
state after ``b`` of a state ``S*`` that *loops on K* (stepping ``S*`` through the
UTF-8 bytes of any character of ``K`` is alive at every byte and ends in ``S*``
again), every inside token starting with ``b`` is accepted, without a walk.  Only the
rest trie is walked under those bytes (:func:`sliced_walk`).  Below the first byte the
same holds at any trie node between two characters whose state loops on ``K``: under a
first byte not covered, the inside tokens are walked node by node down to such nodes
(:func:`_inside_walk`).

A counted repetition (``K{0,n}``, a ``maxLength`` string) has a new state after each
character, so none loops; but while more characters are left than the longest token
has bytes, each character leads to a state with the same canonical form (the same
verdict on every token): such a state is *open on K* (:func:`opens_on`), which serves
wherever looping does, and the walks of the rest go on from ``S*`` in place of the
states found the same as it (``Covers.merged``), instead of stepping a new state per
trie level.  With fewer characters left the chain of its states is followed to its end
(:func:`counted_left`), and the inside tokens are decided by how many characters they
start (``Slice.chars``).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from gbnfkit.tokens._byteprogram import CALL, TEST
from gbnfkit.tokens._bytestate import BOTTOM, ByteAutomaton, ByteState, Stack
from gbnfkit.tokens._tails import SuffixRanks
from gbnfkit.tokens._trie import TokenTrie
from gbnfkit.tokens._utf8 import ByteSeq, utf8_sequences
from gbnfkit.tokens._vecwalk import WideSplit, byte_runs, sorted_pairs, vector_walk

__all__ = [
    "SLICE_CLASSES",
    "Counted",
    "Covers",
    "Items",
    "Slice",
    "Utf8Dfa",
    "counted_left",
    "covered_bytes",
    "loops_on",
    "opens_on",
    "proven_next",
    "sliced_walk",
]

Positions = npt.NDArray[np.int64]
# whether two states accept, reject and leave uncertain the same tokens of the
# vocabulary (equal canonical forms; ``docs/masks.md``, "Slices", open states)
Same = Callable[[ByteState, ByteState], bool]

# The classes slices are precomputed for (code point ranges, inclusive), part of every
# vocabulary index: the raw characters of a JSON string as the schema converter (any
# character but '"', '\\' and controls; llama.cpp's also without DEL) and the ``json``
# builtin write them.  One slice serves both: a state that loops on the wider class
# loops on this narrower one too.
SLICE_CLASSES: tuple[tuple[tuple[int, int], ...], ...] = (
    ((0x20, 0x21), (0x23, 0x5B), (0x5D, 0x7E), (0x80, 0x10FFFF)),
)

_DEAD: Final = 0
_BOUNDARY: Final = 1  # between two characters (the start state)


class Utf8Dfa:
    """The byte DFA of the UTF-8 encodings of ``K*`` (its states: between characters,
    or inside one; every state but the dead one can still complete a character).

    Attributes:
        table: ``uint8`` array ``state x byte -> state`` (0 dead, 1 between characters).
        rows: the same as lists (one per state).
        moves: per state, its transitions as ``(target, 256-bit set of bytes)`` pairs.
        first_row: per byte, the state after it from a character boundary.
        first: the bytes a character of ``K`` may start with.
        single: the bytes that are a whole character of ``K``.
        sequences: the byte-range sequences of ``K``'s characters
            (:func:`~gbnfkit.tokens._utf8.utf8_sequences` of each range, in order).
    """

    def __init__(self, ranges: tuple[tuple[int, int], ...]) -> None:
        sequences = [seq for lo, hi in ranges for seq in utf8_sequences(lo, hi)]
        self.sequences: tuple[ByteSeq, ...] = tuple(sequences)
        # a state is the set of (sequence, bytes of it matched so far), 0 < matched
        numbers: dict[frozenset[tuple[int, int]], int] = {frozenset(): _BOUNDARY}
        todo = [frozenset[tuple[int, int]]()]
        rows: list[list[int]] = [[_DEAD] * 256, []]
        while todo:
            here = todo.pop()
            row = [_DEAD] * 256
            for byte in range(256):
                nxt: set[tuple[int, int]] = set()
                done = False
                for i, k in here or [(i, 0) for i in range(len(sequences))]:
                    lo, hi = sequences[i][k]
                    if lo <= byte <= hi:
                        if k + 1 == len(sequences[i]):
                            done = True
                        else:
                            nxt.add((i, k + 1))
                if done:
                    assert not nxt  # UTF-8: a character's length is fixed by its first byte
                    row[byte] = _BOUNDARY
                elif nxt:
                    key = frozenset(nxt)
                    got = numbers.get(key)
                    if got is None:
                        got = numbers[key] = len(rows)
                        rows.append([])
                        todo.append(key)
                    row[byte] = got
            rows[numbers[here]] = row
        self.table: npt.NDArray[np.uint8] = np.array(rows, dtype=np.uint8)
        self.moves: list[tuple[tuple[int, int], ...]] = []
        for row in rows:
            targets: dict[int, int] = {}
            for byte, target in enumerate(row):
                if target != _DEAD:
                    targets[target] = targets.get(target, 0) | 1 << byte
            self.moves.append(tuple(targets.items()))
        self.rows: list[list[int]] = rows
        self.first_row: list[int] = rows[_BOUNDARY]
        self.first = sum(1 << b for b in range(256) if rows[_BOUNDARY][b] != _DEAD)
        self.single = sum(1 << b for b in range(256) if rows[_BOUNDARY][b] == _BOUNDARY)


@dataclass(frozen=True)
class Slice:
    """One class's split of a vocabulary (see the module docstring).

    Attributes:
        dfa: the class's UTF-8 byte DFA.
        inside: per sorted position of the full trie, whether the token is inside.
        rest: the trie of the other tokens; its ``sorted_ids`` are their sorted
            positions in the full trie (ascending).
        suffixes: every suffix of the rest tokens, ranked in byte order (a string
            body's uncertain tokens hold a quote, so they are rest tokens: their
            tails are grouped from these ranks, ``docs/masks.md``, "Tails").
        rest_positions: ``rest.sorted_ids`` as a list (the sorted positions of the
            rest tokens in the full trie, ascending), for narrow walks
            (:func:`~gbnfkit.tokens._walk.walk_runs`).
        chars: per sorted position of the full trie, how many characters a token
            starts (its bytes that are no UTF-8 continuation byte), for counted
            repetitions with few characters left (:func:`counted_left`).
        starts_at, starts: the offsets where a token's second, third...
            characters start, ``starts[starts_at[p] : starts_at[p + 1]]`` for the
            token at sorted position ``p`` (its handover offsets there).
    """

    dfa: Utf8Dfa
    inside: npt.NDArray[np.bool_]
    rest: TokenTrie
    suffixes: SuffixRanks
    rest_positions: list[int]
    chars: npt.NDArray[np.int32]
    starts_at: npt.NDArray[np.int32]
    starts: npt.NDArray[np.int32]

    @staticmethod
    def build(trie: TokenTrie, ranges: tuple[tuple[int, int], ...]) -> Slice:
        """The slice of ``ranges`` over ``trie`` (one numpy pass over its levels)."""
        dfa = Utf8Dfa(ranges)
        table = dfa.table.reshape(-1).astype(np.int32)
        total = len(trie.level_byte)
        state = np.zeros(total + 1, dtype=np.int32)
        state[0] = _BOUNDARY
        starts = trie.level_start
        for d in range(1, trie.max_depth + 1):
            lo, hi = starts[d], starts[d + 1]
            keys = state[trie.level_parent[lo:hi]] << 8
            keys |= trie.level_byte[lo:hi]
            state[lo + 1 : hi + 1] = table.take(keys)
        inside = state[trie.token_flat_end] != _DEAD
        inside.flags.writeable = False
        chars, begins_at, begins = _character_starts(trie.sorted_bytes)
        others = np.flatnonzero(~inside).tolist()
        data = trie.sorted_bytes
        rest = TokenTrie([(p, data[p]) for p in others])
        suffixes = SuffixRanks.build(trie, others)
        return Slice(dfa, inside, rest, suffixes, others, chars, begins_at, begins)


def _character_starts(
    data: list[bytes],
) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int32], npt.NDArray[np.int32]]:
    """Per token (of ``data``, valid UTF-8 up to a cut last character for the inside
    ones): how many characters it starts, and the offsets where its second, third...
    characters start (``starts[starts_at[p] : starts_at[p + 1]]``, ascending): the
    bytes that are not UTF-8 continuation bytes, past the first."""
    lengths = np.array([len(t) for t in data], dtype=np.int64)
    ends = np.cumsum(lengths)
    flat = np.frombuffer(b"".join(data), dtype=np.uint8)
    offsets = np.arange(len(flat), dtype=np.int64) - np.repeat(ends - lengths, lengths)
    lead = ((flat & 0xC0) != 0x80) & (offsets > 0)
    owner = np.repeat(np.arange(len(data), dtype=np.int64), lengths)
    per = np.bincount(owner[lead], minlength=len(data))
    starts_at = np.zeros(len(data) + 1, dtype=np.int32)
    np.cumsum(per, out=starts_at[1:])
    chars = (per + (lengths > 0)).astype(np.int32)
    starts = offsets[lead].astype(np.int32)
    for array in (chars, starts_at, starts):
        array.flags.writeable = False
    return chars, starts_at, starts


def loops_on(automaton: ByteAutomaton, state: ByteState, dfa: Utf8Dfa, limit: int) -> bool:
    """Whether ``state`` loops on the class of ``dfa``: from ``state``, the UTF-8
    bytes of any character of the class are accepted one by one (the state is alive
    after each) and lead back to ``state`` itself."""
    return _completes(automaton, _BOUNDARY, state, state, dfa, limit)


def opens_on(
    automaton: ByteAutomaton,
    state: ByteState,
    dfa: Utf8Dfa,
    limit: int,
    same: Same,
    merged: dict[ByteState, ByteState] | None = None,
    deeper: Callable[[ByteState], bool] | None = None,
) -> bool:
    """Whether ``state`` is *open* on the class of ``dfa``: from ``state``, the UTF-8
    bytes of any character of the class are accepted one by one and lead to
    ``state`` or to a state ``same`` as it (equal canonical forms: the same verdict on
    every token of the vocabulary).  A state that loops is open; so is a counted
    repetition ``x{0,n}`` with more characters left than the longest token has bytes
    (``docs/masks.md``, "Slices"): every token inside the class is accepted from it.
    The states found the same as ``state`` are noted in ``merged`` (``-> state``).
    Given ``deeper``, the characters may also lead to one other state, open itself
    (``deeper`` says whether it is): a chain of states, as the fixed copies of
    ``x{m,n}`` before the optional ones."""
    return _completes(automaton, _BOUNDARY, state, state, dfa, limit, same, merged, deeper)


def _completes(
    automaton: ByteAutomaton,
    q: int,
    start: ByteState,
    home: ByteState,
    dfa: Utf8Dfa,
    limit: int,
    same: Same | None = None,
    merged: dict[ByteState, ByteState] | None = None,
    deeper: Callable[[ByteState], bool] | None = None,
) -> bool:
    """Whether, from the automaton state ``start`` in the DFA state ``q``, every byte
    string that takes the DFA from ``q`` to its next character boundary is accepted
    byte by byte and ends in ``home`` (or, given ``same``, in a state ``same`` as
    ``home``: noted in ``merged``, as ``state -> home``; or, given ``deeper``, in one
    other state, for which ``deeper`` must hold).

    ``False`` as soon as a byte the DFA allows is rejected, a character ends elsewhere,
    or more than ``limit`` pairs are met (:func:`_explore`).
    """
    ends = _Ends(home, same, merged, deeper is not None)
    if not _explore(automaton, q, start, dfa, limit, ends, True):
        return False
    return ends.other is None or (deeper is not None and deeper(ends.other))


class _Ends:
    """Whether a character explored by :func:`_explore` ends well: in ``home``, or in
    a state ``same`` as it (noted in ``merged``, as ``state -> home``), or, with
    ``one_other``, in one other state (``other``, the first met)."""

    __slots__ = ("home", "merged", "one_other", "other", "same")

    def __init__(
        self,
        home: ByteState | None,
        same: Same | None,
        merged: dict[ByteState, ByteState] | None,
        one_other: bool,
    ) -> None:
        self.home = home
        self.same = same
        self.merged = merged
        self.one_other = one_other
        self.other: ByteState | None = None  # the one other state characters end in

    def ends_well(self, after: ByteState) -> bool:
        home = self.home
        if after is home:
            return True
        same = self.same
        if same is not None and home is not None and same(after, home):
            merged = self.merged
            if merged is not None:
                merged[after] = home
            return True
        if self.one_other and (self.other is None or after is self.other):
            self.other = after
            return True
        return False


def _explore(
    automaton: ByteAutomaton,
    q: int,
    start: ByteState,
    dfa: Utf8Dfa,
    limit: int,
    at_end: _Ends,
    bottom_within: bool,
) -> bool:
    """Step every byte string that takes the DFA from ``q`` to its next character
    boundary from the automaton state ``start``, calling ``at_end.ends_well`` with the
    state each character ends in; ``False`` as soon as it says no, a byte the DFA
    allows is rejected, a state within a character holds the bottom marker (unless
    ``bottom_within``), or more than ``limit`` pairs are met.

    Explores the pairs (DFA state, automaton state) reachable from ``(q, start)``, one
    automaton step per byte class of the automaton state met in each DFA transition.
    """
    seen = {(q, start)}
    todo = [(q, start)]
    moves = dfa.moves
    while todo:
        q, here = todo.pop()
        allowed = automaton.allowed_bits(here)
        classes = automaton.classes(here)
        for target, bits in moves[q]:
            if bits & ~allowed:
                return False
            for c in classes:
                part = c & bits
                if not part:
                    continue
                after = automaton.step(here, (part & -part).bit_length() - 1)
                assert after is not None  # the byte is allowed
                if target == _BOUNDARY:
                    if not at_end.ends_well(after):
                        return False
                    continue
                if after.bottom and not bottom_within:
                    return False
                pair = (target, after)
                if pair not in seen:
                    if len(seen) >= limit:
                        return False
                    seen.add(pair)
                    todo.append(pair)
    return True


def _single_next(
    automaton: ByteAutomaton, start: ByteState, dfa: Utf8Dfa, limit: int
) -> ByteState | None:
    """The one state every character of the class leads ``start`` to, each byte of it
    accepted, through states within a character that do not hold the bottom marker
    (``None`` if some byte the DFA allows is rejected, a state within a character
    holds the marker, characters end in two states, or more than ``limit`` pairs (DFA
    state, automaton state) are met)."""
    ends = _Ends(None, None, None, True)
    if not _explore(automaton, _BOUNDARY, start, dfa, limit, ends, False):
        return None
    return ends.other


# per rule: the stacks a call of it leaves above the caller's frame when every character
# of a slice's class is exactly one whole string of the rule (:func:`item_suffixes`),
# else ``None`` (one entry per rule the chains met: bounded by the program)
Items = dict[int, frozenset[Stack] | None]


def item_suffixes(
    automaton: ByteAutomaton, rule: int, dfa: Utf8Dfa, limit: int, items: Items
) -> frozenset[Stack] | None:
    """The stacks ``U`` that a call of ``rule`` leaves above the caller's frame (the
    closure of its alternatives), when from them the UTF-8 bytes of every character of
    the class are accepted one by one, the rule is not finished within a character and
    is finished, with nothing else left, after it: the state ``T`` of the stacks
    ``(BOTTOM,) + u`` goes by every character to the state of ``(BOTTOM,)`` alone
    (:func:`_single_next`).  ``None`` otherwise (kept in ``items``: decided once per
    rule).  Stepping is done stack by stack and a stack's frames below its top are
    only read when it returns to them, so for any frames ``F`` (whose top is the
    position after a call of ``rule``) the stacks ``F + u`` step as ``T``'s, with
    ``F`` in place of the marker: every character leads them to the closure of ``F``
    (:func:`proven_next`)."""
    if rule in items:
        return items[rule]
    got: frozenset[Stack] | None = None
    first = 0
    finishes = False
    for start in automaton.program.rules[rule]:
        bits, pops = automaton.first_of(start)
        first |= bits
        finishes = finishes or pops
    # most rules met are no such item: told from their first bytes, no state made
    if not finishes and not dfa.first & ~first:
        start_state = automaton.state_of([(BOTTOM, rule)], call=True)
        end = _single_next(automaton, start_state, dfa, limit)
        if end is not None and end.stacks == ((BOTTOM,),):
            got = frozenset(s[1:] for s in start_state.stacks)
    items[rule] = got
    return got


def proven_next(
    automaton: ByteAutomaton, state: ByteState, dfa: Utf8Dfa, limit: int, items: Items
) -> ByteState | None:
    """:func:`_single_next` of ``state`` read from its stacks, without stepping: when
    they are groups ``F + u`` (``u`` every stack of ``item_suffixes(I)``, ``F``'s top
    the position after a call of ``I``: a count's frame in a row of calls of ``I`` or
    a chain of links) and others whose top accepts no byte that starts a character
    (a closing quote, the marker: dead after a character's first byte), every
    character leads ``state`` to the closure of the groups' ``F`` alone, through
    states within a character that are the groups' (``T``'s with ``F`` for the marker:
    none holds it, every byte the class allows is accepted).  ``None`` when the
    stacks are not of that form (then :func:`_single_next` explores)."""
    program = automaton.program
    kind = program.kind
    arg = program.arg
    first = dfa.first
    stacks = state.stacks
    whole = frozenset(stacks)
    left = set(whole)  # the stacks in no group found yet
    frames: list[Stack] = []
    for s in stacks:
        if s not in left or not s:
            continue  # in a group found, or the complete parse
        top = s[-1]
        if top < 0:
            continue  # the marker
        if kind[top] != TEST:
            return None  # (a closed state's tops are tests)
        if not arg[top] & first:
            continue  # dead at a character's first byte
        found = False
        for j in range(len(s) - 2, -1, -1):
            f = s[j]
            if f < 1 or kind[f - 1] != CALL:
                continue
            suffixes = item_suffixes(automaton, arg[f - 1], dfa, limit, items)
            if suffixes is None or s[j + 1 :] not in suffixes:
                continue
            frame = s[: j + 1]
            group = [frame + u for u in suffixes]
            if all(g in whole for g in group):
                left.difference_update(group)
                frames.append(frame)
                found = True
                break
        if not found:
            return None
    if not frames:
        return None
    return automaton.state_of(frames)


# per state: what :func:`counted_left` found (characters left, and whether the state
# after each number of characters holds the bottom marker)
Counted = tuple[int, tuple[bool, ...]]


def counted_left(
    automaton: ByteAutomaton,
    state: ByteState,
    dfa: Utf8Dfa,
    limit: int,
    reach: int,
    counts: dict[ByteState, Counted],
    links: dict[ByteState, ByteState | None] | None = None,
    items: Items | None = None,
) -> Counted:
    """How many characters of the class ``state`` has left, as a counted repetition
    with few left (``x{0,k}``; ``docs/masks.md``, "Slices", "Counted repetitions: few
    characters left"): ``(k, holds)`` when ``state = S_k`` in a chain ``S_k, ...,
    S_0`` where every character leads ``S_i`` to ``S_(i-1)`` alone through states that
    do not hold the bottom marker (:func:`_single_next`) and ``S_0`` accepts no byte
    that starts a character; ``holds[c]`` says whether ``S_(k-c)`` holds the marker.
    Then an inside token starting at most ``k`` characters is accepted from ``state``;
    one starting more is rejected, uncertain if some ``holds[c]`` is true, with the
    offsets where its ``(c+1)``-th character starts as its handover offsets.  A chain
    followed for more than ``reach`` states (the most characters a token starts)
    gives ``(reach + 1, ())``: every inside token is accepted.  ``(-1, ())`` when
    there is no such chain.  Results are kept in ``counts``, and each state's
    :func:`_single_next` in ``links`` when given (a chain longer than ``reach`` is
    followed again from a later count: each state of it is explored once); given
    ``items``, a state whose next one :func:`proven_next` reads from its stacks is not
    explored."""
    got = counts.get(state)
    if got is not None:
        return got
    chain: list[ByteState] = []  # S_k, S_(k-1)... not known yet
    here = state
    tail: Counted
    while True:
        known = counts.get(here)
        if known is not None:
            tail = known  # what the state after the chain has left
            break
        if not automaton.allowed_bits(here) & dfa.first:
            tail = counts[here] = (0, (here.bottom,))  # S_0
            break
        if len(chain) > reach:
            # more characters left than any token starts: the states down the chain
            # are not known, so only ``state``'s lower bound is kept
            got = counts[state] = (reach + 1, ())
            return got
        chain.append(here)
        if links is None:
            after = _single_next(automaton, here, dfa, limit)
        elif here in links:
            after = links[here]
        else:
            after = proven_next(automaton, here, dfa, limit, items) if items is not None else None
            if after is None:
                after = _single_next(automaton, here, dfa, limit)
            links[here] = after
        if after is None:
            tail = (-1, ())
            break
        here = after
    for member in reversed(chain):
        if 0 <= tail[0] < reach:
            tail = (tail[0] + 1, (member.bottom, *tail[1]))
        elif tail[0] >= reach:
            tail = (reach + 1, ())
        counts[member] = tail
    return counts[state]


def _most_single(automaton: ByteAutomaton, root: ByteState, dfa: Utf8Dfa) -> ByteState | None:
    """The state most of ``root``'s single-byte characters of the class lead to
    (``None`` if it accepts none)."""
    single = dfa.single & automaton.allowed_bits(root)
    best: ByteState | None = None
    most = 0
    for c in automaton.classes(root):
        part = c & single
        if part.bit_count() > most:
            most = part.bit_count()
            best = automaton.step(root, (part & -part).bit_length() - 1)
    return best


def covered_bytes(
    automaton: ByteAutomaton,
    root: ByteState,
    dfa: Utf8Dfa,
    loops: dict[ByteState, bool],
    limit: int,
    opens: dict[ByteState, bool] | None = None,
    same: Same | None = None,
    merged: dict[ByteState, ByteState] | None = None,
    deeper: Callable[[ByteState], bool] | None = None,
    wanted: int = -1,
    chained: Callable[[ByteState, bool], bool] | None = None,
) -> int:
    """The first bytes ``b`` under which every token inside the class of ``dfa`` is
    accepted from ``root``, among ``wanted`` (the others are not looked at: a first
    byte's exploration steps the states within its character).

    ``S*`` is the state most of ``root``'s single-byte characters of the class lead
    to; it must loop on the class (:func:`loops_on`, cached in ``loops``) or, given
    ``same``, be open on it (:func:`opens_on`, cached in ``opens``).  A byte ``b``
    that is a whole character is covered when it leads to ``S*`` (or a state ``same``
    as it); the first byte of a longer character when every way of completing that
    character from the state after ``b`` is accepted and ends there too.  Every inside
    token under a covered byte is then a path through states that are all alive.  The
    states found the same as another are noted in ``merged``, and ``deeper`` lets
    characters lead to another open state (see :func:`opens_on`).  Given ``chained``
    (``Covers.chained``), ``S*`` is also open when it heads a chain of states longer
    than any token has characters (asked first with ``True``: along a chain already
    followed only, then, if no form shows it open, followed).
    """
    if not wanted & dfa.first:
        return 0
    best = _most_single(automaton, root, dfa)
    if best is None:
        return 0
    looping = loops.get(best)
    if looping is None:
        looping = loops[best] = loops_on(automaton, best, dfa, limit)
    if not looping and same is not None and opens is not None:
        looping = opens.get(best)
        if looping is None:
            looping = opens[best] = _opens(
                automaton, best, dfa, limit, same, merged, deeper, chained
            )
    if not looping:
        return 0
    classes = automaton.classes(root)
    covered = 0
    first_row = dfa.first_row
    for c in classes:
        part = c & dfa.first & wanted
        if not part:
            continue
        after = automaton.step(root, (part & -part).bit_length() - 1)
        assert after is not None
        verdicts: dict[int, bool] = {}  # DFA state after the byte -> covered
        while part:
            low = part & -part
            part ^= low
            q = first_row[low.bit_length() - 1]
            ok = verdicts.get(q)
            if ok is None:
                if q == _BOUNDARY:
                    ok = after is best or (same is not None and same(after, best))
                    if ok and after is not best and merged is not None:
                        merged[after] = best
                else:
                    ok = _completes(automaton, q, after, best, dfa, limit, same, merged, deeper)
                verdicts[q] = ok
            if ok:
                covered |= low
    return covered


def _opens(
    automaton: ByteAutomaton,
    state: ByteState,
    dfa: Utf8Dfa,
    limit: int,
    same: Same,
    merged: dict[ByteState, ByteState] | None,
    deeper: Callable[[ByteState], bool] | None,
    chained: Callable[[ByteState, bool], bool] | None,
) -> bool:
    """:func:`opens_on`, or (given ``chained``) the head of a long chain: first along
    a chain already followed (a few lookups), then by forms, then by following it."""
    if chained is not None and chained(state, True):
        return True
    if opens_on(automaton, state, dfa, limit, same, merged, deeper):
        return True
    return chained is not None and chained(state, False)


class Covers:
    """:func:`covered_bytes` of the states one wide split meets, each computed once
    (whether a state loops is kept in ``loops``, shared between splits, and given
    ``same`` whether it is open in ``opens`` and the states found the same as another
    in ``merged``, which the walks below use; all are computed under ``lock``, since
    they step the automaton)."""

    def __init__(
        self,
        automaton: ByteAutomaton,
        dfa: Utf8Dfa,
        loops: dict[ByteState, bool],
        limit: int,
        lock: AbstractContextManager[Any],
        opens: dict[ByteState, bool] | None = None,
        same: Same | None = None,
        merged: dict[ByteState, ByteState] | None = None,
        chain: int = 0,
        counts: dict[ByteState, Counted] | None = None,
        reach: int = 0,
        links: dict[ByteState, ByteState | None] | None = None,
        chain_opens: bool = False,
        items: Items | None = None,
    ) -> None:
        self.automaton = automaton
        self.dfa = dfa
        self.loops = loops
        self.limit = limit
        self.lock = lock
        self.opens = opens
        self.same = same
        self.merged = merged
        self.chain = chain  # how far down a chain of states open_at looks
        self.counts = counts  # per state, :func:`counted_left` (given: counted strings)
        self.reach = reach  # the longest chain of a counted repetition followed
        self.links = links  # per state, :func:`_single_next` (the chains followed)
        # whether a chain longer than ``reach`` proves its head open (``reach`` at least
        # the most characters a token starts: ``chained``)
        self.chain_opens = chain_opens and links is not None
        # per rule: whether every character is one whole string of it (item_suffixes;
        # given: the links of a chain are read from its states' stacks where they can be)
        self.items = items
        self.found: dict[ByteState, int] = {}
        self.stepped = 0  # first bytes a sliced walk walked node by node (read by tests)

    def __call__(self, state: ByteState) -> int:
        got = self.found.get(state)
        if got is None:
            got = self.found[state] = self._explore(state, -1)
        return got

    def covered(self, state: ByteState, wanted: int) -> int:
        """``self(state) & wanted``, exploring only the first bytes in ``wanted``
        (not kept when ``wanted`` leaves some out)."""
        got = self.found.get(state)
        if got is not None:
            return got & wanted
        if wanted == -1:
            return self(state)
        return self._explore(state, wanted)

    def _explore(self, state: ByteState, wanted: int) -> int:
        with self.lock:
            return covered_bytes(
                self.automaton,
                state,
                self.dfa,
                self.loops,
                self.limit,
                self.opens,
                self.same,
                self.merged,
                self._deeper(self.chain),
                wanted,
                self.chained if self.chain_opens else None,
            )

    def count_at(self, state: ByteState) -> Counted:
        """:func:`counted_left` of ``state`` (kept in ``counts``; ``(-1, ())``
        without, or with ``reach`` 0)."""
        if self.counts is None or self.reach <= 0:
            return (-1, ())
        with self.lock:
            return counted_left(
                self.automaton,
                state,
                self.dfa,
                self.limit,
                self.reach,
                self.counts,
                self.links,
                self.items,
            )

    def chained(self, state: ByteState, known: bool) -> bool:
        """Whether ``state`` heads a chain of more than ``reach`` states, each leading
        to the next by every character of the class (:func:`counted_left` gives
        ``reach + 1``): with ``reach`` at least the most characters a token starts,
        every inside token is a path down the chain, all alive, so it is accepted (an
        open state found without forms: the fixed copies of ``x{m,n}`` before its
        optional ones, a count's block row before the next block).  ``known``: only
        when ``state``'s own step down the chain is known already (``links``), so a
        later count of a chain followed costs lookups, not forms, and a chain whose
        links :func:`proven_next` reads from the stacks (``items`` given) costs a
        closure per state, not an exploration: both are asked before the forms."""
        if not self.chain_opens:
            return False
        assert self.links is not None
        if known and state not in self.links and not self._proven_chain(state):
            return False
        return self.count_at(state)[0] > self.reach

    def _proven_chain(self, state: ByteState) -> bool:
        """Whether the chain down from ``state`` is known (``links``, ``counts``) or
        read from its stacks (:func:`proven_next`, noted in ``links``) for more than
        ``reach`` states, or to its end: then :func:`counted_left` of ``state``
        explores no state."""
        items = self.items
        links = self.links
        counts = self.counts
        if items is None or links is None or counts is None:
            return False
        automaton = self.automaton
        dfa = self.dfa
        first = dfa.first
        here: ByteState | None = state
        with self.lock:
            for _ in range(self.reach + 1):
                if here is None or here in counts:
                    return True
                if not automaton.allowed_bits(here) & first:
                    return True  # S_0
                if here in links:
                    here = links[here]
                    continue
                after = proven_next(automaton, here, dfa, self.limit, items)
                if after is None:
                    return False
                links[here] = after
                here = after
        return True

    def few_left(self, state: ByteState) -> bool:
        """Whether ``state`` is a counted repetition with at most ``reach`` (given to
        the constructor) characters left (:func:`counted_left`, kept in ``counts``),
        followed only when stepping it by one single-byte character of the class
        again and again leads, within ``reach`` steps and through states that accept
        every byte that starts a character, to a state that accepts none (a chain
        costs about a trie level's stepping per state; the forms :func:`opens_on`
        compares cost more than following a short one)."""
        if self.counts is None or self.reach <= 0:
            return False
        reach = self.reach
        got = self.counts.get(state)
        if got is None:
            automaton = self.automaton
            single = self.dfa.single
            first = self.dfa.first
            here: ByteState | None = state
            with self.lock:
                for _ in range(reach + 1):
                    assert here is not None
                    if here in self.counts:
                        break  # down a chain already followed: counted_left reads it
                    allowed = automaton.allowed_bits(here) & first
                    if not allowed:
                        break  # S_0
                    if allowed != first:
                        return False  # a chain's state accepts every character
                    bits = allowed & single
                    after = automaton.step(here, (bits & -bits).bit_length() - 1)
                    if after is here:
                        return False  # loops
                    here = after
                else:
                    return False  # more characters left than any token starts
            got = self.count_at(state)
        return 0 <= got[0] <= reach

    def loops_next(self, state: ByteState) -> bool:
        """Whether the state most of ``state``'s single-byte characters of the class
        lead to is open on the class (a node in that state is worth walking node by
        node: most of its children are covered)."""
        with self.lock:
            best = _most_single(self.automaton, state, self.dfa)
        return best is not None and self.open_at(best)

    def loops_at(self, state: ByteState) -> bool:
        """:func:`loops_on` of ``state`` (kept in ``loops``)."""
        got = self.loops.get(state)
        if got is None:
            with self.lock:
                got = self.loops[state] = loops_on(self.automaton, state, self.dfa, self.limit)
        return got

    def open_at(self, state: ByteState, chain: int = -1) -> bool:
        """Whether ``state`` loops on the class or, given ``same``, is open on it
        (:func:`opens_on`, kept in ``opens``), looking at most ``chain`` states down a
        chain (default ``self.chain``; a state found not open with a shorter chain
        stays so: only a slice missed)."""
        if self.loops_at(state):
            return True
        opens = self.opens
        if opens is None or self.same is None:
            return False
        got = opens.get(state)
        if got is None:
            deeper = self._deeper(self.chain if chain < 0 else chain)
            chained = self.chained if self.chain_opens else None
            with self.lock:
                got = opens[state] = _opens(
                    self.automaton, state, self.dfa, self.limit, self.same, self.merged, deeper,
                    chained,
                )
        return got

    def _deeper(self, chain: int) -> Callable[[ByteState], bool] | None:
        """Whether the next state down a chain is open (``None`` at its end)."""
        if chain <= 0 or self.same is None:
            return None
        return lambda state: self.open_at(state, chain - 1)


class _Inside:
    """What :func:`_inside_walk` finds: ranges of sorted positions ``(lo, hi)`` whose
    inside tokens are accepted (under a covered byte of a node), whose tokens are
    accepted (they end at a node walked: all inside), and whose inside tokens are
    uncertain, with the offsets where the walk's state held the bottom marker.  (A
    plain class: a dataclass's ``__init__`` runs interpreted even compiled.)"""

    __slots__ = ("covered", "ended", "unsure")

    def __init__(self) -> None:
        self.covered: list[tuple[int, int]] = []
        self.ended: list[tuple[int, int]] = []
        self.unsure: list[tuple[int, int, tuple[int, ...]]] = []


def _inside_walk(
    trie: TokenTrie,
    dfa: Utf8Dfa,
    automaton: ByteAutomaton,
    root: ByteState,
    first: int,
    covers: Covers,
    budget: int,
    out: _Inside,
) -> int:
    """The verdicts on the inside tokens starting with ``first`` (a byte ``root``
    accepts that starts a character of the class), walking the trie node by node: a
    node between two characters whose state loops on the class or is open on it
    (``covers.open_at``) has every inside token under it accepted, unwalked (each is a
    path of the DFA from a character boundary, so the state stays alive: the invariant
    of :func:`covered_bytes` with ``S*`` that state); children whose byte leaves the
    class hold rest tokens only, and are not walked.  Returns the budget left (trie
    children examined), or -1 as soon as it is spent (``out`` is then partly filled)."""
    rows = dfa.rows
    here_lo = trie.here_lo
    here_hi = trie.here_hi
    tok_lo = trie.tok_lo
    tok_hi = trie.tok_hi
    depth = trie.depth
    after = automaton.step(root, first)
    assert after is not None  # ``root`` accepts ``first``
    # (node, its state, the DFA state, the offsets where the path's states held the
    # bottom marker: the root's does not)
    start: tuple[int, ...] = (1,) if after.bottom else ()
    todo = [(trie.root_child[first], after, rows[_BOUNDARY][first], start)]
    while todo:
        node, here, q, hold = todo.pop()
        if here_hi[node] > here_lo[node]:
            out.ended.append((here_lo[node], here_hi[node]))
        kids = trie.children(node)
        budget -= len(kids)
        if budget < 0:
            return -1
        row = rows[q]
        below = depth[node] + 1
        for byte, child in kids.items():
            q_child = row[byte]
            if q_child == _DEAD:
                continue  # only rest tokens below
            nxt = automaton.step(here, byte)
            if nxt is None:
                if hold:
                    out.unsure.append((tok_lo[child], tok_hi[child], hold))
                continue
            if q_child == _BOUNDARY and covers.open_at(nxt):
                out.covered.append((tok_lo[child], tok_hi[child]))
                continue
            todo.append((child, nxt, q_child, hold + (below,) if nxt.bottom else hold))
    return budget


def sliced_walk(
    trie: TokenTrie,
    piece: Slice,
    automaton: ByteAutomaton,
    root: ByteState,
    max_tail_tokens: int,
    first_bytes: int,
    covered: int,
    covers: Covers,
    budget: int,
) -> WideSplit | None:
    """:func:`vector_walk` of ``root`` (not holding the bottom marker) over the tokens
    starting with ``first_bytes``, where ``covered`` (a subset of those bytes, from
    :func:`covered_bytes`) are the first bytes whose inside tokens are all accepted:
    under them, and under the bytes that start no character of the class, only
    ``piece.rest`` is walked.  Under the other first bytes whose state is one byte
    from a state that loops on the class or is open on it (``covers.loops_next``),
    the inside tokens are walked node by node
    (:func:`_inside_walk`, at most ``budget`` trie children examined in all) and
    the rest tokens in ``piece.rest``; the remaining bytes are walked in the full
    trie.  ``None`` when no byte is covered and some first byte would be walked in
    the full trie (one :func:`vector_walk` of all of them costs less then)."""
    rest = piece.rest
    wanted = automaton.allowed_bits(root) & first_bytes
    # a counted repetition with few characters left: its inside tokens are decided by
    # how many characters they start (``Slice.chars``; :func:`counted_left`)
    counted = -1
    holds: tuple[bool, ...] = ()
    if not covered and wanted & piece.dfa.first and covers.counts is not None:
        # found by ``covers.few_left`` (a chain is followed only when a probe says so)
        counted, holds = covers.counts.get(root, (-1, ()))
        if not 0 <= counted <= covers.reach:
            counted, holds = -1, ()
        if counted >= 0:
            covered = wanted & piece.dfa.first
    # no token starting with a byte that starts no character of the class is inside:
    # the rest trie holds the whole subtree of such a byte
    others = wanted & piece.dfa.first & ~covered
    # the first bytes whose state is one byte from a state open on the class
    near = 0
    for c in automaton.classes(root) if others and budget > 0 else ():
        if c & others:
            child = automaton.step(root, (c & -c).bit_length() - 1)
            assert child is not None
            if covers.loops_next(child):
                near |= c & others
            elif not covered:
                return None  # this class's bytes are walked in the full trie: see below
    if not covered and others & ~near:
        # some first bytes are walked in the full trie anyway: one walk of all of them
        # costs less than a walk of the rest trie beside it
        return None
    inside = _Inside()
    stepped = 0  # first bytes whose inside tokens were walked node by node
    while near:
        low = near & -near
        near ^= low
        part = _Inside()
        budget = _inside_walk(
            trie, piece.dfa, automaton, root, low.bit_length() - 1, covers, budget, part
        )
        if budget < 0:
            break
        stepped |= low
        inside.covered += part.covered
        inside.ended += part.ended
        inside.unsure += part.unsure
    covers.stepped |= stepped
    others &= ~stepped
    if not covered and others:
        return None  # nothing covered, or the budget ran out: walked whole
    # (with nothing covered or stepped, every first byte wanted starts no character of
    # the class, as a quote or an escape: the rest trie holds all their tokens)
    # (the states found the same as another are walked as that one: ``covers.merged``)
    merged = covers.merged or None
    walked = vector_walk(rest, automaton, root, max_tail_tokens, wanted & ~others, merge=merged)
    full = (
        vector_walk(trie, automaton, root, max_tail_tokens, others, merge=merged)
        if others
        else None
    )
    accepted = np.zeros(len(trie.sorted_bytes), dtype=bool)
    flags = piece.inside
    spans = [trie.first_byte_span(first, last) for first, last in byte_runs(covered)]
    back = rest.sorted_ids
    parts = [back[walked.uncertain]]
    pairs = [(back[walked.handover_positions], walked.handover_offsets)]
    if counted >= 0:
        chars = piece.chars
        for a, b in spans:
            accepted[a:b] |= flags[a:b] & (chars[a:b] <= counted)
        handed = [c for c in range(1, len(holds)) if holds[c]]  # the root holds no marker
        if handed:
            # the inside tokens starting more characters than are left: uncertain, handed
            # over where the (c+1)-th character starts when S_(k-c) holds the marker
            over = np.concatenate(
                [np.flatnonzero(flags[a:b] & (chars[a:b] > counted)) + a for a, b in spans]
            )
            parts.append(over)
            if len(over) <= max_tail_tokens:
                at = piece.starts_at[over][:, None] + np.array(handed, dtype=np.int64) - 1
                pairs.append((np.repeat(over, len(handed)), piece.starts[at.reshape(-1)]))
    else:
        for a, b in spans:
            accepted[a:b] |= flags[a:b]
    for a, b in inside.covered:
        accepted[a:b] |= flags[a:b]
    for a, b in inside.ended:
        accepted[a:b] = True
    accepted[back[walked.accepted]] = True
    if full is not None:
        accepted[full.accepted] = True
        parts.append(full.uncertain)
        pairs.append((full.handover_positions, full.handover_offsets))
    for a, b, hold in inside.unsure:
        at = np.flatnonzero(flags[a:b]) + a
        parts.append(at)
        pairs.append((np.repeat(at, len(hold)), np.tile(np.array(hold, dtype=np.int64), len(at))))
    uncertain = np.sort(np.concatenate(parts))
    empty = uncertain[:0]
    # the accepted positions are found from the flags if read (a mask packs the flags)
    if not len(uncertain) or len(uncertain) > max_tail_tokens:
        return WideSplit(None, uncertain, empty, empty, accepted)
    if len(pairs) == 1:
        # the rest walk's pairs, in order (``back`` is ascending)
        return WideSplit(None, uncertain, *pairs[0], accepted)
    positions = np.concatenate([p for p, _ in pairs])
    offsets = np.concatenate([k for _, k in pairs])
    return WideSplit(None, uncertain, *sorted_pairs(positions, offsets), accepted)
