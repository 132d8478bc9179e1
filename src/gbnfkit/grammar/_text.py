"""How characters are written in GBNF text (shared by the printer and error messages)."""

from __future__ import annotations

__all__ = ["class_char", "describe_char", "escape_code_point", "literal_char"]

_NAMED = {0x09: "\\t", 0x0A: "\\n", 0x0D: "\\r"}


def escape_code_point(cp: int) -> str:
    """The shortest hex escape for ``cp``: ``\\xXX``, ``\\uXXXX`` or ``\\UXXXXXXXX``."""
    if cp < 0x100:
        return f"\\x{cp:02X}"
    if cp < 0x10000:
        return f"\\u{cp:04X}"
    return f"\\U{cp:08X}"


def _plain(cp: int) -> str | None:
    """``cp`` as itself if it is printable, else its canonical escape."""
    if cp in _NAMED:
        return _NAMED[cp]
    if cp > 0x10FFFF or not chr(cp).isprintable():
        return escape_code_point(cp)
    return None


def literal_char(cp: int) -> str:
    """``cp`` as written inside a ``"..."`` literal."""
    if cp == 0x22:
        return '\\"'
    if cp == 0x5C:
        return "\\\\"
    special = _plain(cp)
    return chr(cp) if special is None else special


def class_char(cp: int, first: bool = False) -> str:
    """``cp`` as written inside ``[...]`` (``first``: the first character of a class)."""
    if cp == 0x5D:
        return "\\]"
    if cp == 0x5B:
        return "\\["
    if cp == 0x5C:
        return "\\\\"
    if cp == 0x2D:
        return "\\-"
    if cp == 0x5E and first:
        return "\\x5E"
    special = _plain(cp)
    return chr(cp) if special is None else special


def describe_char(c: str) -> str:
    """A character for an error message: ``'x'``, or a name for blanks and controls."""
    if not c:
        return "the end of the grammar"
    if c == "\n":
        return "a newline"
    cp = ord(c)
    if c.isprintable() and c != " ":
        return repr(c)
    return f"U+{cp:04X}"
