"""What every chat format defines, and the building blocks they share.

A format is one PEG definition (:mod:`gbnfkit.peg`) per tool set: the same parser reads
model output (:func:`gbnfkit.chat.parse_message`) and, through ``to_grammar``, constrains
it (:func:`gbnfkit.chat.grammar_for`). The parsers tag what the message is made of:

``reasoning``  the text inside ``<think>…</think>``
``content``    the text outside reasoning and tool calls (separating whitespace included;
               :mod:`gbnfkit.chat._mapping` removes it)
``tool``       one tool call, holding ``tool-name``, ``tool-id`` and either ``tool-args``
               (JSON text) or ``param`` nodes (``param-name``, ``param-value``: raw text)
"""

from __future__ import annotations

import json
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from gbnfkit import peg
from gbnfkit.chat._tools import Tool, Toolset
from gbnfkit.chat._types import ChatFormat
from gbnfkit.peg import Parser
from gbnfkit.tokens._trigger import Trigger, TriggerKind

__all__ = [
    "ReasoningCallsSyntax",
    "ReasoningSyntax",
    "Syntax",
    "TAG_ARGS",
    "TAG_CONTENT",
    "TAG_ID",
    "TAG_NAME",
    "TAG_PARAM",
    "TAG_PARAM_NAME",
    "TAG_PARAM_VALUE",
    "TAG_REASONING",
    "TAG_TOOL",
    "THINK_CLOSE",
    "THINK_OPEN",
    "json_call",
    "leading_reasoning",
    "ordered_tools",
    "rule_name",
    "string_typed",
    "think_block",
    "tool_arguments",
    "triggers_outside_reasoning",
]

TAG_REASONING = "reasoning"
TAG_CONTENT = "content"
TAG_TOOL = "tool"
TAG_NAME = "tool-name"
TAG_ID = "tool-id"
TAG_ARGS = "tool-args"
TAG_PARAM = "param"
TAG_PARAM_NAME = "param-name"
TAG_PARAM_VALUE = "param-value"

THINK_OPEN = "<think>"
THINK_CLOSE = "</think>"

_MAX_SCHEMA_DEPTH = 32  # anyOf/oneOf/allOf levels string_typed looks into


class Syntax(ABC):
    """One chat format: its parsers and what the streaming layer needs to know of it."""

    format: ChatFormat
    has_reasoning: bool = False
    """An optional ``<think>…</think>`` block may open the output."""
    content_delimiters: tuple[str, ...] = ()
    """The texts that end the content (the start of the tool-call section)."""
    content_decided_at_start: bool = True
    """Content is known as content from its first character (llama3: not before the
    output has shown it is no tool call)."""
    parameters: bool = False
    """Arguments are XML-like parameters (converted to JSON by type), not JSON text."""

    @property
    def name(self) -> str:
        return self.format.value

    @property
    def has_tool_calls(self) -> bool:
        return bool(self.content_delimiters) or not self.content_decided_at_start

    @abstractmethod
    def parser(self, tools: Toolset, *, grammar: bool = False) -> Parser:
        """The whole output: reasoning, content, the tool-call section as a trigger rule.

        ``grammar``: the stricter form a grammar is built from, where a format's parser is
        lenient (qwen3-coder's parameter order)."""

    @abstractmethod
    def required_parser(self, tools: Toolset) -> Parser:
        """Output that must call tools (optional reasoning, then one or more calls)."""

    def triggers(self, tools: Toolset) -> tuple[Trigger, ...] | None:
        """The triggers of the lazy grammar, when not those of the trigger rules."""
        return None


class ReasoningSyntax(Syntax):
    """A format whose output may open with ``<think>…</think>`` reasoning; its parsers
    also come in the form for output that starts inside the reasoning (``reasoning_open``:
    the prompt ended with ``<think>``), which grammars are built from."""

    has_reasoning = True

    @abstractmethod
    def parser(
        self, tools: Toolset, *, grammar: bool = False, reasoning_open: bool = False
    ) -> Parser:
        """As :meth:`Syntax.parser`; ``reasoning_open``: the output after a ``<think>``
        the prompt wrote (it starts inside the reasoning)."""

    @abstractmethod
    def required_parser(self, tools: Toolset, *, reasoning_open: bool = False) -> Parser:
        """As :meth:`Syntax.required_parser`; ``reasoning_open``: the reasoning is open at
        the start and must be closed before the calls."""


