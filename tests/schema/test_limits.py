"""Each resource limit of the converter (``gbnfkit.SchemaLimits``): just under it the
schema converts, past it the converter refuses with ``SchemaError`` naming the keyword,
the limit and how to raise it (never an unbounded grammar); a raised limit accepts the
schema, a lowered one refuses smaller schemas."""

from __future__ import annotations

import dataclasses
import json
import re
import warnings
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from gbnfkit import (
    ArgumentError,
    Grammar,
    Limits,
    SchemaError,
    SchemaLimits,
    SchemaOptions,
    json_schema_to_gbnf,
)
from gbnfkit.schema import SchemaWarning

DEFAULTS = SchemaLimits()


def _unique(n: int) -> dict[str, Any]:
    return {"type": "array", "uniqueItems": True, "items": {"enum": list(range(n))}}


def _patterns(n: int) -> dict[str, Any]:
    return {"type": "object", "patternProperties": {
        f"^{chr(97 + i)}": {"type": "integer", "minimum": i} for i in range(n)}}


def _multiples(count: int) -> dict[str, Any]:
    return {"type": "integer", "multipleOf": 3, "minimum": 0,
            "maximum": 3 * (count - 1)}


def _spread(n: int) -> dict[str, Any]:
    """n branches, each needing two of n properties: sibling properties copied n times.
    The names are single characters: no prefix shared, so a branch's rule of its
    optional keys (left-factored, written once per branch) is n options as well."""
    names = [chr(0x4E00 + i) for i in range(n)]
    return {"type": "object",
            "properties": {name: {"type": "integer", "minimum": i}
                           for i, name in enumerate(names)},
            "anyOf": [{"required": [names[i], names[(i + 1) % n]]} for i in range(n)]}


def _addresses(n: int) -> dict[str, Any]:
    """The shape of MaskBench dev ``Github_medium---o35868.json``: a ``oneOf`` of n country
    branches without ``required``.  They overlap (an object without those keys matches
    them all), so each becomes "this branch and not the others": n - 1 negated objects of
    3 properties, each an ``anyOf``, distributed into one another (about 2 * 3 ** (n - 2)
    alternatives).  Postal codes of a different length in each branch overlap without
    being the same schema, which keeps the finer analysis (docs/schema.md, "oneOf: the
    finer analysis") from naming the objects of one branch that fail another."""
    return {"type": "object",
            "properties": {"street": {"type": "string", "maxLength": 50}},
            "oneOf": [{"properties": {
                "country": {"enum": [f"C{i}"]},
                "state": {"enum": [f"S{i}-{j}" for j in range(20)]},
                "postalCode": {"type": "string", "maxLength": 10 + i}}} for i in range(n)]}


def _negated(n: int) -> dict[str, Any]:
    return {"not": {"enum": [f"word{i:05d}" for i in range(n)]}}


def _multiple_of(m: int) -> dict[str, Any]:
    return {"type": "integer", "multipleOf": m}


def _subsets(n: int) -> dict[str, Any]:
    """``unevaluatedProperties`` beside n overlapping ``anyOf`` branches."""
    return {"type": "object", "unevaluatedProperties": False,
            "anyOf": [{"properties": {f"p{i}": {"type": "integer"}}} for i in range(n)]}


def _nested(k: int) -> dict[str, Any]:
    """An anyOf of 2 beside k anyOf of 2: 2**(k+1) alternatives once distributed."""
    return {"anyOf": [{"type": "integer"}, {"type": "string"}],
            "allOf": [{"anyOf": [{"minimum": i}, {"maxLength": i}]} for i in range(k)]}


def _nfa(n: int) -> dict[str, Any]:
    """A pattern of n alternatives (a large NFA, a small DFA), under not."""
    return {"type": "string", "not": {"pattern": "^(" + "|".join(["ab"] * n) + ")$"}}


def _dfa(n: int) -> dict[str, Any]:
    return {"type": "string", "not": {"pattern": f"^[ab]{{{n}}}$"}}


def _product(n: int) -> dict[str, Any]:
    """not a pattern, at most n characters: the product with a counter (2n + 3 states)."""
    return {"type": "string", "not": {"pattern": "x"}, "maxLength": n}


