"""Requests the server tests share."""

from __future__ import annotations

MAX_TOKENS = 48
"""The cap of the test apps: short generations keep the tests quick."""

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "enum": ["Paris", "Oslo", "Rome"]}},
            "required": ["city"],
            "additionalProperties": False,
        },
    },
}

SMALL_SCHEMA = {
    "type": "object",
    "properties": {"ok": {"type": "boolean"}, "n": {"type": "integer", "minimum": 0, "maximum": 9}},
    "required": ["ok", "n"],
    "additionalProperties": False,
}


def user(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]
