"""Compile a :class:`~gbnfkit.grammar._ir.GrammarIR` into a flat :class:`Program`.

Program format (stable; the token-mask layer reads it)
------------------------------------------------------
A program is llama.cpp's flattened rule table with integer *positions*:

* ``kinds[pos]`` is one of

  - :data:`CHAR`     -- one code point inside ``ranges[pos]``;
  - :data:`CHAR_NOT` -- one code point outside ``ranges[pos]`` (negated classes, ``.``);
  - :data:`REF`      -- a reference to rule ``target[pos]``;
  - :data:`END`      -- end of an alternative (``ranges`` is ``()``, ``target`` is ``-1``).

* ``ranges[pos]`` are canonical inclusive code point ranges (sorted, merged, clipped to
  ``0 .. U+10FFFF``; ranges wholly above U+10FFFF are dropped, so a ``CHAR`` with ``()``
  never matches and a ``CHAR_NOT`` with ``()`` matches any code point).
* Every alternative of every rule is stored as its elements followed by one ``END``
  position, so "the element after ``pos`` in the same sequence" is ``pos + 1`` and the
  sequence is finished when ``kinds[pos + 1] == END``.
* ``rule_alts[rule]`` holds the start position of each alternative of ``rule`` in order;
  an empty alternative starts directly at an ``END`` position. Positions are laid out
  rule by rule in rule order, each rule's alternatives in order, with no gaps, so the
  positions in order are every alternative of every rule (the byte lowering relies on it).
* ``rule_names[rule]`` is the rule's name. Rules of the IR come first, in definition
  order (so rule id ``i`` is the ``i``-th IR rule); generated rules follow, named
  ``<rule>-g<k>`` (groups/alternations), ``<rule>-star<k>`` (unbounded repetition)
  or ``<rule>-opt<k>`` (bounded optional chains). ``pos_rule[pos]`` is the rule owning ``pos``.
* ``root`` is the rule id of the start rule; ``size`` counts non-``END`` elements.
* ``elems[pos]`` numbers the element ``(kinds[pos], ranges[pos], target[pos])``: small
  non-negative integers, equal exactly for equal elements (a grammar repeats a few
  elements many times, so a reader that transforms each element, such as the byte
  lowering, does it once per number instead of once per position).

Expansion
---------
* ``Literal("abc")`` becomes three ``CHAR`` positions; ``Literal("")`` nothing.
* A nested :class:`Alt` (or a multi-element repeated item) becomes a generated rule
  referenced by one ``REF``; equal sub-expressions share one generated rule.
* ``Repeat(S, m, n)``: ``m`` copies of ``S``'s single element, then a reference to a
  chain of ``n - m`` nested optional rules ``O(k) ::= S O(k-1) |`` with ``O(1) ::= S |``;
  ``Repeat(S, m, None)`` is ``m`` copies then ``R ::= S R |``. So the program is O(n)
  in size, never a flat ``S? S? S?`` chain.

:data:`Limits.max_repetition` and :data:`Limits.max_grammar_size` are enforced here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from gbnfkit._errors import GrammarError, LimitError
from gbnfkit._limits import Limits
from gbnfkit.engine._ranges import Ranges, normalize
from gbnfkit.grammar._ir import (
    Alt,
    CharClass,
    Expr,
    GrammarIR,
    Literal,
    Repeat,
    RuleRef,
    Seq,
    too_deep,
)

__all__ = ["CHAR", "CHAR_NOT", "END", "REF", "Program", "compile_program"]

CHAR: Final = 0
CHAR_NOT: Final = 1
REF: Final = 2
END: Final = 3
# (Final: mypyc compiles the kinds to constants, where a plain module name is a lookup in
# the module's dictionary at every use, in the token layer's loops too)

# An element before layout: (kind, ranges, target)
_Elem = tuple[int, Ranges, int]


@dataclass(frozen=True, eq=False)
class Program:
    """The flattened grammar (see the module docstring for the format)."""

    kinds: tuple[int, ...]
    ranges: tuple[Ranges, ...]
    target: tuple[int, ...]
    pos_rule: tuple[int, ...]
    rule_names: tuple[str, ...]
    rule_alts: tuple[tuple[int, ...], ...]
    root: int
    size: int
    elems: tuple[int, ...]

    def is_char(self, pos: int) -> bool:
        """Whether ``pos`` is a ``CHAR`` or ``CHAR_NOT`` element."""
        return self.kinds[pos] <= CHAR_NOT


# the id of the END element (every builder makes it first)
_END_ID: Final = 0


class _Builder:
    """Lays out the rules.  Sequences are built as lists of *element ids*: element ``i``
    is ``(kinds[i], ranges[i], targets[i])``, one id per distinct element.  An int is
    all a sequence holds (mypyc keeps a ``tuple[int, Ranges, int]`` unboxed in its
    variables, so each element stored in a list would be a new tuple, one more object
    for the garbage collector), and the memo's keys compare elements by their ids as
    they would by value."""

    def __init__(self, ir: GrammarIR, limits: Limits) -> None:
        self.ir = ir
        self.limits = limits
        self.max_size = limits.max_grammar_size
        self.names: list[str] = list(ir.rules)
        self.n_ir_rules = len(self.names)
        self.ids: dict[str, int] = {n: i for i, n in enumerate(self.names)}
        self.bodies: list[list[list[int]] | None] = [None] * len(self.names)
        self.size = 0
        self.memo: dict[tuple[object, ...], int] = {}
        self.counter = 0
        # the distinct elements, by id, and the id of each
        self.kinds: list[int] = [END]
        self.ranges: list[Ranges] = [()]
        self.targets: list[int] = [-1]
        self.elem_ids: dict[_Elem, int] = {(END, (), -1): _END_ID}
        # the element ids of each distinct code point, literal, class and reference (a
        # grammar repeats them often: keys, punctuation, whitespace)
        self.chars: dict[int, int] = {}
        self.literals: dict[str, list[int]] = {}
        self.classes: dict[tuple[Ranges, bool], int] = {}
        self.refs: dict[str, int] = {}
        self.calls: dict[int, int] = {}  # rule -> the id of its call
        self.chains: dict[int, list[int]] = {}  # element -> its optional chain (see there)

    # -- bookkeeping -------------------------------------------------------------
    def grow(self, n: int) -> None:
        self.size += n
        if self.size > self.max_size:
            self.too_large()

    def too_large(self) -> None:
        raise LimitError(
            f"grammar has more than {self.limits.max_grammar_size} elements "
            "after repetitions are expanded",
            limit="max_grammar_size",
            value=self.limits.max_grammar_size,
        )

    def new_rule(self, owner: str, tag: str) -> int:
        while True:
            self.counter += 1
            name = f"{owner}-{tag}{self.counter}"
            if name not in self.ids:
                break
        self.ids[name] = len(self.names)
        self.names.append(name)
        self.bodies.append(None)
        return self.ids[name]

    def element(self, kind: int, ranges: Ranges, target: int) -> int:
        """The id of the element ``(kind, ranges, target)``."""
        key = (kind, ranges, target)
        found = self.elem_ids.get(key)
        if found is not None:
            return found
        new = self.elem_ids[key] = len(self.kinds)
        self.kinds.append(kind)
        self.ranges.append(ranges)
        self.targets.append(target)
        return new

    def call(self, rule: int) -> int:
        """The id of the element calling ``rule`` (made here only, so kept by rule)."""
        found = self.calls.get(rule)
        if found is None:
            found = self.calls[rule] = self.element(REF, (), rule)
        return found

    # -- expressions -------------------------------------------------------------
    def alternatives(self, expr: Expr, owner: str) -> list[list[int]]:
        if type(expr) is Alt or isinstance(expr, Alt):
            out: list[list[int]] = []
            for option in expr.options:
                out.extend(self.alternatives(option, owner))
            return out
        seq: list[int] = []
        self.sequence(expr, owner, seq)
        return [seq]

    def literal(self, text: str) -> list[int]:
        elems = self.literals.get(text)
        if elems is None:
            chars = self.chars
            elems = []
            for c in map(ord, text):
                elem = chars.get(c)
                if elem is None:
                    elem = chars[c] = self.element(CHAR, ((c, c),), -1)
                elems.append(elem)
            self.literals[text] = elems
        return elems

    def char_class(self, expr: CharClass) -> int:
        key = (expr.ranges, expr.negated)
        elem = self.classes.get(key)
        if elem is None:
            kind = CHAR_NOT if expr.negated else CHAR
            elem = self.classes[key] = self.element(kind, normalize(expr.ranges), -1)
        return elem

    def ref(self, name: str, owner: str) -> int:
        elem = self.refs.get(name)
        if elem is None:
            target = self.ids.get(name)
            if target is None or target >= self.n_ir_rules:
                raise GrammarError(
                    f"undefined rule {name!r} (referenced in rule {owner!r})",
                    rules=(name,),
                )
            elem = self.refs[name] = self.call(target)
        return elem

    def sequence(self, expr: Expr, owner: str, out: list[int]) -> None:
        # exact type checks first (the IR's own classes), isinstance for subclasses
        cls = type(expr)
        if cls is Seq:
            # the items of a sequence are mostly literals, classes and references
            literals, classes, refs = self.literals, self.classes, self.refs
            max_size = self.max_size
            for item in expr.items:  # type: ignore[union-attr]
                icls = type(item)
                if icls is Literal:
                    text = item.text  # type: ignore[union-attr]
                    self.size += len(text)
                    if self.size > max_size:
                        self.too_large()
                    elems = literals.get(text)
                    out += self.literal(text) if elems is None else elems
                elif icls is RuleRef:
                    elem = refs.get(item.name)  # type: ignore[union-attr]
                    if elem is None:
                        elem = self.ref(item.name, owner)  # type: ignore[union-attr]
                    self.size += 1
                    if self.size > max_size:
                        self.too_large()
                    out.append(elem)
                elif icls is CharClass:
                    self.size += 1
                    if self.size > max_size:
                        self.too_large()
                    elem = classes.get((item.ranges, item.negated))  # type: ignore[union-attr]
                    out.append(self.char_class(item) if elem is None else elem)  # type: ignore[arg-type]
                else:
                    self.sequence(item, owner, out)
        elif cls is Literal or isinstance(expr, Literal):
            text = expr.text  # type: ignore[union-attr]
            self.grow(len(text))
            out.extend(self.literal(text))
        elif cls is CharClass or isinstance(expr, CharClass):
            self.grow(1)
            out.append(self.char_class(expr))  # type: ignore[arg-type]
        elif cls is RuleRef or isinstance(expr, RuleRef):
            elem = self.ref(expr.name, owner)  # type: ignore[union-attr]
            self.grow(1)
            out.append(elem)
        elif isinstance(expr, Seq):
            for item in expr.items:
                self.sequence(item, owner, out)
        elif isinstance(expr, Alt):
            if len(expr.options) == 1:
                self.sequence(expr.options[0], owner, out)
                return
            key: tuple[object, ...] = ("alt", expr)
            rule = self.memo.get(key)
            if rule is None:
                rule = self.new_rule(owner, "g")
                self.memo[key] = rule
                self.bodies[rule] = self.alternatives(expr, owner)
            self.grow(1)
            out.append(self.call(rule))
        elif isinstance(expr, Repeat):
            self.repeat(expr, owner, out)
        else:  # pragma: no cover - the IR union is closed
            raise GrammarError(f"unknown grammar expression {expr!r} in rule {owner!r}")

    def repeat(self, expr: Repeat, owner: str, out: list[int]) -> None:
        lo, hi = expr.min, expr.max
        limit = self.limits.max_repetition
        if lo < 0 or (hi is not None and hi < lo):
            raise GrammarError(
                f"invalid repetition bounds {{{lo},{'' if hi is None else hi}}} in rule {owner!r}",
                rules=(owner,),
            )
        for bound in (lo, hi):
            if bound is not None and bound > limit:
                raise LimitError(
                    f"repetition bound {bound} in rule {owner!r} is too large",
                    limit="max_repetition",
                    value=limit,
                )
        if hi == 0:
            return
        item: list[int] = []
        self.sequence(expr.item, owner, item)
        if not item:
            return  # repeating the empty string is the empty string
        if len(item) == 1:
            elem = item[0]
        else:
            key: tuple[object, ...] = ("item", expr.item)
            rule = self.memo.get(key)
            if rule is None:
                rule = self.new_rule(owner, "g")
                self.memo[key] = rule
                self.bodies[rule] = [item]
            elem = self.call(rule)
        self.grow(lo)
        out.extend([elem] * lo)
        if hi is None:
            key = ("star", elem)
            rule = self.memo.get(key)
            if rule is None:
                rule = self.new_rule(owner, "star")
                self.memo[key] = rule
                self.grow(2)
                self.bodies[rule] = [[elem, self.call(rule)], []]
            self.grow(1)
            out.append(self.call(rule))
        elif hi > lo:
            self.grow(1)
            out.append(self.call(self.optional_chain(elem, hi - lo, owner)))

    def optional_chain(self, elem: int, count: int, owner: str) -> int:
        """Rule ``O(count)`` with ``O(k) ::= S O(k-1) |`` and ``O(1) ::= S |``."""
        # the chain built for this element, O(1) first: a chain is only ever built on
        # from its longest rule, so those built are O(1) to O(len(chain)), and the one
        # asked for is either there or built on from the last
        chain = self.chains.get(elem)
        if chain is None:
            chain = self.chains[elem] = []
        if count <= len(chain):
            return chain[count - 1]
        for _ in range(len(chain), count):
            rule = self.new_rule(owner, "opt")
            if not chain:
                self.grow(1)
                self.bodies[rule] = [[elem], []]
            else:
                self.grow(2)
                self.bodies[rule] = [[elem, self.call(chain[-1])], []]
            chain.append(rule)
        return chain[-1]

    # -- layout ------------------------------------------------------------------
    def build(self) -> Program:
        if self.ir.root not in self.ir.rules:
            raise GrammarError(
                f"the start rule {self.ir.root!r} is not defined", rules=(self.ir.root,)
            )
        for i, name in enumerate(list(self.names[: len(self.ir.rules)])):
            self.bodies[i] = self.alternatives(self.ir.rules[name], name)
        flat: list[int] = []  # element ids
        pos_rule: list[int] = []
        rule_alts: list[tuple[int, ...]] = []
        for rule, body in enumerate(self.bodies):
            assert body is not None
            first = len(flat)
            starts: list[int] = []
            for alt in body:
                starts.append(len(flat))
                flat.extend(alt)
                flat.append(_END_ID)
            pos_rule.extend([rule] * (len(flat) - first))
            rule_alts.append(tuple(starts))
        kinds, ranges, targets = self.kinds, self.ranges, self.targets
        return Program(
            kinds=tuple([kinds[e] for e in flat]),
            ranges=tuple([ranges[e] for e in flat]),
            target=tuple([targets[e] for e in flat]),
            pos_rule=tuple(pos_rule),
            rule_names=tuple(self.names),
            rule_alts=tuple(rule_alts),
            root=self.ids[self.ir.root],
            size=self.size,
            elems=tuple(flat),
        )


def compile_program(ir: GrammarIR, limits: Limits) -> Program:
    """Flatten ``ir`` (see the module docstring); raises GrammarError or LimitError."""
    if any(too_deep(expr) for expr in ir.rules.values()):
        raise GrammarError(_TOO_DEEP)
    try:
        return _Builder(ir, limits).build()
    except RecursionError:
        raise GrammarError(_TOO_DEEP) from None


_TOO_DEEP = (
    "grammar expressions are nested too deeply to compile; "
    "split deeply nested groups into named rules"
)
