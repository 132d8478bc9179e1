"""Intersecting a pattern with ``minLength``/``maxLength`` when the pattern's length
is carried by a single repetition of a character class (``^[a-z0-9_-]+$``,
``^x-[A-Z]{2,}$``...): that repetition's bounds are narrowed, which is exact."""

from __future__ import annotations

from dataclasses import replace

from gbnfkit.schema._regex_parse import Branch, Cat, Chars, Node, Or, Rep

__all__ = ["limit_length"]


def _fixed(node: Node) -> int | None:
    if isinstance(node, Chars):
        return 1
    if isinstance(node, Cat):
        total = 0
        for item in node.items:
            n = _fixed(item)
            if n is None:
                return None
            total += n
        return total
    if isinstance(node, Or):
        sizes = {_fixed(o) for o in node.options}
        return sizes.pop() if len(sizes) == 1 else None
    if node.max == node.min:
        inner = _fixed(node.item)
        return None if inner is None else inner * node.min
    return None


def _limit(node: Node, lo: int, hi: int | None) -> Node | None | bool:
    """The node restricted to lengths lo..hi; False: impossible; None: cannot tell."""
    fixed = _fixed(node)
    if fixed is not None:
        return node if lo <= fixed and (hi is None or fixed <= hi) else False
    if isinstance(node, Rep) and isinstance(node.item, Chars):
        a = max(node.min, lo)
        b = hi if node.max is None else (node.max if hi is None else min(node.max, hi))
        if b is not None and a > b:
            return False
        return Rep(node.item, a, b)
    if isinstance(node, Cat):
        sizes = [_fixed(i) for i in node.items]
        variable = [i for i, s in enumerate(sizes) if s is None]
        if len(variable) != 1:
            return None
        rest = sum(s for s in sizes if s is not None)
        k = variable[0]
        inner = _limit(node.items[k], max(lo - rest, 0), None if hi is None else hi - rest)
        if inner is None or inner is False or inner is True:
            return inner
        return replace(node, items=(*node.items[:k], inner, *node.items[k + 1:]))
    return None


def limit_length(branches: list[Branch], lo: int, hi: int | None) -> list[Branch] | None:
    """Branches matching only strings of length lo..hi, or None if not expressible."""
    out = []
    for b in branches:
        if not (b.start_anchored and b.end_anchored):
            return None
        node = _limit(b.node, lo, hi)
        if node is None or node is True:
            return None
        if node is not False:
            out.append(Branch(node, True, True))
    return out
