"""Bugs found by the differential of MaskBench dev's schemas against ``jsonschema``
(/work/repro/sound14/diff.py: documents walked from each grammar must be valid, mutations
of valid documents that stay valid must be accepted), each pinned on a small schema."""

from __future__ import annotations

import itertools
import json
import warnings

import pytest

from gbnfkit import Grammar, SchemaError, SchemaOptions
from gbnfkit.schema import SchemaWarning

# ---------------------------------------------------------------- constant objects

_VALUE = {"a": 1, "b": {"x": [1, {"q": 2, "r": "é"}], "y": None}, "c": "boom"}


def _reordered(value: object, order: tuple[str, ...] | None = None) -> object:
    """``value`` with every object's keys reversed (the top one's in ``order``)."""
    if isinstance(value, dict):
        keys = order if order is not None else tuple(reversed(list(value)))
        return {k: _reordered(value[k]) for k in keys}
    if isinstance(value, list):
        return [_reordered(v) for v in value]
    return value


@pytest.mark.parametrize("schema", [{"const": _VALUE}, {"enum": [0, _VALUE]},
                                    {"allOf": [{"enum": [_VALUE]}, {"not": {"required": ["v"]}}]}])
@pytest.mark.parametrize("compact", [False, True])
def test_a_constant_object_is_accepted_in_any_key_order(schema: object, compact: bool) -> None:
    # MaskBench Synthesized---draft2019_09_valid_additionalProperties_id2_subschema1_not_2:
    # {"enum": [{"bar": 2, "foo": 1, "quux": "boom"}]} refused {"quux": "boom", "bar": 2,
    # "foo": 1}, which jsonschema finds valid (objects are unordered), with
    # property_order=any: a constant object was written in its given order only
    g = Grammar.from_json_schema(schema, property_order="any", compact_constants=compact)
    for order in itertools.permutations(_VALUE):
        text = json.dumps(_reordered(_VALUE, order), separators=(",", ":"))
        assert g.match(text).accepted, text
    assert g.match('{ "c" : "boom", "a" : 1.0, "b" : {"y": null, "x": [1, {"r": "\\u00e9", '
                   '"q": 2}]}}').accepted is not compact
    for wrong in ['{"a":1,"c":"boom"}', '{"a":1,"a":1,"c":"boom"}',
                  '{"c":"boom","a":1,"b":{"x":[1,{"q":2,"r":"é"}],"y":null},"a":1}',
                  '{"c":"boom","a":1,"b":{"x":[{"q":2,"r":"é"},1],"y":null}}']:
        assert not g.match(wrong).accepted, wrong


def test_in_schema_order_a_constant_object_keeps_its_written_order() -> None:
    g = Grammar.from_json_schema({"const": {"a": 1, "b": 2}})
    assert g.match('{"a": 1, "b": 2}').accepted
    assert not g.match('{"b": 2, "a": 1}').accepted


def test_a_constant_object_past_the_tracked_count_keeps_its_order_with_a_warning() -> None:
    value = {f"k{i}": i for i in range(4)}
    options = SchemaOptions(property_order="any", max_required_any_order=3)  # type: ignore[arg-type]
    with pytest.warns(SchemaWarning, match=r"constant object of 4 members .* \[const\] at /"):
        g = Grammar.from_json_schema({"const": value}, options=options)
    assert g.match(json.dumps(value)).accepted
    assert not g.match(json.dumps(dict(reversed(value.items())))).accepted
    with warnings.catch_warnings():
        warnings.simplefilter("error", SchemaWarning)
        g = Grammar.from_json_schema({"const": value}, property_order="any")
    assert g.match(json.dumps(dict(reversed(value.items())))).accepted


# ---------------------------------------------------------------- leap seconds

@pytest.mark.parametrize("fmt", ["time", "date-time"])
def test_a_leap_second_is_accepted_only_at_23_59_utc(fmt: str) -> None:
    # MaskBench Github_medium---o33925: a walk of the grammar wrote "6602-04-06T10:31:60Z"
    # for a date-time; RFC 3339 5.7 (and the JSON Schema test suite) allow second 60 only
    # where the UTC time is 23:59 ("22:59:60Z", "23:59:60+01:00" are invalid)
    g = Grammar.from_json_schema({"type": "string", "format": fmt})
    day = "1998-12-31T" if fmt == "date-time" else ""
    for ok in ["23:59:60Z", "23:59:60z", "23:59:60.5+00:00", "23:59:60-00:00", "10:31:59Z",
               "23:59:59+01:00", "00:00:00.25-05:30"]:
        assert g.match(json.dumps(day + ok)).accepted, ok
    for bad in ["10:31:60Z", "22:59:60Z", "23:58:60Z", "23:59:60+01:00", "12:27:60+09:56",
                "23:59:61Z", "24:00:00Z",
                # valid, but refused (docs/schema.md: a leap second only written in UTC)
                "15:59:60.123-08:00", "01:29:60+01:30"]:
        assert not g.match(json.dumps(day + bad)).accepted, bad


# ---------------------------------------------------------------- $ref to an empty schema

_DISALLOWED = {"not": {"type": ["array", "boolean", "integer", "number", "null", "object",
                                "string"]}}


def _live(grammar: Grammar, prefix: str) -> bool:
    """Whether ``prefix`` is read and leaves something to read or an end."""
    state = grammar.start()
    for c in prefix:
        if not state.allows(c):
            return False
        state = state.feed(c)
    return bool(state.allowed())


@pytest.mark.parametrize("order", ["any", "schema"])
def test_a_property_whose_ref_accepts_nothing_is_left_out(order: str) -> None:
    # MaskBench Github_medium---o4179 (EDDN journal): "Latitude": {"$ref":
    # "#/definitions/disallowed"}, a schema no value satisfies; a walk of the grammar
    # read '{"Latitude":' and then found no character allowed: the key was kept and its
    # value was an empty rule, so a model writing the key was left with an empty mask
    schema = {"definitions": {"disallowed": _DISALLOWED},
              "type": "object", "properties": {"Latitude": {"$ref": "#/definitions/disallowed"},
                                                "b": {"type": "string"}}}
    g = Grammar.from_json_schema(schema, property_order=order)
    assert not _live(g, '{"Latitude"')
    assert not _live(g, '{"b": "", "Latitude"')
    assert g.match('{"b": "x", "Latitudes": 1}').accepted
    # the same schema written in place, for comparison
    inline = {"type": "object", "properties": {"Latitude": _DISALLOWED, "b": {"type": "string"}}}
    assert not _live(Grammar.from_json_schema(inline, property_order=order), '{"Latitude"')


def test_a_ref_that_accepts_nothing_drops_its_branch_or_empties_its_container() -> None:
    defs = {"$defs": {"no": {"not": {}}}}
    g = Grammar.from_json_schema({**defs, "type": "array", "items": {"$ref": "#/$defs/no"}})
    assert g.match("[]").accepted
    assert not _live(g, "[1") and not _live(g, '["') and not _live(g, "[{")
    g = Grammar.from_json_schema({**defs, "anyOf": [{"$ref": "#/$defs/no"}, {"type": "null"}]})
    assert g.match("null").accepted and not _live(g, "1")
    with pytest.raises(SchemaError, match="accepts no instance"):
        Grammar.from_json_schema({**defs, "$ref": "#/$defs/no"})
    with pytest.raises(SchemaError, match="accepts no instance"):
        Grammar.from_json_schema({**defs, "type": "object", "required": ["a"],
                                  "properties": {"a": {"$ref": "#/$defs/no"}}})
