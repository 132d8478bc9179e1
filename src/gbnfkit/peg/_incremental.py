"""IncrementalParser: parse a growing text again and again, reusing the work done."""

from __future__ import annotations

from typing import Any

from gbnfkit._errors import PegError
from gbnfkit.peg._eval import FAIL, MORE, Evaluator, Res, flatten
from gbnfkit.peg._frontier import Frontier, Grow, usable
from gbnfkit.peg._json_prefix import JsonPrefix
from gbnfkit.peg._nodes import Parser
from gbnfkit.peg._result import AstNode, ParseResult, ParseStatus, failure

__all__ = ["IncrementalParser"]

_STATUS = {1: ParseStatus.SUCCESS, MORE: ParseStatus.NEED_MORE_INPUT}


class IncrementalParser:
    """Parses texts that grow by appending (a model's output as it streams).

    Results that did not depend on where the text ended are kept between calls, and loops
    resume where they stopped, so feeding a long output one character at a time costs a
    small multiple of one parse of the whole output.  A text that does not extend the
    previous one starts afresh.

    :meth:`feed` goes further: after each parse it keeps the *frontier*, the open leaf the
    text stops in (content scanned by ``until``, the inside of a JSON string, ...; see
    ``_frontier.py``) and what would end it.  A chunk that the leaf swallows whole is
    answered without parsing (the result's ``nodes`` and ``text`` are built if read).

    >>> from gbnfkit import peg
    >>> stream = peg.literal("<a>").incremental()
    >>> stream.feed("<").status
    <ParseStatus.NEED_MORE_INPUT: 'need_more_input'>
    >>> stream.feed("a>").status
    <ParseStatus.SUCCESS: 'success'>
    """

    def __init__(self, parser: Parser) -> None:
        self._parser = parser
        self._program = parser.program
        self._buffer = _Buffer()
        self._later = _Later(self, self._buffer)
        self._stable: dict[int, Res] = {}
        self._resume: dict[int, Any] = {}
        self._frontier: Frontier | None = None
        self._json: JsonPrefix | None = None  # the check of the last open JSON value

    def __copy__(self) -> IncrementalParser:
        """An independent parser of the same text (the kept work is not shared: a copy
        sharing the text would see what is fed to the other)."""
        other = IncrementalParser(self._parser)
        other.__setstate__(self.text)
        return other

    def __deepcopy__(self, memo: dict[int, object]) -> IncrementalParser:
        return self.__copy__()

    def __reduce__(self) -> tuple[object, ...]:
        # the parser and the text: the kept work is parsed again where it is unpickled
        return (IncrementalParser, (self._parser,), self.text)

    def __setstate__(self, text: str) -> None:
        if text:
            self.parse(text, partial=True)

    @property
    def parser(self) -> Parser:
        """The parser this object runs."""
        return self._parser

    @property
    def text(self) -> str:
        """The text of the last call."""
        return self._buffer.text()

    def reset(self) -> None:
        """Forget the text and every kept result."""
        self._buffer = _Buffer()
        self._later = _Later(self, self._buffer)
        self._stable = {}
        self._resume = {}
        self._frontier = None
        self._json = None

    def feed(self, chunk: str) -> ParseResult:
        """Append ``chunk`` and parse the whole text as partial input."""
        frontier = self._frontier
        if frontier is not None and type(chunk) is str:
            buffer = self._buffer
            if len(chunk) == 1 and (chunk in frontier.one) is frontier.one_in:
                end = buffer.n + 1
            else:
                end = frontier.take(chunk, buffer.n)
                frontier = self._frontier = frontier.then
            if end >= 0:
                buffer.pieces.append(chunk)
                n = buffer.n = buffer.n + len(chunk)
                if end == n:
                    return ParseResult._deferred(frontier.status, n, self._later)
                return ParseResult._deferred(frontier.status, end, _Later(self, buffer, n))
        if not isinstance(chunk, str):
            raise PegError(f"feed takes a str, not {type(chunk).__name__}")
        buffer = self._buffer
        buffer.pieces.append(chunk)
        buffer.n += len(chunk)
        return self._run(buffer.text(), True)

    def finish(self) -> ParseResult:
        """Parse the whole text as complete input (the output has ended)."""
        return self.parse(self._buffer.text(), partial=False)

    def parse(self, text: str, partial: bool = False) -> ParseResult:
        """Parse ``text`` (see :meth:`Parser.parse`), reusing the work of the previous call
        if ``text`` extends its text."""
        if not isinstance(text, str):
            raise PegError(f"parse takes a str, not {type(text).__name__}")
        if not isinstance(partial, bool):  # "no" would read as True
            raise PegError(f"partial must be True or False, not {partial!r}")
        if not text.startswith(self._buffer.text()):
            self.reset()
        self._buffer.set(text)
        return self._run(text, partial)

    def _run(self, text: str, partial: bool) -> ParseResult:
        program = self._program
        self._frontier = None
        ev = Evaluator(program, text, partial, self._stable, self._resume)
        res = ev.run(program.root)
        status = res[0]
        if status == FAIL:
            tracker = Evaluator(program, text, partial, {}, {}, track=True)
            try:
                tracker.run(program.root)
            except PegError:
                # the tracker parses JSON with its combinator definition, several frames a
                # level, where the parse above ran the scanner: past ~120 levels only the
                # parse can follow the text, and says where it stops being readable
                end = self._readable(text) if self._fails(text) else len(text)
                return failure(text, end, ())
            position = tracker.far if tracker.far >= 0 else res[1]
            return failure(text, position, tuple(tracker.expected))
        first = ev.first
        if partial and usable(first, ev.bad, res[1], len(text)):
            assert first is not None
            json = None
            if first[0] is Grow.JSON:
                json = self._json_prefix(first[1], text)
            if first[0] is not Grow.JSON or (json is not None and json.end() == res[1]):
                self._frontier = Frontier(first, _STATUS[status], json)
        if not partial:
            return ParseResult(_STATUS[status], res[1], flatten(res[2]), text=text)
        return ParseResult._deferred(_STATUS[status], res[1], _Built(res[2], text))

    def _fails(self, text: str) -> bool:
        """Whether the partial parse of ``text`` fails (or nests too deeply to tell), by a
        parse of its own that only asks for the status."""
        program = self._program
        try:
            return Evaluator(program, text, True, {}, {}).run(program.root)[0] == FAIL
        except PegError:
            return True

    def _readable(self, text: str, start: int = 0) -> int:
        """The length of the longest prefix of ``text`` whose partial parse does not fail,
        for a ``text`` that fails and a prefix of ``start`` characters taken not to. The
        readable text past ``start`` is often short (a parse fails just after it): the
        search gallops from there, then bisects."""
        lo, hi = start, len(text)
        step = 1
        while lo + step < hi:
            if self._fails(text[: lo + step]):
                hi = lo + step
                break
            lo += step
            step *= 2
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if self._fails(text[:mid]):
                hi = mid
            else:
                lo = mid
        return lo

    def _json_prefix(self, start: int, text: str) -> JsonPrefix | None:
        """The check of the open JSON value at ``start``, brought to the end of ``text``
        (the last one goes on where it stopped if it is the same value)."""
        json = self._json
        if json is None or json.start != start or json.pos > len(text):
            json = self._json = JsonPrefix(start)
        if not json.advance(text[json.pos :]):
            self._json = None  # cannot happen while the scanner needs more input
            return None
        return json

    def _nodes_at(self, buffer: _Buffer, n: int) -> tuple[AstNode, ...]:
        """The nodes of a partial parse of the first ``n`` characters of ``buffer``."""
        text = buffer.text()
        if buffer is self._buffer and n == buffer.n:
            return self._run(text, True).nodes  # the latest text: parse it incrementally
        program = self._program
        res = Evaluator(program, text[:n], True, {}, {}).run(program.root)
        return flatten(res[2])


