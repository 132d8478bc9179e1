"""Readable descriptions of parsers (their ``repr``)."""

from __future__ import annotations

import json

from gbnfkit.peg._nodes import Kind, Parser

__all__ = ["describe"]

_LIMIT = 200
# a description is cut at _LIMIT characters, and each level of nesting starts with at least
# one character of its own: nothing deeper can show (nor overflow Python's stack)
_DEPTH = _LIMIT


def describe(parser: Parser) -> str:
    """A short, readable form of ``parser`` (rules are shown by name)."""
    text = _describe(parser, 0, top=True)
    return text if len(text) <= _LIMIT else text[: _LIMIT - 3] + "..."


def _describe(p: Parser, depth: int, top: bool = False) -> str:
    if depth > _DEPTH:
        return "..."
    depth += 1
    k = p.kind
    if k is Kind.LITERAL:
        return json.dumps(p.arg, ensure_ascii=False)
    if k is Kind.SEQUENCE:
        inner = " + ".join(_describe(c, depth) for c in p.children)
        return inner if top else f"({inner})"
    if k is Kind.CHOICE:
        if not p.children:  # no alternative: matches nothing ("" read as the empty text)
            return "choice()"
        inner = " | ".join(_describe(c, depth) for c in p.children)
        return inner if top else f"({inner})"
    if k is Kind.REPEAT:
        lo, hi = p.arg
        return f"repeat({_describe(p.children[0], depth, True)}, {lo}, {hi})"
    if k is Kind.CHARS:
        text, _klass, lo, hi = p.arg
        return f"chars({text!r}, {lo}, {hi})"
    if k is Kind.UNTIL:
        return f"until_one_of({list(p.arg)!r})"
    if k is Kind.REF:
        return f"ref({p.arg!r})"
    if k is Kind.RULE:
        name, trigger = p.arg
        return f"{'trigger_rule' if trigger else 'rule'}({name!r})"
    if k is Kind.SCHEMA:
        return f"schema({_describe(p.children[0], depth, True)}, {p.arg[0]!r})"
    if k is Kind.TAG:
        return f"tag({p.arg!r}, {_describe(p.children[0], depth, True)})"
    if k is Kind.JSON:
        return {"value": "json()", "{": "json_object()", "[": "json_array()"}[p.arg]
    if k is Kind.DEFINE:
        return _describe(p.children[0], depth - 1, top)
    if p.children:
        return f"{k.value}({', '.join(_describe(c, depth, True) for c in p.children)})"
    return f"{k.value}()"
