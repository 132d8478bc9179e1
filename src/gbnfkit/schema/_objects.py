"""Object schemas: properties, required, additional and pattern properties, counts.

Members are produced by a small state machine whose states are rules: in schema
order a state is (next property index, members so far); in any order it is (set of
required properties seen, members so far).  Counts are only tracked as far as
``minProperties``/``maxProperties`` need them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Generator
from functools import partial
from typing import TYPE_CHECKING, Any

from gbnfkit._errors import SchemaError
from gbnfkit.schema._dfa import (
    TooBig,
    complement_grammar,
    dfa_of,
    emit_dfa,
    product,
)
from gbnfkit.schema._gbnf import alt, joined, literal, name_part, paren, seq
from gbnfkit.schema._instance import ANNOTATIONS, check_value, pattern_search
from gbnfkit.schema._jsontext import json_string
from gbnfkit.schema._negate import NEED_OTHER_KEY
from gbnfkit.schema._oneof import within
from gbnfkit.schema._options import PropertyOrder
from gbnfkit.schema._regex import regex_expr
from gbnfkit.schema._regex_parse import Branch, Cat, Chars, RegexUnsupported, parse_regex

if TYPE_CHECKING:
    from gbnfkit.schema._convert import Converter

__all__ = ["object_expr"]

_MAX_FACTOR_DEPTH = 64
"""Longest key prefix below which listed keys are left-factored (``_Members.keys``):
bounds the recursion (keys like ``a``, ``aa``, ``aaa``... nest one rule per key)."""

_State = tuple[int, int, bool]
_Steps = Generator[_State, "str | None", "str | None"]
"""A state's work: it yields each state whose rule it needs and is sent that rule."""


def _run(memo: dict[_State, str | None], state: _State,
         work: Callable[[int, int, bool], _Steps]) -> str | None:
    """The rule of ``state``: its ``work``, and that of the states it asks for, done one
    after the other on a list instead of Python's stack (a count of members is one
    state per count: ``maxProperties: 1000`` nested that deep).  ``memo`` holds the
    states done, or begun (a state ``any_order`` names before its work, for the loops);
    the order of the work, and so of the rules written, is that of plain recursion."""
    if state in memo:
        return memo[state]
    stack = [work(*state)]
    sent: str | None = None
    while True:
        try:
            wanted = stack[-1].send(sent)
        except StopIteration as done:
            stack.pop()
            if not stack:
                result: str | None = done.value
                return result
            sent = done.value
            continue
        if wanted in memo:
            sent = memo[wanted]
        else:
            stack.append(work(*wanted))
            sent = None


