"""The schema path builds its grammar IR from the converter's notes, not by parsing the
GBNF text (``gbnfkit.schema._direct``): that IR must be the one the text parses to, and
the errors must be the parser's."""

# shared data: maskbench/dev.jsonl

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest

import gbnfkit.schema._direct as direct
from gbnfkit import Grammar, GrammarError, Limits, SchemaError
from gbnfkit.grammar import parse_gbnf
from gbnfkit.grammar._parser import parse_fragment
from gbnfkit.schema import SchemaWarning, json_schema_to_gbnf
from gbnfkit.schema._api import convert_schema
from gbnfkit.schema._direct import RecordedConversion
from gbnfkit.schema._gbnf import Recorder, joined, recording

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "maskbench" / "dev.jsonl"


def _records() -> list[dict[str, Any]]:
    return [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines()]


def _same_as_parsed(schema: Any, **options: Any) -> bool:
    """The direct IR equals the parsed one (positions too); False if refused."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SchemaWarning)
        try:
            converted = convert_schema(schema, **options)
        except SchemaError:
            return False
    parsed = parse_gbnf(converted.text)
    ir = converted.ir()
    assert ir == parsed
    assert dict(ir.positions) == dict(parsed.positions)
    return True


def test_dev_schemas_build_the_ir_their_text_parses_to() -> None:
    # every fourth (bench/schema_compile.py --check compares all of them)
    records = _records()[::4]
    assert len(records) >= 360
    built = sum(_same_as_parsed(r["schema"], property_order="any") for r in records)
    assert built >= 0.95 * len(records)


@pytest.mark.parametrize("options", [
    {},
    {"whitespace": "llama"},
    {"whitespace": "pretty", "max_whitespace": None},
    {"whitespace": "compact", "property_order": "any", "strict": False},
])
def test_other_options_build_the_ir_their_text_parses_to(options: dict[str, Any]) -> None:
    records = _records()[::20]
    built = sum(_same_as_parsed(r["schema"], **options) for r in records)
    assert built >= 0.9 * len(records)


def test_the_text_is_the_one_json_schema_to_gbnf_writes() -> None:
    for record in _records()[::10]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SchemaWarning)
            try:
                text = json_schema_to_gbnf(record["schema"], property_order="any")
            except SchemaError:
                continue
            assert convert_schema(record["schema"], property_order="any").text == text


def _built_from_notes(converted: RecordedConversion) -> direct._Builder:
    """The builder after it built ``converted``'s IR on its own (no ``_Fallback`` to
    parsing the whole text, which is all ``ir()`` would do then)."""
    builder = direct._Builder(converted._recorder, Limits())
    builder.grammar(converted._rules, converted.text)
    return builder


def test_the_text_is_not_parsed_for_a_usual_schema() -> None:
    schema = {"type": "object", "properties": {
        "name": {"type": "string", "pattern": "^[a-z]+(-[a-z]+)*$", "maxLength": 20},
        "n": {"type": "integer", "minimum": 3, "maximum": 1234},
        "tags": {"type": "array", "items": {"enum": ["a", "b", 1.5]}, "maxItems": 3},
    }, "required": ["name"], "additionalProperties": {"type": "number"}}
    converted = convert_schema(schema, property_order="any")
    _built_from_notes(converted)
    grammar = Grammar.from_json_schema(schema, property_order="any")
    assert grammar.ir == parse_gbnf(json_schema_to_gbnf(schema, property_order="any"))
    assert grammar.match('{"n": 17, "name": "ab-c", "x": 1e3}').status.value == "accept"
    assert grammar.match('{"n": 2, "name": "ab"}').status.value == "reject"


def test_classes_sharing_their_escapes_are_built_from_notes() -> None:
    """The "other key" classes of one schema share the class of short escapes (composed
    once per conversion, then reused as text) and call one rule for the escapes from
    U+0100 on (the surrogate pairs in it): each use is built from its note, never
    parsed, and the IR is the parsed text's."""
    names = ["alpha", "beta", "gamma", "delta", "ab/c", 'q"t', "\U0001F600x"]
    schema = {"type": "object", "properties": {n: {"type": "integer"} for n in names},
              "additionalProperties": {"type": "boolean"}}
    converted = convert_schema(schema, property_order="any")
    # the pairs of ``char`` and of the class after the emoji's high surrogate (all but one
    # low surrogate), whose characters from U+0100 on are not all
    assert converted.text.count('"u" [dD] [89abAB]') == 2
    assert converted.text.count("| char-wide-hex)") >= 8  # (each class's wide escapes)
    assert converted.ir() == parse_gbnf(converted.text)
    fragments = _built_from_notes(converted).parsed_texts
    assert fragments  # (the converter's f-strings, such as a repeated "char")
    assert not [f for f in fragments if "btnfr" in f or '"\\\\u" [dD]' in f]
    grammar = Grammar.from_json_schema(schema, property_order="any")
    assert grammar.match('{"alpha": 1, "alphb": true}').status.value == "accept"
    assert grammar.match('{"\\u0061lpha": true}').status.value == "reject"


