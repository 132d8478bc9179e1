"""``gbnfkit`` itself: --version, --help, usage errors, the exit status contract, and
that no ordinary bad input ever reaches the internal-error path."""

from __future__ import annotations

import errno
import io
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

import gbnfkit
from gbnfkit.cli import _check, main
from gbnfkit.cli._exit import ExitCode

Cli = Callable[..., Any]  # the ``cli`` fixture of conftest.py
Write = Callable[[str, "str | bytes"], str]
README = Path(__file__).resolve().parents[2] / "README.md"


def test_version(cli: Cli) -> None:
    run = cli("--version")
    assert (run.status, run.out, run.err) == (0, f"gbnfkit {gbnfkit.__version__}\n", "")


def test_help_lists_commands_and_exit_statuses(cli: Cli) -> None:
    run = cli("--help")
    assert run.status == 0
    for command in ("check", "next", "fmt", "schema", "builtins"):
        assert command in run.out
    for code in ExitCode:
        assert re.search(rf"^  {code.value}\s", run.out, re.MULTILINE), code


@pytest.mark.parametrize("command", ["check", "next", "fmt", "schema", "builtins"])
def test_every_command_has_help(cli: Cli, command: str) -> None:
    run = cli(command, "--help")
    assert run.status == 0
    assert run.out.startswith(f"usage: gbnfkit {command}")
    assert run.err == ""


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([], "the following arguments are required: COMMAND"),
        (["frobnicate"], "invalid choice: 'frobnicate'"),
        (["--bogus", "builtins"], "unrecognized arguments: --bogus"),
        (["fmt"], "the following arguments are required: GRAMMAR"),
        (["schema"], "the following arguments are required: SCHEMA.json"),
        (["builtins", "extra"], "unrecognized arguments: extra"),
    ],
)
def test_usage_errors_exit_4_not_argparse_2(cli: Cli, argv: list[str], message: str) -> None:
    run = cli(*argv)
    assert run.status == 4
    assert message in run.err
    assert "usage: gbnfkit" in run.err
    assert run.out == ""


def test_readme_exit_status_table_matches_the_code() -> None:
    text = README.read_text(encoding="utf-8")
    table = text[text.index("Exit status:") :]
    rows = re.findall(r"^\| (\d+) \| (.+) \|$", table, re.MULTILINE)
    assert sorted(int(code) for code, _ in rows) == sorted(code.value for code in ExitCode)


def _raise(exc: BaseException) -> Callable[..., int]:
    def run(*args: object) -> int:
        raise exc

    return run


def test_unexpected_exception_is_an_internal_error_without_traceback(
    cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_check, "run", _raise(ZeroDivisionError("boom")))
    run = cli("check", "json", "1")
    assert run.status == 70
    assert run.err.startswith("gbnfkit: internal error: ZeroDivisionError: boom\n")
    assert "Traceback" not in run.err
    assert run.out == ""


def test_keyboard_interrupt_exits_130_quietly(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_check, "run", _raise(KeyboardInterrupt()))
    run = cli("check", "json", "1")
    assert (run.status, run.out, run.err) == (130, "", "")


# the script pip writes for a [project.scripts] entry "module:function", run after a hook
# that holds `import gbnfkit` at its first submodule until the test sends SIGINT (the
# child takes Ctrl-C even when the test runs in the background, where SIGINT is ignored)
_SCRIPT = """\
import re, signal, sys, time
signal.signal(signal.SIGINT, signal.default_int_handler)

class Hold:
    def find_spec(self, name, path=None, target=None):
        if name.startswith("gbnfkit."):
            sys.meta_path.remove(self)
            print("importing", name, flush=True)
            time.sleep(120)
        return None

sys.meta_path.insert(0, Hold())
from {module} import {function}
if __name__ == "__main__":
    sys.argv[0] = re.sub(r"(-script\\.pyw|\\.exe)?$", "", sys.argv[0])
    sys.exit({function}())
"""


