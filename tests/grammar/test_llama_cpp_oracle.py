"""gbnfkit and the Python port of llama.cpp against the real llama.cpp (llama-cpp-python).

The oracle (``llama_cpp_oracle.py``) runs llama.cpp's grammar sampler in a worker
process; ``llama_cpp_diff.py`` compares (and, run as a script, fuzzes for longer). Skipped
only when ``llama_cpp`` cannot be imported (the ``[llama-cpp]`` extra, which the
development install has).
"""

# shared data: conformance/gbnf.jsonl

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("llama_cpp")

from gbnf_llama_reference import LlamaCrashes, llama_verdict  # noqa: E402
from llama_cpp_diff import compare, random_grammar  # noqa: E402
from llama_cpp_oracle import LlamaCpp  # noqa: E402
from test_fuzz import _TOKENS  # noqa: E402
from test_llama_differential import _matched_grammars  # noqa: E402

from gbnfkit import Grammar, GrammarError  # noqa: E402

_SETTINGS = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@pytest.fixture(scope="module")
def oracle() -> Iterator[LlamaCpp]:
    with LlamaCpp(timeout=10) as worker:
        yield worker


def _no_findings(oracle: LlamaCpp, text: str, seed: int = 0) -> None:
    findings = [
        finding
        for finding in compare(oracle, text, inputs_seed=seed)
        # llama.cpp's stacks may multiply past any timeout on an ambiguous grammar
        # (e.g. `root ::= . (root root){2,} "x" | "y"`) where gbnfkit's are bounded
        if finding.kind != "llama-timeout"
    ]
    assert not findings, [(f.kind, f.detail) for f in findings]


@_SETTINGS
@given(st.integers(0, 2**64))
def test_random_grammars(oracle: LlamaCpp, seed: int) -> None:
    _no_findings(oracle, random_grammar(random.Random(seed)), seed)


@_SETTINGS
@given(_matched_grammars(), st.integers(0, 2**32))
def test_matched_grammars(oracle: LlamaCpp, text: str, seed: int) -> None:
    _no_findings(oracle, text, seed)


@_SETTINGS
@given(st.lists(_TOKENS, max_size=25).map("".join))
def test_token_soup(oracle: LlamaCpp, text: str) -> None:
    _no_findings(oracle, text)


def test_oracle_sees_verdicts_and_refusals(oracle: LlamaCpp) -> None:
    outcome = oracle.run('root ::= "a" [^b]', ["a", "ac", "ab", "acd", "aé", "a😀"])
    assert outcome.status == "built"
    # 😀 has no token of its own in SmolLM2: fed as four byte tokens
    assert outcome.verdicts == (
        ("prefix", None), ("accept", None), ("reject", 1), ("reject", 2), ("accept", None),
        ("accept", None),
    )  # fmt: skip
    for text, kind in [
        ('root ::= "a', "syntax"),
        ("root ::= x", "undefined_rule"),
        ('Root ::= "a"', "missing_root"),
        ('root ::= root "a" | "b"', "left_recursion"),
        ("# only a comment", "empty_grammar"),
    ]:
        outcome = oracle.run(text)
        assert (outcome.status, outcome.kind) == ("refused", kind), outcome.log


@pytest.mark.parametrize(
    "text",
    [
        'root ::= x\nroot ::= "a"',
        'root ::= x\nroot ::= "a"\ny ::= "b"',
        'root ::= (x | "c")\nroot ::= "a"',
        'root ::= "b" (root)\nroot ::= "a"',
        'root ::= x\nx ::= y\nx ::= "a"',
        'root ::= y x\nx ::= y\nx ::= "a"',
    ],
)
def test_port_checks_undefined_rules_as_llama(oracle: LlamaCpp, text: str) -> None:
    """The rules llama.cpp keeps after a duplicate definition (the port's cases in
    test_llama_differential.py): the port says what the real one does."""
    outcome = oracle.run(text)
    assert llama_verdict(text) == (outcome.kind if outcome.status == "refused" else None)


@pytest.mark.parametrize(
    ("text", "status"),
    [
        # only the discarded definition refers to root: llama.cpp reads past its rules
        ('x ::= root\nx ::= "a"', "crashed"),
        # root only recurses into itself, through a group its check thinks non-empty:
        # no stack at all, and llama.cpp asserts there is one
        ('root ::= ((("a"){0})) root', "crashed"),
        # the number of optional copies, max - min, wraps around
        ('root ::= "a"{3,1}', "timeout"),
    ],
)
def test_llama_fails_where_gbnfkit_answers(oracle: LlamaCpp, text: str, status: str) -> None:
    assert oracle.run(text, [""], timeout=3).status == status
    if text == 'x ::= root\nx ::= "a"':
        with pytest.raises(LlamaCrashes):
            llama_verdict(text)
    try:
        grammar = Grammar.from_gbnf(text)
    except GrammarError as err:
        assert "defined twice" in err.message or "minimum above its maximum" in err.message
        return
    # the language is empty: nothing is allowed, not even the end
    assert grammar.start().allowed() == ()
    assert str(grammar.match("").status) == "prefix"
    assert grammar.match("a").position == 0
