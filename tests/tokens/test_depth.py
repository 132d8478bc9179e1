"""``Limits.max_stack_depth`` and ``Limits.max_cached_frames``: a byte state copies its
stacks, so input nested ``d`` deep made ``d**2`` time and memory (20,000 ``[`` into the
JSON grammar grew the process past 24 GB); the depth is refused past the limit with one
``LimitError`` naming it, and the transition cache is dropped past a budget of frames."""

from __future__ import annotations

import pytest

from gbnfkit import (
    CompiledGrammar,
    Grammar,
    GrammarCompiler,
    LimitError,
    Limits,
    Matcher,
    Vocabulary,
    allocate_bitmask,
)

TOKENS = [b"[", b"]", b"[[", b"]]", b"1", b",", b" ", b"{", b"}", b'"', b":"]
VOCABULARY = Vocabulary([*TOKENS, None], eos_token_ids=[len(TOKENS)])


def _allowed(matcher: Matcher) -> list[int]:
    bitmask = allocate_bitmask(1, VOCABULARY.size)
    matcher.fill_bitmask(bitmask, 0)
    return [t for t in range(VOCABULARY.size) if bitmask[0, t >> 5] >> (t & 31) & 1]


def _json(limits: Limits | None = None) -> CompiledGrammar:
    return GrammarCompiler(VOCABULARY).compile(Grammar.builtin("json", limits=limits))


def test_nesting_past_the_depth_is_refused_and_the_matcher_is_unchanged() -> None:
    matcher = _json().matcher()
    matcher.accept_text("[" * 1000)  # two frames a level: 2,003 frames, within 2,048
    assert _allowed(matcher) == [0, 1, 2, 3, 4, 6, 7, 9]
    with pytest.raises(LimitError) as info:
        matcher.accept_text("[" * 30)
    assert (info.value.limit, info.value.value) == ("max_stack_depth", 2_048)
    assert "nests too deeply" in str(info.value)
    assert matcher.steps == 1  # the refused text left no step
    matcher.accept_text("]" * 1000)
    assert matcher.is_complete


def test_a_raised_depth_reads_deeper_nesting() -> None:
    matcher = _json(Limits(max_stack_depth=5_000)).matcher()
    matcher.accept_text("[" * 2_400)
    matcher.accept_text("]" * 2_400)
    assert matcher.is_complete


def test_a_rule_chain_deeper_than_the_limit_is_refused_when_compiled() -> None:
    # one stack of 3,000 frames at the start (a chain of calls, none in tail position)
    rules = "".join(f'r{i} ::= r{i + 1} "x"\n' for i in range(3_000))
    text = f'root ::= r0\n{rules}r3000 ::= "a"\n'
    with pytest.raises(LimitError) as info:
        GrammarCompiler(VOCABULARY).compile(Grammar.from_gbnf(text))
    assert info.value.limit == "max_stack_depth"
    roomy = Grammar.from_gbnf(text, limits=Limits(max_stack_depth=4_000))
    assert GrammarCompiler(VOCABULARY).compile(roomy).matcher().is_allowed(TOKENS.index(b"1")) \
        is False


def test_past_the_frames_budget_the_cache_is_dropped_and_masks_stay_exact() -> None:
    """With a budget of 2,000 frames the cache is dropped again and again while a
    document nests 300 deep: every mask is the one computed with the default budget."""
    small = _json(Limits(max_cached_frames=2_000)).matcher()
    full = _json().matcher()
    automaton = small._automaton
    last, drops = automaton.numbering, 0
    for text in ["[" * 150, '{"', 'a": ', "[1, " * 150, "1", "]" * 150, "}", "]" * 150]:
        for ch in text:
            assert _allowed(small) == _allowed(full)
            small.accept_text(ch)
            full.accept_text(ch)
            if automaton.numbering is not last:
                last, drops = automaton.numbering, drops + 1
            assert automaton._frames <= 2_000 + max(len(s) for s in small._state.stacks) * len(
                small._state.stacks)
    assert small.is_complete and full.is_complete
    assert drops > 10


@pytest.mark.parametrize("value", [0, -5, "10", 1.5, True, None])
def test_a_limit_that_is_not_a_positive_int_is_an_argument_error(value: object) -> None:
    # (compiled modules read them as ints: a str reached them as a bare TypeError)
    import dataclasses

    from gbnfkit import ArgumentError

    for field in dataclasses.fields(Limits):
        with pytest.raises(ArgumentError, match=f"Limits.{field.name} must be a positive int"):
            Limits(**{field.name: value})  # type: ignore[arg-type]


def test_the_readme_table_lists_every_limit_and_its_default() -> None:
    import dataclasses
    import re
    from pathlib import Path

    readme = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Limits"):]
    section = section[: section.index("\n## ", 1)]
    rows = dict(re.findall(r"^\| `(\w+)` \| ([\d,]+) \|", section, re.MULTILINE))
    assert rows == {f.name: f"{f.default:,}" for f in dataclasses.fields(Limits)}
