"""Every record of shared/conformance/schema.jsonl against our converter.

The converter runs with ``SchemaOptions.llama_compat(strict=False)``: llama.cpp's
generation choices (closed objects, schema property order, its whitespace rule, 16-digit
integers, compact const/enum) so that verdicts can be compared one to one, and
``strict=False`` because llama.cpp also converts schemas with keywords it ignores.

A case passes when our verdict (and ``fail_at`` for rejections) equals llama.cpp's, or
when it is a documented improvement: the instance is complete JSON, and our verdict
agrees with the ``jsonschema`` library where llama.cpp's contradicts it.  Records where
llama.cpp leaves a keyword unenforced that we enforce (listed in ``ignored_keywords``),
falls back on a pattern (``converter_warning``) or checks a ``format`` less precisely
may also differ on incomplete inputs (no verdict of the spec to compare with) and in
``fail_at``; they are counted and listed, never silently passed.
"""

# shared data: conformance/schema.jsonl

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest

from gbnfkit import Grammar, SchemaError
from gbnfkit.schema import SchemaOptions, SchemaWarning, json_schema_to_gbnf

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared"
RECORDS = [json.loads(line) for line in
           (SHARED / "conformance" / "schema.jsonl").read_text(encoding="utf-8").splitlines()
           if line.strip()]
# keywords llama.cpp leaves unenforced and we enforce
ENFORCED_BEYOND_LLAMA = {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
                         "prefixItems", "format", "not", "const", "minProperties",
                         "maxProperties"}
# schemas llama.cpp refuses and we convert, because the spec gives them a meaning
CONVERTED_BEYOND_LLAMA = {"items: false": lambda s: s.get("items") is False}
OPTIONS = SchemaOptions.llama_compat(strict=False)


def _divergent(record: dict[str, Any]) -> bool:
    return bool(set(record["ignored_keywords"]) & ENFORCED_BEYOND_LLAMA
                or record["converter_warning"] or '"format"' in json.dumps(record["schema"]))


def _convert(schema: Any) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SchemaWarning)
        return json_schema_to_gbnf(schema, options=OPTIONS)


def _run(record: dict[str, Any]) -> tuple[list[str], list[str], list[str]]:
    """(failures, improvements, unverifiable divergences) of one record."""
    failures: list[str] = []
    improvements: list[str] = []
    divergences: list[str] = []
    grammar = Grammar.from_gbnf(_convert(record["schema"]))
    for case in record["cases"]:
        result = grammar.match(case["input"])
        ours = result.status.value
        where = f"{record['id']} {case['input']!r}: ours {ours}@{result.position}, " \
                f"llama {case['expect']}@{case['fail_at']}"
        if ours == case["expect"] and (ours != "reject" or result.position == case["fail_at"]):
            continue
        valid = case["jsonschema_valid"]
        if valid is not None and (ours == "accept") == valid and \
                (case["expect"] == "accept") != valid:
            improvements.append(where)
        elif _divergent(record) and (valid is None or ours == case["expect"] or
                                     (ours == "accept") == valid):
            divergences.append(where)
        else:
            failures.append(where)
    return failures, improvements, divergences


@pytest.mark.parametrize("record", RECORDS, ids=[r["id"] for r in RECORDS])
def test_conformance_record(record: dict[str, Any]) -> None:
    if record["converter_error"] is not None:
        if any(check(record["schema"]) for check in CONVERTED_BEYOND_LLAMA.values()):
            _convert(record["schema"])  # documented: we give it its spec meaning
            return
        with pytest.raises(SchemaError):
            _convert(record["schema"])
        return
    failures, _, _ = _run(record)
    assert not failures, "\n".join(failures)


def test_conformance_summary() -> None:
    """Most cases agree exactly; improvements always agree with jsonschema."""
    same = improved = diverged = 0
    for record in RECORDS:
        if record["converter_error"] is not None:
            continue
        failures, improvements, divergences = _run(record)
        assert not failures
        improved += len(improvements)
        diverged += len(divergences)
        same += len(record["cases"]) - len(improvements) - len(divergences)
    total = same + improved + diverged
    assert total == sum(len(r["cases"]) for r in RECORDS if r["converter_error"] is None)
    assert same / total > 0.9
