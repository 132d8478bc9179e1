"""Grammars for fixed JSON values (``const``/``enum``) and for strings outside a set."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from gbnfkit.schema._gbnf import alt, literal, seq
from gbnfkit.schema._regex_parse import complement

if TYPE_CHECKING:
    from gbnfkit.schema._convert import Converter

__all__ = ["render_value", "strings_not_in"]


def render_value(conv: Converter, value: Any) -> str:
    """Exactly the JSON texts equal to ``value``, strings and keys spelled canonically,
    keys in the given order; integral numbers may carry a ``.0...`` fraction."""
    if value is None:
        return '"null"'
    if value is True:
        return '"true"'
    if value is False:
        return '"false"'
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
        return seq(literal(str(int(value))), '("." "0"+)?')
    if isinstance(value, float):
        return seq(literal(json.dumps(value)), '"0"*')
    if isinstance(value, str):
        return literal(json.dumps(value, ensure_ascii=False))
    if conv.opts.compact_constants:
        return literal(json.dumps(value, ensure_ascii=False, separators=(",", ":")))
    if isinstance(value, list):
        items = [render_value(conv, v) for v in value]
        body = f" {conv.comma()} ".join(f"({i})" for i in items)
        return seq('"["', conv.ws("open"), seq(conv.ws("first"), body) if items else "",
                   conv.ws("close"), '"]"')
    if isinstance(value, dict):
        members = [seq(conv.key_literal(k), conv.colon(), f"({render_value(conv, v)})")
                   for k, v in value.items()]
        body = f" {conv.comma()} ".join(members)
        return seq('"{"', conv.ws("open"), seq(conv.ws("first"), body) if members else "",
                   conv.ws("close"), '"}"')
    raise TypeError(f"not a JSON value: {value!r}")


def strings_not_in(conv: Converter, words: list[str]) -> str:
    """The inside of a JSON string whose decoded value is none of ``words``."""
    forbidden = set(words)
    prefixes = {w[:i] for w in forbidden for i in range(len(w) + 1)}
    char = conv.chars.char()
    names: dict[str, str] = {}

    def node(prefix: str) -> str:
        if prefix in names:
            return names[prefix]
        children = sorted({w[len(prefix)] for w in forbidden if len(w) > len(prefix) and
                           w.startswith(prefix)})
        options = []
        if prefix not in forbidden:
            options.append('""')
        for ch in children:
            options.append(seq(conv.chars.of(((ord(ch), ord(ch)),)), node(prefix + ch)))
        others = complement(tuple((ord(c), ord(c)) for c in children))
        options.append(seq(conv.chars.of(others), f"{char}*"))
        name = conv.table.add("other-key" if not prefix else "other-key-" +
                              "".join(c if c.isalnum() else "-" for c in prefix)[:30],
                              alt(options))
        names[prefix] = name
        return name

    assert prefixes
    return node("")
