"""A grammar IR lowered to a flat program over bytes (the mask engine's input).

Every code point test becomes exact UTF-8 byte tests (see :mod:`._utf8`), so a
token that ends inside a multi-byte character is handled without special cases:
it is allowed iff some completion of that character is.

The program is a list of positions.  A position is one of

* a *byte test* (``TEST``): one byte in a 256-bit set, then go to the next position;
* a *call* (``CALL``) of a rule: push the next position, start one alternative;
* an *end* (``END``) of an alternative: pop and continue at the pushed position.

Rules are lists of alternative start positions.  Repetitions are expanded in
O(max) rules (``x{2,4}`` is ``x x o2`` with ``o2 ::= x o1 |``, ``o1 ::= x |``).
"""

from __future__ import annotations

from dataclasses import dataclass

from gbnfkit._errors import LimitError
from gbnfkit._limits import DEFAULT_LIMITS, Limits
from gbnfkit.grammar._ir import (
    MAX_CODE_POINT,
    Alt,
    CharClass,
    Expr,
    GrammarIR,
    Literal,
    Repeat,
    RuleRef,
    Seq,
)
from gbnfkit.tokens._utf8 import utf8_sequences

__all__ = ["CALL", "END", "TEST", "ByteProgram", "lower_grammar"]

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
    def __init__(self, ir: GrammarIR, limits: Limits) -> None:
        self.ir = ir
        self.limits = limits
        self.kind: list[int] = []
        self.arg: list[int] = []
        self.rules: list[list[int]] = []
        self.rule_index: dict[str, int] = {}
        self.class_rules: dict[CharClass, int] = {}
        self.pending: list[tuple[int, list[Expr]]] = []

    # -- positions -------------------------------------------------------
    def _emit(self, kind: int, arg: int) -> None:
        self.kind.append(kind)
        self.arg.append(arg)
        if len(self.kind) > self.limits.max_grammar_size:
            raise LimitError(
                "the grammar is too large once lowered to bytes",
                limit="max_grammar_size",
                value=self.limits.max_grammar_size,
            )

    def _new_rule(self, alternatives: list[Expr]) -> int:
        """A rule whose alternatives are emitted later (keeps alternatives contiguous)."""
        index = len(self.rules)
        self.rules.append([])
        self.pending.append((index, alternatives))
        return index

    def _named(self, name: str) -> int:
        index = self.rule_index.get(name)
        if index is None:
            expr = self.ir.rules[name]
            options: list[Expr] = list(expr.options) if isinstance(expr, Alt) else [expr]
            index = self._new_rule(options)
            self.rule_index[name] = index
        return index

    def _class_rule(self, cls: CharClass) -> int | None:
        """Rule index for a multi-byte class, or ``None`` after emitting an inline test."""
        ranges = _class_ranges(cls)
        seqs: list[tuple[tuple[int, int], ...]] = []
        for lo, hi in ranges:
            seqs.extend(utf8_sequences(lo, hi))
        if all(len(s) == 1 for s in seqs):
            bits = 0
            for s in seqs:
                bits |= _range_bits(s[0][0], s[0][1])
            self._emit(TEST, bits)
            return None
        index = self.class_rules.get(cls)
        if index is None:
            index = len(self.rules)
            self.rules.append([])
            self.class_rules[cls] = index
            # single bytes merge into one test; longer sequences are one alternative each
            single = 0
            for s in seqs:
                if len(s) == 1:
                    single |= _range_bits(s[0][0], s[0][1])
            alternatives: list[Expr] = []
            if single:
                alternatives.append(_ByteTests((single,)))  # type: ignore[arg-type]
            for s in seqs:
                if len(s) > 1:
                    tests = tuple(_range_bits(lo, hi) for lo, hi in s)
                    alternatives.append(_ByteTests(tests))  # type: ignore[arg-type]
            self.pending.append((index, alternatives))
        return index

    # -- expressions -------------------------------------------------------
    def _expr(self, expr: Expr) -> None:
        if isinstance(expr, Literal):
            for byte in expr.text.encode("utf-8", "surrogatepass"):
                self._emit(TEST, 1 << byte)
        elif isinstance(expr, CharClass):
            index = self._class_rule(expr)
            if index is not None:
                self._emit(CALL, index)
        elif isinstance(expr, RuleRef):
            self._emit(CALL, self._named(expr.name))
        elif isinstance(expr, Seq):
            for item in expr.items:
                self._expr(item)
        elif isinstance(expr, Alt):
            self._emit(CALL, self._new_rule(list(expr.options)))
        else:
            self._repeat(expr)

    def _repeat(self, rep: Repeat) -> None:
        item = rep.item
        if not isinstance(item, (RuleRef, Literal, CharClass)):
            item = RuleRef(self._anon(item))
        for _ in range(rep.min):
            self._expr(item)
        if rep.max is None:
            loop = len(self.rules)
            self.rules.append([])
            self.pending.append((loop, [_seq(item, _LoopRef(loop)), Seq(())]))
            self._emit(CALL, loop)
            return
        previous: int | None = None
        for _ in range(rep.max - rep.min):
            index = len(self.rules)
            self.rules.append([])
            first: Expr = item if previous is None else _seq(item, _LoopRef(previous))
            self.pending.append((index, [first, Seq(())]))
            previous = index
        if previous is not None:
            self._emit(CALL, previous)

    def _anon(self, expr: Expr) -> str:
        name = f"\x00anon{len(self.rule_index)}"
        while name in self.rule_index or name in self.ir.rules:
            name += "_"
        index = self._new_rule(list(expr.options) if isinstance(expr, Alt) else [expr])
        self.rule_index[name] = index
        self._anon_names[name] = index
        return name

    _anon_names: dict[str, int]

    def run(self) -> ByteProgram:
        self._anon_names = {}
        root = self._named(self.ir.root)
        while self.pending:
            index, alternatives = self.pending.pop()
            starts: list[int] = []
            for alt in alternatives:
                starts.append(len(self.kind))
                self._expr_or_loop(alt)
                self._emit(END, 0)
            self.rules[index] = starts
        return ByteProgram(
            tuple(self.kind), tuple(self.arg), tuple(tuple(r) for r in self.rules), root
        )

    def _expr_or_loop(self, expr: Expr) -> None:
        if isinstance(expr, Seq):
            for item in expr.items:
                self._expr_or_loop(item)
        elif isinstance(expr, _LoopRef):
            self._emit(CALL, expr.index)
        elif isinstance(expr, _ByteTests):
            for bits in expr.tests:
                self._emit(TEST, bits)
        elif isinstance(expr, RuleRef) and expr.name in self._anon_names:
            self._emit(CALL, self._anon_names[expr.name])
        else:
            self._expr(expr)


@dataclass(frozen=True)
class _LoopRef:
    index: int


@dataclass(frozen=True)
class _ByteTests:
    tests: tuple[int, ...]


def _seq(item: Expr, loop: _LoopRef) -> Expr:
    """``item`` then a call of the loop rule (a Seq holding an internal node)."""
    return Seq((item, loop))  # type: ignore[arg-type]


def _class_ranges(cls: CharClass) -> list[tuple[int, int]]:
    spans = sorted((lo, min(hi, MAX_CODE_POINT)) for lo, hi in cls.ranges if lo <= MAX_CODE_POINT)
    if not cls.negated:
        return [(lo, hi) for lo, hi in spans if lo <= hi]
    out: list[tuple[int, int]] = []
    nxt = 0
    for lo, hi in spans:
        if lo > nxt:
            out.append((nxt, lo - 1))
        nxt = max(nxt, hi + 1)
    if nxt <= MAX_CODE_POINT:
        out.append((nxt, MAX_CODE_POINT))
    return out


def lower_grammar(ir: GrammarIR, limits: Limits = DEFAULT_LIMITS) -> ByteProgram:
    """Lower ``ir`` (already checked: rules defined, root present) to a byte program."""
    return _Lowering(ir, limits).run()
