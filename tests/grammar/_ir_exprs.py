"""Hypothesis strategies of IR expressions, shared by the grammar tests."""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import strategies as st

from gbnfkit.grammar import Alt, Repeat, Seq


def ir_exprs(
    leaves: st.SearchStrategy,
    lo: st.SearchStrategy[int],
    hi: Callable[[int], st.SearchStrategy[int | None]],
    max_leaves: int,
) -> st.SearchStrategy:
    """Trees of ``Seq``, ``Alt`` (up to 3 children) and ``Repeat`` over ``leaves``; a
    repetition's ``min`` from ``lo``, its ``max`` from ``hi(min)``."""
    return st.recursive(
        leaves,
        lambda inner: st.one_of(
            st.builds(lambda items: Seq(tuple(items)), st.lists(inner, max_size=3)),
            st.builds(lambda options: Alt(tuple(options)), st.lists(inner, max_size=3)),
            lo.flatmap(lambda m: st.builds(Repeat, inner, st.just(m), hi(m))),
        ),
        max_leaves=max_leaves,
    )
