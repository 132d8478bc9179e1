"""``llama3`` (Llama 3.1 / 3.2 / 3.3): the whole output is one JSON call, or content.

    {"name": "get_weather", "parameters": {"city": "Paris"}}

optionally after ``<|python_tag|>``. Output that starts (after whitespace) with
``<|python_tag|>`` or ``{"name"`` is a tool call, and an error if it is not a valid one;
anything else is content.
"""

from __future__ import annotations

from gbnfkit import peg
from gbnfkit.chat._formats._base import TAG_CONTENT, Syntax, json_call
from gbnfkit.chat._tools import Toolset
from gbnfkit.chat._types import ChatFormat
from gbnfkit.peg import Parser
from gbnfkit.tokens._trigger import Trigger

__all__ = ["Llama3Syntax"]

PYTHON_TAG = "<|python_tag|>"


class Llama3Syntax(Syntax):
    format = ChatFormat.LLAMA3
    content_decided_at_start = False

    def _call(self, tools: Toolset) -> Parser:
        call = json_call(tools, "parameters") + peg.space()
        return (peg.literal(PYTHON_TAG) + peg.space() + call) | call

    def _call_start(self) -> Parser:
        return peg.literal(PYTHON_TAG) | (peg.literal("{") + peg.space() + '"name"')

    def parser(self, tools: Toolset, *, grammar: bool = False) -> Parser:
        call = peg.space() + peg.trigger_rule("tool-call", self._call(tools)) + peg.end()
        content = peg.tag(TAG_CONTENT, peg.negate(peg.space() + self._call_start()) + peg.rest())
        return call | content

    def required_parser(self, tools: Toolset) -> Parser:
        return peg.space() + self._call(tools) + peg.end()

    def triggers(self, tools: Toolset) -> tuple[Trigger, ...]:
        # only a call that opens the output: a '{' later in the content is content; the
        # parser's whitespace (space()), not \s: after a form feed it is content. The
        # pattern matches the whole output so far after every token: [\s\S]* for what
        # the token that completes '{"name"' brings after it (':', ' "get'...)
        return (Trigger.pattern_full(r'[ \t\n\r]*(<\|python_tag\|>|\{[ \t\n\r]*"name")[\s\S]*'),)
