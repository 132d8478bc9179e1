"""``gbnfkit schema``: convert a JSON Schema to GBNF."""

from __future__ import annotations

import argparse
from typing import Any, TextIO

from gbnfkit.cli._exit import ExitCode
from gbnfkit.cli._schema_options import add_schema_option_arguments, schema_to_gbnf

__all__ = ["register"]

DESCRIPTION = """\
Convert the JSON Schema in SCHEMA.json to a GBNF grammar whose root rule matches
exactly the JSON texts valid under the schema, and print it. Keywords that cannot be
enforced are an error (exit 3) unless --no-strict is given; then they are ignored and
named in a warning on standard error.

exit status:
  0  the grammar was printed
  3  the schema is not valid JSON, or cannot be converted (keyword and JSON pointer are named)
  4  usage error, an input that cannot be read, or an output that cannot be written
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
    add_schema_option_arguments(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    text = schema_to_gbnf(args, err)
    out.write(text if text.endswith("\n") else text + "\n")
    return ExitCode.OK
