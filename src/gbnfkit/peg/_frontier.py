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
end moved: same status, end at the new end of the text.  :meth:`Frontier.absorbs` says
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
  none (the result stays the same, its end too).
"""

from __future__ import annotations

import enum
import re
from typing import Any

from gbnfkit.peg._scan import SPACE_RUN

__all__ = ["OTHER_RECORD", "Frontier", "Grow", "Record", "STRING_STOPS", "usable"]

# what ends or escapes the inside of a JSON string
STRING_STOPS = '"\\' + "".join(chr(c) for c in range(0x20))
_STRING_STOP_RX = re.compile(r'["\\\x00-\x1f]')
_DIGITS_RX = re.compile(r"[0-9]*")
_NOTHING_RX = re.compile(r"(?!)")


class Grow(enum.Enum):
    """How the leaf at the frontier grows."""

    OTHER = 0  # a result that looked at the end but is no growing leaf
    STOPS = 1  # any chunk without one of the stop characters (until, JSON string, rest)
    RUN = 2  # a chunk that a character class matches whole (chars, space, digits)
    LITERAL = 3  # a chunk that continues a literal without finishing it
    HELD = 4  # a chunk that continues the beginning of a delimiter that ``until`` holds


# A record is (how it grows, where the leaf starts, where it ends, what it needs, whether
# the leaf itself needs more input: then the parse ends with it).  A leaf may start at the
# end of the text and match nothing there: only a loop cares, and a loop whose item
# matched nothing at the end sets ``Evaluator.bad``.
Record = tuple[Grow, int, int, Any, bool]

OTHER_RECORD: Record = (Grow.OTHER, -1, -1, None, False)


def until_record(start: int, end: int, firsts: str, firsts_rx: re.Pattern[str]) -> Record:
    """``until`` at ``start`` that scanned to ``end`` and found no delimiter (and no
    beginning of one)."""
    return (Grow.STOPS, start, end, (firsts, firsts_rx), False)


def string_record(start: int, end: int) -> Record:
    """An open JSON string (its inside from ``start``) that reached ``end``."""
    return (Grow.STOPS, start, end, (STRING_STOPS, _STRING_STOP_RX), True)


def rest_record(start: int, end: int) -> Record:
    return (Grow.STOPS, start, end, ("", _NOTHING_RX), False)


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


def held_record(held: int, end: int, delims: tuple[str, ...], begun: str) -> Record:
    """``until(delims)`` that stopped at ``held``, where the text ends with ``begun``, the
    beginning of a delimiter (its result, NEED_MORE_INPUT, ends at ``held``)."""
    return (Grow.HELD, held, end, (delims, begun), True)


class Frontier:
    """A growing leaf at the end of the text, and the test of a chunk against it."""

    __slots__ = ("arg", "grow", "moves", "start", "stops")

    def __init__(self, record: Record) -> None:
        grow, start, _end, arg, _open = record
        self.grow: Grow = grow
        self.start: int = start
        self.arg: Any = arg
        # whether the end of the parse moves with the end of the text (else it stays)
        self.moves = grow is not Grow.HELD
        # one-character chunks of STOPS leaves: a membership test
        self.stops: str | None = arg[0] if grow is Grow.STOPS else None

    def absorbs(self, chunk: str, end: int) -> bool:
        """Whether the leaf, now reaching ``end``, swallows ``chunk`` whole (and stays
        open)."""
        grow = self.grow
        if grow is Grow.STOPS:
            return self.arg[1].search(chunk) is None
        if grow is Grow.RUN:
            return self.arg.fullmatch(chunk) is not None
        if grow is Grow.LITERAL:
            literal: str = self.arg
            k = end - self.start
            return literal.startswith(chunk, k) and k + len(chunk) < len(literal)
        delims, begun = self.arg
        begun += chunk
        if begun in delims or not any(len(d) > len(begun) and d.startswith(begun)
                                      for d in delims):
            return False
        self.arg = (delims, begun)  # the chunk is taken
        return True


def usable(record: Record | None, bad: bool, end: int, n: int) -> bool:
    """Whether ``record``, the first result of a partial parse that looked at the end of
    a text of ``n`` characters, is a frontier (``bad``: a lookahead or a failure looked at
    the end too; ``end``: where the parse ended)."""
    if record is None or bad or record[0] is Grow.OTHER:
        return False
    if record[0] is Grow.HELD:
        return record[2] == n and end == record[1]
    return record[2] == n == end
