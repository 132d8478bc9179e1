"""``gbnfkit fmt`` and ``gbnfkit builtins``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from gbnfkit import Grammar

Cli = Callable[..., Any]  # the ``cli`` fixture of conftest.py
Write = Callable[[str, "str | bytes"], str]


def test_fmt_prints_the_canonical_form(cli: Cli, write: Write) -> None:
    source = 'root ::=   item ( ","   item )*   # a list\nitem ::= [a-c]{1,3}\n'
    run = cli("fmt", write("list.gbnf", source))
    assert run.status == 0
    assert run.err == ""
    assert run.out.rstrip("\n") == Grammar.from_gbnf(source).to_gbnf().rstrip("\n")
    assert Grammar.from_gbnf(run.out) == Grammar.from_gbnf(source)


def test_fmt_is_idempotent(cli: Cli, write: Write) -> None:
    once = cli("fmt", "json").out
    assert cli("fmt", write("once.gbnf", once)).out == once


@pytest.mark.parametrize("name", Grammar.builtin_names())
def test_fmt_every_builtin(cli: Cli, name: str) -> None:
    run = cli("fmt", name)
    assert run.status == 0
    assert Grammar.from_gbnf(run.out) == Grammar.builtin(name)


def test_fmt_grammar_error_exits_3(cli: Cli, write: Write) -> None:
    path = write("dup.gbnf", 'root ::= "a"\nroot ::= "b"\n')
    run = cli("fmt", path)
    assert run.status == 3
    assert run.out == ""
    assert run.err.startswith(f"{path}:2:")


def test_builtins_lists_every_name(cli: Cli) -> None:
    run = cli("builtins")
    assert run.status == 0
    assert tuple(run.out.splitlines()) == Grammar.builtin_names()
    assert "json" in run.out.splitlines()


def test_fmt_of_a_file_with_a_byte_order_mark_says_so(cli: Cli, write: Write) -> None:
    """It said "expected a rule name ..., found U+FEFF" over an excerpt whose first
    character is invisible (found by bughunt8); llama.cpp refuses the BOM too."""
    run = cli("fmt", write("bom.gbnf", b'\xef\xbb\xbfroot ::= "a"\n'))
    assert run.status == 3
    assert run.out == ""
    assert "bom.gbnf:1:1: the grammar starts with a byte order mark (U+FEFF)" in run.err
    assert "without a BOM" in run.err and "Traceback" not in run.err
