"""Undefined rules, the start rule and left recursion, for text and for IR."""

from __future__ import annotations

import pytest
from _ir_exprs import ir_exprs
from hypothesis import given, settings
from hypothesis import strategies as st

from gbnfkit import GrammarError
from gbnfkit.grammar import (
    Alt,
    GrammarIR,
    Literal,
    Repeat,
    RuleRef,
    Seq,
    check_grammar,
    parse_gbnf,
)
from gbnfkit.grammar._checks import (
    _components,
    _has_cycle,
    _left_refs,
    _pushdown_left_recursion,
    nullable_rules,
)
from gbnfkit.grammar._llama_leftrec import _builder_cycle, _named_left_cycle


def error(text: str) -> GrammarError:
    with pytest.raises(GrammarError) as info:
        parse_gbnf(text)
    return info.value


# -- undefined rules and the start rule -------------------------------------------------


def test_undefined_rule_is_named_with_a_suggestion_and_position() -> None:
    err = error('root ::= "a" nmae\nname ::= "b"')
    assert err.rules == ("nmae",)
    assert "undefined rule 'nmae'" in err.message and "did you mean 'name'?" in err.message
    assert (err.line, err.column) == (1, 14)


def test_undefined_rule_in_an_unused_rule_counts() -> None:
    err = error('root ::= "ok"\nhelper ::= nothere')
    assert err.rules == ("nothere",) and (err.line, err.column) == (2, 12)


def test_all_undefined_rules_are_listed() -> None:
    err = error("root ::= a b a c\nc ::= d")
    assert err.rules == ("a", "b", "d")


def test_missing_root_suggests_a_case_insensitive_match() -> None:
    err = error('Root ::= "a"\nROOT ::= "b"')
    assert "no rule named 'root'" in err.message and "did you mean 'Root'?" in err.message
    assert err.line == 1


def test_missing_root_without_a_near_match() -> None:
    err = error('start ::= "a"')
    assert "add `root ::= ...`" in err.message


def test_check_grammar_on_ir_from_another_front_end() -> None:
    with pytest.raises(GrammarError, match="empty grammar"):
        check_grammar(GrammarIR({}))
    with pytest.raises(GrammarError) as info:
        check_grammar(GrammarIR({"root": Seq((Literal("a"), RuleRef("b")))}))
    assert info.value.rules == ("b",) and info.value.line is None
    with pytest.raises(GrammarError, match="no rule named 'start'"):
        check_grammar(GrammarIR({"root": Literal("a")}, root="start"))
    with pytest.raises(GrammarError, match="invalid repetition bounds"):
        check_grammar(GrammarIR({"root": Repeat(Literal("a"), 3, 2)}))
    check_grammar(GrammarIR({"root": Repeat(Literal("a"), 3, 5)}))


# -- left recursion as llama.cpp detects it -----------------------------------------------


@pytest.mark.parametrize(
    ("text", "cycle"),
    [
        ('root ::= expr\nexpr ::= expr "+" term | term\nterm ::= [0-9]', ("expr",)),
        ('root ::= root "a" | "b"', ("root",)),
        ('root ::= a\na ::= b "x" | "y"\nb ::= a "z"', ("a", "b")),
        ('root ::= "a"? root "b" | "c"', ("root",)),
        ('root ::= list\nlist ::= [ ]* list "," | "x"', ("list",)),
        ('root ::= opt root "x" | "y"\nopt ::= "a" |', ("root",)),
        # a pure cycle with nothing after the references: llama.cpp still refuses it
        ('root ::= a | "x"\na ::= root', ("root", "a")),
        # an unused rule is checked too
        ('root ::= "ok"\nu ::= u "x"', ("u",)),
        # a group that is literally empty may be skipped
        ('root ::= () root "x" | "y"', ("root",)),
        ('root ::= ("" | "a") root "x" | "y"', ("root",)),
        ('root ::= "a"{0,3} root | "y"', ("root",)),
    ],
)
def test_llama_left_recursion_is_refused_and_named(text: str, cycle: tuple[str, ...]) -> None:
    err = error(text)
    assert "left recursion" in err.message
    assert err.rules == cycle
    assert " -> ".join((*cycle, cycle[0])) in err.message
    assert '("+" term)*' in err.message  # says how to fix it
    first_line = next(
        n for n, line in enumerate(text.split("\n"), 1) if line.startswith(cycle[0] + " ")
    )
    assert (err.line, err.column) == (first_line, 1)


