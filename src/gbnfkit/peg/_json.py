"""JSON parsers (RFC 8259), built from the combinators so they have a grammar too.

Whitespace between tokens is :func:`space`; a value has no surrounding whitespace.
The recursive values are the rules ``json-value``, ``json-object`` and ``json-array``.
"""

from __future__ import annotations

from gbnfkit.peg._combinators import (
    chars,
    choice,
    define,
    literal,
    optional,
    ref,
    rule,
    sequence,
    space,
    zero_or_more,
)
from gbnfkit.peg._nodes import Kind, Parser, as_parser

__all__ = [
    "json",
    "json_array",
    "json_bool",
    "json_member",
    "json_null",
    "json_number",
    "json_object",
    "json_string",
    "json_string_content",
]


def json_string_content() -> Parser:
    """The inside of a JSON string: characters and escapes up to the closing quote
    (not consumed).  With partial input it never stops inside an escape."""
    return Parser(Kind.JSON_STRING_CONTENT)


def json_string() -> Parser:
    """A JSON string, quotes included."""
    return sequence('"', json_string_content(), '"')


def json_number() -> Parser:
    """A JSON number: ``-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [-+]? [0-9]+)?``."""
    integral = choice("0", sequence(chars("[1-9]", 1, 1), chars("[0-9]", 0)))
    fraction = optional(sequence(".", chars("[0-9]", 1)))
    exponent = optional(sequence(chars("[eE]", 1, 1), optional(chars("[-+]", 1, 1)),
                                 chars("[0-9]", 1)))
    return sequence(optional("-"), integral, fraction, exponent)


def json_bool() -> Parser:
    """``true`` or ``false``."""
    return choice("true", "false")


def json_null() -> Parser:
    """``null``."""
    return literal("null")


def _object_body() -> Parser:
    member = sequence(json_string(), space(), ":", space(), ref("json-value"))
    members = sequence(member, zero_or_more(sequence(space(), ",", space(), member)))
    return sequence("{", space(), optional(members), space(), "}")


def _array_body() -> Parser:
    items = sequence(ref("json-value"), zero_or_more(sequence(space(), ",", space(),
                                                              ref("json-value"))))
    return sequence("[", space(), optional(items), space(), "]")


def _rules() -> tuple[Parser, Parser, Parser]:
    obj = rule("json-object", _object_body())
    arr = rule("json-array", _array_body())
    value = rule(
        "json-value",
        choice(ref("json-object"), ref("json-array"), json_string(), json_number(),
               json_bool(), json_null()),
    )
    return value, obj, arr


def json() -> Parser:
    """Any JSON value."""
    value, obj, arr = _rules()
    return Parser(Kind.JSON, (define(value, obj, arr),), "value")


def json_object() -> Parser:
    """A JSON object (any members)."""
    value, obj, arr = _rules()
    return Parser(Kind.JSON, (define(obj, value, arr),), "{")


def json_array() -> Parser:
    """A JSON array (any items)."""
    value, obj, arr = _rules()
    return Parser(Kind.JSON, (define(arr, value, obj),), "[")


def json_member(key: str, parser: Parser | str) -> Parser:
    """One object member: the JSON string ``key``, a colon, then ``parser`` (whitespace
    allowed around the colon)."""
    from json import dumps

    from gbnfkit._errors import PegError

    if not isinstance(key, str):
        raise PegError(f"json_member's key must be a str, not {type(key).__name__}")
    return sequence(dumps(key, ensure_ascii=False), space(), ":", space(),
                    as_parser(parser, "json_member"))
