"""The parts of a wide split against plain per-token stepping: byte classes, the numpy
trie walk (accepted, uncertain, handover pairs) and the grouping of tails."""

from __future__ import annotations

import random
from bisect import bisect_right

import numpy as np
import pytest
from test_masks import fast_mask, reference_mask, synthetic_vocabulary

import gbnfkit
from gbnfkit._grammar import Grammar
from gbnfkit.tokens._byteprogram import CALL, END, lower_program
from gbnfkit.tokens._bytestate import BOTTOM, ByteAutomaton, ByteState
from gbnfkit.tokens._chains import Chains
from gbnfkit.tokens._compiled import _group_key, _groups, _stacks_of
from gbnfkit.tokens._follow import rule_starts as _rule_starts
from gbnfkit.tokens._index import VocabularyIndex
from gbnfkit.tokens._tails import SuffixRanks, group_ranked, group_tails, tails_by_stepping
from gbnfkit.tokens._trie import TokenTrie
from gbnfkit.tokens._tuning import Tuning
from gbnfkit.tokens._vecwalk import WideSplit, vector_walk

GRAMMARS = ["json", "arithmetic", "c"]


def _context_roots(
    name: str, vocabulary: gbnfkit.Vocabulary | None = None
) -> tuple[gbnfkit.CompiledGrammar, list[ByteState]]:
    """A compiled builtin grammar after a random walk (every split wide), and the
    states of the contexts of the states it met, 1 to 4 frames deep (the roots
    vector_walk sees), and some of them with the bottom marker added."""
    vocabulary = vocabulary or synthetic_vocabulary()
    tuning = Tuning(wide=0, many_first_bytes=0)
    compiled = gbnfkit.CompiledGrammar(Grammar.builtin(name), vocabulary, tuning=tuning)
    automaton = compiled.automaton
    matcher = compiled.matcher()
    rng = random.Random(3)
    keys: set[tuple[int, ...]] = set()
    for _ in range(30):
        for group in _groups(matcher._state.stacks):
            keys.update(_group_key(group, depth) for depth in (1, 2, 3, 4))
        allowed = [int(t) for t in matcher.allowed_token_ids() if vocabulary.token_bytes(int(t))]
        if not allowed:
            break
        matcher.accept_token(rng.choice(allowed))
    roots = [automaton.intern(frozenset(_stacks_of(key))) for key in sorted(keys)]
    # contexts whose frames may also finish before any byte (the root holds BOTTOM)
    roots += [automaton.intern({*root.stacks, (BOTTOM,)}) for root in roots[::3]]
    return compiled, roots


def _by_stepping(
    trie: TokenTrie, automaton: ByteAutomaton, root: ByteState
) -> tuple[list[int], list[int], list[tuple[int, int]]]:
    """Accepted and uncertain sorted positions and handover pairs, one token at a time."""
    accepted: list[int] = []
    uncertain: list[int] = []
    pairs: list[tuple[int, int]] = []
    for pos, data in enumerate(trie.sorted_bytes):
        state: ByteState | None = root
        mine: list[tuple[int, int]] = []
        for k, byte in enumerate(data):
            assert state is not None
            if state.bottom:
                mine.append((pos, k))
            state = automaton.step(state, byte)
            if state is None:
                break
        if state is not None:
            accepted.append(pos)
        elif mine:
            uncertain.append(pos)
            pairs.extend(mine)
    return accepted, uncertain, pairs


@pytest.mark.parametrize("name", GRAMMARS)
def test_byte_classes_step_alike(name: str) -> None:
    compiled, roots = _context_roots(name)
    automaton = compiled.automaton
    for root in roots:
        classes = automaton.classes(root)
        union = 0
        for c in classes:
            assert c and not (union & c), "classes are non-empty and disjoint"
            union |= c
            first = (c & -c).bit_length() - 1
            after = automaton.step(root, first)
            assert after is not None
            for byte in range(256):
                if (c >> byte) & 1:
                    assert automaton.step(root, byte) is after
        assert union == automaton.allowed_bits(root)
        for byte in range(256):
            if not (union >> byte) & 1:
                assert automaton.step(root, byte) is None


