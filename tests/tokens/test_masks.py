"""Token masks are exact: fast masks equal the character engine's verdict, bit for bit."""

# shared data: conformance/gbnf.jsonl

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gbnfkit
from gbnfkit import GrammarError, InputRejected, LimitError
from gbnfkit._grammar import Grammar
from gbnfkit.engine._state import State
from gbnfkit.tokens._tuning import Tuning
from gbnfkit.tokens._vocabulary import Vocabulary

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared"
CONFORMANCE = SHARED / "conformance" / "gbnf.jsonl"


def _records() -> list[dict[str, object]]:
    out = []
    for line in CONFORMANCE.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record["grammar_error"] is None:
            out.append(record)
    return out


def _grammar(record: dict[str, object]) -> Grammar | None:
    try:
        return Grammar.from_gbnf(str(record["grammar"]))
    except (GrammarError, LimitError):
        return None


# grammars this parser refuses are covered by tests/grammar; masks need a grammar
RECORDS = [r for r in _records() if _grammar(r) is not None]


def synthetic_vocabulary(extra_text: str = "", seed: int = 0) -> Vocabulary:
    """Single bytes, UTF-8 fragments, random strings, tokens straddling characters.

    Also: an empty text token (always allowed), a ``None`` token, a special token,
    an EOS token and padding ids.
    """
    rng = random.Random(seed)
    tokens: list[bytes | None] = [bytes([b]) for b in range(256)]
    alphabet = "abcxyz019 \n\t\"'{}[],:-+*/()=éüñ中文あ😀𐍈\\" + extra_text
    for ch in "é中😀あ𐍈" + extra_text:
        data = ch.encode("utf-8")
        for k in range(1, len(data)):
            tokens.append(data[:k])
            tokens.append(data[k:])
    for _ in range(160):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(2, 6)))
        data = text.encode("utf-8")
        cut_lo = rng.randint(0, min(2, len(data) - 1))
        cut_hi = len(data) - rng.randint(0, 2)
        piece = data[cut_lo:cut_hi] if cut_hi > cut_lo else data
        tokens.append(piece)
    for word in ("true", "false", "null", '":', '",', '"}', "}\n", "hello", " world"):
        tokens.append(word.encode())
    seen: set[bytes] = set()
    unique: list[bytes | None] = []
    for tok in tokens:
        assert tok is not None
        if tok not in seen:
            seen.add(tok)
            unique.append(tok)
    unique.append(b"")  # an empty text token
    unique.append(None)  # an id with no text
    unique.append(b"<|special|>")
    unique.append(None)  # EOS
    special = len(unique) - 2
    eos = len(unique) - 1
    return Vocabulary(
        unique, eos_token_ids=[eos], special_token_ids=[special], size=len(unique) + 5
    )


def reference_mask(state: State, vocabulary: Vocabulary) -> np.ndarray:
    """Feed every token's bytes to the character engine (the definition of allowed)."""
    out = np.zeros(vocabulary.size, dtype=bool)
    for i in range(vocabulary.size):
        data = vocabulary.token_bytes(i)
        if i in vocabulary.eos_token_ids:
            out[i] = state.is_complete and not state.pending_bytes
            continue
        if data is None or i in vocabulary.special_token_ids:
            continue
        try:
            state.feed(data)
        except InputRejected:
            continue
        out[i] = True
    return out


def fast_mask(matcher: gbnfkit.Matcher, size: int) -> np.ndarray:
    bitmask = gbnfkit.allocate_bitmask(1, size)
    bitmask[:] = 0
    matcher.fill_bitmask(bitmask)
    bits = np.unpackbits(bitmask[0].view(np.uint8), bitorder="little")[:size].astype(bool)
    ids = matcher.allowed_token_ids()
    assert np.array_equal(np.flatnonzero(bits), ids)
    return bits


