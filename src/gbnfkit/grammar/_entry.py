"""The public ``gbnfkit.grammar.parse_gbnf``: its argument check, outside the parser.

``grammar/_parser.py`` may be compiled by mypyc (``gbnfkit/_native.py``), whose compiled
functions check their annotated argument types themselves, raising ``TypeError``; the
public entry checks first, so a wrong type is a :class:`GrammarError` on both paths.
"""

from __future__ import annotations

from gbnfkit._errors import GrammarError
from gbnfkit._limits import DEFAULT_LIMITS, Limits
from gbnfkit.grammar import _checks, _parser
from gbnfkit.grammar._ir import GrammarIR
from gbnfkit.grammar._validate import validate_ir

__all__ = ["check_grammar", "parse_gbnf"]


def parse_gbnf(text: str, root: str = "root", *, limits: Limits = DEFAULT_LIMITS) -> GrammarIR:
    """The checked grammar IR of GBNF ``text`` whose start rule is ``root``.

    Raises :class:`GrammarError` for text that is not a ``str``, a syntax error, an
    undefined rule, a missing start rule or left recursion (``line`` and ``column`` are
    1-based; ``rules`` names the rules at fault where there are some).
    """
    if isinstance(text, str):
        return _parser.parse_gbnf(text, root, limits=limits)
    raise GrammarError(f"grammar text must be a str, not {type(text).__name__}")


def check_grammar(ir: GrammarIR, source: str | None = None) -> None:
    """Raise :class:`GrammarError` if ``ir`` cannot be used as a grammar: not made of IR
    expressions with values of the right types, no rules, an undefined rule, a missing
    start rule, invalid repetition bounds or left recursion.

    ``source`` is the grammar text, when there is one, so errors can show it.
    """
    validate_ir(ir)
    if source is not None and not isinstance(source, str):
        raise GrammarError(f"source must be a str or None, not {type(source).__name__}")
    _checks.check_grammar(ir, source)
