"""Regular expressions to grammars: same language as Python's ``re`` (ASCII subjects)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gbnfkit import (
    ArgumentError,
    Grammar,
    GrammarError,
    SchemaError,
    json_schema_to_gbnf,
    regex_to_gbnf,
)

PATTERNS = [
    r"^[a-z]+$",
    r"[A-Z]{2}-[0-9]{3,5}(-[a-z]+)?",
    r"(cat|dog)s?",
    r"\d{3}\.\w+",
    r"a*?b+?c??",
    r"(?:ab|a)(?P<x>c|)\d{0,2}",
    r"[^a-c]\D\W\S",
    r"x{2,}y{,2}",
    r"[\d\-_.]+@[a-z]+\.(com|org)",
    r"\x41\u0042[\t ]",
    r"(a|b)*abb",
    r"a{3}",
    r"\s*\w+\s*",
    r".?\.",
]
ALPHABET = "abcxyABCZ019-_.@ \t\n"


@pytest.fixture(scope="module")
def grammars() -> dict[str, Grammar]:
    return {p: Grammar.from_regex(p) for p in PATTERNS}


@settings(max_examples=150, deadline=None)
@given(text=st.text(alphabet=ALPHABET, max_size=8), index=st.integers(0, len(PATTERNS) - 1))
def test_fullmatch_language(grammars: dict[str, Grammar], text: str, index: int) -> None:
    pattern = PATTERNS[index]
    expected = re.fullmatch(pattern, text) is not None
    assert (grammars[pattern].match(text).status.value == "accept") == expected


@settings(max_examples=60, deadline=None)
@given(st.from_regex(r"[A-Z]{2}-[0-9]{3,5}(-[a-z]+)?", fullmatch=True))
def test_generated_matches_accepted(grammars: dict[str, Grammar], text: str) -> None:
    assert grammars[PATTERNS[1]].match(text).status.value == "accept"


def test_search_mode_is_unanchored() -> None:
    g = Grammar.from_gbnf(regex_to_gbnf("[0-9]+", search=True))
    assert g.match("ab12cd").status.value == "accept"
    assert g.match("abcd").status.value == "prefix"
    g = Grammar.from_gbnf(regex_to_gbnf("^ab|cd$", search=True))
    assert g.match("abzz").status.value == "accept"
    assert g.match("zzcd").status.value == "accept"
    assert g.match("zabz").status.value != "accept"


@pytest.mark.parametrize(
    ("pattern", "fragment"),
    [
        ("(?=a)b", "lookaround"),
        ("(?<!a)b", "lookaround"),
        (r"(a)\1", "backreference"),
        ("(?P<n>a)(?P=n)", "backreference"),
        (r"\bword", "word boundar"),
        ("a^b", "'^'"),
        ("a$b", "'$'"),
        ("(?i)abc", "flags"),
        (r"\p{L}", "Unicode property"),
        ("a++", "possessive"),
        ("(ab", "missing ')'"),
        ("[abc", "unterminated"),
        ("*a", "nothing to repeat"),
        # \c takes an ASCII letter (ECMA-262; re has no \c): not é (233 % 32 would be a tab)
        ("\\cé", "unknown escape"),
        ("[\\cé]", "unknown escape"),
        # an escaped letter or digit with no meaning stays an error (ECMA-262 with the u flag)
        (r"\q", "unknown escape"),
        (r"[\q]", "unknown escape"),
        (r"\é", "unknown escape"),
    ],
)
def test_unsupported_constructs_raise(pattern: str, fragment: str) -> None:
    with pytest.raises(GrammarError) as info:
        regex_to_gbnf(pattern)
    assert fragment in info.value.message
    assert info.value.column is not None


def test_unicode_escapes_and_classes() -> None:
    g = Grammar.from_regex(r"\u00e9[\u4e00-\u9fff]+\U0001F600?")
    assert g.match("é中文😀").status.value == "accept"
    assert g.match("éa").status.value == "reject"
    g = Grammar.from_regex(r"[^\n]+")
    assert g.match("a\nb").status.value == "reject"
    assert g.match("日本").status.value == "accept"


def test_dot_excludes_line_terminators() -> None:
    g = Grammar.from_regex("a.c")
    assert g.match("abc").status.value == "accept"
    assert g.match("a\nc").status.value == "reject"


@settings(max_examples=100, deadline=None)
@given(text=st.text(alphabet="abcx-01", max_size=6),
       pattern=st.sampled_from(["^x-", "ab|c$", "^[a-z]+$", "[0-9]{2}", "^(a|b)*c?$", ""]))
def test_complement_automaton(text: str, pattern: str) -> None:
    from gbnfkit.schema import SchemaLimits
    from gbnfkit.schema._dfa import complement_grammar
    from gbnfkit.schema._gbnf import RuleTable, char_class
    from gbnfkit.schema._regex_parse import parse_regex

    table = RuleTable()
    table.fresh("root")
    name = complement_grammar(parse_regex(pattern), table, lambda r: char_class(r), "k",
                              SchemaLimits())
    assert name is not None
    table.define("root", name)
    accepted = Grammar.from_gbnf(table.text()).match(text).status.value == "accept"
    assert accepted == (re.search(pattern, text) is None)


@pytest.mark.parametrize("pattern", [r"[a-z]+(|\.[a-z]+)*", r"(a?b?)*c", r"(a*|b)+",
                                     r"(x?){2,3}y", r"(()|a)*", r"(a|)+b"])
def test_repeated_nullable_items(pattern: str) -> None:
    """GBNF refuses a repeated item that can be empty; the converter rewrites it."""
    import itertools

    g = Grammar.from_regex(pattern)
    for n in range(4):
        for chars in itertools.product("abcxy.", repeat=n):
            text = "".join(chars)
            expected = re.fullmatch(pattern, text) is not None
            assert (g.match(text).status.value == "accept") == expected, text


@pytest.mark.parametrize(
    ("pattern", "accepted", "rejected"),
    [
        # str.isdigit takes these, int() only the first: re and ECMA-262 read literal braces
        ("a{٣}", "a{٣}", "aaa"),
        ("a{²}", "a{²}", "aa"),
        ("a{1,٣}", "a{1,٣}", "a"),
    ],
)
def test_braces_without_ascii_digits_are_literal(
    pattern: str, accepted: str, rejected: str
) -> None:
    assert re.fullmatch(pattern, accepted) and not re.fullmatch(pattern, rejected)
    grammar = Grammar.from_regex(pattern)
    assert grammar.match(accepted).status.value == "accept"
    assert grammar.match(rejected).status.value != "accept"


@pytest.mark.parametrize("count", ["4294967296", "1," + "9" * 20, "9" * 5000])
def test_a_count_re_cannot_hold_is_a_grammar_error(count: str) -> None:
    with pytest.raises(GrammarError, match="repetition number is too large"):
        regex_to_gbnf("a{" + count + "}")
    # the schema converter checks the pattern with re first: one SchemaError as well
    with pytest.raises(SchemaError, match="invalid regular expression"):
        json_schema_to_gbnf({"type": "string", "pattern": "^a{" + count + "}$"})


_ATOMS = st.sampled_from(["a", "b", "(?:ab|a)", "[ab]", "x", "\\{", "{", "}", ""])
_BRACES = st.text(alphabet="012,٣²x", max_size=4).map(lambda s: "{" + s + "}")
_QUANTIFIERS = st.one_of(
    st.sampled_from(["", "?", "*", "+", "??"]), _BRACES, _BRACES.map(lambda b: b + "?")
)
# '{,}' is left out: Python's re reads it as '*', gbnfkit (as ECMA-262) as a literal
_BRACED_PATTERNS = (
    st.lists(st.tuples(_ATOMS, _QUANTIFIERS).map("".join), max_size=4)
    .map("".join)
    .filter(lambda p: "{,}" not in p)
)


@settings(max_examples=150, deadline=None)
@given(
    _BRACED_PATTERNS,
    st.lists(st.text(alphabet="ab{}1,٣²x02", max_size=6), max_size=6),
    st.data(),
)
def test_quantifier_braces_read_as_re_reads_them(
    pattern: str, texts: list[str], data: st.DataObject
) -> None:
    """Patterns full of braces (quantifiers, literal braces, odd digits): when both ``re``
    and gbnfkit take one, they accept the same texts."""
    try:
        compiled = re.compile(pattern)
    except (re.error, OverflowError):
        return
    try:
        grammar = Grammar.from_regex(pattern)
    except GrammarError:
        return
    texts += [data.draw(st.from_regex(compiled, fullmatch=True)) for _ in range(2)]
    for text in texts:
        expected = compiled.fullmatch(text) is not None
        assert (grammar.match(text).status.value == "accept") == expected, (pattern, text)


def test_grammar_from_regex_search_finds_the_pattern_inside() -> None:
    whole = Grammar.from_regex(r"ab+")
    inside = Grammar.from_regex(r"ab+", search=True)
    assert whole.match("abb").accepted and not whole.match("xabbx").accepted
    assert inside.match("xabbx").accepted and not inside.match("xa").accepted
    with pytest.raises(ArgumentError):
        Grammar.from_regex(r"ab+", search="yes")  # type: ignore[arg-type]


@pytest.mark.parametrize(("pattern", "column"), [("xy{200000}", 3), ("(ab|c{0,100001}?)", 6)])
def test_a_count_above_max_repetition_is_refused_where_the_pattern_has_it(
    pattern: str, column: int
) -> None:
    """The GBNF parser refused it, so the error's line, column and excerpt were those of
    the generated GBNF text (found by bughunt8)."""
    from gbnfkit import Limits

    with pytest.raises(GrammarError, match="max_repetition=100000") as info:
        Grammar.from_regex(pattern)
    assert (info.value.line, info.value.column, info.value.source) == (1, column, pattern)
    bigger = Limits(max_repetition=200_001)
    assert Grammar.from_regex(pattern, limits=bigger).limits is bigger
    assert "{1000}" in regex_to_gbnf(pattern)  # counts above 10,000 are written in blocks


@pytest.mark.parametrize(
    ("pattern", "text", "search"),
    [(".", "\r", False), (".", "\u2028", False), (r"\d", "٣", False), (r"\w", "é", False),
     (r"\s", "\x1c", False), (r"\s", "\x85", False), (r"\s", "\ufeff", False),
     ("a$", "a\n", True)],
)
def test_where_ecma_reads_characters_otherwise_than_re(
    pattern: str, text: str, search: bool
) -> None:
    """The ECMA-262 readings docs/schema.md lists (the docs said only re.fullmatch /
    re.search; found by bughunt8): the grammar and re disagree on exactly these."""
    python = (re.search if search else re.fullmatch)(pattern, text) is not None
    grammar = Grammar.from_regex(pattern, search=search).match(text).status.value == "accept"
    assert grammar != python


@pytest.mark.parametrize(
    ("pattern", "column"), [("{2}", 1), ("a|{1,3}", 3), ("(?:{2})", 4), ("^{2}", 2), ("{,2}", 1)]
)
def test_a_count_with_nothing_before_it_is_an_error(pattern: str, column: int) -> None:
    """re and ECMA-262 both refuse it ('nothing to repeat'); it was read as literal
    text, so a JSON Schema pattern '^{2}$' matched the text '{2}' (found by bughunt8)."""
    with pytest.raises(re.error, match="nothing to repeat"):
        re.compile(pattern)
    with pytest.raises(GrammarError, match="nothing to repeat") as info:
        regex_to_gbnf(pattern)
    assert info.value.column == column
    with pytest.raises(SchemaError, match="pattern"):
        json_schema_to_gbnf({"type": "string", "pattern": pattern})
    assert Grammar.from_regex("{x}|{").match("{x}").status.value == "accept"


def test_a_schema_pattern_count_above_the_grammar_limit_is_held_exactly() -> None:
    # the count went into the GBNF text as it was, and the grammar's max_repetition
    # (100,000) refused the converted text with an excerpt of GBNF the user never wrote
    g = Grammar.from_json_schema({"type": "string", "pattern": "^a{200000}$"})
    assert "200000" not in g.to_gbnf()
    g = Grammar.from_json_schema({"type": "string", "pattern": "^(ab){10001,10002}$"})
    for n, ok in ((10000, False), (10001, True), (10002, True), (10003, False)):
        assert g.match('"' + "ab" * n + '"').accepted is ok, n


@pytest.mark.parametrize(
    ("pattern", "accepted", "rejected"),
    [
        (r"^[\w\.\d\_]+$", ["a_b.1", "_"], ["a-b", "a b", ""]),
        (r"\_x\-\!\,", ["_x-!,"], ["\\_x-!,", "x-!,"]),
        (r"[\_\-]+", ["_-_"], ["a", "\\"]),
    ],
)
def test_identity_escapes_read_as_the_character(
    pattern: str, accepted: list[str], rejected: list[str]
) -> None:
    """ECMA-262 Annex B: an escaped character that is not a letter or digit is itself
    (MaskBench o47670's key pattern '^[\\w\\.\\d\\_]+$'); re reads them the same way."""
    g = Grammar.from_regex(pattern)
    for text in accepted:
        assert re.fullmatch(pattern, text) and g.match(text).status.value == "accept", text
    for text in rejected:
        assert not re.fullmatch(pattern, text) and g.match(text).status.value != "accept", text
