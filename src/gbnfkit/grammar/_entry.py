"""The public ``gbnfkit.grammar.parse_gbnf``, ``check_grammar``, ``normalize`` and
``normalize_ir``: their argument checks, outside the compiled modules.

``grammar/_parser.py`` may be compiled by mypyc (``gbnfkit/_native.py``), whose compiled
functions check their annotated argument types themselves, raising ``TypeError``; the
public entry checks first, so a wrong type is a :class:`GrammarError` on both paths.
Compiled recursion has no ``RecursionError`` either: an expression nested deeper than
``MAX_NESTING`` levels is refused here before the compiled ``normalize`` recurses over it.
"""

from __future__ import annotations

from gbnfkit._errors import GrammarError
from gbnfkit._limits import DEFAULT_LIMITS, Limits
from gbnfkit.grammar import _checks, _normalize, _parser
from gbnfkit.grammar._ir import MAX_NESTING, Expr, GrammarIR, too_deep
from gbnfkit.grammar._validate import validate_ir

__all__ = ["check_grammar", "normalize", "normalize_ir", "parse_gbnf"]


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
    try:
        _checks.check_grammar(ir, source)
    except RecursionError:
        # the interpreted checks recurse once or twice per level (compiled, they reach
        # MAX_NESTING, which _checks refuses beyond before any recursion)
        raise GrammarError(
            "grammar expressions are nested too deeply to check; "
            "split deeply nested groups into named rules"
        ) from None


def normalize(expr: Expr) -> Expr:
    """The canonical form of ``expr`` (same meaning); GrammarError if it nests more than
    ``MAX_NESTING`` levels (or, interpreted, more than Python's recursion allows)."""
    _check_depth(expr, None)
    try:
        return _normalize.normalize(expr)
    except RecursionError:
        raise _too_deep(None) from None


def normalize_ir(ir: GrammarIR) -> GrammarIR:
    """``ir`` with every rule body in canonical form (positions kept); GrammarError as
    :func:`normalize`, naming the rule."""
    for name, body in ir.rules.items():
        _check_depth(body, name)
    try:
        return _normalize.normalize_ir(ir)
    except RecursionError:
        raise _too_deep(None, "the grammar") from None


def _check_depth(expr: Expr, name: str | None) -> None:
    if too_deep(expr):
        raise _too_deep(name)


def _too_deep(name: str | None, where: str = "the expression") -> GrammarError:
    if name is not None:
        where = f"rule {name!r}"
    return GrammarError(
        f"{where} is nested too deeply (more than {MAX_NESTING} levels, or more "
        "than Python's recursion allows); split deeply nested groups into named rules",
        rules=(name,) if name is not None else (),
    )
