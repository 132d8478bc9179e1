"""From a parse result (the tagged AST of a format's parser) to a :class:`Message`.

With ``partial=True`` the message holds only what later text cannot change: the tail of
a part that may still turn into separating whitespace or into the start of a tag is held
back, a tool call appears once its name is complete, and a parameter that is not text
(qwen3-coder) once its value is complete. So the message of a longer text always
extends the message of a shorter one, which is what streaming relies on.

The mapping also reports the *open region*: the part the text ends in, when more plain
text would only be appended to it. :class:`gbnfkit.chat.MessageStream` uses it to skip
parsing while a chunk holds none of the region's stop characters.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import re
import sys
from dataclasses import dataclass

from gbnfkit._errors import ChatParseError
from gbnfkit.chat._formats._base import (
    TAG_ARGS,
    TAG_CONTENT,
    TAG_ID,
    TAG_NAME,
    TAG_PARAM,
    TAG_PARAM_NAME,
    TAG_PARAM_VALUE,
    TAG_REASONING,
    TAG_TOOL,
    THINK_CLOSE,
    Syntax,
    string_typed,
)
from gbnfkit.chat._formats._qwen3_coder import PARAM_CLOSE
from gbnfkit.chat._tools import Toolset
from gbnfkit.chat._types import Message, ToolCall
from gbnfkit.peg import AstNode, ParseResult, ParseStatus

__all__ = [
    "Field",
    "Memo",
    "Trim",
    "Region",
    "to_message",
    "held_suffix",
    "lead_strip",
    "until_held",
]

_WS = " \t\r\n"
_CONTROL = "".join(chr(c) for c in range(0x20))


class Field(enum.Enum):
    """The part of a message an open region adds to."""

    CONTENT = "content"
    REASONING = "reasoning_content"
    ARGUMENTS = "arguments"


class Trim(enum.Enum):
    """Whitespace that is not part of a value, at one of its ends."""

    NONE = "none"
    WHITESPACE = "whitespace"
    """All whitespace."""
    NEWLINE = "newline"
    """One ``\\n``."""


@dataclass(slots=True)
class Region:
    """The open end of a partial message (see the module docstring).

    ``stops``: characters that may change the structure (the first characters of the
    delimiters that can end the region); ``lead``: leading whitespace still to drop
    (nothing of the region has been kept yet); ``hold``: trailing whitespace that stays
    held back; ``pending``: the raw text held back now; ``escape``: the region's text is
    written into a JSON string; ``json_string``: the region is the inside of a JSON string
    in the output (escapes are checked as they come, a quote ends it); ``delimiter``: the
    region is text up to the first ``delimiter`` (``until``), so a tail of the text that
    may start it is held back too. ``slow``: the
    characters that, fed alone, need more than appending, and ``held`` those of them
    that are only held back (both derived from the others).
    """

    field: Field
    tool_index: int
    stops: str
    lead: Trim
    hold: Trim
    pending: str
    escape: bool = False
    json_string: bool = False
    delimiter: str = ""
    slow: str = dataclasses.field(init=False)
    held: str = dataclasses.field(init=False)

    def __post_init__(self) -> None:
        slow = self.stops
        held = ""
        if self.hold is Trim.WHITESPACE:
            held = "".join(c for c in _WS if c not in self.stops)
        elif self.hold is Trim.NEWLINE and "\n" not in self.stops:
            held = "\n"
        self.held = held
        if self.hold is Trim.WHITESPACE:
            slow += _WS
        elif self.hold is Trim.NEWLINE:
            slow += "\n"
        if self.escape or self.json_string:
            slow += '"\\' + _CONTROL
        self.slow = slow


def lead_strip(raw: str, trim: Trim) -> str:
    if trim is Trim.WHITESPACE:
        return raw.lstrip(_WS)
    if trim is Trim.NEWLINE and raw.startswith("\n"):
        return raw[1:]
    return raw


def held_suffix(raw: str, trim: Trim) -> int:
    """How many characters at the end of ``raw`` ``trim`` would remove."""
    if trim is Trim.WHITESPACE:
        return len(raw) - len(raw.rstrip(_WS))
    if trim is Trim.NEWLINE and raw.endswith("\n"):
        return 1
    return 0


def until_held(raw: str, delimiter: str, trim: Trim) -> int:
    """How many characters at the end of ``raw`` (text that does not hold ``delimiter``)
    are held back: the longest tail that may still become ``delimiter``, and what
    ``trim`` would remove before it."""
    n = len(raw)
    cut = n
    at = raw.find(delimiter[0], max(0, n - len(delimiter) + 1))
    while at >= 0:
        if delimiter.startswith(raw[at:]):
            cut = at
            break
        at = raw.find(delimiter[0], at + 1)
    return n - cut + held_suffix(raw[:cut], trim)


def _strip(raw: str, lead: Trim, tail: Trim) -> str:
    raw = lead_strip(raw, lead)
    cut = held_suffix(raw, tail)
    return raw[: len(raw) - cut]


def _first(node: AstNode, tag: str) -> AstNode | None:
    for child in node.children:
        if child.tag == tag:
            return child
    return None


def _settled(node: AstNode | None, text: str, partial: bool) -> bool:
    """A node that later text cannot extend."""
    if node is None:
        return False
    return not partial or (not node.is_partial and node.end < len(text))


# possessive: runs of characters at a time, and no backtracking into an unclosed string;
# Python 3.10 has no possessive quantifiers, and the greedy form matches the same (an
# unclosed string fails at its end, and the loop stops before its quote)
_JSON_OUTSIDE_STRINGS = re.compile(
    r'(?:[^"]++|"(?:[^"\\]++|\\.)*+")*+'
    if sys.version_info >= (3, 11)
    else r'(?:[^"]+|"(?:[^"\\]|\\.)*")*',
    re.DOTALL,
)


class Memo:
    """What the mapping of one growing output keeps from one rebuild of its message to
    the next (a :class:`gbnfkit.chat.MessageStream` has one): every text mapped with a
    memo must be a prefix of one same output, so a node that starts at the same place
    holds the same text, and one that ends at the same place too is the same node.

    ``outside``: for the JSON arguments that start at a position, how far their text was
    scanned, ending outside strings; ``calls``: the tool calls of settled tool-call nodes,
    by span; ``pieces``: the JSON member of settled qwen3-coder parameters, by span;
    ``escaped``: for the text value that starts at a position, the length of the text
    written into a JSON string so far and its escaped form.

    So that a message of many tool calls is not read again whole at every rebuild:
    ``walked``, the top-level nodes but the last of the previous rebuild and what the walk
    over them found (reasoning node, content node, tool-call nodes); ``settled``, the
    leading tool-call nodes that were settled and their calls. A rebuild whose nodes begin
    with the same ones (a tuple comparison, by identity first) goes on from there.
    """

    __slots__ = ("calls", "escaped", "outside", "pieces", "settled", "walked")

    def __init__(self) -> None:
        self.outside: dict[int, int] = {}
        self.calls: dict[tuple[int, int], ToolCall] = {}
        self.pieces: dict[tuple[int, int], str] = {}
        self.escaped: dict[int, tuple[int, str]] = {}
        self.walked: _Walk | None = None
        self.settled: tuple[tuple[AstNode, ...], tuple[ToolCall, ...]] = ((), ())


@dataclass(frozen=True)
class _Walk:
    """The walk over some top-level nodes: what :func:`to_message` found in them."""

    nodes: tuple[AstNode, ...]
    reasoning: AstNode | None
    content: AstNode | None
    tools: tuple[AstNode, ...]


def _in_json_string(raw: str) -> bool:
    """Whether JSON text ``raw`` ends inside a string, not right after a backslash."""
    closed = _JSON_OUTSIDE_STRINGS.match(raw)
    return _ends_in_string(raw[closed.end() :] if closed is not None else raw)


def _node_in_json_string(node: AstNode, memo: Memo | None) -> bool:
    """:func:`_in_json_string` of ``node.text``, resuming where the scan of the same
    node in a shorter text stopped (``memo``)."""
    if memo is None:
        return _in_json_string(node.text)
    start = node.start
    scanned = memo.outside.get(start, start)
    if scanned > node.end:
        scanned = start
    text = node.text
    closed = _JSON_OUTSIDE_STRINGS.match(text, scanned - start)
    at = closed.end() if closed is not None else scanned - start
    memo.outside[start] = start + at
    return _ends_in_string(text[at:])


def _ends_in_string(rest: str) -> bool:
    """Whether ``rest``, the JSON text from the first string that does not close, ends
    inside that string and not right after a backslash."""
    if not rest:
        return False
    backslashes = len(rest) - len(rest.rstrip("\\"))
    return backslashes % 2 == 0


@dataclass
class _Built:
    calls: list[ToolCall]
    region: Region | None


def _json_arguments(
    tool: AstNode, index: int, text: str, partial: bool, memo: Memo | None
) -> tuple[str, Region | None]:
    args = _first(tool, TAG_ARGS)
    if args is None:
        return "", None
    if partial and args.end == len(text) and _node_in_json_string(args, memo):
        stops = '"\\' + _CONTROL
        region = Region(Field.ARGUMENTS, index, stops, Trim.NONE, Trim.NONE, "", json_string=True)
        return args.text, region
    return args.text, None


def _escaped(raw: str, start: int, memo: Memo | None) -> str:
    """``raw`` (a text value that starts at ``start``) escaped for a JSON string, without
    quotes; with ``memo``, only what it adds to the value's text escaped before."""
    if memo is not None:
        done, escaped = memo.escaped.get(start, (0, ""))
        if done <= len(raw):
            if done < len(raw):
                escaped += json.dumps(raw[done:], ensure_ascii=False)[1:-1]
                memo.escaped[start] = (len(raw), escaped)
            return escaped
    return json.dumps(raw, ensure_ascii=False)[1:-1]


