"""The sampler chain: logit bias, then the samplers in order, then one random draw.

With ``mirostat`` on, the chain is llama.cpp's: logit bias, temperature, mirostat.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from gbnfkit._errors import SamplingError
from gbnfkit.sampling._candidates import BLOCK, Candidates, block_sums
from gbnfkit.sampling._dry import DryPenalty, breaker_sequences
from gbnfkit.sampling._mirostat import MirostatState
from gbnfkit.sampling._params import Mirostat, SamplerType, SamplingParams
from gbnfkit.sampling._penalties import PenaltyHistory, apply_logit_bias
from gbnfkit.sampling._temperature import temperature
from gbnfkit.sampling._truncate import min_p, top_k, top_n_sigma, top_p, typical_p, xtc
from gbnfkit.tokens._vocabulary import Vocabulary

__all__ = ["ChainState", "draw", "probabilities", "run_chain"]


class ChainState:
    """What the chain remembers between tokens: histories, mirostat's ``mu``, the generator."""

    __slots__ = ("penalties", "dry", "mirostat", "rng", "vocab_size")

    def __init__(
        self,
        penalties: PenaltyHistory,
        dry: DryPenalty,
        mirostat: MirostatState,
        rng: np.random.Generator,
        vocab_size: int | None,
    ) -> None:
        self.penalties = penalties
        self.dry = dry
        self.mirostat = mirostat
        self.rng = rng
        self.vocab_size = vocab_size

    @classmethod
    def create(cls, p: SamplingParams, vocabulary: Vocabulary | None) -> ChainState:
        """A fresh state for ``p``; checks what needs the vocabulary.

        Raises:
            SamplingError: a ``logit_bias`` id outside the vocabulary, or DRY sequence
                breakers without a vocabulary to find them in.
        """
        size = vocabulary.size if vocabulary is not None else None
        if size is not None and p.logit_bias and max(p.logit_bias) >= size:
            raise SamplingError(
                f"token id {max(p.logit_bias)} is outside the vocabulary of {size} tokens",
                field="logit_bias",
            )
        dry_on = p.dry_multiplier != 0.0 and p.dry_base >= 1.0 and p.dry_penalty_last_n != 0
        breakers: dict[int, list[tuple[int, ...]]] = {}
        if dry_on and p.dry_sequence_breakers:
            if vocabulary is None:
                raise SamplingError(
                    "DRY's sequence breakers need the vocabulary: give a matcher or "
                    "Sampler(..., vocabulary=...), or set dry_sequence_breakers=()",
                    field="dry_sequence_breakers",
                )
            breakers = breaker_sequences(p.dry_sequence_breakers, vocabulary)
        dry = DryPenalty(
            p.dry_multiplier, p.dry_base, p.dry_allowed_length, p.dry_penalty_last_n, breakers
        )
        return cls(
            PenaltyHistory(p.repeat_last_n),
            dry,
            MirostatState(p.mirostat_tau, p.mirostat_eta),
            np.random.default_rng(p.seed),
            size,
        )


def _stage(
    kind: SamplerType, cands: Candidates, p: SamplingParams, state: ChainState
) -> Candidates:
    if kind is SamplerType.PENALTIES:
        return state.penalties.apply(
            cands, p.repeat_penalty, p.frequency_penalty, p.presence_penalty
        )
    if kind is SamplerType.DRY:
        return state.dry.apply(cands)
    if kind is SamplerType.TOP_N_SIGMA:
        return top_n_sigma(cands, p.top_n_sigma)
    if kind is SamplerType.TOP_K:
        return top_k(cands, p.top_k)
    if kind is SamplerType.TYPICAL_P:
        return typical_p(cands, p.typical_p, p.min_keep)
    if kind is SamplerType.TOP_P:
        return top_p(cands, p.top_p, p.min_keep)
    if kind is SamplerType.MIN_P:
        return min_p(cands, p.min_p, p.min_keep)
    if kind is SamplerType.XTC:
        return xtc(cands, p.xtc_probability, p.xtc_threshold, p.min_keep, state.rng)
    return temperature(cands, p.temperature, p.dynatemp_range, p.dynatemp_exponent)


def run_chain(cands: Candidates, params: SamplingParams, state: ChainState) -> Candidates:
    """The candidates and logits the final draw picks from (may draw XTC's random number)."""
    cands = apply_logit_bias(cands, params.logit_bias)
    cands.require_any()
    if params.mirostat == Mirostat.OFF:
        for kind in params.samplers:
            cands = _stage(kind, cands, params, state)
        return cands
    cands = temperature(cands, params.temperature, 0.0, 1.0)
    if params.mirostat == Mirostat.V1:
        return state.mirostat.truncate_v1(cands, state.vocab_size or len(cands))
    return state.mirostat.truncate_v2(cands)


def probabilities(cands: Candidates) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    """``(token ids, probabilities)`` of the candidates (float64, summing to 1).

    Tokens excluded with ``-inf`` (refused by the grammar, banned, NaN) are left out,
    whether the candidates are dense or sparse.
    """
    cands.require_any()
    ids = cands.token_ids()
    logits = np.asarray(cands.logits, dtype=np.float64)
    kept = logits > -np.inf
    if not kept.all():
        ids, logits = ids[kept], logits[kept]
    exp = np.exp(logits - logits.max())
    return ids, exp / exp.sum()


def draw(cands: Candidates, rng: np.random.Generator) -> tuple[int, float]:
    """One token from the softmax of the candidates, and its probability among them.

    A single candidate is returned without drawing a random number (as llama.cpp does).
    """
    cands.require_any()
    if len(cands) == 1:
        return int(cands.token_ids()[0]), 1.0
    logits = cands.logits
    exp = np.exp(logits - logits.max())
    if exp.shape[0] > 4 * BLOCK:
        index, total = _inverse_cdf_blocked(exp, rng.random())
    else:
        cumulative = np.cumsum(exp, dtype=np.float64)
        total = float(cumulative[-1])
        index = int(np.searchsorted(cumulative, rng.random() * total, side="right"))
        if index >= len(cands) or exp[index] == 0:
            index = int(np.flatnonzero(exp)[-1])
    token = index if cands.ids is None else int(cands.ids[index])
    return token, float(exp[index]) / total


def _inverse_cdf_blocked(weights: npt.NDArray[Any], u: float) -> tuple[int, float]:
    """``(index, total)``: the first index whose running sum of ``weights`` exceeds ``u * total``.

    A running sum over a whole vocabulary is slow (it cannot be vectorised), so the
    weights are summed per block of ``BLOCK``, the block is found from the running
    sum of the block sums, and only that block is summed one by one.
    """
    sums, rest = block_sums(weights)
    ends = np.cumsum(sums)
    total = float(ends[-1]) + rest
    target = u * total
    block = int(np.searchsorted(ends, target, side="right"))
    start = block * BLOCK
    segment = weights[start : start + BLOCK]
    before = float(ends[block - 1]) if block > 0 else 0.0
    local = np.cumsum(segment, dtype=np.float64) + before
    index = int(np.searchsorted(local, target, side="right"))
    if index >= segment.shape[0] or segment[index] == 0:
        # rounding (the block's sum in float32) put the target just past the block's
        # last token: that token, or the last likely one before it
        likely = np.flatnonzero(segment)
        if likely.shape[0] == 0:
            return int(np.flatnonzero(weights)[-1]), total
        index = int(likely[-1])
    return start + index, total
