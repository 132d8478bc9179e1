"""The JSON Schema converter: dispatch on keywords, primitive types, composition."""

from __future__ import annotations

import json
import math
import re
import warnings
from decimal import Decimal
from typing import Any, NoReturn

from gbnfkit._errors import SchemaError
from gbnfkit.schema._arrays import array_expr
from gbnfkit.schema._dfa import (
    TooBig,
    dfa_of,
    emit_dfa,
    minimal,
    pattern_dfa,
    product,
)
from gbnfkit.schema._formats import FORMAT_PATTERNS, SPEC_FORMATS, format_branches
from gbnfkit.schema._gbnf import RuleTable, alt, char_class, group, literal, seq
from gbnfkit.schema._instance import ANNOTATIONS, check_pattern, check_value
from gbnfkit.schema._jsontext import canonical, json_string
from gbnfkit.schema._limits import limit_hint
from gbnfkit.schema._merge import PATTERNS_KEY, UNSUPPORTED_MERGE, merge_all
from gbnfkit.schema._negate import FRACTION, NOT_PATTERNS, NOT_STRINGS, Unnegatable, negate
from gbnfkit.schema._numbers import decimal_interval, int_range, repeat
from gbnfkit.schema._objects import object_expr
from gbnfkit.schema._oneof import (
    exclusion,
    exclusive_required_branches,
    finer_disjoint,
    hitting_sets,
    literals_schema,
    pair_disjoint,
)
from gbnfkit.schema._options import SchemaOptions, Whitespace
from gbnfkit.schema._refs import Resolver, pointer_token
from gbnfkit.schema._regex import regex_expr
from gbnfkit.schema._regex_length import limit_length
from gbnfkit.schema._regex_parse import Branch, Cat, Chars, RegexUnsupported, parse_regex
from gbnfkit.schema._shapes import check_shapes, count_keyword
from gbnfkit.schema._strings import JsonChars
from gbnfkit.schema._unevaluated import UNEVALUATED, lower_unevaluated
from gbnfkit.schema._values import render_value
from gbnfkit.schema._width import alternatives, listed

__all__ = ["Converter", "SchemaWarning"]

_OBJECT_KEYS = ("properties", "required", "additionalProperties", "patternProperties",
                "minProperties", "maxProperties", "propertyNames", "dependentRequired",
                "dependentSchemas", "dependencies", "unevaluatedProperties")
_ARRAY_KEYS = ("items", "prefixItems", "additionalItems", "minItems", "maxItems", "contains",
               "minContains", "maxContains", "uniqueItems", "unevaluatedItems")
_STRING_KEYS = ("minLength", "maxLength", "pattern", "format", PATTERNS_KEY)
_NUMBER_KEYS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")
_ALWAYS_UNSUPPORTED = ("$dynamicRef", "$recursiveRef")
_TYPES = ("object", "array", "string", "number", "integer", "boolean", "null")
_COMPOSITIONS = ("oneOf", "anyOf", "allOf", "if", "not", "dependentSchemas", "dependencies",
                 "dependentRequired", "uniqueItems", "patternProperties")


def _too_long(d: Decimal, digits: int) -> bool:
    """More than ``digits`` digits before or after the point
    (``SchemaLimits.max_number_digits``)."""
    exponent = d.normalize().as_tuple().exponent
    return not isinstance(exponent, int) or exponent < -digits or d.adjusted() >= digits


class SchemaWarning(UserWarning):
    """A keyword was not enforced (``strict=False``): the grammar accepts more."""


def _dict_ids(document: Any) -> set[int]:
    """The ids of the dicts of ``document`` (a JSON value, without cycles)."""
    out: set[int] = set()
    todo = [document]
    while todo:
        value = todo.pop()
        if isinstance(value, dict):
            out.add(id(value))
            todo.extend(value.values())
        elif isinstance(value, list):
            todo.extend(value)
    return out


