"""CompiledGrammar: a grammar prepared for one vocabulary, and its token masks.

How a mask is computed (exact, see ``docs``/report):

* The grammar is lowered to a byte program; a parse state is a set of stacks of
  program positions (:mod:`._bytestate`).
* A *context* is the top ``CONTEXT_DEPTH`` frames of a stack.  For each context,
  once (lazily) and shared by every stack with that top, one walk of the token
  trie splits the vocabulary into tokens *accepted* whatever lies below, tokens
  *rejected* whatever lies below, and *uncertain* subtrees whose fate depends on
  the frames below (some path finished the context's frames before the token ended).
* The mask of a state is the OR over its stacks of the context's accepted bits,
  plus the uncertain subtrees walked again from the full stack.  Masks are cached
  per state (states are interned and hashable).

Token ``t`` is allowed in a state iff some stack consumes all of ``t``'s bytes;
that is exactly accepted-by-context or accepted-from-the-full-stack, so masks are
exact, including tokens that end inside a multi-byte character.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from gbnfkit._errors import VocabularyError
from gbnfkit.tokens._byteprogram import lower_grammar
from gbnfkit.tokens._bytestate import BOTTOM, ByteAutomaton, ByteState, Stack
from gbnfkit.tokens._trie import TokenTrie
from gbnfkit.tokens._vocabulary import Vocabulary
from gbnfkit.tokens._walk import walk

if TYPE_CHECKING:
    from gbnfkit._grammar import Grammar
    from gbnfkit.tokens._matcher import Matcher

__all__ = ["CONTEXT_DEPTH", "CompiledGrammar", "VocabularyIndex"]

CONTEXT_DEPTH = 3
_FORMAT = "gbnfkit-compiled-v1"

Words = npt.NDArray[np.uint32]


class VocabularyIndex:
    """Per-vocabulary data shared by every grammar compiled for it (read-only).

    Attributes:
        vocabulary: the vocabulary.
        trie: the trie of text tokens (non-special, non-empty bytes).
        nwords: ``ceil(size / 32)``, the width of a packed mask.
        always: packed bits of text tokens with empty bytes (allowed everywhere).
        eos: packed bits of the end-of-sequence ids.
    """

    def __init__(self, vocabulary: Vocabulary) -> None:
        self.vocabulary = vocabulary
        special = vocabulary.special_token_ids
        text: list[tuple[int, bytes]] = []
        empty: list[int] = []
        for i, data in enumerate(vocabulary.tokens):
            if data is None or i in special:
                continue
            if data:
                text.append((i, data))
            else:
                empty.append(i)
        self.trie = TokenTrie(text)
        self.nwords = (vocabulary.size + 31) // 32
        self.always = self.pack_ids(np.array(empty, dtype=np.int64))
        self.eos = self.pack_ids(np.array(sorted(vocabulary.eos_token_ids), dtype=np.int64))
        self.n_sorted = len(self.trie.sorted_bytes)

    def pack_ids(self, ids: npt.NDArray[np.int64]) -> Words:
        """Packed bits (bit ``i % 32`` of word ``i // 32``) of token ``ids``."""
        bits = np.zeros(self.nwords * 32, dtype=bool)
        bits[ids] = True
        packed: Words = np.packbits(bits, bitorder="little").view("<u4").astype(np.uint32)
        return packed

    def pack_ranges(self, lo: list[int], hi: list[int]) -> Words:
        """Packed bits of the tokens at sorted positions ``lo[k] .. hi[k]``."""
        if not lo:
            return np.zeros(self.nwords, dtype=np.uint32)
        marks = np.zeros(self.n_sorted + 1, dtype=np.int32)
        marks[np.array(lo, dtype=np.int64)] += 1
        marks[np.array(hi, dtype=np.int64)] -= 1
        chosen = np.cumsum(marks[:-1]) > 0
        return self.pack_ids(self.trie.sorted_ids[chosen])


@dataclass(frozen=True)
class _Context:
    accepted: Words
    uncertain: tuple[int, ...]


class CompiledGrammar:
    """A grammar compiled for a vocabulary: immutable, thread-safe, cheap to share.

    Build it with :func:`gbnfkit.compile` or :meth:`gbnfkit.GrammarCompiler.compile`;
    make one :class:`Matcher` per sequence with :meth:`matcher`.

    Internal caches (bounded, guarded by a lock): ``max_contexts`` context splits
    (default 4,096) and ``max_masks`` masks of recent states (default 1,024); each
    entry holds one packed mask of ``ceil(vocabulary.size / 32)`` 4-byte words
    (about 19 KB for a 151k vocabulary, so at most ~100 MB in all by default).
    """

    def __init__(
        self,
        grammar: Grammar,
        vocabulary: Vocabulary,
        *,
        index: VocabularyIndex | None = None,
        max_contexts: int = 4096,
        max_masks: int = 1024,
    ) -> None:
        if index is None:
            index = VocabularyIndex(vocabulary)
        elif index.vocabulary is not vocabulary:
            raise VocabularyError("the vocabulary index belongs to another vocabulary")
        self._grammar = grammar
        self._vocabulary = vocabulary
        self._index = index
        self._automaton = ByteAutomaton(lower_grammar(grammar.ir, grammar.limits), grammar.limits)
        self._lock = threading.RLock()
        self._contexts: OrderedDict[Stack, _Context] = OrderedDict()
        self._masks: OrderedDict[ByteState, npt.NDArray[np.int32]] = OrderedDict()
        self._max_contexts = max(1, max_contexts)
        self._max_masks = max(1, max_masks)
        # the first mask is part of compiling: a matcher's first step is then a cache hit
        self.mask(self._automaton.initial)

    # -- public --------------------------------------------------------------
    @property
    def grammar(self) -> Grammar:
        """The grammar."""
        return self._grammar

    @property
    def vocabulary(self) -> Vocabulary:
        """The vocabulary."""
        return self._vocabulary

    def matcher(self) -> Matcher:
        """A new :class:`Matcher` at the start of the grammar (one per sequence)."""
        from gbnfkit.tokens._matcher import Matcher

        return Matcher(self)

    def __repr__(self) -> str:
        return (
            f"CompiledGrammar(root={self._grammar.ir.root!r}, "
            f"vocabulary_size={self._vocabulary.size})"
        )

    # -- internals used by Matcher -----------------------------------------------
    @property
    def automaton(self) -> ByteAutomaton:
        return self._automaton

    @property
    def index(self) -> VocabularyIndex:
        return self._index

    def mask(self, state: ByteState) -> npt.NDArray[np.int32]:
        """The packed mask (int32 words, read-only) of text tokens and EOS allowed in ``state``."""
        with self._lock:
            cached = self._masks.get(state)
            if cached is not None:
                self._masks.move_to_end(state)
                return cached
        words = self._compute_mask(state)
        out = words.view(np.int32)
        out.flags.writeable = False
        with self._lock:
            self._masks[state] = out
            if len(self._masks) > self._max_masks:
                self._masks.popitem(last=False)
        return out

    def _context(self, key: Stack) -> _Context:
        with self._lock:
            entry = self._contexts.get(key)
            if entry is not None:
                self._contexts.move_to_end(key)
                return entry
        automaton = self._automaton
        root = automaton.intern(frozenset({key}))
        acc_lo, acc_hi, uncertain = walk(self._index.trie, automaton, root)
        accepted = self._index.pack_ranges(acc_lo, acc_hi)
        accepted.flags.writeable = False
        entry = _Context(accepted, tuple(uncertain))
        with self._lock:
            self._contexts[key] = entry
            if len(self._contexts) > self._max_contexts:
                self._contexts.popitem(last=False)
        return entry

    def _compute_mask(self, state: ByteState) -> Words:
        index = self._index
        trie = index.trie
        automaton = self._automaton
        words: Words = index.always.copy()
        seen: set[Stack] = set()
        extra_lo: list[int] = []
        extra_hi: list[int] = []
        for stack in state.stacks:
            if not stack:
                words |= index.eos
                continue
            key = stack if len(stack) <= CONTEXT_DEPTH else (BOTTOM,) + stack[-CONTEXT_DEPTH:]
            entry = self._context(key)
            if key not in seen:
                seen.add(key)
                words |= entry.accepted
            if entry.uncertain:
                full = automaton.intern(frozenset({stack}))
                for node in entry.uncertain:
                    depth = trie.depth[node]
                    start = full
                    if depth > 1:
                        prefix = trie.sorted_bytes[trie.tok_lo[node]][: depth - 1]
                        fed = automaton.feed(full, prefix)
                        if fed is None:
                            continue
                        start = fed
                    lo, hi, _ = walk(trie, automaton, start, node, trie.end[node])
                    extra_lo.extend(lo)
                    extra_hi.extend(hi)
        if extra_lo:
            words |= index.pack_ranges(extra_lo, extra_hi)
        return words

    # -- serialisation ---------------------------------------------------------
    def save(self, path: str | Path) -> None:
        """Write the context splits computed so far to ``path`` (a ``.npz`` file)."""
        with self._lock:
            items = list(self._contexts.items())
        keys = [np.array(k, dtype=np.int64) for k, _ in items]
        np.savez(
            Path(path),
            format=np.array(_FORMAT),
            grammar=np.array(self._grammar.fingerprint),
            vocabulary=np.array(self._vocabulary.fingerprint),
            context_depth=np.array(CONTEXT_DEPTH),
            key_lengths=np.array([len(k) for k in keys], dtype=np.int64),
            keys=np.concatenate(keys) if keys else np.zeros(0, dtype=np.int64),
            accepted=(
                np.stack([e.accepted for _, e in items])
                if items
                else np.zeros((0, self._index.nwords), dtype=np.uint32)
            ),
            uncertain_lengths=np.array([len(e.uncertain) for _, e in items], dtype=np.int64),
            uncertain=np.array([n for _, e in items for n in e.uncertain], dtype=np.int64),
        )

    @classmethod
    def load(
        cls,
        path: str | Path,
        grammar: Grammar,
        vocabulary: Vocabulary,
        *,
        index: VocabularyIndex | None = None,
    ) -> CompiledGrammar:
        """Read a file written by :meth:`save` for this grammar and vocabulary.

        Raises:
            VocabularyError: the file is not a saved compiled grammar, or was saved
                for another grammar or vocabulary (fingerprints differ).
        """
        try:
            with np.load(Path(path), allow_pickle=False) as data:
                fields = {name: data[name] for name in data.files}
        except (OSError, ValueError) as exc:
            raise VocabularyError(f"cannot read compiled grammar {str(path)!r}: {exc}") from None
        if str(fields.get("format", "")) != _FORMAT:
            raise VocabularyError(f"{str(path)!r} is not a gbnfkit compiled grammar file")
        if str(fields["grammar"]) != grammar.fingerprint:
            raise VocabularyError(f"{str(path)!r} was saved for another grammar")
        if str(fields["vocabulary"]) != vocabulary.fingerprint:
            raise VocabularyError(f"{str(path)!r} was saved for another vocabulary")
        compiled = cls(grammar, vocabulary, index=index)
        if int(fields["context_depth"]) != CONTEXT_DEPTH:
            return compiled
        keys = fields["keys"].tolist()
        unc = fields["uncertain"].tolist()
        accepted = fields["accepted"].astype(np.uint32)
        k = u = 0
        with compiled._lock:
            for row, (klen, ulen) in enumerate(
                zip(
                    fields["key_lengths"].tolist(),
                    fields["uncertain_lengths"].tolist(),
                    strict=True,
                )
            ):
                key = tuple(keys[k : k + klen])
                words = accepted[row].copy()
                words.flags.writeable = False
                compiled._contexts[key] = _Context(words, tuple(unc[u : u + ulen]))
                k += klen
                u += ulen
        return compiled
