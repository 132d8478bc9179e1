"""Counted repetitions' contexts taken to one key while their forms are equal.

A string of ``maxLength`` 255 is written ``"\\"" char{0,255} "\\""``, which the byte
program holds as a chain of *links*, one rule per remaining count::

    O(k) ::= char O(k-1) | ""

and ``item{m,n}``'s ``m`` fixed copies (a ``minLength``) as ``m`` calls of the item in
a row.  Inside such a string every character is a new count, so the string body's
shallower context (the link's frame, or the row's, over the character's first
positions) is a new key at every character, and its split was found by computing its
canonical form (``docs/masks.md``, "Canonical sharing"), equal from count to count
while the repetition's end is out of the longest token's reach: about 700 positions to
number on DeepSeek's vocabulary, most of such a mask's time.  :meth:`Chains.normal`
takes a key whose frames are in one link with ``U`` links of its shape from it down
(``U`` the longest token's length plus 3), or at one position followed by more than
``U`` calls of the item in a row, and otherwise only in rules the item reaches, to the
same key in the chain's *representative* link (the one with exactly ``U`` uniform
links from it down), or ``U`` calls before the row's end; so every count down to about
``U`` characters from the end finds the split of the first.

*Invariant:* the normal key has the canonical form of the key.  A form numbers the
positions a walk from the frames reaches within the longest token's length ``L`` (a
lower bound of the bytes consumed, +1 per byte test and + the called rule's least
length after a call), and describes them.  The item consumes a byte at least
(checked), so a walk from a link's frames reads at most ``L + 1`` links (or calls of a
row) after it, and the call after those is past ``L``; with ``U`` of one shape after
both keys' frames, both walks read the same shapes in the same order, the same item's
rules, whose reach holds no link and not the row's rule (checked: else the item would
meet the repetition again at other counts), and the frames below as the key keeps
them: so both number and describe the same program, and equal forms split alike.
tests/tokens/test_chains.py compares the form of every key taken to another with the
key's own, and the masks with the reference, along long ``maxLength`` and
``minLength`` strings, strings sharing links and repetitions whose item reaches them.
"""

from __future__ import annotations

from collections.abc import Callable

from gbnfkit.tokens._byteprogram import CALL, END, ByteProgram
from gbnfkit.tokens._bytestate import Stack

__all__ = ["Chains"]


