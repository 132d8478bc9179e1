"""The frontier of a partial parse: the one open leaf that more text would extend.

Streaming feeds a parser a few characters at a time, and most of them only lengthen the
leaf the text stops in: content scanned by ``until``, the inside of a JSON string, the
digits of a number.  The evaluator records the *first* result of the parse that looked
at the end of the text (``Evaluator.first``).  When that result is one of the leaves
below, it started before the end and reached it, and no lookahead or failure saw the end
after it (``Evaluator.bad``), then nothing decided before the leaf depends on the rest
of the text, and everything decided after it was decided at the end of the text, where a
longer text that the leaf swallows whole looks the same.  So for a chunk that the leaf
swallows whole, the parse of the longer text is the parse of the shorter one with the
end moved: same status, end at the new end of the text.  :meth:`Frontier.take` says
whether a chunk is one of those; :class:`IncrementalParser` then answers without parsing
(and builds the tree only if it is asked for).

Which chunks a leaf swallows whole:

- ``until(delims)`` with no delimiter found and none begun at the end: a chunk without
  the first character of any delimiter (a delimiter in the longer text would have to
  start inside the chunk);
- the inside of a JSON string (``json_string_content`` or a string in a JSON value),
  not stopped inside an escape: a chunk without ``"``, ``\\`` or a control character;
- ``rest()``: any chunk;
- an unbounded run of characters (``chars(cls, lo, None)`` with at least ``lo`` of them,
  ``space()``): a chunk of characters of its class;
- the digits at the end of a JSON number (not a lone leading ``0``): a chunk of digits;
- a literal the text stops inside: a chunk that goes on with it without finishing it;
- ``until`` holding back the beginning of a delimiter at the end of the text (its result
  ends before it): a chunk after which the held text still begins a delimiter and is
  none (the result stays the same, its end too);
- ``until`` scanning, and a chunk that begins a delimiter: the scan holds it back (the
  result needs more input and ends where the chunk begins); and when the held text goes
  on as no delimiter and with no delimiter's first character after its first, the scan
  takes it (the result is again the one before the chunk, with the end moved);
- an open JSON object or array (``json()``, ``json_object()``, ``json_array()``): a
  chunk that keeps it open and well formed (``_json_prefix.py`` follows it; the result
  ends at the new end of the text, or at an unfinished escape).
"""

from __future__ import annotations

import enum
import re
from typing import Any

from gbnfkit.peg._json_prefix import JsonPrefix
from gbnfkit.peg._result import ParseStatus
from gbnfkit.peg._scan import SPACE_RUN

__all__ = ["OTHER_RECORD", "Frontier", "Grow", "Record", "STRING_STOPS", "usable"]

# what ends or escapes the inside of a JSON string
STRING_STOPS = '"\\' + "".join(chr(c) for c in range(0x20))
_STRING_STOP_RX = re.compile(r'["\\\x00-\x1f]')
_DIGITS_RX = re.compile(r"[0-9]*")
_NOTHING_RX = re.compile(r"(?!)")
_NEED_MORE = ParseStatus.NEED_MORE_INPUT
# runs whose one-character test is a membership test
_RUN_CHARS = {SPACE_RUN: " \t\n\r", _DIGITS_RX: "0123456789"}


class Grow(enum.Enum):
    """How the leaf at the frontier grows."""

    OTHER = 0  # a result that looked at the end but is no growing leaf
    STOPS = 1  # any chunk without one of the stop characters (until, JSON string, rest)
    RUN = 2  # a chunk that a character class matches whole (chars, space, digits)
    LITERAL = 3  # a chunk that continues a literal without finishing it
    HELD = 4  # a chunk that continues the beginning of a delimiter that ``until`` holds
    JSON = 5  # a chunk that keeps an open JSON object or array open and well formed


# A record is (how it grows, where the leaf starts, where it ends, what it needs, whether
# the leaf itself needs more input: then the parse ends with it).  A leaf may start at the
# end of the text and match nothing there: only a loop cares, and a loop whose item
# matched nothing at the end sets ``Evaluator.bad``.
Record = tuple[Grow, int, int, Any, bool]

OTHER_RECORD: Record = (Grow.OTHER, -1, -1, None, False)


def until_record(start: int, end: int, delims: tuple[str, ...], firsts: str,
                 firsts_rx: re.Pattern[str]) -> Record:
    """``until`` at ``start`` that scanned to ``end`` and found no delimiter (and no
    beginning of one)."""
    return (Grow.STOPS, start, end, (firsts, firsts_rx, delims), False)


def string_record(start: int, end: int) -> Record:
    """An open JSON string (its inside from ``start``) that reached ``end``."""
    return (Grow.STOPS, start, end, (STRING_STOPS, _STRING_STOP_RX, ()), True)


def rest_record(start: int, end: int) -> Record:
    return (Grow.STOPS, start, end, ("", _NOTHING_RX, ()), False)


