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
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from gbnfkit.schema._gbnf import RuleTable, alt, seq
from gbnfkit.schema._regex_parse import ANY_CHAR, Branch, Cat, Chars, Node, Or, Rep

if TYPE_CHECKING:
    from gbnfkit.schema._limits import SchemaLimits

__all__ = ["complement_grammar", "Dfa", "TooBig", "dfa_of", "length_dfa", "product",
           "emit_dfa"]

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


def _explore(first: State, width: int, step: Callable[[State, int], State],
             limit: int, name: str) -> tuple[list[State], list[list[int]]]:
    """The states reachable from ``first`` (breadth first) and their moves on each of
    ``width`` intervals; raises TooBig(``name``) past ``limit`` states."""
    index = {first: 0}
    order = [first]
    moves: list[list[int]] = []
    i = 0
    while i < len(order):
        current = order[i]
        i += 1
        row = []
        for k in range(width):
            target = step(current, k)
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
    intervals = _intervals(nfa)

    def closure(states: set[int]) -> frozenset[int]:
        todo = list(states)
        seen = set(states)
        while todo:
            for n in nfa.eps[todo.pop()]:
                if n not in seen:
                    seen.add(n)
                    todo.append(n)
        return frozenset(seen)

    def step(current: frozenset[int], k: int) -> frozenset[int]:
        lo, hi = intervals[k]
        nxt = set()
        for s in current:
            for ranges, t in nfa.edges[s]:
                if any(a <= lo and hi <= b for a, b in ranges):
                    nxt.add(t)
        return closure(nxt)

    order, moves = _explore(closure({start}), len(intervals), step, getattr(limits, limit),
                            limit)
    return Dfa([lo for lo, _ in intervals], moves, [final in st for st in order])


def length_dfa(lo: int, hi: int | None, limits: SchemaLimits) -> Dfa:
    """Strings of lo..hi characters (a counter; the last state is a sink)."""
    top = (hi + 1) if hi is not None else lo
    if top > limits.max_product_states:  # the product with it would be larger anyway
        raise TooBig("max_product_states")  # never build it
    moves = [[min(c + 1, top)] for c in range(top + 1)]
    accepting = [c >= lo and (hi is None or c <= hi) for c in range(top + 1)]
    return Dfa([0], moves, accepting)


def product(dfas: Sequence[Dfa], accept: Callable[[tuple[bool, ...]], bool],
            limits: SchemaLimits) -> Dfa:
    """The product automaton; a state accepts when ``accept`` of the components' verdicts.

    Raises:
        TooBig: more than ``limits.max_product_states`` reachable states.
    """
    cuts = sorted({c for d in dfas for c in d.cuts})
    column = [[bisect.bisect_right(d.cuts, c) - 1 for c in cuts] for d in dfas]

    def step(current: tuple[int, ...], k: int) -> tuple[int, ...]:
        return tuple(d.moves[s][column[j][k]] for j, (d, s) in
                     enumerate(zip(dfas, current, strict=True)))

    order, moves = _explore(tuple(0 for _ in dfas), len(cuts), step,
                            limits.max_product_states, "max_product_states")
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
