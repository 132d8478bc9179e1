"""Conversion time of a large, real-world-like JSON Schema.

The schema has 400 properties of mixed kinds (strings with formats and patterns,
bounded integers and numbers, enums, arrays of objects), and a chain of 25 ``$defs``,
each referring to the next, with a recursive tree at the bottom.  Prints the median
time of ``json_schema_to_gbnf`` and of ``Grammar.from_gbnf`` on its output.

    python bench/schema.py [--repeat N]
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

from gbnfkit import Grammar, json_schema_to_gbnf


def big_schema(n_props: int = 400, depth: int = 25) -> dict[str, Any]:
    kinds: list[dict[str, Any]] = [
        {"type": "string", "format": "date-time"},
        {"type": "string", "pattern": "^[A-Z]{3}-[0-9]{4,6}$"},
        {"type": "integer", "minimum": -40, "maximum": 125_000},
        {"type": "number", "exclusiveMinimum": 0, "maximum": 99.5},
        {"enum": ["draft", "active", "archived", None]},
        {"type": "array", "items": {"type": "object", "properties": {
            "k": {"type": "string", "maxLength": 40}, "v": {"type": ["number", "null"]}},
            "required": ["k"], "additionalProperties": False}, "maxItems": 8},
        {"type": "boolean"},
        {"$ref": "#/$defs/level0"},
    ]
    defs: dict[str, Any] = {}
    for i in range(depth):
        nxt = {"$ref": f"#/$defs/level{i + 1}"} if i + 1 < depth else {"$ref": "#/$defs/tree"}
        defs[f"level{i}"] = {"type": "object", "properties": {
            f"name{i}": {"type": "string", "minLength": 1}, "child": nxt,
            "uuid": {"type": "string", "format": "uuid"}}, "required": [f"name{i}"]}
    defs["tree"] = {"type": "object", "properties": {
        "value": {"type": "integer"},
        "children": {"type": "array", "items": {"$ref": "#/$defs/tree"}}}}
    props = {f"field_{i:03d}": kinds[i % len(kinds)] for i in range(n_props)}
    return {"type": "object", "properties": props,
            "required": [f"field_{i:03d}" for i in range(0, n_props, 7)], "$defs": defs}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    schema = big_schema()
    conv, build = [], []
    text = ""
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        text = json_schema_to_gbnf(schema)
        t1 = time.perf_counter()
        Grammar.from_gbnf(text)
        t2 = time.perf_counter()
        conv.append(t1 - t0)
        build.append(t2 - t1)
    print(f"schema: {len(schema['properties'])} properties, {len(schema['$defs'])} $defs "
          f"(ref chain depth {len(schema['$defs']) - 1})")
    print(f"grammar: {len(text.splitlines())} rules, {len(text):,} characters")
    print(f"json_schema_to_gbnf: median {1000 * statistics.median(conv):.1f} ms "
          f"(min {1000 * min(conv):.1f} ms, {args.repeat} runs)")
    print(f"Grammar.from_gbnf on the result: median {1000 * statistics.median(build):.1f} ms")


if __name__ == "__main__":
    main()
