"""IR -> canonical GBNF text, and back."""

from __future__ import annotations

import pickle
from collections.abc import Callable
from pathlib import Path

import pytest
from gbnf_llama_reference import llama_verdict
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import gbnfkit._native as native
from gbnfkit import Grammar, GrammarError
from gbnfkit.grammar import (
    ANY,
    Alt,
    CharClass,
    Expr,
    GrammarIR,
    Literal,
    Repeat,
    RuleRef,
    Seq,
    check_grammar,
    normalize,
    normalize_ir,
    parse_gbnf,
)
from gbnfkit.grammar._builtins import builtin_names, builtin_text
from gbnfkit.grammar._printer import canonical_gbnf, expr_to_gbnf, to_gbnf

GOLDEN = Path(__file__).resolve().parent / "golden"


def printed(expr: Expr, **rules: Expr) -> str:
    return to_gbnf(GrammarIR({"root": expr, **rules})).removeprefix("root ::= ").split("\n")[0]


def test_layout_and_rule_order() -> None:
    ir = GrammarIR(
        {"root": Seq((RuleRef("b"), RuleRef("a"))), "b": Literal("b"), "a": Literal("a")}
    )
    assert to_gbnf(ir) == 'root ::= b a\nb ::= "b"\na ::= "a"\n'


@pytest.mark.parametrize(
    ("expr", "text"),
    [
        (Literal('a"b\\c\n\r\t'), '"a\\"b\\\\c\\n\\r\\t"'),
        (Literal("\x00\x7f\u00a0é日😀\U000e0001"), '"\\x00\\x7F\\xA0é日😀\\U000E0001"'),
        (Literal("\ud800"), '"\\uD800"'),
        (Seq(()), '""'),
        (Literal(""), '""'),
        (ANY, "."),
        (
            CharClass.of([(ord("a"), ord("c")), (ord("x"), ord("y")), (ord("q"), ord("q"))]),
            "[a-cqxy]",
        ),
        (CharClass.of([(0x5D, 0x5D), (0x5B, 0x5B), (0x2D, 0x2D), (0x5C, 0x5C)]), "[\\-\\[-\\]]"),
        (CharClass.of([(ord("^"), ord("^"))]), "[\\x5E]"),
        (CharClass.of([(ord("^"), ord("^"))], negated=True), "[^^]"),
        (CharClass.of([(0, 0x1F)], negated=True), "[^\\x00-\\x1F]"),
        (CharClass.of([(0xFFFFFFFF, 0xFFFFFFFF)]), "[\\UFFFFFFFF]"),
        (CharClass((), negated=False), "[^\\x00-\\UFFFFFFFF]"),
        (
            Alt((Literal("a"), Seq((Literal("b"), Alt((Literal("c"), Seq(()))))))),
            '"a" | "b" ("c" | "")',
        ),
        (Repeat(Literal("ab"), 0, None), '"ab"*'),
        (Repeat(Literal("a"), 1, None), '"a"+'),
        (Repeat(Literal("a"), 0, 1), '"a"?'),
        (Repeat(Literal("a"), 3, 3), '"a"{3}'),
        (Repeat(Literal("a"), 3, None), '"a"{3,}'),
        (Repeat(Literal("a"), 2, 5), '"a"{2,5}'),
        (Repeat(Repeat(Literal("a"), 0, None), 0, 1), '"a"*?'),
        (Repeat(Repeat(Literal("a"), 0, 0), 2, 2), '("a"{0}){2}'),
        (Repeat(Seq((Literal("a"), ANY)), 1, None), '("a" .)+'),
        (Repeat(Alt((Literal("a"), Literal("b"))), 0, 1), '("a" | "b")?'),
        (Repeat(Seq(()), 0, 1), "()?"),
    ],
)
def test_canonical_printing(expr: Expr, text: str) -> None:
    assert printed(expr) == text


def test_groups_are_kept_where_llama_would_see_left_recursion() -> None:
    # plain `"a"?*` would be refused by llama.cpp; the IR came from `("a"?)*`
    ir = parse_gbnf('root ::= ("a"?)* "b"')
    assert to_gbnf(ir) == 'root ::= ("a"?)* "b"\n'
    ir = parse_gbnf('root ::= (x)* "b"\nx ::= "" | "a"')
    assert to_gbnf(ir) == 'root ::= (x)* "b"\nx ::= "" | "a"\n'
    ir = parse_gbnf('root ::= x* "b"\nx ::= "a"')
    assert to_gbnf(ir) == 'root ::= x* "b"\nx ::= "a"\n'


