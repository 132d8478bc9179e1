"""``JsonChars.not_in`` (the "other key" rules of objects with extra properties) against a
plain reference: the rule of each trie node built from scratch at every call, as before
rules were kept by their set of forbidden suffixes.  Several calls share one converter,
as the objects of one schema do, so a rule kept from an earlier call must be the one the
reference builds (same names, same rule table)."""

from __future__ import annotations

import random

import pytest

from gbnfkit.schema._convert import Converter
from gbnfkit.schema._gbnf import alt, seq
from gbnfkit.schema._options import SchemaOptions
from gbnfkit.schema._regex_parse import complement


def _reference(conv: Converter, words: list[str]) -> str:
    forbidden = set(words)
    char = conv.chars.char()
    names: dict[str, str] = {}
    nexts: dict[str, set[str]] = {}
    for w in forbidden:
        for i in range(len(w)):
            nexts.setdefault(w[:i], set()).add(w[i])

    def node(prefix: str) -> str:
        if prefix in names:
            return names[prefix]
        children = sorted(nexts.get(prefix, ()))
        options = []
        if prefix not in forbidden:
            options.append('""')
        for ch in children:
            options.append(seq(conv.chars.of(((ord(ch), ord(ch)),)), node(prefix + ch)))
        others = complement(tuple((ord(c), ord(c)) for c in children))
        options.append(seq(conv.chars.of(others), f"{char}*"))
        name = conv.table.add("other-key" if not prefix else "other-key-" +
                              "".join(c if c.isalnum() else "-" for c in prefix)[:30],
                              alt(options))
        names[prefix] = name
        return name

    if not forbidden:
        return f"{char}*"
    return node("")


@pytest.mark.parametrize("seed", range(40))
def test_other_key_rules_match_the_reference(seed: int) -> None:
    rng = random.Random(seed)
    letters = "ab/-é\"\\" if seed % 2 else "abcdefghij_"
    pool = ["".join(rng.choice(letters) for _ in range(rng.randint(0, 7))) for _ in range(12)]
    fast = Converter({}, SchemaOptions())
    slow = Converter({}, SchemaOptions())
    for _ in range(rng.randint(1, 8)):  # the objects of one schema
        words = rng.sample(pool, rng.randint(0, 6))
        assert fast.chars.not_in(words) == _reference(slow, words)
        assert fast.table.rules == slow.table.rules
    assert fast.table.text() == slow.table.text()


@pytest.mark.parametrize("seed", range(12))
def test_chains_below_the_last_branch_stop_at_kept_tails(seed: int) -> None:
    """Property names like a schema's (``user_id``, ``created_at``...): below the last
    branch of a name its nodes are one chain (``JsonChars._chain``), and a later object's
    chain stops where a tail kept from an earlier object starts (a tail word of its own,
    ``_at`` under ``updated``, or the whole of an earlier name).  Against the reference,
    rule by rule and in the order the table holds them."""
    rng = random.Random(seed)
    stems = ["user", "created", "updated", "item", "x", "", "name", "a\u00e9b"]
    tails = ["_id", "_at", "_name", "", "s", "_by_user_id"]
    pool = [rng.choice(stems) + rng.choice(tails) for _ in range(14)]
    fast = Converter({}, SchemaOptions())
    slow = Converter({}, SchemaOptions())
    for _ in range(rng.randint(2, 9)):
        words = rng.sample(pool, rng.randint(1, 6))
        assert fast.chars.not_in(words) == _reference(slow, words)
        assert list(fast.table.rules.items()) == list(slow.table.rules.items())
    for tail in tails:  # a word that is a kept tail, alone and beside others
        assert fast.chars.not_in([tail]) == _reference(slow, [tail])
        assert fast.chars.not_in([tail, "q" + tail]) == _reference(slow, [tail, "q" + tail])
    assert list(fast.table.rules.items()) == list(slow.table.rules.items())


@pytest.mark.parametrize("seed", range(20))
def test_fresh_names_are_the_first_free_ones(seed: int) -> None:
    """``RuleTable.fresh`` resumes numbering where it stopped for a hint: still the first
    free name of ``hint, hint-2, hint-3, ...``, also when other hints took some of them."""
    from gbnfkit.schema._gbnf import RuleTable

    rng = random.Random(seed)
    table = RuleTable()
    taken: set[str] = set()
    for _ in range(200):
        hint = rng.choice(["x", "x-2", "x-3", "y", "y-5", "x-2-2", "-x-", "x y", "é"])
        name = table.fresh(hint)
        base = {"-x-": "x", "x y": "x-y", "é": "rule"}.get(hint, hint)
        expected = base if base not in taken else next(
            f"{base}-{n}" for n in range(2, 1000) if f"{base}-{n}" not in taken)
        assert name == expected
        taken.add(name)


