"""MaskBench refusals lifted in issue schema12: identity escapes in patterns, formats
``duration``, ``uri-reference`` and ``iri``, ``^`` inside a pattern.  Every text the
grammar accepts is also checked with ``jsonschema`` (Draft 2020-12, its format checker)."""

from __future__ import annotations

import json
from typing import Any

import jsonschema

from gbnfkit import Grammar


def _judge(schema: dict[str, Any], good: list[str], bad: list[str]) -> None:
    g = Grammar.from_json_schema(schema)
    validator = jsonschema.Draft202012Validator(
        schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )
    for text in good:
        assert g.match(text).status.value == "accept", text
        assert validator.is_valid(json.loads(text)), text
    for text in bad:
        assert g.match(text).status.value != "accept", text


def test_identity_escapes_in_a_key_pattern() -> None:
    # MaskBench Github_hard---o47670: '\_' was refused as an unknown escape
    schema = {"type": "object", "additionalProperties": False,
              "patternProperties": {r"^[\w\.\d\_]+$": {"type": "integer"}}}
    _judge(schema, ['{"a_b.1": 1}', '{"_": 2}'], ['{"a-b": 1}', '{" road": 1}', '{"b!": 1}'])
