"""A naive reference for gbnfkit.peg: the documented semantics, evaluated directly on the
parser tree with no memo, no resume points and no regular expressions (slow and simple)."""

from __future__ import annotations

from typing import Any

from gbnfkit.peg import Kind, Parser
from gbnfkit.peg._program import collect_rules

FAIL, OK, MORE = "fail", "success", "need_more_input"

Node = tuple[str, int, int, str, tuple[Any, ...], bool]


def _class_has(klass: Any, c: str) -> bool:
    return bool(klass.contains(ord(c)))


class Reference:
    def __init__(self, parser: Parser, text: str, partial: bool) -> None:
        self.rules = collect_rules(parser)
        self.t = text
        self.n = len(text)
        self.partial = partial

    def ev(self, p: Parser, pos: int) -> tuple[str, int, list[Node]]:
        t, n, partial = self.t, self.n, self.partial
        k = p.kind
        if k is Kind.EPS:
            return OK, pos, []
        if k is Kind.START:
            return (OK if pos == 0 else FAIL), pos, []
        if k is Kind.END:
            return (OK if pos == n else FAIL), pos, []
        if k is Kind.LITERAL:
            s = p.arg
            for i, c in enumerate(s):
                if pos + i == n:
                    return (MORE, n, []) if partial else (FAIL, pos, [])
                if t[pos + i] != c:
                    return FAIL, pos, []
            return OK, pos + len(s), []
        if k is Kind.ANY:
            if pos < n:
                return OK, pos + 1, []
            return (MORE, pos, []) if partial else (FAIL, pos, [])
        if k is Kind.SEQUENCE:
            nodes: list[Node] = []
            q = pos
            for c in p.children:
                s, e, ns = self.ev(c, q)
                if s == FAIL:
                    return FAIL, pos, []
                nodes += ns
                if s == MORE:
                    return MORE, e, nodes
                q = e
            return OK, q, nodes
        if k is Kind.CHOICE:
            for c in p.children:
                s, e, ns = self.ev(c, pos)
                if s != FAIL:
                    return s, e, ns
            return FAIL, pos, []
        if k is Kind.REPEAT:
            lo, hi = p.arg
            count, q, nodes = 0, pos, []
            empty = False
            while hi is None or count < hi:
                if q == n and partial:
                    break
                s, e, ns = self.ev(p.children[0], q)
                if s == MORE:
                    return MORE, e, nodes + ns
                if s == FAIL:
                    break
                if e == q:
                    empty = True
                    break
                nodes += ns
                q = e
                count += 1
            if count < lo and not empty:
                if q == n and partial:
                    return MORE, q, nodes
                return FAIL, pos, []
            return OK, q, nodes
        if k in (Kind.CHARS, Kind.SPACE):
            if k is Kind.SPACE:
                lo, hi = 0, None

                def has(c: str) -> bool:
                    return c in " \t\n\r"
            else:
                _text, klass, lo, hi = p.arg

                def has(c: str) -> bool:
                    return _class_has(klass, c)
            q = pos
            while (hi is None or q - pos < hi) and q < n and has(t[q]):
                q += 1
            if q - pos >= lo:
                return OK, q, []
            if q == n and partial:
                return MORE, q, []
            return FAIL, pos, []
        if k is Kind.REST:
            return OK, n, []
        if k is Kind.UNTIL:
            delims = p.arg
            for q in range(pos, n):
                if any(t.startswith(d, q) for d in delims):
                    return OK, q, []
                if partial and any(d.startswith(t[q:]) for d in delims):
                    return MORE, q, []
            return OK, n, []
        if k is Kind.JSON_STRING_CONTENT:
            q = pos
            while q < n:
                c = t[q]
                if c == '"':
                    return OK, q, []
                if c == "\\":
                    rest = t[q + 1 : q + 6]
                    if rest[:1] and rest[0] in '"\\/bfnrt':
                        q += 2
                        continue
                    if rest[:1] == "u" and len(rest) == 5 and all(
                        h in "0123456789abcdefABCDEF" for h in rest[1:]
                    ):
                        q += 6
                        continue
                    tail = t[q + 1 :]
                    if len(tail) < 5 and (tail == "" or (tail[0] == "u" and all(
                        h in "0123456789abcdefABCDEF" for h in tail[1:]
                    ))):
                        return (MORE, q, []) if partial else (FAIL, pos, [])
                    return FAIL, pos, []
                if ord(c) < 0x20:
                    return FAIL, pos, []
                q += 1
            return (MORE, q, []) if partial else (FAIL, pos, [])
        if k is Kind.REF:
            return self.ev(self.rules[p.arg], pos)
        if k in (Kind.RULE, Kind.SCHEMA, Kind.DEFINE, Kind.JSON):
            return self.ev(p.children[0], pos)
        if k is Kind.TAG:
            s, e, ns = self.ev(p.children[0], pos)
            if s == FAIL:
                return FAIL, pos, []
            return s, e, [(p.arg, pos, e, t[pos:e], tuple(ns), s == MORE)]
        if k is Kind.ATOMIC:
            s, e, ns = self.ev(p.children[0], pos)
            return s, e, ([] if s == MORE else ns)
        if k is Kind.PEEK:
            s, _e, _ns = self.ev(p.children[0], pos)
            return s, pos, []
        if k is Kind.NEGATE:
            s, e, _ns = self.ev(p.children[0], pos)
            if partial:
                raise NotComparable("negate on partial input depends on what the child read")
            return (FAIL if s == OK else OK), pos, []
        raise AssertionError(k)


class NotComparable(Exception):
    """The reference does not model this case."""


def reference_parse(parser: Parser, text: str, partial: bool = False) -> tuple[str, int,
                                                                               list[Node]]:
    """(status, end, nodes) by the reference; ``end`` is meaningless on failure."""
    status, end, nodes = Reference(parser, text, partial).ev(parser, 0)
    return status, (end if status != FAIL else -1), nodes


def as_tuples(nodes: Any) -> list[Node]:
    """gbnfkit AstNodes as the reference's tuples."""
    return [(n.tag, n.start, n.end, n.text, tuple(as_tuples(n.children)), n.is_partial)
            for n in nodes]
