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


def _span(node: Node) -> tuple[int, int | None]:
    """The shortest and longest lengths of the node's strings (None: unbounded)."""
    if isinstance(node, Chars):
        return 1, 1
    if isinstance(node, Cat | Or):
        spans = [_span(i) for i in (node.items if isinstance(node, Cat) else node.options)]
        highs = [h for _, h in spans]
        if isinstance(node, Or):
            return min(a for a, _ in spans), (None if None in highs else max(
                h for h in highs if h is not None))
        return sum(a for a, _ in spans), (None if None in highs else sum(
            h for h in highs if h is not None))
    a, b = _span(node.item)
    return a * node.min, (None if node.max is None or (b is None and node.max) else
                          (b or 0) * node.max)


def _split(node: Cat, lo: int, hi: int | None, most: int) -> Node | None | bool:
    """A concatenation whose length one item carries but others vary a little
    (``^https?://.+$``): one alternative per length of the items before and after the
    widest one, each narrowed in place; None past ``most`` alternatives."""
    spans = [_span(i) for i in node.items]
    k = max(range(len(spans)), key=lambda i: (spans[i][1] is None,
                                              (spans[i][1] or 0) - spans[i][0]))
    head, tail = Cat(node.items[:k]), Cat(node.items[k + 1:])
    (h0, h1), (t0, t1) = _span(head), _span(tail)
    if h1 is None or t1 is None or (h1 - h0 + 1) * (t1 - t0 + 1) > most:
        return None
    options: list[Node] = []
    for a in range(h0, h1 + 1):
        for b in range(t0, t1 + 1):
            parts = [_limit(head, a, a, most), _limit(tail, b, b, most),
                     _limit(node.items[k], max(lo - a - b, 0),
                            None if hi is None else hi - a - b, most)]
            kept: list[Node] = []
            for part in parts:
                if part is None or part is True:
                    return None
                if not isinstance(part, bool):  # (False: no string of these lengths)
                    kept.append(part)
            if len(kept) == 3:
                head_a, tail_b, middle = kept
                options.append(Cat(tuple(p for p in (head_a, middle, tail_b) if p != Cat(()))))
    return Or(tuple(options)) if options else False


def _limit(node: Node, lo: int, hi: int | None, most: int) -> Node | None | bool:
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
        if len(variable) > 1:
            return _split(node, lo, hi, most)
        rest = sum(s for s in sizes if s is not None)
        k = variable[0]
        inner = _limit(node.items[k], max(lo - rest, 0), None if hi is None else hi - rest,
                       most)
        if inner is None or inner is False or inner is True:
            return inner
        return replace(node, items=(*node.items[:k], inner, *node.items[k + 1:]))
    return None


def limit_length(branches: list[Branch], lo: int, hi: int | None,
                 most: int = 1) -> list[Branch] | None:
    """Branches matching only strings of length lo..hi, or None if not expressible
    (one part of a concatenation may be split into up to ``most`` alternatives by the
    lengths of the parts around it)."""
    out = []
    for b in branches:
        if not (b.start_anchored and b.end_anchored):
            return None
        node = _limit(b.node, lo, hi, most)
        if node is None or node is True:
            return None
        if node is not False:
            out.append(Branch(node, True, True))
    return out