def test_names_gbnf_cannot_write_are_refused() -> None:
    with pytest.raises(GrammarError, match="cannot be written in GBNF") as info:
        to_gbnf(GrammarIR({"my_rule": Literal("a")}))
    assert info.value.rules == ("my_rule",)


# -- round trip ------------------------------------------------------------------------

_SPECIAL = st.sampled_from(list('"\\[]-^\n\r\t\x00\x7f\u00a0\u2028\ud800\udfff\ufffe€😀\U0010ffff'))
_CHARS = st.one_of(st.characters(), _SPECIAL)
_CODE_POINT = st.one_of(
    st.integers(0, 0x10FFFF), st.sampled_from([0x2D, 0x5D, 0x5B, 0x5C, 0x5E, 0xFFFFFFFF])
)


@st.composite
def _ranges(draw: st.DrawFn) -> tuple[tuple[int, int], ...]:
    pairs = draw(st.lists(st.tuples(_CODE_POINT, _CODE_POINT), min_size=1, max_size=4))
    return tuple((min(a, b), max(a, b)) for a, b in pairs)


_CLASS = st.builds(CharClass.of, _ranges(), st.booleans())
_LITERAL = st.builds(Literal, st.text(_CHARS, min_size=1, max_size=6))


def _exprs(names: list[str]) -> st.SearchStrategy[Expr]:
    atoms: list[st.SearchStrategy[Expr]] = [_LITERAL, _CLASS, st.just(ANY)]
    if names:
        atoms.append(st.builds(RuleRef, st.sampled_from(names)))
    leaves = st.one_of(*atoms)

    def extend(inner: st.SearchStrategy[Expr]) -> st.SearchStrategy[Expr]:
        bounds = st.integers(0, 4).flatmap(
            lambda lo: st.tuples(st.just(lo), st.one_of(st.none(), st.integers(lo, lo + 3)))
        )
        repeat = st.builds(
            lambda item, b: Repeat(item, b[0], b[1]),
            inner.filter(lambda e: not isinstance(e, (Seq, Alt)) or e != Seq(())),
            bounds,
        )
        return st.one_of(
            st.builds(lambda items: Seq(tuple(items)), st.lists(inner, max_size=4)),
            st.builds(lambda options: Alt(tuple(options)), st.lists(inner, min_size=1, max_size=3)),
            repeat,
        )

    return st.recursive(leaves, extend, max_leaves=8)


_NAMES = ("root", "a-1", "2nd", "Value")
# rule i only refers to later rules: no recursion, so no left recursion
_RULE_EXPRS = {(i, k): _exprs(list(_NAMES[i + 1 : k])) for k in range(1, 5) for i in range(k)}


@st.composite
def _grammars(draw: st.DrawFn) -> GrammarIR:
    k = draw(st.integers(1, 4))
    return GrammarIR({_NAMES[i]: draw(_RULE_EXPRS[(i, k)]) for i in range(k)})


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_grammars())
def test_print_then_parse_gives_the_same_ir(ir: GrammarIR) -> None:
    canonical = normalize_ir(ir)
    try:
        check_grammar(canonical)
    except GrammarError:
        assume(False)  # e.g. a repetition of something empty-able: llama.cpp refuses it
    text = to_gbnf(canonical)
    assert llama_verdict(text) is None  # llama.cpp builds the printout
    assert parse_gbnf(text) == canonical
    assert to_gbnf(parse_gbnf(text)) == text


def test_conformance_grammars_round_trip(shared_file: Callable[[str], Path]) -> None:
    import json

    path = shared_file("conformance/gbnf.jsonl")
    checked = 0
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        try:
            ir = parse_gbnf(record["grammar"])
        except GrammarError:
            continue
        assert parse_gbnf(to_gbnf(ir)) == ir, record["id"]
        checked += 1
    assert checked > 100


# -- golden printouts of the builtin grammars ----------------------------------------------


@pytest.mark.parametrize("name", builtin_names())
def test_builtin_printout_matches_golden(name: str) -> None:
    ir = parse_gbnf(builtin_text(name))
    text = to_gbnf(ir)
    assert text == (GOLDEN / f"{name}.gbnf").read_text(encoding="utf-8")
    assert parse_gbnf(text) == ir


def test_an_option_repeated_zero_times_stays_a_group_llama_cpp_accepts() -> None:
    """llama.cpp drops `x{0}`, so an alternative of only `(.){0}` would be literally empty
    and a repetition of its group left-recursive (found by the round-trip property)."""
    star = Repeat(Alt((Literal("0"), Repeat(CharClass((), negated=True), 0, 0))), 0, None)
    ir = GrammarIR(rules={"root": star}, root="root")
    text = to_gbnf(normalize_ir(ir))
    assert llama_verdict(text) is None, text
    assert normalize_ir(parse_gbnf(text)).rules == normalize_ir(ir).rules


