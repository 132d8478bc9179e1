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


# the id of the END element (every builder makes it first; no other element has it)
_END_ID: Final = 0


class _Done:
    """What a repetition built once gives wherever an equal one occurs again: its
    element ids and the size it adds there (see ``_Builder.created``)."""

    __slots__ = ("elems", "growth")

    def __init__(self, elems: list[int], growth: int) -> None:
        self.elems = elems
        self.growth = growth


class _Builder:
    """Lays out the rules.  Sequences are built as lists of *element ids*: element ``i``
    is ``(kinds[i], ranges[i], targets[i])``.  An int is all a sequence holds (mypyc
    keeps a ``tuple[int, Ranges, int]`` unboxed in its variables, so each element stored
    in a list would be a new tuple, one more object for the garbage collector).  Equal
    elements have one id (what is built on an element, a repetition's rules, is shared).
    A rule's body is one list, each alternative followed by the END element.  The IR
    nests at most :data:`MAX_NESTING` levels (see :func:`compile_program`): the
    recursion over it, and the hashes and equalities of its sub-trees in the memos, are
    bounded."""

    def __init__(self, ir: GrammarIR, limits: Limits) -> None:
        self.ir = ir
        self.limits = limits
        self.max_size = limits.max_grammar_size
        self.names: list[str] = list(ir.rules)
        self.n_ir_rules = len(self.names)
        self.ids: dict[str, int] = {n: i for i, n in enumerate(self.names)}
        self.bodies: list[list[int] | None] = [None] * len(self.names)
        self.size = 0
        # of size, what building new rules added (a group's body, a repetition's
        # rules): a repetition met again adds what it added less that
        self.created = 0
        self.counter = 0
        # the elements, by id
        self.kinds: list[int] = [END]
        self.ranges: list[Ranges] = [()]
        self.targets: list[int] = [-1]
        # the element ids of each distinct code point, literal, class and reference (a
        # grammar repeats them often: keys, punctuation, whitespace)
        self.chars: dict[int, int] = {}
        # the element of each (kind, ranges) a code point or class gave: equal elements
        # are one, so that what is built on an element (a repetition's rules) is shared
        self.char_elems: dict[tuple[int, Ranges], int] = {}
        self.literals: dict[str, list[int]] = {}
        self.classes: dict[CharClass, int] = {}
        self.refs: dict[str, int] = {}
        self.calls: list[int] = [-1] * len(self.names)  # rule -> the id of its call
        self.chains: dict[int, list[int]] = {}  # element -> its optional chain (see there)
        self.groups: dict[Alt, int] = {}  # a group's rule by value
        self.repeats: dict[Repeat, _Done] = {}  # a repetition's elements by value
        self.items: dict[Expr, int] = {}  # a repeated sequence's rule by value
        self.stars: dict[int, int] = {}  # element -> the rule repeating it without bound

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
        rule = self.ids[name] = len(self.names)
        self.names.append(name)
        self.bodies.append(None)
        self.calls.append(-1)
        return rule

    def element(self, kind: int, ranges: Ranges, target: int) -> int:
        """A new element ``(kind, ranges, target)`` (equal to none made before: see
        char_element and call)."""
        new = len(self.kinds)
        self.kinds.append(kind)
        self.ranges.append(ranges)
        self.targets.append(target)
        return new

    def char_element(self, kind: int, ranges: Ranges) -> int:
        """The id of the element ``(kind, ranges, -1)`` (CHAR or CHAR_NOT)."""
        key = (kind, ranges)
        found = self.char_elems.get(key)
        if found is None:
            found = self.char_elems[key] = self.element(kind, ranges, -1)
        return found

    def call(self, rule: int) -> int:
        """The id of the element calling ``rule`` (made here only, so kept by rule)."""
        found = self.calls[rule]
        if found < 0:
            found = self.calls[rule] = self.element(REF, (), rule)
        return found

    # -- expressions -------------------------------------------------------------
    def alternatives(self, expr: Expr, owner: str, out: list[int]) -> None:
        """Append the alternatives of ``expr`` to the body ``out``."""
        if type(expr) is Alt or isinstance(expr, Alt):
            for option in expr.options:
                self.alternatives(option, owner, out)
            return
        self.sequence(expr, owner, out)
        out.append(_END_ID)

    def literal(self, text: str) -> list[int]:
        elems = self.literals.get(text)
        if elems is None:
            chars = self.chars
            elems = []
            for c in map(ord, text):
                elem = chars.get(c)
                if elem is None:
                    elem = chars[c] = self.char_element(CHAR, ((c, c),))
                elems.append(elem)
            self.literals[text] = elems
        return elems

    def char_class(self, expr: CharClass) -> int:
        elem = self.classes.get(expr)
        if elem is None:
            kind = CHAR_NOT if expr.negated else CHAR
            elem = self.classes[expr] = self.char_element(kind, normalize(expr.ranges))
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
        """Append the elements of ``expr`` to ``out``."""
        # exact type checks first (the IR's own classes), isinstance for subclasses
        cls = type(expr)
        if cls is Seq:
            # the items of a sequence are mostly literals, classes and references
            items = expr.items  # type: ignore[union-attr]
            literals, classes, refs = self.literals, self.classes, self.refs
            max_size = self.max_size
            for item in items:
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
                    elem = classes.get(item)  # type: ignore[arg-type]
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
            rule = self.groups.get(expr, -1)
            if rule < 0:
                rule = self.groups[expr] = self.new_rule(owner, "g")
                size = self.size
                body: list[int] = []
                self.alternatives(expr, owner, body)
                self.bodies[rule] = body
                self.created += self.size - size
            self.grow(1)
            out.append(self.call(rule))
        elif isinstance(expr, Repeat):
            # an equal repetition met again gives the same elements (what it is built
            # from is kept by value: its item's rule, star rule, optional chain)
            done = self.repeats.get(expr)
            if done is None:
                start, size, created = len(out), self.size, self.created
                self.repeat(expr, owner, out)
                growth = self.size - size - (self.created - created)
                self.repeats[expr] = _Done(out[start:], growth)
            else:
                self.grow(done.growth)
                out += done.elems
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
            rule = self.items.get(expr.item, -1)
            if rule < 0:
                rule = self.items[expr.item] = self.new_rule(owner, "g")
                item.append(_END_ID)
                self.bodies[rule] = item
            elem = self.call(rule)
        self.grow(lo)
        out.extend([elem] * lo)
        if hi is None:
            rule = self.stars.get(elem, -1)
            if rule < 0:
                rule = self.stars[elem] = self.new_rule(owner, "star")
                self.grow(2)
                self.created += 2
                self.bodies[rule] = [elem, self.call(rule), _END_ID, _END_ID]
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
                self.created += 1
                self.bodies[rule] = [elem, _END_ID, _END_ID]
            else:
                self.grow(2)
                self.created += 2
                self.bodies[rule] = [elem, self.call(chain[-1]), _END_ID, _END_ID]
            chain.append(rule)
        return chain[-1]

    # -- layout ------------------------------------------------------------------
    def build(self) -> Program:
        if self.ir.root not in self.ir.rules:
            raise GrammarError(
                f"the start rule {self.ir.root!r} is not defined", rules=(self.ir.root,)
            )
        rules = self.ir.rules
        for i in range(self.n_ir_rules):
            name = self.names[i]
            body: list[int] = []
            self.alternatives(rules[name], name, body)
            self.bodies[i] = body
        flat: list[int] = []  # element ids
        pos_rule: list[int] = []
        rule_alts: list[tuple[int, ...]] = []
        for rule, built in enumerate(self.bodies):
            assert built is not None
            first = len(flat)
            n = len(built)
            if n:
                # an alternative starts at the body's start and after each END but the last
                starts = [first]
                for i in range(n - 1):
                    if built[i] == _END_ID:
                        starts.append(first + i + 1)
                rule_alts.append(tuple(starts))
                flat.extend(built)
                pos_rule.extend([rule] * n)
            else:
                rule_alts.append(())
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


def compile_program(ir: GrammarIR, limits: Limits, *, nesting_checked: bool = False) -> Program:
    """Flatten ``ir`` (see the module docstring); raises GrammarError or LimitError.

    ``ir`` must nest at most :data:`MAX_NESTING` levels (the builder recurses over it;
    compiled, without a RecursionError): it is measured first unless ``nesting_checked``
    says that it was (:func:`gbnfkit.grammar._checks.check_grammar`), or that ``ir`` is
    the parse of GBNF text (:func:`gbnfkit.grammar.parse_gbnf` refuses more than
    ``_MAX_DEPTH`` levels, far fewer)."""
    if not nesting_checked and any(too_deep(expr) for expr in ir.rules.values()):
        raise GrammarError(_TOO_DEEP)
    try:
        return _Builder(ir, limits).build()
    except RecursionError:
        raise GrammarError(_TOO_DEEP) from None


_TOO_DEEP = (
    "grammar expressions are nested too deeply to compile; "
    "split deeply nested groups into named rules"
)
