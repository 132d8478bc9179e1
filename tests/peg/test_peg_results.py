"""Failure results, ParseError, and the IncrementalParser's own API."""

from __future__ import annotations

import pytest

from gbnfkit import GbnfkitError, ParseError, PegError, peg
from gbnfkit.peg import ParseStatus


def test_a_failure_says_where_and_what_was_expected() -> None:
    p = peg.json() + peg.end()
    r = p.parse('{"a": [1, 2 x]}')
    assert r.status is ParseStatus.FAIL
    assert r.position == 12
    assert r.expected == ('","', '"]"')
    assert r.excerpt == '{"a": [1, 2 x]}\n            ^'
    assert not r.nodes


def test_the_farthest_failure_is_reported_on_the_right_line() -> None:
    p = peg.one_or_more(peg.chars("[a-z]") + "\n") + peg.end()
    r = p.parse("abc\nde1\n")
    assert (r.position, r.expected) == (6, ("[a-z]", '"\\n"'))
    assert r.excerpt == "de1\n  ^"


def test_parse_or_raise() -> None:
    p = peg.literal("<a>") + peg.end()
    assert p.parse_or_raise("<a>").is_complete_match
    assert p.parse_or_raise("<a", partial=True).status is ParseStatus.NEED_MORE_INPUT
    with pytest.raises(ParseError) as info:
        p.parse_or_raise("<b>")
    error = info.value
    assert isinstance(error, GbnfkitError) and isinstance(error, ValueError)
    assert (error.position, error.expected) == (0, ('"<a>"',))
    assert "parse failed at position 0; expected \"<a>\"" in str(error)


def test_success_need_not_reach_the_end_of_the_text() -> None:
    r = peg.literal("ab").parse("abc")
    assert r.is_success and r.end == 2 and not r.is_complete_match


def test_incremental_parser_api() -> None:
    p = peg.tag("w", peg.chars("[a-z]")) + peg.end()
    stream = p.incremental()
    assert stream.parser is p
    assert stream.feed("ab").status is ParseStatus.SUCCESS
    assert stream.text == "ab"
    assert stream.feed("1").status is ParseStatus.FAIL
    # a text that does not extend the last one starts afresh
    assert stream.parse("xyz").nodes[0].text == "xyz"
    assert stream.finish() == p.parse("xyz")
    stream.reset()
    assert stream.text == ""
    with pytest.raises(PegError):
        stream.feed(b"x")  # type: ignore[arg-type]
    with pytest.raises(PegError):
        p.parse(None)  # type: ignore[arg-type]


def test_left_recursion_names_the_cycle() -> None:
    a = peg.rule("a", peg.optional("x") + peg.ref("b"))
    b = peg.rule("b", peg.ref("a") + "y" | "z")
    with pytest.raises(PegError, match="left recursion: 'a' -> 'b' -> 'a'"):
        (a + b).parse("z")


def test_deep_nesting_is_a_clear_error() -> None:
    nested = peg.rule("n", "(" + peg.optional(peg.ref("n")) + ")")
    with pytest.raises(PegError, match="nests too deeply"):
        nested.parse("(" * 5000 + ")" * 5000)


@pytest.mark.parametrize(
    ("text", "position"),
    [
        ("[" * 150 + "x", 150),
        ('{"a": ' * 200 + "1, ]", 6 * 200 + 3),
        ("[" * 200 + "1 2", 202),
        ("[" * 150, 150),  # complete input that stops early
    ],
)
def test_json_that_fails_within_the_documented_depth_is_a_failure(
    text: str, position: int
) -> None:
    """JSON nested less than the ~240 levels the parser follows fails as a result with a
    position, like shallow JSON; it raised PegError ("nests too deeply") from ~120 levels
    on, where the tracker of the failure follows JSON with its combinator definition
    (found by bughunt6)."""
    result = peg.json().parse(text)
    assert (result.status, result.position) == (ParseStatus.FAIL, position)
    with pytest.raises(ParseError) as caught:
        peg.json().parse_or_raise(text)
    assert caught.value.position == position
    if not text.endswith("["):
        assert peg.json().parse(text, partial=True).position == position
    shallow = peg.json().parse("[" * 50 + "x")  # the tracker still names what was expected
    assert shallow.position == 50 and '"["' in shallow.expected