def test_a_grammar_not_starting_at_root_parses_back_with_its_root() -> None:
    grammar = Grammar.from_gbnf('expr ::= term ("+" term)*\nterm ::= [0-9]+\n', root="expr")
    text = grammar.to_gbnf()
    assert Grammar.from_gbnf(text, root=grammar.root) == grammar


# -- IRs from outside: wrong types, values GBNF cannot write, non-canonical forms ----------

# each made when its test runs: the compiled build's IR classes (mypyc) refuse a wrong
# type in their constructor already (a TypeError), which the test then checks instead
_BAD_IRS: dict[str, Callable[[], GrammarIR]] = {
    "node of another type": lambda: GrammarIR({"root": "a"}),  # type: ignore[dict-item]
    "None as a node": lambda: GrammarIR({"root": Seq((Literal("a"), None))}),  # type: ignore[arg-type]
    "literal of bytes": lambda: GrammarIR({"root": Literal(b"a")}),  # type: ignore[arg-type]
    "reference by int": lambda: GrammarIR({"root": RuleRef(5)}),  # type: ignore[arg-type]
    "rule name not a str": lambda: GrammarIR({"root": RuleRef("x"), 5: Literal("a")}),  # type: ignore[dict-item]
    "start rule not a str": lambda: GrammarIR({"root": Literal("a")}, root=5),  # type: ignore[arg-type]
    "items in a list": lambda: GrammarIR({"root": Seq([Literal("a")])}),  # type: ignore[arg-type]
    "bound as a str": lambda: GrammarIR({"root": Repeat(Literal("a"), 0, "3")}),  # type: ignore[arg-type]
    "bound as a bool": lambda: GrammarIR({"root": Repeat(Literal("a"), True, 3)}),
    "negative code point": lambda: GrammarIR({"root": CharClass(((-5, 0x61),))}),
    "code point past \\UFFFFFFFF": lambda: GrammarIR(
        {"root": CharClass(((0x100000000, 0x100000001),))}
    ),
    "range of one value": lambda: GrammarIR({"root": CharClass(((0x61,),))}),  # type: ignore[arg-type]
}


@pytest.mark.parametrize("name", sorted(_BAD_IRS))
def test_an_ir_of_wrong_types_or_values_is_a_grammar_error(name: str) -> None:
    """They raised AttributeError, TypeError or ValueError from inside the checks or the
    printer, or were accepted and printed as text that reads otherwise (``{True,3}``,
    ``\\U100000000``: the code point U+10000000 and a '0'); found by bughunt8."""
    from gbnfkit.grammar import to_gbnf as public_to_gbnf

    try:
        ir = _BAD_IRS[name]()
    except TypeError:  # the compiled IR classes check their fields' types themselves
        assert native.status()["gbnfkit.grammar._ir"]
        return
    if name == "bound as a bool" and native.status()["gbnfkit.grammar._ir"]:
        # a compiled int field stores the int a bool equals: a valid IR, printed so
        assert public_to_gbnf(ir) == 'root ::= "a"{1,3}\n'
        return
    for call in (Grammar.from_ir, check_grammar, public_to_gbnf):
        with pytest.raises(GrammarError):
            call(ir)


def test_from_ir_of_something_else_is_an_argument_error() -> None:
    from gbnfkit import ArgumentError

    with pytest.raises(ArgumentError, match="ir must be GrammarIR"):
        Grammar.from_ir("root ::= x")  # type: ignore[arg-type]


@st.composite
def _raw_grammars(draw: st.DrawFn) -> GrammarIR:
    """Grammars as a front end may build them: not in canonical form, with empty
    alternatives (``Alt(())``, which matches nothing) among the leaves."""
    ir = draw(_grammars())
    if draw(st.booleans()):
        name = draw(st.sampled_from(list(ir.rules)))
        wrapped = draw(
            st.sampled_from([
                lambda e: Seq((e, Alt(()))),
                lambda e: Alt((e, Repeat(Alt(()), 0, None))),
                lambda e: Seq((Literal(""), e, Literal(""), Seq((Literal(""),)))),
            ])
        )
        ir = GrammarIR({**ir.rules, name: wrapped(ir.rules[name])})
    return ir


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_raw_grammars())
def test_a_grammar_from_any_ir_prints_back_to_an_equal_grammar(ir: GrammarIR) -> None:
    """``Grammar.to_gbnf`` promises that parsing its text gives the grammar back; for an IR
    not in canonical form (``"" ""``, ``Seq((x, Alt(())))``) the printout was not canonical
    and the grammar parsed from it compared unequal (found by bughunt8)."""
    try:
        grammar = Grammar.from_ir(ir)
    except GrammarError:
        assume(False)
    text = grammar.to_gbnf()
    again = Grammar.from_gbnf(text)
    assert again == grammar, text
    assert again.to_gbnf() == text


