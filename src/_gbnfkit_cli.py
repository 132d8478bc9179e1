"""The ``gbnfkit`` console script's entry point: :func:`gbnfkit.cli.main`, imported where
Ctrl-C is caught.

It lives outside the ``gbnfkit`` package on purpose: importing any ``gbnfkit`` module
first runs ``gbnfkit/__init__.py`` (about half a second), and a Ctrl-C then reached the
script that pip generates (``from gbnfkit.cli import main``) as a traceback.  Here the
import is inside :func:`main`, so an interrupt ends the command with its documented
status, 130 (``ExitCode.INTERRUPTED``), from the first instant.  ``python -m
gbnfkit.cli`` imports the package before any of its code runs, so it cannot do the same.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["INTERRUPTED", "main"]

INTERRUPTED = 130
"""``gbnfkit.cli._exit.ExitCode.INTERRUPTED``, written out: importing it is what Ctrl-C
may interrupt (a test checks that the two agree)."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``gbnfkit`` with ``argv`` (default: ``sys.argv[1:]``); return the exit status."""
    try:
        from gbnfkit.cli import main as run
    except KeyboardInterrupt:
        return INTERRUPTED
    return run(argv)
