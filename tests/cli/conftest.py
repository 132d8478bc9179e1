"""Run the ``gbnfkit`` command in-process: ``cli(argv, stdin=...)`` -> (status, out, err)."""

from __future__ import annotations

import io
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from gbnfkit.cli import main


@dataclass(frozen=True)
class Run:
    status: int
    out: str
    err: str


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Callable[..., Run]:
    def run(*argv: str, stdin: bytes | None = None) -> Run:
        if stdin is not None:
            monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin), "utf-8"))
        status = main(list(argv))
        captured = capsys.readouterr()
        return Run(int(status), captured.out, captured.err)

    return run


@pytest.fixture
def write(tmp_path: Path) -> Callable[[str, str | bytes], str]:
    """Write a file under tmp_path and return its path as a str."""

    def write_file(name: str, content: str | bytes) -> str:
        path = tmp_path / name
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        return str(path)

    return write_file