def test_ctrl_c_while_gbnfkit_imports_exits_130_quietly(tmp_path: Path) -> None:
    """Ctrl-C in the first half second (``import gbnfkit``) printed a traceback: the
    console script imported ``gbnfkit.cli`` before any code of ours could catch it.
    The entry point is a module outside the package whose ``main`` does the import."""
    import signal

    if sys.version_info >= (3, 11):
        import tomllib
    else:
        import tomli as tomllib
    import _gbnfkit_cli

    assert _gbnfkit_cli.INTERRUPTED == ExitCode.INTERRUPTED
    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
    entry = tomllib.loads(pyproject.read_text("utf-8"))["project"]["scripts"]["gbnfkit"]
    module, function = entry.split(":")
    script = tmp_path / "gbnfkit"
    script.write_text(_SCRIPT.format(module=module, function=function), encoding="utf-8")
    child = subprocess.Popen(
        [sys.executable, str(script), "check", "json", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert child.stdout is not None
        line = child.stdout.readline()
        assert line.startswith(b"importing gbnfkit."), line
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=120)
    finally:
        child.kill()
    assert (child.returncode, out, err) == (130, b"", b"")


def test_broken_pipe_exits_141_quietly(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_check, "run", _raise(BrokenPipeError()))
    run = cli("check", "json", "1")
    assert (run.status, run.err) == (141, "")


def _status_of(argv: list[str]) -> int:
    status = main(argv)
    assert status != ExitCode.INTERNAL, argv
    return status


GBNF_PIECES = st.sampled_from(
    [
        "root",
        " ::= ",
        "::=",
        "a",
        "b",
        "x-y",
        "_",
        " ",
        "\n",
        "|",
        "(",
        ")",
        "[",
        "]",
        "^",
        "-",
        "z",
        '"',
        "\\",
        "\\x4",
        "\\u00e9",
        "\\U0010FFFF",
        "*",
        "+",
        "?",
        "{",
        "}",
        ",",
        "2",
        "0",
        "99999999999",
        ".",
        "#",
        "é",
        "\t",
        "\r",
        "\\n",
        "\\q",
        "'",
    ]
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    grammar=st.one_of(st.lists(GBNF_PIECES, max_size=25).map("".join), st.text(max_size=30)),
    text=st.text(max_size=12),
)
def test_arbitrary_grammars_and_texts_never_reach_internal_error(
    grammar: str, text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "fuzz.gbnf"
    path.write_text(grammar, encoding="utf-8", errors="surrogatepass")
    status = _status_of(["check", str(path), "--", text])
    assert status in (0, 1, 2, 3, 4, 5)
    if status in (0, 1, 2):  # the grammar built: the other commands must work on it too
        assert _status_of(["next", str(path), "--", text]) in (0, 1, 5)
        assert _status_of(["fmt", str(path)]) == 0
    capsys.readouterr()


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.binary(max_size=40))
def test_arbitrary_bytes_as_files_never_reach_internal_error(
    data: bytes, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "fuzz.bin"
    path.write_bytes(data)
    assert _status_of(["check", str(path), "x"]) in (0, 1, 2, 3, 4, 5)
    assert _status_of(["check", "json", "--text-file", str(path)]) in (0, 1, 2, 4)
    assert _status_of(["check", "--schema", str(path), "{}"]) in (0, 1, 2, 3, 4, 5)
    assert _status_of(["schema", str(path)]) in (0, 3, 4, 5)
    capsys.readouterr()


def test_installed_console_script_and_module(tmp_path: Path) -> None:
    script = Path(sys.executable).parent / "gbnfkit"
    assert script.is_file(), "the gbnfkit console script is not installed beside python"
    grammar = tmp_path / "digits.gbnf"
    grammar.write_text("root ::= [0-9]+\n", encoding="utf-8")
    ok = subprocess.run(
        [str(script), "check", str(grammar), "-"], input=b"123", capture_output=True, timeout=120
    )
    assert (ok.returncode, ok.stdout, ok.stderr) == (0, b"accept\n", b"")
    bad = subprocess.run(
        [str(script), "check", str(grammar), "12x"], capture_output=True, timeout=120
    )
    assert bad.returncode == 1
    assert b"unexpected 'x' at position 2" in bad.stderr
    assert b"Traceback" not in bad.stderr
    module = subprocess.run(
        [sys.executable, "-m", "gbnfkit.cli", "--version"], capture_output=True, timeout=120
    )
    assert (module.returncode, module.stdout) == (0, f"gbnfkit {gbnfkit.__version__}\n".encode())


ATOMS = st.none() | st.booleans() | st.integers(-5, 5) | st.sampled_from(["", "a", "ab"])
TYPES = st.sampled_from(["string", "integer", "number", "object", "array", "boolean", "null"])
NAMES = st.sampled_from(["a", "b", "c"])


def _keywords(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    """A schema object with well-typed keywords (a valid JSON Schema)."""
    count = st.integers(0, 3)
    return st.fixed_dictionaries(
        {},
        optional={
            "type": TYPES | st.lists(TYPES, min_size=1, max_size=2, unique=True),
            "properties": st.dictionaries(NAMES, inner, max_size=2),
            "required": st.lists(NAMES, max_size=2, unique=True),
            "additionalProperties": inner,
            "items": inner,
            "prefixItems": st.lists(inner, min_size=1, max_size=2),
            "enum": st.lists(ATOMS, min_size=1, max_size=3),
            "const": ATOMS,
            "minimum": st.integers(-5, 5),
            "maximum": st.integers(-5, 5),
            "exclusiveMinimum": st.integers(-5, 5),
            "multipleOf": st.sampled_from([1, 2, 0.5]),
            "minLength": count,
            "maxLength": count,
            "minItems": count,
            "maxItems": count,
            "pattern": st.sampled_from(["^a+$", "[0-9]{2}", "a|b", "^(ab)*$"]),
            "format": st.sampled_from(["date", "email", "uuid", "date-time", "unknown"]),
            "anyOf": st.lists(inner, min_size=1, max_size=2),
            "oneOf": st.lists(inner, min_size=1, max_size=2),
            "allOf": st.lists(inner, min_size=1, max_size=2),
            "not": inner,
        },
    )


SCHEMAS = st.recursive(st.booleans() | _keywords(st.just({})), _keywords, max_leaves=6)


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(schema=SCHEMAS, text=st.sampled_from(["{}", "[]", '"a"', "1", "null", '{"a": 1}', ""]))
def test_arbitrary_schemas_never_reach_internal_error(
    schema: object, text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    Draft202012Validator.check_schema(schema)  # the strategy makes valid JSON Schemas
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(schema), encoding="utf-8")
    assert _status_of(["schema", str(path)]) in (0, 3, 5)
    flags = ["--no-strict", "--", text]
    assert _status_of(["check", "--schema", str(path), *flags]) in (0, 1, 2, 3, 5)
    capsys.readouterr()


class _FullDisk(io.StringIO):
    """A stream on a full disk: every write fails as /dev/full's does."""

    def write(self, text: str) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_stdout_that_cannot_be_written_is_exit_4_not_an_internal_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # found by bughunt12: 'gbnfkit fmt json > /dev/full' said "internal error ... a bug in
    # gbnfkit" (exit 70)
    monkeypatch.setattr(sys, "stdout", _FullDisk())
    status = main(["fmt", "json"])
    assert status == ExitCode.USAGE
    err = capsys.readouterr().err
    assert err == "gbnfkit: cannot write standard output: No space left on device\n"


def test_closed_stdout_is_exit_4(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "stdout", None)  # '>&-': Python starts with sys.stdout None
    assert main(["check", "json", "{}"]) == ExitCode.USAGE
    assert capsys.readouterr().err == "gbnfkit: cannot write standard output: it is closed\n"


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["check", "json", "{"], ExitCode.PREFIX),
        (["check", "json", "{x"], ExitCode.REJECTED),
        (["fmt", "no-such-grammar"], ExitCode.USAGE),
        (["fmt", "json"], ExitCode.OK),
    ],
)
def test_stderr_that_cannot_be_written_keeps_the_exit_status(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    expected: ExitCode,
) -> None:
    # found by bughunt12: with stderr on a full disk, 'check json "{"' exited 1 (reject)
    # instead of 2: the failed report ended the process through an uncaught exception
    monkeypatch.setattr(sys, "stderr", _FullDisk())
    assert main(argv) == expected


