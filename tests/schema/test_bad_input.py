"""Malformed schemas and options raise SchemaError and nothing else."""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gbnfkit import Grammar, SchemaError, json_schema_to_gbnf
from gbnfkit.schema import SchemaWarning
from gbnfkit.schema._shapes import _SHAPES

KEYWORDS = ["type", "properties", "required", "additionalProperties", "patternProperties",
            "items", "prefixItems", "minItems", "maxItems", "contains", "minLength",
            "maxLength", "pattern", "format", "minimum", "maximum", "exclusiveMinimum",
            "exclusiveMaximum", "multipleOf", "enum", "const", "anyOf", "oneOf", "allOf",
            "not", "$ref", "$defs", "minProperties", "maxProperties", "dependentRequired",
            "uniqueItems", "if", "then"]
values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-3, 30), st.floats(-5, 5),
              # integers beyond a float, and beyond what Python prints (4,300 digits)
              st.sampled_from([20, -400, 5000]).map(lambda d: (-1 if d < 0 else 1) * 10**abs(d)),
              st.sampled_from(["string", "integer", "object", "array", "#/$defs/a", "^a+$",
                               "date", "(", "a", "^a{4294967296}$", "a{²}"])),
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(st.sampled_from(KEYWORDS + ["a", "b"]), inner,
                                            max_size=3)),
    max_leaves=12,
)
schemas = st.dictionaries(st.sampled_from(KEYWORDS), values, max_size=4)


@settings(max_examples=300, deadline=None)
@given(schema=schemas, strict=st.booleans())
def test_malformed_schemas_raise_schema_error_only(schema: dict[str, Any], strict: bool) -> None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SchemaWarning)
            text = json_schema_to_gbnf(schema, strict=strict)
    except SchemaError:
        return
    Grammar.from_gbnf(text)


# every keyword whose value's shape is checked, with what the message says it must be
SHAPES = {
    **dict.fromkeys(["properties", "patternProperties", "$defs", "definitions",
                     "dependentSchemas"], "an object of schemas"),
    **dict.fromkeys(["additionalProperties", "contains", "not", "if", "then", "else",
                     "propertyNames", "additionalItems", "unevaluatedItems",
                     "unevaluatedProperties"], "a schema"),
    "items": "a schema or an array of schemas",
    **dict.fromkeys(["allOf", "anyOf", "oneOf", "prefixItems"], "a non-empty array of schemas"),
    **dict.fromkeys(["minLength", "maxLength", "minItems", "maxItems", "minProperties",
                     "maxProperties", "minContains", "maxContains"], "a non-negative integer"),
    **dict.fromkeys(["minimum", "maximum", "multipleOf", "exclusiveMinimum",
                     "exclusiveMaximum"], "a number"),
    **dict.fromkeys(["pattern", "format", "$ref"], "a string"),
    "required": "an array of strings",
    "enum": "an array",
    "uniqueItems": "a boolean",
    "dependentRequired": "an object of arrays of names",
    "dependencies": "an object of arrays of names or schemas",
    "type": "a string or an array of strings",
}


def test_the_checked_keywords_are_these() -> None:
    # the one table both decides which keywords are checked and checks them
    assert {key: shape.what for key, shape in _SHAPES.items()} == SHAPES


@pytest.mark.parametrize(("keyword", "what"), sorted(SHAPES.items()))
def test_each_checked_keyword_refuses_a_wrong_shape(keyword: str, what: str) -> None:
    # null has none of the shapes; the unchecked keywords around it are not looked at
    schema = {"title": None, "const": None, keyword: None, "examples": None}
    with pytest.raises(SchemaError) as info:
        json_schema_to_gbnf({"type": "object", "properties": {"a": schema}})
    assert (info.value.message, info.value.keyword, info.value.pointer) == (
        f"{keyword} must be {what}", keyword, "/properties/a")


