"""LazyGrammar: a grammar that only constrains from a trigger on, and its triggers."""

from __future__ import annotations

from dataclasses import dataclass

from gbnfkit._grammar import Grammar
from gbnfkit.tokens._trigger import Trigger

__all__ = ["LazyGrammar"]


@dataclass(frozen=True)
class LazyGrammar:
    """What ``Parser.to_grammar(lazy=True)`` returns.

    ``grammar``: the trigger rules as the alternatives of its root, and the rules they
    reach; ``triggers``: a :class:`gbnfkit.Trigger` per leading literal of a trigger rule
    (pass them to ``CompiledGrammar.matcher(triggers=...)``).
    """

    grammar: Grammar
    triggers: tuple[Trigger, ...]
