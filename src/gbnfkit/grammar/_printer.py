"""Grammar IR -> canonical GBNF text.

Rules come out in definition order, one per line (``name ::= body``), alternatives
separated by `` | ``, with parentheses only where they are needed.  Literals escape
only ``"``, ``\\``, ``\\n``, ``\\r``, ``\\t`` and characters that are not printable
(as ``\\xXX``/``\\uXXXX``/``\\UXXXXXXXX``); classes are sorted and merged.

For any IR, ``parse_gbnf(to_gbnf(ir)) == normalize_ir(ir)`` (the text is printed from
the canonical form, so a grammar parsed from it equals the grammar it was printed
from).  llama.cpp reads a group ``(x?)`` differently from a bare ``x?`` in its
left-recursion check; when the plain printout would be refused by llama.cpp but the
grammar itself is fine, rule references and repetitions inside sequences and
repetitions are printed in parentheses.
"""

from __future__ import annotations

import sys

from gbnfkit._errors import GrammarError
from gbnfkit._limits import Limits
from gbnfkit.grammar._entry import normalize_ir
from gbnfkit.grammar._ir import Alt, CharClass, Expr, GrammarIR, Literal, Repeat, RuleRef, Seq
from gbnfkit.grammar._llama_leftrec import llama_left_recursion
from gbnfkit.grammar._text import class_char, literal_char
from gbnfkit.grammar._validate import validate_ir

__all__ = ["canonical_gbnf", "check_rule_name", "expr_to_gbnf", "to_gbnf"]

_NOTHING = "[^\\x00-\\UFFFFFFFF]"  # a class that matches no code point


def to_gbnf(ir: GrammarIR) -> str:
    """The canonical GBNF text of ``ir`` (ends with a newline).

    Raises:
        GrammarError: a rule name that GBNF cannot write (only ASCII letters, digits
            and ``-`` are allowed), or an IR not made of IR expressions with values GBNF
            can write (a code point outside 0 to 0xFFFFFFFF, a repetition bound that is
            not an int).
    """
    validate_ir(ir)
    text = canonical_gbnf(ir)
    ir = normalize_ir(ir)
    if llama_left_recursion(ir.rules, exact=False) is None:
        # the grammar is fine; make sure llama.cpp's reading of the text agrees
        for level in (1, 2):
            if not _llama_refuses(text):
                break
            text = _print(ir, level)
    return text


def canonical_gbnf(ir: GrammarIR) -> str:
    """The plain canonical text of ``ir``: IRs of equal canonical form
    (:func:`gbnfkit.grammar.normalize_ir`) give equal texts, which parse back to that form.

    :func:`to_gbnf` starts from it and may add groups so that llama.cpp's
    left-recursion check reads the text as gbnfkit does; this one never re-parses,
    so it is cheap enough to fingerprint grammars with.

    Raises:
        GrammarError: as :func:`to_gbnf`.
    """
    for name in ir.rules:
        check_rule_name(name)
    return _print(normalize_ir(ir), 0)


def _print(ir: GrammarIR, level: int) -> str:
    printer = _Printer(level)
    lines = [f"{name} ::= {_body(printer, body, name)}" for name, body in ir.rules.items()]
    return "\n".join(lines) + "\n"


def _body(printer: _Printer, expr: Expr, rule: str | None) -> str:
    """``printer.body(expr)`` (of ``rule``, if it is one); a nesting deeper than Python's
    recursion allows (the printer recurses once per level of groups and repetitions) is
    a GrammarError."""
    try:
        return printer.body(expr)
    except RecursionError:
        where = f"rule {rule!r}" if rule is not None else "the expression"
        raise GrammarError(
            f"{where} is nested too deeply to write as GBNF text; "
            "split deeply nested groups into named rules",
            rules=(rule,) if rule is not None else (),
        ) from None


def _llama_refuses(text: str) -> bool:
    """Whether llama.cpp's left-recursion check refuses ``text`` (known to parse, with
    any repetition bound: the grammar's limits admitted them)."""
    from gbnfkit.grammar._parser import raw_rules

    unbounded = Limits(max_repetition=sys.maxsize)
    return llama_left_recursion(raw_rules(text, unbounded), exact=True) is not None


def expr_to_gbnf(expr: Expr) -> str:
    """GBNF text of one expression (as a rule body)."""
    return _body(_Printer(0), expr, None)


