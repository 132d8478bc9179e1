"""The Grammar facade: construction, identity, builtins, printing."""

from __future__ import annotations

import json

import pytest

import gbnfkit
from gbnfkit import Grammar, GrammarError, Limits
from gbnfkit.grammar._ir import GrammarIR, Literal


def test_public_names() -> None:
    for name in ("Grammar", "State", "CharRule", "CharExcludeRule", "EndRule", "MatchResult",
                 "MatchStatus"):
        assert name in gbnfkit.__all__
        assert getattr(gbnfkit, name).__module__ == "gbnfkit"  # its public home


def test_from_gbnf_properties() -> None:
    lim = Limits(max_stacks=1234)
    g = Grammar.from_gbnf('start ::= "a" b\nb ::= [0-9]+', root="start", limits=lim)
    assert g.root == "start"
    assert g.limits is lim
    assert set(g.ir.rules) == {"start", "b"}
    assert g.match("a12").status == "accept"
    assert len(g.fingerprint) == 64 and int(g.fingerprint, 16) >= 0
    with pytest.raises(AttributeError):
        g.foo = 1  # type: ignore[attr-defined]


def test_equality_by_fingerprint() -> None:
    a = Grammar.from_gbnf('root ::= "x" y\ny ::= "z"')
    b = Grammar.from_gbnf('root   ::=   "x"   y   # same grammar\ny ::= ("z")')
    c = Grammar.from_gbnf('root ::= "x" y\ny ::= "w"')
    assert a == b and hash(a) == hash(b)
    assert a != c
    other_root = Grammar.from_gbnf('r ::= "x" y\ny ::= "z"\nroot ::= r', root="r")
    assert a.fingerprint != other_root.fingerprint


def test_to_gbnf_round_trips() -> None:
    g = Grammar.from_gbnf('root ::= ("ab" | [c-e]){2,5} "!"?')
    again = Grammar.from_gbnf(g.to_gbnf())
    assert again == g
    for text in ("abab!", "cde", "a", "abababababab"):
        assert again.match(text) == g.match(text)


def test_from_ir_and_errors() -> None:
    g = Grammar.from_ir(GrammarIR({"root": Literal("hi")}))
    assert g.match("hi").accepted
    with pytest.raises(GrammarError) as info:
        Grammar.from_gbnf('root ::= "a" nope')
    assert "nope" in info.value.rules


def test_builtins() -> None:
    names = Grammar.builtin_names()
    assert "json" in names
    for name in names:
        assert Grammar.builtin(name).start() is not None
    js = Grammar.builtin("json")
    doc = json.dumps({"a": [1, 2.5, "x\u00e9\\\"", None, True], "b": {"c": -3e5}})
    assert js.match(doc).status == "accept"
    assert js.match(doc[:-1]).status == "prefix"
    assert js.match(doc + "}").status == "reject"
