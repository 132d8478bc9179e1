"""Matching semantics: llama.cpp's pushdown automaton, verdict by verdict."""

from __future__ import annotations

import pytest

from gbnfkit import Grammar, GrammarError, LimitError, Limits, MatchStatus
from gbnfkit.grammar._ir import Alt, CharClass, GrammarIR, Literal, Repeat, RuleRef, Seq


def verdict(grammar: str | Grammar, text: str) -> tuple[str, int | None]:
    g = Grammar.from_gbnf(grammar) if isinstance(grammar, str) else grammar
    m = g.match(text)
    return m.status.value, m.position


@pytest.mark.parametrize(
    ("grammar", "text", "expected"),
    [
        ('root ::= "hello"', "hello", ("accept", None)),
        ('root ::= "hello"', "hel", ("prefix", None)),
        ('root ::= "hello"', "help", ("reject", 3)),
        ('root ::= "hello"', "hello!", ("reject", 5)),
        ('root ::= "hello"', "", ("prefix", None)),
        ('root ::= "a" | ""', "", ("accept", None)),
        ('root ::= "ab" | "ac"', "ac", ("accept", None)),
        ('root ::= [a-c]{2,4}', "abca", ("accept", None)),
        ('root ::= [a-c]{2,4}', "a", ("prefix", None)),
        ('root ::= [a-c]{2,4}', "abd", ("reject", 2)),
        ('root ::= [a-c]{2,4}', "abcab", ("reject", 4)),
        ('root ::= "a"{3}', "aaa", ("accept", None)),
        ('root ::= "a"{2,}', "aaaaaaa", ("accept", None)),
        ('root ::= "a"{2,}', "a", ("prefix", None)),
        ('root ::= "a"{0,0} "b"', "b", ("accept", None)),
        ('root ::= ("ab")* "c"', "ababc", ("accept", None)),
        ('root ::= ("ab")* "c"', "abac", ("reject", 3)),
        ('root ::= [^a]', "\n", ("accept", None)),
        ('root ::= [^a]', "\U0001f600", ("accept", None)),
        ('root ::= [^a]', "a", ("reject", 0)),
        ("root ::= .", "\n", ("accept", None)),
        ("root ::= . .", "\U0001f600x", ("accept", None)),
        ('root ::= x "y"\nx ::= "a" x | ""', "aaay", ("accept", None)),
        ('root ::= x "y"\nx ::= "a" x | ""', "aab", ("reject", 2)),
        # code points above U+10FFFF never match
        ("root ::= [\\U00110000-\\U0011FFFF]", "a", ("reject", 0)),
        ("root ::= [^\\U00110000]", "a", ("accept", None)),
        # nullable loops terminate
        ('root ::= ("a"?)*', "", ("accept", None)),
        ('root ::= ("a"?)*', "aaaa", ("accept", None)),
        ('root ::= ("a"? "b"?)* "c"', "abbac", ("accept", None)),
        ('root ::= ("a"? "a"? "a"?)*', "a" * 50, ("accept", None)),
        ('root ::= ("a"? "a"? "a"?)*', "a" * 50 + "b", ("reject", 50)),
    ],
)
def test_verdicts(grammar: str, text: str, expected: tuple[str, int | None]) -> None:
    assert verdict(grammar, text) == expected


def test_a_top_that_never_matches_keeps_the_state_alive() -> None:
    never = CharClass(((ord("z"), ord("a")),))  # what llama.cpp builds for [z-a]
    g = Grammar.from_ir(GrammarIR({"root": never}))
    assert verdict(g, "") == ("prefix", None)
    assert verdict(g, "a") == ("reject", 0)
    g2 = Grammar.from_ir(GrammarIR({"root": Seq((Literal("x"), never))}))
    assert verdict(g2, "x") == ("prefix", None)
    assert verdict(g2, "xa") == ("reject", 1)
    assert g2.start().feed("x").allowed() == ()


def test_status_is_a_string_enum() -> None:
    m = Grammar.from_gbnf('root ::= "a"').match("a")
    assert m.status == "accept"
    assert m.status is MatchStatus.ACCEPT
    assert m.accepted
    assert m.position is None and m.expected == ()
    r = Grammar.from_gbnf('root ::= "a" [bc]').match("ax")
    assert r.status == "reject" and r.position == 1
    assert r.expected == ("one of [bc]",)


