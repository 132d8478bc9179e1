"""GBNF syntax, as llama.cpp defines it, and the IR the parser produces."""

from __future__ import annotations

import pytest

from gbnfkit import Grammar, GrammarError, Limits
from gbnfkit.grammar import (
    ANY,
    Alt,
    CharClass,
    GrammarIR,
    Literal,
    Repeat,
    RuleRef,
    Seq,
    parse_gbnf,
)


def body(text: str, name: str = "root") -> object:
    return parse_gbnf(text).rules[name]


def error(text: str, **kwargs: object) -> GrammarError:
    with pytest.raises(GrammarError) as info:
        parse_gbnf(text, **kwargs)  # type: ignore[arg-type]
    return info.value


def cls(*ranges: tuple[str, str], negated: bool = False) -> CharClass:
    return CharClass.of([(ord(a), ord(b)) for a, b in ranges], negated)


# -- items ---------------------------------------------------------------------------


def test_literal_sequence_alternatives_and_rule_refs() -> None:
    ir = parse_gbnf('root ::= "a" x | "b"\nx ::= "c"')
    assert ir == GrammarIR(
        {"root": Alt((Seq((Literal("a"), RuleRef("x"))), Literal("b"))), "x": Literal("c")}
    )
    assert ir.root == "root"


def test_adjacent_literals_merge_and_empty_literals_vanish() -> None:
    assert body('root ::= "ab" "" "c" ""') == Literal("abc")
    assert body('root ::= ""') == Seq(())
    assert body('root ::= "" "a" "" | ""') == Alt((Literal("a"), Seq(())))


def test_groups_flatten_where_the_meaning_is_the_same() -> None:
    assert body('root ::= ("a" ("b" "c")) "d"') == Literal("abcd")
    assert body('root ::= "a" | ("b" | ("c"))') == Alt((Literal("a"), Literal("b"), Literal("c")))
    assert body('root ::= x ("a" | "b")\nx ::= "x"') == Seq(
        (RuleRef("x"), Alt((Literal("a"), Literal("b"))))
    )
    assert body('root ::= "<" ( ) ">" ()') == Literal("<>")


def test_repetition_operators() -> None:
    a = Literal("a")
    assert body('root ::= "a"*') == Repeat(a, 0, None)
    assert body('root ::= "a"+') == Repeat(a, 1, None)
    assert body('root ::= "a"?') == Repeat(a, 0, 1)
    assert body('root ::= "a"{3}') == Repeat(a, 3, 3)
    assert body('root ::= "a"{2,}') == Repeat(a, 2, None)
    assert body('root ::= "a"{2,5}') == Repeat(a, 2, 5)
    assert body('root ::= "a"{ 1 , 2 }') == Repeat(a, 1, 2)
    assert body('root ::= "a"{0} "b"') == Seq((Repeat(a, 0, 0), Literal("b")))


def test_repetition_applies_to_the_whole_previous_item() -> None:
    assert body('root ::= "x" "ab"*') == Seq((Literal("x"), Repeat(Literal("ab"), 0, None)))
    assert body('root ::= ("a" | "b")+') == Repeat(Alt((Literal("a"), Literal("b"))), 1, None)
    assert body('root ::= "a"*?') == Repeat(Repeat(Literal("a"), 0, None), 0, 1)


def test_character_classes() -> None:
    assert body("root ::= [a-cx]") == cls(("a", "c"), ("x", "x"))
    assert body("root ::= [^a-c]") == cls(("a", "c"), negated=True)
    assert body("root ::= [cba]") == cls(("a", "c"))
    assert body("root ::= [a-] [-b]") == Seq(
        (cls(("-", "-"), ("a", "a")), cls(("-", "-"), ("b", "b")))
    )
    assert body("root ::= [\\]\\[\\-\\\\]") == CharClass.of(
        [(0x5D, 0x5D), (0x5B, 0x5B), (0x2D, 0x2D), (0x5C, 0x5C)]
    )
    assert body("root ::= [a^]") == cls(("^", "^"), ("a", "a"))
    assert body("root ::= [^^]") == cls(("^", "^"), negated=True)
    assert body("root ::= .") == ANY


