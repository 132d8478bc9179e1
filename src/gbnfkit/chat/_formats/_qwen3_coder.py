"""``qwen3-coder``: XML-like calls whose parameter values are raw text.

    <tool_call>
    <function=get_weather>
    <parameter=city>
    Paris
    </parameter>
    <parameter=days>
    3
    </parameter>
    </function>
    </tool_call>

A value is converted to the parameter's JSON type from the tool's schema: a string (or a
parameter of unknown type) stays text, anything else must be JSON. One newline after the
opening tag and one before the closing tag are not part of the value. The parser takes the
parameters in any order; the grammar asks for them in the schema's order, the required
ones always.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gbnfkit import peg
from gbnfkit.chat._formats._base import (
    TAG_CONTENT,
    TAG_NAME,
    TAG_PARAM,
    TAG_PARAM_NAME,
    TAG_PARAM_VALUE,
    TAG_TOOL,
    Syntax,
    ordered_tools,
    rule_name,
    string_typed,
)
from gbnfkit.chat._tools import Tool, Toolset
from gbnfkit.chat._types import ChatFormat
from gbnfkit.peg import Parser

__all__ = ["Qwen3CoderSyntax"]

OPEN = "<tool_call>"
CLOSE = "</tool_call>"
PARAM_CLOSE = "</parameter>"
ANY_NAME = '[^\\x00-\\x20<>="]'


def _value(tool: Tool | None, index: int, name: str | None) -> Parser:
    text = peg.until(PARAM_CLOSE)
    schema = None if tool is None or name is None else tool.property_schema(name)
    if tool is None or name is None or schema is None:
        return peg.tag(TAG_PARAM_VALUE, text)
    rule = rule_name(f"p{index}-", tool.property_names().index(name), name)
    if string_typed(schema, tool.resolve):
        # the parser reads any text here: a schema that may also be something else (a
        # string or null) has the grammar of any text, not JSON's quoted strings
        if not _text_schema(schema):
            schema = {"type": "string"}
        raw = peg.schema(text, rule, dict(schema), raw=True)
        return peg.tag(TAG_PARAM_VALUE, peg.optional("\n") + raw + peg.optional("\n"))
    value = peg.schema(peg.json(), rule, tool.standalone(schema))
    return peg.tag(TAG_PARAM_VALUE, peg.space() + value + peg.space())


def _text_schema(schema: Mapping[str, Any]) -> bool:
    """A schema whose raw grammar (``peg.schema(..., raw=True)``) is text: a string, or
    a constant or choice of strings."""
    if schema.get("type") == "string":
        return True
    if "const" in schema:
        return isinstance(schema["const"], str)
    values = schema.get("enum")
    return isinstance(values, list) and bool(values) and all(isinstance(v, str) for v in values)


def _parameter(tool: Tool | None, index: int, name: str | None) -> Parser:
    if name is None:
        label = peg.tag(TAG_PARAM_NAME, peg.chars(ANY_NAME, 1, None))
    else:
        label = peg.tag(TAG_PARAM_NAME, peg.literal(name))
    return peg.tag(
        TAG_PARAM,
        "<parameter=" + label + ">" + _value(tool, index, name) + PARAM_CLOSE + peg.space(),
    )


def _parameters(tool: Tool | None, index: int, ordered: bool) -> Parser:
    names = tool.property_names() if tool is not None else ()
    if not names:
        return peg.zero_or_more(_parameter(tool, index, None))
    if not ordered:
        longest_first = sorted(names, key=len, reverse=True)
        return peg.zero_or_more(peg.choice(*(_parameter(tool, index, n) for n in longest_first)))
    assert tool is not None
    required = tool.required()
    parts = [
        _parameter(tool, index, n) if n in required else peg.optional(_parameter(tool, index, n))
        for n in names
    ]
    return peg.sequence(*parts)


class Qwen3CoderSyntax(Syntax):
    format = ChatFormat.QWEN3_CODER
    content_delimiters = (OPEN,)
    parameters = True

    def _calls(self, tools: Toolset, ordered: bool) -> Parser:
        alternatives = []
        for index, tool in ordered_tools(tools):
            if tool is None:
                name = peg.tag(TAG_NAME, peg.chars(ANY_NAME, 1, None))
            else:
                name = peg.tag(TAG_NAME, peg.literal(tool.name))
            body = (
                "<function="
                + name
                + ">"
                + peg.space()
                + _parameters(tool, index, ordered)
                + "</function>"
            )
            alternatives.append(peg.tag(TAG_TOOL, body))
        call = OPEN + peg.space() + peg.choice(*alternatives) + peg.space() + CLOSE
        # (a trigger rule starts with its trigger word, so no repeat up front)
        return call + peg.space() + peg.zero_or_more(call + peg.space())

    def parser(self, tools: Toolset, *, grammar: bool = False) -> Parser:
        return (
            peg.tag(TAG_CONTENT, peg.until(OPEN))
            + peg.optional(peg.trigger_rule("tool-calls", self._calls(tools, grammar)))
            + peg.end()
        )

    def required_parser(self, tools: Toolset) -> Parser:
        return peg.space() + self._calls(tools, True) + peg.end()
