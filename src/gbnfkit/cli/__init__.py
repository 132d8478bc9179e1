"""The ``gbnfkit`` command line (``python -m gbnfkit.cli`` or the ``gbnfkit`` script).

Subcommands live one per module: ``_check``, ``_next``, ``_fmt``, ``_schema``,
``_builtins``; exit statuses are :class:`gbnfkit.cli._exit.ExitCode`.
"""

from __future__ import annotations

from gbnfkit._public import publish as _publish
from gbnfkit.cli._main import main

__all__ = ["main"]

_publish(__name__, globals(), __all__)
