"""Count keywords (``minItems``, ``maxItems``, ``minContains``, ``maxContains``,
``minProperties``, ``maxProperties``, ``minLength``, ``maxLength``) with large values:
exact past the engine's repetition limit, and refused past a documented limit with a
``SchemaError`` naming it (``SchemaLimits``), never a ``GrammarError`` on the converter's
own text nor a recursion reported as nesting."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

from gbnfkit import Grammar, Limits, SchemaError, SchemaLimits, SchemaOptions
from gbnfkit.schema import SchemaWarning


def _accepts(g: Grammar, text: str) -> bool:
    return g.match(text).status.value == "accept"


def _array(n: int) -> str:
    return "[" + ",".join(["1"] * n) + "]"


@pytest.mark.parametrize("schema", [
    {"type": "array", "maxItems": 10**6},
    {"type": "array", "minItems": 200_000},
    {"type": "array", "items": {"type": "integer"}, "minItems": 3, "maxItems": 150_000},
    {"type": "array", "prefixItems": [{"type": "integer"}], "maxItems": 10**30},
    {"type": "array", "contains": {"const": 1}, "minContains": 200_000},
    {"type": "array", "contains": {"const": 1}, "minContains": 2, "maxContains": 10**12},
])
def test_item_counts_above_the_repetition_limit_convert(schema: dict[str, Any]) -> None:
    """Counts above ``Limits.max_repetition`` (100,000) are written in blocks; the
    converter wrote them as one repetition, which the grammar parser then refused."""
    assert max(v for k, v in schema.items() if k.startswith(("min", "max"))) > (
        Limits().max_repetition)
    Grammar.from_json_schema(schema)


@pytest.mark.parametrize(("lo", "hi"), [(0, 10_005), (10_002, None), (3, 12_001)])
def test_item_counts_in_blocks_are_exact(lo: int, hi: int | None) -> None:
    schema: dict[str, Any] = {"type": "array", "items": {"const": 1}, "minItems": lo}
    if hi is not None:
        schema["maxItems"] = hi
    g = Grammar.from_json_schema(schema, whitespace="compact")
    for n in {0, lo - 1, lo, lo + 1, 1000, 1001, 9_999, 10_000, 10_001, *(
            (hi - 1, hi, hi + 1) if hi is not None else (20_000,))}:
        if n >= 0:
            inside = lo <= n and (hi is None or n <= hi)
            assert _accepts(g, _array(n)) == inside, (lo, hi, n)


@pytest.mark.parametrize("key", ["minLength", "maxLength", "minItems", "maxItems",
                                 "minContains", "maxContains", "minProperties",
                                 "maxProperties"])
def test_a_count_of_more_than_max_number_digits_is_refused(key: str) -> None:
    """``maxLength: 10**300`` took 22 s and wrote 5 MB of grammar (the nested blocks
    grow with the square of the digits); now past ``max_number_digits`` it is refused,
    at once, like a number bound with that many digits."""
    schema: dict[str, Any] = {key: 10**300}
    if "Contains" in key:
        schema["contains"] = {"const": 1}
    with pytest.raises(SchemaError) as info:
        Grammar.from_json_schema(schema)
    assert (info.value.limit, info.value.keyword) == ("max_number_digits", key)
    assert "301 digits" in str(info.value)
    # strict=False: the keyword is ignored, with a warning (the grammar accepts more)
    with pytest.warns(SchemaWarning, match=key):
        Grammar.from_json_schema(schema, strict=False)


def test_a_count_of_max_number_digits_converts_and_a_raised_limit_accepts_more() -> None:
    for hi in (10**40 - 1, 10**39):
        g = Grammar.from_json_schema({"type": "string", "maxLength": hi}, whitespace="compact")
        assert _accepts(g, '"' + "a" * 1_234 + '"')
    raised = SchemaOptions(limits=SchemaLimits(max_number_digits=60))
    g = Grammar.from_json_schema({"type": "array", "minItems": 10**50}, options=raised)
    assert not _accepts(g, _array(3))


@pytest.mark.parametrize("key", ["minProperties", "maxProperties"])
def test_property_counts_beside_unlisted_properties_are_limited(key: str) -> None:
    """One grammar rule per count: ``maxProperties: 1000`` on an open object ran out
    of Python's recursion and was reported as "schema nests too deeply"."""
    schema = {"type": "object", key: 1000}
    with pytest.raises(SchemaError) as info:
        Grammar.from_json_schema(schema)
    assert (info.value.limit, info.value.keyword) == ("max_counted_members", key)
    assert "nests" not in str(info.value)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SchemaWarning)
        loose = Grammar.from_json_schema(schema, strict=False, whitespace="compact")
    assert _accepts(loose, "{}") and _accepts(loose, '{"a":1,"b":2}')
    at_limit = Grammar.from_json_schema({"type": "object", key: 500}, whitespace="compact")
    members = ",".join(f'"k{i}":0' for i in range(500))
    assert _accepts(at_limit, "{" + members + "}")
    assert _accepts(at_limit, "{}") == (key == "maxProperties")
    assert _accepts(at_limit, '{"k":0,' + members + "}") == (key == "minProperties")


