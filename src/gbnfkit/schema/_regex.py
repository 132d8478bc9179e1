"""Regular expressions to GBNF, for whole texts or for the inside of JSON strings."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from gbnfkit._errors import GrammarError
from gbnfkit.schema._gbnf import RuleTable, alt, char_class, group, literal, seq
from gbnfkit.schema._numbers import repeat
from gbnfkit.schema._regex_parse import (
    ANY_CHAR,
    Branch,
    Cat,
    Chars,
    Node,
    Or,
    RegexUnsupported,
    Rep,
    parse_regex,
)

__all__ = ["regex_to_gbnf", "regex_expr", "regex_gbnf", "regex_without_gbnf", "RegexUnsupported"]

ClassEmitter = Callable[[tuple[tuple[int, int], ...]], str]


def _nullable(node: Node) -> bool:
    if isinstance(node, Chars):
        return False
    if isinstance(node, Cat):
        return all(_nullable(i) for i in node.items)
    if isinstance(node, Or):
        return any(_nullable(o) for o in node.options)
    return node.min == 0 or _nullable(node.item)


def _non_empty(node: Node) -> Node | None:
    """The same language without the empty string (None: nothing is left)."""
    if not _nullable(node):
        return node
    if isinstance(node, Cat):
        # L(X Y) minus empty = X' Y | Y' when X is nullable (and so on)
        options: list[Node] = []
        for k, item in enumerate(node.items):
            head = _non_empty(item)
            if head is not None:
                options.append(Cat((head, *node.items[k + 1:])))
        return Or(tuple(options)) if options else None
    if isinstance(node, Or):
        kept = [n for n in (_non_empty(o) for o in node.options) if n is not None]
        return Or(tuple(kept)) if kept else None
    assert isinstance(node, Rep)
    part = _non_empty(node.item)
    if part is None:
        return None
    return Rep(part, 1, node.max) if node.max != 0 else None


def _single(node: Chars) -> bool:
    return len(node.ranges) == 1 and node.ranges[0][0] == node.ranges[0][1]


def _emit(node: Node, cls: ClassEmitter, literal_chars: bool) -> str:
    if isinstance(node, Chars):
        if not node.ranges:
            return "[^\\x00-\\U0010FFFF]"  # matches nothing
        if literal_chars and _single(node):
            return literal(chr(node.ranges[0][0]))
        return cls(node.ranges)
    if isinstance(node, Cat):
        if not node.items:
            return '""'
        parts: list[str] = []
        run = ""
        for item in node.items:
            if literal_chars and isinstance(item, Chars) and _single(item):
                run += chr(item.ranges[0][0])
                continue
            if run:
                parts.append(literal(run))
                run = ""
            parts.append(_emit(item, cls, literal_chars))
        if run:
            parts.append(literal(run))
        return seq(*parts)
    if isinstance(node, Or):
        return alt(_emit(o, cls, literal_chars) for o in node.options)
    if _nullable(node.item):
        # a repeated item that can be empty: repeat its non-empty part instead (same
        # language; GBNF engines refuse nullable repetition as left recursion)
        part = _non_empty(node.item)
        if part is None:
            return '""'
        node = Rep(part, 0, node.max)
    inner = group(_emit(node.item, cls, literal_chars))
    if inner == '""':
        return '""'
    lo, hi = node.min, node.max
    if (lo, hi) == (0, None):
        return f"{inner}*"
    if (lo, hi) == (1, None):
        return f"{inner}+"
    if (lo, hi) == (0, 1):
        return f"{inner}?"
    if (lo, hi) == (1, 1):
        return inner
    # counts above 10,000 in blocks of 1,000: a pattern's {m,n} is held exactly whatever
    # the grammar's max_repetition (a schema's pattern cannot be told to raise it)
    return repeat(inner, lo, hi)


def regex_expr(branches: list[Branch], cls: ClassEmitter, literal_chars: bool = False) -> str:
    """GBNF for the strings that ``re.search`` with the pattern finds a match in.

    Unanchored sides get ``cls(ANY_CHAR)*`` so the result is exact.
    """
    options = []
    for b in branches:
        body = _emit(b.node, cls, literal_chars)
        any_run = "" if b.start_anchored and b.end_anchored else f"{group(cls(ANY_CHAR))}*"
        options.append(
            seq("" if b.start_anchored else any_run, body, "" if b.end_anchored else any_run)
        )
    return alt(options)


def regex_to_gbnf(pattern: str, *, search: bool = False) -> str:
    """GBNF text (start rule ``root``) for ``pattern``.

    By default the grammar accepts exactly the texts the pattern matches as a whole
    (``re.fullmatch``; ``^``/``$`` at the ends are allowed and change nothing).  With
    ``search=True`` it accepts the texts the pattern occurs in (``re.search``).
    Characters are read as ECMA-262 reads them: ``.`` matches no line terminator,
    ``\\d``/``\\w`` are ASCII, ``$`` matches only at the very end (docs/schema.md).
    Raises :class:`gbnfkit.GrammarError` (``column`` = 1-based position in the
    pattern) for lookaround, backreferences and other unsupported constructs.
    """
    return regex_gbnf(pattern, search, None)


def regex_gbnf(pattern: str, search: bool, max_count: int | None) -> str:
    """:func:`regex_to_gbnf`, refusing (at its place in the pattern) a count above
    ``max_count``, which the GBNF parser would refuse at its place in the GBNF text."""
    if not isinstance(pattern, str):
        raise GrammarError("the pattern must be a str")
    with _grammar_errors(pattern):
        branches = parse_regex(pattern, max_count)
        if not search:
            branches = [Branch(b.node, True, True) for b in branches]
        table = RuleTable()
        table.fresh("root")
        table.define("root", regex_expr(branches, lambda r: char_class(r), literal_chars=True))
    return table.text()


@contextmanager
def _grammar_errors(pattern: str) -> Iterator[None]:
    """Turn what reading ``pattern`` raises into a :class:`GrammarError` at its place."""
    try:
        yield
    except RegexUnsupported as e:
        raise GrammarError(
            f"regex: {e.message}", line=1, column=e.position + 1, source=pattern
        ) from None
    except RecursionError:
        raise GrammarError("regex: the pattern nests too deeply", line=1, column=1,
                           source=pattern) from None


def regex_without_gbnf(pattern: str, forbidden: tuple[str, ...]) -> str:
    """GBNF text (start rule ``root``) for the texts ``pattern`` matches as a whole in
    which none of ``forbidden`` occurs: a value written raw before its delimiter (the
    product of the two minimal automata, within the default ``SchemaLimits``). Errors
    as :func:`regex_to_gbnf`; an automaton past its limit is a ``GrammarError`` too."""
    from gbnfkit.schema._dfa import TooBig, dfa_of, emit_dfa, product
    from gbnfkit.schema._limits import SchemaLimits

    if not isinstance(pattern, str):
        raise GrammarError("the pattern must be a str")
    limits = SchemaLimits()
    with _grammar_errors(pattern):
        try:
            branches = [Branch(b.node, True, True) for b in parse_regex(pattern, None)]
            words = [Branch(b.node, False, False) for word in forbidden
                     for b in parse_regex("".join(f"\\u{{{ord(c):x}}}" for c in word), None)]
            both = product([dfa_of(branches, limits), dfa_of(words, limits)],
                           _first_only, limits)
        except TooBig as e:
            raise GrammarError(f"regex: the pattern without "
                               f"{', '.join(map(repr, forbidden))} needs more automaton "
                               f"states than SchemaLimits.{e.limit}",
                               line=1, column=1, source=pattern) from None
        table = RuleTable()
        table.fresh("root")
        rule = emit_dfa(both, table, char_class, "raw")
        table.define("root", rule if rule is not None else "[^\\x00-\\U0010FFFF]")
    return table.text()


def _first_only(verdicts: tuple[bool, ...]) -> bool:
    """Accepted by the first automaton and not the second."""
    return verdicts[0] and not verdicts[1]
