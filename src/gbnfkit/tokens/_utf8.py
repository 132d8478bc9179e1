"""Code point ranges as exact UTF-8 byte-range sequences.

``utf8_sequences(lo, hi)`` splits the code points ``lo .. hi`` (surrogates
excluded, as strict UTF-8 never encodes them) into sequences of inclusive byte
ranges: a byte string is the UTF-8 encoding of a code point in the range iff it
matches one of the sequences byte by byte.  Same algorithm as ``utf8-ranges``.
"""

from __future__ import annotations

__all__ = ["ByteSeq", "utf8_sequences"]

ByteSeq = tuple[tuple[int, int], ...]

_LENGTH_SPANS = ((0, 0x7F), (0x80, 0x7FF), (0x800, 0xD7FF), (0xE000, 0xFFFF), (0x10000, 0x10FFFF))


def utf8_sequences(lo: int, hi: int) -> list[ByteSeq]:
    """Byte-range sequences matching exactly the UTF-8 encodings of ``lo .. hi``."""
    out: list[ByteSeq] = []
    for (a, b), whole in zip(_LENGTH_SPANS, _WHOLE_SPANS, strict=True):
        s, e = max(lo, a), min(hi, b)
        if s == a and e == b:
            out.extend(whole)  # most classes (negated ones) cover whole spans
        elif s <= e:
            _split(s, e, out)
    return out


def _split(lo: int, hi: int, out: list[ByteSeq]) -> None:
    todo = [(lo, hi)]
    while todo:
        lo, hi = todo.pop()
        n = len(chr(lo).encode("utf-8"))
        done = False
        for i in range(1, n):
            m = (1 << (6 * i)) - 1
            if lo & ~m != hi & ~m:
                if lo & m != 0:
                    todo.append(((lo | m) + 1, hi))
                    todo.append((lo, lo | m))
                    done = True
                    break
                if hi & m != m:
                    todo.append((hi & ~m, hi))
                    todo.append((lo, (hi & ~m) - 1))
                    done = True
                    break
        if done:
            continue
        a = chr(lo).encode("utf-8")
        b = chr(hi).encode("utf-8")
        out.append(tuple((a[k], b[k]) for k in range(n)))


def _whole(lo: int, hi: int) -> tuple[ByteSeq, ...]:
    out: list[ByteSeq] = []
    _split(lo, hi, out)
    return tuple(out)


# the sequences of each whole span, computed once (same order as _split gives them)
_WHOLE_SPANS = tuple(_whole(a, b) for a, b in _LENGTH_SPANS)
