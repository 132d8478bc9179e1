"""Random strings of a grammar, for property tests of the parsers grammars are built from
(``gbnfkit.peg``, ``gbnfkit.chat``), and of what a converted grammar accepts (``walk``)."""

from __future__ import annotations

import random

from gbnfkit import CharExcludeRule, CharRule, EndRule, Grammar
from gbnfkit.grammar import Alt, CharClass, GrammarIR, Literal, Repeat, RuleRef, Seq

__all__ = ["sample", "walk"]

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


# characters tried where a state allows all but a few: JSON's structure and escapes, the
# ends of the ranges of Unicode, line terminators, controls
_WALK_POOL = list('abz019.-+eE"\\/{}[],:tfnru_Z') + [
    "\t", "\n", "\r", "\x00", "\x1f", "\x7f", "é", "😀", "\u2028", "\ufeff", "\ud7ff",
    "\ue000", "\U0010ffff"]


def walk(grammar: Grammar, rng: random.Random, max_length: int = 120) -> str | None:
    """A random text ``grammar`` accepts, found by walking its character engine: at each
    step a random character among those the state allows (the ends of each allowed
    range, one inside it, or characters of a pool), the end once it is allowed, more
    likely the longer the text. ``None`` when no end was reached within ``max_length``."""
    state = grammar.start()
    text: list[str] = []
    for step in range(max_length):
        rules = state.allowed()
        can_end = any(isinstance(rule, EndRule) for rule in rules)
        if can_end and rng.random() < 0.3 + step / max_length:
            return "".join(text)
        options: list[str] = []
        for rule in rules:
            if isinstance(rule, CharRule):
                for lo, hi in rule.ranges:
                    options += [chr(cp) for cp in (lo, hi, rng.randint(lo, hi))
                                if not 0xD800 <= cp <= 0xDFFF]
            elif isinstance(rule, CharExcludeRule):
                options += [c for c in rng.sample(_WALK_POOL, 6) if rule.matches(c)]
        if not options:
            return "".join(text) if can_end else None
        blank = [c for c in options if c not in " \t\n\r"]
        character = rng.choice(blank if blank and rng.random() < 0.9 else options)
        state = state.feed(character)
        text.append(character)
    return None
