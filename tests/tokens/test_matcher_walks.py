"""Random walks through the public Matcher API: ``rollback(n)`` against feeding the tokens
again from scratch, and ``jump_forward`` against the masks (the text must be forced)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from walk_tokens import WALK_GRAMMARS, WALK_TOKENS

from gbnfkit import Matcher, Vocabulary, compile

TOKENS: list[bytes | None] = [*WALK_TOKENS, None, None]
EOS, SPECIAL = len(TOKENS) - 2, len(TOKENS) - 1
VOCABULARY = Vocabulary(TOKENS, eos_token_ids=[EOS], special_token_ids=[SPECIAL])
GRAMMARS = [compile(grammar, VOCABULARY) for grammar in WALK_GRAMMARS]


def state_of(matcher: Matcher) -> tuple[object, ...]:
    return (
        tuple(matcher.allowed_token_ids().tolist()),
        bool(matcher.is_complete),
        bool(matcher.is_terminated),
        matcher.steps,
        matcher.jump_forward(),
    )


def walk(grammar_index: int, choices: list[int]) -> tuple[Matcher, list[int], list[bytes]]:
    """A matcher advanced by allowed tokens picked by ``choices``, and what it read."""
    matcher = GRAMMARS[grammar_index].matcher()
    taken: list[int] = []
    text: list[bytes] = []
    for choice in choices:
        allowed = matcher.allowed_token_ids().tolist()
        token = allowed[choice % len(allowed)]
        assert matcher.accept_token(token)
        taken.append(token)
        text.append(VOCABULARY.token_bytes(token) or b"")
        if token == EOS:
            break
    return matcher, taken, text


@settings(max_examples=60, deadline=None)
@given(st.integers(0, len(GRAMMARS) - 1), st.lists(st.integers(0, 10**6), max_size=14), st.data())
def test_rollback_n_is_feeding_the_first_tokens_again(
    grammar_index: int, choices: list[int], data: st.DataObject
) -> None:
    matcher, taken, _ = walk(grammar_index, choices)
    n = data.draw(st.integers(0, len(taken)))
    matcher.rollback(n)
    again = GRAMMARS[grammar_index].matcher()
    for token in taken[: len(taken) - n]:
        again.accept_token(token)
    assert state_of(matcher) == state_of(again)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, len(GRAMMARS) - 1), st.lists(st.integers(0, 10**6), max_size=14))
def test_jump_forward_text_is_forced(grammar_index: int, choices: list[int]) -> None:
    matcher, _, text = walk(grammar_index, choices)
    try:
        b"".join(text).decode("utf-8")
    except UnicodeDecodeError:
        return  # inside a character: the forced text skips its last bytes (documented)
    forced = matcher.jump_forward().encode("utf-8")
    if not forced:
        return
    assert not matcher.is_allowed(EOS)
    for token in matcher.allowed_token_ids().tolist():
        data = VOCABULARY.token_bytes(token)
        assert data is not None and (forced.startswith(data) or data.startswith(forced))
    fork = matcher.fork()
    fork.accept_text(forced.decode("utf-8"))  # and the grammar takes it
