"""The parser objects: immutable trees of combinator nodes with Python operators.

A :class:`Parser` is one node: a :class:`Kind`, its child parsers and a kind-specific
argument.  Nodes compare and hash by structure (the hash is computed once, at
construction), so two parsers built the same way are equal and share memo entries.
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING, Any, Literal, overload

from gbnfkit._errors import PegError

if TYPE_CHECKING:
    from gbnfkit._grammar import Grammar
    from gbnfkit.peg._incremental import IncrementalParser
    from gbnfkit.peg._lazy import LazyGrammar
    from gbnfkit.peg._result import ParseResult

__all__ = ["Kind", "Parser", "as_parser", "too_deep"]


class Kind(enum.Enum):
    """What a :class:`Parser` node does (its ``arg`` is given in brackets)."""

    EPS = "eps"
    START = "start"
    END = "end"
    LITERAL = "literal"  # [text]
    ANY = "any"
    SEQUENCE = "sequence"
    CHOICE = "choice"
    REPEAT = "repeat"  # [(min, max | None)]
    PEEK = "peek"
    NEGATE = "negate"
    CHARS = "chars"  # [(class text, CharClass, min, max | None)]
    SPACE = "space"
    UNTIL = "until"  # [tuple of delimiters]
    REST = "rest"
    JSON_STRING_CONTENT = "json_string_content"
    JSON = "json"  # ["value", "{" or "["]; child 0 is the combinator definition
    REF = "ref"  # [rule name]
    RULE = "rule"  # [(rule name, is a trigger rule)]
    SCHEMA = "schema"  # [(name, schema as canonical JSON text, raw)]
    ATOMIC = "atomic"
    TAG = "tag"  # [tag name]
    DEFINE = "define"  # child 0 is the parser; the others are rules it may refer to


class Parser:
    """An immutable parser; build one with the functions of :mod:`gbnfkit.peg`.

    ``a + b`` is a sequence, ``a | b`` an ordered choice; a ``str`` operand is a literal.
    """

    __slots__ = ("_hash", "_program", "arg", "children", "kind")
    kind: Kind
    children: tuple[Parser, ...]
    arg: Any
    _hash: int
    _program: Program | None

    def __init__(self, kind: Kind, children: tuple[Parser, ...] = (), arg: Any = None) -> None:
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "children", children)
        object.__setattr__(self, "arg", arg)
        object.__setattr__(self, "_hash", hash((kind, arg, children)))
        object.__setattr__(self, "_program", None)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Parser is immutable")

    def __hash__(self) -> int:
        return self._hash

    def __copy__(self) -> Parser:
        return self  # immutable: a copy is the parser itself

    def __deepcopy__(self, memo: object) -> Parser:
        return self

    def __reduce__(self) -> tuple[object, ...]:
        # pickled as its nodes in post-order (shared subtrees once), without recursion:
        # a parser may nest deeper than pickle recurses; rebuilt by ``_from_nodes``
        nodes: list[tuple[Kind, Any, tuple[int, ...]]] = []
        number: dict[int, int] = {}
        todo: list[tuple[Parser, bool]] = [(self, False)]
        while todo:
            node, ready = todo.pop()
            if id(node) in number:
                continue
            if ready:
                number[id(node)] = len(nodes)
                arg = node.arg
                if node.kind is Kind.CHARS:  # the class as plain values
                    text, klass, lo, hi = arg
                    arg = (text, (klass.ranges, klass.negated), lo, hi)
                nodes.append((node.kind, arg, tuple(number[id(c)] for c in node.children)))
            else:
                todo.append((node, True))
                todo.extend((c, False) for c in reversed(node.children) if id(c) not in number)
        return (Parser._from_nodes, (tuple(nodes),))

    @classmethod
    def _from_nodes(cls, nodes: tuple[tuple[Kind, Any, tuple[int, ...]], ...]) -> Parser:
        """The parser pickled by :meth:`__reduce__` (its last node)."""
        from gbnfkit.grammar._ir import CharClass

        built: list[Parser] = []
        for kind, arg, children in nodes:
            if kind is Kind.CHARS:
                text, (ranges, negated), lo, hi = arg
                arg = (text, CharClass(ranges, negated), lo, hi)
            built.append(cls(kind, tuple(built[i] for i in children), arg))
        return built[-1]

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, Parser) or self._hash != other._hash:
            return False
        # without recursion: two parsers built apart may nest deeper than Python recurses
        todo = [(self, other)]
        seen: set[tuple[int, int]] = set()  # pairs of shared subtrees compared once
        while todo:
            a, b = todo.pop()
            if a is b:
                continue
            pair = (id(a), id(b))
            if pair in seen:
                continue
            seen.add(pair)
            if (a._hash != b._hash or a.kind is not b.kind or a.arg != b.arg
                    or len(a.children) != len(b.children)):
                return False
            todo.extend(zip(a.children, b.children, strict=True))
        return True

    # -- operators ---------------------------------------------------------------------
    def __add__(self, other: Parser | str) -> Parser:
        from gbnfkit.peg._combinators import sequence

        return sequence(self, other)

    def __radd__(self, other: Parser | str) -> Parser:
        from gbnfkit.peg._combinators import sequence

        return sequence(other, self)

    def __or__(self, other: Parser | str) -> Parser:
        from gbnfkit.peg._combinators import choice

        return choice(self, other)

    def __ror__(self, other: Parser | str) -> Parser:
        from gbnfkit.peg._combinators import choice

        return choice(other, self)

    def __repr__(self) -> str:
        from gbnfkit.peg._describe import describe

        return describe(self)

    # -- running -----------------------------------------------------------------------
    @property
    def program(self) -> Program:
        """The compiled form (rules resolved, node ids assigned); built once, on first use.

        Raises :class:`gbnfkit.PegError` for an undefined or twice-defined rule.
        """
        prog = self._program
        if prog is None:
            from gbnfkit.peg._program import compile_parser

            try:
                prog = compile_parser(self)
            except RecursionError:
                raise too_deep() from None
            object.__setattr__(self, "_program", prog)
        return prog

    def parse(self, text: str, partial: bool = False) -> ParseResult:
        """Parse ``text`` from its start (the parser need not reach the end of the text:
        see :attr:`ParseResult.end`, or end the parser with ``end()``).

        With ``partial=True`` the text may be the beginning of a longer output: running
        out of input is :attr:`ParseStatus.NEED_MORE_INPUT`, never a failure.
        """
        from gbnfkit.peg._incremental import IncrementalParser

        return IncrementalParser(self).parse(text, partial)

    def parse_or_raise(self, text: str, partial: bool = False) -> ParseResult:
        """Like :meth:`parse`, but a failure raises :class:`gbnfkit.ParseError`."""
        result = self.parse(text, partial)
        result.raise_for_failure()
        return result

    def incremental(self) -> IncrementalParser:
        """A parser of a growing text that reuses its work between calls (streaming)."""
        from gbnfkit.peg._incremental import IncrementalParser

        return IncrementalParser(self)

    @overload
    def to_grammar(self, lazy: Literal[False] = False) -> Grammar: ...

    @overload
    def to_grammar(self, lazy: Literal[True]) -> LazyGrammar: ...

    @overload
    def to_grammar(self, lazy: bool) -> Grammar | LazyGrammar: ...

    def to_grammar(self, lazy: bool = False) -> Grammar | LazyGrammar:
        """The GBNF grammar of the texts this parser accepts (see docs/peg.md for where
        the grammar is wider than the parser).  ``lazy=True``: only what the trigger
        rules reach, with the trigger rules as the root's alternatives, and the triggers
        that wake it, as a :class:`LazyGrammar`.  Raises :class:`gbnfkit.PegError` for a
        parser with ``negate``."""
        from gbnfkit.peg._to_grammar import build_grammar, build_lazy_grammar

        try:
            if lazy:
                return build_lazy_grammar(self)
            return build_grammar(self)
        except RecursionError:
            raise too_deep() from None


def too_deep() -> PegError:
    """The error of a parser whose combinators nest deeper than Python recurses."""
    return PegError(
        "the parser nests too deeply (Python's recursion limit): build deep or repeated "
        "structure with repeat() or rule()/ref() instead of nesting combinators"
    )


def as_parser(value: Parser | str, where: str) -> Parser:
    """``value`` as a parser: a ``str`` becomes a literal; anything else is an error."""
    if isinstance(value, Parser):
        return value
    if isinstance(value, str):
        if not value:
            return Parser(Kind.EPS)
        return Parser(Kind.LITERAL, (), value)
    raise PegError(f"{where} takes parsers or str, not {type(value).__name__}: {value!r}")


# at the end: _program imports this module; the annotations above name Program at run time
from gbnfkit.peg._program import Program  # noqa: E402
