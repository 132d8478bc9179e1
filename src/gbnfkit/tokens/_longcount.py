"""Counted repetitions with a long way to go: more characters left than ``count_chain``.

``docs/masks.md``, "Slices", "Counted repetitions: many characters left".  A string of
``maxLength`` 100-160 (``K{0,n}``, ``K`` a slice's class) is, after its first
characters, in a state ``S_k`` with ``count_chain < k <= L + 3`` characters left
(``L`` the longest token): too many to follow its chain to the end (``counted_left``),
too few for its states to be open (their canonical forms see the chain's end).  Such a
state was a whole-trie walk at every mask inside the string (5-7 ms on DeepSeek).

But the inside tokens that start many characters are few (31 of DeepSeek's 126,042
inside tokens start more than 48).  So the chain ``S_k, S_(k-1), ...`` is followed for
``count_chain`` states only (each character of ``K`` leads ``S_i`` to ``S_(i-1)`` alone,
through states within the character that do not hold the bottom marker:
``_single_next``): every inside token starting at most ``count_chain`` characters is
then accepted; the few starting more are stepped one by one from the root; the rest
trie is walked as under covered bytes.  The first such mask of a string compares the
open states' forms first (open states keep their own path); the chain's states are
then noted (:data:`LONG`), and the string's next masks take the chain at once.

*Invariant:* an inside token starting ``j <= count_chain`` characters is, from ``S_k``,
a path through ``S_k, ..., S_(k-j+1)`` (each whole character leads to the next state of
the chain) whose last, maybe partial, character is accepted by the exploration of
``S_(k-j+1)``: it is accepted whatever ``k`` is, since none of the states followed is
``S_0`` (each accepts every byte that starts a character).  Every other token is
stepped (or walked in the rest trie) exactly, so the verdicts and handover pairs are
those of a whole walk.
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from typing import Any

import numpy as np

from gbnfkit.tokens._bytestate import BOTTOM, ByteAutomaton, ByteState
from gbnfkit.tokens._slices import Counted, Covers, Slice, _single_next
from gbnfkit.tokens._trie import TokenTrie
from gbnfkit.tokens._tuning import Tuning
from gbnfkit.tokens._vecwalk import WideSplit, byte_runs, sorted_pairs, vector_walk

__all__ = ["LONG", "count_or_cover", "follows_far", "long_count_walk"]


# kept in a slice's ``Covers.counts`` for a state found to head a chain of at least
# ``count_chain`` states: not counted (``few_left`` and ``sliced_walk`` read a negative
# count so), split by :func:`long_count_walk` without following its chain again
LONG: Counted = (-2, ())
_BOTTOM_STACK = (BOTTOM,)


def follows_far(
    automaton: ByteAutomaton,
    root: ByteState,
    piece: Slice,
    tuning: Tuning,
    counts: dict[ByteState, Counted] | None = None,
) -> bool:
    """Whether ``root`` heads a chain of at least ``count_chain`` states in which every
    character of the slice's class leads each state to the next one alone (no state
    of it ``S_0``, none looping on the class; never with ``count_chain`` 0).  A probe
    by one single-byte character first, which most states that are no such chain fail
    within a step or two.  With ``counts``, the chain is followed up to twice as far
    and every state of it found to head such a chain is noted there (:data:`LONG`; the
    next masks of a string are at those states), and a state noted is taken at once;
    a state ``counted_left`` followed further than its reach is such a state too.
    *Invariant:* a state noted heads such a chain (the complete stack, ``(BOTTOM,)``,
    reads no byte, so a state without it steps as the state with it)."""
    dfa = piece.dfa
    first = dfa.first
    single = first & dfa.single
    reach = tuning.count_chain
    if root.bottom or reach <= 0:
        return False
    got = counts.get(root) if counts is not None else None
    if got is not None:
        return got == LONG or got[0] > reach
    here = root
    for _ in range(reach):
        allowed = automaton.allowed_bits(here) & first
        if allowed != first:
            return False
        bits = allowed & single
        after = automaton.step(here, (bits & -bits).bit_length() - 1)
        if after is None or after is here:
            return False
        here = after
    chain: list[ByteState] = []  # S_k, S_(k-1)... each leading to the next alone
    here = root
    for _ in range(reach if counts is None else 2 * reach):
        if automaton.allowed_bits(here) & first != first:
            break
        after = _single_next(automaton, here, dfa, tuning.slice_pairs)
        if after is None or after is here:
            break
        chain.append(here)
        here = after
    if len(chain) < reach:
        return False
    if counts is not None:
        # chain[i] heads the len(chain) - i states followed from it; so does the state
        # of its stacks but the complete one (the next mask's context in a string whose
        # body may end after each character: it steps as chain[i] does)
        for state in chain[: len(chain) - reach + 1]:
            counts.setdefault(state, LONG)
            if state.bottom:
                bare = automaton.intern([s for s in state.stacks if s != _BOTTOM_STACK])
                counts.setdefault(bare, LONG)
    return True


def long_count_walk(
    trie: TokenTrie,
    piece: Slice,
    automaton: ByteAutomaton,
    root: ByteState,
    first_bytes: int,
    tuning: Tuning,
    counts: dict[ByteState, Counted] | None = None,
    lock: AbstractContextManager[Any] | None = None,
) -> WideSplit | None:
    """The wide split of ``root`` over the tokens starting with ``first_bytes`` when it
    heads a long chain (:func:`follows_far`), else ``None``: the inside tokens starting
    at most ``count_chain`` characters accepted, those starting more stepped one by
    one (``None`` if more than ``count_long_tokens``), the rest trie walked.  The
    chain is followed under ``lock`` (``Covers.lock``: ``counts`` is shared)."""
    with lock if lock is not None else nullcontext():
        if not follows_far(automaton, root, piece, tuning, counts):
            return None
    reach = tuning.count_chain
    wanted = automaton.allowed_bits(root) & first_bytes
    covered = wanted & piece.dfa.first
    flags = piece.inside
    chars = piece.chars
    spans = [trie.first_byte_span(first, last) for first, last in byte_runs(covered)]
    accepted = np.zeros(len(trie.sorted_bytes), dtype=bool)
    longer = []
    for a, b in spans:
        accepted[a:b] |= flags[a:b] & (chars[a:b] <= reach)
        longer.append(np.flatnonzero(flags[a:b] & (chars[a:b] > reach)) + a)
    far = np.concatenate(longer) if longer else np.zeros(0, dtype=np.int64)
    if len(far) > tuning.count_long_tokens:
        return None
    max_tail_tokens = tuning.max_tail_tokens
    rest = piece.rest
    walked = vector_walk(rest, automaton, root, max_tail_tokens, wanted)
    back = rest.sorted_ids
    accepted[back[walked.accepted]] = True
    parts = [back[walked.uncertain]]
    positions = [back[walked.handover_positions]]
    offsets = [walked.handover_offsets]
    unsure: list[int] = []
    pairs: list[tuple[int, int]] = []
    # the long tokens in byte order, each stepped from where it parts from the one
    # before (most are runs of one character extending each other)
    path: list[ByteState] = [root]  # the states after each prefix of the last token
    last = b""
    for p in far.tolist():
        data = trie.sorted_bytes[p]
        shared = _common_prefix(last, data, len(path) - 1)
        del path[shared + 1 :]
        state: ByteState | None = path[-1]
        for byte in data[shared:]:
            assert state is not None
            state = automaton.step(state, byte)
            if state is None:
                break
            path.append(state)
        last = data
        if state is not None:
            accepted[p] = True
            continue
        # rejected at ``len(path) - 1``: handed over where a state before held the marker
        held = [k for k, at in enumerate(path) if at.bottom]
        if held:
            unsure.append(p)
            pairs += [(p, k) for k in held]
    if unsure:
        parts.append(np.array(unsure, dtype=np.int64))
        positions.append(np.array([p for p, _ in pairs], dtype=np.int64))
        offsets.append(np.array([k for _, k in pairs], dtype=np.int64))
    uncertain = np.sort(np.concatenate(parts))
    empty = uncertain[:0]
    if not len(uncertain) or len(uncertain) > max_tail_tokens:
        return WideSplit(None, uncertain, empty, empty, accepted)
    if len(positions) == 1:
        return WideSplit(None, uncertain, positions[0], offsets[0], accepted)
    return WideSplit(
        None, uncertain, *sorted_pairs(np.concatenate(positions), np.concatenate(offsets)), accepted
    )


def _common_prefix(a: bytes, b: bytes, most: int) -> int:
    """The length of the longest common prefix of ``a`` and ``b``, at most ``most``
    (a binary search over slices compared in C)."""
    lo, hi = 0, min(len(a), len(b), most)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def count_or_cover(
    trie: TokenTrie,
    piece: Slice,
    covers: Covers,
    root: ByteState,
    first_bytes: int,
    tuning: Tuning,
) -> tuple[int, WideSplit | None]:
    """The first bytes :func:`~gbnfkit.tokens._slices.sliced_walk` may take as covered
    (none for a counted repetition with few characters left, ``Covers.few_left``: it
    counts them), else the split of a long chain (:func:`long_count_walk`) when
    nothing is covered.  A state noted as heading a long chain (:data:`LONG`: the next
    masks of a string after the first) takes its chain at once, without the open
    states' forms, which it would compare for nothing."""
    if covers.few_left(root):
        return 0, None
    counts = covers.counts
    noted = counts is not None and counts.get(root) == LONG
    covered = 0 if noted else covers.covered(root, first_bytes)
    if covered:
        return covered, None
    automaton = covers.automaton
    far = long_count_walk(trie, piece, automaton, root, first_bytes, tuning, counts, covers.lock)
    if far is None and noted:
        covered = covers.covered(root, first_bytes)
    return covered, far
