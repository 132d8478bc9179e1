"""``content``: optional ``<think>…</think>`` reasoning, then content (no tool calls)."""

from __future__ import annotations

from gbnfkit import peg
from gbnfkit._errors import ChatError
from gbnfkit.chat._formats._base import TAG_CONTENT, Syntax, think_block
from gbnfkit.chat._tools import Toolset
from gbnfkit.chat._types import ChatFormat
from gbnfkit.peg import Parser

__all__ = ["ContentSyntax"]


class ContentSyntax(Syntax):
    format = ChatFormat.CONTENT
    has_reasoning = True

    def parser(self, tools: Toolset, *, grammar: bool = False) -> Parser:
        return (
            peg.optional(peg.space() + think_block(closed=False))
            + peg.tag(TAG_CONTENT, peg.rest())
            + peg.end()
        )

    def required_parser(self, tools: Toolset) -> Parser:
        raise ChatError("the 'content' format has no tool calls")
