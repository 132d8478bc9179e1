"""Compile a parser tree into a flat program: one op per distinct node, references resolved.

``define``, ``schema`` and ``rule`` nodes are transparent (they parse as their first
child), and a ``ref`` becomes the id of its rule's body, so recursion is a cycle of ids.
Left recursion (a rule that can call itself without consuming input, which would loop
for ever) is refused here, before any parse.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gbnfkit._errors import PegError
from gbnfkit.peg._nodes import Kind, Parser

__all__ = ["SIMPLE", "Op", "Program", "check_left_recursion", "collect_rules",
           "compile_parser"]

# op codes, in the order the evaluator dispatches on them
OP_CODES: dict[Kind, int] = {
    Kind.LITERAL: 0,
    Kind.SEQUENCE: 1,
    Kind.CHOICE: 2,
    Kind.REPEAT: 3,
    Kind.CHARS: 4,
    Kind.SPACE: 5,
    Kind.UNTIL: 6,
    Kind.JSON_STRING_CONTENT: 7,
    Kind.RULE: 8,  # compiled away (transparent)
    Kind.TAG: 9,
    Kind.ATOMIC: 10,
    Kind.PEEK: 11,
    Kind.NEGATE: 12,
    Kind.JSON: 13,
    # not memoised: op code >= SIMPLE
    Kind.ANY: 14,
    Kind.EPS: 15,
    Kind.START: 16,
    Kind.END: 17,
    Kind.REST: 18,
}

SIMPLE = 14

Op = tuple[int, Any, tuple[int, ...]]


@dataclass(frozen=True)
class Program:
    """``ops[i]`` is ``(code, arg, child ids)``; ``root`` is the id to start from."""

    ops: tuple[Op, ...]
    root: int
    rules: dict[str, Parser]


def _children(node: Parser) -> tuple[Parser, ...]:
    return node.children


def collect_rules(parser: Parser) -> dict[str, Parser]:
    """Every rule node reachable from ``parser``, by name; raises PegError for a name
    defined twice with different bodies, or a reference to an undefined rule."""
    rules: dict[str, Parser] = {}
    refs: set[str] = set()
    seen: set[int] = set()
    stack = [parser]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if node.kind is Kind.RULE:
            name = node.arg[0]
            old = rules.get(name)
            if old is None:
                rules[name] = node
            elif old != node:
                raise PegError(f"the rule {name!r} is defined twice, with different bodies")
        elif node.kind is Kind.REF:
            refs.add(node.arg)
        stack.extend(reversed(node.children))  # rules in order of first appearance
    missing = sorted(refs - rules.keys())
    if missing:
        raise PegError(f"rule {missing[0]!r} is referred to but never defined (with rule())")
    return rules


_ALWAYS_NULLABLE = frozenset({Kind.EPS, Kind.START, Kind.END, Kind.PEEK, Kind.NEGATE,
                              Kind.SPACE, Kind.UNTIL, Kind.REST, Kind.JSON_STRING_CONTENT})


def _nullable(p: Parser, rules: dict[str, bool]) -> bool:
    k = p.kind
    if k in _ALWAYS_NULLABLE:
        return True
    if k is Kind.REF:
        return rules.get(p.arg, False)
    if k is Kind.RULE:
        return rules.get(p.arg[0], False)
    if k is Kind.SEQUENCE:
        return all(_nullable(c, rules) for c in p.children)
    if k is Kind.CHOICE:
        return any(_nullable(c, rules) for c in p.children)
    if k is Kind.REPEAT:
        return p.arg[0] == 0 or _nullable(p.children[0], rules)
    if k is Kind.CHARS:
        return bool(p.arg[2] == 0)
    if k in (Kind.LITERAL, Kind.ANY):
        return False
    return _nullable(p.children[0], rules)  # tag, atomic, define, schema


def _first_calls(p: Parser, nullable: dict[str, bool], out: set[str]) -> None:
    """The rules ``p`` may call at its start position."""
    k = p.kind
    if k is Kind.REF:
        out.add(p.arg)
    elif k is Kind.RULE:
        out.add(p.arg[0])
    elif k is Kind.SEQUENCE:
        for c in p.children:
            _first_calls(c, nullable, out)
            if not _nullable(c, nullable):
                break
    elif k is Kind.DEFINE or k is Kind.SCHEMA:
        _first_calls(p.children[0], nullable, out)
    else:
        for c in p.children:
            _first_calls(c, nullable, out)


def check_left_recursion(rules: dict[str, Parser]) -> None:
    """Raise PegError if some rule can call itself without consuming input."""
    nullable = dict.fromkeys(rules, False)
    changed = True
    while changed:
        changed = False
        for name, node in rules.items():
            if not nullable[name] and _nullable(node.children[0], nullable):
                nullable[name] = changed = True
    calls: dict[str, set[str]] = {}
    for name, node in rules.items():
        out: set[str] = set()
        _first_calls(node.children[0], nullable, out)
        calls[name] = out
    state: dict[str, int] = {}
    for root in rules:
        stack: list[tuple[str, list[str]]] = [(root, sorted(calls[root]))]
        path = [root]
        if state.get(root):
            continue
        state[root] = 1
        while stack:
            name, todo = stack[-1]
            if not todo:
                state[name] = 2
                stack.pop()
                path.pop()
                continue
            nxt = todo.pop(0)
            if state.get(nxt) == 1:
                cycle = path[path.index(nxt):] + [nxt]
                raise PegError(
                    "left recursion: " + " -> ".join(repr(c) for c in cycle)
                    + " calls itself without consuming input (a PEG would loop for ever)"
                )
            if not state.get(nxt):
                state[nxt] = 1
                path.append(nxt)
                stack.append((nxt, sorted(calls[nxt])))


def compile_parser(parser: Parser) -> Program:
    """The flat program of ``parser``."""
    rules = collect_rules(parser)
    check_left_recursion(rules)
    ids: dict[Parser, int] = {}
    ops: list[Op | None] = []

    def assign(node: Parser) -> int:
        while True:
            if node.kind in (Kind.DEFINE, Kind.SCHEMA, Kind.RULE):
                node = node.children[0]
            elif node.kind is Kind.REF:
                node = rules[node.arg]
            else:
                break
        found = ids.get(node)
        if found is not None:
            return found
        index = len(ops)
        ids[node] = index
        ops.append(None)
        kids = tuple(assign(c) for c in node.children)
        ops[index] = (OP_CODES[node.kind], _op_arg(node), kids)
        return index

    root = assign(parser)
    return Program(tuple(op for op in ops if op is not None), root, rules)


def _op_arg(node: Parser) -> Any:
    kind = node.kind
    if kind is Kind.CHARS:
        from gbnfkit.peg._scan import class_pattern

        text, klass, lo, hi = node.arg
        return (class_pattern(klass, lo, hi), lo, hi, text)
    if kind is Kind.UNTIL:
        import re

        delims: tuple[str, ...] = node.arg
        firsts = "".join(sorted({d[0] for d in delims}))
        return (delims, max(len(d) for d in delims), firsts,
                re.compile("[" + re.escape(firsts) + "]"))
    if kind is Kind.RULE:
        return node.arg[0]
    return node.arg