def test_escapes_in_literals_and_classes() -> None:
    assert body('root ::= "\\x41\\u00e9\\U0001F600\\t\\r\\n\\\\\\"\\[\\]\\-"') == Literal(
        'A\u00e9\U0001f600\t\r\n\\"[]-'
    )
    assert body("root ::= [\\x00-\\x1F]") == CharClass.of([(0, 0x1F)])
    assert body('root ::= "\\xFF"') == Literal("\u00ff")  # a code point, not a byte


def test_code_points_above_unicode_stay_unmatchable_classes() -> None:
    assert body('root ::= "a\\UFFFFFFFFb"') == Seq(
        (Literal("a"), CharClass.of([(0xFFFFFFFF, 0xFFFFFFFF)]), Literal("b"))
    )


def test_raw_newline_multibyte_and_non_bmp_characters() -> None:
    assert body('root ::= "a\nb"') == Literal("a\nb")
    assert body('root ::= "日本" [😀-🙏]') == Seq(
        (Literal("日本"), CharClass.of([(0x1F600, 0x1F64F)]))
    )


def test_rule_names_use_letters_digits_and_dashes() -> None:
    ir = parse_gbnf('root ::= part-1 2nd\npart-1 ::= "p"\n2nd ::= "two"')
    assert list(ir.rules) == ["root", "part-1", "2nd"]


# -- layout ----------------------------------------------------------------------------


def test_newlines_comments_and_continuations() -> None:
    text = (
        "# a comment\n"
        'root ::=\n  "a" |   # after a bar the rule continues\n'
        '  "b" (\n  "c"\n  | "d"\n  )\n'
        "\n"
        'x ::= "x"  # trailing comment\n'
    )
    ir = parse_gbnf(text)
    assert ir.rules["root"] == Alt(
        (Literal("a"), Seq((Literal("b"), Alt((Literal("c"), Literal("d"))))))
    )
    assert ir.positions == {"root": (2, 1), "x": (9, 1)}


def test_crlf_line_endings() -> None:
    ir = parse_gbnf('root ::= "one" |\r\n  "two"\r\nextra ::= "unused"\r\n')
    assert ir.rules == {"root": Alt((Literal("one"), Literal("two"))), "extra": Literal("unused")}
    assert ir.positions["extra"] == (3, 1)


def test_a_lone_carriage_return_is_a_line_break_in_positions_too() -> None:
    # the parser ends a rule at a lone '\r' (as llama.cpp does), so lines and excerpts
    # count it as a line break: the position was (1, 26) and the excerpt printed the whole
    # text with its raw '\r'
    ir = parse_gbnf('root ::= "a"\rx ::= "b"\r\ny ::= "c"\n\rz ::= "d"')
    assert ir.positions == {"root": (1, 1), "x": (2, 1), "y": (3, 1), "z": (5, 1)}
    with pytest.raises(GrammarError) as info:
        parse_gbnf('root ::= "a"\rfoo ::= "b" @\rbar ::= "c"')
    assert (info.value.line, info.value.column) == (2, 13)
    assert info.value.excerpt == 'foo ::= "b" @\n            ^'
    with pytest.raises(GrammarError, match=r"defined twice \(lines 1 and 2\)"):
        parse_gbnf('root ::= "a"\rroot ::= "b"')


def test_trailing_bar_is_an_empty_alternative_at_the_end() -> None:
    assert body('root ::= "b" |') == Alt((Literal("b"), Seq(())))


def test_custom_start_rule() -> None:
    ir = parse_gbnf('start ::= "s"', root="start")
    assert ir.root == "start"


