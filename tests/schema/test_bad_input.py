"""Malformed schemas and options raise SchemaError and nothing else."""

from __future__ import annotations

import warnings
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from gbnfkit import Grammar, SchemaError, json_schema_to_gbnf
from gbnfkit.schema import SchemaWarning

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