def _parameter_arguments(
    tool: AstNode,
    name: str,
    index: int,
    tools: Toolset,
    text: str,
    partial: bool,
    memo: Memo | None,
) -> tuple[str, Region | None, bool]:
    """The JSON text of qwen3-coder parameters, the open region, and whether it is whole."""
    spec = tools.get(name)
    pieces: list[str] = []
    region: Region | None = None
    whole = True
    for param in (n for n in tool.children if n.tag == TAG_PARAM):
        span = (param.start, param.end)
        if memo is not None and span in memo.pieces:
            pieces.append(memo.pieces[span])
            continue
        label = _first(param, TAG_PARAM_NAME)
        value = _first(param, TAG_PARAM_VALUE)
        if not _settled(label, text, partial) or value is None:
            whole = False
            break
        assert label is not None
        schema = spec.property_schema(label.text) if spec is not None else None
        key = json.dumps(label.text, ensure_ascii=False) + ": "
        value_done = not partial or not param.is_partial
        if string_typed(schema, spec.resolve if spec is not None else None):
            if value_done:
                shown = json.dumps(
                    _strip(value.text, Trim.NEWLINE, Trim.NEWLINE), ensure_ascii=False
                )
                pieces.append(key + shown)
                if memo is not None and param.end < len(text):
                    memo.pieces[span] = key + shown
                continue
            raw = lead_strip(value.text, Trim.NEWLINE)
            cut = held_suffix(raw, Trim.NEWLINE)
            escaped = _escaped(raw[: len(raw) - cut], value.start, memo)
            pieces.append(key + '"' + escaped)
            if value.end == len(text):
                lead = Trim.NEWLINE if not value.text else Trim.NONE
                region = Region(
                    Field.ARGUMENTS,
                    index,
                    "<",
                    lead,
                    Trim.NEWLINE,
                    raw[len(raw) - cut :],
                    True,
                    delimiter=PARAM_CLOSE,  # the value is until(PARAM_CLOSE)
                )
            whole = False
            break
        if not value_done:
            whole = False
            break
        pieces.append(key + value.text.strip(_WS))
        if memo is not None and param.end < len(text):
            memo.pieces[span] = pieces[-1]
    closed = whole and (not partial or not tool.is_partial)
    body = "{" + ", ".join(pieces) + ("}" if closed else "")
    return body, region, closed


