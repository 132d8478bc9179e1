"""``gbnfkit fmt``: print a grammar in canonical GBNF."""

from __future__ import annotations

import argparse
from typing import Any, TextIO

from gbnfkit.cli._exit import ExitCode
from gbnfkit.cli._inputs import add_grammar_arguments, load_grammar

__all__ = ["register"]

DESCRIPTION = """\
Parse GRAMMAR, check it, and print it in canonical GBNF (the text Grammar.to_gbnf()
returns), which parses back to the same grammar (with the same --root: GBNF text does
not name its start rule).

exit status:
  0  the grammar was printed
  3  the grammar is invalid (file:line:column, message and a caret excerpt)
  4  usage error, an input that cannot be read, or an output that cannot be written
  5  a resource limit (gbnfkit.Limits) was reached
"""


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "fmt",
        help="print a grammar in canonical form",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_grammar_arguments(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    text = load_grammar(args.grammar, args.root).to_gbnf()
    out.write(text if text.endswith("\n") else text + "\n")
    return ExitCode.OK
