"""Each combinator on complete input, the operators, and bad arguments."""

from __future__ import annotations

import pytest

from gbnfkit import GbnfkitError, PegError, peg
from gbnfkit.peg import ParseStatus

S, MORE, FAIL = ParseStatus.SUCCESS, ParseStatus.NEED_MORE_INPUT, ParseStatus.FAIL


def outcome(p: peg.Parser, text: str, partial: bool = False) -> tuple[ParseStatus, int]:
    r = p.parse(text, partial)
    return r.status, r.end


def test_anchors_and_eps() -> None:
    assert outcome(peg.eps(), "abc") == (S, 0)
    assert outcome(peg.start(), "") == (S, 0)
    assert outcome("a" + peg.start(), "a")[0] is FAIL
    assert outcome(peg.end(), "") == (S, 0)
    assert outcome(peg.end(), "x")[0] is FAIL


def test_literal_any_and_operators() -> None:
    p = "<" + peg.literal("ab") + ">"
    assert outcome(p, "<ab>rest") == (S, 4)
    assert outcome(p, "<ax>")[0] is FAIL
    assert outcome(peg.any() + peg.any(), "é😀") == (S, 2)  # code points, not bytes
    assert outcome(peg.literal("a") | "b", "b") == (S, 1)
    assert outcome("a" | peg.literal("b"), "a") == (S, 1)
    assert peg.literal("a") + "b" == peg.sequence("a", "b")
    assert hash(peg.literal("a") + "b") == hash(peg.sequence("a", "b"))


def test_ordered_choice_takes_the_first_match_and_does_not_backtrack() -> None:
    p = peg.choice("a", "ab") + peg.end()
    assert outcome(p, "ab")[0] is FAIL  # "a" won, then the end was expected
    assert outcome(peg.choice("ab", "a") + peg.end(), "ab") == (S, 2)


def test_repetitions_are_greedy() -> None:
    assert outcome(peg.zero_or_more("ab"), "ababa") == (S, 4)
    assert outcome(peg.one_or_more("ab"), "x")[0] is FAIL
    assert outcome(peg.optional("x") + "y", "y") == (S, 1)
    assert outcome(peg.repeat("a", 2, 3), "aaaa") == (S, 3)
    assert outcome(peg.repeat("a", 2, 3), "a")[0] is FAIL
    assert outcome(peg.repeat("a", 2, None), "aaaaa") == (S, 5)
    # a repetition of something that matches the empty string stops
    assert outcome(peg.zero_or_more(peg.optional("a")), "aab") == (S, 2)
    assert outcome(peg.zero_or_more("a") + "a", "aaa")[0] is FAIL  # PEG: no backtracking


def test_lookahead() -> None:
    assert outcome(peg.peek("ab") + "a", "ab") == (S, 1)
    assert outcome(peg.peek("ab"), "ax")[0] is FAIL
    assert outcome(peg.negate("ab") + peg.any(), "ax") == (S, 1)
    assert outcome(peg.negate("ab") + peg.any(), "ab")[0] is FAIL


def test_chars_space_rest() -> None:
    assert outcome(peg.chars("[a-z0-9_]"), "ab_9-") == (S, 4)
    assert outcome(peg.chars('[^"\\\\]'), 'ab\\"') == (S, 2)
    assert outcome(peg.chars("[a-z]", 2, 3), "abcd") == (S, 3)
    assert outcome(peg.chars("[a-z]", 2), "a1")[0] is FAIL
    assert outcome(peg.chars("[a-z]", 0), "1") == (S, 0)
    assert outcome(peg.space(), " \t\r\n x") == (S, 5)
    assert outcome(peg.space(), "x") == (S, 0)
    assert outcome("a" + peg.rest(), "abc") == (S, 3)


def test_until() -> None:
    assert outcome(peg.until("</a>"), "xy</a>z") == (S, 2)
    assert outcome(peg.until("</a>"), "xy</b") == (S, 5)  # no delimiter: all of it
    assert outcome(peg.until("</a>"), "</a>") == (S, 0)
    assert outcome(peg.until_one_of(["<b>", "<a"]), "x<a<b>") == (S, 1)
    assert outcome(peg.until_one_of(["bc", "abcd"]), "abce") == (S, 1)


def test_tags_make_a_tree_in_text_order() -> None:
    item = peg.tag("item", peg.chars("[a-z]"))
    p = peg.tag("list", "[" + item + peg.zero_or_more("," + item) + "]")
    r = p.parse("[ab,c]")
    (root,) = r.nodes
    assert (root.tag, root.start, root.end, root.text) == ("list", 0, 6, "[ab,c]")
    assert [(n.tag, n.text) for n in root.children] == [("item", "ab"), ("item", "c")]
    assert [n.text for n in r.find("item")] == ["ab", "c"]
    assert [n.tag for n in r.walk()] == ["list", "item", "item"]
    assert r.ast == r.nodes
    assert not root.is_partial


