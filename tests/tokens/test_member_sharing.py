"""The members of an object whose properties may come in any order are one rule per
set of (member, state after it), shared by the states that allow the same ones: after
`{"` and after `, "` the parse is then in the same byte state, so the token layer's
contexts (and masks) found at the first member serve the later ones
(``docs/masks.md``, "States of many groups")."""

from __future__ import annotations

import pytest
from test_masks import synthetic_vocabulary

import gbnfkit
from gbnfkit import Grammar

_KEYS = {"ab": {"type": "integer"}, "ac": {"enum": ["on", "off"]}, "b": {"type": "boolean"}}


@pytest.mark.parametrize(
    ("schema", "opening", "same"),
    [
        ({"type": "object", "properties": _KEYS}, '{"', True),
        ({"type": "object", "properties": _KEYS, "additionalProperties": False}, '{"', True),
        # inside another object and an array
        ({"type": "object", "properties": {"o": {"type": "array", "items": {
            "type": "object", "properties": _KEYS}}}}, '{"o": [{"', True),
        # a required member seen changes which members lead where: another state
        ({"type": "object", "properties": _KEYS, "required": ["ab"]}, '{"', False),
    ],
)
def test_first_and_later_members_share_their_state(
    schema: dict[str, object], opening: str, same: bool
) -> None:
    grammar = Grammar.from_json_schema(schema, property_order="any")
    compiled = gbnfkit.CompiledGrammar(grammar, synthetic_vocabulary('abco{}[]":, 01nf'))
    matcher = compiled.matcher()
    matcher.accept_text(opening)
    first = matcher._state
    matcher.accept_text('ab": 1, "')
    assert (matcher._state is first) == same
    matcher.accept_text('b": true}')
