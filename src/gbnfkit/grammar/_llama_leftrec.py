"""llama.cpp's left-recursion check, emulated on the IR.

llama.cpp turns each parenthesised group and each repetition into a generated rule
(``S*`` -> ``S' ::= S S' |``, ``S{m,n}`` -> m copies of ``S`` and a chain of
``S'(k) ::= S S'(k-1) |``) and then, in ``llama_grammar_detect_left_recursion``, follows
the leftmost rule reference of every alternative, moving on to the next one only while
the referenced rule *may be empty*.  A rule counts as possibly empty only if one of its
alternatives is literally empty; emptiness is never derived transitively.

Here the IR is mapped to the same generated rules, and a cycle in the resulting
"leftmost reference" graph is what llama.cpp reports.  Two readings of the IR:

* ``exact=True`` for the parser's *raw* tree, in which every parenthesised group is an
  :class:`Alt` (even of one option) and every sequence a :class:`Seq`: this is exactly
  llama.cpp's check.
* ``exact=False`` for canonical IR (from any front end), where groups may have been
  dropped or flattened: the most permissive way to write the IR in GBNF is assumed,
  with every item of a sequence or repetition in its own group and every empty
  alternative written ``()``.  Then no rule llama.cpp consults may be empty, and only
  cycles through the first item of an alternative remain: those every writing of the
  grammar has.  So this reading never refuses a grammar that the exact reading of its
  source accepted; :func:`gbnfkit.grammar.to_gbnf` prints that way when it must.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from gbnfkit.grammar._ir import Alt, CharClass, Expr, Literal, Repeat, RuleRef, Seq

__all__ = ["llama_left_recursion"]

_TERM: Final = -1  # a terminal element (character, class, any)
Node = str | int  # a named rule, or a generated rule (by number)


class _Builder:
    def __init__(self, exact: bool) -> None:
        self.exact = exact
        self.alts: dict[Node, list[list[Node]]] = {}
        self.owner: dict[int, str] = {}
        self.current = ""

    def new(self, alts: list[list[Node]]) -> int:
        node = len(self.owner)
        self.owner[node] = self.current
        self.alts[node] = alts
        return node

    def body(self, expr: Expr) -> list[list[Node]]:
        if isinstance(expr, Alt):
            out: list[list[Node]] = []
            for option in expr.options:
                nested = isinstance(option, Alt) and not self.exact
                out.extend(self.body(option) if nested else [self.elems(option)])
            return out
        return [self.elems(expr)]

    def item(self, expr: Expr) -> list[Node]:
        """Elements of ``expr`` as an item of a sequence or of a repetition."""
        if not self.exact:
            return [self.new([self.elems(expr)])]
        return self.elems(expr)

    def elems(self, expr: Expr) -> list[Node]:
        if isinstance(expr, Literal):
            return [_TERM] if expr.text else []
        if isinstance(expr, CharClass):
            return [_TERM]
        if isinstance(expr, RuleRef):
            return [expr.name]
        if isinstance(expr, Seq):
            return [e for item in expr.items for e in self.item(item)]
        if isinstance(expr, Alt):
            return [self.new(self.body(expr))]
        return self.repeat(expr)

    def repeat(self, expr: Repeat) -> list[Node]:
        item = expr.item
        unit: list[Node] = (
            [self.new([self.elems(item)])] if isinstance(item, Seq) else self.item(item)
        )
        out = unit * min(expr.min, 2)  # more copies add no new leftmost references
        if expr.max is None:
            node = self.new([])
            self.alts[node] = [[*unit, node], []] if unit else [[]]
            out.append(node)
        elif expr.max > expr.min:
            previous = self.new([unit, []])  # S'(1) ::= S |
            if expr.max - expr.min > 1:  # S'(k) ::= S S'(k-1) | -- a chain never loops back
                previous = self.new([[*unit, previous], []])
            out.append(previous)
        return out


def llama_left_recursion(rules: Mapping[str, Expr], exact: bool) -> list[str] | None:
    """The cycle llama.cpp would report, as named rules (closed: ``[a, b, a]``).

    A cycle made only of generated rules (a repetition of something that may be empty)
    is returned as ``[owning_rule]``.  ``None`` if llama.cpp accepts the grammar.
    """
    if not exact and not _named_left_cycle(rules):
        return None  # the generated rules cannot close a cycle without a named one
    return _builder_cycle(rules, exact)


def _builder_cycle(rules: Mapping[str, Expr], exact: bool) -> list[str] | None:
    """:func:`llama_left_recursion` on the generated rules themselves."""
    builder = _Builder(exact)
    for name, body in rules.items():
        builder.current = name
        builder.alts[name] = builder.body(body)
    alts = builder.alts

    def may_be_empty(node: Node) -> bool:
        return exact and any(not alt for alt in alts.get(node, ()))

    edges: dict[Node, list[Node]] = {}
    for node, node_alts in alts.items():
        out: list[Node] = []
        for alt in node_alts:
            for element in alt:
                if element == _TERM:
                    break
                out.append(element)
                if not may_be_empty(element):
                    break
        edges[node] = out

    cycle = _find_cycle(list(rules) + [n for n in alts if isinstance(n, int)], edges)
    if cycle is None:
        return None
    named = [node for node in cycle if isinstance(node, str)]
    if not named:
        first = cycle[0]
        assert isinstance(first, int)
        return [builder.owner[first]]
    # rotate so the cycle starts at a named rule, then close it
    start = cycle.index(named[0])
    rotated = cycle[start:] + cycle[:start]
    names = [node for node in rotated if isinstance(node, str)]
    return [*names, names[0]]


def _first_refs(expr: Expr, out: set[str]) -> None:
    """Add to ``out`` the rules that the ``exact=False`` reading of ``expr`` consults first.

    In that reading every item of a sequence or repetition is its own generated rule and
    no rule consulted may be empty, so only the first item of a sequence counts, and a
    generated rule only leads (down the tree of ``expr``) to its first item's rules.
    """
    stack = [expr]
    while stack:
        e = stack.pop()
        if isinstance(e, RuleRef):
            out.add(e.name)
        elif isinstance(e, Seq):
            if e.items:
                stack.append(e.items[0])
        elif isinstance(e, Alt):
            stack.extend(e.options)
        elif isinstance(e, Repeat):
            # Builder.repeat: min(min, 2) copies, then a star or chain rule if max > min
            if min(e.min, 2) > 0 or e.max is None or e.max > e.min:
                stack.append(e.item)


def _named_left_cycle(rules: Mapping[str, Expr]) -> bool:
    """Whether the ``exact=False`` leftmost-reference graph has a cycle (named rules only:
    the generated rules form a tree under their rule, which leads down and never back)."""
    edges: dict[str, set[str]] = {}
    for name, body in rules.items():
        out: set[str] = set()
        _first_refs(body, out)
        edges[name] = out
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    for start in rules:
        if start in state:
            continue
        state[start] = 1
        path = [start]
        iters = [iter(edges[start])]
        while path:
            for target in iters[-1]:
                mark = state.get(target)
                if mark == 1:
                    return True
                if mark is None and target in edges:
                    state[target] = 1
                    path.append(target)
                    iters.append(iter(edges[target]))
                    break
            else:
                state[path.pop()] = 2
                iters.pop()
    return False


def _find_cycle(order: list[Node], edges: dict[Node, list[Node]]) -> list[Node] | None:
    """Some cycle of the graph (its nodes, in order), searching from ``order``."""
    state: dict[Node, int] = {}  # 1: on the current path, 2: done
    for start in order:
        if start in state:
            continue
        path: list[Node] = [start]
        iters = [iter(edges.get(start, ()))]
        state[start] = 1
        while path:
            advanced = False
            for target in iters[-1]:
                mark = state.get(target)
                if mark == 1:
                    return path[path.index(target) :]
                if mark is None:
                    state[target] = 1
                    path.append(target)
                    iters.append(iter(edges.get(target, ())))
                    advanced = True
                    break
            if not advanced:
                state[path.pop()] = 2
                iters.pop()
    return None
