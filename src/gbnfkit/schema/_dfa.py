"""Regular languages as small automata: NFA -> DFA, products, complements.

Used where a grammar needs a Boolean combination of patterns: "a string that does NOT
match these patterns" (object keys outside ``patternProperties``, ``not: {pattern}``),
several patterns at once, a pattern with ``minLength``/``maxLength`` (the product with a
character counter).  Automata are built over decoded characters and emitted through a
class emitter, so JSON escapes stay exact.  Past the state limits (``SchemaLimits``) the
functions raise :class:`TooBig` naming the limit, and the caller refuses.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from gbnfkit.schema._gbnf import RuleTable, alt, seq
from gbnfkit.schema._regex_parse import ANY_CHAR, Branch, Cat, Chars, Node, Or, Rep

if TYPE_CHECKING:
    from gbnfkit.schema._limits import SchemaLimits

__all__ = ["complement_grammar", "Dfa", "TooBig", "dfa_of", "minimal",
           "pattern_dfa", "product", "emit_dfa"]

Ranges = tuple[tuple[int, int], ...]


class TooBig(Exception):
    """An automaton would exceed its state limit (``limit``: the field of
    ``SchemaLimits``)."""

    def __init__(self, limit: str) -> None:
        super().__init__(limit)
        self.limit = limit


_TooBig = TooBig


class _Nfa:
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.eps: list[list[int]] = []
        self.edges: list[list[tuple[Ranges, int]]] = []

    def state(self) -> int:
        if len(self.eps) >= self.limit:
            raise _TooBig("max_nfa_states")
        self.eps.append([])
        self.edges.append([])
        return len(self.eps) - 1

    def build(self, node: Node) -> tuple[int, int]:
        if isinstance(node, Chars):
            a, b = self.state(), self.state()
            self.edges[a].append((node.ranges, b))
            return a, b
        if isinstance(node, Cat):
            a = self.state()
            cur = a
            for item in node.items:
                s, e = self.build(item)
                self.eps[cur].append(s)
                cur = e
            return a, cur
        if isinstance(node, Or):
            a, b = self.state(), self.state()
            for o in node.options:
                s, e = self.build(o)
                self.eps[a].append(s)
                self.eps[e].append(b)
            return a, b
        return self.repeat(node)

    def repeat(self, node: Rep) -> tuple[int, int]:
        a = self.state()
        cur = a
        for _ in range(node.min):
            s, e = self.build(node.item)
            self.eps[cur].append(s)
            cur = e
        end = self.state()
        self.eps[cur].append(end)
        if node.max is None:
            s, e = self.build(node.item)
            self.eps[cur].append(s)
            self.eps[e].append(cur)
        else:
            for _ in range(node.max - node.min):
                s, e = self.build(node.item)
                self.eps[cur].append(s)
                self.eps[e].append(end)
                cur = e
        return a, end


def _intervals(nfa: _Nfa) -> list[tuple[int, int]]:
    cuts = {0, 0x110000}
    for edges in nfa.edges:
        for ranges, _ in edges:
            for lo, hi in ranges:
                cuts.add(lo)
                cuts.add(hi + 1)
    points = sorted(cuts)
    return [(points[i], points[i + 1] - 1) for i in range(len(points) - 1)]


@dataclass
class Dfa:
    """A complete DFA: ``cuts`` split the code points into intervals (interval k is
    ``cuts[k] .. cuts[k+1]-1``); ``moves[state][k]`` is the next state."""

    cuts: list[int]
    moves: list[list[int]]
    accepting: list[bool]
    labels: list[tuple[bool, ...]] | None = None
    """For a product: each state's tuple of component verdicts."""

    def accepting_where(self, accept: Callable[[tuple[bool, ...]], bool]) -> Dfa:
        """The same product automaton with ``accept`` of the verdicts as acceptance."""
        assert self.labels is not None
        return Dfa(self.cuts, self.moves, [accept(v) for v in self.labels], self.labels)

    def step(self, state: int, code: int) -> int:
        return self.moves[state][bisect.bisect_right(self.cuts, code) - 1]


