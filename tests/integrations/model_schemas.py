"""JSON Schemas whose every instance is short, so a generation always finishes."""

from __future__ import annotations

from typing import Any

PERSON: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1, "maxLength": 20},
        "age": {"type": "integer", "minimum": 0, "maximum": 120},
    },
    "required": ["name", "age"],
    "additionalProperties": False,
}

CAT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "color": {"enum": ["black", "white", "ginger", "grey"]},
        "indoor": {"type": "boolean"},
        "toys": {"type": "array", "items": {"type": "string", "maxLength": 12}, "maxItems": 2},
    },
    "required": ["color", "indoor", "toys"],
    "additionalProperties": False,
}

EVENT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "date": {"type": "string", "pattern": "^20[0-9]{2}-(0[1-9]|1[0-2])-[0-2][0-9]$"},
        "level": {"type": "string", "enum": ["info", "warning", "error"]},
        "score": {"type": "number", "minimum": 0, "maximum": 1},
    },
    "required": ["date", "level"],
    "additionalProperties": False,
}

SCHEMAS = {"person": PERSON, "cat": CAT, "event": EVENT}
"""Name -> schema, with a prompt for each in PROMPTS."""

PROMPTS = {
    "person": "Describe a person as JSON.",
    "cat": "Describe a cat as JSON.",
    "event": "Give a log event as JSON.",
}
