"""A fixed subset of the MaskBench development set (every 25th schema): no false
accepts, and most schemas convert and are judged right.  The full run is
``bench/maskbench_coverage.py``."""

# shared data: maskbench/dev.jsonl

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

from gbnfkit import Grammar, SchemaError
from gbnfkit.schema import SchemaWarning, json_schema_to_gbnf

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "maskbench" / "dev.jsonl"


def _subset() -> list[dict[str, Any]]:
    lines = DATA.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines[::25]]


def test_no_false_accepts_on_subset() -> None:
    records = _subset()
    assert len(records) == 60
    false_accepts: list[str] = []
    passed = 0
    for record in records:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", SchemaWarning)
                text = json_schema_to_gbnf(record["schema"], property_order="any")
        except SchemaError:
            continue  # refused: counted as a failure, never as an accept
        grammar = Grammar.from_gbnf(text)
        right = True
        for test in record["tests"]:
            instance = json.dumps(test["data"], ensure_ascii=False)
            accepted = grammar.match(instance).status.value == "accept"
            if accepted and not test["valid"]:
                false_accepts.append(f"{record['id']}: {instance[:200]}")
            right = right and accepted == test["valid"]
        passed += right
    assert not false_accepts, "\n".join(false_accepts)
    assert passed >= 0.8 * len(records)
