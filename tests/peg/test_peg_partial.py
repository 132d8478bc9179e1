"""Partial (streaming) input: NEED_MORE_INPUT instead of failures, and atomic nodes."""

from __future__ import annotations

from gbnfkit import peg
from gbnfkit.peg import ParseStatus

S, MORE, FAIL = ParseStatus.SUCCESS, ParseStatus.NEED_MORE_INPUT, ParseStatus.FAIL


def test_a_partial_literal_needs_more_input() -> None:
    p = peg.literal("<tool_call>")
    assert p.parse("<tool", partial=True).status is MORE
    assert p.parse("<tool").status is FAIL
    assert p.parse("<tx", partial=True).status is FAIL


def test_until_holds_back_a_partial_delimiter() -> None:
    p = peg.tag("content", peg.until("<tool_call>"))
    r = p.parse("hello <tool_c", partial=True)
    assert r.status is MORE
    assert r.end == 6 and r.nodes[0].text == "hello " and r.nodes[0].is_partial
    # complete input: the partial delimiter is ordinary text
    assert p.parse("hello <tool_c").end == 13
    # text that cannot start the delimiter is content at once
    r = p.parse("hello <b", partial=True)
    assert (r.status, r.end) == (S, 8)


def test_until_one_of_holds_back_the_earliest_possible_delimiter() -> None:
    p = peg.until_one_of(["</a>", "[x]"])
    assert p.parse("ab</a", partial=True).end == 2
    assert p.parse("ab[", partial=True).end == 2
    assert p.parse("ab[x]", partial=True).status is S


def test_partial_json_needs_more_input_at_every_prefix() -> None:
    text = '{"a": [1, -2.5e+3, "x\\u00e9\\n"], "b": {"c": null, "d": true}}'
    p = peg.json() + peg.end()
    assert p.parse(text).status is S
    for i in range(len(text)):
        assert p.parse(text[:i], partial=True).status is MORE, text[:i]


def test_json_string_content_never_stops_inside_an_escape() -> None:
    p = peg.tag("s", peg.json_string_content())
    for text, end in [("ab\\", 2), ("ab\\u00", 2), ("ab\\n", 4), ("ab", 2)]:
        r = p.parse(text, partial=True)
        assert (r.status, r.end, r.nodes[0].text) == (MORE, end, text[:end])
    assert p.parse("ab\\x", partial=True).status is FAIL
    assert p.parse('ab\\"c"').end == 5


def test_atomic_nodes_never_appear_half_built() -> None:
    call = peg.tag("call", "<c>" + peg.tag("name", peg.chars("[a-z]")) + "</c>")
    p = peg.zero_or_more(peg.atomic(call))
    r = p.parse("<c>ab</c><c>de</", partial=True)
    assert r.status is MORE
    assert [n.text for n in r.find("name")] == ["ab"]
    # without atomic the half-built node shows, marked partial
    r = peg.zero_or_more(call).parse("<c>ab</c><c>de</", partial=True)
    assert [(n.text, n.is_partial) for n in r.find("call")] == [("<c>ab</c>", False),
                                                                 ("<c>de</", True)]


def test_complete_so_far_is_success_with_partial_input() -> None:
    p = peg.tag("c", peg.until("<t>")) + peg.optional("<t>" + peg.json() + "</t>") + peg.end()
    assert p.parse("hello", partial=True).status is S
    assert p.parse("hello<t>{", partial=True).status is MORE
    assert p.parse("hello<t>{}</t>x", partial=True).status is FAIL


def test_negate_waits_while_its_parser_is_undecided() -> None:
    p = peg.negate("</x>") + peg.any()
    assert p.parse("</", partial=True).status is MORE
    assert p.parse("<a", partial=True).status is S
    assert p.parse("</x>", partial=True).status is FAIL
