"""Masks of strings whose pattern the converter writes as its minimal DFA
(docs/schema.md, "Patterns") against the reference, along documents and random walks."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from test_masks import fast_mask, random_walk, reference_mask, synthetic_vocabulary

import gbnfkit
from gbnfkit._grammar import Grammar

URL = r"^(https?:\/\/)?([\da-z\.-]+)\.([a-z\.]{2,6})([\/\w \.-]*)*\/?$"
SCHEMA = {"type": "object", "properties": {
    "u": {"type": "string", "pattern": URL},
    "p": {"type": "string", "pattern": r"^(\.\d+)+\.?$"},
}, "required": ["u", "p"], "additionalProperties": False}
DOC = {"u": "https://www.example.com/a/b.c/d-e f", "p": ".1.22.333."}


def test_dfa_pattern_grammar_is_written_as_dfa() -> None:
    assert "string-dfa" in Grammar.from_json_schema(SCHEMA).to_gbnf()


def test_masks_along_a_document() -> None:
    text = json.dumps(DOC)
    vocabulary = synthetic_vocabulary(text, seed=3)
    grammar = Grammar.from_json_schema(SCHEMA)
    matcher = gbnfkit.CompiledGrammar(grammar, vocabulary).matcher()
    state = grammar.start()
    for ch in text:
        data = ch.encode()
        (token,) = [i for i in range(vocabulary.size) if vocabulary.token_bytes(i) == data][:1]
        expected = reference_mask(state, vocabulary)
        assert np.array_equal(fast_mask(matcher, vocabulary.size), expected), ch
        assert matcher.accept_token(token)
        state = state.feed(data)


@pytest.mark.parametrize("seed", range(4))
def test_random_walks(seed: int) -> None:
    vocabulary = synthetic_vocabulary(json.dumps(DOC), seed=seed)
    random_walk(Grammar.from_json_schema(SCHEMA), vocabulary, random.Random(seed), steps=25)
