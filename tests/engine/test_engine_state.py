"""State: immutability, identity, feed errors, allowed rules, bytes and caches."""

from __future__ import annotations

import copy
import pickle

import pytest

from gbnfkit import (
    ArgumentError,
    CharExcludeRule,
    CharRule,
    EndRule,
    Grammar,
    InputRejected,
    Limits,
    MatchStatus,
    State,
)


def g(text: str, **kw: Limits) -> Grammar:
    return Grammar.from_gbnf(text, **kw)


# -- identity ------------------------------------------------------------------------------
def test_equal_stacks_give_equal_states_whatever_the_path() -> None:
    gr = g('root ::= ("ab" | "a" "b")* "c"')
    s0 = gr.start()
    a = s0.feed("ab")
    b = s0.feed("a").feed("b")
    c = s0.feed("abab")
    assert a == b == c
    assert hash(a) == hash(b) == hash(c)
    assert len({a, b, c}) == 1
    assert s0.feed("a") != a
    assert a.grammar is gr


def test_states_are_immutable_and_survive_rejection() -> None:
    s = g('root ::= "ab"').start().feed("a")
    with pytest.raises(AttributeError):
        s._core = None  # type: ignore[misc]
    with pytest.raises(InputRejected):
        s.feed("x")
    assert s.feed("b").is_complete
    assert not s.is_complete


def test_states_of_equal_grammars_compare_equal() -> None:
    g1, g2 = g('root ::= "a"*'), g('root ::= "a"*')
    assert g1 == g2 and hash(g1) == hash(g2)
    assert g1.start().feed("aa") == g2.start().feed("a")
    assert g1.start() != g('root ::= "b"*').start()


# -- InputRejected -------------------------------------------------------------------------
def test_input_rejected_attributes() -> None:
    s = g('root ::= "ab" [0-9]+').start().feed("a")
    with pytest.raises(InputRejected) as info:
        s.feed("b12x3")
    e = info.value
    assert e.position == 3
    assert e.character == "x"
    assert e.text == "b12x3"
    assert e.expected == ("one of [0-9]", "end of input")
    assert "position 3" in str(e)


