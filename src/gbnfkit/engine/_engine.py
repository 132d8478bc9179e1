"""The pushdown automaton over a :class:`~gbnfkit.engine._program.Program`.

State internals (stable; the token-mask layer reads them)
---------------------------------------------------------
A parse *stack* is a chain of interned :class:`Node` objects ``(pos, parent)``: ``pos`` is
the program position on top of the stack and ``parent`` the rest of the stack, so stacks
share tails. ``Engine.empty`` is the empty stack (``pos == -1``, ``parent is None``); a
stack that becomes empty means the start rule is completely matched. Within one cache
generation, equal stacks are the same ``Node`` object.

A :class:`Core` is an interned, de-duplicated frozenset of stacks (``Core.stacks``), as in
llama.cpp after ``llama_grammar_advance_stack``: every stack's top is a ``CHAR`` /
``CHAR_NOT`` position, or the stack is empty. Rule references are expanded with a
worklist and a ``seen`` set (so nullable loops such as ``("a"?)*`` terminate); a
reference that is the last element of its sequence pushes no continuation (tail call).
The expansion of one frame does not depend on the frames below it, so it is computed
once per position (``Engine.template``) and applied to any rest of the stack; when the
frame can finish, the rest of the stack is expanded in turn (iteratively).
``Core.groups`` lists ``(pos, nodes)`` for each distinct character position on top;
``Core.complete`` says whether the empty stack is present; ``Core.next`` is the
transition cache (one-character ``str`` -> next ``Core``, or ``Engine.dead``).

Caches (``Node.closure``, ``Node.after``, ``Core.next`` and the intern tables) belong
to the engine, i.e. to one ``Grammar``. When the number of interned cores exceeds
``Limits.max_cached_states`` (or nodes exceed eight times that, or cached transitions
sixteen times that), the tables are dropped and a new *generation* starts; cores of an
older generation still work (they are re-interned, "migrated", into the current
generation when stepped from or compared). ``Engine.template`` results depend only on
the program and are dropped with the rest.

Public entry points for other layers: ``Engine.start()`` (initial core),
``Engine.step(core, ch)`` (one character, cached), ``Engine.run(core, text)``,
``Engine.allowed(core)`` / ``Engine.allowed_ranges(core)``, ``Engine.migrate(core)``.
A :class:`~gbnfkit.engine._state.State` is ``State(grammar, grammar.engine, core, pending)``.

Semantics follow llama.cpp's ``llama_grammar_accept``: a stack whose top matches the
character advances (pops finished sequences) and is expanded again; the result is
empty iff the character is rejected. ``Limits.max_stacks`` bounds the stacks one
expansion or one state may hold; ``Limits.max_expansion_size`` the frames one position's
expansion may give (summed over its chains) and the stacks it may explore.
"""

from __future__ import annotations

from bisect import bisect_right

from gbnfkit._errors import LimitError
from gbnfkit._limits import Limits
from gbnfkit.engine._program import CHAR_NOT, END, REF, Program
from gbnfkit.engine._ranges import Ranges, complement, intersect, union
from gbnfkit.engine._rules import CharExcludeRule, CharRule, EndRule

__all__ = ["Core", "Engine", "Node", "StackNodes", "expansion_too_big"]

_EMPTY_HASH = hash(("gbnfkit-empty-stack",))
AllowedRule = CharRule | CharExcludeRule | EndRule


class Node:
    """One interned stack: ``pos`` on top of ``parent`` (``None`` for the empty stack)."""

    __slots__ = ("after", "closure", "h", "parent", "pos")

    def __init__(self, pos: int, parent: Node | None, h: int) -> None:
        self.pos = pos
        self.parent = parent
        self.h = h  # structural hash, equal for equal stacks in any generation
        self.closure: frozenset[Node] | None = None  # expansion of this stack
        self.after: frozenset[Node] | None = None  # expansion after the top char matched

    def positions(self) -> tuple[int, ...]:
        """Positions from the top of the stack down."""
        out = []
        node: Node | None = self
        while node is not None and node.parent is not None:
            out.append(node.pos)
            node = node.parent
        return tuple(out)


