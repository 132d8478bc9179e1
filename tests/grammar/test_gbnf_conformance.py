"""Every record of ``shared/conformance/gbnf.jsonl`` (verdicts produced by llama.cpp).

Grammars llama.cpp refuses must be refused here, in the same category; for every other
grammar each case must give exactly llama.cpp's ``(status, fail_at)``.

The only exceptions are gbnfkit's deliberate divergences (listed in the README); where a
record hits one, the test asserts gbnfkit's own behaviour instead:

1. a reversed range ``[z-a]`` is an error (llama.cpp: matches nothing);
2. ``{m,n}`` with ``m > n`` is an error;
3. ``[]`` and ``[^]`` are errors (llama.cpp: match the empty string);
4. a rule defined twice is an error (llama.cpp: the last definition wins);
5. repetition bounds are exact: an upper bound above 2000 still bounds (llama.cpp:
   unbounded), and llama.cpp's size thresholds (a lower bound above 2000, rules times
   repetitions above 2000) are not errors;
6. (``_`` in a rule name is an error in both; only the message differs.)
7. left recursion that llama.cpp's check misses is an error (not in the corpus: llama.cpp
   loops on it);
8. an undefined rule mentioned only under ``{0}`` is an error (llama.cpp drops the
   reference, and refuses only when the rule's id falls among those of defined rules).
"""

# shared data: conformance/gbnf.jsonl

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from gbnfkit import Grammar, GrammarError

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared"
RECORDS: list[dict[str, Any]] = [
    json.loads(line)
    for line in (SHARED / "conformance" / "gbnf.jsonl").read_text(encoding="utf-8").splitlines()
    if line.strip()
]
LLAMA_REPETITION_THRESHOLD = 2000


def category(err: GrammarError) -> str:
    """The corpus' ``error_kind`` for one of our errors."""
    message = err.message
    if message.startswith("empty grammar"):
        return "empty_grammar"
    if message.startswith("undefined rule"):
        return "undefined_rule"
    if message.startswith("no rule named"):
        return "missing_root"
    if "left recursion" in message:
        return "left_recursion"
    return "syntax"


def bounds(grammar: str) -> list[int]:
    """Every number written in a repetition ``{m}``, ``{m,}``, ``{m,n}``."""
    found: list[int] = []
    for match in re.finditer(r"\{\s*(\d+)\s*(?:,\s*(\d*)\s*)?\}", grammar):
        found.extend(int(group) for group in match.groups() if group)
    return found


def divergent_refusal(grammar: str, err: GrammarError) -> str | None:
    """Which documented divergence made us refuse a grammar llama.cpp accepts."""
    message = err.message
    if message.startswith("reversed range"):
        return "reversed range"
    if message.startswith(("empty character class", "empty negated character class")):
        assert "[]" in grammar or "[^]" in grammar
        return "empty class"
    if "is defined twice" in message:
        (name,) = err.rules
        definitions = re.findall(rf"(?m)^[ \t]*{re.escape(name)}[ \t]*::=", grammar)
        assert len(definitions) >= 2
        return "duplicate rule"
    if "minimum above its maximum" in message:
        return "min above max"
    if message.startswith("undefined rule") and all(
        _only_repeated_zero_times(grammar, name) for name in err.rules
    ):
        return "undefined under {0}"
    return None


def _only_repeated_zero_times(grammar: str, name: str) -> bool:
    """Whether every mention of rule ``name`` is repeated ``{0}`` or ``{0,0}`` (llama.cpp
    drops the reference, and may never see the rule is undefined)."""
    mentions = list(re.finditer(rf"(?<![\w-]){re.escape(name)}(?![\w-])", grammar))
    zero = re.compile(r"[ \t]*\{[ \t]*0+[ \t]*(?:,[ \t]*0+[ \t]*)?\}")
    return bool(mentions) and all(zero.match(grammar, m.end()) for m in mentions)


@pytest.mark.parametrize("record", RECORDS, ids=[record["id"] for record in RECORDS])
def test_record(record: dict[str, Any]) -> None:
    grammar = record["grammar"]
    if record["grammar_error"] is not None:
        try:
            Grammar.from_gbnf(grammar)
        except GrammarError as err:
            assert category(err) == record["error_kind"], err.message
            return
        # divergence 5: only llama.cpp's repetition-size thresholds may be accepted
        assert record["error_kind"] == "syntax" and "repetition" in record["grammar_error"]
        assert "edge" in record["features"] and bounds(grammar)
        return
    try:
        g = Grammar.from_gbnf(grammar)
    except GrammarError as err:
        assert divergent_refusal(grammar, err) is not None, err.message
        return
    exceeds_threshold = any(b > LLAMA_REPETITION_THRESHOLD for b in bounds(grammar))
    for case in record["cases"]:
        result = g.match(case["input"])
        got = (str(result.status), result.position)
        expected = (case["expect"], case["fail_at"])
        if got != expected and exceeds_threshold:
            # divergence 5: our bound is exact, so we stop where llama.cpp went on
            assert case["expect"] in ("accept", "prefix")
            assert got[0] == "reject" and got[1] is not None
            assert got[1] > LLAMA_REPETITION_THRESHOLD
            continue
        assert got == expected, case["input"]


def test_divergences_are_exactly_the_documented_ones() -> None:
    """The records on which we knowingly differ, and why (see the module docstring)."""
    seen: dict[str, set[str]] = {}
    for record in RECORDS:
        try:
            g = Grammar.from_gbnf(record["grammar"])
        except GrammarError as err:
            if record["grammar_error"] is None:
                reason = divergent_refusal(record["grammar"], err)
                seen.setdefault(str(reason), set()).add(record["id"])
            continue
        if record["grammar_error"] is not None:
            seen.setdefault("llama repetition threshold", set()).add(record["id"])
            continue
        for case in record["cases"]:
            result = g.match(case["input"])
            if (str(result.status), result.position) != (case["expect"], case["fail_at"]):
                seen.setdefault("exact repetition bound", set()).add(record["id"])
    assert set(seen) <= {
        "reversed range",
        "empty class",
        "duplicate rule",
        "min above max",
        "undefined under {0}",
        "llama repetition threshold",
        "exact repetition bound",
    }
    # the corpus pins these llama.cpp quirks down; we diverge on each of them on purpose
    assert {"class-empty-brackets"} <= seen["empty class"]
    assert {"rules-duplicate-last-wins"} <= seen["duplicate rule"]
    assert {"rep-over-threshold-unbounded"} <= seen["exact repetition bound"]
    assert {"err-rep-rules-threshold"} <= seen["llama repetition threshold"]


def test_exact_repetition_bound_above_llama_threshold() -> None:
    g = Grammar.from_gbnf('root ::= "a"{0,2001} "b"')
    assert str(g.match("a" * 2001 + "b").status) == "accept"
    result = g.match("a" * 2002 + "b")
    assert (str(result.status), result.position) == ("reject", 2001)
    g = Grammar.from_gbnf('root ::= ("a" "b"? "c"?){1000}')
    assert str(g.match("a" * 1000).status) == "accept"
    assert str(g.match("abc" * 999).status) == "prefix"
    assert g.match("a" * 1001).position == 1000
