"""A Pydantic v2 model's JSON schema, narrowed to what ``model_validate_json`` accepts.

The schema says what JSON Schema allows; Pydantic checks some of it with other rules:
Python's ``datetime`` refuses year ``0000`` and the leap second ``60`` that the ``date``,
``date-time`` and ``time`` formats allow, and a ``pattern`` runs on Rust's ``regex``
crate (or Python's ``re``, ``regex_engine="python-re"``), whose ``\\s`` is Unicode's
White_Space, not ECMA-262's: it leaves out U+FEFF and takes U+0085 (``re`` also
``\\x1c``-``\\x1f``), and whose ``\\d`` and ``\\w`` are Unicode's, not ASCII; and formats
of Pydantic's own (``uuid4``, ``ipvanyaddress``) are assertions, not annotations; the
lengths of ``bytes`` count UTF-8 bytes. The schema is narrowed in place so that the
grammar accepts no text the model refuses.
"""

from __future__ import annotations

import unicodedata
from typing import Any

from gbnfkit._errors import SchemaError
from gbnfkit.schema._formats import FORMAT_PATTERNS
from gbnfkit.schema._limits import SchemaLimits
from gbnfkit.schema._pydantic_core import REFUSED, YEAR_1_ON, generator
from gbnfkit.schema._refs import pointer_token
from gbnfkit.schema._regex_parse import (
    Ranges,
    RegexUnsupported,
    complement,
    normalize,
    parse_regex,
)

__all__ = ["pydantic_options", "pydantic_schema"]

_INTEGER_DIGITS = 4300
"""The most digits Pydantic's JSON parser reads in a number's integral part (Python's
``int`` conversion limit): a longer one is "out of range"."""

_SECONDS_TO_59 = "[0-9]{2}:[0-9]{2}:[0-5]"
_PYDANTIC_FORMATS = {
    "date": f"^{YEAR_1_ON}-",
    "date-time": f"^{YEAR_1_ON}-[0-9]{{2}}-[0-9]{{2}}[tT]{_SECONDS_TO_59}",
    "time": f"^{_SECONDS_TO_59}",
    "duration": "^P(?:[0-9]{1,6}[YMWD])*(?:T(?:[0-9]{1,6}[HMS])*)?$",
}
"""What Pydantic (Python's date and time) refuses of a JSON Schema format: year 0000 and
the leap second 60, both valid RFC 3339, and durations past its range (``PT9999999H``;
each number at most 6 digits keeps the sum within 999,999,999 days); a pattern beside
the format keeps them out."""

_HEX = "[0-9a-fA-F]"
_V4_INTERFACE = {"pattern": f"^{FORMAT_PATTERNS['ipv4'][1:-1]}(?:/(?:3[0-2]|[12]?[0-9]))?$"}
_V6_INTERFACE = {
    "pattern": f"^(?:{FORMAT_PATTERNS['ipv6'][1:-1]})(?:/(?:12[0-8]|1[01][0-9]|[1-9]?[0-9]))?$"
}
_ATEXT = "[-A-Za-z0-9!#$%&'*+/=?^_`{|}~]"
_EMAIL = (
    f"^{_ATEXT}{{1,20}}(?:\\.{_ATEXT}{{1,20}}){{0,2}}"
    "@(?:[A-Za-z0-9](?:-?[A-Za-z0-9]){0,19}\\.){1,3}[A-Za-z]{2,20}$"
)
_SPECIAL_USE_DOMAIN = "\\.(?:{})$".format("|".join(
    "".join(f"[{c}{c.upper()}]" for c in name)
    for name in ("arpa", "invalid", "local", "localhost", "onion", "test")))