def _bound(n: int) -> dict[str, Any]:
    """A maximum of n + 1 digits before the point."""
    return {"type": "number", "maximum": 10**n}


def _members(n: int) -> dict[str, Any]:
    """At most n members, any names: one grammar rule per count."""
    return {"type": "object", "maxProperties": n}


def _convert(schema: Any, **limits: int) -> str:
    return json_schema_to_gbnf(schema, options=SchemaOptions(
        property_order="any", limits=SchemaLimits(**limits)))


# limit, keyword refused, schema builder, (n converting, n refused) with the default,
# the value that makes the refused one convert (None: too slow for a test), and a lowered
# value with (n converting, n refused) under it
CASES = [
    ("max_unique_values", "uniqueItems", _unique, (8, 9), 9, (3, (3, 4))),
    ("max_pattern_properties", "patternProperties", _patterns, (6, 7), 7, (2, (2, 3))),
    ("max_listed_multiples", "multipleOf", _multiples, (1000, 1001), 1001, (10, (10, 11))),
    ("max_multiple_of", "multipleOf", _multiple_of, (1000, 1001), 1001, (7, (7, 8))),
    ("max_subset_branches", "unevaluatedProperties", _subsets, (4, 5), 5, (2, (2, 3))),
    ("max_negation_chars", "not", _negated, (100, 5000), 10**6, (500, (10, 100))),
    ("max_nfa_states", "not", _nfa, (799, 800), 8000, (100, (10, 40))),
    ("max_dfa_states", "not", _dfa, (398, 399), 500, (10, (5, 10))),
    ("max_product_states", "not", _product, (998, 999), 2001, (23, (10, 11))),
    ("max_alternatives", "anyOf", _nested, (11, 12), 8192, (1024, (10, 11))),
    ("max_oneof_chars", "oneOf", _addresses, (5, None), None, (3000, (2, 3))),
    ("max_grammar_chars", "anyOf", _spread, (40, 320), None, (3000, (2, 5))),
    ("max_number_digits", "maximum", _bound, (39, 40), 400, (5, (4, 5))),
    ("max_counted_members", "maxProperties", _members, (500, 501), 501, (10, (10, 11))),
]
IDS = [case[0] for case in CASES]


def _refused(schema: Any, limit: str, keyword: str | None, **limits: int) -> SchemaError:
    with pytest.raises(SchemaError) as info:
        _convert(schema, **limits)
    assert (info.value.limit, info.value.keyword) == (limit, keyword)
    # the message names the limit in force and how to raise it
    value = limits.get(limit, getattr(DEFAULTS, limit))
    assert f"limit {limit}={value:,}: raise it with " in str(info.value)
    assert f"SchemaOptions(limits=SchemaLimits({limit}=...))" in str(info.value)
    return info.value


@pytest.mark.parametrize(("limit", "keyword", "build", "default", "raised", "lowered"),
                         CASES, ids=IDS)
def test_past_the_default_is_refused(limit: str, keyword: str, build: Any,
                                     default: tuple[int, int | None], raised: int | None,
                                     lowered: Any) -> None:
    ok, over = default
    Grammar.from_json_schema(build(ok), property_order="any")
    if over is not None:
        _refused(build(over), limit, keyword)


@pytest.mark.parametrize(("limit", "keyword", "build", "default", "raised", "lowered"),
                         [case for case in CASES if case[4] is not None],
                         ids=[case[0] for case in CASES if case[4] is not None])
def test_a_raised_limit_accepts(limit: str, keyword: str, build: Any,
                                default: tuple[int, int], raised: int, lowered: Any) -> None:
    _convert(build(default[1]), **{limit: raised})


@pytest.mark.parametrize(("limit", "keyword", "build", "default", "raised", "lowered"),
                         CASES, ids=IDS)
def test_a_lowered_limit_refuses_smaller_schemas(limit: str, keyword: str, build: Any,
                                                 default: Any, raised: int | None,
                                                 lowered: tuple[int, tuple[int, int]]) -> None:
    value, (ok, over) = lowered
    _convert(build(ok), **{limit: value})
    _refused(build(over), limit, keyword, **{limit: value})


