"""``gbnfkit schema`` and the conversion flags shared with ``check --schema``."""

from __future__ import annotations

import argparse
import dataclasses
import json
from collections.abc import Callable
from typing import Any

import pytest

from gbnfkit import Grammar, SchemaLimits, SchemaOptions, json_schema_to_gbnf
from gbnfkit.cli._main import build_parser
from gbnfkit.schema import SchemaWarning

Cli = Callable[..., Any]  # the ``cli`` fixture of conftest.py
Write = Callable[[str, "str | bytes"], str]

PERSON = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer", "minimum": 0}},
    "required": ["name", "age"],
}
UNENFORCEABLE = {"type": "object", "properties": {"n": {"type": "number", "multipleOf": 0.7}}}


@pytest.fixture
def person(write: Write) -> str:
    return write("person.json", json.dumps(PERSON, indent=2))


def _printed(text: str) -> str:
    return text if text.endswith("\n") else text + "\n"


def test_prints_the_converters_grammar(cli: Cli, person: str) -> None:
    run = cli("schema", person)
    assert (run.status, run.err) == (0, "")
    assert run.out == _printed(json_schema_to_gbnf(PERSON))
    assert Grammar.from_gbnf(run.out).match('{"name": "Ada", "age": 36}').status == "accept"


def test_schema_from_stdin(cli: Cli) -> None:
    run = cli("schema", "-", stdin=json.dumps(PERSON).encode())
    assert run.out == _printed(json_schema_to_gbnf(PERSON))


def _option_flags(command: str) -> dict[str, list[str]]:
    """dest -> option strings of the conversion flags of ``gbnfkit COMMAND``."""
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {a.dest: list(a.option_strings) for a in sub.choices[command]._actions}


@pytest.mark.parametrize("command", ["schema", "check"])
def test_every_schema_option_has_a_flag(command: str) -> None:
    flags = _option_flags(command)
    for field in dataclasses.fields(SchemaOptions):
        if field.name == "limits":  # one flag per limit instead
            assert "limits" not in flags
            continue
        dashed = field.name.replace("_", "-")
        assert flags.get(field.name) in (["--" + dashed], ["--no-" + dashed]), field.name
    for field in dataclasses.fields(SchemaLimits):
        assert flags.get("limit:" + field.name) == ["--" + field.name.replace("_", "-")]
    assert flags["llama_compat"] == ["--llama-compat"]


def test_flags_have_help_from_the_docstring(cli: Cli) -> None:
    run = cli("schema", "--help")
    assert "set strict to false" in run.out
    assert "Where and how much whitespace" in run.out
    assert "(default: 20)" in run.out


@pytest.mark.parametrize(
    ("flags", "options"),
    [
        (["--whitespace", "compact"], {"whitespace": "compact"}),
        (
            ["--whitespace", "pretty", "--max-whitespace", "4"],
            {"whitespace": "pretty", "max_whitespace": 4},
        ),
        (["--max-whitespace", "none"], {"max_whitespace": None}),
        (["--property-order", "any"], {"property_order": "any"}),
        (["--closed-objects"], {"closed_objects": True}),
        (["--compact-constants"], {"compact_constants": True}),
        (
            ["--max-integer-digits", "5", "--max-fraction-digits", "3"],
            {"max_integer_digits": 5, "max_fraction_digits": 3},
        ),
        (["--untyped-means-object"], {"untyped_means_object": True}),
        (
            ["--property-order", "any", "--max-required-any-order", "2"],
            {"property_order": "any", "max_required_any_order": 2},
        ),
        (
            # 0 is a value the option takes (every required property in schema order)
            ["--property-order", "any", "--max-required-any-order", "0"],
            {"property_order": "any", "max_required_any_order": 0},
        ),
    ],
)
def test_flags_mirror_the_options(
    cli: Cli, person: str, flags: list[str], options: dict[str, Any]
) -> None:
    run = cli("schema", person, *flags)
    assert run.status == 0, run.err
    assert run.out == _printed(json_schema_to_gbnf(PERSON, **options))


def test_llama_compat(cli: Cli, person: str) -> None:
    run = cli("schema", "--llama-compat", person)
    assert run.out == _printed(json_schema_to_gbnf(PERSON, options=SchemaOptions.llama_compat()))
    run = cli("schema", "--llama-compat", "--whitespace", "compact", person)
    expected = json_schema_to_gbnf(
        PERSON, options=SchemaOptions.llama_compat(), whitespace="compact"
    )
    assert run.out == _printed(expected)


