"""``gbnfkit next``: which characters may follow a prefix?"""

from __future__ import annotations

import argparse
from typing import Any, TextIO

from gbnfkit import InputRejected
from gbnfkit.cli._exit import ExitCode
from gbnfkit.cli._inputs import (
    add_grammar_arguments,
    add_text_arguments,
    is_stdin,
    load_grammar,
    reads_stdin,
    stdin_once,
    text_from_args,
)
from gbnfkit.cli._report import rejection_report

__all__ = ["register"]

DESCRIPTION = """\
Print what GRAMMAR allows right after PREFIX, one rule per line: a character class such
as [0-9], an excluded set such as [^"\\\\], or <end> when the text may end here.

exit status:
  0  the rules were printed
  1  PREFIX itself is rejected (the report goes to standard error)
  3  the grammar is invalid
  4  usage error, an input that cannot be read, or an output that cannot be written
  5  a resource limit (gbnfkit.Limits) was reached
"""


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "next",
        help="print the characters a grammar allows after a prefix",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_grammar_arguments(parser)
    add_text_arguments(parser, "PREFIX", "the text so far (absent: the empty text)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    stdin_once(
        "next",
        the_grammar=is_stdin(args.grammar),
        the_prefix=reads_stdin(args.text, args.text_file, ""),
    )
    grammar = load_grammar(args.grammar, args.root)
    prefix = text_from_args(args.text, args.text_file, args.strip_newline, default="")
    try:
        state = grammar.start().feed(prefix)
    except InputRejected as exc:
        print(rejection_report(prefix, exc.position, exc.expected), file=err)
        return ExitCode.REJECTED
    rules = state.allowed()
    for rule in rules:
        print(str(rule), file=out)
    if not rules:
        print("gbnfkit: nothing can follow this prefix, and it is not complete", file=err)
    return ExitCode.OK
