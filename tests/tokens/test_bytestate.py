"""The byte automaton's step: results shared by bytes the same stacks accept, exact stacks."""

from __future__ import annotations

from gbnfkit import Grammar, Limits
from gbnfkit.tokens._byteprogram import CALL, END, TEST, ByteProgram, lower_program
from gbnfkit.tokens._bytestate import _COMPOSE_DEPTH, BOTTOM, ByteAutomaton, ByteState, _refine

# "a", or "b" then a rule that only calls itself (the grammar checks refuse such a rule,
# a byte program need not): after "b" the closure is empty
SELF_CALLING = ByteProgram(
    kind=(TEST, CALL, END, TEST, END, CALL, END),
    arg=(1 << ord("a"), 1, 0, 1 << ord("b"), 0, 1, 0),
    rules=((0, 3), (5,)),
    root=0,
)

TEXT = 'root ::= [a-c] "x" | [b-d] "y" | "e" [0-9]'


def _automaton(limits: Limits | None = None) -> ByteAutomaton:
    grammar = Grammar.from_gbnf(TEXT) if limits is None else Grammar.from_gbnf(TEXT, limits=limits)
    return ByteAutomaton(lower_program(grammar.program, grammar.limits), grammar.limits)


def _after(automaton: ByteAutomaton, data: bytes) -> ByteState | None:
    return automaton.feed(automaton.initial, data)


def test_bytes_accepted_by_the_same_stacks_share_one_state() -> None:
    automaton = _automaton()
    start = automaton.initial
    b = automaton.step(start, ord("b"))  # [a-c] and [b-d] both accept b
    c = automaton.step(start, ord("c"))
    a = automaton.step(start, ord("a"))
    d = automaton.step(start, ord("d"))
    assert b is not None and a is not None and d is not None
    assert c is b  # reused through the set of accepting top tests, not closed again
    assert a is not b and d is not b and a is not d
    assert automaton.step(start, ord("z")) is None
    assert automaton.allowed_bytes(start) == list(b"abcde")


def test_shared_steps_give_the_stacks_a_fresh_automaton_gives() -> None:
    """Each byte stepped from a state that already stepped its siblings leads to the
    stacks of the same byte stepped first, in an automaton that saw nothing else."""
    shared = _automaton()
    for first in b"abcde0z":
        for byte in b"abcdexy059z":
            alone = _automaton()
            expected = _after(alone, bytes([first, byte]))
            got = _after(shared, bytes([first, byte]))
            assert (got is None) == (expected is None)
            if got is not None and expected is not None:
                assert set(got.stacks) == set(expected.stacks)
                assert got.bits == expected.bits
                assert got.complete == expected.complete


def test_dropped_caches_keep_shared_steps_exact() -> None:
    """With room for two states the caches (and the shared steps) are dropped all the time."""
    tiny = _automaton(Limits(max_cached_states=2))
    roomy = _automaton()
    for data in (b"bx", b"cx", b"by", b"cy", b"ax", b"dy", b"e5", b"ay", b"dx"):
        got = _after(tiny, data)
        expected = _after(roomy, data)
        assert (got is None) == (expected is None)
        if got is not None and expected is not None:
            assert set(got.stacks) == set(expected.stacks)
            assert got.complete == expected.complete


def test_a_state_made_before_a_cleared_cache_steps_exactly() -> None:
    """A state made before the full intern table was cleared (as a matcher holds one)
    keeps numbers the cleared table gave in its cache: they are misses, and its steps
    still give the stacks of a fresh automaton's; every cached number still held names
    a state of the right stacks."""
    tiny = _automaton(Limits(max_cached_states=2))
    roomy = _automaton()
    kept = tiny.initial
    for _ in range(4):
        for first in b"abcde":
            got = tiny.step(kept, first)
            expected = roomy.step(roomy.initial, first)
            assert got is not None and expected is not None
            assert set(got.stacks) == set(expected.stacks)
            assert tiny.numbered(got.num) is got  # adopted when the step led to it
            # other steps from other states clear the table again (and again)
            after = tiny.feed(got, b"x5y")
            assert (after is None) == (roomy.feed(expected, b"x5y") is None)
    for n, state in _numbered(tiny).items():
        assert state.num == n