class ReasoningCallsSyntax(ReasoningSyntax):
    """Optional reasoning, content up to the tool-call section, then the section
    (hermes, deepseek-r1): a format only says what its section looks like."""

    @abstractmethod
    def _calls(self, tools: Toolset) -> Parser:
        """The tool-call section; it starts with ``content_delimiters[0]``."""

    def parser(
        self, tools: Toolset, *, grammar: bool = False, reasoning_open: bool = False
    ) -> Parser:
        return (
            leading_reasoning(reasoning_open=reasoning_open, closed=False)
            + peg.tag(TAG_CONTENT, peg.until(self.content_delimiters[0]))
            + peg.optional(peg.trigger_rule("tool-calls", self._calls(tools)))
            + peg.end()
        )

    def required_parser(self, tools: Toolset, *, reasoning_open: bool = False) -> Parser:
        return (
            leading_reasoning(reasoning_open=reasoning_open, closed=True)
            + peg.space()
            + self._calls(tools)
            + peg.end()
        )


def rule_name(prefix: str, index: int, name: str) -> str:
    """A GBNF rule name (letters, digits, ``-``) for ``name``, unique through ``index``."""
    cleaned = re.sub(r"[^A-Za-z0-9-]+", "-", name).strip("-")[:40] or "x"
    return f"{prefix}{index}-{cleaned}"


def think_block(*, closed: bool) -> Parser:
    """``<think>`` reasoning ``</think>``; unless ``closed``, the output may end inside it."""
    return peg.literal(THINK_OPEN) + _inside_think(closed=closed)


def _inside_think(*, closed: bool) -> Parser:
    """What follows ``<think>``: the reasoning up to the first ``</think>``, and that."""
    close: Parser = peg.literal(THINK_CLOSE)
    if not closed:
        close = close | peg.end()
    return peg.tag(TAG_REASONING, peg.until(THINK_CLOSE)) + close


def leading_reasoning(*, reasoning_open: bool, closed: bool) -> Parser:
    """The reasoning that may open an output: an optional :func:`think_block`, or with
    ``reasoning_open`` (the prompt wrote the ``<think>``) the reasoning text and its
    ``</think>``.

    Unless ``closed`` the output may end inside the reasoning. The open form reads text as
    the other reads ``<think>`` + text: the reasoning ends at the first ``</think>``.
    """
    if reasoning_open:
        return _inside_think(closed=closed)
    return peg.optional(peg.space() + think_block(closed=closed))


def triggers_outside_reasoning(
    triggers: Sequence[Trigger], *, reasoning_open: bool = False
) -> tuple[Trigger, ...]:
    r"""The word ``triggers`` as one ``pattern_full`` trigger that fires on the first of the
    words *after* an optional leading ``<think>…</think>`` block, as the parser reads it:
    never inside the reasoning, closed or still open. The grammar starts at the word.

    ``reasoning_open``: the output starts inside the reasoning (the prompt wrote the
    ``<think>``), so the words count only after its first ``</think>``.

    The regular expression runs in time linear in the output: the reasoning is matched up to
    the first ``</think>`` only (a tempered ``(?:[^<]|<(?!/think>))*``, never a lazy
    ``[\s\S]*?`` that could extend past it), and when the output opens with ``<think>``
    the branch without reasoning is shut by a look-ahead instead of being retried.
    """
    words: list[str] = []
    for trigger in triggers:
        if trigger.kind is not TriggerKind.WORD or not isinstance(trigger.value, str):
            raise AssertionError(f"a trigger rule gives word triggers, not {trigger!r}")
        words.append(re.escape(trigger.value))
    open_, close = re.escape(THINK_OPEN), re.escape(THINK_CLOSE)
    inside = rf"(?:[^<]|<(?!{re.escape(THINK_CLOSE[1:])}))*{close}"
    # the parser's whitespace (space()), not \s: a form feed or a no-break space before
    # <think> makes the block content, and a tag in it a tool call
    ws = r"[ \t\n\r]*"
    lead = inside if reasoning_open else rf"(?:{ws}{open_}{inside}|(?!{ws}{open_}))"
    regex = rf"{lead}[\s\S]*?({'|'.join(words)})[\s\S]*"
    return (Trigger.pattern_full(regex),)