def _search_nfa(branches: Sequence[Branch], limit: int) -> tuple[_Nfa, int, int]:
    nfa = _Nfa(limit)
    start = nfa.state()
    final = nfa.state()
    for b in branches:
        parts: list[Node] = []
        if not b.start_anchored:
            parts.append(Rep(Chars(ANY_CHAR), 0, None))
        parts.append(b.node)
        if not b.end_anchored:
            parts.append(Rep(Chars(ANY_CHAR), 0, None))
        s, e = nfa.build(Cat(tuple(parts)))
        nfa.eps[start].append(s)
        nfa.eps[e].append(final)
    return nfa, start, final


State = TypeVar("State", bound=Hashable)


def _explore(first: State, targets: Callable[[State], Iterable[State]],
             limit: int, name: str) -> tuple[list[State], list[list[int]]]:
    """The states reachable from ``first`` (breadth first) and their moves, ``targets``
    of a state being its next state on each interval in order; raises TooBig(``name``)
    past ``limit`` states."""
    index = {first: 0}
    order = [first]
    moves: list[list[int]] = []
    i = 0
    while i < len(order):
        current = order[i]
        i += 1
        row = []
        for target in targets(current):
            if target not in index:
                if len(order) >= limit:
                    raise TooBig(name)
                index[target] = len(order)
                order.append(target)
            row.append(index[target])
        moves.append(row)
    return order, moves


def dfa_of(branches: Sequence[Branch], limits: SchemaLimits,
           limit: str = "max_dfa_states") -> Dfa:
    """The strings in which ``re.search`` finds one of ``branches``.

    Raises:
        TooBig: more than ``limits.max_nfa_states`` NFA or ``limits.<limit>`` DFA states.
    """
    nfa, start, final = _search_nfa(branches, limits.max_nfa_states)
    return _subsets(nfa, start, final, getattr(limits, limit), limit)[0]


def pattern_dfa(branches: Sequence[Branch], limits: SchemaLimits) -> Dfa | None:
    """The DFA of ``branches`` (as :func:`dfa_of`) when every branch is anchored at both
    ends and the pattern written directly as a grammar would stay ambiguous over
    unbounded input, else None (also when its minimal DFA has more than
    ``limits.max_pattern_dfa_states`` states, its subset construction more than
    ``limits.max_dfa_states`` or its NFA more than ``limits.max_nfa_states``).

    Ambiguous: after some input, two positions of the pattern that read a character
    both accept the same next character (``([a-z.]+)\\.([a-z]{2,6})``: a ``.`` may end
    the first group or stay in it).  The direct grammar then holds a parse per such
    position, each of which may end at the next character, so its contexts hand over
    inside most tokens and their tails are checked from the frames below (a URL pattern
    after ``https://example.com``: 21-27 ms per mask); the DFA's rules call the next
    state in tail position, so a context ends only at the closing quote.  Only when
    such a DFA state lies on a cycle: an ambiguity that ends within a few characters
    (``date``'s leap years) costs the direct grammar little and the DFA's rules more.
    Unanchored sides stay direct: their ``.*`` is the JSON string's body, which the
    token layer splits through the vocabulary's slice, while the DFA's states before a
    match read classes of their own (``docs/schema.md``, "Patterns")."""
    if not all(b.start_anchored and b.end_anchored for b in branches):
        return None
    try:
        nfa, start, final = _search_nfa(branches, limits.max_nfa_states)
        dfa, ambiguous = _subsets(nfa, start, final, limits.max_dfa_states, "max_dfa_states")
    except TooBig:
        return None
    if not ambiguous:
        return None
    cyclic = _on_cycles(dfa)
    if not any(cyclic[s] for s in ambiguous):
        return None
    # the bound is on the rules written: a BCP-47 tag's 251 subset states are 143
    small = minimal(dfa)
    return small if len(small.moves) <= limits.max_pattern_dfa_states else None


