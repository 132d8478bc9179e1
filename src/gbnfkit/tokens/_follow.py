"""What the frames below a context can read first: the follow sets of rules
(``docs/masks.md``, "Tails the frames below never read").

:class:`CallIndex` finds where each rule starts and, with numpy, every rule's calls
and *top*, once per grammar; :func:`follow_search` finds one rule's set over the rules
reached from it through its callers.  A rule called from one place only, in tail
position, returns where its caller does, so its set *is* its caller's: the search
starts from, and climbs to, tops only (the links of a counted repetition,
``char{0,8192}``, are 8,000 such rules above a ``char{0,45}``).
"""

from __future__ import annotations

from bisect import bisect_right

import numpy as np
import numpy.typing as npt

from gbnfkit.tokens._byteprogram import CALL, END, ByteProgram
from gbnfkit.tokens._bytestate import ByteAutomaton

__all__ = ["CallIndex", "follow_search", "rule_starts"]


def rule_starts(rules: tuple[tuple[int, ...], ...]) -> tuple[list[int], list[int]]:
    """Sorted positions where rules start and the rule of each (``[]``: the rule of the
    ``i``-th start is ``i``), such that a position belongs to the rule of the last start
    at or before it.  The byte program lays its rules out one after the other, each
    rule's alternatives in order (``lower_program``): when every alternative starts
    after the one before, a rule runs from its first alternative to the next rule's;
    otherwise every alternative's start, sorted, with its rule."""
    # one pass, nothing copied: a program lowered from a grammar is in order
    starts: list[int] = []
    last = -1
    ordered = True
    for alts in rules:
        if not alts:
            ordered = False
            break
        for a in alts:
            if a < last:
                ordered = False
                break
            last = a
        if not ordered:
            break
        starts.append(alts[0])
    if ordered:
        return starts, []
    pairs = sorted((a, r) for r, alts in enumerate(rules) for a in alts)
    return [a for a, _ in pairs], [r for _, r in pairs]


class CallIndex:
    """Where a byte program's rules start and, found lazily, each rule's calls.

    Built with numpy over the whole program (no Python step per position): the call
    positions sorted by the rule called (a rule's calls become a list only when a
    search reaches the rule, kept in ``calls``), and each rule's *top*: the rule
    itself, or, when it is called from one place only, in tail position, by another
    rule, that rule's top.  Such a rule returns where its caller does and reads nothing
    after the call, so its follow set is its caller's, and so its top's."""

    __slots__ = ("_offsets", "_sites", "calls", "owners", "starts", "top")

    def __init__(self, program: ByteProgram, starts: list[int], owners: list[int]) -> None:
        # where each rule starts and the rule of each start: rule_starts(program.rules)
        self.starts, self.owners = starts, owners
        n_rules = len(program.rules)
        # the kinds are 0-2 (bytes() reads a tuple of small ints in one C loop) and only
        # the call sites' args are read: a test's arg is a 256-bit set, and converting
        # every arg to an object array cost more than the rest of the index
        kinds = np.frombuffer(bytes(program.kind), dtype=np.int8)
        sites = np.flatnonzero(kinds == CALL)
        arg = program.arg
        called = np.array([arg[s] for s in sites.tolist()], dtype=np.int64)
        order = np.argsort(called, kind="stable")
        self._sites: npt.NDArray[np.int64] = sites[order].astype(np.int64)
        counts = np.bincount(called, minlength=n_rules)
        self._offsets: list[int] = [0, *np.cumsum(counts).tolist()]
        self.calls: dict[int, list[int]] = {}
        # each rule's caller when that is its only call and in tail position
        at = np.searchsorted(np.array(self.starts, dtype=np.int64), sites, side="right") - 1
        callers = np.array(self.owners, dtype=np.int64)[at] if self.owners else at
        single = (counts[called] == 1) & (kinds[sites + 1] == END) & (at >= 0)
        parent = np.arange(n_rules, dtype=np.int64)
        parent[called[single]] = callers[single]
        # pointer jumping: each step doubles the distance climbed; every rule on the
        # path has the same set, so a cycle (never stable) may stop anywhere on it
        for _ in range(64):
            up = parent[parent]
            if np.array_equal(up, parent):
                break
            parent = up
        self.top: list[int] = parent.tolist()

    def sites(self, rule: int) -> list[int]:
        """The positions of the calls of ``rule``, in program order."""
        got = self.calls.get(rule)
        if got is None:
            lo, hi = self._offsets[rule], self._offsets[rule + 1]
            got = self.calls[rule] = self._sites[lo:hi].tolist()
        return got


def follow_search(
    rule: int,
    automaton: ByteAutomaton,
    index: CallIndex,
    follows: dict[int, int],
    budget: int,
) -> dict[int, int] | None:
    """The sets of ``rule``'s top and of the rules its search reaches (``None``: given up).

    What can be read first once a rule returns: at each call of it, the first bytes of
    what follows the call and, if that can finish, what can be read once the calling
    rule returns (nothing after the root).  One ``first_of`` per call not in tail
    position (a call in tail position reads nothing: its rule returns where the caller
    does), then each rule's set passed down to the rules it returns to only when it
    grew (a work list, callers found last first).  A rule kept in ``follows`` is not
    searched (its set is taken); the search gives up past ``budget`` calls not in tail
    position, or at a rule whose search did (``follows`` holds -1).  ``rule`` and every
    caller reached is replaced by its top (:class:`CallIndex`): the rules climbed over
    have one call each, in tail position, so they add nothing to the search."""
    kind = automaton.program.kind
    starts, owners, top = index.starts, index.owners, index.top
    rule = top[rule]
    known = follows.get(rule)
    if known is not None:  # kept: found before (or given up)
        return None if known == -1 else {rule: known}
    own: dict[int, int] = {rule: 0}
    order = [rule]  # the rules reached, in the order found
    below: dict[int, list[int]] = {}  # caller -> the rules whose set takes in its
    todo = [rule]
    while todo and budget >= 0:
        r = todo.pop()
        bits_r = 0
        for c in index.sites(r):
            if kind[c + 1] != END:
                budget -= 1
                if budget < 0:
                    break
                bits, ends = automaton.first_of(c + 1)
                bits_r |= bits
                if not ends:
                    continue
            at = bisect_right(starts, c) - 1  # the calling rule
            caller = top[owners[at] if owners else at]
            if caller != r:
                if caller not in own:
                    known = follows.get(caller)  # a rule found before is not searched
                    if known == -1:
                        budget = -1  # this search reads all that caller's did
                        break
                    own[caller] = 0 if known is None else known
                    if known is None:
                        todo.append(caller)
                    order.append(caller)
                below.setdefault(caller, []).append(r)
        own[r] = bits_r
    if budget < 0:
        return None
    while order:
        x = order.pop()
        got = below.get(x)
        if got is None:
            continue
        bits_x = own[x]
        for r in got:
            if bits_x & ~own[r]:
                own[r] |= bits_x
                order.append(r)
    return own
