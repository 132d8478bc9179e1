"""A copied Sampler (copy.copy, copy.deepcopy) is independent: it samples on as the
original would, and advancing it leaves the original's matcher, histories and random
generator alone."""

from __future__ import annotations

import copy
from collections.abc import Callable

import numpy as np
import pytest
from test_sampler_grammar import LIST, VOCABULARY

from gbnfkit import LazyMatcher, Sampler, SamplingParams, Trigger, TriggerKind

RNG = np.random.default_rng(99)
LOGITS = [(RNG.standard_normal(VOCABULARY.size) * 2).astype(np.float32) for _ in range(12)]
PARAMS = SamplingParams(
    seed=3, temperature=0.9, repeat_penalty=1.3, repeat_last_n=8, dry_multiplier=0.8,
    dry_sequence_breakers=(",",),
)


def _run(sampler: Sampler, steps: int) -> list[int]:
    out = []
    for logits in LOGITS[:steps]:
        token = sampler.sample(logits)
        if token in VOCABULARY.eos_token_ids:
            break
        sampler.accept(token)
        out.append(token)
    return out


@pytest.mark.parametrize("how", [copy.copy, copy.deepcopy])
@pytest.mark.parametrize("lazy", [False, True])
def test_a_copied_sampler_is_independent(how: Callable[[Sampler], Sampler], lazy: bool) -> None:
    matcher = (
        LazyMatcher(LIST, [Trigger(TriggerKind.WORD, "[")]) if lazy else LIST.matcher()
    )
    original = Sampler(PARAMS, matcher)
    original.extend_history([3, 4])
    _run(original, 3)
    steps = original.matcher.steps  # type: ignore[union-attr]
    other = how(original)
    assert other.matcher is not original.matcher
    theirs = _run(other, 12)
    assert original.matcher.steps == steps  # type: ignore[union-attr]
    assert _run(original, 12) == theirs
