"""Matcher behaviour: advancing, rollback, fork, jump-forward, errors, save/load, compiler cache."""

from __future__ import annotations

import typing
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gbnfkit
from gbnfkit import Grammar, InputRejected, LoadError, Vocabulary, VocabularyError


def _vocabulary() -> Vocabulary:
    tokens: list[bytes | None] = [bytes([b]) for b in range(256)]
    tokens += [b'{"', b"name", b'":', b"na", b"me", b'"', b"\xc3", b"\xa9", b"\xc3\xa9", b"ab"]
    tokens += [None, None]  # special, EOS
    return Vocabulary(tokens, eos_token_ids=[len(tokens) - 1], special_token_ids=[len(tokens) - 2])


VOCAB = _vocabulary()
EOS = len(VOCAB.tokens) - 1
SPECIAL = len(VOCAB.tokens) - 2


def tid(data: bytes) -> int:
    return VOCAB.tokens.index(data)


OBJECT = Grammar.from_gbnf('root ::= "{" "\\"name\\"" ":" " "? [0-9]+ "}"')


def test_jump_forward_after_partial_key() -> None:
    matcher = gbnfkit.compile(OBJECT, VOCAB).matcher()
    assert matcher.jump_forward() == '{"name":'
    matcher.accept_text('{"na')
    assert matcher.jump_forward() == 'me":'
    matcher.accept_text('me": 4')
    assert matcher.jump_forward() == ""


def test_jump_forward_stops_before_an_open_choice_and_skips_a_started_character() -> None:
    grammar = Grammar.from_gbnf('root ::= "é" "x" ("y" | "z")')
    matcher = gbnfkit.compile(grammar, VOCAB).matcher()
    assert matcher.accept_token(tid(b"\xc3"))
    assert matcher.jump_forward() == "x"


def test_jump_forward_bytes_finish_a_started_character_and_accept_bytes_takes_them() -> None:
    """``jump_forward()`` skips the bytes finishing a character the tokens started, so
    its text cannot be given to ``accept_text``; the bytes form can, to ``accept_bytes``."""
    grammar = Grammar.from_gbnf('root ::= "é" "x" [é-ë]')
    matcher = gbnfkit.compile(grammar, VOCAB).matcher()
    assert matcher.accept_token(tid(b"\xc3"))
    assert matcher.jump_forward() == "x"
    with pytest.raises(InputRejected):
        matcher.accept_text(matcher.jump_forward())  # mid-character: "x" is not allowed
    forced = matcher.jump_forward_bytes()
    assert forced == b"\xa9x\xc3"  # é's last byte, x, the first byte of [é-ë]
    matcher.accept_bytes(forced)
    assert matcher.steps == 2 and not matcher.is_complete
    assert matcher.jump_forward_bytes() == b"" and matcher.jump_forward() == ""
    second = VOCAB.tokens.index(b"\xa9", 256)  # the token b"\xa9" (not the single byte)
    assert sorted(matcher.allowed_token_ids()) == [0xA9, 0xAA, 0xAB, second]
    matcher.accept_bytes(bytearray(b"\xab"))
    assert matcher.is_complete
    matcher.rollback()
    assert not matcher.is_complete and matcher.steps == 2


def test_accept_bytes_rejects_without_changing_state() -> None:
    matcher = gbnfkit.compile(OBJECT, VOCAB).matcher()
    with pytest.raises(InputRejected) as info:
        matcher.accept_bytes(b'{"na\xc3\xa9')
    assert (info.value.position, info.value.character) == (4, "é")
    assert "'m'" in info.value.expected
    with pytest.raises(InputRejected) as info:
        matcher.accept_bytes(b'{\xff')
    assert (info.value.position, info.value.character) == (1, b"\xff")
    assert matcher.steps == 0 and matcher.jump_forward_bytes() == b'{"name":'
    with pytest.raises(gbnfkit.ArgumentError):
        matcher.accept_bytes('{"')  # type: ignore[arg-type]
    matcher.accept_bytes(b'{"name": 1}')
    assert matcher.accept_token(EOS) and matcher.jump_forward_bytes() == b""
    matcher.accept_bytes(b"")
    with pytest.raises(InputRejected, match="already ended"):
        matcher.accept_bytes(b"1")


