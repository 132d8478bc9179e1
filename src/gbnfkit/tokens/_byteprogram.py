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
single bytes merged into one test), added after the program's rules and shared by equal
tests.  A test with a single shape (one code point of a literal, an ASCII class) stays
inline.
"""

from __future__ import annotations

from dataclasses import dataclass

from gbnfkit._errors import LimitError
from gbnfkit._limits import DEFAULT_LIMITS, Limits
from gbnfkit.engine._program import CHAR_NOT, REF, Program
from gbnfkit.engine._program import END as CHAR_END
from gbnfkit.engine._ranges import Ranges, complement
from gbnfkit.tokens._utf8 import ByteSeq, utf8_sequences

__all__ = ["CALL", "END", "TEST", "ByteProgram", "lower_program"]

TEST = 0
CALL = 1
END = 2


@dataclass(frozen=True)
class ByteProgram:
    """The flat program.  ``arg[p]`` is the 256-bit byte set (``TEST``) or rule index (``CALL``)."""

    kind: tuple[int, ...]
    arg: tuple[int, ...]
    rules: tuple[tuple[int, ...], ...]
    root: int


def _range_bits(lo: int, hi: int) -> int:
    return ((1 << (hi + 1)) - 1) ^ ((1 << lo) - 1)


class _Lowering:
    def __init__(self, program: Program, limits: Limits) -> None:
        self.program = program
        self.limits = limits
        self.kind: list[int] = []
        self.arg: list[int] = []
        self.rules: list[list[int]] = [[] for _ in program.rule_alts]
        self.class_rules: dict[Ranges, int] = {}
        self.class_seqs: list[tuple[int, list[ByteSeq]]] = []
        # the lowering of each distinct test: (TEST, bits) pairs or one (CALL, rule)
        self.tests: dict[Ranges, tuple[tuple[int, int], ...]] = {}

    def _emit(self, kind: int, arg: int) -> None:
        self.kind.append(kind)
        self.arg.append(arg)
        if len(self.kind) > self.limits.max_grammar_size:
            raise LimitError(
                "the grammar is too large once lowered to bytes",
                limit="max_grammar_size",
                value=self.limits.max_grammar_size,
            )

    def _test(self, ranges: Ranges) -> None:
        """Emit the byte tests of "one code point in ``ranges``"."""
        code = self.tests.get(ranges)
        if code is None:
            code = self.tests[ranges] = self._lower_test(ranges)
        for kind, arg in code:
            self._emit(kind, arg)

    def _lower_test(self, ranges: Ranges) -> tuple[tuple[int, int], ...]:
        if not ranges or ranges[-1][1] < 0x80:  # ASCII only (ranges are sorted): one test
            bits = 0
            for lo, hi in ranges:
                bits |= _range_bits(lo, hi)
            return ((TEST, bits),)
        seqs = [s for lo, hi in ranges for s in utf8_sequences(lo, hi)]
        if all(len(s) == 1 for s in seqs):
            bits = 0
            for s in seqs:
                bits |= _range_bits(*s[0])
            return ((TEST, bits),)
        if len(seqs) == 1:
            return tuple((TEST, _range_bits(lo, hi)) for lo, hi in seqs[0])
        index = self.class_rules[ranges] = len(self.rules)
        self.rules.append([])
        self.class_seqs.append((index, seqs))
        return ((CALL, index),)

    def run(self) -> ByteProgram:
        program = self.program
        kinds = program.kinds
        for rule, starts in enumerate(program.rule_alts):
            for pos in starts:
                self.rules[rule].append(len(self.kind))
                while kinds[pos] != CHAR_END:
                    if kinds[pos] == REF:
                        self._emit(CALL, program.target[pos])
                    elif kinds[pos] == CHAR_NOT:
                        self._test(complement(program.ranges[pos]))
                    else:
                        self._test(program.ranges[pos])
                    pos += 1
                self._emit(END, 0)
        for index, seqs in self.class_seqs:
            # single bytes merge into one test; longer sequences are one alternative each
            single = 0
            for s in seqs:
                if len(s) == 1:
                    single |= _range_bits(*s[0])
            if single:
                self.rules[index].append(len(self.kind))
                self._emit(TEST, single)
                self._emit(END, 0)
            for s in seqs:
                if len(s) > 1:
                    self.rules[index].append(len(self.kind))
                    for lo, hi in s:
                        self._emit(TEST, _range_bits(lo, hi))
                    self._emit(END, 0)
        return ByteProgram(
            tuple(self.kind), tuple(self.arg), tuple(tuple(r) for r in self.rules), program.root
        )


def lower_program(program: Program, limits: Limits = DEFAULT_LIMITS) -> ByteProgram:
    """Lower the engine's ``program`` to a byte program."""
    return _Lowering(program, limits).run()
