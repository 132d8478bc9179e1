"""The chain at the edges of the float range: biases and penalties that overflow a logit."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gbnfkit import GbnfkitError, Sampler, SamplerType, SamplingParams


@pytest.fixture(autouse=True)
def _warnings_are_errors() -> object:
    """The values here are valid logits: numpy's overflow warnings must not leak out."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield

F32_MAX = float(np.finfo(np.float32).max)


def finite_distribution(sampler: Sampler, logits: np.ndarray) -> dict[int, float]:
    ids, probs = sampler.distribution(logits)
    assert np.all(np.isfinite(probs)) and abs(float(probs.sum()) - 1.0) < 1e-9
    return {int(t): float(q) for t, q in zip(ids, probs, strict=True) if q > 0}


def test_a_bias_past_the_float_range_makes_the_token_likeliest_not_nan() -> None:
    logits = np.array([3e38, 1.0, 2.0], dtype=np.float32)
    plain = SamplingParams(seed=1, top_k=0, top_p=1.0, min_p=0.0, temperature=1.0)
    sampler = Sampler(plain.replace(logit_bias={0: 3e38}))
    assert finite_distribution(sampler, logits) == {0: 1.0}
    assert sampler.sample(logits) == 0
    # two tokens pushed past the range tie at the largest float
    sampler = Sampler(plain.replace(logit_bias={0: 3e38, 1: F32_MAX}))
    assert finite_distribution(sampler, np.array([3e38, 3e38, 2.0], dtype=np.float32)) == {
        0: 0.5,
        1: 0.5,
    }
    # float64 logits overflow float64
    sampler = Sampler(plain.replace(logit_bias={1: 1e308}))
    assert finite_distribution(sampler, np.array([1e308, 1e308, 0.0])) == {1: 1.0}


def test_penalties_past_the_float_range_never_ban_a_token() -> None:
    # every token is pushed below -FLT_MAX: the penalties leave them tied, not all -inf
    logits = np.array([-3e38, -3e38, -3e38], dtype=np.float32)
    for params in (
        SamplingParams(seed=1, presence_penalty=3e38),
        SamplingParams(seed=1, frequency_penalty=3e38),
        SamplingParams(seed=1, repeat_penalty=1e30),
    ):
        sampler = Sampler(params)
        sampler.extend_history([0, 1, 2])
        assert sampler.sample(logits) in (0, 1, 2)
        assert finite_distribution(sampler, logits) == {0: 1 / 3, 1: 1 / 3, 2: 1 / 3}
    # a negative penalty past the range favours the token, without a NaN
    sampler = Sampler(SamplingParams(seed=1, frequency_penalty=-3e38, temperature=0.0))
    sampler.extend_history([2, 2])
    assert sampler.sample(np.array([3e38, 1.0, 2.0], dtype=np.float32)) in (0, 2)
    # an excluded token stays excluded whatever the penalty
    sampler = Sampler(SamplingParams(seed=1, frequency_penalty=-3e38, top_k=0))
    sampler.extend_history([0, 0])
    assert finite_distribution(sampler, np.array([-np.inf, 1.0], dtype=np.float32)) == {1: 1.0}


extreme = st.sampled_from([0.0, 1.0, -1.0, 1e30, -1e30, 3e38, -3e38, 1e300, -1e300])


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.sampled_from([0.0, 1.0, -2.0, 3e38, -3e38, np.inf, -np.inf, np.nan]),
        min_size=1,
        max_size=8,
    ),
    st.sampled_from([np.float32, np.float64]),
    st.dictionaries(st.integers(0, 7), st.one_of(extreme, st.just(-math.inf)), max_size=3),
    extreme,
    extreme,
    st.sampled_from([1.0, 1e-30, 1e30]),
    st.lists(st.integers(0, 7), max_size=6),
    st.sampled_from([0.0, 0.5, 1.0]),
    st.sampled_from([(), tuple(SamplerType)]),
)
def test_any_bias_and_penalty_give_a_distribution_or_a_gbnfkit_error(
    values: list[float],
    dtype: type,
    bias: dict[int, float],
    frequency: float,
    presence: float,
    repeat: float,
    history: list[int],
    temperature: float,
    samplers: tuple[SamplerType, ...],
) -> None:
    logits = np.array(values, dtype=dtype)
    n = logits.shape[0]
    params = SamplingParams(
        seed=3,
        temperature=temperature,
        logit_bias={t: b for t, b in bias.items() if t < n},
        frequency_penalty=frequency,
        presence_penalty=presence,
        repeat_penalty=repeat,
        samplers=samplers or tuple(SamplerType),
    )
    sampler = Sampler(params)
    sampler.extend_history([t for t in history if t < n])
    alive = [
        t
        for t in range(n)
        if logits[t] > -np.inf and params.logit_bias.get(t, 0.0) != -math.inf
    ]  # NaN compares False: not alive
    try:
        token = sampler.sample(logits)
    except GbnfkitError:
        assert not alive
        return
    assert token in alive
    assert set(finite_distribution(sampler, logits)) <= set(alive)


@pytest.mark.parametrize(
    "params",
    [
        SamplingParams(seed=1),
        SamplingParams(seed=1, top_k=0),
        SamplingParams(seed=1, top_k=0, top_p=1.0, min_p=0.0),
        SamplingParams(seed=1, mirostat=2),
        SamplingParams(seed=1, mirostat=1),
    ],
)
def test_logits_spanning_the_float_range_raise_no_numpy_warnings(params: SamplingParams) -> None:
    for dtype in (np.float32, np.float64):
        big = float(np.finfo(dtype).max)
        logits = np.array([np.inf, -big, 0.0, big / 2] * 300, dtype=dtype)
        sampler = Sampler(params)
        assert sampler.sample(logits) % 4 == 0
        assert set(finite_distribution(sampler, logits)) <= set(range(0, 1200, 4))