"""``EmailStr`` as ``email-validator`` (which Pydantic calls) takes it: an ASCII dot-atom
before the ``@``, a domain of DNS labels (no ``--``, so no ``xn--`` label that must be
valid punycode) under a top-level domain of letters that is not a special-use name; no
quoted local part or address literal, which it refuses. Each part is bounded (local
part at most 62 characters, at most 3 labels of at most 39, TLD at most 20) so that the
address stays within its 254 without a count over the whole text, which the converter
would need thousands of automaton states for."""
_PADDED_BASE64 = (
    "^(?:[A-Za-f][A-HQ-Xg-nw-z0-3][ABEFIJMNQRUVYZcdghklopstwx014589][A-Za-z0-9{0}])*"
    "(?:[A-Za-f][A-Za-z0-9{0}]==|[A-Za-f][A-HQ-Xg-nw-z0-3][A-Za-z0-9{0}]=)?$"
)
"""Base64 with padding of ASCII bytes (each byte's top bit zero), which ``Base64Str``
decodes as UTF-8 too (its format, ``base64``, is ``Base64Bytes``'s); ``{0}`` the two
characters past ``9`` of the alphabet."""
_PYDANTIC_OWN_FORMATS: dict[str, Any] = {
    **{
        f"uuid{v}": {"format": "uuid", "pattern": f"^{_HEX}{{8}}-{_HEX}{{4}}-{v}{_HEX}{{3}}-"
                                                  f"[89abAB]{_HEX}{{3}}-{_HEX}{{12}}$"}
        for v in range(1, 9)
    },
    "ipvanyaddress": {"anyOf": [{"format": "ipv4"}, {"format": "ipv6"}]},
    "ipv4interface": _V4_INTERFACE,
    "ipv6interface": _V6_INTERFACE,
    "ipvanyinterface": {"anyOf": [_V4_INTERFACE, _V6_INTERFACE]},
    **{
        name: {REFUSED: "an IP network's address must have its host bits zero for its "
                        "prefix length, which the grammar does not check"}
        for name in ("ipv4network", "ipv6network", "ipvanynetwork")
    },
    **{name: {"pattern": _EMAIL, "not": {"pattern": _SPECIAL_USE_DOMAIN}}
       for name in ("email", "name-email")},
    "base64": {"pattern": _PADDED_BASE64.format("+/")},
    "base64url": {"pattern": _PADDED_BASE64.format("_-")},
}
"""Formats of Pydantic's own that it asserts (``UUID4``, ``IPvAnyAddress``), outside the
spec, so that the converter would take them for annotations and accept any string: a
``uuid`` of that version (RFC 4122 variant, as Pydantic checks it), an IPv4 or IPv6
address, an interface (an address, with a prefix length or not), an ``EmailStr`` or
``NameEmail`` (:data:`_EMAIL`, the address alone), padded base64 of ASCII
(``Base64Bytes``, ``Base64Str``; ``base64url`` the URL-safe alphabet); a network is
refused."""

_ONE_BYTE_EACH = "^[\\x00-\\x7f]*$"
"""Beside the lengths of a ``bytes`` field (``format: binary``), which Pydantic counts in
UTF-8 bytes of the string and JSON Schema in characters: ASCII only, where both agree."""

_RUST_SPACE: Ranges = normalize(
    [
        (9, 13),
        (32, 32),
        (0x85, 0x85),
        (0xA0, 0xA0),
        (0x1680, 0x1680),
        (0x2000, 0x200A),
        (0x2028, 0x2029),
        (0x202F, 0x202F),
        (0x205F, 0x205F),
        (0x3000, 0x3000),
    ]
)
"""Unicode's White_Space: Rust's ``\\s``."""

_PYTHON_SPACE: Ranges = normalize([*_RUST_SPACE, (0x1C, 0x1F)])
"""Python's ``\\s`` in a ``str`` pattern (``str.isspace``): White_Space and ``\\x1c``-``\\x1f``."""

_NOT_SCHEMAS = frozenset({"const", "enum", "default", "examples", "example"})