def _numbered(automaton: ByteAutomaton) -> dict[int, ByteState]:
    """The states the automaton's numbering holds, by number."""
    numbering = automaton.numbering
    return {numbering.base + i: s for i, s in enumerate(numbering.states) if s is not None}


def test_a_number_read_before_a_clear_never_names_another_state() -> None:
    """Matchers share a grammar's automaton across threads with no lock on the read
    path, so between a thread's reading a number from a transition cache and its
    looking the number up, another thread's intern can clear the full table and number
    new states.  Driven here in that order, one new state at a time: the number names
    the state it named when read, or nothing (a miss).  (Numbers given again from 0
    after a clear, as the fifteenth pass's reverted version gave them, name another
    state here.)"""
    limits = Limits(max_cached_states=3)
    tiny = _automaton(limits)
    roomy = _automaton()
    others = [bytes([a, b]) for a in b"abcde" for b in b"xy0123456789"]
    found = 0
    for first in b"abcde":
        reader = tiny.state_of([(tiny.program.root,)], call=True)
        assert tiny.step(reader, first) is not None
        n = reader.trans[first]  # the reading thread has the number...
        walking = tiny.numbering  # (a walk takes the numbering once)
        expected = roomy.step(roomy.initial, first)
        assert expected is not None
        clears = 0
        for data in others:  # ...while another thread steps on, clearing the table
            before = tiny.numbering
            tiny.feed(tiny.state_of([(tiny.program.root,)], call=True), data)
            clears += tiny.numbering is not before
            held = tiny.numbered(n)  # ...and then the reading thread looks it up
            if held is not None:
                found += 1
                assert set(held.stacks) == set(expected.stacks), (first, data)
            # the walk's numbering still names the state (or nothing), and no number
            # given since names another state in it
            kept = walking.get(n)
            assert kept is not None and set(kept.stacks) == set(expected.stacks)
            for m in _numbered(tiny):
                assert walking.get(m) in (None, tiny.numbered(m))
        assert clears >= 3
        # the reader's cache still holds the number: a miss, the step made again
        again = tiny.step(reader, first)
        assert again is not None and set(again.stacks) == set(expected.stacks)
    assert found > 0  # the number was held (and right) until the first clear


def test_numbers_are_given_once_across_clears() -> None:
    """Every number is given to one state, ever: a clear does not reset the counter
    (two threads interning at once take two numbers, and a number read before a clear
    cannot come to name a state made after it)."""
    tiny = _automaton(Limits(max_cached_states=2))
    given: dict[int, ByteState] = {}
    for a in b"abcde":
        for b in b"xy0123456789":
            state = tiny.feed(tiny.initial, bytes([a, b]))
            for n, held in _numbered(tiny).items():
                assert held.num == n
                assert given.setdefault(n, held) is held
            assert state is None or tiny.numbered(state.num) in (state, None)
    # states were made again after clears, under new numbers
    assert len(given) > len({frozenset(state.stacks) for state in given.values()})


def test_first_bits_are_those_of_the_closed_state() -> None:
    """``first_bits`` of every stack met (and of its parts, over the bottom marker or
    not) equals the allowed bytes and bottom marker of the state built from it."""
    from gbnfkit.tokens._bytestate import BOTTOM

    for name in ("json", "c", "arithmetic"):
        grammar = Grammar.builtin(name)
        automaton = ByteAutomaton(lower_program(grammar.program, grammar.limits))
        texts = {"json": b'{"a": [1, -2.5e3, "x\\n"], "b": {}}', "c": b"int f(int a) { return a; }"}
        state: ByteState | None = automaton.initial
        stacks: set[tuple[int, ...]] = set()
        for byte in texts.get(name, b"(1+2)*3-4/5"):
            assert state is not None
            stacks.update(state.stacks)
            state = automaton.step(state, byte)
        checked = 0
        for stack in stacks:
            for k in range(len(stack) + 1):
                for part in (stack[:k], (BOTTOM,) + stack[k:-1], stack[k:-1]):
                    closed = automaton.state_of([part])
                    bits = automaton.allowed_bits(closed)
                    assert automaton.first_bits(part) == (bits, closed.bottom), part
                    checked += 1
        assert checked > 100