def _on_cycles(dfa: Dfa) -> list[bool]:
    """Whether each state can be reached again from itself: its strongly connected
    component has more than one state, or it moves to itself (Tarjan's algorithm,
    iterative)."""
    n = len(dfa.moves)
    succ = [sorted(set(row)) for row in dfa.moves]
    index = [-1] * n
    low = [0] * n
    on_stack = [False] * n
    stack: list[int] = []
    out = [False] * n
    counter = 0
    for root in range(n):
        if index[root] >= 0:
            continue
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack[root] = True
        work = [(root, 0)]
        while work:
            v, i = work[-1]
            if i < len(succ[v]):
                work[-1] = (v, i + 1)
                w = succ[v][i]
                if index[w] < 0:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack[w] = True
                    work.append((w, 0))
                elif on_stack[w]:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                u = work[-1][0]
                low[u] = min(low[u], low[v])
            if low[v] == index[v]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack[w] = False
                    component.append(w)
                    if w == v:
                        break
                cyclic = len(component) > 1 or v in succ[v]
                for w in component:
                    out[w] = cyclic
    return out


def minimal(dfa: Dfa) -> Dfa:
    """The minimal DFA of the same language (Moore's partition refinement; states
    numbered in breadth-first order from the start, which stays 0; no labels).  The
    subset construction of a URL pattern gives 149 states, 14 of them distinct."""
    n = len(dfa.moves)
    # intervals every state moves alike on are one column
    columns = list(dict.fromkeys(zip(*dfa.moves, strict=True)))
    rows = list(zip(*columns, strict=True))
    block = [int(a) for a in dfa.accepting]
    count = len(set(block))
    while True:
        keys: dict[tuple[int, ...], int] = {}
        refined = [keys.setdefault((block[s], *[block[t] for t in rows[s]]), len(keys))
                   for s in range(n)]
        if len(keys) == count:
            break
        block, count = refined, len(keys)
    number = {block[0]: 0}
    order = [0]  # one state of each block, in breadth-first order
    moves: list[list[int]] = []
    i = 0
    while i < len(order):
        row = []
        for t in dfa.moves[order[i]]:
            if block[t] not in number:
                number[block[t]] = len(order)
                order.append(t)
            row.append(number[block[t]])
        moves.append(row)
        i += 1
    return Dfa(list(dfa.cuts), moves, [dfa.accepting[s] for s in order])


def _subsets(nfa: _Nfa, start: int, final: int, limit: int,
             name: str) -> tuple[Dfa, list[int]]:
    """The subset construction, and the DFA states whose set holds two NFA states that
    read the same character.  Each DFA state's set of NFA states is a bit set
    (bit ``s``: NFA state ``s``), stepped on every interval at once: each of its NFA
    states' edges adds the closure of its target to the intervals it covers."""
    intervals = _intervals(nfa)
    los = [lo for lo, _ in intervals]
    n = len(nfa.eps)
    closures: list[int] = [0] * n  # the epsilon closure of each NFA state, found lazily
    for s in range(n):
        seen = 1 << s
        todo = [s]
        while todo:
            for t in nfa.eps[todo.pop()]:
                if not seen >> t & 1:
                    seen |= 1 << t
                    todo.append(t)
        closures[s] = seen
    # each NFA state's edges: (first interval, last interval + 1, target closure) runs
    runs: list[list[tuple[int, int, int]]] = []
    for s in range(n):
        out = []
        for ranges, t in nfa.edges[s]:  # one edge per state (a character class)
            for lo, hi in ranges:
                a = bisect.bisect_left(los, lo)
                b = bisect.bisect_right(los, hi)
                if a < b:
                    out.append((a, b, closures[t]))
        runs.append(out)
    width = len(intervals)
    first = closures[start]
    index = {first: 0}
    order = [first]
    moves: list[list[int]] = []
    ambiguous: list[int] = []
    i = 0
    while i < len(order):
        current = order[i]
        i += 1
        nxt = [0] * width
        read = [False] * width  # the intervals some NFA state of the set reads
        bits = current
        while bits:
            low = bits & -bits
            bits ^= low
            for a, b, target in runs[low.bit_length() - 1]:
                for k in range(a, b):
                    nxt[k] |= target
                    if read[k] and (not ambiguous or ambiguous[-1] != i - 1):
                        ambiguous.append(i - 1)
                    read[k] = True
        row = []
        for target in nxt:
            got = index.get(target)
            if got is None:
                if len(order) >= limit:
                    raise TooBig(name)
                got = index[target] = len(order)
                order.append(target)
            row.append(got)
        moves.append(row)
    return Dfa(los, moves, [bool(st >> final & 1) for st in order]), ambiguous


