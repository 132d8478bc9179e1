"""UTF-8 helpers: which code points a partial encoding can still become, and lead bytes."""

from __future__ import annotations

from gbnfkit.engine._ranges import Ranges, overlaps, subtract

__all__ = ["SURROGATES", "encodable", "lead_bytes", "next_bytes", "partial_range"]

SURROGATES: Ranges = ((0xD800, 0xDFFF),)
_MIN_FOR_LENGTH = {1: 0, 2: 0x80, 3: 0x800, 4: 0x10000}
_CLASSES = ((0, 0x7F), (0x80, 0x7FF), (0x800, 0xFFFF), (0x10000, 0x10FFFF))


def encodable(ranges: Ranges) -> Ranges:
    """``ranges`` without the surrogates (which UTF-8 cannot encode)."""
    return subtract(ranges, SURROGATES)


def partial_range(prefix: bytes) -> tuple[int, int, int] | None:
    """For a (possibly incomplete) UTF-8 encoding of one code point: ``(lo, hi, length)``.

    ``lo .. hi`` are the code points whose encoding starts with ``prefix`` (surrogates
    inside still have to be excluded by the caller) and ``length`` the full length of
    the encoding. ``None`` if no valid UTF-8 encoding starts with ``prefix``.
    """
    b0 = prefix[0]
    if b0 < 0x80:
        need, val = 1, b0
    elif 0xC2 <= b0 <= 0xDF:
        need, val = 2, b0 & 0x1F
    elif 0xE0 <= b0 <= 0xEF:
        need, val = 3, b0 & 0x0F
    elif 0xF0 <= b0 <= 0xF4:
        need, val = 4, b0 & 0x07
    else:
        return None
    if len(prefix) > need:
        return None
    for i in range(1, len(prefix)):
        b = prefix[i]
        lo_b, hi_b = 0x80, 0xBF
        if i == 1:
            if b0 == 0xE0:
                lo_b = 0xA0
            elif b0 == 0xED:
                hi_b = 0x9F
            elif b0 == 0xF0:
                lo_b = 0x90
            elif b0 == 0xF4:
                hi_b = 0x8F
        if not lo_b <= b <= hi_b:
            return None
        val = (val << 6) | (b & 0x3F)
    rem = 6 * (need - len(prefix))
    lo = max(val << rem, _MIN_FOR_LENGTH[need])
    hi = min((val << rem) | ((1 << rem) - 1), 0x10FFFF)
    return lo, hi, need


def lead_bytes(allowed: Ranges) -> frozenset[int]:
    """First bytes of the UTF-8 encodings of the code points in ``allowed``."""
    out: set[int] = set()
    for lo, hi in encodable(allowed):
        for clo, chi in _CLASSES:
            a, b = max(lo, clo), min(hi, chi)
            if a <= b:
                out.update(range(chr(a).encode()[0], chr(b).encode()[0] + 1))
    return frozenset(out)


def next_bytes(allowed: Ranges, pending: bytes) -> frozenset[int]:
    """Bytes that extend ``pending`` towards the encoding of a code point in ``allowed``."""
    if not pending:
        return lead_bytes(allowed)
    ok = encodable(allowed)
    out: set[int] = set()
    for b in range(0x80, 0xC0):
        r = partial_range(pending + bytes((b,)))
        if r is not None and overlaps(ok, r[0], r[1]):
            out.add(b)
    return frozenset(out)
