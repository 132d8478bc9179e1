"""Counted repetitions of a slice's class (``x{m,n}``, the schema converter's
``maxLength``): a state with more characters left than the longest token has bytes is
*open* on the class (every character leads to a state with its canonical form), so a
wide split accepts its inside tokens at once and walks the rest trie with the states
found the same merged (``docs/masks.md``, "Slices", open states).  Every split and mask
is compared with stepping each token or with the reference, at every remaining count
from above the longest token's length down to zero, in characters of one to four
bytes."""

from __future__ import annotations

from threading import RLock

import numpy as np
import pytest
from test_masks import synthetic_vocabulary
from test_slices import EXTRA, _follow, _roots, _sliced_walks_equal_stepping

import gbnfkit
from gbnfkit._grammar import Grammar
from gbnfkit.tokens._bytestate import ByteState
from gbnfkit.tokens._slices import (
    Covers,
    Items,
    _single_next,
    counted_left,
    covered_bytes,
    item_suffixes,
    opens_on,
    proven_next,
)
from gbnfkit.tokens._tuning import Tuning
from gbnfkit.tokens._vecwalk import vector_walk
from gbnfkit.tokens._vocabulary import Vocabulary

LONGEST = 16  # bytes of the longest token of the vocabulary below
TEXT = "ab中é😀#x yz~é中"


