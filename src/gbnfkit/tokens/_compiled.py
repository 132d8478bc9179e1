"""CompiledGrammar: a grammar prepared for one vocabulary, and its token masks.

How a mask is computed, and why it is exact: ``docs/masks.md``.  In short, a parse
state is a set of byte-level stacks; stacks are grouped by all but their top frame, each
group's *context* (its top frames) is split once into tokens accepted, rejected and
uncertain whatever lies below, and a mask ORs the accepted bits of its contexts and
checks the uncertain tokens against the frames below.  Masks are cached per state.
"""

from __future__ import annotations

import os
import threading
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Iterable
from functools import partial
from typing import TYPE_CHECKING, Any, Final, overload

import numpy as np
import numpy.typing as npt

from gbnfkit._arguments import expect
from gbnfkit._errors import LoadError, VocabularyError
from gbnfkit.tokens._byteprogram import END, TEST, lower_program
from gbnfkit.tokens._bytestate import BOTTOM, ByteAutomaton, ByteState, Stack
from gbnfkit.tokens._chains import Chains
from gbnfkit.tokens._fixedtops import fixed_top
from gbnfkit.tokens._follow import CallIndex, follow_search, rule_starts
from gbnfkit.tokens._forms import _FAR, _SIGNED_CALL, _SIGNED_END, _UNSEEN, _key_signature
from gbnfkit.tokens._index import VocabularyIndex, Words, _Context, _TopSplit
from gbnfkit.tokens._keywalk import Universal, WideContexts, inside_only, join_keys
from gbnfkit.tokens._pacing import SplitPace, TopPace
from gbnfkit.tokens._savefile import (
    ARRAY_FIELDS,
    SAVED_FIELDS,
    check_arrays,
    digest,
    read_npz,
    scalar_int,
    write_npz,
)
from gbnfkit.tokens._slices import Counted, Covers, Items, Slice, sliced_walk
from gbnfkit.tokens._tails import Tails, tails_by_stepping
from gbnfkit.tokens._trie import TokenTrie
from gbnfkit.tokens._tuning import DEFAULT_TUNING, Tuning
from gbnfkit.tokens._vecwalk import WideSplit, byte_runs, vector_walk
from gbnfkit.tokens._vocabulary import Vocabulary
from gbnfkit.tokens._walk import walk, walk_all, walk_runs, walk_sorted
from gbnfkit.tokens._within import (
    SecondBytes,
    Signature,
    cut_spans,
    home_state,
    signature_after,
)

if TYPE_CHECKING:
    from gbnfkit._grammar import Grammar
    from gbnfkit.tokens._lazy import LazyMatcher
    from gbnfkit.tokens._matcher import Matcher
    from gbnfkit.tokens._trigger import Trigger

__all__ = ["CONTEXT_DEPTH", "CompiledGrammar"]

CONTEXT_DEPTH: Final = 3  # frames in a context key (part of the saved format, not a tuning knob)
_FORMAT = "gbnfkit-compiled-v4"  # v4: class rules merge byte sequences by prefix

_SEPARATOR: Final = -2  # between the stacks of a context key

# a wide split's tokens under one run of first bytes: accepted and uncertain sorted
# positions, and the handover pairs (positions, offsets) of those uncertain tokens
_Chunk = tuple[npt.NDArray[np.int64], ...]


def _cut_by_runs(
    trie: TokenTrie, split: WideSplit, first_bytes: int, accepted: bool = True
) -> list[tuple[int, _Chunk]]:
    """``split`` cut by runs of consecutive bytes of ``first_bytes``: per run, its first
    sorted position and its tokens' part of the split (one ``searchsorted`` per array in
    all); without ``accepted``, every part's accepted positions are left empty (the
    caller takes them from the flags)."""
    spans = [trie.first_byte_span(a, b) for a, b in byte_runs(first_bytes)]
    return cut_spans(split, spans, accepted)


# tokens accepted through tails (_tails_accepted): sparse words (the indices of the
# non-zero words, distinct, and those words), or packed bits
_Found = tuple[npt.NDArray[np.intp], Words] | Words

_LEAST_DEPTH: Final = 64  # rule nesting followed for least lengths (deeper: 0, a lower bound)


def _groups(stacks: Iterable[Stack]) -> list[list[Stack]]:
    """The non-empty ``stacks`` grouped by all but their top frame (a state's groups,
    ``docs/masks.md``, "Definitions"), in the order first met."""
    groups: dict[Stack, list[Stack]] = {}
    for stack in stacks:
        if stack:
            groups.setdefault(stack[:-1], []).append(stack)
    return list(groups.values())


def _group_key(group: list[Stack], depth: int) -> tuple[int, ...]:
    """The context key of stacks that share all but their top frame: each stack's top
    ``depth`` frames over the bottom marker (``depth`` 0: the whole stacks), sorted and
    joined by ``_SEPARATOR`` into one flat tuple (hashable, and saved as it is)."""
    if depth:
        parts = sorted((BOTTOM,) + stack[-depth:] for stack in group)
    else:
        parts = sorted(group)
    if len(parts) == 1:
        return parts[0]
    # (one list, not a tuple grown by each part: a class of 16,000 code point ranges is
    # a group of 16,000 stacks, and that was 2.6 s)
    joined: list[int] = list(parts[0])
    for part in parts[1:]:
        joined.append(_SEPARATOR)
        joined.extend(part)
    return tuple(joined)


def _stacks_of(key: tuple[int, ...]) -> list[Stack]:
    """The stacks of a context key (inverse of :func:`_group_key`)."""
    if _SEPARATOR not in key:
        return [key]
    out: list[Stack] = []
    start = 0
    for i, p in enumerate(key):
        if p == _SEPARATOR:
            out.append(key[start:i])
            start = i + 1
    out.append(key[start:])
    return out


def _tokens_under(trie: TokenTrie, first_bytes: int) -> int:
    """How many tokens start with one of the bytes of ``first_bytes`` (a 256-bit set)."""
    count = 0
    root_child = trie.root_child
    while first_bytes:
        low = first_bytes & -first_bytes
        first_bytes ^= low
        node = root_child[low.bit_length() - 1]
        if node >= 0:
            count += trie.tok_hi[node] - trie.tok_lo[node]
    return count


def _key_depth(key: tuple[int, ...]) -> int:
    """How many frames of each stack a context key holds (its first stack's length - 1)."""
    first = key.index(_SEPARATOR) if _SEPARATOR in key else len(key)
    return first - 1