# -- errors ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "fragment", "line", "column"),
    [
        ('root ::= "\\q"', "unknown escape \\q", 1, 11),
        ('root ::= "\\/"', "unknown escape \\/", 1, 11),
        ('root ::= "\\x4"', "2 hex digits", 1, 11),
        ('root ::= "\\u12G4"', "4 hex digits", 1, 11),
        ("root ::= [\\U0001F60]", "8 hex digits", 1, 11),
        ('root ::= "abc\\"', "unterminated string", 1, 10),
        ("root ::= [a-", "unterminated character class", 1, 10),
        ("root ::= [ab", "unterminated character class", 1, 10),
        ('root = "a"', "expected '::='", 1, 6),
        ('root ::= a\na := "x"', "expected '::='", 2, 3),
        ('::= "a"', "rule name", 1, 1),
        ('root ::= "a"\n  | "b"', "cannot start with '|'", 2, 3),
        ('root ::= ( "a" | "b"', "never closed", 1, 10),
        ('root ::= "a" )', "unbalanced ')'", 1, 14),
        ('root ::= ( "a" ; )', "inside a group", 1, 16),
        ('root ::= * "a"', "nothing to repeat", 1, 10),
        ('root ::= ""+', "nothing to repeat", 1, 12),
        ('root ::= "a"{0}*', "nothing to repeat", 1, 16),
        ('root ::= "a"{,3}', "{,n} is not allowed", 1, 14),
        ('root ::= "a"{2,3', "expected '}'", 1, 17),
        ('root ::= "a"{2 x}', "expected ',' or '}'", 1, 16),
        ('root ::= "a" ; "b"', "unexpected ';'", 1, 14),
        ('x ::= "b" |\ny ::= "c"\nroot ::= x', "ran on into this line", 2, 3),
        ('root ::= "a\x00"', "NUL", 1, 12),
    ],
)
def test_syntax_errors_have_position_and_advice(
    text: str, fragment: str, line: int, column: int
) -> None:
    err = error(text)
    assert fragment in err.message
    assert (err.line, err.column) == (line, column)
    assert err.source == text
    caret = err.excerpt.splitlines()[-1]
    assert caret == " " * (column - 1) + "^"


def test_underscore_in_a_rule_name_suggests_a_dash() -> None:
    err = error('root ::= my_rule\nmy_rule ::= "a"')
    assert "'my-rule'" in err.message and (err.line, err.column) == (1, 12)
    err = error('my_rule ::= "a"')
    assert "'my-rule'" in err.message and (err.line, err.column) == (1, 3)


def test_error_message_renders_the_excerpt() -> None:
    err = error('root ::= "a"\nx ::= "b" ; "c"')
    assert str(err).endswith('x ::= "b" ; "c"\n          ^')
    assert "line 2, column 11" in str(err)


def test_the_caret_stands_under_the_column_after_wide_and_combining_characters() -> None:
    # it was placed by code points, so it stood left of the column after CJK and emoji
    # (two terminal columns each) and right of it after a combining accent (none)
    err = error('root ::= "日本語" 🤗 x')
    assert err.column == 16 and err.excerpt == 'root ::= "日本語" 🤗 x\n                  ^'
    err = error('root ::= "e\u0301" x')
    assert err.excerpt.endswith('\n             ^') and err.column == 15


@pytest.mark.parametrize("text", ["", "   \n\t\n", "# nothing\n\n  # still nothing\n"])
def test_empty_grammar(text: str) -> None:
    err = error(text)
    assert "empty grammar" in err.message and err.line is None


def test_non_string_input_is_a_grammar_error() -> None:
    with pytest.raises(GrammarError, match="must be a str"):
        parse_gbnf(b'root ::= "a"')  # type: ignore[arg-type]


def test_deep_nesting_is_refused_cleanly() -> None:
    err = error("root ::= " + "(" * 300 + '"a"' + ")" * 300)
    assert "nested" in err.message
    err = error('root ::= "x"\nlong ::= "a"' + "?" * 5000)
    assert "nested too deeply" in err.message and err.rules == ("long",) and err.line == 2
    assert body('root ::= "a"' + "?" * 150) is not None
    # 99 groups pass the parentheses' bound (100) but not the levels' (200, two a
    # group): the message says how groups count, not "200 levels of groups"
    err = error("root ::= " + "(" * 99 + '"a"' + ")" * 99)
    assert "a group of parentheses counting two" in err.message
    assert body("root ::= " + "(" * 98 + '"a"' + ")" * 98) is not None


# -- deliberate divergences from llama.cpp ----------------------------------------------


def test_reversed_range_is_an_error() -> None:
    err = error("root ::= [z-a]")
    assert err.message.startswith("reversed range z-a") and "did you mean a-z?" in err.message
    assert (err.line, err.column) == (1, 11)


