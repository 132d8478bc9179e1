"""MessageStream: read a model's output as it streams, as OpenAI-style deltas."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterable, Mapping

from gbnfkit._errors import ArgumentError, ChatError, ChatParseError
from gbnfkit.chat._api import ChatParser
from gbnfkit.chat._formats._base import THINK_OPEN
from gbnfkit.chat._mapping import Field, Memo, Region, Trim, held_suffix, lead_strip, until_held
from gbnfkit.chat._types import ChatFormat, Message, MessageDelta, ToolCall, ToolCallDelta
from gbnfkit.peg import ParseStatus

__all__ = ["MessageStream"]

_WS = " \t\r\n"
# characters that json.dumps may escape (a text value written into a JSON string)
_NEEDS_ESCAPE = re.compile(r'["\\\x00-\x1f]')


class _Hold(MessageDelta):
    """In a fast-path dict: the character is whitespace held back, not a delta.  Told by
    identity, so it copies and pickles to itself (a copied stream's dicts hold it)."""

    def __reduce__(self) -> str:
        return "_HOLD"


_HOLD = _Hold()
# what may follow a backslash in a JSON string, besides "u" and four hex digits
_ESCAPED = '"\\/bfnrt'
# characters and complete escapes inside a JSON string (\\u escapes are left to the parser)
_JSON_STRING_BODY = re.compile(r'(?:[^"\\\x00-\x1f]|\\["\\/bfnrt])*')


class _Call:
    __slots__ = ("arguments", "id", "name")

    def __init__(self, call_id: str | None, name: str) -> None:
        self.id = call_id
        self.name = name
        self.arguments: list[str] = []


class MessageStream:
    """Feed a model's output chunk by chunk; get what each chunk adds to the message.

    >>> stream = MessageStream("hermes")
    >>> [d.content for d in stream.feed("Hello <tool_")]
    ['Hello']
    >>> [d.content for d in stream.feed("box> to you")]
    [' <tool_box> to you']
    >>> stream.finish().content
    'Hello <tool_box> to you'

    Deltas never repeat or take back text: text that may still turn into the start of a
    tag, or into whitespace that separates parts, is held back until it is decided. The
    deltas of :meth:`feed` and :meth:`close` together add up to :meth:`finish`'s message,
    which equals :func:`gbnfkit.chat.parse_message` of the whole output.
    """

    def __init__(
        self,
        format: str | ChatFormat | ChatParser,
        tools: Iterable[Mapping[str, object]] | None = None,
        *,
        reasoning_open: bool = False,
    ) -> None:
        """A stream of one output in ``format`` with ``tools`` (``reasoning_open``: the
        prompt ended with ``<think>``), or of a :class:`ChatParser` (whose parser and
        settings it shares; then give nothing else)."""
        if isinstance(format, ChatParser):
            if tools is not None or reasoning_open:
                raise ChatError("give the tools and settings to the ChatParser, not its stream")
            self._reader = format
        else:
            self._reader = ChatParser(format, tools, reasoning_open=reasoning_open)
        self._parser = self._reader.parser.incremental()
        self._skip = THINK_OPEN if self._reader.reasoning_open else ""
        self._text = self._skip
        self._unparsed: list[str] = []
        self._closed = False
        self._region: Region | None = None
        self._stuck = False
        self._content: list[str] = []
        self._reasoning: list[str] = []
        self._calls: list[_Call] = []
        self._seen_calls: tuple[ToolCall, ...] = ()  # those of the last message compared
        # the fast path: while the open region has nothing held back, the delta of each
        # plain character fed alone (``_quick``, one dict per part: deltas are immutable)
        # and the pieces given of that part (``_given``)
        self._quick: dict[str, MessageDelta] | None = None
        self._given: list[str] = self._content
        self._open_quick: dict[str, MessageDelta] = {}  # the open region's, even when held
        self._quick_by_part: dict[tuple[Field, int, str, str, bool], dict[str, MessageDelta]] = {}
        self._memo = Memo()  # the mapping's results kept from one parse to the next
        self._final: Message | None = None
        self._error: ChatParseError | None = None

    @property
    def text(self) -> str:
        """The output fed so far."""
        return self._whole()[len(self._skip) :]

    def _whole(self) -> str:
        """What is parsed: the output, after the ``<think>`` of ``reasoning_open``."""
        if self._unparsed:
            self._text += "".join(self._unparsed)
            self._unparsed = []
        return self._text

    @property
    def is_closed(self) -> bool:
        """Whether :meth:`close` (or :meth:`finish`) has ended the output."""
        return self._closed

    def __copy__(self) -> MessageStream:
        """An independent stream at the same point (``copy.deepcopy``): a shallow copy
        would share the text and the message so far, so feeding one changed the other."""
        return copy.deepcopy(self)

    def feed(self, chunk: str) -> list[MessageDelta]:
        """Append ``chunk`` to the output; the deltas it decides (often none or one)."""
        quick = self._quick
        if quick is not None:
            # the fastest path: one plain character that extends the open region
            try:
                delta = quick.get(chunk)
            except TypeError:  # not hashable, so not a str: refused below
                delta = None
            if delta is not None:
                self._unparsed.append(chunk)
                if delta is _HOLD:  # whitespace that is held back
                    region = self._region
                    assert region is not None
                    region.pending = chunk
                    self._quick = None
                    return []
                self._given.append(chunk)
                return [delta]
        region = self._region
        if (
            region is not None
            and type(chunk) is str
            and len(chunk) == 1
            and region.lead is Trim.NONE
            and not region.escape
        ):
            # one character of whitespace that is held back, or the first plain one after
            # it (or the end of an escape in a JSON string)
            if chunk in region.held and (not region.pending or region.pending.isspace()):
                self._unparsed.append(chunk)
                region.pending += chunk
                self._quick = None
                return []
            if region.pending and (
                chunk in _ESCAPED
                if region.json_string
                else chunk not in region.slow and region.pending.isspace()
            ):
                self._unparsed.append(chunk)
                kept = region.pending + chunk
                region.pending = ""
                self._given.append(kept)
                quick = self._quick = self._open_quick  # nothing held back: fast path again
                delta = quick.get(kept)
                if delta is None:
                    delta = _region_delta(region, kept)
                    if len(kept) == 2:  # a space and a letter, an escape: kept for reuse
                        quick[kept] = delta
                return [delta]
        if region is not None and type(chunk) is str and chunk:
            # the fast paths: text that only extends the open region, no parsing
            # (a closed or broken stream has no region); first one plain character
            if (
                len(chunk) == 1
                and chunk not in region.slow
                and not region.pending
                and region.lead is Trim.NONE
            ):
                self._unparsed.append(chunk)
                self._given.append(chunk)
                delta = _region_delta(region, chunk)
                if quick is not None:
                    quick[chunk] = delta
                return [delta]
            if region.json_string:
                deltas = self._extend_json(region, chunk)
                if deltas is not None:
                    self._unparsed.append(chunk)
                    self._requick(region)
                    return deltas
            elif region.delimiter and (
                (region.pending and not region.pending.isspace()) or not _plain(chunk, region.stops)
            ):
                # text that may start, go on with or end the region's delimiter: unless
                # the delimiter is there, hold back the tail that may still become it
                if region.lead is Trim.NONE and region.delimiter not in region.pending + chunk:
                    self._unparsed.append(chunk)
                    deltas = self._extend(region, chunk)
                    self._requick(region)
                    return deltas
            elif (chunk not in region.stops) if len(chunk) == 1 else _plain(chunk, region.stops):
                self._unparsed.append(chunk)
                if region.pending or region.lead is not Trim.NONE or chunk[-1] in _WS:
                    deltas = self._extend(region, chunk)
                    self._requick(region)
                    return deltas
                if region.field is Field.CONTENT:
                    self._content.append(chunk)
                    return [_text_delta("content", chunk)]
                if region.field is Field.REASONING:
                    self._reasoning.append(chunk)
                    return [_text_delta("reasoning_content", chunk)]
                deltas = self._extend(region, chunk)
                self._requick(region)
                return deltas
        if self._closed or self._stuck or not chunk or type(chunk) is not str:
            return self._feed_rarely(chunk)
        self._unparsed.append(chunk)
        text = self._whole()
        # (the text before the chunk was read: a failure is never before its end)
        settled = len(text) - len(chunk)
        result = self._reader._parse(self._parser.parse, text, True, settled)
        message, region = self._reader._read(result, text, True, self._memo, settled)
        if result.status is ParseStatus.FAIL:
            self._stuck = True  # nothing later can mend it; close() reports the error
            region = None
        self._region = region
        deltas = self._deltas(message)
        self._requick(region)
        return deltas

    def _requick(self, region: Region | None) -> None:
        """Set the fast path for ``region`` (the open region, after a change)."""
        if region is None:
            self._quick = None
            return
        field = region.field
        if field is Field.CONTENT:
            self._given = self._content
        elif field is Field.REASONING:
            self._given = self._reasoning
        else:
            self._given = self._calls[region.tool_index].arguments
        key = (field, region.tool_index, region.slow, region.held, region.escape)
        quick = self._quick_by_part.get(key)
        if quick is None:
            quick = self._quick_by_part[key] = {}
            if not region.escape:
                for held in region.held:
                    quick[held] = _HOLD
        self._open_quick = quick
        self._quick = None if region.pending or region.lead is not Trim.NONE else quick

    def _feed_rarely(self, chunk: object) -> list[MessageDelta]:
        if not isinstance(chunk, str):
            raise ArgumentError(f"feed takes a str, not {type(chunk).__name__}")
        if self._closed:
            raise ChatError("the stream is closed; start a new MessageStream")
        self._unparsed.append(chunk)  # stuck (or empty): kept for close() to report
        return []

    def close(self) -> list[MessageDelta]:
        """End the output; the deltas of what was held back until now.

        Raises :class:`gbnfkit.ChatParseError` if the whole output does not follow the
        format (the deltas already given stay valid: they stop before the fault)."""
        if self._error is not None:
            raise self._error
        if self._final is not None:
            return []
        self._closed = True
        self._region = None
        self._quick = None
        text = self._whole()
        try:
            result = self._reader._parse(self._parser.parse, text, False)
            message, _ = self._reader._read(result, text, False, self._memo)
        except ChatParseError as error:
            self._error = error
            raise
        deltas = self._deltas(message)
        self._final = message
        return deltas

    def finish(self) -> Message:
        """End the output (if :meth:`close` has not) and return the whole message."""
        if self._final is None:
            self.close()
        assert self._final is not None
        return self._final

    # -- deltas -----------------------------------------------------------------------
    def _extend(self, region: Region, chunk: str) -> list[MessageDelta]:
        """Add ``chunk`` (no stop character in it) to the open region."""
        raw = region.pending + chunk if region.pending else chunk
        if region.lead is not Trim.NONE:
            stripped = lead_strip(raw, region.lead)
            if stripped or region.lead is Trim.NEWLINE:
                # the first text after the leading whitespace, or the one newline dropped
                # (a second one is the value's)
                region.lead = Trim.NONE
            raw = stripped
            if not raw:
                return []
        hold = region.hold
        if hold is Trim.NONE and not region.delimiter:
            kept = raw
        else:
            if region.delimiter:
                cut = until_held(raw, region.delimiter, hold)
            else:
                cut = held_suffix(raw, hold)
            if cut:
                kept, region.pending = raw[: len(raw) - cut], raw[len(raw) - cut :]
            else:
                kept, region.pending = raw, ""
            if not kept:
                return []
        field = region.field
        if field is Field.CONTENT:
            self._content.append(kept)
            return [_text_delta("content", kept)]
        if field is Field.REASONING:
            self._reasoning.append(kept)
            return [_text_delta("reasoning_content", kept)]
        if region.escape and _NEEDS_ESCAPE.search(kept):
            kept = json.dumps(kept, ensure_ascii=False)[1:-1]
        self._calls[region.tool_index].arguments.append(kept)
        return [_arguments_delta(region.tool_index, kept)]

    def _extend_json(self, region: Region, chunk: str) -> list[MessageDelta] | None:
        """Add ``chunk`` to the inside of a JSON string, or ``None`` if it may end the string
        or is not valid there (then the parser decides)."""
        raw = region.pending + chunk if region.pending else chunk
        valid = _JSON_STRING_BODY.match(raw)
        end = valid.end() if valid is not None else 0
        if end == len(raw):
            region.pending = ""
        elif end == len(raw) - 1 and raw[end] == "\\":
            region.pending = "\\"  # an escape that the next chunk completes
        else:
            return None
        kept = raw[:end]
        if not kept:
            return []
        self._calls[region.tool_index].arguments.append(kept)
        return [_arguments_delta(region.tool_index, kept)]

    def _deltas(self, message: Message) -> list[MessageDelta]:
        """What ``message`` adds to what was given so far."""
        deltas: list[MessageDelta] = []
        reasoning = _suffix(self._reasoning, message.reasoning_content, "reasoning")
        if reasoning:
            deltas.append(MessageDelta(reasoning_content=reasoning))
        content = _suffix(self._content, message.content, "content")
        if content:
            deltas.append(MessageDelta(content=content))
        # a settled call is the same object from one message to the next (the mapping's
        # memo): what it adds was given when it was first seen so (one parse per tag or
        # JSON punctuation, each comparing every earlier call, was quadratic in the calls)
        seen = self._seen_calls
        calls = message.tool_calls
        # all but the last call seen are usually the same objects: one tuple comparison
        # (by identity first) instead of a step per call
        begin = len(seen) - 1 if len(seen) > 1 and calls[: len(seen) - 1] == seen[:-1] else 0
        for index in range(begin, len(calls)):
            call = calls[index]
            if index < len(seen) and seen[index] is call:
                continue
            delta = self._call_delta(index, call)
            if delta is not None:
                deltas.append(MessageDelta(tool_calls=(delta,)))
        if len(message.tool_calls) < len(self._calls):
            raise _retracted("tool calls")
        self._seen_calls = message.tool_calls
        return deltas

    def _call_delta(self, index: int, call: ToolCall) -> ToolCallDelta | None:
        if index == len(self._calls):
            state = _Call(call.id, call.name)
            self._calls.append(state)
            if call.arguments:
                state.arguments.append(call.arguments)
            return ToolCallDelta(index, call.id, call.name, call.arguments)
        state = self._calls[index]
        if state.name != call.name or (state.id is not None and state.id != call.id):
            raise _retracted(f"tool call {index}")
        new_id = None
        if state.id is None and call.id is not None:
            state.id = new_id = call.id
        arguments = _suffix(state.arguments, call.arguments, f"arguments of tool call {index}")
        if new_id is None and not arguments:
            return None
        return ToolCallDelta(index, new_id, None, arguments)


def _plain(chunk: str, stops: str) -> bool:
    """Whether ``chunk`` holds none of the characters of ``stops``."""
    return not stops or not any(c in stops for c in chunk)


def _text_delta(name: str, text: str) -> MessageDelta:
    """``MessageDelta`` with only the field ``name`` set: the hot path of a stream, built
    without the frozen dataclass's ``__init__`` (the other fields keep their class
    defaults; the result is an ordinary, equal and immutable delta)."""
    delta: MessageDelta = object.__new__(MessageDelta)
    object.__setattr__(delta, name, text)
    return delta


def _region_delta(region: Region, text: str) -> MessageDelta:
    """The delta adding ``text`` to the open ``region`` (content, reasoning or the
    arguments of its tool call)."""
    field = region.field
    if field is Field.CONTENT:
        return _text_delta("content", text)
    if field is Field.REASONING:
        return _text_delta("reasoning_content", text)
    return _arguments_delta(region.tool_index, text)


def _arguments_delta(index: int, text: str) -> MessageDelta:
    """``MessageDelta`` adding ``text`` to the arguments of call ``index`` (hot path, as
    :func:`_text_delta`)."""
    call: ToolCallDelta = object.__new__(ToolCallDelta)
    object.__setattr__(call, "index", index)
    object.__setattr__(call, "arguments", text)
    delta: MessageDelta = object.__new__(MessageDelta)
    object.__setattr__(delta, "tool_calls", (call,))
    return delta


def _suffix(given: list[str], text: str, what: str) -> str:
    """The part of ``text`` after the pieces ``given`` (which it must start with); the
    suffix is recorded as given."""
    done = "".join(given)
    if len(given) > 1:
        given[:] = [done]
    if not text.startswith(done):
        raise _retracted(what)
    extra = text[len(done) :]
    if extra:
        given.append(extra)
    return extra


def _retracted(what: str) -> RuntimeError:
    return RuntimeError(
        f"internal error: the {what} of a stream would be taken back; "
        "this is a bug in gbnfkit, please report it with the output"
    )
