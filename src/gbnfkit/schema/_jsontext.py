"""The JSON texts the converter compares, from one encoder made once (``json.dumps``
makes an encoder per call)."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["canonical"]

_CANONICAL = json.JSONEncoder(sort_keys=True, ensure_ascii=False)


def canonical(value: Any) -> str:
    """``json.dumps(value, sort_keys=True, ensure_ascii=False)``: one text for the JSON
    values that differ only in the order of their members (a schema's memo key, the
    schemas ``within`` finds the same)."""
    return _CANONICAL.encode(value)