def test_match_bytes() -> None:
    g = Grammar.from_gbnf('root ::= "\u00e9" [a-z]')
    assert verdict(g, "\u00e9a") == ("accept", None)
    assert g.match("\u00e9a".encode()).status == "accept"
    assert g.match("\u00e9".encode()[:1]).status == "prefix"
    r = g.match("\u00e9\u00e9".encode())
    assert (r.status, r.position) == ("reject", 1)
    bad = g.match(b"\xff")
    assert (bad.status, bad.position) == ("reject", 0)


def test_ir_groups_and_repeat_of_groups() -> None:
    ir = GrammarIR(
        {
            "root": Seq((Repeat(Alt((Literal("ab"), RuleRef("d"))), 1, 3), Literal("!"))),
            "d": CharClass.of([(ord("0"), ord("9"))]),
        }
    )
    g = Grammar.from_ir(ir)
    assert verdict(g, "ab1ab!") == ("accept", None)
    assert verdict(g, "ab1ab2") == ("reject", 5)
    assert verdict(g, "!") == ("reject", 0)


def test_from_ir_runs_the_checks() -> None:
    with pytest.raises(GrammarError):
        Grammar.from_ir(GrammarIR({"root": RuleRef("nope")}))
    with pytest.raises(GrammarError):
        Grammar.from_ir(GrammarIR({"root": Seq((RuleRef("root"), Literal("a")))}))
    with pytest.raises(GrammarError):
        Grammar.from_ir(GrammarIR({"x": Literal("a")}))


def test_unchecked_left_recursion_hits_the_expansion_limit() -> None:
    # bypass the checks: the pushdown expansion would grow forever; the limit on the
    # stacks one expansion explores stops it (before the stacks it keeps reach 50: it
    # goes deeper first)
    ir = GrammarIR({"root": Seq((RuleRef("opt"), RuleRef("root"), Literal("x"))),
                    "opt": Alt((Literal("a"), Literal(""))),})
    g = Grammar(ir, limits=Limits(max_stacks=50, max_expansion_size=1_000))
    with pytest.raises(LimitError) as info:
        g.start()
    assert info.value.limit == "max_expansion_size" and info.value.value == 1_000
    assert "rule 'opt'" in str(info.value)


def test_max_stacks_on_an_ambiguous_state() -> None:
    text = 'root ::= (x | y)*\nx ::= "a"+ "b"?\ny ::= [a-z]{0,40}'
    g = Grammar.from_gbnf(text, limits=Limits(max_stacks=10))
    with pytest.raises(LimitError) as info:
        g.start().feed("a" * 30)
    assert info.value.limit == "max_stacks"
    # with the default limit the same input is fine
    assert Grammar.from_gbnf(text).match("a" * 30).status == "accept"


def test_deep_recursion_is_not_limited_by_python_recursion() -> None:
    g = Grammar.from_gbnf('root ::= "(" root ")" | "x"')
    depth = 5000
    assert verdict(g, "(" * depth + "x" + ")" * depth) == ("accept", None)
    assert verdict(g, "(" * depth + "x" + ")" * (depth - 1)) == ("prefix", None)


def test_finishing_many_nullable_frames_at_once() -> None:
    # after the innermost "(" every pending ")"? may be skipped: one expansion pops
    # through thousands of frames (iteratively, no Python recursion)
    g = Grammar.from_gbnf('root ::= "(" root? ")"? "x"?')
    depth = 1200  # past Python's default recursion limit; the work grows as depth**2
    assert verdict(g, "(" * depth) == ("accept", None)
    assert verdict(g, "(" * depth + ")" * depth + "x") == ("accept", None)
    assert verdict(g, "(" * depth + "x" * 3) == ("accept", None)
    assert verdict(g, "(" * 3 + "x" * 5) == ("reject", 6)  # one "x" per open frame
    s = g.start().feed("(" * depth)
    assert s.is_complete and s.allows(")") and s.allows("x") and s.allows("(")
