"""The per-vocabulary index every grammar compiled for a vocabulary shares, and the
splits it keeps.

``VocabularyIndex`` holds the token trie, the slices, the packed EOS and empty-token
bits, and the splits shared between grammars (in memory, and on disk with
``cache_dir``); ``_Context`` is one context's split and ``_TopSplit`` a top frame's
(``docs/masks.md``).  ``CompiledGrammar`` (``_compiled.py``) computes the splits.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from functools import partial

import numpy as np
import numpy.typing as npt

from gbnfkit.tokens._forms import _form_signature
from gbnfkit.tokens._slices import SLICE_CLASSES, Slice
from gbnfkit.tokens._splitstore import SplitRecord, SplitStore
from gbnfkit.tokens._tails import Tails, group_ranked, group_tails
from gbnfkit.tokens._trie import TokenTrie
from gbnfkit.tokens._vecwalk import WideSplit
from gbnfkit.tokens._vocabulary import Vocabulary

__all__ = ["Positions", "VocabularyIndex", "Words"]

Words = npt.NDArray[np.uint32]
Positions = npt.NDArray[np.int64]


def _packed(bits: npt.NDArray[np.bool_]) -> Words:
    """One flag per token id (a multiple of 32 of them) as packed words: bit ``i % 32``
    of word ``i // 32``."""
    # (no copy where `<u4` is the native uint32: the packed bytes are a new array)
    packed: Words = np.packbits(bits, bitorder="little").view("<u4").astype(np.uint32, copy=False)
    return packed


