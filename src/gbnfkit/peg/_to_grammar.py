"""GBNF generation: the grammar IR of a parser (see docs/peg.md for the exact relation
between the parser's language and the grammar's)."""

from __future__ import annotations

import json

from gbnfkit._errors import GbnfkitError, PegError
from gbnfkit._grammar import Grammar
from gbnfkit.grammar._counts import BLOCK, Blocks, Count, Row, Run, plan_count
from gbnfkit.grammar._ir import (
    ANY,
    Alt,
    CharClass,
    Expr,
    GrammarIR,
    Literal,
    Repeat,
    RuleRef,
    Seq,
)
from gbnfkit.peg._lazy import LazyGrammar
from gbnfkit.peg._nodes import Kind, Parser
from gbnfkit.peg._program import collect_rules
from gbnfkit.peg._until_grammar import until_rules
from gbnfkit.tokens._trigger import Trigger

__all__ = ["build_grammar", "build_lazy_grammar", "leading_literals"]

EMPTY = Literal("")
NOTHING = CharClass((), False)
SPACE_CLASS = CharClass.of([(9, 10), (13, 13), (32, 32)])
HEX = CharClass.of([(48, 57), (65, 70), (97, 102)])
STRING_CHAR = CharClass.of([(0, 0x1F), (34, 34), (92, 92)], negated=True)
ESCAPED = CharClass.of([(ord(c), ord(c)) for c in '"\\/bfnrt'])
STRING_CONTENT = Repeat(
    Alt((STRING_CHAR, Seq((Literal("\\"), Alt((ESCAPED, Seq((Literal("u"),
                                                             Repeat(HEX, 4, 4))))))))),
    0,
    None,
)

def _repeat(item: Expr, lo: int, hi: int | None) -> Expr:
    """``item{lo,hi}``; a bound above 10,000 is written with blocks of 1,000 (blocks of
    blocks for a count of blocks above it), as the JSON Schema converter writes its
    lengths (the same plan, :func:`gbnfkit.grammar._counts.plan_count`): the same
    language, and any bound a parser takes fits the grammar's ``max_repetition``
    (``chars('[a-z]', 0, 10**6)``'s grammar was refused)."""
    return _counted(item, plan_count(lo, hi))


def _counted(item: Expr, plan: Count) -> Expr:
    """The grammar IR of ``plan`` repeating ``item``."""
    if isinstance(plan, Run):
        return Repeat(item, plan.lo, plan.hi)
    if isinstance(plan, Blocks):
        return _counted(Repeat(item, BLOCK, BLOCK), plan.count)
    if isinstance(plan, Row):
        parts = tuple(_counted(item, part) for part in plan.parts)
        return parts[0] if len(parts) == 1 else Seq(parts)
    return Alt(tuple(_counted(item, branch) for branch in plan.branches))


