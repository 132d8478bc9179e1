"""How many alternatives a schema's in-place ``anyOf``/``oneOf``/``allOf`` spread into.

The converter distributes the keywords beside ``anyOf``/``oneOf`` (including other
``anyOf`` lists, which the merge keeps nested) into every branch, so the alternatives it
visits are the product of the ``anyOf`` widths under ``allOf``.  Counting them first lets
a schema whose rewrite explodes be refused before the work is done."""

from __future__ import annotations

from typing import Any

__all__ = ["alternatives", "listed"]


def _in_place(s: dict[str, Any]) -> list[tuple[str, list[Any]]]:
    return [(k, s[k]) for k in ("allOf", "anyOf", "oneOf")
            if isinstance(s.get(k), list) and s[k]]


def alternatives(schema: Any, cap: int) -> int:
    """Upper bound of the alternatives of ``schema`` (saturates at ``cap + 1``); only
    in-place applicators count (``$ref``, ``not`` and the sub-schemas of properties or
    items are visited on their own)."""
    seen: dict[int, int] = {}

    def width(s: Any) -> int:
        if not isinstance(s, dict):
            return 1
        known = seen.get(id(s))
        if known is not None:
            return known
        w = 1
        for key, parts in _in_place(s):
            if key == "allOf":
                for part in parts:
                    w = min(w * width(part), cap + 1)
            else:
                w = min(w * min(sum(width(b) for b in parts), cap + 1), cap + 1)
        seen[id(s)] = w
        return w

    return width(schema)


def listed(schema: Any) -> int:
    """Branches of in-place ``anyOf``/``oneOf`` written in ``schema`` (each list once)."""
    seen: set[int] = set()
    todo = [schema]
    count = 0
    while todo:
        s = todo.pop()
        if not isinstance(s, dict) or id(s) in seen:
            continue
        seen.add(id(s))
        for key, parts in _in_place(s):
            count += len(parts) if key != "allOf" else 0
            todo.extend(parts)
    return count
