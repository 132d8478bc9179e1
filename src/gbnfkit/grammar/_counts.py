"""Large repetition counts: how ``item{lo,hi}`` is written within the engine's
repetition limit.

One planner (:func:`plan_count`) decides which blocks and which branches; two renderers
write the plan, the JSON Schema converter's as GBNF text (``schema/_numbers.py``
``repeat``) and the PEG parsers' as grammar IR (``peg/_to_grammar.py``).  A count above
:data:`BIG` is written with blocks of :data:`BLOCK` items (and blocks of blocks for a
count of blocks above it): the same language, and every bound fits ``max_repetition``.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["BIG", "BLOCK", "SHORT_MIN", "Blocks", "Count", "Either", "Row", "Run", "plan_count"]

BIG = 10_000
"""The largest bound written as it is."""
BLOCK = 1_000
"""Items per block."""
SHORT_MIN = 16
"""A minimum below this is written in the first branch of a count above :data:`BIG`."""


@dataclass(frozen=True)
class Run:
    """The item ``lo..hi`` times (``hi`` ``None``: no upper bound), both within BIG."""

    lo: int
    hi: int | None


@dataclass(frozen=True)
class Blocks:
    """Blocks of BLOCK items, as many as ``count`` says (a plan over the block)."""

    count: Count


@dataclass(frozen=True)
class Row:
    """The parts one after the other."""

    parts: tuple[Count, ...]


@dataclass(frozen=True)
class Either:
    """One of the branches."""

    branches: tuple[Count, ...]


Count = Run | Blocks | Row | Either


def plan_count(lo: int, hi: int | None) -> Count:
    """How to write ``item{lo,hi}``: a :class:`Run` when both bounds are within
    :data:`BIG`, else blocks of :data:`BLOCK` items.

    A minimum above BIG is its blocks and the rest of it, then what the maximum allows
    more.  An upper bound above BIG splits the count by its blocks: fewer than ``q``
    blocks then fewer than BLOCK more, or ``q`` blocks then at most ``r`` more (``hi -
    lo = BLOCK q + r``), after a row of ``lo``.  A minimum below :data:`SHORT_MIN` is
    the first branch's instead (counts under BLOCK: ``item{lo,BLOCK-1}``; every other
    branch holds BLOCK at least), not a row of ``lo`` copies before the blocks: after
    such a row every string state of a schema's grammar holds three parses at once, and
    the token layer's first mask of a ``minLength: 1, maxLength: 32767`` string was
    13 ms instead of 3.  A longer minimum keeps its row: the edge of the first block,
    where each count's state is a new wide split, stays ``lo`` characters further
    (docs/schema.md, "JSON strings").

    A part of no items (an exact rest of 0) is left out; a :class:`Run` of ``0..0``
    stays where the count asked for none more (``lo == hi``), as the converter's text
    has always written it.
    """
    if lo > BIG:
        q, r = divmod(lo, BLOCK)
        least = Row((Blocks(plan_count(q, q)), *((Run(r, r),) if r else ())))
        return Row((least, plan_count(0, None if hi is None else hi - lo)))
    if hi is None or hi <= BIG:
        return Run(lo, hi)
    if 0 < lo < SHORT_MIN:
        q, r = divmod(hi, BLOCK)
        full = Row((Blocks(plan_count(q, q)), *((Run(0, r),) if r else ())))
        more = Row((Blocks(plan_count(1, q - 1)), Run(0, BLOCK - 1)))
        return Either((plan_count(lo, BLOCK - 1), more, full))
    q, r = divmod(hi - lo, BLOCK)
    head = (Run(lo, lo),) if lo else ()
    if q == 0:  # fewer than BLOCK more: no block to count
        return Row((*head, Run(0, r)))
    full = Row((Blocks(plan_count(q, q)), *((Run(0, r),) if r else ())))
    fewer = Row((Blocks(plan_count(0, q - 1)), Run(0, BLOCK - 1)))
    return Row((*head, Either((fewer, full))))
