"""Where the converter decides a pattern itself (``enum``/``const`` values filtered by a
sibling ``pattern``, listed property names against ``patternProperties``, whether a
pattern is valid), it reads the pattern as the grammar does: ECMA-262's ``\\d``, ``\\w``,
``\\s``, ``.`` and ``$`` (docs/schema.md), not Python's ``re``."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from gbnfkit import Grammar, SchemaError

_CHARS = ["a", "é", "٣", "0", "_", "\n", "\r", "\u2028", "\ufeff", "\xa0", " ", "😀", "-"]
_PATTERNS = [r"^\w$", r"^\d$", r"^\s$", r"^.$", r"a$", r"^\W\S$", r"^[\w-]+$", r"\D"]


def _accepts(schema: Any, value: Any) -> bool | None:
    try:
        grammar = Grammar.from_json_schema(schema)
    except SchemaError as error:
        assert "accepts no instance" in error.message, error.message
        return None
    return grammar.match(json.dumps(value)).accepted


@pytest.mark.parametrize("pattern", _PATTERNS)
def test_an_enum_value_is_kept_as_the_pattern_grammar_reads_it(pattern: str) -> None:
    pattern_grammar = Grammar.from_json_schema({"type": "string", "pattern": pattern})
    rng = random.Random(pattern)
    values = list({"".join(rng.choices(_CHARS, k=rng.randint(1, 2))) for _ in range(40)})
    for value in values:
        expected = pattern_grammar.match(json.dumps(value)).accepted
        got = _accepts({"enum": [value], "pattern": pattern}, value)
        assert bool(got) == expected, (pattern, value)


def test_a_listed_name_meets_the_pattern_as_extra_names_do() -> None:
    # "é" is not \w in ECMA-262 (it is in Python's re): the value is only an integer
    schema = {"type": "object", "properties": {"é": {"type": "integer"}},
              "patternProperties": {r"^\w$": {"type": "string"}}}
    grammar = Grammar.from_json_schema(schema)
    assert grammar.match('{"é": 1}').accepted
    assert not grammar.match('{"é": "x"}').accepted
    assert grammar.match('{"a": "x"}').accepted
    assert not grammar.match('{"a": 1}').accepted


@pytest.mark.parametrize(("pattern", "value"), [(r"^(?<year>\d{4})-\d\d$", "2024-05"),
                                              (r"^\cJ$", "\n"), (r"^\u{1F600}$", "😀")])
def test_an_ecma_pattern_python_cannot_compile_is_valid(pattern: str, value: str) -> None:
    grammar = Grammar.from_json_schema({"type": "string", "pattern": pattern})
    assert grammar.match(json.dumps(value)).accepted
    assert not grammar.match(json.dumps(value + "x")).accepted


def test_an_invalid_pattern_is_still_refused() -> None:
    with pytest.raises(SchemaError, match="invalid regular expression"):
        Grammar.from_json_schema({"type": "string", "pattern": "(a"})