def test_rules_and_refs_allow_recursion() -> None:
    nested = peg.rule("nested", "(" + peg.optional(peg.ref("nested")) + ")")
    assert outcome(nested, "((()))") == (S, 6)
    assert outcome(nested + peg.end(), "(()")[0] is FAIL


def test_left_recursion_is_a_clear_error() -> None:
    p = peg.rule("expr", peg.ref("expr") + "+" | "x")
    with pytest.raises(PegError, match="left recursion"):
        p.parse("x+x")


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: peg.literal(3), "literal takes a str"),  # type: ignore[arg-type]
        (lambda: peg.sequence("a", 3), "sequence takes parsers or str"),  # type: ignore[arg-type]
        (lambda: peg.repeat("a", -1, 2), "min must be an int >= 0"),
        (lambda: peg.repeat("a", 3, 2), "smaller than its min"),
        (lambda: peg.repeat("a", True, 2), "min must be an int"),  # type: ignore[arg-type]
        (lambda: peg.chars("a-z"), "one GBNF character class"),
        (lambda: peg.chars("[a-z"), "character class"),
        (lambda: peg.chars("[a-z][0-9]"), "one GBNF character class"),
        (lambda: peg.until(""), "non-empty"),
        (lambda: peg.until_one_of("ab"), "list of delimiters"),
        (lambda: peg.until_one_of([]), "at least one delimiter"),
        (lambda: peg.rule("bad name", "x"), "GBNF rule name"),
        (lambda: peg.ref("x_y"), "GBNF rule name"),
        (lambda: peg.tag("", "x"), "non-empty"),
        (lambda: peg.schema("x", "s", object()), "schema"),
        (lambda: peg.json_member(1, "x"), "key must be a str"),  # type: ignore[arg-type]
        (lambda: peg.literal("a").parse("a", "no"), "partial must be True or False"),  # type: ignore[arg-type]
    ],
)
def test_bad_arguments_raise_a_peg_error(build: object, message: str) -> None:
    with pytest.raises(PegError, match=message) as info:
        build()  # type: ignore[operator]
    assert isinstance(info.value, GbnfkitError) and isinstance(info.value, ValueError)


def test_undefined_and_conflicting_rules_are_errors() -> None:
    with pytest.raises(PegError, match="never defined"):
        peg.ref("missing").parse("x")
    with pytest.raises(PegError, match="defined twice"):
        (peg.rule("r", "a") + peg.rule("r", "b")).parse("ab")
    # the same rule built twice is one rule
    assert (peg.rule("r", "a") + peg.rule("r", "a")).parse("aa").end == 2


def test_parsers_are_immutable_and_readable() -> None:
    p = peg.tag("t", peg.literal("a") + peg.chars("[0-9]", 1, 2))
    with pytest.raises(AttributeError):
        p.kind = peg.Kind.EPS  # type: ignore[misc]
    assert repr(p) == "tag('t', \"a\" + chars('[0-9]', 1, 2))"
    assert p.kind is peg.Kind.TAG


def test_a_choice_of_nothing_shows_as_such() -> None:
    """choice() matches nothing; its repr was the empty text (and '()' inside another
    parser), which reads as 'matches the empty string'."""
    nothing = peg.choice()
    assert nothing.parse("").status is peg.ParseStatus.FAIL
    assert repr(nothing) == "choice()"
    assert repr(peg.tag("t", nothing)) == "tag('t', choice())"
    assert repr("a" + nothing) == '"a" + choice()'


def _nested(depth: int) -> peg.Parser:
    """``depth`` levels of tag(sequence(literal, optional(...)))."""
    p = peg.literal("a")
    for _ in range(depth):
        p = peg.tag("t", "a" + peg.optional(p))
    return p


def test_a_parser_that_nests_too_deeply_is_a_peg_error() -> None:
    """Combinators nested deeper than Python recurses: a PegError on every use, not a
    RecursionError (compiling, the grammar, the incremental parser); its repr and its
    equality need no recursion at all (found by bughunt6)."""
    deep = _nested(2000)
    lazy = peg.trigger_rule("call", "<" + deep)
    for use in (lambda: deep.parse("aa"), deep.to_grammar, deep.incremental,
                lambda: lazy.to_grammar(lazy=True)):
        with pytest.raises(PegError, match="nests too deeply"):
            use()
    text = repr(deep)
    assert text.startswith("tag('t', \"a\" + repeat(tag('t'") and len(text) == 200
    assert deep == _nested(2000) and deep != _nested(1999)
    assert _nested(50).parse("a" * 60).end == 51  # moderate nesting still parses


@pytest.mark.parametrize("hi", [65_536, 2**32, 10**30])
def test_chars_with_a_maximum_too_large_for_a_regex(hi: int) -> None:
    """A maximum past what Python's re counts (2**32 - 2) parses; it raised a bare
    OverflowError when the parser was first run (found by bughunt6)."""
    run = peg.chars("[a]", 0, hi)
    assert run.parse("a" * 70_000 + "b").end == min(70_000, hi)
    assert run.parse("aaa", partial=True).status is ParseStatus.SUCCESS
    assert (run + "b").parse("aab").end == 3