class _Members:
    def __init__(self, conv: Converter, hint: str, known: list[tuple[str, str, bool]],
                 extra: list[str], lo: int, hi: int | None,
                 outside: list[str] | None = None,
                 counting: dict[str, str] | None = None,
                 extra_counting: list[str] | None = None) -> None:
        self.conv = conv
        self.hint = hint
        self.known = known  # (name, value expression, required)
        self.extra = extra  # member expressions of additional/pattern properties
        self.lo, self.hi = lo, hi
        self.cap = hi if hi is not None else max(lo, 1)
        self.rules: dict[tuple[int, int, bool], str | None] = {}
        # with ``outside``: some member's key must not be one of these names; with
        # ``counting``/``extra_counting`` its value must also match a schema, and those
        # are the members (listed by name, extra) whose value does
        self.outside = outside
        self.counting = counting
        self.extra_counting = extra_counting or []
        # ``keys`` of each set of members, for the states that allow the same ones, and
        # the rule of each listed member (``member``)
        self.factored: dict[tuple[tuple[str, str], ...], list[str]] = {}
        self.kv: dict[str, str] = {}
        self.written = {name: json_string(name) for name, _, _ in known}
        self.colon = conv.colon()
        # for ``any_order``: the required names in schema order, the bit of each, and
        # the rule (or the one option) that reads the listed members of a group (by their
        # names, in schema order): the same group comes back in many states
        self.required = [name for name, _, r in known if r]
        self.bits = {name: 1 << i for i, name in enumerate(self.required)}
        self.group_rules: dict[tuple[str, ...], str] = {}
        self.extra_member: str | None = None  # the extra members as one group

    def inc(self, c: int) -> int:
        return min(c + 1, self.cap)

    def sep(self, c: int) -> str:
        return self.conv.comma() if c else self.conv.ws("first")

    def variants(self, name: str | None, member: str, e: bool) -> list[tuple[str, bool]]:
        """A member (``name`` None: an extra one) as (expression, needed member seen):
        first ``member`` itself, then a variant counting for ``outside`` if any."""
        if self.outside is None:
            return [(member, e)]
        if self.counting is None:  # any value counts
            return [(member, e or name is None or name not in self.outside)]
        found = self.extra_counting if name is None else (
            [self.counting[name]] if name in self.counting else [])
        if e or not found:
            return [(member, e)]
        return [(member, e), (paren(alt(found)), True)]

    def member(self, name: str, value: str) -> str:
        """The rule of a listed member: its key (as written), the colon, ``value``."""
        found = self.kv.get(name)
        if found is None:
            found = self.kv[name] = self.conv.table.add(
                self.conv.child_hint(self.hint, name) + "-kv",
                seq(literal(self.written[name]), self.colon, value))
        return found

    def keys(self, members: list[tuple[str, str]], prefix: str = "") -> list[str]:
        """Listed members (key as written, value expression) that lead to the same
        next state, left-factored on their keys: the members whose keys share a first
        character are one option, their longest common prefix then a rule of the rests,
        factored the same way (called last: no frame).  After a shared prefix the parse
        is one stack, not one per key, and the keys that may come are read in one rule
        (docs/schema.md, "Listed keys").  Past a ``prefix`` of ``_MAX_FACTOR_DEPTH``
        characters the members are written one by one (same language)."""
        firsts: dict[str, list[tuple[str, str]]] = {}
        for key, value in members:
            firsts.setdefault(key[:1], []).append((key, value))
        out: list[str] = []
        for first, group in firsts.items():
            if len(group) == 1 or not first or len(prefix) >= _MAX_FACTOR_DEPTH:
                out += [seq(literal(key), self.colon, value) for key, value in group]
                continue
            common = os.path.commonprefix([key for key, _ in group])
            below = self.keys([(key[len(common):], value) for key, value in group],
                              prefix + common)
            hint = f"{self.hint}-keys-" + name_part((prefix + common)[1:30])
            out.append(seq(literal(common), self.conv.table.add(hint, alt(below))))
        return out

    def start(self) -> bool:
        return self.outside is None

    # schema order ------------------------------------------------------------------
    def ordered(self, i: int, c: int, e: bool) -> str | None:
        """The rule of the members from the ``i``-th listed one on, ``c`` members
        seen (``e``: as in :meth:`any_order`)."""
        return _run(self.rules, (i, c, e), self._ordered)

    def _ordered(self, i: int, c: int, e: bool) -> _Steps:
        """:meth:`ordered`'s work; it yields the states it needs first (see ``_run``)."""
        key = (i, c, e)
        n = len(self.known)
        options: list[str] = []
        if i < n:
            name, value, required = self.known[i]
            member = self.member(name, value)
            if self.hi is None or c < self.hi:
                for expr, e2 in self.variants(name, member, e):
                    nxt = yield (i + 1, self.inc(c), e2)
                    if nxt is not None:
                        # the member and what follows as one rule, shared whether it
                        # comes first or after another (see any_order)
                        then = self.conv.table.add(f"{self.hint}-m{i}-then", seq(expr, nxt))
                        options.append(seq(self.sep(c), then))
            if not required:
                nxt = yield (i + 1, c, e)
                if nxt is not None:
                    options.append(nxt)
        elif self.extra and (self.hi is None or c < self.hi):
            extra = paren(alt(self.extra))
            if self.hi is None and c >= max(self.lo, 1):
                star = f"({seq(self.conv.comma(), extra)})*"
                if e:
                    options.append(star)
                else:  # extras until one counts, then any
                    options += [seq(star, self.conv.comma(), expr, star)
                                for expr, e2 in self.variants(None, extra, e) if e2]
            else:
                for expr, e2 in self.variants(None, extra, e):
                    nxt = yield (i, c + 1, e2)
                    if nxt is not None:
                        options.append(seq(self.sep(c), expr, nxt))
                if c >= self.lo and e:
                    options.append('""')
        elif c >= self.lo and e:
            options.append('""')
        hint = f"{self.hint}-m{i}" + (f"-c{c}" if c else "") + ("" if e else "-x")
        return self._finish(key, options, hint)

    def _finish(self, key: tuple[int, int, bool], options: list[str],
                hint: str) -> str | None:
        if not options:
            self.rules[key] = None
            return None
        options = list(dict.fromkeys(options))
        if options == ['""']:
            self.rules[key] = '""'
            return '""'
        if len(options) == 1 and " " not in options[0]:
            self.rules[key] = options[0]
            return options[0]
        name = self.conv.table.add(hint, alt(options))
        self.rules[key] = name
        return name

    # any order ---------------------------------------------------------------------
    def any_order(self, seen: int, c: int, e: bool,
                  memo: dict[tuple[int, int, bool], str | None],
                  sequential: bool) -> str | None:
        """State ``seen``: bit set of required members present, or with ``sequential``
        the number of required members present (they then come in schema order);
        ``e``: a member outside the needed names was seen (or none is needed); ``c``
        members seen (up to the bounds)."""
        return _run(memo, (seen, c, e), partial(self._any_order, memo=memo,
                                                sequential=sequential))

    def _any_order(self, seen: int, c: int, e: bool,
                   memo: dict[tuple[int, int, bool], str | None],
                   sequential: bool) -> _Steps:
        """:meth:`any_order`'s work; it yields the states it needs (see ``_run``)."""
        key = (seen, c, e)
        name = self.conv.table.fresh(f"{self.hint}-s{seen}" + (f"-c{c}" if c else "") +
                                     ("" if e else "-x"))
        memo[key] = name
        required = self.required
        done = len(required) if sequential else (1 << len(required)) - 1
        options: list[str] = []
        # the members that may come next, each followed by the state after it: one rule
        # shared by the states with the same members and next states (the first member
        # and the later ones of an object, say), so their keys' contexts are the same
        # after `{"` and after `, "` (the separator before it, and the call of the next
        # state in tail position, leave no frame)
        members: list[str] = []
        # listed members by next state: (key as written, name, value)
        keyed: dict[str, list[tuple[str, str, str]]] = {}
        written = self.written
        if self.hi is None or c < self.hi:
            c2 = self.inc(c)
            plain = self.outside is None  # (``variants`` is the member alone)
            for nm, value, is_required in self.known:
                if not is_required:
                    after = seen
                elif sequential:
                    if seen >= len(required) or required[seen] != nm:
                        continue
                    after = seen + 1
                else:
                    bit = self.bits[nm]
                    if seen & bit:
                        continue
                    after = seen | bit
                if plain:
                    state = (after, c2, e)
                    found = yield state
                    if found is not None:
                        keyed.setdefault(found, []).append((written[nm], nm, value))
                    continue
                for k, (expr, e2) in enumerate(self.variants(nm, value, e)):
                    nxt = yield (after, c2, e2)
                    if nxt is None:
                        continue
                    if k == 0:  # the member itself (``variants`` lists it first)
                        keyed.setdefault(nxt, []).append((written[nm], nm, value))
                    else:
                        members.append(seq(expr, nxt))
            if self.extra:
                if self.extra_member is None:
                    self.extra_member = paren(alt(self.extra))
                for expr, e2 in self.variants(None, self.extra_member, e):
                    state = (seen, c2, e2)
                    nxt = yield state
                    if nxt is not None:
                        members.append(seq(expr, nxt))
        # the listed members that lead to the same next state (the optional ones, whose
        # keys change no state) are read by one rule of their keys, written once for
        # every state where they may come; a member alone keeps its own rule
        listed: list[str] = []
        for nxt, group in keyed.items():
            if len(group) == 1:
                _, nm, value = group[0]
                listed.append(joined(self.member(nm, value), nxt))  # (two rule names)
            else:
                names = tuple([nm for _, nm, _ in group])
                read = self.group_rules.get(names)
                if read is None:
                    entries = tuple(sorted((key, value) for key, _, value in group))
                    keys = self.factored.get(entries)
                    if keys is None:
                        keys = self.factored[entries] = self.keys(list(entries))
                    # (one option: the keys' common quote, then the rule of the rest)
                    read = self.group_rules[names] = keys[0] if len(keys) == 1 else \
                        self.conv.table.add(f"{self.hint}-keys", alt(keys))
                listed.append(seq(read, nxt))
        members = listed + members
        if members:
            options.append(seq(self.sep(c), self.conv.table.add(f"{self.hint}-m", alt(members))))
        if seen == done and c >= self.lo and e:
            options.append('""')
        self.conv.table.define(name, alt(options) if options else "[^\\x00-\\U0010FFFF]")
        return name