def run_record(start: int, end: int, rx: re.Pattern[str]) -> Record:
    """A run of characters that ``rx`` (a run of one class) matched up to ``end``."""
    return (Grow.RUN, start, end, rx, False)


def space_record(start: int, end: int) -> Record:
    """Whitespace inside a JSON value up to ``end``, where a token must come next."""
    return (Grow.RUN, start, end, SPACE_RUN, True)


def digits_record(start: int, end: int) -> Record:
    """A JSON number whose last digits (not a lone leading 0) reach ``end``."""
    return (Grow.RUN, start, end, _DIGITS_RX, False)


def literal_record(start: int, end: int, literal: str) -> Record:
    """``literal`` at ``start``, begun but not finished at ``end``."""
    return (Grow.LITERAL, start, end, literal, True)


def json_record(start: int, end: int) -> Record:
    """An open JSON object or array from ``start`` (the scanner needs more input)."""
    return (Grow.JSON, start, end, None, True)


def held_record(held: int, end: int, delims: tuple[str, ...], begun: str) -> Record:
    """``until(delims)`` that stopped at ``held``, where the text ends with ``begun``, the
    beginning of a delimiter (its result, NEED_MORE_INPUT, ends at ``held``)."""
    return (Grow.HELD, held, end, (delims, begun), True)


class Frontier:
    """A growing leaf at the end of the text, the test of a chunk against it, and the
    status of the parse while the leaf grows.

    ``one`` and ``one_in`` answer for most one-character chunks without a call: one is
    taken if its membership in ``one`` is ``one_in``; the others go to :meth:`take`.
    :meth:`take` may also move to another frontier (``then``): ``until`` that meets the
    beginning of a delimiter holds it back (NEED_MORE_INPUT, the end stays), and goes
    back to scanning (its former status and frontier) when the held text turns out to
    be no delimiter.
    """

    __slots__ = ("arg", "back", "grow", "one", "one_in", "start", "status", "then")

    def __init__(self, record: Record, status: Any, json: JsonPrefix | None = None,
                 back: Frontier | None = None) -> None:
        grow, start, _end, arg, _open = record
        self.grow: Grow = grow
        self.start: int = start
        self.status = status  # a ParseStatus
        self.arg: Any = json if grow is Grow.JSON else arg
        self.then = self  # the frontier after the last chunk taken
        self.back = back  # HELD: the scanning ``until`` to go back to
        self.one = ""
        self.one_in = True  # nothing is in "": every one-character chunk goes to take()
        if grow is Grow.STOPS:
            self.one, self.one_in = arg[0], False
        elif grow is Grow.RUN and arg in _RUN_CHARS:
            self.one = _RUN_CHARS[arg]

    def take(self, chunk: str, end: int) -> int:
        """Where the parse ends once the leaf, now reaching ``end``, has swallowed
        ``chunk`` whole (and stays open); -1 if it does not.  Sets :attr:`then`."""
        grow = self.grow
        after = end + len(chunk)
        self.then = self
        if grow is Grow.STOPS:
            if self.arg[1].search(chunk) is None:
                return after
            delims = self.arg[2]
            if (delims and any(len(d) > len(chunk) and d.startswith(chunk) for d in delims)
                    and not any(chunk.startswith(d) for d in delims)):
                # the beginning of a delimiter: held back from ``end`` on
                held = held_record(end, after, delims, chunk)
                self.then = Frontier(held, _NEED_MORE, back=self)
                return end
            return -1
        if grow is Grow.RUN:
            return after if self.arg.fullmatch(chunk) is not None else -1
        if grow is Grow.JSON:
            json: JsonPrefix = self.arg
            return json.end() if json.advance(chunk) else -1
        if grow is Grow.LITERAL:
            literal: str = self.arg
            k = end - self.start
            if literal.startswith(chunk, k) and k + len(chunk) < len(literal):
                return after
            return -1
        delims, begun = self.arg
        begun += chunk
        if any(begun.startswith(d) for d in delims):
            return -1  # a delimiter
        if any(len(d) > len(begun) and d.startswith(begun) for d in delims):
            self.arg = (delims, begun)  # still the beginning of one
            return self.start
        back = self.back
        if back is not None and back.arg[1].search(begun, 1) is None:
            # no delimiter begins in the held text: it is ordinary text after all
            self.then = back
            return after
        return -1


def usable(record: Record | None, bad: bool, end: int, n: int) -> bool:
    """Whether ``record``, the first result of a partial parse that looked at the end of
    a text of ``n`` characters, is a frontier (``bad``: a lookahead or a failure looked at
    the end too; ``end``: where the parse ended)."""
    if record is None or bad or record[0] is Grow.OTHER:
        return False
    if record[0] is Grow.HELD:
        return record[2] == n and end == record[1]
    if record[0] is Grow.JSON:
        return record[2] == n  # the JSON prefix check decides, and says where it ends
    return record[2] == n == end