def random_walk(
    grammar: Grammar,
    vocabulary: Vocabulary,
    rng: random.Random,
    steps: int,
    tuning: Tuning | None = None,
) -> int:
    """Walk ``steps`` random allowed tokens, comparing masks at every step; returns steps done."""
    compiled = gbnfkit.CompiledGrammar(grammar, vocabulary, tuning=tuning or Tuning())
    matcher = compiled.matcher()
    state = grammar.start()
    done = 0
    for _ in range(steps):
        expected = reference_mask(state, vocabulary)
        got = fast_mask(matcher, vocabulary.size)
        diff = np.flatnonzero(expected != got)
        assert not diff.size, [
            (int(i), vocabulary.token_bytes(int(i)), bool(expected[i])) for i in diff[:5]
        ]
        for i in rng.sample(range(vocabulary.size), 12):
            assert matcher.is_allowed(i) == bool(expected[i])
        text_ids = [int(i) for i in np.flatnonzero(expected) if i not in vocabulary.eos_token_ids]
        if not text_ids:
            break
        token = rng.choice(text_ids)
        assert matcher.accept_token(token)
        state = state.feed(vocabulary.token_bytes(token) or b"")
        done += 1
    return done


@pytest.mark.parametrize("record", RECORDS, ids=[str(r["id"]) for r in RECORDS])
def test_conformance_grammar_random_walk(record: dict[str, object]) -> None:
    grammar = _grammar(record)
    assert grammar is not None
    text = "".join(str(c["input"]) for c in record["cases"])  # type: ignore[union-attr]
    extra = "".join(sorted(set(text)))[:40]
    vocabulary = synthetic_vocabulary(extra, seed=len(str(record["id"])))
    rng = random.Random(str(record["id"]))
    random_walk(grammar, vocabulary, rng, steps=6)


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(RECORDS), st.randoms(use_true_random=False), st.integers(0, 3))
def test_random_walks_property(record: dict[str, object], rng: random.Random, seed: int) -> None:
    grammar = _grammar(record)
    assert grammar is not None
    vocabulary = synthetic_vocabulary(seed=seed)
    # every split wide (numpy) and deepened at once, or the defaults
    tuning = Tuning(wide=0, deepen_above=0) if seed % 2 else Tuning()
    random_walk(grammar, vocabulary, rng, steps=10, tuning=tuning)


def test_eos_only_when_complete_and_special_never() -> None:
    grammar = Grammar.from_gbnf('root ::= "ab" | "abc"')
    vocabulary = synthetic_vocabulary()
    eos = next(iter(vocabulary.eos_token_ids))
    special = next(iter(vocabulary.special_token_ids - vocabulary.eos_token_ids))
    matcher = gbnfkit.compile(grammar, vocabulary).matcher()
    assert not matcher.is_allowed(eos)
    with pytest.raises(InputRejected) as early:
        matcher.accept_token(eos)
    assert early.value.token_id == eos and "before the text is complete" in str(early.value)
    assert not matcher.is_allowed(special)
    with pytest.raises(InputRejected) as refused:
        matcher.accept_token(special)
    assert refused.value.token_id == special and "special token" in str(refused.value)
    assert matcher.steps == 0
    matcher.accept_text("ab")
    assert matcher.is_allowed(eos)
    assert eos in matcher.allowed_token_ids()
    assert matcher.accept_token(eos)
    assert matcher.is_terminated
    assert list(matcher.allowed_token_ids()) == [eos]
    padding = vocabulary.size - 1
    assert vocabulary.token_bytes(padding) is None
    assert padding not in gbnfkit.compile(grammar, vocabulary).matcher().allowed_token_ids()


def _walk_compiled(
    compiled: gbnfkit.CompiledGrammar, grammar: Grammar, rng: random.Random, steps: int
) -> None:
    vocabulary = compiled.vocabulary
    matcher = compiled.matcher()
    state = grammar.start()
    for _ in range(steps):
        expected = reference_mask(state, vocabulary)
        got = fast_mask(matcher, vocabulary.size)
        assert np.array_equal(expected, got), np.flatnonzero(expected != got)[:5]
        choices = [int(i) for i in np.flatnonzero(expected) if i not in vocabulary.eos_token_ids]
        if not choices:
            return
        token = rng.choice(choices)
        assert matcher.accept_token(token)
        state = state.feed(vocabulary.token_bytes(token) or b"")


