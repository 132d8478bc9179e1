"""Grammars for fixed JSON values (``const``/``enum``); the strings outside a set are
:meth:`gbnfkit.schema._strings.JsonChars.not_in`."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from gbnfkit._errors import SchemaError
from gbnfkit.schema._gbnf import alt, literal, seq
from gbnfkit.schema._jsontext import json_string
from gbnfkit.schema._options import PropertyOrder

if TYPE_CHECKING:
    from gbnfkit.schema._convert import Converter

__all__ = ["render_value", "string_spellings"]


# a constant's containers nest as groups: every this many levels one is a rule of its own,
# so that a constant nested deeper than the GBNF parser's groups can be written
_LEVELS_PER_RULE = 32


def render_value(conv: Converter, value: Any, compact: bool | None = None,
                 ptr: str = "", depth: int = 0) -> str:
    """Exactly the JSON texts equal to ``value``: a string (or a key) in any JSON spelling
    of its characters (``"caf\\u00e9"`` for ``"café"``, ``\\/``), integral numbers with or
    without a ``.0...`` fraction, an object's members in the given order, or in any order
    with ``property_order=ANY`` (``_members``).  With ``compact_constants`` (and
    llama.cpp's flavour, which spells strings canonically) no whitespace.  ``depth``: the
    containers around ``value`` in the constant."""
    if compact is None:
        compact = conv.opts.compact_constants
    if value is None:
        return '"null"'
    if value is True:
        return '"true"'
    if value is False:
        return '"false"'
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
        return seq(literal(str(int(value))), '("." "0"+)?')
    if isinstance(value, float):
        text = json.dumps(value)
        if "e" not in text:
            return seq(literal(text), '"0"*')
        # a small number (1e-07): its spelling as is, or in fixed point with any trailing
        # zeros (zeros after the exponent would make another number)
        return alt([literal(text), seq(literal(f"{Decimal(text):f}"), '"0"*')])
    if isinstance(value, str):
        return string_spellings(conv, value)
    if conv.llama and compact:
        return literal(json.dumps(value, ensure_ascii=False, separators=(",", ":")))
    if isinstance(value, list):
        # (loops, not comprehensions: one frame a level of the constant)
        items = []
        for v in value:
            items.append(render_value(conv, v, compact, ptr, depth + 1))
        if compact:
            text = seq('"["', ' "," '.join(f"({i})" for i in items), '"]"')
        else:
            body = f" {conv.comma()} ".join(f"({i})" for i in items)
            text = seq('"["', conv.ws("open"), seq(conv.ws("first"), body) if items else "",
                       conv.ws("close"), '"]"')
        return _nested(conv, text, depth)
    if isinstance(value, dict):
        members = []
        for k, v in value.items():
            key = string_spellings(conv, k)  # (first: the rules it adds come first)
            colon = '":"' if compact else conv.colon()
            inner = render_value(conv, v, True if compact else None, ptr, depth + 1)
            members.append(seq(key, colon, f"({inner})"))
        if compact:
            return _nested(conv, seq('"{"', _members(conv, members, '","', ptr), '"}"'), depth)
        body = _members(conv, members, conv.comma(), ptr)
        return _nested(conv, seq('"{"', conv.ws("open"), seq(conv.ws("first"), body)
                                 if members else "", conv.ws("close"), '"}"'), depth)
    raise SchemaError(f"{type(value).__name__} {value!r:.40} is not a JSON value")


def _nested(conv: Converter, text: str, depth: int) -> str:
    """``text``, a container's, as a rule of its own every ``_LEVELS_PER_RULE`` levels."""
    return conv.table.add("const-value", text) if depth % _LEVELS_PER_RULE == \
        _LEVELS_PER_RULE - 1 else text


def _members(conv: Converter, members: list[str], comma: str, ptr: str) -> str:
    """The members of a constant object, separated by ``comma``: in the given order, or
    with ``property_order=ANY`` in any order (JSON objects are unordered, so a constant
    equals its members in every order), one rule per set of members still to come (2**n
    - 1 rules, so at most ``max_required_any_order`` members; past that the given order,
    with a warning, as for required properties)."""
    if conv.opts.property_order is not PropertyOrder.ANY or len(members) < 2:
        return f" {comma} ".join(members)
    if len(members) > conv.opts.max_required_any_order:
        conv.restricted(f"a constant object of {len(members)} members (more than "
                        f"max_required_any_order={conv.opts.max_required_any_order}) must "
                        f"come in its written order", "const", ptr)
        return f" {comma} ".join(members)
    names = [conv.table.add("const-member", m) for m in members]
    rules: dict[int, str] = {1 << i: name for i, name in enumerate(names)}
    for subset in range(1, 1 << len(names)):  # smaller sets (lower numbers) first
        if subset in rules:
            continue
        options = [seq(name, comma, rules[subset & ~(1 << i)])
                   for i, name in enumerate(names) if subset >> i & 1]
        rules[subset] = conv.table.add("const-members", alt(options))
    return rules[(1 << len(names)) - 1]


def string_spellings(conv: Converter, value: str) -> str:
    """Every JSON spelling of the string ``value``: each character raw (where JSON allows)
    or escaped (short escapes, ``\\u`` with hex digits in either case, surrogate pairs).
    llama.cpp's flavour keeps its one canonical spelling."""
    if conv.llama or not value:
        return literal(json_string(value))
    chars = [conv.chars.of(((ord(c), ord(c)),)) for c in value]
    return seq('"\\""', *chars, '"\\""')
