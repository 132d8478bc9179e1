"""Soundness property: for random schemas built from every supported keyword and random
instances, whenever the grammar accepts an instance, ``jsonschema`` (draft 2020-12)
says it is valid.  A schema the converter refuses (``SchemaError``) is skipped: refusing
is allowed, a wrong conversion is not."""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from gbnfkit import Grammar, GrammarError, SchemaError
from grammar_sampling import walk

_KEYS = ["a", "b", "c"]
_PATTERNS = ["^a", "b$", "^[ab]*$", "a.?b", "^[0-9]+$", "^(ab|c)+$", "1"]
_FORMATS = ["date", "ipv4", "uuid", "made-up-format"]

_SCALAR = st.one_of(st.none(), st.booleans(), st.integers(-3, 3),
                    st.sampled_from([0.5, -1.5, 2.0, 1e2, 1e-07]),
                    st.text(alphabet="ab1-é\"", max_size=4))
_VALUES = st.recursive(_SCALAR, lambda inner: st.one_of(
    st.lists(inner, max_size=3),
    st.dictionaries(st.sampled_from(_KEYS), inner, max_size=3)), max_leaves=6)

_TYPES = ["null", "boolean", "integer", "number", "string", "array", "object"]


def _schemas(depth: int) -> st.SearchStrategy[Any]:
    """A random schema object (or boolean) of at most ``depth`` levels."""
    if depth == 0:
        sub: st.SearchStrategy[Any] = st.one_of(
            st.booleans(), st.builds(lambda t: {"type": t}, st.sampled_from(_TYPES)),
            st.builds(lambda v: {"const": v}, _SCALAR))
    else:
        sub = _schemas(depth - 1)
    count = st.integers(0, 3)
    small = st.lists(sub, min_size=1, max_size=3)
    keyword = st.one_of(
        st.builds(lambda t: {"type": t}, st.one_of(st.sampled_from(_TYPES),
                                                   st.lists(st.sampled_from(_TYPES),
                                                            min_size=1, max_size=3,
                                                            unique=True))),
        st.builds(lambda v: {"enum": v}, st.lists(_VALUES, min_size=1, max_size=3)),
        st.builds(lambda v: {"const": v}, _VALUES),
        st.builds(lambda p: {"properties": p}, st.dictionaries(st.sampled_from(_KEYS), sub,
                                                               max_size=2)),
        st.builds(lambda r: {"required": r}, st.lists(st.sampled_from(_KEYS), max_size=2,
                                                      unique=True)),
        st.builds(lambda s: {"additionalProperties": s}, sub),
        st.builds(lambda p: {"patternProperties": p},
                  st.dictionaries(st.sampled_from(_PATTERNS), sub, max_size=2)),
        st.builds(lambda n: {"minProperties": n}, count),
        st.builds(lambda n: {"maxProperties": n}, count),
        st.builds(lambda s: {"items": s}, sub),
        st.builds(lambda s: {"prefixItems": s}, small),
        st.builds(lambda n: {"minItems": n}, count),
        st.builds(lambda n: {"maxItems": n}, count),
        st.builds(lambda s: {"contains": s}, sub),
        st.builds(lambda n: {"minContains": n}, count),
        st.builds(lambda n: {"maxContains": n}, count),
        st.builds(lambda b: {"uniqueItems": b}, st.booleans()),
        st.builds(lambda n: {"minLength": n}, count),
        st.builds(lambda n: {"maxLength": n}, count),
        st.builds(lambda p: {"pattern": p}, st.sampled_from(_PATTERNS)),
        st.builds(lambda f: {"format": f}, st.sampled_from(_FORMATS)),
        st.builds(lambda k, v: {k: v}, st.sampled_from(["minimum", "maximum",
                                                        "exclusiveMinimum",
                                                        "exclusiveMaximum"]),
                  st.sampled_from([-1, 0, 1, 1.5, 2])),
        st.builds(lambda m: {"multipleOf": m}, st.sampled_from([2, 3, 0.5])),
        st.builds(lambda s: {"allOf": s}, small),
        st.builds(lambda s: {"anyOf": s}, small),
        st.builds(lambda s: {"oneOf": s}, small),
        st.builds(lambda s: {"not": s}, sub),
        st.builds(lambda i, t, e: {"if": i, "then": t, "else": e}, sub, sub, sub),
        st.builds(lambda d: {"dependentRequired": d},
                  st.dictionaries(st.sampled_from(_KEYS), st.lists(st.sampled_from(_KEYS),
                                                                  max_size=2), max_size=1)),
        st.builds(lambda d: {"dependentSchemas": d},
                  st.dictionaries(st.sampled_from(_KEYS), sub, max_size=1)),
        st.builds(lambda s: {"unevaluatedProperties": s}, sub),
        st.builds(lambda s: {"unevaluatedItems": s}, sub),
        st.just({"$ref": "#/$defs/d"}),
    )

    def combine(parts: list[dict[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for p in parts:
            out.update(p)
        return out

    return st.one_of(st.booleans(), st.lists(keyword, min_size=1, max_size=4).map(combine))


def rooted(depth: int) -> st.SearchStrategy[Any]:
    """Random schemas of ``depth`` levels whose ``$ref`` (``#/$defs/d``) has a target."""
    return st.builds(lambda s, d: ({**s, "$defs": {"d": d}} if isinstance(s, dict) else s),
                     _schemas(depth), _schemas(max(depth - 1, 0)))


_ROOTS = rooted(2)


def _literals(schema: Any) -> list[Any]:
    """The constants written in a schema (and their parts): likely boundary instances."""
    out: list[Any] = []

    def walk(node: Any, literal: bool) -> None:
        if literal:
            out.append(node)
        if isinstance(node, dict):
            for k, v in node.items():
                walk(v, literal or k == "const")
                if k == "enum" and isinstance(v, list):
                    for x in v:
                        walk(x, True)
        elif isinstance(node, list):
            for x in node:
                walk(x, literal)

    walk(schema, False)
    return out or [None]


def _cases(schema: Any) -> st.SearchStrategy[tuple[Any, list[Any]]]:
    pool = st.one_of(_VALUES, st.sampled_from(_literals(schema)))
    mixed = st.one_of(pool, st.lists(pool, max_size=3),
                      st.dictionaries(st.sampled_from(_KEYS), pool, max_size=3))
    return st.tuples(st.just(schema), st.lists(mixed, min_size=10, max_size=10))


def _rfc3339_formats() -> jsonschema.FormatChecker:
    """jsonschema's format checker, with a ``date`` in year 0000 valid: RFC 3339 (and the
    grammar) allow it, Python's ``datetime`` (jsonschema's date checker) has no year 0.
    Year 2000 stands in for it (both leap years), so the rest is still checked, also
    where the date sits under ``anyOf``, ``not`` or a ``$ref``."""
    checker = copy.deepcopy(jsonschema.Draft202012Validator.FORMAT_CHECKER)
    is_date, raises = checker.checkers["date"]

    def date(value: object) -> bool:
        if isinstance(value, str) and value.startswith("0000-"):
            value = "2000-" + value[5:]
        return bool(is_date(value))

    checker.checks("date", raises=raises)(date)
    return checker


_FORMAT_CHECKER = _rfc3339_formats()


def test_the_format_checker_takes_year_zero_wherever_the_date_sits() -> None:
    # a walk found {"anyOf": [{"format": "date"}]} with "0000-01-01": the error was the
    # anyOf's, not a format error on the date, and an earlier exemption missed it
    validator = jsonschema.Draft202012Validator(
        {"anyOf": [{"format": "date"}]}, format_checker=_FORMAT_CHECKER
    )
    assert validator.is_valid("0000-01-01") and validator.is_valid("0000-02-29")
    assert not validator.is_valid("0000-02-30") and not validator.is_valid("2001-02-29")


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(_ROOTS.flatmap(_cases))
def test_an_accepted_instance_is_valid(case: tuple[Any, list[Any]]) -> None:
    schema, values = case
    try:
        grammar = Grammar.from_json_schema(schema, property_order="any")
    except SchemaError:
        return  # refused: allowed
    except GrammarError as exc:
        # a `$ref` loop that reads nothing (`d: anyOf [$ref d, ...]`) is refused with the
        # GBNF parser's left-recursion error, by design (tests/schema/test_direct_ir.py)
        assert exc.message.startswith("left recursion"), exc.message
        return
    note(json.dumps(schema))
    validator = jsonschema.Draft202012Validator(schema, format_checker=_FORMAT_CHECKER)
    for value in values:
        text = json.dumps(value)
        if grammar.match(text).status.value == "accept":
            try:
                valid = validator.is_valid(value)
            except RecursionError:
                return  # a $ref loop without progress: jsonschema cannot judge the schema
            assert valid, (json.dumps(schema), text)


@settings(max_examples=250, deadline=None, suppress_health_check=list(HealthCheck))
@given(_ROOTS, st.randoms(use_true_random=False), st.sampled_from(["schema", "any"]))
def test_a_text_the_grammar_walks_to_is_valid(schema: Any, rng: random.Random,
                                               order: str) -> None:
    # the texts come from the grammar itself (random characters it allows, up to an end),
    # so every corner it accepts is visited, not only the instances drawn above
    try:
        grammar = Grammar.from_json_schema(schema, property_order=order)
    except (SchemaError, GrammarError):
        return  # refused (or a reference loop that reads nothing): see above
    note(json.dumps(schema))
    validator = jsonschema.Draft202012Validator(schema, format_checker=_FORMAT_CHECKER)
    for _ in range(6):
        text = walk(grammar, rng)
        if text is None:
            continue
        value = json.loads(text)
        try:
            assert validator.is_valid(value), (json.dumps(schema), text)
        except RecursionError:
            return  # a $ref loop without progress: jsonschema cannot judge the schema


def test_a_reference_loop_that_reads_nothing_is_refused() -> None:
    # the example Hypothesis found: the test above must take this refusal as one
    schema = {"$defs": {"d": {"anyOf": [{"$ref": "#/$defs/d"}]}}, "$ref": "#/$defs/d"}
    with pytest.raises(GrammarError, match="^left recursion"):
        Grammar.from_json_schema(schema, property_order="any")
