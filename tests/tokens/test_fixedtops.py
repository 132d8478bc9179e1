"""Fixed top splits: the top frames every schema grammar shares, split once per
vocabulary (``tokens/_fixedtops.py``; docs/masks.md, "Fixed top splits")."""

from __future__ import annotations

import json

from test_prewarm import _check, _vocabulary

import gbnfkit
from gbnfkit._grammar import Grammar
from gbnfkit.tokens._fixedtops import top_filter
from gbnfkit.tokens._index import VocabularyIndex
from gbnfkit.tokens._prewarm import prewarm, top_documents

_SPACES = tuple(" " * n for n in range(1, 9)) + tuple(" " * n + "1" for n in range(1, 6))
_VALUES = ('": ', '":', ", ", "-1", "1.5", "e3", "12", "tr", "ue", "fal", "null", '"a', '""')


def test_top_documents_are_instances() -> None:
    for grammar, texts in top_documents():
        for text in texts:
            assert grammar.start().feed(text.encode()).is_complete, text


def test_prewarm_keeps_small_value_tops_shared_by_both_grammars() -> None:
    """The kept forms are the converter's value rules' (whitespace, strings, numbers,
    literals): small, and each key's filter kept; nothing else of the prewarm stays."""
    index = VocabularyIndex(_vocabulary(_SPACES + _VALUES))
    assert not index.fixed_tops
    prewarm(index)
    assert index.fixed_tops and index.fixed_top_filters and not index.shared
    handing = [top for top in index.fixed_tops.values() if top.handover]
    assert handing  # whitespace and numbers may finish inside a token


def test_fixed_tops_serve_other_schema_grammars_exactly() -> None:
    vocabulary = _vocabulary(_SPACES + _VALUES)
    compiler = gbnfkit.GrammarCompiler(vocabulary)
    index = compiler._index
    schema = {
        "type": "object",
        "properties": {
            "price": {"type": "number"},
            "count": {"type": "integer"},
            "name": {"type": "string"},
            "ok": {"type": "boolean"},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
    }
    grammar = Grammar.from_json_schema(schema)
    before = index.fixed_top_hits
    compiled = compiler.compile(grammar)
    document = {"price": -1.5e3, "count": 12, "name": "a", "ok": True, "tags": ["a", ""]}
    for indent in (None, 1):
        text = json.dumps(document, indent=indent)
        for end in range(1, len(text)):
            _check(compiled, grammar, text[:end])
    assert index.fixed_top_hits > before


def test_a_fixed_top_never_serves_another_form() -> None:
    """`[\\t\\n\\r ]{0,3}` is written as the converter's whitespace is (`{0,20}`), so
    its top keys pass the filter of the whitespace's kept splits; but three links are
    in reach, not twenty: a kept split served to it would allow four spaces."""
    vocabulary = _vocabulary(_SPACES + _VALUES)
    compiler = gbnfkit.GrammarCompiler(vocabulary)
    index = compiler._index
    grammar = Grammar.from_gbnf('root ::= "[" [\\t\\n\\r ]{0,3} "1" "]"')
    compiled = compiler.compile(grammar)
    program = compiled.automaton.program
    before = index.fixed_top_hits
    for text in ("[", "[ ", "[  ", "[   "):
        _check(compiled, grammar, text)
    assert index.fixed_top_hits == before
    # it was looked up: a top key of it passes a kept filter
    assert any(
        top_filter(key, program.kind, program.arg, program.rules) in index.fixed_top_filters
        for key in compiled._tops
    )
    matcher = compiled.matcher()
    matcher.accept_text("[")
    assert not matcher.is_allowed(vocabulary.tokens.index(b"    "))
    assert matcher.is_allowed(vocabulary.tokens.index(b"   1"))
