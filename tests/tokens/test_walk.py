"""The narrow split's trie walk and its packing agree with stepping every token alone.

``walk_all`` splits the vocabulary from a context state into accepted token ranges and
uncertain subtrees; these tests check it against the definition (feed each token's
bytes, one at a time) under every walk knob: children visited by jumping or one by one,
a budget that stops the walk, and a budget resumed by ``more()`` in small steps.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_bytestate import SELF_CALLING

import gbnfkit
from gbnfkit._grammar import Grammar
from gbnfkit.tokens._bytestate import BOTTOM, ByteAutomaton, ByteState
from gbnfkit.tokens._index import VocabularyIndex
from gbnfkit.tokens._trie import TokenTrie
from gbnfkit.tokens._tuning import Tuning
from gbnfkit.tokens._vocabulary import Vocabulary
from gbnfkit.tokens._walk import walk_all

GRAMMARS = [
    'root ::= "{" ws ("\\"" [a-z]{1,6} "\\"" ws ":" ws [0-9]+ ws)? "}"\nws ::= [ \\n]{0,3}',
    'root ::= ("ab" | "abc" | "b" [^"]* "q")+',
    'root ::= [a-c]* "x" | "ccc" [0-9]{2,4}',
    'root ::= "é" [^a]* | "中"{1,3} "a"',
]
ALPHABET = 'abcqx019 \n"{}:é中'


def _vocabulary(
    seed: int, alphabet: str = ALPHABET, count: int = 400, longest: int = 7
) -> Vocabulary:
    rng = random.Random(seed)
    tokens: list[bytes | None] = [bytes([b]) for b in range(256)]
    for _ in range(count):
        data = "".join(rng.choice(alphabet) for _ in range(rng.randint(2, longest))).encode()
        tokens.append(data[rng.randint(0, 1) :])  # some start inside a character
    return Vocabulary(list(dict.fromkeys(tokens)))


def _reference(
    trie: TokenTrie, automaton: ByteAutomaton, root: ByteState
) -> tuple[set[int], set[int]]:
    """Sorted positions accepted and uncertain, each token stepped alone."""
    accepted: set[int] = set()
    uncertain: set[int] = set()
    for pos, data in enumerate(trie.sorted_bytes):
        state: ByteState | None = root
        bottom = root.bottom
        for byte in data:
            assert state is not None
            state = automaton.step(state, byte)
            if state is None:
                break
            bottom = bottom or state.bottom
        if state is not None:
            accepted.add(pos)
        elif bottom:
            uncertain.add(pos)
    return accepted, uncertain


def _positions(
    trie: TokenTrie, walked: tuple[list[int], list[int], list[int]]
) -> tuple[set[int], set[int]]:
    lo, hi, nodes = walked
    accepted = {p for a, b in zip(lo, hi, strict=True) for p in range(a, b)}
    assert sum(hi) - sum(lo) == len(accepted)  # ranges do not overlap
    uncertain = {p for n in nodes for p in range(trie.tok_lo[n], trie.tok_hi[n])}
    return accepted, uncertain


def _contexts(automaton: ByteAutomaton, rng: random.Random) -> list[ByteState]:
    """Context states (top frames over the bottom marker) along a random text."""
    out = []
    state: ByteState | None = automaton.initial
    for _ in range(8):
        assert state is not None
        stacks = [s for s in state.stacks if s]
        for depth in (1, 2, 3):
            out.append(automaton.intern(frozenset((BOTTOM,) + s[-depth:] for s in stacks)))
        out.append(state)
        bits = automaton.allowed_bits(state)
        choices = [b for b in range(256) if (bits >> b) & 1]
        if not choices:
            break
        state = automaton.step(state, rng.choice(choices))
    return out


def _granting(nodes: int, asked: list[int]) -> Callable[[int], int]:
    """A ``more`` that grants ``nodes`` each time, noting the nodes reached in ``asked``."""

    def more(at: int) -> int:
        asked.append(at)
        return nodes

    return more


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(GRAMMARS), st.integers(0, 3), st.randoms(use_true_random=False))
def test_walk_all_matches_stepping_each_token(text: str, seed: int, rng: random.Random) -> None:
    vocabulary = _vocabulary(seed)
    compiled = gbnfkit.CompiledGrammar(Grammar.from_gbnf(text), vocabulary)
    automaton = compiled.automaton
    trie = compiled.index.trie
    never = Tuning(jump_bytes=0)
    always = Tuning(jump_bytes=256, jump_subtree=0)
    for root in _contexts(automaton, rng):
        expected = _reference(trie, automaton, root)
        full = walk_all(trie, automaton, root)
        assert full is not None
        assert _positions(trie, full) == expected
        for tuning in (never, always):
            got = walk_all(trie, automaton, root, tuning=tuning)
            assert got is not None and _positions(trie, got) == expected
        # a budget resumed 3 nodes at a time gives the same split
        asked: list[int] = []
        three = _granting(3, asked)
        resumed = walk_all(trie, automaton, root, 1, three)
        assert resumed is not None and _positions(trie, resumed) == expected
        assert all(0 <= at < len(trie.end) for at in asked)  # nodes the walk had reached
        # a budget that runs out (and is not extended) stops the walk
        cut = walk_all(trie, automaton, root, len(asked) // 2, lambda at: 0)
        if len(asked) >= 2:
            assert cut is None


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.tuples(st.integers(0, 650), st.integers(0, 120)), max_size=40))
def test_sparse_ranges_are_the_packed_bits(spans: list[tuple[int, int]]) -> None:
    _check_sparse_ranges(VocabularyIndex(_vocabulary(1)), spans)


def _check_sparse_ranges(index: VocabularyIndex, spans: list[tuple[int, int]]) -> None:
    """``sparse_ranges`` of ``(start, length)`` spans against packing their tokens."""
    n = index.n_sorted
    lo = [min(a, n) for a, _ in spans]
    hi = [min(a + k, n) for a, k in spans]
    chosen = sorted({p for a, b in zip(lo, hi, strict=True) for p in range(a, b)})
    expected = index.pack_ids(index.trie.sorted_ids[np.array(chosen, dtype=np.int64)])
    word_index, word_bits = index.sparse_ranges(lo, hi)
    assert word_index.tolist() == sorted(set(word_index.tolist()))
    assert np.all(word_bits != 0)
    got = np.zeros(index.nwords, dtype=np.uint32)
    got[word_index] = word_bits
    assert np.array_equal(got, expected)
    # a narrow split of these ranges, on a base split of other tokens: its bits alone
    # (`to_words`), and ORed in by a mask through the `few` words gathered at its end
    base = index.narrow_context([0], [min(3, n)], ())
    context = index.narrow_context(lo, hi, (), base)
    few = sum(hi) - sum(lo) <= 64  # counted with overlaps
    few_words = few and len(np.flatnonzero(expected)) * 8 <= index.nwords
    assert bool(context.few) == (few_words and len(chosen) > 0)
    with_base = expected | base.to_words(index.nwords)
    assert np.array_equal(context.to_words(index.nwords), with_base)
    words = np.zeros(index.nwords, dtype=np.uint32)
    gathered: dict[int, int] = {}
    context.add_to(words, gathered)
    assert index.few_bits(lo, hi, gathered) == few
    words[list(gathered)] |= np.array(list(gathered.values()), dtype=np.uint32)
    assert np.array_equal(words, with_base)


@pytest.mark.parametrize(
    "spans",
    [
        [(5, 1), (9, 2), (40, 3), (41, 3)],  # a few tokens, overlapping ranges
        [(7, 40), (20, 40)],  # 80 with overlaps, 53 tokens
        [(k * 97, 1) for k in range(60)],  # 60 ranges of one token
        [(100, 30), (2_000, 30), (3_000, 5)],  # just over 64 tokens, few ranges
        [(k * 211, 9) for k in range(20)],  # over 64 tokens, more than 16 ranges
        [(k * 37 % 5_000, 1) for k in range(300)],  # 300 ranges of one token (repeats)
        # as many tokens as ranges, not one each: empty ranges and ranges of two
        [(k * 23, 2 * (k % 2)) for k in range(200)],
        [(0, 2_000), (1_500, 1_500)],  # a large part of the vocabulary
    ],
)
def test_sparse_ranges_every_path(spans: list[tuple[int, int]]) -> None:
    rng = random.Random(4)
    tokens: list[bytes | None] = [bytes([b]) for b in range(256)]
    tokens += [
        "".join(rng.choice(ALPHABET) for _ in range(rng.randint(2, 6))).encode()
        for _ in range(6_000)
    ]
    _check_sparse_ranges(VocabularyIndex(Vocabulary(list(dict.fromkeys(tokens)))), spans)


SLICE_GRAMMARS = [
    # "a property name other than these" (a key's letter, then the common string body)
    'root ::= "{\\"" ("ab" | [a] [^b"\\\\\\x7F\\x00-\\x1F] char* | [^a"\\\\\\x7F\\x00-\\x1F] char*)'
    ' "\\"" ":" [0-9]\nchar ::= [^"\\\\\\x7F\\x00-\\x1F] | "\\\\" ["\\\\/bn]',
    # a wider class (DEL allowed) loops on the slice's class too; a narrower one does not
    'root ::= "\\"" [^"\\\\\\x00-\\x1F]* "\\"" | "x" [^"\\\\x\\x00-\\x1F]* "\\""',
    # a string body as the tail of a context: its frames finish inside the tokens
    'root ::= item ("," item)*\nitem ::= "\\"" [^"\\\\\\x7F\\x00-\\x1F]{0,3} "\\"" | "n"',
]
SLICE_ALPHABET = 'abx"\\,:{} 0é中\x7f'


def _slice_vocabulary(seed: int) -> Vocabulary:
    return _vocabulary(seed, SLICE_ALPHABET, 600, 8)


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(SLICE_GRAMMARS), st.integers(0, 3), st.randoms(use_true_random=False))
def test_walk_through_a_slice_matches_stepping_each_token(
    text: str, seed: int, rng: random.Random
) -> None:
    """Below a state that loops on the slice's class the inside tokens are accepted
    unvisited and the rest walked in the rest trie (docs/masks.md, "Narrow walks through
    slices"): the same accepted and uncertain tokens as stepping each one."""
    vocabulary = _slice_vocabulary(seed)
    compiled = gbnfkit.CompiledGrammar(Grammar.from_gbnf(text), vocabulary)
    automaton = compiled.automaton
    trie = compiled.index.trie
    piece = compiled.index.slices[0]
    eager = Tuning(slice_subtree=0, jump_subtree=0)
    for root in _contexts(automaton, rng):
        expected = _reference(trie, automaton, root)
        for tuning in (eager, Tuning()):
            loops: dict[ByteState, bool] = {}
            got = walk_all(trie, automaton, root, None, None, tuning, None, piece, loops)
            assert got is not None and _positions(trie, got) == expected


def _visits(walked: Callable[[int], object]) -> int:
    """The fewest nodes a walk (``walked(budget)``) needs to finish."""
    lo, hi = 0, 1 << 20
    while lo < hi:
        mid = (lo + hi) // 2
        if walked(mid) is None:
            lo = mid + 1
        else:
            hi = mid
    return lo


def test_walk_through_a_slice_is_taken() -> None:
    """The slice path runs: a state looping on the class is found, the split is the
    same, and the walk visits fewer nodes."""
    vocabulary = _slice_vocabulary(0)
    compiled = gbnfkit.CompiledGrammar(Grammar.from_gbnf(SLICE_GRAMMARS[0]), vocabulary)
    automaton = compiled.automaton
    trie = compiled.index.trie
    piece = compiled.index.slices[0]
    root = automaton.feed(automaton.initial, b'{"')
    assert root is not None
    eager = Tuning(slice_subtree=0, jump_subtree=0)
    loops: dict[ByteState, bool] = {}

    def stop(at: int) -> int:
        return 0

    plain = walk_all(trie, automaton, root, None, None, eager)
    sliced = walk_all(trie, automaton, root, None, None, eager, None, piece, loops)
    assert plain is not None and sliced is not None
    assert _positions(trie, sliced) == _positions(trie, plain)
    assert any(loops.values())
    plain_visits = _visits(lambda n: walk_all(trie, automaton, root, n, stop, eager))
    sliced_visits = _visits(
        lambda n: walk_all(trie, automaton, root, n, stop, eager, None, piece, loops)
    )
    assert sliced_visits < plain_visits * 3 // 4
    # a state found to loop caches its one-byte characters' steps (back to itself):
    # exactly what stepping gives in an automaton that saw nothing else
    fresh = ByteAutomaton(automaton.program, automaton.limits)
    single = piece.dfa.single
    for state, looping in loops.items():
        if not looping:
            continue
        twin = fresh.intern(state.stacks)
        for byte in range(256):
            if (single >> byte) & 1:
                assert state.trans[byte] == state.num  # leads back to the state
                again = fresh.step(twin, byte)
                assert again is not None and set(again.stacks) == set(state.stacks)


def test_walk_makes_no_state_after_a_leaf() -> None:
    """A token no other token extends is accepted from its parent's live bytes: the
    walk makes no state after its last byte (docs/masks.md, "Trie leaves")."""
    vocabulary = Vocabulary([b"a", b"ab", b"ac", b"ad"])
    compiled = gbnfkit.CompiledGrammar(Grammar.from_gbnf('root ::= "a" [bc] "x"'), vocabulary)
    trie = compiled.index.trie
    automaton = ByteAutomaton(compiled.automaton.program, compiled.automaton.limits)
    walked = walk_all(trie, automaton, automaton.initial)
    assert walked is not None
    fresh = ByteAutomaton(automaton.program, automaton.limits)
    assert _positions(trie, walked) == _reference(trie, fresh, fresh.initial)
    after_a = automaton.numbered(automaton.initial.trans[ord("a")])
    assert after_a is not None
    assert not {ord("b"), ord("c")} & set(after_a.trans)  # accepted, never stepped
    assert automaton.live_bits(after_a) & ~automaton.allowed_bits(after_a) == 0


def test_a_leaf_byte_leading_nowhere_is_rejected() -> None:
    """A byte some top test accepts but after which the closure is empty (a rule that
    only calls itself; the grammar checks refuse such rules, a byte program need not)
    is not live: a leaf token ending in it is rejected, as stepping it says."""
    program = SELF_CALLING
    automaton = ByteAutomaton(program)
    root = automaton.initial
    assert automaton.allowed_bits(root) == (1 << ord("a")) | (1 << ord("b"))
    for byte in b"ab":
        automaton.step(root, byte)  # the local closures after each byte are known now
    root.live = -1
    assert automaton.live_bits(root) == 1 << ord("b")
    automaton = ByteAutomaton(program)
    root = automaton.initial
    trie = TokenTrie([(0, b"a"), (1, b"b"), (2, b"ba")])
    walked = walk_all(trie, automaton, root)
    assert walked is not None
    fresh = ByteAutomaton(program)
    expected = _reference(trie, fresh, fresh.initial)
    assert _positions(trie, walked) == expected
    assert expected == ({trie.sorted_bytes.index(b"b")}, set())