@pytest.mark.parametrize("name", ["json", "arithmetic", "c", "chess", "list", "english"])
def test_builtin_grammars_both_walk_kinds(name: str) -> None:
    """Contexts split by numpy or by trie walks agree with the engine."""
    grammar = Grammar.builtin(name)
    vocabulary = synthetic_vocabulary("ABCDEFGHIJKLMNOPQRSTUVWXYZ.!?;#<>&|%", seed=7)
    tunings = (
        Tuning(wide=0),
        Tuning(wide=10**9, many_first_bytes=256),
        # every walk asks for a shared split at its first node, then resumes; jumps always
        Tuning(short_walk=0, jump_bytes=256, jump_subtree=0),
        # walks pause after 4 nodes; those whose pace would pass 16 go wide, others resume
        Tuning(short_walk=4, wide=16),
        # every context that hands over after its first byte is taken deeper first
        Tuning(many_uncertain_tokens=0),
        Tuning(),
    )
    for tuning in tunings:
        compiled = gbnfkit.CompiledGrammar(grammar, vocabulary, tuning=tuning)
        _walk_compiled(compiled, grammar, random.Random(name), steps=12)


def test_shared_contexts_across_grammars_stay_exact() -> None:
    """One compiler shares context splits between grammars; every grammar stays exact."""
    vocabulary = synthetic_vocabulary(seed=3)
    compiler = gbnfkit.GrammarCompiler(vocabulary, cache_size=4)
    rng = random.Random(5)
    for record in rng.sample(RECORDS, 30):
        grammar = _grammar(record)
        assert grammar is not None
        _walk_compiled(compiler.compile(grammar), grammar, rng, steps=5)
        alone = gbnfkit.CompiledGrammar(grammar, vocabulary)
        _walk_compiled(alone, grammar, rng, steps=5)
    assert compiler.compile(Grammar.builtin("json")) is compiler.compile(Grammar.builtin("json"))


def test_shared_wide_contexts_and_deeper_contexts_stay_exact() -> None:
    """Every context split through numpy and shared by canonical form; contexts deepened."""
    from gbnfkit.tokens._index import VocabularyIndex

    vocabulary = synthetic_vocabulary(seed=11)
    index = VocabularyIndex(vocabulary)
    rng = random.Random(13)
    names = ["json", "json_arr", "arithmetic", "list"]
    grammars = [Grammar.builtin(n) for n in names] + [
        g for g in (_grammar(r) for r in rng.sample(RECORDS, 20)) if g is not None
    ]
    for grammar in grammars + grammars[:4]:
        compiled = gbnfkit.CompiledGrammar(
            grammar, vocabulary, index=index, tuning=Tuning(wide=0, deepen_above=0)
        )
        _walk_compiled(compiled, grammar, rng, steps=8)
    assert index.shared


def test_shallower_and_deepened_wide_contexts_stay_exact() -> None:
    """Force every split wide, unshareable at full depth, and deepened at once."""
    from gbnfkit.tokens._index import VocabularyIndex

    tuning = Tuning(
        wide=0, max_canonical=12, max_wide_canonical=12, deepen_after=0, many_uncertain_tokens=0
    )
    vocabulary = synthetic_vocabulary(seed=17)
    index = VocabularyIndex(vocabulary)
    rng = random.Random(19)
    for name in ("json", "arithmetic", "c", "chess"):
        grammar = Grammar.builtin(name)
        compiled = gbnfkit.CompiledGrammar(grammar, vocabulary, index=index, tuning=tuning)
        _walk_compiled(compiled, grammar, rng, steps=10)


