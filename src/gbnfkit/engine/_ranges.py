"""Sets of code points as sorted, merged, inclusive ``(lo, hi)`` range tuples.

Every function takes and returns canonical range tuples: sorted, non-overlapping,
non-adjacent, each ``lo <= hi``, all inside ``0 .. MAX_CODE_POINT``.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable

from gbnfkit.grammar._ir import MAX_CODE_POINT, merge_ranges

__all__ = [
    "Ranges",
    "complement",
    "contains",
    "intersect",
    "normalize",
    "overlaps",
    "subtract",
    "union",
]

Ranges = tuple[tuple[int, int], ...]


def normalize(ranges: Iterable[tuple[int, int]]) -> Ranges:
    """Clip to valid code points, drop empty ranges, sort and merge."""
    if isinstance(ranges, tuple):
        # canonical already (a class's ranges mostly are: sorted, merged, from 0 up) and
        # within U+10FFFF: given back as it is
        merged = merge_ranges(ranges)
        if merged is ranges and (not merged or merged[-1][1] <= MAX_CODE_POINT):
            return merged
    return merge_ranges(
        (lo if lo > 0 else 0, hi if hi < MAX_CODE_POINT else MAX_CODE_POINT)
        for lo, hi in ranges
        if lo <= MAX_CODE_POINT and hi >= 0
    )


def union(*sets: Ranges) -> Ranges:
    """Code points in any of ``sets``."""
    return normalize(r for s in sets for r in s)


def complement(ranges: Ranges) -> Ranges:
    """Code points ``0 .. MAX_CODE_POINT`` not in ``ranges``."""
    out: list[tuple[int, int]] = []
    nxt = 0
    for lo, hi in ranges:
        if lo > nxt:
            out.append((nxt, lo - 1))
        nxt = hi + 1
    if nxt <= MAX_CODE_POINT:
        out.append((nxt, MAX_CODE_POINT))
    return tuple(out)


def intersect(a: Ranges, b: Ranges) -> Ranges:
    """Code points in both ``a`` and ``b``."""
    out: list[tuple[int, int]] = []
    i = j = 0
    while i < len(a) and j < len(b):
        lo = max(a[i][0], b[j][0])
        hi = min(a[i][1], b[j][1])
        if lo <= hi:
            out.append((lo, hi))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return tuple(out)


def subtract(a: Ranges, b: Ranges) -> Ranges:
    """Code points in ``a`` but not in ``b``."""
    return intersect(a, complement(b))


def contains(ranges: Ranges, cp: int) -> bool:
    """Whether ``cp`` is in ``ranges`` (binary search)."""
    i = bisect_right(ranges, (cp, MAX_CODE_POINT + 1)) - 1
    return i >= 0 and ranges[i][1] >= cp


def overlaps(ranges: Ranges, lo: int, hi: int) -> bool:
    """Whether some code point in ``lo .. hi`` is in ``ranges``."""
    i = bisect_right(ranges, (hi, MAX_CODE_POINT + 1)) - 1
    return i >= 0 and ranges[i][1] >= lo
