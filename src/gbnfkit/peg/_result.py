"""Parse results and the tagged AST."""

from __future__ import annotations

import enum
from collections.abc import Iterator
from dataclasses import dataclass, field

from gbnfkit._errors import ParseError, text_excerpt

__all__ = ["AstNode", "ParseResult", "ParseStatus"]


class ParseStatus(enum.Enum):
    """How a parse ended."""

    SUCCESS = "success"
    """The parser matched (``ParseResult.end`` says how far)."""
    NEED_MORE_INPUT = "need_more_input"
    """Partial input only: the text is fine so far but stops before the parser finished."""
    FAIL = "fail"
    """The text is not accepted (see ``position``, ``expected`` and ``excerpt``)."""


@dataclass(frozen=True)
class AstNode:
    """A tagged span of the text (from :func:`gbnfkit.peg.tag`).

    ``is_partial``: the tagged parser had not finished (partial input), so the span may
    still grow.  ``children``: the tagged nodes inside it, in text order.
    """

    tag: str
    start: int
    end: int
    text: str
    children: tuple[AstNode, ...] = ()
    is_partial: bool = False

    def walk(self) -> Iterator[AstNode]:
        """This node and every node below it, depth first, in text order."""
        stack = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(node.children))


@dataclass(frozen=True)
class ParseResult:
    """The outcome of :meth:`Parser.parse`.

    ``end``: where the match ends (SUCCESS), or how far the input was consumed in a way
    that is already decided (NEED_MORE_INPUT).  ``nodes``: the top-level tagged nodes.
    On FAIL, ``position``, ``expected`` and ``excerpt`` say where and why.
    """

    status: ParseStatus
    end: int
    nodes: tuple[AstNode, ...] = ()
    position: int | None = None
    expected: tuple[str, ...] = ()
    excerpt: str = ""
    text: str = field(default="", repr=False)

    @property
    def ast(self) -> tuple[AstNode, ...]:
        """The same as :attr:`nodes`."""
        return self.nodes

    @property
    def is_success(self) -> bool:
        """Whether the status is SUCCESS."""
        return self.status is ParseStatus.SUCCESS

    @property
    def is_complete_match(self) -> bool:
        """SUCCESS, with the whole text consumed."""
        return self.status is ParseStatus.SUCCESS and self.end == len(self.text)

    def walk(self) -> Iterator[AstNode]:
        """Every tagged node, depth first, in text order."""
        for node in self.nodes:
            yield from node.walk()

    def find(self, tag: str) -> list[AstNode]:
        """The nodes tagged ``tag``, in text order."""
        return [node for node in self.walk() if node.tag == tag]

    def raise_for_failure(self) -> None:
        """Raise :class:`gbnfkit.ParseError` if the status is FAIL."""
        if self.status is ParseStatus.FAIL:
            pos = self.position if self.position is not None else self.end
            raise ParseError(pos, self.expected, self.excerpt)


def failure(text: str, position: int, expected: tuple[str, ...]) -> ParseResult:
    """A FAIL result at ``position``."""
    return ParseResult(ParseStatus.FAIL, position, (), position, expected,
                       text_excerpt(text, position), text)
