"""docs/chat.md's Python examples run."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "chat.md"
FENCE = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)
BLOCKS = [
    (DOC.read_text(encoding="utf-8").count("\n", 0, m.start()) + 1, m.group(1))
    for m in FENCE.finditer(DOC.read_text(encoding="utf-8"))
]


def test_the_document_has_examples() -> None:
    assert len(BLOCKS) >= 5


@pytest.mark.parametrize(("line", "code"), BLOCKS, ids=[f"line{n}" for n, _ in BLOCKS])
def test_python_example_runs(line: int, code: str) -> None:
    exec(compile(code, f"docs/chat.md:{line}", "exec"), {"__name__": "chat_doc_example"})  # noqa: S102
