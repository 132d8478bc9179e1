"""``content``: optional ``<think>…</think>`` reasoning, then content (no tool calls)."""

from __future__ import annotations

from gbnfkit import peg
from gbnfkit._errors import ChatError
from gbnfkit.chat._formats._base import TAG_CONTENT, ReasoningSyntax, leading_reasoning
from gbnfkit.chat._tools import Toolset
from gbnfkit.chat._types import ChatFormat
from gbnfkit.peg import Parser

__all__ = ["ContentSyntax"]


class ContentSyntax(ReasoningSyntax):
    format = ChatFormat.CONTENT

    def parser(
        self, tools: Toolset, *, grammar: bool = False, reasoning_open: bool = False
    ) -> Parser:
        return (
            leading_reasoning(reasoning_open=reasoning_open, closed=False)
            + peg.tag(TAG_CONTENT, peg.rest())
            + peg.end()
        )

    def required_parser(self, tools: Toolset, *, reasoning_open: bool = False) -> Parser:
        raise ChatError("the 'content' format has no tool calls")
