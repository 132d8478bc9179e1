"""Keys as one lexeme (``docs/masks.md``, "Keys as one lexeme"; ``tokens/_keywalk.py``):
a state said to cover the string's class accepts every inside token (checked by
stepping each one), and the masks of key positions whose letters and "other name" are
joined equal the reference's."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_masks import synthetic_vocabulary
from test_slices import EXTRA, _follow, _roots

import gbnfkit
from gbnfkit._grammar import Grammar
from gbnfkit.tokens._bytestate import ByteState
from gbnfkit.tokens._compiled import _group_key, _groups, _stacks_of
from gbnfkit.tokens._keywalk import Universal, WideContexts, inside_only, same_walk
from gbnfkit.tokens._slices import SLICE_CLASSES, Utf8Dfa
from gbnfkit.tokens._tuning import Tuning
from gbnfkit.tokens._vecwalk import WideSplit

VOCABULARY = synthetic_vocabulary(EXTRA + "é中-_", seed=3)


def _inside_tokens_accepted(compiled: gbnfkit.CompiledGrammar, root: ByteState) -> bool:
    """Whether every inside token of the first slice is accepted from ``root``, stepped
    byte by byte."""
    trie = compiled.index.trie
    inside = compiled.index.slices[0].inside
    automaton = compiled.automaton
    return all(
        automaton.feed(root, data) is not None
        for p, data in enumerate(trie.sorted_bytes)
        if inside[p]
    )


def _states(compiled: gbnfkit.CompiledGrammar, document: str) -> list[ByteState]:
    """The whole states met feeding ``document`` byte by byte, the context states of
    their groups (``_roots``) and those of their groups joined by all but two frames."""
    automaton = compiled.automaton
    out: dict[ByteState, None] = dict.fromkeys(_roots(compiled, document))
    state: ByteState | None = automaton.initial
    for byte in document.encode():
        assert state is not None
        out[state] = None
        by_base: dict[tuple[int, ...], list[tuple[int, ...]]] = {}
        for group in _groups(state.stacks):
            if len(group[0]) >= 3:
                by_base.setdefault(group[0][:-2], []).extend(group)
        for stacks in by_base.values():
            for depth in (2, 3):
                out[automaton.intern(frozenset(_stacks_of(_group_key(stacks, depth))))] = None
        state = automaton.step(state, byte)
    return list(out)


def _check_covering(compiled: gbnfkit.CompiledGrammar, document: str) -> int:
    """Every state along ``document`` said to cover the class accepts every inside
    token; returns how many were said to."""
    universal = Universal(compiled.automaton.program, Utf8Dfa(SLICE_CLASSES[0]), 4096, 4096)
    said = 0
    for state in _states(compiled, document):
        if universal.state(state):
            said += 1
            assert _inside_tokens_accepted(compiled, state), state
    return said


# hand-written key rules: (grammar, document, whether the state after the quote covers)
KEYS = [
    # every letter but `a` goes on in the body; `a` only with `b` then the end
    (r'root ::= "\"" k "\""' "\n" r'k ::= [a] [b] | [^a"\\\x00-\x1f\x7f] [^"\\\x00-\x1f\x7f]*',
     '"ab"', False),
    # `a` leads to a rule that covers again: the whole covers
    (r'root ::= "\"" k "\""' "\n" r'k ::= [a] k | [^a"\\\x00-\x1f\x7f] [^"\\\x00-\x1f\x7f]*'
     "\n", '"aax"', True),
    # `a` leads to a rule that covers every character but `z`
    (r'root ::= "\"" k "\""' "\n" r'k ::= [a] m | [^a"\\\x00-\x1f\x7f] [^"\\\x00-\x1f\x7f]*'
     "\n" r'm ::= [^z"\\\x00-\x1f\x7f] [^"\\\x00-\x1f\x7f]*', '"ax"', False),
    # the class misses the multi-byte characters above U+FFFF
    (r'root ::= "\"" k "\""' "\n" r'k ::= [^"\\\x00-\x1f\x7f\U00010000-\U0010FFFF]*', '"a"', False),
    # a loop whose body reads two characters per turn still covers
    (r'root ::= "\"" k "\""' "\n" r'k ::= c k | c | ""' "\n" r'c ::= [^"\\\x00-\x1f\x7f]',
     '"abc"', True),
    # the body as a literal then the loop: `x` alone is a test, not a call
    (r'root ::= "\"" "x" [^"\\\x00-\x1f\x7f]* "\""', '"xy"', False),
]


@pytest.mark.parametrize(("gbnf", "document", "covers"), KEYS)
def test_covering_is_shown_only_where_every_inside_token_is_accepted(
    gbnf: str, document: str, covers: bool
) -> None:
    grammar = Grammar.from_gbnf(gbnf)
    compiled = gbnfkit.CompiledGrammar(grammar, VOCABULARY)
    universal = Universal(compiled.automaton.program, Utf8Dfa(SLICE_CLASSES[0]), 4096, 4096)
    after_quote = compiled.automaton.step(compiled.automaton.initial, ord('"'))
    assert after_quote is not None
    assert universal.state(after_quote) == covers
    _check_covering(compiled, document)
    _follow(compiled, grammar, VOCABULARY, document)


NAMES = st.lists(
    st.text(alphabet="ab-é中", min_size=1, max_size=4), min_size=1, max_size=5, unique=True
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(names=NAMES, extra=st.sampled_from([True, False, {"type": "integer"}]))
def test_key_states_said_to_cover_accept_every_inside_token(
    names: list[str], extra: object
) -> None:
    schema = {
        "type": "object",
        "properties": {name: {"type": "integer"} for name in names},
        "additionalProperties": extra,
    }
    grammar = Grammar.from_json_schema(schema, property_order="any")
    compiled = gbnfkit.CompiledGrammar(grammar, VOCABULARY)
    other = names[0] + "x" if extra is not False else names[-1]
    members = [f'"{name}": 1' for name in names[:-1]] + [f'"{other}": 1']
    document = "{" + ", ".join(members) + "}"
    said = _check_covering(compiled, document)
    if extra is not False:
        assert said > 0  # the key starts cover: any name may come
    _follow(compiled, grammar, VOCABULARY, document)


SCHEMA = {
    "type": "object",
    "properties": {
        name: {"type": "integer"}
        for name in ("ab", "abc", "a-b", "b", "ba", "é1", "中", "c_c", "abé")
    },
    "additionalProperties": {"type": "string"},
}
DOCUMENT = '{"abé": 1, "ba": 2, "abx": "é", "a\\u0063d": "q", "éz": "", "中中": "x", "c_c": 3}'


@pytest.mark.parametrize("tuning", [Tuning(), Tuning(key_positions=0), Tuning(many_first_bytes=0)])
def test_joined_key_masks_match_the_reference(tuning: Tuning) -> None:
    grammar = Grammar.from_json_schema(SCHEMA, property_order="any")
    compiled = gbnfkit.CompiledGrammar(grammar, VOCABULARY, tuning=tuning)
    _follow(compiled, grammar, VOCABULARY, DOCUMENT)
    assert (compiled._keys.joined > 0) == (tuning.key_positions > 0)


def test_joined_key_masks_of_the_json_builtin_and_closed_objects() -> None:
    """The ``json`` builtin's keys (no known names) and a closed object (no other
    names: no key state covers the class)."""
    json_grammar = Grammar.builtin("json")
    compiled = gbnfkit.CompiledGrammar(json_grammar, VOCABULARY)
    _follow(compiled, json_grammar, VOCABULARY, '{"ab": {"é中": [1, "x"]}, "": 2}')
    closed = dict(SCHEMA, additionalProperties=False)
    grammar = Grammar.from_json_schema(closed, property_order="any")
    compiled = gbnfkit.CompiledGrammar(grammar, VOCABULARY)
    _follow(compiled, grammar, VOCABULARY, json.dumps({"ab": 1, "中": 2}, ensure_ascii=False))
    assert compiled._keys.joined == 0


@pytest.mark.parametrize("tuning", [Tuning(), Tuning(many_first_bytes=0)])
def test_a_joined_context_is_handed_back_only_for_the_same_walk(tuning: Tuning) -> None:
    """Inside a key each prefix is a new joined context whose walk is usually the
    previous prefix's: the context made from it is handed back then, and only then
    (``same_walk``: every verdict and handover pair equal), or before the walk when
    the two roots decide every token alike (``WideContexts.before_walk``)."""
    flags = np.array([True, False, True, True, False])
    one, pos, off = np.array([1]), np.array([1, 1]), np.array([0, 2])
    walk = WideSplit(None, one, pos, off, flags)
    assert same_walk(walk, WideSplit(np.array([0, 2, 3]), one, pos, off))
    assert same_walk(walk, WideSplit(None, np.array([1]), pos.copy(), off.copy(), flags.copy()))
    other = flags.copy()
    other[3] = False
    assert not same_walk(walk, WideSplit(None, one, pos, off, other))
    assert not same_walk(walk, WideSplit(np.array([0, 2]), one, pos, off))
    assert not same_walk(walk, WideSplit(None, np.array([4]), pos, off, flags))
    assert not same_walk(walk, WideSplit(None, one, np.array([1]), np.array([0]), flags))
    assert not same_walk(walk, WideSplit(None, one, pos, np.array([0, 1]), flags))
    # along a document: handed back at some prefixes, and every mask is the reference's
    grammar = Grammar.from_json_schema(SCHEMA, property_order="any")
    compiled = gbnfkit.CompiledGrammar(grammar, VOCABULARY, tuning=tuning)
    _follow(compiled, grammar, VOCABULARY, DOCUMENT)
    assert compiled._wide_contexts.reused > 0
    # some before any walk, their roots' tokens decided alike (_within.alike_roots; not
    # with every context walked wide at once: then the last wide walk is seldom a key's)
    assert compiled._wide_contexts.alike > 0 or not tuning.many_first_bytes
    # the contexts handed back equal those made afresh, key by key
    fresh = gbnfkit.CompiledGrammar(grammar, VOCABULARY, tuning=tuning)
    nwords = fresh.index.nwords
    joined = 0
    for key, entry in list(compiled._contexts.items()):
        if len(_stacks_of(key)[0]) == 3:  # a joined context: two frames over the marker
            fresh._wide_contexts = WideContexts(fresh.index)  # nothing to hand back
            made = fresh._wide_split(key, None)
            assert made.tails == entry.tails
            assert made.uncertain_tokens == entry.uncertain_tokens
            assert made.follow == entry.follow
            assert np.array_equal(made.to_words(nwords), entry.to_words(nwords))
            joined += 1
    assert joined > compiled._wide_contexts.reused


def test_the_covering_question_is_asked_at_joined_keys_only() -> None:
    """A wide split takes its root as covering when ``join_keys`` joined its stacks
    (``Universal.joined_root``), without exploring the question again: at a string value
    (here ``minLength`` 22 copies, then a chain of 4,074 optional characters: a
    question explored up to ``key_positions`` calls at each of them, 15,379 along
    this document) nothing is explored, and the joined keys' roots are found."""
    schema = {
        "type": "object",
        "properties": {"ab": {"type": "string", "minLength": 22, "maxLength": 4096}},
        "additionalProperties": {"type": "integer"},
    }
    grammar = Grammar.from_json_schema(schema, property_order="any")
    compiled = gbnfkit.CompiledGrammar(grammar, VOCABULARY, tuning=Tuning(many_first_bytes=0))
    _follow(compiled, grammar, VOCABULARY, '{"ab": "' + "xé" * 13 + '", "abc": 1}')
    universal = compiled._keys
    assert universal.joined > 0 and universal.roots > 0
    assert universal.explored < 64  # the key rules' calls, not the string's chain
    assert not universal._states  # never asked of a whole state


