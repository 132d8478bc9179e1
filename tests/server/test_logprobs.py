"""Log probabilities in the server's decoding loop against a plain reference: one entry per
token whose text starts in the output, the model's raw log-softmax, the top tokens by
log probability, and streamed entries that concatenate to the whole."""

from __future__ import annotations

import codecs
import threading
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
from hypothesis import given, settings
from hypothesis import strategies as st
from serve_cases import ScriptedModel

from gbnfkit import SamplingParams, Vocabulary
from gbnfkit.server._decode import Job, Piece, run_job
from gbnfkit.server._logprobs import StepLogprobs, chat_logprobs, completion_logprobs

# single bytes, pieces of a stop string, a character split in two, and the end
PIECES = [b"a", b"b", b"ab", b"<", b"/s", b">", b"\xc3", b"\xa9", "é".encode()]
EOS = len(PIECES)
VOCABULARY = Vocabulary([*PIECES, None], eos_token_ids=[EOS])


class Scripted(ScriptedModel):
    """A model whose logits at each step are random (from ``seed``) with the scripted
    token far ahead, then the end; ``seen`` keeps each step's logits."""

    vocabulary = VOCABULARY

    def __init__(self, script: Sequence[int], seed: int) -> None:
        super().__init__(script, EOS)
        self._random = np.random.default_rng(seed)
        self.seen: list[npt.NDArray[np.float32]] = []

    def logits(self, wanted: int) -> npt.NDArray[np.float32]:
        logits = self._random.normal(size=EOS + 1).astype(np.float32)
        logits[wanted] = 8.0
        self.seen.append(logits.copy())
        return logits


def _log_softmax(logits: npt.NDArray[np.float32]) -> npt.NDArray[np.float64]:
    row = logits.astype(np.float64)
    return row - (row.max() + np.log(np.exp(row - row.max()).sum()))


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.integers(0, EOS - 1), max_size=10),
    st.lists(st.sampled_from(["ab", "b", "é", "</s>", "s>", "a<"]), max_size=2),
    st.integers(1, 12),
    st.integers(0, 4),
    st.integers(0, 2**16),
)
def test_entries_are_the_raw_log_softmax_of_the_tokens_of_the_output(
    script: list[int], stops: list[str], max_tokens: int, top: int, seed: int
) -> None:
    model = Scripted(script, seed)
    job = Job(
        [0],
        None,
        SamplingParams(temperature=0.0),
        max_tokens,
        tuple(stops),
        threading.Event(),
        logprobs=top,
    )
    pieces: list[Piece] = []
    outcome = run_job(model, job, pieces.append)
    # the reference: each token's offset in the text decoded so far; the output cut at
    # the first stop string keeps the tokens whose text starts before the cut
    taken = script[:max_tokens]
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    offsets, text = [], ""
    for token in taken:
        offsets.append(len(text))
        text += decoder.decode(PIECES[token])
    found = [text.find(stop) for stop in stops if stop in text]
    kept = [i for i, offset in enumerate(offsets) if not found or offset < min(found)]
    assert [e.token_id for e in outcome.logprobs] == [taken[i] for i in kept]
    for entry, i in zip(outcome.logprobs, kept, strict=True):
        reference = _log_softmax(model.seen[i])[: EOS + 1]
        assert entry.offset == offsets[i]
        assert abs(entry.logprob - reference[entry.token_id]) < 1e-9
        order = sorted(range(EOS + 1), key=lambda t: (-reference[t], t))[:top]
        assert [t for t, _ in entry.top] == order
        assert np.allclose([lp for _, lp in entry.top], reference[order], rtol=0, atol=1e-9)
    # streamed: every entry once, in order, in the piece its text starts in (or later)
    assert tuple(e for piece in pieces for e in piece.logprobs) == outcome.logprobs
    before = 0
    for piece in pieces:
        after = before + len(piece.text)
        last = piece is pieces[-1]
        assert all(
            before <= e.offset < after or (last and e.offset <= after) for e in piece.logprobs
        )
        before = after


def test_no_entries_unless_asked() -> None:
    job = Job([0], None, SamplingParams(temperature=0.0), 4, (), threading.Event())
    pieces: list[Piece] = []
    outcome = run_job(Scripted([0, 1, 2], 0), job, pieces.append)
    assert outcome.text == "abab" and outcome.logprobs == ()
    assert all(piece.logprobs == () for piece in pieces)


def test_step_logprobs_handle_infinities_and_nan() -> None:
    logits = np.array([0.0, -np.inf, np.nan, np.log(3.0), 1.0])
    step = StepLogprobs(logits, 4)  # the fifth logit is beyond the vocabulary
    entry = step.entry(3, 4, 0)
    assert abs(entry.logprob - np.log(3 / 4)) < 1e-12
    assert [t for t, _ in entry.top] == [3, 0, 1, 2]
    assert entry.top[2][1] == entry.top[3][1] == -9999.0  # JSON has no -inf
    everything_impossible = StepLogprobs(np.full(3, -np.inf), 3).entry(1, 1, 0)
    assert everything_impossible.logprob == -9999.0


def test_the_two_api_shapes() -> None:
    step = StepLogprobs(np.array([2.0, 1.0, 1.0, 0.0, -1.0, 0.0, 0.0, 0.0, 0.0, 0.0]), EOS + 1)
    entries = [step.entry(8, 2, 0), step.entry(6, 1, 1)]
    chat = chat_logprobs(entries, VOCABULARY)
    assert chat["refusal"] is None
    first, second = chat["content"]
    assert first["token"] == "é" and first["bytes"] == [0xC3, 0xA9]
    assert [t["token"] for t in first["top_logprobs"]] == ["a", "b"]
    assert second["token"] == "\ufffd" and second["bytes"] == [0xC3]  # half a character
    legacy = completion_logprobs(entries, VOCABULARY)
    assert legacy["tokens"] == ["é", "\ufffd"]
    assert legacy["token_logprobs"] == [first["logprob"], second["logprob"]]
    assert legacy["top_logprobs"] == [
        {"a": first["top_logprobs"][0]["logprob"], "b": first["top_logprobs"][1]["logprob"]},
        {"a": first["top_logprobs"][0]["logprob"]},
    ]
    assert legacy["text_offset"] == [0, 1]
