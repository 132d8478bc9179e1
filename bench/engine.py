"""Engine benchmark: grammar build times and ``State.feed`` throughput.

Run from the repository root:

    /work/venv/bin/python bench/engine.py [--size-mb 1.0]

Prints, for every builtin grammar, the parse + compile time (best of three); then
characters/second of ``feed`` for (a) a generated realistic JSON document (~1 MB)
through the ``json`` grammar and (b) an ambiguous grammar, both with cold caches (a fresh
grammar) and warm (the same text fed again through the same grammar); then the JSON
document as UTF-8 bytes, and a worst case where every character leads to a new state.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time

from gbnfkit import Grammar

# Used only if the builtin ``json`` grammar is not available.
FALLBACK_JSON = r"""
root   ::= object
value  ::= object | array | string | number | ("true" | "false" | "null") ws
object ::= "{" ws ( string ":" ws value ("," ws string ":" ws value)* )? "}" ws
array  ::= "[" ws ( value ("," ws value)* )? "]" ws
string ::= "\"" ( [^"\\\x7F\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4}) )* "\"" ws
number ::= ("-"? ([0-9] | [1-9] [0-9]{0,15})) ("." [0-9]+)? ([eE] [-+]? [0-9] [1-9]{0,15})? ws
ws ::= | " " | "\n" [ \t]{0,20}
"""

AMBIGUOUS = r"""
root ::= (item ws)*
item ::= ("a"? "a"? "a"?)* word | ("a" | "aa" | "aaa"){1,12} "b"? | word "x"{0,8} | nest
word ::= [a-z]{1,24} | [a-c] [a-z]* | "ab" [a-z]{0,16} | ([a-z] [a-z]?)+
nest ::= "(" (item | word){0,3} ")" | "(" nest ")"
ws   ::= " "?
"""

WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "theta", "kappa", "lambda",
         "omega", "naïve", "café", "日本語", "emoji 😀", "tab\there", "quote \" inside"]


def _value(rng: random.Random, depth: int) -> object:
    r = rng.random()
    if depth < 4 and r < 0.25:
        keys = [f"{rng.choice(WORDS)}_{i}" for i in range(rng.randint(1, 6))]
        return {k: _value(rng, depth + 1) for k in keys}
    if depth < 4 and r < 0.4:
        return [_value(rng, depth + 1) for _ in range(rng.randint(0, 6))]
    if r < 0.6:
        return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 8)))
    if r < 0.75:
        return rng.randint(-10**9, 10**9)
    if r < 0.9:
        return round(rng.uniform(-1e6, 1e6), rng.randint(0, 6))
    return rng.choice([True, False, None])


def make_json(size: int, seed: int = 1) -> str:
    """A realistic JSON object of about ``size`` characters (indented, unicode, escapes)."""
    rng = random.Random(seed)
    records = []
    total = 0
    while total < size:
        rec = {"id": len(records), "name": rng.choice(WORDS), "tags": [rng.choice(WORDS)
               for _ in range(rng.randint(0, 4))], "data": _value(rng, 1)}
        text = json.dumps(rec, ensure_ascii=False)
        total += len(text) + 6
        records.append(rec)
    return json.dumps({"records": records}, ensure_ascii=False, indent=1)


def make_ambiguous(size: int, seed: int = 2) -> str:
    rng = random.Random(seed)
    parts = []
    total = 0
    while total < size:
        w = rng.choice(["aaa", "aaaab", "abc", "abxx", "cab", "aaaaaaa", "zzz", "abab",
                        "((abc)(aab))", "(((aaaa)))", "abcdefghijklmnopqrstuv", "aaaaaaaaaab"])
        parts.append(w)
        total += len(w) + 1
    return " ".join(parts)


def throughput(grammar: Grammar, text: str | bytes) -> float:
    t = time.perf_counter()
    state = grammar.start().feed(text)
    dt = time.perf_counter() - t
    assert state is not None
    return len(text) / dt


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--size-mb", type=float, default=1.0)
    args = ap.parse_args()
    size = int(args.size_mb * 1_000_000)

    Grammar.from_gbnf('root ::= "warm-up"').start()  # imports, so they are not timed
    print("## grammar parse + compile time")
    names: tuple[str, ...] = ()
    try:
        names = Grammar.builtin_names()
    except ImportError:
        print("  (builtin grammars not available)")
    for name in names:
        dt = float("inf")
        for _ in range(3):  # best of three: the machine is shared
            t = time.perf_counter()
            g = Grammar.builtin(name)
            g.start()
            dt = min(dt, time.perf_counter() - t)
        print(f"  {name:12s} {dt * 1000:8.2f} ms  ({g.program.size} elements, "
              f"{len(g.program.rule_names)} rules)")

    json_text = "json" if "json" in names else None
    doc = make_json(size)
    amb = make_ambiguous(size // 4)

    def build_json() -> Grammar:
        return Grammar.builtin("json") if json_text else Grammar.from_gbnf(FALLBACK_JSON)

    print(f"\n## feed throughput (characters/second), python {sys.version.split()[0]}")
    for label, build, text in (
        (f"json ({'builtin' if json_text else 'fallback'}) {len(doc):,} chars", build_json, doc),
        (f"ambiguous {len(amb):,} chars", lambda: Grammar.from_gbnf(AMBIGUOUS), amb),
    ):
        g = build()
        cold = throughput(g, text)
        warm = max(throughput(g, text) for _ in range(3))
        states = g.engine.cached_states
        print(f"  {label:40s} cold {cold:12,.0f}  warm {warm:12,.0f}  ({states} cached states)")

    # bytes (UTF-8 decoded incrementally); figures are characters/second
    g = build_json()
    data = doc.encode()
    cold = throughput(g, data) * len(doc) / len(data)
    warm = max(throughput(g, data) for _ in range(3)) * len(doc) / len(data)
    print(f"  {'json as UTF-8 bytes':40s} cold {cold:12,.0f}  warm {warm:12,.0f}")

    # worst case: every character leads to a state never seen before
    deep = "[" * 10_000 + "]" * 10_000
    g = build_json()
    cold = throughput(g, deep)
    print(f"  {'json nested 10,000 deep (all new states)':40s} cold {cold:12,.0f}")


if __name__ == "__main__":
    main()
