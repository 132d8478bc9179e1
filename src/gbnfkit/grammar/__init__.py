"""Grammar syntax: GBNF text <-> grammar IR."""

from gbnfkit.grammar._checks import check_grammar
from gbnfkit.grammar._ir import (
    ANY,
    Alt,
    CharClass,
    Expr,
    GrammarIR,
    Literal,
    Repeat,
    RuleRef,
    Seq,
)
from gbnfkit.grammar._normalize import normalize, normalize_ir
from gbnfkit.grammar._parser import parse_gbnf

__all__ = [
    "ANY",
    "Alt",
    "CharClass",
    "Expr",
    "GrammarIR",
    "Literal",
    "Repeat",
    "RuleRef",
    "Seq",
    "check_grammar",
    "normalize",
    "normalize_ir",
    "parse_gbnf",
]