def assert_flags_match(trie: TokenTrie, split: WideSplit) -> None:
    """A wide split's accepted flags, one per sorted position, are set exactly at its
    accepted positions (``VocabularyIndex.pack_split`` packs the others' complement)."""
    assert split.flags is not None
    assert len(split.flags) == len(trie.sorted_bytes)
    assert np.flatnonzero(split.flags).tolist() == split.accepted.tolist()


def test_pack_split_packs_the_accepted_tokens_by_id() -> None:
    """Packing a split from its flags (most tokens accepted: all text tokens but the
    rejected ones) gives the bits of the accepted positions' token ids, and never the
    bit of an id outside the trie (the empty, ``None``, special, EOS and padding ids)."""
    index = VocabularyIndex(synthetic_vocabulary())
    n = index.n_sorted
    assert index.nwords * 32 > n  # ids outside the trie exist
    rng = random.Random(1)
    for share in (0.0, 0.3, 0.6, 0.9, 1.0):
        flags = np.array([rng.random() < share for _ in range(n)], dtype=np.bool_)
        accepted = np.flatnonzero(flags)
        want = index.pack_ids(index.trie.sorted_ids[accepted]).tolist()
        none = accepted[:0]
        assert index.pack_split(WideSplit(accepted, none, none, none, flags)).tolist() == want
        assert index.pack_split(WideSplit(None, none, none, none, flags)).tolist() == want
        assert index.pack_split(WideSplit(accepted, none, none, none)).tolist() == want


@pytest.mark.parametrize("name", GRAMMARS)
def test_vector_walk_equals_stepping_each_token(name: str) -> None:
    compiled, roots = _context_roots(name)
    trie = compiled.index.trie
    automaton = compiled.automaton
    assert len(roots) > 3
    for root in roots:
        accepted, uncertain, pairs = _by_stepping(trie, automaton, root)
        split = vector_walk(trie, automaton, root, max_tail_tokens=10**6)
        assert split.accepted.tolist() == accepted
        assert split.uncertain.tolist() == uncertain
        assert_flags_match(trie, split)
        some = -1 if root.bottom else 0x7FFF << 96  # under some first bytes: a window
        assert_flags_match(trie, vector_walk(trie, automaton, root, 10**6, some))
        for gap in (0, 10**9):  # each run's nodes alone, or every level in one call
            other = vector_walk(trie, automaton, root, 10**6, level_gap=gap)
            assert other.accepted.tolist() == accepted
            assert other.uncertain.tolist() == uncertain
            assert other.handover_offsets.tolist() == split.handover_offsets.tolist()
        for thin in (0, 10**9):  # no level walked node by node, or all below the first
            other = vector_walk(trie, automaton, root, 10**6, thin_levels=thin)
            assert other.accepted.tolist() == accepted
            assert other.uncertain.tolist() == uncertain
            assert other.handover_offsets.tolist() == split.handover_offsets.tolist()
        positions, offsets = split.handover_positions, split.handover_offsets
        got = list(zip(positions.tolist(), offsets.tolist(), strict=True))
        assert got == pairs
        # past max_tail_tokens: the same verdicts, no pairs
        few = vector_walk(trie, automaton, root, max_tail_tokens=len(uncertain) - 1)
        assert few.uncertain.tolist() == uncertain and not len(few.handover_positions)
        # the tails from the walk's pairs equal those found by stepping the tokens
        walked = group_tails(trie, split.handover_positions, split.handover_offsets)
        stepped = tails_by_stepping(trie, automaton, root, tuple(uncertain), 10**6)
        if walked is None or stepped is None:
            assert walked is None and stepped is None and not uncertain
            continue
        assert walked.tails == stepped.tails
        assert walked.positions == stepped.positions
        assert walked.starts == stepped.starts


