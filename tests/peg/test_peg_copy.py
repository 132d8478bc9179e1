"""Parsers and incremental parsers pickle and copy: the copy parses as the original,
and feeding one never changes the other."""

from __future__ import annotations

import copy
import pickle
from collections.abc import Callable

from hypothesis import given, settings
from hypothesis import strategies as st
from tests.peg.peg_strategies import any_parser

from gbnfkit import peg
from gbnfkit.peg import IncrementalParser, Parser

_TEXT = st.text(alphabet='xyz "\\', max_size=8)

_COPIES: list[Callable[[object], object]] = [
    copy.copy,
    copy.deepcopy,
    lambda value: pickle.loads(pickle.dumps(value)),
]


def _tool_parser() -> Parser:
    """Rules, references, a schema, classes and JSON: every kind of argument."""
    args = peg.schema(
        peg.json(), "args", {"type": "object", "properties": {"n": {"type": "integer"}}}
    )
    call = peg.rule("call", "<call>" + peg.tag("name", peg.chars("[a-z_]", 1)) + " " + args)
    body = peg.repeat(call | peg.json(), 0, 3) + peg.optional(peg.ref("call"))
    return peg.start() + body + peg.rest()


def test_parsers_pickle_to_equal_parsers_and_copy_to_themselves() -> None:
    for parser in (peg.json(), _tool_parser(), peg.until("</a>") + peg.end()):
        again = pickle.loads(pickle.dumps(parser))
        assert again == parser and hash(again) == hash(parser)
        assert b"gbnfkit.peg._" not in pickle.dumps(parser)
        assert copy.copy(parser) is parser and copy.deepcopy(parser) is parser
        text = '<call>f_g {"n": 12}[1, {"a": null}]tail'
        assert again.parse(text) == parser.parse(text)


def test_a_deep_parser_pickles() -> None:
    parser = peg.literal("x")
    for i in range(3000):  # deeper than pickle (and Python) recurse
        parser = peg.tag("t", parser) if i % 2 else peg.atomic(parser)
    assert pickle.loads(pickle.dumps(parser)) == parser


@settings(max_examples=60, derandomize=True, deadline=None)
@given(any_parser(), _TEXT, _TEXT, st.sampled_from(range(len(_COPIES))))
def test_copied_incremental_parsers_feed_as_the_original(
    parser: Parser, before: str, after: str, how: int
) -> None:
    original = parser.incremental()
    original.feed(before)
    other = _COPIES[how](original)
    assert isinstance(other, IncrementalParser) and other is not original
    assert other.text == original.text == before
    got = [other.feed(c) for c in after] + [other.finish()]
    assert original.text == before  # feeding the copy left the original alone
    expected = [original.feed(c) for c in after] + [original.finish()]
    assert got == expected
    assert got[-1] == parser.parse(before + after)