def test_property_counts_of_a_closed_object_are_not_limited() -> None:
    """Without unlisted properties the count never exceeds the listed ones."""
    schema = {"type": "object", "properties": {"a": {}, "b": {}}, "maxProperties": 10**6,
              "additionalProperties": False}
    g = Grammar.from_json_schema(schema, whitespace="compact")
    assert _accepts(g, '{"a":1,"b":2}')


@pytest.mark.parametrize("order", ["schema", "any"])
def test_a_raised_member_count_limit_is_exact(order: str) -> None:
    """The states per count are made one after the other, not nested on Python's
    stack: a raised ``max_counted_members`` converts (it ran out of recursion at about
    900 before) and counts exactly."""
    options = SchemaOptions(limits=SchemaLimits(max_counted_members=5000))
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"],
              "minProperties": 1500, "maxProperties": 2000}
    g = Grammar.from_json_schema(schema, options=options, property_order=order,
                                 whitespace="compact")
    for n, inside in ((1499, False), (1500, True), (2000, True), (2001, False)):
        text = '{"a":1' + "".join(f',"k{i}":0' for i in range(n - 1)) + "}"
        assert _accepts(g, text) == inside, n


@pytest.mark.parametrize("order", ["schema", "any"])
def test_thousands_of_listed_properties_convert(order: str) -> None:
    """An object listing 3,000 properties was "schema nests too deeply" in schema order
    (one state per listed property, nested on Python's stack)."""
    schema = {"type": "object", "properties": {f"p{i}": {"type": "integer"}
                                               for i in range(3000)}}
    g = Grammar.from_json_schema(schema, property_order=order, whitespace="compact")
    assert _accepts(g, '{"p0":1,"p2999":2}')
    assert _accepts(g, '{"p2999":2,"p0":1}') == (order == "any")


@pytest.mark.parametrize(("n", "lo", "hi"), [(40, 0, None), (500, 150, 480), (3000, 0, None)])
def test_long_tuples_convert_and_count_exactly(n: int, lo: int, hi: int | None) -> None:
    """``prefixItems`` of 500 items gave a GrammarError on the converter's own text (its
    optional items nested in parentheses more than 100 deep) and of 1,200 "schema nests
    too deeply"; now every 32 optional items become a rule, made in a loop."""
    schema: dict[str, Any] = {"type": "array", "items": False, "minItems": lo,
                              "prefixItems": [{"const": i} for i in range(n)]}
    if hi is not None:
        schema["maxItems"] = hi
    g = Grammar.from_json_schema(schema, whitespace="compact")
    top = n if hi is None else hi
    for m in {0, 1, lo - 1, lo, 31, 32, 33, 64, 65, top - 1, top, top + 1}:
        if 0 <= m <= n:
            text = "[" + ",".join(str(i) for i in range(m)) + "]"
            assert _accepts(g, text) == (lo <= m <= top), (n, lo, hi, m)
    assert not _accepts(g, "[0,2]")
