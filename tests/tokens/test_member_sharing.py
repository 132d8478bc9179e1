"""The members of an object whose properties may come in any order are one rule per
set of (member, state after it), shared by the states that allow the same ones, and
an array's items (or a free JSON object's members) are read at one place: after `{"`
and after `, "` (`[` and `, `) the parse is then in the same byte state, so the token
layer's contexts (and masks) found at the first member serve the later ones
(``docs/schema.md``, "Objects in any order")."""

from __future__ import annotations

import pytest
from test_masks import synthetic_vocabulary

import gbnfkit
from gbnfkit import Grammar

_KEYS = {"ab": {"type": "integer"}, "ac": {"enum": ["on", "off"]}, "b": {"type": "boolean"}}


@pytest.mark.parametrize(
    ("schema", "opening", "member", "same"),
    [
        ({"type": "object", "properties": _KEYS}, '{"', 'ab": 1, "', True),
        ({"type": "object", "properties": _KEYS, "additionalProperties": False}, '{"',
         'ab": 1, "', True),
        # a required member seen changes which members lead where: another state
        ({"type": "object", "properties": _KEYS, "required": ["ab"]}, '{"', 'ab": 1, "', False),
        # the items of an array, typed or any JSON values, and the members of an object
        # whose values may be anything
        ({"type": "array", "items": {"type": "object", "properties": _KEYS}}, '[{"',
         'b": true}, {"', True),
        ({"type": "array"}, '[{"', 'a": [1, 0]}, {"', True),
        ({"type": "array"}, '[[', '0, {"a": 1}], [', True),
        ({"type": "object", "additionalProperties": {"type": "object"}}, '{"a": {"',
         'b": 1, "', True),
    ],
)
def test_first_and_later_members_share_their_state(
    schema: dict[str, object], opening: str, member: str, same: bool
) -> None:
    grammar = Grammar.from_json_schema(schema, property_order="any")
    compiled = gbnfkit.CompiledGrammar(grammar, synthetic_vocabulary('abco{}[]":, 01nf'))
    matcher = compiled.matcher()
    matcher.accept_text(opening)
    first = matcher._state
    matcher.accept_text(member)
    assert (matcher._state is first) == same


def test_members_in_schema_order_are_read_at_one_place() -> None:
    """In schema order a member comes first or after others in the same rule (its key
    and what follows), so the stacks after `, "` are among those after `{"`."""
    schema = {"type": "object", "properties": _KEYS, "additionalProperties": False}
    grammar = Grammar.from_json_schema(schema)
    compiled = gbnfkit.CompiledGrammar(grammar, synthetic_vocabulary('abco{}[]":, 01nf'))
    matcher = compiled.matcher()
    matcher.accept_text('{"')
    first = set(matcher._state.stacks)
    matcher.accept_text('ab": 1, "')
    assert set(matcher._state.stacks) < first
