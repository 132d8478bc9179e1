"""MaskBench development-set coverage of the JSON Schema converter.

For every schema of ``shared/maskbench/dev.jsonl``: convert it, then match every test
instance (``json.dumps(data, ensure_ascii=False)``, default separators) code point by
code point.  A schema *passes* when it converts and every instance is judged right
(valid: accepted; invalid: rejected or left incomplete).  Prints pass share, refusals
(by keyword), false accepts, false rejects, convert+compile time percentiles (wall clock,
and CPU time of this process, which a busy machine disturbs less) and the largest
grammars (characters of GBNF, rules).

    python bench/maskbench_coverage.py [--limit N] [--lenient] [--verbose]

Default options: spec defaults, ``property_order=any`` (instances come in any key
order), ``strict=True`` (a schema with a keyword we cannot enforce is refused, so no
approximation can cause a false accept).  ``--lenient`` uses ``strict=False``.
"""

from __future__ import annotations

import argparse
import collections
import json
import statistics
import sys
import time
import warnings
from pathlib import Path
from typing import Any

from gbnfkit import GbnfkitError, Grammar, SchemaError
from gbnfkit.schema import SchemaOptions, SchemaWarning, json_schema_to_gbnf

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "maskbench" / "dev.jsonl"


def load(limit: int | None = None, every: int = 1) -> list[dict[str, Any]]:
    rows = []
    with open(DATA, encoding="utf-8") as f:
        for i, line in enumerate(f):
            if i % every == 0:
                rows.append(json.loads(line))
            if limit is not None and len(rows) >= limit:
                break
    return rows


def judge(record: dict[str, Any], options: SchemaOptions) -> dict[str, Any]:
    """Convert one record's schema and judge its tests."""
    out: dict[str, Any] = {"id": record["id"], "refused": None, "false_accepts": 0,
                           "false_rejects": 0, "tests": len(record["tests"])}
    t0 = time.perf_counter()
    c0 = time.process_time()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SchemaWarning)
            text = json_schema_to_gbnf(record["schema"], options=options)
        grammar = Grammar.from_gbnf(text)
    except SchemaError as e:
        out["refused"] = e.keyword or "schema"
        out["reason"] = str(e)
        return out
    except GbnfkitError as e:
        out["refused"] = "grammar"
        out["reason"] = str(e)
        return out
    out["convert_s"] = time.perf_counter() - t0
    out["convert_cpu_s"] = time.process_time() - c0
    out["gbnf_chars"] = len(text)
    out["gbnf_rules"] = text.count("::=")
    for test in record["tests"]:
        instance = json.dumps(test["data"], ensure_ascii=False)
        try:
            accepted = grammar.match(instance).status.value == "accept"
        except GbnfkitError as e:  # a resource limit while matching
            out["refused"] = "match-limit"
            out["reason"] = str(e)
            return out
        if accepted and not test["valid"]:
            out["false_accepts"] += 1
        elif not accepted and test["valid"]:
            out["false_rejects"] += 1
    return out


def summarize(results: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(results)
    passed = [r for r in results if r["refused"] is None and not r["false_accepts"]
              and not r["false_rejects"]]
    refused = collections.Counter(r["refused"] for r in results if r["refused"])
    times = sorted(r["convert_s"] for r in results if "convert_s" in r)
    cpu = sorted(r["convert_cpu_s"] for r in results if "convert_cpu_s" in r)
    return {
        "schemas": n,
        "passed": len(passed),
        "pass_share": len(passed) / n if n else 0.0,
        "refused": sum(refused.values()),
        "refused_by": dict(refused.most_common()),
        "false_accepts": sum(r["false_accepts"] for r in results),
        "false_rejects": sum(r["false_rejects"] for r in results),
        "schemas_with_false_accepts": sum(1 for r in results if r["false_accepts"]),
        "schemas_with_false_rejects": sum(1 for r in results if r["false_rejects"]),
        "convert_ms_p50": 1000 * statistics.median(times) if times else 0.0,
        "convert_ms_p90": 1000 * times[int(0.9 * (len(times) - 1))] if times else 0.0,
        "convert_ms_p99": 1000 * times[int(0.99 * (len(times) - 1))] if times else 0.0,
        "convert_ms_max": 1000 * times[-1] if times else 0.0,
        "convert_cpu_ms_p50": 1000 * statistics.median(cpu) if cpu else 0.0,
        "convert_cpu_ms_p90": 1000 * cpu[int(0.9 * (len(cpu) - 1))] if cpu else 0.0,
        "convert_cpu_ms_max": 1000 * cpu[-1] if cpu else 0.0,
        "slowest_cpu_ms": [(r["id"], round(1000 * r["convert_cpu_s"])) for r in sorted(
            (r for r in results if "convert_cpu_s" in r),
            key=lambda r: -r["convert_cpu_s"])[:5]],
        "largest_grammars": [(r["id"], r["gbnf_chars"], r["gbnf_rules"]) for r in sorted(
            (r for r in results if "gbnf_chars" in r), key=lambda r: -r["gbnf_chars"])[:5]],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--lenient", action="store_true", help="strict=False")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args(argv)
    options = SchemaOptions(property_order="any", strict=not args.lenient)  # type: ignore[arg-type]
    results = [judge(r, options) for r in load(args.limit)]
    if args.verbose:
        for r in results:
            if r["refused"] or r["false_accepts"] or r["false_rejects"]:
                print(json.dumps(r, ensure_ascii=False)[:300])
    print(json.dumps(summarize(results), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
