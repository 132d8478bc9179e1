"""The public ``gbnfkit.grammar.parse_gbnf``: its argument check, outside the parser.

``grammar/_parser.py`` may be compiled by mypyc (``gbnfkit/_native.py``), whose compiled
functions check their annotated argument types themselves, raising ``TypeError``; the
public entry checks first, so a wrong type is a :class:`GrammarError` on both paths.
"""

from __future__ import annotations

from gbnfkit._errors import GrammarError
from gbnfkit._limits import DEFAULT_LIMITS, Limits
from gbnfkit.grammar import _parser
from gbnfkit.grammar._ir import GrammarIR

__all__ = ["parse_gbnf"]


def parse_gbnf(text: str, root: str = "root", *, limits: Limits = DEFAULT_LIMITS) -> GrammarIR:
    """The checked grammar IR of GBNF ``text`` whose start rule is ``root``.

    Raises :class:`GrammarError` for text that is not a ``str``, a syntax error, an
    undefined rule, a missing start rule or left recursion (``line`` and ``column`` are
    1-based; ``rules`` names the rules at fault where there are some).
    """
    if isinstance(text, str):
        return _parser.parse_gbnf(text, root, limits=limits)
    raise GrammarError(f"grammar text must be a str, not {type(text).__name__}")
