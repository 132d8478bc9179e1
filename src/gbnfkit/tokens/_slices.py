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
rest trie is walked under those bytes (:func:`sliced_walk`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from gbnfkit.tokens._bytestate import ByteAutomaton, ByteState
from gbnfkit.tokens._tails import SuffixRanks
from gbnfkit.tokens._trie import TokenTrie
from gbnfkit.tokens._utf8 import utf8_sequences
from gbnfkit.tokens._vecwalk import WideSplit, byte_runs, sorted_pairs, vector_walk

__all__ = ["SLICE_CLASSES", "Slice", "Utf8Dfa", "covered_bytes", "loops_on", "sliced_walk"]

Positions = npt.NDArray[np.int64]

# The classes slices are precomputed for (code point ranges, inclusive), part of every
# vocabulary index: the raw characters of a JSON string as the schema converter (any
# character but '"', '\\' and controls; llama.cpp's also without DEL) and the ``json``
# builtin write them.  One slice serves both: a state that loops on the wider class
# loops on this narrower one too.
SLICE_CLASSES: tuple[tuple[tuple[int, int], ...], ...] = (
    ((0x20, 0x21), (0x23, 0x5B), (0x5D, 0x7E), (0x80, 0x10FFFF)),
)

_DEAD = 0
_BOUNDARY = 1  # between two characters (the start state)


class Utf8Dfa:
    """The byte DFA of the UTF-8 encodings of ``K*`` (its states: between characters,
    or inside one; every state but the dead one can still complete a character).

    Attributes:
        table: ``uint8`` array ``state x byte -> state`` (0 dead, 1 between characters).
        moves: per state, its transitions as ``(target, 256-bit set of bytes)`` pairs.
        first_row: per byte, the state after it from a character boundary.
        first: the bytes a character of ``K`` may start with.
        single: the bytes that are a whole character of ``K``.
    """

    def __init__(self, ranges: tuple[tuple[int, int], ...]) -> None:
        sequences = [seq for lo, hi in ranges for seq in utf8_sequences(lo, hi)]
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
    """

    dfa: Utf8Dfa
    inside: npt.NDArray[np.bool_]
    rest: TokenTrie
    suffixes: SuffixRanks
    rest_positions: list[int]

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
        others = np.flatnonzero(~inside).tolist()
        data = trie.sorted_bytes
        rest = TokenTrie([(p, data[p]) for p in others])
        return Slice(dfa, inside, rest, SuffixRanks.build(trie, others), others)


def loops_on(automaton: ByteAutomaton, state: ByteState, dfa: Utf8Dfa, limit: int) -> bool:
    """Whether ``state`` loops on the class of ``dfa``: from ``state``, the UTF-8
    bytes of any character of the class are accepted one by one (the state is alive
    after each) and lead back to ``state`` itself."""
    return _completes(automaton, _BOUNDARY, state, state, dfa, limit)


def _completes(
    automaton: ByteAutomaton,
    q: int,
    start: ByteState,
    home: ByteState,
    dfa: Utf8Dfa,
    limit: int,
) -> bool:
    """Whether, from the automaton state ``start`` in the DFA state ``q``, every byte
    string that takes the DFA from ``q`` to its next character boundary is accepted
    byte by byte and ends in ``home``.

    Explores the pairs (DFA state, automaton state) reachable from ``(q, start)``, one
    automaton step per byte class of the automaton state met in each DFA transition;
    ``False`` as soon as a byte the DFA allows is rejected, a character ends elsewhere
    than in ``home``, or more than ``limit`` pairs are met.
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
                    if after is not home:
                        return False
                    continue
                pair = (target, after)
                if pair not in seen:
                    if len(seen) >= limit:
                        return False
                    seen.add(pair)
                    todo.append(pair)
    return True


def covered_bytes(
    automaton: ByteAutomaton,
    root: ByteState,
    dfa: Utf8Dfa,
    loops: dict[ByteState, bool],
    limit: int,
) -> int:
    """The first bytes ``b`` under which every token inside the class of ``dfa`` is
    accepted from ``root``.

    ``S*`` is the state most of ``root``'s single-byte characters of the class lead
    to; it must loop on the class (:func:`loops_on`, cached in ``loops``).  A byte
    ``b`` that is a whole character is covered when it leads to ``S*``; the first byte
    of a longer character when every way of completing that character from the
    state after ``b`` is accepted and ends in ``S*``.  Every inside token under a
    covered byte is then a path through states that are all alive.
    """
    allowed = automaton.allowed_bits(root)
    single = dfa.single & allowed
    if not single:
        return 0
    classes = automaton.classes(root)
    best: ByteState | None = None
    most = 0
    for c in classes:
        part = c & single
        if part.bit_count() > most:
            most = part.bit_count()
            best = automaton.step(root, (part & -part).bit_length() - 1)
    assert best is not None
    looping = loops.get(best)
    if looping is None:
        looping = loops[best] = loops_on(automaton, best, dfa, limit)
    if not looping:
        return 0
    covered = 0
    first_row = dfa.first_row
    for c in classes:
        part = c & dfa.first
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
                    ok = after is best
                else:
                    ok = _completes(automaton, q, after, best, dfa, limit)
                verdicts[q] = ok
            if ok:
                covered |= low
    return covered


def sliced_walk(
    trie: TokenTrie,
    piece: Slice,
    automaton: ByteAutomaton,
    root: ByteState,
    max_tail_tokens: int,
    first_bytes: int,
    covered: int,
) -> WideSplit:
    """:func:`vector_walk` of ``root`` (not holding the bottom marker) over the tokens
    starting with ``first_bytes``, where ``covered`` (a subset of those bytes, from
    :func:`covered_bytes`) are the first bytes whose inside tokens are all accepted:
    under them, and under the bytes that start no character of the class, only
    ``piece.rest`` is walked."""
    rest = piece.rest
    wanted = automaton.allowed_bits(root) & first_bytes
    # no token starting with a byte that starts no character of the class is inside:
    # the rest trie holds the whole subtree of such a byte
    others = wanted & piece.dfa.first & ~covered
    walked = vector_walk(rest, automaton, root, max_tail_tokens, wanted & ~others)
    full = vector_walk(trie, automaton, root, max_tail_tokens, others) if others else None
    accepted = np.zeros(len(trie.sorted_bytes), dtype=bool)
    inside = piece.inside
    for first, last in byte_runs(covered):
        a, b = trie.first_byte_span(first, last)
        accepted[a:b] = inside[a:b]
    back = rest.sorted_ids
    accepted[back[walked.accepted]] = True
    parts = [back[walked.uncertain]]
    pairs = [(back[walked.handover_positions], walked.handover_offsets)]
    if full is not None:
        accepted[full.accepted] = True
        parts.append(full.uncertain)
        pairs.append((full.handover_positions, full.handover_offsets))
    uncertain = np.sort(np.concatenate(parts))
    empty = uncertain[:0]
    if not len(uncertain) or len(uncertain) > max_tail_tokens:
        return WideSplit(np.flatnonzero(accepted), uncertain, empty, empty)
    if len(pairs) == 1:
        # the rest walk's pairs, in order (``back`` is ascending)
        return WideSplit(np.flatnonzero(accepted), uncertain, *pairs[0])
    positions = np.concatenate([p for p, _ in pairs])
    offsets = np.concatenate([k for _, k in pairs])
    return WideSplit(np.flatnonzero(accepted), uncertain, *sorted_pairs(positions, offsets))