class _Generator:
    def __init__(self, parser: Parser) -> None:
        self.rule_nodes = collect_rules(parser)
        self.rules: dict[str, Expr] = {}
        self.untils: dict[tuple[str, ...], str] = {}
        self.schemas: dict[str, Parser] = {}

    def define(self, name: str, expr: Expr) -> None:
        old = self.rules.get(name)
        if old is not None and old != expr and old != EMPTY:
            raise PegError(f"two different grammars for the rule {name!r}")
        self.rules[name] = expr

    def rule(self, name: str) -> RuleRef:
        if name not in self.rules:
            self.rules[name] = EMPTY  # placeholder while the body is built (recursion)
            self.rules[name] = self.expr(self.rule_nodes[name].children[0])
        return RuleRef(name)

    def expr(self, p: Parser) -> Expr:
        k = p.kind
        if k is Kind.LITERAL:
            return Literal(p.arg)
        if k is Kind.SEQUENCE:
            return Seq(tuple(self.expr(c) for c in p.children))
        if k is Kind.CHOICE:
            if not p.children:
                return NOTHING
            return Alt(tuple(self.expr(c) for c in p.children))
        if k is Kind.REPEAT:
            lo, hi = p.arg
            return _repeat(self.expr(p.children[0]), lo, hi)
        if k is Kind.CHARS:
            _text, klass, lo, hi = p.arg
            return klass if lo == hi == 1 else _repeat(klass, lo, hi)
        if k is Kind.SPACE:
            return Repeat(SPACE_CLASS, 0, None)
        if k is Kind.REST:
            return Repeat(ANY, 0, None)
        if k is Kind.ANY:
            return ANY
        if k in (Kind.EPS, Kind.START, Kind.END, Kind.PEEK):
            return EMPTY
        if k is Kind.NEGATE:
            raise PegError(
                f"negate() has no grammar: {p!r}; use until()/until_one_of(), or hide it "
                "inside schema() with a JSON Schema for the grammar"
            )
        if k is Kind.UNTIL:
            return self.until(p.arg)
        if k is Kind.JSON_STRING_CONTENT:
            if "json-string-content" not in self.rules:
                self.define("json-string-content", STRING_CONTENT)
            return RuleRef("json-string-content")
        if k is Kind.REF:
            return self.rule(p.arg)
        if k is Kind.RULE:
            return self.rule(p.arg[0])
        if k is Kind.SCHEMA:
            return self.schema(p)
        # tag, atomic, define: the first child's language
        return self.expr(p.children[0])

    def until(self, delims: tuple[str, ...]) -> Expr:
        name = self.untils.get(delims)
        if name is None:
            name = f"until-{len(self.untils)}"
            while name in self.rule_nodes:
                name += "-"
            self.untils[delims] = name
            for rule_name, body in until_rules(name, delims).items():
                self.define(rule_name, body)
        return RuleRef(name)

    def schema(self, p: Parser) -> Expr:
        from gbnfkit.schema import json_schema_to_gbnf, regex_to_gbnf
        from gbnfkit.schema._regex import regex_without_gbnf

        name, canonical, raw = p.arg
        seen = self.schemas.get(name)
        if seen is not None:
            if seen != p:
                raise PegError(f"two different schema() nodes are called {name!r}")
            return RuleRef(name)
        self.schemas[name] = p
        if name in self.rules or name in self.rule_nodes:
            raise PegError(f"schema {name!r} has the name of a rule")
        value = json.loads(canonical)
        try:
            if raw:
                # a raw value must not hold what ends the text its parser reads
                child = p.children[0]
                delims: tuple[str, ...] = child.arg if child.kind is Kind.UNTIL else ()
                raw_expr = self.raw_string(value, p, delims)
                if raw_expr is not None:
                    self.define(name, raw_expr)
                    return RuleRef(name)
                pattern = _raw_pattern(value)
                if pattern is not None:
                    text = (regex_without_gbnf(pattern, delims) if delims
                            else regex_to_gbnf(pattern))
                    return self.embed(name, text, strip_ws=False)
            return self.embed(name, json_schema_to_gbnf(value), strip_ws=True)
        except GbnfkitError as error:
            raise PegError(f"schema {name!r}: {error}") from None

    def raw_string(self, value: object, p: Parser, delims: tuple[str, ...]) -> Expr | None:
        """The grammar of a raw (unquoted) string value, or None for the JSON grammar or
        a pattern; constants that hold one of ``delims`` (which end the text the parser
        reads) cannot be written raw and are left out."""
        if not isinstance(value, dict):
            return None
        items = [value["const"]] if "const" in value else value.get("enum")
        if "const" in value or "enum" in value:
            if not (isinstance(items, list) and items and all(isinstance(i, str) for i in items)):
                return None
            kept = [Literal(i) for i in items if not any(d in i for d in delims)]
            if not kept:
                return CharClass.of(())  # matches nothing
            return kept[0] if len(kept) == 1 else Alt(tuple(kept))
        if value.get("type") != "string" or "pattern" in value:
            return None
        # any string: the underlying parser delimits it (an unconstrained .* would not)
        return self.expr(p.children[0])

    def embed(self, name: str, gbnf: str, strip_ws: bool) -> Expr:
        from gbnfkit.grammar._parser import parse_gbnf

        ir = parse_gbnf(gbnf)
        renamed: dict[str, str] = {r: f"{name}-{r}" for r in ir.rules}
        renamed[ir.root] = name
        for old, new in renamed.items():
            body = _rename(ir.rules[old], renamed)
            if old == ir.root and strip_ws:
                body = _strip_ws(body, renamed.get("ws"))
            self.define(new, body)
        return RuleRef(name)


