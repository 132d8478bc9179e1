"""States that accept every string of a slice's class: object keys as one lexeme.

At a JSON object's key (after ``{"``, ``, "`` or a key's first characters) a schema
grammar offers the known names (one literal each, or a trie of them) and "a name
other than these": a trie of rules, one per known prefix, each offering the next
letters of the known names (``char-a other-key-Xa``) and a class excluding them
followed by the common string body (``char-class-N char*``).  Together the letters and
the class cover every character, so whatever characters come, some stack goes on:
every token inside the string's class (``_slices.Slice.inside``) is allowed there.
Split letter by letter, each letter's context walked the tokens under it and made a
byte state per known prefix met (``docs/masks.md``, "Where the time goes").

:class:`Universal` shows this from the byte program, once per position, without
building a state: a set of stacks *covers* the class ``K`` when every character of
``K`` is read whole by the byte tests on top of one of its stacks (one test for a
single byte, a chain of tests for a longer character, each test's byte set holding
the character's byte range), after which that stack goes on at a call whose local
closure covers ``K`` again (a greatest fixed point over the calls reached this way).
By induction on the characters of a string of ``K*`` (and on the bytes of a last,
cut character, which the chain's first tests accept), some stack of a covering set
reads all of it: every inside token is accepted from such a state, whatever lies
below its frames (the frames popped on the way are the stacks' own, never past the
bottom marker).  :func:`join_keys` joins the groups of a state whose stacks share all
but their top two frames (the letters and the class of one key rule) when their
contexts cover ``K``, so a key position is one wide split whose inside tokens are
accepted at once and whose rest trie is walked (``CompiledGrammar._sliced_walk``).

Inside a key every prefix (``{"Pay``, ``{"Payl``...) is a new state, so a new joined
context, whose walk is pieced from the walks kept by first byte; that walk is, in the
documents measured, the same as the previous prefix's (the inside tokens accepted by
covering, the rest tokens handing over at the quote or decided alike under every
letter).  :class:`WideContexts` makes the context of a wide walk (the follow set's
pruning, packing, the tails' grouping) and hands back the last one made when the next
walk, follow set and depth are equal to its own: the context is a function of those.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

import numpy as np

from gbnfkit.tokens._byteprogram import CALL, END, TEST, ByteProgram, range_bits
from gbnfkit.tokens._bytestate import BOTTOM, ByteAutomaton, ByteState, Stack
from gbnfkit.tokens._index import VocabularyIndex, _Context
from gbnfkit.tokens._slices import Slice, Utf8Dfa
from gbnfkit.tokens._vecwalk import WideSplit, follow_only
from gbnfkit.tokens._within import alike_roots

__all__ = ["Universal", "WideContexts", "inside_only", "join_keys", "same_walk"]

# nested first calls a rule's first characters are looked for through (a bound on the
# recursion of Universal._summary, not a tuning knob: a JSON key's are 3 deep)
_DEPTH: Final = 16

# one character read whole by a stack's tests: the class's single bytes among them, the
# class's longer byte-range sequences they hold (bit i: ``Universal._longer[i]``), and
# the call the stack goes on at
_Chain = tuple[int, int, int]


class Universal:
    """Which calls and which states of one byte program cover the class of ``dfa``
    (its byte-range sequences, made once with the vocabulary index's slice, not once
    per grammar: they depend on the class alone).

    ``limit`` bounds the positions one question explores (past it, the answer is no);
    ``max_states`` the states remembered (then forgotten, as the compiled grammar's
    other per-state caches)."""

    def __init__(
        self,
        program: ByteProgram,
        dfa: Utf8Dfa,
        limit: int,
        max_states: int,
    ) -> None:
        self._kind = program.kind
        self._arg = program.arg
        single = 0
        longer: list[tuple[int, ...]] = []
        for seq in dfa.sequences:
            if len(seq) == 1:
                single |= range_bits(seq[0][0], seq[0][1])
            else:
                longer.append(tuple([range_bits(a, b) for a, b in seq]))
        self._single = single
        self._longer = longer
        self._width = max([len(m) for m in longer], default=1)
        self._all = (1 << len(longer)) - 1
        self.first = single  # the bytes a character of the class starts with
        for want in longer:
            self.first |= want[0]
        self._read: dict[int, tuple[tuple[int, int, int], ...]] = {}  # see _reads
        self._held: dict[tuple[int, ...], int] = {}  # see _reads
        self._rules = program.rules
        self._summaries: dict[int, tuple[int, int, tuple[_Chain, ...]]] = {}  # _summary
        self._limit = limit
        self._max_states = max_states
        self._calls: dict[int, bool] = {}  # call position -> its local closure covers K
        self._states: dict[ByteState, bool] = {}
        # the sets of stacks join_keys showed to cover (a joined context's stacks)
        self._joined: set[frozenset[Stack]] = set()
        self.explored = 0  # positions explored (read by tests)
        self.joined = 0  # groups of states joined by join_keys (read by tests)
        self.roots = 0  # wide splits' roots found joined (read by tests)
        # per slice (its id): the bytes the rest trie has no token under, and the walk
        # accepting exactly its inside tokens (see inside_only)
        self._inside: dict[int, tuple[Slice, int, WideSplit]] = {}

    def _reads(self, top: int) -> tuple[tuple[int, int, int], ...]:
        """The characters of the class the tests from ``top`` on read whole, as
        ``(k, single bytes, longer sequences held)`` for their first ``k`` tests (kept
        per position, and the longer sequences per tuple of byte sets)."""
        got = self._read.get(top)
        if got is not None:
            return got
        kind = self._kind
        arg = self._arg
        out: list[tuple[int, int, int]] = []
        if arg[top] & self.first:
            if arg[top] & self._single:
                out.append((1, arg[top] & self._single, 0))
            n = 1
            while n < self._width and kind[top + n] == TEST:
                n += 1
                tests = arg[top : top + n]
                held = self._held.get(tests)
                if held is None:
                    held = 0
                    for i, want in enumerate(self._longer):
                        if len(want) == n and all(
                            t & w == w for t, w in zip(tests, want, strict=True)
                        ):
                            held |= 1 << i
                    self._held[tests] = held
                if held:
                    out.append((n, 0, held))
        got = self._read[top] = tuple(out)
        return got

    def _node(self, at: int) -> int:
        """The node of the call at ``at``: its rule's (``-2 - rule``) in tail position,
        whose local closure is the rule's wherever it is called, else its position."""
        return -2 - self._arg[at] if self._kind[at + 1] == END else at

    def _chains(self, stacks: tuple[Stack, ...] | list[Stack]) -> list[_Chain]:
        """Each stack's first characters that end at a call: the stack's first ``k``
        tests (:meth:`_reads`) when the position after them, popping ends through the
        stack's own frames (never past the bottom marker), is a call.  A character
        after which a test or nothing comes is left out."""
        kind = self._kind
        out: list[_Chain] = []
        for stack in stacks:
            top = stack[-1] if stack else BOTTOM
            if top < 0 or kind[top] != TEST:
                continue
            for n, single, held in self._reads(top):
                at = top + n
                below = len(stack) - 2
                while kind[at] == END:
                    if below < 0 or stack[below] < 0:
                        at = -1
                        break
                    at = stack[below]
                    below -= 1
                if at >= 0 and kind[at] == CALL:
                    out.append((single, held, self._node(at)))
        return out

    def _summary(self, rule: int, depth: int) -> tuple[int, int, tuple[_Chain, ...]]:
        """The characters a call of ``rule`` reads whole first: those after which it
        returns (their single bytes and longer sequences, ORed), and those after which
        it goes on at a call within (per node).  An alternative starting with a call
        reads what that rule does; one that can be empty first is left out (it reads
        fewer characters: never more than the local closure's stacks do).  Kept per
        rule; past ``_DEPTH`` nested first calls nothing is read."""
        got = self._summaries.get(rule)
        if got is not None:
            return got
        kind = self._kind
        arg = self._arg
        single = 0
        held = 0
        inner: dict[int, tuple[int, int]] = {}
        for a in self._rules[rule] if depth <= _DEPTH else ():
            if kind[a] == TEST:
                for n, bits, more in self._reads(a):
                    if kind[a + n] == END:
                        single |= bits
                        held |= more
                    elif kind[a + n] == CALL:
                        node = self._node(a + n)
                        was = inner.get(node, (0, 0))
                        inner[node] = (was[0] | bits, was[1] | more)
            elif kind[a] == CALL:
                bits, more, within = self._summary(arg[a], depth + 1)
                for b, m, node in within:
                    was = inner.get(node, (0, 0))
                    inner[node] = (was[0] | b, was[1] | m)
                if bits | more:
                    if kind[a + 1] == END:
                        single |= bits
                        held |= more
                    elif kind[a + 1] == CALL:
                        node = self._node(a + 1)
                        was = inner.get(node, (0, 0))
                        inner[node] = (was[0] | bits, was[1] | more)
        got = (single, held, tuple((b, m, node) for node, (b, m) in inner.items()))
        self._summaries[rule] = got
        return got

    def _node_chains(self, node: int) -> list[_Chain]:
        """The first characters of a node's local closure (:meth:`_summary` of its rule;
        a call not in tail position also goes on after its rule returns)."""
        if node <= -2:
            return list(self._summary(-2 - node, 0)[2])
        single, held, inner = self._summary(self._arg[node], 0)
        out = list(inner)
        if (single | held) and self._kind[node + 1] == CALL:
            out.append((single, held, self._node(node + 1)))
        return out

    def _covers(self, chains: list[_Chain], good: dict[int, bool] | None) -> bool:
        """Whether ``chains`` read every character of the class, each going on at a
        call that ``good`` says covers it (``None``: assumed of every call)."""
        single = 0
        held = 0
        for bits, more, at in chains:
            if good is None or good.get(at, False):
                single |= bits
                held |= more
        return single == self._single and held == self._all

    def call(self, position: int) -> bool:
        """Whether the local closure of ``position`` (a call, or a tail call's node: see
        :meth:`_chains`) covers the class, going on only at calls that do (the greatest
        such set of the calls reached)."""
        known = self._calls.get(position)
        if known is not None:
            return known
        found: dict[int, list[_Chain]] = {}
        users: dict[int, list[int]] = {}
        todo = [position]
        while todo:
            p = todo.pop()
            if p in found:
                continue
            if len(found) >= self._limit:
                self._calls[position] = False  # too far to tell: not shown
                return False
            chains = self._node_chains(p)
            found[p] = chains
            self.explored += 1
            if not self._covers(chains, None):
                continue
            for _, _, at in chains:
                if at not in self._calls:
                    users.setdefault(at, []).append(p)
                    if at not in found:
                        todo.append(at)
        # the greatest fixed point: assume every call covers, drop those that do not
        # (and recheck their users) until none is dropped
        good: dict[int, bool] = dict.fromkeys(found, True)
        for chains in found.values():
            for _, _, at in chains:
                if at not in found:
                    good[at] = self._calls.get(at, False)
        work = list(found)
        while work:
            p = work.pop()
            if good[p] and not self._covers(found[p], good):
                good[p] = False
                work.extend(users.get(p, ()))
        for p in found:
            self._calls[p] = good[p]
        return good[position]

    def stacks(self, stacks: tuple[Stack, ...] | list[Stack]) -> bool:
        """Whether ``stacks`` (over the bottom marker, or whole) cover the class."""
        chains = self._chains(stacks)
        if not self._covers(chains, None):
            return False
        good: dict[int, bool] = {}
        for _, _, at in chains:
            if at not in good:
                good[at] = self.call(at)
        return self._covers(chains, good)

    def state(self, state: ByteState) -> bool:
        """:meth:`stacks` of ``state``, kept per state."""
        got = self._states.get(state)
        if got is None:
            if len(self._states) >= self._max_states:
                self._states.clear()
            got = self._states[state] = self.stacks(state.stacks)
        return got

    def joined_root(self, state: ByteState) -> bool:
        """Whether ``state``'s stacks are those of a context :func:`join_keys` joined
        (shown to cover the class when joined).  A wide split asks this, not
        :meth:`state`: the question is then never explored at a root that is no key (a
        string value, whose counted repetition can lead it through ``limit`` calls)."""
        found = bool(self._joined) and frozenset(state.stacks) in self._joined
        self.roots += found
        return found


