"""Array schemas: items, prefixItems (tuples), minItems/maxItems, contains."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gbnfkit._errors import SchemaError
from gbnfkit.schema._gbnf import alt, seq
from gbnfkit.schema._instance import ANNOTATIONS, check_value, json_equal
from gbnfkit.schema._negate import Unnegatable, negate
from gbnfkit.schema._numbers import repeat
from gbnfkit.schema._values import render_value

if TYPE_CHECKING:
    from gbnfkit.schema._convert import Converter

__all__ = ["array_expr"]

_TUPLE_NESTING = 32
"""Optional ``prefixItems`` written one inside another before the rest becomes a rule
(the GBNF parser refuses parentheses nested more than 100 deep)."""


def array_expr(conv: Converter, schema: dict[str, Any], ptr: str, hint: str) -> str | None:
    items = schema.get("items", True)
    prefix: list[Any] = schema.get("prefixItems", [])
    rest_key = "items"
    if isinstance(items, list):  # draft 4-2019: tuple form
        prefix, items, rest_key = items, schema.get("additionalItems", True), "additionalItems"
    if not isinstance(prefix, list):
        raise SchemaError("prefixItems must be an array", keyword="prefixItems", pointer=ptr)
    lo = conv.count(schema, "minItems", ptr) or 0
    hi = conv.count(schema, "maxItems", ptr)
    if hi is not None and lo > hi:
        return None
    if schema.get("uniqueItems") is True and (hi is None or hi > 1):
        values = None if prefix or "contains" in schema else _finite_domain(conv, items, ptr)
        if values is not None and len(values) <= conv.opts.limits.max_unique_values:
            return _unique(conv, values, lo, hi, hint)
        conv.unsupported(f"uniqueItems is enforced only over item schemas with at most "
                         f"{conv.opts.limits.max_unique_values} values (enum, const, boolean, "
                         "null)", "uniqueItems", ptr,
                         None if values is None else "max_unique_values")
    for kw in ("unevaluatedItems",):
        if kw in schema and schema[kw] is not True:
            conv.unsupported(f"{kw} is not supported", kw, ptr)
    rest = conv.visit(items, conv.child_ptr(ptr, rest_key), conv.child_hint(hint, "item"))
    elems = [conv.visit(p, conv.child_ptr(ptr, "prefixItems", str(i)),
                        conv.child_hint(hint, str(i))) for i, p in enumerate(prefix)]
    if "contains" in schema:
        return _contains(conv, schema, ptr, hint, items, prefix, lo, hi)
    comma = conv.comma()

    def rest_after(k: int) -> str | None:
        """The items after the ``k`` of ``prefixItems`` (``k`` at least one, and at least
        ``len(prefix)``); None: impossible."""
        need = max(lo - k, 0)
        room = None if hi is None else hi - k
        if rest is None or room == 0:
            return "" if need == 0 else None
        # (counts above 10,000 in blocks: within the engine's repetition limit)
        return repeat(f"({seq(comma, rest)})", need, room)

    def after(k: int) -> str | None:
        """Items from index k on, preceded by at least one item; None: impossible.
        Made from the last of ``prefixItems`` back (a loop: a tuple of thousands of
        items nested that deep); every ``_TUPLE_NESTING`` optional items the text so
        far becomes a rule, so parentheses nest within the grammar parser's bound."""
        if k >= len(prefix):
            return rest_after(k)
        tail = rest_after(len(prefix))
        nesting = 0
        for j in range(len(prefix) - 1, k - 1, -1):
            e = elems[j]
            if hi is not None and j >= hi:
                tail, nesting = ("" if j >= lo else None), 0
                continue
            if nesting >= _TUPLE_NESTING and tail:
                tail, nesting = conv.table.add(conv.child_hint(hint, f"from{j + 1}"), tail), 0
            present = None if e is None or tail is None else seq(comma, e, tail)
            if j >= lo:
                tail, nesting = (f"({present})?", nesting + 1) if present else ("", 0)
            else:
                tail = present
        return tail

    first = elems[0] if prefix else rest
    body: str | None = None
    if not prefix and rest is not None and hi is None and lo <= 1:
        # the first item and the later ones read at one place, the next ones called
        # last (no frame), so an item starts in the same state after `[` and `,`
        # (docs/schema.md, "Objects in any order")
        items = conv.table.fresh(conv.child_hint(hint, "items"))
        more = conv.table.add(conv.child_hint(hint, "more"), alt([seq(comma, items), '""']))
        conv.table.define(items, seq(rest, more))
        body = seq(conv.ws("first"), items)
    elif first is not None and (hi is None or hi >= 1):
        tail = after(1)
        if tail is not None:
            body = seq(conv.ws("first"), first, tail)
    open_, close = conv.ws("open"), conv.ws("close")
    if body is None:
        if lo > 0:
            return None
        return seq('"["', open_, close, '"]"')
    inner = body if lo > 0 else f"({body})?"
    return seq('"["', open_, inner, close, '"]"')


