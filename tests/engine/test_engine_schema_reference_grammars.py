"""The engine alone on llama.cpp's own JSON-Schema grammars (``reference_grammar`` fields).

Every case of ``shared/conformance/schema.jsonl`` is matched against the GBNF text that
llama.cpp's converter produced; (status, fail_at) must agree exactly.
"""

# shared data: conformance/schema.jsonl

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gbnfkit import Grammar

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared"
RECORDS = [
    r
    for r in (
        json.loads(line)
        for line in (SHARED / "conformance" / "schema.jsonl").read_text("utf-8").splitlines()
        if line.strip()
    )
    if r["reference_grammar"] is not None
]


@pytest.mark.parametrize("record", RECORDS, ids=[r["id"] for r in RECORDS])
def test_reference_grammar_cases(record: dict[str, Any]) -> None:
    g = Grammar.from_gbnf(record["reference_grammar"])
    got = []
    want = []
    for case in record["cases"]:
        m = g.match(case["input"])
        got.append((m.status.value, m.position))
        want.append((case["expect"], case["fail_at"]))
    assert got == want


def test_corpus_is_present() -> None:
    assert len(RECORDS) >= 60