def test_thin_tail_holds_the_levels_from_where_all_are_thin() -> None:
    """``TokenTrie.thin_tail``: the nodes from the first depth from which every level
    holds at most ``limit`` nodes, in preorder, with where each one's parent is in the
    walk's list and where its subtree ends."""
    trie = VocabularyIndex(_thin_vocabulary()).trie
    starts = trie.level_start
    sizes = [0] + [starts[d + 1] - starts[d] for d in range(1, trie.max_depth + 1)]
    # the level-order number of each preorder node, and back
    number = {node: 0 for node in range(len(trie))}
    for d in range(1, trie.max_depth + 1):
        level = [node for node in range(len(trie)) if trie.depth[node] == d]
        for k, node in enumerate(level):
            number[node] = starts[d] + 1 + k
    for limit in (0, 4, 16, 64, 10**9):
        tail = trie.thin_tail(limit)
        assert tail is trie.thin_tail(limit)
        assert 2 <= tail.depth <= trie.max_depth + 1
        assert all(size <= limit for size in sizes[tail.depth :])
        assert tail.depth == 2 or tail.depth > trie.max_depth or sizes[tail.depth - 1] > limit
        if tail.depth > trie.max_depth:
            assert not len(tail.numbers) and not tail.parents and not tail.ends
            continue
        assert tail.first == starts[tail.depth] and tail.base == starts[tail.depth - 1] + 1
        nodes = [node for node in range(len(trie)) if trie.depth[node] >= tail.depth]
        assert tail.numbers.tolist() == [number[node] for node in nodes]  # preorder
        assert tail.bytes == [trie.byte[node] for node in nodes]
        order = {node: k for k, node in enumerate(nodes)}
        above = tail.first + 1 - tail.base
        for k, node in enumerate(nodes):
            parent = max(p for p in range(node) if trie.depth[p] == trie.depth[node] - 1)
            expected = order[parent] + above if parent in order else number[parent] - tail.base
            assert tail.parents[k] == expected
            assert tail.ends[k] == k + sum(1 for n in nodes[k:] if n < trie.end[node])


def _thin_vocabulary() -> gbnfkit.Vocabulary:
    """The synthetic vocabulary and long tokens, so that its trie's deep levels are
    thin: tokens alive to their end in a string or a number, dead or handing over
    early (a string closed, then more), and some sharing long prefixes."""
    words = [
        "a" * 40, "a" * 24 + "b" * 9, "a" * 24 + '"' + "x" * 8, "a" * 30 + "é" * 5,
        "\\n" * 12, '"' + "k" * 20 + '": ' + "1" * 10, "1234567890" * 4,
        "12345.678e+" + "9" * 20, " " * 36, "\n" + " " * 30 + "}", "}" * 30,
        "]" * 12 + "," * 12, '", "' + "v" * 25, "true, false, null, " * 2, "é" * 14,
        'abc"' + "z" * 25, 'abc", ' + '"q' * 12, "[" * 32, "{" + '"' * 25,
    ]
    base = synthetic_vocabulary()
    tokens = list(base.tokens)
    eos, special = max(base.eos_token_ids), max(base.special_token_ids)
    tokens[eos : eos + 1] = [w.encode() for w in words] + [None]
    return gbnfkit.Vocabulary(
        tokens, eos_token_ids=[eos + len(words)], special_token_ids=[special]
    )


