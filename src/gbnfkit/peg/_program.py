"""Compile a parser tree into a flat program: one op per distinct node, references resolved.

``define`` and ``schema`` nodes are transparent (they parse as their first child), and a
``ref`` becomes the id of its rule's op, so recursion is a cycle of ids.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gbnfkit._errors import PegError
from gbnfkit.peg._nodes import Kind, Parser

__all__ = ["SIMPLE", "Op", "Program", "collect_rules", "compile_parser"]

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
    Kind.RULE: 8,
    Kind.TAG: 9,
    Kind.ATOMIC: 10,
    Kind.PEEK: 11,
    Kind.NEGATE: 12,
    # not memoised: op code >= SIMPLE
    Kind.ANY: 13,
    Kind.EPS: 14,
    Kind.START: 15,
    Kind.END: 16,
    Kind.REST: 17,
}

SIMPLE = 13

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


def compile_parser(parser: Parser) -> Program:
    """The flat program of ``parser``."""
    rules = collect_rules(parser)
    ids: dict[Parser, int] = {}
    ops: list[Op | None] = []

    def assign(node: Parser) -> int:
        while True:
            if node.kind is Kind.DEFINE or node.kind is Kind.SCHEMA:
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
        delims: tuple[str, ...] = node.arg
        return (delims, max(len(d) for d in delims))
    if kind is Kind.RULE:
        return node.arg[0]
    return node.arg
