"""Every sampler of the chain against a straightforward reference (sampling_reference.py).

Each is run on dense candidates (a whole vocabulary's logits, some excluded as -inf)
and on sparse ones (a shuffled subset), since the chain meets both.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import sampling_reference as ref
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from gbnfkit.sampling._candidates import Candidates, top_positions
from gbnfkit.sampling._chain import _inverse_cdf_blocked, draw
from gbnfkit.sampling._dry import DryPenalty, _repeat_lengths
from gbnfkit.sampling._mirostat import MirostatState
from gbnfkit.sampling._penalties import PenaltyHistory
from gbnfkit.sampling._temperature import temperature
from gbnfkit.sampling._truncate import min_p, top_k, top_n_sigma, top_p, typical_p, xtc

# distinct logits (ties make "the k largest" ambiguous); -inf marks an excluded token
logit_lists = st.lists(st.integers(-1500, 1500), min_size=1, max_size=70, unique=True).map(
    lambda values: [v / 100 for v in values]
)


@st.composite
def candidates(draw_: st.DrawFn) -> tuple[Candidates, ref.Pairs]:
    """Candidates in either form, and the same (token, logit) pairs for the reference."""
    logits = draw_(logit_lists)
    dense = draw_(st.booleans())
    if dense:
        excluded = draw_(st.sets(st.integers(0, len(logits) - 1), max_size=len(logits) - 1))
        values = np.array(logits, dtype=np.float32)
        values[list(excluded)] = -np.inf
        pairs = [(i, float(values[i])) for i in range(len(logits)) if i not in excluded]
        return Candidates(values), pairs
    ids = draw_(st.permutations(range(1000, 1000 + len(logits))))
    values64 = np.array(logits, dtype=np.float64)
    pairs = [(int(t), float(v)) for t, v in zip(ids, values64, strict=True)]
    return Candidates.sparse(np.array(ids, dtype=np.int64), values64), pairs


def as_pairs(cands: Candidates) -> ref.Pairs:
    ids = cands.token_ids()
    return [(int(t), float(v)) for t, v in zip(ids, cands.logits, strict=True) if v > -np.inf]


def same_tokens(cands: Candidates, expected: ref.Pairs) -> None:
    assert sorted(t for t, _ in as_pairs(cands)) == sorted(t for t, _ in expected)


def same_logits(cands: Candidates, expected: ref.Pairs) -> None:
    got = dict(as_pairs(cands))
    assert sorted(got) == sorted(t for t, _ in expected)
    for token, logit in expected:
        assert got[token] == pytest.approx(logit, rel=1e-5, abs=1e-5)


@settings(max_examples=150, deadline=None)
@given(candidates(), st.integers(-3, 80))
def test_top_k(case: tuple[Candidates, ref.Pairs], k: int) -> None:
    cands, pairs = case
    same_tokens(top_k(cands, k), ref.top_k(pairs, k))


@settings(max_examples=150, deadline=None)
@given(candidates(), st.floats(0.0, 1.0), st.integers(0, 5))
def test_top_p(case: tuple[Candidates, ref.Pairs], p: float, min_keep: int) -> None:
    cands, pairs = case
    expected = ref.top_p(pairs, p, min_keep)
    got = top_p(cands, p, min_keep)
    # a cumulative sum that lands within rounding of p may keep one token more or less
    cumulative = np.cumsum(sorted(ref.softmax(pairs), reverse=True))
    assume(not np.any(np.abs(cumulative - p) < 1e-9))
    same_tokens(got, expected)


@settings(max_examples=150, deadline=None)
@given(candidates(), st.floats(0.0, 1.0), st.integers(0, 5))
def test_min_p(case: tuple[Candidates, ref.Pairs], p: float, min_keep: int) -> None:
    cands, pairs = case
    same_tokens(min_p(cands, p, min_keep), ref.min_p(pairs, p, min_keep))


@settings(max_examples=150, deadline=None)
@given(candidates(), st.floats(0.0, 1.0), st.integers(0, 5))
def test_typical_p(case: tuple[Candidates, ref.Pairs], p: float, min_keep: int) -> None:
    cands, pairs = case
    probs = ref.softmax(pairs)
    entropy = -sum(q * math.log(q) for q in probs if q > 0)
    scores = sorted(abs(-math.log(q) - entropy) for q in probs if q > 0)
    assume(all(b - a > 1e-9 for a, b in zip(scores, scores[1:], strict=False)))
    got = typical_p(cands, p, min_keep)
    expected = ref.typical_p(pairs, p, min_keep)
    ordered = sorted(probs, key=lambda q: abs(-math.log(q) - entropy) if q > 0 else math.inf)
    assume(not np.any(np.abs(np.cumsum(ordered) - p) < 1e-9))
    assert [t for t, _ in as_pairs(got)] == [t for t, _ in expected]


@settings(max_examples=150, deadline=None)
@given(candidates(), st.floats(-1.0, 4.0))
def test_top_n_sigma(case: tuple[Candidates, ref.Pairs], n: float) -> None:
    cands, pairs = case
    logits = [v for _, v in pairs]
    if len(logits) > 1:
        mean = sum(logits) / len(logits)
        std = math.sqrt(sum((x - mean) ** 2 for x in logits) / len(logits))
        assume(all(abs(x - (max(logits) - n * std)) > 1e-4 for x in logits))
    same_tokens(top_n_sigma(cands, n), ref.top_n_sigma(pairs, n))


@settings(max_examples=150, deadline=None)
@given(candidates(), st.floats(0.0, 0.5), st.integers(0, 5))
def test_xtc_when_it_fires(case: tuple[Candidates, ref.Pairs], threshold: float, keep: int) -> None:
    cands, pairs = case
    assume(all(abs(q - threshold) > 1e-9 for q in ref.softmax(pairs)))
    rng = np.random.default_rng(0)
    got = xtc(cands, 1.0, threshold, keep, rng)
    same_tokens(got, ref.xtc_fired(pairs, threshold, keep) if len(pairs) >= 2 else pairs)


def test_xtc_draws_only_when_enabled_and_keeps_everything_when_the_draw_says_no() -> None:
    logits = np.array([3.0, 2.0, 1.0, 0.0], dtype=np.float32)
    rng = np.random.default_rng(5)
    before = rng.bit_generator.state
    for probability, threshold in ((0.0, 0.1), (0.5, 0.6)):  # disabled: no draw
        kept = xtc(Candidates(logits), probability, threshold, 0, rng)
        assert len(kept) == 4 and rng.bit_generator.state == before
    rng = np.random.default_rng(5)
    chance = np.random.default_rng(5).random()
    kept = xtc(Candidates(logits), chance - 1e-9, 0.1, 0, rng)  # the draw is above: no cut
    assert sorted(kept.token_ids().tolist()) == [0, 1, 2, 3]


@settings(max_examples=150, deadline=None)
# temperatures so small that float32 logits overflow when divided take the greedy limit
# (tested below); the reference computes in float64, so it is compared above 1e-6 only
@given(
    candidates(),
    st.one_of(st.floats(-1.0, 0.0), st.floats(1e-6, 3.0)),
    st.floats(0.0, 2.0),
    st.floats(0.1, 3.0),
)
def test_temperature_and_dynamic_temperature(
    case: tuple[Candidates, ref.Pairs], temp: float, spread: float, exponent: float
) -> None:
    cands, pairs = case
    got = temperature(cands, temp, spread, exponent)
    expected = ref.dynamic_temperature(pairs, temp, spread, exponent)
    if temp <= 0 and spread <= 0:
        same_tokens(got, expected)  # greedy: one token
    else:
        assume(not any(math.isinf(v) for _, v in expected))  # the reference overflowed
        assert ref.distribution(as_pairs(got)) == pytest.approx(
            ref.distribution(expected), abs=1e-6
        )


@settings(max_examples=150, deadline=None)
@given(
    candidates(),
    st.lists(st.integers(0, 1100), max_size=40),
    st.integers(-1, 30),
    st.floats(0.5, 2.0),
    st.floats(-1.0, 1.0),
    st.floats(-1.0, 1.0),
)
def test_penalties(
    case: tuple[Candidates, ref.Pairs],
    history: list[int],
    last_n: int,
    repeat: float,
    freq: float,
    presence: float,
) -> None:
    cands, pairs = case
    tracker = PenaltyHistory(last_n)
    for token in history:
        tracker.push(token)
    got = tracker.apply(cands, repeat, freq, presence)
    same_logits(got, ref.penalties(pairs, history, last_n, repeat, freq, presence))


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(0, 4), max_size=60),
    st.floats(0.1, 2.0),
    st.floats(1.0, 3.0),
    st.integers(0, 4),
    st.integers(-1, 50),
    st.sets(st.integers(0, 4), max_size=2),
)
def test_dry(
    history: list[int],
    multiplier: float,
    base: float,
    allowed: int,
    last_n: int,
    breakers: set[int],
) -> None:
    pairs = [(t, float(t)) for t in range(5)]
    penalty = DryPenalty(multiplier, base, allowed, last_n, {t: [()] for t in breakers})
    for token in history:
        penalty.push(token)
    got = penalty.apply(Candidates(np.arange(5, dtype=np.float64)))
    same_logits(got, ref.dry(pairs, history, multiplier, base, allowed, last_n, breakers))


def test_dry_multi_token_breaker_limits_the_repeat() -> None:
    # breaker "x y" as tokens 7 then 8: the repeat may not reach back past it
    penalty = DryPenalty(1.0, 2.0, 2, -1, {7: [(8,)]})
    for token in [1, 2, 3, 7, 8, 1, 2, 3, 7, 8, 1, 2]:
        penalty.push(token)
    # only "1 2" after the breaker counts: a repeat of 2 tokens, not 7
    assert penalty.penalties() == {3: 1.0 * 2.0 ** (2 - 2)}
    plain = DryPenalty(1.0, 2.0, 2, -1, {})
    for token in [1, 2, 3, 7, 8, 1, 2, 3, 7, 8, 1, 2]:
        plain.push(token)
    assert plain.penalties() == {3: 1.0 * 2.0 ** (7 - 2)}


@given(st.lists(st.integers(0, 3), max_size=50), st.integers(0, 60))
def test_repeat_lengths_are_a_capped_z_function(values: list[int], cap: int) -> None:
    lengths = _repeat_lengths(np.array(values, dtype=np.int64), cap)
    for k in range(1, len(values)):
        length = 0
        while k + length < len(values) and values[length] == values[k + length]:
            length += 1
        assert lengths[k] == min(length, cap)


@settings(max_examples=150, deadline=None)
@given(candidates(), st.floats(0.0, 12.0))
def test_mirostat_v2_truncation(case: tuple[Candidates, ref.Pairs], mu: float) -> None:
    cands, pairs = case
    assume(all(abs(-math.log2(q) - mu) > 1e-9 for q in ref.softmax(pairs)))
    state = MirostatState(5.0, 0.1)
    state.mu = mu
    same_tokens(state.truncate_v2(cands), ref.mirostat_v2_kept(pairs, mu))


@settings(max_examples=150, deadline=None)
@given(candidates(), st.floats(0.5, 12.0))
def test_mirostat_v1_truncation(case: tuple[Candidates, ref.Pairs], mu: float) -> None:
    cands, pairs = case
    assume(len(pairs) >= 2)
    state = MirostatState(5.0, 0.1)
    state.mu = mu
    try:
        k = ref.mirostat_v1_k(pairs, mu, 32000)
    except (ZeroDivisionError, OverflowError, ValueError):
        assume(False)
    same_tokens(state.truncate_v1(cands, 32000), ref.top_k(pairs, k))


def test_mirostat_updates_mu_towards_tau() -> None:
    state = MirostatState(tau=3.0, eta=0.5)
    assert state.mu == 6.0
    state.update(0.5)  # surprise 1 bit: below tau, so mu rises
    assert state.mu == pytest.approx(6.0 - 0.5 * (1.0 - 3.0))
    state.update(1 / 32)  # 5 bits: above tau, mu falls
    assert state.mu == pytest.approx(7.0 - 0.5 * (5.0 - 3.0))
    state.reset()
    assert state.mu == 6.0


@st.composite
def large_arrays(draw_: st.DrawFn) -> np.ndarray:
    """Vocabulary-sized logits: many ties or none, some excluded (-inf), peaked or flat."""
    rng = np.random.default_rng(draw_(st.integers(0, 2**32)))
    size = draw_(st.integers(4097, 40000))
    levels = draw_(st.sampled_from([3, 50, 10_000]))
    values = (rng.integers(0, levels, size) / draw_(st.sampled_from([1.0, 8.0]))).astype(
        np.float32
    )
    if draw_(st.booleans()):
        values[rng.random(size) < draw_(st.floats(0.0, 0.99))] = -np.inf
    return values


@settings(max_examples=100, deadline=None)
@given(large_arrays(), st.integers(1, 300))
def test_top_positions_finds_the_k_largest(values: np.ndarray, k: int) -> None:
    finite = np.sort(values[values > -np.inf])
    got = np.sort(values[top_positions(values, k)])
    expected = finite[-k:]
    assert got.shape == expected.shape and (got == expected).all()


@settings(max_examples=100, deadline=None)
@given(large_arrays(), st.floats(0.0, 1.0, exclude_max=True))
def test_blocked_inverse_cdf_matches_a_running_sum(values: np.ndarray, u: float) -> None:
    weights = (np.abs(np.where(values > -np.inf, values, 0)) % 8).astype(np.float32)
    assume(weights.any())  # small integers: every sum is exact
    index, total = _inverse_cdf_blocked(weights, u)
    cumulative = np.cumsum(weights.astype(np.float64))
    assert total == cumulative[-1]
    assert index == int(np.searchsorted(cumulative, u * total, side="right"))
    assert weights[index] > 0


def test_draw_never_returns_an_excluded_token() -> None:
    values = np.full(5000, -np.inf, dtype=np.float32)
    values[[3, 4000]] = [0.0, 1.0]
    rng = np.random.default_rng(1)
    seen = {draw(Candidates(values), rng)[0] for _ in range(200)}
    assert seen == {3, 4000}


@settings(max_examples=80, deadline=None)
@given(large_arrays(), st.floats(0.0, 0.999), st.integers(0, 3))
def test_top_p_over_a_whole_vocabulary(values: np.ndarray, p: float, min_keep: int) -> None:
    """Wide nuclei (thousands of tokens) go through the buckets, not a sort."""
    finite = values[values > -np.inf]
    assume(finite.shape[0] > 0)
    ordered = np.sort(finite)[::-1].astype(np.float64)
    probs = np.exp(ordered - ordered[0])
    cumulative = np.cumsum(probs) / probs.sum()
    # gbnfkit sums float32 weights in float32 blocks: a relative error near 1e-7
    assume(not np.any(np.abs(cumulative - p) < 1e-6))
    reached = np.flatnonzero(cumulative >= p)
    last = max(int(reached[0]) + 1 if reached.shape[0] else len(ordered), min_keep, 1)
    got = top_p(Candidates(values), p, min_keep)
    assert np.sort(got.logits)[::-1].tolist() == ordered[:last].tolist()


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(0, 3), min_size=60, max_size=400),
    st.sampled_from([-1, 1, 10, 63, 64, 65, 129, 500]),
    st.integers(0, 3),
    st.sampled_from([1.0, 1.75, 1e6]),
    st.booleans(),
)
def test_dry_over_long_histories(
    history: list[int], last_n: int, allowed: int, base: float, reset_midway: bool
) -> None:
    """The history buffer grows and slides; lengths stop at what changes the penalty."""
    penalty = DryPenalty(0.5, base, allowed, last_n, {3: [()]})
    if reset_midway:
        for token in history:
            penalty.push(token)
        penalty.clear()
    for token in history:
        penalty.push(token)
    pairs = [(t, float(t)) for t in range(5)]
    got = penalty.apply(Candidates(np.arange(5, dtype=np.float64)))
    same_logits(got, ref.dry(pairs, history, 0.5, base, allowed, last_n, {3}))


def test_a_temperature_so_small_that_logits_overflow_is_greedy() -> None:
    # found by hypothesis: 7.3e-264 overflows float32 logits; the limit is the greedy choice
    logits = np.array([0.25, 0.5, -1.0, 0.4999], dtype=np.float32)
    kept = temperature(Candidates(logits), 7.322045713303997e-264, 0.0, 1.0)
    assert kept.token_ids().tolist() == [1]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_top_p_buckets_over_logits_further_apart_than_the_float_range(dtype: type) -> None:
    # finite logits whose distance overflows (float64: top - low is inf, which made every
    # bucket NaN and np.bincount raise a bare ValueError); 300 tied top tokens make the
    # nucleus wider than the first try, so the buckets are used
    big = float(np.finfo(dtype).max)
    values = np.array([big / 2, -big, 0.0, -big / 2] * 300, dtype=dtype)
    pairs = [(i, float(v)) for i, v in enumerate(values)]
    for p in (0.9013, 0.9517, 0.9987):  # no multiple of 1/300: no rounding tie
        with np.errstate(over="ignore"):  # as Sampler runs the chain
            got = top_p(Candidates(values), p, 0)
        expected = ref.top_p(pairs, p, 0)
        assert sorted(got.logits.tolist()) == sorted(logit for _, logit in expected)