def _longest(dfa: Dfa) -> list[int | None]:
    """Each state's longest accepted continuation: None when unbounded (a cycle it can
    reach still leads to acceptance), -1 when nothing is accepted from it."""
    n = len(dfa.moves)
    back: list[set[int]] = [set() for _ in range(n)]
    for s, row in enumerate(dfa.moves):
        for t in row:
            back[t].add(s)
    live = [False] * n
    todo = [s for s in range(n) if dfa.accepting[s]]
    for s in todo:
        live[s] = True
    while todo:
        for p in back[todo.pop()]:
            if not live[p]:
                live[p] = True
                todo.append(p)
    succ = [sorted({t for t in row if live[t]}) if live[s] else [] for s, row in
            enumerate(dfa.moves)]
    unbounded = _on_cycles(Dfa(dfa.cuts, succ, dfa.accepting))
    todo = [s for s in range(n) if unbounded[s]]
    while todo:
        for p in back[todo.pop()]:
            if live[p] and not unbounded[p]:
                unbounded[p] = True
                todo.append(p)
    out: list[int | None] = [None if unbounded[s] else -1 for s in range(n)]
    done = [unbounded[s] or not live[s] for s in range(n)]
    for root in range(n):  # the live acyclic rest: longest paths, depth first
        work = [root]
        while work:
            s = work[-1]
            if done[s]:
                work.pop()
                continue
            waiting = [t for t in succ[s] if not done[t]]
            if waiting:
                work.extend(waiting)
                continue
            best = 0 if dfa.accepting[s] else -1
            for t in succ[s]:
                got = out[t]
                assert got is not None
                best = max(best, got + 1)
            out[s] = best
            done[s] = True
            work.pop()
    return out