def test_min_above_max_is_an_error() -> None:
    err = error('root ::= "a"{3,2}')
    assert "did you mean {2,3}?" in err.message


@pytest.mark.parametrize("text", ['root ::= "x" [] "y"', "root ::= [^]"])
def test_empty_class_is_an_error(text: str) -> None:
    assert "empty" in error(text).message


@pytest.mark.parametrize(
    ("text", "start"),
    [
        # llama.cpp's own error wins over the divergence, as llama.cpp reports it
        ("root ::= [z-a] x", "undefined rule 'x'"),
        ("root ::= [^] x", "undefined rule 'x'"),
        ("Root ::= [z-a]", "no rule named 'root'"),
        ("root ::= root [z-a]", "left recursion"),
        ('root ::= [] root "a" | "b"', "left recursion"),  # [] is no element at all
        ('root ::= x\nx ::= [] [^] x "y" | [z-a]', "left recursion"),
        # a later syntax error: the divergence, a syntax error too, comes first
        ('root ::= [z-a] "a', "reversed range z-a"),
        ('root ::= [] "a" ::=', "empty character class"),
        ("root ::= [z-a] [b-a]", "reversed range z-a"),
        ("root ::= []*", "empty character class"),
        ("root ::= [z-a] (((", "reversed range z-a"),
    ],
)
def test_divergences_leave_llama_errors_first(text: str, start: str) -> None:
    """A grammar llama.cpp refuses is refused in llama.cpp's category even when it
    also holds one of gbnfkit's own errors (found with the real llama.cpp)."""
    assert error(text).message.startswith(start)


def test_divergences_are_refused_by_every_parse_entry() -> None:
    from gbnfkit import peg
    from gbnfkit.grammar._parser import parse_fragment, raw_rules

    for text in ("[z-a]", "[]", "[^]", '"a" [z-a] "b"'):
        assert parse_fragment(text) is None
        with pytest.raises(GrammarError):
            raw_rules(f"root ::= {text}")
    with pytest.raises(peg.PegError):
        peg.chars("[z-a]")


@pytest.mark.parametrize("text", ['root ::= "a" x{0}', 'root ::= "a" | x{0,0}'])
def test_undefined_rule_under_zero_repetitions_is_an_error(text: str) -> None:
    """Divergence 8: llama.cpp drops the reference and builds these."""
    err = error(text)
    assert err.message.startswith("undefined rule 'x'") and err.rules == ("x",)


def test_rule_defined_twice_names_both_lines() -> None:
    err = error('root ::= x\nx ::= "first"\nx ::= "second"')
    assert "lines 2 and 3" in err.message and err.rules == ("x",) and err.line == 3


def test_repetition_bounds_are_exact_and_limited() -> None:
    assert body('root ::= "a"{0,2001}') == Repeat(Literal("a"), 0, 2001)
    assert body('root ::= "a"{2500}') == Repeat(Literal("a"), 2500, 2500)
    assert body('root ::= ("a" "b"? "c"?){1000}') == Repeat(
        Seq((Literal("a"), Repeat(Literal("b"), 0, 1), Repeat(Literal("c"), 0, 1))), 1000, 1000
    )
    err = error('root ::= "a"{0,11}', limits=Limits(max_repetition=10))
    assert "max_repetition=10" in err.message
    err = error('root ::= "a"{99999999999999999999999}')
    assert "max_repetition" in err.message


def test_a_repetition_bound_with_many_leading_zeros_is_its_value() -> None:
    """llama.cpp reads ``{0000000000000000000002}`` as 2 (std::stoul); more than 18 digits
    were refused as a bound above max_repetition, whatever their value (found by bughunt8)."""
    from gbnf_llama_reference import llama_verdict

    text = 'root ::= "a"{0000000000000000000002, 00000000000000000000000000003}'
    assert llama_verdict(text) is None
    grammar = Grammar.from_gbnf(text)
    assert grammar == Grammar.from_gbnf('root ::= "a"{2,3}')
    with pytest.raises(GrammarError, match="above the limit max_repetition") as info:
        Grammar.from_gbnf('root ::= "a"{0001000000000000000000000}')
    assert (info.value.line, info.value.column) == (1, 13)