def test_a_bound_above_the_default_limit_parses_back_with_the_grammars_limits() -> None:
    from gbnfkit import Limits

    bigger = Limits(max_repetition=150_000)
    grammar = Grammar.from_gbnf('root ::= "a"{120000}', limits=bigger)
    text = grammar.to_gbnf()
    with pytest.raises(GrammarError, match="max_repetition"):
        Grammar.from_gbnf(text, root=grammar.root)
    assert Grammar.from_gbnf(text, root=grammar.root, limits=grammar.limits) == grammar


@pytest.mark.parametrize("name", ["my rule", "my_rule", "é", "a.b", ""])
def test_from_ir_refuses_a_rule_name_gbnf_cannot_write(name: str) -> None:
    """Such a grammar was built, and then its fingerprint, ==, hash, pickle, save and a
    GrammarCompiler's second equal grammar all raised GrammarError (found by bughunt9)."""
    for rules, root in (({"root": RuleRef(name), name: Literal("a")}, "root"),
                        ({name: Literal("a")}, name)):
        with pytest.raises(GrammarError, match="cannot be written in GBNF") as info:
            Grammar.from_ir(GrammarIR(rules, root))
        assert info.value.rules == (name,)
    for name_ok in ("-x", "1x", "Rule-2"):
        grammar = Grammar.from_ir(GrammarIR({"root": RuleRef(name_ok), name_ok: Literal("a")}))
        assert pickle.loads(pickle.dumps(grammar)) == grammar


def _nested(kind: str, depth: int) -> Expr:
    expr: Expr = Literal("a")
    for _ in range(depth):
        expr = Repeat(expr, 0, 2) if kind == "repeat" else Alt((Literal("b"), expr))
    return expr


@pytest.mark.parametrize(("kind", "depth"), [("repeat", 1000), ("alternative", 400),
                                             ("alternative", 1000)])
def test_from_ir_refuses_a_nesting_it_cannot_check_or_print(kind: str, depth: int) -> None:
    """Within MAX_NESTING levels, a RecursionError escaped from_ir (the interpreted
    checks: 400 nested alternatives) or came later from the fingerprint, ==, hash and
    pickle (the printer: 1,000 nested repetitions, compiled checks)."""
    ir = GrammarIR({"root": _nested(kind, depth)})
    try:
        grammar = Grammar.from_ir(ir)
    except GrammarError as err:
        assert "nested too deeply" in err.message and "named rules" in err.message
        return
    assert grammar == Grammar.from_ir(ir) and hash(grammar) == hash(Grammar.from_ir(ir))
    assert grammar.to_gbnf() == Grammar.from_ir(GrammarIR({"root": _nested(kind, depth)})).to_gbnf()


def test_a_nesting_too_deep_to_print_or_normalize_is_a_grammar_error() -> None:
    """Compiled, normalize recursed on the C stack over any depth it was given: 100,000
    nested repetitions crashed the process (to_gbnf, normalize_ir, normalize); 1,000
    (within MAX_NESTING) raised RecursionError from the printer."""
    for depth in (1000, 1001, 100_000):
        ir = GrammarIR({"root": _nested("repeat", depth)})
        for write in (to_gbnf, canonical_gbnf):
            with pytest.raises(GrammarError, match="nested too deeply") as info:
                write(ir)
            assert info.value.rules in {("root",), ()}
    for kind in ("repeat", "alternative"):
        deep = _nested(kind, 100_000)
        with pytest.raises(GrammarError, match="the expression is nested too deeply"):
            normalize(deep)
        with pytest.raises(GrammarError, match="rule 'root' is nested too deeply") as info:
            normalize_ir(GrammarIR({"root": deep}))
        assert info.value.rules == ("root",)
    with pytest.raises(GrammarError, match="the expression is nested too deeply"):
        expr_to_gbnf(_nested("repeat", 5000))
    shallow = GrammarIR({"root": _nested("repeat", 50)})
    assert normalize_ir(shallow).rules["root"] == normalize(shallow.rules["root"])
    assert parse_gbnf(to_gbnf(shallow)).rules["root"] == normalize(shallow.rules["root"])
