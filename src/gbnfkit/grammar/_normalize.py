"""Canonical form of IR expressions.

The GBNF parser produces canonical IR, and the printer's output parses back to it, so
``parse_gbnf(to_gbnf(ir)) == normalize_ir(ir)`` for every IR the printer accepts.

Canonical means:

* nested :class:`Seq` items and nested :class:`Alt` options are flattened;
* empty literals are dropped from sequences and adjacent literals are merged;
* a sequence of one item is that item; the empty sequence is ``Seq(())``
  (``Literal("")`` becomes ``Seq(())``);
* an alternative of one option is that option;
* character classes are in :meth:`CharClass.of` form.

Repetitions are kept as they are (``x{1}`` stays ``Repeat(x, 1, 1)``).
"""

from __future__ import annotations

from gbnfkit.grammar._ir import Alt, CharClass, Expr, GrammarIR, Literal, Repeat, RuleRef, Seq

__all__ = ["EMPTY", "make_alt", "make_seq", "normalize", "normalize_ir"]

EMPTY = Seq(())


def make_seq(items: list[Expr]) -> Expr:
    """The canonical sequence of already canonical ``items``."""
    out: list[Expr] = []
    for item in items:
        parts = item.items if isinstance(item, Seq) else (item,)
        for part in parts:
            if isinstance(part, Literal):
                if not part.text:
                    continue
                if out and isinstance(out[-1], Literal):
                    out[-1] = Literal(out[-1].text + part.text)
                    continue
            out.append(part)
    if len(out) == 1:
        return out[0]
    return Seq(tuple(out))


def make_alt(options: list[Expr]) -> Expr:
    """The canonical alternative of already canonical ``options``."""
    out: list[Expr] = []
    for option in options:
        if isinstance(option, Alt):
            out.extend(option.options)
        else:
            out.append(option)
    if len(out) == 1:
        return out[0]
    return Alt(tuple(out))


def normalize(expr: Expr) -> Expr:
    """The canonical form of ``expr`` (same meaning)."""
    if isinstance(expr, RuleRef):
        return expr
    if isinstance(expr, Seq):
        return make_seq([normalize(item) for item in expr.items])
    if isinstance(expr, Alt):
        options = expr.options
        if len(options) == 1:  # (an Alt that it normalizes to is flat already)
            return normalize(options[0])
        if not options:
            return expr
        return make_alt([normalize(option) for option in options])
    if isinstance(expr, Literal):
        return expr if expr.text else EMPTY
    if isinstance(expr, CharClass):
        ranges = expr.ranges
        if len(ranges) == 1 and ranges[0][0] <= ranges[0][1]:
            return expr  # one non-empty range is canonical already
        return CharClass.of(ranges, expr.negated)
    return Repeat(normalize(expr.item), expr.min, expr.max)


def normalize_ir(ir: GrammarIR) -> GrammarIR:
    """``ir`` with every rule body in canonical form (positions kept)."""
    return GrammarIR(
        {name: normalize(body) for name, body in ir.rules.items()},
        ir.root,
        dict(ir.positions),
    )
