"""README.md examples are tests: every ```python block runs, every ```console block's
``$ gbnfkit ...`` commands print what the README shows."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from gbnfkit.cli import main

README = Path(__file__).resolve().parents[1] / "README.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)


def _blocks(language: str) -> list[tuple[int, str]]:
    text = README.read_text(encoding="utf-8")
    return [
        (text.count("\n", 0, m.start()) + 1, m.group(2))
        for m in FENCE.finditer(text)
        if m.group(1) == language
    ]


PYTHON = _blocks("python")
CONSOLE = _blocks("console")


def test_readme_has_examples_of_both_kinds() -> None:
    assert len(PYTHON) >= 5
    assert len(CONSOLE) >= 2


@pytest.mark.parametrize(("line", "code"), PYTHON, ids=[f"line{n}" for n, _ in PYTHON])
def test_python_example_runs(line: int, code: str, capsys: pytest.CaptureFixture[str]) -> None:
    exec(compile(code, f"README.md:{line}", "exec"), {"__name__": "readme_example"})  # noqa: S102


def _sessions(block: str) -> list[tuple[list[str], str]]:
    """(argv after 'gbnfkit', expected output) for each '$ gbnfkit ...' line of a block."""
    sessions: list[tuple[list[str], list[str]]] = []
    for row in block.splitlines():
        if row.startswith("$ "):
            argv = shlex.split(row[2:])
            assert argv[0] == "gbnfkit", row
            sessions.append((argv[1:], []))
        else:
            sessions[-1][1].append(row)
    return [(argv, "\n".join(out) + "\n") for argv, out in sessions]


CONSOLE_SESSIONS = [
    (line, argv, expected) for line, block in CONSOLE for argv, expected in _sessions(block)
]


@pytest.mark.parametrize(
    ("line", "argv", "expected"),
    CONSOLE_SESSIONS,
    ids=[f"line{n}-{argv[0]}" for n, argv, _ in CONSOLE_SESSIONS],
)
def test_console_example_prints_what_the_readme_shows(
    line: int, argv: list[str], expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    main(argv)
    captured = capsys.readouterr()
    assert captured.out + captured.err == expected