class CompiledGrammar:
    """A grammar compiled for a vocabulary: immutable, thread-safe, cheap to share.

    Build it with :func:`gbnfkit.compile` or :meth:`gbnfkit.GrammarCompiler.compile`;
    make one :class:`Matcher` per sequence with :meth:`matcher`.  It pickles as its
    grammar, vocabulary and options (the receiver compiles it again; :meth:`save` and
    :meth:`load` keep the splits computed), and its vocabulary index as what builds it:
    grammars pickled together share one index when unpickled; ``copy.copy`` and
    ``deepcopy`` return it.

    Internal caches (bounded, guarded by a lock): ``max_contexts`` context splits
    (default 4,096) and ``max_masks`` masks of recent states (default 1,024); each
    entry holds one packed mask of ``ceil(vocabulary.size / 32)`` 4-byte words
    (about 19 KB for a 151k vocabulary; contexts that allow few tokens are kept
    sparse, so in practice far less).  The byte automaton's state table is bounded by
    ``grammar.limits.max_cached_states``.

    Args:
        index: a :class:`VocabularyIndex` to share (``GrammarCompiler`` passes its own).
        max_contexts, max_masks: cache bounds, see above.
        tuning: the heuristics' knobs (internal; none changes a mask, see
            ``docs/masks.md``).
    """

    def __init__(
        self,
        grammar: Grammar,
        vocabulary: Vocabulary,
        *,
        index: VocabularyIndex | None = None,
        max_contexts: int = 4096,
        max_masks: int = 1024,
        tuning: Tuning = DEFAULT_TUNING,
    ) -> None:
        if index is None:
            index = VocabularyIndex(vocabulary)
        elif index.vocabulary is not vocabulary:
            raise VocabularyError("the vocabulary index belongs to another vocabulary")
        self._grammar = grammar
        self._vocabulary = vocabulary
        self._index = index
        program = lower_program(grammar.program, grammar.limits)
        self._automaton = ByteAutomaton(program, grammar.limits, grammar.program.rule_names)
        self._lock = threading.RLock()
        self._contexts: OrderedDict[Stack, _Context] = OrderedDict()
        self._masks: OrderedDict[ByteState, npt.NDArray[np.int32]] = OrderedDict()
        self._uses: dict[Stack, int] = {}
        self._early: dict[Stack, bool] = {}  # see _hands_over_early
        self._least: dict[int, int] = {}  # rule -> lower bound of its strings' lengths
        self._chains: Chains | None = None  # counted repetitions' links (_chain_normal)
        # context of one frame -> its split and where the frame can finish (_top_split)
        self._tops: dict[Stack, _TopSplit | None] = {}
        # state after a first byte -> (the first bytes that lead to it in a wide split's
        # walk, that split), the latest last (see _walk_by_first_byte)
        self._suffixes: OrderedDict[ByteState, list[tuple[int, WideSplit]]] = OrderedDict()
        # a kept state after a first byte by its signature within a character, and each
        # position's chain of tests (see _within.py)
        self._within: dict[Signature, ByteState] = {}
        self._test_chains: dict[int, tuple[int, ...] | None] = {}
        # the same walks by their first byte and the state after a second one
        self._second = SecondBytes(tuning.max_suffixes)
        # per slice (by its index): whether a state loops on the slice's class
        self._loops: dict[int, dict[ByteState, bool]] = {}
        # the same for "open on the class" (a counted repetition); per state, the
        # signature of its whole stacks (see _same_form)
        self._opens: dict[int, dict[ByteState, bool]] = {}
        self._merged: dict[int, dict[ByteState, ByteState]] = {}  # see Covers
        self._counts: dict[int, dict[ByteState, Counted]] = {}  # see Covers
        self._links: dict[int, dict[ByteState, ByteState | None]] = {}  # see Covers
        self._items: dict[int, Items] = {}  # see Covers (a few entries per rule at most)
        self._state_sigs: dict[ByteState, tuple[int, ...]] = {}
        # whether stacks cover the first slice's class (_keywalk.py: keys as one lexeme)
        self._keys = Universal(program, index.slices[0].dfa, tuning.key_positions, max_contexts)
        self._wide_contexts = WideContexts(
            index, self._automaton, self._keys, self._test_chains, tuning.key_alike_nodes
        )
        # read by tests (compiled modules call vector_walk directly, so its calls cannot be
        # recorded from outside): wide splits that reused parts of others, the first bytes'
        # states of those found by signature (_within.py), first bytes decided by their
        # second byte (_within.SecondBytes), wide splits that walked only a slice's rest
        # under some first bytes, of those the ones that walked some node by node
        self.parts_reused = self.within_reused = self.second_reused = 0
        self.sliced_walks = self.inside_walks = 0
        # states of many groups split as one context (read by tests), and the unions
        # whose walk passed `union_nodes` (split group by group from then on)
        self.union_walks = 0
        self._union_failed: set[Stack] = set()
        # (id of a wide split's tails, state below) -> (those tails, tokens accepted)
        self._tail_checks: OrderedDict[tuple[int, ByteState], tuple[Tails, _Found]] = OrderedDict()
        # the frames below a wide context (a stack without its top frames) -> their state
        self._belows: dict[Stack, ByteState] = {}
        # per rule: the bytes that can come first once it returns (see _follow_of);
        # where each rule starts (see _rule_at), each rule's calls (made lazily)
        self._follows: dict[int, int] = {}
        self._starts: list[int] = []
        self._start_rules: list[int] = []
        self._call_index: CallIndex | None = None
        self._max_contexts = max(1, max_contexts)
        self._max_masks = max(1, max_masks)
        self._tuning = tuning
        # the first mask is part of compiling: a matcher's first step is then a cache hit.
        # Its contexts are walked whole: every top frame is new there, and a split by
        # top frame would cost two walks for one (see _by_top_frame)
        self._compiling = True
        self.mask(self._automaton.initial)
        self._compiling = False

    # -- public --------------------------------------------------------------
    @property
    def grammar(self) -> Grammar:
        """The grammar."""
        return self._grammar

    @property
    def vocabulary(self) -> Vocabulary:
        """The vocabulary."""
        return self._vocabulary

    @overload
    def matcher(self, triggers: None = None) -> Matcher: ...
    @overload
    def matcher(self, triggers: Iterable[Trigger]) -> LazyMatcher: ...
    def matcher(self, triggers: Iterable[Trigger] | None = None) -> Matcher | LazyMatcher:
        """A new matcher at the start of the grammar (one per sequence).

        Without ``triggers``, a :class:`Matcher` that constrains from the first token.
        With a list of :class:`~gbnfkit.Trigger` values, a :class:`~gbnfkit.LazyMatcher`
        that allows every token until one of them fires (``docs/lazy.md``).
        """
        if triggers is not None:
            from gbnfkit.tokens._lazy import LazyMatcher

            return LazyMatcher(self, triggers)
        from gbnfkit.tokens._matcher import Matcher

        return Matcher(self)

    def __copy__(self) -> CompiledGrammar:
        return self  # immutable (its caches are internal and thread-safe): a copy is itself

    def __deepcopy__(self, memo: object) -> CompiledGrammar:
        return self

    def __reduce__(self) -> tuple[object, ...]:
        # pickled as what compiles it again, its grammar, vocabulary, index and options
        # (not its caches: their positions are this process's; save/load keeps the
        # splits).  The index pickles as what builds it, once per pickle: grammars
        # pickled together share one when unpickled (~1 s and ~100 MB each on 151k
        # tokens otherwise)
        rebuild = partial(
            CompiledGrammar,
            index=self._index,
            max_contexts=self._max_contexts,
            max_masks=self._max_masks,
            tuning=self._tuning,
        )
        return (rebuild, (self._grammar, self._vocabulary))

    def __repr__(self) -> str:
        return (
            f"CompiledGrammar(root={self._grammar.root!r}, "
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

    def _context(self, key: Stack, shallower: bool = False, joined: bool = False) -> _Context:
        entry = self._cached_context(key)
        if entry is None:
            entry = self._wide_split(key, None) if joined else self._split(key, shallower)
            self._keep_context(key, entry)
        return entry

    def _cached_context(self, key: Stack) -> _Context | None:
        """The split of the context ``key`` if this grammar keeps it (then most recent)."""
        with self._lock:
            entry = self._contexts.get(key)
            if entry is not None:
                self._contexts.move_to_end(key)
            return entry

    def _keep_context(self, key: Stack, entry: _Context) -> None:
        with self._lock:
            self._contexts[key] = entry
            if len(self._contexts) > self._max_contexts:
                self._contexts.popitem(last=False)

    def _split(
        self,
        key: Stack,
        shallower: bool = False,
        known: tuple[object, ...] | None = None,
        narrow: bool = True,
    ) -> _Context:
        """Walk the vocabulary from the context ``key`` (trie for narrow, numpy for wide);
        ``known``: its canonical form, if already computed; ``narrow``: whether to try a
        narrow walk first (not when a deeper context's walk has gone wide)."""
        automaton = self._automaton
        index = self._index
        trie = index.trie
        tuning = self._tuning
        root = automaton.intern(frozenset(_stacks_of(key)))
        # most contexts allow few tokens: a short walk settles them; free text (many
        # first bytes) would exhaust the walk's budget, so it goes straight to numpy
        many = automaton.allowed_bits(root).bit_count() > tuning.many_first_bytes
        # the walk's pace, and what it learnt (``tokens/_pacing.py``); formed: the limit
        # its canonical form was computed with (0: not computed)
        paced = SplitPace(
            self, key, root, many, known, tuning.max_wide_canonical if known is not None else 0
        )

        walked = None
        top = _group_key(_stacks_of(key), _key_depth(key) - 1) if shallower else key
        if shallower and many:  # a string body (narrow contexts are no links' bodies)
            top = self._chain_normal(top)
        if many:
            if shallower:
                # its shallower context, split already and usable (a string body's,
                # taken to one key at every count of a long ``maxLength``): no form
                # of this context to look up first
                entry = self._cached_context(top)
                if entry is not None and self._serves_deeper(entry):
                    return entry
            paced.more()
        else:
            by_top = self._by_top_frame(key, root)
            if by_top is not None:
                return by_top
            if shallower:
                # its shallower context, split already and usable: this context's walk
                # would pass its nodes and more (a deeper frame takes over where the
                # shallower one finishes), so it would go wide too, or decide the same
                entry = self._cached_context(top)
                if entry is not None and self._serves_deeper(entry):
                    return entry
        if not many and not narrow:
            paced.more(0, True)
        elif not many:
            piece, loops = self._narrow_slice()
            walked = walk_all(
                trie,
                automaton,
                root,
                paced.first_budget,
                paced.pace,
                tuning,
                None,
                piece,
                loops,
            )
        if paced.shared is not None:
            return paced.shared
        if walked is not None:
            acc_lo, acc_hi, uncertain = walked
            return index.narrow_context(acc_lo, acc_hi, tuple(uncertain))
        canon, formed = paced.canon, paced.formed
        wider = canon is None and not many and formed < tuning.max_wide_canonical
        if wider and self._may_share(key):
            # going wide: a whole-trie pass costs far more than a larger canonical form
            formed = tuning.max_wide_canonical
            canon = self._canonical(key, formed)
            shared = self._shared_split(canon, key)
            if shared is not None:
                return shared
        if shallower:
            # a wide context: its top frames but one (free text, e.g. a string body) are
            # more often shared (other contexts and grammars), decide the same tokens and
            # leave more uncertain (checked by their tails); kept like any context (one
            # state's contexts often share top frames; an unusable split is not remade)
            entry = self._cached_context(top)
            if entry is None:
                top_canon = self._canonical(top, tuning.max_wide_canonical)
                if top_canon is not None:
                    # this context's narrow walk went wide: the shallower one's walks a
                    # part of its nodes and finishes only by leaving subtrees uncertain
                    # (unusable here), so it goes wide at once unless that would leave
                    # too many tokens uncertain (``docs/masks.md``, "Shallower shared contexts")
                    at_once = not many and not self._finishes_widely(top)
                    entry = self._split(top, known=top_canon, narrow=not at_once)
                    self._keep_context(top, entry)
            if entry is not None and self._serves_deeper(entry):
                return entry
        if not formed or (canon is None and formed < tuning.max_wide_canonical):
            # not looked up (no kept form may equal it): its form, to keep its split
            canon = self._canonical(key, tuning.max_wide_canonical)
        return self._wide_split(key, canon)

    def _chain_normal(self, key: Stack) -> Stack:
        """``key``, or a key of the same canonical form in a counted repetition's
        representative link (``tokens/_chains.py``): inside a long ``maxLength``
        string, the body's context of every count then has one key."""
        chains = self._chains
        if chains is None:
            chains = self._chains = Chains(
                self._automaton.program, self._index.trie.max_depth,
                self._tuning.chain_item_rules,
            )
        with self._lock:
            return chains.normal(key, self._least_of, self._rule_at)

    def _least_of(self, rule: int) -> int:
        return self._least_length(rule, 0)

    def _narrow_slice(self) -> tuple[Slice | None, dict[ByteState, bool]]:
        """The slice narrow walks use (the first of the index's, ``docs/masks.md``,
        "Narrow walks through slices") and which states loop on its class (shared
        with the wide splits' checks, bounded like them)."""
        slices = self._index.slices
        with self._lock:
            loops = self._loops.setdefault(0, {})
            if len(loops) > self._max_contexts:
                loops.clear()
        return (slices[0] if slices else None), loops

    def _shared_split(self, canon: tuple[object, ...] | None, key: Stack) -> _Context | None:
        """The split kept for the canonical form ``canon`` of the context ``key``, if
        any and if it kept every tail the frames below ``key`` may accept first: a
        split whose tails starting with some bytes were left out (``_Context.follow``)
        serves only contexts whose frames below can start with no other byte.  A fixed
        split (every tail kept) may also be kept cut to what its JSON grammar's frames
        below read (``VocabularyIndex.fixed_cuts``): that serves first where it may."""
        if canon is None:
            return None
        index = self._index
        entry = index.shared_context(canon)
        if entry is None:
            return None
        cut = index.fixed_cuts.get(canon) if entry.follow == -1 else None
        if entry.follow == -1 and cut is None:
            return entry
        follow = self._follow_of(key)
        for kept in (cut, entry):
            if kept is not None and (
                kept.follow == -1 or (follow != -1 and not follow & ~kept.follow)
            ):
                return kept
        return None

    def _follow_of(self, key: Stack) -> int:
        """The bytes that the frames below the context ``key`` can accept first, as a
        256-bit set (``-1``: not known, every byte): for each stack of the key, what
        may come first once the rule of its deepest frame returns, in any stack of the
        grammar (``docs/masks.md``, "Tails").  -1 with a ``cache_dir`` (the splits
        written there do not record which tails were left out), for a whole stack
        (nothing below it), and when finding it would read more than
        ``Tuning.follow_calls`` calls."""
        if self._index.store is not None:
            return -1
        deepest: set[int] = set()  # the positions of the stacks' deepest frames
        for stack in _stacks_of(key):
            if len(stack) < 2 or stack[0] != BOTTOM:
                return -1
            deepest.add(stack[1])
        rules: set[int] = set()
        for p in deepest:
            rule = self._rule_at(p)
            if rule < 0:
                return -1
            rules.add(rule)
        out = 0
        for rule in rules:
            got = self._follows.get(rule)  # one read of a dict: no lock needed
            if got is None:
                got = self._follow_rule(rule)
            if got == -1:
                return -1
            out |= got
        return out

    def _rule_layout(self) -> tuple[list[int], list[int]]:
        """Where each rule starts and the rule of each start (:func:`rule_starts`), made
        at the first call and shared by :meth:`_rule_at` and the call index."""
        starts = self._starts
        if not starts:
            starts, owners = rule_starts(self._automaton.program.rules)
            with self._lock:
                self._start_rules = owners
                self._starts = starts
        return starts, self._start_rules

    def _rule_at(self, position: int) -> int:
        """The rule whose alternatives hold ``position`` (the last rule, or alternative,
        starting at or before it: rules are laid out one after the other)."""
        starts, owners = self._rule_layout()
        at = bisect_right(starts, position) - 1
        if at < 0:
            return -1
        return owners[at] if owners else at

    def _follow_rule(self, rule: int) -> int:
        """What can be read first once ``rule`` returns (``_follow.follow_search``),
        kept with the sets of the rules its search reached; -1 (kept too) where the
        search gave up: past ``follow_calls`` calls not in tail position, or at a rule
        whose search did.  The calls of every rule are indexed at the first search."""
        index = self._call_index
        if index is None:
            index = CallIndex(self._automaton.program, *self._rule_layout())
            with self._lock:
                self._call_index = index
        own = follow_search(rule, self._automaton, index, self._follows, self._tuning.follow_calls)
        with self._lock:
            got = -1 if own is None else own[index.top[rule]]
            if own is not None:
                self._follows.update(own)
            self._follows[rule] = self._follows[index.top[rule]] = got
        return got

    def _may_share(self, key: Stack) -> bool:
        """Whether the index may keep a split of ``key``'s canonical form (its signature
        is that of a kept form, or a ``cache_dir`` may hold it): if not, the form is not
        computed to look it up (``docs/masks.md``, "Canonical sharing")."""
        program = self._automaton.program
        return self._index.may_share(_key_signature(key, program.kind, program.arg, program.rules))

    def _by_top_frame(self, key: Stack, root: ByteState) -> _Context | None:
        """The narrow split of ``key`` from the split of its top frame alone, or ``None``
        when that is not cheaper (``docs/masks.md``, "Splits by top frame").

        A token is accepted by the context iff its top frame accepts it whole, or the
        top frame can finish after a prefix of it (a *handover* node: the top frame's
        state there holds the bottom marker) and the frames below accept the rest; the
        rest is walked from the state of the frames below (the same after every
        handover node), only under the children whose byte that state accepts.  What
        the frames below leave uncertain stays uncertain.  The top frame's split is
        shared by every context with that top frame: a JSON grammar's whitespace (one
        top frame per remaining count) is called from dozens of places, a key's literal
        recurs in every state where that key may still come.  Made at the first context
        with that top frame (or a fixed one, ``_fixedtops``), except in the grammar's
        first mask (computed when it is compiled), whose contexts are walked whole."""
        tuning = self._tuning
        stacks = _stacks_of(key)
        if len(stacks[0]) < 2 or root.bottom or not tuning.top_frame_nodes:
            return None
        automaton = self._automaton
        frames, bits, bottom = self._top_frames(stacks, root)
        top_key = _group_key(stacks, frames)
        if top_key == key:
            return None
        with self._lock:
            known = top_key in self._tops
            top = self._tops.get(top_key)
        if not known and self._compiling:
            return None
        if top is None and known:
            return None
        if top is not None and not top.handover:
            return top.context
        # the frames below may finish before a byte: after every handover node each
        # child would be uncertain (the deeper frames decide), not only those whose
        # byte the frames below accept.  Many bytes: the walks from below would be wide
        if bottom or bits.bit_count() > tuning.many_first_bytes:
            return None
        if top is None:
            top = fixed_top(self, top_key) or self._top_split(top_key)
            with self._lock:
                if len(self._tops) >= self._max_contexts:
                    self._tops.clear()
                self._tops[top_key] = top
            if top is None:
                return None
        if not top.handover or not bits:
            return top.context
        with self._lock:
            runs, size = top.children_with(bits, self._index.trie)
        if not runs:
            return top.context
        # the subtrees may be large while a walk from below skips most of them (one
        # byte after ` t` in `true`): walked while at its pace it would visit at most
        # `top_frame_nodes` nodes, measured after a quarter of those
        limit = tuning.top_frame_nodes
        first = max(1, limit // 4)
        asked = [False]

        def pace(at: int) -> int:
            if asked[0]:
                return 0
            asked[0] = True
            passed = 0  # the nodes of the runs before `at`, in the order walked
            for r in range(0, len(runs), 2):
                if runs[r] <= at < runs[r + 1]:
                    passed += at - runs[r]
                    break
                passed += runs[r + 1] - runs[r]
            return limit - first if first * size <= limit * max(passed, 1) else 0

        budget = [first] if size > limit else None
        below = automaton.state_of([stacks[0][:-frames]])
        index = self._index
        piece, loops = self._narrow_slice()
        got = walk_runs(
            index.trie, automaton, below, runs, budget, pace, tuning, None, piece, loops
        )
        if got is None:
            return None  # the walks from below would be as long as the whole context's
        acc_lo, acc_hi, uncertain = got
        if not acc_lo and not uncertain:
            return top.context
        # runs nest when the frames below accept what the top frame does (whitespace
        # after whitespace): a subtree left uncertain twice is checked once
        return index.narrow_context(acc_lo, acc_hi, tuple(dict.fromkeys(uncertain)), top.context)

    def _top_frames(self, stacks: list[Stack], root: ByteState) -> tuple[int, int, bool]:
        """How many top frames of the context of ``stacks`` (state ``root``) its split by
        top frame takes, and the first bytes of the frames below them and whether those
        can finish at once (``ByteAutomaton.first_bits``).

        One frame, and one more while the frames below give back some of the context's
        own stacks: the next turn of a loop (after one item of c's ``ws``, a whitespace
        character or a comment, the loop's frame calls an item again).  With the loop's frame in the
        top, the frames below start after the loop, so the walks from below do not go
        through every whitespace token again, once per context; and the loop's split is
        shared by every context with the loop on top, as the item's was.  Such frames
        below accept a byte the context does, which is checked first (no state built)."""
        automaton = self._automaton
        frames = 1
        bits, bottom = automaton.first_bits(stacks[0][:-1])
        firsts = automaton.allowed_bits(root)
        own = set(stacks)
        while not bottom and bits & firsts and frames + 2 < len(stacks[0]):
            again = automaton.state_of([stacks[0][:-frames]])
            if not any(s in own for s in again.stacks):
                break
            frames += 1
            bits, bottom = automaton.first_bits(stacks[0][:-frames])
        return frames, bits, bottom

    def _top_split(self, top_key: Stack) -> _TopSplit | None:
        """The split of a context of one frame, with its handover nodes; ``None`` if
        its walk passes ``short_walk`` nodes and, at its pace, would pass ``wide``
        (:class:`TopPace`; the context is then split whole)."""
        automaton = self._automaton
        index = self._index
        tuning = self._tuning
        root = automaton.intern(frozenset(_stacks_of(top_key)))
        if root.bottom:
            return None
        handover: list[int] = []
        short, more = min(tuning.short_walk, tuning.wide), TopPace(self, root).more
        walked = walk_all(index.trie, automaton, root, short, more, tuning, handover)
        if walked is None:
            return None
        return _TopSplit(index.narrow_context(walked[0], walked[1], ()), tuple(handover))

    def _projected_walk(self, root: ByteState, at: int, visited: int = 0) -> float:
        """The trie nodes a walk from ``root`` would visit in all, at its pace when its
        first ``visited`` visits (``short_walk`` if 0) have brought it to node ``at``.

        The walk goes through the subtrees of the bytes ``root`` accepts (the whole trie
        if ``root`` holds the bottom marker) in preorder, so the nodes before ``at`` in
        those subtrees are the part it has passed (visited or skipped).  A walk that
        passed little of them would pass ``wide`` too: it stops for a wide split at once.
        """
        trie = self._index.trie
        end = trie.end
        if root.bottom:
            passed, total = at, len(end)
        else:
            passed = total = 0
            root_child = trie.root_child
            bits = self._automaton.allowed_bits(root)
            while bits:
                low = bits & -bits
                bits ^= low
                node = root_child[low.bit_length() - 1]
                if node >= 0:
                    total += end[node] - node
                    passed += end[node] - node if end[node] <= at else max(0, at - node)
        tuning = self._tuning
        visits = visited or min(tuning.short_walk, tuning.wide)
        return visits * total / max(passed, 1)

    def _wide_split(self, key: Stack, canon: tuple[object, ...] | None) -> _Context:
        root = self._automaton.intern(frozenset(_stacks_of(key)))
        wide, depth = self._wide_contexts, _key_depth(key)
        # a joined key's tokens decided as by the last one's walk: its context (_keywalk.py)
        same = None if canon else wide.before_walk(root, depth, partial(self._follow_of, key))
        if same is not None:
            return same
        if root.bottom:
            tuning = self._tuning
            gap, thin, most = tuning.level_gap, tuning.thin_levels, tuning.max_tail_tokens
            split = vector_walk(self._index.trie, self._automaton, root, most, -1, gap, thin)
        else:
            split = self._walk_by_first_byte(root)
        # tails the frames below never read: worth finding out when some token has
        # several (its context can finish at several points of it, as mid-word)
        pairs = len(split.handover_positions)
        follow = self._follow_of(key) if pairs > len(split.uncertain) else -1
        return wide.context(split, follow, depth, canon, root)  # (the same walk: _keywalk.py)

    def _walk_by_first_byte(self, root: ByteState) -> WideSplit:
        """:func:`vector_walk` of ``root`` (not holding the bottom marker), reusing the
        verdicts on the subtree of a first byte ``b`` already walked from the same state
        after ``b`` (``docs/masks.md``, "Suffixes by first byte")."""
        automaton = self._automaton
        trie = self._index.trie
        tuning = self._tuning
        reused: dict[int, tuple[WideSplit, int]] = {}  # id of a kept walk -> it, its bytes
        after: dict[ByteState, int] = {}  # state after the first byte -> those bytes
        missing = 0
        # a joined key's first bytes with inside tokens only: all accepted (_keywalk.py)
        free = inside_only(self._keys, root, self._index.slices, automaton, reused)
        with self._lock:
            for c in [c & ~free for c in automaton.classes(root) if c & ~free]:
                byte = (c & -c).bit_length() - 1
                known = None
                if self._within:
                    # a kept state deciding every token as the one after ``byte`` does
                    # (found without stepping to that state when it is a chain's)
                    sig = signature_after(automaton, root, byte, self._test_chains)
                    same = self._within.get(sig) if sig is not None else None
                    if same is not None:
                        known = self._suffixes.get(same)
                if known is not None:
                    assert same is not None
                    child = same
                    self.within_reused += 1
                else:
                    after_byte = automaton.step(root, byte)
                    assert after_byte is not None
                    child = after_byte
                    known = self._suffixes.get(child)
                    if known is None and self._within:
                        # kept under the first state of its signature (_within.py)
                        child = home_state(self._within, automaton, child, self._test_chains)
                        known = self._suffixes.get(child)
                todo = c
                if known is not None:
                    self._suffixes.move_to_end(child)
                    for bits, walked in reversed(known):
                        got = todo & bits
                        if got:
                            todo ^= got
                            _, had = reused.get(id(walked), (walked, 0))
                            reused[id(walked)] = (walked, had | got)
                if todo:
                    missing |= todo
                    after[child] = after.get(child, 0) | todo
        # a first byte alone in its class: its tokens by their second byte (docs/masks.md)
        seconds: list[tuple[int, _Chunk]] = []
        spans: list[tuple[WideSplit, int, int]] = []  # from a walk kept by second byte
        stepped: list[npt.NDArray[np.int64]] = []  # accepted, stepped one by one
        for child, bits in list(after.items()) if self._second.kept else ():
            if bits & (bits - 1):
                continue
            with self._lock:
                under = self._second.pieces(
                    trie, automaton, root, bits.bit_length() - 1, child, tuning.second_tokens
                )
            if under is not None:
                seconds += under[0]
                spans += under[1]
                stepped += under[2]
                missing ^= bits
                del after[child]  # not walked: not kept under it
                self.second_reused += 1
        if len(reused) <= bool(free) and not seconds:  # (only inside_only's: walk whole)
            split = self._sliced_walk(root, -1)
            self._keep_walk(split, after)
            return split
        self.parts_reused += 1
        sources = list(reused.values())
        if missing:
            split = self._sliced_walk(root, missing)
            self._keep_walk(split, after)
            sources.append((split, missing))
        # the accepted flags, copied span by span from the walks the pieces come from
        # (each piece is its walk's tokens under its bytes' span of sorted positions)
        flags = np.zeros(len(trie.sorted_bytes), dtype=np.bool_)
        for walked, bits in sources:
            spans += [(walked, *trie.first_byte_span(a, b)) for a, b in byte_runs(bits)]
        for walked, a, b in spans:
            if walked.flags is not None:
                flags[a:b] = walked.flags[a:b]
            else:
                listed = walked.accepted
                flags[listed[np.searchsorted(listed, a) : np.searchsorted(listed, b)]] = True
        for at in stepped:
            flags[at] = True
        pieces = seconds
        for walked, bits in sources:
            pieces += _cut_by_runs(trie, walked, bits, False)
        pieces.sort(key=lambda piece: piece[0])
        order = [chunk for _, chunk in pieces]
        uncertain = np.concatenate([c[1] for c in order])
        empty = uncertain[:0]
        if len(uncertain) and len(uncertain) <= tuning.max_tail_tokens:
            handover = (
                np.concatenate([c[2] for c in order]),
                np.concatenate([c[3] for c in order]),
            )
        else:
            handover = (empty, empty)
        # the accepted positions are found from the flags only if read (a mask packs them)
        return WideSplit(None, uncertain, *handover, flags)

    def _sliced_walk(self, root: ByteState, first_bytes: int) -> WideSplit:
        """:func:`vector_walk` of ``root`` (not holding the bottom marker) over the
        tokens starting with ``first_bytes``; under the first bytes where a slice's
        inside tokens are all accepted, only its rest is walked (``docs/masks.md``,
        "Slices")."""
        automaton = self._automaton
        trie = self._index.trie
        tuning = self._tuning
        limit = tuning.max_tail_tokens
        # a counted repetition is followed to its end with at most the longest token's
        # length + 3 characters left (with more, its forms repeat: it is open)
        reach = min(tuning.count_chain, trie.max_depth + 3)
        for i, piece in enumerate(self._index.slices):
            with self._lock:
                loops = self._loops.setdefault(i, {})
                opens = self._opens.setdefault(i, {})
                merged = self._merged.setdefault(i, {})
                counts = self._counts.setdefault(i, {})
                links = self._links.setdefault(i, {})
                items = self._items.setdefault(i, {})
                for kept in (loops, opens, merged, counts, links):
                    if len(kept) > self._max_contexts:
                        kept.clear()
            covers = Covers(
                automaton,
                piece.dfa,
                loops,
                tuning.slice_pairs,
                self._lock,
                opens,
                partial(self._same_form, forms={}),  # forms kept for this split
                merged,
                tuning.open_chain,
                counts,
                reach,
                links,
                reach >= trie.max_depth,  # a chain that long is open (Covers.chained)
                items,
            )
            # a state covering the class accepts every inside token (_keywalk.py); a counted
            # repetition with few characters left: by counting them (sliced_walk), not forms
            if i == 0 and self._keys.joined_root(root):
                covered = first_bytes & piece.dfa.first & automaton.allowed_bits(root)
            else:
                covered = 0 if covers.few_left(root) else covers.covered(root, first_bytes)
            budget = tuning.slice_nodes
            split = sliced_walk(
                trie, piece, automaton, root, limit, first_bytes, covered, covers, budget
            )
            if covers.stepped:
                self.inside_walks += 1
            if split is not None:
                self.sliced_walks += 1
                return split
        gap, thin = tuning.level_gap, tuning.thin_levels
        return vector_walk(trie, automaton, root, limit, first_bytes, gap, thin)

    def _same_form(
        self,
        a: ByteState,
        b: ByteState,
        forms: dict[ByteState, tuple[object, ...] | None] | None = None,
    ) -> bool:
        """Whether the states ``a`` and ``b`` have equal canonical forms (of their whole
        stacks, sorted: :func:`_group_key` at depth 0), so that they accept, reject and
        leave uncertain the same tokens (``docs/masks.md``, "Slices", open states).
        Signatures first (equal forms have equal signatures; most pairs asked differ
        there), kept per state and bounded like the contexts; the forms (up to some
        thousand ints each) are kept in ``forms`` when given (one wide split's)."""
        program = self._automaton.program
        sigs = self._state_sigs
        if forms is None:
            forms = {}
        if len(sigs) > self._max_contexts:
            sigs.clear()
        got: list[tuple[int, ...]] = []
        for state in (a, b):
            sig = sigs.get(state)
            if sig is None:
                key = _group_key(list(state.stacks), 0)
                sig = sigs[state] = _key_signature(key, program.kind, program.arg, program.rules)
            got.append(sig)
        if got[0] != got[1]:
            return False
        limit = self._tuning.max_wide_canonical
        both: list[tuple[object, ...] | None] = []
        for state in (a, b):
            if state in forms:
                both.append(forms[state])
            else:
                key = _group_key(list(state.stacks), 0)
                form = forms[state] = self._canonical(key, limit)
                both.append(form)
        return both[0] is not None and both[0] == both[1]

    def _keep_walk(self, split: WideSplit, after: dict[ByteState, int]) -> None:
        """Remember ``split`` under each state after a first byte, with the bytes that
        led there (not when its handover pairs were left out: too many uncertain
        tokens); a later wide split cuts its verdicts under those bytes from it."""
        tuning = self._tuning
        if len(split.uncertain) > tuning.max_tail_tokens or not tuning.max_suffixes:
            return
        with self._lock:
            within = self._within
            if len(within) > self._max_contexts:
                within.clear()
            for child, bits in after.items():
                if not bits & (bits - 1):  # a first byte alone in its class
                    self._second.keep(
                        self._index.trie, self._automaton, split, bits.bit_length() - 1, child
                    )
                # kept under the first state kept with its signature (_within.py)
                home = home_state(within, self._automaton, child, self._test_chains, keep=True)
                # a walk whose bytes the new one all walked again is superseded
                known = [part for part in self._suffixes.get(home, []) if part[0] & ~bits]
                known.append((bits, split))
                self._suffixes[home] = known[-tuning.max_suffixes :]
                self._suffixes.move_to_end(home)
            while len(self._suffixes) > tuning.max_suffixes:
                self._suffixes.popitem(last=False)

    def _canonical(self, key: Stack, limit: int) -> tuple[object, ...] | None:
        """The program reachable from the frames of ``key`` within the longest token's
        reach, renumbered; ``None`` if it has more than ``limit`` positions.

        Two contexts with equal canonical forms accept, reject and leave open the same
        tokens, whatever grammar they come from (``docs/masks.md``, "Canonical
        sharing").  Positions are visited by Dial's shortest paths over ``d(p)``, a
        lower bound of the bytes consumed before ``p`` is read: 0 at every frame, +1
        after a byte test, +0 into a called rule's alternatives, + the called rule's
        least length to the position after a call.  Splitting a token of ``n`` bytes
        reads a position only after at most ``n`` bytes (to test the next byte, or to
        close the state after the last one, which consumes nothing), so no token reads
        a position with ``d(p)`` above the longest token's length: such a position is
        numbered when referenced but described only as ``_FAR``.  A counted
        repetition ``x{0,255}`` then has one form at every remaining count above the
        longest token's length.  Positions are numbered in the order first referenced
        (the frames' positions first).

        The form is two flat tuples of ints (no tuple per position: what a form
        allocates is what the garbage collector counts): the key with each position
        replaced by its number, and each number's description in turn: ``_FAR``,
        ``_SIGNED_END``, a test's byte set then the next position's number, or
        ``_SIGNED_CALL`` minus the number of alternatives, their numbers, then the
        next position's number.
        """
        program = self._automaton.program
        kind = program.kind
        arg = program.arg
        rules = program.rules
        reach = self._index.trie.max_depth
        least = self._least
        ids: dict[int, int] = {}
        # per number: its head (_UNSEEN until described); once described, its next
        # number and (calls) where its alternatives' numbers start in `alt_numbers`
        head: list[int] = []
        after: dict[int, int] = {}
        alt_at: dict[int, int] = {}
        alt_numbers: list[int] = []
        frames: list[int] = []
        for p in key:
            if p >= 0:
                n = ids.get(p, -1)
                if n < 0:
                    n = ids[p] = len(head)
                    head.append(_UNSEEN)
                frames.append(n)
            else:
                frames.append(p)
        buckets: list[list[int]] = [[p for p in key if p >= 0]]
        d = 0
        while d < len(buckets):
            bucket = buckets[d]
            i = 0
            while i < len(bucket):  # calls add to the bucket being read
                p = bucket[i]
                i += 1
                n = ids[p]
                if head[n] != _UNSEEN:
                    continue
                k = kind[p]
                if k == END:
                    head[n] = _SIGNED_END
                    continue
                if k == TEST:
                    head[n] = arg[p]
                    e = d + 1
                else:
                    rule = arg[p]
                    alts = rules[rule]
                    head[n] = _SIGNED_CALL - len(alts)
                    alt_at[n] = len(alt_numbers)
                    for a in alts:
                        m = ids.get(a, -1)
                        if m < 0:
                            m = ids[a] = len(head)
                            head.append(_UNSEEN)
                        alt_numbers.append(m)
                    bucket.extend(alts)
                    got = least.get(rule, -1)
                    e = d + (got if got >= 0 else self._least_length(rule, 0))
                m = ids.get(p + 1, -1)
                if m < 0:
                    m = ids[p + 1] = len(head)
                    head.append(_UNSEEN)
                after[n] = m
                if len(head) > limit + 1:
                    return None
                if e <= reach:
                    while len(buckets) <= e:
                        buckets.append([])
                    buckets[e].append(p + 1)
            d += 1
        body: list[int] = []
        for n, h in enumerate(head):
            if h == _UNSEEN:
                body.append(_FAR)
            elif h == _SIGNED_END:
                body.append(h)
            elif h >= 0:
                body.append(h)
                body.append(after[n])
            else:
                body.append(h)
                start = alt_at[n]
                body.extend(alt_numbers[start : start + _SIGNED_CALL - h])
                body.append(after[n])
        return (tuple(frames), tuple(body))

    def _least_length(self, rule: int, depth: int) -> int:
        """A lower bound of the bytes of any string ``rule`` derives (memoised; a rule
        met again while its own bound is computed counts as 0, which keeps every bound
        a lower bound; past ``reach + 1`` every bound is as good as infinite)."""
        got = self._least.get(rule)
        if got is not None:
            return got
        program = self._automaton.program
        kind = program.kind
        alts = program.rules[rule]
        if any(kind[a] == END for a in alts):
            best = 0
        elif depth > _LEAST_DEPTH:
            return 0
        else:
            arg = program.arg
            self._least[rule] = 0
            best = self._index.trie.max_depth + 1
            for a in alts:
                total = 0
                p = a
                while kind[p] != END and total < best:
                    total += 1 if kind[p] == TEST else self._least_length(arg[p], depth + 1)
                    p += 1
                best = min(best, total)
        self._least[rule] = best
        return best

    def _entry_for(self, group: list[Stack], joined: bool = False) -> tuple[Stack, _Context]:
        """The context of ``group`` (stacks that differ only in their top frame; or,
        ``joined``, in their top two: their top two frames split wide, ``join_keys``).

        The context is the group's top frames, deeper while many tokens stay uncertain.
        Taking the group at once keeps, say, the alternatives of one character class
        (one stack per UTF-8 lead byte) in one split instead of one per alternative.
        """
        if joined:
            key = _group_key(group, 2)
            return key, self._context(key, joined=True)
        tuning = self._tuning
        depth = CONTEXT_DEPTH
        size = len(group[0])
        while True:
            if size <= depth:
                key = _group_key(group, 0)
                return key, self._context(key)
            key = _group_key(group, depth)
            found = self._cached_context(key)
            if found is not None:
                entry = found
            elif depth < CONTEXT_DEPTH + tuning.max_extra_depth and self._hands_over_early(key):
                depth += 1  # not split at this depth: see _hands_over_early
                continue
            else:
                entry = self._context(key, shallower=depth == CONTEXT_DEPTH)
            # a deeper wide context costs another whole-vocabulary pass, so a wide one
            # (numpy split, uncertain_tokens) is deepened only when far too open and
            # after it has served `deepen_after` masks (it pays off only for long runs)
            if depth >= CONTEXT_DEPTH + tuning.max_extra_depth:
                return key, entry
            if len(entry.uncertain) <= tuning.deepen_above:
                if len(entry.uncertain_tokens) <= tuning.many_uncertain_tokens:
                    return key, entry
                with self._lock:
                    used = self._uses.get(key, 0) + 1
                    if len(self._uses) >= self._max_contexts:
                        self._uses.clear()
                    self._uses[key] = used
                if used <= tuning.deepen_after:
                    return key, entry
            depth += 2

    def _hands_over_early(self, key: Stack) -> bool:
        """Whether the context ``key`` (not split yet) is to be taken one frame deeper
        before any split: its state accepts at most ``many_first_bytes`` first bytes and
        the tokens under those after which it holds the bottom marker number more than
        ``many_uncertain_tokens``.  Every such token it does not accept would be left
        uncertain (c's "whitespace, then the next statement or the block's end" after a
        statement: 10,878 of Qwen's tokens, checked through tails), while the frame
        below often decides them (``docs/masks.md``, "Deepening").  Memoised per key (bounded).
        """
        with self._lock:
            got = self._early.get(key)
        if got is not None:
            return got
        automaton = self._automaton
        trie = self._index.trie
        root = automaton.intern(frozenset(_stacks_of(key)))
        tuning = self._tuning
        bits = automaton.allowed_bits(root)
        early = False
        if not root.bottom and bits.bit_count() <= tuning.many_first_bytes:
            # cheap bound first: all the tokens under the first bytes (no stepping)
            if _tokens_under(trie, bits) > tuning.many_uncertain_tokens:
                handing = self._handing_bits(root)
                early = _tokens_under(trie, handing) > tuning.many_uncertain_tokens
        with self._lock:
            if len(self._early) >= self._max_contexts:
                self._early.clear()
            self._early[key] = early
        return early

    def _handing_bits(self, root: ByteState) -> int:
        """The first bytes after which ``root`` (not holding the bottom marker) holds it."""
        automaton = self._automaton
        handing = 0
        for c in automaton.classes(root):
            after = automaton.step(root, (c & -c).bit_length() - 1)
            if after is not None and after.bottom:
                handing |= c
        return handing

    def _finishes_widely(self, key: Stack) -> bool:
        """Whether the frames of the context ``key`` may finish at once, or after first
        bytes with more than ``shallow_at_once`` tokens under them (its wide split
        would leave those it does not accept uncertain)."""
        root = self._automaton.intern(frozenset(_stacks_of(key)))
        if root.bottom:
            return True
        trie = self._index.trie
        limit = self._tuning.shallow_at_once
        if _tokens_under(trie, self._automaton.allowed_bits(root)) <= limit:
            return False
        return _tokens_under(trie, self._handing_bits(root)) > limit

    def _serves_deeper(self, entry: _Context) -> bool:
        """Whether the split of a shallower context serves the deeper one (``docs/masks.md``,
        "Shallower shared contexts"): no uncertain subtrees, few uncertain tokens."""
        return len(entry.uncertain_tokens) <= self._tuning.shallow_uncertain and not (
            entry.uncertain
        )

    def _union_walk(
        self, groups: list[list[Stack]], words: Words, acc_lo: list[int], acc_hi: list[int]
    ) -> list[list[Stack]]:
        """Split the groups of a state with many groups as one context (``docs/masks.md``,
        "States of many groups"): the union of their contexts, walked once and kept
        like any context.  Its accepted bits go to ``words``; its uncertain subtrees are
        checked against the union of the groups' whole stacks and the tokens accepted
        go to ``acc_lo``/``acc_hi``.  Returns the groups left to split one by one: those
        split already (or whose top frame is, which is cheaper), those allowing many
        first bytes or holding the bottom marker in their context, or all of them when
        the union's walk would pass ``union_nodes`` trie nodes (or ``wide`` per group)."""
        tuning = self._tuning
        automaton = self._automaton
        index = self._index
        rest: list[list[Stack]] = []
        joined: list[Stack] = []
        count = 0
        with self._lock:
            for group in groups:
                if (
                    len(group[0]) <= CONTEXT_DEPTH
                    or _group_key(group, CONTEXT_DEPTH) in self._contexts
                    or _group_key(group, 1) in self._tops
                ):
                    # split already, or cheaply from its top frame's split
                    rest.append(group)
                    continue
                first = 0
                bottom = False
                for stack in group:
                    bits, pops = automaton.first_bits((BOTTOM,) + stack[-CONTEXT_DEPTH:])
                    first |= bits
                    bottom = bottom or pops
                if bottom or first.bit_count() > tuning.many_first_bytes:
                    rest.append(group)
                else:
                    joined.extend(group)
                    count += 1
        if count <= tuning.union_groups:
            return groups
        key = _group_key(joined, CONTEXT_DEPTH)
        entry = self._cached_context(key)
        if entry is None:
            with self._lock:
                if key in self._union_failed:
                    return groups
            root = automaton.intern(frozenset(_stacks_of(key)))
            # never more nodes than the groups' own walks could visit before going wide;
            # a walk that at its pace after `short_walk` nodes would pass that stops then
            budget = min(tuning.union_nodes, tuning.wide * count)
            short = min(tuning.short_walk, budget)

            def more(at: int = 0) -> int:
                if self._projected_walk(root, at) > budget:
                    return 0
                return budget - short

            piece, loops = self._narrow_slice()
            walked = walk_all(index.trie, automaton, root, short, more, tuning, None, piece, loops)
            if walked is None:
                with self._lock:
                    if len(self._union_failed) >= self._max_contexts:
                        self._union_failed.clear()
                    self._union_failed.add(key)
                return groups
            entry = index.narrow_context(walked[0], walked[1], tuple(walked[2]))
            self.union_walks += 1
            self._keep_context(key, entry)
        entry.add_to(words)
        if entry.uncertain:
            self._check_nodes(automaton.intern(frozenset(joined)), entry.uncertain, acc_lo, acc_hi)
        return rest

    def _state_below(self, frames: Stack) -> ByteState:
        """The state of the frames below a wide context (``ByteAutomaton.state_of``
        of them, a closure made again at each call), kept: two thirds of c's calls are
        for frames met at an earlier mask (the groups of one state, and the next
        tokens' states, share them)."""
        with self._lock:
            state = self._belows.get(frames)
        if state is None:
            state = self._automaton.state_of([frames])
            with self._lock:
                if len(self._belows) >= self._max_contexts:
                    self._belows.clear()
                self._belows[frames] = state
        return state

    def _tails_accepted(self, tails: Tails, below: ByteState) -> _Found:
        """The tokens with a tail that ``below`` (the state of the frames below a wide
        context) accepts: sparse words (the indices of their non-zero words, distinct,
        and those words), or, when more than ``sparse_tails``, their packed bits; either
        is ORed into a mask at once, with no range per token to pack again at each mask.
        Kept for the last ``max_tail_checks`` pairs: the groups of one state, and the
        states after the next tokens of a free text, often have the same frames below
        (``docs/masks.md``, "Tails")."""
        key = (id(tails), below)
        with self._lock:
            got = self._tail_checks.get(key)
            # the value holds `tails`, so no other object can have its id meanwhile
            if got is not None and got[0] is tails:
                self._tail_checks.move_to_end(key)
                return got[1]
        chosen = walk_sorted(self._automaton, below, tails.tails)
        positions = tails.positions_of(chosen) if chosen else []
        index = self._index
        found: _Found
        if len(positions) > self._tuning.sparse_tails:
            found = index.pack_ids(index.trie.sorted_ids[np.array(positions, dtype=np.int64)])
        else:
            found = index.sparse_ranges(positions, [p + 1 for p in positions])
        with self._lock:
            self._tail_checks[key] = (tails, found)
            while len(self._tail_checks) > self._tuning.max_tail_checks:
                self._tail_checks.popitem(last=False)
        return found

    def _check_nodes(
        self, full: ByteState, nodes: tuple[int, ...], acc_lo: list[int], acc_hi: list[int]
    ) -> None:
        """Walk the uncertain subtrees ``nodes`` of a split from ``full``, the state of the
        whole stacks; the sorted-position ranges of the tokens it accepts go to
        ``acc_lo``/``acc_hi``."""
        trie = self._index.trie
        automaton = self._automaton
        for node in nodes:
            depth = trie.depth[node]
            start = full
            if depth > 1:
                prefix = trie.sorted_bytes[trie.tok_lo[node]][: depth - 1]
                fed = automaton.feed(full, prefix)
                if fed is None:
                    continue
                start = fed
            got = walk(trie, automaton, start, node, trie.end[node], tuning=self._tuning)
            assert got is not None
            acc_lo.extend(got[0])
            acc_hi.extend(got[1])

    def _compute_mask(self, state: ByteState) -> Words:
        index = self._index
        trie = index.trie
        automaton = self._automaton
        words: Words = index.always.copy()
        if state.complete:
            words |= index.eos
        seen: set[tuple[int, ...]] = set()
        # the splits' bits kept as a few Python ints, ORed in at the end in one numpy call
        few: dict[int, int] = {}
        extra_lo: list[int] = []
        extra_hi: list[int] = []
        keys, todo = join_keys(_groups(state.stacks), self._keys, automaton.allowed_bits(state))
        if len(todo) > self._tuning.union_groups:
            todo = self._union_walk(todo, words, extra_lo, extra_hi)
        for i, group in enumerate(keys + todo):
            key, entry = self._entry_for(group, i < len(keys))
            if key not in seen:
                seen.add(key)
                entry.add_to(words, few)
            if entry.tails is not None:
                # the frames below the context's: one state, shared by every tail
                below = self._state_below(group[0][: -entry.depth])
                found = self._tails_accepted(entry.tails, below)
                if isinstance(found, tuple):
                    word_index, word_bits = found
                    if len(word_index):
                        # distinct word indices: one fancy-indexed OR is exact
                        words[word_index] |= word_bits
                else:
                    words |= found
            elif entry.uncertain_tokens:
                full = automaton.intern(frozenset(group))
                sorted_bytes = trie.sorted_bytes
                tokens = entry.uncertain_tokens
                for i in walk_sorted(automaton, full, [sorted_bytes[p] for p in tokens]):
                    extra_lo.append(tokens[i])
                    extra_hi.append(tokens[i] + 1)
            if entry.uncertain:
                full = automaton.intern(frozenset(group))
                self._check_nodes(full, entry.uncertain, extra_lo, extra_hi)
        if extra_lo and not index.few_bits(extra_lo, extra_hi, few):
            word_index, word_bits = index.sparse_ranges(extra_lo, extra_hi)
            words[word_index] |= word_bits
        if few:
            # distinct word indices: one fancy-indexed OR is exact
            words[list(few)] |= np.array(list(few.values()), dtype=np.uint32)
        return words

    # -- serialisation ---------------------------------------------------------
    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the context splits computed so far to ``path`` (a ``.npz`` archive, at
        exactly that path whatever its suffix; :meth:`load` reads it)."""
        with self._lock:
            items = list(self._contexts.items())
        keys = [np.array(k, dtype=np.int64) for k, _ in items]
        arrays: dict[str, npt.NDArray[Any]] = {
            "key_lengths": np.array([len(k) for k in keys], dtype=np.int64),
            "keys": np.concatenate(keys) if keys else np.zeros(0, dtype=np.int64),
            "accepted": (
                np.stack([e.to_words(self._index.nwords) for _, e in items])
                if items
                else np.zeros((0, self._index.nwords), dtype=np.uint32)
            ),
            "uncertain_lengths": np.array([len(e.uncertain) for _, e in items], dtype=np.int64),
            "uncertain": np.array([n for _, e in items for n in e.uncertain], dtype=np.int64),
            "depths": np.array([e.depth for _, e in items], dtype=np.int64),
            "token_lengths": np.array([len(e.uncertain_tokens) for _, e in items], dtype=np.int64),
            "uncertain_tokens": np.array(
                [n for _, e in items for n in e.uncertain_tokens], dtype=np.int64
            ),
        }
        header: dict[str, npt.NDArray[Any]] = {
            "format": np.array(_FORMAT),
            "grammar": np.array(self._grammar.fingerprint),
            "vocabulary": np.array(self._vocabulary.fingerprint),
            "context_depth": np.array(CONTEXT_DEPTH),
            "digest": np.array(digest(arrays)),
        }
        write_npz(path, {**header, **arrays})

    @classmethod
    def load(
        cls,
        path: str | os.PathLike[str],
        grammar: Grammar,
        vocabulary: Vocabulary,
        *,
        index: VocabularyIndex | None = None,
    ) -> CompiledGrammar:
        """Read a file written by :meth:`save` for this grammar and vocabulary.

        Raises:
            LoadError: the file cannot be read, is truncated or corrupted (its digest
                does not match), is not a saved compiled grammar, was written with
                another file format or context depth, or was saved for another
                grammar or vocabulary (fingerprints differ).
        """
        from gbnfkit._grammar import Grammar as GrammarType

        expect(path, (str, os.PathLike), "path")
        expect(grammar, GrammarType, "grammar")
        expect(vocabulary, Vocabulary, "vocabulary")
        where = str(path)
        fields = read_npz(path, where)
        version = str(fields.get("format", ""))
        if not version.startswith("gbnfkit-compiled-"):
            raise LoadError("not a gbnfkit compiled grammar file", path=where)
        if version != _FORMAT:
            raise LoadError(
                f"file format {version!r}; this version of gbnfkit reads {_FORMAT!r} "
                "(compile the grammar again)",
                path=where,
            )
        missing = sorted(set(SAVED_FIELDS) - set(fields))
        if missing:
            raise LoadError(f"fields missing: {', '.join(missing)}", path=where)
        depth_saved = scalar_int(fields["context_depth"], "context_depth", where)
        if depth_saved != CONTEXT_DEPTH:
            raise LoadError(
                f"saved with context depth {depth_saved}; this version of gbnfkit uses "
                f"{CONTEXT_DEPTH} (compile the grammar again)",
                path=where,
            )
        if str(fields["grammar"]) != grammar.fingerprint:
            raise LoadError("saved for another grammar", path=where)
        if str(fields["vocabulary"]) != vocabulary.fingerprint:
            raise LoadError("saved for another vocabulary", path=where)
        arrays = {name: fields[name] for name in ARRAY_FIELDS}
        if str(fields["digest"]) != digest(arrays):
            raise LoadError("the file is corrupted (its digest does not match)", path=where)
        compiled = cls(grammar, vocabulary, index=index)
        check_arrays(arrays, compiled._index, compiled._automaton, _SEPARATOR, where)
        try:
            compiled._load_contexts(arrays)
        except (IndexError, ValueError, KeyError, AssertionError, TypeError) as exc:
            # a digest collision or a hand-made file: never a half-filled cache
            compiled._contexts.clear()
            raise LoadError(f"inconsistent contents ({exc})", path=where) from None
        return compiled

    def _load_contexts(self, fields: dict[str, npt.NDArray[Any]]) -> None:
        keys = fields["keys"].tolist()
        unc = fields["uncertain"].tolist()
        unc_tokens = fields["uncertain_tokens"].tolist()
        accepted = fields["accepted"].astype(np.uint32)
        automaton = self._automaton
        trie = self._index.trie
        k = u = t = 0
        with self._lock:
            for row, (klen, ulen, tlen, depth) in enumerate(
                zip(
                    fields["key_lengths"].tolist(),
                    fields["uncertain_lengths"].tolist(),
                    fields["token_lengths"].tolist(),
                    fields["depths"].tolist(),
                    strict=True,
                )
            ):
                key = tuple(keys[k : k + klen])
                positions = tuple(unc_tokens[t : t + tlen])
                tails = None
                if positions:
                    # the split may be of a shallower context than its key (same stacks)
                    top = _group_key(_stacks_of(key), depth)
                    root = automaton.intern(frozenset(_stacks_of(top)))
                    tails = tails_by_stepping(
                        trie, automaton, root, positions, self._tuning.max_tail_tokens
                    )
                entry = _Context.of(
                    accepted[row].copy(), tuple(unc[u : u + ulen]), positions, tails, depth
                )
                self._contexts[key] = entry
                k += klen
                u += ulen
                t += tlen
