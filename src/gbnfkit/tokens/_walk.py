"""Walking the token trie from a byte state: which tokens it accepts, rejects, or leaves open."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Sequence

from gbnfkit.tokens._bytestate import ByteAutomaton, ByteState
from gbnfkit.tokens._trie import TokenTrie
from gbnfkit.tokens._tuning import DEFAULT_TUNING, Tuning

__all__ = ["WalkResult", "walk", "walk_all", "walk_runs", "walk_sorted"]

_MISSING: ByteState | None = ByteState(frozenset())  # a sentinel no cache holds

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
) -> WalkResult | None:
    """:func:`walk` over several runs of sibling subtrees, each from ``root``.

    ``runs`` is flat: ``first, stop, first, stop, ...``, each run's parent state being
    ``root`` (the runs are walked one after the other, in the order given).

    With ``bottoms``, the walk reports where ``root``'s frames can finish instead of
    what is uncertain: the nodes whose state holds the bottom marker are appended to
    ``bottoms``, nothing is uncertain, and only the bytes the frames themselves accept
    are followed (a split by top frame, ``docs/masks.md``: what the frames below accept
    after those nodes is walked separately).
    """
    byte = trie.byte
    depth = trie.depth
    end = trie.end
    here_lo = trie.here_lo
    here_hi = trie.here_hi
    children = trie.children
    step = automaton.step
    allowed_bits = automaton.allowed_bits
    missing = _MISSING
    jump_bytes = tuning.jump_bytes
    jump_subtree = tuning.jump_subtree
    report = bottoms is not None
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
                s = parent.trans.get(b, missing)
                if s is missing:
                    bits = parent.bits
                    if bits < 0:
                        bits = allowed_bits(parent)
                    s = step(parent, b) if (bits >> b) & 1 else None
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
                i += 1
    if budget is not None:
        budget[0] = left
    return acc_lo, acc_hi, uncertain


def walk_all(
    trie: TokenTrie,
    automaton: ByteAutomaton,
    root: ByteState,
    budget: int | None = None,
    more: Callable[[int], int] | None = None,
    tuning: Tuning = DEFAULT_TUNING,
    bottoms: list[int] | None = None,
) -> WalkResult | None:
    """:func:`walk` over the whole trie, visiting only subtrees of bytes ``root`` allows.

    With ``budget``, ``None`` when the walk would visit more nodes than that, unless
    ``more(node)`` (asked when the budget runs out, then again when the nodes it granted
    run out, with the node reached) returns how many more it may visit: a long walk can
    stop for a split found elsewhere, or one that will not end soon, without starting
    again otherwise.  ``bottoms``: see :func:`walk_runs`.
    """
    left = None if budget is None else [budget]
    if root.bottom and bottoms is None:
        return walk_runs(trie, automaton, root, [0, len(trie.byte)], left, more, tuning)
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
    return walk_runs(trie, automaton, root, runs, left, more, tuning, bottoms)


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
            got = state.trans.get(data[k], _MISSING)
            after = step(state, data[k]) if got is _MISSING else got
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