def test_saved_wide_contexts_reload_exact(tmp_path: Path) -> None:
    """Wide splits (uncertain tokens and their tails) survive save and load exactly."""
    import gbnfkit.tokens._compiled as compiled_module

    vocabulary = synthetic_vocabulary(seed=23)
    for name in ("json", "c"):
        grammar = Grammar.builtin(name)
        first = compiled_module.CompiledGrammar(
            grammar, vocabulary, tuning=Tuning(wide=0, deepen_above=0)
        )
        _walk_compiled(first, grammar, random.Random(29), steps=10)
        saved = [e for e in first._contexts.values() if e.uncertain_tokens]
        assert saved, "the walk made no wide split with uncertain tokens"
        path = tmp_path / f"{name}.npz"
        first.save(path)
        loaded = compiled_module.CompiledGrammar.load(path, grammar, vocabulary)
        assert sum(1 for e in loaded._contexts.values() if e.tails) >= len(
            [e for e in saved if e.tails]
        )
        _walk_compiled(loaded, grammar, random.Random(29), steps=10)


def test_byte_stacks_of_class_branches_do_not_hit_the_stack_limit() -> None:
    """Each character-level stack on a class becomes one byte-level stack per UTF-8 branch;
    a state the engine holds within ``max_stacks`` must not make masks raise."""
    branches = " | ".join(f'[^"] "{i}"' for i in range(5))
    grammar = Grammar.from_gbnf(f"root ::= {branches}", limits=gbnfkit.Limits(max_stacks=10))
    assert len(grammar.start().feed("").allowed()) >= 1  # the engine holds the state
    vocabulary = synthetic_vocabulary(seed=31)
    _walk_compiled(gbnfkit.CompiledGrammar(grammar, vocabulary), grammar, random.Random(37), 3)


def test_compiler_clear_cache_forgets_grammars_and_shared_splits() -> None:
    vocabulary = synthetic_vocabulary(seed=41)
    compiler = gbnfkit.GrammarCompiler(vocabulary, cache_size=4)
    grammar = Grammar.builtin("json")
    first = compiler.compile(grammar)
    _walk_compiled(first, grammar, random.Random(43), steps=8)
    assert compiler.compile(grammar) is first
    compiler.clear_cache()
    again = compiler.compile(grammar)
    assert again is not first
    _walk_compiled(again, grammar, random.Random(43), steps=8)


def test_contexts_handing_over_after_their_first_byte_are_split_deeper(tmp_path: Path) -> None:
    """After a c statement the context "whitespace, then the next statement or the
    block's end" holds the bottom marker after one space, so it would leave every token
    "<space>..." it does not accept uncertain: with more of those than
    ``many_uncertain_tokens`` it is split one frame deeper at once (docs/masks.md,
    "Deepening"), and the mask stays exact, also saved and loaded again."""
    from gbnfkit.tokens._compiled import CONTEXT_DEPTH, _groups, _key_depth

    grammar = Grammar.builtin("c")
    vocabulary = synthetic_vocabulary(seed=31)
    text = "int f() {\n    x = 1;\n"
    expected = reference_mask(grammar.start().feed(text.encode()), vocabulary)
    depths = []
    for limit in (8, 10**9):
        compiled = gbnfkit.CompiledGrammar(
            grammar, vocabulary, tuning=Tuning(many_uncertain_tokens=limit)
        )
        matcher = compiled.matcher()
        matcher.accept_text(text)
        assert np.array_equal(expected, fast_mask(matcher, vocabulary.size))
        groups = _groups(matcher._state.stacks)
        depths.append(sorted(_key_depth(compiled._entry_for(g)[0]) for g in groups))
        path = tmp_path / f"c{limit}.npz"
        compiled.save(path)
        loaded = gbnfkit.CompiledGrammar.load(path, grammar, vocabulary)
        again = loaded.matcher()
        again.accept_text(text)
        assert np.array_equal(expected, fast_mask(again, vocabulary.size))
    deeper, plain = depths
    assert CONTEXT_DEPTH + 1 in deeper and CONTEXT_DEPTH + 1 not in plain
