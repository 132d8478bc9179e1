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
from gbnfkit.tokens._byteprogram import END, TEST, lower_grammar
from gbnfkit.tokens._bytestate import BOTTOM, ByteAutomaton, ByteState, Stack
from gbnfkit.tokens._trie import TokenTrie
from gbnfkit.tokens._vecwalk import ByteColumns, vector_walk
from gbnfkit.tokens._vocabulary import Vocabulary
from gbnfkit.tokens._walk import walk, walk_all, walk_positions

if TYPE_CHECKING:
    from gbnfkit._grammar import Grammar
    from gbnfkit.tokens._matcher import Matcher

__all__ = ["CONTEXT_DEPTH", "CompiledGrammar", "VocabularyIndex"]

CONTEXT_DEPTH = 3
_MAX_CANONICAL = 256  # positions; contexts reaching more are kept per grammar only
_FEW_UNCERTAIN = 24  # more uncertain tokens/subtrees than this: look 2 frames deeper
_MANY_UNCERTAIN_TOKENS = 256  # a wide context leaving more uncertain tokens is deepened
_DEEPEN_AFTER = 8  # ... once it has served this many masks
_SHALLOW_UNCERTAIN = 4096  # a shared shallower wide context is used if it leaves at most this
_MAX_EXTRA_DEPTH = 8  # ... at most this many frames deeper than CONTEXT_DEPTH
_NARROW = -1  # trie nodes: a state whose walk visits fewer is walked directly (-1: never)
_MANY_FIRST_BYTES = 48  # a state allowing more first bytes than this is never walked directly
_SHORT_WALK = 1_500  # trie nodes tried before looking for a shared split
_WIDE = 4_000  # trie nodes: a context whose walk would visit more is split with numpy
_FORMAT = "gbnfkit-compiled-v1"

Words = npt.NDArray[np.uint32]


class VocabularyIndex:
    """Per-vocabulary data shared by every grammar compiled for it (read-only).

    Attributes:
        vocabulary: the vocabulary.
        trie: the trie of text tokens (non-special, non-empty bytes).
        columns: the same tokens' bytes by column, for whole-vocabulary walks.
        nwords: ``ceil(size / 32)``, the width of a packed mask.
        always: packed bits of text tokens with empty bytes (allowed everywhere).
        eos: packed bits of the end-of-sequence ids.
        shared: context splits by canonical context (the structure of the program
            reachable from a context's frames), shared by every grammar compiled with
            this index; an LRU of at most ``max_shared_contexts`` entries.
    """

    def __init__(self, vocabulary: Vocabulary, *, max_shared_contexts: int = 4096) -> None:
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
        self.columns = ByteColumns(self.trie.sorted_bytes)
        self.nwords = (vocabulary.size + 31) // 32
        self.always = self.pack_ids(np.array(empty, dtype=np.int64))
        self.eos = self.pack_ids(np.array(sorted(vocabulary.eos_token_ids), dtype=np.int64))
        self.n_sorted = len(self.trie.sorted_bytes)
        self.max_shared = max_shared_contexts
        self.shared: OrderedDict[tuple[object, ...], _Context] = OrderedDict()
        self.lock = threading.Lock()

    def shared_context(self, key: tuple[object, ...]) -> _Context | None:
        """The split of a canonical context computed by any grammar (``None`` if not kept)."""
        with self.lock:
            entry = self.shared.get(key)
            if entry is not None:
                self.shared.move_to_end(key)
            return entry

    def keep_context(self, key: tuple[object, ...], entry: _Context) -> None:
        with self.lock:
            self.shared[key] = entry
            while len(self.shared) > self.max_shared:
                self.shared.popitem(last=False)

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
        if len(lo) < 256 and sum(hi) - sum(lo) < 1024:
            positions = [p for a, b in zip(lo, hi, strict=True) for p in range(a, b)]
            ids = self.trie.sorted_ids[np.array(positions, dtype=np.int64)]
            words = np.zeros(self.nwords, dtype=np.uint32)
            np.bitwise_or.at(words, ids >> 5, np.left_shift(1, ids & 31).astype(np.uint32))
            return words
        marks = np.zeros(self.n_sorted + 1, dtype=np.int32)
        marks[np.array(lo, dtype=np.int64)] += 1
        marks[np.array(hi, dtype=np.int64)] -= 1
        chosen = np.cumsum(marks[:-1]) > 0
        return self.pack_ids(self.trie.sorted_ids[chosen])


