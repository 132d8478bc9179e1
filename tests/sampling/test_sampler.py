"""Sampler without a grammar: seeds, torch tensors, padding ids, penalties, errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from gbnfkit import (
    ArgumentError,
    Sampler,
    SamplingError,
    SamplingParams,
    Vocabulary,
    VocabularyError,
    sample_batch,
)

RNG = np.random.default_rng(1234)
LOGITS = (RNG.standard_normal(5000) * 3).astype(np.float32)


def tokens(sampler: Sampler, logits: object, n: int = 20, accept: bool = False) -> list[int]:
    out = []
    for _ in range(n):
        token = sampler.sample(logits)
        out.append(token)
        if accept:
            sampler.accept(token)
    return out


@pytest.mark.parametrize(
    "params",
    [
        SamplingParams(seed=7),
        SamplingParams(seed=7, top_k=0, top_p=1.0, min_p=0.0),
        SamplingParams(seed=7, top_k=0, top_p=0.5, min_p=0.0, typical_p=0.9),
        SamplingParams(seed=7, xtc_probability=0.5, xtc_threshold=0.05, top_k=100),
        SamplingParams(seed=7, mirostat=1),
        SamplingParams(seed=7, mirostat=2),
        SamplingParams(seed=7, repeat_penalty=1.3, frequency_penalty=0.2, presence_penalty=0.1),
        SamplingParams(seed=7, dynatemp_range=0.5, top_n_sigma=1.0),
    ],
)
def test_same_seed_same_logits_same_tokens(params: SamplingParams) -> None:
    first = tokens(Sampler(params), LOGITS, accept=True)
    second = tokens(Sampler(params), LOGITS, accept=True)
    assert first == second
    again = Sampler(params)
    tokens(again, LOGITS, accept=True)
    again.reset()
    assert tokens(again, LOGITS, accept=True) == first
    other = tokens(Sampler(params.replace(seed=8)), LOGITS, accept=True)
    if params.mirostat == 0 and params.top_k != 40:
        assert other != first  # wide distributions: another seed gives other tokens


def test_torch_tensors_give_the_numpy_tokens() -> None:
    params = SamplingParams(seed=3, top_k=0, top_p=0.9)
    expected = tokens(Sampler(params), LOGITS)
    assert tokens(Sampler(params), torch.from_numpy(LOGITS)) == expected
    assert tokens(Sampler(params), torch.from_numpy(LOGITS).reshape(1, -1)) == expected
    assert tokens(Sampler(params), LOGITS.reshape(1, -1)) == expected
    as64 = torch.from_numpy(LOGITS.astype(np.float64))
    assert tokens(Sampler(params), as64) == expected
    half = torch.from_numpy(LOGITS).to(torch.bfloat16)
    assert all(0 <= t < LOGITS.shape[0] for t in tokens(Sampler(params), half))
    grad = torch.from_numpy(LOGITS.copy()).requires_grad_(True)
    assert tokens(Sampler(params), grad) == expected


def test_logits_are_never_modified() -> None:
    logits = LOGITS.copy()
    sampler = Sampler(
        SamplingParams(
            seed=1,
            repeat_penalty=1.5,
            logit_bias={0: -math.inf, 1: 3.0},
            temperature=0.5,
            dry_multiplier=1.0,
            dry_sequence_breakers=(),
        )
    )
    for token in [1, 2, 1, 2, 1, 2, 1]:
        sampler.accept(token)
    tokens(sampler, logits, 5)
    tensor = torch.from_numpy(logits)
    tokens(sampler, tensor, 5)
    assert (logits == LOGITS).all()


def test_batch_helper_samples_each_row_with_its_sampler() -> None:
    params = SamplingParams(seed=5)
    batch = np.stack([LOGITS, -LOGITS])
    one = [Sampler(params).sample(LOGITS), Sampler(params).sample(-LOGITS)]
    assert sample_batch([Sampler(params), Sampler(params)], batch) == one
    assert sample_batch([Sampler(params), Sampler(params)], torch.from_numpy(batch)) == one
    with pytest.raises(ArgumentError):
        sample_batch([Sampler(params)], batch)
    with pytest.raises(ArgumentError):
        Sampler(params).sample(batch)


def test_batch_helper_refuses_anything_but_a_sequence_of_samplers() -> None:
    batch = np.stack([LOGITS, -LOGITS])
    pair = [Sampler(SamplingParams(seed=5)), Sampler(SamplingParams(seed=5))]
    for samplers in (iter(pair), (s for s in pair), pair[0], {0: pair[0], 1: pair[1]}, None):
        with pytest.raises(ArgumentError, match="sequence of Sampler"):
            sample_batch(samplers, batch)  # type: ignore[arg-type]
    assert len(sample_batch(tuple(pair), batch)) == 2


def test_padding_ids_beyond_the_vocabulary_are_never_sampled() -> None:
    vocabulary = Vocabulary([bytes([65 + i]) for i in range(20)] + [None], eos_token_ids=[20])
    logits = np.zeros(64, dtype=np.float32)
    logits[21:] = 50.0  # padding the model may still score
    for params in (SamplingParams(seed=0), SamplingParams(seed=0, temperature=0.0)):
        sampler = Sampler(params, vocabulary=vocabulary)
        assert all(t < 21 for t in tokens(sampler, logits, 50))
    with pytest.raises(VocabularyError):
        Sampler(vocabulary=vocabulary).sample(np.zeros(10, dtype=np.float32))


def test_greedy_takes_the_largest_penalised_logit() -> None:
    logits = np.array([1.0, 5.0, 4.0, 3.0], dtype=np.float32)
    sampler = Sampler(SamplingParams(temperature=0.0, repeat_penalty=2.0))
    assert sampler.sample(logits) == 1
    sampler.accept(1)  # 5 / 2 = 2.5 < 4
    assert sampler.sample(logits) == 2
    sampler.extend_history([2])  # 4 / 2 = 2 < 3
    assert sampler.sample(logits) == 3
    sampler.reset()
    assert sampler.sample(logits) == 1


def test_logit_bias_bans_and_favours() -> None:
    logits = np.array([1.0, 5.0, 4.0, 3.0], dtype=np.float32)
    banned = Sampler(SamplingParams(temperature=0.0, logit_bias={1: -math.inf}))
    assert banned.sample(logits) == 2
    favoured = Sampler(SamplingParams(seed=2, logit_bias={0: 100.0}))
    assert set(tokens(favoured, logits)) == {0}
    with pytest.raises(SamplingError) as caught:
        Sampler(SamplingParams(logit_bias={4: 1.0}), vocabulary=Vocabulary([b"a"] * 4))
    assert caught.value.field == "logit_bias"


def test_no_token_left_is_one_clear_error() -> None:
    everything_banned = SamplingParams(logit_bias={0: -math.inf, 1: -math.inf})
    with pytest.raises(SamplingError, match="-inf"):
        Sampler(everything_banned).sample(np.zeros(2, dtype=np.float32))
    with pytest.raises(SamplingError):
        Sampler().sample(np.full(3, -np.inf, dtype=np.float32))


def test_nan_logits_are_never_sampled_and_inf_wins() -> None:
    logits = np.array([np.nan, 0.0, np.nan, 1.0], dtype=np.float32)
    assert set(tokens(Sampler(SamplingParams(seed=1, top_k=0)), logits, 50)) <= {1, 3}
    logits = np.array([0.0, np.inf, 3.0], dtype=np.float32)
    assert set(tokens(Sampler(SamplingParams(seed=1)), logits, 20)) == {1}


def test_bad_logits_raise_argument_errors() -> None:
    with pytest.raises(ArgumentError):
        Sampler().sample([0.1, 0.2])
    with pytest.raises(ArgumentError):
        Sampler().sample(np.zeros((2, 2, 2), dtype=np.float32))
    with pytest.raises(ArgumentError):
        Sampler().sample(np.zeros(0, dtype=np.float32))
    with pytest.raises(VocabularyError):
        Sampler().accept(-1)


def test_dry_needs_a_vocabulary_for_its_breakers() -> None:
    with pytest.raises(SamplingError) as caught:
        Sampler(SamplingParams(dry_multiplier=0.8))
    assert caught.value.field == "dry_sequence_breakers"
    Sampler(SamplingParams(dry_multiplier=0.8, dry_sequence_breakers=()))


def test_dry_breakers_from_the_vocabulary_stop_a_repeat() -> None:
    # tokens: 0 "a", 1 "b", 2 "c", 3 ":" , 4 "x:" (contains the breaker), 5 "d"
    vocabulary = Vocabulary([b"a", b"b", b"c", b":", b"x:", b"d"])
    params = SamplingParams(
        temperature=0.0, dry_multiplier=5.0, dry_base=2.0, dry_allowed_length=1, top_k=0
    )
    logits = np.array([0.0, 0.0, 3.0, 0.0, 0.0, 1.0], dtype=np.float32)
    free = Sampler(params.replace(dry_sequence_breakers=()), vocabulary=vocabulary)
    free.extend_history([0, 1, 2, 0, 1])  # "a b" repeats; "c" would extend it
    assert free.sample(logits) == 5  # c: 3 - 5 * 2 ** (2 - 1) < 1
    broken = Sampler(params, vocabulary=vocabulary)
    broken.extend_history([0, 1, 2, 4, 0, 1])  # a breaker sits between the two "a b"
    assert broken.sample(logits) == 5  # still a repeat of 2 after the breaker
    fully = Sampler(params, vocabulary=vocabulary)
    fully.extend_history([0, 1, 2, 0, 4])  # the last token is a breaker: nothing to extend
    assert fully.sample(logits) == 2


def test_mirostat_moves_mu() -> None:
    sampler = Sampler(SamplingParams(seed=4, mirostat=2, mirostat_tau=3.0, mirostat_eta=0.5))
    assert sampler.mu == 6.0
    tokens(sampler, LOGITS, 3)
    assert sampler.mu != 6.0
    sampler.reset()
    assert sampler.mu == 6.0


def test_matcher_property_and_repr() -> None:
    sampler = Sampler()
    assert sampler.matcher is None and sampler.vocabulary is None
    assert "unconstrained" in repr(sampler)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), "1", True, None])
def test_mu_takes_only_a_finite_number(value: object) -> None:
    sampler = Sampler(SamplingParams(mirostat=2))
    with pytest.raises(ArgumentError, match="mu must be a finite number"):
        sampler.mu = value  # type: ignore[assignment]
    sampler.mu = 3
    assert sampler.mu == 3.0 and isinstance(sampler.mu, float)
