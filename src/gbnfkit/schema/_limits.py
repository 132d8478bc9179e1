"""Resource limits of the JSON Schema converter (``SchemaOptions.limits``)."""

from __future__ import annotations

from dataclasses import dataclass

from gbnfkit._errors import SchemaError
from gbnfkit._limits import not_positive_int

__all__ = ["SchemaLimits", "limit_hint"]


@dataclass(frozen=True)
class SchemaLimits:
    """Bounds that keep the JSON Schema converter from building unbounded grammars or
    spending unbounded time; carried by :class:`gbnfkit.SchemaOptions` (``limits``).

    Past a limit the converter raises :class:`gbnfkit.SchemaError` whose ``limit`` names
    the field reached and whose message says how to raise it.  Where the limit only
    bounds how exactly one keyword is enforced ("refused" below), ``strict=False``
    ignores that keyword instead, with a :class:`gbnfkit.schema.SchemaWarning` (the
    grammar accepts more than the schema).  Every value must be a positive ``int``.

    Attributes:
        max_grammar_chars: characters of grammar rule bodies; the rewrites (overlapping
            ``oneOf``, dependencies and ``if`` as ``anyOf``, negations) copy sibling
            keywords into branches, and nested ones multiply. Default 2,000,000; past
            it: SchemaError, always.
        max_alternatives: alternatives an ``anyOf``/``oneOf`` spreads into once sibling
            keywords and nested ``anyOf`` lists are distributed into its branches
            (counted before the work; a list written out in full may have four per
            written branch). Default 4,096; past it: SchemaError, always.
        max_oneof_chars: characters of JSON schema of a ``oneOf`` rewritten to exclude
            the overlaps of its branches. Default 200,000; past it: ``oneOf`` refused.
        max_negation_chars: characters of JSON schema of a negation (``not``, the
            ``else`` of an ``if``, an overlapping ``oneOf`` branch, ``maxContains``).
            Default 50,000; past it: that keyword refused.
        max_subset_branches: overlapping ``anyOf`` branches beside
            ``unevaluatedProperties``/``unevaluatedItems`` (2**n - 1 subsets). Default
            4; past it: the ``unevaluated*`` keyword refused.
        max_listed_multiples: integers listed for ``multipleOf`` between two bounds.
            Default 1,000; past it: ``multipleOf`` refused.
        max_multiple_of: largest integer ``multipleOf`` enforced on integers without
            bounds (one grammar rule per remainder). Default 1,000; past it:
            ``multipleOf`` refused.
        max_unique_values: distinct item values under ``uniqueItems`` (one grammar
            state per subset: 2**n). Default 8; past it: ``uniqueItems`` refused.
        max_pattern_properties: ``patternProperties`` combined by the product of their
            automata (2**n kinds of keys). Default 6; past it: ``patternProperties``
            refused.
        max_nfa_states: automaton states built from one set of patterns (before
            determinization). Default 4,000; past it: the pattern refused.
        max_dfa_states: deterministic automaton states of one set of patterns.
            Default 400; past it: the pattern refused.
        max_product_states: states of a product of automata (several patterns,
            ``not`` of patterns or strings, a pattern with length limits, keys outside
            listed names and patterns); each becomes one grammar rule. Default 2,000;
            past it: the keyword refused.
        max_pattern_dfa_states: states of the minimal automaton of one pattern
            anchored at both ends that the converter writes as that automaton rather
            than as its parse (an ambiguous pattern, such as a URL's or a
            ``patternProperties`` language-tag key's, whose parses would otherwise
            multiply inside tokens: docs/schema.md, "Patterns"; its subset construction
            is bounded by ``max_dfa_states``). Default 160; past it: the pattern is
            written as its parse, as any other (not refused).
        max_counted_characters: the largest ``max_whitespace``, ``max_integer_digits``
            and ``max_fraction_digits`` option. Default 1,000; past it: SchemaError for
            the option.
        max_tracked_required: the largest ``max_required_any_order`` option (2**n
            grammar states). Default 16; past it: SchemaError for the option.
        max_number_digits: digits before or after the point of a number bound
            (``minimum``, ``maximum``, their exclusive forms) or ``multipleOf`` written
            out in fixed point (``1e300`` has 301); the grammar compares digit by digit.
            Also the digits of a count (``minLength``, ``maxLength``, ``minItems``,
            ``maxItems``, ``minContains``, ``maxContains``, ``minProperties``,
            ``maxProperties``), written as nested blocks of a thousand items.
            Default 40; past it: the keyword refused.
        max_format_dfa_states: deterministic automaton states of a ``format`` (one of
            the converter's own patterns, such as RFC 3986's ``URI``: 844, ``ipv6``:
            1,037) where it joins a product (beside a ``pattern``, length limits, in a
            ``oneOf`` disjointness test). Default 2,000; past it: as ``max_dfa_states``.
        max_counted_members: the largest ``minProperties`` or ``maxProperties``
            enforced on an object that allows properties it does not list (one grammar
            rule per count of members). Default 500; past it: that keyword refused.
    """

    max_grammar_chars: int = 2_000_000
    max_alternatives: int = 4096
    max_oneof_chars: int = 200_000
    max_negation_chars: int = 50_000
    max_subset_branches: int = 4
    max_listed_multiples: int = 1000
    max_multiple_of: int = 1000
    max_unique_values: int = 8
    max_pattern_properties: int = 6
    max_nfa_states: int = 4000
    max_dfa_states: int = 400
    max_product_states: int = 2000
    max_pattern_dfa_states: int = 160
    max_counted_characters: int = 1000
    max_tracked_required: int = 16
    max_number_digits: int = 40
    max_format_dfa_states: int = 2000
    max_counted_members: int = 500

    def __post_init__(self) -> None:
        bad = not_positive_int(self)
        if bad is not None:
            raise SchemaError(f"limit {bad[0]} must be a positive int, not {bad[1]!r:.40}")


def limit_hint(limits: SchemaLimits, name: str) -> str:
    """What a message past the limit ``name`` says: its value and how to raise it."""
    value: int = getattr(limits, name)
    return (f"limit {name}={value:,}: raise it with "
            f"SchemaOptions(limits=SchemaLimits({name}=...))")
