"""Stop strings in the server's decoding loop against a plain reference: the text is the
whole output cut at the first stop string, and what is streamed is exactly that text."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
from hypothesis import given, settings
from hypothesis import strategies as st
from serve_cases import ScriptedModel

from gbnfkit import SamplingParams, Vocabulary
from gbnfkit.server._decode import Finish, Job, Piece, run_job

# single bytes, pieces of a stop string, a character split in two, and the end
PIECES = [b"a", b"b", b"ab", b"ba", b"<", b"/s", b">", b"</s>", b"\xc3", b"\xa9", "é".encode()]
EOS = len(PIECES)
VOCABULARY = Vocabulary([*PIECES, None], eos_token_ids=[EOS])


class Scripted(ScriptedModel):
    """A model that wants the tokens of ``script``, then the end."""

    vocabulary = VOCABULARY

    def __init__(self, script: Sequence[int]) -> None:
        super().__init__(script, EOS)

    def logits(self, wanted: int) -> npt.NDArray[np.float32]:
        logits = np.zeros(EOS + 1, dtype=np.float32)
        logits[wanted] = 30.0
        return logits


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(0, EOS - 1), max_size=10),
    st.lists(st.sampled_from(["ab", "b", "é", "</s>", "s>", "ba", "aa", "éa", "a<"]), max_size=3),
    st.integers(1, 12),
)
def test_the_text_is_the_output_cut_at_the_first_stop_string(
    script: list[int], stops: list[str], max_tokens: int
) -> None:
    greedy = SamplingParams(temperature=0.0)
    job = Job([0], None, greedy, max_tokens, tuple(stops), threading.Event())
    pieces: list[Piece] = []
    outcome = run_job(Scripted(script), job, pieces.append)
    text = b"".join(PIECES[t] for t in script[:max_tokens]).decode("utf-8", "replace")
    found = [text.find(stop) for stop in stops if stop in text]
    expected = text[: min(found)] if found else text
    assert outcome.text == expected
    # nothing streamed that a stop string later cut
    assert "".join(piece.text for piece in pieces) == expected
    if found:
        assert outcome.finish is Finish.STOP
    else:
        assert outcome.finish is (Finish.STOP if len(script) < max_tokens else Finish.LENGTH)