def _closed(conv: Converter, schema: dict[str, Any]) -> Any:
    if "additionalProperties" in schema:
        return schema["additionalProperties"]
    if "unevaluatedProperties" in schema:
        return schema["unevaluatedProperties"]
    return False if conv.opts.closed_objects and "properties" in schema else True


def object_expr(conv: Converter, schema: dict[str, Any], ptr: str, hint: str) -> str | None:
    props = schema.get("properties", {})
    if not isinstance(props, dict):
        raise SchemaError("properties must be an object", keyword="properties", pointer=ptr)
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        raise SchemaError("required must be an array of strings", keyword="required",
                          pointer=ptr)
    if schema.get("propertyNames", True) not in ({}, True):
        named = _property_names(conv, schema, ptr)
        if named is None:
            conv.unsupported("propertyNames is enforced only as a finite set of names (enum, "
                             "const)", "propertyNames", ptr)
        else:
            schema = named
            props = schema.get("properties", {})
            required = schema.get("required", [])
    patterns = schema.get("patternProperties", {})
    additional = _closed(conv, schema)
    if "unevaluatedProperties" in schema and "additionalProperties" in schema:
        conv.unsupported("unevaluatedProperties is not supported", "unevaluatedProperties", ptr)
    lo = conv.count(schema, "minProperties", ptr) or 0
    hi = conv.count(schema, "maxProperties", ptr)
    # properties, with the pattern schemas that also apply to them
    schemas: dict[str, Any] = {}
    for name, sub in props.items():
        extra = [s for p, s in patterns.items() if _search(conv, p, name, ptr)]
        schemas[name] = {"allOf": [sub, *extra]} if extra else sub
    for name in required:
        if name not in schemas:
            extra = [s for p, s in patterns.items() if _search(conv, p, name, ptr)]
            schemas[name] = {"allOf": extra} if extra else additional
    req = set(required)
    known: list[tuple[str, str, bool]] = []
    for name, sub in schemas.items():
        value = conv.visit(sub, conv.child_ptr(ptr, "properties", name),
                           conv.child_hint(hint, name))
        if value is None:
            if name in req:
                return None
            continue
        known.append((name, value, name in req))
    extra_members = _extra_members(conv, schema, ptr, hint, list(schemas), patterns, additional)
    if extra_members:
        # one grammar rule per count of members (``_Members``), as many as the bound
        most = conv.opts.limits.max_counted_members
        for key, bound in (("minProperties", lo), ("maxProperties", hi)):
            if bound is not None and bound > most:
                conv.unsupported(f"{key} {bound:,} is enforced only up to {most:,} beside "
                                 "properties not listed (one grammar rule per count)", key,
                                 ptr, "max_counted_members")
                lo, hi = (0, hi) if key == "minProperties" else (lo, None)
    sequential = len(req) > conv.opts.max_required_any_order
    if sequential and conv.opts.property_order is PropertyOrder.ANY:
        conv.restricted(f"{len(req)} required properties (more than max_required_any_order="
                        f"{conv.opts.max_required_any_order}) must come in schema order; the "
                        f"other properties may come anywhere", "required", ptr)
    outside = schema.get(NEED_OTHER_KEY)
    counting: dict[str, str] | None = None
    extra_counting: list[str] = []
    if outside is not None and outside["value"] is not True and outside["value"] != {}:
        # the members whose key is outside the names and whose value matches
        need = outside["value"]
        if patterns:
            conv.unsupported("not of additionalProperties beside patternProperties is not "
                             "supported", "not", ptr)
        counting = {}
        for name, sub in schemas.items():
            if name in outside["names"]:
                continue
            value = conv.visit({"allOf": [sub, need]}, conv.child_ptr(ptr, "properties", name),
                               conv.child_hint(hint, name + "-other"))
            if value is not None:
                counting[name] = seq(conv.key_literal(name), conv.colon(), value)
        extra_counting = _additional_member(conv, ptr, hint + "-other", list(schemas),
                                            {"allOf": [additional, need]}, None)
    m = _Members(conv, hint, known, extra_members, lo, hi,
                 list(outside["names"]) if outside is not None else None, counting,
                 extra_counting)
    if conv.opts.property_order is PropertyOrder.ANY:
        body = m.any_order(0, 0, m.start(), {}, sequential)
    else:
        body = m.ordered(0, 0, m.start())
    if body is None:
        return None
    return seq('"{"', conv.ws("open"), body, conv.ws("close"), '"}"')


