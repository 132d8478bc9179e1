"""``gbnfkit schema``: convert a JSON Schema to GBNF."""

from __future__ import annotations

import argparse
from typing import Any, TextIO

from gbnfkit import SchemaError
from gbnfkit.cli._exit import CliError, ExitCode
from gbnfkit.cli._inputs import load_schema

__all__ = ["register"]

DESCRIPTION = """\
Convert the JSON Schema in SCHEMA.json to a GBNF grammar whose root rule matches
exactly the JSON texts valid under the schema, and print it.

exit status:
  0  the grammar was printed
  3  the schema is not valid JSON, or cannot be converted (keyword and JSON pointer are named)
  4  usage error, or an input that cannot be read
  5  a resource limit (gbnfkit.Limits) was reached
"""


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "schema",
        help="convert a JSON Schema to GBNF",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("schema", metavar="SCHEMA.json", help="the schema file ('-': stdin)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from gbnfkit import json_schema_to_gbnf  # the converter loads only when needed

    schema = load_schema(args.schema)
    try:
        text = json_schema_to_gbnf(schema)
    except SchemaError as exc:
        raise CliError(f"{args.schema}: {exc}", ExitCode.BAD_GRAMMAR) from None
    out.write(text if text.endswith("\n") else text + "\n")
    return ExitCode.OK