class Chains:
    """The links of a byte program's counted repetitions and their representatives
    (memoised per rule: a few ints per rule of the program at most)."""

    __slots__ = (
        "_item_limit", "_items", "_program", "_rep", "_runs", "_uniform", "_uniforms",
    )

    def __init__(
        self,
        program: ByteProgram,
        reach: int,
        item_limit: int,
    ) -> None:
        self._program = program
        self._uniform = reach + 3  # the links of one shape a representative has from it down
        self._item_limit = item_limit  # the most rules an item may reach (Tuning)
        # per rule: the links of its shape from it down (0: no link; a lower bound)
        self._uniforms: dict[int, int] = {}
        # per link: its representative, -1 if it has fewer than `_uniform` links down
        self._rep: dict[int, int] = {}
        # per item: the rules its reach holds, empty if that holds a link or too many
        self._items: dict[int, frozenset[int]] = {}
        # per position: the calls of one rule from it on, in a row (0: not a call)
        self._runs: dict[int, int] = {}

    def link(self, rule: int) -> tuple[int, int]:
        """``(item, next)`` if ``rule`` is a link ``item next | ""`` laid out as the
        engine writes it (one alternative calling the item, then the next link, then
        ending; the other ending at once), else ``(-1, -1)``."""
        program = self._program
        alts = program.rules[rule]
        if len(alts) != 2:
            return -1, -1
        a, b = alts
        kind = program.kind
        if b != a + 3 or kind[a] != CALL or kind[a + 1] != CALL:
            return -1, -1
        if kind[a + 2] != END or kind[b] != END:
            return -1, -1
        arg = program.arg
        item, after = arg[a], arg[a + 1]
        if after == rule or item == rule:
            return -1, -1
        return item, after

    def uniform(self, rule: int) -> int:
        """The links from ``rule`` down its chain that call its item (``rule`` itself
        counted; 0 if it is no link).  A lower bound where the chain loops."""
        got = self._uniforms.get(rule)
        if got is not None:
            return got
        item, after = self.link(rule)
        if item < 0:
            self._uniforms[rule] = 0
            return 0
        path = [rule]
        on_path = {rule}
        base = 0
        while True:
            known = self._uniforms.get(after)
            if known is not None:
                base = known if known and self.link(after)[0] == item else 0
                break
            nxt_item, nxt = self.link(after)
            if nxt_item != item or after in on_path:
                base = 0  # the chain ends (or loops: counted as ending)
                if nxt_item < 0:
                    self._uniforms[after] = 0
                break
            path.append(after)
            on_path.add(after)
            after = nxt
        for r in reversed(path):
            base += 1
            self._uniforms[r] = base
        return self._uniforms[rule]

    def representative(self, rule: int) -> int:
        """The link ``uniform(rule) - U`` links down from the link ``rule`` (the one
        with exactly ``U`` uniform links from it down), ``-1`` if it has fewer."""
        got = self._rep.get(rule)
        if got is not None:
            return got
        path: list[int] = []
        r = rule
        while True:
            known = self._rep.get(r)
            if known is not None:
                rep = known
                break
            u = self.uniform(r)
            if u < self._uniform:
                rep = -1
                break
            path.append(r)
            if u == self._uniform:
                rep = r
                break
            r = self.link(r)[1]
        for p in path:
            self._rep[p] = rep
        if not path:
            self._rep[rule] = rep
        return rep

    def _item_rules(self, item: int, least: Callable[[int], int]) -> frozenset[int]:
        """The rules ``item`` reaches (itself included), if it consumes a byte at
        least and none of them is a link, and they are at most ``Tuning.chain_item_rules``; else
        empty."""
        got = self._items.get(item)
        if got is not None:
            return got
        program = self._program
        kind, arg, rules = program.kind, program.arg, program.rules
        found = {item}
        todo = [item]
        ok = least(item) >= 1
        while todo and ok:
            r = todo.pop()
            if self.link(r)[0] >= 0:
                ok = False
                break
            for a in rules[r]:
                p = a
                while kind[p] != END:
                    if kind[p] == CALL and arg[p] not in found:
                        found.add(arg[p])
                        todo.append(arg[p])
                        if len(found) > self._item_limit:
                            ok = False
                    p += 1
        out = frozenset(found) if ok else frozenset()
        self._items[item] = out
        return out

    def run(self, position: int) -> int:
        """How many calls of one rule follow each other from ``position`` on (the
        engine writes ``item{m,n}``'s ``m`` fixed copies as ``m`` calls in a row)."""
        got = self._runs.get(position)
        if got is not None:
            return got
        program = self._program
        kind, arg = program.kind, program.arg
        if kind[position] != CALL:
            self._runs[position] = 0
            return 0
        item = arg[position]
        end = position
        while kind[end] == CALL and arg[end] == item:
            end += 1
        for p in range(position, end):
            self._runs[p] = end - p
        return end - position

    def normal(
        self, key: Stack, least: Callable[[int], int], rule_at: Callable[[int], int]
    ) -> Stack:
        """``key`` moved down its repetition, if its frames (but markers) are in one
        link with ``U`` uniform links from it down, or at one position followed by
        more than ``U`` calls of the item in a row, and otherwise in rules the item
        reaches: then in the representative link, or ``U`` calls before the row's
        end; else ``key`` itself (``docs/masks.md``, "Counted repetitions, one key per
        count").  ``least(rule)``: a lower bound of the bytes ``rule``'s strings hold;
        ``rule_at(position)``: the rule whose alternatives hold ``position`` (the
        grammar's, passed at each call and not kept: a kept bound method would make a
        reference cycle through the grammar, which then outlives its last reference
        until a full collection)."""
        # most keys have no frame that calls a long chain's next link or is followed
        # by a row of calls: no rule looked up for them
        kind, arg = self._program.kind, self._program.arg
        for p in key:
            if p >= 0 and kind[p] == CALL and (
                self.uniform(arg[p]) >= self._uniform - 1
                or (kind[p + 1] == CALL and arg[p + 1] == arg[p] and self.run(p) > self._uniform)
            ):
                break
        else:
            return key
        link = -1
        row = -1  # the position of a frame followed by a row of calls
        others: list[int] = []
        for p in key:
            if p < 0:
                continue
            r = rule_at(p)
            if r < 0:
                return key
            if r == link or p == row:
                continue
            if self.uniform(r):
                if link >= 0 or row >= 0:
                    return key  # frames in two repetitions
                link = r
            elif self.run(p) > self._uniform:
                if link >= 0 or row >= 0:
                    return key
                row = p
            else:
                others.append(r)
        if row >= 0:
            item = self._program.arg[row]
            reach = self._item_rules(item, least)
            if not reach or rule_at(row) in reach or any(r not in reach for r in others):
                return key
            to = row + self.run(row) - self._uniform
            return tuple(to if p == row else p for p in key)
        if link < 0:
            return key
        rep = self.representative(link)
        if rep < 0 or rep == link:
            return key
        reach = self._item_rules(self.link(link)[0], least)
        if not reach or any(r not in reach for r in others):
            return key
        rules = self._program.rules
        shift = rules[rep][0] - rules[link][0]
        return tuple(
            p + shift if p >= 0 and rule_at(p) == link else p for p in key
        )