def pydantic_schema(model: Any) -> Any:
    """The JSON schema of the Pydantic v2 ``model`` (SchemaError if it has none), narrowed
    to what ``model.model_validate_json`` accepts (see the module's doc)."""
    schema_fn = getattr(model, "model_json_schema", None)
    if schema_fn is None:
        raise SchemaError(f"{model!r} is not a Pydantic v2 model (no model_json_schema)")
    try:
        schema = schema_fn(schema_generator=generator())
    except Exception as e:  # pydantic raises its own errors for unsupported fields
        raise SchemaError(f"Pydantic could not produce a JSON schema: {e}") from None
    config = getattr(model, "model_config", None)
    engine = config.get("regex_engine") if isinstance(config, dict) else None
    _as_pydantic_reads(schema, _PYTHON_SPACE if engine == "python-re" else _RUST_SPACE)
    _check_refusals(schema)
    return schema


def pydantic_options(changes: dict[str, Any], base: Any = None,
                     limits: Any = None) -> dict[str, Any]:
    """The option ``changes`` (of :func:`gbnfkit.schema.json_schema_to_gbnf`, over the
    SchemaOptions ``base``; ``limits``: the SchemaLimits given beside them) with the
    defaults a Pydantic model needs where none sets them: no lone surrogate escape
    (Pydantic's JSON parser refuses them), and integral parts of at most
    :data:`_INTEGER_DIGITS` digits (it refuses a number of more, as out of range), or the
    ``max_counted_characters`` of the limits in force if fewer."""
    changes.setdefault("lone_surrogates", False)
    if "max_integer_digits" not in changes and getattr(base, "max_integer_digits", None) is None:
        limits = limits or changes.get("limits", getattr(base, "limits", None))
        cap = getattr(limits, "max_counted_characters", SchemaLimits().max_counted_characters)
        if isinstance(cap, int) and not isinstance(cap, bool) and cap >= 1:
            changes["max_integer_digits"] = min(_INTEGER_DIGITS, cap)
    return changes


def _check_refusals(schema: Any) -> None:
    """Raise a SchemaError naming the first field whose type the generator refused
    (:data:`REFUSED`), with its reason."""
    todo: list[tuple[Any, str]] = [(schema, "")]
    while todo:
        node, ptr = todo.pop()
        if isinstance(node, list):
            todo.extend((v, f"{ptr}/{i}") for i, v in enumerate(node))
        elif isinstance(node, dict):
            if REFUSED in node:
                parts = ptr.split("/")
                names = [parts[i + 1] for i in range(len(parts) - 1) if parts[i] == "properties"]
                field = f"field {'.'.join(names)!r}" if names else "the model"
                raise SchemaError(f"{field}: {node[REFUSED]}", pointer=ptr)
            todo.extend((v, f"{ptr}/{pointer_token(k)}")
                        for k, v in node.items() if k not in _NOT_SCHEMAS)


def _as_pydantic_reads(schema: Any, space: Ranges) -> None:
    """Narrow ``schema``'s ``date``, ``date-time`` and ``time`` formats, in place, to what
    ``model_validate_json`` accepts (see :data:`_PYDANTIC_FORMATS`), and write each
    pattern's class escapes as Pydantic's engine reads them (:func:`pydantic_pattern`;
    ``space``: its ``\\s``)."""
    tables = _Tables(space)
    todo = [schema]
    while todo:
        node = todo.pop()
        if isinstance(node, list):
            todo.extend(node)
        elif isinstance(node, dict):
            name = node.get("format")
            extra = _PYDANTIC_FORMATS.get(name) if isinstance(name, str) else None
            own = _PYDANTIC_OWN_FORMATS.get(name) if isinstance(name, str) else None
            todo.extend(value for key, value in node.items() if key not in _NOT_SCHEMAS)
            all_of = node.get("allOf", [])
            if extra is not None and isinstance(all_of, list):  # else the converter says
                node["allOf"] = [*all_of, {"pattern": extra}]
            if own is not None and isinstance(all_of, list):
                del node["format"]
                node["allOf"] = [*all_of, own]
            lengths = "minLength" in node or "maxLength" in node
            if name == "binary" and lengths and isinstance(node.get("allOf", []), list):
                node["allOf"] = [*node.get("allOf", []), {"pattern": _ONE_BYTE_EACH}]
            pattern = node.get("pattern")
            if isinstance(pattern, str) and "\\" in pattern and _parses(pattern):
                node["pattern"] = pydantic_pattern(pattern, tables)