class Converter:
    """Turns one JSON Schema document into GBNF rules (one instance per call)."""

    def __init__(self, root: Any, options: SchemaOptions) -> None:
        self.root = root
        self.opts = options
        self.table = RuleTable()
        self.llama = options.whitespace is Whitespace.LLAMA
        self.chars = JsonChars(self.table, llama=self.llama,
                               lone_surrogates=options.lone_surrogates)
        self.memo: dict[str, str | None] = {}
        # the DFA rule of each ambiguous pattern with its length bounds ("": not ambiguous)
        self.pattern_rules: dict[tuple[str, int, int | None], str] = {}
        # the canonical text of the document's own dicts, which the conversion never
        # changes, by id: a subschema reached again (a $ref used in many places) is not
        # serialized again (the dicts the conversion builds are, every time)
        self.document_dicts = _dict_ids(root)
        self.canon_texts: dict[int, str] = {}
        # a $ref target's rule, or None once the target is known to accept nothing
        self.ref_rules: dict[str, str | None] = {}
        self.active: set[str] = set()
        self.pending: dict[str, str] = {}
        self.notes: list[str] = []
        # the whitespace rule of each position kind, and the separators ``,`` and ``:``
        # (by those characters) with theirs; the rule of any string: the table returns
        # the name it gave a body the first time, so each is made once per conversion
        self.spacing: dict[str, str] = {}
        self.string_name: str | None = None
        dialect = root.get("$schema", "") if isinstance(root, dict) else ""
        self.legacy_ref = isinstance(dialect, str) and any(
            f"draft-0{n}" in dialect for n in (3, 4, 6, 7))
        self.resolver = Resolver(root if isinstance(root, dict) else {},
                                 scoped=not self.legacy_ref)

    # ---------------------------------------------------------------- reporting
    def unsupported(self, message: str, keyword: str, pointer: str,
                    limit: str | None = None) -> None:
        """Refuse (strict) or warn that ``keyword`` is not enforced (past the
        ``SchemaLimits`` field ``limit``, if given: the message says how to raise it)."""
        hint = limit_hint(self.opts.limits, limit) + "; " if limit else ""
        if self.opts.strict:
            raise SchemaError(f"{message} ({hint}strict=False ignores it with a warning)",
                              keyword=keyword, pointer=pointer, limit=limit)
        if limit:
            message += f" ({limit_hint(self.opts.limits, limit)})"
        note = f"{message} [{keyword}] at {pointer or '/'}"
        self.notes.append(note)
        warnings.warn(note, SchemaWarning, stacklevel=4)

    def count(self, schema: dict[str, Any], key: str, ptr: str) -> int | None:
        """The count keyword ``key`` (``minLength``, ``maxItems``...) as
        :func:`count_keyword` reads it; ``None`` where it is absent, or refused (strict)
        or ignored with a warning for having more digits than
        ``SchemaLimits.max_number_digits`` (a count is written as nested blocks of a
        thousand items, one level per three digits)."""
        value = count_keyword(schema, key, ptr)
        if value is not None and _too_long(Decimal(value), self.opts.limits.max_number_digits):
            self.unsupported(f"{key} has {len(str(value))} digits, too many to be written "
                             "as a grammar", key, ptr, "max_number_digits")
            return None
        return value

    def restricted(self, message: str, keyword: str, pointer: str) -> None:
        """Warn that the grammar accepts fewer instances than the schema allows."""
        note = f"{message} [{keyword}] at {pointer or '/'}"
        self.notes.append(note)
        warnings.warn(note, SchemaWarning, stacklevel=4)

    # ---------------------------------------------------------------- whitespace
    def ws(self, kind: str) -> str:
        """The whitespace rule at a position kind, or '' where none is allowed."""
        found = self.spacing.get(kind)
        if found is None:
            found = self.spacing[kind] = self._ws(kind)
        return found

    def _ws(self, kind: str) -> str:
        w = self.opts.whitespace
        if w is Whitespace.COMPACT:
            return ""
        # "open" is llama.cpp's place after "{"/"["; "first" (before the first member)
        # is ours, so that an empty container has one run of whitespace, not two
        if (kind == "open") != (w is Whitespace.LLAMA) and kind in ("open", "first"):
            return ""
        if w is Whitespace.LLAMA:
            if kind in ("outer", "comma_before"):
                return ""
            return self.table.add("space", '| " " | "\\n"{1,2} [ \\t]{0,20}')
        n = self.opts.max_whitespace
        if w is Whitespace.PRETTY:
            tail = "[ \\t]*" if n is None else f"[ \\t]{{0,{n}}}"
            return self.table.add("ws", f'| " " | "\\n" {tail}')
        body = "[ \\t\\n\\r]*" if n is None else f"[ \\t\\n\\r]{{0,{n}}}"
        return self.table.add("ws", body)

    def comma(self) -> str:
        found = self.spacing.get(",")
        if found is None:
            found = self.spacing[","] = seq(self.ws("comma_before"), '","',
                                            self.ws("comma_after"))
        return found

    def colon(self) -> str:
        found = self.spacing.get(":")
        if found is None:
            found = self.spacing[":"] = seq(self.ws("colon_before"), '":"',
                                            self.ws("colon_after"))
        return found

    # ---------------------------------------------------------------- shared rules
    def string_rule(self) -> str:
        if self.string_name is None:
            self.string_name = self.table.add(
                "string", seq('"\\""', f"{self.chars.char()}*", '"\\""'))
        return self.string_name

    def integral(self) -> str:
        d = self.opts.max_integer_digits
        rest = "[0-9]*" if d is None else f"[0-9]{{0,{d - 1}}}"
        return self.table.add("integral-part", f"[0] | [1-9] {rest}")

    def integer_rule(self) -> str:
        return self.table.add("integer", seq('"-"?', self.integral()))

    def number_rule(self) -> str:
        f = self.opts.max_fraction_digits
        frac = "[0-9]+" if f is None else f"[0-9]{{1,{f}}}"
        exp = self.integral() if self.llama else "[0-9]+"
        body = seq('"-"?', self.integral(), f'("." {frac})?', f"([eE] [-+]? {exp})?")
        return self.table.add("number", body)

    def value_rule(self) -> str:
        if "value" in self.table.rules:
            return "value"
        self.table.fresh("value")
        obj = self.table.fresh("object")
        arr = self.table.fresh("array")
        s = self.string_rule()
        v = "value"
        self.table.define("value", alt([obj, arr, s, self.number_rule(), '"true" | "false"',
                                        '"null"']))
        first = self.ws("first")
        # the first member (item) and the later ones read at one place, the next ones
        # called last (no frame): one state after `{` (`[`) and after `,`
        # (docs/schema.md, "Objects in any order")
        for rule, element, name in ((obj, seq(s, self.colon(), v), "object-members"),
                                    (arr, v, "array-items")):
            elements = self.table.fresh(name)
            more = self.table.add(f"{name}-more", alt([seq(self.comma(), elements), '""']))
            self.table.define(elements, seq(element, more))
            bracket = '"{"' if rule == obj else '"["'
            self.table.define(rule, seq(bracket, self.ws("open"), f"({seq(first, elements)})?",
                                        self.ws("close"), '"}"' if rule == obj else '"]"'))
        return v

    # ---------------------------------------------------------------- entry
    def convert(self) -> str:
        self.table.fresh("root")
        expr = self.visit(self.root, "", "root")
        if expr is None:
            raise SchemaError("the schema accepts no instance at all (contradictory keywords?)",
                              pointer="")
        outer = self.ws("outer")
        self.table.define("root", seq(outer, group(expr) if outer else expr, outer))
        return self.table.text()

    def named(self, hint: str, expr: str | None) -> str | None:
        """``expr`` as a rule named after ``hint`` (atoms are returned as they are)."""
        if expr is None:
            return None
        if group(expr) == expr and " " not in expr:
            return expr
        return self.table.add(hint, expr)

    def visit(self, schema: Any, ptr: str, hint: str) -> str | None:
        """A GBNF expression for the instances of ``schema`` (``None``: none)."""
        if schema is True:
            return self.value_rule()
        if schema is False:
            return None
        if not isinstance(schema, dict):
            raise SchemaError("a schema must be an object or a boolean", pointer=ptr)
        try:
            if id(schema) in self.document_dicts:
                key = self.canon_texts.get(id(schema)) or \
                    self.canon_texts.setdefault(id(schema), canonical(schema))
            else:
                key = canonical(schema)
        except RecursionError:  # the subschemas around this one and the JSON inside it
            raise SchemaError("schema nests too deeply to convert here: the subschemas "
                              "around this one and the JSON values inside it nest too "
                              "many levels in all", pointer=ptr) from None
        if self.resolver.scoped and self.resolver.nested_ids:
            # the same text may hold a $ref that resolves elsewhere under another $id
            key = self.resolver.base_at(ptr) + "\n" + key
        if key in self.memo:
            return self.memo[key]
        if key in self.active:  # recursion through an inlined $ref: go through a rule
            if key not in self.pending:
                self.pending[key] = self.table.fresh(hint + "-rec")
            return self.pending[key]
        if len(self.active) > 200:
            if self.ref_rules:  # a $ref was followed: it may be what recurses
                raise SchemaError("schema nests too deeply (a recursive $ref combined with "
                                  "other keywords?)", keyword="$ref", pointer=ptr)
            raise SchemaError("schema nests too deeply: more than 200 subschemas one "
                              "inside another, the most the converter follows", pointer=ptr)
        self.active.add(key)
        before = self.table.size
        try:
            result = self._visit(schema, ptr, hint)
        finally:
            self.active.discard(key)
        if self.table.size > self.opts.limits.max_grammar_chars:
            self._too_large(schema, ptr, self.table.size - before)
        if key in self.pending:
            name = self.pending.pop(key)
            self.table.define(name, result if result is not None else "[^\\x00-\\U0010FFFF]")
            if result is not None:  # else None for the caller, as in ref (below)
                result = name
        elif result is not None and hint != "root":
            result = self.named(hint, result)
        self.memo[key] = result
        return result

    def ref(self, ref: Any, ptr: str) -> str | None:
        target, tptr = self.resolver.resolve(ref, ptr)
        chain = {tptr}
        while isinstance(target, dict) and set(target) - ANNOTATIONS == {"$ref"}:
            target, tptr = self.resolver.resolve(target["$ref"], tptr)
            if tptr in chain:
                raise SchemaError("$ref cycle that never reaches a schema", keyword="$ref",
                                  pointer=ptr)
            chain.add(tptr)
        if tptr in self.ref_rules:
            return self.ref_rules[tptr]
        last = tptr.rsplit("/", 1)[-1] or "root-schema"
        name = self.table.fresh(last)
        self.ref_rules[tptr] = name
        expr = self.visit(target, tptr, name + "-body")
        self.table.define(name, expr if expr is not None else "[^\\x00-\\U0010FFFF]")
        if expr is None:
            # a target that accepts nothing is None for every reference to it (a property
            # whose schema is a $ref to "not {}" is left out, as with the schema written
            # in place), so that no prefix such as '{"a":' leads into an empty rule; the
            # rule stays for references from inside the target
            self.ref_rules[tptr] = None
            return None
        return name

    def resolve(self, ref: Any, ptr: str) -> Any:
        return self.resolver.resolve(ref, ptr)[0]

    def merge(self, parts: list[Any], ptr: str,
              pointers: list[str] | None = None) -> dict[str, Any] | bool:
        """``allOf: parts`` as one schema, each part's own keywords settled first."""
        return merge_all(parts, lambda r: self.resolve(r, ptr), ptr, pointers, self.prepare)

    def prepare(self, schema: Any, ptr: str) -> Any:
        """Rewrite the keywords whose meaning depends on the schema object they sit in
        (``if``/``then``/``else``, dependencies, ``unevaluated*``) into plain ones."""
        if not isinstance(schema, dict):
            return schema
        check_shapes(schema, ptr)
        return self._prepare(schema, ptr)

    def _prepare(self, schema: dict[str, Any], ptr: str) -> Any:
        """``prepare`` of a schema whose shapes are checked."""
        if self.legacy_ref and "$ref" in schema:
            return schema  # before 2019-09, $ref hides its siblings
        marks = {k: schema[k] for k in UNEVALUATED if k in schema}
        plain = {k: v for k, v in schema.items() if k not in UNEVALUATED}
        if any(k in plain for k in ("if", "then", "else")):
            plain = self.if_then_else(plain, ptr)
        if any(k in plain for k in ("dependencies", "dependentRequired", "dependentSchemas")):
            plain = self.dependencies(plain, ptr)
        if marks:  # settled here, over this object's own in-place applicators
            return lower_unevaluated(self, {**plain, **marks}, ptr)
        return plain if len(plain) != len(schema) or plain != schema else schema

    def if_then_else(self, schema: dict[str, Any], ptr: str) -> dict[str, Any]:
        """``if I then T else E`` as ``anyOf: [I and T, (not I) and E]`` (exact: a failed
        ``if`` gives no annotations, and ``not`` gives none either)."""
        rest = {k: v for k, v in schema.items() if k not in ("if", "then", "else")}
        if "if" not in schema or ("then" not in schema and "else" not in schema):
            return rest
        cond = schema["if"]
        try:
            negation = negate(cond, lambda r: self.resolve(r, ptr),
                              self.opts.limits.max_negation_chars)
        except Unnegatable as e:
            self.unsupported(f"if: its negation (for else) is not supported: {e}", "if", ptr,
                             e.limit)
            negation = True
        choice = {"anyOf": [{"allOf": [cond, schema.get("then", True)]},
                            {"allOf": [negation, schema.get("else", True)]}]}
        return {"allOf": [rest, choice]} if rest else choice

    def _too_large(self, schema: dict[str, Any], ptr: str, grown: int) -> NoReturn:
        """Refuse the grammar past ``max_grammar_chars`` at the subschema ``ptr`` that
        took it there (``grown``: the characters of its rules): a composition
        distributed over many branches when one is in or around it, else the subschema's
        own rules (a property name of 20,000 characters: a rule per character for the
        keys other than it)."""
        limits = self.opts.limits
        keyword = next((k for k in _COMPOSITIONS if k in schema), None) or next(
            (t for t in reversed(ptr.split("/")) if t in _COMPOSITIONS), None)
        guess = "sibling keywords distributed into many branches?" if keyword else \
            f"this subschema's own rules: {grown:,} characters"
        raise SchemaError(f"the grammar would exceed {limits.max_grammar_chars:,} characters "
                          f"({guess}; {limit_hint(limits, 'max_grammar_chars')})",
                          keyword=keyword, pointer=ptr, limit="max_grammar_chars")

    def _visit(self, schema: dict[str, Any], ptr: str, hint: str) -> str | None:
        check_shapes(schema, ptr)
        for kw in _ALWAYS_UNSUPPORTED:
            if kw in schema:
                self.unsupported(f"keyword {kw} is not supported", kw, ptr)
        if ("enum" in schema or "const" in schema) and not (
                self.legacy_ref and "$ref" in schema):
            decided = self.decided_enum(schema, ptr)
            if decided is not None:
                return decided or None
        prepared = self._prepare(schema, ptr)
        if prepared is not schema:
            return self.visit(prepared, ptr, hint)
        if "$ref" in schema:
            rest = {k: v for k, v in schema.items() if k not in ANNOTATIONS and k != "$ref"}
            if not rest or self.legacy_ref:  # before 2019-09, $ref hides its siblings
                return self.ref(schema["$ref"], ptr + "/$ref")
            schema = {"allOf": [{"$ref": schema["$ref"]}, rest]}
        if "allOf" in schema:
            if not isinstance(schema["allOf"], list):
                raise SchemaError("allOf must be an array", keyword="allOf", pointer=ptr)
            rest = {k: v for k, v in schema.items() if k != "allOf"}
            where = [f"{ptr}/allOf/{i}" for i in range(len(schema["allOf"]))] + [ptr]
            merged = self.merge([*schema["allOf"], rest], ptr, where)
            return self.visit(merged, ptr, hint)
        for comb in ("anyOf", "oneOf"):
            if comb in schema:
                return self.any_of(schema, comb, ptr, hint)
        for kw in schema.get(UNSUPPORTED_MERGE, []):
            self.unsupported(f"allOf parts with different {kw} cannot be combined", kw, ptr)
        if "not" in schema:
            negated = self.apply_not(schema, ptr)
            if negated is False:
                return None
            return self.visit(negated, ptr, hint)
        if "enum" in schema or "const" in schema:
            return self.enum(schema, ptr)
        return self.typed(schema, ptr, hint)

    def decided_enum(self, schema: dict[str, Any], ptr: str) -> str | None:
        """The ``enum``/``const`` values that satisfy every sibling keyword, as a grammar
        ('' when none does), or None when some value cannot be checked here."""
        values = list(schema["enum"]) if "enum" in schema else []
        if "const" in schema:
            values = [schema["const"]] if "enum" not in schema else [
                v for v in values if canonical(v) == canonical(schema["const"])]
        rest = {k: v for k, v in schema.items() if k not in ("enum", "const")}
        kept = []
        for v in values:
            ok = check_value(v, rest, lambda r: self.resolve(r, ptr), self.legacy_ref)
            if ok is None:
                return None
            if ok:
                kept.append(v)
        return alt(render_value(self, v, ptr=ptr) for v in kept) if kept else ""

    def dependencies(self, schema: dict[str, Any], ptr: str) -> dict[str, Any]:
        """``dependentRequired``/``dependentSchemas`` (and draft-7 ``dependencies``) as
        ``allOf`` of "name absent, or name present and the dependency holds"."""
        parts: list[Any] = []
        rest = dict(schema)
        for kw in ("dependencies", "dependentRequired", "dependentSchemas"):
            deps = rest.pop(kw, {})
            if not isinstance(deps, dict):
                raise SchemaError(f"{kw} must be an object", keyword=kw, pointer=ptr)
            for name, dep in deps.items():
                # (only objects can have the name: the dependency never applies to others,
                # nor gives them annotations)
                absent = {"properties": {name: False}}
                if isinstance(dep, list):
                    present: Any = {"type": "object", "required": [name, *dep]}
                else:
                    present = {"allOf": [{"type": "object", "required": [name]}, dep]}
                parts.append({"anyOf": [absent, present]})
        return {"allOf": [rest, *parts]} if parts else rest

    def any_of(self, schema: dict[str, Any], comb: str, ptr: str, hint: str) -> str | None:
        branches = schema[comb]
        if not isinstance(branches, list) or not branches:
            raise SchemaError(f"{comb} must be a non-empty array", keyword=comb, pointer=ptr)
        rest = {k: v for k, v in schema.items() if k != comb}
        if comb == "oneOf":
            branches = self.one_of_branches(branches, rest, ptr)
        # a long list written out costs what it is written with; the multiplication of
        # lists by their siblings is what is bounded
        # (the work is about 0.5 ms per alternative: 7 overlapping oneOf branches, 5,103
        # alternatives, 3.6 s, a 1.2M-character grammar; MaskBench dev: at most 48 in a
        # schema that converts)
        limits = self.opts.limits
        limit = max(limits.max_alternatives, 4 * listed({**rest, comb: branches}))
        spread = alternatives(rest, limit) * min(
            sum(alternatives(b, limit) for b in branches), limit + 1)
        if spread > limit:
            raise SchemaError(f"{comb} would spread into more than {limit:,} alternatives "
                              "(sibling keywords and nested anyOf/oneOf distributed into "
                              f"every branch; {limit_hint(limits, 'max_alternatives')})",
                              keyword=comb, pointer=ptr, limit="max_alternatives")
        options = []
        for i, branch in enumerate(branches):
            sub = branch if not rest else {"allOf": [rest, branch]}
            e = self.visit(sub, f"{ptr}/{comb}/{i}", f"{hint}-{i}")
            if e is not None:
                options.append(e)
        return alt(options) if options else None

    def one_of_branches(self, branches: list[Any], rest: dict[str, Any], ptr: str) -> list[Any]:
        """``oneOf`` branches as disjoint ``anyOf`` branches (or said to overlap)."""
        exclusive = exclusive_required_branches(branches)
        if exclusive is not None:
            return exclusive

        with_rest = [self.safe_merge([rest, b], ptr) for b in branches]
        flat = [self.safe_merge([b], ptr) for b in branches]
        overlapping: list[list[int]] = [[] for _ in branches]
        for i in range(len(branches)):
            for j in range(i + 1, len(branches)):
                if not pair_disjoint(with_rest[i], with_rest[j], lambda s: self.merge([s], ptr)):
                    overlapping[i].append(j)
                    overlapping[j].append(i)
        if not any(overlapping):
            return branches
        # branch i, and none of the branches it may overlap with
        out = []
        for i, b in enumerate(branches):
            if not overlapping[i]:
                out.append(b)
                continue
            others = [flat[j] for j in overlapping[i]]
            try:
                negation = negate({"anyOf": others}, lambda r: self.resolve(r, ptr),
                                  self.opts.limits.max_negation_chars)
            except Unnegatable as e:
                finer = self.finer_one_of(branches, with_rest, ptr)
                if finer is not None:
                    return finer
                self.unsupported(f"oneOf branches may overlap and the overlap cannot be "
                                 f"excluded ({e}); they are enforced as anyOf (an instance "
                                 "matching several branches is accepted)", "oneOf", ptr,
                                 e.limit)
                return branches
            if negation is not False:
                out.append({"allOf": [b, negation]} if negation is not True else b)
        if len(json.dumps(out)) > self.opts.limits.max_oneof_chars:
            finer = self.finer_one_of(branches, with_rest, ptr)
            if finer is not None:
                return finer
            self.unsupported(f"oneOf with overlapping branches: excluding the overlaps needs "
                             f"more than {self.opts.limits.max_oneof_chars} characters of "
                             "schema", "oneOf", ptr, "max_oneof_chars")
            return branches
        return out

    def finer_one_of(self, branches: list[Any], with_rest: list[Any],
                     ptr: str) -> list[Any] | None:
        """The ``oneOf`` branches made disjoint by the finer analysis of ``_oneof``
        (docs/schema.md, "oneOf"), or None when some overlap is beyond it.  Tried only
        where the negation of the overlapping branches cannot be written, so the oneOfs
        that negation settles keep their grammars.

        A pair is disjoint by :func:`finer_disjoint`; otherwise branch i keeps the
        objects that fail branch j, which :func:`exclusion` writes as names present or
        absent; branch i is then "i and one of the minimal sets of such names that meets
        every other branch's set" (:func:`hitting_sets`)."""
        def flatten(s: Any) -> Any:
            return self.merge([s], ptr)

        def resolve(r: str) -> Any:
            return self.resolve(r, ptr)

        limits = self.opts.limits
        out: list[Any] = []
        for i, b in enumerate(branches):
            clauses = []
            for j in range(len(branches)):
                if j == i or finer_disjoint(with_rest[i], with_rest[j], flatten, resolve,
                                            limits):
                    continue
                clause = exclusion(with_rest[i], with_rest[j], flatten, resolve, limits)
                if clause is None:
                    return None
                clauses.append(clause)
            if not clauses:
                out.append(b)
                continue
            sets = hitting_sets(clauses, limits.max_alternatives)
            if sets is None:
                return None
            if sets:  # (none: every instance of branch i satisfies another branch)
                out.append({"allOf": [b, {"anyOf": [literals_schema(h) for h in sets]}]})
        if len(json.dumps(out)) > limits.max_oneof_chars:
            return None
        return out

    def safe_merge(self, parts: list[Any], ptr: str) -> Any:
        """``merge`` for a disjointness test (a part that cannot be merged: ``{}``)."""
        try:
            return self.merge(parts, ptr)
        except SchemaError:
            return {}

    # ---------------------------------------------------------------- not / enum
    def apply_not(self, schema: dict[str, Any], ptr: str) -> Any:
        """The schema without ``not``: its siblings and the pushed-down negation."""
        rest = {k: v for k, v in schema.items() if k != "not"}
        try:
            negation = negate(schema["not"], lambda r: self.resolve(r, ptr),
                              self.opts.limits.max_negation_chars)
        except Unnegatable as e:
            self.unsupported(f"this form of not is not supported: {e}", "not", ptr + "/not",
                             e.limit)
            return rest
        if negation is False:
            return False
        if negation is True:
            return rest
        return {"allOf": [rest, negation]} if rest else negation

    def enum(self, schema: dict[str, Any], ptr: str) -> str | None:
        values = list(schema["enum"]) if "enum" in schema else []
        if "const" in schema:
            values = [schema["const"]] if "enum" not in schema else [
                v for v in values if canonical(v) == canonical(schema["const"])]
        if "enum" in schema and not isinstance(schema["enum"], list):
            raise SchemaError("enum must be an array", keyword="enum", pointer=ptr)
        rest = {k: v for k, v in schema.items() if k not in ("enum", "const")}
        kept = []
        for v in values:
            ok = check_value(v, rest)
            if ok is None:
                self.unsupported("enum/const values could not be checked against the sibling "
                                 "keywords; all are kept", "enum", ptr)
                ok = True
            if ok:
                kept.append(v)
        if not kept:
            return None
        return alt(render_value(self, v, ptr=ptr) for v in kept)

    # ---------------------------------------------------------------- types
    def types_of(self, schema: dict[str, Any], ptr: str) -> list[str]:
        t = schema.get("type")
        if t is None:
            if self.opts.untyped_means_object:
                for kws, name in ((_OBJECT_KEYS, "object"), (_ARRAY_KEYS, "array"),
                                  (_STRING_KEYS, "string")):
                    if any(k in schema for k in kws):
                        return [name]
            return list(_TYPES)
        types = [t] if isinstance(t, str) else t
        if not isinstance(types, list) or not all(isinstance(x, str) for x in types):
            raise SchemaError("type must be a string or an array of strings", keyword="type",
                              pointer=ptr)
        for x in types:
            if x not in _TYPES:
                raise SchemaError(f"unknown type {x!r}", keyword="type", pointer=ptr)
        if "number" in types and "integer" in types:
            types = [x for x in types if x != "integer"]
        return list(dict.fromkeys(types))

    def typed(self, schema: dict[str, Any], ptr: str, hint: str) -> str | None:
        options: list[str] = []
        for t in self.types_of(schema, ptr):
            e: str | None
            if t == "null":
                e = '"null"'
            elif t == "boolean":
                e = '"true" | "false"'
            elif t == "string":
                e = self.string(schema, ptr)
            elif t == "integer":
                e = None if schema.get(FRACTION) else self.integer(schema, ptr)
            elif t == "number":
                e = self.number(schema, ptr)
            elif t == "object":
                e = object_expr(self, schema, ptr, hint)
            else:
                e = array_expr(self, schema, ptr, hint)
            if e is not None:
                options.append(e)
        return alt(options) if options else None

    # ---------------------------------------------------------------- strings
    def string(self, schema: dict[str, Any], ptr: str) -> str | None:
        patterns: list[tuple[str, str]] = []
        specs = [{k: schema[k]} for k in ("pattern", "format") if k in schema]
        specs += schema.get(PATTERNS_KEY, [])
        for spec in specs:
            if "pattern" in spec:
                if not isinstance(spec["pattern"], str):
                    raise SchemaError("pattern must be a string", keyword="pattern", pointer=ptr)
                patterns.append(("pattern", spec["pattern"]))
            else:
                fmt = spec["format"]
                if not isinstance(fmt, str):
                    raise SchemaError("format must be a string", keyword="format", pointer=ptr)
                if fmt in FORMAT_PATTERNS:
                    patterns.append(("format", FORMAT_PATTERNS[fmt]))
                elif fmt in SPEC_FORMATS:
                    self.unsupported(f"format {fmt!r} is not supported", "format", ptr)
        for kw, pattern in [*patterns, *(("not", p) for p in schema.get(NOT_PATTERNS, []))]:
            if kw == "format":
                continue  # gbnfkit's own pattern (tests/schema/test_pattern_dfa.py reads each)
            if not isinstance(pattern, str):
                raise SchemaError("pattern must be a string", keyword=kw, pointer=ptr)
            try:
                check_pattern(pattern)
            except re.error as e:
                raise SchemaError(f"invalid regular expression {pattern!r}: {e}", keyword=kw,
                                  pointer=ptr) from None
        lo = self.count(schema, "minLength", ptr) or 0
        hi = self.count(schema, "maxLength", ptr)
        if hi is not None and lo > hi:
            return None
        not_patterns = list(schema.get(NOT_PATTERNS, []))
        not_strings = list(schema.get(NOT_STRINGS, []))
        if not_strings and not patterns and not not_patterns and lo == 0 and hi is None:
            return seq('"\\""', self.chars.not_in(not_strings), '"\\""')
        if len(patterns) <= 1 and not not_patterns and not not_strings:
            simple = self.simple_string(patterns[0] if patterns else None, lo, hi, ptr)
            if simple is None or isinstance(simple, str):
                return simple
        return self.string_automaton(patterns, not_patterns, not_strings, lo, hi, ptr)

    def parsed(self, kw: str, regex: str) -> list[Branch]:
        """``parse_regex(regex)``; a format's own pattern (``kw`` ``"format"``) is parsed
        once per process (:func:`gbnfkit.schema._formats.format_branches`)."""
        if kw != "format":
            return parse_regex(regex)
        return list(format_branches(regex))

    def simple_string(self, pattern: tuple[str, str] | None, lo: int, hi: int | None,
                      ptr: str) -> str | None | bool:
        """One pattern, its length carried by one repetition (or no pattern); False: the
        automaton is needed."""
        if pattern is None:
            if lo == 0 and hi is None:
                return self.string_rule()
            return seq('"\\""', repeat(self.chars.char(), lo, hi), '"\\""')
        kw, regex = pattern
        try:
            branches = self.parsed(kw, regex)
        except RegexUnsupported as e:
            self.unsupported(f"pattern {regex!r}: {e}", kw, ptr)
            return self.string_rule()
        if lo > 0 or hi is not None:
            # alternatives split by length copy the pattern: as many characters of
            # them as the product with a counter may have states
            narrowed = limit_length(branches, lo, hi,
                                    self.opts.limits.max_product_states // max(len(regex), 1))
            if narrowed is None:
                return False
            if not narrowed:
                return None
            branches = narrowed
        # no format pattern is ambiguous (tests/schema/test_pattern_dfa.py): not asked
        rule = "" if kw == "format" else self.pattern_rule(branches, (regex, lo, hi))
        if rule == "-":  # the DFA accepts nothing
            return None
        if rule:
            return seq('"\\""', rule, '"\\""')
        return seq('"\\""', regex_expr(branches, self.chars.of), '"\\""')

    def pattern_rule(self, branches: list[Branch],
                     key: tuple[str, int, int | None] | None) -> str:
        """The DFA rule of an ambiguous pattern (string values and ``patternProperties``
        keys): one parse at every point (docs/schema.md, "Patterns"); "" when the
        pattern is written as its parse, "-" when it accepts nothing.  Emitted once per
        ``key`` (pattern and length bounds; None: not kept)."""
        rule = None if key is None else self.pattern_rules.get(key)
        if rule is None:
            dfa = pattern_dfa(branches, self.opts.limits)
            rule = "" if dfa is None else emit_dfa(dfa, self.table, self.chars.of,
                                                   "string-dfa") or "-"
            if key is not None:
                self.pattern_rules[key] = rule
        return rule

    def string_automaton(self, patterns: list[tuple[str, str]], not_patterns: list[str],
                         not_strings: list[str], lo: int, hi: int | None,
                         ptr: str) -> str | None:
        """Strings matching every pattern, none of ``not_patterns`` and ``not_strings``,
        with lo..hi characters: the product of their automata."""
        dfas = []
        try:
            for kw, regex in patterns:
                try:
                    dfas.append(dfa_of(self.parsed(kw, regex), self.opts.limits,
                                       "max_format_dfa_states" if kw == "format"
                                       else "max_dfa_states"))
                except RegexUnsupported as e:
                    self.unsupported(f"pattern {regex!r}: {e}", kw, ptr)
                    return self.string_rule()
            positive = len(dfas)
            if not_patterns or not_strings:
                banned: list[Branch] = []
                for regex in not_patterns:
                    try:
                        banned += parse_regex(regex)
                    except RegexUnsupported as e:
                        self.unsupported(f"not {{pattern: {regex!r}}}: {e}", "not", ptr)
                        return self.string_rule()
                banned += [Branch(Cat(tuple(Chars(((ord(c), ord(c)),)) for c in w)), True,
                                  True) for w in not_strings]
                dfas.append(dfa_of(banned, self.opts.limits))
            negative = len(dfas) > positive
            limited = lo > 0 or hi is not None

            def accept(verdicts: tuple[bool, ...]) -> bool:
                return all(verdicts[:positive]) and not (negative and verdicts[positive]) \
                    and (not limited or verdicts[-1])

            dfa = product([minimal(d) for d in dfas], accept, self.opts.limits,
                          (lo, hi, positive) if limited else None)
        except TooBig as e:
            keyword = "not" if not_patterns or not_strings else (
                "minLength" if lo and hi is None else "maxLength") if (
                lo or hi is not None) else patterns[1][0]
            self.unsupported(f"this combination of patterns, not and length limits needs "
                             f"more than {self.opts.limits.max_dfa_states} automaton states "
                             f"per pattern or {self.opts.limits.max_product_states} in their "
                             "product", keyword, ptr, e.limit)
            return self.string_rule()
        body = emit_dfa(dfa, self.table, self.chars.of, "string-dfa")
        return None if body is None else seq('"\\""', body, '"\\""')

    # ---------------------------------------------------------------- numbers
    def bounds(self, schema: dict[str, Any], ptr: str) -> tuple[
            Decimal | None, bool, Decimal | None, bool]:
        lo: Decimal | None = None
        hi: Decimal | None = None
        lo_strict = hi_strict = False
        for key in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"):
            if key not in schema:
                continue
            v = schema[key]
            if isinstance(v, bool):  # draft 4: a flag on minimum/maximum
                continue
            if not isinstance(v, (int, float)) or (isinstance(v, float) and not math.isfinite(v)):
                raise SchemaError(f"{key} must be a number", keyword=key, pointer=ptr)
            d = Decimal(str(v))
            if _too_long(d, self.opts.limits.max_number_digits):
                self.unsupported(f"{key} {v} has too many digits to be written as a grammar",
                                 key, ptr, "max_number_digits")
                continue
            strict = key.startswith("exclusive") or schema.get(
                "exclusive" + key[0].upper() + key[1:]) is True
            if "inimum" in key:
                if lo is None or d > lo or (d == lo and strict):
                    lo, lo_strict = d, strict
            elif hi is None or d < hi or (d == hi and strict):
                hi, hi_strict = d, strict
        return lo, lo_strict, hi, hi_strict

    def multiple(self, schema: dict[str, Any], ptr: str) -> Decimal | None:
        """The ``multipleOf`` value, checked, or None."""
        if "multipleOf" not in schema:
            return None
        m = schema["multipleOf"]
        if not isinstance(m, (int, float)) or isinstance(m, bool) or m <= 0:
            raise SchemaError("multipleOf must be a positive number", keyword="multipleOf",
                              pointer=ptr)
        d = Decimal(str(m))
        if _too_long(d, self.opts.limits.max_number_digits):
            self.unsupported(f"multipleOf {m} has too many digits", "multipleOf", ptr,
                             "max_number_digits")
            return None
        return d

    def integer(self, schema: dict[str, Any], ptr: str) -> str | None:
        m = self.multiple(schema, ptr)
        lo, lo_s, hi, hi_s = self.bounds(schema, ptr)
        ilo = None if lo is None else (math.floor(lo) + 1 if lo_s else math.ceil(lo))
        ihi = None if hi is None else (math.ceil(hi) - 1 if hi_s else math.floor(hi))
        limits = self.opts.limits
        if m is not None and Decimal(1) % m != 0:
            listed_too_many = False
            if ilo is not None and ihi is not None:
                # few multiples between the bounds: listed (a multipleOf m, lcm with 1)
                first = math.ceil(Decimal(ilo) / m) * m
                count = 0 if first > ihi else int((Decimal(ihi) - first) // m) + 1
                if count <= limits.max_listed_multiples:
                    values = [first + k * m for k in range(count)]
                    ints = [int(v) for v in values if v == v.to_integral_value()]
                    return alt(literal(str(v)) for v in ints) if ints else None
                listed_too_many = True
            if m != m.to_integral_value() or lo is not None or hi is not None or \
                    m > limits.max_multiple_of:
                limit = "max_listed_multiples" if listed_too_many else "max_multiple_of" if (
                    m == m.to_integral_value() and lo is None and hi is None) else None
                self.unsupported(f"multipleOf {m} is enforced only on unbounded integers "
                                 f"(multiples up to {limits.max_multiple_of}) or between "
                                 f"bounds with at most {limits.max_listed_multiples} "
                                 "multiples", "multipleOf", ptr, limit)
            else:
                return self.integer_multiple(int(m))
        if lo is None and hi is None:
            return self.integer_rule()
        return int_range(ilo, ihi, self.opts.max_integer_digits)

    def integer_multiple(self, m: int) -> str:
        """Integers divisible by ``m``: one rule per remainder (a division automaton)."""
        names = [self.table.fresh(f"mod{m}-r{r}") for r in range(m)]
        for r in range(m):
            by_target: dict[int, list[int]] = {}
            for d in range(10):
                by_target.setdefault((10 * r + d) % m, []).append(d)
            options = ['""'] if r == 0 else []
            for t, digits in by_target.items():
                options.append(seq(char_class([(48 + d, 48 + d) for d in digits]), names[t]))
            self.table.define(names[r], alt(options))
        first: dict[int, list[int]] = {}
        for d in range(1, 10):
            first.setdefault(d % m, []).append(d)
        starts = [seq(char_class([(48 + d, 48 + d) for d in ds]), names[t])
                  for t, ds in first.items()]
        return seq('"-"?', f"({alt(['[0]', *starts])})")

    def decimal_places(self, m: Decimal) -> int | None:
        """k when ``m`` is 10**-k (multiples are the numbers with k decimals), else None."""
        exponent = m.normalize().as_tuple().exponent
        if isinstance(exponent, int) and exponent < 0 and m == Decimal(1).scaleb(exponent):
            return -exponent
        return None

    def number(self, schema: dict[str, Any], ptr: str) -> str | None:
        m = self.multiple(schema, ptr)
        lo, lo_s, hi, hi_s = self.bounds(schema, ptr)
        if schema.get(FRACTION):
            if m is not None or lo is not None or hi is not None:
                self.unsupported("not {type: integer} beside number bounds or multipleOf is "
                                 "not supported", "not", ptr)
            else:  # a fraction with a non-zero digit, no exponent (a restriction)
                return seq('"-"?', self.integral(), '"." [0-9]* [1-9] [0-9]*')
        if m is not None and m == m.to_integral_value():
            return self.integer(schema, ptr)
        if m is not None:
            k = self.decimal_places(m)
            if k is None or lo is not None or hi is not None:
                self.unsupported(f"multipleOf {m} on numbers is enforced only as 10**-k "
                                 "without bounds", "multipleOf", ptr)
            else:
                frac = f'("." [0-9]{{1,{k}}} "0"*)?'
                return seq('"-"?', self.integral(), frac)
        if lo is None and hi is None:
            return self.number_rule()
        if lo is not None and hi is not None and (lo > hi or (lo == hi and (lo_s or hi_s))):
            return None
        return decimal_interval(lo, hi, lo_s, hi_s)

    # ---------------------------------------------------------------- keys
    def key_literal(self, name: str) -> str:
        return literal(json_string(name))

    def child_hint(self, hint: str, token: str) -> str:
        return f"{'' if hint == 'root' else hint + '-'}{token}"

    def child_ptr(self, ptr: str, *tokens: str) -> str:
        return ptr + "".join("/" + pointer_token(t) for t in tokens)
