"""``oneOf``: exactly one branch must hold.  A grammar can only take a union, so
``oneOf`` is converted as ``anyOf`` when the branches are provably disjoint, and a
``oneOf`` over bare ``required`` lists is rewritten into disjoint branches.  Otherwise
the converter says the branches may overlap (``strict``: refused)."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from gbnfkit._errors import SchemaError
from gbnfkit.schema._dfa import Dfa, TooBig, dfa_of, minimal, product
from gbnfkit.schema._formats import FORMAT_PATTERNS
from gbnfkit.schema._instance import ANNOTATIONS, check_value, json_equal
from gbnfkit.schema._jsontext import canonical
from gbnfkit.schema._limits import SchemaLimits
from gbnfkit.schema._merge import PATTERNS_KEY
from gbnfkit.schema._regex_parse import RegexUnsupported, parse_regex

__all__ = ["within", "exclusive_required_branches", "disjoint", "pair_disjoint", "finer_disjoint",
           "exclusion", "hitting_sets", "literals_schema", "must_have"]

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


# ---------------------------------------------------------------- the finer analysis
# Tried only where the analysis above leaves an overlap whose negation cannot be written
# (``Converter.one_of_branches``), so the grammars of the oneOfs it settles stay as they
# were.

_DEPTH = 4
"""How deep the finer analysis follows property schemas and nested anyOf/oneOf."""


def must_have(s: Any, flatten: Flatten, depth: int = 0) -> set[str]:
    """Names every object that satisfies ``s`` has: its ``required``, and the names
    every branch of a nested ``anyOf``/``oneOf`` requires (an object satisfies one of
    them).  A branch that cannot be flattened counts as requiring nothing."""
    if not isinstance(s, dict):
        return set()
    names = s.get("required", [])
    out = {n for n in names if isinstance(n, str)} if isinstance(names, list) else set()
    if depth >= _DEPTH:
        return out
    for comb in ("anyOf", "oneOf"):
        branches = s.get(comb)
        if not isinstance(branches, list):
            continue
        sets = []
        for b in branches:
            try:
                flat = flatten(b)
            except SchemaError:
                flat = {}
            if flat is not False:  # a branch nothing satisfies adds no case
                sets.append(must_have(flat, flatten, depth + 1))
        if sets:
            out |= set.intersection(*sets)
    return out


def _string_only(s: dict[str, Any]) -> bool:
    t = s.get("type")
    return t == "string" or t == ["string"]


def _string_dfas(s: dict[str, Any], limits: SchemaLimits) -> list[Dfa] | None:
    """The automata of the patterns and formats of a string schema (an unknown format:
    None; no pattern: an empty list)."""
    specs = [{k: s[k]} for k in ("pattern", "format") if k in s]
    specs += s.get(PATTERNS_KEY, [])
    out = []
    for spec in specs:
        limit = "max_dfa_states"
        if "pattern" in spec:
            pattern = spec["pattern"]
        elif spec.get("format") in FORMAT_PATTERNS:
            pattern, limit = FORMAT_PATTERNS[spec["format"]], "max_format_dfa_states"
        else:
            return None  # a format this analysis cannot read: it may hold anywhere
        if not isinstance(pattern, str):
            return None
        try:
            out.append(minimal(dfa_of(parse_regex(pattern), limits, limit)))
        except (RegexUnsupported, TooBig):
            return None
    return out


def _disjoint_strings(a: dict[str, Any], b: dict[str, Any], limits: SchemaLimits) -> bool:
    """Two string schemas whose patterns and formats no string satisfies together (the
    product of their automata accepts nothing)."""
    if not (_string_only(a) and _string_only(b)):
        return False
    da, db = _string_dfas(a, limits), _string_dfas(b, limits)
    if not da or not db:
        return False
    try:
        both = product([*da, *db], all, limits)
    except TooBig:
        return False
    return not any(both.accepting)


def _values_outside(a: dict[str, Any], b: Any, resolve: Callable[[str], Any]) -> bool:
    """``a`` lists its values (``const``/``enum``) and none of them satisfies ``b``."""
    values = _values(a)
    return values is not None and all(
        check_value(v, b, resolve) is False for v in values)


def finer_disjoint(a: Any, b: Any, flatten: Flatten, resolve: Callable[[str], Any],
                   limits: SchemaLimits, depth: int = 0) -> bool:
    """Whether no instance satisfies both ``a`` and ``b``: :func:`pair_disjoint`'s
    reasons, and also names that every object of one side has (through nested
    ``anyOf``/``oneOf`` of ``required``) and the other forbids or gives disjoint values,
    listed values of which none satisfies the other side, and string patterns and
    formats whose automata have an empty product."""
    if _pair_disjoint(a, b, flatten):
        return True
    if not isinstance(a, dict) or not isinstance(b, dict) or depth >= _DEPTH:
        return False
    if _values_outside(a, b, resolve) or _values_outside(b, a, resolve):
        return True
    if _disjoint_strings(a, b, limits):
        return True
    for x, y in ((a, b), (b, a)):
        if _cases_disjoint(x, y, flatten, resolve, limits, depth):
            return True
    ta, tb = _types(a), _types(b)
    if ta is None or tb is None or ta & tb != {"object"}:
        return False
    need_a, need_b = must_have(a, flatten), must_have(b, flatten)
    if any(_forbids(b, k) for k in need_a) or any(_forbids(a, k) for k in need_b):
        return True
    for key in need_a & need_b:
        try:
            pa = flatten(a.get("properties", {}).get(key, True))
            pb = flatten(b.get("properties", {}).get(key, True))
        except SchemaError:
            continue
        if finer_disjoint(pa, pb, flatten, resolve, limits, depth + 1):
            return True
    return False


def _cases_disjoint(a: dict[str, Any], b: dict[str, Any], flatten: Flatten,
                    resolve: Callable[[str], Any], limits: SchemaLimits, depth: int) -> bool:
    """``a`` has an ``anyOf``/``oneOf`` each branch of which, with the rest of ``a``, is
    disjoint from ``b``."""
    for comb in ("anyOf", "oneOf"):
        branches = a.get(comb)
        if not isinstance(branches, list) or not branches:
            continue
        rest = {k: v for k, v in a.items() if k != comb}
        try:
            cases = [flatten({"allOf": [rest, c]}) for c in branches]
        except SchemaError:
            continue
        if all(finer_disjoint(c, b, flatten, resolve, limits, depth + 1) for c in cases):
            return True
    return False


_PLAIN_OBJECT = frozenset({"type", "properties", "additionalProperties", "required"})


def within(a: Any, b: Any) -> bool:
    """Whether every instance of ``a`` satisfies ``b`` (False: not known)."""
    if b is True or (isinstance(b, dict) and not set(b) - ANNOTATIONS):
        return True
    if a is False:
        return True
    return canonical(a) == canonical(b)


Literal = tuple[bool, str]
"""(True, name): the object has the member; (False, name): it has not."""


def exclusion(a: Any, b: Any, flatten: Flatten, resolve: Callable[[str], Any],
              limits: SchemaLimits) -> set[Literal] | None:
    """The instances of ``a`` that do not satisfy ``b``, as a set of literals of which
    they have one (an empty set: every instance of ``a`` satisfies ``b``), when ``b`` is
    a plain object schema (``properties``, ``required``, ``additionalProperties`` true or
    false) and either ``a`` accepts only objects or ``b`` has no ``type`` (so every
    other value satisfies ``b``, and only objects fail it); else None.

    An object of ``a`` fails ``b`` when it lacks a name ``b`` requires, has a name ``b``
    does not allow (``b`` closed; ``a`` must then be closed, so that its names are
    listed), or has a name whose values under ``a`` and ``b`` are disjoint.  Every other
    name must have values under ``a`` that ``b`` accepts (the same schema, or anything
    under ``b``): then nothing else fails ``b``, and the literals are exact."""
    if not isinstance(a, dict) or not isinstance(b, dict):
        return None
    if set(b) - ANNOTATIONS - _PLAIN_OBJECT:
        return None
    if _types(a) != {"object"} and "type" in b:
        return None  # a's other values may fail b's type: no literal says so
    tb = _types(b)
    if tb is not None and "object" not in tb:
        return None  # (disjoint: pair_disjoint says so)
    extra_b = b.get("additionalProperties", True)
    extra_a = a.get("additionalProperties", True)
    if extra_b not in (True, False):
        return None
    closed_a = extra_a is False and not a.get("patternProperties")
    props_a, props_b = a.get("properties", {}), b.get("properties", {})
    required_b = b.get("required", [])
    if not (isinstance(props_a, dict) and isinstance(props_b, dict)
            and isinstance(required_b, list)):
        return None
    out: set[Literal] = set()
    has = must_have(a, flatten)
    for name in required_b:
        if not isinstance(name, str):
            return None
        if name not in has:
            out.add((False, name))
    names_a = {k for k, v in props_a.items() if v is not False}
    if extra_b is False:
        if not closed_a:
            return None
        out |= {(True, k) for k in names_a if k not in props_b}
    elif not closed_a:
        # names a does not list take a's other schemas: b must accept them anywhere
        for k, v in props_b.items():
            if k not in props_a and not within(True, v):
                return None
    for k in names_a & set(props_b):
        try:
            pa, pb = flatten(props_a[k]), flatten(props_b[k])
        except SchemaError:
            return None
        if within(pa, pb):
            continue
        if finer_disjoint(pa, pb, flatten, resolve, limits):
            out.add((True, k))
            continue
        return None
    return out


def hitting_sets(clauses: list[set[Literal]], limit: int) -> list[frozenset[Literal]] | None:
    """The minimal consistent sets of literals that meet every clause (an object
    satisfies every clause exactly when it satisfies all the literals of one of them);
    None past ``limit`` sets."""
    sets: list[frozenset[Literal]] = [frozenset()]
    for clause in sorted(clauses, key=len):
        grown: set[frozenset[Literal]] = set()
        for h in sets:
            if h & clause:
                grown.add(h)
                continue
            for lit in clause:
                if (not lit[0], lit[1]) not in h:
                    grown.add(h | {lit})
        minimal = [h for h in grown if not any(o < h for o in grown)]
        if len(minimal) > limit:
            return None
        sets = sorted(minimal, key=lambda h: (len(h), sorted(h)))
    return sets


def literals_schema(lits: frozenset[Literal]) -> dict[str, Any]:
    """An object schema of the literals: the names present required, the others absent."""
    present = sorted(name for has, name in lits if has)
    absent = sorted(name for has, name in lits if not has)
    out: dict[str, Any] = {"type": "object"}
    if present:
        out["required"] = present
    if absent:
        out["properties"] = {name: False for name in absent}
    return out
