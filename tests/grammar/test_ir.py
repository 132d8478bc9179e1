"""The IR node classes: frozen, hashable, comparable values (plain classes with
``__slots__``, so that a compiled build makes them in C; once frozen dataclasses, whose
equality, hashes and ``repr`` they keep)."""

from __future__ import annotations

import copy
import pickle

import pytest
from _ir_exprs import ir_exprs
from hypothesis import given, settings
from hypothesis import strategies as st

from gbnfkit.grammar import Alt, CharClass, Literal, Repeat, RuleRef, Seq
from gbnfkit.grammar._ir import ANY, merge_ranges

_LEAVES = st.one_of(
    st.builds(Literal, st.text(max_size=3)),
    st.builds(RuleRef, st.sampled_from(["a", "b-c"])),
    st.builds(
        CharClass,
        st.lists(st.tuples(st.integers(0, 99), st.integers(0, 99)), max_size=3).map(tuple),
        st.booleans(),
    ),
)
_EXPRS = ir_exprs(
    _LEAVES, st.integers(0, 3), lambda m: st.one_of(st.none(), st.integers(3, 5)), 8
)


def _fields(expr: object) -> tuple[object, ...]:
    """The fields the frozen dataclasses compared and hashed, in their order."""
    if isinstance(expr, Literal):
        return (expr.text,)
    if isinstance(expr, CharClass):
        return (expr.ranges, expr.negated)
    if isinstance(expr, RuleRef):
        return (expr.name,)
    if isinstance(expr, Repeat):
        return (expr.item, expr.min, expr.max)
    if isinstance(expr, Seq):
        return (expr.items,)
    assert isinstance(expr, Alt)
    return (expr.options,)


@settings(max_examples=300, deadline=None)
@given(_EXPRS, _EXPRS)
def test_equality_and_hash_are_the_dataclasses(a: object, b: object) -> None:
    # equal exactly when of the same class with equal fields, and hashed as the
    # dataclasses hashed them (a hash decides the order of sets of nodes)
    assert (a == b) == (type(a) is type(b) and _fields(a) == _fields(b))
    assert (a != b) == (not a == b)
    if isinstance(a, (Seq, Alt)):
        assert hash(a) == hash(_fields(a)[0])
    else:
        assert hash(a) == hash(_fields(a))
    if a == b:
        assert hash(a) == hash(b)


@settings(max_examples=200, deadline=None)
@given(_EXPRS)
def test_nodes_pickle_and_copy_to_equal_nodes(expr: object) -> None:
    for again in (pickle.loads(pickle.dumps(expr)), copy.copy(expr), copy.deepcopy(expr)):
        assert again == expr and hash(again) == hash(expr) and type(again) is type(expr)


def test_repr_is_the_dataclasses() -> None:
    expr = Seq((Literal("a"), Alt((RuleRef("x"), Repeat(ANY, 0, None))),
                CharClass(((48, 57),))))
    assert repr(expr) == (
        "Seq(items=(Literal(text='a'), Alt(options=(RuleRef(name='x'), "
        "Repeat(item=CharClass(ranges=(), negated=True), min=0, max=None))), "
        "CharClass(ranges=((48, 57),), negated=False)))"
    )


def test_keywords_and_defaults() -> None:
    assert CharClass(ranges=((1, 2),)) == CharClass(((1, 2),), False)
    assert Repeat(item=Literal("a"), min=1, max=2) == Repeat(Literal("a"), 1, 2)
    assert Literal(text="a") == Literal("a") and RuleRef(name="r") == RuleRef("r")
    assert Seq(items=()) == Seq(()) and Alt(options=()) == Alt(())


@pytest.mark.parametrize(
    ("node", "field"),
    [(Literal("a"), "text"), (CharClass(()), "ranges"), (CharClass(()), "negated"),
     (RuleRef("r"), "name"), (Seq(()), "items"), (Alt(()), "options"),
     (Repeat(Literal("a"), 0, 1), "item"), (Repeat(Literal("a"), 0, 1), "min"),
     (Repeat(Literal("a"), 0, 1), "max")],
)
def test_nodes_are_frozen(node: object, field: str) -> None:
    before = getattr(node, field)
    with pytest.raises(AttributeError):
        setattr(node, field, before)
    with pytest.raises(AttributeError):
        node.other = 1  # type: ignore[attr-defined]
    assert getattr(node, field) == before


def test_a_hash_is_kept_and_unaffected_by_equal_nodes() -> None:
    items = (Literal("a"), RuleRef("b"))
    seq = Seq(items)
    assert hash(seq) == hash(items) == hash(seq) == hash(Seq(items))
    assert {seq: 1}[Seq(items)] == 1 and {Alt(items): 2}[Alt(items)] == 2
    assert Seq(items) != Alt(items) and Literal("a") != RuleRef("a")
    assert Literal("a") != "a" and Literal("a") != ("a",)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 60), st.integers(0, 60)), max_size=6))
def test_merge_ranges_returns_canonical_ranges(ranges: list[tuple[int, int]]) -> None:
    covered = {cp for lo, hi in ranges for cp in range(lo, hi + 1)}
    for given_as in (ranges, tuple(ranges)):
        merged = merge_ranges(given_as)
        assert type(merged) is tuple and all(type(r) is tuple for r in merged)
        assert {cp for lo, hi in merged for cp in range(lo, hi + 1)} == covered
        assert all(lo <= hi for lo, hi in merged)
        assert all(b[0] > a[1] + 1 for a, b in zip(merged, merged[1:], strict=False))
        assert merge_ranges(merged) == merged  # canonical ranges are kept as they are