def _vocabulary() -> Vocabulary:
    """The synthetic vocabulary, with runs of one to four byte characters up to
    :data:`LONGEST` bytes (inside tokens of as many characters as bytes, and of a
    quarter as many), and such runs closed by a quote (rest tokens deep in the trie)."""
    base = synthetic_vocabulary(EXTRA, seed=11)
    extra: list[bytes] = []
    for ch in ("a", "é", "中", "😀"):
        unit = ch.encode()
        for k in range(1, LONGEST // len(unit) + 1):
            extra.append(unit * k)
            if (k + 1) * len(unit) <= LONGEST:
                extra.append(unit * k + b'"')
    extra.append(("ab中é" * 4).encode()[:LONGEST])
    tokens = list(base.tokens) + [t for t in extra if t not in base.tokens]
    assert max(len(t) for t in tokens if t) == LONGEST
    return Vocabulary(
        tokens,
        eos_token_ids=base.eos_token_ids,
        special_token_ids=base.special_token_ids,
        size=len(tokens) + 5,
    )


BODY = r'[^"\\\x00-\x1F]'
CHAR = 'char ::= [^"\\\\\\x7F\\x00-\\x1F] | "\\\\" ["\\\\/bfnrt]'


def _grammars() -> list[tuple[Grammar, str]]:
    """Counted strings with ``n`` below, at and above the longest token's length, with
    and without a minimum, of a class and of the converter's escaped characters, and
    the converter's own ``maxLength``; each with a document of ``n`` characters."""
    out: list[tuple[Grammar, str]] = []
    for lo, hi in (
        (0, LONGEST - 1),
        (0, LONGEST),
        (0, LONGEST + 1),
        (0, LONGEST + 3),
        (0, 3 * LONGEST),
        (2, 3 * LONGEST),
        (5, 3 * LONGEST),
        (5, LONGEST + 1),
        (LONGEST, 3 * LONGEST),
        # few characters left from the start (counted: docs/masks.md, "Slices")
        (0, 3),
        (0, LONGEST // 2),
        (3, 7),
    ):
        text = (TEXT * 8)[:hi]
        out.append((Grammar.from_gbnf(f'root ::= "\\"" {BODY}{{{lo},{hi}}} "\\""'), f'"{text}"'))
    text = (TEXT * 8)[: 3 * LONGEST]
    counted = f'root ::= "\\"" char{{0,{3 * LONGEST}}} "\\""\n{CHAR}'
    out.append((Grammar.from_gbnf(counted), f'"{text}"'))
    # nothing after the count: the parse may end after every character
    out.append((Grammar.from_gbnf(f"root ::= {BODY}{{0,{3 * LONGEST}}}"), text))
    schema = {"type": "object", "properties": {"s": {"type": "string", "maxLength": 3 * LONGEST}}}
    out.append((Grammar.from_json_schema(schema), f'{{"s": "{text}"}}'))
    # the converter's short strings: the context ends (the marker) after every character
    for lo, hi in ((0, 5), (2, LONGEST - 3)):
        text = TEXT[:hi]
        short = {"type": "string", "minLength": lo, "maxLength": hi}
        schema = {"type": "object", "properties": {"s": short, "t": short}}
        out.append((Grammar.from_json_schema(schema), f'{{"s": "{text}", "t": "{text[:2]}"}}'))
    # after the count the class goes on: no chain ends (nothing counted)
    out.append((Grammar.from_gbnf(f'root ::= "\\"" {BODY}{{0,5}} [a-z]* "\\""'), '"ab中éxyz"'))
    # ... on a character of two bytes only: the chain's end accepts a byte that starts one
    out.append((Grammar.from_gbnf(f'root ::= "\\"" {BODY}{{0,5}} "é"* "\\""'), '"ab中éxéé"'))
    return out


def _states(compiled: gbnfkit.CompiledGrammar, prefix: bytes, text: str) -> list[ByteState]:
    """The parser's states after ``prefix`` and each further character of ``text``."""
    automaton = compiled.automaton
    state = automaton.feed(automaton.initial, prefix)
    out = []
    for ch in text:
        assert state is not None
        out.append(state)
        state = automaton.feed(state, ch.encode())
    return out


def test_open_only_with_more_characters_left_than_the_longest_token() -> None:
    vocabulary = _vocabulary()
    total = 3 * LONGEST
    for least, gbnf in (
        (0, f'root ::= "\\"" {BODY}{{0,{total}}} "\\""'),
        (0, f'root ::= "\\"" char{{0,{total}}} "\\""\n{CHAR}'),
        # five fixed characters first: a chain of states, each leading to the next
        (5, f'root ::= "\\"" {BODY}{{5,{total}}} "\\""'),
    ):
        compiled = gbnfkit.CompiledGrammar(Grammar.from_gbnf(gbnf), vocabulary)
        automaton = compiled.automaton
        (piece,) = compiled.index.slices
        trie = compiled.index.trie
        assert trie.max_depth == LONGEST
        limit = Tuning().slice_pairs
        for gone, state in enumerate(_states(compiled, b'"', "a" * total)):
            left = total - gone
            merged: dict[ByteState, ByteState] = {}
            covers = Covers(
                automaton, piece.dfa, {}, limit, RLock(), {}, compiled._same_form, merged, 8
            )
            covered = covers(state)
            if left <= LONGEST:
                # "a" * LONGEST is inside, and more characters than are left
                assert not covered, left
                assert not merged
            if left >= LONGEST + 4:
                # the forms of the states after one and two more characters see no end
                # of the count within the longest token's reach (d <= LONGEST)
                assert covered == piece.dfa.first & automaton.allowed_bits(state), left
                assert merged
            if gone + 1 < least:
                # down the chain of fixed characters only
                plain = covered_bytes(
                    automaton, state, piece.dfa, {}, limit, {}, compiled._same_form, {}
                )
                assert not plain
            if gone + 3 <= least:
                # the state after the next character is two or more down the chain
                short = Covers(
                    automaton, piece.dfa, {}, limit, RLock(), {}, compiled._same_form, {}, 1
                )
                assert not short(state)
            # what is merged has the same form; what is covered is accepted
            for a, b in merged.items():
                assert compiled._same_form(a, b)
            for pos, data in enumerate(trie.sorted_bytes):
                if (covered >> data[0]) & 1 and piece.inside[pos]:
                    assert automaton.feed(state, data) is not None, (left, data)
            # a state after which a character leads to another form is not open alone
            after = automaton.step(state, ord("a"))
            assert after is not None
            if not compiled._same_form(state, after):
                assert not opens_on(automaton, state, piece.dfa, limit, compiled._same_form)


@pytest.mark.parametrize("count_chain", [0, LONGEST - 4, 3 * LONGEST])
def test_counted_sliced_walks_equal_stepping_each_token(count_chain: int) -> None:
    """With ``count_chain`` 0 the open states serve (nothing is counted); with the
    chains followed up to ``3 * LONGEST`` states (taken as ``LONGEST + 3``: with more
    left a state is open) every count of these grammars near its end is counted
    instead, and a longer chain proves its head open; with ``LONGEST - 4`` chains are
    counted but none is taken as open (a token may start more characters)."""
    vocabulary = _vocabulary()
    tuning = Tuning(count_chain=count_chain)
    sliced = merged = counted = held = 0
    for grammar, document in _grammars():
        compiled = gbnfkit.CompiledGrammar(grammar, vocabulary, tuning=tuning)
        for root in _roots(compiled, document):
            _sliced_walks_equal_stepping(compiled, root)
        sliced += compiled.sliced_walks
        merged += sum(len(m) for m in compiled._merged.values())
        for kept in compiled._counts.values():
            counted += sum(k > 0 for k, _ in kept.values())
            held += sum(k > 0 and any(holds) for k, holds in kept.values())
    assert sliced > 20, "counted strings were not split through the slice"
    if count_chain:
        assert counted > 20, "no counted repetition was counted"
        # the converter's contexts end after each character: handed over there
        assert held > 5, "no counted chain held the bottom marker"
    else:
        assert merged, "no state was merged with another of the same form"
        assert not counted


def test_counted_masks_match_the_reference() -> None:
    vocabulary = _vocabulary()
    for tuning in (Tuning(wide=0, many_first_bytes=0), Tuning()):
        sliced = 0
        for grammar, document in _grammars():
            compiled = gbnfkit.CompiledGrammar(grammar, vocabulary, tuning=tuning)
            _follow(compiled, grammar, vocabulary, document)
            sliced += compiled.sliced_walks
        assert sliced or tuning.wide


def test_merged_walk_equals_the_plain_walk() -> None:
    """A wide walk of a counted string's context with its open states merged gives
    the verdicts and handover pairs of the walk without (the merge only saves steps)."""
    vocabulary = _vocabulary()
    grammar = Grammar.from_gbnf(f'root ::= "\\"" {BODY}{{0,{3 * LONGEST}}} "\\""')
    compiled = gbnfkit.CompiledGrammar(grammar, vocabulary)
    trie = compiled.index.trie
    automaton = compiled.automaton
    (piece,) = compiled.index.slices
    compared = handed = 0
    for root in _roots(compiled, '"' + (TEXT * 8)[: 3 * LONGEST] + '"'):
        merged: dict[ByteState, ByteState] = {}
        covered_bytes(automaton, root, piece.dfa, {}, 64, {}, compiled._same_form, merged)
        if not merged:
            continue
        plain = vector_walk(trie, automaton, root, 10**6)
        fast = vector_walk(trie, automaton, root, 10**6, merge=merged)
        for field in ("accepted", "uncertain", "handover_positions", "handover_offsets"):
            assert np.array_equal(getattr(plain, field), getattr(fast, field)), field
        compared += 1
        handed += len(plain.handover_positions) > 0
    assert compared > 10 and handed > 10


def test_counted_left_follows_the_chain_to_its_end() -> None:
    """``counted_left`` gives the characters left and where the marker is held down a
    counted repetition's chain, and nothing where the chain does not end (a class
    going on after the count, a loop) or is longer than ``reach``."""
    vocabulary = _vocabulary()
    for gbnf, prefix, total, held in (
        (f'root ::= "\\"" {BODY}{{0,10}} "\\""', b'"', 10, False),
        (f"root ::= {BODY}{{0,10}}", b"", 10, False),  # ending is not the marker
        (f'root ::= "\\"" {BODY}{{3,10}} "\\""', b'"', 10, False),
    ):
        compiled = gbnfkit.CompiledGrammar(Grammar.from_gbnf(gbnf), vocabulary)
        (piece,) = compiled.index.slices
        automaton = compiled.automaton
        for gone, state in enumerate(_states(compiled, prefix, ("aé中😀" * 3)[:total])):
            counts: dict[ByteState, tuple[int, tuple[bool, ...]]] = {}
            left = total - gone
            got = counted_left(automaton, state, piece.dfa, 64, LONGEST, counts)
            assert got == (left, (state.bottom,) + (held,) * left), (gbnf, gone)
            short = counted_left(automaton, state, piece.dfa, 64, left - 1, {})
            assert short == (left, ()), (gbnf, gone)  # more than ``reach`` left
    for gbnf in (
        f'root ::= "\\"" {BODY}{{0,5}} [a-z]* "\\""',
        f'root ::= "\\"" {BODY}* "\\""',
    ):
        compiled = gbnfkit.CompiledGrammar(Grammar.from_gbnf(gbnf), vocabulary)
        (piece,) = compiled.index.slices
        state = compiled.automaton.feed(compiled.automaton.initial, b'"')
        assert state is not None
        got = counted_left(compiled.automaton, state, piece.dfa, 64, LONGEST, {})
        assert got[0] < 0 or got == (LONGEST + 1, ()), gbnf


def _chain_covers(
    compiled: gbnfkit.CompiledGrammar, reach: int, opens: bool, items: Items | None = None
) -> Covers:
    (piece,) = compiled.index.slices
    return Covers(
        compiled.automaton,
        piece.dfa,
        {},
        Tuning().slice_pairs,
        RLock(),
        {},
        compiled._same_form,
        {},
        Tuning().open_chain,
        {},
        reach,
        {},
        opens,
        items,
    )


def test_a_chain_longer_than_any_token_opens_its_head() -> None:
    """Down a row of fixed copies (``x{30,200}``: a ``minLength`` of 30) the states
    with 10 to ``LONGEST + 3`` copies left are open neither by their forms (the row's
    end is in reach) nor down a chain of ``open_chain`` (8) states to an open one; but
    each heads a chain of more states than any token has characters, each state
    leading to the next by every character, so every inside token is accepted
    (``Covers.chained``).  Every token under a covered byte is stepped; a chain is
    followed once (later counts read its links); without ``chain_opens`` such states
    are not covered."""
    vocabulary = _vocabulary()
    least = 30
    grammar = Grammar.from_gbnf(f'root ::= "\\"" {BODY}{{{least},200}} "\\""')
    compiled = gbnfkit.CompiledGrammar(grammar, vocabulary)
    automaton = compiled.automaton
    (piece,) = compiled.index.slices
    trie = compiled.index.trie
    reach = LONGEST + 3
    covers = _chain_covers(compiled, reach, True)
    proved = 0
    for gone, state in enumerate(_states(compiled, b'"', ("ab中é😀" * 20)[:60])):
        wanted = piece.dfa.first & automaton.allowed_bits(state)
        covered = covers(state)
        assert covered == wanted, gone
        for pos, data in enumerate(trie.sorted_bytes):
            if (covered >> data[0]) & 1 and piece.inside[pos]:
                assert automaton.feed(state, data) is not None, (gone, data)
        if 10 <= least - gone <= LONGEST + 3:
            proved += 1
            assert not _chain_covers(compiled, reach, False)(state), gone
    assert proved == LONGEST - 6
    links = covers.links
    assert links is not None
    # each state down the row explored once: about one per character, not per count
    assert len(links) < 60 + 2 * reach, len(links)


@pytest.mark.parametrize("tuning", [Tuning(), Tuning(count_chain=LONGEST - 4)])
def test_long_counts_in_blocks_match_the_reference(tuning: Tuning) -> None:
    """The converter's block form of a ``maxLength`` above 10,000 with a ``minLength``
    of 30 (``char{30} (char{1000}{0,31} char{0,999} | char{1000}{32} char{0,r})``):
    masks compared with the reference along the row of the minimum and across the
    first block's edge (1,030 characters in), where each count of the block's row and
    of ``char{0,999}`` is a context counted down to its end."""
    vocabulary = _vocabulary()
    schema = {
        "type": "object",
        "properties": {"c": {"type": "string", "minLength": 30, "maxLength": 32767}},
    }
    grammar = Grammar.from_json_schema(schema)
    compiled = gbnfkit.CompiledGrammar(grammar, vocabulary, tuning=tuning)
    text = ("ab中é😀#x yz~é中" * 90)[:1040]
    _follow(compiled, grammar, vocabulary, f'{{"c": "{text}"}}')
    counted = sum(k > 0 for kept in compiled._counts.values() for k, _ in kept.values())
    assert counted > LONGEST, "the block's edge was not counted"


def _proven_cases() -> list[tuple[str, str, bool]]:
    """Grammars with a long counted string (rows of fixed copies, chains of links, both,
    the converter's ``minLength``/``maxLength`` and block forms), each with a document
    and whether :func:`proven_next` must read some state's next one; and grammars
    where no state's next one may be read from its stacks: an item of one or two
    characters, of a character and an optional letter, a repetition after the count
    that goes on with the class, a row of characters of two bytes."""
    text = (TEXT * 200)[:60]
    bounded = {"type": "string", "minLength": 20, "maxLength": 70}
    block = {"type": "string", "minLength": 30, "maxLength": 32767}
    one = 'root ::= "\\"" one{40,90} "\\""\none ::= '
    return [
        (f'root ::= "\\"" {BODY}{{40,90}} "\\""', f'"{text}"', True),
        (f'root ::= "\\"" char{{40,90}} "\\""\n{CHAR}', f'"{text}"', True),
        (f'root ::= "\\"" char{{0,90}} "\\""\n{CHAR}', f'"{text}"', True),
        (f"root ::= {BODY}{{0,90}}", text, True),
        (_schema({"type": "object", "properties": {"s": bounded}}), f'{{"s": "{text}"}}', True),
        # (the first block's edge: the states there, below)
        (_schema({"type": "object", "properties": {"c": block}}), f'{{"c": "{text}"}}', True),
        (f"{one}{BODY} | {BODY} {BODY}", f'"{text}"', False),
        (f"{one}{BODY} [a-z]?", f'"{text}"', False),
        (f'root ::= "\\"" {BODY}{{0,60}} [a-z]* "\\""', f'"{text[:50]}"', False),
        ('root ::= "\\"" [é-é]{40,90} "\\""', '"' + "é" * 60 + '"', False),
    ]


def _schema(schema: dict[str, object]) -> str:
    """A schema's grammar as GBNF text (the cases above are GBNF)."""
    return str(Grammar.from_json_schema(schema).to_gbnf())


@pytest.mark.parametrize("case", range(len(_proven_cases())))
def test_proven_next_is_the_explored_next(case: int) -> None:
    """Wherever :func:`proven_next` reads the state every character leads to from a
    state's stacks, it is the one exploring each character finds (:func:`_single_next`),
    at every position of the documents (rows, links, block edges, the marker after the
    count); it reads some along each long counted string, and none where the item
    is not exactly one character or the class goes on after the count."""
    gbnf, document, expected = _proven_cases()[case]
    grammar = Grammar.from_gbnf(gbnf)
    compiled = gbnfkit.CompiledGrammar(grammar, _vocabulary())
    automaton = compiled.automaton
    (piece,) = compiled.index.slices
    limit = Tuning().slice_pairs
    items: Items = {}
    # the parser's states between two characters, and the contexts' (which may be
    # inside an item: a class rule called by it can be read where the item cannot)
    states = _states(compiled, b"", document)
    if '"c"' in document:
        # across the first block's edge, 1,030 characters in (two parses from there on)
        text = (TEXT * 200)[:1040]
        states += _states(compiled, f'{{"c": "{text[:1020]}'.encode(), text[1020:])
    read = []
    for root in states + _roots(compiled, document):
        got = proven_next(automaton, root, piece.dfa, limit, items)
        if got is not None:
            read.append(root)
            assert got == _single_next(automaton, root, piece.dfa, limit), root
    between = sum(state in read for state in states)
    assert (between > 20) == expected, between
    proven = [rule for rule, suffixes in items.items() if suffixes is not None]
    for rule in proven:
        assert item_suffixes(automaton, rule, piece.dfa, limit, {}) == items[rule]


def test_a_long_row_is_read_without_exploring() -> None:
    """Down a row of fixed copies of the converter's character (``char{40,300}``: a
    ``minLength`` of 40), the state with ``LONGEST + 3`` copies left is open neither by
    its forms (the row's end is in reach) nor down ``open_chain`` states, but heads a
    chain longer than any token (``Covers.chained``).  With the item known to take
    exactly one character, the chain is read from the stacks (one closure per count,
    no state within a character made) before any form is compared; it covers the same
    bytes as the chain explored character by character."""
    vocabulary = _vocabulary()
    least = 40
    grammar = Grammar.from_gbnf(f'root ::= "\\"" char{{{least},300}} "\\""\n{CHAR}')
    reach = LONGEST + 3
    tuning = Tuning()
    made = []
    for items in ({}, None):
        compiled = gbnfkit.CompiledGrammar(grammar, vocabulary)
        automaton = compiled.automaton
        (piece,) = compiled.index.slices
        state = automaton.feed(automaton.initial, b'"' + b"a" * (least - reach))
        assert state is not None
        before = len(automaton._intern) + len(automaton._clashes)
        forms: list[ByteState] = []

        def same(
            a: ByteState,
            b: ByteState,
            compiled: gbnfkit.CompiledGrammar = compiled,
            forms: list[ByteState] = forms,
        ) -> bool:
            forms.append(a)
            return compiled._same_form(a, b)

        covers = Covers(
            automaton, piece.dfa, {}, tuning.slice_pairs, RLock(), {}, same, {},
            tuning.open_chain, {}, reach, {}, True, items,
        )
        assert covers(state) == piece.dfa.first & automaton.allowed_bits(state)
        made.append(len(automaton._intern) + len(automaton._clashes) - before)
        if items is not None:
            assert not forms, "forms were compared before the chain"
            assert any(v is not None for v in items.values())
        else:
            assert forms
    # a closure per count down the chain, the item's states within a character once and
    # the root's (covered_bytes steps its first characters): 59; against the states
    # within each character of every count, and the forms' (551)
    assert made[0] <= 4 * reach, made
    assert made[1] >= 8 * reach, made