@dataclass(frozen=True)
class _Context:
    """One context's split: accepted bits (dense words, or sparse word indices + bits)."""

    dense: Words | None
    word_index: npt.NDArray[np.intp]
    word_bits: Words
    uncertain: tuple[int, ...]
    uncertain_tokens: tuple[int, ...] = ()

    @staticmethod
    def of(
        words: Words, uncertain: tuple[int, ...], uncertain_tokens: tuple[int, ...] = ()
    ) -> _Context:
        nonzero = np.flatnonzero(words)
        if len(nonzero) * 8 > len(words):
            words.flags.writeable = False
            return _Context(words, nonzero[:0], words[:0], uncertain, uncertain_tokens)
        return _Context(None, nonzero, words[nonzero].copy(), uncertain, uncertain_tokens)

    def add_to(self, words: Words) -> None:
        """OR the accepted bits into ``words``."""
        if self.dense is not None:
            words |= self.dense
        elif len(self.word_index):
            words[self.word_index] |= self.word_bits

    def to_words(self, nwords: int) -> Words:
        out = np.zeros(nwords, dtype=np.uint32)
        self.add_to(out)
        return out


class CompiledGrammar:
    """A grammar compiled for a vocabulary: immutable, thread-safe, cheap to share.

    Build it with :func:`gbnfkit.compile` or :meth:`gbnfkit.GrammarCompiler.compile`;
    make one :class:`Matcher` per sequence with :meth:`matcher`.

    Internal caches (bounded, guarded by a lock): ``max_contexts`` context splits
    (default 4,096) and ``max_masks`` masks of recent states (default 1,024); each
    entry holds one packed mask of ``ceil(vocabulary.size / 32)`` 4-byte words
    (about 19 KB for a 151k vocabulary; contexts that allow few tokens are kept
    sparse, so in practice far less).  The byte automaton's state table is bounded by
    ``grammar.limits.max_cached_states``.

    Args (tuning; the defaults are measured choices, none changes a mask):
        index: a :class:`VocabularyIndex` to share (``GrammarCompiler`` passes its own).
        max_contexts, max_masks: cache bounds, see above.
        wide_threshold: contexts whose trie walk would visit more nodes than this are
            split with one numpy pass over the vocabulary instead.
        narrow_threshold: states whose trie walk visits at most this many nodes are
            walked directly (no contexts); ``-1`` always uses contexts.
        deepen_above: a context leaving more uncertain tokens than this is replaced by
            one two frames deeper (up to 8 more frames).
    """

    def __init__(
        self,
        grammar: Grammar,
        vocabulary: Vocabulary,
        *,
        index: VocabularyIndex | None = None,
        max_contexts: int = 4096,
        max_masks: int = 1024,
        wide_threshold: int = _WIDE,
        deepen_above: int = _FEW_UNCERTAIN,
        narrow_threshold: int = _NARROW,
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
        self._uses: dict[Stack, int] = {}
        self._max_contexts = max(1, max_contexts)
        self._max_masks = max(1, max_masks)
        self._wide = wide_threshold
        self._deepen_above = deepen_above
        self._narrow = narrow_threshold
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

    def _context(self, key: Stack, shallower: bool = False) -> _Context:
        with self._lock:
            entry = self._contexts.get(key)
            if entry is not None:
                self._contexts.move_to_end(key)
                return entry
        entry = self._split(key, shallower)
        with self._lock:
            self._contexts[key] = entry
            if len(self._contexts) > self._max_contexts:
                self._contexts.popitem(last=False)
        return entry

    def _split(self, key: Stack, shallower: bool = False) -> _Context:
        """Walk the vocabulary from the context ``key`` (trie for narrow, numpy for wide)."""
        automaton = self._automaton
        index = self._index
        trie = index.trie
        root = automaton.intern(frozenset({key}))
        # most contexts allow few tokens: a short walk settles them
        walked = walk_all(trie, automaton, root, min(_SHORT_WALK, self._wide))
        if walked is None:
            # free-text contexts are the costly ones: they are shared between grammars
            canon = self._canonical(key)
            shared = index.shared_context(canon) if canon is not None else None
            if shared is not None:
                return shared
            walked = walk_all(trie, automaton, root, self._wide)
        else:
            canon = None
        if walked is not None:
            acc_lo, acc_hi, uncertain = walked
            return _Context.of(index.pack_ranges(acc_lo, acc_hi), tuple(uncertain))
        if canon is None and shallower:
            # a wide context that reaches too much of the grammar to be shared: its top
            # frames alone (free text, e.g. a string body) are shared by every grammar
            # with that structure; they decide the same tokens, leaving more uncertain
            for depth in range(len(key) - 2, 0, -1):
                top = (BOTTOM,) + key[-depth:]
                if self._canonical(top) is not None:
                    entry = self._split(top)
                    if len(entry.uncertain_tokens) <= _SHALLOW_UNCERTAIN and not entry.uncertain:
                        return entry
                    break
        return self._wide_split(key, canon)

    def _wide_split(self, key: Stack, canon: tuple[object, ...] | None) -> _Context:
        index = self._index
        root = self._automaton.intern(frozenset({key}))
        accepted, unsure = vector_walk(index.columns, self._automaton, root)
        words = index.pack_ids(index.trie.sorted_ids[accepted])
        entry = _Context.of(words, (), tuple(sorted(unsure.tolist())))
        if canon is not None:
            index.keep_context(canon, entry)
        return entry

    def _canonical(self, key: Stack) -> tuple[object, ...] | None:
        """The program reachable from the frames of ``key``, renumbered; ``None`` if too big.

        Two contexts with equal canonical forms accept, reject and leave open the same
        tokens, whatever grammar they come from.
        """
        program = self._automaton.program
        kind = program.kind
        arg = program.arg
        rules = program.rules
        ids: dict[int, int] = {}
        order: list[int] = []

        def number(p: int) -> int:
            got = ids.get(p)
            if got is None:
                got = ids[p] = len(order)
                order.append(p)
            return got

        frames = tuple(number(p) if p >= 0 else -1 for p in key)
        desc: list[object] = []
        i = 0
        while i < len(order):
            if i > _MAX_CANONICAL:
                return None
            p = order[i]
            i += 1
            k = kind[p]
            if k == END:
                desc.append(END)
            elif k == TEST:
                desc.append((arg[p], number(p + 1)))
            else:
                desc.append((tuple(number(a) for a in rules[arg[p]]), number(p + 1)))
        return (frames, tuple(desc))

    def _entry_for(self, stack: Stack) -> tuple[Stack, _Context]:
        """The context of ``stack``: its top frames, deeper while many tokens stay uncertain."""
        depth = CONTEXT_DEPTH
        while True:
            if len(stack) <= depth:
                return stack, self._context(stack)
            key = (BOTTOM,) + stack[-depth:]
            entry = self._context(key, shallower=depth == CONTEXT_DEPTH)
            # a deeper wide context costs another whole-vocabulary pass, so a wide one
            # (numpy split, uncertain_tokens) is deepened only when far too open and
            # after it has served _DEEPEN_AFTER masks (it pays off only for long runs)
            if depth >= CONTEXT_DEPTH + _MAX_EXTRA_DEPTH:
                return key, entry
            if len(entry.uncertain) <= self._deepen_above:
                if len(entry.uncertain_tokens) <= _MANY_UNCERTAIN_TOKENS:
                    return key, entry
                with self._lock:
                    used = self._uses.get(key, 0) + 1
                    if len(self._uses) >= self._max_contexts:
                        self._uses.clear()
                    self._uses[key] = used
                if used <= _DEEPEN_AFTER:
                    return key, entry
            depth += 2

    def _compute_mask(self, state: ByteState) -> Words:
        index = self._index
        trie = index.trie
        automaton = self._automaton
        words: Words = index.always.copy()
        if state.complete:
            words |= index.eos
        walked = None
        if self._narrow >= 0 and len(automaton.allowed_bytes(state)) <= _MANY_FIRST_BYTES:
            walked = walk_all(trie, automaton, state, self._narrow)
        if walked is not None:
            # few tokens can start here: one walk from the whole state was cheapest
            if walked[0]:
                words |= index.pack_ranges(walked[0], walked[1])
            return words
        seen: set[Stack] = set()
        extra_lo: list[int] = []
        extra_hi: list[int] = []
        for stack in state.stacks:
            if not stack:
                continue
            key, entry = self._entry_for(stack)
            if key not in seen:
                seen.add(key)
                entry.add_to(words)
            if entry.uncertain_tokens:
                full = automaton.intern(frozenset({stack}))
                for pos in walk_positions(trie, automaton, full, entry.uncertain_tokens):
                    extra_lo.append(pos)
                    extra_hi.append(pos + 1)
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
                    got = walk(trie, automaton, start, node, trie.end[node])
                    assert got is not None
                    extra_lo.extend(got[0])
                    extra_hi.extend(got[1])
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
                np.stack([e.to_words(self._index.nwords) for _, e in items])
                if items
                else np.zeros((0, self._index.nwords), dtype=np.uint32)
            ),
            uncertain_lengths=np.array([len(e.uncertain) for _, e in items], dtype=np.int64),
            uncertain=np.array([n for _, e in items for n in e.uncertain], dtype=np.int64),
            token_lengths=np.array([len(e.uncertain_tokens) for _, e in items], dtype=np.int64),
            uncertain_tokens=np.array(
                [n for _, e in items for n in e.uncertain_tokens], dtype=np.int64
            ),
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
        unc_tokens = fields["uncertain_tokens"].tolist()
        accepted = fields["accepted"].astype(np.uint32)
        k = u = t = 0
        with compiled._lock:
            for row, (klen, ulen, tlen) in enumerate(
                zip(
                    fields["key_lengths"].tolist(),
                    fields["uncertain_lengths"].tolist(),
                    fields["token_lengths"].tolist(),
                    strict=True,
                )
            ):
                key = tuple(keys[k : k + klen])
                entry = _Context.of(
                    accepted[row].copy(),
                    tuple(unc[u : u + ulen]),
                    tuple(unc_tokens[t : t + tlen]),
                )
                compiled._contexts[key] = entry
                k += klen
                u += ulen
                t += tlen
        return compiled
