"""Readable reports of where a text left the grammar."""

from __future__ import annotations

from collections.abc import Sequence

from gbnfkit._errors import _excerpt

__all__ = ["format_expected", "rejection_report"]

_MAX_SHOWN = 20


def format_expected(expected: Sequence[str]) -> str:
    """``a, b, c`` (at most 20 shown), or a note that nothing more is allowed."""
    if not expected:
        return "nothing more (the text should have ended here)"
    shown = ", ".join(expected[:_MAX_SHOWN])
    if len(expected) > _MAX_SHOWN:
        shown += f", ... ({len(expected) - _MAX_SHOWN} more)"
    return shown


def rejection_report(text: str, position: int, expected: Sequence[str]) -> str:
    """What was rejected, where (position, line:column, caret excerpt) and what was expected."""
    line = text.count("\n", 0, position) + 1
    column = position - (text.rfind("\n", 0, position) + 1) + 1
    shown = repr(text[position]) if position < len(text) else "end of text"
    lines = [
        f"rejected: unexpected {shown} at position {position} (line {line}, column {column})",
    ]
    excerpt = _excerpt(text, line, column)
    if excerpt:
        lines.extend("    " + part for part in excerpt.split("\n"))
    lines.append(f"expected: {format_expected(expected)}")
    return "\n".join(lines)