@pytest.mark.parametrize(("schema", "keyword"), [
    ({"minItems": -1, "type": 3}, "minItems"),
    ({"type": 3, "minItems": -1}, "type"),
    ({"description": 1, "enum": {}, "required": "a"}, "enum"),
    ({"required": "a", "enum": {}}, "required"),
    ({"prefixItems": [], "allOf": []}, "allOf"),  # an empty prefixItems is no wrong shape
    ({"exclusiveMinimum": True, "minimum": True}, "minimum"),  # draft 4's boolean form
    ({"dependencies": {"a": ["b"], "c": {}}, "dependentRequired": {"a": True}},
     "dependentRequired"),
])
def test_the_first_wrong_shape_in_schema_order_is_named(schema: dict[str, Any],
                                                       keyword: str) -> None:
    with pytest.raises(SchemaError) as info:
        json_schema_to_gbnf({"$defs": {"d": schema}, "$ref": "#/$defs/d"})
    assert (info.value.keyword, info.value.pointer) == (keyword, "/$defs/d")


@pytest.mark.parametrize(("text", "pointer"), [
    ('{"type": "array", "maxItems": 1e400}', "/maxItems"),
    ('{"type": "array", "maxItems": Infinity}', "/maxItems"),
    ('{"type": "string", "minLength": NaN}', "/minLength"),
    ('{"const": NaN}', "/const"),
    ('{"enum": [1, -Infinity]}', "/enum/1"),
    ('{"properties": {"a": {"maximum": -1e999}}}', "/properties/a/maximum"),
])
def test_a_schema_given_as_text_refuses_what_json_cannot_hold(text: str, pointer: str) -> None:
    """json.loads reads NaN, Infinity and 1e400 as floats JSON has no text for: a schema
    given as text refuses them as one given as a dict does (they crashed the converter
    with OverflowError or ValueError, or made `{"const": NaN}` match `NaN`)."""
    for given_as in (text, text.encode()):
        with pytest.raises(SchemaError, match="is not a JSON number") as info:
            json_schema_to_gbnf(given_as)
        assert info.value.pointer == pointer
        with pytest.raises(SchemaError, match="is not a JSON number"):
            Grammar.from_json_schema(given_as)
    # large but finite numbers stay numbers
    assert json_schema_to_gbnf('{"type": "number", "maximum": 1e30}')


def _cyclic() -> dict[str, Any]:
    inner: dict[str, Any] = {"type": "object"}
    inner["properties"] = {"a": {"allOf": [inner]}}
    return {"$defs": {"d": inner}}


@pytest.mark.parametrize(("schema", "message", "pointer"), [
    ({"enum": ["a", None, True, (1, 2)]}, "tuple (1, 2) is not a JSON value", "/enum/3"),
    ({"$defs": {"a/b": {"const": b"x"}}}, "bytes b'x' is not a JSON value", "/$defs/a~1b/const"),
    ({"properties": {"a": {1: "x"}}}, "an object key must be a string, not 1", "/properties/a"),
    ({"const": [0, [1, 2**10_001]]}, "an integer of 10002 bits is too long", "/const/1/1"),
    ({"enum": [1.5, float("nan")]}, "nan is not a JSON number", "/enum/1"),
    (_cyclic(), "the schema contains itself (a cycle)", "/$defs/d/properties/a/allOf/0"),
    ({"maximum": -float("inf")}, "-inf is not a JSON number", "/maximum"),
    # the first value that is wrong, in document order, is named
    ({"a": [{"b": (1,)}, {2: 3}], "c": set()}, "tuple (1,) is not a JSON value", "/a/0/b"),
])
def test_a_schema_that_is_no_json_value_is_refused_at_its_pointer(schema: Any, message: str,
                                                                  pointer: str) -> None:
    with pytest.raises(SchemaError) as info:
        json_schema_to_gbnf(schema)
    assert info.value.message.startswith(message)
    assert info.value.pointer == pointer


@pytest.mark.parametrize(("schema", "values"), [
    ({"enum": [1, "a", None, True, {"b": [2.5]}]}, 9),
    ([[[]], "a", {}], 5),
    ("a", 1),
])
def test_a_schema_of_more_values_than_allowed_is_refused(schema: Any, values: int) -> None:
    """Every value counts, strings and None inside containers as well: a schema of
    ``values`` values passes with that many allowed, and is refused with one fewer."""
    from gbnfkit.schema._api import _check_json

    _check_json(schema, max_values=values)
    with pytest.raises(SchemaError, match=f"^the schema holds more than {values - 1} values$"):
        _check_json(schema, max_values=values - 1)


