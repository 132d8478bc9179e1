"""Slices (``docs/masks.md``, "Slices"): the per-vocabulary split into tokens inside a
class and the rest, the check that lets a wide split accept the inside tokens of a
first byte without walking them, and masks against the reference where the check must
hold and where it must not (a class one byte narrower, a counted string, a body that
loops on ASCII but not on every multi-byte character)."""

from __future__ import annotations

import codecs
import random

import numpy as np
import pytest
from test_masks import fast_mask, reference_mask, synthetic_vocabulary
from test_widesplit import _by_stepping, assert_flags_match

import gbnfkit
from gbnfkit._grammar import Grammar
from gbnfkit.tokens._bytestate import ByteState
from gbnfkit.tokens._compiled import _group_key, _groups, _stacks_of
from gbnfkit.tokens._index import VocabularyIndex
from gbnfkit.tokens._slices import SLICE_CLASSES, Slice, Utf8Dfa, covered_bytes
from gbnfkit.tokens._tails import group_ranked, group_tails
from gbnfkit.tokens._tuning import Tuning
from gbnfkit.tokens._vecwalk import WideSplit, vector_walk
from gbnfkit.tokens._vocabulary import Vocabulary

JSON_CLASS = SLICE_CLASSES[0]
EXTRA = "#~Ωÿ\x7f"


def _in_class(cp: int, ranges: tuple[tuple[int, int], ...]) -> bool:
    return any(lo <= cp <= hi for lo, hi in ranges)


