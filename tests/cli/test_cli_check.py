"""``gbnfkit check``: every exit status and the shape of every message."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gbnfkit import Grammar
from gbnfkit.cli._exit import ExitCode

NUMBERS = 'root ::= num ("," num)*\nnum ::= [0-9]+\n'
Cli = Callable[..., Any]  # the ``cli`` fixture of conftest.py
Write = Callable[[str, "str | bytes"], str]


@pytest.fixture
def numbers(write: Write) -> str:
    return write("numbers.gbnf", NUMBERS)


def test_complete_match_exits_0_and_prints_accept(cli: Cli, numbers: str) -> None:
    run = cli("check", numbers, "12,3")
    assert (run.status, run.out, run.err) == (0, "accept\n", "")


def test_valid_prefix_exits_2_and_says_what_comes_next(cli: Cli, numbers: str) -> None:
    run = cli("check", numbers, "12,")
    assert run.status == 2
    assert run.out == "prefix\n"
    assert "valid prefix" in run.err
    assert run.err.rstrip().endswith("expected next: [0-9]")


def test_dead_end_prefix_says_it_can_never_complete(cli: Cli, write: Write) -> None:
    grammar = write("dead.gbnf", 'root ::= "a" "\\U00110000"\n')
    run = cli("check", grammar, "a")
    assert (run.status, run.out) == (2, "prefix\n")
    assert "valid prefix" in run.err and "can never be completed" in run.err


def test_reject_exits_1_with_position_line_column_caret_and_expected(
    cli: Cli, numbers: str
) -> None:
    run = cli("check", numbers, "12,x3")
    assert run.status == 1
    assert run.out == "reject\n"
    lines = run.err.splitlines()
    assert lines[0] == "rejected: unexpected 'x' at position 3 (line 1, column 4)"
    assert lines[1:3] == ["    12,x3", "       ^"]
    assert lines[3].startswith("expected: ") and "[0-9]" in lines[3]
    assert len(lines) == 4


def test_reject_on_a_later_line_counts_line_and_column(cli: Cli, write: Write) -> None:
    grammar = write("lines.gbnf", 'root ::= ([a-z]+ "\\n")*\n')
    run = cli("check", grammar, "abc\nde\nfg!h\n")
    assert run.status == 1
    lines = run.err.splitlines()
    assert lines[0] == "rejected: unexpected '!' at position 9 (line 3, column 3)"
    assert lines[1:3] == ["    fg!h", "      ^"]


def test_text_that_should_have_ended_says_so(cli: Cli, write: Write) -> None:
    grammar = write("ab.gbnf", 'root ::= "ab"\n')
    run = cli("check", grammar, "abc")
    assert run.status == 1
    assert "unexpected 'c' at position 2" in run.err
    assert "expected: " in run.err
    assert "end" in run.err.splitlines()[-1]


def test_quiet_prints_nothing_but_keeps_the_status(cli: Cli, numbers: str) -> None:
    for text, status in (("1,2", 0), ("1,x", 1), ("1,", 2)):
        run = cli("check", "--quiet", numbers, text)
        assert (run.status, run.out, run.err) == (status, "", "")


def test_text_from_stdin_when_absent_or_dash(cli: Cli, numbers: str) -> None:
    assert cli("check", numbers, stdin=b"4,5").status == 0
    assert cli("check", numbers, "-", stdin=b"4,5").status == 0
    assert cli("check", numbers, "-", stdin=b"4,").status == 2


def test_text_file(cli: Cli, numbers: str, write: Write) -> None:
    assert cli("check", numbers, "--text-file", write("t.txt", "7,8,9")).status == 0


def test_trailing_newline_is_kept_unless_stripped(cli: Cli, numbers: str, write: Write) -> None:
    path = write("t.txt", "7,8\n")
    run = cli("check", numbers, "--text-file", path)
    assert run.status == 1
    assert "unexpected '\\n' at position 3" in run.err
    assert cli("check", numbers, "--text-file", path, "--strip-newline").status == 0
    assert cli("check", numbers, "--strip-newline", stdin=b"7,8\r\n").status == 0
    # an inline TEXT is taken as it is
    assert cli("check", numbers, "--strip-newline", "7,8\n").status == 1


def test_text_that_starts_with_a_dash_after_double_dash(cli: Cli, write: Write) -> None:
    grammar = write("signed.gbnf", 'root ::= "-"? [0-9]+\n')
    assert cli("check", grammar, "--", "-12").status == 0


def test_non_ascii_text_positions_count_code_points(cli: Cli, write: Write) -> None:
    grammar = write("greek.gbnf", "root ::= [α-ω]+\n")
    assert cli("check", grammar, "αβγ").status == 0
    run = cli("check", grammar, "αβ👍γ")
    assert run.status == 1
    assert "unexpected '👍' at position 2 (line 1, column 3)" in run.err


def test_root_option_starts_elsewhere(cli: Cli, numbers: str) -> None:
    assert cli("check", "--root", "num", numbers, "12").status == 0
    assert cli("check", "--root", "num", numbers, "1,2").status == 1


def test_unknown_root_is_a_grammar_error(cli: Cli, numbers: str) -> None:
    run = cli("check", "--root", "nope", numbers, "12")
    assert run.status == 3
    assert run.err.startswith(numbers + ":")
    assert "nope" in run.err


@pytest.mark.parametrize("grammar", ["file", "builtin"])
def test_an_empty_root_is_a_grammar_error(cli: Cli, numbers: str, grammar: str) -> None:
    """``--root ''`` started a grammar file at 'root' silently (a builtin refused it);
    found by bughunt8."""
    run = cli("check", "--root", "", numbers if grammar == "file" else "json", "12")
    assert (run.status, run.out) == (3, "")
    assert "no rule named ''" in run.err


def test_grammar_error_exits_3_with_file_line_column_and_caret(cli: Cli, write: Write) -> None:
    grammar = write("bad.gbnf", 'root ::= "a" item\nitem ::= [z-a]\n')
    run = cli("check", grammar, "a")
    assert run.status == 3
    assert run.out == ""
    lines = run.err.splitlines()
    assert lines[0].startswith(f"{grammar}:2:")
    line, column = (int(x) for x in lines[0][len(grammar) + 1 :].split(":")[:2])
    assert line == 2
    assert lines[1] == "    item ::= [z-a]"
    assert lines[2] == "    " + " " * (column - 1) + "^"
    assert "Traceback" not in run.err


def test_grammar_error_without_a_position(cli: Cli, write: Write) -> None:
    run = cli("check", write("empty.gbnf", "# nothing here\n"), "a")
    assert run.status == 3
    assert len(run.err.splitlines()) == 1
    assert "empty" in run.err


def test_builtin_grammar_by_name(cli: Cli) -> None:
    assert cli("check", "json", '{"a": [1, 2.5, "x"]}').status == 0
    assert cli("check", "json", '{"a": [1, 2.5').status == 2
    assert cli("check", "json", '{"a": [1, 2.5, x]}').status == 1


def test_builtin_grammar_with_another_root(cli: Cli) -> None:
    builtin = Grammar.builtin("json")
    rules = [
        line.split("::=")[0].strip() for line in builtin.to_gbnf().splitlines() if "::=" in line
    ]
    assert "number" in rules
    assert cli("check", "json", "--root", "number", "-2.5").status == 0


def test_file_wins_over_builtin_of_the_same_name(
    cli: Cli, tmp_path: object, monkeypatch: pytest.MonkeyPatch, write: Write
) -> None:
    write("json", 'root ::= "not json"\n')
    monkeypatch.chdir(str(tmp_path))
    assert cli("check", "json", "not json").status == 0


def test_unknown_grammar_name_lists_the_builtins(cli: Cli) -> None:
    run = cli("check", "no-such-grammar", "x")
    assert run.status == 4
    assert "no-such-grammar" in run.err
    for name in Grammar.builtin_names():
        assert name in run.err


def test_resource_limit_exits_5(cli: Cli, write: Write) -> None:
    # 2**n distinct parse stacks after n 'a's: more than Limits().max_stacks
    grammar = write("ambiguous.gbnf", 'root ::= r\nr ::= "a" r "b" | "a" r "c" | ""\n')
    run = cli("check", grammar, "a" * 20)
    assert run.status == 5
    assert "max_stacks" in run.err
    assert run.err.startswith("gbnfkit: ")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["check"], "give a GRAMMAR"),
        (["check", "json", "1", "--text-file", "T"], "not both"),
        (["check", "--schema", "S", "G", "x"], "only the TEXT"),
        (["check", "--schema", "S", "--root", "r", "x"], "--root"),
        (["check", "G", "x", "y"], "unrecognized arguments"),
        (["check", "--bogus", "G"], "unrecognized arguments"),
    ],
)
def test_usage_errors_exit_4(cli: Cli, argv: list[str], message: str) -> None:
    run = cli(*argv)
    assert run.status == 4
    assert message in run.err
    assert run.out == ""
    assert "Traceback" not in run.err


def test_missing_files_exit_4(cli: Cli, numbers: str, tmp_path: object) -> None:
    run = cli("check", numbers, "--text-file", "/nonexistent/t.txt")
    assert run.status == 4
    assert (
        run.err
        == "gbnfkit: cannot read text file '/nonexistent/t.txt': No such file or directory\n"
    )
    run = cli("check", str(tmp_path), "x")
    assert run.status == 4
    assert "it is a directory" in run.err


def test_undecodable_inputs_exit_4(cli: Cli, numbers: str, write: Write) -> None:
    bad = write("bad.bin", b"12,\xff3")
    run = cli("check", numbers, "--text-file", bad)
    assert run.status == 4
    assert (
        run.err
        == f"gbnfkit: cannot read text file {bad!r}: not valid UTF-8 (byte 0xff at byte offset 3)\n"
    )
    run = cli("check", numbers, stdin=b"\xc3(")
    assert run.status == 4
    assert "standard input: not valid UTF-8 (byte 0xc3 at byte offset 0)" in run.err
    run = cli("check", bad, "1")
    assert run.status == 4
    assert "cannot read grammar" in run.err
    # undecodable bytes in argv reach Python as lone surrogates (surrogateescape)
    run = cli("check", numbers, "12,\udcff")
    assert run.status == 4
    assert run.err.startswith(
        "gbnfkit: the text argument is not valid UTF-8 (byte 0xff at byte offset 3)"
    )
    run = cli("check", numbers, "12,\ud800")  # not from argv's bytes: main() called with it
    assert run.status == 4
    assert run.err.startswith("gbnfkit: the text argument is not valid UTF-8 (at character 3)")
    assert cli("next", numbers, "\udcff").status == 4


SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
    "required": ["name", "age"],
}


def test_schema_instance_statuses(cli: Cli, write: Write) -> None:
    schema = write("person.json", json.dumps(SCHEMA))
    assert cli("check", "--schema", schema, '{"name": "Ada", "age": 36}').out == "accept\n"
    assert cli("check", "--schema", schema, '{"name": "Ada", "age": 36}').status == 0
    assert cli("check", "--schema", schema, '{"name": "Ada", "age": 3.5}').status == 1
    assert cli("check", "--schema", schema, '{"name": "Ada"').status == 2
    assert cli("check", "--schema", schema, stdin=b'{"name": "A", "age": 1}').status == 0


@pytest.mark.parametrize("text", [[], ["-"], ["--text-file", "-"]])
def test_schema_and_text_cannot_both_be_standard_input(cli: Cli, text: list[str]) -> None:
    # the schema took all of it and the text was read as empty: "prefix", status 2
    # (found by bughunt7)
    run = cli("check", "--schema", "-", *text, stdin=b'{"type": "boolean"}')
    assert run.status == ExitCode.USAGE and run.out == ""
    assert "cannot both come from standard input" in run.err


def test_schema_that_is_not_json_exits_3_with_line_and_column(cli: Cli, write: Write) -> None:
    schema = write("broken.json", '{\n  "type": "object",\n  "properties": }\n')
    run = cli("check", "--schema", schema, "{}")
    assert run.status == 3
    assert run.err.startswith(f"{schema}:3:17: schema is not valid JSON: ")


def test_schema_the_converter_refuses_exits_3(cli: Cli, write: Write) -> None:
    schema = write("bad.json", json.dumps({"type": "object", "properties": {"a": {"type": 12}}}))
    run = cli("check", "--schema", schema, "{}")
    assert run.status == 3
    assert run.err.startswith(f"{schema}: ")
    assert "/properties/a" in run.err


def test_text_argument_is_utf8_whatever_the_locale(write: Write) -> None:
    # found by bughunt12: under LC_ALL=C with PYTHONUTF8=0 (or a Latin-1 locale) Python
    # decodes argv as ASCII (Latin-1): 'check G é' said the UTF-8 text was not UTF-8 (the
    # Latin-1 locale matched 'Ã©' instead, silently)
    grammar = write("e.gbnf", 'root ::= "\u00e9"\n')
    env = {**os.environ, "LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2] / "src")
    done = subprocess.run(
        [sys.executable, "-m", "gbnfkit.cli", "check", grammar, "\u00e9".encode()],
        capture_output=True,
        env=env,
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, b"accept\n", b"")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_grammar_from_a_pipe(cli: Cli, tmp_path: Path) -> None:
    # found by bughunt12: 'gbnfkit check <(echo ...) TEXT' (a pipe) was refused as "not a
    # regular file" (exit 4), while --text-file and schema read pipes
    fifo = tmp_path / "grammar"
    os.mkfifo(fifo)

    def feed() -> None:
        with open(fifo, "w", encoding="utf-8") as pipe:
            pipe.write('root ::= "a"\n')

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    try:
        run = cli("check", str(fifo), "a")
    finally:
        if writer.is_alive():  # the pipe was never opened for reading: release the writer
            os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))
        writer.join(timeout=10)
    assert (run.status, run.out, run.err) == (0, "accept\n", "")


@pytest.mark.skipif(not os.path.exists("/dev/stdin"), reason="no /dev/stdin")
def test_grammar_and_text_both_from_standard_input_are_refused() -> None:
    # a grammar read from /dev/stdin leaves the text empty: 'prefix', silently
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
    done = subprocess.run(
        [sys.executable, "-m", "gbnfkit.cli", "check", "/dev/stdin"],
        input=b'root ::= "a"\n',
        capture_output=True,
        env=env,
        check=False,
    )
    assert (done.returncode, done.stdout) == (4, b"")
    assert b"the grammar and the text cannot both come from standard input" in done.stderr
