"""``deepseek-r1``: ``<think>`` reasoning, content, then DeepSeek's tool-call tokens.

<think>reasoning</think>content<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather
```json
{"city": "Paris"}
```<｜tool▁call▁end｜><｜tool▁calls▁end｜>
"""

from __future__ import annotations

from gbnfkit import peg
from gbnfkit.chat._formats._base import (
    TAG_NAME,
    TAG_TOOL,
    ReasoningCallsSyntax,
    ordered_tools,
    tool_arguments,
)
from gbnfkit.chat._tools import Toolset
from gbnfkit.chat._types import ChatFormat
from gbnfkit.peg import Parser

__all__ = ["DeepSeekR1Syntax"]

CALLS_BEGIN = "<｜tool▁calls▁begin｜>"
CALLS_END = "<｜tool▁calls▁end｜>"
CALL_BEGIN = "<｜tool▁call▁begin｜>"
CALL_END = "<｜tool▁call▁end｜>"
SEP = "<｜tool▁sep｜>"
ANY_NAME = '[^\\x00-\\x20`<>"\\\\]'


class DeepSeekR1Syntax(ReasoningCallsSyntax):
    format = ChatFormat.DEEPSEEK_R1
    content_delimiters = (CALLS_BEGIN,)

    def _calls(self, tools: Toolset) -> Parser:
        alternatives = []
        for index, tool in ordered_tools(tools):
            if tool is None:
                name = peg.tag(TAG_NAME, peg.chars(ANY_NAME, 1, None))
            else:
                name = peg.tag(TAG_NAME, peg.literal(tool.name))
            body = (
                CALL_BEGIN
                + peg.literal("function")
                + SEP
                + name
                + peg.space()
                + "```json"
                + peg.space()
                + tool_arguments(tool, index)
                + peg.space()
                + "```"
                + peg.space()
                + CALL_END
            )
            alternatives.append(peg.tag(TAG_TOOL, body))
        call = peg.choice(*alternatives)
        return (
            CALLS_BEGIN
            + peg.space()
            + call
            + peg.zero_or_more(peg.space() + call)
            + peg.space()
            + CALLS_END
            + peg.space()
        )