def test_intern_checks_the_stacks_behind_a_hash() -> None:
    """The intern table is keyed by the hash of the stacks' set: a state found under that
    hash with other stacks (a clash) is not returned, and the clashing state is interned
    too (found again, the same object)."""
    automaton = _automaton()
    other = automaton.initial
    wanted = frozenset({(BOTTOM,), (2,)})
    assert wanted != frozenset(other.stacks)
    automaton._intern[hash(wanted)] = other  # as if `other`'s set had that hash
    got = automaton.intern(wanted)
    assert got is not other and set(got.stacks) == wanted and got.bottom and not got.complete
    assert automaton.intern(set(wanted)) is got
    assert automaton.intern(list(other.stacks)) is other
    assert got == automaton.intern(tuple(wanted)) and got != other


def _explored(automaton: ByteAutomaton, p: int) -> tuple[set[tuple[int, ...]], bool]:
    """The local closure of ``p`` explored stack by stack, each stack a tuple (the
    reference): a call pushes the frame after it (none in tail position) and starts each
    alternative, an end pops, a test or the bottom marker is found."""
    program = automaton.program
    kind, arg, rules = program.kind, program.arg, program.rules
    found: set[tuple[int, ...]] = set()
    seen: set[tuple[int, ...]] = set()
    todo: list[tuple[int, ...]] = [(BOTTOM, p)]
    while todo:
        s = todo.pop()
        if s in seen:
            continue
        seen.add(s)
        top = s[-1]
        if top < 0 or kind[top] == TEST:
            found.add(s)
        elif kind[top] == END:
            todo.append(s[:-1])
        else:
            base = s[:-1] if kind[top + 1] == END else s[:-1] + (top + 1,)
            todo.extend(base + (start,) for start in rules[arg[top]])
    got = automaton._explore(p)
    assert len(set(got[0])) == len(got[0])
    assert (set(got[0]), got[1]) == ({s[1:] for s in found if s != (BOTTOM,)}, (BOTTOM,) in found)
    return {s[1:] for s in found if s != (BOTTOM,)}, (BOTTOM,) in found


def test_composed_local_closures_are_the_explored_ones() -> None:
    """Every position's local closure, composed from those of the positions it reaches
    (in two orders, so that memoised parts are met both ways), is the set of stacks
    exploring it stack by stack gives: the builtin grammars and a schema's grammar
    (optional members, nullable rules called in and out of tail position)."""
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "string"},
            "b": {"type": "array", "items": {"type": "integer"}},
        },
        "additionalProperties": {"type": "number"},
    }
    grammars = [Grammar.builtin(name) for name in ("json", "c", "arithmetic")]
    grammars.append(Grammar.from_json_schema(schema, property_order="any"))
    for grammar in grammars:
        program = lower_program(grammar.program, grammar.limits)
        positions = range(len(program.kind))
        for order in (positions, reversed(positions)):
            automaton = ByteAutomaton(program, grammar.limits)
            automaton._local.clear()
            for p in order:
                suffixes, pops = automaton._local_closure(p)
                assert len(set(suffixes)) == len(suffixes)
                assert (set(suffixes), pops) == _explored(ByteAutomaton(program), p), p


