"""States within one character that decide every token alike (``docs/masks.md``,
"Suffixes by first byte", states within a character; ``tokens/_within.py``): equal
signatures give equal verdicts and handover offsets on every token, the reuse by
signature keeps masks exact, and a sliced walk asked for some first bytes explores only
those."""

from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import replace

import pytest
from test_slices import (
    EXTRA,
    _follow,
    _roots,
    _sliced_walks_equal_stepping,
    sliced_walk_equals_stepping,
    vocabulary_with,
)
from test_widesplit import _by_stepping

import gbnfkit
from gbnfkit._grammar import Grammar
from gbnfkit.tokens._bytestate import ByteAutomaton, ByteState
from gbnfkit.tokens._compiled import _group_key, _groups, _stacks_of
from gbnfkit.tokens._keywalk import Universal
from gbnfkit.tokens._slices import SLICE_CLASSES, Covers, Utf8Dfa
from gbnfkit.tokens._trie import TokenTrie
from gbnfkit.tokens._tuning import Tuning
from gbnfkit.tokens._vocabulary import Vocabulary
from gbnfkit.tokens._within import alike_roots, home_state, signature_after, within_signature

# tokens that start inside a name after a multi-byte character and go on past its end
MORE = [b'\xc3\xa9"', b'\xc3\xa9": ', b'\xe4\xb8\xad",', b'\xc3\xa91"', b"\xc3", b"\xe4\xb8"]

# and escapes: back in the body after most, a class's own exclusions after "\u"
MORE += [b"\\n", b'\\n"', b'\\"', b"\\u00", b"\\u0062", b'\\u00e9":', b"\\\\", b"\\t ", b"\\x"]
MORE += [b"\\", b"\\u", b'\\/"', b'\\"",', b'\\u0063"']

# lead bytes of one class's other branch (U+E000-U+FFFF): another state, one signature
MORE += ["\ue000".encode(), '\ue000"'.encode(), "\uff41\u4e2d".encode(), '\uff41":'.encode()]


def _vocabulary() -> Vocabulary:
    return vocabulary_with(EXTRA + "é中1", 11, MORE)


def _grammar() -> tuple[Grammar, str]:
    """Known names sharing prefixes (one context of "a name other than these" per
    prefix), one starting with a multi-byte character (its class excludes it: another
    chain after that lead byte), string values (the same lead bytes, another frame to
    return into)."""
    known: dict[str, object] = {
        name: {"type": "integer"} for name in ("ab", "ac", "abd", "b-x", "é1", "a中")
    }
    # counted strings: after a lead byte the character returns into a frame with fewer
    # characters left (the same chains, another frame returned into)
    known["nick"] = {"type": "string", "maxLength": 3}
    known["tag"] = {"type": "string", "minLength": 2, "maxLength": 4}
    schema = {"type": "object", "properties": known, "additionalProperties": {"type": "string"}}
    document = (
        '{"abé": "中x", "ac": 1, "b-é": "é", "éz": "y", "aé": "", "a中": 2, "é1": 3, '
        '"nick": "é中", "tag": "中é中", "abｂ": "ａ", "a\ue000": ""}'
    )
    return Grammar.from_json_schema(schema, property_order="any"), document


def _children(compiled: gbnfkit.CompiledGrammar, document: str) -> list[ByteState]:
    """The states after each first byte of the context states along ``document``."""
    automaton = compiled.automaton
    out: dict[ByteState, None] = {}
    for root in _roots(compiled, document):
        for c in automaton.classes(root):
            child = automaton.step(root, (c & -c).bit_length() - 1)
            assert child is not None
            out[child] = None
    return list(out)


def test_equal_signatures_decide_every_token_alike() -> None:
    vocabulary = _vocabulary()
    grammar, document = _grammar()
    compiled = gbnfkit.CompiledGrammar(grammar, vocabulary)
    automaton = compiled.automaton
    trie = compiled.index.trie
    chains: dict[int, tuple[int, ...] | None] = {}
    by_sig: dict[object, list[ByteState]] = defaultdict(list)
    for child in _children(compiled, document):
        sig = within_signature(automaton, child, chains)
        if sig is not None:
            by_sig[sig].append(child)
    # read from a root's stacks without stepping, the same signature as the state's
    after = 0
    for root in _roots(compiled, document):
        for c in automaton.classes(root):
            byte = (c & -c).bit_length() - 1
            sig = signature_after(automaton, root, byte, chains)
            if sig is not None:
                after += 1
                child = automaton.step(root, byte)
                assert child is not None
                assert within_signature(automaton, child, chains) == sig
    assert after > 10
    shared = [states for states in by_sig.values() if len(states) > 1]
    # several prefixes' contexts meet each lead byte in a state of their own
    assert len(shared) >= 3
    for states in shared:
        first = _by_stepping(trie, automaton, states[0])
        for other in states[1:]:
            assert _by_stepping(trie, automaton, other) == first
    # states that decide tokens differently have different signatures (the string
    # values' lead states return into another frame; the class excluding 'é' has
    # another chain after its lead byte)
    verdicts = {sig: _by_stepping(trie, automaton, states[0]) for sig, states in by_sig.items()}
    assert len(set(map(repr, verdicts.values()))) >= 3
    sigs = list(verdicts)
    for i, a in enumerate(sigs):
        for b in sigs[i + 1 :]:
            if a[0] == b[0] and a[3] == b[3]:
                # the same frames below and chains: only the frame returned into differs
                assert (a[1], a[2]) != (b[1], b[2])


