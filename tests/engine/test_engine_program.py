"""compile_program: the flat format, O(n) repetition expansion, limits."""

from __future__ import annotations

import pytest
from engine_reference import grammars
from hypothesis import HealthCheck, given, reject, settings

from gbnfkit import Grammar, GrammarError, LimitError, Limits
from gbnfkit.engine._program import CHAR, CHAR_NOT, END, REF, Program, compile_program
from gbnfkit.grammar._ir import ANY, Alt, CharClass, Expr, GrammarIR, Literal, Repeat, RuleRef, Seq

LIM = Limits()


def test_layout_of_a_small_grammar() -> None:
    ir = GrammarIR({"root": Alt((Seq((Literal("ab"), RuleRef("x"))), Literal(""))),
                    "x": Alt((ANY, CharClass(((0x110000, 0x110005),))))})
    p = compile_program(ir, LIM)
    assert p.rule_names == ("root", "x")
    assert p.root == 0
    assert p.kinds == (CHAR, CHAR, REF, END, END, CHAR_NOT, END, CHAR, END)
    assert p.rule_alts == ((0, 4), (5, 7))
    assert p.ranges[0] == ((97, 97),) and p.target[2] == 1
    assert p.ranges[5] == () and p.ranges[7] == ()  # above U+10FFFF: never matches
    assert p.size == 5
    assert p.pos_rule == (0, 0, 0, 0, 0, 1, 1, 1, 1)
    # "a" and "b", the call, END (four times), "." and the class above U+10FFFF
    assert len(set(p.elems)) == 6 and p.elems[3] == p.elems[4] == p.elems[6] == p.elems[8]


def _assert_elems_number_the_elements(p: Program) -> None:
    seen: dict[int, tuple[object, ...]] = {}
    for pos, e in enumerate(p.elems):
        assert e >= 0
        elem = (p.kinds[pos], p.ranges[pos], p.target[pos])
        assert seen.setdefault(e, elem) == elem  # one number, one element
    assert len(set(seen.values())) == len(seen)  # one element, one number


@pytest.mark.parametrize("name", ["json", "c", "chess", "english", "arithmetic", "list"])
def test_elems_number_the_distinct_elements(name: str) -> None:
    _assert_elems_number_the_elements(Grammar.builtin(name).program)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(grammars())
def test_elems_number_the_distinct_elements_of_any_grammar(ir: GrammarIR) -> None:
    try:
        program = compile_program(ir, LIM)
    except (GrammarError, LimitError):
        reject()
    _assert_elems_number_the_elements(program)


def test_repetition_is_linear_in_the_bound() -> None:
    def size(n: int) -> int:
        ir = GrammarIR({"root": Repeat(Seq((Literal("a"), RuleRef("b"))), 2, n), "b": Literal("b")})
        return compile_program(ir, LIM).size

    s1, s2, s3 = size(100), size(200), size(400)
    assert s3 - s2 == 2 * (s2 - s1)  # linear growth
    assert s3 < 4 * 400


def test_equal_sub_expressions_share_generated_rules() -> None:
    group = Alt((Literal("x"), Literal("y")))
    ir = GrammarIR({"root": Seq((group, group, Repeat(group, 0, 3), Repeat(group, 0, 5)))})
    p = compile_program(ir, LIM)
    # one group rule, and the 3-chain is part of the 5-chain
    assert len(p.rule_names) == 1 + 1 + 5


def test_equal_elements_share_repetition_rules_whatever_spells_them() -> None:
    # a literal's code point and a one-character class are one element (the builder
    # keeps an id per distinct element): their repetitions share one star rule and one
    # optional chain, and two references to a rule one star rule
    a, class_a = Literal("a"), CharClass(((97, 97),))
    ir = GrammarIR({"root": Seq((Repeat(a, 0, None), Repeat(class_a, 0, None),
                                 Repeat(a, 1, 3), Repeat(class_a, 0, 2),
                                 Repeat(RuleRef("x"), 0, None), Repeat(RuleRef("x"), 0, None))),
                    "x": Literal("b")})
    p = compile_program(ir, LIM)
    assert p.rule_names == ("root", "x", "root-star1", "root-opt2", "root-opt3", "root-star4")
    star_a, opt2 = 2, 4  # "a"{1,3} is "a" then the 2-chain, which [a]{0,2} is
    assert p.target[: 7] == (star_a, star_a, -1, opt2, opt2, 5, 5)
    assert p.kinds[: 8] == (REF, REF, CHAR, REF, REF, REF, REF, END)
    assert p.rule_alts == ((0,), (8,), (10, 13), (14, 16), (17, 20), (21, 24))