def _tool_calls(
    syntax: Syntax,
    nodes: list[AstNode],
    tools: Toolset,
    text: str,
    partial: bool,
    memo: Memo | None,
) -> _Built:
    calls: list[ToolCall] = []
    begin = 0
    if memo is not None:
        known_nodes, known_calls = memo.settled
        if known_nodes and tuple(nodes[: len(known_nodes)]) == known_nodes:
            begin = len(known_nodes)
            calls.extend(known_calls)
    built, leading = _tool_calls_from(syntax, nodes, begin, calls, tools, text, partial, memo)
    if memo is not None and leading > begin:
        # the leading calls settled now are settled for every longer text
        memo.settled = (tuple(nodes[:leading]), tuple(calls[:leading]))
    return built


def _tool_calls_from(
    syntax: Syntax,
    nodes: list[AstNode],
    begin: int,
    calls: list[ToolCall],
    tools: Toolset,
    text: str,
    partial: bool,
    memo: Memo | None,
) -> tuple[_Built, int]:
    """:func:`_tool_calls` from the tool-call node ``begin`` on, ``calls`` holding those
    of the nodes before it; and how many of the leading nodes are settled calls kept in
    ``memo`` (``begin`` or more)."""
    region: Region | None = None
    leading = begin
    for index in range(begin, len(nodes)):
        tool = nodes[index]
        settled = memo is not None and not tool.is_partial and tool.end < len(text)
        if settled:
            assert memo is not None
            known = memo.calls.get((tool.start, tool.end))
            if known is not None:
                calls.append(known)
                if index == leading:
                    leading += 1
                continue
        name_node = _first(tool, TAG_NAME)
        if not _settled(name_node, text, partial):
            return _Built(calls, None), leading
        assert name_node is not None
        name = name_node.text
        if not syntax.parameters:
            name = json.loads('"' + name + '"')
        id_node = _first(tool, TAG_ID)
        call_id = None
        if id_node is not None and _settled(id_node, text, partial):
            call_id = json.loads('"' + id_node.text + '"')
        if syntax.parameters:
            arguments, region, whole = _parameter_arguments(
                tool, name, index, tools, text, partial, memo
            )
            calls.append(ToolCall(call_id, name, arguments))
            if not whole:
                return _Built(calls, region), leading
        else:
            arguments, region = _json_arguments(tool, index, text, partial, memo)
            calls.append(ToolCall(call_id, name, arguments))
        if settled:
            assert memo is not None
            memo.calls[(tool.start, tool.end)] = calls[-1]
            if index == leading:
                leading += 1
        if partial and tool.is_partial:
            return _Built(calls, region), leading
    return _Built(calls, None), leading


