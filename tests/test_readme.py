"""README.md and docs/*.md examples are tests: every ```python block runs, every
```console block's ``$ gbnfkit ...`` commands print what the text shows."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from gbnfkit.cli import main

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCUMENTS = [README, *sorted((ROOT / "docs").glob("*.md")), *sorted(ROOT.glob("*.md"))]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)


def _blocks(language: str, documents: list[Path] = DOCUMENTS) -> list[tuple[str, str]]:
    """(``file:line``, code) of every fenced block in ``language``."""
    found: list[tuple[str, str]] = []
    for path in dict.fromkeys(documents):
        text = path.read_text(encoding="utf-8")
        name = path.relative_to(ROOT).as_posix()
        found += [
            (f"{name}:{text.count(chr(10), 0, m.start()) + 1}", m.group(2))
            for m in FENCE.finditer(text)
            if m.group(1) == language
        ]
    return found


PYTHON = _blocks("python")
CONSOLE = _blocks("console")


def test_readme_has_examples_of_both_kinds() -> None:
    assert len(_blocks("python", [README])) >= 5
    assert len(_blocks("console", [README])) >= 2
    assert any(where.startswith("docs/") for where, _ in PYTHON)


def test_every_fenced_block_has_a_language() -> None:
    """A block without a language (or a misspelt one) would silently not be run."""
    known = {"python", "console", "sh", "text", "gbnf", "json", ""}
    for path in DOCUMENTS:
        text = path.read_text(encoding="utf-8")
        for m in FENCE.finditer(text):
            assert m.group(1) in known, (path.name, m.group(1))


@pytest.mark.parametrize(("where", "code"), PYTHON, ids=[w for w, _ in PYTHON])
def test_python_example_runs(where: str, code: str, capsys: pytest.CaptureFixture[str]) -> None:
    exec(compile(code, where, "exec"), {"__name__": "readme_example"})  # noqa: S102


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
    (where, argv, expected) for where, block in CONSOLE for argv, expected in _sessions(block)
]


@pytest.mark.parametrize(
    ("where", "argv", "expected"),
    CONSOLE_SESSIONS,
    ids=[f"{w}-{argv[0]}" for w, argv, _ in CONSOLE_SESSIONS],
)
def test_console_example_prints_what_the_readme_shows(
    where: str, argv: list[str], expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    main(argv)
    captured = capsys.readouterr()
    assert captured.out + captured.err == expected


# files the documents name that are not in this repository: llama.cpp's sources, and
# the compiled build's record of its sources (written by the install, git-ignored)
_ELSEWHERE = {"src/llama-grammar.cpp", "src/llama-sampling.cpp", "src/gbnfkit/_native.json"}
_PATH = re.compile(
    r"`((?:src|tests|bench|examples|\.ci)/[^`\s]*)`|\(((?:src|tests|bench|docs)/[^)\s#]*)"
)


def test_the_files_the_documents_name_exist() -> None:
    """CONTRIBUTING.md sent readers to tests/test_fuzz.py, renamed to
    tests/test_fuzz_entry_points.py long ago."""
    documents = [*DOCUMENTS, ROOT / "bench" / "README.md"]
    missing, named = [], 0
    for path in dict.fromkeys(documents):
        for m in _PATH.finditer(path.read_text(encoding="utf-8")):
            name = (m.group(1) or m.group(2)).split("::")[0].rstrip(".,:")
            named += 1
            if name not in _ELSEWHERE and not (ROOT / name).exists():
                missing.append(f"{path.relative_to(ROOT).as_posix()}: {name}")
    assert named > 50 and missing == []
