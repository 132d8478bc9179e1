"""An :class:`argparse.ArgumentParser` that reports instead of exiting.

The standard parser calls ``sys.exit(2)`` on a usage error; status 2 means "valid
prefix" for ``gbnfkit check``, so usage errors must become :data:`ExitCode.USAGE`.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import NoReturn

from gbnfkit.cli._exit import CliError, ExitCode

__all__ = ["CliArgumentParser", "ParserExit", "positive_int"]


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
