"""``mistral``: content, then ``[TOOL_CALLS]`` and a JSON array of calls.

    [TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "a1b2c3d4e"}]

The ``"id"`` member is optional (Mistral v0.3 writes none, Mistral Nemo writes one).
"""

from __future__ import annotations

from gbnfkit import peg
from gbnfkit.chat._formats._base import TAG_CONTENT, Syntax, json_call
from gbnfkit.chat._tools import Toolset
from gbnfkit.chat._types import ChatFormat
from gbnfkit.peg import Parser

__all__ = ["MistralSyntax"]

OPEN = "[TOOL_CALLS]"


class MistralSyntax(Syntax):
    format = ChatFormat.MISTRAL
    content_delimiters = (OPEN,)

    def _calls(self, tools: Toolset) -> Parser:
        call = json_call(tools, "arguments", with_id=True)
        more = peg.zero_or_more(peg.space() + "," + peg.space() + call)
        return (
            OPEN + peg.space() + "[" + peg.space() + call + more + peg.space() + "]" + peg.space()
        )

    def parser(self, tools: Toolset, *, grammar: bool = False) -> Parser:
        return (
            peg.tag(TAG_CONTENT, peg.until(OPEN))
            + peg.optional(peg.trigger_rule("tool-calls", self._calls(tools)))
            + peg.end()
        )

    def required_parser(self, tools: Toolset) -> Parser:
        return peg.space() + self._calls(tools) + peg.end()
