"""``oneOf``: exactly one branch must hold.  A grammar can only take a union, so
``oneOf`` is converted as ``anyOf`` when the branches are provably disjoint, and a
``oneOf`` over bare ``required`` lists is rewritten into disjoint branches.  Otherwise
the converter says the branches may overlap (``strict``: refused)."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from gbnfkit.schema._instance import ANNOTATIONS, json_equal

__all__ = ["exclusive_required_branches", "disjoint", "pair_disjoint"]

Flatten = Callable[[Any], Any]


def exclusive_required_branches(branches: list[Any]) -> list[Any] | None:
    """Disjoint branches for a oneOf whose branches only list ``required``; else None."""
    sets = []
    for b in branches:
        if not isinstance(b, dict) or set(b) - ANNOTATIONS != {"required"}:
            return None
        names = b["required"]
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            return None  # malformed: the branch's own visit raises the SchemaError
        sets.append(list(dict.fromkeys(names)))
    if len(sets) == 1:  # one branch: it holds alone, non-objects included
        return [branches[0]]
    # two or more: a value that is no object satisfies them all, so only objects remain
    out: list[Any] = []
    for i, mine in enumerate(sets):
        choices = []
        for j, other in enumerate(sets):
            if j == i:
                continue
            missing = [k for k in other if k not in mine]
            if not missing:
                break  # branch j holds whenever branch i does: i can never be the only one
            choices.append(missing)
        else:
            combos = list(itertools.islice(itertools.product(*choices), 65))
            if len(combos) > 64:
                return None
            for combo in combos:
                out.append({"type": "object", "required": mine,
                            "properties": {k: False for k in combo}})
    return out


def _types(s: dict[str, Any]) -> set[str] | None:
    t = s.get("type")
    if t is None:
        if "enum" in s or "const" in s:
            return None
        return None
    out = {t} if isinstance(t, str) else set(t)
    if "number" in out:
        out.add("integer")
    return out


def _values(s: Any) -> list[Any] | None:
    if not isinstance(s, dict):
        return None
    if "const" in s:
        return [s["const"]]
    if "enum" in s and isinstance(s["enum"], list):
        return list(s["enum"])
    return None


def _disjoint_values(a: list[Any] | None, b: list[Any] | None) -> bool:
    return a is not None and b is not None and not any(
        json_equal(x, y) for x in a for y in b)


def _forbids(s: dict[str, Any], key: str) -> bool:
    props = s.get("properties", {})
    if key in props:
        return props[key] is False
    return s.get("additionalProperties", True) is False and not s.get("patternProperties")


def _pair_disjoint(a: Any, b: Any, flatten: Flatten) -> bool:
    """``flatten`` inlines ``$ref``/``allOf`` of a sub-schema (nothing added)."""
    if a is False or b is False:
        return True
    if not isinstance(a, dict) or not isinstance(b, dict):
        return False
    ta, tb = _types(a), _types(b)
    if ta is not None and tb is not None and not ta & tb:
        return True
    if _disjoint_values(_values(a), _values(b)):
        return True
    if ta is None or tb is None or ta & tb != {"object"}:
        return False
    for key in set(a.get("required", [])) & set(b.get("required", [])):
        pa = flatten(a.get("properties", {}).get(key, True))
        pb = flatten(b.get("properties", {}).get(key, True))
        if _pair_disjoint(pa, pb, flatten):
            return True
    for x, y in ((a, b), (b, a)):
        if any(_forbids(y, k) for k in x.get("required", [])):
            return True
    return False


def pair_disjoint(a: Any, b: Any, flatten: Flatten) -> bool:
    """Whether no instance satisfies both ``a`` and ``b`` (False: they may overlap)."""
    return _pair_disjoint(a, b, flatten)


def disjoint(branches: list[Any], with_siblings: Flatten, flatten: Flatten) -> bool:
    """Whether no instance can satisfy two of the branches (``with_siblings`` merges a
    branch with the keywords beside ``oneOf``)."""
    flat = [with_siblings(b) for b in branches]
    return all(_pair_disjoint(flat[i], flat[j], flatten)
               for i in range(len(flat)) for j in range(i + 1, len(flat)))