def test_a_joined_key_takes_the_bytes_without_rest_tokens_as_accepted() -> None:
    """``inside_only``: a joined root's first bytes under which the rest trie holds no
    token are neither stepped nor walked, their tokens taken as accepted.  The synthetic
    vocabulary has rest tokens under some letters (``a"`` and the like): those letters
    must be walked.  Checked on every joined root of the document (every token under
    the bytes taken is inside and stepped whole from the root), masks against the
    reference."""
    grammar = Grammar.from_json_schema(SCHEMA, property_order="any")
    compiled = gbnfkit.CompiledGrammar(grammar, VOCABULARY)
    _follow(compiled, grammar, VOCABULARY, DOCUMENT)
    universal = compiled._keys
    piece = compiled.index.slices[0]
    trie = compiled.index.trie
    with_rest = sum(1 << b for b, child in enumerate(piece.rest.root_child) if child >= 0)
    letters = sum(1 << b for b in b"abcxyz")
    assert with_rest & letters and letters & ~with_rest  # both kinds of letters
    checked = 0
    for key in list(compiled._contexts):
        root = compiled.automaton.intern(frozenset(_stacks_of(key)))
        pieces: dict[int, tuple[WideSplit, int]] = {}
        free = inside_only(universal, root, compiled.index.slices, compiled.automaton, pieces)
        if not universal.joined_root(root):
            assert not free and not pieces
            continue
        assert free & letters and not free & with_rest
        ((walk, bits),) = pieces.values()
        assert bits == free and not len(walk.uncertain) and walk.flags is not None
        for p, data in enumerate(trie.sorted_bytes):
            if free >> data[0] & 1:
                assert piece.inside[p] and walk.flags[p]
                assert compiled.automaton.feed(root, data) is not None, data
                checked += 1
    assert checked
