"""Parse results and the tagged AST."""

from __future__ import annotations

import enum
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

from gbnfkit._errors import ParseError, text_excerpt

__all__ = ["AstNode", "Deferred", "ParseResult", "ParseStatus"]

_new = object.__new__


class ParseStatus(enum.Enum):
    """How a parse ended."""

    SUCCESS = "success"
    """The parser matched (``ParseResult.end`` says how far)."""
    NEED_MORE_INPUT = "need_more_input"
    """Partial input only: the text is fine so far but stops before the parser finished."""
    FAIL = "fail"
    """The text is not accepted (see ``position``, ``expected`` and ``excerpt``)."""


class Deferred(Protocol):
    """What builds the nodes and the text of a result (a partial parse of a text; ``end``
    is the result's end) when they are first read."""

    def nodes(self, end: int) -> tuple[AstNode, ...]: ...

    def text(self, end: int) -> str: ...


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

    @classmethod
    def _make(cls, tag: str, start: int, end: int, text: str, children: tuple[AstNode, ...],
              is_partial: bool) -> AstNode:
        """The same as the constructor, without its per-field checks (the parser's hot
        path: three times faster)."""
        node = _new(cls)
        fields = node.__dict__
        fields["tag"] = tag
        fields["start"] = start
        fields["end"] = end
        fields["text"] = text
        fields["children"] = children
        fields["is_partial"] = is_partial
        return node

    def walk(self) -> Iterator[AstNode]:
        """This node and every node below it, depth first, in text order."""
        stack = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(node.children))


class ParseResult:
    """The outcome of :meth:`Parser.parse`.

    ``end``: where the match ends (SUCCESS), or how far the input was consumed in a way
    that is already decided (NEED_MORE_INPUT).  ``nodes``: the top-level tagged nodes.
    On FAIL, ``position``, ``expected`` and ``excerpt`` say where and why.

    Immutable; two results are equal (and hash alike) when all these fields and ``text``
    are.  A result of :meth:`IncrementalParser.feed` may build its ``nodes`` and ``text``
    when they are first read (a stream asks for the status far more often than for the
    tree); they are those of a fresh parse.
    """

    # _more: (nodes, position, expected, excerpt, text), or what builds nodes and text
    __slots__ = ("_more", "end", "status")
    status: ParseStatus
    end: int
    _more: tuple[tuple[AstNode, ...], int | None, tuple[str, ...], str, str] | Deferred

    def __init__(
        self,
        status: ParseStatus,
        end: int,
        nodes: tuple[AstNode, ...] = (),
        position: int | None = None,
        expected: tuple[str, ...] = (),
        excerpt: str = "",
        text: str = "",
    ) -> None:
        _set_status(self, status)
        _set_end(self, end)
        _set_more(self, (nodes, position, expected, excerpt, text))

    @classmethod
    def _deferred(cls, status: ParseStatus, end: int, lazy: Deferred) -> ParseResult:
        """A result (not a failure) whose nodes and text ``lazy`` gives when first read."""
        self = _new(cls)
        _set_status(self, status)
        _set_end(self, end)
        _set_more(self, lazy)
        return self

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("ParseResult is immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError("ParseResult is immutable")

    def _full(self) -> tuple[tuple[AstNode, ...], int | None, tuple[str, ...], str, str]:
        more = self._more
        if type(more) is tuple:
            return more
        assert not isinstance(more, tuple)
        full = (more.nodes(self.end), None, (), "", more.text(self.end))
        _set_more(self, full)
        return full

    @property
    def nodes(self) -> tuple[AstNode, ...]:
        """The top-level tagged nodes, in text order."""
        return self._full()[0]

    @property
    def position(self) -> int | None:
        """FAIL: where the text goes wrong (else ``None``)."""
        more = self._more
        return more[1] if type(more) is tuple else None

    @property
    def expected(self) -> tuple[str, ...]:
        """FAIL: what would have been accepted at :attr:`position`."""
        more = self._more
        return more[2] if type(more) is tuple else ()

    @property
    def excerpt(self) -> str:
        """FAIL: the text around :attr:`position`."""
        more = self._more
        return more[3] if type(more) is tuple else ""

    @property
    def text(self) -> str:
        """The text that was parsed."""
        return self._full()[4]

    def _fields(self) -> tuple[object, ...]:
        nodes, position, expected, excerpt, text = self._full()
        return (self.status, self.end, nodes, position, expected, excerpt, text)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, ParseResult)
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        return (f"ParseResult(status={self.status!r}, end={self.end!r}, "
                f"nodes={self.nodes!r}, position={self.position!r}, "
                f"expected={self.expected!r}, excerpt={self.excerpt!r})")

    def __reduce__(self) -> tuple[object, ...]:
        return (ParseResult, self._fields())

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


# the slots' own setters: ParseResult refuses attribute assignment
_set_status = ParseResult.__dict__["status"].__set__
_set_end = ParseResult.__dict__["end"].__set__
_set_more = ParseResult.__dict__["_more"].__set__