def test_vector_walk_through_thin_deep_levels() -> None:
    """The trie's deep thin levels walked node by node (``Tuning.thin_levels``,
    docs/masks.md, "Computing a split") give the verdicts and handover pairs of
    stepping each token, with the tail starting at several depths and with first
    bytes left out; the roots decide long tokens in the tail (accepted, rejected,
    uncertain) and before it (a node under a rejected one inherits ``_DEAD`` or
    ``_UNSURE``)."""
    compiled, roots = _context_roots("json", _thin_vocabulary())
    trie = compiled.index.trie
    automaton = compiled.automaton
    limits = (0, 4, 16, 10**9)
    depths = [trie.thin_tail(limit).depth for limit in limits]
    assert depths[0] == trie.max_depth + 1 and depths[-1] == 2
    assert 2 < depths[2] < 20 < depths[1] < depths[0]
    rng = random.Random(7)
    seen: set[str] = set()
    for root in roots:
        accepted, uncertain, pairs = _by_stepping(trie, automaton, root)
        wanted = -1 if root.bottom else rng.getrandbits(256)
        firsts = {p for p, data in enumerate(trie.sorted_bytes) if wanted >> data[0] & 1}
        for limit, depth in zip(limits, depths, strict=True):
            split = vector_walk(trie, automaton, root, 10**6, thin_levels=limit)
            assert split.accepted.tolist() == accepted
            assert split.uncertain.tolist() == uncertain
            got = zip(split.handover_positions, split.handover_offsets, strict=True)
            assert [(int(p), int(k)) for p, k in got] == pairs
            some = vector_walk(trie, automaton, root, 10**6, wanted, thin_levels=limit)
            assert some.accepted.tolist() == [p for p in accepted if p in firsts]
            assert some.uncertain.tolist() == [p for p in uncertain if p in firsts]
            got = zip(some.handover_positions, some.handover_offsets, strict=True)
            assert [(int(p), int(k)) for p, k in got] == [(p, k) for p, k in pairs if p in firsts]
            # where the long tokens were decided, for the tail of limit 16
            if limit != 16:
                continue
            for p in range(len(trie.sorted_bytes)):
                data = trie.sorted_bytes[p]
                if len(data) < depth:
                    continue
                state: ByteState | None = root
                k = 0
                while state is not None and k < len(data):
                    state = automaton.step(state, data[k])
                    k += 1
                where = "before" if k < depth else "in"
                verdict = (
                    "accepted" if p in accepted else "uncertain" if p in uncertain else "dead"
                )
                seen.add(f"{verdict} {where}")
    assert seen >= {"accepted in", "uncertain in", "uncertain before", "dead in", "dead before"}


def _grouped_like_bytes(words: list[bytes], rng: random.Random, share: float) -> None:
    """Group random handover pairs of a trie of ``words`` and compare with a dict of
    byte strings (sorted, each tail's tokens ascending), by sorting their bytes and
    from the ranks of the suffixes of every token (or of only some: then ``None``)."""
    trie = TokenTrie(list(enumerate(words)))
    pairs = sorted(
        (pos, k)
        for pos, data in enumerate(trie.sorted_bytes)
        for k in range(len(data))
        if rng.random() < share
    )
    positions = np.array([p for p, _ in pairs], dtype=np.int64)
    offsets = np.array([k for _, k in pairs], dtype=np.int64)
    tails = group_tails(trie, positions, offsets)
    assert tails is not None
    everyone = list(range(len(trie.sorted_bytes)))
    assert group_ranked(trie, SuffixRanks.build(trie, everyone), positions, offsets) == tails
    some = SuffixRanks.build(trie, [p for p in everyone if p != pairs[0][0]])
    assert group_ranked(trie, some, positions, offsets) is None
    expected: dict[bytes, list[int]] = {}
    for pos, k in pairs:
        expected.setdefault(trie.sorted_bytes[pos][k:], []).append(pos)
    assert list(tails.tails) == sorted(expected)
    for i, tail in enumerate(tails.tails):
        assert list(tails.positions[tails.starts[i] : tails.starts[i + 1]]) == expected[tail]
    chosen = [0, 3, len(tails.tails) - 1]
    assert tails.positions_of(chosen) == [p for i in chosen for p in expected[tails.tails[i]]]
    assert group_tails(trie, positions[:0], offsets[:0]) is None


