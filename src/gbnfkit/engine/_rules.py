"""What a parse state allows next: :class:`CharRule`, :class:`CharExcludeRule`, :class:`EndRule`.

``State.allowed()`` returns a tuple of these; a character is allowed iff at least one
rule in the tuple matches it, and the input may end iff :class:`EndRule` is present.
"""

from __future__ import annotations

from dataclasses import dataclass

from gbnfkit.engine._ranges import Ranges, contains, normalize

__all__ = ["CharExcludeRule", "CharRule", "EndRule", "format_ranges"]

_ESCAPES = {"\\": "\\\\", "]": "\\]", "[": "\\[", "-": "\\-", "^": "\\^", "\n": "\\n",
            "\r": "\\r", "\t": "\\t"}


def _show(cp: int) -> str:
    ch = chr(cp)
    if ch in _ESCAPES:
        return _ESCAPES[ch]
    if ch.isprintable() and not ch.isspace() or ch == " ":
        return ch
    if cp <= 0xFF:
        return f"\\x{cp:02X}"
    if cp <= 0xFFFF:
        return f"\\u{cp:04X}"
    return f"\\U{cp:08X}"


def format_ranges(ranges: Ranges) -> str:
    """The inside of a GBNF character class: ``a-z0-9``."""
    parts = []
    for lo, hi in ranges:
        if lo == hi:
            parts.append(_show(lo))
        elif hi == lo + 1:
            parts.append(_show(lo) + _show(hi))
        else:
            parts.append(f"{_show(lo)}-{_show(hi)}")
    return "".join(parts)


@dataclass(frozen=True)
class CharRule:
    """One code point inside ``ranges`` (sorted, merged, inclusive)."""

    ranges: Ranges

    def __post_init__(self) -> None:
        object.__setattr__(self, "ranges", normalize(self.ranges))

    def matches(self, ch: str) -> bool:
        """Whether the one-character string ``ch`` is allowed by this rule."""
        return len(ch) == 1 and contains(self.ranges, ord(ch))

    def __str__(self) -> str:
        return f"[{format_ranges(self.ranges)}]"

    def describe(self) -> str:
        """Readable text for error messages."""
        if len(self.ranges) == 1 and self.ranges[0][0] == self.ranges[0][1]:
            return repr(chr(self.ranges[0][0]))
        return f"one of {self}"


@dataclass(frozen=True)
class CharExcludeRule:
    """Any code point except those in ``ranges``; ``CharExcludeRule(())`` is any character."""

    ranges: Ranges

    def __post_init__(self) -> None:
        object.__setattr__(self, "ranges", normalize(self.ranges))

    def matches(self, ch: str) -> bool:
        """Whether the one-character string ``ch`` is allowed by this rule."""
        return len(ch) == 1 and not contains(self.ranges, ord(ch))

    def __str__(self) -> str:
        return f"[^{format_ranges(self.ranges)}]" if self.ranges else "."

    def describe(self) -> str:
        """Readable text for error messages."""
        if not self.ranges:
            return "any character"
        return f"any character except [{format_ranges(self.ranges)}]"


@dataclass(frozen=True)
class EndRule:
    """The input so far is a complete match (the text may end here)."""

    def matches(self, ch: str) -> bool:
        """Never matches a character."""
        return False

    def __str__(self) -> str:
        return "<end>"

    def describe(self) -> str:
        """Readable text for error messages."""
        return "end of input"
