"""Regular expressions the evaluator scans runs of characters with (C speed)."""

from __future__ import annotations

import re

from gbnfkit.grammar._ir import MAX_CODE_POINT, CharClass

__all__ = ["JSON_STRING_RUN", "PARTIAL_ESCAPE", "SPACE_RUN", "class_pattern"]

SPACE_CHARS = " \t\n\r"
_COUNT_LIMIT = 65535  # the largest {0,n} written into a pattern (re's own limit is 2**32 - 2)
SPACE_RUN = re.compile(r"[ \t\n\r]*")

# the characters and escapes of a JSON string, up to (not including) the closing quote
JSON_STRING_RUN = re.compile(r'(?:[^"\\\x00-\x1f]+|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*')
# what may be left at the end of a partial string: the start of an escape
PARTIAL_ESCAPE = re.compile(r"\\(?:u[0-9a-fA-F]{0,3})?")


def _range_text(lo: int, hi: int) -> str:
    if lo == hi:
        return re.escape(chr(lo)) if lo != ord("-") else r"\-"
    return f"{_esc(lo)}-{_esc(hi)}"


def _esc(cp: int) -> str:
    return f"\\U{cp:08x}" if cp > 0xFFFF else f"\\u{cp:04x}"


def class_pattern(klass: CharClass, lo: int, hi: int | None) -> re.Pattern[str]:
    """A regex matching a greedy run of at most ``hi`` characters of ``klass`` (the
    evaluator checks ``lo`` itself)."""
    ranges = [(a, min(b, MAX_CODE_POINT)) for a, b in klass.ranges if a <= MAX_CODE_POINT]
    body = "".join(_range_text(a, b) for a, b in ranges)
    if klass.negated:
        cls = f"[^{body}]" if body else r"[\s\S]"
    else:
        cls = f"[{body}]" if body else r"[^\s\S]"
    # re refuses counts past 2**32 - 2 (OverflowError): a larger maximum is left to the
    # evaluator, which stops a run at ``hi``
    count = "*" if hi is None or hi > _COUNT_LIMIT else f"{{0,{hi}}}"
    return re.compile(cls + count)