def test_rejected_invalid_utf8() -> None:
    s = g("root ::= .*").start()
    with pytest.raises(InputRejected) as info:
        s.feed(b"ab\xff")
    assert info.value.position == 2 and info.value.character == b"\xff"
    with pytest.raises(InputRejected) as info:
        s.feed(b"a\xe3\x41")  # lead byte, then not a continuation byte
    assert info.value.position == 1 and info.value.character == b"A"
    for bad in (b"\xc0\x80", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\x80"):
        with pytest.raises(InputRejected):
            s.feed(bad)


# -- allowed() -----------------------------------------------------------------------------
def test_allowed_merges_positive_ranges() -> None:
    s = g('root ::= [a-c] | [b-f] "x" | "z" | ""').start()
    assert s.allowed() == (CharRule(((ord("a"), ord("f")), (ord("z"), ord("z")))), EndRule())
    assert str(s.allowed()[0]) == "[a-fz]"
    assert str(s.allowed()[1]) == "<end>"


def test_allowed_negated_union_is_the_intersection_of_exclusions() -> None:
    s = g("root ::= [^a] | [^b]").start()
    assert s.allowed() == (CharExcludeRule(()),)
    assert str(s.allowed()[0]) == "."
    s2 = g('root ::= [^ab] | [^bc] | "b" | "q"').start()
    # allowed: everything except b (excluded by both), but "b" is positive again
    only_b = ((ord("b"), ord("b")),)
    assert s2.allowed() == (CharRule(only_b), CharExcludeRule(only_b))
    assert s2.allows("b") and s2.allows("q") and s2.allows("a")


def test_rule_strings_and_descriptions() -> None:
    assert str(CharRule(((ord("a"), ord("z")), (ord("0"), ord("9"))))) == "[0-9a-z]"
    assert str(CharExcludeRule(((ord('"'), ord('"')), (ord("\\"), ord("\\"))))) == '[^"\\\\]'
    assert CharRule(((ord("x"), ord("x")),)).describe() == "'x'"
    assert CharExcludeRule(()).describe() == "any character"
    assert CharExcludeRule(((10, 10),)).describe() == "any character except [\\n]"
    assert EndRule().describe() == "end of input"
    assert CharRule(((ord("a"), ord("c")),)).matches("b")
    assert not CharExcludeRule(((ord("a"), ord("c")),)).matches("b")


def test_allows_and_is_complete() -> None:
    s = g('root ::= "a" "b"?').start()
    assert s.allows("a") and not s.allows("b")
    t = s.feed("a")
    assert t.is_complete and t.allows("b") and EndRule() in t.allowed()
    assert isinstance(t, State)


# -- bytes ---------------------------------------------------------------------------------
def test_partial_characters_are_pending() -> None:
    gr = g('root ::= "\u00e9" | "\u4e2d" "x" | [\U0001f600-\U0001f64f]')
    s = gr.start()
    enc = "\u4e2d".encode()
    p = s.feed(enc[:1])
    assert p.pending_bytes == enc[:1]
    assert not p.is_complete
    assert p.allowed() == (CharRule(((0x4E2D, 0x4E2D),)),)
    assert p.allowed_bytes() == frozenset({enc[1]})
    q = p.feed(enc[1:2]).feed(enc[2:])
    assert q.pending_bytes == b"" and q == s.feed("\u4e2d")
    assert q.feed(b"x").is_complete
    # a str fed onto pending bytes cannot complete them
    with pytest.raises(InputRejected):
        p.feed("x")


def test_allowed_bytes_is_exact() -> None:
    s = g('root ::= "\u00e9" | "\u4e2d" | [\U0001f600-\U0001f64f] | "a"').start()
    assert s.allowed_bytes() == frozenset({ord("a"), 0xC3, 0xE4, 0xF0})
    f0 = s.feed(b"\xf0")
    assert f0.allowed_bytes() == frozenset({0x9F})
    assert f0.feed(b"\x9f").allowed_bytes() == frozenset({0x98, 0x99})
    with pytest.raises(InputRejected) as info:
        s.feed(b"\xc4")  # a valid lead byte, but no allowed character starts with it
    assert info.value.position == 0 and info.value.character == b"\xc4"


def test_allowed_bytes_skip_surrogates() -> None:
    s = g("root ::= [\\uD000-\\uDFFF]").start()
    ed = s.feed(b"\xed")
    assert ed.allowed_bytes() == frozenset(range(0x80, 0xA0))
    none = g("root ::= [\\uD800-\\uDFFF]").start()
    assert none.allowed_bytes() == frozenset()


@pytest.mark.parametrize(
    "grammar", ['root ::= [^a] "b"', 'root ::= . "b"', 'root ::= [x\\uD800-\\uDFFF]+ "b"']
)
@pytest.mark.parametrize("text", ["\ud800b", "\udc80b", "x\udfffb"])
def test_lone_surrogates_are_refused_as_by_the_bytes_path(grammar: str, text: str) -> None:
    # a lone surrogate is no character: the str path refuses it where the bytes path
    # refuses its surrogatepass encoding, even where `.` or `[^a]` would take any character
    gr = g(grammar)
    at = next(i for i, ch in enumerate(text) if 0xD800 <= ord(ch) <= 0xDFFF)
    with pytest.raises(InputRejected) as by_bytes:
        gr.start().feed(text.encode("utf-8", "surrogatepass"))
    with pytest.raises(InputRejected) as by_text:
        gr.start().feed(text)
    assert by_text.value.position == by_bytes.value.position == at
    assert by_text.value.character == text[at]
    assert by_text.value.reason is not None and "lone surrogate" in by_text.value.reason
    result = gr.match(text)
    assert (result.status, result.position) == (MatchStatus.REJECT, at)
    # the message prints: the excerpt writes the surrogate as an escape
    str(by_text.value).encode("utf-8")
    assert "\\u" in str(by_text.value).splitlines()[-2]


def test_excerpt_escapes_control_characters_under_the_right_column() -> None:
    with pytest.raises(InputRejected) as info:
        g('root ::= [^a]* "!"').start().feed("\x1b[1m\x00a")
    line, caret = str(info.value).splitlines()[-2:]
    assert line == "\\x1b[1m\\x00a"
    assert caret.index("^") == line.index("a")


# -- caches --------------------------------------------------------------------------------
def test_dropping_caches_keeps_old_states_working() -> None:
    gr = g('root ::= ("a" | "b" | "c")* "!"', limits=Limits(max_cached_states=4))
    words = ["a", "ab", "abc", "abca", "cab", "bca", "cc"]
    before = {w: gr.start().feed(w) for w in words}
    # force many new states through a grammar with a tiny cache
    gr2 = g('root ::= [a-z]{0,30} "!"', limits=Limits(max_cached_states=4))
    old = gr2.start().feed("abc")
    for n in range(25):
        gr2.start().feed("x" * n)
    assert old == gr2.start().feed("xyz")
    assert hash(old) == hash(gr2.start().feed("xyz"))
    assert old.feed("d" * 27 + "!").is_complete
    with pytest.raises(InputRejected):
        old.feed("d" * 28)
    assert gr2.engine.gen > 0  # the caches were dropped
    assert gr2.engine.cached_states <= 4
    for w, st in before.items():
        assert st == gr.start().feed(w)
        assert st.feed("!").is_complete


def test_many_transitions_from_one_state_also_drop_the_caches() -> None:
    gr = g('root ::= [^"]*', limits=Limits(max_cached_states=2))
    s = gr.start()
    for cp in range(0x100, 0x100 + 40):
        assert s.allows(chr(cp))
    assert gr.engine.gen > 0
    assert s.feed("\u0105abc") == gr.start().feed("xyz")


# -- wrong types, copies, pickles (found by bughunt7) ----------------------------------------
@pytest.mark.parametrize("text", [5, [1, 2], None, 1.5, ("a",)])
def test_feeding_something_other_than_text_is_an_argument_error(text: object) -> None:
    # an int was read as bytes(n), n NUL bytes, and a list as its bytes, silently (pure);
    # the compiled build raised a bare TypeError
    gr = g('root ::= [^a]* "a"')
    state = gr.start()
    with pytest.raises(ArgumentError, match="str or bytes"):
        state.feed(text)  # type: ignore[call-overload]
    with pytest.raises(ArgumentError, match="str or bytes"):
        state.allows(text)  # type: ignore[call-overload]
    with pytest.raises(ArgumentError, match="str or bytes"):
        gr.match(text)  # type: ignore[arg-type]
    for data in (bytearray(b"xa"), memoryview(b"xa"), b"xa"):
        assert state.feed(data).is_complete and gr.match(data).accepted and state.allows(data)


def test_states_and_grammars_cannot_lose_attributes() -> None:
    gr = g('root ::= "ab"')
    state = gr.start()
    with pytest.raises(AttributeError, match="immutable"):
        del state._core
    with pytest.raises(AttributeError, match="immutable"):
        del gr._program
    assert state.feed("ab").is_complete and gr.match("ab").accepted


def test_copies_of_states_and_grammars_are_themselves_and_grammars_pickle() -> None:
    gr = Grammar.from_gbnf('start ::= "x" [0-9]+', "start", limits=Limits(max_stacks=77))
    state = gr.start().feed("x1")
    assert copy.copy(state) is state and copy.deepcopy([state])[0] is state
    assert copy.copy(gr) is gr and copy.deepcopy({"g": gr})["g"] is gr
    again = pickle.loads(pickle.dumps(gr))
    assert again == gr and again.root == "start" and again.match("x12").accepted
    builtin = Grammar.builtin("json")
    loaded = pickle.loads(pickle.dumps(builtin))
    assert loaded == builtin and loaded.limits == builtin.limits
    assert again.limits.max_stacks == 77
    with pytest.raises(ArgumentError, match="does not pickle"):
        pickle.dumps(state)