def _search(conv: Converter, pattern: str, name: str, ptr: str) -> bool:
    try:
        return pattern_search(pattern, name)
    except re.error as e:
        raise SchemaError(f"invalid pattern {pattern!r}: {e}", keyword="patternProperties",
                          pointer=ptr) from None


def _extra_members(conv: Converter, schema: dict[str, Any], ptr: str, hint: str,
                   names: list[str], patterns: dict[str, Any], additional: Any) -> list[str]:
    if not patterns:
        return _additional_member(conv, ptr, hint, names, additional, None)
    if all(within(s, additional) and within(additional, s) for s in patterns.values()):
        # a key outside the names takes the same schema whether a pattern matches it or
        # not: the patterns split nothing (each must still be a valid regular expression)
        for p in patterns:
            _search(conv, p, "", ptr)
        return _additional_member(conv, ptr, hint, names, additional, None)
    if (len(patterns) > 1 and len({repr(s) for s in patterns.values()}) > 1) or any(
            _overlaps(p, names) for p in patterns):
        return _pattern_product(conv, ptr, hint, names, patterns, additional)
    all_branches: list[Branch] = []
    options = []
    for p in patterns:
        try:
            branches = parse_regex(p)
        except RegexUnsupported as e:
            conv.unsupported(f"pattern {p!r}: {e}", "patternProperties", ptr)
            return _additional_member(conv, ptr, hint, names, True, None)
        all_branches += branches
        options.append(regex_expr(branches, conv.chars.of))
    out: list[str] = []
    value = conv.visit(next(iter(patterns.values())), conv.child_ptr(ptr, "patternProperties"),
                       conv.child_hint(hint, "pattern-value"))
    # an ambiguous key pattern as its DFA, as a string value's (docs/schema.md,
    # "Patterns"); one pattern shares the rule of its string values.  "-": no key matches
    rule = "" if value is None else conv.pattern_rule(
        all_branches, (next(iter(patterns)), 0, None) if len(patterns) == 1 else None)
    if value is not None and rule != "-":
        key = conv.table.add(conv.child_hint(hint, "pattern-key"),
                             seq('"\\""', rule or alt(options), '"\\""'))
        out.append(conv.table.add(conv.child_hint(hint, "pattern-kv"),
                                  seq(key, conv.colon(), value)))
    if additional is False:
        return out
    literal_names = [Branch(Cat(tuple(Chars(((ord(c), ord(c)),)) for c in n)), True, True)
                     for n in names]
    try:
        other = complement_grammar(all_branches + literal_names, conv.table, conv.chars.of,
                                   conv.child_hint(hint, "other-key"), conv.opts.limits)
    except TooBig as e:
        conv.unsupported("the keys outside patternProperties need too large an automaton",
                         "patternProperties", ptr, e.limit)
        return out + _additional_member(conv, ptr, hint, names, additional, None)
    return out + _additional_member(conv, ptr, hint, names, additional, other)