class _Buffer:
    """The text fed so far, joined only when it is read."""

    __slots__ = ("joined", "n", "pieces")

    def __init__(self) -> None:
        self.pieces: list[str] = []
        self.joined = ""
        self.n = 0

    def text(self) -> str:
        if self.pieces:
            self.joined += "".join(self.pieces)
            self.pieces = []
        return self.joined

    def set(self, text: str) -> None:
        self.pieces = []
        self.joined = text
        self.n = len(text)


class _Later:
    """The nodes and text of a result that :meth:`IncrementalParser.feed` gave without
    parsing: those of a partial parse of the first ``n`` characters of the buffer (by
    default the result's end)."""

    __slots__ = ("buffer", "n", "owner")

    def __init__(self, owner: IncrementalParser, buffer: _Buffer, n: int | None = None) -> None:
        self.owner = owner
        self.buffer = buffer
        self.n = n  # the length of the text; None: the end of the result

    def nodes(self, end: int) -> tuple[AstNode, ...]:
        return self.owner._nodes_at(self.buffer, end if self.n is None else self.n)

    def text(self, end: int) -> str:
        n = end if self.n is None else self.n
        text = self.buffer.text()
        return text if len(text) == n else text[:n]


class _Built:
    """The nodes and text of a parse whose nodes are not yet listed (a chain)."""

    __slots__ = ("chain", "whole")

    def __init__(self, chain: Any, whole: str) -> None:
        self.chain = chain
        self.whole = whole

    def nodes(self, end: int) -> tuple[AstNode, ...]:
        return flatten(self.chain)

    def text(self, end: int) -> str:
        return self.whole