@pytest.mark.parametrize(
    "text",
    [
        'root ::= "a"?* "b"',  # S'' ::= S' S'' | with S' empty-able
        'root ::= ()* "b"',
        'root ::= y* "b"\ny ::= "" | "a"',
        'root ::= "a"?{2,} "b"',
        'root ::= ("" | "a")+',
    ],
)
def test_repeating_a_literally_nullable_item_is_left_recursion_for_llama(text: str) -> None:
    err = error(text)
    assert "repeats an item that can match the empty string" in err.message
    assert err.rules == ("root",)


@pytest.mark.parametrize(
    "text",
    [
        'root ::= ("a"?)* "b"',  # the group is not literally empty
        'root ::= x* "b"\nx ::= y\ny ::= "" | "a"',  # emptiness is not transitive
        'root ::= "a"*? "b"+* "c"??',
        'root ::= "a" root | "b"',  # right recursion
        'root ::= x root "c" | "d"\nx ::= "a" | "b"',
        'root ::= ("a"?) root | "y"',  # llama.cpp misses it, and nothing is pushed
        'root ::= (x)* "b"\nx ::= "" | "a"',
        'root ::= "a"{0} "b"{0,0} "c"',
    ],
)
def test_accepted_recursion(text: str) -> None:
    parse_gbnf(text)


# -- left recursion that llama.cpp misses ------------------------------------------------


@pytest.mark.parametrize(
    ("text", "cycle"),
    [
        ('root ::= ("a"?) root "x" | "y"', ("root",)),
        ('root ::= x root "c" | "d"\nx ::= y\ny ::= "" | "a"', ("root",)),
        ('root ::= a\na ::= (w) b "!" | "x"\nb ::= a\nw ::= z\nz ::= "" | " "', ("a", "b")),
        ('root ::= (("a"?)) root "x"{0,3} | "y"', ("root",)),
    ],
)
def test_true_nullable_left_recursion_is_refused(text: str, cycle: tuple[str, ...]) -> None:
    err = error(text)
    assert "left recursion" in err.message and "empty string" in err.message
    assert err.rules == cycle
    assert " -> ".join((*cycle, cycle[0])) in err.message


def test_true_nullable_left_recursion_on_ir() -> None:
    ir = GrammarIR(
        {
            "root": Alt(
                (Seq((Repeat(Literal("a"), 0, 1), RuleRef("root"), Literal("x"))), Literal("y"))
            )
        }
    )
    with pytest.raises(GrammarError, match="left recursion") as info:
        check_grammar(ir)
    assert info.value.rules == ("root",)


def test_ir_checks_accept_what_the_parser_accepted() -> None:
    for text in ['root ::= ("a"?)* "b"', 'root ::= (x)* "b"\nx ::= "" | "a"']:
        check_grammar(parse_gbnf(text))


def test_ir_checks_refuse_llama_cycles() -> None:
    ir = GrammarIR({"root": Alt((RuleRef("a"), Literal("x"))), "a": RuleRef("root")})
    with pytest.raises(GrammarError) as info:
        check_grammar(ir)
    assert info.value.rules == ("root", "a")


# -- helpers ------------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(
    st.integers(1, 7).flatmap(
        lambda n: st.lists(st.lists(st.integers(0, n - 1)), min_size=n, max_size=n)
    )
)
def test_components_are_mutual_reachability(adjacency: list[list[int]]) -> None:
    edges = {f"n{u}": [(f"n{v}", True) for v in out] for u, out in enumerate(adjacency)}
    reach: dict[str, set[str]] = {}
    for start in edges:
        seen: set[str] = set()
        todo = [start]
        while todo:
            for target, _ in edges[todo.pop()]:
                if target not in seen:
                    seen.add(target)
                    todo.append(target)
        reach[start] = seen
    component = _components(edges)
    for u in edges:
        for v in edges:
            mutual = u == v or (v in reach[u] and u in reach[v])
            assert (component[u] == component[v]) == mutual
    # a cycle: a component of several nodes, or a node with an edge to itself
    assert _has_cycle(edges) == (
        len(set(component.values())) < len(edges) or any(u in reach[u] for u in edges)
    )