def _overlaps(pattern: str, names: list[str]) -> bool:
    return any(pattern_search(pattern, n) for n in names)


def _additional_member(conv: Converter, ptr: str, hint: str, names: list[str],
                       additional: Any, key_rule: str | None) -> list[str]:
    if additional is False:
        return []
    value = conv.visit(additional, conv.child_ptr(ptr, "additionalProperties"),
                       conv.child_hint(hint, "additional-value"))
    if value is None:
        return []
    if key_rule is not None:
        key = seq('"\\""', key_rule, '"\\""')
    elif names:
        key = seq('"\\""', conv.chars.not_in(names), '"\\""')
    else:
        key = conv.string_rule()
    return [conv.table.add(conv.child_hint(hint, "additional-kv"),
                           seq(key, conv.colon(), value))]


def _pattern_product(conv: Converter, ptr: str, hint: str, names: list[str],
                     patterns: dict[str, Any], additional: Any) -> list[str]:
    """Keys partitioned by the set of patterns they match (and not a listed name): one
    member kind per non-empty set, its value the ``allOf`` of those pattern schemas, and
    the keys matching none for ``additionalProperties``: the product of the automata."""
    limits = conv.opts.limits
    if len(patterns) > limits.max_pattern_properties:
        conv.unsupported(f"more than {limits.max_pattern_properties} patternProperties with "
                         "different schemas (or overlapping listed names) are not supported",
                         "patternProperties", ptr, "max_pattern_properties")
        return _additional_member(conv, ptr, hint, names, True, None)
    k = len(patterns)
    try:
        dfas = [dfa_of(parse_regex(p), limits) for p in patterns]
        if names:
            dfas.append(dfa_of([Branch(Cat(tuple(Chars(((ord(c), ord(c)),)) for c in n)),
                                       True, True) for n in names], limits, "max_product_states"))
        prod = product(dfas, lambda v: False, limits)
    except RegexUnsupported as e:
        conv.unsupported(f"patternProperties: {e}", "patternProperties", ptr)
        return _additional_member(conv, ptr, hint, names, True, None)
    except TooBig as e:
        conv.unsupported(f"patternProperties need more than {limits.max_dfa_states} automaton "
                         f"states per pattern or {limits.max_product_states} in their product",
                         "patternProperties", ptr, e.limit)
        return _additional_member(conv, ptr, hint, names, True, None)
    assert prod.labels is not None
    keys = list(patterns)
    masks = sorted({v[:k] for v in prod.labels if not (names and v[k])}, reverse=True)
    out: list[str] = []
    for mask in masks:
        chosen = [patterns[p] for p, hit in zip(keys, mask, strict=True) if hit]
        if chosen:
            sub: Any = chosen[0] if len(chosen) == 1 else {"allOf": chosen}
            vptr = conv.child_ptr(ptr, "patternProperties", keys[mask.index(True)])
        elif additional is False:
            continue
        else:
            sub, vptr = additional, conv.child_ptr(ptr, "additionalProperties")
        value = conv.visit(sub, vptr, conv.child_hint(hint, "pattern-value"))
        if value is None:
            continue

        def accept(v: tuple[bool, ...], m: tuple[bool, ...] = mask) -> bool:
            return v[:k] == m and not (names and v[k])

        key = emit_dfa(prod.accepting_where(accept), conv.table, conv.chars.of,
                       conv.child_hint(hint, "pattern-key"))
        if key is None:
            continue
        out.append(conv.table.add(conv.child_hint(hint, "pattern-kv"),
                                  seq('"\\""', key, '"\\""', conv.colon(), value)))
    return out