class VocabularyIndex:
    """Per-vocabulary data shared by every grammar compiled for it (read-only).

    Attributes:
        vocabulary: the vocabulary.
        trie: the trie of text tokens (non-special, non-empty bytes).
        nwords: ``ceil(size / 32)``, the width of a packed mask.
        always: packed bits of text tokens with empty bytes (allowed everywhere).
        eos: packed bits of the end-of-sequence ids.
        shared: context splits by canonical context (the structure of the program
            reachable from a context's frames), shared by every grammar compiled with
            this index; an LRU of at most ``max_shared_contexts`` entries.
        store: with ``cache_dir``, the same splits kept on disk for other processes
            (:class:`~gbnfkit.tokens._splitstore.SplitStore`).
        slices: the vocabulary split by each class of
            :data:`~gbnfkit.tokens._slices.SLICE_CLASSES` (``docs/masks.md``, "Slices"),
            computed with the trie.
        tails: the last ``max_shared_tails`` groupings of handover pairs into tails
            (wide splits of string bodies keep meeting the same pairs), cleared with
            ``shared``.
        signatures: how many canonical forms of ``shared`` have each *signature*
            (:func:`_form_signature`, a function of the form): a context whose signature
            is not there has no split in ``shared``, so its form is not computed to
            look one up (:meth:`may_share`).
        fixed: the splits of the contexts every JSON grammar shares (the ``json``
            builtin's and the schema converter's string bodies and property names),
            computed once by :func:`~gbnfkit.tokens._prewarm.prewarm` and kept by
            :meth:`fix_shared`; looked up like ``shared`` (by canonical form) but never
            forgotten: ``clear_shared`` keeps them.  Each keeps every tail
            (``_Context.follow == -1``).
        fixed_cuts: for some of ``fixed``'s forms, the same split with the tails left
            out that the frames below never read in the grammar that made it (a
            ``_Context.follow`` other than -1): it serves, in place of the fixed one,
            the contexts whose frames below read no other first byte (a string body
            of the schema converter's, followed by its closing quote), whose masks
            then check fewer tails.  Kept like ``fixed``.
        fixed_signatures: the signatures of ``fixed``'s forms.
        hits: lookups that found a split (read by tests); ``fixed_hits`` those that
            found a fixed one.
        fixed_tops: the top-frame splits every schema grammar shares, by canonical
            form (:mod:`~gbnfkit.tokens._fixedtops`), made by ``prewarm`` and never
            forgotten; ``fixed_top_filters`` the filters of their keys
            (:func:`~gbnfkit.tokens._fixedtops.top_filter`), ``fixed_top_hits`` the
            lookups that found one.
    """

    def __init__(
        self,
        vocabulary: Vocabulary,
        *,
        max_shared_contexts: int = 4096,
        cache_dir: str | os.PathLike[str] | None = None,
        max_shared_tails: int = 16,
    ) -> None:
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
        self.slices = tuple(Slice.build(self.trie, ranges) for ranges in SLICE_CLASSES)
        for trie in (self.trie, *(piece.rest for piece in self.slices)):
            # what the first wide splits would build (8-10 ms on 151k tokens), built
            # with the index rather than in a first request (docs/masks.md, "Memory bounds")
            _ = trie.level_bounds, trie.prefix_nodes
        self.nwords = (vocabulary.size + 31) // 32
        self.always = self.pack_ids(np.array(empty, dtype=np.int64))
        self.eos = self.pack_ids(np.array(sorted(vocabulary.eos_token_ids), dtype=np.int64))
        self.n_sorted = len(self.trie.sorted_bytes)
        # the empty arrays of every split kept as `few` words (read-only, shared)
        self._no_index: npt.NDArray[np.intp] = np.zeros(0, dtype=np.intp)
        self._no_bits: Words = np.zeros(0, dtype=np.uint32)
        self._no_index.flags.writeable = False
        self._no_bits.flags.writeable = False
        # per token id (up to the packed width): whether it is a text token (in the
        # trie), for `pack_split`
        self._is_text: npt.NDArray[np.bool_] = np.zeros(self.nwords * 32, dtype=np.bool_)
        self._is_text[self.trie.sorted_ids] = True
        # `trie.sorted_ids` read one int at a time (no copy: half the time of `.item`)
        self._sorted_view: memoryview = self.trie.sorted_ids.data
        self.max_shared = max_shared_contexts
        self.shared: OrderedDict[tuple[object, ...], _Context] = OrderedDict()
        self.signatures: dict[tuple[int, ...], int] = {}
        self.hits = 0
        self.fixed: dict[tuple[object, ...], _Context] = {}
        self.fixed_cuts: dict[tuple[object, ...], _Context] = {}
        self.fixed_signatures: set[tuple[int, ...]] = set()
        self.fixed_hits = 0
        # top-frame splits every schema grammar shares (``_fixedtops``), by canonical form
        self.fixed_tops: dict[tuple[object, ...], _TopSplit] = {}
        self.fixed_top_filters: set[tuple[int, ...]] = set()
        self.fixed_top_hits = 0
        self.max_tails = max_shared_tails
        self.tails: OrderedDict[
            tuple[int, int, int], tuple[Positions, Positions, Tails | None]
        ] = OrderedDict()
        self.lock = threading.Lock()
        self.store = (
            SplitStore(cache_dir, vocabulary.fingerprint, self.nwords)
            if cache_dir is not None
            else None
        )

    def __reduce__(self) -> tuple[object, ...]:
        # pickled as what builds it (the receiver builds it again, not prewarmed): a
        # CompiledGrammar pickles its index, so grammars pickled together (one
        # pickle.dumps of a list, say) share one index when unpickled, as they did
        # when compiled by one GrammarCompiler
        rebuild = partial(
            VocabularyIndex,
            max_shared_contexts=self.max_shared,
            cache_dir=self.store.directory if self.store is not None else None,
            max_shared_tails=self.max_tails,
        )
        return (rebuild, (self.vocabulary,))

    def may_share(self, signature: tuple[int, ...]) -> bool:
        """Whether a context with this signature (:func:`_key_signature`) may have a
        split kept: equal canonical forms have equal signatures, so if no kept form has
        it (and no ``cache_dir`` may hold one), looking the context up is useless."""
        return (
            self.store is not None
            or signature in self.signatures
            or signature in self.fixed_signatures
        )

    def shared_context(self, key: tuple[object, ...]) -> _Context | None:
        """The split of a canonical context computed by any grammar, in this process or
        (with a ``cache_dir``) another one, or a fixed one; ``None`` if not kept."""
        with self.lock:
            entry = self.fixed.get(key)
            if entry is not None:
                self.hits += 1
                self.fixed_hits += 1
                return entry
            entry = self.shared.get(key)
            if entry is not None:
                self.shared.move_to_end(key)
                self.hits += 1
                return entry
        if self.store is None:
            return None
        record = self.store.get(key)
        if record is None:
            return None
        self.hits += 1
        tails = None
        if record.tails is not None:
            texts, positions, starts = record.tails
            tails = Tails(texts, tuple(positions.tolist()), tuple(starts.tolist()))
        entry = _Context.of(
            record.words, record.uncertain, record.uncertain_tokens, tails, record.depth
        )
        self._remember(key, entry)
        return entry

    def keep_context(self, key: tuple[object, ...], entry: _Context) -> None:
        self._remember(key, entry)
        if self.store is not None:
            tails = entry.tails
            self.store.put(
                key,
                SplitRecord(
                    entry.to_words(self.nwords),
                    entry.uncertain,
                    entry.uncertain_tokens,
                    (
                        (tails.tails, np.array(tails.positions), np.array(tails.starts))
                        if tails is not None
                        else None
                    ),
                    entry.depth,
                ),
            )

    def _remember(self, key: tuple[object, ...], entry: _Context) -> None:
        signatures = self.signatures
        with self.lock:
            if key not in self.shared:
                signature = _form_signature(key)
                signatures[signature] = signatures.get(signature, 0) + 1
            self.shared[key] = entry
            while len(self.shared) > self.max_shared:
                old, _ = self.shared.popitem(last=False)
                signature = _form_signature(old)
                left = signatures[signature] - 1
                if left:
                    signatures[signature] = left
                else:
                    del signatures[signature]

    def clear_shared(self) -> None:
        """Forget the shared context splits held in memory, their signatures and the
        recent groupings of tails; the ``fixed`` splits (their signatures and cuts)
        and a ``cache_dir`` are kept."""
        with self.lock:
            self.shared.clear()
            self.signatures.clear()
            self.tails.clear()

    def fix_shared(self) -> None:
        """Keep the shared splits held now: those that keep every tail as ``fixed``,
        the others (tails cut to what their grammar's frames below read: they serve
        only some contexts of their form) as ``fixed_cuts``; then forget the shared
        ones."""
        with self.lock:
            for key, entry in self.shared.items():
                if entry.follow == -1:
                    self.fixed[key] = entry
                    self.fixed_signatures.add(_form_signature(key))
                else:
                    self.fixed_cuts.setdefault(key, entry)
        self.clear_shared()

    def group_tails(self, positions: Positions, offsets: Positions) -> Tails | None:
        """:func:`~gbnfkit.tokens._tails.group_tails` of these handover pairs, reused
        when the same pairs were grouped lately (by any grammar: kept with ``shared``);
        from a slice's suffix ranks when every pair's token is a rest token of it."""
        if not len(positions):
            return None
        # Python's own hash of the bytes (a tenth of a BLAKE2 digest's time: 12 against
        # 110 us for a string body's 9,902 pairs); a hit is compared in full anyway
        key = (len(positions), hash(positions.tobytes()), hash(offsets.tobytes()))
        with self.lock:
            got = self.tails.get(key)
            if got is not None and np.array_equal(got[0], positions):
                if np.array_equal(got[1], offsets):
                    self.tails.move_to_end(key)
                    return got[2]
        tails = None
        for piece in self.slices:
            tails = group_ranked(self.trie, piece.suffixes, positions, offsets)
            if tails is not None:
                break
        if tails is None:
            tails = group_tails(self.trie, positions, offsets)
        with self.lock:
            self.tails[key] = (positions, offsets, tails)
            while len(self.tails) > self.max_tails:
                self.tails.popitem(last=False)
        return tails

    def pack_ids(self, ids: npt.NDArray[np.int64]) -> Words:
        """Packed bits (bit ``i % 32`` of word ``i // 32``) of token ``ids``."""
        bits = np.zeros(self.nwords * 32, dtype=bool)
        bits[ids] = True
        return _packed(bits)

    def pack_split(self, split: WideSplit) -> Words:
        """Packed bits of the tokens a wide split accepts.  A wide split most often
        accepts most of the vocabulary (a string body: 146k of Qwen's 152k text
        tokens), and marking each token costs about a nanosecond of random access:
        so when more than half are flagged (``WideSplit.flags``), every text token is
        marked but the rejected ones (0.25 -> 0.07 ms a split on Qwen, pure)."""
        flags = split.flags
        if flags is None or np.count_nonzero(flags) * 2 <= self.n_sorted:
            return self.pack_ids(self.trie.sorted_ids[split.accepted])
        bits = self._is_text.copy()
        bits[self.trie.sorted_ids[(~flags).nonzero()[0]]] = False
        return _packed(bits)

    def narrow_context(
        self,
        lo: list[int],
        hi: list[int],
        uncertain: tuple[int, ...],
        base: _Context | None = None,
    ) -> _Context:
        """A narrow split: the tokens at sorted positions ``lo[k] .. hi[k]`` accepted
        (plus ``base``'s), the trie nodes ``uncertain`` left to the frames below."""
        few: dict[int, int] = {}
        if self.few_bits(lo, hi, few) and len(few) * 8 <= self.nwords:
            flat: list[int] = []
            for w in sorted(few):
                flat.append(w)
                flat.append(few[w])
            return _Context(
                None, self._no_index, self._no_bits, uncertain, base=base, few=tuple(flat)
            )
        word_index, word_bits = self.sparse_ranges(lo, hi)
        return _Context.of_sparse(word_index, word_bits, self.nwords, uncertain, base)

    def few_bits(self, lo: list[int], hi: list[int], into: dict[int, int]) -> bool:
        """OR the packed bits of the tokens at sorted positions ``lo[k] .. hi[k]`` into
        ``into`` (word index -> bits) when they are at most 64 tokens,
        in Python ints without numpy; else leave ``into`` as it is and return False.
        Ranges may overlap."""
        if sum(hi) - sum(lo) > 64:
            return False
        view = self._sorted_view
        for a, b in zip(lo, hi, strict=True):
            for p in range(a, b):
                t: int = view[p]
                w = t >> 5
                into[w] = into.get(w, 0) | (1 << (t & 31))
        return True

    def sparse_ranges(self, lo: list[int], hi: list[int]) -> tuple[npt.NDArray[np.intp], Words]:
        """The packed bits of the tokens at sorted positions ``lo[k] .. hi[k]``, sparse:
        the indices of the non-zero words (ascending, distinct) and those words.

        A narrow split accepts few tokens (a median of 8 on MaskBench), so its bits are
        built without a whole-vocabulary array (up to 64 tokens without
        numpy but for the two arrays returned); ranges may overlap.
        """
        few: dict[int, int] = {}
        if self.few_bits(lo, hi, few):
            at = sorted(few)
            return np.array(at, dtype=np.intp), np.array([few[w] for w in at], dtype=np.uint32)
        count = sum(hi) - sum(lo)
        sorted_ids = self.trie.sorted_ids
        if count * 8 > self.n_sorted:
            # a large part of the vocabulary: mark the ranges, one pass over it
            marks = np.zeros(self.n_sorted + 1, dtype=np.int32)
            np.add.at(marks, np.array(lo, dtype=np.int64), 1)
            np.add.at(marks, np.array(hi, dtype=np.int64), -1)
            words = self.pack_ids(sorted_ids[np.cumsum(marks[:-1]) > 0])
            nonzero = np.flatnonzero(words)
            return nonzero, words[nonzero]
        if len(lo) <= 16:
            found = np.concatenate([sorted_ids[a:b] for a, b in zip(lo, hi, strict=True)])
        else:
            starts = np.array(lo, dtype=np.int64)
            lengths = np.array(hi, dtype=np.int64) - starts
            if count == len(lo) and int(lengths.min()) == 1:
                # one token per range (a mask's tokens found through tails, one by one)
                found = sorted_ids[starts]
            else:
                # position k of the concatenated ranges: its range's start plus its
                # offset there
                offsets = np.cumsum(lengths) - lengths
                found = sorted_ids[np.repeat(starts - offsets, lengths) + np.arange(count)]
        found.sort()
        index = found >> 5
        first = np.empty(len(index), dtype=np.bool_)
        first[:1] = True
        np.not_equal(index[1:], index[:-1], out=first[1:])
        heads = first.nonzero()[0]
        # (a mask's final OR of a few hundred tokens: 18 -> 14 us, Qwen, pure)
        bits = np.left_shift(np.uint32(1), (found & 31).astype(np.uint32))
        packed = np.bitwise_or.reduceat(bits, heads)
        return index[heads].astype(np.intp), packed