def test_accept_token_rejects_without_changing_state() -> None:
    matcher = gbnfkit.compile(OBJECT, VOCAB).matcher()
    before = matcher.allowed_token_ids()
    with pytest.raises(InputRejected) as info:
        matcher.accept_token(tid(b"name"))
    assert info.value.token_id == tid(b"name")
    assert (info.value.position, info.value.character) == (0, "n")
    assert "'{'" in info.value.expected
    assert f"token {tid(b'name')} rejected" in str(info.value)
    assert np.array_equal(matcher.allowed_token_ids(), before)
    assert matcher.steps == 0
    assert matcher.accept_token(tid(b'{"'))
    assert matcher.accept_token(tid(b"na"))
    assert matcher.accept_token(tid(b"me"))
    assert matcher.accept_token(tid(b'":'))


def test_out_of_range_ids_raise_vocabulary_error() -> None:
    matcher = gbnfkit.compile(OBJECT, VOCAB).matcher()
    for bad in (-1, VOCAB.size, 10**9):
        with pytest.raises(VocabularyError):
            matcher.accept_token(bad)
        with pytest.raises(VocabularyError):
            matcher.is_allowed(bad)


def test_accept_text_raises_input_rejected_with_position() -> None:
    matcher = gbnfkit.compile(OBJECT, VOCAB).matcher()
    with pytest.raises(InputRejected) as info:
        matcher.accept_text('{"nom')
    assert info.value.position == 3
    assert info.value.character == "o"
    assert "'a'" in info.value.expected
    assert matcher.steps == 0  # unchanged
    matcher.accept_text('{"na')
    assert matcher.steps == 1


def test_rollback_reset_and_fork() -> None:
    matcher = gbnfkit.compile(OBJECT, VOCAB).matcher()
    start = matcher.allowed_token_ids()
    for data in (b'{"', b"na", b"me", b'":'):
        assert matcher.accept_token(tid(data))
    after = matcher.allowed_token_ids()
    fork = matcher.fork()
    matcher.rollback(2)
    assert matcher.steps == 2
    assert matcher.is_allowed(tid(b"me"))
    assert np.array_equal(fork.allowed_token_ids(), after)
    assert fork.steps == 4
    with pytest.raises(ValueError):
        matcher.rollback(3)
    matcher.reset()
    assert np.array_equal(matcher.allowed_token_ids(), start)
    assert matcher.steps == 0


def test_eos_termination_and_rollback_of_eos() -> None:
    matcher = gbnfkit.compile(OBJECT, VOCAB).matcher()
    matcher.accept_text('{"name":1')
    assert not matcher.is_allowed(EOS)
    with pytest.raises(InputRejected, match="before the text is complete"):
        matcher.accept_token(EOS)
    matcher.accept_text("}")
    assert matcher.is_complete
    assert matcher.is_allowed(EOS)
    assert not matcher.is_allowed(SPECIAL)
    assert matcher.accept_token(EOS)
    assert matcher.is_terminated
    assert matcher.allowed_token_ids().tolist() == [EOS]
    with pytest.raises(InputRejected, match="already ended") as info:
        matcher.accept_token(tid(b"a"))
    assert info.value.token_id == tid(b"a")
    assert matcher.accept_token(EOS)  # again: nothing changes
    assert matcher.steps == 3
    matcher.rollback(1)
    assert not matcher.is_terminated
    assert EOS in matcher.allowed_token_ids().tolist()


def test_split_character_tokens_are_exact() -> None:
    grammar = Grammar.from_gbnf('root ::= "é" | "ê"')
    matcher = gbnfkit.compile(grammar, VOCAB).matcher()
    ids = matcher.allowed_token_ids().tolist()
    assert tid(b"\xc3") in ids and tid(b"\xc3\xa9") in ids
    assert tid(b"\xa9") not in ids
    assert matcher.accept_token(tid(b"\xc3"))
    # duplicate tokens (same bytes, two ids) are both allowed
    expected = [i for i, t in enumerate(VOCAB.tokens) if t in (b"\xa9", b"\xaa")]
    assert len(expected) == 3
    assert matcher.allowed_token_ids().tolist() == expected
    only_e = gbnfkit.compile(Grammar.from_gbnf('root ::= "ê"'), VOCAB).matcher()
    assert only_e.is_allowed(tid(b"\xc3"))
    assert not only_e.is_allowed(tid(b"\xc3\xa9"))