def _raw_pattern(value: object) -> str | None:
    if isinstance(value, dict) and value.get("type") == "string":
        pattern = value.get("pattern")
        if isinstance(pattern, str):
            return pattern
    return None


def _rename(e: Expr, names: dict[str, str]) -> Expr:
    if isinstance(e, RuleRef):
        return RuleRef(names[e.name])
    if isinstance(e, Seq):
        return Seq(tuple(_rename(i, names) for i in e.items))
    if isinstance(e, Alt):
        return Alt(tuple(_rename(o, names) for o in e.options))
    if isinstance(e, Repeat):
        return Repeat(_rename(e.item, names), e.min, e.max)
    return e


def _strip_ws(body: Expr, ws: str | None) -> Expr:
    """The schema root without the whitespace the converter allows around the value."""
    if ws is None or not isinstance(body, Seq):
        return body
    items = list(body.items)
    if items and items[0] == RuleRef(ws):
        items.pop(0)
    if items and items[-1] == RuleRef(ws):
        items.pop()
    return Seq(tuple(items))


def _root_name(taken: dict[str, Expr] | dict[str, Parser]) -> str:
    name = "root"
    while name in taken:
        name = "peg-" + name
    return name


def build_grammar(parser: Parser) -> Grammar:
    """The grammar of ``parser`` (start rule ``root``, or ``peg-root`` if a rule is called
    ``root``)."""
    gen = _Generator(parser)
    body = gen.expr(parser)
    root = _root_name(gen.rule_nodes)
    rules = {root: body, **gen.rules}
    return _to_grammar(rules, root)


def build_lazy_grammar(parser: Parser) -> LazyGrammar:
    """Only the trigger rules (as the root's alternatives) and what they reach."""
    gen = _Generator(parser)
    triggers = [node for node in gen.rule_nodes.values() if node.arg[1]]
    if not triggers:
        raise PegError("a lazy grammar needs at least one trigger_rule() in the parser")
    root = _root_name(gen.rule_nodes)
    body = Alt(tuple(gen.rule(node.arg[0]) for node in triggers))
    words: list[Trigger] = []
    for node in triggers:
        for text in leading_literals(node, gen.rule_nodes):
            trig = Trigger.word(text)
            if trig not in words:
                words.append(trig)
    rules = {root: body, **gen.rules}
    return LazyGrammar(_to_grammar(rules, root), tuple(words))


def _to_grammar(rules: dict[str, Expr], root: str) -> Grammar:
    try:
        return Grammar.from_ir(GrammarIR(rules, root))
    except GbnfkitError as error:
        raise PegError(f"the generated grammar is not valid: {error}") from None


def leading_literals(node: Parser, rules: dict[str, Parser]) -> list[str]:
    """The literal texts ``node`` must start with (one per alternative); raises PegError
    if some alternative does not start with a literal."""
    seen: set[str] = set()

    def walk(p: Parser) -> list[str]:
        k = p.kind
        if k is Kind.LITERAL:
            return [p.arg]
        if k is Kind.SEQUENCE:
            return walk(p.children[0])
        if k is Kind.CHOICE and p.children:
            return [t for c in p.children for t in walk(c)]
        if k in (Kind.TAG, Kind.ATOMIC, Kind.DEFINE, Kind.SCHEMA):
            return walk(p.children[0])
        if k is Kind.RULE:
            return walk(p.children[0])
        if k is Kind.REF and p.arg not in seen:
            seen.add(p.arg)
            return walk(rules[p.arg])
        raise PegError(
            f"the trigger rule {node.arg[0]!r} must start with a literal (its trigger word), "
            f"not {p!r}"
        )

    return walk(node.children[0])
