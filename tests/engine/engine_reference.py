"""Random small grammars (hypothesis) and an independent reference matcher over the IR.

The reference is a memoised recursive-descent recogniser that computes, for an input
``w``, the set of end positions of every expression, plus ``PARTIAL`` when the input runs
out while a character element is still wanted. That is exactly llama.cpp's notion of
"alive": some stack has a character element on top (whatever follows it).
"""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import strategies as st

from gbnfkit.grammar._ir import Alt, CharClass, Expr, GrammarIR, Literal, Repeat, RuleRef, Seq

PARTIAL = -1
ALPHABET = "abc\u00e9\u4e2d\U0001f600"


# -- reference matcher -------------------------------------------------------------------
class Reference:
    def __init__(self, ir: GrammarIR, text: str) -> None:
        self.ir = ir
        self.text = text
        self.memo: dict[tuple[int, int], frozenset[int]] = {}
        self.rule_memo: dict[tuple[str, int], frozenset[int]] = {}
        self.active: set[tuple[str, int]] = set()

    def ends(self, e: Expr, i: int) -> frozenset[int]:
        key = (id(e), i)
        got = self.memo.get(key)
        if got is None:
            got = self.memo[key] = self._ends(e, i)
        return got

    def _seq(self, items: list[Callable[[int], frozenset[int]]], i: int) -> frozenset[int]:
        cur = {i}
        out: set[int] = set()
        for f in items:
            nxt: set[int] = set()
            for j in cur:
                for k in f(j):
                    (out if k == PARTIAL else nxt).add(k)
            cur = nxt
        return frozenset(out | cur)

    def _char(self, ok: Callable[[str], bool], i: int) -> frozenset[int]:
        if i == len(self.text):
            return frozenset((PARTIAL,))
        return frozenset((i + 1,)) if ok(self.text[i]) else frozenset()

    def _ends(self, e: Expr, i: int) -> frozenset[int]:
        if isinstance(e, Literal):
            fs = [
                (lambda j, c=c: self._char(lambda x: x == c, j)) for c in e.text
            ]
            return self._seq(fs, i)
        if isinstance(e, CharClass):
            return self._char(lambda x: e.contains(ord(x)), i)
        if isinstance(e, Seq):
            return self._seq([(lambda j, it=it: self.ends(it, j)) for it in e.items], i)
        if isinstance(e, Alt):
            out: set[int] = set()
            for o in e.options:
                out |= self.ends(o, i)
            return frozenset(out)
        if isinstance(e, RuleRef):
            key = (e.name, i)
            got = self.rule_memo.get(key)
            if got is None:
                assert key not in self.active, "left recursion in a generated grammar"
                self.active.add(key)
                got = self.rule_memo[key] = self.ends(self.ir.rules[e.name], i)
                self.active.discard(key)
            return got
        assert isinstance(e, Repeat)
        cur = {i}
        out = set()
        if e.min == 0:
            out.add(i)
        count = 0
        seen_sets: set[frozenset[int]] = set()
        while cur and (e.max is None or count < e.max):
            nxt: set[int] = set()
            for j in cur:
                for k in self.ends(e.item, j):
                    if k == PARTIAL:
                        out.add(PARTIAL)
                    else:
                        nxt.add(k)
            count += 1
            if count >= e.min:
                out |= nxt
            key_set = frozenset(nxt)
            if e.max is None and count >= e.min and key_set in seen_sets:
                break
            seen_sets.add(key_set)
            cur = nxt
        return frozenset(out)


def reference_match(ir: GrammarIR, text: str) -> tuple[str, int | None]:
    """(status, fail_at) exactly as llama.cpp's validator reports them."""
    for k in range(1, len(text) + 1):
        ends = Reference(ir, text[:k]).ends(RuleRef(ir.root), 0)
        if PARTIAL not in ends and k not in ends:
            return "reject", k - 1
    ends = Reference(ir, text).ends(RuleRef(ir.root), 0)
    return ("accept" if len(text) in ends else "prefix"), None


# -- random grammars ---------------------------------------------------------------------
def _char_classes() -> st.SearchStrategy[Expr]:
    cps = st.sampled_from([ord(c) for c in ALPHABET] + [ord("a") - 1, 0x10FFFF])
    ranges = st.lists(st.tuples(cps, cps).map(lambda t: (min(t), max(t))), max_size=3)
    return st.builds(CharClass.of, ranges, st.booleans())


def _literals() -> st.SearchStrategy[Expr]:
    return st.text(alphabet=ALPHABET, max_size=3).map(Literal)


@st.composite
def grammars(draw: st.DrawFn, max_rules: int = 4) -> GrammarIR:
    """Random non-left-recursive grammars: forward references anywhere, backward or
    self references only right after a non-empty literal."""
    n = draw(st.integers(1, max_rules))
    names = [f"r{i}" for i in range(n)]
    rules: dict[str, Expr] = {}
    for i, name in enumerate(names):
        forward = names[i + 1 :]
        atoms: list[st.SearchStrategy[Expr]] = [_literals(), _char_classes()]
        if forward:
            atoms.append(st.sampled_from(forward).map(RuleRef))
        guarded = st.tuples(
            st.text(alphabet=ALPHABET, min_size=1, max_size=2), st.sampled_from(names[: i + 1])
        ).map(lambda t: Seq((Literal(t[0]), RuleRef(t[1]))))
        atom = st.one_of(*atoms, guarded)

        def extend(children: st.SearchStrategy[Expr]) -> st.SearchStrategy[Expr]:
            bounds = st.tuples(st.integers(0, 2), st.one_of(st.none(), st.integers(0, 3)))
            return st.one_of(
                st.lists(children, max_size=3).map(lambda xs: Seq(tuple(xs))),
                st.lists(children, min_size=1, max_size=3).map(lambda xs: Alt(tuple(xs))),
                st.tuples(children, bounds).map(
                    lambda t: Repeat(
                        t[0], t[1][0], None if t[1][1] is None else max(t[1][0], t[1][1])
                    )
                ),
            )

        rules[name] = draw(st.recursive(atom, extend, max_leaves=6))
    return GrammarIR(rules, root="r0")


inputs = st.text(alphabet=ALPHABET, max_size=6)