def test_group_tails_sorts_and_groups_like_byte_strings() -> None:
    # zero bytes, 0xff, prefixes of each other: the padded rows must order like bytes
    words = [b"a", b"a\x00", b"a\x00\x00", b"\x00", b"\x00a", b"ab", b"a\xff", b"\xff"]
    words += [b"x" + w for w in words] + [b"yy" + w for w in words] + [b"q" * 300 + b"\x00"]
    _grouped_like_bytes(words, random.Random(5), 0.7)


def test_group_tails_orders_long_tails_with_equal_first_bytes() -> None:
    # tails longer than 8 bytes sharing their first 8 (ranked by their whole bytes) and
    # short ones equal to those 8 bytes cut short, or followed by zero bytes
    rng = random.Random(11)
    words = {b"abcdefgh", b"abcdefg", b"abcdefgh\x00", b"abc\x00\x00\x00\x00\x00\x00"}
    while len(words) < 300:
        stem = rng.choice([b"abcdefgh", b"abc\x00\x00\x00\x00\x00", b"\xff" * 8, b""])
        words.add(stem + bytes(rng.choice(b"\x00\x01\xff") for _ in range(rng.randint(0, 12))))
    _grouped_like_bytes(sorted(words), rng, 0.5)


def test_vector_walk_on_an_index_without_text_tokens() -> None:
    vocabulary = gbnfkit.Vocabulary([None, b""], eos_token_ids=[0])
    index = VocabularyIndex(vocabulary)
    compiled = gbnfkit.CompiledGrammar(Grammar.builtin("json"), vocabulary, index=index)
    split = vector_walk(index.trie, compiled.automaton, compiled.automaton.initial, 10)
    assert not len(split.accepted) and not len(split.uncertain)


def test_vector_walk_steps_only_the_classes_the_trie_asks_for() -> None:
    """A state's byte classes are stepped when a trie node holding it has a child in
    them, not all at once (docs/masks.md, "Computing a split"), and a row filled in
    parts at several levels keeps what it had: the verdicts are those of stepping."""
    grammar = Grammar.from_gbnf('root ::= "a"? "b"+ ("x" | "y")')
    automaton = ByteAutomaton(lower_program(grammar.program, grammar.limits), grammar.limits)
    # the "b" loop's state L has three classes (b, x, y); "bx" asks it for x at level
    # 2, "abb" for b at level 3, "abbx" for x again at level 4; nothing asks for y
    words = [b"a", b"ab", b"abb", b"abbx", b"b", b"bx", b"bxq", b"q"]
    trie = TokenTrie(list(enumerate(words)))
    root = automaton.initial
    split = vector_walk(trie, automaton, root, max_tail_tokens=10)
    loop = automaton.numbered(root.trans[ord("b")])
    assert loop is not None
    assert {b for b in loop.trans if b >= 0} == {ord("b"), ord("x")}
    accepted, uncertain, _ = _by_stepping(trie, automaton, root)
    assert split.accepted.tolist() == accepted and split.uncertain.tolist() == uncertain
    assert [trie.sorted_bytes[p] for p in accepted] == words[:6]


def test_index_builds_what_wide_splits_read_with_itself() -> None:
    """The level bounds and prefix nodes of the trie and of each slice's rest trie are
    built with the vocabulary index, not at the first wide split of a first request
    (docs/masks.md, "Memory bounds"); they equal a fresh trie's, built on first use."""
    index = VocabularyIndex(synthetic_vocabulary())
    tries = (index.trie, *(piece.rest for piece in index.slices))
    for trie in tries:
        assert trie._level_bounds is not None and trie._prefix_nodes is not None
        fresh = TokenTrie(list(zip(trie.sorted_ids.tolist(), trie.sorted_bytes, strict=True)))
        assert fresh._prefix_nodes is None
        assert fresh.level_bounds == trie.level_bounds
        assert fresh.prefix_nodes.tolist() == trie.prefix_nodes.tolist()