@settings(max_examples=30, deadline=None)
@given(st.lists(st.sampled_from([b'{"', b"na", b"me", b'":', b" ", b"1", b"}", b"x"]), max_size=8))
def test_is_allowed_agrees_with_mask_and_accept(tokens: list[bytes]) -> None:
    matcher = gbnfkit.compile(OBJECT, VOCAB).matcher()
    for data in tokens:
        token = tid(data)
        allowed = matcher.is_allowed(token)
        assert allowed == (token in matcher.allowed_token_ids().tolist())
        steps = matcher.steps
        if allowed:
            assert matcher.accept_token(token) is True
            assert matcher.steps == steps + 1
        else:
            with pytest.raises(InputRejected) as info:
                matcher.accept_token(token)
            assert info.value.token_id == token
            assert matcher.steps == steps


def test_save_and_load_round_trip(tmp_path: Path) -> None:
    compiled = gbnfkit.compile(OBJECT, VOCAB)
    matcher = compiled.matcher()
    matcher.accept_text('{"na')
    expected = matcher.allowed_token_ids()
    path = tmp_path / "object.npz"
    compiled.save(path)
    loaded = gbnfkit.CompiledGrammar.load(path, OBJECT, VOCAB)
    again = loaded.matcher()
    again.accept_text('{"na')
    assert np.array_equal(again.allowed_token_ids(), expected)
    other = Grammar.from_gbnf('root ::= "x"')
    with pytest.raises(LoadError, match="another grammar"):
        gbnfkit.CompiledGrammar.load(path, other, VOCAB)
    smaller = Vocabulary([b"a", b"b"])
    with pytest.raises(LoadError, match="another vocabulary"):
        gbnfkit.CompiledGrammar.load(path, OBJECT, smaller)
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"not a file")
    with pytest.raises(LoadError):
        gbnfkit.CompiledGrammar.load(junk, OBJECT, VOCAB)


@pytest.mark.parametrize("name", ["object.bin", "object", "object.npz"])
def test_save_writes_exactly_the_path_given(tmp_path: Path, name: str) -> None:
    """found by bughunt9: save('g.bin') wrote 'g.bin.npz' (numpy appends the suffix to a
    name), so load('g.bin') raised LoadError."""
    compiled = gbnfkit.compile(OBJECT, VOCAB)
    matcher = compiled.matcher()
    matcher.accept_text('{"na')
    expected = matcher.allowed_token_ids()
    path = tmp_path / name
    compiled.save(str(path))
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]
    for loaded in (
        gbnfkit.CompiledGrammar.load(str(path), OBJECT, VOCAB),
        gbnfkit.GrammarCompiler(VOCAB).load(path, OBJECT),
    ):
        again = loaded.matcher()
        again.accept_text('{"na')
        assert np.array_equal(again.allowed_token_ids(), expected)
    with pytest.raises(gbnfkit.ArgumentError, match="path"):
        compiled.save(3)  # type: ignore[arg-type]  # a file descriptor is not a path


def _resave(source: Path, target: Path, **changes: object) -> None:
    with np.load(source) as data:
        fields = {name: data[name] for name in data.files}
    fields.update(changes)  # type: ignore[arg-type]
    np.savez(target, **fields)  # type: ignore[arg-type]