def _verdicts_past(
    trie: TokenTrie, automaton: ByteAutomaton, root: ByteState, free: int
) -> tuple[list[int], list[int], list[tuple[int, int]]]:
    """:func:`_by_stepping` of ``root`` on the tokens whose first byte is not in ``free``."""
    accepted, uncertain, pairs = _by_stepping(trie, automaton, root)
    data = trie.sorted_bytes
    keep = [not free >> data[p][0] & 1 for p in range(len(data))]
    return (
        [p for p in accepted if keep[p]],
        [p for p in uncertain if keep[p]],
        [(p, k) for p, k in pairs if keep[p]],
    )


# three alternatives, one body: "1" and "3" lead to states that differ only by their
# positions, "2" to one whose escape accepts another spelling five bytes down
ALIKE = r"""root ::= "1" x | "2" y | "3" z
body ::= [a-z]*
x ::= body | "\\u0062" body
y ::= body | "\\u0063" body
z ::= body | "\\u0062" body
"""


def test_roots_said_alike_decide_every_token_alike() -> None:
    """``alike_roots`` says two roots alike only when every token (but those under the
    free first bytes) gets the same verdict and handover offsets from both: a difference
    below states that differ (after ``\\u00``) is found by comparing their children."""
    vocabulary = _vocabulary()
    compiled = gbnfkit.CompiledGrammar(Grammar.from_gbnf(ALIKE), vocabulary)
    automaton = compiled.automaton
    trie = compiled.index.trie
    one, two, three = (automaton.step(automaton.initial, ord(c)) for c in "123")
    assert one is not None and two is not None and three is not None and one != three
    assert alike_roots(automaton, trie, one, three, 0, {}, 64)
    assert _by_stepping(trie, automaton, one) == _by_stepping(trie, automaton, three)
    assert _by_stepping(trie, automaton, one) != _by_stepping(trie, automaton, two)
    assert not alike_roots(automaton, trie, one, two, 0, {}, 64)
    assert not alike_roots(automaton, trie, one, three, 0, {}, 0)  # past the budget
    # the joined keys' roots along a document (two frames over the marker), with and
    # without the letters left out: said alike only when alike
    grammar, document = _grammar()
    compiled = gbnfkit.CompiledGrammar(grammar, vocabulary)
    automaton = compiled.automaton
    trie = compiled.index.trie
    roots: dict[ByteState, None] = {}
    state: ByteState | None = automaton.initial
    for byte in document.encode():
        assert state is not None
        by_base: dict[tuple[int, ...], list[tuple[int, ...]]] = defaultdict(list)
        for group in _groups(state.stacks):
            if len(group[0]) >= 3:
                by_base[group[0][:-2]].extend(group)
        for stacks in by_base.values():
            root = automaton.intern(frozenset(_stacks_of(_group_key(stacks, 2))))
            if not root.bottom:
                roots[root] = None
        state = automaton.step(state, byte)
    letters = sum(1 << b for b in b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
    said = apart = 0
    listed = list(roots)
    # and with the states that cover the class compared on their rest tokens only
    rest = compiled.index.slices[0].rest
    covering = Universal(automaton.program, Utf8Dfa(SLICE_CLASSES[0]), 4096, 4096).state
    for i, a in enumerate(listed):
        for b in listed[i + 1 :]:
            for free, by_rest in ((0, False), (letters, False), (letters, True)):
                more = (rest, covering) if by_rest else (None, None)
                if alike_roots(automaton, trie, a, b, free, {}, 64, *more):
                    said += 1
                    assert _verdicts_past(trie, automaton, a, free) == _verdicts_past(
                        trie, automaton, b, free
                    )
                else:
                    apart += 1
    assert said >= 3 and apart >= 3


def test_walks_are_kept_under_the_first_state_of_their_signature() -> None:
    """After ``e4`` and after ``ee`` a name's class is in two states (two branches of
    its rule) with one signature: a walk kept after either is kept under the first
    of them, so that a later context finds it whichever lead byte it starts with."""
    vocabulary = _vocabulary()
    grammar, document = _grammar()
    compiled = gbnfkit.CompiledGrammar(grammar, vocabulary)
    automaton = compiled.automaton
    chains: dict[int, tuple[int, ...] | None] = {}
    pairs = 0
    for root in _roots(compiled, document):
        a, b = automaton.step(root, 0xE4), automaton.step(root, 0xEE)
        if a is None or b is None or a == b:
            continue
        sig = within_signature(automaton, a, chains)
        if sig is None or sig != within_signature(automaton, b, chains):
            continue
        pairs += 1
        homes: dict[object, ByteState] = {}
        assert home_state(homes, automaton, a, chains) is a  # nothing kept: itself
        assert homes == {}
        assert home_state(homes, automaton, a, chains, keep=True) is a
        assert home_state(homes, automaton, b, chains, keep=True) is a
        assert home_state(homes, automaton, b, chains) is a
        assert homes == {sig: a}
        # they decide every token alike
        trie = compiled.index.trie
        assert _by_stepping(trie, automaton, a) == _by_stepping(trie, automaton, b)
    assert pairs >= 2


@pytest.mark.parametrize("tuning", [Tuning(), Tuning(wide=0)])
def test_masks_reusing_by_signature_match_the_reference(tuning: Tuning) -> None:
    vocabulary = _vocabulary()
    grammar, document = _grammar()
    compiled = gbnfkit.CompiledGrammar(grammar, vocabulary, tuning=tuning)
    _follow(compiled, grammar, vocabulary, document)
    assert compiled.within_reused > 0, "no first byte's walk was found by its signature"
    # with nothing kept by first byte, no reuse at all, the same masks
    plain = gbnfkit.CompiledGrammar(grammar, vocabulary, tuning=replace(tuning, max_suffixes=0))
    _follow(plain, grammar, vocabulary, document)
    assert plain.within_reused == 0


def test_covers_explore_only_the_wanted_first_bytes() -> None:
    vocabulary = _vocabulary()
    grammar, document = _grammar()
    compiled = gbnfkit.CompiledGrammar(grammar, vocabulary)
    automaton = compiled.automaton
    (piece,) = compiled.index.slices
    rng = random.Random(3)
    checked = 0
    for root in _roots(compiled, document):
        full = Covers(automaton, piece.dfa, {}, 64, compiled._lock)(root)
        for wanted in (0, 1 << 0x5C, 0xFF << 0xC0, rng.getrandbits(256), -1):
            covers = Covers(automaton, piece.dfa, {}, 64, compiled._lock)
            assert covers.covered(root, wanted) == full & wanted
        checked += full != 0
    assert checked > 3
    # and the sliced walks of those first bytes still equal stepping each token
    for root in _roots(compiled, document)[:12]:
        _sliced_walks_equal_stepping(compiled, root)


def test_quotes_and_escapes_alone_walk_the_rest_trie() -> None:
    """Under first bytes that start no character of the class (a quote, an escape)
    every token is a rest token: a walk of those alone goes through the rest trie."""
    vocabulary = _vocabulary()
    grammar, document = _grammar()
    compiled = gbnfkit.CompiledGrammar(grammar, vocabulary)
    trie = compiled.index.trie
    walked = 0
    for root in _roots(compiled, document):
        wanted = compiled.automaton.allowed_bits(root) & (1 << 0x5C | 1 << 0x22)
        if not wanted:
            continue
        stepped = _by_stepping(trie, compiled.automaton, root)
        before = compiled.sliced_walks
        sliced_walk_equals_stepping(compiled, root, wanted, stepped)
        walked += compiled.sliced_walks - before
    assert walked > 3


@pytest.mark.parametrize("tuning", [Tuning(), Tuning(second_tokens=0), Tuning(max_suffixes=0)])
def test_walks_pieced_by_first_and_second_byte_equal_stepping(tuning: Tuning) -> None:
    """After a document, the wide walk of every context state (pieced from the walks
    kept by first byte, by signature and by second byte, the rest walked or stepped)
    gives each token the verdict and handover offsets of stepping it."""
    vocabulary = _vocabulary()
    grammar, _ = _grammar()
    document = '{"ab\\n": "x", "ac": 1, "a\\u0064": "", "b-\\"": "y", "abd": 2, "\\/": "z"}'
    compiled = gbnfkit.CompiledGrammar(grammar, vocabulary, tuning=tuning)
    _follow(compiled, grammar, vocabulary, document)
    trie = compiled.index.trie
    automaton = compiled.automaton
    for root in _roots(compiled, document):
        walked = compiled._walk_by_first_byte(root)
        accepted, uncertain, pairs = _by_stepping(trie, automaton, root)
        assert walked.accepted.tolist() == accepted
        assert walked.uncertain.tolist() == uncertain
        got = zip(walked.handover_positions.tolist(), walked.handover_offsets.tolist(), strict=True)
        assert list(got) == pairs
    if tuning.max_suffixes:
        assert compiled.second_reused > 0, "no first byte was decided by its second byte"
    else:
        assert compiled.second_reused == 0
