"""Grammar syntax: GBNF text <-> grammar IR."""

from gbnfkit.grammar._builtins import builtin_names, builtin_text
from gbnfkit.grammar._entry import check_grammar, normalize, normalize_ir, parse_gbnf
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
from gbnfkit.grammar._printer import to_gbnf

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
    "builtin_names",
    "builtin_text",
    "check_grammar",
    "normalize",
    "normalize_ir",
    "parse_gbnf",
    "to_gbnf",
]
