"""``gbnfkit next``: the allowed next characters, one rule per line."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gbnfkit import Grammar

Cli = Callable[..., Any]  # the ``cli`` fixture of conftest.py
Write = Callable[[str, "str | bytes"], str]


def test_rules_after_a_prefix_match_state_allowed(cli: Cli) -> None:
    prefix = '{"a": "'
    run = cli("next", "json", prefix)
    assert run.status == 0
    allowed = Grammar.builtin("json").start().feed(prefix).allowed()
    assert run.out.splitlines() == [str(rule) for rule in allowed]
    assert '[^\\x00-\\x1F"\\\\]' in run.out.splitlines()


def test_end_rule_is_printed_when_the_text_may_end(cli: Cli, write: Write) -> None:
    grammar = write("digits.gbnf", "root ::= [0-9]+\n")
    run = cli("next", grammar, "12")
    assert (run.status, run.out, run.err) == (0, "[0-9]\n<end>\n", "")


def test_absent_prefix_is_the_start(cli: Cli, write: Write) -> None:
    grammar = write("ab.gbnf", 'root ::= "a" | "b" | .\n')
    run = cli("next", grammar)
    assert run.status == 0
    assert run.out == "".join(
        f"{rule}\n" for rule in Grammar.from_gbnf('root ::= "a" | "b" | .').start().allowed()
    )


def test_prefix_from_stdin_and_file(cli: Cli, write: Write) -> None:
    grammar = write("digits.gbnf", 'root ::= [0-9]+ "!"\n')
    assert cli("next", grammar, "-", stdin=b"1").out == "[!0-9]\n"
    assert cli("next", grammar, "--text-file", write("p.txt", "12!")).out == "<end>\n"


def test_rejected_prefix_exits_1_with_the_report(cli: Cli, write: Write) -> None:
    grammar = write("digits.gbnf", "root ::= [0-9]+\n")
    run = cli("next", grammar, "1a")
    assert run.status == 1
    assert run.out == ""
    lines = run.err.splitlines()
    assert lines[0] == "rejected: unexpected 'a' at position 1 (line 1, column 2)"
    assert lines[1:3] == ["    1a", "     ^"]
    assert lines[3].startswith("expected: ")


def test_dead_end_prefix_says_nothing_can_follow(cli: Cli, write: Write) -> None:
    # a code point above U+10FFFF is legal GBNF and never matches: a live dead end
    grammar = write("dead.gbnf", 'root ::= "\\U00110000"\n')
    run = cli("next", grammar)
    assert (run.status, run.out) == (0, "")
    assert run.err == "gbnfkit: nothing can follow this prefix, and it is not complete\n"


def test_grammar_error_and_usage_error(cli: Cli, write: Write) -> None:
    run = cli("next", write("bad.gbnf", "root ::= (\n"), "")
    assert run.status == 3
    assert "bad.gbnf:1:" in run.err
    assert cli("next").status == 4
