"""Documented resource limits, with their defaults."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from gbnfkit._errors import ArgumentError

__all__ = ["Limits"]


@dataclass(frozen=True)
class Limits:
    """Bounds that keep a grammar from eating unbounded time or memory.

    Reaching one raises :class:`gbnfkit.LimitError` naming it; none of them ever
    changes what a grammar means.

    Attributes:
        max_stacks: live parse stacks in one state (ambiguous grammars). Default 20,000.
        max_repetition: the largest bound ``m`` or ``n`` in ``{m,n}``. Default 100,000.
        max_grammar_size: grammar elements after repetitions are expanded. Default 2,000,000.
        max_cached_states: parse states one grammar keeps in its transition cache
            before the cache is dropped and rebuilt. Default 100,000.
        max_expansion_size: stack frames (pending rule positions, summed over its stacks)
            that expanding the rule calls at one grammar position may give, and stacks
            that expansion may visit: a chain of ``n`` optional rules each calling the
            next, ``r_i ::= r_{i+1}? "x"``, expands to ``n`` stacks of up to ``n``
            frames. Default 2,000,000.
        max_stack_depth: frames in one parse stack of the token matcher (nesting: each
            ``[`` of JSON adds two, a parenthesis of the builtin ``c`` grammar six).  A
            byte state copies its stacks, so input nested ``d`` deep costs ``d**2``
            time and memory: 5,000 ``[`` took 4 s and 2.2 GB, 20,000 over 24 GB.
            Default 2,048 (about 1,000 levels of JSON, as many as Python's ``json``
            reads; about 85 MB for them).
        max_cached_frames: frames summed over the stacks of the states in the
            transition cache (``max_cached_states``), which is dropped and rebuilt past
            either: deep states are large. Default 20,000,000 (about 200 MB).
    """

    max_stacks: int = 20_000
    max_repetition: int = 100_000
    max_grammar_size: int = 2_000_000
    max_cached_states: int = 100_000
    max_expansion_size: int = 2_000_000
    max_stack_depth: int = 2_048
    max_cached_frames: int = 20_000_000

    def __post_init__(self) -> None:
        bad = not_positive_int(self)
        if bad is not None:
            raise ArgumentError(f"Limits.{bad[0]} must be a positive int, not {bad[1]!r:.40}")


def not_positive_int(limits: Any) -> tuple[str, object] | None:
    """The first field of the dataclass ``limits`` (``Limits``, ``SchemaLimits``) that is
    not a positive int (a bool is not one), with its value, or ``None``."""
    for f in fields(limits):
        value = getattr(limits, f.name)
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            return f.name, value
    return None


DEFAULT_LIMITS = Limits()