def _property_names(conv: Converter, schema: dict[str, Any], ptr: str) -> dict[str, Any] | None:
    """``propertyNames`` with finitely many allowed names, as those names listed under
    ``properties`` (each with the schema that applies to it) and nothing else allowed."""
    try:
        flat = conv.merge([schema["propertyNames"]], ptr)
    except SchemaError:
        return None
    if flat is False:
        flat = {"enum": []}
    if not isinstance(flat, dict):
        return None
    neg = flat.get("not")
    if isinstance(neg, dict) and set(flat) - ANNOTATIONS <= {"not", "type"} and flat.get(
            "type", "string") == "string" and set(neg) - ANNOTATIONS in ({"enum"}, {"const"}):
        # names outside a finite set: those names are forbidden
        banned = [neg["const"]] if "const" in neg else list(neg["enum"])
        props = dict(schema.get("properties", {}))
        for name in banned:
            if isinstance(name, str):
                props[name] = False
        out = {k: v for k, v in schema.items() if k != "propertyNames"}
        if "properties" not in schema and "additionalProperties" not in schema:
            out["additionalProperties"] = True  # stays open under closed_objects
        out["properties"] = props
        return out
    if not ("enum" in flat or "const" in flat):
        return None
    values = [flat["const"]] if "const" in flat else list(flat["enum"])
    rest = {k: v for k, v in flat.items() if k not in ("enum", "const")}
    names: list[str] = []
    for v in values:
        ok = check_value(v, rest, lambda r: conv.resolve(r, ptr), conv.legacy_ref)
        if ok is None:
            return None
        if ok and isinstance(v, str) and v not in names:
            names.append(v)
    props = dict(schema.get("properties", {}))
    patterns = schema.get("patternProperties", {})
    extra = _closed(conv, schema)
    out_props: dict[str, Any] = {}
    for name in names:
        # a listed name is held to the patterns it matches too (as in properties)
        hits = [s for p, s in patterns.items() if _search(conv, p, name, ptr)]
        schemas = ([props[name]] if name in props else []) + hits
        out_props[name] = {"allOf": schemas} if schemas else extra
    for name in props:
        if name not in out_props:
            out_props[name] = False
    out = {k: v for k, v in schema.items() if k not in ("propertyNames", "patternProperties")}
    out["properties"] = out_props
    out["additionalProperties"] = False
    return out
