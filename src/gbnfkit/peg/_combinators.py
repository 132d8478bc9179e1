"""The combinators: functions that build :class:`Parser` nodes, checking their arguments."""

from __future__ import annotations

import json as _json
import re
from collections.abc import Iterable
from typing import Any

from gbnfkit._errors import GbnfkitError, PegError
from gbnfkit.grammar._ir import Alt, CharClass, Seq
from gbnfkit.peg._nodes import Kind, Parser, as_parser

__all__ = [
    "any",
    "atomic",
    "chars",
    "choice",
    "end",
    "eps",
    "literal",
    "negate",
    "one_or_more",
    "optional",
    "peek",
    "ref",
    "repeat",
    "rest",
    "rule",
    "schema",
    "sequence",
    "space",
    "start",
    "tag",
    "trigger_rule",
    "until",
    "until_one_of",
    "zero_or_more",
]

_RULE_NAME = re.compile(r"[A-Za-z0-9-]+")


def eps() -> Parser:
    """Match the empty string (always succeeds)."""
    return Parser(Kind.EPS)


def start() -> Parser:
    """Match nothing, and only at the start of the text (``^``)."""
    return Parser(Kind.START)


def end() -> Parser:
    """Match nothing, and only at the end of the text (``$``)."""
    return Parser(Kind.END)


def literal(text: str) -> Parser:
    """Match ``text`` exactly (the empty text matches the empty string)."""
    if not isinstance(text, str):
        raise PegError(f"literal takes a str, not {type(text).__name__}: {text!r}")
    return as_parser(text, "literal")


def any() -> Parser:  # noqa: A001 - the name of the combinator
    """Match any one character (code point)."""
    return Parser(Kind.ANY)


def sequence(*parsers: Parser | str) -> Parser:
    """Match ``parsers`` one after the other (nested sequences are flattened)."""
    items: list[Parser] = []
    for p in parsers:
        q = as_parser(p, "sequence")
        if q.kind is Kind.SEQUENCE:
            items.extend(q.children)
        elif q.kind is not Kind.EPS:
            items.append(q)
    if not items:
        return eps()
    if len(items) == 1:
        return items[0]
    return Parser(Kind.SEQUENCE, tuple(items))


def choice(*parsers: Parser | str) -> Parser:
    """Ordered choice: the first of ``parsers`` that matches (nested choices are flattened).

    With no parser it never matches."""
    items: list[Parser] = []
    for p in parsers:
        q = as_parser(p, "choice")
        if q.kind is Kind.CHOICE:
            items.extend(q.children)
        else:
            items.append(q)
    if len(items) == 1:
        return items[0]
    return Parser(Kind.CHOICE, tuple(items))