class StackNodes:
    """The stacks met while one frame is expanded, each an interned node: node ``i`` is
    position ``pos[i]`` over node ``up[i]``; node 0 is what lies below the frame (an
    opaque rest, or a bottom marker).  Pushing, popping or replacing the top frame is one
    node whatever the depth, and equal stacks are the same node, so a stack met twice is
    found in ``seen`` without comparing tuples.  Only the stacks an expansion keeps are
    made into tuples (:meth:`frames`).  (Exploring tuples copied the whole stack at every
    call: a chain of ``n`` rules each calling the next cost ``n**2``.)"""

    __slots__ = ("_ids", "_stride", "depth", "pos", "seen", "up")

    def __init__(self, bottom: int, stride: int) -> None:
        # ``stride``: more than any position (a node's key is ``base * stride + pos``)
        self._stride = stride
        self._ids: dict[int, int] = {}
        self.up: list[int] = [-1]
        self.pos: list[int] = [bottom]
        self.depth: list[int] = [0]
        self.seen = bytearray(1)

    def node(self, base: int, p: int) -> int:
        """The node of position ``p`` over node ``base``."""
        key = base * self._stride + p
        got = self._ids.get(key)
        if got is None:
            got = len(self.pos)
            self._ids[key] = got
            self.up.append(base)
            self.pos.append(p)
            self.depth.append(self.depth[base] + 1)
            self.seen.append(0)
        return got

    def frames(self, n: int) -> tuple[int, ...]:
        """The positions of node ``n``'s stack above node 0, bottom first."""
        up = self.up
        pos = self.pos
        out: list[int] = []
        while n:
            out.append(pos[n])
            n = up[n]
        out.reverse()
        return tuple(out)


class Core:
    """An interned set of expanded stacks (see the module docstring)."""

    __slots__ = ("_shash", "allowed", "complete", "gen", "groups", "migrated", "next", "ranges",
                 "stacks")

    def __init__(self, stacks: frozenset[Node], gen: int, empty: Node) -> None:
        self.stacks = stacks
        self.gen = gen
        self.complete = empty in stacks
        self._shash: int | None = None
        by_pos: dict[int, list[Node]] = {}
        for n in stacks:
            if n is not empty:
                by_pos.setdefault(n.pos, []).append(n)
        self.groups: tuple[tuple[int, tuple[Node, ...]], ...] = tuple(
            (p, tuple(ns)) for p, ns in sorted(by_pos.items())
        )
        self.next: dict[str, Core] = {}
        self.migrated: Core | None = None
        self.allowed: tuple[AllowedRule, ...] | None = None
        self.ranges: Ranges | None = None

    @property
    def shash(self) -> int:
        """Structural hash of the stacks (equal for equal stacks in any generation)."""
        h = self._shash
        if h is None:
            h = self._shash = hash(frozenset(n.h for n in self.stacks))
        return h

    def structure(self) -> frozenset[tuple[int, ...]]:
        """The stacks as position tuples (top first): generation-independent."""
        return frozenset(n.positions() for n in self.stacks)


