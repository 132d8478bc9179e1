"""The whitespace a chat grammar allows between the parts of its output: bounded.

The parsers read any run of whitespace where a format allows it (``peg.space()``), but a
grammar that allowed any run would let a model write line breaks until its token limit
instead of ending (a small model does: after a ``[TOOL_CALLS][…]`` section SmolLM2 wrote
newlines to the limit). So the grammars of :func:`gbnfkit.chat.grammar_for` allow, where
the parser allows whitespace, at most two line breaks (``\\n`` or ``\\r\\n``) and then at
most twenty spaces or tabs: the shape of llama.cpp's ``space`` rule in the grammars its
JSON Schema converter writes. Text such a grammar allows is still text the parser reads.
"""

from __future__ import annotations

from gbnfkit import peg
from gbnfkit.peg import Parser
from gbnfkit.peg._nodes import Kind

__all__ = ["bounded_whitespace"]

_LINE_BREAKS = 2
_INDENT = 20


def _bounded_space() -> Parser:
    line_break = peg.optional("\r") + "\n"
    return peg.repeat(line_break, 0, _LINE_BREAKS) + peg.chars("[ \\t]", 0, _INDENT)


def bounded_whitespace(parser: Parser) -> Parser:
    """``parser`` with each ``space()`` in it (rules' bodies included) replaced by the
    bounded whitespace of this module's docstring; for building grammars only."""
    bounded = _bounded_space()
    done: dict[int, Parser] = {}
    todo: list[tuple[Parser, bool]] = [(parser, False)]
    while todo:  # post-order, without recursion: a parser may nest deeper than Python
        node, ready = todo.pop()
        if id(node) in done:
            continue
        if not ready:
            todo.append((node, True))
            todo.extend((c, False) for c in node.children if id(c) not in done)
            continue
        if node.kind is Kind.SPACE:
            done[id(node)] = bounded
            continue
        children = tuple(done[id(c)] for c in node.children)
        same = all(new is old for new, old in zip(children, node.children, strict=True))
        done[id(node)] = node if same else Parser(node.kind, children, node.arg)
    return done[id(parser)]
