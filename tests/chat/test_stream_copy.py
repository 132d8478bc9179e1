"""A MessageStream copied (copy, deepcopy, pickle) mid-output streams on as the original,
and feeding the copy never changes the original."""

from __future__ import annotations

import copy
import pickle
from collections.abc import Callable

from chat_corpus import FORMATS, TOOLS, messages, render
from hypothesis import given, settings
from hypothesis import strategies as st

from gbnfkit.chat import ChatFormat, MessageStream

_COPIES: list[Callable[[MessageStream], object]] = [
    copy.copy,
    copy.deepcopy,
    lambda stream: pickle.loads(pickle.dumps(stream)),
]


@st.composite
def _outputs(draw: st.DrawFn) -> tuple[ChatFormat, str, int, int]:
    fmt = draw(st.sampled_from(FORMATS))
    text = render(draw(messages(fmt)), fmt)
    return fmt, text, draw(st.integers(0, len(text))), draw(st.sampled_from(range(3)))


@settings(max_examples=40, derandomize=True, deadline=None)
@given(_outputs())
def test_a_copied_stream_streams_as_the_original(case: tuple[ChatFormat, str, int, int]) -> None:
    fmt, text, cut, how = case
    original = MessageStream(fmt, TOOLS)
    for i in range(0, cut, 3):
        original.feed(text[i : min(i + 3, cut)])
    other = _COPIES[how](original)
    assert isinstance(other, MessageStream) and other is not original
    got = [other.feed(c) for c in text[cut:]], other.finish()
    assert original.text == other.text[:cut] == text[:cut]  # the original was not fed
    assert not original.is_closed
    expected = [original.feed(c) for c in text[cut:]], original.finish()
    assert got == expected
