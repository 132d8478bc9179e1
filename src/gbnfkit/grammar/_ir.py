"""The grammar IR: what every front end (GBNF text, JSON Schema, regex, PEG) produces.

A grammar is an ordered mapping from rule names to expressions, plus a start rule.
Expressions are small immutable trees:

* :class:`Literal` -- a sequence of code points (``Literal("")`` is the empty sequence);
* :class:`CharClass` -- one code point from inclusive ranges, or (``negated``) one
  code point outside them; ``ANY`` (``.``) is ``CharClass((), negated=True)``;
* :class:`RuleRef` -- a reference to a rule by name;
* :class:`Seq` -- concatenation; :class:`Alt` -- alternatives;
* :class:`Repeat` -- ``item{min,max}``, ``max=None`` for unbounded.  Repetition is kept
  in the IR (so grammars print back readably) and expanded by the engine compiler in
  O(max) rules, never as nested ``x? x? x?`` chains.

All nodes are frozen, hashable and comparable, so front ends can share sub-trees and
tests can compare IR values directly.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Final

__all__ = [
    "ANY",
    "Alt",
    "CharClass",
    "Expr",
    "GrammarIR",
    "Literal",
    "Repeat",
    "RuleRef",
    "Seq",
    "MAX_CODE_POINT",
    "MAX_NESTING",
    "merge_ranges",
    "too_deep",
]

MAX_CODE_POINT: Final = 0x10FFFF
# levels of Seq / Alt / Repeat an expression may nest: the checks and the engine compiler
# recurse over expressions, and compiled (mypyc) recursion has no RecursionError to stop
# it before the C stack ends; the GBNF parser refuses deeper text long before this
MAX_NESTING: Final = 1000


class Literal:
    """A fixed sequence of code points."""

    __slots__ = ("_text",)

    def __init__(self, text: str) -> None:
        self._text = text

    @property
    def text(self) -> str:
        return self._text

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Literal) or type(other) is not type(self):
            return NotImplemented
        return self._text == other._text

    def __hash__(self) -> int:
        return hash((self._text,))

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(text={self._text!r})"

    def __reduce__(self) -> tuple[object, ...]:
        return (Literal, (self._text,))


def merge_ranges(ranges: Iterable[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    """Inclusive ``(lo, hi)`` ranges without the empty ones, sorted, with overlapping and
    adjacent ones merged."""
    if type(ranges) is tuple:  # (mostly canonical already: then given back as it is)
        last = -2
        for r in ranges:
            if type(r) is not tuple or len(r) != 2:
                break
            lo, hi = r
            if lo > hi or lo <= last + 1:
                break
            last = hi
        else:
            return ranges
    merged: list[tuple[int, int]] = []
    for lo, hi in sorted((lo, hi) for lo, hi in ranges if lo <= hi):
        if merged and lo <= merged[-1][1] + 1:
            if hi > merged[-1][1]:
                merged[-1] = (merged[-1][0], hi)
        else:
            merged.append((lo, hi))
    return tuple(merged)


class CharClass:
    """One code point in (or, if ``negated``, outside) the inclusive ``ranges``.

    Build with :meth:`of` to get the canonical form: ranges sorted, merged, and
    with every ``lo <= hi``.  Code points above U+10FFFF may appear (``\\UFFFFFFFF``
    is legal GBNF); they never match any input.
    """

    __slots__ = ("_hash", "_negated", "_ranges")

    def __init__(self, ranges: tuple[tuple[int, int], ...], negated: bool = False) -> None:
        self._ranges = ranges
        self._negated = negated
        self._hash: int | None = None  # kept once computed, as for Seq

    @property
    def ranges(self) -> tuple[tuple[int, int], ...]:
        return self._ranges

    @property
    def negated(self) -> bool:
        return self._negated

    @staticmethod
    def of(ranges: Iterable[tuple[int, int]], negated: bool = False) -> CharClass:
        """Canonical class: drops empty ranges, sorts and merges adjacent/overlapping ones."""
        return CharClass(merge_ranges(ranges), negated)

    def contains(self, cp: int) -> bool:
        """Whether code point ``cp`` matches this class."""
        inside = any(lo <= cp <= hi for lo, hi in self._ranges)
        return inside != self._negated

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CharClass) or type(other) is not type(self):
            return NotImplemented
        return (self._ranges == other._ranges
                and self._negated == other._negated)

    def __hash__(self) -> int:
        h = self._hash
        if h is None:
            h = self._hash = hash((self._ranges, self._negated))
        return h

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(ranges={self._ranges!r}, negated={self._negated!r})"

    def __reduce__(self) -> tuple[object, ...]:
        return (CharClass, (self._ranges, self._negated))


ANY = CharClass((), negated=True)


class RuleRef:
    """A reference to the rule called ``name``."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    @property
    def name(self) -> str:
        return self._name

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RuleRef) or type(other) is not type(self):
            return NotImplemented
        return self._name == other._name

    def __hash__(self) -> int:
        return hash((self._name,))

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(name={self._name!r})"

    def __reduce__(self) -> tuple[object, ...]:
        return (RuleRef, (self._name,))


