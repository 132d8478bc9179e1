"""The strings a regular expression cannot match without: a pattern trigger's prefilter.

A lazy matcher looks for its pattern triggers after every step, and a ``pattern_full``
trigger must match the whole output, so each look reads all of it. Most trigger patterns
contain a literal that every match holds (``<tool_call>`` in
``[\\s\\S]*?(<tool_call>)[\\s\\S]*``): until one of those strings occurs in the output the
pattern cannot match, and finding a new occurrence only needs the new text. That is what
:func:`required_literals` gives: a few strings, one of which every match contains, read
from the parse of the pattern by Python's own regular expression parser.

The answer may be ``None`` (nothing known), never wrong: a part of the pattern the walk
does not understand (a look-around, a back reference, a case-insensitive group, a class of
more than single characters) gives no requirement and ends the literal run before it, and
what is left is still required (a substring of a required string is required).
"""

from __future__ import annotations

import importlib
import re
from typing import Any

__all__ = ["required_literals"]

try:  # Python 3.11 and later
    _parser: Any = importlib.import_module("re._parser")
    _codes: Any = importlib.import_module("re._constants")
except ImportError:  # Python 3.10
    _parser = importlib.import_module("sre_parse")
    _codes = importlib.import_module("sre_constants")

_LITERAL = _codes.LITERAL
_IN = _codes.IN
_SUBPATTERN = _codes.SUBPATTERN
_BRANCH = _codes.BRANCH
_REPEATS = tuple(
    op
    for op in (
        getattr(_codes, "MAX_REPEAT", None),
        getattr(_codes, "MIN_REPEAT", None),
        getattr(_codes, "POSSESSIVE_REPEAT", None),  # 3.11: a*+
    )
    if op is not None
)
_ATOMIC = getattr(_codes, "ATOMIC_GROUP", None)  # 3.11: (?>...)

_MAX_STRINGS = 32  # more alternatives than this: a search per step costs more than it saves

_Need = frozenset[str] | None


def required_literals(regex: re.Pattern[str]) -> tuple[str, ...] | None:
    """Non-empty strings one of which every match of ``regex`` contains (in the text it
    matched, and so in the text searched), sorted; ``None`` when no such set is known."""
    if regex.flags & re.IGNORECASE:
        return None
    try:
        need = _sequence(list(_parser.parse(regex.pattern, regex.flags)))
    except (re.error, RecursionError):  # the pattern compiled, but nests near the limit
        return None
    return None if need is None else tuple(sorted(need))


def _better(a: _Need, b: _Need) -> _Need:
    """The more selective of two requirements: the longer shortest string, then fewer."""
    if b is None or not b or "" in b or len(b) > _MAX_STRINGS:
        return a
    if a is None:
        return b
    key_a = (min(map(len, a)), -len(a))
    key_b = (min(map(len, b)), -len(b))
    return b if key_b > key_a else a


def _sequence(items: list[tuple[Any, Any]]) -> _Need:
    """The requirement of a sequence: the best of its parts' (each is required)."""
    best: _Need = None
    run: list[str] = []
    for op, av in items:
        if op is _LITERAL:
            run.append(chr(av))
            continue
        if run:
            best = _better(best, frozenset(["".join(run)]))
            run = []
        best = _better(best, _item(op, av))
    if run:
        best = _better(best, frozenset(["".join(run)]))
    return best


def _item(op: Any, av: Any) -> _Need:
    """The requirement of one part that is not a literal character."""
    if op is _SUBPATTERN:
        add_flags, body = av[1], av[-1]
        if add_flags & re.IGNORECASE:
            return None
        return _sequence(list(body))
    if op is _BRANCH:
        union: set[str] = set()
        for alternative in av[1]:
            need = _sequence(list(alternative))
            if need is None:
                return None
            union |= need
        return frozenset(union)
    if op in _REPEATS:
        low, _high, body = av
        return _sequence(list(body)) if low >= 1 else None
    if _ATOMIC is not None and op is _ATOMIC:
        return _sequence(list(av))
    if op is _IN and av and all(kind is _LITERAL for kind, _ in av):
        return frozenset(chr(code) for _, code in av)  # [ab], or a|b as parsed
    return None