def inside_only(
    universal: Universal,
    root: ByteState,
    slices: Sequence[Slice],
    automaton: ByteAutomaton,
    pieces: dict[int, tuple[WideSplit, int]],
) -> int:
    """The first bytes of ``root`` (a joined key's) under which every token is an
    inside token of the first slice (its rest trie holds none under them: in the
    vocabularies measured, every letter and digit); with them, a walk whose verdicts
    under them are ``root``'s is put in ``pieces`` (by its id, as a kept walk): each
    accepted (``root`` covers the class), none uncertain, no handover.  So a joined
    split neither steps ``root`` by those bytes nor walks them (inside a key, the
    known names' next letters lead to new states).  ``0`` for a root that is no
    joined key, or when no such byte is allowed."""
    if not slices or not universal.joined_root(root):
        return 0
    piece = slices[0]
    got = universal._inside.get(id(piece))
    if got is None or got[0] is not piece:
        no_rest = 0
        for byte, child in enumerate(piece.rest.root_child):
            if child < 0:
                no_rest |= 1 << byte
        empty = np.zeros(0, dtype=np.int64)
        got = (piece, no_rest, WideSplit(None, empty, empty, empty, piece.inside))
        universal._inside[id(piece)] = got
    free = automaton.allowed_bits(root) & piece.dfa.first & got[1]
    if free:
        pieces[id(got[2])] = (got[2], free)
    return free


