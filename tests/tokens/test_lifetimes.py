"""What a compiled grammar leaves to Python's garbage collector (docs/masks.md, "Where the
time goes"): nothing once its last reference goes, and few tracked objects per state."""

from __future__ import annotations

import gc

from test_chains import _walk
from test_masks import fast_mask

import gbnfkit
from gbnfkit import Grammar
from gbnfkit.tokens._bytestate import ByteState
from gbnfkit.tokens._compiled import CompiledGrammar


def _live(kind: type) -> int:
    return sum(1 for o in gc.get_objects() if type(o) is kind)


def test_a_compiled_grammar_and_its_states_are_freed_by_reference_counting() -> None:
    """With the collector off, dropping the last reference to a grammar whose masks
    made byte states (looping ones among them) and a counted repetition's chains frees
    the grammar and every state: no reference cycle keeps them for a collection."""
    schema = {
        "type": "object",
        "properties": {"s": {"type": "string", "maxLength": 60}, "t": {"type": "string"}},
    }
    grammar = Grammar.from_json_schema(schema)
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        grammars, states = _live(CompiledGrammar), _live(ByteState)
        compiled, _ = _walk(grammar, '{"s": "' + "ab" * 29 + '", "t": "abcabc"}')
        assert compiled._chains is not None
        made = _live(ByteState) - states
        assert made > 50
        # some state's transitions lead back to itself (the string body of "t")
        assert any(s in s.trans.values() for s in compiled._automaton._intern.values())
        del compiled
        assert _live(CompiledGrammar) == grammars
        assert _live(ByteState) == states
    finally:
        if enabled:
            gc.enable()


def test_a_grammar_compiled_through_a_compiler_is_freed_when_forgotten() -> None:
    from test_chains import _vocabulary

    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        vocabulary = _vocabulary()
        compiler = gbnfkit.GrammarCompiler(vocabulary, cache_size=4)
        grammars = _live(CompiledGrammar)
        compiled = compiler.compile(Grammar.from_gbnf('root ::= "(" [ab]{0,30} ")"'))
        fast_mask(compiled.matcher(), vocabulary.size)
        del compiled
        assert _live(CompiledGrammar) == grammars + 1  # the compiler's cache holds it
        compiler.clear_cache()
        assert _live(CompiledGrammar) == grammars
    finally:
        if enabled:
            gc.enable()
