"""The knobs of the mask computation, in one frozen object (see ``docs/masks.md``).

No knob changes a mask: each only moves work between compile time, the first masks of a
context and later masks.  The defaults are measured choices (``bench/masks.py``); tests
pass extreme values to force every path (all splits wide, every context deepened...).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DEFAULT_TUNING", "Tuning"]


@dataclass(frozen=True)
class Tuning:
    """How contexts are split (``docs/masks.md`` explains each heuristic).

    Attributes:
        many_first_bytes: a context allowing more first bytes than this is free text:
            it skips the trie walk and goes straight to a shared or numpy split.
        short_walk: trie nodes a narrow context's walk may visit before the split
            looks for a shared (canonical) split.
        wide: trie nodes a walk may visit in all; past that the context is split by
            one numpy pass over the trie (``vector_walk``).
        max_canonical: program positions a context may reach (within the longest
            token's length) and still be shared between grammars by its canonical
            form, when a narrow walk asks for a shared split.
        max_wide_canonical: the same, for a context about to be split wide (a whole
            trie pass costs far more than a larger canonical form).
        deepen_above: a narrow split leaving more uncertain subtrees than this is
            replaced by one two frames deeper.
        many_uncertain_tokens: a wide split leaving more uncertain tokens than this
            is deepened too, but only after it has served ``deepen_after`` masks.
        deepen_after: see ``many_uncertain_tokens``.
        max_extra_depth: contexts are deepened at most this many frames.
        shallow_uncertain: a wide context first tries the split of its top frames
            but one (shared more widely); it is used if it leaves at most this many
            uncertain tokens.
        max_tail_tokens: wide splits leaving more uncertain tokens than this check
            them one by one instead of grouped by tail.
        max_suffixes: states after a first byte whose part of a wide split a
            compiled grammar keeps, to reuse in the wide splits of other contexts
            that reach the same state after that byte (0: none).
        slice_pairs: a state is found to loop on a slice's class only if exploring its
            characters meets at most this many (UTF-8 DFA state, automaton state)
            pairs (``docs/masks.md``, "Slices").
        top_frame_nodes: a narrow context is split from the split of its top frame
            alone (shared by every context with that top frame) when the tokens to
            walk from the frames below, after the points where the top frame can
            finish, are in subtrees of at most this many trie nodes in all (0: never).
        jump_bytes, jump_subtree: a trie walk below a node with more than
            ``jump_subtree`` nodes under it, in a state that accepts at most
            ``jump_bytes`` bytes next (and no bottom marker on the path), visits only
            the children with those bytes instead of trying every child.
        union_groups: a state with more than this many groups whose contexts are not
            split yet (few first bytes, no bottom marker, no known top-frame split)
            splits them as one context, the union of theirs (``docs/masks.md``,
            "States of many groups").
        union_nodes: the trie nodes that union's walk may visit (and at most ``wide``
            per group); past that its groups are split one by one.
        max_tail_checks: the (tails, state of the frames below) pairs whose accepted
            tokens a compiled grammar keeps (``docs/masks.md``, "Tails").
        slice_nodes: under a first byte a slice does not cover, a wide split walks
            the inside tokens node by node, accepting at once those under a node where
            the slice covers the next byte, while it examines at most this many trie
            children in all (``docs/masks.md``, "Slices"); past that those first
            bytes are walked whole as before (0: never).
        sparse_tails: above this many tokens accepted through tails, such an entry
            is kept as packed bits rather than sparse words (either is ORed into a mask
            at once).
        slice_subtree: a narrow walk tries a slice only below nodes with more than
            this many trie nodes under them (and more than ``jump_subtree``;
            ``docs/masks.md``, "Narrow walks through slices"; a value above the trie's
            size turns it off).
        level_gap: a wide split's numpy pass walks the nodes of one trie level under
            two runs of first bytes in one call when at most this many nodes of that
            level lie between them (walked dead: cheaper than another call).
        follow_calls: the calls of rules a compiled grammar may read to find what
            can follow a wide context (its tails starting with anything else are
            left out, ``docs/masks.md``, "Tails"); past that none are left out.
            Calls in tail position read nothing after them and are not counted.
        open_chain: a state whose characters of a slice's class all lead to one
            other state is open on the class when that one is, checked at most this
            many states down such a chain (the fixed copies of a counted ``x{m,n}``
            before its optional ones; ``docs/masks.md``, "Slices", open states).
        thin_levels: a wide split's numpy pass stops at the first depth from which
            every trie level holds at most this many nodes, and walks those levels
            node by node in one Python loop (``TokenTrie.thin_tail``; ``docs/masks.md``,
            "Computing a split"): a numpy call costs what tens of nodes do there.
        count_chain: a wide split of a state that is a counted repetition of a slice's
            class with at most this many characters left (``x{0,k}``), and at most the
            longest token's length + 3 (with more left its forms repeat: it is open),
            decides the inside tokens by how many characters they start, after
            following the chain of its ``k`` states, each explored once per grammar
            (about a trie level's stepping per state; later counts read it).  When it
            is at least the longest token's length, a chain longer than that proves
            its head open without forms (``docs/masks.md``, "Slices", few characters
            left; 0: never followed).
        early_walk, early_wide: a narrow walk first measures its pace after
            ``early_walk`` nodes, and stops for a wide split at once if at that pace
            it would visit more than ``early_wide`` nodes (far more than ``wide``:
            the pace of a walk's first nodes says less than after ``short_walk``;
            ``docs/masks.md``, "Computing a split").
        shallow_at_once: when a context's narrow walk has gone wide, its shallower
            context (not split yet) is split wide at once, without a narrow walk, if
            the tokens under the first bytes after which its frames may finish number
            at most this (``docs/masks.md``, "Shallower shared contexts"); past it the
            wide split would leave too many of them uncertain, and it is walked
            narrow first as before.
        second_tokens: a wide split takes the verdicts under a first byte alone in
            its class from walks kept by that byte and the state after a second byte
            when the tokens under it that no kept walk decides (stepped one by one)
            number at most this (``docs/masks.md``, "Suffixes by first byte"); else
            that byte is walked.
        chain_item_rules: the rules a counted repetition's item may reach (a JSON
            string's character reaches a dozen: its classes and escapes) for its
            contexts to be taken to one key per count (``docs/masks.md``, "Counted
            repetitions, one key per count"); past it they are kept as they are.
        key_positions: the calls one question of whether a key's stacks cover a
            string's class explores (``_keywalk.Universal``: a schema's known names,
            one call per prefix: npmpackagejsonlintrc's 104 names take 385); past it
            the key is split group by group (0: never joined). A question that reaches
            the bound costs in proportion to it (asked at string values too, as it
            once was, 4,096 made a Snowplow string value's first mask 9 -> 16 ms
            compiled; it is asked at key positions only now, by ``join_keys``).
        fixed_top_positions: program positions a top frame's canonical form may have
            and still be kept (``prewarm``) and looked up (a key that passes the
            filter) as a fixed top split (``docs/masks.md``, "Fixed top splits"): the
            converter's whitespace, string, number and literal frames have 1-77; its
            object members 92-160, whose forms cost more than their walks.
        key_alike_nodes: a joined key's root is handed the last joined root's context
            before any walk when every token gets the same verdict from both
            (``_keywalk.alike_roots``: the states after each first byte alike, or
            their children compared in turn, at most this many trie nodes: an
            escape's few tokens take a handful); past it, or 0, its split is made.
    """

    many_first_bytes: int = 48
    short_walk: int = 1_500
    wide: int = 4_000
    max_canonical: int = 256
    max_wide_canonical: int = 1024
    deepen_above: int = 24
    many_uncertain_tokens: int = 4_096
    deepen_after: int = 8
    max_extra_depth: int = 8
    shallow_uncertain: int = 16_384
    max_tail_tokens: int = 16_384
    max_suffixes: int = 16
    slice_pairs: int = 64
    top_frame_nodes: int = 1_500
    jump_bytes: int = 8
    jump_subtree: int = 32
    union_groups: int = 16
    union_nodes: int = 32_000
    max_tail_checks: int = 64
    slice_nodes: int = 2_000
    sparse_tails: int = 256
    slice_subtree: int = 32
    level_gap: int = 1_024
    follow_calls: int = 256
    open_chain: int = 8
    thin_levels: int = 64
    count_chain: int = 256
    early_walk: int = 400
    early_wide: int = 32_000
    shallow_at_once: int = 1_024
    second_tokens: int = 64
    chain_item_rules: int = 64
    key_positions: int = 1_024
    fixed_top_positions: int = 80
    key_alike_nodes: int = 64


DEFAULT_TUNING = Tuning()
