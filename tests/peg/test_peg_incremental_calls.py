"""Property test: any sequence of calls on one ``IncrementalParser`` (``feed``, ``parse``
of a text that extends the last one or not, ``finish``, ``reset``), with results read at
once or only later, gives exactly the fresh ``parser.parse`` of each text; parsers with
the leaves ``feed`` skips parsing for (JSON values, ``rest``, character runs, ``until``),
recursion and lookahead."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from peg_strategies import any_parser

from gbnfkit import PegError, peg
from gbnfkit.peg import Parser

_LEAVES = st.sampled_from(
    [
        peg.json(),
        peg.json_object(),
        peg.json_array(),
        peg.json_number(),
        peg.rest(),
        peg.json_string_content(),
        peg.json_member("x", peg.json()),
        peg.start(),
        peg.chars("[a-z]", 0, None),
        peg.literal("xx"),
        peg.rule("r", "(" + peg.optional(peg.ref("r")) + ")"),
        peg.until("xx"),
        peg.until('"x'),
    ]
)


@st.composite
def _parsers(draw: st.DrawFn) -> Parser:
    a = draw(any_parser(depth=2))
    leaf = draw(_LEAVES)
    c = draw(any_parser(depth=1))
    return draw(
        st.sampled_from(
            [a + leaf + c, leaf + a, peg.zero_or_more(leaf | a), peg.tag("t", leaf) + c]
        )
    )


_TEXT = st.text(alphabet='xyz "\\{}[],:01.-e()a\nlntu', max_size=20)
_CALLS = st.lists(
    st.tuples(
        st.sampled_from(["feed", "feed", "feed", "extend", "parse", "finish", "reset", "read"]),
        _TEXT,
        st.integers(0, 30),
        st.booleans(),
    ),
    max_size=12,
)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(_parsers(), _CALLS)
def test_every_call_sequence_gives_the_fresh_results(
    p: Parser, calls: list[tuple[str, str, int, bool]]
) -> None:
    try:
        p.parse("")
    except PegError:  # e.g. a left-recursive combination: refused, not compared
        return
    stream = p.incremental()
    text = ""
    unread = []  # (text, partial, result) read after later calls
    for call, new, k, partial in calls:
        if call == "feed":
            chunk = new[: k % 5 + 1]
            text += chunk
            unread.append((text, True, stream.feed(chunk)))
        elif call in ("extend", "parse"):  # the next text extends this one, or starts afresh
            text = text + new if call == "extend" else new[:k]
            unread.append((text, partial, stream.parse(text, partial)))
        elif call == "finish":
            unread.append((text, False, stream.finish()))
        elif call == "reset":
            stream.reset()
            text = ""
        elif unread:
            seen, was_partial, result = unread.pop(k % len(unread))
            assert result == p.parse(seen, partial=was_partial), (p, seen, was_partial)
        assert stream.text == text
    for seen, was_partial, result in unread:
        assert result == p.parse(seen, partial=was_partial), (p, seen, was_partial)
