"""Command-line flags mirroring :class:`gbnfkit.SchemaOptions`, and conversion with them.

The flags are derived from the dataclass fields (and their help from its docstring), so
a new converter option gets its flag without touching the CLI: ``--name`` for a field
``name``; ``--no-name`` for a bool that defaults to true; ``N|none`` for ``int | None``;
``--name N`` for each field of :class:`gbnfkit.SchemaLimits` (``SchemaOptions.limits``).
"""

from __future__ import annotations

import argparse
import dataclasses
import enum
import re
import typing
import warnings
from collections.abc import Callable
from typing import Any, TextIO

from gbnfkit import Grammar, SchemaError, SchemaLimits, SchemaOptions, json_schema_to_gbnf
from gbnfkit.cli._exit import CliError, ExitCode
from gbnfkit.cli._inputs import load_schema
from gbnfkit.schema import SchemaWarning
from gbnfkit.schema._options import least_value

__all__ = [
    "add_schema_option_arguments",
    "refuse_schema_flags",
    "schema_grammar",
    "schema_to_gbnf",
]


def _count(least: int, none: bool) -> Callable[[str], int | None]:
    """The flag's value parser: an int of at least ``least`` (or ``none`` when allowed)."""
    kind = "a positive integer" if least == 1 else f"an integer of at least {least}"
    expected = kind + (" or 'none'" if none else "")

    def parse(text: str) -> int | None:
        if none and text.lower() == "none":
            return None
        try:
            value = int(text)
        except ValueError:
            value = least - 1
        if value < least:
            raise argparse.ArgumentTypeError(f"expected {expected}, not {text!r}")
        return value

    return parse


def _plain(doc: str) -> str:
    """Docstring markup as plain text on one line."""
    text = " ".join(doc.split()).replace("``", "'")
    return re.sub(r":\w+:`([^`]+)`", r"\1", text)  # :class:`Whitespace` -> Whitespace


def _field_help(cls: type, hints: dict[str, Any]) -> dict[str, str]:
    """``name -> description`` from the ``Attributes:`` section of ``cls``'s docstring;
    for an enum field, the first paragraph of the enum's own docstring."""
    doc = cls.__doc__ or ""
    found: dict[str, str] = {}
    for match in re.finditer(r"^ {8}(\w+): (.*(?:\n {12}.*)*)", doc, re.MULTILINE):
        found[match.group(1)] = _plain(match.group(2))
    for name, hint in hints.items():
        if isinstance(hint, type) and issubclass(hint, enum.Enum) and hint.__doc__:
            found[name] = _plain(hint.__doc__.strip().split("\n\n")[0])
    return found


def _flag(field: dataclasses.Field[Any], hint: Any) -> tuple[str, dict[str, Any]] | None:
    """The flag and ``add_argument`` keywords for one option field (``None``: no flag)."""
    name = "--" + field.name.replace("_", "-")
    default = field.default
    if hint is bool:
        if default is True:
            return "--no-" + field.name.replace("_", "-"), {"action": "store_false"}
        return name, {"action": "store_true"}
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return name, {"choices": [member.value for member in hint]}
    if hint is int:
        return name, {"type": _count(least_value(field.name), False), "metavar": "N"}
    if set(typing.get_args(hint)) == {int, type(None)}:
        return name, {"type": _count(least_value(field.name), True), "metavar": "N|none"}
    if hint in (str, float):
        return name, {"type": hint}
    return None


def _default_text(value: Any) -> str:
    if isinstance(value, enum.Enum):
        return str(value.value)
    return "none" if value is None else str(value).lower()


def add_schema_option_arguments(parser: argparse.ArgumentParser) -> None:
    """One flag per field of :class:`gbnfkit.SchemaOptions` (and of its ``limits``, a
    :class:`gbnfkit.SchemaLimits`), plus ``--llama-compat``."""
    group = parser.add_argument_group(
        "JSON Schema conversion options (see gbnfkit.SchemaOptions)",
        argument_default=argparse.SUPPRESS,  # a flag not given leaves the option alone
    )
    group.add_argument(
        "--llama-compat",
        action="store_true",
        help="start from the choices llama.cpp's converter makes (SchemaOptions.llama_compat)",
    )
    _add_flags(group, SchemaOptions, "")
    limits = parser.add_argument_group(
        "JSON Schema converter limits (see gbnfkit.SchemaLimits)",
        argument_default=argparse.SUPPRESS,
    )
    _add_flags(limits, SchemaLimits, _LIMIT)


