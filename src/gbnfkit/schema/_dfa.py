"""Complements of regular languages: a small NFA -> DFA construction.

Used where a grammar needs "a string that does NOT match these patterns" (object keys
outside ``patternProperties``, ``not: {pattern}``).  The automaton is built over the
decoded characters and emitted through a class emitter, so JSON escapes stay exact.
Returns ``None`` when the automaton would be too large (the caller then refuses).
"""

from __future__ import annotations

from collections.abc import Callable

from gbnfkit.schema._gbnf import RuleTable, alt, seq
from gbnfkit.schema._regex_parse import ANY_CHAR, Branch, Cat, Chars, Node, Or, Rep

__all__ = ["complement_grammar"]

Ranges = tuple[tuple[int, int], ...]
MAX_NFA = 4000
MAX_DFA = 400


class _TooBig(Exception):
    pass


class _Nfa:
    def __init__(self) -> None:
        self.eps: list[list[int]] = []
        self.edges: list[list[tuple[Ranges, int]]] = []

    def state(self) -> int:
        if len(self.eps) >= MAX_NFA:
            raise _TooBig
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


def complement_grammar(branches: list[Branch], table: RuleTable,
                       emit: Callable[[Ranges], str], hint: str) -> str | None:
    """A rule matching the strings that ``re.search`` finds none of ``branches`` in."""
    nfa = _Nfa()
    try:
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
    except _TooBig:
        return None
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

    first = closure({start})
    index = {first: 0}
    order = [first]
    moves: list[dict[int, list[tuple[int, int]]]] = []
    i = 0
    while i < len(order):
        current = order[i]
        i += 1
        by_target: dict[frozenset[int], list[tuple[int, int]]] = {}
        for lo, hi in intervals:
            nxt = set()
            for s in current:
                for ranges, t in nfa.edges[s]:
                    if any(a <= lo and hi <= b for a, b in ranges):
                        nxt.add(t)
            by_target.setdefault(closure(nxt), []).append((lo, hi))
        row: dict[int, list[tuple[int, int]]] = {}
        for target, spans in by_target.items():
            if target not in index:
                if len(order) >= MAX_DFA:
                    return None
                index[target] = len(order)
                order.append(target)
            row[index[target]] = spans
        moves.append(row)
    names = [table.fresh(f"{hint}-q{k}") for k in range(len(order))]
    for k, states in enumerate(order):
        options = [] if final in states else ['""']
        for target_index, spans in moves[k].items():
            options.append(seq(emit(tuple(spans)), names[target_index]))
        table.define(names[k], alt(options) if options else "[^\\x00-\\U0010FFFF]")
    return names[0]
