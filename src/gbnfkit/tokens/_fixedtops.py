"""Top-frame splits every schema grammar shares, kept once per vocabulary
(``docs/masks.md``, "Fixed top splits").

A split by top frame (``CompiledGrammar._by_top_frame``) starts from the split of the
context's top frames alone over the bottom marker, kept per grammar.  The schema
converter writes the same value rules into every grammar (its whitespace, string,
number and literal rules), so at the value starts of every new schema the same top
frames were walked again: on DeepSeek's first 30 MaskBench schemas the whitespace's,
the string's and the number parts' top splits took 24 ms pure, one per grammar and
frame, with five canonical forms among them.  :func:`keep_fixed_tops` (from
:func:`~gbnfkit.tokens._prewarm.prewarm`) keeps, by canonical form, the top splits
that two converter grammars with different property names share;
:func:`fixed_top` serves one to a top key of an equal form.

*Invariant:* a top split depends only on the program reachable from its frames over
the bottom marker within the longest token's reach (its walk never goes below them),
which the canonical form describes whole: equal forms accept the same tokens and hold
the bottom marker at the same trie nodes, so a kept split is exact for every key of
its form, whatever the grammar's tuning (a kept split is one whose walk finished).
The *filter* only decides whether the form is computed and looked up: it may pass
keys of other forms (then the lookup misses) and may refuse keys of a kept form (then
the split is walked as before), never changes what is served.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gbnfkit.tokens._byteprogram import END, TEST

if TYPE_CHECKING:
    from gbnfkit.tokens._bytestate import Stack
    from gbnfkit.tokens._compiled import CompiledGrammar
    from gbnfkit.tokens._index import _TopSplit

__all__ = ["fixed_top", "keep_fixed_tops", "top_filter"]

# program positions per frame the filter reads (the frame's and the ones after it in
# its alternative): the string's opening quote and a key's are both a test of `"`, and
# only what follows tells them apart
_FILTER_SPAN = 4
_OUT = -7  # past the program's end (never a head)
_CALL = -6  # a call's head: _CALL minus its rule's number of alternatives
_END = -4


def top_filter(
    key: Stack, kind: tuple[int, ...], arg: tuple[int, ...], rules: tuple[tuple[int, ...], ...]
) -> tuple[int, ...]:
    """Per frame of ``key``: the separator or bottom marker as it is, else the heads of
    the frame's position and of up to ``_FILTER_SPAN - 1`` positions after it in
    program order, up to an end (a test's byte set, ``_END``, or ``_CALL`` minus the
    called rule's number of alternatives).  Cheap, and equal for a rule the converter
    writes the same way in every grammar; not a function of the form (a filter)."""
    out: list[int] = []
    size = len(kind)
    for p in key:
        if p < 0:
            out.append(p)
            continue
        for q in range(p, p + _FILTER_SPAN):
            if q >= size:
                out.append(_OUT)
                break
            k = kind[q]
            if k == TEST:
                out.append(arg[q])
            elif k == END:
                out.append(_END)
                break
            else:
                out.append(_CALL - len(rules[arg[q]]))
    return tuple(out)


def _filter_of(compiled: CompiledGrammar, key: Stack) -> tuple[int, ...]:
    program = compiled.automaton.program
    return top_filter(key, program.kind, program.arg, program.rules)


def fixed_top(compiled: CompiledGrammar, top_key: Stack) -> _TopSplit | None:
    """The fixed top split of ``top_key``'s canonical form, if the index keeps one (its
    form computed only when the key passes the filter of a kept one)."""
    index = compiled.index
    if not index.fixed_tops or _filter_of(compiled, top_key) not in index.fixed_top_filters:
        return None
    form = compiled._canonical(top_key, compiled._tuning.fixed_top_positions)
    if form is None:
        return None
    with index.lock:
        got = index.fixed_tops.get(form)
        if got is not None:
            index.fixed_top_hits += 1
    return got


def keep_fixed_tops(grammars: list[CompiledGrammar]) -> None:
    """Keep, in the grammars' index, the top splits whose canonical form every one of
    ``grammars`` made (they have masks computed: their ``_tops`` hold what they met)."""
    index = grammars[0].index
    common: dict[tuple[object, ...], tuple[_TopSplit, set[tuple[int, ...]]]] | None = None
    for compiled in grammars:
        mine: dict[tuple[object, ...], tuple[_TopSplit, set[tuple[int, ...]]]] = {}
        for top_key, top in list(compiled._tops.items()):
            if top is None:
                continue
            form = compiled._canonical(top_key, compiled._tuning.fixed_top_positions)
            if form is None or (common is not None and form not in common):
                continue
            kept = mine.setdefault(form, (top, set() if common is None else common[form][1]))
            kept[1].add(_filter_of(compiled, top_key))
        common = mine
    with index.lock:
        for form, (top, shapes) in (common or {}).items():
            index.fixed_tops[form] = top
            index.fixed_top_filters.update(shapes)
