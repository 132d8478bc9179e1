"""States within one character that decide every token alike (``docs/masks.md``,
"Suffixes by first byte", states within a character).

A wide split reuses the verdicts under a first byte ``b`` from an earlier walk that
reached the same state after ``b``.  In a JSON Schema grammar the contexts of "a
property name other than these" (one per known prefix) each start with their own
character class, so after the lead byte of a multi-byte character each is in a state of
its own: ``(BOTTOM, f, q)``, ``q`` a byte test of that class's rule (the rest of the
character, tests then the rule's end) and ``f`` the frame it returns to (a call of the
common string body in tail position).  Such states differ only by positions: they
accept the same bytes and reach the same state once the character ends.

:func:`within_signature` says so without stepping: a state whose stacks are all
``base + (q,)``, one ``base``, where every ``q`` starts a *chain* (byte tests, then an
end), is described by the frames below ``base``'s last frame ``f``, the local closure
of ``f`` (what returning into it leaves, and whether it finishes) and the set of its
tops' chains (their byte sets in order).  Two such states with equal signatures give
every token the same verdict and the same handover offsets: after any bytes, each side
holds the stacks of the chains not ended yet (``base + (q',)``, ``q'`` at the same
point of a chain with the same byte sets left) and the stacks reached by returning into
``f`` (identical on both sides: the same frames below, the same local closure), so both
accept the same next bytes, hold the bottom marker at the same points and die at the
same points (tests/tokens/test_within.py compares such states' walks).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from gbnfkit.tokens._byteprogram import END, TEST
from gbnfkit.tokens._bytestate import ByteAutomaton, ByteState, Stack
from gbnfkit.tokens._trie import TokenTrie
from gbnfkit.tokens._vecwalk import WideSplit

__all__ = [
    "Chunk",
    "alike_roots",
    "SecondBytes",
    "Signature",
    "cut_spans",
    "home_state",
    "signature_after",
    "within_signature",
]

# (frames below the returning frame, what returning into it leaves and whether it
# finishes, the tops' chains)
Signature = tuple[Stack, frozenset[Stack], bool, frozenset[tuple[int, ...]]]


def _chain(kind: tuple[int, ...], arg: tuple[int, ...], q: int) -> tuple[int, ...] | None:
    """The byte sets of the tests from ``q`` to the end of its rule, ``None`` if
    something else (a call) comes first."""
    sets: list[int] = []
    p = q
    while kind[p] == TEST:
        sets.append(arg[p])
        p += 1
    if kind[p] != END:
        return None
    return tuple(sets)


def within_signature(
    automaton: ByteAutomaton,
    state: ByteState,
    chains: dict[int, tuple[int, ...] | None],
) -> Signature | None:
    """The signature of ``state`` if it is within a character as above (all its stacks
    ``base + (q,)`` with one ``base`` of at least two frames, each ``q`` the start of a
    chain of tests to its rule's end), else ``None``.  ``chains`` keeps each position's
    chain (per grammar)."""
    if state.bottom or state.complete:
        return None
    return _signature(automaton, state.stacks, chains)


def home_state(
    homes: dict[Signature, ByteState],
    automaton: ByteAutomaton,
    state: ByteState,
    chains: dict[int, tuple[int, ...] | None],
    keep: bool = False,
) -> ByteState:
    """The state kept first in ``homes`` with the signature of ``state`` (``state``
    itself if it has none, or if none is kept yet: then, with ``keep``, it becomes
    that signature's home).  The walks kept after a first byte are kept under the
    home of the state that byte leads to, so that states of one signature reached
    by different bytes find each other's walks: a class's lead bytes ``e1-ec`` and
    ``ee-ef`` lead to two states (two branches of its rule) with one signature, and
    a later class's state after ``e1`` finds the walk kept for ``e1-ec`` even when
    the walk kept for ``ee-ef`` came after it."""
    if not homes and not keep:
        return state
    sig = within_signature(automaton, state, chains)
    if sig is None:
        return state
    home = homes.get(sig)
    if home is None:
        if keep:
            homes[sig] = state
        return state
    return home


def signature_after(
    automaton: ByteAutomaton,
    root: ByteState,
    byte: int,
    chains: dict[int, tuple[int, ...] | None],
) -> Signature | None:
    """:func:`within_signature` of the state ``root`` reaches by ``byte``, without
    stepping: when the next position of every top test accepting ``byte`` is a test,
    that state's stacks are those stacks with their top advanced by one (no closure
    to compute, none of them the bottom marker); else ``None``."""
    program = automaton.program
    kind, arg = program.kind, program.arg
    at = 1 << byte
    stacks: list[Stack] = []
    for stack in root.stacks:
        p = stack[-1] if stack else -1
        if p >= 0 and kind[p] == TEST and arg[p] & at:
            if kind[p + 1] != TEST:
                return None
            stacks.append(stack[:-1] + (p + 1,))
    return _signature(automaton, stacks, chains)


def _signature(
    automaton: ByteAutomaton,
    stacks: tuple[Stack, ...] | list[Stack],
    chains: dict[int, tuple[int, ...] | None],
) -> Signature | None:
    if not stacks:
        return None
    base = stacks[0][:-1]
    if len(base) < 2 or base[-1] < 0:
        return None
    program = automaton.program
    kind, arg = program.kind, program.arg
    found: set[tuple[int, ...]] = set()
    for stack in stacks:
        if stack[:-1] != base:
            return None
        q = stack[-1]
        if q in chains:
            got = chains[q]
        else:
            got = chains[q] = _chain(kind, arg, q)
        if got is None:
            return None
        found.add(got)
    suffixes, pops = automaton._local_closure(base[-1])
    return (base[:-1], frozenset(suffixes), pops, frozenset(found))


def _alike(
    automaton: ByteAutomaton,
    a: ByteState,
    b: ByteState,
    chains: dict[int, tuple[int, ...] | None],
) -> bool:
    """Whether two states reached by the same bytes (with the bottom marker held at the
    same points before) give every token the same verdict and handover offsets: the
    same state, or equal signatures within a character."""
    if a == b:
        return True
    sig = within_signature(automaton, a, chains)
    return sig is not None and sig == within_signature(automaton, b, chains)


def _apart(
    automaton: ByteAutomaton,
    a: ByteState,
    b: ByteState,
    bits: int,
    chains: dict[int, tuple[int, ...] | None],
    out: list[tuple[int, ByteState, ByteState]],
) -> bool:
    """Compare the states ``a`` and ``b`` reach by each byte of ``bits``: whether some
    byte leads one of them to no state and the other to one, or both to states that
    hold the bottom marker differently (``True``: not alike); the bytes after which
    they are not :func:`_alike` are added to ``out`` with the two states."""
    allowed = automaton.allowed_bits(a) & bits
    if allowed != automaton.allowed_bits(b) & bits:
        return True
    step = automaton.step
    theirs = automaton.classes(b)
    for mine in automaton.classes(a):
        mine &= allowed
        for other in theirs if mine else ():
            both = mine & other
            if not both:
                continue
            # the bytes of one class of each lead each state to one state
            byte = (both & -both).bit_length() - 1
            if byte >= 0x80:  # a character's lead byte: its chain's state is not made
                sig = signature_after(automaton, a, byte, chains)
                if sig is not None and sig == signature_after(automaton, b, byte, chains):
                    continue
            after_a = step(a, byte)
            after_b = step(b, byte)
            assert after_a is not None and after_b is not None  # allowed by both
            if _alike(automaton, after_a, after_b, chains):
                continue
            if after_a.bottom != after_b.bottom:
                return True
            while both:
                low = both & -both
                both ^= low
                out.append((low.bit_length() - 1, after_a, after_b))
    return False


def alike_roots(
    automaton: ByteAutomaton,
    trie: TokenTrie,
    a: ByteState,
    b: ByteState,
    free: int,
    chains: dict[int, tuple[int, ...] | None],
    budget: int,
    rest: TokenTrie | None = None,
    covering: Callable[[ByteState], bool] | None = None,
) -> bool:
    """Whether the roots ``a`` and ``b`` (neither holding the bottom marker) give every
    token whose first byte is not in ``free`` the same verdict and the same handover
    offsets: along every token the states after each prefix are, from the two roots,
    both dead, or :func:`_alike` (then so is everything under it), or both alive with
    the bottom marker held alike and compared again after the next byte (at most
    ``budget`` trie nodes below the first bytes; past it, not shown).

    Under a one-byte first character after which both states cover the slice class
    (``covering``: ``_keywalk.Universal.state``), every inside token is accepted from
    both (its bytes after the first are inside again), so only the tokens of ``rest``
    (the slice's rest trie) under that byte are compared.

    Inside a key, the first bytes that are no letter lead the roots of two prefixes
    to the string body's state (or to states within one character with equal
    signatures), and an escape's tokens differ one or two bytes down (``\\u``): the
    known names' next letters are the bytes the prefixes lead apart, and a joined key
    takes those whole (``free``: ``_keywalk.inside_only``); a name's next character
    that is no letter (``-``) leads one root into the name, the other into the body,
    two covering states whose rest tokens under it are few."""
    if a.bottom or b.bottom:
        return False
    found: list[tuple[int, ByteState, ByteState]] = []
    first = ~trie.no_tokens & ~free  # (the first bytes of some token)
    if automaton.allowed_bits(a) != automaton.allowed_bits(b) or _apart(
        automaton, a, b, first, chains, found
    ):
        return False
    todo: list[tuple[TokenTrie, int, ByteState, ByteState]] = []
    for byte, at_a, at_b in found:
        if rest is not None and covering is not None and byte < 0x80:
            if covering(at_a) and covering(at_b):
                node = rest.root_child[byte]
                if node >= 0:
                    todo.append((rest, node, at_a, at_b))
                continue
        todo.append((trie, trie.root_child[byte], at_a, at_b))
    while todo:
        within, node, at_a, at_b = todo.pop()
        budget -= 1
        if budget < 0:
            return False
        kids = within.children(node)
        bits = 0
        for byte in kids:
            bits |= 1 << byte
        found.clear()
        if _apart(automaton, at_a, at_b, bits, chains, found):
            return False
        end = within.end
        for byte, next_a, next_b in found:
            kid = kids[byte]
            if end[kid] > kid + 1:  # (a leaf's token is alive from both)
                todo.append((within, kid, next_a, next_b))
    return True

Positions = npt.NDArray[np.int64]

# a wide split's tokens under one span of sorted positions: accepted, uncertain, and the
# handover pairs (positions, offsets) of those uncertain tokens
Chunk = tuple[npt.NDArray[np.int64], ...]


def cut_spans(
    split: WideSplit, spans: list[tuple[int, int]], accepted: bool
) -> list[tuple[int, Chunk]]:
    """``split``'s part under each span ``(lo, hi)`` of sorted positions (ascending),
    keyed by ``lo``; without ``accepted`` the accepted positions are left empty."""
    edges = np.array([e for span in spans for e in span], dtype=np.int64)
    listed = split.accepted if accepted else split.uncertain[:0]
    acc = np.searchsorted(listed, edges).tolist()
    unc = np.searchsorted(split.uncertain, edges).tolist()
    hand = np.searchsorted(split.handover_positions, edges).tolist()
    out: list[tuple[int, Chunk]] = []
    for i, (lo, _) in enumerate(spans):
        j = 2 * i
        out.append(
            (
                lo,
                (
                    listed[acc[j] : acc[j + 1]],
                    split.uncertain[unc[j] : unc[j + 1]],
                    split.handover_positions[hand[j] : hand[j + 1]],
                    split.handover_offsets[hand[j] : hand[j + 1]],
                ),
            )
        )
    return out


class SecondBytes:
    """The walks kept by their first byte ``b`` and the state after a second byte
    (``docs/masks.md``, "Suffixes by first byte", the second byte): the tokens under
    the two bytes ``b x`` get the verdicts of a kept walk that reached the same state
    after the same two bytes, with no state holding the bottom marker before it.  An
    escape's state differs from one context of "a name other than these" to the next
    (its class excludes other letters' ``\\u`` spellings), but after ``\\n`` or ``\\"``
    every one of them is back in the string body's state; the few tokens left (under
    ``\\u``, and ``\\`` itself) are stepped one by one.

    At most ``size`` keys (first byte, state), each at most ``size`` walks (the
    latest last, a walk whose bytes a newer one all covers dropped)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.kept: OrderedDict[tuple[int, ByteState], list[tuple[int, WideSplit]]] = OrderedDict()

    def keep(
        self,
        trie: TokenTrie,
        automaton: ByteAutomaton,
        split: WideSplit,
        first: int,
        child: ByteState,
    ) -> None:
        """Keep ``split`` (a walk of a root not holding the bottom marker, over the
        tokens under ``first``, which leads the root to ``child``) under each state
        after a second byte."""
        node = trie.root_child[first]
        if child.bottom or node < 0 or self.size <= 0 or split.flags is None:
            return
        by_state: dict[ByteState, int] = {}
        for byte in trie.children(node):
            after = automaton.step(child, byte)
            if after is not None:
                by_state[after] = by_state.get(after, 0) | 1 << byte
        kept = self.kept
        for after, bits in by_state.items():
            key = (first, after)
            known = [part for part in kept.get(key, []) if part[0] & ~bits]
            known.append((bits, split))
            kept[key] = known[-self.size :]
            kept.move_to_end(key)
        while len(kept) > self.size:
            kept.popitem(last=False)

    def pieces(
        self,
        trie: TokenTrie,
        automaton: ByteAutomaton,
        root: ByteState,
        first: int,
        child: ByteState,
        most: int,
    ) -> tuple[list[tuple[int, Chunk]], list[tuple[WideSplit, int, int]], list[Positions]] | None:
        """The verdicts on the tokens under ``first`` (``root``, not holding the bottom
        marker, leads to ``child`` by it) from the kept walks, and on the tokens no kept
        walk decides (at most ``most``, else ``None``) by stepping each: the pieces
        keyed by their first sorted position (without the accepted positions of a
        walk's pieces), the spans ``(walk, lo, hi)`` whose accepted flags come from
        that walk, and the accepted positions of the tokens stepped."""
        node = trie.root_child[first]
        if child.bottom or node < 0 or not self.kept:
            return None
        tok_lo, tok_hi = trie.tok_lo, trie.tok_hi
        spans: dict[int, list[tuple[int, int]]] = {}  # id of a walk -> its spans
        walks: dict[int, WideSplit] = {}
        rest: list[tuple[int, int]] = [(trie.here_lo[node], trie.here_hi[node])]
        left = rest[0][1] - rest[0][0]
        for byte, kid in trie.children(node).items():
            after = automaton.step(child, byte)
            if after is None:
                continue  # rejected at the second byte, no state held the marker
            found: WideSplit | None = None
            known = self.kept.get((first, after))
            if known is not None:
                self.kept.move_to_end((first, after))
                for bits, walked in reversed(known):
                    if bits >> byte & 1:
                        found = walked
                        break
            lo, hi = tok_lo[kid], tok_hi[kid]
            if found is None:
                rest.append((lo, hi))
                left += hi - lo
                if left > most:
                    return None
                continue
            mine = spans.setdefault(id(found), [])
            walks[id(found)] = found
            if mine and mine[-1][1] == lo:
                mine[-1] = (mine[-1][0], hi)  # the next span of the same walk
            else:
                mine.append((lo, hi))
        if not walks:
            return None
        out: list[tuple[int, Chunk]] = []
        flags: list[tuple[WideSplit, int, int]] = []
        for key, mine in spans.items():
            out += cut_spans(walks[key], mine, False)
            flags += [(walks[key], lo, hi) for lo, hi in mine]
        stepped = [_stepped(trie, automaton, root, lo, hi) for lo, hi in rest if lo < hi]
        return out + stepped, flags, [chunk[0] for _, chunk in stepped]


def _stepped(
    trie: TokenTrie, automaton: ByteAutomaton, root: ByteState, lo: int, hi: int
) -> tuple[int, Chunk]:
    """The verdicts on the tokens at sorted positions ``lo .. hi`` stepped one by one
    from ``root`` (not holding the bottom marker), keyed by ``lo``."""
    accepted: list[int] = []
    uncertain: list[int] = []
    positions: list[int] = []
    offsets: list[int] = []
    data = trie.sorted_bytes
    for p in range(lo, hi):
        state: ByteState | None = root
        held: list[int] = []
        for k, byte in enumerate(data[p]):
            assert state is not None
            if state.bottom:
                held.append(k)
            state = automaton.step(state, byte)
            if state is None:
                break
        if state is not None:
            accepted.append(p)
        elif held:
            uncertain.append(p)
            positions += [p] * len(held)
            offsets += held
    return lo, (
        np.array(accepted, dtype=np.int64),
        np.array(uncertain, dtype=np.int64),
        np.array(positions, dtype=np.int64),
        np.array(offsets, dtype=np.int64),
    )