def _masks_along(compiled: gbnfkit.CompiledGrammar, grammar: Grammar, text: bytes) -> None:
    """Compare every mask with the reference along the tokens of ``text`` (one byte each)."""
    vocabulary = compiled.vocabulary
    matcher = compiled.matcher()
    state = grammar.start()
    ids = {vocabulary.token_bytes(i): i for i in range(vocabulary.size)}
    for byte in text:
        expected = reference_mask(state, vocabulary)
        assert np.array_equal(expected, fast_mask(matcher, vocabulary.size))
        assert matcher.accept_token(ids[bytes([byte])])
        state = state.feed(bytes([byte]))


def test_wide_splits_leave_out_tails_the_frames_below_never_read() -> None:
    """A wide split drops the handover pairs whose tail starts with a byte that the
    frames below its context can never read first (the follow set of the context's
    deepest rule) and the uncertain tokens left without one; a split kept for its
    canonical form serves another grammar's context with the same form only if the
    frames below that one read no other byte first (docs/masks.md, "Tails").  Two
    grammars whose word contexts have one form, but ``]`` or ``)`` after the word."""
    words = [b"(", b")", b"]", b"a", b"b", b"ab", b"ab)", b"ab]", b"ba)", b"b]", b"aab]"]
    vocabulary = gbnfkit.Vocabulary([None, *words], eos_token_ids=[0])
    index = VocabularyIndex(vocabulary)
    tuning = Tuning(wide=0, many_first_bytes=0)  # every context split wide
    entries = []
    for closing in "])":
        # a word three rules deep (its contexts: r1, r2, r3 over the bottom marker),
        # each able to finish after any letter; what follows r1 is `closing`
        grammar = Grammar.from_gbnf(
            f'root ::= "(" r1 "{closing}"\nr1 ::= r2 "!"?\nr2 ::= r3 "?"?\nr3 ::= [ab]+'
        )
        compiled = gbnfkit.CompiledGrammar(grammar, vocabulary, index=index, tuning=tuning)
        _masks_along(compiled, grammar, b"(abab" + closing.encode())
        entries.append({id(e): e for e in index.shared.values()})
    close, paren = 1 << ord("]"), 1 << ord(")")
    # the first grammar's word contexts dropped the tails starting with ")"...
    first = [e for e in entries[0].values() if e.follow != -1]
    assert first and all(e.follow & close and not e.follow & paren for e in first)
    # ...so the second grammar, whose words are followed by ")", split them again
    second = [e for i, e in entries[1].items() if i not in entries[0] and e.follow != -1]
    assert second and all(e.follow & paren and not e.follow & close for e in second)


def test_rule_starts_place_every_position_in_its_rule() -> None:
    """The byte program lays its rules out one after the other, so a position's rule
    is the last rule starting at or before it; a program laid out otherwise gets
    every alternative's start with its rule."""
    program = lower_program(Grammar.builtin("c").program)
    starts, owners = _rule_starts(program.rules)
    assert owners == []
    alts = sorted((a, r) for r, rs in enumerate(program.rules) for a in rs)
    firsts = [a for a, _ in alts]
    for p in range(len(program.kind)):
        assert bisect_right(starts, p) - 1 == alts[bisect_right(firsts, p) - 1][1]
    starts, owners = _rule_starts(((0, 9), (4,), (12,)))
    assert starts == [0, 4, 9, 12] and owners == [0, 1, 0, 2]


