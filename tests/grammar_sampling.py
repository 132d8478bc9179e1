"""Random strings of a grammar, for property tests of the parsers grammars are built from
(``gbnfkit.peg``, ``gbnfkit.chat``)."""

from __future__ import annotations

import random

from gbnfkit.grammar import Alt, CharClass, GrammarIR, Literal, Repeat, RuleRef, Seq

__all__ = ["sample"]

_POOL = "xyzé</>\"\\ {}[],:0123456789.-+eEtrufalsn\nABCDFG"


def sample(ir: GrammarIR, rng: random.Random, max_depth: int = 12) -> str:
    """A random string of the grammar ``ir`` (bounded nesting)."""
    out: list[str] = []

    def has_ref(e: object) -> bool:
        if isinstance(e, RuleRef):
            return True
        if isinstance(e, Seq):
            return any(has_ref(i) for i in e.items)
        if isinstance(e, Alt):
            return any(has_ref(o) for o in e.options)
        if isinstance(e, Repeat):
            return has_ref(e.item)
        return False

    def go(e: object, depth: int) -> None:
        if isinstance(e, Literal):
            out.append(e.text)
        elif isinstance(e, CharClass):
            choices = [c for c in _POOL if e.contains(ord(c))]
            if not choices:
                choices = [chr(cp) for lo, _hi in e.ranges for cp in (lo,)] or ["?"]
            out.append(rng.choice(choices))
        elif isinstance(e, RuleRef):
            go(ir.rules[e.name], depth + 1)
        elif isinstance(e, Seq):
            for i in e.items:
                go(i, depth)
        elif isinstance(e, Alt):
            options = list(e.options)
            if depth > max_depth:
                options = [o for o in options if not has_ref(o)] or options[-1:]
            go(rng.choice(options), depth)
        elif isinstance(e, Repeat):
            extra = 0 if depth > max_depth else rng.randint(0, 3)
            count = e.min + extra if e.max is None else rng.randint(e.min, e.max)
            for _ in range(count):
                go(e.item, depth + 1)
        else:
            raise AssertionError(e)

    go(ir.rules[ir.root], 0)
    return "".join(out)
