"""Reading what the user gives: text, grammars and JSON Schemas, with readable failures."""

from __future__ import annotations

import argparse
import json
import os
import sys

from gbnfkit import Grammar, GrammarError
from gbnfkit.cli._argparse import decode_argument, utf8_text
from gbnfkit.cli._exit import CliError, ExitCode

__all__ = [
    "add_grammar_arguments",
    "add_text_arguments",
    "grammar_error_message",
    "is_stdin",
    "load_grammar",
    "load_json",
    "load_schema",
    "read_source",
    "reads_stdin",
    "stdin_once",
    "text_from_args",
]

STDIN = "-"


def read_source(path: str, what: str) -> str:
    """The UTF-8 text of file ``path`` (``-``: standard input); ``what`` names it in errors."""
    if path == STDIN:
        stream = sys.stdin
        if stream is None:
            raise CliError(f"gbnfkit: cannot read {what}: there is no standard input")
        try:
            buffer = getattr(stream, "buffer", None)
            data: bytes | str = buffer.read() if buffer is not None else stream.read()
        except OSError as exc:
            raise CliError(f"gbnfkit: cannot read {what} from standard input: {exc}") from None
        shown = "standard input"
    else:
        try:
            with open(path, "rb") as handle:
                data = handle.read()
        except (OSError, ValueError) as exc:  # ValueError: a NUL or a lone surrogate
            reason = getattr(exc, "strerror", None) or str(exc)
            raise CliError(f"gbnfkit: cannot read {what} {path!r}: {reason}") from None
        shown = repr(path)
    if isinstance(data, str):
        return data
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = data[exc.start : exc.start + 1].hex()
        raise CliError(
            f"gbnfkit: cannot read {what} {shown}: not valid UTF-8 "
            f"(byte 0x{bad} at byte offset {exc.start})"
        ) from None


def _checked_argument(text: str, file_flag: str | None) -> str:
    """``text`` from the command line, refused if its bytes were not UTF-8.

    Python decodes ``argv`` with the locale's encoding, undecodable bytes becoming lone
    surrogates (``surrogateescape``); the bytes are taken back and read as UTF-8, as every
    input is, whatever the locale (``LC_ALL=C PYTHONUTF8=0``, a Latin-1 locale).
    ``file_flag`` is the command's option that reads the text from a file, if it has one.
    """
    decoded, where = decode_argument(text)
    if decoded is not None:
        return decoded
    how = f"with {file_flag} or on standard input" if file_flag else "on standard input"
    raise CliError(f"gbnfkit: the text argument is not valid UTF-8 ({where}); pass such text {how}")


def add_text_arguments(parser: argparse.ArgumentParser, name: str, helptext: str) -> None:
    """The ``TEXT`` positional with ``--text-file`` and ``--strip-newline``."""
    parser.add_argument(
        "text",
        metavar=name,
        nargs="?",
        help=f"{helptext}; '-' reads standard input (start with '--' if it begins with '-')",
    )
    parser.add_argument(
        "--text-file",
        metavar="PATH",
        help=f"read {name} from this file (UTF-8) instead",
    )
    parser.add_argument(
        "--strip-newline",
        action="store_true",
        help=f"drop one trailing newline (\\n or \\r\\n) from {name} read from a file or stdin",
    )


def text_from_args(
    text: str | None,
    text_file: str | None,
    strip_newline: bool,
    default: str | None,
    *,
    file_flag: str | None = "--text-file",
) -> str:
    """The text to work on: inline, ``-`` (stdin), ``--text-file``, or ``default``.

    ``default`` ``None`` means an absent text is read from standard input; ``file_flag``
    is the option that reads the text from a file (``None``: the command has none).
    """
    if text is not None and text_file is not None:
        raise CliError("gbnfkit: give the text either inline or with --text-file, not both")
    if text_file is not None:
        source = read_source(text_file, "text file")
    elif text == STDIN or (text is None and default is None):
        source = read_source(STDIN, "text")
    elif text is not None:
        return _checked_argument(text, file_flag)
    else:
        assert default is not None
        return default
    if strip_newline:
        if source.endswith("\r\n"):
            return source[:-2]
        if source.endswith("\n"):
            return source[:-1]
    return source


def reads_stdin(text: str | None, text_file: str | None, default: str | None) -> bool:
    """Whether :func:`text_from_args` with these arguments reads standard input."""
    if text_file is not None:
        return text_file == STDIN
    return text == STDIN or (text is None and default is None)


