"""A Pydantic v2 model's JSON schema, narrowed to what ``model_validate_json`` accepts.

The schema says what JSON Schema allows; Pydantic checks some of it with other rules:
Python's ``datetime`` refuses year ``0000`` and the leap second ``60`` that the ``date``,
``date-time`` and ``time`` formats allow, and a ``pattern`` runs on Rust's ``regex``
crate (or Python's ``re``, ``regex_engine="python-re"``), whose ``\\s`` is Unicode's
White_Space, not ECMA-262's: it leaves out U+FEFF and takes U+0085 (``re`` also
``\\x1c``-``\\x1f``). The schema is narrowed in place so that the grammar accepts no text
the model refuses.
"""

from __future__ import annotations

from typing import Any

from gbnfkit._errors import SchemaError
from gbnfkit.schema._regex_parse import (
    Ranges,
    RegexUnsupported,
    complement,
    normalize,
    parse_regex,
)

__all__ = ["pydantic_schema"]

_YEAR_1_ON = "(?:000[1-9]|00[1-9][0-9]|0[1-9][0-9]{2}|[1-9][0-9]{3})"
_SECONDS_TO_59 = "[0-9]{2}:[0-9]{2}:[0-5]"
_PYDANTIC_FORMATS = {
    "date": f"^{_YEAR_1_ON}-",
    "date-time": f"^{_YEAR_1_ON}-[0-9]{{2}}-[0-9]{{2}}[tT]{_SECONDS_TO_59}",
    "time": f"^{_SECONDS_TO_59}",
}
"""What Pydantic (Python's date and time) refuses of a JSON Schema format: year 0000 and
the leap second 60, both valid RFC 3339; a pattern beside the format keeps them out."""

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
        schema = schema_fn()
    except Exception as e:  # pydantic raises its own errors for unsupported fields
        raise SchemaError(f"Pydantic could not produce a JSON schema: {e}") from None
    config = getattr(model, "model_config", None)
    engine = config.get("regex_engine") if isinstance(config, dict) else None
    _as_pydantic_reads(schema, _PYTHON_SPACE if engine == "python-re" else _RUST_SPACE)
    return schema


def _as_pydantic_reads(schema: Any, space: Ranges) -> None:
    """Narrow ``schema``'s ``date``, ``date-time`` and ``time`` formats, in place, to what
    ``model_validate_json`` accepts (see :data:`_PYDANTIC_FORMATS`), and write each
    pattern's ``\\s`` and ``\\S`` as the classes of ``space`` that Pydantic reads."""
    todo = [schema]
    while todo:
        node = todo.pop()
        if isinstance(node, list):
            todo.extend(node)
        elif isinstance(node, dict):
            name = node.get("format")
            extra = _PYDANTIC_FORMATS.get(name) if isinstance(name, str) else None
            todo.extend(value for key, value in node.items() if key not in _NOT_SCHEMAS)
            all_of = node.get("allOf", [])
            if extra is not None and isinstance(all_of, list):  # else the converter says
                node["allOf"] = [*all_of, {"pattern": extra}]
            pattern = node.get("pattern")
            if (
                isinstance(pattern, str)
                and ("\\s" in pattern or "\\S" in pattern)
                and _parses(pattern)
            ):
                node["pattern"] = with_space_class(pattern, space)


def _parses(pattern: str) -> bool:
    """Whether the converter reads ``pattern``: one it refuses is left as written, so that
    its error quotes the user's pattern."""
    try:
        parse_regex(pattern)
    except RegexUnsupported:
        return False
    return True


def with_space_class(pattern: str, space: Ranges) -> str:
    """``pattern`` (ECMA-262) with each ``\\s`` and ``\\S`` escape written as the code points
    of ``space`` and of its complement: ``[...]`` outside a class, the bare ranges within
    one (a class is a union, so negated classes come out right too).

    Everything else is copied: other escapes (``\\\\s`` is a backslash and an ``s``).
    ``pattern`` is one the converter reads (which refuses a ``]`` right after ``[``).
    """
    inside = {"s": _class_text(space), "S": _class_text(complement(space))}
    out: list[str] = []
    in_class = False
    i = 0
    n = len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "\\" and i + 1 < n:
            esc = pattern[i + 1]
            text = inside.get(esc)
            if text is None:
                out.append(pattern[i : i + 2])
            else:
                out.append(text if in_class else f"[{text}]")
            i += 2
            continue
        out.append(ch)
        i += 1
        if ch == "[":
            in_class = True
        elif ch == "]":
            in_class = False
    return "".join(out)


def _class_text(ranges: Ranges) -> str:
    """``ranges`` as the inside of an ECMA-262 class: BMP code points as ``\\uXXXX``,
    others as themselves (the converter reads a pattern by code points)."""

    def one(cp: int) -> str:
        return f"\\u{cp:04x}" if cp <= 0xFFFF else chr(cp)

    return "".join(one(lo) if lo == hi else f"{one(lo)}-{one(hi)}" for lo, hi in ranges)