def test_closed_stderr_does_not_move_diagnostics_to_stdout(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # found by bughunt12: with '2>&-' (sys.stderr None), print(file=None) wrote the details
    # of 'check' on standard output, after the one word scripts read there
    monkeypatch.setattr(sys, "stderr", None)
    assert main(["check", "json", "{x"]) == ExitCode.REJECTED
    assert capsys.readouterr().out == "reject\n"


@pytest.mark.parametrize(
    "argv",
    [
        ["check", "json", "--root", "\udcff", "1"],
        ["next", "json", "--root", "x\udcc3"],
        ["generate", "--regex", "a\udcff", "--model", "/nonexistent", "hi"],
        ["generate", "--grammar", "json", "--lazy", "\udcff", "--model", "/nonexistent", "x"],
        ["generate", "--grammar", "json", "--lazy-pattern", "\udcff", "--model", "/no", "x"],
        ["generate", "--grammar", "json", "--after", "\udcff", "--model", "/nonexistent", "x"],
    ],
)
def test_grammar_text_options_that_are_not_utf8_are_usage_errors(
    cli: Cli, argv: list[str]
) -> None:
    # found by bughunt12: undecodable bytes in --regex, --lazy, --lazy-pattern or --after
    # (lone surrogates, surrogateescape) made a pattern or a trigger no output can ever
    # have, silently; --root named a rule '\udcff' (exit 3)
    run = cli(*argv)
    assert run.status == ExitCode.USAGE
    option = argv[argv.index(next(a for a in argv if "\udcff" in a or "\udcc3" in a)) - 1]
    assert f"argument {option}: not valid UTF-8 (byte 0x" in run.err