class Seq:
    """``items`` one after another; ``Seq(())`` matches the empty string."""

    __slots__ = ("_hash", "_items")

    def __init__(self, items: tuple[Expr, ...]) -> None:
        self._items = items
        # kept once computed: the engine compiler keys its memos by sub-trees (classes,
        # groups, repetitions), and a nested tree would otherwise be hashed again at
        # every level
        self._hash: int | None = None

    @property
    def items(self) -> tuple[Expr, ...]:
        return self._items

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Seq) or type(other) is not type(self):
            return NotImplemented
        return self._items == other._items

    def __hash__(self) -> int:
        h = self._hash
        if h is None:
            h = self._hash = hash(self._items)
        return h

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(items={self._items!r})"

    def __reduce__(self) -> tuple[object, ...]:
        return (Seq, (self._items,))


class Alt:
    """Any one of ``options``."""

    __slots__ = ("_hash", "_options")

    def __init__(self, options: tuple[Expr, ...]) -> None:
        self._options = options
        self._hash: int | None = None  # kept once computed, as for Seq

    @property
    def options(self) -> tuple[Expr, ...]:
        return self._options

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Alt) or type(other) is not type(self):
            return NotImplemented
        return self._options == other._options

    def __hash__(self) -> int:
        h = self._hash
        if h is None:
            h = self._hash = hash(self._options)
        return h

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(options={self._options!r})"

    def __reduce__(self) -> tuple[object, ...]:
        return (Alt, (self._options,))


class Repeat:
    """``item`` repeated at least ``min`` and at most ``max`` times (``None``: no bound)."""

    __slots__ = ("_hash", "_item", "_max", "_min")

    def __init__(self, item: Expr, min: int, max: int | None) -> None:  # noqa: A002
        self._item = item
        self._min = min
        self._max = max
        self._hash: int | None = None  # kept once computed, as for Seq

    @property
    def item(self) -> Expr:
        return self._item

    @property
    def min(self) -> int:
        return self._min

    @property
    def max(self) -> int | None:
        return self._max

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Repeat) or type(other) is not type(self):
            return NotImplemented
        return (self._item == other._item and self._min == other._min
                and self._max == other._max)

    def __hash__(self) -> int:
        h = self._hash
        if h is None:
            h = self._hash = hash((self._item, self._min, self._max))
        return h

    def __repr__(self) -> str:
        name = type(self).__qualname__
        return f"{name}(item={self._item!r}, min={self._min!r}, max={self._max!r})"

    def __reduce__(self) -> tuple[object, ...]:
        return (Repeat, (self._item, self._min, self._max))


Expr = Literal | CharClass | RuleRef | Seq | Alt | Repeat


@dataclass(frozen=True)
class GrammarIR:
    """Rules in definition order, and the name of the start rule.

    ``positions`` optionally maps a rule name to the (line, column) where its
    definition starts in the source text, so later checks can point at it.
    """

    rules: Mapping[str, Expr]
    root: str = "root"
    positions: Mapping[str, tuple[int, int]] = field(default_factory=dict, compare=False)

    def referenced(self, expr: Expr) -> list[str]:
        """Names of the rules ``expr`` refers to, in order of first appearance."""
        out: list[str] = []
        seen: set[str] = set()
        stack: list[Expr] = [expr]
        while stack:
            e = stack.pop()
            if isinstance(e, RuleRef):
                if e.name not in seen:
                    seen.add(e.name)
                    out.append(e.name)
            elif isinstance(e, Seq):
                stack.extend(reversed(e.items))
            elif isinstance(e, Alt):
                stack.extend(reversed(e.options))
            elif isinstance(e, Repeat):
                stack.append(e.item)
        return out


def too_deep(expr: Expr, limit: int = MAX_NESTING) -> bool:
    """Whether ``expr`` nests more than ``limit`` levels of Seq / Alt / Repeat (measured
    without recursion, so that any depth can be refused safely)."""
    # level by level, only inner nodes kept (most nodes are leaves: literals, classes,
    # references); the level's number is the depth of all its nodes
    level: list[Expr] = [expr] if isinstance(expr, (Seq, Alt, Repeat)) else []
    depth = 0
    while level:
        below: list[Expr] = []
        for node in level:
            if isinstance(node, Repeat):
                if depth >= limit:
                    return True  # a child at depth limit + 1
                child = node.item
                if isinstance(child, (Seq, Alt, Repeat)):
                    below.append(child)
                continue
            children = node.items if isinstance(node, Seq) else node.options  # type: ignore[union-attr]
            if children:
                if depth >= limit:
                    return True
                for child in children:
                    if isinstance(child, (Seq, Alt, Repeat)):
                        below.append(child)
        level = below
        depth += 1
    return False