def _plain_follow(grammar: Grammar) -> list[int]:
    """Every rule's follow set as the plain fixed point over all rules: at each call of
    a rule the first bytes after the call, and the calling rule's set when what follows
    the call can finish."""
    automaton = ByteAutomaton(lower_program(grammar.program))
    program = automaton.program
    alts = sorted((a, r) for r, rs in enumerate(program.rules) for a in rs)
    firsts = [a for a, _ in alts]
    follow = [0] * len(program.rules)
    edges = []
    for p, kind in enumerate(program.kind):
        if kind == CALL:
            bits, ends = automaton.first_bits((BOTTOM, p + 1))
            follow[program.arg[p]] |= bits
            if ends:
                edges.append((program.arg[p], alts[bisect_right(firsts, p) - 1][1]))
    changed = True
    while changed:
        changed = False
        for r, caller in edges:
            if follow[caller] & ~follow[r]:
                follow[r] |= follow[caller]
                changed = True
    return follow


@pytest.mark.parametrize("name", GRAMMARS)
def test_follow_sets_match_a_plain_fixed_point(name: str) -> None:
    """Every rule's follow set (its callers' sets passed down by a work list) equals
    the plain fixed point over all rules."""
    grammar = Grammar.builtin(name)
    tuning = Tuning(follow_calls=1 << 20)
    compiled = gbnfkit.CompiledGrammar(grammar, synthetic_vocabulary(), tuning=tuning)
    follow = _plain_follow(grammar)
    for rule in range(len(follow)):
        assert compiled._follow_rule(rule) == follow[rule]
    assert all(follow[r] == bits for r, bits in compiled._follows.items())


def test_follow_sets_through_calls_in_tail_position_cost_no_budget() -> None:
    """A trie of names written as rules each calling the next in tail position (as "a
    name other than these" is): those calls read nothing after them, so they are not
    counted against ``follow_calls``, and the set of the rule at the end of 300 of them
    is found with the default budget, not given up: every rule's set is the plain fixed
    point, and what follows the name (``"``) is all the rest of a name can be followed
    by."""
    depth = 300
    lines = ['root ::= "\\"" n0 "\\"" [0-9]', "rest ::= [a-z]*", f"n{depth} ::= rest"]
    lines += [f'n{i} ::= "a" n{i + 1} | [b-z] rest' for i in range(depth)]
    grammar = Grammar.from_gbnf("\n".join(lines))
    assert depth > Tuning().follow_calls
    follow = _plain_follow(grammar)
    compiled = gbnfkit.CompiledGrammar(grammar, synthetic_vocabulary())
    for rule in range(len(follow)):
        assert compiled._follow_rule(rule) == follow[rule]
    rest = grammar.program.rule_names.index("rest")
    assert follow[rest] == 1 << ord('"')


def _links(grammar: Grammar, name: str) -> list[int]:
    """The links of the counted repetition the rule ``name`` calls: the link it
    calls, then each next one."""
    program = lower_program(grammar.program)
    chains = Chains(program, 0, 64)
    (alt,) = program.rules[grammar.program.rule_names.index(name)]
    calls = range(alt, program.kind.index(END, alt))
    out = [next(program.arg[p] for p in calls
                if program.kind[p] == CALL and chains.link(program.arg[p])[0] >= 0)]
    while chains.link(chains.link(out[-1])[1])[0] >= 0:
        out.append(chains.link(out[-1])[1])
    return out


def _shared_links() -> tuple[Grammar, list[int], list[int], list[int]]:
    """A grammar whose counted repetitions `c{0,60}` and `c{0,20}` share their links,
    each followed by its own byte; its plain follow sets; the links of each."""
    grammar = Grammar.from_gbnf(
        'root ::= "[" long "," short "]"\nlong ::= "x" c{0,60} "y"\n'
        'short ::= "z" c{0,20} "w"\nc ::= [a-z]'
    )
    return grammar, _plain_follow(grammar), _links(grammar, "long"), _links(grammar, "short")


