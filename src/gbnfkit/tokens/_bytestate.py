"""Parse states over bytes: sets of stacks of program positions, interned, with a step cache.

A stack is a tuple of positions, top last.  After closure every stack's top is a
byte test, the empty stack ``()`` (a complete parse), or -- for *context*
states used while precomputing masks -- the marker stack ``(BOTTOM,)`` meaning
"the frames we looked at are finished; what follows depends on the frames
below them".

Calls in tail position push nothing, so ``x*`` loops run in constant stack depth
and closure always terminates on grammars without left recursion; a closure
that still grows past ``BYTE_STACKS_PER_STACK * Limits.max_stacks`` raises
:class:`LimitError`.  The factor is there because one character-level stack
becomes one byte-level stack per UTF-8 branch of the character class on its top
(a class like ``[^"]`` has 9), so the byte automaton must not give up on a state
the character engine holds within ``max_stacks``.  Expanding one position's calls
(its local closure) may give at most ``Limits.max_expansion_size`` frames, summed over
its stacks, and explore at most that many stacks: a chain of optional calls gives a
stack per depth, so ``n`` frames grow as ``n**2`` (the character engine's bound too).

Transition caches hold state *numbers*, not states (a dict of ints is not tracked by
Python's garbage collector, and no state refers to another).  Matchers of one grammar
share its automaton across threads without a lock on the read path, so a number is
made safe to read and look up at any moment:

* a number is given once: :meth:`ByteAutomaton.intern` and :meth:`ByteAutomaton.adopt`
  take it from a counter (``next()`` on an :func:`itertools.count`, one C call, atomic
  under the GIL) that clearing the intern table does not reset;
* states are found by number in a :class:`Numbering`: the number of its first slot
  (``base``, itself taken from the counter) and a list whose slot ``i`` holds the
  state given the number ``base + i``, or ``None``.  A state is put in the slot of its
  own number, never elsewhere; the list only grows (a clear makes a new
  ``Numbering``; the old one is never emptied), so a reader that took a numbering once
  may index it at any time, and finds the state given that number or nothing;
* every number a cache holds was given to the right next state (read from its ``num``,
  or returned by ``adopt``), and a number not found is a cache miss: the step is made
  again (a step is a function of the stacks, so it gives an equal state).

So a cache hit is always the right state, whatever ran between reading a number and
looking it up, and a clear racing anything else only loses cached work.  Every
interleaving of intern (take the numbering, take a number, put the state in its slot,
then in the table), clear (inside intern when the table is full: a new numbering whose
base is a new number, then empty the table and the clash table; no state is visited),
step (read a number from the cache, look it up in the numbering; on a miss make the
step, intern the result, ``adopt`` it, write its number) and adopt (if the numbering
does not hold the state under its ``num``: take a number, put it there):

1. step reads ``n``, a clear runs, step looks ``n`` up in the new numbering: ``n`` is
   below its base, not found: a miss.
2. the same, and new states are numbered before the lookup: their numbers are new,
   never ``n``: not found, a miss.  (Numbers restarting at 0 after a clear, as the
   fifteenth pass's reverted version had them, give another state here: a wrong mask.)
3. a walk took the numbering, a clear runs: the walk keeps looking numbers up in the
   old numbering, which still holds the states it held (right ones) and misses the new
   ones (``step`` then finds them in the new numbering): work lost, not exactness.
4. two interns of different stacks at once: two ``next()`` calls, two numbers, two
   slots (a list grown by both at once gets a trailing ``None`` more at worst).
5. two interns of the same stacks at once: two equal states, each with its own number;
   the table keeps one, caches naming either are right (as before numbers).
6. intern takes the numbering, a clear runs, intern numbers ``T`` and puts it in the
   old numbering, then in the new table: ``T`` is interned but not numbered in the
   numbering now used; a cache naming its number misses, and the step that misses
   adopts the state intern returns, so ``T`` is numbered again at the first step to it.
   A writer takes the numbering before its number, so the number is above the base:
   its slot is never negative (``Numbering.put`` refuses one anyway).
7. a step that interned its result before a clear writes the result's number after
   it: not found in the new numbering (a miss) unless adopt ran after the clear (then
   a hit on the right state).
8. two steps write one cache entry at once: each a number of a right (equal) state;
   the last write stays.  Two adopts of one state at once: two numbers, two slots,
   both naming it.
9. states kept across a clear (a matcher holds one): their caches keep numbers of the
   old numbering, which miss and are written again as they are stepped.  A clear
   visits no state, so it never iterates a table another thread may be growing.

Memory: a numbering holds the states interned or adopted since the last clear (a slot
per number taken then), so it is bounded with the intern table by
``limits.max_cached_states`` plus the states a matcher kept across a clear and stepped
again.  Per state, ``bits``, ``live``, ``tops`` and ``classes`` are computed from its
stacks alone: a race writes the same value twice.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from itertools import count
from typing import Final, NoReturn

from gbnfkit._errors import LimitError
from gbnfkit._limits import DEFAULT_LIMITS, Limits
from gbnfkit.engine._engine import StackNodes, expansion_too_big
from gbnfkit.tokens._byteprogram import END, TEST, ByteProgram

__all__ = ["BOTTOM", "DEAD", "UNKNOWN", "ByteAutomaton", "ByteState", "Numbering", "Stack"]

BOTTOM: Final = -1
# values of a state's transition cache besides state numbers: no state (the byte is
# rejected), and (as the default of a lookup) not cached
DEAD: Final = -1
UNKNOWN: Final = -2
BYTE_STACKS_PER_STACK: Final = 16
# nested calls a local closure is composed through before it is explored stack by stack
# (a bound on the recursion of ByteAutomaton._composed, not a tuning knob)
_COMPOSE_DEPTH: Final = 64
Stack = tuple[int, ...]


class ByteState:
    """An interned, immutable set of stacks with a per-byte transition cache.

    Attributes:
        stacks: the stacks, distinct, in no particular order (a tuple of tuples of
            ints, top last: the collector stops tracking it after its first collection,
            where a frozenset would be traversed at every full collection for as long as
            the state lives). Two states are equal iff their stacks are the same set.
        complete: a parse of the start rule is complete here.
        bottom: a context state reached the bottom marker.
        num: the state's number (given once: the module's docstring), under which its
            automaton's :attr:`ByteAutomaton.numbering` holds it; ``adopt`` gives a
            state a new one when the numbering does not hold it.
        trans: ``byte -> number of the next state`` or :data:`DEAD` (no state),
            filled lazily (a cache); negative keys ``-k`` hold the state after the
            bytes whose accepting top tests are the set ``k`` of ``tops`` (see
            :meth:`ByteAutomaton.step`).  Numbers, not states: a dict of ints is not
            tracked by Python's garbage collector, and states never refer to each
            other, so no reference cycle holds them (``docs/masks.md``, "Where the
            time goes").  A number the automaton's numbering does not hold is a cache
            miss (the module's docstring: why that is safe across threads).
        bits: the 256-bit set of bytes some stack accepts next (``-1`` until computed,
            see :meth:`ByteAutomaton.allowed_bits`).
        live: the bytes of ``bits`` whose step is known to lead to a state (``-1``
            until computed, see :meth:`ByteAutomaton.live_bits`).
        tops: the distinct byte sets of the stacks' top tests, ``None`` until the
            allowed bytes are first asked for.
        classes: the byte classes, ``None`` until computed (see
            :meth:`ByteAutomaton.classes`).
    """

    __slots__ = (
        "stacks",
        "num",
        "complete",
        "bottom",
        "trans",
        "bits",
        "live",
        "classes",
        "tops",
        "_hash",
        "__weakref__",
    )

    def __init__(
        self,
        stacks: tuple[Stack, ...],
        h: int | None = None,
        ends: Collection[Stack] = (),
        num: int = -1,
    ) -> None:
        if not ends:
            ends = stacks
        # `ends`: the stacks as a set, where the complete parse and the bottom marker
        # are found without a scan (``ByteAutomaton.intern`` passes the one it hashed)
        self.stacks = stacks
        self.num = num
        self.complete = () in ends
        self.bottom = _BOTTOM_STACK in ends
        self.trans: dict[int, int] = {}
        self.bits = -1
        self.live = -1
        self.classes: tuple[int, ...] | None = None
        self.tops: tuple[int, ...] | None = None
        self._hash = hash(frozenset(stacks)) if h is None else h

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return self is other or (
            isinstance(other, ByteState)
            and self._hash == other._hash
            and len(self.stacks) == len(other.stacks)
            and set(self.stacks) == set(other.stacks)
        )

    def __repr__(self) -> str:
        return f"ByteState({sorted(self.stacks)!r})"


class Numbering:
    """States by number, since an automaton's intern table was last cleared: slot ``i``
    of :attr:`states` holds the state given the number ``base + i``, or ``None``.

    Never emptied, only grown (a clear makes a new one), so a reader that took it once
    may look a number up at any time and finds the state given that number or nothing
    (the module's docstring).  ``base`` is a number taken from the counter for no
    state, so slot 0 stays ``None``.
    """

    __slots__ = ("base", "states")

    def __init__(self, base: int) -> None:
        self.base = base
        self.states: list[ByteState | None] = [None]

    def get(self, n: int) -> ByteState | None:
        """The state given the number ``n``, or ``None`` (not a number of this numbering:
        older, or a :data:`DEAD`/:data:`UNKNOWN` marker; or one whose state was put in
        another numbering)."""
        i = n - self.base
        states = self.states
        return states[i] if 0 <= i < len(states) else None

    def put(self, n: int, state: ByteState) -> None:
        """Put ``state``, just given the number ``n``, in its slot (growing the list)."""
        i = n - self.base
        if i < 0:
            return  # taken before this numbering: never, when it was read first
        states = self.states
        while len(states) <= i:
            states.append(None)
        states[i] = state


class ByteAutomaton:
    """Closure, stepping and interning of :class:`ByteState` for one program.

    Every state it made is numbered (its ``num``, never given to another state) and
    found by number in :attr:`numbering`; transition caches hold those numbers.  The
    intern table is bounded by ``limits.max_cached_states`` and by the frames of its
    states' stacks, ``limits.max_cached_frames``; when full it is cleared
    and a new numbering begins (states stay valid and equal by their stacks; only
    cached work is lost: a cached number the numbering does not hold is a miss), so
    memory stays bounded; a state made before (a matcher may hold one) is numbered
    again when a step leads to it or a walk caches its loops (:meth:`adopt`).  The
    intern table is keyed by
    the hash of the stacks' set, checked against the state found (a state whose hash
    another holds goes to a second table keyed by the set): a frozenset of the stacks
    is made for each lookup (cheap from the set a step builds, whose element hashes it
    reuses) but not kept, so the collector does not traverse one per live state.
    """

    def __init__(
        self, program: ByteProgram, limits: Limits = DEFAULT_LIMITS, names: tuple[str, ...] = ()
    ) -> None:
        self.program = program
        self.limits = limits
        self._names = names  # the rules' names (the grammar's first), for errors
        self._kind = program.kind
        self._arg = program.arg
        self._rules = program.rules
        self._max_stacks = BYTE_STACKS_PER_STACK * limits.max_stacks
        self._max_depth = limits.max_stack_depth
        # numbers come from a counter a clear does not reset; the states numbered since
        # the last clear (the intern table's, and older ones adopted since) by number
        self._numbers: Iterator[int] = count()
        self.numbering = Numbering(next(self._numbers))
        self._intern: dict[int, ByteState] = {}  # hash of the stacks' set -> state
        self._frames = 0  # the frames of the interned states' stacks
        self._clashes: dict[frozenset[Stack], ByteState] = {}  # the hash held by another
        self._local: dict[int, tuple[tuple[Stack, ...], bool]] = {}
        self._firsts: dict[int, tuple[int, bool]] = {}  # position -> its closure's bytes, pops
        self.initial = self.state_of([(program.root,)], call=True)

    # -- building states ----------------------------------------------------
    def state_of(self, stacks: list[Stack], *, call: bool = False) -> ByteState:
        """The interned closure of ``stacks`` (``call``: each top is a rule index to start)."""
        out: set[Stack] = set()
        for stack in stacks:
            if call:
                for start in self._rules[stack[-1]]:
                    self._close(stack[:-1] + (start,), out)
            else:
                self._close(stack, out)
        return self.intern(out)

    def intern(self, stacks: Collection[Stack]) -> ByteState:
        """The state of ``stacks`` (distinct stacks, in any order), made once."""
        key = frozenset(stacks)
        h = hash(key)
        table = self._intern
        state = table.get(h)
        clash = state is not None
        if state is not None:
            if len(state.stacks) == len(key) and key.issuperset(state.stacks):
                return state
            state = self._clashes.get(key)
            if state is not None:
                return state
        frames = 0
        for stack in key:
            frames += len(stack)
        if len(table) + len(self._clashes) >= self.limits.max_cached_states or \
                self._frames + frames > self.limits.max_cached_frames:
            # the transitions cached so far name states the new numbering does not
            # hold: misses from now on (no state is visited: another thread may be
            # adding one)
            self.numbering = Numbering(next(self._numbers))
            table.clear()
            self._clashes.clear()
            self._frames = 0
            clash = False
        self._frames += frames
        numbering = self.numbering  # (taken before the number: the number is above its base)
        n = next(self._numbers)
        state = ByteState(tuple(key), h, key, n)
        numbering.put(n, state)
        if clash:
            self._clashes[key] = state
        else:
            table[h] = state
        return state

    def _close(self, stack: Stack, out: set[Stack]) -> None:
        """Add the closure of ``stack`` to ``out`` using each position's local closure."""
        local = self._local
        while True:
            if not stack:
                out.add(stack)
                break
            p = stack[-1]
            if p < 0:
                out.add(stack)
                break
            entry = local.get(p)
            if entry is None:
                entry = self._local_closure(p)
            suffixes, pops = entry
            base = stack[:-1]
            self._grow(base, suffixes, out)
            if not pops:
                break
            stack = base
        if len(out) > self._max_stacks:
            raise LimitError(
                "too many parse stacks (ambiguous grammar)",
                limit="max_stacks",
                value=self.limits.max_stacks,
            )

    def _grow(self, base: Stack, suffixes: tuple[Stack, ...], out: set[Stack]) -> None:
        """Add ``base`` grown by each of ``suffixes`` (a position's local closure) to
        ``out``, refusing a stack of more than ``limits.max_stack_depth`` frames."""
        for suffix in suffixes:
            grown = base + suffix
            if len(grown) > self._max_depth:
                self._too_deep()
            out.add(grown)

    def _too_deep(self) -> NoReturn:
        """Refuse a stack of more than ``limits.max_stack_depth`` frames."""
        raise LimitError(
            f"a parse stack would hold more than {self._max_depth:,} frames (the input "
            "nests too deeply: every state copies its stacks, so depth costs its square "
            "in time and memory)",
            limit="max_stack_depth",
            value=self._max_depth,
        )

    def first_bits(self, stack: Stack) -> tuple[int, bool]:
        """The bytes the closure of ``stack`` accepts next and whether it holds the
        bottom marker: ``allowed_bits`` and ``bottom`` of ``state_of([stack])``, read
        from each position's local closure without building the state."""
        firsts = self._firsts
        bits = 0
        while stack:
            p = stack[-1]
            if p < 0:
                return bits, True
            got = firsts.get(p)
            if got is None:
                got = self._first_of(p)
            bits |= got[0]
            if not got[1]:
                break
            stack = stack[:-1]
        return bits, False

    def first_of(self, p: int) -> tuple[int, bool]:
        """``first_bits((BOTTOM, p))`` for a position ``p``: the bytes its closure
        accepts next and whether it can finish."""
        got = self._firsts.get(p)
        return self._first_of(p) if got is None else got

    def _first_of(self, p: int) -> tuple[int, bool]:
        entry = self._local.get(p)
        if entry is None:
            entry = self._local_closure(p)
        first = 0
        for suffix in entry[0]:
            first |= self._arg[suffix[-1]]
        got = self._firsts[p] = (first, entry[1])
        return got

    def _local_closure(self, p: int) -> tuple[tuple[Stack, ...], bool]:
        """Closure of position ``p`` alone: frames it leaves on top (distinct, in no
        particular order), and whether it can finish.

        Composed from the closures of the positions it reaches, each kept
        (:meth:`_composed`): a rule called from many places is closed once, not once per
        call.  A chain of calls deeper than ``_COMPOSE_DEPTH`` (or a cycle: left
        recursion, which the grammar checks refuse) is explored stack by stack instead.
        """
        entry = self._composed(p, 0)
        if entry is None:
            entry = self._explore(p)
            self._local[p] = entry
        return entry

    def _composed(self, p: int, depth: int) -> tuple[tuple[Stack, ...], bool] | None:
        """The local closure of ``p`` from those of the positions it reaches (kept in
        ``_local``): a test is its own, an end finishes, a call is the closures of its
        rule's alternatives under the frame after the call (none in tail position) and,
        where they can finish, the closure of that frame (or it finishes, in tail
        position).  The same set of stacks as :meth:`_explore` from ``(BOTTOM, p)``.
        ``None`` past ``_COMPOSE_DEPTH`` nested calls (a cycle of calls gets there too);
        what was composed before stays kept."""
        got = self._local.get(p)
        if got is not None:
            return got
        kind = self._kind
        k = kind[p]
        if k == TEST:
            entry: tuple[tuple[Stack, ...], bool] = (((p,),), False)
        elif k == END:
            entry = ((), True)
        else:
            if depth >= _COMPOSE_DEPTH:
                return None
            nxt = p + 1
            tail = kind[nxt] == END
            out: set[Stack] = set()
            # in tail position the stacks are the alternatives' own: while one
            # alternative only has any, its tuple is kept as it is (no set, no copy)
            only: tuple[Stack, ...] = ()
            pops = False
            after: tuple[tuple[Stack, ...], bool] | None = None
            local = self._local
            for start in self._rules[self._arg[p]]:
                sub = local.get(start)
                if sub is None:
                    sub = self._composed(start, depth + 1)
                    if sub is None:
                        return None
                if tail:
                    stacks = sub[0]
                    if stacks and not only and not out:
                        only = stacks
                    elif stacks:
                        if only:
                            out.update(only)
                            only = ()
                        out.update(stacks)
                else:
                    for suffix in sub[0]:
                        out.add((nxt,) + suffix)
                if sub[1]:
                    if tail:
                        pops = True
                    elif after is None:
                        after = local.get(nxt)
                        if after is None:
                            after = self._composed(nxt, depth + 1)
                            if after is None:
                                return None
                        out.update(after[0])
                        pops = pops or after[1]
            if len(out) > self._max_stacks:
                raise LimitError(
                    "too many parse stacks (ambiguous grammar)",
                    limit="max_stacks",
                    value=self.limits.max_stacks,
                )
            if out:
                # (each part was checked; a frame more on each stack may pass the bound)
                size = 0
                for s in out:
                    size += len(s)
                if size > self.limits.max_expansion_size:
                    self._too_big(p, "stack frames")
            entry = (only if only else tuple(out), pops)
        self._local[p] = entry
        return entry

    def _explore(self, p0: int) -> tuple[tuple[Stack, ...], bool]:
        """The local closure of ``p0`` explored stack by stack from ``(BOTTOM, p0)``,
        each stack an interned node (:class:`~gbnfkit.engine._engine.StackNodes`): a
        move costs one node whatever the depth, and only the stacks found are made into
        tuples, once their frames are known to stay within
        ``limits.max_expansion_size``.  (Exploring tuples copied every stack at every
        move: a chain of ``n`` calls ``r_i ::= r_{i+1} "x"``, whose closure is one stack
        of ``n`` frames, cost ``n**2``, 26 s at 32,000 rules.)
        """
        kind = self._kind
        arg = self._arg
        rules = self._rules
        limit = self._max_stacks
        max_size = self.limits.max_expansion_size
        nodes = StackNodes(BOTTOM, len(kind))
        up, pos, depth, seen = nodes.up, nodes.pos, nodes.depth, nodes.seen
        visits = 0
        size = 0
        found: list[int] = []
        pops = False
        todo = [nodes.node(0, p0)]
        while todo:
            n = todo.pop()
            if seen[n]:
                continue
            seen[n] = 1
            visits += 1
            p = pos[n]
            if p < 0:
                pops = True
                continue
            k = kind[p]
            if k == TEST:
                found.append(n)
                size += depth[n]
                if size > max_size:
                    self._too_big(p0, "stack frames")
            elif k == END:
                todo.append(up[n])
            else:
                if visits > max_size:
                    self._too_big(p0, "stacks explored")
                nxt = p + 1
                base = up[n] if kind[nxt] == END else nodes.node(up[n], nxt)
                for start in rules[arg[p]]:
                    todo.append(nodes.node(base, start))
        if len(found) + pops > limit:
            raise LimitError(
                "too many parse stacks (ambiguous grammar)",
                limit="max_stacks",
                value=self.limits.max_stacks,
            )
        return tuple([nodes.frames(n) for n in found]), pops

    def _too_big(self, p: int, what: str) -> None:
        """Refuse the expansion of the call at position ``p`` (only a call's expansion
        grows) past ``limits.max_expansion_size``, naming the rule it calls."""
        rule = self._arg[p]
        names = self._names
        name = names[rule] if 0 <= rule < len(names) else f"#{rule}"
        raise expansion_too_big(name, what, self.limits)

    # -- stepping -----------------------------------------------------------
    def step(self, state: ByteState, byte: int) -> ByteState | None:
        """The state after ``byte``, or ``None`` if no stack accepts it (cached).

        Bytes accepted by the same stacks lead to the same state, so a byte whose
        accepting stacks were already stepped from ``state`` costs no closure and no
        interning: the result is also kept in ``state.trans`` under ``-k``, ``k`` having
        bit ``i`` set when the byte set ``state.tops[i]`` accepts the byte.

        A cached number that :attr:`numbering` does not hold is a miss: the step is
        made again (the module's docstring).
        """
        trans = state.trans
        numbering = self.numbering
        got = trans.get(byte, UNKNOWN)
        result = numbering.get(got)
        if result is not None:
            return result
        if got == DEAD:
            return None
        n = DEAD
        tops = state.tops
        if tops is None:
            tops = self._tops(state)
        at = 1 << byte
        key = 0
        bit = 1
        for mask in tops:
            if mask & at:
                key |= bit
            bit <<= 1
        if key:
            n = trans.get(-key, UNKNOWN)
            result = numbering.get(n)
            if result is None:
                n = DEAD
                kind = self._kind
                arg = self._arg
                local = self._local
                out: set[Stack] = set()
                for s in state.stacks:
                    if s:
                        p = s[-1]
                        if p >= 0 and arg[p] & at and kind[p] == TEST:
                            p += 1
                            if kind[p] == TEST:
                                # a test's closure is itself: no local closure, no copy
                                out.add(s[:-1] + (p,))
                                continue
                            entry = local.get(p)
                            if entry is None:
                                entry = self._local_closure(p)
                            base = s[:-1]
                            self._grow(base, entry[0], out)
                            if entry[1]:
                                self._close(base, out)
                if len(out) > self._max_stacks:
                    raise LimitError(
                        "too many parse stacks (ambiguous grammar)",
                        limit="max_stacks",
                        value=self.limits.max_stacks,
                    )
                if out:
                    result = self.intern(out)
                    # numbered in the numbering (it may be a state interned while
                    # another thread cleared the table: the module's docstring, case 6)
                    n = trans[-key] = self.adopt(result)
        trans[byte] = n
        return result

    def adopt(self, state: ByteState) -> int:
        """The number under which :attr:`numbering` holds ``state``: its own, or, when
        the numbering does not hold it (it was made before the intern table was last
        cleared), a new one from the counter, put in the numbering."""
        numbering = self.numbering  # (taken before the number: the number is above its base)
        n = state.num
        if numbering.get(n) is not state:
            n = next(self._numbers)
            numbering.put(n, state)
            state.num = n
        return n

    def numbered(self, n: int) -> ByteState | None:
        """The state given the number ``n`` if :attr:`numbering` holds it (a cache hit),
        else ``None``."""
        return self.numbering.get(n)

    def loop(self, state: ByteState, bits: int) -> None:
        """Cache that each byte of ``bits`` leads from ``state`` back to itself (the
        caller knows it)."""
        n = self.adopt(state)
        trans = state.trans
        while bits:
            low = bits & -bits
            bits ^= low
            trans[low.bit_length() - 1] = n

    def _tops(self, state: ByteState) -> tuple[int, ...]:
        """The distinct byte sets of the top tests of ``state`` (also sets ``state.bits``,
        their union)."""
        arg = self._arg
        kind = self._kind
        masks: set[int] = set()
        for s in state.stacks:
            if s:
                p = s[-1]
                if p >= 0 and kind[p] == TEST:
                    masks.add(arg[p])
        bits = 0
        for mask in masks:
            bits |= mask
        state.bits = bits
        tops = state.tops = tuple(masks)
        return tops

    def classes(self, state: ByteState) -> tuple[int, ...]:
        """The byte classes of ``state`` (cached): disjoint 256-bit sets covering the
        bytes some stack accepts, such that the bytes of one class are accepted by the
        same stacks and so lead to the same state.

        Found by refining the allowed bytes by each top test's byte set; a whole-trie
        walk steps one byte per class instead of one per (state, byte) pair met: a
        string body's ~200 bytes fall into a handful of classes.
        """
        classes = state.classes
        if classes is None:
            tops = state.tops
            if tops is None:
                tops = self._tops(state)
            classes = state.classes = _refine(self.allowed_bits(state), tops)
        return classes

    def feed(self, state: ByteState, data: bytes) -> ByteState | None:
        """The state after all of ``data``, or ``None`` as soon as a byte is rejected."""
        step = self.step
        numbering = self.numbering
        s = state
        for byte in data:
            nxt = numbering.get(s.trans.get(byte, UNKNOWN))
            if nxt is None:
                # not cached, rejected (DEAD), or a number no longer held: `step` knows
                nxt = step(s, byte)
                if nxt is None:
                    return None
            s = nxt
        return s

    def allowed_bits(self, state: ByteState) -> int:
        """The 256-bit set of bytes that some stack of ``state`` accepts next (cached)."""
        if state.bits < 0:
            self._tops(state)
        return state.bits

    def live_bits(self, state: ByteState) -> int:
        """Bytes after which ``state`` certainly has a next state (cached): those of a
        stack's top test whose next frames' closure is not empty, read from the local
        closures already computed (a position whose local closure is not known yet
        leaves its bytes out rather than compute it).  A subset of
        :meth:`allowed_bits`: a walk accepts a token ending in such a byte without
        making the state after it, and steps by the others (``docs/masks.md``,
        "Trie leaves")."""
        live = state.live
        if live >= 0:
            return live
        kind = self._kind
        arg = self._arg
        local = self._local
        live = 0
        for s in state.stacks:
            if not s:
                continue
            p = s[-1]
            if p < 0 or kind[p] != TEST:
                continue
            bits = arg[p]
            if not bits & ~live:
                continue
            # the closure of the stack after the byte: s[:-1] + (p + 1,), its frames
            # popped one by one while they can finish
            q = p + 1
            below = len(s) - 1
            while True:
                if kind[q] == TEST:
                    live |= bits
                    break
                entry = local.get(q)
                if entry is None:
                    break  # not known without closing it: left to a step
                if entry[0]:
                    live |= bits
                    break
                if not entry[1]:
                    break  # nothing reached from here: this stack dies
                if not below or s[below - 1] < 0:
                    live |= bits  # the complete parse or the bottom marker
                    break
                below -= 1
                q = s[below]
        state.live = live
        return live

    def allowed_bytes(self, state: ByteState) -> list[int]:
        """Bytes that some stack of ``state`` accepts next."""
        bits = self.allowed_bits(state)
        return [b for b in range(256) if (bits >> b) & 1]


_BOTTOM_STACK: Stack = (BOTTOM,)


def _refine(allowed: int, tops: tuple[int, ...]) -> tuple[int, ...]:
    """The partition of ``allowed`` (the union of ``tops``) into the sets of bytes that
    belong to the same sets of ``tops``: :meth:`ByteAutomaton.classes`.

    A top test of one byte (a keyword's next letter, an operator: 11-14 of the 15-18
    tests of c's states after an identifier) makes that byte a class of its own, so
    those bytes are taken out at the end, each alone, and only the wider tests refine
    the parts one by one; a part a test does not cut is kept as it is.  (Refining by
    every test, each part into ``c & m`` and ``c & ~m``, cost 16 µs compiled for such a
    state, most of a fresh state's classes in a wide walk.)
    """
    singles = 0
    parts = [allowed] if allowed else []
    for m in tops:
        if not m & (m - 1):
            singles |= m
        elif m != allowed:
            refined: list[int] = []
            for c in parts:
                x = c & m
                if x and x != c:
                    refined.append(x)
                    refined.append(c ^ x)
                else:
                    refined.append(c)
            parts = refined
    if not singles:
        return tuple(parts)
    out: list[int] = []
    for c in parts:
        x = c & singles
        if not x:
            out.append(c)
            continue
        if x != c:
            out.append(c ^ x)
        while x:
            low = x & -x
            out.append(low)
            x ^= low
    return tuple(out)