class Engine:
    """Owns the intern tables and caches of one grammar's program."""

    def __init__(self, program: Program, limits: Limits) -> None:
        self.program = program
        self.limits = limits
        self._kinds = program.kinds
        self._alts = program.rule_alts
        self._target = program.target
        self._ranges = program.ranges
        # per-position tables of character stepping, built at the first step (a grammar
        # used only through the token layer never steps this engine)
        self._neg: tuple[bool, ...] | None = None
        self._lows: tuple[tuple[int, ...], ...] | None = None
        self.gen = 0
        self.empty = Node(-1, None, _EMPTY_HASH)
        self.empty.closure = frozenset((self.empty,))
        self._nodes: dict[tuple[int, Node], Node] = {}
        self._cores: dict[frozenset[Node], Core] = {}
        self._transitions = 0
        self._templates: dict[int, tuple[tuple[tuple[int, ...], ...], bool]] = {}
        self.dead = Core(frozenset(), -1, self.empty)
        self._start: Core | None = None

    def _char_tables(self) -> tuple[tuple[bool, ...], tuple[tuple[int, ...], ...]]:
        """Whether each position is negated, and the lower bounds of its ranges (for
        binary search); computed once, on first use."""
        neg, lows = self._neg, self._lows
        if neg is None or lows is None:
            neg = self._neg = tuple(k == CHAR_NOT for k in self._kinds)
            lows = self._lows = tuple(tuple(lo for lo, _ in r) for r in self._ranges)
        return neg, lows

    # -- interning ---------------------------------------------------------------------
    def node(self, pos: int, parent: Node) -> Node:
        """The interned stack ``pos`` on top of ``parent``."""
        key = (pos, parent)
        n = self._nodes.get(key)
        if n is None:
            n = self._nodes[key] = Node(pos, parent, hash((pos, parent.h)))
        return n

    def core(self, stacks: frozenset[Node]) -> Core:
        """The interned core of ``stacks`` (all expanded)."""
        c = self._cores.get(stacks)
        if c is None:
            if len(stacks) > self.limits.max_stacks:
                self._too_many(len(stacks))
            c = self._cores[stacks] = Core(stacks, self.gen, self.empty)
        return c

    def _too_many(self, count: int) -> None:
        raise LimitError(
            f"a parse state needs more than {self.limits.max_stacks} stacks ({count} so far); "
            "the grammar is very ambiguous here",
            limit="max_stacks",
            value=self.limits.max_stacks,
        )

    def _maybe_drop(self) -> None:
        limit = self.limits.max_cached_states
        if (
            len(self._cores) < limit
            and len(self._nodes) < 8 * limit
            and self._transitions < 16 * limit
        ):
            return
        for c in self._cores.values():
            c.next = {}
        for n in self._nodes.values():
            n.closure = n.after = None
        self.gen += 1
        self._nodes = {}
        self._cores = {}
        self._transitions = 0
        self._templates = {}
        self._start = None

    def migrate(self, core: Core) -> Core:
        """``core`` re-interned into the current generation (itself if already there)."""
        if core.gen == self.gen or core is self.dead:
            return core
        m = core.migrated
        if m is not None and m.gen == self.gen:
            return m
        new = set()
        for n in core.stacks:
            cur = self.empty
            for pos in reversed(n.positions()):
                cur = self.node(pos, cur)
            new.add(cur)
        m = self.core(frozenset(new))
        core.migrated = m
        return m

    @property
    def cached_states(self) -> int:
        """Number of cores interned in the current generation."""
        return len(self._cores)

    # -- expansion -----------------------------------------------------------------------
    def template(self, q: int) -> tuple[tuple[tuple[int, ...], ...], bool]:
        """Expansion of the one-frame stack ``[q]`` over an opaque rest of the stack.

        Returns ``(chains, pops)``: ``chains`` are the expanded stacks that stay above the
        rest (positions bottom first, a character position on top) and ``pops`` says
        whether the frame can finish (then the rest itself is expanded too). Cached per
        position; it does not depend on the rest of the stack.
        """
        got = self._templates.get(q)
        if got is not None:
            return got
        kinds, alts, target = self._kinds, self._alts, self._target
        if kinds[q] != REF:  # a character position is its own expansion
            got = self._templates[q] = (((q,),), False)
            return got
        max_stacks = self.limits.max_stacks
        max_size = self.limits.max_expansion_size
        # the stacks met, as nodes over node 0 (the rest); a chain is a stack with a
        # character position on top
        nodes = StackNodes(-1, len(kinds))
        up, pos, depth, seen = nodes.up, nodes.pos, nodes.depth, nodes.seen
        found: list[int] = []
        size = 0
        visits = 0
        pops = False
        first = nodes.node(0, q)
        seen[first] = 1
        todo = [first]
        while todo:
            n = todo.pop()
            p = pos[n]
            visits += 1
            if kinds[p] != REF:
                found.append(n)
                size += depth[n]
                if len(found) > max_stacks:
                    self._too_many(len(found))
                if size > max_size:
                    self._too_big(q, "stack frames")
                continue
            if visits > max_size:
                self._too_big(q, "stacks explored")
            rest = up[n]
            if kinds[p + 1] != END:
                rest = nodes.node(rest, p + 1)
            for a in alts[target[p]]:
                nxt = rest if kinds[a] == END else nodes.node(rest, a)
                if not nxt:
                    pops = True
                elif not seen[nxt]:
                    seen[nxt] = 1
                    todo.append(nxt)
        got = self._templates[q] = (tuple(nodes.frames(n) for n in found), pops)
        return got

    def _too_big(self, q: int, what: str) -> None:
        program = self.program
        rule = program.target[q] if self._kinds[q] == REF else program.pos_rule[q]
        raise expansion_too_big(program.rule_names[rule], what, self.limits)

    def closure(self, start: Node) -> frozenset[Node]:
        """Expand rule references on top of ``start`` (llama_grammar_advance_stack)."""
        c = start.closure
        if c is not None:
            return c
        empty = self.empty
        node = self.node
        template = self.template
        out: set[Node] = set()
        frame = start
        while True:
            parent = frame.parent
            if parent is None:  # the empty stack: a complete parse
                out.add(empty)
                break
            chains, pops = template(frame.pos)
            for chain in chains:
                n = parent
                for pos in chain:
                    n = node(pos, n)
                out.add(n)
            if not pops:
                break
            cached = parent.closure
            if cached is not None:
                out |= cached
                break
            frame = parent  # the frame finished: expand the rest of the stack
        if len(out) > self.limits.max_stacks:
            self._too_many(len(out))
        fs = frozenset(out)
        start.closure = fs
        return fs

    def _after(self, n: Node) -> frozenset[Node]:
        a = n.after
        if a is None:
            parent = n.parent
            assert parent is not None
            p1 = n.pos + 1
            nxt = parent if self._kinds[p1] == END else self.node(p1, parent)
            a = n.after = self.closure(nxt)
        return a

    def start(self) -> Core:
        """The initial core: every alternative of the start rule, expanded."""
        if self._start is not None and self._start.gen == self.gen:
            return self._start
        self._maybe_drop()
        out: set[Node] = set()
        for a in self._alts[self.program.root]:
            n = self.empty if self._kinds[a] == END else self.node(a, self.empty)
            out |= self.closure(n)
        self._start = self.core(frozenset(out))
        return self._start

    def step(self, core: Core, ch: str) -> Core:
        """The core after ``ch`` (``self.dead`` if rejected); caches the transition."""
        self._maybe_drop()
        cache = True
        if core.gen != self.gen:
            core = self.migrate(core)
            cache = False
        cp = ord(ch)
        out: set[Node] = set()
        neg, lows = self._char_tables()
        ranges = self._ranges
        # a lone surrogate is no character (UTF-8 cannot encode it, no token holds it):
        # it is refused as the bytes path refuses its encoding, even by `.` or `[^a]`
        groups: tuple[tuple[int, tuple[Node, ...]], ...]
        groups = () if 0xD800 <= cp <= 0xDFFF else core.groups
        for p, nodes in groups:
            rs = ranges[p]
            i = bisect_right(lows[p], cp) - 1
            inside = i >= 0 and rs[i][1] >= cp
            if inside != neg[p]:
                for n in nodes:
                    out |= self._after(n)
        result = self.core(frozenset(out)) if out else self.dead
        if cache:
            core.next[ch] = result
            self._transitions += 1
        return result

    def run(self, core: Core, text: str) -> tuple[Core, int]:
        """Feed ``text``: ``(final core, -1)``, or ``(last live core, index)`` when rejected."""
        step = self.step
        dead = self.dead
        cur = core
        for ch in text:
            nxt = cur.next.get(ch)
            if nxt is None:
                nxt = step(cur, ch)
            if nxt is dead:
                break
            cur = nxt
        else:
            return cur, -1
        # rejected: find the index with a second (cached) pass
        cur = core
        for i, ch in enumerate(text):
            nxt = cur.next.get(ch)
            if nxt is None:
                nxt = step(cur, ch)
            if nxt is dead:
                return cur, i
            cur = nxt
        raise AssertionError("unreachable: rejection not reproduced")  # pragma: no cover

    # -- what is allowed -----------------------------------------------------------------
    def allowed_ranges(self, core: Core) -> Ranges:
        """Every code point some stack of ``core`` accepts next."""
        r = core.ranges
        if r is None:
            self._compute_allowed(core)
            r = core.ranges
            assert r is not None
        return r

    def allowed(self, core: Core) -> tuple[AllowedRule, ...]:
        """Merged rules (see ``State.allowed``)."""
        a = core.allowed
        if a is None:
            self._compute_allowed(core)
            a = core.allowed
            assert a is not None
        return a

    def _compute_allowed(self, core: Core) -> None:
        positive: Ranges = ()
        excluded: Ranges | None = None
        pos_parts = []
        neg = self._char_tables()[0]
        for p, _ in core.groups:
            if neg[p]:
                rs = self._ranges[p]
                excluded = rs if excluded is None else intersect(excluded, rs)
            else:
                pos_parts.append(self._ranges[p])
        positive = union(*pos_parts)
        rules: list[AllowedRule] = []
        if excluded is None:
            if positive:
                rules.append(CharRule(positive))
            core.ranges = positive
        else:
            inside = intersect(positive, excluded)
            if inside:
                rules.append(CharRule(inside))
            rules.append(CharExcludeRule(excluded))
            core.ranges = union(inside, complement(excluded))
        if core.complete:
            rules.append(EndRule())
        core.allowed = tuple(rules)


def expansion_too_big(rule: str, what: str, limits: Limits) -> LimitError:
    """The error of an expansion of rule ``rule`` past ``limits.max_expansion_size``
    (``what``: stack frames, or stacks explored)."""
    return LimitError(
        f"expanding rule {rule!r} needs more than {limits.max_expansion_size:,} {what} "
        "(a long chain of rules each calling the next, some of them optional?)",
        limit="max_expansion_size",
        value=limits.max_expansion_size,
    )
