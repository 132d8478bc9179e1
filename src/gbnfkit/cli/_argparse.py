"""An :class:`argparse.ArgumentParser` that reports instead of exiting.

The standard parser calls ``sys.exit(2)`` on a usage error; status 2 means "valid
prefix" for ``gbnfkit check``, so usage errors must become :data:`ExitCode.USAGE`.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from typing import NoReturn

from gbnfkit.cli._exit import CliError, ExitCode

__all__ = ["CliArgumentParser", "ParserExit", "decode_argument", "positive_int", "utf8_text"]


class ParserExit(Exception):
    """``--help`` or ``--version`` was handled; end with ``status``."""

    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


class CliArgumentParser(argparse.ArgumentParser):
    """Raises :class:`CliError` for usage errors and :class:`ParserExit` for ``--help``.

    A parser without subcommands lets options and positionals mix in any order
    (``check G --strip-newline TEXT``), which plain argparse refuses for optional
    positionals.
    """

    _intermixing = False

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        if self._subparsers is not None or self._intermixing:
            return super().parse_known_args(args, namespace)
        self._intermixing = True  # parse_known_intermixed_args calls back into this method
        try:
            return self.parse_known_intermixed_args(args, namespace)
        finally:
            self._intermixing = False

    def error(self, message: str) -> NoReturn:
        usage = self.format_usage().rstrip()
        raise CliError(f"{self.prog}: error: {message}\n{usage}", ExitCode.USAGE)

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        if message:
            raise CliError(f"{self.prog}: {message.strip()}", ExitCode.USAGE)
        raise ParserExit(status)


def positive_int(text: str) -> int:
    """An argparse ``type``: a positive integer, or a usage error that quotes the text."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, not {text!r}")
    return value


def decode_argument(text: str) -> tuple[str | None, str]:
    """``(text, "")``: a command-line argument's bytes read as UTF-8, whatever the locale
    decoded them as (``LC_ALL=C PYTHONUTF8=0``: ASCII with surrogate escapes; a Latin-1
    locale: 'Ã©' for 'é'); or ``(None, where)``: where its bytes are not UTF-8 (a surrogate
    escape would be a character no text ever has)."""
    try:
        data = os.fsencode(text)
        return data.decode("utf-8"), ""
    except UnicodeEncodeError as exc:  # a surrogate no byte became (main() called with it)
        return None, f"at character {exc.start}"
    except UnicodeDecodeError as exc:
        return None, f"byte 0x{data[exc.start : exc.start + 1].hex()} at byte offset {exc.start}"


def utf8_text(text: str) -> str:
    """An argparse ``type`` for text the grammar sees (a rule name, a regular expression, a
    --lazy word): :func:`decode_argument`, or a usage error."""
    decoded, where = decode_argument(text)
    if decoded is None:
        raise argparse.ArgumentTypeError(f"not valid UTF-8 ({where}): {text!r}")
    return decoded