@pytest.mark.parametrize("lone_surrogates", [True, False])
def test_the_static_class_spellings_are_the_composed_ones(lone_surrogates: bool) -> None:
    """The spellings ``_Static`` composes once (any character, each printable ASCII
    character and every character but one) are what a conversion composes itself, and
    a conversion's rule of such a class has that body (with or without lone
    surrogates, which changes the class spelled)."""
    from gbnfkit.schema._gbnf import Recorder, RuleTable, recording
    from gbnfkit.schema._regex_parse import ANY_CHAR
    from gbnfkit.schema._strings import JsonChars, _static

    static = _static()
    assert len(static.bodies) == 2 + 2 * 95
    with recording(Recorder()):
        composing = JsonChars(RuleTable(), static=static)  # (composes every body)
        for ranges, body in static.bodies.items():
            assert composing._body(ranges) == body
        table = RuleTable()
        chars = JsonChars(table, lone_surrogates=lone_surrogates)
        reference = JsonChars(RuleTable(), lone_surrogates=lone_surrogates, static=static)
        for ranges in [ANY_CHAR, *(((cp, cp),) for cp in range(0x20, 0x7F)),
                       *(complement(((cp, cp),)) for cp in range(0x20, 0x7F))]:
            name = chars.of(ranges)
            assert table.rules[name] == reference.table.rules[reference.of(ranges)]


@pytest.mark.parametrize("seed", range(6))
def test_long_names_are_named_by_their_first_30_characters(seed: int) -> None:
    """Names longer than the 30 characters a rule's name takes from its prefix: the
    deep nodes share their hint (and get the next free number), as the reference's."""
    rng = random.Random(seed)
    stem = "".join(rng.choice("ab-é_") for _ in range(rng.randint(29, 34)))
    pool = [stem + "".join(rng.choice("abc.") for _ in range(rng.randint(0, 9)))
            for _ in range(8)]
    fast = Converter({}, SchemaOptions())
    slow = Converter({}, SchemaOptions())
    for _ in range(3):
        words = rng.sample(pool, rng.randint(1, 5))
        assert fast.chars.not_in(words) == _reference(slow, words)
    assert fast.table.text() == slow.table.text()
    assert sum(name.startswith("other-key") for name in fast.table.rules) > 30


@pytest.mark.parametrize("seed", range(8))
def test_names_longer_than_the_kept_suffixes_give_the_reference_rules(seed: int) -> None:
    """Names and shared prefixes and tails longer than ``_KEYED_SUFFIXES``: their rules
    are not kept by suffix below the root (a key per suffix made long names quadratic),
    so they are made again where an object meets them again, and the table gives the
    same rule for the same body: the same names and rules as the reference's."""
    from gbnfkit.schema._strings import _KEYED_SUFFIXES

    rng = random.Random(seed)
    long = _KEYED_SUFFIXES + rng.randint(1, 200)
    head = "".join(rng.choice("ab_") for _ in range(long))
    tail = "".join(rng.choice("xé") for _ in range(long))
    pool = [head + "c", head + "d", head, "e" + tail, "f" + tail, tail, head[:40],
            "g" + head + tail, head + "dd", "q"]
    fast = Converter({}, SchemaOptions())
    slow = Converter({}, SchemaOptions())
    for _ in range(5):
        words = rng.sample(pool, rng.randint(1, 5))
        assert fast.chars.not_in(words) == _reference(slow, words)
        assert list(fast.table.rules.items()) == list(slow.table.rules.items())


@pytest.mark.parametrize("words", [["a" * 20_000], ["a" * 20_000 + "b", "a" * 20_000 + "c"]],
                         ids=["one-name", "shared-prefix"])
def test_a_long_name_costs_memory_in_proportion_to_its_length(words: list[str]) -> None:
    """A 20,000-character name makes 20,000 rules, a few hundred bytes each: keeping
    a key per suffix (or a node per suffix set) held 200-400 MB of copied suffixes."""
    import tracemalloc

    conv = Converter({}, SchemaOptions())
    tracemalloc.start()
    try:
        conv.chars.not_in(words)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(conv.table.rules) >= 20_000
    assert peak < 40 * 2**20, f"{peak:,} bytes"


def test_the_hex_spellings_below_u0100_are_digit_range_s() -> None:
    """``_Static.hex4`` writes the spans below U+0100 itself (the gaps between a trie
    node's next characters): the text ``digit_range`` writes, for every such span, and
    the notes it records (what the IR is built from)."""
    from gbnfkit.schema._gbnf import Recorder, recording
    from gbnfkit.schema._numbers import digit_range
    from gbnfkit.schema._strings import _static

    static = _static()
    for lo in range(0x100):
        for hi in range(lo, 0x100):
            with recording(Recorder()) as fast:
                text = static.hex4(lo, hi)
            with recording(Recorder()) as slow:
                assert text == digit_range(lo, hi, 4, 16, static._hex_class)
            assert fast.notes == slow.notes


def test_the_hex_digit_sets_of_a_class_are_written_as_hex_digits_writes_a_range() -> None:
    """``_hex_set`` (the digits after ``\\u00`` of an "other key" class) writes a range of
    digits as ``hex_digits`` does, so a class and the spans beside it spell (and note) the
    same digit class once; a set of several runs keeps that order (digits, a-f, A-F)."""
    from gbnfkit.schema._numbers import hex_digits
    from gbnfkit.schema._strings import _hex_set

    for lo in range(16):
        for hi in range(lo, 16):
            assert _hex_set((2 << hi) - (1 << lo)) == hex_digits(lo, hi)
    assert _hex_set(0b1010_0000_0000_0001) == "[0dfDF]"
    assert _hex_set(0b1111_1111_0111_1110) == "[1-689a-fA-F]"
