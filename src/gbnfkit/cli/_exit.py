"""Exit statuses of the ``gbnfkit`` command, and the error that carries one."""

from __future__ import annotations

from enum import IntEnum

__all__ = ["CliError", "ExitCode"]


class ExitCode(IntEnum):
    """What the process exit status of ``gbnfkit`` means (documented in the README)."""

    OK = 0
    """Success; for ``check``: the text is a complete match."""
    REJECTED = 1
    """The text (or prefix) is not allowed by the grammar."""
    PREFIX = 2
    """``check``: the text is a valid prefix, but not a complete match; ``generate``: the
    output was cut (``--max-tokens``, the context) before the grammar was complete."""
    BAD_GRAMMAR = 3
    """The grammar or JSON Schema cannot be built."""
    USAGE = 4
    """Bad command line, an input that cannot be read (missing file, not UTF-8), or standard
    output that cannot be written (disk full, closed descriptor)."""
    LIMIT = 5
    """A resource limit of :class:`gbnfkit.Limits` was reached."""
    MISSING_DEPENDENCY = 6
    """``generate``: the model's runtime (an extra) or the bundled model is not installed."""
    INTERNAL = 70
    """A bug in gbnfkit (EX_SOFTWARE); please report it."""
    INTERRUPTED = 130
    """Interrupted by Ctrl-C."""
    BROKEN_PIPE = 141
    """Standard output was closed early (``gbnfkit schema s.json | head``), as after SIGPIPE."""


class CliError(Exception):
    """A failure that ends the command with ``code`` after printing ``message`` on stderr."""

    def __init__(self, message: str, code: ExitCode = ExitCode.USAGE) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
