"""The character-level pushdown engine (llama.cpp semantics).

See :mod:`gbnfkit.engine._program` for the compiled program format and
:mod:`gbnfkit.engine._state` for states, stacks and caches.
"""
