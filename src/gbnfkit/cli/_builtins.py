"""``gbnfkit builtins``: list the builtin grammars."""

from __future__ import annotations

import argparse
from typing import Any, TextIO

from gbnfkit import Grammar
from gbnfkit.cli._exit import ExitCode

__all__ = ["register"]


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "builtins",
        help="list the builtin grammar names",
        description="Print the names of the builtin grammars, one a line. Use a name "
        "wherever a GRAMMAR is asked for, e.g. 'gbnfkit fmt json'.",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    for name in Grammar.builtin_names():
        print(name, file=out)
    return ExitCode.OK
