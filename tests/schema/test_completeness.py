"""Completeness property, the converse of ``test_soundness.py``: for random schemas built
from every supported keyword and random instances, whenever ``jsonschema`` (draft
2020-12) says an instance is valid, the grammar accepts its JSON text, compact, with
the default separators, indented with spaces and with tabs.

Left out are the deliberate restrictions of docs/schema.md: integral numbers written with
a fraction (``2.0`` where an integer is wanted: integers are written without ``.0``).
Properties may come in any order (``property_order="any"``); refused schemas are skipped.
"""

from __future__ import annotations

import json
from typing import Any

import jsonschema
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st
from test_soundness import _ROOTS, _cases, rooted

from gbnfkit import Grammar, GrammarError, SchemaError

_LAYOUTS: list[dict[str, Any]] = [
    {"separators": (",", ":")},
    {},
    {"indent": 2},
    {"indent": "\t", "separators": (" ,", " : ")},
]


def _integral_float(value: Any) -> bool:
    if isinstance(value, float):
        return value.is_integer()
    if isinstance(value, list):
        return any(map(_integral_float, value))
    if isinstance(value, dict):
        return any(map(_integral_float, value.values()))
    return False


def _exponent_float(value: Any) -> bool:
    """Whether JSON writes a float of ``value`` with an exponent (``1e-07``)."""
    if isinstance(value, float):
        return "e" in repr(value)
    if isinstance(value, list):
        return any(map(_exponent_float, value))
    if isinstance(value, dict):
        return any(map(_exponent_float, value.values()))
    return False


