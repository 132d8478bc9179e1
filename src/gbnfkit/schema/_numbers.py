"""Number grammars: exact integer ranges and fixed-point decimal intervals.

Integers are written without fraction or exponent, without leading zeros; ``-0``
is accepted where 0 is in range (it is the value 0).  Decimal intervals are exact for
fixed-point notation; a bounded ``number`` is not allowed an exponent (see README).
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal

from gbnfkit.grammar._counts import BLOCK, Blocks, Count, Row, Run, plan_count
from gbnfkit.schema._gbnf import alt, char_class, group, literal, seq

__all__ = ["digit_range", "hex_digits", "int_range", "decimal_interval", "DEC", "repeat"]

DigitClass = Callable[[int, int], str]


def dec_digits(lo: int, hi: int) -> str:
    """Class of decimal digits ``lo..hi``."""
    if lo == hi:
        return literal(str(lo))
    return char_class([(ord("0") + lo, ord("0") + hi)])


DEC: DigitClass = dec_digits


def hex_digits(lo: int, hi: int) -> str:
    """Class of hexadecimal digits ``lo..hi``, either case."""
    if lo == hi and lo <= 9:
        return literal(str(lo))
    ranges: list[tuple[int, int]] = []
    if lo <= 9:
        ranges.append((ord("0") + lo, ord("0") + min(hi, 9)))
    if hi >= 10:
        a, b = max(lo, 10) - 10, hi - 10
        ranges.append((ord("a") + a, ord("a") + b))
        ranges.append((ord("A") + a, ord("A") + b))
    return char_class(ranges)


def _digits(n: int, width: int, base: int) -> list[int]:
    out = []
    for _ in range(width):
        out.append(n % base)
        n //= base
    return out[::-1]


def _fixed(lo: list[int], hi: list[int], base: int, cls: DigitClass) -> str:
    if not lo:
        return ""
    top = base - 1
    if all(d == 0 for d in lo) and all(d == top for d in hi):
        return _rep(cls(0, top), len(lo))
    if all(d == 0 for d in lo[1:]) and all(d == top for d in hi[1:]):
        rest = len(lo) - 1
        head = cls(lo[0], hi[0])
        return head if rest == 0 else seq(head, _rep(cls(0, top), rest))
    if lo[0] == hi[0]:
        return seq(cls(lo[0], lo[0]), _fixed(lo[1:], hi[1:], base, cls))
    n = len(lo) - 1
    lo_full = all(d == 0 for d in lo[1:])
    hi_full = all(d == top for d in hi[1:])
    mid_lo = lo[0] if lo_full else lo[0] + 1
    mid_hi = hi[0] if hi_full else hi[0] - 1
    options = []
    if not lo_full:
        options.append(seq(cls(lo[0], lo[0]), group(_fixed(lo[1:], [top] * n, base, cls))))
    if mid_lo <= mid_hi:
        options.append(seq(cls(mid_lo, mid_hi), _rep(cls(0, top), n) if n else ""))
    if not hi_full:
        options.append(seq(cls(hi[0], hi[0]), group(_fixed([0] * n, hi[1:], base, cls))))
    return alt(o for o in options)


def _rep(atom: str, n: int) -> str:
    return atom if n == 1 else f"{atom}{{{n}}}"


def repeat(atom: str, lo: int, hi: int | None) -> str:
    """``atom{lo,hi}``; bounds above 10,000 are written with blocks of 1,000 so that
    the grammar stays within the engine's repetition limit (same language): the text of
    :func:`gbnfkit.grammar._counts.plan_count`'s plan, whose docstring says which
    blocks and branches, and why."""
    return _written(atom, plan_count(lo, hi))


def _written(atom: str, plan: Count) -> str:
    """The GBNF text of ``plan`` repeating ``atom``."""
    if isinstance(plan, Run):
        lo, hi = plan.lo, plan.hi
        if hi is None:
            return f"{atom}{{{lo},}}" if lo else f"{atom}*"
        return f"{atom}{{{lo}}}" if lo == hi else f"{atom}{{{lo},{hi}}}"
    if isinstance(plan, Blocks):
        return _written(f"({atom}{{{BLOCK}}})", plan.count)
    if isinstance(plan, Row):
        return seq(*(_written(atom, part) for part in plan.parts))
    return f"({alt([_written(atom, branch) for branch in plan.branches])})"


def digit_range(lo: int, hi: int, width: int, base: int = 10, cls: DigitClass = DEC) -> str:
    """Exactly the ``width``-digit strings (leading zeros kept) with value in ``lo..hi``."""
    return _fixed(_digits(lo, width, base), _digits(hi, width, base), base, cls)


def _nonneg_range(lo: int, hi: int | None) -> str:
    """Canonical decimal integers in ``lo..hi`` (``hi=None``: unbounded), lo >= 0."""
    options = []
    width = len(str(lo))
    top = len(str(hi)) if hi is not None else width
    for w in range(width, top + 1):
        a = max(lo, 10 ** (w - 1) if w > 1 else 0)
        b = 10**w - 1 if hi is None else min(hi, 10**w - 1)
        if a <= b:
            options.append(group(digit_range(a, b, w)))
    if hi is None:
        options.append(seq(char_class([(ord("1"), ord("9"))]), f"[0-9]{{{width},}}"))
    return alt(options)


def int_range(lo: int | None, hi: int | None, max_digits: int | None = None) -> str | None:
    """Grammar for canonical JSON integers in ``lo..hi``; ``None`` if the range is empty.

    ``max_digits`` caps the number of digits where a side is unbounded.
    """
    if max_digits is not None:
        cap = 10**max_digits - 1
        lo = -cap if lo is None else lo
        hi = cap if hi is None else hi
    if lo is not None and hi is not None and lo > hi:
        return None
    options = []
    if hi is None or hi >= 0:
        options.append(_nonneg_range(max(lo or 0, 0) if lo is not None else 0, hi))
    if lo is None or lo < 0:
        mag_lo = max(-hi, 1) if hi is not None else 1
        mag_hi = -lo if lo is not None else None
        options.append(seq('"-"', group(_nonneg_range(mag_lo, mag_hi))))
    if (lo is None or lo <= 0) and (hi is None or hi >= 0):
        options.append('"-0"')
    return alt(options)


# ---------------------------------------------------------------- fixed-point decimals
# A fraction tail is described as (expression matching a non-empty digit string, or
# None; whether the empty digit string is allowed).  Values compare with zero padding.

Tail = tuple[str | None, bool]
_ANY = "[0-9]+"


def _then(prefix: str, tail: Tail) -> list[str]:
    ne, empty = tail
    out = [seq(prefix, group(ne))] if ne is not None else []
    if empty:
        out.append(prefix)
    return out


def _mk(options: list[str], empty: bool) -> Tail:
    return (alt(options) if options else None, empty)


def _ge(s: str, strict: bool) -> Tail:
    if not s:
        return ("[0-9]* [1-9] [0-9]*", False) if strict else (_ANY, True)
    d = int(s[0])
    options = []
    if d < 9:
        options.append(seq(dec_digits(d + 1, 9), "[0-9]*"))
    options += _then(literal(s[0]), _ge(s[1:], strict))
    return _mk(options, False)


def _le(s: str, strict: bool) -> Tail:
    if not s:
        return (None, False) if strict else ('"0"+', True)
    d = int(s[0])
    options = []
    if d > 0:
        options.append(seq(dec_digits(0, d - 1), "[0-9]*"))
    options += _then(literal(s[0]), _le(s[1:], strict))
    return _mk(options, True)


def _between(a: str, b: str, sa: bool, sb: bool) -> Tail:
    """Digit strings D with 0.a <= 0.D <= 0.b (``sa``/``sb``: strict)."""
    empty = (not a and not sa) and (bool(b) or not sb)
    if not a and not b:
        return _mk(['"0"+'] if not (sa or sb) else [], empty)
    a0 = int(a[0]) if a else 0
    b0 = int(b[0]) if b else 0
    if a0 == b0:
        return _mk(_then(literal(str(a0)), _between(a[1:], b[1:], sa, sb)), empty)
    options = _then(literal(str(a0)), _ge(a[1:], sa))
    if b0 - a0 > 1:
        options.append(seq(dec_digits(a0 + 1, b0 - 1), "[0-9]*"))
    options += _then(literal(str(b0)), _le(b[1:], sb))
    return _mk(options, empty)


def _split(x: Decimal) -> tuple[int, str]:
    text = format(x, "f")
    whole, _, frac = text.partition(".")
    return int(whole), frac.rstrip("0")


def _frac(tail: Tail) -> str | None:
    ne, empty = tail
    if ne is None:
        return "" if empty else None
    body = seq('"."', group(ne))
    return f"({body})?" if empty else body


_FRAC_ANY = '("." [0-9]+)?'


def _nonneg_interval(lo: Decimal, hi: Decimal | None, slo: bool, shi: bool) -> str | None:
    li, lf = _split(lo)
    options: list[str] = []

    def with_int(int_expr: str | None, frac: str | None) -> None:
        if int_expr is not None and frac is not None:
            options.append(seq(group(int_expr), frac))

    if hi is None:
        with_int(int_range(li + 1, None), _FRAC_ANY)
        with_int(literal(str(li)), _frac(_ge(lf, slo)))
    else:
        hi_i, hf = _split(hi)
        if li == hi_i:
            with_int(literal(str(li)), _frac(_between(lf, hf, slo, shi)))
        else:
            with_int(literal(str(li)), _frac(_ge(lf, slo)))
            if li + 1 <= hi_i - 1:
                with_int(int_range(li + 1, hi_i - 1), _FRAC_ANY)
            with_int(literal(str(hi_i)), _frac(_le(hf, shi)))
    return alt(options) if options else None


def decimal_interval(
    lo: Decimal | None, hi: Decimal | None, lo_strict: bool, hi_strict: bool
) -> str | None:
    """Fixed-point JSON numbers with value in the interval; ``None`` if it is empty."""
    if lo is not None and hi is not None and (lo > hi or (lo == hi and (lo_strict or hi_strict))):
        return None
    options: list[str] = []
    # non-negative side
    if hi is None or hi >= 0:
        if lo is None or lo < 0:
            part = _nonneg_interval(Decimal(0), hi, False, hi_strict)
        else:
            part = _nonneg_interval(lo, hi, lo_strict, hi_strict)
        if part is not None:
            options.append(part)
    # negative side: magnitudes of -x
    if lo is None or lo < 0 or (lo == 0 and not lo_strict):
        if hi is not None and hi < 0:
            m_lo, m_lo_strict = -hi, hi_strict
        else:
            zero_ok = hi is None or hi > 0 or (hi == 0 and not hi_strict)
            zero_ok = zero_ok and (lo is None or lo < 0 or not lo_strict)
            m_lo, m_lo_strict = Decimal(0), not zero_ok
        m_hi = None if lo is None else -lo
        part = _nonneg_interval(m_lo, m_hi, m_lo_strict, lo_strict)
        if part is not None:
            options.append(seq('"-"', group(part)))
    return alt(options) if options else None