def test_not_strict_warns_with_the_hint_instead() -> None:
    with pytest.warns(SchemaWarning, match=re.escape("SchemaLimits(max_unique_values=...)")):
        json_schema_to_gbnf(_unique(9), strict=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        json_schema_to_gbnf(_unique(9), strict=False,
                            limits=SchemaLimits(max_unique_values=9))


def test_a_limit_not_reached_is_not_named() -> None:
    # uniqueItems over strings is refused whatever the limit: no limit to raise
    with pytest.raises(SchemaError) as info:
        json_schema_to_gbnf({"type": "array", "uniqueItems": True, "items": {"type": "string"}})
    assert info.value.limit is None
    assert "SchemaLimits" not in str(info.value)
    with pytest.raises(SchemaError) as info:
        json_schema_to_gbnf({"type": "integer", "multipleOf": 7, "minimum": 0})
    assert info.value.limit is None


@pytest.mark.parametrize(("option", "limit", "top"), [
    ("max_whitespace", "max_counted_characters", 1000),
    ("max_integer_digits", "max_counted_characters", 1000),
    ("max_fraction_digits", "max_counted_characters", 1000),
    ("max_required_any_order", "max_tracked_required", 16),
])
def test_option_caps_are_limits(option: str, limit: str, top: int) -> None:
    assert getattr(DEFAULTS, limit) == top
    SchemaOptions(**{option: top})
    with pytest.raises(SchemaError) as info:
        SchemaOptions(**{option: top + 1})
    assert info.value.limit == limit
    assert f"SchemaLimits({limit}=...)" in str(info.value)
    SchemaOptions(**{option: top + 1, "limits": SchemaLimits(**{limit: top + 1})})
    with pytest.raises(SchemaError) as info:
        SchemaOptions(**{option: 4, "limits": SchemaLimits(**{limit: 3})})
    assert info.value.limit == limit
    # a bad value that no limit would admit does not name one
    with pytest.raises(SchemaError) as info:
        SchemaOptions(**{option: -1})
    assert info.value.limit is None


def test_raised_counted_characters_reach_the_grammar() -> None:
    text = json_schema_to_gbnf({"type": "integer"}, max_integer_digits=1500,
                               limits=SchemaLimits(max_counted_characters=1500))
    assert "[0-9]{0,1499}" in text


@pytest.mark.parametrize("value", [0, -1, True, 2.5, "10", None])
def test_bad_limit_values(value: Any) -> None:
    for field in dataclasses.fields(SchemaLimits):
        with pytest.raises(SchemaError, match=f"limit {field.name} must be a positive int"):
            SchemaLimits(**{field.name: value})


def test_limits_are_a_typed_frozen_option() -> None:
    limits = SchemaLimits(max_dfa_states=800)
    with pytest.raises(dataclasses.FrozenInstanceError):
        limits.max_dfa_states = 1  # type: ignore[misc]
    assert SchemaOptions().limits == SchemaLimits()
    assert SchemaOptions(limits=limits).limits is limits
    with pytest.raises(SchemaError, match="option limits must be a SchemaLimits, not dict"):
        json_schema_to_gbnf(True, limits={"max_dfa_states": 800})
    with pytest.raises(SchemaError, match="option limits must be a SchemaLimits"):
        SchemaOptions(limits=None)  # type: ignore[arg-type]
    nine = SchemaLimits(max_unique_values=9)
    for g in (Grammar.from_json_schema(_unique(9), options=SchemaOptions(limits=nine)),
              # Grammar.from_json_schema's ``limits`` takes a gbnfkit.Limits or these
              Grammar.from_json_schema(_unique(9), limits=nine),
              Grammar.from_json_schema(_unique(9), limits=Limits(max_stacks=100),
                                       options=SchemaOptions(limits=nine))):
        assert g.match(json.dumps(list(range(9)))).status.value == "accept"
        assert g.match("[1, 2, 1]").status.value != "accept"
    with pytest.raises(ArgumentError, match="limits must be Limits"):
        Grammar.from_json_schema(True, limits={"max_stacks": 1})


def test_docs_table_lists_every_limit_and_its_default() -> None:
    doc = (Path(__file__).parents[2] / "docs" / "schema.md").read_text(encoding="utf-8")
    start = doc.index("## Resource limits")
    section = doc[start:doc.find("\n## ", start + 1)]
    rows = dict(re.findall(r"^\| `(\w+)` \| ([\d,]+) \|", section, re.MULTILINE))
    assert rows == {f.name: f"{f.default:,}" for f in dataclasses.fields(SchemaLimits)}


def test_grammar_size_cap_names_the_composition() -> None:
    error = _refused(_spread(320), "max_grammar_chars", "anyOf")
    assert f"{DEFAULTS.max_grammar_chars:,}" in str(error)
    assert error.pointer is not None and error.pointer.startswith("/anyOf/")


def test_grammar_size_cap_without_a_composition_names_the_subschema() -> None:
    # a property name of 40,000 characters: a rule per character for the keys other
    # than it; no composition to blame (the message guessed one, "[anyOf]", before)
    schema = {"type": "object", "properties": {"n": {"type": "object", "properties": {
        "k" * 40_000: {"type": "integer"}}}}}
    error = _refused(schema, "max_grammar_chars", None)
    assert error.pointer == "/properties/n"
    assert "this subschema's own rules: " in str(error)
    assert "sibling keywords" not in str(error)


def test_exploding_one_of_is_refused_before_the_work() -> None:
    # used to take ~25 s (building towards max_grammar_chars, refused deep inside the
    # rewrite); now refused at the oneOf itself, naming it and the limit
    schema = {"type": "object", "properties": {"home": {"$ref": "#/definitions/address"}},
              "definitions": {"address": _addresses(10)}}
    with pytest.raises(SchemaError) as info:
        json_schema_to_gbnf(schema, property_order="any")
    assert info.value.keyword == "oneOf"
    assert info.value.pointer == "/definitions/address"
    assert f"more than {DEFAULTS.max_alternatives:,} alternatives" in str(info.value)
    assert info.value.limit == "max_alternatives"


def test_spread_under_the_limit_is_exact() -> None:
    g = Grammar.from_json_schema(_addresses(5), property_order="any")
    assert g.match('{"country": "C1", "state": "S1-3"}').status.value == "accept"
    assert g.match('{"state": "S2-0"}').status.value == "accept"
    # no key of the branches: every branch holds, so oneOf fails
    assert g.match('{"street": "x"}').status.value != "accept"
    assert g.match('{"country": "C1", "state": "S2-0"}').status.value != "accept"


def test_long_flat_any_of_is_not_counted_as_a_spread() -> None:
    # 2 x 3,000 alternatives, but all written out: four per written branch are allowed
    schema = {"anyOf": [{"const": i} for i in range(3000)],
              "allOf": [{"anyOf": [{"type": "integer"}, {"type": "string"}]}]}
    g = Grammar.from_json_schema(schema, property_order="any")
    assert g.match("2999").status.value == "accept"
    assert g.match("3000").status.value != "accept"


def test_unique_items_under_the_limit_is_exact() -> None:
    n = DEFAULTS.max_unique_values
    g = Grammar.from_json_schema(_unique(n))
    assert g.match(json.dumps(list(range(n)))).status.value == "accept"
    assert g.match("[1, 2, 1]").status.value != "accept"


def test_a_double_max_bound_is_exact_with_the_digits_raised() -> None:
    """``maximum: 1.7976931348623157e308`` (a generator's "any double") is 309 digits
    before the point: refused by default, exact once ``max_number_digits`` allows it."""
    top = 1.7976931348623157e308
    schema = {"type": "number", "maximum": top, "exclusiveMinimum": -top}
    with pytest.raises(SchemaError) as info:
        Grammar.from_json_schema(schema)
    assert info.value.limit == "max_number_digits"
    grammar = Grammar.from_json_schema(
        schema, options=SchemaOptions(limits=SchemaLimits(max_number_digits=309)))
    whole = int(Decimal(str(top)))
    for text, inside in [("0", True), ("-1.5", True), (str(whole), True),
                         (str(whole + 1), False), (f"{whole}.0", True), (f"{whole}.1", False),
                         (f"-{whole}", False), (f"-{whole - 1}.9", True),
                         ("1" + "0" * 308, True), ("1" + "0" * 309, False), ("9" * 309, False)]:
        assert grammar.match(text).accepted is inside, text[:20]