def _content(
    syntax: Syntax,
    node: AstNode | None,
    after_reasoning: bool,
    tools_follow: bool,
    text: str,
    partial: bool,
) -> tuple[str, Region | None]:
    if node is None:
        return "", None
    lead = Trim.WHITESPACE if after_reasoning else Trim.NONE
    # trailing whitespace separates the content from tool calls that follow or may follow
    may_precede_tools = tools_follow or (partial and bool(syntax.content_delimiters))
    hold = Trim.WHITESPACE if may_precede_tools else Trim.NONE
    raw = lead_strip(node.text, lead)
    cut = held_suffix(raw, hold)
    region = None
    if partial and node.end == len(text) and not tools_follow:
        delimiters = syntax.content_delimiters
        stops = "".join(sorted({d[0] for d in delimiters}))
        region = Region(
            Field.CONTENT,
            0,
            stops,
            lead if not raw else Trim.NONE,
            hold,
            raw[len(raw) - cut :],
            # the content is until(content_delimiters[0]) (see _formats)
            delimiter=delimiters[0] if len(delimiters) == 1 else "",
        )
    return raw[: len(raw) - cut], region


def _reasoning(node: AstNode | None, text: str, partial: bool) -> tuple[str, Region | None]:
    if node is None:
        return "", None
    is_open = partial and (node.is_partial or not text.startswith(THINK_CLOSE, node.end))
    raw = lead_strip(node.text, Trim.WHITESPACE)
    cut = held_suffix(raw, Trim.WHITESPACE)
    region = None
    if is_open and node.end == len(text):
        lead = Trim.WHITESPACE if not raw else Trim.NONE
        region = Region(
            Field.REASONING,
            0,
            THINK_CLOSE[0],
            lead,
            Trim.WHITESPACE,
            raw[len(raw) - cut :],
            delimiter=THINK_CLOSE,
        )
    return raw[: len(raw) - cut], region