def test_long_chains_of_nullable_rules() -> None:
    n = 2000
    lines = ['root ::= r0 "x"']
    lines += [f'r{i} ::= r{i + 1} "a" | r{i + 1}' for i in range(n)]
    lines += [f'r{n} ::= "" | "b"']
    ir = parse_gbnf("\n".join(lines))
    assert nullable_rules(ir.rules) == {f"r{i}" for i in range(n + 1)}
    lines[-1] = f'r{n} ::= "" | r0 "b"'  # now r0 -> r1 -> ... -> r2000 -> r0
    with pytest.raises(GrammarError, match="left recursion") as info:
        parse_gbnf("\n".join(lines))
    assert len(info.value.rules) == n + 1


_REC_NAMES = ("r", "s", "t")
_REC_LEAVES = st.one_of(
    st.sampled_from([Literal("a"), Literal(""), Seq(())]),
    st.builds(RuleRef, st.sampled_from(_REC_NAMES)),
)
_REC_EXPRS = ir_exprs(
    _REC_LEAVES, st.integers(0, 3), lambda m: st.one_of(st.none(), st.integers(0, 4)), 6
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_REC_EXPRS, min_size=1, max_size=3))
def test_fast_llama_precheck_finds_the_cycles_of_the_generated_rules(bodies: list) -> None:
    """The shortcut of the exact=False reading says "cycle" exactly when the generated
    rules it stands for have one (so it never hides a cycle, nor costs a false alarm)."""
    rules = dict(zip(_REC_NAMES, bodies, strict=False))
    assert _named_left_cycle(rules) == (_builder_cycle(rules, exact=False) is not None)


_VALID_EXPRS = ir_exprs(  # as _REC_EXPRS, with only the bounds the checks let through
    _REC_LEAVES, st.integers(0, 3), lambda m: st.one_of(st.none(), st.integers(m, 4)), 6
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_VALID_EXPRS, min_size=1, max_size=3))
def test_without_a_cycle_of_left_edges_no_left_recursion_check_fires(bodies: list) -> None:
    """What the checks skip when the left edges have no cycle (the usual grammar): the
    exact=False llama.cpp reading finds no cycle either, and no pushdown loop exists."""
    rules = dict(zip(_REC_NAMES, bodies, strict=False))
    nullable = nullable_rules(rules)
    edges = {name: _left_refs(body, False, nullable) for name, body in rules.items()}
    if not _has_cycle(edges):
        assert not _named_left_cycle(rules)
        assert _pushdown_left_recursion(edges, _components(edges)) is None


_A, _B, _X, _Y = RuleRef("a"), RuleRef("b"), Literal("x"), Literal("y")


@pytest.mark.parametrize(
    ("text", "rules"),
    [
        (  # llama.cpp's cycle
            'root ::= a "x"\na ::= b | "y"\nb ::= a "z"',
            {"root": Seq((_A, _X)), "a": Alt((_B, _Y)), "b": Seq((_A, Literal("z")))},
        ),
        (  # a pushdown loop only
            'root ::= a\na ::= "y"? a "x" | "y"',
            {"root": _A, "a": Alt((Seq((Repeat(_Y, 0, 1), _A, _X)), _Y))},
        ),
        (  # llama.cpp's exact check on the raw tree: a repeated literally empty group
            'root ::= ("" | "x")* "y"',
            {"root": Seq((Repeat(Alt((Seq(()), _X)), 0, None), _Y))},
        ),
    ],
)
def test_left_recursion_errors_of_the_direct_checks(text: str, rules: dict) -> None:
    """check_reference_complete_grammar (the schema path's checks, on IR not parsed from
    ``text``) gives the parser's error, rule, line and column."""
    from gbnfkit.grammar._checks import check_reference_complete_grammar
    from gbnfkit.grammar._parser import raw_rules

    with pytest.raises(GrammarError) as parsed:
        parse_gbnf(text)
    positions = {name: (line, 1) for line, name in enumerate(rules, 1)}
    with pytest.raises(GrammarError) as direct:
        check_reference_complete_grammar(
            GrammarIR(rules, "root", positions), text, lambda: raw_rules(text))
    got, want = direct.value, parsed.value
    assert (got.message, got.line, got.column, got.rules) == (
        want.message, want.line, want.column, want.rules)
    assert got.message.startswith("left recursion")
