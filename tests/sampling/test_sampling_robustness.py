"""Whatever the input, SamplingParams and Sampler raise only gbnfkit's own exceptions."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from gbnfkit import GbnfkitError, Grammar, Sampler, SamplingParams, Vocabulary, compile

FIELDS = [f.name for f in dataclasses.fields(SamplingParams)]

junk = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=5),
    st.binary(max_size=5),
    st.lists(st.one_of(st.integers(-3, 3), st.text(max_size=3), st.none()), max_size=4),
    st.dictionaries(
        st.one_of(st.integers(-(2**40), 2**40), st.text(max_size=2)),
        st.one_of(st.floats(), st.integers(-(2**1100), 2**1100), st.text(max_size=2)),
        max_size=3,
    ),
    st.sampled_from([np.int64(3), np.float32(0.5), np.bool_(True), "top_k", "\ud800", object()]),
)


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(FIELDS), junk)
def test_params_raise_only_gbnfkit_errors(field: str, value: object) -> None:
    try:
        params = SamplingParams(**{field: value})
    except GbnfkitError:
        return
    hash(params)  # whatever was accepted is a usable value
    try:
        vocabulary = Vocabulary([b"a", b"b", b":", None], eos_token_ids=[3])
        sampler = Sampler(params, vocabulary=vocabulary)
        sampler.accept(sampler.sample(np.array([0.0, 1.0, 2.0, 0.5], dtype=np.float32)))
    except GbnfkitError:
        pass


VOCABULARY = Vocabulary([b"a", b"b", b"ab", None], eos_token_ids=[3])
GRAMMAR = compile(Grammar.from_gbnf('root ::= "ab"+'), VOCABULARY)

logit_inputs = st.one_of(
    st.lists(st.floats(width=32), min_size=0, max_size=9).map(
        lambda v: np.array(v, dtype=np.float32)
    ),
    st.lists(st.integers(-5, 5), min_size=1, max_size=9).map(np.array),
    st.sampled_from(
        [
            np.zeros((2, 4), dtype=np.float32),
            np.zeros((1, 1, 4), dtype=np.float32),
            np.zeros(4, dtype=np.complex64),
            np.array(["a", "b", "c", "d"]),
            np.zeros(4, dtype=object),
            np.zeros(4, dtype=bool),
            torch.zeros(4, dtype=torch.complex64),
            torch.zeros(1, 4, dtype=torch.float16),
            torch.tensor([math.nan] * 4),
            [0.0, 1.0, 2.0, 3.0],
            "logits",
            None,
        ]
    ),
)


@settings(max_examples=300, deadline=None)
@given(logit_inputs, junk, st.booleans())
def test_sampler_raises_only_gbnfkit_errors(logits: object, token: object, first: bool) -> None:
    sampler = Sampler(SamplingParams(seed=0, grammar_first=first), GRAMMAR.matcher())
    try:
        token_id = sampler.sample(logits)
        assert GRAMMAR.matcher().is_allowed(token_id)
    except GbnfkitError:
        pass
    for value in (token, 2**40, -1):
        try:
            sampler.accept(value)  # type: ignore[arg-type]
        except GbnfkitError:
            pass
    try:
        sampler.extend_history([token])  # type: ignore[list-item]
    except GbnfkitError:
        pass
    try:
        Sampler(token, None)  # type: ignore[arg-type]
    except GbnfkitError:
        pass
