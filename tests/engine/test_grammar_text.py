"""A grammar made from GBNF text keeps the text, not its IR (``_grammar.py``): what it
gives back (IR, text, fingerprint, equality, pickle) is the same as a grammar made from
the parsed IR, and no IR stays alive with it for the garbage collector."""

from __future__ import annotations

import gc
import pickle

import pytest

from gbnfkit import Grammar, GrammarError, Limits, json_schema_to_gbnf
from gbnfkit.grammar._ir import Alt, GrammarIR, Seq
from gbnfkit.grammar._parser import parse_gbnf

SCHEMAS = [
    {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}},
     "required": ["a"]},
    {"type": "array", "items": {"enum": ["x", 1, None]}, "minItems": 1, "maxItems": 4},
    {"anyOf": [{"type": "number", "minimum": 3}, {"type": "string", "pattern": "^[a-z]+$"}]},
]
TEXTS = [
    'root ::= "x" y   # a comment\ny ::= ("z" | [0-9]){2,4}',
    'start ::= item+\nitem ::= [^"\\\\] | "\\\\" .',
]


def _live(kind: type) -> int:
    return sum(1 for o in gc.get_objects() if type(o) is kind)


def _pairs() -> list[tuple[Grammar, Grammar]]:
    """(made from text, made from the IR of the same text) for texts and schemas."""
    out = []
    for text, root in [(TEXTS[0], "root"), (TEXTS[1], "start")]:
        out.append((Grammar.from_gbnf(text, root), Grammar(parse_gbnf(text, root))))
    for schema in SCHEMAS:
        out.append((Grammar.from_json_schema(schema),
                    Grammar(parse_gbnf(json_schema_to_gbnf(schema)))))
    return out


def test_no_ir_stays_alive_with_a_grammar_made_from_text() -> None:
    # (the converter keeps the IR of its fixed spellings, made by a first conversion,
    # for every later one: made here first)
    [Grammar.from_json_schema(s) for s in SCHEMAS]
    gc.collect()
    irs, seqs, alts = _live(GrammarIR), _live(Seq), _live(Alt)
    grammars = [Grammar.from_json_schema(s) for s in SCHEMAS]
    grammars.append(Grammar.from_gbnf(TEXTS[0]))
    gc.collect()
    assert _live(GrammarIR) == irs
    assert _live(Seq) == seqs and _live(Alt) == alts
    # asking for its text, fingerprint, equality or pickle does not keep one either
    for g in grammars:
        assert g.to_gbnf() and g.fingerprint and g == Grammar.from_gbnf(g.to_gbnf())
        pickle.dumps(g)
        repr(g)
    gc.collect()
    assert _live(GrammarIR) == irs
    # a grammar made from an IR keeps the IR it was given
    ir = parse_gbnf(TEXTS[0])
    kept = Grammar(ir)
    assert kept.ir is ir


def test_a_grammar_made_from_text_gives_back_what_one_made_from_its_ir_does() -> None:
    for from_text, from_ir in _pairs():
        assert from_text.ir == from_ir.ir
        assert from_text.ir.positions == from_ir.ir.positions
        assert from_text.root == from_ir.root
        assert from_text.to_gbnf() == from_ir.to_gbnf()
        assert from_text.fingerprint == from_ir.fingerprint
        assert from_text == from_ir and from_ir == from_text
        assert hash(from_text) == hash(from_ir)
        assert repr(from_text) == repr(from_ir)
        assert from_text.program.rule_names == from_ir.program.rule_names
        again = pickle.loads(pickle.dumps(from_text))
        assert again == from_ir and again.root == from_ir.root
        assert again.limits == from_text.limits


def test_the_ir_is_parsed_once_when_asked_then_kept() -> None:
    g = Grammar.from_gbnf(TEXTS[1], "start")
    ir = g.ir
    assert ir is g.ir
    assert ir.root == "start" and set(ir.rules) == {"start", "item"}
    assert ir.positions == parse_gbnf(TEXTS[1], "start").positions


def test_equal_texts_are_equal_grammars_whatever_their_limits() -> None:
    a = Grammar.from_gbnf(TEXTS[0])
    b = Grammar.from_gbnf(TEXTS[0], limits=Limits(max_stacks=77))
    c = Grammar.from_gbnf(TEXTS[0].replace('"z"', '"w"'))
    other_root = Grammar.from_gbnf(TEXTS[0], root="y")
    assert a == Grammar.from_gbnf(TEXTS[0]) and a == b and hash(a) == hash(b)
    assert a != c and a != other_root and other_root.root == "y"
    # spelled differently, the same grammar: equal by the canonical text
    assert a == Grammar.from_gbnf(TEXTS[0].replace("   # a comment", ""))


def test_limits_are_kept_for_parsing_again() -> None:
    text = 'root ::= "a"{0,300}'
    small = Limits(max_repetition=200)
    with pytest.raises(GrammarError, match="max_repetition"):
        Grammar.from_gbnf(text, limits=small)
    lim = Limits(max_repetition=400)
    g = Grammar.from_gbnf(text, limits=lim)
    assert g.ir.rules["root"] == parse_gbnf(text, limits=lim).rules["root"]
    assert g.to_gbnf() == Grammar(parse_gbnf(text, limits=lim), limits=lim).to_gbnf()
    assert pickle.loads(pickle.dumps(g)).limits == lim
