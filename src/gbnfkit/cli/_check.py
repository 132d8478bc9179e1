"""``gbnfkit check``: does a text match a grammar (or a JSON instance a JSON Schema)?"""

from __future__ import annotations

import argparse
from typing import Any, TextIO

from gbnfkit import Grammar, MatchStatus
from gbnfkit.cli._exit import CliError, ExitCode
from gbnfkit.cli._inputs import (
    STDIN,
    add_grammar_arguments,
    add_text_arguments,
    is_stdin,
    load_grammar,
    reads_stdin,
    stdin_once,
    text_from_args,
)
from gbnfkit.cli._report import format_expected, rejection_report
from gbnfkit.cli._schema_options import (
    add_schema_option_arguments,
    refuse_schema_flags,
    schema_grammar,
)

__all__ = ["register"]

DESCRIPTION = """\
Check TEXT against GRAMMAR. Prints one word on standard output -- accept, prefix or
reject -- and, for prefix and reject, the details on standard error.

exit status:
  0  accept: the whole text matches
  1  reject: the text leaves the grammar (position, line:column and what was expected
     are printed)
  2  prefix: the text is a valid beginning, but incomplete
  3  the grammar (or the JSON Schema) is invalid
  4  usage error, an input that cannot be read, or an output that cannot be written
  5  a resource limit (gbnfkit.Limits) was reached
"""


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "check",
        help="check a text against a grammar or a JSON Schema",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_grammar_arguments(parser, optional=True)
    add_text_arguments(parser, "TEXT", "the text to check (absent: standard input)")
    parser.add_argument(
        "--schema",
        metavar="SCHEMA.json",
        help="check TEXT as a JSON instance of this JSON Schema (then leave out GRAMMAR)",
    )
    parser.add_argument(
        "-q", "--quiet", action="store_true", help="print nothing; only the exit status tells"
    )
    add_schema_option_arguments(parser)
    parser.set_defaults(run=run)


def _grammar_and_text(args: argparse.Namespace, err: TextIO) -> tuple[Grammar, str | None]:
    if args.schema is None:
        if args.grammar is None:
            raise CliError("gbnfkit check: error: give a GRAMMAR (or --schema SCHEMA.json)")
        refuse_schema_flags(args, "check")
        stdin_once(
            "check",
            the_grammar=is_stdin(args.grammar),
            the_text=reads_stdin(args.text, args.text_file, None),
        )
        return load_grammar(args.grammar, args.root), args.text
    if args.text is not None:
        raise CliError("gbnfkit check: error: with --schema give only the TEXT, not a GRAMMAR")
    if args.root is not None:
        raise CliError("gbnfkit check: error: --root cannot be used with --schema")
    stdin_once(
        "check",
        the_schema=args.schema == STDIN,
        the_text=reads_stdin(args.grammar, args.text_file, None),
    )
    return schema_grammar(args, err), args.grammar


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    grammar, inline = _grammar_and_text(args, err)
    text = text_from_args(inline, args.text_file, args.strip_newline, default=None)
    result = grammar.match(text)
    status = MatchStatus(result.status)
    if not args.quiet:
        print(status.value, file=out)
    if status is MatchStatus.ACCEPT:
        return ExitCode.OK
    if status is MatchStatus.PREFIX:
        if not args.quiet:
            allowed = [str(rule) for rule in grammar.start().feed(text).allowed()]
            nxt = (
                f"expected next: {format_expected(allowed)}"
                if allowed
                else "yet no character can follow, so it can never be completed"
            )
            print(
                f"incomplete: all {len(text)} characters are a valid prefix, but the grammar "
                f"needs more; {nxt}",
                file=err,
            )
        return ExitCode.PREFIX
    if not args.quiet:
        assert result.position is not None
        print(rejection_report(text, result.position, result.expected), file=err)
    return ExitCode.REJECTED