def _count(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise PegError(f"{what} must be an int >= 0, not {value!r}")
    return value


def repeat(parser: Parser | str, min: int, max: int | None) -> Parser:  # noqa: A002
    """Match ``parser`` greedily at least ``min`` and at most ``max`` times
    (``max=None``: no upper bound).  A repetition never backtracks to match fewer."""
    p = as_parser(parser, "repeat")
    lo = _count(min, "repeat's min")
    hi = None if max is None else _count(max, "repeat's max")
    if hi is not None and hi < lo:
        raise PegError(f"repeat's max ({hi}) is smaller than its min ({lo})")
    if hi == 0:
        return eps()
    if lo == 1 and hi == 1:
        return p
    return Parser(Kind.REPEAT, (p,), (lo, hi))


def one_or_more(parser: Parser | str) -> Parser:
    """Match ``parser`` one or more times, greedily (``+``)."""
    return repeat(parser, 1, None)


def zero_or_more(parser: Parser | str) -> Parser:
    """Match ``parser`` zero or more times, greedily (``*``)."""
    return repeat(parser, 0, None)


def optional(parser: Parser | str) -> Parser:
    """Match ``parser`` or nothing (``?``)."""
    return repeat(parser, 0, 1)


def peek(parser: Parser | str) -> Parser:
    """Succeed where ``parser`` matches, consuming nothing (``&p``)."""
    return Parser(Kind.PEEK, (as_parser(parser, "peek"),))


def negate(parser: Parser | str) -> Parser:
    """Succeed where ``parser`` does not match, consuming nothing (``!p``).

    A parser with ``negate`` has no grammar (``to_grammar`` refuses it)."""
    return Parser(Kind.NEGATE, (as_parser(parser, "negate"),))


def _char_class(cls: str) -> CharClass:
    from gbnfkit.grammar._parser import raw_rules

    if not isinstance(cls, str):
        raise PegError(f"chars takes a character class as a str, not {type(cls).__name__}")
    if not (cls.startswith("[") and cls.endswith("]")) or len(cls) < 3:
        raise PegError(f"chars takes one GBNF character class like '[a-z]', not {cls!r}")
    try:
        body = raw_rules(f"c ::= {cls}")["c"]
    except GbnfkitError as error:
        raise PegError(f"bad character class {cls!r}: {error}") from None
    while isinstance(body, (Alt, Seq)):
        parts = body.options if isinstance(body, Alt) else body.items
        if len(parts) != 1:
            raise PegError(f"chars takes one GBNF character class like '[a-z]', not {cls!r}")
        body = parts[0]
    if not isinstance(body, CharClass):
        raise PegError(f"chars takes one GBNF character class like '[a-z]', not {cls!r}")
    return CharClass.of(body.ranges, body.negated)


def chars(cls: str, min: int = 1, max: int | None = None) -> Parser:  # noqa: A002
    """Match ``min`` to ``max`` characters (greedily) of the GBNF character class ``cls``,
    e.g. ``"[a-z0-9_]"`` or ``'[^"\\\\]'`` (``max=None``: no upper bound)."""
    klass = _char_class(cls)
    lo = _count(min, "chars' min")
    hi = None if max is None else _count(max, "chars' max")
    if hi is not None and hi < lo:
        raise PegError(f"chars' max ({hi}) is smaller than its min ({lo})")
    if hi == 0:
        return eps()
    return Parser(Kind.CHARS, (), (cls, klass, lo, hi))


def space() -> Parser:
    """Match zero or more whitespace characters (space, tab, newline, carriage return)."""
    return Parser(Kind.SPACE)


def until(delimiter: str) -> Parser:
    """Match characters up to the first place where ``delimiter`` starts (the delimiter
    is not consumed), or to the end of the text.  With partial input, text that may be
    the start of the delimiter is not consumed: the result needs more input."""
    return until_one_of([delimiter])


def until_one_of(delimiters: Iterable[str]) -> Parser:
    """Like :func:`until`, stopping where any of ``delimiters`` starts."""
    if isinstance(delimiters, str):
        raise PegError("until_one_of takes a list of delimiters, not one str")
    delims = tuple(delimiters)
    if not delims:
        raise PegError("until_one_of needs at least one delimiter")
    for d in delims:
        if not isinstance(d, str) or not d:
            raise PegError(f"a delimiter must be a non-empty str, not {d!r}")
    return Parser(Kind.UNTIL, (), tuple(dict.fromkeys(delims)))


def rest() -> Parser:
    """Match everything up to the end of the text (``.*``)."""
    return Parser(Kind.REST)


def _rule_name(name: object, what: str) -> str:
    if not isinstance(name, str) or not _RULE_NAME.fullmatch(name):
        raise PegError(
            f"{what} name must be ASCII letters, digits and '-' (a GBNF rule name), "
            f"not {name!r}"
        )
    return name


def ref(name: str) -> Parser:
    """A reference to the rule called ``name`` (defined with :func:`rule` anywhere in the
    parser that uses it), for recursive parsers."""
    return Parser(Kind.REF, (), _rule_name(name, "a rule"))


def rule(name: str, parser: Parser | str) -> Parser:
    """A named rule: matches as ``parser``; ``ref(name)`` refers to it, and it becomes a
    rule of the generated grammar."""
    return Parser(Kind.RULE, (as_parser(parser, "rule"),), (_rule_name(name, "a rule"), False))


def trigger_rule(name: str, parser: Parser | str) -> Parser:
    """A named rule that is an entry point of the lazy grammar (``to_grammar(lazy=True)``):
    the grammar wakes when its leading literal appears."""
    p = as_parser(parser, "trigger_rule")
    return Parser(Kind.RULE, (p,), (_rule_name(name, "a trigger rule"), True))


def schema(parser: Parser | str, name: str, json_schema: Any, raw: bool = False) -> Parser:
    """Parse as ``parser``; in the grammar, the JSON Schema ``json_schema`` (through
    gbnfkit's converter) as the rule ``name``.  ``raw=True``: the value is an unquoted
    string (see docs/peg.md); a schema that is not a string schema keeps its JSON grammar.

    The parser does not validate the schema: the grammar enforces it during generation."""
    from gbnfkit.schema._api import load_schema

    p = as_parser(parser, "schema")
    _rule_name(name, "a schema rule")
    try:
        canonical = _json.dumps(load_schema(json_schema))  # key order is property order
    except (TypeError, ValueError) as error:
        raise PegError(f"schema {name!r}: {error}") from None
    return Parser(Kind.SCHEMA, (p,), (name, canonical, bool(raw)))


def atomic(parser: Parser | str) -> Parser:
    """Match as ``parser``, but while it is incomplete (partial input) the tagged nodes
    inside it are left out of the result: they never appear half-built."""
    return Parser(Kind.ATOMIC, (as_parser(parser, "atomic"),))


def tag(name: str, parser: Parser | str) -> Parser:
    """Match as ``parser`` and record an AST node called ``name`` for the matched span."""
    if not isinstance(name, str) or not name:
        raise PegError(f"a tag name must be a non-empty str, not {name!r}")
    return Parser(Kind.TAG, (as_parser(parser, "tag"),), name)


def define(parser: Parser, *rules: Parser) -> Parser:
    """``parser``, carrying the definitions of ``rules`` (rule nodes) it may refer to."""
    for r in rules:
        if r.kind is not Kind.RULE:
            raise PegError("define takes rule(...) parsers")
    return Parser(Kind.DEFINE, (parser, *rules))
