"""Whatever the text, parsing gives a GrammarIR or a GrammarError, nothing else."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from gbnfkit import GrammarError
from gbnfkit.grammar import GrammarIR, normalize, parse_gbnf
from gbnfkit.grammar._llama_leftrec import llama_left_recursion
from gbnfkit.grammar._parser import raw_rules
from gbnfkit.grammar._printer import to_gbnf

_TOKENS = st.sampled_from(
    [
        "root", " ::= ", "::=", "::", "=", "x", "a-b", "my_rule", "2nd", " ", "\t", "\n",
        "\r\n", "\r", "|", "(", ")", "*", "+", "?", "{", "}", ",", "{2}", "{1,3}", "{0,}",
        "{,2}", "{3,1}", '"', '"a"', '""', '"\\', "\\x41", "\\u00e9", "\\U0001F600",
        "\\UFFFFFFFF", "\\n", "\\q", "\\x4", "[", "]", "^", "-", "[a-z]", "[^\\n]", "[]",
        "[z-a]", ".", "#", "# note\n", "é", "😀", "\x00", "root ::= ", "\nx ::= ", "x ::= x",
    ]
)  # fmt: skip


_ITEMS = st.sampled_from(
    ['"a"', '"\\n"', '""', "[a-c]", "[^x]", ".", "x", "root", "(", ")", "|", "*", "+", "?",
     "{2}", "{0,3}", "{1,}", '("a" | x)', '"b"?', "x*", "(", ")", "\n  | ", "|\n  "]
)  # fmt: skip


@st.composite
def _rules(draw: st.DrawFn) -> str:
    """Rules that are mostly well formed, so parsing gets to the checks."""
    names = ["root", *draw(st.lists(st.sampled_from(["x", "y", "a-1"]), max_size=2))]
    lines = [f"{name} ::= " + " ".join(draw(st.lists(_ITEMS, max_size=8))) for name in names]
    return "\n".join(lines)


def _outcome(text: str) -> None:
    try:
        ir = parse_gbnf(text)
    except GrammarError as err:
        assert err.message
        assert err.source is None or err.source == text
        if err.line is not None:
            assert err.column is not None and err.column >= 1
            # lines end at \n, \r\n or a lone \r (where rules end)
            assert 1 <= err.line <= len(re.split(r"\r\n?|\n", text))
            assert err.excerpt
        str(err)  # renders
        return
    assert isinstance(ir, GrammarIR) and "root" in ir.rules
    # the canonical rules the parser builds as it goes are the raw tree, normalized
    raw = raw_rules(text)
    assert ir.rules == {name: normalize(body) for name, body in raw.items()}
    # the parser runs llama.cpp's exact check only where a shortcut says it could refuse
    assert llama_left_recursion(raw, exact=True) is None
    assert parse_gbnf(to_gbnf(ir)) == ir


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60))
def test_any_text(text: str) -> None:
    _outcome(text)


@settings(max_examples=400, deadline=None)
@given(st.lists(_TOKENS, max_size=25).map("".join))
def test_gbnf_like_text(text: str) -> None:
    _outcome(text)


@settings(max_examples=200, deadline=None)
@given(st.lists(_TOKENS, max_size=20).map(lambda tokens: "root ::= " + "".join(tokens)))
def test_text_after_a_root_rule(text: str) -> None:
    _outcome(text)


@settings(max_examples=400, deadline=None)
@given(_rules())
def test_rule_shaped_text(text: str) -> None:
    _outcome(text)