_BOUND_KEYWORDS = ('"minimum"', '"maximum"', '"exclusiveMinimum"', '"exclusiveMaximum"')


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
# shallow schemas too: more of the random instances are valid against them (with their
# `$defs`: jsonschema cannot judge a `$ref` to nothing, which the converter may never visit)
@given(st.one_of(_ROOTS, rooted(0), rooted(1)).flatmap(_cases), st.sampled_from(_LAYOUTS))
def test_a_valid_instance_is_accepted(case: tuple[Any, list[Any]], layout: dict[str, Any]) -> None:
    schema, values = case
    try:
        grammar = Grammar.from_json_schema(schema, property_order="any")
    except (SchemaError, GrammarError):
        return  # refused (or a reference loop that reads nothing): test_soundness.py
    note(json.dumps(schema))
    validator = jsonschema.Draft202012Validator(
        schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
    # documented (docs/schema.md): a bounded number may not use an exponent
    bounded = any(k in json.dumps(schema) for k in _BOUND_KEYWORDS)
    for value in values:
        if _integral_float(value) or bounded and _exponent_float(value):
            continue
        try:
            valid = validator.is_valid(value)
        except RecursionError:
            return  # a $ref loop without progress: jsonschema cannot judge the schema
        if valid:
            text = json.dumps(value, **layout)
            assert grammar.match(text).status.value == "accept", (json.dumps(schema), text)


def test_the_layouts_and_the_integral_float_rule_are_what_the_test_relies_on() -> None:
    # the fourth layout puts blanks before ',' and ':' too
    value = {"a": [1, {"b": None}]}
    assert json.dumps(value, **_LAYOUTS[3]) == (
        '{\n\t"a" : [\n\t\t1 ,\n\t\t{\n\t\t\t"b" : null\n\t\t}\n\t]\n}'
    )
    grammar = Grammar.from_json_schema({"type": "object"})
    assert all(
        grammar.match(json.dumps(value, **layout)).status.value == "accept" for layout in _LAYOUTS
    )
    # the restriction left out above: an integer written with a fraction is refused
    assert Grammar.from_json_schema({"type": "integer"}).match("2.0").status.value != "accept"
    assert _integral_float([{"a": 2.0}]) and not _integral_float([0.5, 2])
    # and a bounded number written with an exponent (1e-07 under "minimum": -1) is refused
    bounded = Grammar.from_json_schema({"minimum": -1})
    assert bounded.match(json.dumps(1e-07)).status.value != "accept"
    assert bounded.match("0.0000001").status.value == "accept"
    assert _exponent_float({"a": [1e-07]}) and not _exponent_float([0.001, 2, "1e-07"])


def _lone_surrogates(text: str) -> str:
    """``text`` with each character outside the BMP as its two surrogates."""
    return "".join(c if ord(c) <= 0xFFFF else
                   chr(0xD800 + ((ord(c) - 0x10000) >> 10)) + chr(0xDC00 + (ord(c) & 0x3FF))
                   for c in text)


def test_the_lone_surrogate_reading_of_a_pair_is_what_the_grammar_counts() -> None:
    assert _lone_surrogates("0😀é") == "0\ud83d\ude00é"
    grammar = Grammar.from_json_schema({"type": "string", "minLength": 3})
    assert grammar.match(json.dumps("0😀")).status.value == "accept"  # the documented case


# scalar keywords, where random instances are valid more often -----------------------------

_PATTERNS = ["^a", "b$", "^[ab]*$", "a.?b", "^[0-9]+$", "^(ab|c)+$", "é", "^\\d{2,3}$",
             "^[^a]*$", "^.{2}$", "^[a-c]{1,3}x?$", "^(a|é)*$", "😀"]
_BOUND = st.one_of(st.integers(-20, 20), st.sampled_from([-1.5, 0.25, 2.5, 1e2, 0.1]))
_NUMBER_KEYWORDS = st.fixed_dictionaries({}, optional={
    "minimum": _BOUND, "maximum": _BOUND, "exclusiveMinimum": _BOUND,
    "exclusiveMaximum": _BOUND, "multipleOf": st.sampled_from([2, 3, 5, 0.5, 0.1, 0.25, 1])})
_STRING_KEYWORDS = st.fixed_dictionaries({}, optional={
    "minLength": st.integers(0, 4), "maxLength": st.integers(0, 5),
    "pattern": st.sampled_from(_PATTERNS),
    # the formats jsonschema checks without optional packages
    "format": st.sampled_from(["date", "ipv4", "ipv6", "uuid"])})
_SCALAR_SCHEMAS = st.one_of(
    _NUMBER_KEYWORDS.map(lambda d: {"type": "number", **d}),
    _NUMBER_KEYWORDS.map(lambda d: {"type": "integer", **d}),
    _STRING_KEYWORDS.map(lambda d: {"type": "string", **d}))
_NUMBERS = st.one_of(
    st.integers(-200, 200),
    st.floats(-200, 200, allow_nan=False).map(lambda f: round(f, 3)),
    st.sampled_from([0.1, 0.2, 0.3, 1.5, -0.0, 0.25, 2.5, 100.0, 1e-3, 0.5, 4.0, 7.5]))
# no U+2028 and no non-ASCII digits or letters next to \d/\w: ECMA-262 classes (documented)
_STRINGS = st.one_of(
    st.text(alphabet="abcé0123 x-:.\n\"\\/\t😀\u00ff\x7f", max_size=6),
    st.sampled_from(["2024-02-29", "2023-02-29", "2024-04-31", "127.0.0.1", "::1", "1::",
                     "::ffff:1.2.3.4", "00000000-0000-0000-0000-000000000000", "256.1.1.1",
                     "01.1.1.1", "1.2.3", "ab", "aab", "ccx"]))


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(_SCALAR_SCHEMAS, st.lists(st.one_of(_NUMBERS, _STRINGS), min_size=10, max_size=10),
       st.booleans())
def test_a_valid_scalar_is_accepted_and_an_invalid_one_refused(
    schema: dict[str, Any], values: list[Any], ascii_only: bool
) -> None:
    try:
        grammar = Grammar.from_json_schema(schema)
    except SchemaError:
        return  # refused
    validator = jsonschema.Draft202012Validator(
        schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
    integral = schema["type"] == "integer" or float(schema.get("multipleOf", 0.5)).is_integer()
    for value in values:
        text = json.dumps(value, ensure_ascii=ascii_only)
        accepted = grammar.match(text).status.value == "accept"
        if not validator.is_valid(value):
            # documented (docs/schema.md, JSON strings): the grammar cannot tell a surrogate
            # pair escape from two lone surrogates, so "\\ud83d\\ude00" may count as two
            assert not accepted or (ascii_only and isinstance(value, str)
                                    and validator.is_valid(_lone_surrogates(value))), (
                json.dumps(schema), text)
        elif not (isinstance(value, float) and (integral and value.is_integer() or "e" in text)):
            # documented: integers without '.0'; bounded numbers without an exponent
            assert accepted, (json.dumps(schema), text)