_LIMIT = "limit:"
"""The prefix of the ``dest`` of a flag of a :class:`SchemaLimits` field."""


def _add_flags(group: argparse._ArgumentGroup, cls: type, prefix: str) -> None:
    hints = typing.get_type_hints(cls)
    helps = _field_help(cls, hints)
    for field in dataclasses.fields(cls):
        spec = _flag(field, hints[field.name])
        if spec is None:
            continue
        flag, keywords = spec
        text = helps.get(field.name, f"see {cls.__name__}.{field.name}").replace("%", "%%")
        if keywords.get("action") == "store_false":
            text = f"set {field.name} to false (it is true by default); {field.name}: {text}"
        elif keywords.get("action") is None and "Default" not in text:
            text += f" (default: {_default_text(field.default)})"
        group.add_argument(flag, dest=prefix + field.name, help=text, **keywords)


def _options(args: argparse.Namespace) -> dict[str, Any]:
    """Keyword arguments for the converter: only the flags that were given."""
    options: dict[str, Any] = {
        field.name: getattr(args, field.name)
        for field in dataclasses.fields(SchemaOptions)
        if hasattr(args, field.name)
    }
    if getattr(args, "llama_compat", False):
        options["options"] = SchemaOptions.llama_compat()
    limits = {
        field.name: getattr(args, _LIMIT + field.name)
        for field in dataclasses.fields(SchemaLimits)
        if hasattr(args, _LIMIT + field.name)
    }
    if limits:  # given in ``options``: Grammar.from_json_schema's ``limits`` is Limits
        base = options.get("options") or SchemaOptions()
        options["options"] = dataclasses.replace(base, limits=SchemaLimits(**limits))
    return options


def refuse_schema_flags(args: argparse.Namespace, command: str) -> None:
    """A usage error if a JSON Schema flag was given without ``--schema``: it would be
    ignored without a word (``check G --max-whitespace 3 TEXT`` bounds nothing)."""
    given = ["--llama-compat"] if getattr(args, "llama_compat", False) else []
    for cls, prefix in ((SchemaOptions, ""), (SchemaLimits, _LIMIT)):
        hints = typing.get_type_hints(cls)
        for field in dataclasses.fields(cls):
            spec = _flag(field, hints[field.name])
            if spec is not None and hasattr(args, prefix + field.name):
                given.append(spec[0])
    if given:
        raise CliError(
            f"gbnfkit {command}: error: {', '.join(given)} "
            f"{'applies' if len(given) == 1 else 'apply'} only to a JSON Schema (--schema FILE)"
        )


def _convert(args: argparse.Namespace, err: TextIO, build: Callable[..., Any]) -> Any:
    schema = load_schema(args.schema)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SchemaWarning)
        try:
            result = build(schema, **_options(args))
        except SchemaError as exc:
            flag = f" (flag --{exc.limit.replace('_', '-')} N)" if exc.limit else ""
            raise CliError(f"{args.schema}: {exc}{flag}", ExitCode.BAD_GRAMMAR) from None
    for warning in caught:
        print(f"{args.schema}: warning: {warning.message}", file=err)
    return result


def schema_to_gbnf(args: argparse.Namespace, err: TextIO) -> str:
    """The GBNF for ``args.schema`` with the option flags; warnings go to ``err``."""
    text: str = _convert(args, err, json_schema_to_gbnf)
    return text


def schema_grammar(args: argparse.Namespace, err: TextIO) -> Grammar:
    """The :class:`Grammar` for ``args.schema`` with the option flags."""
    grammar: Grammar = _convert(args, err, Grammar.from_json_schema)
    return grammar
