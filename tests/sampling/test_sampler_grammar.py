"""Sampler with a grammar: both modes, every token allowed, EOS only at an end, the
temperature-only equivalence of the modes and the documented difference with truncation."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from gbnfkit import (
    ArgumentError,
    Grammar,
    InputRejected,
    Sampler,
    SamplingError,
    SamplingParams,
    Trigger,
    Vocabulary,
    VocabularyError,
    compile,
)
from gbnfkit.sampling._chain import probabilities

# ids 0-9 are the digits, then letters and pieces, a special token, EOS last
PIECES = [str(d).encode() for d in range(10)] + [
    b"a",
    b"b",
    b"12",
    b"[",
    b"]",
    b",",
    b"[1",
    b"3,",
    b",4]",
    b"]]",
    b"ab",
    b"x",
]
SPECIAL = len(PIECES)
EOS = len(PIECES) + 1
VOCABULARY = Vocabulary(
    [*PIECES, b"<tool>", None], eos_token_ids=[EOS], special_token_ids=[SPECIAL]
)
LIST = compile(Grammar.from_gbnf('root ::= "[" [0-9]+ ("," [0-9]+)* "]"'), VOCABULARY)
DIGITS = compile(Grammar.from_gbnf("root ::= [0-9]+"), VOCABULARY)
WIDTH = 40  # the model's logits are wider than the vocabulary: ids 32-39 are padding


def text_of(ids: list[int]) -> str:
    return b"".join(VOCABULARY.tokens[t] or b"" for t in ids if t != EOS).decode()


def decode(sampler: Sampler, logits_for_step: object, steps: int = 40) -> list[int]:
    """Sample and accept until EOS; check each token with the matcher first."""
    out: list[int] = []
    matcher = sampler.matcher
    assert matcher is not None
    for step in range(steps):
        logits = logits_for_step(step) if callable(logits_for_step) else logits_for_step
        token = sampler.sample(logits)
        assert matcher.is_allowed(token), (out, token)
        if token == EOS:
            assert matcher.is_complete
        sampler.accept(token)
        out.append(token)
        if token == EOS:
            break
    return out


logit_rows = st.lists(
    st.floats(-8.0, 8.0, allow_nan=False), min_size=WIDTH, max_size=WIDTH
).map(lambda v: np.array(v, dtype=np.float32))

params_strategy = st.builds(
    SamplingParams,
    temperature=st.sampled_from([0.0, 0.5, 1.0, 1.5]),
    top_k=st.sampled_from([0, 1, 2, 5, 40]),
    top_p=st.sampled_from([1.0, 0.9, 0.3]),
    min_p=st.sampled_from([0.0, 0.05, 0.5]),
    typical_p=st.sampled_from([1.0, 0.7]),
    repeat_penalty=st.sampled_from([1.0, 1.3]),
    xtc_probability=st.sampled_from([0.0, 0.7]),
    top_n_sigma=st.sampled_from([-1.0, 1.0]),
    mirostat=st.sampled_from([0, 0, 0, 1, 2]),
    grammar_first=st.booleans(),
    seed=st.integers(0, 1000),
)


@settings(max_examples=120, deadline=None)
@given(params_strategy, st.lists(logit_rows, min_size=1, max_size=6))
def test_every_sampled_token_is_allowed_and_eos_ends_a_match(
    params: SamplingParams, rows: list[np.ndarray]
) -> None:
    for grammar in (LIST, DIGITS):
        sampler = Sampler(params, grammar.matcher())
        rows_eos = [r.copy() for r in rows]
        for r in rows_eos:
            r[EOS] += 3.0  # the model wants to stop early and often
            r[32:] = 9.0  # and likes its padding ids
        out = decode(sampler, lambda step, rr=rows_eos: rr[step % len(rr)])
        if out and out[-1] == EOS:
            assert grammar.grammar.match(text_of(out)).status == "accept"
        else:
            assert grammar.grammar.match(text_of(out)).status in ("accept", "prefix")


@pytest.mark.parametrize("grammar_first", [False, True])
def test_eos_is_sampled_only_where_the_grammar_may_end(grammar_first: bool) -> None:
    logits = np.zeros(WIDTH, dtype=np.float32)
    logits[EOS] = 30.0  # the model always wants to stop
    logits[10] = 20.0  # "a", never allowed
    for seed in range(10):
        params = SamplingParams(seed=seed, grammar_first=grammar_first)
        out = decode(Sampler(params, LIST.matcher()), logits)
        assert out[-1] == EOS and out.count(EOS) == 1
        assert LIST.grammar.match(text_of(out)).status == "accept"


def frequencies(sampler: Sampler, logits: np.ndarray, n: int) -> np.ndarray:
    counts = np.zeros(WIDTH)
    for _ in range(n):
        counts[sampler.sample(logits)] += 1
    return counts / n


START_LOGITS = np.zeros(WIDTH, dtype=np.float32)
START_LOGITS[:10] = np.linspace(-1.0, 1.0, 10)  # digits, all allowed by DIGITS
START_LOGITS[10:12] = [2.5, 2.0]  # "a", "b": likely but never allowed
START_LOGITS[12] = 0.5  # "12": allowed
START_LOGITS[20] = 1.5  # "[1": refused


def masked_distribution(logits: np.ndarray, temperature: float, allowed: np.ndarray) -> np.ndarray:
    scaled = logits.astype(np.float64) / temperature
    weights = np.where(allowed, np.exp(scaled - scaled.max()), 0.0)
    return weights / weights.sum()


def test_temperature_only_chains_give_the_same_probabilities_in_both_modes() -> None:
    params = SamplingParams(top_k=0, top_p=1.0, min_p=0.0, temperature=0.7, seed=11)
    allowed = np.zeros(WIDTH, dtype=bool)
    allowed[DIGITS.matcher().allowed_token_ids()] = True
    expected = masked_distribution(START_LOGITS, 0.7, allowed)
    # grammar first: the chain's own distribution is the masked softmax
    ids, probs = Sampler(params.replace(grammar_first=True), DIGITS.matcher()).distribution(
        START_LOGITS
    )
    got = np.zeros(WIDTH)
    got[ids] = probs
    assert got == pytest.approx(expected, abs=1e-7)  # float32 logits
    # the fast path (sample, check, resample masked) draws from the same distribution
    for grammar_first in (False, True):
        sampler = Sampler(params.replace(grammar_first=grammar_first), DIGITS.matcher())
        observed = frequencies(sampler, START_LOGITS, 20_000)
        assert np.abs(observed - expected).max() < 0.012
        assert observed[~allowed].sum() == 0


def test_truncating_chains_differ_between_the_modes_as_documented() -> None:
    # top_k=4 on the raw logits keeps "a", "b", "[1" (refused) and "9" (allowed): the fast
    # path returns "9" whenever the raw chain draws it, and resamples from the masked
    # chain (top 4 of the allowed tokens) otherwise, so "9" is more likely than with
    # grammar first.
    params = SamplingParams(top_k=4, top_p=1.0, min_p=0.0, temperature=1.0, seed=3)
    first = Sampler(params.replace(grammar_first=True), DIGITS.matcher())
    ids, probs = first.distribution(START_LOGITS)
    grammar_first = np.zeros(WIDTH)
    grammar_first[ids] = probs
    # the fast path in closed form: the raw chain's allowed mass stays where it is, the
    # refused mass is redistributed by the masked chain
    raw_ids, raw_probs = probabilities(_raw_chain(params))
    raw = np.zeros(WIDTH)
    raw[raw_ids] = raw_probs
    allowed = np.zeros(WIDTH, dtype=bool)
    allowed[DIGITS.matcher().allowed_token_ids()] = True
    fast = np.where(allowed, raw, 0.0) + raw[~allowed].sum() * grammar_first
    assert np.abs(fast - grammar_first).sum() > 0.1  # the documented difference
    observed_fast = frequencies(Sampler(params, DIGITS.matcher()), START_LOGITS, 20_000)
    assert np.abs(observed_fast - fast).max() < 0.012
    observed_first = frequencies(first, START_LOGITS, 20_000)
    assert np.abs(observed_first - grammar_first).max() < 0.012


def _raw_chain(params: SamplingParams) -> object:
    from gbnfkit.sampling._candidates import Candidates
    from gbnfkit.sampling._chain import run_chain

    sampler = Sampler(params, vocabulary=VOCABULARY)
    row = START_LOGITS[: VOCABULARY.size]
    return run_chain(Candidates(row), params, sampler._state)


def test_grammar_first_never_consults_is_allowed_and_fast_path_rarely_masks() -> None:
    class Counting:
        def __init__(self) -> None:
            self.inner = DIGITS.matcher()
            self.vocabulary = VOCABULARY
            self.masks = 0

        def is_allowed(self, token_id: int) -> bool:
            return self.inner.is_allowed(token_id)

        def accept_token(self, token_id: int) -> bool:
            return self.inner.accept_token(token_id)

        def fill_bitmask(self, bitmask: np.ndarray, row: int = 0) -> None:
            self.masks += 1
            self.inner.fill_bitmask(bitmask, row)

        def reset(self) -> None:
            self.inner.reset()

    logits = np.zeros(WIDTH, dtype=np.float32)
    logits[3] = 10.0  # the model is sure of an allowed token
    counting = Counting()
    sampler = Sampler(SamplingParams(seed=0), counting)
    for _ in range(50):
        assert sampler.sample(logits) == 3
    assert counting.masks == 0  # the fast path never needed the mask
    sampler = Sampler(SamplingParams(seed=0, grammar_first=True), counting)
    sampler.sample(logits)
    assert counting.masks == 1


def test_accept_advances_the_matcher_and_refuses_what_the_grammar_refuses() -> None:
    sampler = Sampler(SamplingParams(seed=0, repeat_penalty=2.0, temperature=0.0), LIST.matcher())
    with pytest.raises(InputRejected):
        sampler.accept(10)  # "a"
    sampler.accept(13)  # "["
    sampler.accept(1)
    logits = np.zeros(WIDTH, dtype=np.float32)
    logits[1] = 1.0  # "1" again, but penalised: 0.5
    logits[2] = 0.8
    assert sampler.sample(logits) == 2
    with pytest.raises(InputRejected):
        sampler.accept(EOS)  # "[1" is not a list yet
    assert sampler.sample(logits) == 2  # nothing changed: same penalty
    sampler.reset()
    assert sampler.matcher is not None and sampler.matcher.steps == 0


def test_torch_logits_and_padding_with_a_grammar() -> None:
    logits = torch.zeros(1, WIDTH)
    logits[0, 32:] = 50.0  # padding
    logits[0, 10] = 40.0  # refused
    for grammar_first in (False, True):
        sampler = Sampler(SamplingParams(seed=1, grammar_first=grammar_first), LIST.matcher())
        out = decode(sampler, logits)
        assert all(t < VOCABULARY.size for t in out)


def test_a_grammar_whose_allowed_tokens_are_all_banned_is_a_clear_error() -> None:
    params = SamplingParams(logit_bias={13: -math.inf, 16: -math.inf})  # "[" and "[1"
    for grammar_first in (False, True):
        sampler = Sampler(params.replace(grammar_first=grammar_first), LIST.matcher())
        with pytest.raises(SamplingError, match="grammar allows"):
            sampler.sample(np.zeros(WIDTH, dtype=np.float32))


def test_a_matcher_whose_vocabulary_cannot_be_told_needs_vocabulary() -> None:
    class Bare:
        def is_allowed(self, token_id: int) -> bool:
            return True

        def accept_token(self, token_id: int) -> bool:
            return True

        def fill_bitmask(self, bitmask: np.ndarray, row: int = 0) -> None:
            bitmask[...] = -1

        def reset(self) -> None:
            pass

    with pytest.raises(ArgumentError, match="vocabulary"):
        Sampler(SamplingParams(), Bare())
    sampler = Sampler(SamplingParams(seed=0), Bare(), vocabulary=VOCABULARY)
    assert sampler.vocabulary is VOCABULARY
    assert sampler.sample(np.zeros(WIDTH, dtype=np.float32)) < VOCABULARY.size


def test_the_sampler_reads_the_vocabulary_of_gbnfkit_matchers() -> None:
    for matcher in (LIST.matcher(), LIST.matcher(triggers=[Trigger.word("[")])):
        assert Sampler(SamplingParams(), matcher).vocabulary is matcher.vocabulary


def test_a_vocabulary_other_than_the_matchers_is_refused() -> None:
    # the same size, two tokens swapped: masks would have been read with the wrong ids
    tokens = list(VOCABULARY.tokens)
    tokens[0], tokens[1] = tokens[1], tokens[0]
    swapped = Vocabulary(tokens, eos_token_ids=[EOS], special_token_ids=[SPECIAL])
    equal = Vocabulary(list(VOCABULARY.tokens), eos_token_ids=[EOS], special_token_ids=[SPECIAL])
    for matcher in (DIGITS.matcher(), DIGITS.matcher(triggers=[Trigger.word("[")])):
        with pytest.raises(VocabularyError, match="another vocabulary"):
            Sampler(SamplingParams(), matcher, vocabulary=swapped)
        assert Sampler(SamplingParams(), matcher, vocabulary=equal).vocabulary is equal


@pytest.mark.parametrize(
    "params",
    [
        SamplingParams(top_k=0, top_p=1.0, min_p=0.0, seed=1),  # dense all the way
        SamplingParams(seed=1),
        SamplingParams(samplers=(), seed=1),
        SamplingParams(top_k=0, top_p=1.0, min_p=0.0, dynatemp_range=0.5, seed=1),
    ],
)
def test_distribution_lists_only_tokens_the_draw_can_pick(params: SamplingParams) -> None:
    # the grammar refuses some, logit_bias bans one, one logit is NaN: none is listed,
    # whether the chain left the candidates dense or sparse
    logits = START_LOGITS.copy()
    logits[3] = np.nan
    sampler = Sampler(params.replace(logit_bias={5: -math.inf}), DIGITS.matcher())
    ids, probs = sampler.distribution(logits)
    allowed = set(DIGITS.matcher().allowed_token_ids().tolist()) - {3, 5}
    assert set(ids.tolist()) <= allowed and len(ids) == len(probs)
    assert probs.sum() == pytest.approx(1.0) and (probs > 0).all()