def join_keys(
    groups: list[list[Stack]], universal: Universal, allowed: int
) -> tuple[list[list[Stack]], list[list[Stack]]]:
    """The groups of a state split into those joined (each the groups whose stacks share
    all but their top two frames, when more than one and their top two frames cover
    the class) and the others, as they were.  ``allowed``: the bytes the state allows
    (a state not allowing every first byte of the class has no covering group)."""
    if universal.first & ~allowed:
        return [], groups
    by_base: dict[Stack, list[int]] = {}
    for i, group in enumerate(groups):
        if len(group[0]) >= 3:
            by_base.setdefault(group[0][:-2], []).append(i)
    joined: list[list[Stack]] = []
    taken: set[int] = set()
    for members in by_base.values():
        if len(members) < 2:
            continue
        stacks = [s for i in members for s in groups[i]]
        tops = [(BOTTOM,) + s[-2:] for s in stacks]
        if universal.stacks(tops):
            if len(universal._joined) >= universal._max_states:
                universal._joined.clear()
            universal._joined.add(frozenset(tops))  # the joined context's root
            joined.append(stacks)
            taken.update(members)
            universal.joined += len(members)
    if not joined:
        return [], groups
    return joined, [g for i, g in enumerate(groups) if i not in taken]


def same_walk(a: WideSplit, b: WideSplit) -> bool:
    """Whether two wide walks found the same verdicts: the same accepted and uncertain
    positions and the same handover pairs."""
    if a is b:
        return True
    if not (
        np.array_equal(a.uncertain, b.uncertain)
        and np.array_equal(a.handover_positions, b.handover_positions)
        and np.array_equal(a.handover_offsets, b.handover_offsets)
    ):
        return False
    if a.flags is not None and b.flags is not None:
        return bool(np.array_equal(a.flags, b.flags))
    return bool(np.array_equal(a.accepted, b.accepted))


