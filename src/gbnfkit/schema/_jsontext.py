"""The JSON texts the converter compares and writes, each from one encoder made once
(``json.dumps`` makes an encoder per call)."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["canonical", "json_string"]

_CANONICAL = json.JSONEncoder(sort_keys=True, ensure_ascii=False)
_STRING = json.JSONEncoder(ensure_ascii=False)


def canonical(value: Any) -> str:
    """``json.dumps(value, sort_keys=True, ensure_ascii=False)``: one text for the JSON
    values that differ only in the order of their members (a schema's memo key, the
    schemas ``within`` finds the same)."""
    return _CANONICAL.encode(value)


def json_string(text: str) -> str:
    """``json.dumps(text, ensure_ascii=False)``: a string's JSON text where a grammar
    gives one spelling (an object key; a string constant in llama.cpp's flavour)."""
    return _STRING.encode(text)