class _Context:
    """One context's split: accepted bits (dense words, or sparse word indices + bits).

    ``uncertain`` holds trie nodes (narrow splits); ``uncertain_tokens`` sorted token
    positions (wide splits), and ``tails`` the same tokens grouped by what is left of
    them where the context's ``depth`` frames have finished: a token is allowed iff
    one of its tails is accepted by the frames below, so a mask checks each distinct
    tail once instead of each token from the full stack.  ``base``: a narrow split
    made from its top frame's split keeps that split's accepted bits there (shared)
    and only the tokens the frames below add as its own.  ``follow``: the bytes a
    tail may start with, when the split left out the tails starting with another
    byte (``-1``: none left out); it serves only contexts whose frames below can
    start with no other byte (``docs/masks.md``, "Tails").  ``few``: a narrow split's
    accepted bits when at most 64 tokens, as Python ints (word index, bits, ...; the
    arrays are then empty), for a mask to gather into one numpy OR at its end.
    Read-only once made.  A plain class, not a dataclass: under mypyc a dataclass's
    ``__init__`` is the interpreted one ``dataclasses`` generates.
    """

    __slots__ = (
        "dense", "word_index", "word_bits", "uncertain", "uncertain_tokens", "tails",
        "depth", "base", "follow", "few",
    )

    def __init__(
        self,
        dense: Words | None,
        word_index: npt.NDArray[np.intp],
        word_bits: Words,
        uncertain: tuple[int, ...],
        uncertain_tokens: tuple[int, ...] = (),
        tails: Tails | None = None,
        depth: int = 0,
        base: _Context | None = None,
        follow: int = -1,
        few: tuple[int, ...] = (),
    ) -> None:
        self.dense = dense
        self.word_index = word_index
        self.word_bits = word_bits
        self.uncertain = uncertain
        self.uncertain_tokens = uncertain_tokens
        self.tails = tails
        self.depth = depth
        self.base = base
        self.follow = follow
        self.few = few

    @staticmethod
    def of(
        words: Words,
        uncertain: tuple[int, ...],
        uncertain_tokens: tuple[int, ...] = (),
        tails: Tails | None = None,
        depth: int = 0,
        follow: int = -1,
    ) -> _Context:
        nonzero = words.nonzero()[0]
        if len(nonzero) * 8 > len(words):
            words.flags.writeable = False
            return _Context(
                words, nonzero[:0], words[:0], uncertain, uncertain_tokens, tails, depth,
                follow=follow,
            )
        return _Context(
            None, nonzero, words[nonzero].copy(), uncertain, uncertain_tokens, tails, depth,
            follow=follow,
        )

    @staticmethod
    def of_sparse(
        index: npt.NDArray[np.intp],
        bits: Words,
        nwords: int,
        uncertain: tuple[int, ...],
        base: _Context | None = None,
    ) -> _Context:
        """A narrow split from its accepted bits as :meth:`VocabularyIndex.sparse_ranges`
        gives them (kept sparse unless dense by :meth:`of`'s measure), plus ``base``'s."""
        if len(index) * 8 > nwords:
            words = np.zeros(nwords, dtype=np.uint32)
            words[index] = bits
            if base is not None:
                base.add_to(words)
            return _Context.of(words, uncertain)
        return _Context(None, index, bits, uncertain, base=base)

    def add_to(self, words: Words, few: dict[int, int] | None = None) -> None:
        """OR the accepted bits into ``words``; bits kept as ``few`` words go to ``few``
        (word index -> bits) when given, for the caller to OR into ``words`` at once."""
        if self.base is not None:
            self.base.add_to(words, few)
        if self.dense is not None:
            words |= self.dense
        elif self.few:
            pairs = self.few
            if few is None:
                words[list(pairs[0::2])] |= np.array(pairs[1::2], dtype=np.uint32)
            else:
                for i in range(0, len(pairs), 2):
                    w = pairs[i]
                    few[w] = few.get(w, 0) | pairs[i + 1]
        elif len(self.word_index):
            words[self.word_index] |= self.word_bits

    def to_words(self, nwords: int) -> Words:
        out = np.zeros(nwords, dtype=np.uint32)
        self.add_to(out)
        return out