def product(dfas: Sequence[Dfa], accept: Callable[[tuple[bool, ...]], bool],
            limits: SchemaLimits, length: tuple[int, int | None, int] | None = None) -> Dfa:
    """The product automaton; a state accepts when ``accept`` of the components' verdicts.

    ``length`` (lo, hi, n) adds a character counter as the last component, whose
    verdict is lo <= count <= hi, only where it still matters: once the count has
    reached lo and the longest continuation that the first n components all accept
    keeps it within hi, the counter is dropped (the ``-1`` count), so a pattern whose
    strings are at most a little longer than ``maxLength`` counts only in the states
    where it can overrun (docs/schema.md, "Length limits").

    Raises:
        TooBig: more than ``limits.max_product_states`` reachable states.
    """
    cuts = sorted({c for d in dfas for c in d.cuts})
    column = [[bisect.bisect_right(d.cuts, c) - 1 for c in cuts] for d in dfas]
    m = len(dfas)
    # each component's moves on the product's intervals
    moved = [[[row[c] for c in col] for row in d.moves] for d, col in zip(dfas, column,
                                                                        strict=True)]

    def advance(current: tuple[int, ...]) -> Iterable[tuple[int, ...]]:
        # (the components' moves from ``current``, read across: one tuple per interval)
        return zip(*[table[s] for table, s in zip(moved, current, strict=False)],
                   strict=True)

    targets = advance
    first: tuple[int, ...] = tuple(0 for _ in dfas)
    if length is not None:
        lo, hi, n = length
        top = (hi + 1) if hi is not None else lo
        if top > limits.max_product_states:  # the product would be larger anyway
            raise TooBig("max_product_states")
        # each state's longest accepted continuation, past hi when unbounded
        room = [[top if r is None else r for r in _longest(d)] for d in dfas[:n]]
        only = room[0] if n == 1 else None

        def counted(states: tuple[int, ...], count: int) -> tuple[int, ...]:
            if count < 0:
                return (*states, -1)
            if count >= lo:
                if hi is None:
                    return (*states, -1)
                longest = only[states[0]] if only is not None else min(
                    (r[s] for r, s in zip(room, states, strict=False)), default=top)
                if count + longest <= hi:
                    return (*states, -1)
            return (*states, count if count < top else top)

        def advance_counted(current: tuple[int, ...]) -> Iterable[tuple[int, ...]]:
            count = current[m]
            after = count + 1 if count >= 0 else -1
            return [counted(states, after) for states in advance(current)]

        targets = advance_counted
        first = counted(first, 0)
    order, moves = _explore(first, targets, limits.max_product_states, "max_product_states")
    if length is not None:
        lo, hi, _ = length
        labels = [(*(d.accepting[s] for d, s in zip(dfas, st[:m], strict=True)),
                   st[m] < 0 or (lo <= st[m] and (hi is None or st[m] <= hi)))
                  for st in order]
        return Dfa(cuts, moves, [accept(v) for v in labels], labels)
    labels = [tuple(d.accepting[s] for d, s in zip(dfas, st, strict=True)) for st in order]
    return Dfa(cuts, moves, [accept(v) for v in labels], labels)


def emit_dfa(dfa: Dfa, table: RuleTable, emit: Callable[[Ranges], str],
             hint: str) -> str | None:
    """A rule for the DFA's language (only states that can still accept are kept), or
    None when it is empty."""
    n = len(dfa.moves)
    back: list[set[int]] = [set() for _ in range(n)]
    for s, row in enumerate(dfa.moves):
        for t in row:
            back[t].add(s)
    live = {s for s in range(n) if dfa.accepting[s]}
    todo = list(live)
    while todo:
        for p in back[todo.pop()]:
            if p not in live:
                live.add(p)
                todo.append(p)
    if 0 not in live:
        return None
    reach = [0]
    seen = {0}
    while reach:
        s = reach.pop()
        for t in dfa.moves[s]:
            if t in live and t not in seen:
                seen.add(t)
                reach.append(t)
    ends = [*dfa.cuts[1:], 0x110000]
    names = {s: table.fresh(f"{hint}-q{k}") for k, s in enumerate(sorted(seen))}
    for s in sorted(seen):
        spans: dict[int, list[tuple[int, int]]] = {}
        for k, t in enumerate(dfa.moves[s]):
            if t in live:
                lo, hi = dfa.cuts[k], ends[k] - 1
                group_ = spans.setdefault(t, [])
                if group_ and group_[-1][1] + 1 == lo:
                    group_[-1] = (group_[-1][0], hi)
                else:
                    group_.append((lo, hi))
        options = ['""'] if dfa.accepting[s] else []
        options += [seq(emit(tuple(sp)), names[t]) for t, sp in spans.items()]
        table.define(names[s], alt(options))
    return names[0]


def complement_grammar(branches: list[Branch], table: RuleTable,
                       emit: Callable[[Ranges], str], hint: str, limits: SchemaLimits) -> str:
    """A rule matching the strings that ``re.search`` finds none of ``branches`` in.

    Raises:
        TooBig: the automaton is too large.
    """
    dfa = dfa_of(branches, limits)
    dfa.accepting = [not a for a in dfa.accepting]
    rule = emit_dfa(dfa, table, emit, hint)
    return rule if rule is not None else table.add(hint + "-none", "[^\\x00-\\U0010FFFF]")