def check_rule_name(name: str) -> None:
    """Raise :class:`GrammarError` if ``name`` cannot be a GBNF rule name."""
    if not name or not all(c.isascii() and (c.isalnum() or c == "-") for c in name):
        raise GrammarError(
            f"rule name {name!r} cannot be written in GBNF: use only ASCII letters, digits and '-'",
            rules=(name,),
        )


class _Printer:
    """``level`` 0: plain; 1: references and repetitions repeated by a repetition are
    put in a group; 2: every item of a sequence or repetition is in a group of its own,
    nothing llama.cpp consults is literally empty (``()``, ``(())``), so llama.cpp's
    check reads it as :func:`llama_left_recursion` with ``exact=False`` does."""

    def __init__(self, level: int) -> None:
        self.level = level

    def body(self, expr: Expr) -> str:
        if isinstance(expr, Alt):
            if not expr.options:
                return _NOTHING
            return " | ".join(self.option(option) for option in expr.options)
        return self.option(expr)

    def option(self, expr: Expr) -> str:
        if _is_empty(expr):
            return "()" if self.level >= 2 else '""'
        if self.level >= 2 and isinstance(expr, Repeat) and expr.max == 0:
            return self.grouped(expr)  # llama.cpp drops `x{0}`, leaving the option empty
        if isinstance(expr, Seq):
            return " ".join(self.item(item, True) for item in expr.items)
        if isinstance(expr, Alt):
            return self.body(expr)
        return self.item(expr, False)

    def item(self, expr: Expr, in_seq: bool) -> str:
        if self.level >= 2 and in_seq:
            return self.grouped(expr)
        if isinstance(expr, Literal):
            return literal_text(expr.text)
        if isinstance(expr, CharClass):
            return class_text(expr)
        if isinstance(expr, RuleRef):
            return f"({expr.name})" if self.level >= 2 and in_seq else expr.name
        if isinstance(expr, Seq):
            return f"({self.option(expr)})" if expr.items else '""'
        if isinstance(expr, Alt):
            return f"({self.body(expr)})" if expr.options else _NOTHING
        text = self.repeated(expr.item) + _operator(expr)
        return f"({text})" if self.level >= 2 and in_seq else text

    def grouped(self, expr: Expr) -> str:
        """``expr`` in a group that llama.cpp never counts as possibly empty."""
        if _is_empty(expr) or (isinstance(expr, Repeat) and expr.max == 0):
            return f"(({self.item(expr, False)}))"
        return f"({self.option(expr)})"

    def repeated(self, expr: Expr) -> str:
        """``expr`` as the item of a repetition."""
        if self.level >= 2:
            return self.grouped(expr)
        if isinstance(expr, Literal):
            return literal_text(expr.text) if expr.text else "()"
        if isinstance(expr, CharClass):
            return class_text(expr)
        if isinstance(expr, RuleRef):
            return f"({expr.name})" if self.level >= 1 else expr.name
        if isinstance(expr, Seq):
            return f"({self.option(expr)})" if expr.items else "()"
        if isinstance(expr, Alt):
            return f"({self.body(expr)})" if expr.options else _NOTHING
        text = self.repeated(expr.item) + _operator(expr)
        # a repetition that produces nothing ({0}) cannot be repeated again without a group
        return f"({text})" if self.level >= 1 or expr.max == 0 else text


def _is_empty(expr: Expr) -> bool:
    return expr == Literal("") or expr == Seq(())


def _operator(expr: Repeat) -> str:
    lo, hi = expr.min, expr.max
    if hi is None:
        return "*" if lo == 0 else "+" if lo == 1 else f"{{{lo},}}"
    if lo == 0 and hi == 1:
        return "?"
    return f"{{{lo}}}" if lo == hi else f"{{{lo},{hi}}}"


def literal_text(text: str) -> str:
    """``text`` as a GBNF string literal."""
    return '"' + "".join(literal_char(ord(c)) for c in text) + '"'


def class_text(cls: CharClass) -> str:
    """``cls`` as a GBNF character class (``.`` for any character)."""
    ranges = CharClass.of(cls.ranges).ranges
    if not ranges:
        return "." if cls.negated else _NOTHING
    parts = ["[^" if cls.negated else "["]
    first = not cls.negated
    for lo, hi in ranges:
        parts.append(class_char(lo, first))
        first = False
        if hi == lo + 1:
            parts.append(class_char(hi))
        elif hi > lo:
            parts.append("-" + class_char(hi))
    parts.append("]")
    return "".join(parts)