def test_load_refuses_another_context_depth_format_or_corrupted_contents(tmp_path: Path) -> None:
    from gbnfkit.tokens._compiled import CONTEXT_DEPTH

    compiled = gbnfkit.compile(OBJECT, VOCAB)
    matcher = compiled.matcher()
    matcher.accept_text('{"name": 1')
    matcher.allowed_token_ids()
    path = tmp_path / "object.npz"
    compiled.save(path)
    cases = {
        "context depth": {"context_depth": np.array(CONTEXT_DEPTH + 1)},
        "file format": {"format": np.array("gbnfkit-compiled-v1")},
        "not a gbnfkit": {"format": np.array("something else")},
        "corrupted": {"depths": np.load(path)["depths"] + 1},
    }
    for reason, change in cases.items():
        bad = tmp_path / "bad.npz"
        _resave(path, bad, **change)
        with pytest.raises(LoadError, match=reason) as info:
            gbnfkit.CompiledGrammar.load(bad, OBJECT, VOCAB)
        assert info.value.path == str(bad)
    data = path.read_bytes()
    for cut in (10, len(data) // 2, len(data) - 3):
        truncated = tmp_path / "truncated.npz"
        truncated.write_bytes(data[:cut])
        with pytest.raises(LoadError):
            gbnfkit.CompiledGrammar.load(truncated, OBJECT, VOCAB)
    single = tmp_path / "single.npy"
    np.save(single, np.zeros(3))
    with pytest.raises(LoadError, match="not a .npz"):
        gbnfkit.CompiledGrammar.load(single, OBJECT, VOCAB)


def test_compiler_cache_is_bounded_lru() -> None:
    compiler = gbnfkit.GrammarCompiler(VOCAB, cache_size=2)
    grammars = [Grammar.from_gbnf(f'root ::= "{c}"') for c in "abc"]
    first = compiler.compile(grammars[0])
    assert compiler.compile(grammars[0]) is first
    compiler.compile(grammars[1])
    compiler.compile(grammars[2])
    assert compiler.compile(grammars[0]) is not first
    assert gbnfkit.compile(grammars[0], VOCAB) is not gbnfkit.compile(grammars[0], VOCAB)


def test_compiler_without_a_cache_compiles_every_time_and_shares_its_index() -> None:
    """``cache_size=0`` keeps no compiled grammar (none is looked up either) and still
    compiles through the compiler's one vocabulary index, with the same masks."""
    compiler = gbnfkit.GrammarCompiler(VOCAB, cache_size=0)
    grammar = Grammar.from_gbnf('root ::= "a" [bc]*')
    first, second = compiler.compile(grammar), compiler.compile(grammar)
    assert first is not second and first.grammar is grammar
    assert first._index is second._index is compiler._index
    alone = gbnfkit.compile(grammar, VOCAB)
    expected = alone.matcher().allowed_token_ids()
    for compiled in (first, second):
        assert np.array_equal(compiled.matcher().allowed_token_ids(), expected)


def test_compiler_cache_hits_equal_grammars_only() -> None:
    """The cache is looked up by program; a hit needs equal fingerprints too."""
    compiler = gbnfkit.GrammarCompiler(VOCAB)
    joined = Grammar.from_gbnf('root ::= "ab"')
    split = Grammar.from_gbnf('root ::= [a] "b"')
    assert joined.program.ranges == split.program.ranges and joined != split  # same program
    first = compiler.compile(joined)
    assert compiler.compile(Grammar.from_gbnf('root ::= "ab"')) is first  # equal grammar
    other = compiler.compile(split)
    assert other is not first and other.grammar is split
    assert compiler.compile(split) is other
    assert compiler.compile(Grammar.from_gbnf('root ::= "ac"')) is not other


def test_tiny_state_cache_limit_keeps_masks_exact() -> None:
    """With room for very few states the automaton keeps dropping its caches; masks stay equal."""
    limits = gbnfkit.Limits(max_cached_states=3)
    small = Grammar.from_gbnf(OBJECT.to_gbnf(), limits=limits)
    text = '{"name": 42}'
    a = gbnfkit.compile(OBJECT, VOCAB).matcher()
    b = gbnfkit.compile(small, VOCAB).matcher()
    for ch in text:
        assert np.array_equal(a.allowed_token_ids(), b.allowed_token_ids())
        a.accept_text(ch)
        b.accept_text(ch)
    assert b.is_complete


def test_rejected_token_names_the_refused_character_inside_the_token() -> None:
    grammar = Grammar.from_gbnf('root ::= "ab" | "ê"')
    matcher = gbnfkit.compile(grammar, VOCAB).matcher()
    with pytest.raises(InputRejected) as info:
        matcher.accept_token(tid(b"\xc3\xa9"))  # "é": its second byte is refused
    assert info.value.token_id == tid(b"\xc3\xa9")
    assert (info.value.position, info.value.character) == (0, "é")
    assert info.value.expected == ("byte 0xAA",)
    assert matcher.accept_token(tid(b"a"))
    with pytest.raises(InputRejected) as info:
        matcher.accept_token(tid(b"ab"))
    assert (info.value.position, info.value.character) == (0, "a")
    assert "'b'" in info.value.expected
    assert matcher.steps == 1


def test_is_complete_and_is_terminated_are_properties_with_a_deprecated_call() -> None:
    matcher = gbnfkit.compile(OBJECT, VOCAB).matcher()
    assert not matcher.is_complete and not matcher.is_terminated
    assert matcher.is_complete == False  # noqa: E712 - compares like a bool
    assert hash(matcher.is_complete) == hash(False)
    assert repr(matcher.is_complete) == "False"
    assert {matcher.is_complete: 1} == {False: 1}
    with pytest.warns(DeprecationWarning, match="property"):
        assert matcher.is_complete() is False
    matcher.accept_text('{"name":1}')
    assert matcher.is_complete == True  # noqa: E712
    assert (matcher.is_complete & True) is True and int(matcher.is_complete) == 1
    assert matcher.is_complete > False and f"{matcher.is_complete}" == "True"
    assert sorted([matcher.is_complete, False]) == [False, True]
    with pytest.warns(DeprecationWarning):
        assert matcher.is_complete() is True
    matcher.accept_token(EOS)
    with pytest.warns(DeprecationWarning, match="Matcher.is_terminated"):
        assert matcher.is_terminated() is True


@pytest.mark.parametrize("cls", [gbnfkit.Matcher, gbnfkit.LazyMatcher])
@pytest.mark.parametrize("name", ["is_complete", "is_terminated"])
def test_boolean_properties_are_typed_as_bool(cls: type, name: str) -> None:
    """They were annotated ``-> CallableBool``, so ``x: bool = matcher.is_complete``, the
    documented spelling, failed a user's ``mypy --strict``; the deprecated call stays a
    run-time courtesy only."""
    prop = getattr(cls, name)
    assert isinstance(prop, property)
    assert typing.get_type_hints(prop.fget)["return"] is bool


def test_vocabulary_is_a_read_only_property_shared_by_forks() -> None:
    compiled = gbnfkit.compile(OBJECT, VOCAB)
    matcher = compiled.matcher()
    assert matcher.vocabulary is VOCAB is compiled.vocabulary
    assert matcher.fork().vocabulary is VOCAB
    lazy = compiled.matcher(triggers=[gbnfkit.Trigger.word("{")])
    assert lazy.vocabulary is VOCAB
    lazy.accept_text('{"name":')  # active: still the same vocabulary
    assert lazy.is_active and lazy.vocabulary is VOCAB
    with pytest.raises(AttributeError):
        matcher.vocabulary = VOCAB  # type: ignore[misc]


@pytest.mark.parametrize("lazy", [False, True])
def test_copy_and_deepcopy_are_independent_forks(lazy: bool) -> None:
    import copy

    compiled = gbnfkit.compile(Grammar.from_gbnf('root ::= "x" [a-z]*'), VOCAB)

    def fed(*texts: str) -> gbnfkit.Matcher | gbnfkit.LazyMatcher:
        matcher = compiled.matcher(triggers=[gbnfkit.Trigger.word("x")] if lazy else None)
        for text in texts:
            matcher.accept_text(text)
        return matcher

    def mask(matcher: gbnfkit.Matcher | gbnfkit.LazyMatcher) -> np.ndarray:
        words = gbnfkit.allocate_bitmask(1, VOCAB.size)
        matcher.fill_bitmask(words)
        return words

    for duplicate in (copy.copy, copy.deepcopy):
        matcher = fed("x", "a", "b")
        other = duplicate(matcher)
        assert type(other) is type(matcher) and other.steps == matcher.steps == 3
        other.rollback(2)  # a copy sharing the history rolled the original back too
        other.accept_text("z")
        assert matcher.steps == 3 and other.steps == 2
        assert (mask(matcher) == mask(fed("x", "a", "b"))).all()
        assert (mask(other) == mask(fed("x", "z"))).all()


def test_compiler_cache_honours_each_grammars_limits() -> None:
    """found by bughunt9: the cache ignored Limits, so an equal grammar with other limits
    got the first one's compiled grammar, whose automaton enforced the first's limits
    (strict limits not enforced; raised limits ignored: LimitError on a text they allow)."""
    text = 'root ::= a\na ::= "x" a? "y"?'  # one more byte stack per x
    vocabulary = Vocabulary([b"x", b"y", None], eos_token_ids=[2])
    strict_limits = gbnfkit.Limits(max_stacks=1)  # LimitError after 14 x's

    def outcome(compiled: gbnfkit.CompiledGrammar) -> str:
        matcher = compiled.matcher()
        try:
            for _ in range(40):
                matcher.accept_token(0)
        except gbnfkit.LimitError:
            return "LimitError"
        return "accepted"

    loose = Grammar.from_gbnf(text)
    strict = Grammar.from_gbnf(text, limits=strict_limits)
    alone = {g.limits: outcome(gbnfkit.compile(g, vocabulary)) for g in (loose, strict)}
    assert alone == {loose.limits: "accepted", strict_limits: "LimitError"}
    for first, second in ((loose, strict), (strict, loose)):
        compiler = gbnfkit.GrammarCompiler(vocabulary)
        kept = compiler.compile(first)
        got = compiler.compile(second)
        assert (outcome(got), got.grammar.limits) == (alone[second.limits], second.limits)
        assert compiler.compile(Grammar.from_gbnf(text, limits=first.limits)) is kept