def _inside(data: bytes, ranges: tuple[tuple[int, int], ...]) -> bool:
    """``data`` is a prefix of the UTF-8 encoding of a string of the class (the
    incremental decoder rejects invalid bytes, and keeps a valid incomplete end)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        text = decoder.decode(data, final=False)
    except UnicodeDecodeError:
        return False
    pending = decoder.getstate()[0]
    if pending and not any(_in_class(ord(c), ranges) for c in _completions(pending)):
        return False
    return all(_in_class(ord(c), ranges) for c in text)


def _completions(pending: bytes) -> list[str]:
    """Some characters whose encodings start with ``pending`` (first and last ones)."""
    need = 2 if pending[0] < 0xE0 else 3 if pending[0] < 0xF0 else 4
    out = []
    for fill in (b"\x80", b"\xbf", b"\x90", b"\xa0", b"\x9f", b"\x8f"):
        data = pending + fill * (need - len(pending))
        try:
            out.append(data.decode("utf-8"))
        except UnicodeDecodeError:
            continue
    return out


def test_dfa_matches_utf8_of_the_class() -> None:
    dfa = Utf8Dfa(JSON_CLASS)
    table = dfa.table

    def run(data: bytes) -> int:
        q = 1
        for b in data:
            q = int(table[q, b])
            if not q:
                return 0
        return q

    for cp in [*range(0x800), *range(0x800, 0x110000, 97), 0xD7FF, 0xE000, 0xFFFF, 0x10FFFF]:
        if 0xD800 <= cp <= 0xDFFF:
            continue
        assert (run(chr(cp).encode()) == 1) == _in_class(cp, JSON_CLASS), hex(cp)
    rng = random.Random(1)
    pool = [bytes([b]) for b in range(256)] + [c.encode() for c in "é中😀\U0010ffff\ud7ff"]
    for _ in range(3000):
        data = b"".join(rng.choice(pool) for _ in range(rng.randint(1, 4)))
        data = data[rng.randint(0, 1) :]
        assert (run(data) != 0) == _inside(data, JSON_CLASS), data
    assert dfa.single == sum(1 << b for b in range(128) if _in_class(b, JSON_CLASS))


def test_slice_splits_the_vocabulary_into_inside_and_rest() -> None:
    vocabulary = synthetic_vocabulary(EXTRA, seed=2)
    index = VocabularyIndex(vocabulary)
    trie = index.trie
    (piece,) = index.slices
    expected = [_inside(data, JSON_CLASS) for data in trie.sorted_bytes]
    assert piece.inside.tolist() == expected
    assert 0 < sum(expected) < len(expected)
    others = [p for p, inside in enumerate(expected) if not inside]
    assert piece.rest.sorted_ids.tolist() == others
    assert piece.rest.sorted_bytes == [trie.sorted_bytes[p] for p in others]
    # the suffixes of exactly the rest tokens are ranked, in byte order
    ranked = np.flatnonzero(piece.suffixes.base >= 0).tolist()
    assert ranked == others
    suffixes = {
        trie.sorted_bytes[p][k:]: int(piece.suffixes.rank[piece.suffixes.base[p] + k])
        for p in others
        for k in range(len(trie.sorted_bytes[p]) + 1)
    }
    assert sorted(suffixes, key=suffixes.__getitem__) == sorted(suffixes)
    assert sorted(suffixes.values()) == list(range(len(suffixes)))
    # a narrower class: its inside tokens are a subset
    narrow = Slice.build(trie, ((0x61, 0x7A),))
    assert not (narrow.inside & ~piece.inside).any()
    assert narrow.inside.tolist() == [_inside(d, ((0x61, 0x7A),)) for d in trie.sorted_bytes]


# (grammar, a document it accepts, whether string bodies loop on the JSON string class)
BODIES = [
    (r'root ::= "\"" [^"\\\x00-\x1F]* "\""', '"ab中#é😀 ~"', True),
    # llama.cpp's class: without DEL, as the slice's class
    (r'root ::= "\"" [^"\\\x7F\x00-\x1F]* "\""', '"ab中#é"', True),
    # a first character other than é, then any (the body after the first character
    # loops, but from the start the bytes of é must not be covered)
    (r'root ::= "\"" ([^"\\\x00-\x1Fé] [^"\\\x00-\x1F]*)? "\""', '"aé"', True),
    # one byte narrower than the slice's class ('#' is inside the slice, not the body)
    (r'root ::= "\"" [^"\\\x00-\x1F#]* "\""', '"ab中é"', False),
    # a counted string: no state loops
    (r'root ::= "\"" [^"\\\x00-\x1F]{0,6} "\""', '"ab中"', False),
    # loops on ASCII, but of the multi-byte characters only on é
    (r'root ::= "\"" ([ !#-\[\]-~] | "é")* "\""', '"aé b"', False),
    # loops on characters of one and two bytes, not on longer ones
    (r'root ::= "\"" [^"\\\x00-\x1F\u0800-\U0010FFFF]* "\""', '"aéb"', False),
]


def _roots(compiled: gbnfkit.CompiledGrammar, document: str) -> list[ByteState]:
    """The context states (1 to 4 frames deep) of the states met feeding ``document``
    byte by byte, without the bottom marker (those a wide split checks slices for)."""
    automaton = compiled.automaton
    state: ByteState | None = automaton.initial
    keys: set[tuple[int, ...]] = set()
    for byte in document.encode():
        assert state is not None
        for group in _groups(state.stacks):
            keys.update(_group_key(group, depth) for depth in (1, 2, 3, 4))
        state = automaton.step(state, byte)
    roots = [automaton.intern(frozenset(_stacks_of(key))) for key in sorted(keys)]
    return [root for root in roots if not root.bottom]


def _schema_grammar() -> tuple[Grammar, str]:
    schema = {
        "type": "object",
        "properties": {"name": {"type": "string"}, "nick": {"type": "string", "maxLength": 3}},
    }
    return Grammar.from_json_schema(schema), '{"name": "é中😀", "nick": "ab", "zé中x": "a#b"}'


@pytest.mark.parametrize(("gbnf", "document", "loops"), BODIES)
def test_covered_bytes_only_where_bodies_loop_on_the_class(
    gbnf: str, document: str, loops: bool
) -> None:
    vocabulary = synthetic_vocabulary(EXTRA, seed=4)
    grammar = Grammar.from_gbnf(gbnf)
    compiled = gbnfkit.CompiledGrammar(grammar, vocabulary)
    automaton = compiled.automaton
    (piece,) = compiled.index.slices
    found = 0
    for root in _roots(compiled, document):
        covered = covered_bytes(automaton, root, piece.dfa, {}, Tuning().slice_pairs)
        found |= covered
        # every inside token under a covered byte is accepted (stepping it)
        for pos, data in enumerate(compiled.index.trie.sorted_bytes):
            if (covered >> data[0]) & 1 and piece.inside[pos]:
                assert automaton.feed(root, data) is not None, data
    if loops:
        assert found == piece.dfa.first
    else:
        assert not found


def _other_keys_grammar() -> tuple[Grammar, str]:
    """Known property names sharing prefixes, and any other name: the contexts of "a
    name other than these" (each known prefix a rule whose first character excludes
    the next letters), whose first bytes lead to states that loop on the class only
    after one or more further bytes."""
    schema = {
        "type": "object",
        "properties": {name: {"type": "integer"} for name in ("a-bc", "ab", "xa-c", "a-z")},
        "additionalProperties": {"type": "string"},
    }
    document = '{"a-zé": "x", "xa-c": 2, "a-bc": 1, "a-b中": "y", "x#": "", "a-": "\\n"}'
    return Grammar.from_json_schema(schema, property_order="any"), document


# a body whose first byte "-" leads to a state that does not loop on the class, but
# after which most characters lead into the looping body: under "-" the inside tokens
# are walked node by node, and some are rejected (two digits must end the string; "é"
# must be followed by "x"), uncertain where the string may end (a context of few frames)
DASHED = (
    r'root ::= "\"" ("-" ([0-9] [0-9] | "é" "x" | [^"\\\x00-\x1F0-9é] body)'
    r' | [^"\\\x00-\x1F-] body)? "\""'
    "\n"
    r'body ::= [^"\\\x00-\x1F]*'
)
DASHED_TOKENS = [
    b"-12",
    b"-12a",
    b"-1",
    b"-9z",
    b"-\xc3\xa9x",
    b"-\xc3\xa9a",
    b"-\xc3",
    b"-a-",
    b"-ab",
]


def _dashed_vocabulary(seed: int) -> Vocabulary:
    """The synthetic vocabulary, with tokens under "-" that :data:`DASHED` rejects."""
    return vocabulary_with(EXTRA + "-", seed, DASHED_TOKENS)


def vocabulary_with(chars: str, seed: int, more: list[bytes]) -> Vocabulary:
    """The synthetic vocabulary of ``chars`` and ``seed``, with the tokens of ``more``
    it lacks added (and five ids past the last token, as a model's padding)."""
    base = synthetic_vocabulary(chars, seed=seed)
    tokens = list(base.tokens) + [t for t in more if t not in base.tokens]
    return Vocabulary(
        tokens,
        eos_token_ids=base.eos_token_ids,
        special_token_ids=base.special_token_ids,
        size=len(tokens) + 5,
    )


def _sliced_walks_equal_stepping(
    compiled: gbnfkit.CompiledGrammar, root: ByteState
) -> list[tuple[int, WideSplit]]:
    """The sliced walks of ``root`` under all, some and two first bytes (with the
    first bytes), each checked against stepping every token's bytes."""
    stepped = _by_stepping(compiled.index.trie, compiled.automaton, root)
    walks = []
    for first_bytes in (-1, 0x7FFF_FFFF << 96, 1 << 0x22 | 0xFF << 0xC0):
        split = sliced_walk_equals_stepping(compiled, root, first_bytes, stepped)
        assert_flags_match(compiled.index.trie, split)
        walks.append((first_bytes, split))
    return walks


def sliced_walk_equals_stepping(
    compiled: gbnfkit.CompiledGrammar,
    root: ByteState,
    first_bytes: int,
    stepped: tuple[list[int], list[int], list[tuple[int, int]]],
) -> WideSplit:
    """``compiled._sliced_walk(root, first_bytes)``, checked against ``stepped`` (every
    token's bytes stepped from ``root``: ``_by_stepping``) under those first bytes."""
    accepted, uncertain, pairs = stepped
    split = compiled._sliced_walk(root, first_bytes)
    starts = [(first_bytes >> data[0]) & 1 for data in compiled.index.trie.sorted_bytes]
    assert split.accepted.tolist() == [p for p in accepted if starts[p]]
    assert split.uncertain.tolist() == [p for p in uncertain if starts[p]]
    got = list(
        zip(split.handover_positions.tolist(), split.handover_offsets.tolist(), strict=True)
    )
    assert got == [(p, k) for p, k in pairs if starts[p]]
    return split


def test_sliced_walks_equal_stepping_each_token() -> None:
    vocabulary = _dashed_vocabulary(6)
    grammar, document = _schema_grammar()
    grammars = [(grammar, document), _other_keys_grammar()]
    grammars.append((Grammar.from_gbnf(DASHED), '"-12"'))
    grammars += [(Grammar.from_gbnf(g), d) for g, d, _ in BODIES]
    grammars.append((Grammar.builtin("json"), '{"k": ["é中#", "x\\"y"], "zz": "😀"}'))
    sliced = from_ranks = inside = 0
    for grammar, document in grammars:
        compiled = gbnfkit.CompiledGrammar(grammar, vocabulary)
        trie = compiled.index.trie
        automaton = compiled.automaton
        for root in _roots(compiled, document):
            before = compiled.sliced_walks
            for first_bytes, split in _sliced_walks_equal_stepping(compiled, root):
                plain = vector_walk(trie, automaton, root, 10**6, first_bytes)
                assert plain.accepted.tolist() == split.accepted.tolist()
                # the tails of a string body's tokens (rest tokens: they hold a quote)
                # grouped from the slice's suffix ranks, as by sorting their bytes
                hp, ho = split.handover_positions, split.handover_offsets
                if len(hp):
                    suffixes = compiled.index.slices[0].suffixes
                    ranked = group_ranked(trie, suffixes, hp, ho)
                    assert ranked is None or ranked == group_tails(trie, hp, ho)
                    from_ranks += ranked is not None
            sliced += compiled.sliced_walks > before
        inside += compiled.inside_walks
    assert sliced > 10
    assert from_ranks > 10
    assert inside > 3, "no first byte's inside tokens were walked node by node"


@pytest.mark.parametrize("tuning", [Tuning(wide=0, many_first_bytes=0), Tuning()])
def test_masks_along_strings_match_the_reference(tuning: Tuning) -> None:
    vocabulary = synthetic_vocabulary(EXTRA, seed=8)
    cases = [(Grammar.from_gbnf(g), d) for g, d, _ in BODIES]
    cases += [_schema_grammar(), _other_keys_grammar(), (Grammar.from_gbnf(DASHED), '"-éx"')]
    cases.append((Grammar.builtin("json"), '{"é": ["a中#", "\\u00e9"]}'))
    sliced = 0
    for grammar, document in cases:
        compiled = gbnfkit.CompiledGrammar(grammar, vocabulary, tuning=tuning)
        _follow(compiled, grammar, vocabulary, document)
        sliced += compiled.sliced_walks
    assert sliced or tuning.wide


def _follow(
    compiled: gbnfkit.CompiledGrammar, grammar: Grammar, vocabulary: Vocabulary, document: str
) -> None:
    """Feed ``document`` token by token (the longest allowed token that continues it),
    comparing every mask with the reference."""
    matcher = compiled.matcher()
    state = grammar.start()
    rest = document.encode()
    while rest:
        expected = reference_mask(state, vocabulary)
        got = fast_mask(matcher, vocabulary.size)
        diff = np.flatnonzero(expected != got)
        assert not diff.size, [(int(i), vocabulary.token_bytes(int(i))) for i in diff[:5]]
        fits = [
            i
            for i in np.flatnonzero(expected).tolist()
            if (data := vocabulary.token_bytes(i)) and rest.startswith(data)
        ]
        token = max(fits, key=lambda i: len(vocabulary.token_bytes(i) or b""))
        data = vocabulary.token_bytes(token) or b""
        assert matcher.accept_token(token)
        state = state.feed(data)
        rest = rest[len(data) :]


def test_index_groups_equal_handover_pairs_once() -> None:
    vocabulary = synthetic_vocabulary(EXTRA, seed=9)
    index = VocabularyIndex(vocabulary, max_shared_tails=2)
    trie = index.trie
    pairs = [
        (np.array(p, dtype=np.int64), np.array(k, dtype=np.int64))
        for p, k in (([3, 3, 8], [0, 1, 0]), ([3, 8], [1, 0]), ([5], [0]))
    ]
    first = index.group_tails(*pairs[0])
    assert first is not None
    assert first == group_tails(trie, *pairs[0])
    assert index.group_tails(pairs[0][0].copy(), pairs[0][1].copy()) is first
    assert index.group_tails(*pairs[1]) == group_tails(trie, *pairs[1])
    assert index.group_tails(*pairs[2]) == group_tails(trie, *pairs[2])
    assert len(index.tails) == 2  # bounded: the first grouping was dropped
    assert index.group_tails(*pairs[0]) is not first
    index.clear_shared()
    assert not index.tails
    assert index.group_tails(pairs[0][0][:0], pairs[0][1][:0]) is None


def test_sliced_masks_on_a_real_vocabulary_match_the_reference() -> None:
    """Qwen's vocabulary: a schema's string bodies and "other property name" contexts,
    split through the slice (every wide split's inside tokens decided at once)."""
    from test_masks_real import LOADERS
    from test_masks_real import reference_mask as real_reference

    vocabulary = LOADERS["qwen"]()
    grammar = Grammar.from_json_schema({"type": "object", "properties": {"name": {}}})
    compiled = gbnfkit.CompiledGrammar(grammar, vocabulary)
    order = sorted(
        (data, i)
        for i, data in enumerate(vocabulary.tokens)
        if data and i not in vocabulary.special_token_ids
    )
    matcher = compiled.matcher()
    state = grammar.start()
    for piece in ['{"', "zé", '":', ' "', "a中", '"}']:
        expected = real_reference(state, vocabulary, order)
        got = fast_mask(matcher, vocabulary.size)
        diff = np.flatnonzero(expected != got)
        assert not diff.size, [(int(i), vocabulary.token_bytes(int(i))) for i in diff[:5]]
        matcher.accept_text(piece)
        state = state.feed(piece.encode())
    assert compiled.sliced_walks >= 2