def _parses(pattern: str) -> bool:
    """Whether the converter reads ``pattern``: one it refuses is left as written, so that
    its error quotes the user's pattern."""
    try:
        parse_regex(pattern)
    except RegexUnsupported:
        return False
    return True


def pydantic_pattern(pattern: str, tables: _Tables) -> str:
    """``pattern`` (ECMA-262) with its class escapes written as the code points Pydantic's
    engine matches, where ECMA-262's would accept more: ``\\s`` as its space and ``\\S`` as
    its complement (exact); ``\\D`` and ``\\W`` as the complements of every Unicode digit
    and word character (and unassigned code point) in a positive context, ``\\d`` and
    ``\\w`` as those sets in a negated class (narrower than Pydantic's: a newer Unicode may
    assign them). ``\\d`` and ``\\w`` elsewhere, ``\\D`` and ``\\W`` in a negated class,
    and every other escape are kept: ECMA-262's ASCII reading accepts less there.

    Written as ``[...]`` outside a class, as bare ranges within one. ``pattern`` is one
    the converter reads (which refuses a ``]`` right after ``[``).
    """
    out: list[str] = []
    in_class = negated = False
    i = 0
    n = len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "\\" and i + 1 < n:
            text = tables.text(pattern[i + 1], negated)
            if text is None:
                out.append(pattern[i : i + 2])
            else:
                out.append(text if in_class else f"[{text}]")
            i += 2
            continue
        out.append(ch)
        i += 1
        if ch == "[" and not in_class:
            in_class = True
            negated = pattern.startswith("^", i)
        elif ch == "]" and in_class:
            in_class = negated = False
    return "".join(out)


class _Tables:
    """The class texts :func:`pydantic_pattern` writes, the Unicode ones made when first
    needed (a pass over every code point, ~0.1 s)."""

    def __init__(self, space: Ranges) -> None:
        self._space = space
        self._unicode: tuple[Ranges, Ranges] | None = None

    def text(self, escape: str, negated: bool) -> str | None:
        if escape == "s":
            return _class_text(self._space)
        if escape == "S":
            return _class_text(complement(self._space))
        if escape not in "dwDW" or negated != escape.islower():
            return None
        digits, words = self._digits_words()
        ranges = digits if escape in "dD" else words
        return _class_text(ranges if negated else complement(ranges))

    def _digits_words(self) -> tuple[Ranges, Ranges]:
        """Every code point some engine may call a digit (``Nd``, unassigned) and a word
        character (letters, marks, numbers, ``Pc``, the joiners, the circled letters that
        Unicode calls alphabetic, unassigned)."""
        if self._unicode is None:
            digits: list[tuple[int, int]] = []
            words: list[tuple[int, int]] = [
                (0x200C, 0x200D), (0x24B6, 0x24E9), (0x1F130, 0x1F149), (0x1F150, 0x1F169),
                (0x1F170, 0x1F189),
            ]  # fmt: skip
            for cp in range(0x110000):
                cat = unicodedata.category(chr(cp))
                if cat in ("Nd", "Cn"):
                    _add(digits, cp)
                if cat[0] in "LMN" or cat in ("Pc", "Cn"):
                    _add(words, cp)
            self._unicode = (normalize(digits), normalize(words))
        return self._unicode


def _add(ranges: list[tuple[int, int]], cp: int) -> None:
    """Add ``cp`` to ``ranges``, built in increasing order: the last range grows."""
    if ranges and ranges[-1][1] == cp - 1:
        ranges[-1] = (ranges[-1][0], cp)
    else:
        ranges.append((cp, cp))


def _class_text(ranges: Ranges) -> str:
    """``ranges`` as the inside of an ECMA-262 class: BMP code points as ``\\uXXXX``,
    others as themselves (the converter reads a pattern by code points)."""

    def one(cp: int) -> str:
        return f"\\u{cp:04x}" if cp <= 0xFFFF else chr(cp)

    return "".join(one(lo) if lo == hi else f"{one(lo)}-{one(hi)}" for lo, hi in ranges)
