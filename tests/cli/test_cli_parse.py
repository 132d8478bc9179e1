"""``gbnfkit parse``: chat-format output to a JSON message, with readable failures."""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Callable
from typing import Any

import pytest

from gbnfkit.cli import main

HERMES = '<think>\nhm\n</think>\n\nHi\n<tool_call>\n{"name": "get", "arguments": {}}\n</tool_call>'
TOOLS = [{"type": "function", "function": {"name": "get", "parameters": {"type": "object"}}}]


def test_parse_prints_the_message_as_json(cli: Callable[..., Any]) -> None:
    run = cli("parse", "--format", "hermes", HERMES)
    assert run.status == 0
    assert json.loads(run.out) == {
        "role": "assistant",
        "content": "Hi",
        "reasoning_content": "hm",
        "tool_calls": [
            {"type": "function", "function": {"name": "get", "arguments": "{}"}}
        ],
    }
    assert run.err == ""


def test_parse_reads_standard_input_and_a_tools_file(
    cli: Callable[..., Any], write: Callable[[str, str | bytes], str]
) -> None:
    tools = write("tools.json", json.dumps({"tools": TOOLS}))
    run = cli("parse", "--format", "hermes", "--tools", tools, stdin=HERMES.encode())
    assert run.status == 0
    assert json.loads(run.out)["tool_calls"][0]["function"]["name"] == "get"


def test_tools_file_and_text_cannot_both_be_standard_input(cli: Callable[..., Any]) -> None:
    # the tools file took all of it and the text was read as empty (found by bughunt7)
    run = cli("parse", "--format", "hermes", "--tools", "-", stdin=json.dumps(TOOLS).encode())
    assert run.status == 4 and run.out == ""
    assert "cannot both come from standard input" in run.err


def test_output_off_the_format_is_status_1_with_the_place(
    cli: Callable[..., Any], write: Callable[[str, str | bytes], str]
) -> None:
    tools = write("tools.json", json.dumps(TOOLS))
    text = '<tool_call>{"name": "nope", "arguments": {}}</tool_call>'
    run = cli("parse", "--format", "hermes", "--tools", tools, text)
    assert run.status == 1
    assert run.out == ""
    assert "unknown tool 'nope' (tools: get) at position 21" in run.err
    assert "Traceback" not in run.err
    partial = cli("parse", "--format", "hermes", "--tools", tools, "--partial", text)
    assert partial.status == 0
    assert json.loads(partial.out) == {"role": "assistant", "content": ""}


def test_deltas_are_printed_one_a_line_before_the_message(cli: Callable[..., Any]) -> None:
    run = cli("parse", "--format", "mistral", "--deltas", "Hi [TOOL_")
    lines = run.out.splitlines()
    assert [json.loads(line) for line in lines[:3]] == [
        {"content": "H"},
        {"content": "i"},
        {"content": " [TOOL_"},
    ]
    assert json.loads("\n".join(lines[3:]))["content"] == "Hi [TOOL_"


def test_bad_tools_files_are_status_3(
    cli: Callable[..., Any], write: Callable[[str, str | bytes], str]
) -> None:
    broken = write("broken.json", "[{")
    run = cli("parse", "--format", "hermes", "--tools", broken, "x")
    assert run.status == 3
    assert "not valid JSON" in run.err
    unnamed = write("unnamed.json", '[{"type": "function", "function": {}}]')
    run = cli("parse", "--format", "hermes", "--tools", unnamed, "x")
    assert run.status == 3
    assert "needs a non-empty string 'name'" in run.err


def test_an_unknown_format_is_a_usage_error(cli: Callable[..., Any]) -> None:
    run = cli("parse", "--format", "chatml", "x")
    assert run.status == 4
    assert "invalid choice: 'chatml'" in run.err
    missing = cli("parse", "--format", "hermes", "--tools", "/nonexistent/tools.json", "x")
    assert missing.status == 4
    assert "cannot read tools file" in missing.err


def test_reasoning_open_reads_output_that_starts_in_the_reasoning(
    cli: Callable[..., Any],
) -> None:
    run = cli("parse", "--format", "deepseek-r1", "--reasoning-open", "Hmm.\n</think>\n\nHi")
    assert run.status == 0
    assert json.loads(run.out) == {
        "role": "assistant",
        "content": "Hi",
        "reasoning_content": "Hmm.",
    }
    refused = cli("parse", "--format", "mistral", "--reasoning-open", "x")
    assert refused.status == 3
    assert "no reasoning to start in" in refused.err


def test_tools_files_json_reads_but_python_cannot_hold_are_status_3(
    cli: Callable[..., Any], write: Callable[[str, str | bytes], str]
) -> None:
    """Nesting deeper than the recursion limit, an integer longer than the 4,300 digits
    Python converts: the tools file is bad (status 3), not an internal error (70)."""
    huge = '[{"name": "f", "parameters": {"maximum": 1' + "0" * 5000 + "}}]"
    for name, text in (("deep.json", "[" * 100_000), ("huge.json", huge)):
        run = cli("parse", "--format", "hermes", "--tools", write(name, text), "x")
        assert run.status == 3, run.err
        assert "internal error" not in run.err and run.err.count("\n") == 1, run.err


@pytest.mark.parametrize("deltas", [False, True])
def test_json_stays_json_on_a_stdout_that_cannot_encode_it(
    monkeypatch: pytest.MonkeyPatch, deltas: bool
) -> None:
    # found by bughunt12: with PYTHONIOENCODING=ascii (or a Latin-1 terminal) 'é' and '😀'
    # were printed as the stream's escapes \xe9 and \U0001f600, which JSON does not have
    raw = io.BytesIO()
    stdout = io.TextIOWrapper(raw, encoding="ascii", errors="strict")
    monkeypatch.setattr(sys, "stdout", stdout)
    argv = ["parse", "--format", "content", "é😀"] + (["--deltas"] if deltas else [])
    assert main(argv) == 0
    stdout.flush()
    text, documents, at = raw.getvalue().decode("ascii"), [], 0
    while text[at:].strip():
        document, at = json.JSONDecoder().raw_decode(text, len(text) - len(text[at:].lstrip()))
        documents.append(document)
    assert documents[-1]["content"] == "é😀"
    if deltas:
        assert "".join(delta.get("content", "") for delta in documents[:-1]) == "é😀"