def test_local_closures_of_cycles_and_deep_calls_are_explored() -> None:
    """A rule that only calls itself (a cycle the grammar checks refuse, a byte program
    need not) and a chain of calls deeper than the composition goes are explored stack
    by stack: the same closures, no endless recursion."""
    automaton = ByteAutomaton(SELF_CALLING)
    assert automaton._local_closure(5) == ((), False) and _explored(automaton, 5) == (set(), False)
    assert automaton._local_closure(1) == ((), False)
    # rule i (i < n): call rule i + 1, then "a"; rule n: "b" or nothing (deeper than
    # Python's own recursion limit: composing without a bound would fail)
    n = 1_500
    kind: list[int] = []
    arg: list[int] = []
    starts: list[tuple[int, ...]] = []
    for i in range(n):
        starts.append((len(kind),))
        kind += [CALL, TEST, END]
        arg += [i + 1, 1 << ord("a"), 0]
    starts.append((len(kind), len(kind) + 2))
    kind += [TEST, END, END]
    arg += [1 << ord("b"), 0, 0]
    deep = ByteProgram(kind=tuple(kind), arg=tuple(arg), rules=tuple(starts), root=0)
    automaton = ByteAutomaton(deep)
    for p in (0, 3 * (n - _COMPOSE_DEPTH // 2), 3):
        suffixes, pops = automaton._local_closure(p)
        assert (set(suffixes), pops) == _explored(ByteAutomaton(deep), p)
    lengths = {len(s) for s in automaton._local_closure(0)[0]}
    assert lengths == {n, n + 1}  # "a" after each call, "b" (or nothing) at the bottom


def _by_membership(allowed: int, tops: tuple[int, ...]) -> set[int]:
    """The bytes of ``allowed`` grouped by which of ``tops`` hold them (the definition
    of a state's byte classes), each group as a 256-bit set."""
    groups: dict[tuple[bool, ...], int] = {}
    for byte in range(256):
        if allowed >> byte & 1:
            sig = tuple(bool(m >> byte & 1) for m in tops)
            groups[sig] = groups.get(sig, 0) | 1 << byte
    return set(groups.values())


def test_byte_classes_are_the_bytes_the_same_tests_accept() -> None:
    """``classes`` is exactly the partition of the allowed bytes by the top tests that
    accept them: a one-byte test makes its byte a class of its own, a wider test cuts
    every class it overlaps, and bytes no test tells apart stay together (the states
    after ``{\\n`` and inside a statement of c hold 15-18 tests, most of one byte)."""
    grammar = Grammar.builtin("c")
    automaton = ByteAutomaton(lower_program(grammar.program, grammar.limits), grammar.limits)
    text = b"int gcd(int a, int b) {\n    while (b != 0) {\n        int t = a % b;\n"
    state: ByteState | None = automaton.initial
    checked = many = 0
    for byte in text:
        assert state is not None
        tops = tuple(automaton._tops(state))
        classes = automaton.classes(state)
        assert len(classes) == len(set(classes))
        assert set(classes) == _by_membership(automaton.allowed_bits(state), tops)
        checked += 1
        many += len(tops) >= 10
        state = automaton.step(state, byte)
    assert checked == len(text) and many > 5
    # overlapping wide tests, single bytes inside and outside them, a test equal to
    # the union, and none at all
    digits = sum(1 << b for b in range(ord("0"), ord("9") + 1))
    lower = sum(1 << b for b in range(ord("a"), ord("z") + 1))
    hexes = digits | sum(1 << b for b in range(ord("a"), ord("f") + 1))
    for tops in [
        (digits, lower, hexes, 1 << ord("x"), 1 << ord("5"), 1 << ord("+")),
        (1 << ord("a"), 1 << ord("b")),
        (lower, lower | digits, 1 << ord("q")),
        (),
    ]:
        allowed = 0
        for m in tops:
            allowed |= m
        assert set(_refine(allowed, tops)) == _by_membership(allowed, tops)
        assert len(_refine(allowed, tops)) == len(_by_membership(allowed, tops))
