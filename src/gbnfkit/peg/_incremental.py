"""IncrementalParser: parse a growing text again and again, reusing the work done."""

from __future__ import annotations

from typing import Any

from gbnfkit.peg._eval import FAIL, MORE, Evaluator, Res, flatten
from gbnfkit.peg._nodes import Parser
from gbnfkit.peg._result import ParseResult, ParseStatus, failure

__all__ = ["IncrementalParser"]

_STATUS = {1: ParseStatus.SUCCESS, MORE: ParseStatus.NEED_MORE_INPUT}


class IncrementalParser:
    """Parses texts that grow by appending (a model's output as it streams).

    Results that did not depend on where the text ended are kept between calls, and loops
    resume where they stopped, so feeding a long output one character at a time costs a
    small multiple of one parse of the whole output.  A text that does not extend the
    previous one starts afresh.

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
        self._text = ""
        self._stable: dict[int, Res] = {}
        self._resume: dict[int, Any] = {}

    @property
    def parser(self) -> Parser:
        """The parser this object runs."""
        return self._parser

    @property
    def text(self) -> str:
        """The text of the last call."""
        return self._text

    def reset(self) -> None:
        """Forget the text and every kept result."""
        self._text = ""
        self._stable = {}
        self._resume = {}

    def feed(self, chunk: str) -> ParseResult:
        """Append ``chunk`` and parse the whole text as partial input."""
        if not isinstance(chunk, str):
            from gbnfkit._errors import PegError

            raise PegError(f"feed takes a str, not {type(chunk).__name__}")
        self._text += chunk
        return self._run(self._text, True)

    def finish(self) -> ParseResult:
        """Parse the whole text as complete input (the output has ended)."""
        return self.parse(self._text, partial=False)

    def parse(self, text: str, partial: bool = False) -> ParseResult:
        """Parse ``text`` (see :meth:`Parser.parse`), reusing the work of the previous call
        if ``text`` extends its text."""
        if not isinstance(text, str):
            from gbnfkit._errors import PegError

            raise PegError(f"parse takes a str, not {type(text).__name__}")
        if not text.startswith(self._text):
            self.reset()
        self._text = text
        return self._run(text, partial)

    def _run(self, text: str, partial: bool) -> ParseResult:
        program = self._program
        res = Evaluator(program, text, partial, self._stable, self._resume).run(program.root)
        if res[0] == FAIL:
            tracker = Evaluator(program, text, partial, {}, {}, track=True)
            tracker.run(program.root)
            position = tracker.far if tracker.far >= 0 else res[1]
            return failure(text, position, tuple(tracker.expected))
        return ParseResult(_STATUS[res[0]], res[1], flatten(res[2]), text=text)
