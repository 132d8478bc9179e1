"""The ``gbnfkit`` command: argument parsing, dispatch, and the exit status contract."""

from __future__ import annotations

import argparse
import io
import os
import sys
from collections.abc import Sequence
from typing import TextIO, cast

import gbnfkit
from gbnfkit import (
    GbnfkitError,
    GrammarError,
    InputRejected,
    LimitError,
    MissingDependencyError,
    SchemaError,
)
from gbnfkit.cli import _builtins, _check, _fmt, _generate, _next, _parse, _schema, _serve
from gbnfkit.cli._argparse import CliArgumentParser, ParserExit
from gbnfkit.cli._exit import CliError, ExitCode

__all__ = ["build_parser", "main"]

EPILOG = """\
exit status:
  0    success (check: complete match)
  1    the text is rejected by the grammar
  2    check: the text is a valid prefix, but incomplete; generate: the text was cut
       (--max-tokens, the context) before the grammar was complete
  3    the grammar or JSON Schema is invalid
  4    usage error, an input that cannot be read (missing file, not UTF-8), or
       standard output that cannot be written (disk full, closed)
  5    a resource limit (gbnfkit.Limits) was reached
  6    generate: the model's runtime or the bundled model is not installed
  70   internal error (a bug in gbnfkit; please report it)
  130  interrupted (Ctrl-C)
  141  standard output was closed early (e.g. piped into head)
"""


def build_parser() -> CliArgumentParser:
    """The argument parser of ``gbnfkit`` and its subcommands."""
    parser = CliArgumentParser(
        prog="gbnfkit",
        description="Grammar-constrained decoding: check texts against GBNF grammars (as in "
        "llama.cpp) and JSON Schemas, show what may come next, format grammars, convert JSON "
        "Schemas to GBNF, generate held to a grammar with a local model, read chat output, "
        "and serve an OpenAI-compatible API.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"gbnfkit {gbnfkit.__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in (_check, _next, _fmt, _schema, _builtins, _parse, _generate, _serve):
        module.register(commands)
    return parser


def _exit_code(exc: GbnfkitError) -> ExitCode:
    """The status for a gbnfkit exception that no subcommand turned into a report."""
    if isinstance(exc, MissingDependencyError):
        return ExitCode.MISSING_DEPENDENCY
    if isinstance(exc, LimitError):
        return ExitCode.LIMIT
    if isinstance(exc, InputRejected):
        return ExitCode.REJECTED
    if isinstance(exc, (GrammarError, SchemaError)):
        return ExitCode.BAD_GRAMMAR
    return ExitCode.USAGE


def _survive_unencodable(stream: TextIO) -> None:
    """Print characters the terminal cannot encode as escapes instead of crashing."""
    if isinstance(stream, io.TextIOWrapper) and stream.errors == "strict":
        stream.reconfigure(errors="backslashreplace")


class OutputError(Exception):
    """Standard output could not be written (a full disk, a closed or faulty descriptor)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class _Output(io.TextIOBase):
    """Standard output for the subcommands: a failed write is an :class:`OutputError`.

    A closed pipe stays a :class:`BrokenPipeError` (status 141); any other failure is not a
    bug in gbnfkit but an output that cannot be written (status 4). A closed descriptor
    (``>&-``, ``sys.stdout`` is ``None``) fails on the first write.
    """

    def __init__(self, stream: TextIO | None) -> None:
        super().__init__()
        self._stream = stream

    def _fail(self, exc: OSError | None) -> OutputError:
        if exc is None:
            return OutputError("it is closed")
        return OutputError(exc.strerror or str(exc))

    @property
    def encoding(self) -> str:  # type: ignore[override]  # what subcommands may print
        return getattr(self._stream, "encoding", None) or "utf-8"

    def write(self, text: str) -> int:
        if self._stream is None:
            raise self._fail(None)
        try:
            self._stream.write(text)
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise self._fail(exc) from None
        return len(text)

    def flush(self) -> None:
        if self._stream is None:
            return
        try:
            self._stream.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise self._fail(exc) from None


class _Diagnostics(io.TextIOBase):
    """Standard error, best effort: a message that cannot be written (a full disk, ``2>&-``)
    is dropped, so the exit status stays the one the command decided, and nothing meant
    for standard error ever lands on standard output (``print(file=None)`` would)."""

    def __init__(self, stream: TextIO | None) -> None:
        super().__init__()
        self._stream = stream

    def write(self, text: str) -> int:
        if self._stream is not None:
            try:
                self._stream.write(text)
            except (OSError, ValueError):
                pass
        return len(text)

    def flush(self) -> None:
        if self._stream is not None:
            try:
                self._stream.flush()
            except (OSError, ValueError):
                pass


def _silence_stdout() -> None:
    """After a broken pipe, point stdout at /dev/null so the final flush cannot fail."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        pass


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``gbnfkit`` with ``argv`` (default: ``sys.argv[1:]``); return the exit status."""
    if sys.stdout is not None:
        _survive_unencodable(sys.stdout)
    if sys.stderr is not None:
        _survive_unencodable(sys.stderr)
    out = cast(TextIO, _Output(sys.stdout))
    err = cast(TextIO, _Diagnostics(sys.stderr))
    try:
        args = build_parser().parse_args(list(argv) if argv is not None else None)
        status: int = args.run(args, out, err)
        out.flush()
        return status
    except ParserExit as exc:
        return exc.status
    except CliError as exc:
        print(exc.message, file=err)
        return exc.code
    except GbnfkitError as exc:
        print(f"gbnfkit: {exc}", file=err)
        return _exit_code(exc)
    except KeyboardInterrupt:
        return ExitCode.INTERRUPTED
    except BrokenPipeError:
        _silence_stdout()
        return ExitCode.BROKEN_PIPE
    except OutputError as exc:
        print(f"gbnfkit: cannot write standard output: {exc.reason}", file=err)
        _silence_stdout()
        return ExitCode.USAGE
    except Exception as exc:  # noqa: BLE001 - the last line of defence for users
        print(
            f"gbnfkit: internal error: {type(exc).__name__}: {exc}\n"
            "This is a bug in gbnfkit; please report it with the command that caused it.",
            file=err,
        )
        return ExitCode.INTERNAL
