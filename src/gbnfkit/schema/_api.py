"""Public entry points of the schema package."""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any

from gbnfkit._errors import SchemaError
from gbnfkit.schema._convert import Converter
from gbnfkit.schema._options import SchemaOptions, make_options
from gbnfkit.schema._refs import pointer_token

if TYPE_CHECKING:
    from gbnfkit.schema._direct import RecordedConversion

__all__ = ["MAX_SCHEMA_DEPTH", "json_schema_to_gbnf", "load_schema", "pydantic_to_gbnf"]

MAX_SCHEMA_DEPTH = 512
"""The most objects and arrays a schema nests one inside another (the converter follows
at most 200 subschemas one inside another; MaskBench's deepest schema nests 23)."""


def load_schema(schema: Any) -> Any:
    """A schema given as a dict, a bool or JSON text, as a Python value."""
    if isinstance(schema, (str, bytes, bytearray)):
        try:
            loaded = json.loads(schema)
        except ValueError as e:
            raise SchemaError(f"the schema is not valid JSON: {e}") from None
        except RecursionError:  # (past Python's recursion limit, about 1,000 levels)
            raise _too_deep(MAX_SCHEMA_DEPTH) from None
        # json.loads reads NaN and Infinity, and a number beyond a float's range (1e400)
        # as an infinite float: refused here as in a dict
        _check_json(loaded)
        return loaded
    if isinstance(schema, (dict, bool)):
        _check_json(schema)
        return schema
    raise SchemaError(f"a schema must be a dict, a bool or JSON text, not {type(schema).__name__}")


def _check_json(schema: Any, max_values: int = 1_000_000,
                max_depth: int = MAX_SCHEMA_DEPTH) -> None:
    """SchemaError unless ``schema`` is a JSON value: dicts with string keys, lists,
    strings, finite numbers, booleans and None, without cycles (what ``json.loads`` can
    return; a tuple, bytes or NaN is refused), of at most ``max_values`` values nesting
    at most ``max_depth`` containers.  Linear in the size of ``schema``, however
    deep: a node's JSON pointer is only spelled out for the error.  The values visited
    are checked in document order; a string, boolean or None inside a container is only
    counted (nothing to check), not visited."""
    # (value, path, leaving); a path is (parent path, key) or None for the root, a key
    # an object's key or an array's index
    todo: list[tuple[Any, Any, bool]] = [(schema, None, False)]
    on_path: set[int] = set()
    seen = 1  # values counted: the root and the items of the containers visited
    while todo:
        if seen > max_values:  # (a container's ``leaving`` entry comes after its items)
            raise SchemaError(f"the schema holds more than {max_values} values")
        value, path, leaving = todo.pop()
        if leaving:
            on_path.discard(id(value))
            continue
        if isinstance(value, dict):
            for key in value:
                if not isinstance(key, str):
                    raise SchemaError(f"an object key must be a string, not {key!r:.40}",
                                      pointer=_pointer(path))
            items: list[tuple[Any, Any]] = list(value.items())
        elif isinstance(value, list):
            items = list(enumerate(value))
        else:
            _check_scalar(value, path)
            continue
        if id(value) in on_path:
            raise SchemaError("the schema contains itself (a cycle)", pointer=_pointer(path))
        if len(on_path) >= max_depth:  # (the containers around this one)
            raise _too_deep(max_depth, _pointer(path))
        seen += len(items)
        on_path.add(id(value))
        todo.append((value, path, True))
        for key, sub in reversed(items):
            if sub is not None and not isinstance(sub, (str, bool)):
                todo.append((sub, (path, key), False))


def _too_deep(max_depth: int, pointer: str = "") -> SchemaError:
    """The error of a schema nesting more than ``max_depth`` containers (``pointer``:
    where, when known)."""
    return SchemaError(f"the schema nests too deeply: more than {max_depth} objects and "
                       "arrays one inside another", pointer=pointer)


def _check_scalar(value: Any, path: Any) -> None:
    """SchemaError unless ``value`` (not a dict nor a list) is a JSON value."""
    if value is None or isinstance(value, (str, bool)):
        return
    if isinstance(value, int):
        # what json.loads refuses (more than 4,300 digits) cannot be written as text
        if value.bit_length() > 10_000:
            raise SchemaError(f"an integer of {value.bit_length()} bits is too long",
                              pointer=_pointer(path))
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise SchemaError(f"{value} is not a JSON number (JSON has no NaN or Infinity, "
                              "and a number as large as 1e400 reads as infinite)",
                              pointer=_pointer(path))
        return
    raise SchemaError(f"{type(value).__name__} {value!r:.40} is not a JSON value",
                      pointer=_pointer(path))


def _pointer(path: Any) -> str:
    """The JSON pointer of a path of :func:`_check_json` ("/" for the root)."""
    keys: list[str] = []
    while path is not None:
        path, key = path
        keys.append(pointer_token(str(key)))
    return "/" + "/".join(reversed(keys)) if keys else "/"


def json_schema_to_gbnf(schema: Any, *, options: SchemaOptions | None = None,
                        **changes: Any) -> str:
    """GBNF text (start rule ``root``) accepting the JSON texts valid for ``schema``.

    ``schema`` is a dict, a bool, or JSON text.  Options are a :class:`SchemaOptions`
    and/or its fields as keyword arguments (enum fields also accept their string
    values, e.g. ``whitespace="compact"``).  Raises :class:`gbnfkit.SchemaError` naming
    the keyword and its JSON pointer for unsupported or contradictory schemas.
    """
    opts = make_options(options, changes)
    try:
        return Converter(load_schema(schema), opts).convert()
    except RecursionError:
        raise SchemaError("schema nests too deeply to convert") from None


def convert_schema(schema: Any, *, options: SchemaOptions | None = None,
                   **changes: Any) -> RecordedConversion:
    """:func:`json_schema_to_gbnf`, keeping what builds the grammar IR without parsing
    the text (``.text`` is the same text; ``.ir(limits)`` the checked IR)."""
    from gbnfkit.schema._direct import RecordedConversion

    opts = make_options(options, changes)
    try:
        return RecordedConversion(load_schema(schema), opts)
    except RecursionError:
        raise SchemaError("schema nests too deeply to convert") from None


def pydantic_to_gbnf(model: Any, *, options: SchemaOptions | None = None,
                     **changes: Any) -> str:
    """GBNF for the JSON that ``model.model_validate_json`` accepts (Pydantic v2 model);
    ``lone_surrogates=False`` and ``max_integer_digits`` as
    :meth:`gbnfkit.Grammar.from_pydantic` sets them, unless given."""
    from gbnfkit.schema._pydantic import pydantic_options, pydantic_schema

    return json_schema_to_gbnf(pydantic_schema(model), options=options,
                               **pydantic_options(changes, options))