def tool_arguments(tool: Tool | None, index: int) -> Parser:
    """The arguments object: any JSON object; in a grammar, the tool's parameters schema."""
    body = peg.tag(TAG_ARGS, peg.json_object())
    if tool is None:
        return body
    return peg.schema(body, rule_name("args", index, tool.name), dict(tool.parameters))


def quoted_name(tool: Tool | None) -> Parser:
    """The tool's name as a JSON string (any name when ``tool`` is ``None``)."""
    if tool is None:
        return '"' + peg.tag(TAG_NAME, peg.json_string_content()) + '"'
    quoted = json.dumps(tool.name, ensure_ascii=False)
    return '"' + peg.tag(TAG_NAME, peg.literal(quoted[1:-1])) + '"'


def json_call(
    tools: Toolset,
    arguments_key: str,
    *,
    with_id: bool = False,
) -> Parser:
    """``{"name": NAME, "<arguments_key>": {…}}`` (plus an optional ``"id"``) for each tool,
    the longest names first so that no name stops the choice at a shorter one."""
    alternatives: list[Parser] = []
    for index, tool in ordered_tools(tools):
        body = (
            peg.literal("{")
            + peg.space()
            + peg.json_member("name", quoted_name(tool))
            + peg.space()
            + ","
            + peg.space()
            + peg.json_member(arguments_key, tool_arguments(tool, index))
        )
        if with_id:
            body = body + peg.optional(
                peg.space()
                + ","
                + peg.space()
                + peg.json_member("id", '"' + peg.tag(TAG_ID, peg.json_string_content()) + '"')
            )
        alternatives.append(peg.tag(TAG_TOOL, body + peg.space() + "}"))
    return peg.choice(*alternatives)


def ordered_tools(tools: Toolset) -> Sequence[tuple[int, Tool | None]]:
    """``(index, tool)`` longest name first, so that an ordered choice of names never stops
    at a shorter one that starts a longer one; ``[(0, None)]`` for an open tool set."""
    if tools.open:
        return [(0, None)]
    indexed = list(enumerate(tools.tools))
    indexed.sort(key=lambda item: -len(item[1].name))
    return [(i, t) for i, t in indexed]


def string_typed(
    schema: Mapping[str, Any] | None,
    resolve: Callable[[Mapping[str, Any]], Mapping[str, Any]] | None = None,
    _depth: int = 0,
) -> bool:
    """A parameter whose value is written as raw text: one that may be a string (``type``
    ``"string"`` or a list with it, an ``anyOf``/``oneOf`` with such a branch, an
    ``allOf`` of such parts), or of unknown type. ``resolve`` follows a ``$ref``."""
    if schema is None:
        return True
    if _depth > _MAX_SCHEMA_DEPTH:
        return False  # a branch that only leads back to itself (a $ref loop) adds no type
    if resolve is not None:
        schema = resolve(schema)
    kind = schema.get("type")
    if kind is None:
        if "const" in schema:
            return isinstance(schema["const"], str)
        if "enum" in schema:
            values = schema["enum"]
            return isinstance(values, list) and all(isinstance(v, str) for v in values)
        for key in ("anyOf", "oneOf"):
            branches = schema.get(key)
            if isinstance(branches, list) and branches:
                return any(not isinstance(b, Mapping) or string_typed(b, resolve, _depth + 1)
                           for b in branches)
        parts = schema.get("allOf")
        if isinstance(parts, list) and parts:
            return all(not isinstance(p, Mapping) or string_typed(p, resolve, _depth + 1)
                       for p in parts)
        return not any(k in schema for k in ("properties", "items"))
    if isinstance(kind, str):
        return kind == "string"
    if isinstance(kind, list):
        return "string" in kind
    return False
