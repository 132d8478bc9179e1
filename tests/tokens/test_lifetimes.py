"""What a compiled grammar leaves to Python's garbage collector (docs/masks.md, "Where the
time goes"): nothing once its last reference goes, and few tracked objects per state."""

from __future__ import annotations

import gc

from test_chains import _walk
from test_masks import fast_mask

import gbnfkit
from gbnfkit import Grammar
from gbnfkit.tokens._bytestate import DEAD, ByteState
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
        numbered = [s for s in compiled._automaton.numbering.states if s is not None]
        assert any(s.num in s.trans.values() for s in numbered)
        del compiled, numbered
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


def test_states_refer_to_no_state_and_their_transitions_are_not_tracked() -> None:
    """A state's transition cache holds state numbers (a dict of ints, which the
    collector does not track): no state refers to another, so a full collection
    traverses one object per state, not two, and no cycle of states exists."""
    schema = {"type": "object", "properties": {"s": {"type": "string"}, "n": {"type": "integer"}}}
    compiled, _ = _walk(Grammar.from_json_schema(schema), '{"s": "abcabc", "n": 12}')
    automaton = compiled._automaton
    numbered = [s for s in automaton.numbering.states if s is not None]
    stepped = [s for s in numbered if s.trans]
    assert len(stepped) > 10
    for state in numbered:
        assert automaton.numbered(state.num) is state
        assert not gc.is_tracked(state.trans)
        assert not any(type(o) is ByteState for o in gc.get_referents(state))
        assert all(automaton.numbered(n) is not None or n == DEAD for n in state.trans.values())
