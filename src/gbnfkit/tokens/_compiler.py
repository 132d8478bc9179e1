"""GrammarCompiler (an LRU of compiled grammars for one vocabulary) and ``compile``."""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from functools import partial

from gbnfkit._arguments import expect
from gbnfkit._grammar import Grammar
from gbnfkit.tokens._compiled import CompiledGrammar
from gbnfkit.tokens._index import VocabularyIndex
from gbnfkit.tokens._prewarm import prewarm
from gbnfkit.tokens._vocabulary import Vocabulary

__all__ = ["GrammarCompiler", "compile"]


class GrammarCompiler:
    """Compiles grammars for one vocabulary, sharing its token trie.

    Keeps the ``cache_size`` (default 32) most recently used compiled grammars: a
    grammar with the same compiled program, equal :attr:`~gbnfkit.Grammar.limits` and
    an equal :attr:`~gbnfkit.Grammar.fingerprint` as one of them gets that compiled
    grammar back (equal grammars compile to equal programs; the limits are enforced
    by the compiled grammar, so other limits compile again).  The cache is looked up by the
    program (hashing its flat tuples costs a small fraction of the fingerprint, which
    prints the whole grammar as GBNF), and fingerprints are compared only when the
    programs are equal, so a grammar never seen before computes none.  Thread-safe.

    Context splits that do not depend on the grammar (string bodies, numbers,
    whitespace...) are shared by every grammar compiled here; with ``cache_dir`` they
    are also written to that directory and read back by any process using the same
    vocabulary, so a grammar never seen before starts with them computed.  The
    directory is content-addressed, safe to share between concurrent processes, and
    bounded (4,096 entries; see ``docs/masks.md``); a damaged file is ignored.
    The splits of the contexts every JSON grammar shares (the ``json`` builtin's and
    the schema converter's string bodies and property names) are computed when the
    compiler is made and kept for its lifetime, even by :meth:`clear_cache`
    (``docs/masks.md``, "Fixed splits").  A compiler pickles as its vocabulary,
    ``cache_size`` and ``cache_dir`` (the receiver builds its own index); a copy
    shares this one's index and starts with the same compiled grammars in its own LRU.

    Raises:
        ArgumentError: an argument of the wrong type, or a ``cache_dir`` that cannot be
            made a directory (empty, a file, under a file, no permission).
    """

    def __init__(
        self,
        vocabulary: Vocabulary,
        *,
        cache_size: int = 32,
        cache_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        expect(vocabulary, Vocabulary, "vocabulary")
        expect(cache_size, int, "cache_size")
        if cache_dir is not None:
            expect(cache_dir, (str, os.PathLike), "cache_dir")
        self._vocabulary = vocabulary
        self._cache_dir = cache_dir
        self._index = VocabularyIndex(vocabulary, cache_dir=cache_dir)
        prewarm(self._index)
        self._cache_size = max(0, cache_size)
        self._cache: OrderedDict[tuple[object, ...], CompiledGrammar] = OrderedDict()
        self._lock = threading.Lock()

    def __copy__(self) -> GrammarCompiler:
        """A compiler sharing this one's vocabulary index (its trie and shared splits),
        with its own LRU holding the same compiled grammars (immutable, so shared)."""
        other = GrammarCompiler.__new__(GrammarCompiler)
        other.__dict__.update(self.__dict__)
        with self._lock:
            other._cache = OrderedDict(self._cache)
        other._lock = threading.Lock()
        return other

    def __deepcopy__(self, memo: dict[int, object]) -> GrammarCompiler:
        """``copy.deepcopy`` is ``copy.copy``: the vocabulary index is shared, not copied."""
        return self.__copy__()

    def __reduce__(self) -> tuple[object, ...]:
        # pickled as what makes it (vocabulary, cache size, cache directory); the
        # receiver builds its own vocabulary index and compiles grammars again
        rebuild = partial(GrammarCompiler, cache_size=self._cache_size, cache_dir=self._cache_dir)
        return (rebuild, (self._vocabulary,))

    @property
    def vocabulary(self) -> Vocabulary:
        """The vocabulary grammars are compiled for."""
        return self._vocabulary

    @property
    def cache_size(self) -> int:
        """The most compiled grammars kept."""
        return self._cache_size

    def compile(self, grammar: Grammar) -> CompiledGrammar:
        """The compiled ``grammar`` (from the cache when compiled recently)."""
        expect(grammar, Grammar, "grammar")
        if not self._cache_size:  # nothing is ever kept: no key to make (its hash is
            # the program's every tuple, ~0.1 ms for a typical schema's grammar)
            return CompiledGrammar(grammar, self._vocabulary, index=self._index)
        key = _program_key(grammar)
        with self._lock:
            hit = self._cache.get(key)
        if hit is not None and (hit.grammar is grammar or hit.grammar == grammar):
            with self._lock:
                if key in self._cache:
                    self._cache.move_to_end(key)
            return hit
        compiled = CompiledGrammar(grammar, self._vocabulary, index=self._index)
        with self._lock:
            self._cache[key] = compiled
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return compiled

    def clear_cache(self) -> None:
        """Forget the compiled grammars and the context splits shared between them
        (in memory; files in ``cache_dir`` stay, and so do the fixed splits of the
        contexts every JSON grammar shares, made with the compiler)."""
        with self._lock:
            self._cache.clear()
        self._index.clear_shared()

    def load(self, path: str | os.PathLike[str], grammar: Grammar) -> CompiledGrammar:
        """:meth:`CompiledGrammar.load` sharing this compiler's vocabulary index."""
        return CompiledGrammar.load(path, grammar, self._vocabulary, index=self._index)


def _program_key(grammar: Grammar) -> tuple[object, ...]:
    """The cache key of ``grammar``: its compiled program, what a compiled grammar is
    made of, and its limits, which the compiled grammar's automaton enforces (they are
    not part of the fingerprint: equal grammars with other limits compile apart)."""
    p = grammar.program
    return (p.root, p.rule_names, p.rule_alts, p.kinds, p.target, p.ranges, grammar.limits)


def compile(grammar: Grammar, vocabulary: Vocabulary) -> CompiledGrammar:  # noqa: A001
    """Compile ``grammar`` for ``vocabulary`` (one shot: nothing is cached between calls)."""
    expect(grammar, Grammar, "grammar")
    expect(vocabulary, Vocabulary, "vocabulary")
    return CompiledGrammar(grammar, vocabulary)
