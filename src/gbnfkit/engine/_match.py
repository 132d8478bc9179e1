"""The verdict of :meth:`gbnfkit.Grammar.match`."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

__all__ = ["MatchResult", "MatchStatus"]


class MatchStatus(str, Enum):
    """``accept``: complete match; ``prefix``: still alive, not complete; ``reject``."""

    ACCEPT = "accept"
    PREFIX = "prefix"
    REJECT = "reject"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class MatchResult:
    """Outcome of matching a whole text.

    Attributes:
        status: :class:`MatchStatus` (compares equal to ``"accept"``, ``"prefix"``, ``"reject"``).
        position: code point index of the first rejected character, else ``None``.
        expected: readable descriptions of what was allowed at ``position`` (empty
            unless rejected).
    """

    status: MatchStatus
    position: int | None = None
    expected: tuple[str, ...] = ()

    @property
    def accepted(self) -> bool:
        """Whether the whole text is a complete match."""
        return self.status is MatchStatus.ACCEPT