def to_message(
    result: ParseResult,
    text: str,
    syntax: Syntax,
    tools: Toolset,
    partial: bool,
    memo: Memo | None = None,
) -> tuple[Message, Region | None]:
    """The message of a parse that did not fail, and its open region (partial only);
    ``memo`` keeps what later texts of the same output can reuse (see :class:`Memo`)."""
    assert result.status is not ParseStatus.FAIL
    reasoning_node: AstNode | None = None
    content_node: AstNode | None = None
    tool_nodes: list[AstNode] = []
    top = result.nodes
    first = 0
    walked = memo.walked if memo is not None else None
    if walked is not None and top[: len(walked.nodes)] == walked.nodes:
        first = len(walked.nodes)
        reasoning_node, content_node = walked.reasoning, walked.content
        tool_nodes.extend(walked.tools)
    # depth first in text order, as result.walk(), but not into tool calls (never nested;
    # _tool_calls reads their insides)
    for index in range(first, len(top)):
        if memo is not None and index == len(top) - 1 and index > first:
            # all but the last node: the next rebuild's nodes begin with them
            memo.walked = _Walk(top[:index], reasoning_node, content_node, tuple(tool_nodes))
        stack = [top[index]]
        while stack:
            node = stack.pop()
            tag = node.tag
            if tag == TAG_TOOL:
                tool_nodes.append(node)
                continue
            if tag == TAG_REASONING:
                if reasoning_node is None:
                    reasoning_node = node
            elif tag == TAG_CONTENT and content_node is None:
                content_node = node
            if node.children:
                stack.extend(reversed(node.children))
    reasoning, reasoning_region = _reasoning(reasoning_node, text, partial)
    tools_follow = bool(tool_nodes) or (
        not partial and content_node is not None and content_node.end < len(text)
    )
    content, content_region = _content(
        syntax, content_node, reasoning_node is not None, tools_follow, text, partial
    )
    built = _tool_calls(syntax, tool_nodes, tools, text, partial, memo)
    # at most one part is open at the end of the text: the last one
    region = (built.region or content_region or reasoning_region) if partial else None
    message = Message(content, reasoning, tuple(built.calls))
    return message, region


_WORD = re.compile(r'[^\s"<>=,{}\[\]]*')


def failure(result: ParseResult, text: str, syntax: Syntax, tools: Toolset) -> ChatParseError:
    """The error for a failed parse: an unknown tool named as such, else what was expected."""
    position = result.position if result.position is not None else result.end
    names = {json.dumps(name, ensure_ascii=False) for name in tools.names()}
    if result.expected and names and set(result.expected) <= names:
        match = _WORD.match(text, position)
        word = match.group() if match is not None else ""
        known = ", ".join(sorted(tools.names()))
        return ChatParseError(
            f"unknown tool {word!r} (tools: {known})", position=position, text=text
        )
    return ChatParseError(
        f"the output does not follow the {syntax.name!r} format",
        position=position,
        text=text,
        expected=result.expected,
    )