class _TopSplit:
    """The split of a context of one frame (``CompiledGrammar._by_top_frame``): its
    accepted tokens, the trie nodes after which the frame can finish (*handover*
    nodes, in preorder), and, filled on demand, their children by byte."""

    __slots__ = ("context", "handover", "_children")

    def __init__(self, context: _Context, handover: tuple[int, ...]) -> None:
        self.context = context
        self.handover = handover
        self._children: dict[int, tuple[list[int], int]] = {}

    def children_with(self, bits: int, trie: TokenTrie) -> tuple[list[int], int]:
        """The children of the handover nodes whose byte is in ``bits`` (a 256-bit
        set), as runs for :func:`walk_runs` (``first, stop, ...``), and how many trie
        nodes their subtrees hold; kept per byte."""
        known = self._children
        todo = 0
        rest = bits
        while rest:
            low = rest & -rest
            rest ^= low
            if low.bit_length() - 1 not in known:
                todo |= low
        if todo:
            # one pass over the handover nodes for every byte not asked before, looking
            # each node's children up by byte or the other way round, whichever is fewer
            wanted = [b for b in range(256) if (todo >> b) & 1]
            found: dict[int, list[int]] = {b: [] for b in wanted}
            children = trie.children
            for node in self.handover:
                kids = children(node)
                if len(kids) < len(wanted):
                    for b, child in kids.items():
                        if (todo >> b) & 1:
                            found[b].append(child)
                else:
                    for b in wanted:
                        child = kids.get(b, -1)
                        if child >= 0:
                            found[b].append(child)
            end = trie.end
            for b, nodes in found.items():
                runs: list[int] = []
                size = 0
                for child in nodes:
                    runs.append(child)
                    runs.append(end[child])
                    size += end[child] - child
                known[b] = (runs, size)
        out: list[int] = []
        total = 0
        while bits:
            low = bits & -bits
            bits ^= low
            runs, size = known[low.bit_length() - 1]
            out.extend(runs)
            total += size
        return out, total