def is_stdin(path: str | None) -> bool:
    """Whether file ``path`` is standard input itself (``/dev/stdin``, ``/dev/fd/0``)."""
    if path is None or sys.stdin is None:
        return False
    try:
        mine, given = os.fstat(sys.stdin.fileno()), os.stat(path)
    except (OSError, ValueError, AttributeError):  # io.UnsupportedOperation is an OSError
        return False
    return (mine.st_dev, mine.st_ino) == (given.st_dev, given.st_ino)


def stdin_once(command: str, **inputs: bool) -> None:
    """Refuse a command line where two inputs (named by the keywords, true when that input
    reads standard input) would both read it: the second would read nothing."""
    named = [name.replace("_", " ") for name, reads in inputs.items() if reads]
    if len(named) > 1:
        raise CliError(
            f"gbnfkit {command}: error: {' and '.join(named)} cannot both come from standard "
            "input; give one of them as a file, or inline"
        )


def add_grammar_arguments(parser: argparse.ArgumentParser, *, optional: bool = False) -> None:
    """The ``GRAMMAR`` positional (``optional``: may be left out) and ``--root``."""
    parser.add_argument(
        "grammar",
        metavar="GRAMMAR",
        nargs="?" if optional else None,
        help="a GBNF file, or the name of a builtin grammar (see 'gbnfkit builtins'); "
        "an existing file wins over a builtin of the same name",
    )
    parser.add_argument("--root", metavar="NAME", type=utf8_text, help="start rule (default: root)")


def grammar_error_message(exc: GrammarError, source_name: str) -> str:
    """``FILE:LINE:COLUMN: message`` with the caret excerpt, as compilers print it."""
    if exc.line is None:
        head = f"{source_name}: {exc.message}"
    else:
        head = f"{source_name}:{exc.line}:{exc.column}: {exc.message}"
    excerpt = exc.excerpt
    if excerpt:
        head += "\n" + "\n".join("    " + line for line in excerpt.split("\n"))
    return head


def load_grammar(spec: str, root: str | None) -> Grammar:
    """The grammar in file ``spec``, or the builtin grammar named ``spec``.

    Any file but a directory is read: a pipe too (``<(...)``, ``/dev/stdin``), as for the
    other inputs.
    """
    if os.path.exists(spec) and not os.path.isdir(spec):
        source_name = spec
        text = read_source(spec, "grammar")
        try:
            return Grammar.from_gbnf(text, root=root if root is not None else "root")
        except GrammarError as exc:
            raise CliError(grammar_error_message(exc, source_name), ExitCode.BAD_GRAMMAR) from None
    names = Grammar.builtin_names()
    if spec not in names:
        if os.path.exists(spec):
            raise CliError(f"gbnfkit: cannot read grammar {spec!r}: it is a directory")
        raise CliError(
            f"gbnfkit: no grammar file or builtin grammar called {spec!r} "
            f"(builtins: {', '.join(names)})"
        )
    builtin = Grammar.builtin(spec)
    if root is None:
        return builtin
    try:
        return Grammar.from_gbnf(builtin.to_gbnf(), root=root)
    except GrammarError as exc:
        raise CliError(
            grammar_error_message(exc, f"builtin grammar {spec!r}"), ExitCode.BAD_GRAMMAR
        ) from None


def load_json(path: str, what: str, command: str = "gbnfkit") -> object:
    """The JSON document in file ``path`` (``-``: standard input), a ``what`` of
    ``command``: text that is not JSON, nests too deeply or holds an integer longer
    than Python converts (4,300 digits) is a bad input (exit 3)."""
    text = read_source(path, what)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        shown = "standard input" if path == STDIN else path
        raise CliError(
            f"{shown}:{exc.lineno}:{exc.colno}: {what} is not valid JSON: {exc.msg}",
            ExitCode.BAD_GRAMMAR,
        ) from None
    except RecursionError:
        raise CliError(
            f"{command}: {what} {path!r} is nested too deeply to read", ExitCode.BAD_GRAMMAR
        ) from None
    except ValueError as exc:
        raise CliError(
            f"{command}: {what} {path!r} cannot be read: {exc}", ExitCode.BAD_GRAMMAR
        ) from None


def load_schema(path: str) -> object:
    """The JSON schema in file ``path`` (``-``: standard input)."""
    return load_json(path, "schema")
