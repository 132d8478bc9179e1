"""``hermes`` (Hermes 2 Pro, Qwen 2.5, Qwen3): ``<tool_call>`` JSON ``</tool_call>`` blocks.

<think>reasoning</think>content
<tool_call>
{"name": "get_weather", "arguments": {"city": "Paris"}}
</tool_call>
"""

from __future__ import annotations

from gbnfkit import peg
from gbnfkit.chat._formats._base import ReasoningCallsSyntax, json_call
from gbnfkit.chat._tools import Toolset
from gbnfkit.chat._types import ChatFormat
from gbnfkit.peg import Parser

__all__ = ["HermesSyntax"]

OPEN = "<tool_call>"
CLOSE = "</tool_call>"


class HermesSyntax(ReasoningCallsSyntax):
    format = ChatFormat.HERMES
    content_delimiters = (OPEN,)

    def _calls(self, tools: Toolset) -> Parser:
        call = OPEN + peg.space() + json_call(tools, "arguments") + peg.space() + CLOSE
        # (a trigger rule starts with its trigger word, so no repeat up front)
        return call + peg.space() + peg.zero_or_more(call + peg.space())