def _contains(conv: Converter, schema: dict[str, Any], ptr: str, hint: str, items: Any,
              prefix: list[Any], lo: int, hi: int | None) -> str | None:
    """``contains`` with ``minContains``/``maxContains`` (default 1..unbounded) on a
    plain item list: the items that match are counted; with ``maxContains`` the others
    are ``items`` and ``not contains`` (refused when that negation is not supported)."""
    cmin = conv.count(schema, "minContains", ptr)
    cmin = 1 if cmin is None else cmin
    cmax = conv.count(schema, "maxContains", ptr)
    without = {k: v for k, v in schema.items() if k not in ("contains", "minContains",
                                                            "maxContains")}
    if cmax is not None and cmin > cmax:
        return None
    if cmin == 0 and cmax is None:
        return array_expr(conv, without, ptr, hint)  # always holds
    if prefix or lo > 1 or hi is not None:
        conv.unsupported("contains is enforced only on plain item lists (no prefixItems, "
                         "minItems above 1, maxItems)", "contains", ptr)
        return array_expr(conv, without, ptr, hint)
    cptr = conv.child_ptr(ptr, "contains")
    match = conv.visit({"allOf": [items, schema["contains"]]}, cptr,
                       conv.child_hint(hint, "contains"))
    any_item = conv.visit(items, conv.child_ptr(ptr, "items"), conv.child_hint(hint, "item"))
    comma = conv.comma()
    open_, close, first = conv.ws("open"), conv.ws("close"), conv.ws("first")
    if cmax is None:
        if match is None:
            return None
        # at least cmin matching items, anything around them
        before = f"({seq(any_item, comma)})*" if any_item else ""
        unit = seq(before, match)
        body = seq(unit, repeat(f"({seq(comma, unit)})", cmin - 1, cmin - 1) if cmin > 1 else "",
                   f"({seq(comma, any_item)})*" if any_item else "")
        return seq('"["', open_, first, body, close, '"]"')
    try:
        negation = negate(schema["contains"], lambda r: conv.resolve(r, ptr),
                          conv.opts.limits.max_negation_chars)
    except Unnegatable as e:
        conv.unsupported(f"maxContains needs the items that do not match contains: {e}",
                         "maxContains", ptr, e.limit)
        return array_expr(conv, without, ptr, hint)
    other = conv.visit({"allOf": [items, negation]}, cptr, conv.child_hint(hint, "other"))
    others = f"({seq(other, comma)})*" if other else ""
    tail = f"({seq(comma, other)})*" if other else ""
    options = []
    if cmin == 0:
        options.append('""')
        if other:
            options.append(seq(first, other, tail))
    if match is not None and cmax > 0:
        unit = seq(others, match)
        reps = repeat(f"({seq(comma, unit)})", max(cmin - 1, 0), cmax - 1) if cmax > 1 else ""
        options.append(seq(first, unit, reps, tail))
    if not options:
        return None
    if lo > 0:
        options = [o for o in options if o != '""']
        if not options:
            return None
    return seq('"["', open_, f"({alt(options)})", close, '"]"')


def _finite_domain(conv: Converter, items: Any, ptr: str) -> list[Any] | None:
    """The distinct values ``items`` allows, when finitely many; else None."""
    try:
        flat = conv.merge([items], ptr)
    except SchemaError:
        return None
    if flat is False:
        return []
    if not isinstance(flat, dict):
        return None
    rest = {k: v for k, v in flat.items() if k not in ("enum", "const")}
    if "enum" in flat or "const" in flat:
        values = [flat["const"]] if "const" in flat else list(flat["enum"])
    elif set(flat) - ANNOTATIONS == {"type"}:
        types = [flat["type"]] if isinstance(flat["type"], str) else list(flat["type"])
        if not set(types) <= {"boolean", "null"}:
            return None
        values = [v for t in types for v in ((True, False) if t == "boolean" else (None,))]
    else:
        return None
    kept: list[Any] = []
    for v in values:
        ok = check_value(v, rest, lambda r: conv.resolve(r, ptr), conv.legacy_ref)
        if ok is None:
            return None
        if ok and not any(json_equal(v, w) for w in kept):
            kept.append(v)
    return kept


def _unique(conv: Converter, values: list[Any], lo: int, hi: int | None,
            hint: str) -> str | None:
    """Arrays of distinct values: a state per set of values already used."""
    rendered = [render_value(conv, v) for v in values]
    names: dict[int, str | None] = {}
    comma = conv.comma()

    def state(used: int) -> str | None:
        if used in names:
            return names[used]
        count = bin(used).count("1")
        options = ['""'] if count >= lo else []
        if hi is None or count < hi:
            for i, r in enumerate(rendered):
                if used & (1 << i):
                    continue
                nxt = state(used | (1 << i))
                if nxt is not None:
                    options.append(seq(comma if count else conv.ws("first"), f"({r})", nxt))
        result = conv.table.add(f"{hint}-u{used}", alt(options)) if options else None
        names[used] = result
        return result

    body = state(0)
    if body is None:
        return None
    return seq('"["', conv.ws("open"), body, conv.ws("close"), '"]"')
