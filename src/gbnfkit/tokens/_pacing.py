"""The pace of one context's narrow walk (``CompiledGrammar._split``): when it stops to
look for a split shared between grammars, and when it goes wide (docs/masks.md, "Narrow
walks" and "Where the time goes").

An object, not nested functions of ``_split``: compiled by mypyc, nested functions that
call each other are kept in their environment object, which they reference in turn, a
reference cycle holding the grammar (and every state it made) until the garbage
collector finds it; a :class:`SplitPace` is freed when the walk is done."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gbnfkit.tokens._bytestate import ByteState, Stack

if TYPE_CHECKING:
    from gbnfkit.tokens._compiled import CompiledGrammar
    from gbnfkit.tokens._index import _Context

__all__ = ["SplitPace", "TopPace"]


class SplitPace:
    """What a split learnt while its walk went: ``canon`` (the context's canonical form,
    computed with ``formed`` positions at most; 0: not computed) and ``shared`` (a
    split kept for that form)."""

    __slots__ = (
        "_asked", "_checked", "_early", "_grammar", "_key", "_many", "_root", "_short",
        "canon", "formed", "shared",
    )

    def __init__(
        self,
        grammar: CompiledGrammar,
        key: Stack,
        root: ByteState,
        many: bool,
        canon: tuple[object, ...] | None,
        formed: int,
    ) -> None:
        tuning = grammar._tuning
        self._grammar = grammar
        self._key = key
        self._root = root
        self._many = many
        self.canon = canon
        self.formed = formed
        self.shared: _Context | None = None
        self._asked = False
        self._short = min(tuning.short_walk, tuning.wide)
        self._early = min(tuning.early_walk, self._short)
        self._checked = self._early >= self._short

    @property
    def first_budget(self) -> int:
        """The nodes the walk visits before its first call of :meth:`pace`."""
        return self._short if self._checked else self._early

    def more(self, at: int = 0, stopping: bool = False) -> int:
        """A long walk (or free text): a split shared between grammars may be kept; if
        not, the walk goes on up to ``wide`` nodes in all, unless at its pace so far
        (node ``at`` reached) it would visit more than that.  A walk going on looks
        only so far for a canonical form (most finish without a shared split); one
        stopping for a wide split as far as a wide split does (a form too large for
        the narrow bound was computed twice)."""
        if self._asked:
            return 0
        self._asked = True
        grammar = self._grammar
        tuning = grammar._tuning
        going = stopping or self._many or grammar._projected_walk(self._root, at) > tuning.wide
        if self.formed or grammar._may_share(self._key):
            if not self.formed:
                self.formed = tuning.max_wide_canonical if going else tuning.max_canonical
                self.canon = grammar._canonical(self._key, self.formed)
            self.shared = grammar._shared_split(self.canon, self._key)
        if self.shared is not None or going:
            return 0
        return tuning.wide - self._short

    def pace(self, at: int = 0) -> int:
        """After ``early`` nodes: a walk that at its pace would visit more than
        ``early_wide`` nodes stops for a wide split at once (it would pass ``wide``)."""
        if self._checked:
            return self.more(at)
        self._checked = True
        grammar = self._grammar
        if grammar._projected_walk(self._root, at, self._early) > grammar._tuning.early_wide:
            self.more(at, True)  # still looks for a shared split, as after `short_walk` nodes
            return 0
        return self._short - self._early


class TopPace:
    """The pace of a top frame's walk (``CompiledGrammar._top_split``): past its first
    ``short_walk`` nodes it goes on, once, up to ``wide`` nodes in all, if at its pace
    so far (``CompiledGrammar._projected_walk``) it would stay within ``wide``.  A
    top frame's split serves every context with that frame on top: in c, a comment's
    frame after `/` (the comment's body takes every byte but a newline, so its walk
    passes ``short_walk``) is shared by the contexts of every operator level that `/`
    may also be, each walked whole (300-750 µs pure) when it was given up."""

    __slots__ = ("_asked", "_grammar", "_root")

    def __init__(self, grammar: CompiledGrammar, root: ByteState) -> None:
        self._grammar = grammar
        self._root = root
        self._asked = False

    def more(self, at: int) -> int:
        """How many more nodes the walk may visit, node ``at`` reached."""
        if self._asked:
            return 0
        self._asked = True
        grammar = self._grammar
        tuning = grammar._tuning
        if grammar._projected_walk(self._root, at) > tuning.wide:
            return 0
        return tuning.wide - min(tuning.short_walk, tuning.wide)