def test_grammar_size_limit() -> None:
    ir = GrammarIR({"root": Repeat(Literal("abc"), 0, 50_000)})
    with pytest.raises(LimitError) as info:
        compile_program(ir, Limits(max_grammar_size=10_000))
    assert info.value.limit == "max_grammar_size"
    compile_program(ir, LIM)  # fine with the default


def test_repetition_limit_and_bad_bounds() -> None:
    with pytest.raises(LimitError) as info:
        Grammar(GrammarIR({"root": Repeat(Literal("a"), 0, 11)}), limits=Limits(max_repetition=10))
    assert info.value.limit == "max_repetition"
    with pytest.raises(GrammarError):
        Grammar(GrammarIR({"root": Repeat(Literal("a"), 3, 2)}))


def test_undefined_rule_and_missing_root_when_unchecked() -> None:
    with pytest.raises(GrammarError) as info:
        compile_program(GrammarIR({"root": RuleRef("nope")}), LIM)
    assert info.value.rules == ("nope",)
    with pytest.raises(GrammarError):
        compile_program(GrammarIR({"x": Literal("a")}), LIM)


def test_large_repetition_matches_exactly() -> None:
    g = Grammar.from_ir(GrammarIR({"root": Repeat(Literal("a"), 3, 5000)}))
    assert g.match("a" * 5000).status == "accept"
    assert g.match("a" * 5001).position == 5000
    assert g.match("aa").status == "prefix"
    u = Grammar.from_ir(GrammarIR({"root": Seq((Repeat(Literal("ab"), 2, None), Literal("c")))}))
    assert u.match("ab" * 3000 + "c").status == "accept"
    assert u.match("abc").position == 2


def test_too_deep_nesting_is_a_grammar_error() -> None:
    expr: Expr = Literal("a")
    for _ in range(20_000):
        expr = Alt((Seq((Literal("("), expr, Literal(")"))), Literal("x")))
    with pytest.raises(GrammarError):
        compile_program(GrammarIR({"root": expr}), LIM)


def test_nesting_beyond_the_limit_is_refused_before_any_recursion() -> None:
    # compiled (mypyc) modules have no RecursionError: depth is measured without recursion
    from gbnfkit.grammar._ir import MAX_NESTING, too_deep

    expr: Expr = Literal("a")
    for _ in range(MAX_NESTING // 2 + 1):
        expr = Seq((Literal("("), Alt((expr, Literal("x")))))
    assert too_deep(expr) and not too_deep(expr, MAX_NESTING + 2)
    with pytest.raises(GrammarError, match="nests expressions more than"):
        Grammar.from_ir(GrammarIR({"root": expr}))
    with pytest.raises(GrammarError, match="nested too deeply"):
        compile_program(GrammarIR({"root": expr}), LIM)


@pytest.mark.parametrize(("bound", "once", "twice"), [(3, 8, 12), (None, 9, 13)])
def test_the_size_of_a_repetition_met_again_leaves_out_the_rules_built_for_it(
    bound: int | None, once: int, twice: int
) -> None:
    # ("ab" | "c"){2,3}: the group's rule 3 + its call 1 + two copies 2 + the chain's
    # call 1 + the chain's rule 1; met again, only the calls and copies: 1 + 2 + 1
    # ({2,}: the star rule's body 2 instead of the chain's 1)
    part = Repeat(Alt((Literal("ab"), Literal("c"))), 2, bound)
    assert compile_program(GrammarIR({"root": part}), LIM).size == once
    assert compile_program(GrammarIR({"root": Seq((part, part))}), LIM).size == twice
