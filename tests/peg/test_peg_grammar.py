"""GBNF generation: eager and lazy grammars, schema nodes, and what has no grammar."""

from __future__ import annotations

import pytest

from gbnfkit import Grammar, PegError, Trigger, peg
from gbnfkit.peg import LazyGrammar


def accepts(grammar: Grammar, text: str) -> bool:
    return grammar.match(text).status == "accept"


def test_combinators_become_their_gbnf() -> None:
    p = peg.sequence("a", peg.chars("[0-9]", 1, 3), peg.optional("b") | peg.space(), peg.any(),
                     peg.rest())
    assert p.to_grammar().to_gbnf() == 'root ::= "a" [0-9]{1,3} ("b"? | [\\t\\n\\r ]*) . .*\n'


def test_anchors_and_peek_add_nothing_to_the_grammar() -> None:
    p = peg.start() + peg.peek("a") + "a" + peg.end()
    assert p.to_grammar().to_gbnf() == 'root ::= "a"\n'


def test_negate_has_no_grammar() -> None:
    with pytest.raises(PegError, match="negate"):
        (peg.negate("a") + peg.any()).to_grammar()


def test_until_becomes_the_texts_without_the_delimiter() -> None:
    g = ("<" + peg.until_one_of(["</a>", "ab"]) + "$").to_grammar()
    for text, ok in [("<x$", True), ("<</$", True), ("<</a>$", False), ("<xab$", False),
                     ("<a$", True), ("<<<//a$", True), ("<</a$", True), ("<ba$", True)]:
        assert accepts(g, text) is ok, text


def test_rules_and_refs_become_rules() -> None:
    nested = peg.rule("nested", "(" + peg.optional(peg.ref("nested")) + ")")
    g = (nested + peg.end()).to_grammar()
    assert 'nested ::= "(" nested? ")"' in g.to_gbnf()
    assert accepts(g, "(())") and not accepts(g, "(()")


def test_a_rule_called_root_keeps_its_name() -> None:
    g = (peg.rule("root", "a") + "b").to_grammar()
    assert g.root == "peg-root" and accepts(g, "ab")


TOOL_SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
    "required": ["city"],
    "additionalProperties": False,
}


def tool_call_parser() -> peg.Parser:
    args = peg.schema(peg.json(), "weather-args", TOOL_SCHEMA)
    body = "{" + peg.json_member("name", '"get_weather"') + ", " + peg.json_member("arguments",
                                                                                  args) + "}"
    call = peg.trigger_rule("tool-call", "<tool_call>" + body + "</tool_call>")
    return peg.tag("content", peg.until("<tool_call>")) + peg.optional(call) + peg.end()


def test_schema_nodes_use_the_json_schema_grammar() -> None:
    g = tool_call_parser().to_grammar()
    good = 'Hi<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
    bad = 'Hi<tool_call>{"name": "get_weather", "arguments": {"days": 2}}</tool_call>'
    assert accepts(g, good) and not accepts(g, bad)
    assert accepts(g, "just content")
    # the parser itself only checks JSON syntax
    assert tool_call_parser().parse(bad).is_success


def test_a_lazy_grammar_has_the_trigger_rules_and_their_triggers() -> None:
    lazy = tool_call_parser().to_grammar(lazy=True)
    assert isinstance(lazy, LazyGrammar)
    assert lazy.triggers == (Trigger.word("<tool_call>"),)
    g = lazy.grammar
    assert accepts(g, '<tool_call>{"name": "get_weather", "arguments": {"city": "P"}}</tool_call>')
    assert not accepts(g, "just content")
    assert "until" not in g.to_gbnf()  # the content part is not reached from a trigger


def test_a_trigger_rule_with_alternatives_has_one_trigger_each() -> None:
    call = peg.trigger_rule("call", peg.tag("open", peg.choice("<a>", "<b>")) + peg.json())
    other = peg.trigger_rule("other", peg.rule("opener", "[TOOL]") + peg.json())
    lazy = (peg.rest() + call + other).to_grammar(lazy=True)
    assert lazy.triggers == (Trigger.word("<a>"), Trigger.word("<b>"), Trigger.word("[TOOL]"))


def test_lazy_grammars_need_trigger_rules_that_start_with_a_literal() -> None:
    with pytest.raises(PegError, match="at least one trigger_rule"):
        peg.json().to_grammar(lazy=True)
    with pytest.raises(PegError, match="must start with a literal"):
        peg.trigger_rule("t", peg.json()).to_grammar(lazy=True)