def test_follow_sets_of_shared_links_reuse_what_was_found() -> None:
    """Counted repetitions of one item share their links (`c{0,20}` is the last 20 links
    of `c{0,60}`), and each link is called by the one above in tail
    position, so a link's search reaches every link above it.  A rule whose set was
    found before keeps it: a search stops there and passes it down (the callers of the
    links above are taken away below; a search that climbed them again would find
    less), and a search that reaches a rule whose own search passed ``follow_calls``
    gives up at once (it would read all that search read).  Either way each set is the
    plain fixed point, or -1 where the search over every rule reached passes the
    budget."""
    grammar, follow, long_links, short_links = _shared_links()
    assert short_links == long_links[-len(short_links):] and len(short_links) > 10
    top = short_links[0]
    for budget, expect_top in ((256, follow[top]), (1, -1)):
        compiled = gbnfkit.CompiledGrammar(
            grammar, synthetic_vocabulary(), tuning=Tuning(follow_calls=budget)
        )
        # with a budget of one call, the top's search reads `short`'s "w", then `long`'s "y"
        assert compiled._follow_rule(top) == expect_top
        index = compiled._call_index
        assert index is not None
        index.calls = {r: index.sites(r) if r in short_links[1:] else []
                       for r in range(len(index.top))}
        for link in short_links[1:]:
            assert compiled._follow_rule(link) == (follow[link] if budget > 1 else -1)
    # every rule in either order: the plain set, or -1 only where the calls not in
    # tail position of the rules a search reaches (its callers, theirs...) pass the budget
    program = lower_program(grammar.program)
    starts, _ = _rule_starts(program.rules)
    callers: dict[int, set[int]] = {}
    counted = [0] * len(program.rules)
    for p, kind in enumerate(program.kind):
        if kind == CALL:
            callers.setdefault(program.arg[p], set()).add(bisect_right(starts, p) - 1)
            counted[program.arg[p]] += program.kind[p + 1] != END
    for order in (1, -1):
        compiled = gbnfkit.CompiledGrammar(
            grammar, synthetic_vocabulary(), tuning=Tuning(follow_calls=1)
        )
        for rule in range(len(follow))[::order]:
            reached, todo = {rule}, [rule]
            while todo:
                for caller in callers.get(todo.pop(), set()) - reached:
                    reached.add(caller)
                    todo.append(caller)
            got = compiled._follow_rule(rule)
            assert got == follow[rule] or (got == -1 and sum(counted[r] for r in reached) > 1)


def test_follow_search_climbs_rules_called_once_in_tail_position() -> None:
    """A rule called from one place only, in tail position, returns where its caller
    does, so its set is its caller's: each rule's *top* is the first rule above it on
    such calls that is called otherwise, the search starts from tops and reaches only
    tops, and it reads the calls of no rule climbed over (a link's search on a
    counted repetition does not walk every link above it).  The sets stay the plain
    fixed point; a cycle of such calls (unreachable) is climbed a bounded number of
    times."""
    grammar, follow, long_links, short_links = _shared_links()
    compiled = gbnfkit.CompiledGrammar(grammar, synthetic_vocabulary())
    assert compiled._follow_rule(long_links[-1]) == follow[long_links[-1]]
    index = compiled._call_index
    assert index is not None
    top, mid = long_links[0], short_links[0]
    assert all(index.top[r] == top for r in long_links[: -len(short_links)])
    assert all(index.top[r] == mid for r in short_links)
    # only tops were read: the two links called from outside (`"y"` and `"w"` after
    # them cannot finish, so `long` and `short` are not reached)
    assert set(index.calls) == {top, mid}
    for rule in range(len(follow)):
        assert compiled._follow_rule(rule) == follow[rule]
    # a cycle of rules each called once, in tail position, by the other
    cycle = Grammar.from_gbnf('root ::= "[" x "]"\nx ::= [a-z]\na ::= "q" b\nb ::= a')
    follow = _plain_follow(cycle)
    compiled = gbnfkit.CompiledGrammar(cycle, synthetic_vocabulary())
    for rule in range(len(follow)):
        assert compiled._follow_rule(rule) == follow[rule]
