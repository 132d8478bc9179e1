"""``unevaluatedProperties`` / ``unevaluatedItems`` rewritten away (draft 2020-12).

A property (item) is *evaluated* when a keyword of the same schema object, or of a
subschema reached through an in-place applicator that holds (``allOf``, ``$ref``, the
valid ``anyOf``/``oneOf`` branches, ``if``/``then``/``else``, ``dependentSchemas``),
looked at it through ``properties``/``patternProperties``/``additionalProperties``
(``prefixItems``/``items``/``contains``).  Cousins do not see each other: an
``unevaluatedProperties`` inside one ``allOf`` member ignores its siblings.

The rewrite settles the keyword where it sits, before the object is merged with
anything else:

* ``if``/``then``/``else`` and dependencies are first rewritten as ``anyOf`` (the
  ``not`` of a failed ``if`` gives no annotation, as the spec says);
* the object is merged with its ``allOf``/``$ref`` members (each member's own
  ``unevaluated*`` settled first, alone);
* ``anyOf``/``oneOf`` are distributed: ``oneOf`` and pairwise disjoint ``anyOf``
  branches one by one; other ``anyOf`` over every non-empty subset of branches (the
  evaluated set grows with the valid branches), up to ``SchemaLimits.max_subset_branches``;
* on the flat object, ``unevaluatedProperties: U`` becomes ``additionalProperties: U``
  (dropped if ``additionalProperties`` is there: it evaluates everything), and
  ``unevaluatedItems: U`` becomes the schema of the items after ``prefixItems``
  (dropped if ``items`` is there).  ``unevaluatedItems`` beside ``contains`` is refused
  (which items ``contains`` evaluated depends on the instance).
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any

from gbnfkit._errors import SchemaError
from gbnfkit.schema._negate import FROM_NOT
from gbnfkit.schema._oneof import disjoint

if TYPE_CHECKING:
    from gbnfkit.schema._convert import Converter

__all__ = ["lower_unevaluated", "UNEVALUATED"]

UNEVALUATED = ("unevaluatedProperties", "unevaluatedItems")


def _trivial(s: Any) -> bool:
    return s is True or s == {}


def lower_unevaluated(conv: Converter, schema: Any, ptr: str) -> Any:
    """``schema`` without ``unevaluated*`` at its top (nested ones are settled when
    their own object is visited or merged)."""
    if not isinstance(schema, dict) or not any(k in schema for k in UNEVALUATED):
        return schema
    keep = {k: schema[k] for k in UNEVALUATED if k in schema and not _trivial(schema[k])}
    rest = {k: v for k, v in schema.items() if k not in UNEVALUATED}
    if not keep:
        return rest
    merged = conv.merge([rest], ptr)
    if merged is False or not isinstance(merged, dict):
        return merged
    for comb in ("oneOf", "anyOf"):
        if comb in merged:
            return _distribute(conv, merged, comb, keep, ptr)
    if merged.get(FROM_NOT) and any(k in merged for k in (
            "properties", "patternProperties", "additionalProperties", "prefixItems", "items",
            "contains")):
        kw = next(iter(keep))
        conv.unsupported(f"{kw} beside a not (or the else of an if) that constrains members "
                         "is not supported (a negation evaluates nothing)", kw, ptr)
        return merged
    out = dict(merged)
    if "unevaluatedProperties" in keep and "additionalProperties" not in out:
        out["additionalProperties"] = keep["unevaluatedProperties"]
    if "unevaluatedItems" in keep:
        u = keep["unevaluatedItems"]
        items = out.get("items")
        if isinstance(items, list):
            out.setdefault("additionalItems", u)
        elif "items" not in out:
            if "contains" in out:
                conv.unsupported("unevaluatedItems beside contains is not supported (the "
                                 "items contains evaluates depend on the instance)",
                                 "unevaluatedItems", ptr)
            else:
                out["items"] = u
    return out


def _distribute(conv: Converter, merged: dict[str, Any], comb: str, keep: dict[str, Any],
                ptr: str) -> Any:
    branches = merged[comb]
    rest = {k: v for k, v in merged.items() if k != comb}
    if comb == "oneOf":
        # exactly one branch holds: it alone gives the annotations; the oneOf itself
        # stays beside the distributed copies to keep "exactly one"
        options = [lower_unevaluated(conv, {"allOf": [rest, b], **keep}, ptr)
                   for b in branches]
        return {"oneOf": branches, "anyOf": options}
    try:
        separate = disjoint(branches, lambda s: conv.merge([rest, s], ptr),
                            lambda s: conv.merge([s], ptr))
    except SchemaError:
        separate = False
    if separate:
        groups: list[tuple[Any, ...]] = [(b,) for b in branches]
    elif len(branches) <= conv.opts.limits.max_subset_branches:
        groups = [g for n in range(1, len(branches) + 1)
                  for g in itertools.combinations(branches, n)]
    else:
        conv.unsupported(f"{next(iter(keep))} beside an anyOf of more than "
                         f"{conv.opts.limits.max_subset_branches} overlapping branches is not "
                         "supported", next(iter(keep)), ptr, "max_subset_branches")
        return merged
    return {"anyOf": [lower_unevaluated(conv, {"allOf": [rest, *g], **keep}, ptr)
                      for g in groups]}