def test_raw_schemas_are_unquoted_strings() -> None:
    def value_grammar(schema: object) -> Grammar:
        value = peg.schema(peg.until("</p>"), "value", schema, raw=True)
        return ("<p>" + value + "</p>").to_grammar()

    g = value_grammar({"type": "string", "enum": ["celsius", "fahrenheit"]})
    assert accepts(g, "<p>celsius</p>") and not accepts(g, '<p>"celsius"</p>')
    g = value_grammar({"type": "string"})  # any text: the until() delimits it
    assert accepts(g, '<p>a "quoted" text</p>') and not accepts(g, "<p>a</p></p>")
    g = value_grammar({"type": "string", "pattern": "^[0-9]{3}$"})
    assert accepts(g, "<p>123</p>") and not accepts(g, "<p>12</p>")
    g = value_grammar({"type": "integer"})  # not a string: its JSON grammar
    assert accepts(g, "<p>42</p>") and not accepts(g, "<p>4.5</p>")
    g = value_grammar({"const": "x"})
    assert accepts(g, "<p>x</p>") and not accepts(g, "<p>y</p>")


def test_a_bad_schema_is_a_peg_error_naming_it() -> None:
    p = peg.schema(peg.json(), "args", {"type": "object", "minProperties": "x"})
    with pytest.raises(PegError, match="schema 'args'"):
        p.to_grammar()


def test_schema_names_must_be_unique() -> None:
    a = peg.schema(peg.json(), "args", {"type": "integer"})
    b = peg.schema(peg.json(), "args", {"type": "string"})
    assert "args ::=" in (a + "," + a).to_grammar().to_gbnf()  # the same node twice is fine
    with pytest.raises(PegError, match="two different schema"):
        (a + "," + b).to_grammar()
    with pytest.raises(PegError, match="name of a rule"):
        (peg.rule("args", "x") + a).to_grammar()


@pytest.mark.parametrize(
    ("parser", "unit", "counts"),
    [
        (peg.chars("[a]", 0, 10**6), "a", {0: True, 999: True, 1000: True, 12_345: True}),
        (peg.chars("[a]", 10_001, 10_003), "a", {10_000: False, 10_001: True, 10_003: True,
                                                 10_004: False}),
        (peg.chars("[a]", 12_345, None), "a", {12_344: False, 12_345: True, 13_000: True}),
        (peg.repeat("ab", 2, 2**70), "ab", {1: False, 2: True, 1_500: True}),
        (peg.chars("[a]", 3, 12_000), "a", {2: False, 3: True, 999: True, 1_000: True,
                                            12_000: True, 12_001: False}),
        (peg.chars("[a]", 9_500, 10_200), "a", {9_499: False, 9_500: True, 10_200: True,
                                                10_201: False}),
    ],
)
def test_a_bound_past_max_repetition_has_a_grammar(
    parser: peg.Parser, unit: str, counts: dict[int, bool]
) -> None:
    """The parser takes any bound, its grammar raised PegError ('repetition bound 1000000
    ... raise it with gbnfkit.Limits', which to_grammar has no way to take). Bounds above
    10,000 are written in blocks of 1,000: the same counts, and the text parses back."""
    grammar = parser.to_grammar()
    assert Grammar.from_gbnf(grammar.to_gbnf()) == grammar
    for count, accepted in counts.items():
        assert accepts(grammar, unit * count) is accepted, count
        assert (parser + peg.end()).parse(unit * count).status is (
            peg.ParseStatus.SUCCESS if accepted else peg.ParseStatus.FAIL
        )


@pytest.mark.parametrize(
    ("lo", "hi"),
    [(3, 12_000), (0, 10**6), (9_500, 10_200), (12_345, None), (20_000, 20_000), (1, 10**8)],
)
def test_a_large_count_has_the_schema_converters_grammar(lo: int, hi: int | None) -> None:
    """One plan of blocks and branches (``grammar/_counts.py``) for both: the PEG
    grammar re-implemented the converter's and lacked its short-minimum branch (a
    minimum under 16 written in the first branch, not as a row before the blocks), and
    both split a count less than a block past 10,000 into ``{0,-1}`` blocks."""
    from gbnfkit.schema._numbers import repeat

    grammar = peg.chars("[a]", lo, hi).to_grammar()
    assert grammar == Grammar.from_gbnf("root ::= " + repeat("[a]", lo, hi))