def _nested(depth: int) -> tuple[Recorder, str]:
    """A sequence noted as ``depth`` sequences within each other: ``"a" ("a" (...))``
    written without its groups, as ``joined`` composes it."""
    recorder = Recorder()
    with recording(recorder):
        text = '"a"'
        for _ in range(depth):
            text = joined('"a"', text)
    return recorder, text


def test_notes_nested_past_the_bound_parse_the_text() -> None:
    """The builder is compiled: its recursion over notes within notes is bounded by
    ``MAX_NOTE_DEPTH``, past which the whole text is parsed (the same IR)."""
    for depth in (direct.MAX_NOTE_DEPTH, direct.MAX_NOTE_DEPTH + 1, 5 * direct.MAX_NOTE_DEPTH):
        recorder, text = _nested(depth)
        builder = direct._Builder(recorder, Limits())
        if depth <= direct.MAX_NOTE_DEPTH:
            built = builder.grammar({"root": text}, f"root ::= {text}\n")
            assert built == parse_gbnf(f"root ::= {text}\n")
            assert builder.depth == 0
        else:
            with pytest.raises(direct._Fallback):
                builder.grammar({"root": text}, f"root ::= {text}\n")
    recorder, text = _nested(5 * direct.MAX_NOTE_DEPTH)
    converted = convert_schema({"type": "integer"})
    converted._recorder, converted._rules = recorder, {"root": text}
    converted.text = f"root ::= {text}\n"
    assert converted.ir() == parse_gbnf(converted.text)  # what ir() makes of the fallback


def _error(call: Any) -> GrammarError:
    with pytest.raises(GrammarError) as info:
        call()
    return info.value


def test_a_bound_above_the_limit_gives_the_parsers_error() -> None:
    schema = {"type": "string", "maxLength": 500}
    limits = Limits(max_repetition=100)
    text = json_schema_to_gbnf(schema)
    direct_error = _error(lambda: Grammar.from_json_schema(schema, limits=limits))
    parsed_error = _error(lambda: parse_gbnf(text, limits=limits))
    assert str(direct_error) == str(parsed_error)
    assert (direct_error.line, direct_error.column) == (parsed_error.line, parsed_error.column)


def test_left_recursion_gives_the_parsers_error() -> None:
    schema = {"$defs": {"a": {"anyOf": [{"$ref": "#/$defs/a"}, {"type": "null"}]}},
              "$ref": "#/$defs/a"}
    text = json_schema_to_gbnf(schema)
    direct_error = _error(lambda: Grammar.from_json_schema(schema))
    parsed_error = _error(lambda: parse_gbnf(text))
    assert str(direct_error) == str(parsed_error)
    assert direct_error.rules == parsed_error.rules


@pytest.mark.parametrize("fragment", [
    '"a" # comment',  # a comment would swallow what follows it in a body
    "a\nb",  # a line break ends a rule
    "* a",  # nothing to repeat
    '"a',  # unterminated
    "a )",  # something left over
    '"\\x00" "\0"',  # NUL
])
def test_fragments_that_cannot_stand_alone_are_refused(fragment: str) -> None:
    assert parse_fragment(fragment) is None


def test_fragments_read_as_in_a_body() -> None:
    expr, top_alt, refs = parse_fragment('"#" [#] x{2} | (y | "z")?') or (None, None, None)
    assert top_alt and refs == ["x", "y"]
    assert expr == parse_gbnf('root ::= "#" [#] x{2} | (y | "z")?\nx ::= "x"\ny ::= "y"\n'
                              ).rules["root"]
    assert parse_fragment("(a | b)") is not None and not parse_fragment("(a | b)")[1]


def test_the_static_spellings_repeat_at_most_static_max_bound() -> None:
    from gbnfkit.grammar._ir import Alt, Repeat, Seq
    from gbnfkit.schema._strings import _static

    notes = _static().notes
    builder = direct._Builder(notes, Limits())
    builder.shared = None
    bounds = [0]
    for text in notes.notes:
        stack = [builder.expr(text)[0]]
        while stack:
            e = stack.pop()
            if isinstance(e, Repeat):
                bounds += [e.min, e.max or 0]
                stack.append(e.item)
            elif isinstance(e, Seq):
                stack.extend(e.items)
            elif isinstance(e, Alt):
                stack.extend(e.options)
    assert 0 < max(bounds) <= direct.STATIC_MAX_BOUND
    assert builder.refs == {_static().wide_name}  # (the complements' wide escapes)


def test_small_repetition_limits_do_not_use_the_shared_static_ir() -> None:
    schema = {"type": "object", "properties": {"é": {"type": "string"}},
              "additionalProperties": {"type": "integer"}}
    Grammar.from_json_schema(schema)  # fills the shared IR of the static spellings
    text = json_schema_to_gbnf(schema)
    limits = Limits(max_repetition=direct.STATIC_MAX_BOUND - 1)
    direct_error = _error(lambda: Grammar.from_json_schema(schema, limits=limits))
    assert str(direct_error) == str(_error(lambda: parse_gbnf(text, limits=limits)))
