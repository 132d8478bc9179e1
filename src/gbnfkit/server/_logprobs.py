"""Log probabilities of the sampled tokens, as OpenAI's two APIs write them.

A token's log probability is taken from the model's own distribution at that step: the
log-softmax of its raw logits over the vocabulary, before the grammar, the logit bias and
the sampler chain (as llama-server and vLLM report them by default). So a token the
grammar forced can have a low log probability: it says how far the grammar pulled the
model, which the constrained distribution would hide.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from gbnfkit.sampling._logits import to_rows
from gbnfkit.tokens import Vocabulary

__all__ = ["StepLogprobs", "TokenLogprob", "chat_logprobs", "completion_logprobs"]


@dataclass(frozen=True)
class TokenLogprob:
    """One sampled token: its id, its log probability, the ``top`` most likely tokens of
    its step (id, log probability; most likely first), and where its text starts in the
    generated text (characters)."""

    token_id: int
    logprob: float
    top: tuple[tuple[int, float], ...]
    offset: int


class StepLogprobs:
    """The model's log probabilities at one step (made from the logits before sampling)."""

    __slots__ = ("_row",)

    def __init__(self, logits: Any, size: int) -> None:
        row = np.asarray(to_rows(logits)[0][:size], dtype=np.float64)
        finite = np.isfinite(row)
        row = np.where(np.isnan(row), -np.inf, row)
        peak = row[finite].max() if finite.any() else 0.0
        shifted = row - peak
        with np.errstate(under="ignore"):
            total = np.exp(shifted).sum()
        self._row: npt.NDArray[np.float64] = shifted - np.log(total) if total > 0 else shifted

    def entry(self, token_id: int, top: int, offset: int) -> TokenLogprob:
        """The entry of ``token_id`` with the ``top`` most likely tokens of this step."""
        row = self._row
        best: tuple[tuple[int, float], ...] = ()
        if top > 0:
            count = min(top, row.shape[0])
            ids = np.argpartition(-row, count - 1)[:count]
            ids = ids[np.lexsort((ids, -row[ids]))]  # most likely first, ties by id
            best = tuple((int(i), _finite(row[i])) for i in ids)
        return TokenLogprob(token_id, _finite(row[token_id]), best, offset)


def _finite(value: float) -> float:
    """JSON has no -inf: a token of probability 0 is written with float's lowest value."""
    return float(value) if np.isfinite(value) else -9999.0


def _token(vocabulary: Vocabulary, token_id: int) -> tuple[str, list[int]]:
    data = vocabulary.token_bytes(token_id) or b""
    return data.decode("utf-8", errors="replace"), list(data)


def chat_logprobs(entries: Sequence[TokenLogprob], vocabulary: Vocabulary) -> dict[str, Any]:
    """A chat choice's (or chunk's) ``logprobs``: ``{"content": [...], "refusal": null}``."""
    content = []
    for entry in entries:
        text, data = _token(vocabulary, entry.token_id)
        top = []
        for token_id, logprob in entry.top:
            other, other_data = _token(vocabulary, token_id)
            top.append({"token": other, "logprob": logprob, "bytes": other_data})
        content.append(
            {"token": text, "logprob": entry.logprob, "bytes": data, "top_logprobs": top}
        )
    return {"content": content, "refusal": None}


def completion_logprobs(
    entries: Sequence[TokenLogprob], vocabulary: Vocabulary
) -> dict[str, Any]:
    """A completion choice's (or chunk's) legacy ``logprobs``: parallel lists of tokens,
    their log probabilities, the top alternatives (token -> log probability; the first
    of equal strings kept) and each token's character offset in the generated text."""
    tokens, logprobs, tops, offsets = [], [], [], []
    for entry in entries:
        tokens.append(_token(vocabulary, entry.token_id)[0])
        logprobs.append(entry.logprob)
        top: dict[str, float] = {}
        for token_id, logprob in entry.top:
            top.setdefault(_token(vocabulary, token_id)[0], logprob)
        tops.append(top)
        offsets.append(entry.offset)
    return {
        "tokens": tokens,
        "token_logprobs": logprobs,
        "top_logprobs": tops,
        "text_offset": offsets,
    }
