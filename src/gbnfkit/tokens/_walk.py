"""Walking the token trie from a byte state: which tokens it accepts, rejects, or leaves open."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Sequence

from gbnfkit.tokens._bytestate import DEAD, UNKNOWN, ByteAutomaton, ByteState
from gbnfkit.tokens._slices import Slice, loops_on
from gbnfkit.tokens._trie import TokenTrie
from gbnfkit.tokens._tuning import DEFAULT_TUNING, Tuning

__all__ = ["WalkResult", "walk", "walk_all", "walk_runs", "walk_sorted"]

_BIT: tuple[int, ...] = tuple(1 << b for b in range(256))  # a byte's bit in a 256-bit set

# (accepted sorted-position ranges as parallel lo/hi lists, uncertain subtree node indices)
WalkResult = tuple[list[int], list[int], list[int]]


def walk(
    trie: TokenTrie,
    automaton: ByteAutomaton,
    root: ByteState,
    first: int = 0,
    stop: int | None = None,
    budget: list[int] | None = None,
    more: Callable[[int], int] | None = None,
    tuning: Tuning = DEFAULT_TUNING,
) -> WalkResult | None:
    """Walk nodes ``first .. stop`` (a run of sibling subtrees) from ``root``.

    ``root`` is the state after the bytes above node ``first`` (depth ``depth[first] - 1``).
    Returns the sorted-position ranges of accepted tokens, and the nodes whose whole
    subtree is *uncertain*: rejected by the frames ``root`` knows, but only after a path
    reached the bottom marker, so the frames below must decide.  States without the
    bottom marker never leave anything uncertain.  With ``budget`` (``[nodes]``, shared
    and decremented), returns ``None`` once more nodes than that would be visited,
    unless ``more(node)`` (asked each time the budget runs out, with the node the walk
    has reached) grants more nodes.

    Nodes are visited in preorder, one run of siblings at a time; below a node whose
    state accepts few bytes (and no bottom marker on the path), only the children
    with those bytes are visited, so a walk costs what matches, not the trie's width
    (``tuning.jump_bytes``, ``tuning.jump_subtree``).
    """
    if stop is None:
        stop = len(trie.byte)
    return walk_runs(trie, automaton, root, [first, stop], budget, more, tuning)


def walk_runs(
    trie: TokenTrie,
    automaton: ByteAutomaton,
    root: ByteState,
    runs: list[int],
    budget: list[int] | None = None,
    more: Callable[[int], int] | None = None,
    tuning: Tuning = DEFAULT_TUNING,
    bottoms: list[int] | None = None,
    piece: Slice | None = None,
    loops: dict[ByteState, bool] | None = None,
) -> WalkResult | None:
    """:func:`walk` over several runs of sibling subtrees, each from ``root``.

    ``runs`` is flat: ``first, stop, first, stop, ...``, each run's parent state being
    ``root`` (the runs are walked one after the other, in the order given).

    With ``bottoms``, the walk reports where ``root``'s frames can finish instead of
    what is uncertain: the nodes whose state holds the bottom marker are appended to
    ``bottoms``, nothing is uncertain, and only the bytes the frames themselves accept
    are followed (a split by top frame, ``docs/masks.md``: what the frames below accept
    after those nodes is walked separately).

    With ``piece`` (a slice of the vocabulary, ``docs/masks.md``, "Slices"), below a
    node of more than ``tuning.slice_subtree`` nodes (and ``tuning.jump_subtree``, the
    only nodes where a walk looks at the state's bytes) whose byte is a whole character
    of the slice's class, reached with no bottom marker on the path, in a state that
    loops on that class (:func:`~gbnfkit.tokens._slices.loops_on`, kept in ``loops``),
    the subtree's *inside* tokens are accepted without a visit and only its rest
    tokens are walked, in the slice's rest trie (``docs/masks.md``, "Narrow walks
    through slices").  Not with ``bottoms``.
    """
    byte = trie.byte
    depth = trie.depth
    end = trie.end
    here_lo = trie.here_lo
    here_hi = trie.here_hi
    children = trie.children
    step = automaton.step
    allowed_bits = automaton.allowed_bits
    live_bits = automaton.live_bits
    # states by number (taken once: a clear during the walk leaves it the states it
    # held, and later states are found through `step`; ByteAutomaton's docstring)
    numbering = automaton.numbering
    base = numbering.base
    numbered = numbering.states
    bit_of = _BIT
    jump_bytes = tuning.jump_bytes
    jump_subtree = tuning.jump_subtree
    report = bottoms is not None
    sliced = piece is not None and loops is not None and not report
    slice_subtree = tuning.slice_subtree
    single = piece.dfa.single if piece is not None else 0
    starts = piece.dfa.first if piece is not None else 0
    probe = (single & -single).bit_length() - 1  # a character of the slice's class
    last_single = single.bit_length() - 1
    finished: list[int] = bottoms if bottoms is not None else []
    start_flag = root.bottom and not report
    states: list[ByteState] = [root] * (trie.max_depth + 1)
    flags = [start_flag] * (trie.max_depth + 1)
    acc_lo: list[int] = []
    acc_hi: list[int] = []
    uncertain: list[int] = []
    last_hi = -1
    left = budget[0] if budget is not None else len(byte) + 1
    for r in range(0, len(runs), 2):
        first = runs[r]
        if first >= runs[r + 1]:
            continue
        top = depth[first] - 1
        states[top] = root
        flags[top] = start_flag
        todo = [(first, runs[r + 1])]
        while todo:
            i, last = todo.pop()
            while i < last:
                left -= 1
                if left < 0:
                    left += more(i) if more is not None else 0
                    if left < 0:
                        return None
                d = depth[i]
                parent = states[d - 1]
                b = byte[i]
                got = parent.trans.get(b, UNKNOWN)
                slot = got - base
                s = numbered[slot] if 0 <= slot < len(numbered) else None
                if s is None and got != DEAD:
                    # not cached, or a number the numbering does not hold
                    bits = parent.bits
                    if bits < 0:
                        bits = allowed_bits(parent)
                    at = bit_of[b]
                    if not bits & at:
                        s = None
                    elif end[i] == i + 1 and not report:
                        # a leaf: its token is accepted iff the byte leads to some
                        # state, which need not be made (docs/masks.md, "Trie leaves")
                        live = parent.live
                        if live < 0:
                            live = live_bits(parent)
                        if live & at:
                            lo = here_lo[i]
                            if lo == last_hi:
                                acc_hi[-1] = last_hi = here_hi[i]
                            else:
                                acc_lo.append(lo)
                                acc_hi.append(here_hi[i])
                                last_hi = here_hi[i]
                            i += 1
                            continue
                        s = step(parent, b)
                    else:
                        s = step(parent, b)
                if s is None:
                    if flags[d - 1]:
                        uncertain.append(i)
                    i = end[i]
                    continue
                states[d] = s
                if report:
                    flag = False
                    if s.bottom:
                        finished.append(i)
                else:
                    flag = flags[d] = flags[d - 1] or s.bottom
                lo = here_lo[i]
                if lo != here_hi[i]:
                    # preorder is sorted order: a run of accepted nodes is one range
                    if lo == last_hi:
                        acc_hi[-1] = last_hi = here_hi[i]
                    else:
                        acc_lo.append(lo)
                        acc_hi.append(here_hi[i])
                        last_hi = here_hi[i]
                after = end[i]
                if not flag and after - i > jump_subtree:
                    bits = s.bits
                    if bits < 0:
                        bits = allowed_bits(s)
                    if bits.bit_count() <= jump_bytes:
                        # few bytes can follow: visit just those children, then the siblings
                        todo.append((after, last))
                        kids = children(i)
                        while bits:
                            low = bits & -bits
                            child = kids.get(low.bit_length() - 1)
                            if child is not None:
                                todo.append((child, end[child]))
                            bits ^= low
                        break
                    if (
                        sliced
                        and after - i > slice_subtree
                        and (single >> b) & 1
                        and bits & starts == starts
                    ):
                        assert piece is not None and loops is not None
                        looping = loops.get(s)
                        if looping is None:
                            # one character first (most states that do not loop fail
                            # there), then the full check
                            looping = loops[s] = step(s, probe) is s and loops_on(
                                automaton, s, piece.dfa, tuning.slice_pairs
                            )
                        if looping:
                            if last_single not in s.trans:
                                # each one-byte character leads back to `s`: cache those
                                # steps, which the skipped nodes would have made (a
                                # matcher's next steps through the text use them)
                                automaton.loop(s, single)
                            left -= _slice_subtree(
                                trie, piece, automaton, s, i, acc_lo, acc_hi, uncertain, tuning
                            )
                            last_hi = acc_hi[-1] if acc_hi else -1
                            i = after
                            continue
                i += 1
    if budget is not None:
        budget[0] = left
    return acc_lo, acc_hi, uncertain


def _slice_subtree(
    trie: TokenTrie,
    piece: Slice,
    automaton: ByteAutomaton,
    state: ByteState,
    node: int,
    acc_lo: list[int],
    acc_hi: list[int],
    uncertain: list[int],
    tuning: Tuning,
) -> int:
    """The tokens below ``node`` (not its own), whose prefix is a string of whole
    characters of ``piece``'s class after which the automaton is in ``state``, which
    loops on that class and holds no bottom marker (nor does any state above).

    Every inside token there is accepted (each character leads back to ``state``, and
    the bytes within one stay alive); the others are walked in the rest trie, from the
    rest node of the same prefix, and mapped back: their accepted sorted positions
    through ``piece.rest_positions``, their uncertain nodes to the node of the same
    prefix in ``trie`` (a rejected prefix has no inside token below it, so both nodes
    hold the same tokens).  Appends to the lists; returns the rest-trie nodes visited.
    """
    positions = piece.rest_positions
    first = trie.here_hi[node]  # the tokens below `node` follow its own (preorder)
    stop = trie.tok_hi[node]
    k = bisect_left(positions, first)
    k_stop = bisect_left(positions, stop)
    visited = 0
    accepted: set[int] = set()
    if k < k_stop:
        rest = piece.rest
        depth = trie.depth[node]
        prefix = trie.sorted_bytes[trie.tok_lo[node]][:depth]
        at_rest = rest.root_child[prefix[0]]
        for b in prefix[1:]:
            at_rest = rest.children(at_rest)[b]
        size = len(rest.byte) + 1
        budget = [size]
        got = walk_runs(
            rest, automaton, state, [at_rest + 1, rest.end[at_rest]], budget, None, tuning
        )
        assert got is not None
        visited = size - budget[0]
        for lo, hi in zip(got[0], got[1], strict=True):
            accepted.update(range(lo, hi))
        rest_depth = rest.depth
        for r in got[2]:
            full = node
            for b in rest.sorted_bytes[rest.tok_lo[r]][depth : rest_depth[r]]:
                full = trie.children(full)[b]
            uncertain.append(full)
    # the inside tokens (between the rest ones) and the rest ones accepted, in order
    at = first
    for j in range(k, k_stop + 1):
        p = positions[j] if j < k_stop else stop
        taken = j < k_stop and j in accepted
        if p > at or taken:
            high = p + 1 if taken else p
            if acc_hi and acc_hi[-1] == at:
                acc_hi[-1] = high
            else:
                acc_lo.append(at)
                acc_hi.append(high)
        at = p + 1
    return visited


def walk_all(
    trie: TokenTrie,
    automaton: ByteAutomaton,
    root: ByteState,
    budget: int | None = None,
    more: Callable[[int], int] | None = None,
    tuning: Tuning = DEFAULT_TUNING,
    bottoms: list[int] | None = None,
    piece: Slice | None = None,
    loops: dict[ByteState, bool] | None = None,
) -> WalkResult | None:
    """:func:`walk` over the whole trie, visiting only subtrees of bytes ``root`` allows.

    With ``budget``, ``None`` when the walk would visit more nodes than that, unless
    ``more(node)`` (asked when the budget runs out, then again when the nodes it granted
    run out, with the node reached) returns how many more it may visit: a long walk can
    stop for a split found elsewhere, or one that will not end soon, without starting
    again otherwise.  ``bottoms``, ``piece``, ``loops``: see :func:`walk_runs`.
    """
    left = None if budget is None else [budget]
    if root.bottom and bottoms is None:
        return walk_runs(
            trie, automaton, root, [0, len(trie.byte)], left, more, tuning, None, piece, loops
        )
    end = trie.end
    root_child = trie.root_child
    runs: list[int] = []
    bits = automaton.allowed_bits(root)
    while bits:
        low = bits & -bits
        bits ^= low
        node = root_child[low.bit_length() - 1]
        if node >= 0:
            runs.append(node)
            runs.append(end[node])
    return walk_runs(trie, automaton, root, runs, left, more, tuning, bottoms, piece, loops)


def _after_prefix(prefix: bytes) -> bytes | None:
    """The smallest byte string greater than every string starting with ``prefix``."""
    trimmed = prefix.rstrip(b"\xff")
    if not trimmed:
        return None
    return trimmed[:-1] + bytes([trimmed[-1] + 1])


def walk_sorted(automaton: ByteAutomaton, root: ByteState, strings: Sequence[bytes]) -> list[int]:
    """Indices of the byte ``strings`` (sorted ascending) that ``root`` accepts whole.

    Consecutive strings share the states of their common prefix, and the extensions of
    a rejected prefix are skipped with one binary search.
    """
    step = automaton.step
    numbering = automaton.numbering
    path: list[ByteState] = [root]
    prev = b""
    out: list[int] = []
    count = len(strings)
    j = 0
    while j < count:
        data = strings[j]
        common = 0
        limit = min(len(prev), len(data), len(path) - 1)
        while common < limit and prev[common] == data[common]:
            common += 1
        del path[common + 1 :]
        state = path[common]
        ok = True
        for k in range(common, len(data)):
            after = numbering.get(state.trans.get(data[k], UNKNOWN))
            if after is None:
                after = step(state, data[k])  # not cached, rejected, or no longer held
            if after is None:
                ok = False
                upper = _after_prefix(data[: k + 1])
                if upper is None:
                    j = count
                else:
                    j = bisect_left(strings, upper, j + 1, count)
                break
            state = after
            path.append(state)
        prev = data
        if ok:
            out.append(j)
            j += 1
    return out
