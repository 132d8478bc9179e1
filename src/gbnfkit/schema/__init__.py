"""JSON Schema, regular expressions and Pydantic models to GBNF grammars."""

from __future__ import annotations

from gbnfkit.schema._api import json_schema_to_gbnf, pydantic_to_gbnf
from gbnfkit.schema._convert import SchemaWarning
from gbnfkit.schema._limits import SchemaLimits
from gbnfkit.schema._options import PropertyOrder, SchemaOptions, Whitespace
from gbnfkit.schema._regex import regex_to_gbnf

__all__ = [
    "PropertyOrder",
    "SchemaLimits",
    "SchemaOptions",
    "SchemaWarning",
    "Whitespace",
    "json_schema_to_gbnf",
    "pydantic_to_gbnf",
    "regex_to_gbnf",
]
