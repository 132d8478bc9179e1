"""The character-level pushdown engine (llama.cpp semantics).

* :mod:`gbnfkit.engine._program` -- ``compile_program(ir, limits) -> Program``: the flat
  program format (positions, kinds, ranges, rule alternatives).
* :mod:`gbnfkit.engine._engine` -- ``Engine``: interned stacks (``Node``), interned stack
  sets (``Core``), expansion, transition caches, cache generations.
* :mod:`gbnfkit.engine._state` -- the public immutable :class:`State`.
* :mod:`gbnfkit.engine._rules` -- :class:`CharRule`, :class:`CharExcludeRule`, :class:`EndRule`.
* :mod:`gbnfkit.engine._match` -- :class:`MatchResult`, :class:`MatchStatus`.
"""

from __future__ import annotations

from gbnfkit.engine._match import MatchResult, MatchStatus
from gbnfkit.engine._rules import CharExcludeRule, CharRule, EndRule
from gbnfkit.engine._state import State

__all__ = ["CharExcludeRule", "CharRule", "EndRule", "MatchResult", "MatchStatus", "State"]
