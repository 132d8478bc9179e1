"""The engine's flat program lowered to bytes (the mask engine's input).

The character engine's :class:`~gbnfkit.engine._program.Program` already has every
repetition expanded in O(n) rules and every group as a rule of its own; this module
only rewrites its code point tests as exact UTF-8 byte tests (see :mod:`._utf8`), so a
token that ends inside a multi-byte character is handled without special cases: it is
allowed iff some completion of that character is.

The byte program is a list of positions.  A position is one of

* a *byte test* (``TEST``): one byte in a 256-bit set, then go to the next position;
* a *call* (``CALL``) of a rule: push the next position, start one alternative;
* an *end* (``END``) of an alternative: pop and continue at the pushed position.

Rules are lists of alternative start positions.  Rule ``i`` of the engine's program is
byte rule ``i``; a code point test whose characters have UTF-8 encodings of different
shapes becomes a call of a *class rule* (one alternative per byte-range sequence, the
single bytes merged into one test and the sequences that differ only in their last byte
into one), added after the program's rules and shared by equal tests.  A test with a
single shape (one code point of a literal, an ASCII class) stays inline.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from gbnfkit._errors import LimitError
from gbnfkit._limits import DEFAULT_LIMITS, Limits
from gbnfkit.engine._program import CHAR_NOT, REF, Program
from gbnfkit.engine._program import END as CHAR_END
from gbnfkit.engine._ranges import Ranges, complement
from gbnfkit.tokens._utf8 import ByteSeq, utf8_sequences

__all__ = ["CALL", "END", "TEST", "ByteProgram", "lower_program", "range_bits"]

TEST: Final = 0
CALL: Final = 1
END: Final = 2


@dataclass(frozen=True)
class ByteProgram:
    """The flat program.  ``arg[p]`` is the 256-bit byte set (``TEST``) or rule index (``CALL``)."""

    kind: tuple[int, ...]
    arg: tuple[int, ...]
    rules: tuple[tuple[int, ...], ...]
    root: int


def range_bits(lo: int, hi: int) -> int:
    """The 256-bit byte set of the bytes ``lo`` to ``hi``, both included."""
    return ((1 << (hi + 1)) - 1) ^ ((1 << lo) - 1)


_Op = tuple[int, int]  # (kind, arg) of one byte-program position
_END_OPS: tuple[_Op, ...] = ((END, 0),)
# the kind of an element in :meth:`_Lowering.run` not made yet, or made of several operations
_UNMADE: Final = -1
_SEVERAL: Final = -2


def _alternatives(seqs: list[ByteSeq]) -> list[tuple[int, ...]]:
    """The byte tests of a class rule's alternatives for its multi-byte ``seqs``: one per
    distinct prefix (all but the last byte), its last test the union of theirs, in the
    order first met. A class listing code points one by one (U+0100, U+0102, ...) was a
    sequence each, so a state held a stack each (170,000 of them: 10 s to the first mask);
    classes of ranges (negated ones, whole spans) have no two sequences with one prefix."""
    lasts: dict[ByteSeq, int] = {}
    for seq in seqs:
        lo, hi = seq[-1]
        prefix = seq[:-1]
        lasts[prefix] = lasts.get(prefix, 0) | range_bits(lo, hi)
    return [(*(range_bits(lo, hi) for lo, hi in prefix), last) for prefix, last in lasts.items()]


class _Lowering:
    def __init__(self, program: Program, limits: Limits) -> None:
        self.program = program
        self.limits = limits
        self.n_rules = len(program.rule_alts)
        # each class rule: its single bytes and its alternatives' byte tests (one per
        # distinct prefix of its multi-byte sequences: _alternatives)
        self.class_seqs: list[tuple[int, list[tuple[int, ...]]]] = []
        # per distinct non-ASCII part of a class: its number of byte-range sequences and
        # their _alternatives
        self.wide: dict[Ranges, tuple[int, list[tuple[int, ...]]]] = {}

    def _lower_test(self, ranges: Ranges) -> tuple[_Op, ...]:
        """The byte tests of "one code point in ``ranges``"."""
        if not ranges or ranges[-1][1] < 0x80:  # ASCII only (ranges are sorted): one test
            bits = 0
            for lo, hi in ranges:
                bits |= range_bits(lo, hi)
            return ((TEST, bits),)
        # the single bytes (ASCII) in one bit set; the multi-byte sequences of the rest,
        # computed once per distinct rest (the classes excluding a few ASCII characters
        # that a schema's keys produce all share theirs)
        ascii_bits = 0
        wide: list[tuple[int, int]] = []
        for lo, hi in ranges:
            if lo < 0x80:
                ascii_bits |= range_bits(lo, min(hi, 0x7F))
            if hi >= 0x80:
                wide.append((max(lo, 0x80), hi))
        key = tuple(wide)
        found = self.wide.get(key)
        if found is None:
            seqs = [s for lo, hi in wide for s in utf8_sequences(lo, hi)]
            found = self.wide[key] = (len(seqs), _alternatives(seqs))
        count, alts = found
        if not count:  # (surrogates only, which UTF-8 never encodes)
            return ((TEST, ascii_bits),)
        if not ascii_bits and count == 1:  # one sequence: its tests inline
            return tuple((TEST, bits) for bits in alts[0])
        index = self.n_rules + len(self.class_seqs)
        self.class_seqs.append((ascii_bits, alts))
        return ((CALL, index),)

    def run(self) -> ByteProgram:
        # The program lays out its rules in order, each rule's alternatives in order and
        # each alternative as its elements then END (``compile_program``), so the
        # positions in order are every alternative in rule order: each position becomes
        # its byte operations, and an alternative starts where its first position's do.
        program = self.program
        kinds, ranges, targets = program.kinds, program.ranges, program.target
        elems = program.elems
        # the operations of each element, made at its first position (``elems`` numbers
        # the distinct elements): the kind and argument of its one operation, or
        # _SEVERAL and its operations (a multi-byte character of a literal)
        elem_kind: list[int] = []
        elem_arg: list[int] = []
        several: dict[int, tuple[_Op, ...]] = {}
        out_kind: list[int] = []
        out_arg: list[int] = []
        # each position's first operation, kept from the first element of several
        # operations on (until then position ``pos`` is operation ``pos``)
        where: list[int] = []
        for pos in range(len(kinds)):
            e = elems[pos]
            if e >= len(elem_kind):  # (numbers grow about as positions do)
                more = max(e + 1, 2 * len(elem_kind)) - len(elem_kind)
                elem_kind.extend([_UNMADE] * more)
                elem_arg.extend([0] * more)
            k = elem_kind[e]
            if k == _UNMADE:
                k = kinds[pos]
                if k == REF:
                    ops: tuple[_Op, ...] = ((CALL, targets[pos]),)
                elif k == CHAR_END:
                    ops = _END_OPS
                else:
                    r = ranges[pos]
                    ops = self._lower_test(complement(r) if k == CHAR_NOT else r)
                if len(ops) == 1:
                    k, elem_arg[e] = ops[0]
                else:
                    k = _SEVERAL
                    if not several:
                        where = list(range(pos))
                    several[e] = ops
                elem_kind[e] = k
            if several:
                where.append(len(out_kind))
            if k == _SEVERAL:
                for op_kind, op_arg in several[e]:
                    out_kind.append(op_kind)
                    out_arg.append(op_arg)
            else:
                out_kind.append(k)
                out_arg.append(elem_arg[e])
        if not several:  # one operation per position
            rules = list(program.rule_alts)
        else:
            rules = [tuple([where[a] for a in starts]) for starts in program.rule_alts]
        for single, alts in self.class_seqs:
            # single bytes merge into one test; the multi-byte sequences are _alternatives
            starts: list[int] = []
            if single:
                starts.append(len(out_kind))
                out_kind += (TEST, END)
                out_arg += (single, 0)
            for args in alts:
                starts.append(len(out_kind))
                out_kind.extend([TEST] * len(args))
                out_arg.extend(args)
                out_kind.append(END)
                out_arg.append(0)
            rules.append(tuple(starts))
        if len(out_kind) > self.limits.max_grammar_size:
            raise LimitError(
                "the grammar is too large once lowered to bytes",
                limit="max_grammar_size",
                value=self.limits.max_grammar_size,
            )
        return ByteProgram(tuple(out_kind), tuple(out_arg), tuple(rules), program.root)


def lower_program(program: Program, limits: Limits = DEFAULT_LIMITS) -> ByteProgram:
    """Lower the engine's ``program`` to a byte program."""
    return _Lowering(program, limits).run()