class WideContexts:
    """The contexts of a grammar's wide walks, and the last one made without a canonical
    form (a joined key's), handed back for an equal walk (:func:`same_walk`), follow
    set and depth: :meth:`context` is a function of those three (and of the vocabulary
    index), so the context is the one it would make.  With the grammar's ``automaton``
    and ``universal``, it is also handed back *before* a walk, to a joined root whose
    tokens the last joined root's walk decides alike (:meth:`alike`)."""

    def __init__(
        self,
        index: VocabularyIndex,
        automaton: ByteAutomaton | None = None,
        universal: Universal | None = None,
        chains: dict[int, tuple[int, ...] | None] | None = None,
        budget: int = 0,
    ) -> None:
        self._index = index
        self._automaton = automaton
        self._universal = universal
        self._chains: dict[int, tuple[int, ...] | None] = {} if chains is None else chains
        self._budget = budget
        # the last walk made without a form: it, its follow set, depth, context
        self._last: tuple[WideSplit, int, int, _Context] | None = None
        # its root when a joined key's, with the first bytes inside_only took there
        self._root: tuple[ByteState, int] | None = None
        self.reused = 0  # contexts handed back (read by tests)
        self.alike = 0  # of those, handed back before a walk (read by tests)

    def _free(self, root: ByteState) -> int:
        """:func:`inside_only`'s first bytes of ``root`` (0: no joined key's root)."""
        if self._automaton is None or self._universal is None:
            return 0
        return inside_only(self._universal, root, self._index.slices, self._automaton, {})

    def before_walk(
        self, root: ByteState, depth: int, follow: Callable[[], int]
    ) -> _Context | None:
        """The last joined key's context, when ``root`` (a wide split's, at ``depth``)
        is a joined key's whose every token the last joined root decides alike
        (``_within.alike_roots``, past the first bytes both take from :func:`inside_only`)
        and, if that context's tails were pruned, ``follow()`` (the follow set of
        ``root``'s context) is the same: its walk would be the same walk, so
        :meth:`context` would hand that context back."""
        last = self._last
        mine = self._root
        automaton = self._automaton
        if mine is None or last is None or last[2] != depth or automaton is None:
            return None
        before, free = mine
        if root is not before:
            universal = self._universal
            assert universal is not None
            slices = self._index.slices
            if self._free(root) != free or not alike_roots(
                automaton,
                self._index.trie,
                root,
                before,
                free,
                self._chains,
                self._budget,
                slices[0].rest,
                universal.state,
            ):
                return None
        walk = last[0]
        if len(walk.handover_positions) > len(walk.uncertain) and follow() != last[1]:
            return None
        self.reused += 1
        self.alike += 1
        return last[3]

    def context(
        self,
        split: WideSplit,
        follow: int,
        depth: int,
        canon: tuple[object, ...] | None,
        root: ByteState | None = None,
    ) -> _Context:
        """The context of the walk ``split`` (of ``root``, when given) at ``depth``
        whose tails need only start with a byte of ``follow`` (``-1``: any byte), kept
        under ``canon`` when given."""
        last = self._last
        if (
            canon is None
            and last is not None
            and last[1] == follow
            and last[2] == depth
            and same_walk(last[0], split)
        ):
            self.reused += 1
            return last[3]
        index = self._index
        walk = split
        kept = follow
        if follow != -1:
            pruned = follow_only(index.trie, split, follow)
            if pruned is split:
                kept = -1  # no tail left out: the split serves any context
            split = pruned
        words = index.pack_split(split)
        positions = tuple(split.uncertain.tolist())
        tails = index.group_tails(split.handover_positions, split.handover_offsets)
        entry = _Context.of(words, (), positions, tails, depth, kept)
        if canon is not None:
            index.keep_context(canon, entry)
        else:
            self._last = (walk, follow, depth, entry)  # the walk before pruning
            free = 0 if root is None or root.bottom else self._free(root)
            self._root = (root, free) if root is not None and free else None
        return entry