def test_limit_flags(cli: Cli, write: Write) -> None:
    unique = {"type": "array", "uniqueItems": True, "items": {"enum": list(range(9))}}
    path = write("unique.json", json.dumps(unique))
    run = cli("schema", path)
    assert run.status == 3
    assert "limit max_unique_values=8" in run.err
    assert "(flag --max-unique-values N)" in run.err
    run = cli("schema", path, "--max-unique-values", "9")
    assert (run.status, run.err) == (0, "")
    options = SchemaOptions(limits=SchemaLimits(max_unique_values=9))
    assert run.out == _printed(json_schema_to_gbnf(unique, options=options))
    # with --llama-compat and other options; with check --schema
    run = cli("schema", "--llama-compat", "--max-unique-values", "9", "--max-integer-digits",
              "1200", "--max-counted-characters", "1200", path)
    assert run.status == 0, run.err
    options = SchemaOptions.llama_compat(
        max_integer_digits=1200,
        limits=SchemaLimits(max_unique_values=9, max_counted_characters=1200),
    )
    assert run.out == _printed(json_schema_to_gbnf(unique, options=options))
    assert cli("check", "--schema", path, "--max-unique-values", "9", "[8, 0]").status == 0
    assert cli("check", "--schema", path, "--max-unique-values", "9", "[8, 8]").status == 1
    run = cli("schema", write("p.json", json.dumps(PERSON)), "--max-whitespace", "1001")
    assert run.status == 3
    assert "(flag --max-counted-characters N)" in run.err


def test_check_schema_uses_the_same_flags(cli: Cli, person: str) -> None:
    text = '{"name": "Ada", "age": 36}'
    assert cli("check", "--schema", person, text).status == 0
    run = cli("check", "--schema", person, "--whitespace", "compact", text)
    assert run.status == 1
    assert "position 8" in run.err
    assert (
        cli(
            "check", "--schema", person, "--whitespace", "compact", '{"name":"Ada","age":36}'
        ).status
        == 0
    )


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        (["--max-whitespace", "0"], "expected a positive integer or 'none', not '0'"),
        (["--max-integer-digits", "x"], "expected a positive integer or 'none', not 'x'"),
        (["--max-required-any-order", "none"], "expected an integer of at least 0, not 'none'"),
        (["--max-required-any-order", "-1"], "expected an integer of at least 0, not '-1'"),
        (["--max-dfa-states", "0"], "expected a positive integer, not '0'"),
        (["--max-dfa-states", "none"], "expected a positive integer, not 'none'"),
        (["--whitespace", "tabs"], "invalid choice: 'tabs'"),
        (["--property-order", "random"], "invalid choice: 'random'"),
    ],
)
def test_bad_flag_values_are_usage_errors(
    cli: Cli, person: str, flags: list[str], expected: str
) -> None:
    run = cli("schema", person, *flags)
    assert run.status == 4
    assert "usage: gbnfkit schema" in run.err
    assert f"argument {flags[0]}: {expected}" in run.err
    assert run.out == ""


def test_unenforceable_keyword_exits_3_unless_not_strict(cli: Cli, write: Write) -> None:
    path = write("m.json", json.dumps(UNENFORCEABLE))
    run = cli("schema", path)
    assert run.status == 3
    assert run.out == ""
    assert run.err.startswith(f"{path}: ")
    assert "multipleOf" in run.err and "/properties/n" in run.err
    run = cli("schema", "--no-strict", path)
    assert run.status == 0
    with pytest.warns(SchemaWarning, match="multipleOf"):
        assert run.out == _printed(json_schema_to_gbnf(UNENFORCEABLE, strict=False))
    assert run.err.startswith(f"{path}: warning: ")
    assert "multipleOf" in run.err
    run = cli("check", "--schema", path, "--no-strict", '{"n": 1}')
    assert run.status == 0
    assert "warning" in run.err


def test_schema_errors(cli: Cli, write: Write) -> None:
    run = cli("schema", write("broken.json", '{"type": "object",}'))
    assert run.status == 3
    assert ":1:19: schema is not valid JSON: " in run.err
    run = cli("schema", write("bad.json", json.dumps({"properties": {"a": {"type": "integr"}}})))
    assert run.status == 3
    assert "/properties/a" in run.err
    run = cli("schema", "/nonexistent/schema.json")
    assert run.status == 4
    assert (
        run.err
        == "gbnfkit: cannot read schema '/nonexistent/schema.json': No such file or directory\n"
    )
    run = cli("schema", write("deep.json", "[" * 100_000 + "]" * 100_000))
    assert run.status in (3, 5)
    assert "internal error" not in run.err


def test_a_schema_with_an_integer_python_will_not_read_is_status_3(
    cli: Cli, write: Write
) -> None:
    # json.loads raises a ValueError that is not a JSONDecodeError past 4,300 digits
    run = cli("schema", write("huge.json", '{"maximum": 1' + "0" * 5000 + "}"))
    assert run.status == 3, run.err
    assert "internal error" not in run.err and "digits" in run.err


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["check", "json", "--max-whitespace", "3", "1"], "--max-whitespace applies"),
        (["check", "json", "--no-strict", "--max-dfa-states", "9", "1"], "--no-strict, --max-"),
        (["generate", "--grammar", "json", "--llama-compat", "--model", "/no", "x"], "--llama"),
        (["generate", "--whitespace", "compact", "--model", "/no", "x"], "--whitespace applies"),
        (["generate", "--regex", "a", "--closed-objects", "--model", "/no", "x"], "--closed-"),
    ],
)
def test_schema_flags_without_a_schema_are_usage_errors(
    cli: Cli, argv: list[str], named: str
) -> None:
    # found by bughunt12: 'check json --max-whitespace 3 TEXT' ignored the flag silently
    # (the grammar bounds nothing), as generate did with --grammar, --regex or no grammar
    run = cli(*argv)
    assert run.status == 4  # usage error
    assert named in run.err and "only to a JSON Schema" in run.err
