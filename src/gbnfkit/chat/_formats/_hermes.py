"""``hermes`` (Hermes 2 Pro, Qwen 2.5, Qwen3): ``<tool_call>`` JSON ``</tool_call>`` blocks.

<think>reasoning</think>content
<tool_call>
{"name": "get_weather", "arguments": {"city": "Paris"}}
</tool_call>
"""

from __future__ import annotations

from gbnfkit import peg
from gbnfkit.chat._formats._base import TAG_CONTENT, Syntax, json_call, think_block
from gbnfkit.chat._tools import Toolset
from gbnfkit.chat._types import ChatFormat
from gbnfkit.peg import Parser

__all__ = ["HermesSyntax"]

OPEN = "<tool_call>"
CLOSE = "</tool_call>"


class HermesSyntax(Syntax):
    format = ChatFormat.HERMES
    has_reasoning = True
    content_delimiters = (OPEN,)

    def _calls(self, tools: Toolset) -> Parser:
        call = OPEN + peg.space() + json_call(tools, "arguments") + peg.space() + CLOSE
        # (a trigger rule starts with its trigger word, so no repeat up front)
        return call + peg.space() + peg.zero_or_more(call + peg.space())

    def parser(self, tools: Toolset, *, grammar: bool = False) -> Parser:
        return (
            peg.optional(peg.space() + think_block(closed=False))
            + peg.tag(TAG_CONTENT, peg.until(OPEN))
            + peg.optional(peg.trigger_rule("tool-calls", self._calls(tools)))
            + peg.end()
        )

    def required_parser(self, tools: Toolset) -> Parser:
        return (
            peg.optional(peg.space() + think_block(closed=True))
            + peg.space()
            + self._calls(tools)
            + peg.end()
        )
