"""parse_message, grammar_for, formats: the functions of :mod:`gbnfkit.chat`."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gbnfkit._errors import ArgumentError, ChatError, ChatParseError, GbnfkitError, PegError
from gbnfkit._grammar import Grammar
from gbnfkit.chat._formats import syntax_of
from gbnfkit.chat._formats._base import (
    THINK_OPEN,
    ReasoningSyntax,
    Syntax,
    triggers_outside_reasoning,
)
from gbnfkit.chat._mapping import Memo, Region, failure, to_message
from gbnfkit.chat._tools import Toolset, tools_from
from gbnfkit.chat._types import ChatFormat, Message, ToolChoice
from gbnfkit.chat._whitespace import bounded_whitespace
from gbnfkit.peg import Parser, ParseResult, ParseStatus
from gbnfkit.peg._result import failure as parse_failure
from gbnfkit.tokens._trigger import Trigger

__all__ = ["ChatGrammar", "ChatParser", "formats", "grammar_for", "parse_message"]

if TYPE_CHECKING:
    from gbnfkit.chat._stream import MessageStream

Tools = Iterable[Mapping[str, object]] | None


def formats() -> list[str]:
    """The names of the chat formats, as :func:`parse_message` takes them."""
    return [f.value for f in ChatFormat]


class ChatParser:
    """One chat format with one tool set, its parser built once: for reading many outputs
    (:meth:`parse`), streaming them (:meth:`stream`) or constraining them (:meth:`grammar`).

    >>> reader = ChatParser("hermes")
    >>> reader.parse("<think>hm</think>Hi").content
    'Hi'
    """

    __slots__ = ("_format", "_parser", "_prefix", "_syntax", "_tools")

    def __init__(
        self,
        format: str | ChatFormat,
        tools: Tools | Toolset = None,
        *,
        reasoning_open: bool = False,
    ) -> None:
        """``reasoning_open``: the prompt ended with ``<think>`` (as DeepSeek-R1's and some
        Qwen3 templates do), so the output starts inside the reasoning."""
        self._format = ChatFormat.parse(format)
        self._syntax: Syntax = syntax_of(self._format)
        self._tools = tools_from(tools)
        self._parser: Parser = self._syntax.parser(self._tools)
        if reasoning_open:
            _reasoning_syntax(self._syntax)
        self._prefix = THINK_OPEN if reasoning_open else ""

    @property
    def reasoning_open(self) -> bool:
        """Whether outputs start inside the reasoning (the prompt opened it)."""
        return bool(self._prefix)

    @property
    def format(self) -> ChatFormat:
        """The chat format."""
        return self._format

    @property
    def parser(self) -> Parser:
        """The :mod:`gbnfkit.peg` parser of whole outputs (tags: see docs/chat.md)."""
        return self._parser

    def __repr__(self) -> str:
        tools = "any tool" if self._tools.open else ", ".join(self._tools.names()) or "no tools"
        return f"<ChatParser {self._format.value} ({tools})>"

    def parse(self, text: str, partial: bool = False) -> Message:
        """The message of output ``text`` (see :func:`parse_message`)."""
        if not isinstance(text, str):
            raise ArgumentError(f"parse takes a str, not {type(text).__name__}")
        if not isinstance(partial, bool):  # "no" would read as True
            raise ArgumentError(f"partial must be True or False, not {partial!r}")
        text = self._prefix + text
        return self._read(self._parse(self._parser.parse, text, partial), text, partial)[0]

    def stream(self) -> MessageStream:
        """A :class:`MessageStream` of one output, sharing this parser."""
        from gbnfkit.chat._stream import MessageStream

        return MessageStream(self)

    def grammar(self, tool_choice: str | ToolChoice | Mapping[str, object] = "auto") -> ChatGrammar:
        """The grammar for these tools (see :func:`grammar_for`); with ``reasoning_open``,
        for output that starts inside the reasoning, as this parser reads it."""
        return _grammar(self._syntax, self._tools, tool_choice, bool(self._prefix))

    def _readable(self, text: str, start: int) -> int:
        """The length of the longest prefix of ``text`` (a text whose partial parse fails)
        whose partial parse does not fail, taken to be at least ``start`` (where the parse
        failed, or the length of a prefix known to be readable). It may go past the
        failure: in ``{"a": fax`` the parse fails where the word ``fa`` began, but
        ``{"a": fa`` was readable (and streamed) as the start of ``false``."""
        return self._parser.incremental()._readable(text, start)

    def _parse(
        self,
        parse: Callable[[str, bool], ParseResult],
        text: str,
        partial: bool,
        settled: int = 0,
    ) -> ParseResult:
        """``parse(text, partial)``: a parse of ``text`` with this parser (or a stream's
        incremental parser of it).

        Output that nests deeper than the parser can follow (JSON arguments a few hundred
        levels deep; the parser raises ``PegError``) fails where it stops being readable
        (``settled``: the length of a prefix known to be). A :class:`ChatParseError` unless
        ``partial``, else a failed result there.
        """
        try:
            return parse(text, partial)
        except PegError:
            pass
        readable = self._readable(text, settled)
        if not partial:
            offset = len(self._prefix)
            raise ChatParseError(
                "the output nests too deeply for the parser (Python's recursion limit)",
                position=max(0, readable - offset),
                text=text[offset:],
            )
        return parse_failure(text, readable, ())

    def _read(
        self,
        result: ParseResult,
        text: str,
        partial: bool,
        memo: Memo | None = None,
        settled: int = 0,
    ) -> tuple[Message, Region | None]:
        """The message (and open region) of ``result``, a parse of ``text`` (which starts
        with the ``<think>`` of ``reasoning_open``).

        A failure raises :class:`ChatParseError` (positions in the output, without that
        ``<think>``) unless ``partial``: then the message is that of the longest prefix of
        ``text`` that does not fail (``settled``: the length of one known not to). ``memo``:
        what the mapping keeps between calls on the texts of one growing output (a
        stream's).
        """
        offset = len(self._prefix)
        while result.status is ParseStatus.FAIL:
            if not partial:
                error = failure(result, text, self._syntax, self._tools)
                raise _shifted(error, offset) if offset else error
            position = result.position if result.position is not None else result.end
            length = self._readable(text, max(min(position, len(text) - 1), settled))
            if length <= offset:
                return Message(), None
            text = text[:length]
            result = self._parse(self._parser.parse, text, True)
        if not partial and (result.status is not ParseStatus.SUCCESS or result.end != len(text)):
            raise ChatParseError(
                "the output ends before the chat format allows it to",
                position=result.end - offset,
                text=text[offset:],
            )
        return to_message(result, text, self._syntax, self._tools, partial, memo)


def _reasoning_syntax(syntax: Syntax) -> ReasoningSyntax:
    """``syntax``, for output that starts inside the reasoning (a :class:`ChatError` when
    its format has no reasoning)."""
    if not isinstance(syntax, ReasoningSyntax):
        raise ChatError(
            f"the {syntax.name!r} format has no reasoning to start in (reasoning_open is for "
            f"{', '.join(repr(f.value) for f in ChatFormat if f.has_reasoning)})"
        )
    return syntax


def _shifted(error: ChatParseError, offset: int) -> ChatParseError:
    """``error`` with its position in the output that follows ``offset`` characters."""
    return ChatParseError(
        error.message,
        position=max(0, error.position - offset),
        text=error.text[offset:],
        expected=error.expected,
    )


def parse_message(
    text: str,
    format: str | ChatFormat,
    tools: Tools = None,
    partial: bool = False,
    *,
    reasoning_open: bool = False,
) -> Message:
    """Read a model's output ``text`` written in chat ``format`` (see :func:`formats`).

    ``tools``: OpenAI-style tool definitions; tool calls must name one of them (``None``:
    any name). ``partial=True``: ``text`` is the start of an output still being written;
    the message holds what is already decided (see :class:`MessageStream`).

    Raises :class:`gbnfkit.ChatParseError` (with ``position``) for output that does not
    follow the format (an unknown tool, arguments that are not JSON...), unless
    ``partial``: then the message stops before the fault.

    ``reasoning_open``: the prompt ended with ``<think>``, so ``text`` starts inside the
    reasoning (formats with reasoning only).
    """
    return ChatParser(format, tools, reasoning_open=reasoning_open).parse(text, partial)


@dataclass(frozen=True)
class ChatGrammar:
    """What :func:`grammar_for` returns.

    ``grammar``: the grammar to constrain generation with; ``triggers``: for a lazy
    grammar, what wakes it (pass both to ``CompiledGrammar.matcher(triggers=...)``);
    empty for an eager grammar, which constrains from the first character.
    """

    grammar: Grammar
    triggers: tuple[Trigger, ...]

    @property
    def lazy(self) -> bool:
        """Whether the grammar waits for a trigger."""
        return bool(self.triggers)


def _choice(tool_choice: object, tools: Toolset) -> tuple[ToolChoice, Toolset]:
    if isinstance(tool_choice, ToolChoice):
        return tool_choice, tools
    if isinstance(tool_choice, Mapping):
        function = tool_choice.get("function")
        name = function.get("name") if isinstance(function, Mapping) else None
        if not isinstance(name, str):
            raise ChatError(f"a tool_choice object names a function: {tool_choice!r}")
        return _named(name, tools, named=True)  # a tool called 'auto' is that tool
    if not isinstance(tool_choice, str):
        raise ChatError(f"tool_choice must be a str, not {type(tool_choice).__name__}")
    for member in ToolChoice:
        if member.value == tool_choice:
            return member, tools
    return _named(tool_choice, tools, named=False)


def _named(name: str, tools: Toolset, *, named: bool) -> tuple[ToolChoice, Toolset]:
    """The choice that forces a call of the tool ``name`` (``named``: given in a
    tool_choice object, where it can only be a tool's name)."""
    tool = tools.get(name)
    if tool is None:
        known = ", ".join(repr(n) for n in tools.names()) or "none"
        what = "names no tool" if named else "is neither 'auto', 'required' nor a tool name"
        raise ChatError(f"tool_choice {name!r} {what} (tools: {known})")
    return ToolChoice.REQUIRED, Toolset((tool,), False)


def grammar_for(
    format: str | ChatFormat,
    tools: Tools = None,
    tool_choice: str | ToolChoice | Mapping[str, object] = "auto",
    *,
    reasoning_open: bool = False,
) -> ChatGrammar:
    """The grammar that constrains output in ``format`` to valid tool calls.

    ``tools``: as for :func:`parse_message` (``None``: calls of any name, with any JSON
    object as arguments).

    ``tool_choice``: ``"auto"`` (a lazy grammar, woken by the start of a tool call),
    ``"required"`` (an eager grammar: the output is tool calls, after optional
    reasoning), or a tool's name (required, that tool only). Each tool's ``parameters``
    schema constrains its arguments. Built from the same parser as :func:`parse_message`.

    ``reasoning_open``: the prompt ended with ``<think>``, so the output starts inside
    the reasoning (formats with reasoning only): a lazy grammar wakes only after the
    first ``</think>``, an eager one starts with the reasoning and its ``</think>``.
    """
    syntax = syntax_of(ChatFormat.parse(format))
    return _grammar(syntax, tools_from(tools), tool_choice, reasoning_open)


def _grammar(
    syntax: Syntax,
    toolset: Toolset,
    tool_choice: str | ToolChoice | Mapping[str, object],
    reasoning_open: bool,
) -> ChatGrammar:
    try:
        return _built_grammar(syntax, toolset, tool_choice, reasoning_open)
    except PegError as error:  # a tool's parameters schema the converter refuses
        raise _tool_schema_error(toolset, error) from None


def _tool_schema_error(toolset: Toolset, error: PegError) -> ChatError:
    """The ChatError of a grammar that could not be built, naming the tool at fault."""
    from gbnfkit.schema._api import json_schema_to_gbnf

    for tool in toolset.tools:
        try:
            json_schema_to_gbnf(dict(tool.parameters))
        except (GbnfkitError, RecursionError) as cause:
            fault = ChatError(f"tool {tool.name!r}: its parameters schema has no grammar: {cause}")
            fault.tool = tool.name
            return fault
    return ChatError(f"the tools' grammar cannot be built: {error}")


def _built_grammar(
    syntax: Syntax,
    toolset: Toolset,
    tool_choice: str | ToolChoice | Mapping[str, object],
    reasoning_open: bool,
) -> ChatGrammar:
    opened = _reasoning_syntax(syntax) if reasoning_open else None
    choice, chosen = _choice(tool_choice, toolset)
    if not syntax.has_tool_calls:
        if choice is ToolChoice.REQUIRED:
            raise ChatError(f"the {syntax.name!r} format has no tool calls to require")
        if opened is not None:
            whole = opened.parser(chosen, grammar=True, reasoning_open=True)
        else:
            whole = syntax.parser(chosen, grammar=True)
        return ChatGrammar(bounded_whitespace(whole).to_grammar(), ())
    if not chosen.open and not chosen.tools:
        raise ChatError("grammar_for needs at least one tool (or tools=None for any tool)")
    if choice is ToolChoice.REQUIRED:
        if opened is not None:
            required = opened.required_parser(chosen, reasoning_open=True)
            return ChatGrammar(bounded_whitespace(required).to_grammar(), ())
        return ChatGrammar(bounded_whitespace(syntax.required_parser(chosen)).to_grammar(), ())
    # the lazy grammar is the tool-call section alone: only its triggers see the reasoning
    lazy = bounded_whitespace(syntax.parser(chosen, grammar=True)).to_grammar(lazy=True)
    triggers = syntax.triggers(chosen)
    if triggers is None:
        triggers = lazy.triggers
        if syntax.has_reasoning:  # a tool-call tag inside <think>…</think> is reasoning
            triggers = triggers_outside_reasoning(triggers, reasoning_open=reasoning_open)
    return ChatGrammar(lazy.grammar, triggers)