@pytest.mark.parametrize("keyword", ["items", "anyOf", "properties", "not"])
def test_a_schema_nested_past_the_converters_bound_names_no_ref(keyword: str) -> None:
    """Subschemas nested 250 deep without any $ref were refused as "a recursive $ref
    combined with other keywords?" with keyword "$ref"."""
    schema: Any = {"type": "string"}
    for _ in range(250):
        schema = {"anyOf": [schema, {"type": "integer"}]} if keyword == "anyOf" else \
            {"properties": {"a": schema}} if keyword == "properties" else {keyword: schema}
    with pytest.raises(SchemaError, match="more than 200 subschemas") as info:
        json_schema_to_gbnf(schema)
    assert info.value.keyword is None and "$ref" not in str(info.value)
    # (not of not is rewritten in place: the pointer stays at the root)
    assert info.value.pointer.startswith(f"/{keyword}/") or keyword == "not"


def _nested_list(levels: int) -> Any:
    value: Any = []
    for _ in range(levels):
        value = [value, {"k": 1}]
    return value


@pytest.mark.parametrize("levels", [40, 100, 300, 505])
def test_a_deeply_nested_constant_is_written_in_rules(levels: int) -> None:
    """A constant's containers were nested groups: at 100 levels the GBNF parser refused
    the converter's own text (a GrammarError about parentheses, from a schema); past
    ~450 a RecursionError was reported as 'nests too deeply to convert'."""
    import json

    value = _nested_list(levels)
    for schema in ({"const": value}, {"enum": [1, value]},
                   {"properties": {"a": {"const": value}}, "required": ["a"]}):
        grammar = Grammar.from_json_schema(schema)
        text = json.dumps(value) if "properties" not in schema else \
            json.dumps({"a": value})
        assert grammar.match(text).status.name == "ACCEPT"
        assert grammar.match(text.replace("1", "2", 1)).status.name == "REJECT"


@pytest.mark.parametrize("as_text", [False, True])
def test_a_schema_nested_past_the_json_depth_bound_is_refused_with_its_pointer(
        as_text: bool) -> None:
    """Past ~950 levels (a dict, or JSON text) the $ref index or json.loads overflowed
    Python's stack; between ~400 and ~950 the canonical JSON of a subschema did: all were
    'schema nests too deeply to convert', without a pointer (JSON text past Python's
    recursion limit still has none: json.loads gives no position)."""
    from gbnfkit.schema._api import MAX_SCHEMA_DEPTH

    for levels in (MAX_SCHEMA_DEPTH, 600, 5000):
        text = '{"type": "array", "items": ' * levels + '{"type": "string"}' + "}" * levels
        schema: Any = {"type": "string"}
        for _ in range(levels):
            schema = {"type": "array", "items": schema}
        with pytest.raises(SchemaError, match=f"more than {MAX_SCHEMA_DEPTH} objects and "
                           "arrays one inside another") as info:
            Grammar.from_json_schema(text if as_text else schema)
        if levels < 900 or not as_text:
            assert info.value.pointer == "/items" * MAX_SCHEMA_DEPTH


def test_subschemas_and_a_constant_deep_together_are_refused_where_they_meet() -> None:
    """199 subschemas (the converter follows 200) around a constant nested 300 levels:
    the canonical JSON of the innermost overflowed the stack, reported without a
    pointer."""
    schema: Any = {"const": _nested_list(300)}
    for _ in range(199):
        schema = {"type": "array", "items": schema}
    with pytest.raises(SchemaError, match="nests too deeply to convert here") as info:
        json_schema_to_gbnf(schema)
    assert info.value.pointer.startswith("/items/items/") and info.value.keyword is None


def test_the_text_parsed_when_ir_cannot_be_built_reports_only_its_own_error() -> None:
    """The parse of the whole text (when the IR cannot be built from the notes) ran
    inside the handler of the builder's internal exception, which every error it raised
    then carried as its context ('During handling of the above exception ...')."""
    from gbnfkit import GrammarError, Limits

    with pytest.raises(GrammarError, match="repetition bound 10") as info:
        Grammar.from_json_schema({"type": "string", "maxLength": 10},
                                 limits=Limits(max_repetition=3))
    assert info.value.__context__ is None
