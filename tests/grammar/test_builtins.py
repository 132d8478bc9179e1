"""The builtin grammars accept real samples and reject broken ones."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gbnfkit import Grammar, GrammarError
from gbnfkit.grammar._builtins import builtin_names, builtin_text


def status(name: str, text: str) -> tuple[str, int | None]:
    result = Grammar.builtin(name).match(text)
    return str(result.status), result.position


def test_names_and_unknown_name() -> None:
    assert builtin_names() == ("json", "json_arr", "arithmetic", "list", "chess", "c", "english")
    with pytest.raises(GrammarError) as info:
        builtin_text("yaml")
    assert "unknown builtin grammar 'yaml'" in info.value.message
    assert all(name in info.value.message for name in builtin_names())


@pytest.mark.parametrize("name", builtin_names())
def test_every_builtin_is_documented_and_builds(name: str) -> None:
    text = builtin_text(name)
    assert text.startswith("#")  # a comment says what the grammar is for
    Grammar.builtin(name)


# -- json ------------------------------------------------------------------------------

JSON_ACCEPT = [
    "0", "-0", "12.5e+3", "1E-2", '"a\\"b\\\\c\\/\\b\\f\\n\\r\\t\\u00e9\\uD83D"', '"日本😀"',
    "true", "false", "null", "[]", "{}", ' [ 1 , "x" , [ ] , { } ] ', '{"a":{"b":[null]}}',
    '{\n\t"k": 1,\r\n  "k": 2\n}', "\n\t 7 \r\n",
]  # fmt: skip
JSON_REJECT = [
    ("01", 1), ("+1", 0), (".5", 0), ("1.e3", 2), ("[1,]", 3), ("{,}", 1), ('{"a" 1}', 5),
    ("'x'", 0), ('"a\tb"', 2), ('"\\x41"', 2), ("nul ", 3), ("[1 2]", 3), ('{"a":1,}', 7),
    ("NaN", 0), ("\u00a0 1", 0), ("1 2", 2),
]  # fmt: skip
JSON_PREFIX = ["", "[", '{"a"', '"abc', "-", "1.", "1e", "tru", "[1,", '"\\u00']


@pytest.mark.parametrize("text", JSON_ACCEPT)
def test_json_accepts(text: str) -> None:
    assert json.loads(text) is not None or text.strip() == "null"
    assert status("json", text) == ("accept", None)


@pytest.mark.parametrize(("text", "position"), JSON_REJECT)
def test_json_rejects(text: str, position: int) -> None:
    assert status("json", text) == ("reject", position)


@pytest.mark.parametrize("text", JSON_PREFIX)
def test_json_prefixes(text: str) -> None:
    assert status("json", text) == ("prefix", None)


_JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


def _python_json_accepts(text: str) -> bool:
    def refuse(constant: str) -> float:
        raise ValueError(constant)

    try:
        json.loads(text, parse_constant=refuse)
    except ValueError:
        return False
    return True


@settings(max_examples=120, deadline=None)
@given(
    _JSON_VALUES,
    st.sampled_from([None, 0, 2, "\t"]),
    st.booleans(),
    st.integers(0, 10_000),
    st.sampled_from(["", "x", ",", "]", "}", '"', "\\", "0", "\n", "\x01", "e", "-", "."]),
)
def test_json_agrees_with_python(
    value: object, indent: int | str | None, ascii_only: bool, where: int, insert: str
) -> None:
    text = json.dumps(value, indent=indent, ensure_ascii=ascii_only)
    assert status("json", text) == ("accept", None)
    # a mutation: delete or insert one character; accepted exactly when it is still JSON
    cut = where % (len(text) + 1)
    mutated = text[:cut] + insert + text[cut + (0 if insert else 1) :]
    accepted = status("json", mutated)[0] == "accept"
    assert accepted == _python_json_accepts(mutated), mutated


def test_json_arr() -> None:
    assert status("json_arr", ' [1, {"a": [true]}, "x"]\n') == ("accept", None)
    assert status("json_arr", "[]") == ("accept", None)
    assert status("json_arr", "[1") == ("prefix", None)
    assert status("json_arr", '{"a": 1}') == ("reject", 0)
    assert status("json_arr", "[1] [") == ("reject", 4)


# -- arithmetic --------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["1", "1 + 2 * 3", "(4.5 - -2) / 3", "-(7)", " 2*(3+4)-5 "])
def test_arithmetic_accepts(text: str) -> None:
    assert status("arithmetic", text) == ("accept", None)
    value = eval(text)  # noqa: S307 -- the grammar only allows arithmetic
    assert isinstance(value, (int, float)) and not math.isnan(value)


@pytest.mark.parametrize(
    ("text", "result"),
    [
        ("1 +", ("prefix", None)),
        ("(1", ("prefix", None)),
        ("1 + * 2", ("reject", 4)),
        ("1.", ("prefix", None)),
        ("a", ("reject", 0)),
        ("1 2", ("reject", 2)),
        ("())", ("reject", 1)),
    ],
)
def test_arithmetic_rejects(text: str, result: tuple[str, int | None]) -> None:
    assert status("arithmetic", text) == result


# -- list ----------------------------------------------------------------------------------


def test_list() -> None:
    assert status("list", "- milk\n- eggs and ham\n") == ("accept", None)
    assert status("list", "- milk\n- eg") == ("prefix", None)
    assert status("list", "") == ("prefix", None)
    assert status("list", "* milk\n") == ("reject", 0)
    assert status("list", "- \n") == ("reject", 2)
    assert status("list", "- a\n\n") == ("reject", 4)


# -- chess ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "1. e4",
        "1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. O-O",
        "1. d4 d5 2. c4 dxc4 3. e3 b5",
        "10. Qxf7# Kd8",
        "5. exd8=Q+ Nbd7 6. R1e2 O-O-O",
    ],
)
def test_chess_accepts(text: str) -> None:
    assert status("chess", text) == ("accept", None)


@pytest.mark.parametrize(
    ("text", "result"),
    [
        ("1. e9", ("reject", 4)),
        ("1. Ze4", ("reject", 3)),
        ("0. e4", ("reject", 0)),
        ("1. e4 2. d4", ("reject", 6)),
        ("1. e4 e5 ", ("prefix", None)),
        ("1. O-O-", ("prefix", None)),
    ],
)
def test_chess_rejects(text: str, result: tuple[str, int | None]) -> None:
    assert status("chess", text) == result


# -- c ---------------------------------------------------------------------------------------

C_PROGRAM = """\
// adds two numbers
int add(int a, int b) { return a + b; }
int counter = 0;
char *greeting = "hi\\n";
int main(void) {
  int x = add(1, 2) * 3;
  for (int i = 0; i < 10; i = i + 1) { x = x - i % 2; }
  if (x >= 3 && !greeting[0]) { return 1; } else if (x) { counter = x; } else { return 0; }
  while (x) { x = x / 2; }
  return 'a';
}
"""


def test_c_accepts_a_program() -> None:
    assert status("c", C_PROGRAM) == ("accept", None)
    assert status("c", "") == ("accept", None)
    assert status("c", "int*p;") == ("accept", None)


@pytest.mark.parametrize(
    ("text", "result"),
    [
        ("int main() { return 0 }", ("reject", 22)),
        ("intx;", ("reject", 3)),
        ("int f() { x = ; }", ("reject", 14)),
        ("int f() {", ("prefix", None)),
        ('char *s = "a\nb";', ("reject", 12)),
        ("int x = 1 +;", ("reject", 11)),
    ],
)
def test_c_rejects(text: str, result: tuple[str, int | None]) -> None:
    assert status("c", text) == result


# -- english -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "The cat sat on the mat.",
        "Did it, really? Yes!",
        "I don't know the well-known answer.",
        "In 1999 we met.",
    ],
)
def test_english_accepts(text: str) -> None:
    assert status("english", text) == ("accept", None)


@pytest.mark.parametrize(
    ("text", "result"),
    [
        ("the cat.", ("reject", 0)),
        ("The  cat.", ("reject", 4)),
        ("The cat", ("prefix", None)),
        ("The cat..", ("reject", 8)),
        ("Hi there.Bye.", ("reject", 9)),
        ("Well -done.", ("reject", 5)),
    ],
)
def test_english_rejects(text: str, result: tuple[str, int | None]) -> None:
    assert status("english", text) == result
