"""Vocabulary.from_tokenizer_json / from_huggingface on small handmade tokenizers.

Each handmade tokenizer.json is also loaded by the ``tokenizers`` library, and our token
bytes are checked against what that library decodes and encodes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tokenizers import Tokenizer

from gbnfkit import Vocabulary, VocabularyError
from gbnfkit.tokens._token_text import bytes_to_unicode

BYTE_CHAR = bytes_to_unicode()


def bl(text: str) -> str:
    """A text written in the GPT-2 byte alphabet (as byte-level BPE vocabularies store it)."""
    return "".join(BYTE_CHAR[b] for b in text.encode("utf-8"))


def byte_level_doc() -> dict[str, Any]:
    """A GPT-2 style byte-level BPE tokenizer with a few merges and added tokens."""
    vocab = {BYTE_CHAR[b]: b for b in range(256)}
    merges: list[str] = []
    for word in [" hello", "ä", "日本", "\n\n", "  "]:
        chars = bl(word)
        for k in range(1, len(chars)):  # merge left to right: every prefix is a token
            left = chars[:k]
            if left + chars[k] not in vocab:
                merges.append(f"{left} {chars[k]}")
                vocab[left + chars[k]] = len(vocab)
    n = len(vocab)
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [
            {"id": n, "content": "<|endoftext|>", "special": True, "single_word": False,
             "lstrip": False, "rstrip": False, "normalized": False},
            {"id": n + 1, "content": "<|im_end|>", "special": True, "single_word": False,
             "lstrip": False, "rstrip": False, "normalized": False},
            {"id": n + 2, "content": "<think>", "special": False, "single_word": False,
             "lstrip": False, "rstrip": False, "normalized": False},
            {"id": n + 3, "content": "<｜User｜>", "special": False, "single_word": False,
             "lstrip": False, "rstrip": False, "normalized": True},
        ],
        "normalizer": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                          "use_regex": True},
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                    "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None,
                  "continuing_subword_prefix": None, "end_of_word_suffix": None,
                  "fuse_unk": False, "byte_fallback": False, "vocab": vocab, "merges": merges},
    }  # fmt: skip


def sentencepiece_doc(*, byte_fallback: bool = True) -> dict[str, Any]:
    """A Llama-2 style tokenizer: ▁ for spaces, <0xXX> byte fallback."""
    vocab: dict[str, int] = {"<unk>": 0, "<s>": 1, "</s>": 2}
    if byte_fallback:
        for b in range(256):
            vocab[f"<0x{b:02X}>"] = len(vocab)
    for piece in ["▁", "h", "e", "l", "o", "w", "r", "d", "ö", "▁h", "▁he", "▁hel", "▁hell",
                  "▁hello", "▁w", "▁wö", "ll", "<0x41>x"]:  # fmt: skip
        vocab[piece] = len(vocab)
    merges = ["▁ h", "▁h e", "▁he l", "▁hel l", "▁hell o", "▁ w", "▁w ö", "l l"]
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [
            {"id": i, "content": c, "special": True, "single_word": False, "lstrip": False,
             "rstrip": False, "normalized": False}
            for c, i in [("<unk>", 0), ("<s>", 1), ("</s>", 2)]
        ],
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Prepend", "prepend": "▁"},
            {"type": "Replace", "pattern": {"String": " "}, "content": "▁"},
        ]},
        "pre_tokenizer": None,
        "post_processor": None,
        "decoder": {"type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
            {"type": "ByteFallback"},
            {"type": "Fuse"},
            {"type": "Strip", "content": " ", "start": 1, "stop": 0},
        ]},
        "model": {"type": "BPE", "dropout": None, "unk_token": "<unk>",
                  "continuing_subword_prefix": None, "end_of_word_suffix": None,
                  "fuse_unk": True, "byte_fallback": byte_fallback, "vocab": vocab,
                  "merges": merges},
    }  # fmt: skip


def unigram_doc(replacement: str = "▁") -> dict[str, Any]:
    """A T5 style Unigram tokenizer with a Metaspace decoder (no byte fallback)."""
    pieces = ["<pad>", "</s>", "<unk>", replacement, "a", "b", "c", " ", "é"]
    pieces += [replacement + "ab", replacement + "c", "bc", replacement + "é"]
    return {
        "version": "1.0",
        "added_tokens": [
            {"id": i, "content": c, "special": True, "single_word": False, "lstrip": False,
             "rstrip": False, "normalized": False}
            for i, c in enumerate(["<pad>", "</s>", "<unk>"])
        ],
        "normalizer": None,
        "pre_tokenizer": {"type": "Metaspace", "replacement": replacement,
                          "prepend_scheme": "always", "split": True},
        "post_processor": None,
        "decoder": {"type": "Metaspace", "replacement": replacement, "prepend_scheme": "always",
                    "split": True},
        "model": {"type": "Unigram", "unk_id": 2, "byte_fallback": False,
                  "vocab": [[p, -1.0 - 0.1 * i] for i, p in enumerate(pieces)]},
    }  # fmt: skip


def write(tmp_path: Path, doc: Any, name: str = "tokenizer.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    return path


def decoded_alone(tok: Tokenizer, token_id: int, anchor: int) -> str:
    """What the tokenizers library writes for ``token_id`` after an ``anchor`` token.

    Decoding after another token avoids the decoders' first-token rules (stripping the
    leading space), which are about position, not about the token.
    """
    return tok.decode([anchor, token_id], skip_special_tokens=False)[
        len(tok.decode([anchor], skip_special_tokens=False)) :
    ]


def check_against_tokenizers(vocab: Vocabulary, tok: Tokenizer, anchor: int) -> int:
    """Every text token whose bytes are UTF-8 decodes as the tokenizers library says."""
    checked = 0
    for i in range(len(vocab.tokens)):
        data = vocab.token_bytes(i)
        if data is None or i in vocab.special_token_ids:
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        assert decoded_alone(tok, i, anchor) == text, i
        checked += 1
    return checked


TEXTS = ["hello", " hello world", "hé日本 ä\n\n  x", "emoji 🙂 and <think> and <｜User｜>!"]


def test_byte_level_bytes_match_tokenizers(tmp_path: Path) -> None:
    doc = byte_level_doc()
    path = write(tmp_path, doc)
    vocab = Vocabulary.from_tokenizer_json(path)
    tok = Tokenizer.from_file(str(path))
    n = len(doc["model"]["vocab"])
    assert vocab.size == n + 4
    assert vocab.token_bytes(ord("a")) == b"a"
    assert vocab.token_bytes(doc["model"]["vocab"][bl(" hello")]) == b" hello"
    assert vocab.token_bytes(doc["model"]["vocab"][bl("日本")]) == "日本".encode()
    # bytes 0-255 are the 256 base tokens in byte order: every byte is reachable
    assert [vocab.token_bytes(b) for b in range(256)] == [bytes([b]) for b in range(256)]
    # special added tokens: no text; non-special ones: text, even outside the byte alphabet
    assert vocab.token_bytes(n) is None and vocab.token_bytes(n + 1) is None
    assert vocab.special_token_ids == {n, n + 1}
    assert vocab.token_bytes(n + 2) == b"<think>"
    assert vocab.token_bytes(n + 3) == "<｜User｜>".encode()
    # no config files beside: the well-known end markers among special tokens
    assert vocab.eos_token_ids == {n, n + 1}
    assert check_against_tokenizers(vocab, tok, anchor=ord("a")) > 128
    for text in TEXTS:
        ids = tok.encode(text).ids
        assert b"".join(vocab.token_bytes(i) or b"?" for i in ids) == text.encode(), text


def test_sentencepiece_with_byte_fallback_matches_tokenizers(tmp_path: Path) -> None:
    doc = sentencepiece_doc()
    path = write(tmp_path, doc)
    vocab = Vocabulary.from_tokenizer_json(path)
    tok = Tokenizer.from_file(str(path))
    v = doc["model"]["vocab"]
    assert vocab.token_bytes(v["▁hello"]) == b" hello"
    assert vocab.token_bytes(v["▁"]) == b" "
    assert vocab.token_bytes(v["<0x0A>"]) == b"\n"
    assert vocab.token_bytes(v["<0xF0>"]) == b"\xf0"
    assert vocab.token_bytes(v["ö"]) == "ö".encode()
    # only an exact <0xXX> is a byte token
    assert vocab.token_bytes(v["<0x41>x"]) == b"<0x41>x"
    assert vocab.special_token_ids == {0, 1, 2}
    assert vocab.eos_token_ids == {2}  # </s>
    assert all(vocab.token_bytes(i) is None for i in (0, 1, 2))
    assert check_against_tokenizers(vocab, tok, anchor=v["h"]) > 100
    for text in ["hello", "hello wörld", "hello 🙂 Zürich\n"]:
        ids = tok.encode(text, add_special_tokens=False).ids
        assert b"".join(vocab.token_bytes(i) or b"?" for i in ids) == (" " + text).encode()


def test_sentencepiece_without_byte_fallback_keeps_byte_names(tmp_path: Path) -> None:
    doc = sentencepiece_doc(byte_fallback=False)
    doc["decoder"]["decoders"] = [
        d for d in doc["decoder"]["decoders"] if d["type"] != "ByteFallback"
    ]
    vocab = Vocabulary.from_tokenizer_json(write(tmp_path, doc))
    assert vocab.token_bytes(doc["model"]["vocab"]["<0x41>x"]) == b"<0x41>x"
    assert vocab.token_bytes(doc["model"]["vocab"]["▁wö"]) == " wö".encode()


@pytest.mark.parametrize("replacement", ["▁", "_"])
def test_unigram_metaspace_matches_tokenizers(tmp_path: Path, replacement: str) -> None:
    doc = unigram_doc(replacement)
    path = write(tmp_path, doc)
    vocab = Vocabulary.from_tokenizer_json(path)
    tok = Tokenizer.from_file(str(path))
    assert vocab.size == len(doc["model"]["vocab"])
    assert vocab.token_bytes(9) == b" ab"
    assert vocab.token_bytes(7) == b" "
    assert vocab.special_token_ids == {0, 1, 2} and vocab.eos_token_ids == {1}
    assert check_against_tokenizers(vocab, tok, anchor=4) == 10
    ids = tok.encode("ab c bcé", add_special_tokens=False).ids
    assert b"".join(vocab.token_bytes(i) or b"?" for i in ids) == " ab c bcé".encode()


def test_style_from_pre_tokenizer_when_there_is_no_decoder(tmp_path: Path) -> None:
    doc = byte_level_doc()
    doc["decoder"] = None
    vocab = Vocabulary.from_tokenizer_json(write(tmp_path, doc, "a.json"))
    assert vocab.token_bytes(doc["model"]["vocab"][bl(" hello")]) == b" hello"
    doc = unigram_doc()
    doc["decoder"] = None
    vocab = Vocabulary.from_tokenizer_json(write(tmp_path, doc, "b.json"))
    assert vocab.token_bytes(9) == b" ab"


def test_old_files_without_model_type(tmp_path: Path) -> None:
    doc = byte_level_doc()
    del doc["model"]["type"]
    assert Vocabulary.from_tokenizer_json(write(tmp_path, doc, "a.json")).token_bytes(32) == b" "
    doc = unigram_doc()
    del doc["model"]["type"]
    assert Vocabulary.from_tokenizer_json(write(tmp_path, doc, "b.json")).token_bytes(9) == b" ab"


def test_gaps_empty_tokens_and_size(tmp_path: Path) -> None:
    doc = byte_level_doc()
    doc["model"]["vocab"] = {"a": 0, "b": 1, "": 2, "c": 5}
    doc["model"]["merges"] = []
    doc["added_tokens"] = [{"id": 7, "content": "<|endoftext|>", "special": True}]
    vocab = Vocabulary.from_tokenizer_json(write(tmp_path, doc), size=12)
    assert vocab.size == 12 and len(vocab.tokens) == 8
    assert [vocab.token_bytes(i) for i in range(8)] == [b"a", b"b", None, None, None, b"c", None,
                                                        None]  # fmt: skip
    assert vocab.special_token_ids == {7} and vocab.eos_token_ids == {7}
    assert not any(vocab.is_text_token(i) for i in (2, 3, 4, 6, 7, 11))


def test_model_directory_and_logits_width_from_config(tmp_path: Path) -> None:
    doc = sentencepiece_doc()
    n = len(doc["model"]["vocab"])
    path = write(tmp_path, doc)
    assert Vocabulary.from_tokenizer_json(tmp_path) == Vocabulary.from_tokenizer_json(path)
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"model_type": "llama", "vocab_size": n + 64}))
    vocab = Vocabulary.from_tokenizer_json(tmp_path)
    assert vocab.size == n + 64 and vocab.token_bytes(n + 63) is None
    assert Vocabulary.from_tokenizer_json(path, size=n + 1).size == n + 1  # explicit wins
    for ignored in [{"vocab_size": n - 1}, {"vocab_size": "big"}, [1, 2]]:
        config.write_text(json.dumps(ignored))
        assert Vocabulary.from_tokenizer_json(path).size == n
    config.write_text("{")
    with pytest.raises(VocabularyError, match=r"model config .*config\.json is not valid JSON"):
        Vocabulary.from_tokenizer_json(path)


def test_eos_from_config_files(tmp_path: Path) -> None:
    doc = sentencepiece_doc()
    doc["added_tokens"].append({"id": len(doc["model"]["vocab"]), "content": "<|eot|>",
                                "special": True})  # fmt: skip
    eot = len(doc["model"]["vocab"])
    path = write(tmp_path, doc)
    config = tmp_path / "tokenizer_config.json"
    config.write_text(json.dumps({"eos_token": "<s>"}))
    assert Vocabulary.from_tokenizer_json(path).eos_token_ids == {1}
    config.write_text(json.dumps({"eos_token": {"__type": "AddedToken", "content": "</s>"}}))
    assert Vocabulary.from_tokenizer_json(path).eos_token_ids == {2}
    (tmp_path / "generation_config.json").write_text(json.dumps({"eos_token_id": [2, eot]}))
    assert Vocabulary.from_tokenizer_json(path).eos_token_ids == {2, eot}
    config.write_text(json.dumps({"bos_token": "<s>"}))
    (tmp_path / "generation_config.json").write_text(json.dumps({"eos_token_id": eot}))
    vocab = Vocabulary.from_tokenizer_json(path)
    assert vocab.eos_token_ids == {eot}
    # files that name no end token: the well-known end markers
    config.write_text(json.dumps({"eos_token": None}))
    (tmp_path / "generation_config.json").write_text(json.dumps({"eos_token_id": None}))
    assert Vocabulary.from_tokenizer_json(path).eos_token_ids == {2}
    # an explicit list wins over the files
    assert Vocabulary.from_tokenizer_json(path, eos_token_ids=[0]).eos_token_ids == {0}
    assert Vocabulary.from_tokenizer_json(path, eos_token_ids=[]).eos_token_ids == frozenset()


@pytest.mark.parametrize(
    ("config_name", "content", "message"),
    [
        ("tokenizer_config.json", "{not json", "tokenizer config .* is not valid JSON"),
        ("tokenizer_config.json", '{"eos_token": "<nope>"}', "eos_token '<nope>' is not a token"),
        ("tokenizer_config.json", '{"eos_token": 2}', "eos_token is 2, not a token's text"),
        ("tokenizer_config.json", '{"eos_token": {"id": 2}}', "eos_token is {'id': 2}, not a"),
        ("generation_config.json", '{"eos_token_id": "2"}', "eos_token_id holds '2'"),
        ("generation_config.json", '{"eos_token_id": [1, -3]}', "eos_token_id holds -3"),
    ],
)
def test_bad_config_files(tmp_path: Path, config_name: str, content: str, message: str) -> None:
    path = write(tmp_path, sentencepiece_doc())
    (tmp_path / config_name).write_text(content)
    with pytest.raises(VocabularyError, match=message):
        Vocabulary.from_tokenizer_json(path)


def test_unreadable_files(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "tokenizer.json"
    with pytest.raises(VocabularyError, match=r"tokenizer file .*nowhere.* does not exist"):
        Vocabulary.from_tokenizer_json(missing)
    bad = tmp_path / "bad.json"
    bad.write_text('{"model": ')
    with pytest.raises(VocabularyError, match=r"bad\.json is not valid JSON: .*line 1"):
        Vocabulary.from_tokenizer_json(bad)
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(VocabularyError, match=r"cannot read tokenizer file .*binary\.json"):
        Vocabulary.from_tokenizer_json(binary)
    with pytest.raises(VocabularyError, match=r"tokenizer file .*tokenizer\.json does not exist"):
        Vocabulary.from_tokenizer_json(tmp_path)  # a directory without tokenizer.json
    with pytest.raises(VocabularyError, match="must be a path"):
        Vocabulary.from_tokenizer_json(42)  # type: ignore[arg-type]


def _mutated(change: str) -> Any:
    doc: Any = byte_level_doc()
    if change == "list":
        return [doc]
    if change == "no model":
        del doc["model"]
    elif change == "wordpiece":
        doc["model"] = {"type": "WordPiece", "vocab": {"a": 0}}
    elif change == "unknown type":
        doc["model"]["type"] = "Mystery"
    elif change == "bpe list vocab":
        doc["model"]["vocab"] = [["a", 0.0]]
    elif change == "unigram dict vocab":
        doc["model"] = {"type": "Unigram", "vocab": {"a": 0}}
    elif change == "unigram entry":
        doc["model"] = {"type": "Unigram", "vocab": [["a", 0.0], [3, 0.0]]}
    elif change == "bad id":
        doc["model"]["vocab"]["zz"] = -4
    elif change == "shared id":
        doc["model"]["vocab"]["zz"] = doc["model"]["vocab"]["a"]
    elif change == "no style":
        doc["decoder"] = {"type": "WordPiece", "prefix": "##"}
    elif change == "added not list":
        doc["added_tokens"] = {"id": 1}
    elif change == "added not object":
        doc["added_tokens"] = ["<s>"]
    elif change == "added bad id":
        doc["added_tokens"][0]["id"] = "7"
    elif change == "added no content":
        del doc["added_tokens"][1]["content"]
    elif change == "added special text":
        doc["added_tokens"][0]["special"] = "false"
    elif change == "empty":
        doc["model"]["vocab"] = {}
        doc["added_tokens"] = []
    return doc


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ("list", "not a tokenizer.json document"),
        ("no model", "not a tokenizer.json document"),
        ("wordpiece", "WordPiece vocabularies are not supported"),
        ("unknown type", "unknown tokenizer model type 'Mystery'"),
        ("bpe list vocab", "vocab of a BPE model must be an object"),
        ("unigram dict vocab", "vocab of a Unigram model must be a list"),
        ("unigram entry", r"Unigram vocab entry 1 is not \[piece, score\]"),
        ("bad id", "token 'zz' has id -4"),
        ("shared id", "tokens 'a' and 'zz' both have id"),
        ("no style", "cannot tell how BPE token strings map to bytes .*WordPiece"),
        ("added not list", "added_tokens must be a list"),
        ("added not object", r"added_tokens\[0\] is not an object"),
        ("added bad id", r"added_tokens\[0\] has id '7'"),
        ("added no content", r"added_tokens\[1\] has no string content"),
        ("added special text", r"added_tokens\[0\] has special 'false', not true or false"),
        ("empty", "has no tokens"),
    ],
)
def test_malformed_documents(tmp_path: Path, change: str, message: str) -> None:
    path = write(tmp_path, _mutated(change))
    with pytest.raises(VocabularyError, match=message) as info:
        Vocabulary.from_tokenizer_json(path)
    assert str(path) in str(info.value)


# from_huggingface ------------------------------------------------------------------------


def test_from_tokenizers_object_matches_file(tmp_path: Path) -> None:
    path = write(tmp_path, byte_level_doc())
    tok = Tokenizer.from_file(str(path))
    from_object = Vocabulary.from_huggingface(tok)
    assert from_object == Vocabulary.from_tokenizer_json(path)
    assert Vocabulary.from_huggingface(tok, size=600, eos_token_ids=[3]).size == 600
    assert Vocabulary.from_huggingface(tok, eos_token_ids=[3]).eos_token_ids == {3}


class FakeFastTokenizer:
    """The attributes of a transformers PreTrainedTokenizerFast that the loader reads."""

    def __init__(self, backend: Tokenizer, eos_token_id: Any, length: int) -> None:
        self.backend_tokenizer = backend
        self.eos_token_id = eos_token_id
        self._length = length

    def __len__(self) -> int:
        return self._length


def test_from_transformers_fast_tokenizer(tmp_path: Path) -> None:
    doc = sentencepiece_doc()
    tok = Tokenizer.from_file(str(write(tmp_path, doc)))
    n = len(doc["model"]["vocab"])
    vocab = Vocabulary.from_huggingface(FakeFastTokenizer(tok, 2, n))
    assert vocab.eos_token_ids == {2} and vocab.size == n
    assert vocab.token_bytes(doc["model"]["vocab"]["▁hello"]) == b" hello"
    wider = Vocabulary.from_huggingface(FakeFastTokenizer(tok, [1, 2], n + 5))
    assert wider.size == n + 5 and wider.eos_token_ids == {1, 2}
    # no eos_token_id: the well-known end markers
    assert Vocabulary.from_huggingface(FakeFastTokenizer(tok, None, n)).eos_token_ids == {2}


class FakeAddedToken:
    def __init__(self, content: str, special: bool) -> None:
        self.content = content
        self.special = special


class FakeSlowTokenizer:
    """The attributes of a slow transformers tokenizer that the loader reads."""

    def __init__(self, vocab: dict[str, int], added: dict[int, FakeAddedToken]) -> None:
        self._vocab = dict(vocab)
        self._vocab.update({t.content: i for i, t in added.items()})
        self.added_tokens_decoder = added
        self.eos_token_id = next((i for i, t in added.items() if t.special), None)

    def get_vocab(self) -> dict[str, int]:
        return dict(self._vocab)

    def convert_ids_to_tokens(self, ids: list[int]) -> list[str]:
        inverse = {i: p for p, i in self._vocab.items()}
        return [inverse[i] for i in ids]

    def __len__(self) -> int:
        return len(self._vocab)


class FakeGPT2Tokenizer(FakeSlowTokenizer):
    byte_encoder = BYTE_CHAR


class FakeLlamaTokenizer(FakeSlowTokenizer):
    sp_model = object()


def test_from_slow_byte_level_tokenizer() -> None:
    vocab_map = {BYTE_CHAR[b]: b for b in range(256)} | {bl(" hi"): 256}
    added = {257: FakeAddedToken("<|endoftext|>", True), 258: FakeAddedToken("<tool>", False)}
    vocab = Vocabulary.from_huggingface(FakeGPT2Tokenizer(vocab_map, added))
    assert vocab.size == 259
    assert vocab.token_bytes(256) == b" hi" and vocab.token_bytes(10) == b"\n"
    assert vocab.token_bytes(257) is None and vocab.token_bytes(258) == b"<tool>"
    assert vocab.eos_token_ids == {257} and vocab.special_token_ids == {257}


def test_from_slow_sentencepiece_tokenizer() -> None:
    vocab_map = {"<unk>": 0, "<s>": 1, "</s>": 2, "<0x0A>": 3, "▁hi": 4, "ü": 5}
    added = {i: FakeAddedToken(c, True) for c, i in list(vocab_map.items())[:3]}
    vocab = Vocabulary.from_huggingface(FakeLlamaTokenizer(vocab_map, added))
    assert [vocab.token_bytes(i) for i in range(6)] == [None, None, None, b"\n", b" hi",
                                                        "ü".encode()]  # fmt: skip
    assert vocab.special_token_ids == {0, 1, 2} and vocab.eos_token_ids == {0}


def test_unsupported_tokenizer_objects() -> None:
    with pytest.raises(VocabularyError, match="cannot read a vocabulary from dict"):
        Vocabulary.from_huggingface({"a": 1})
    with pytest.raises(VocabularyError, match="cannot tell how the tokens of FakeSlowTokenizer"):
        Vocabulary.from_huggingface(FakeSlowTokenizer({"a": 0}, {}))
    with pytest.raises(VocabularyError, match="empty vocabulary"):
        Vocabulary.from_huggingface(FakeGPT2Tokenizer({}, {}))

    class Broken:
        def to_str(self) -> str:
            raise RuntimeError("boom")

        def id_to_token(self, i: int) -> str:
            return ""

    with pytest.raises(VocabularyError, match="cannot serialise the tokenizers.Tokenizer: boom"):
        Vocabulary.from_huggingface(Broken())

    class Odd:
        def __init__(self, text: object) -> None:
            self.text = text

        def to_str(self) -> object:
            return self.text

        def id_to_token(self, i: int) -> str:
            return ""

    with pytest.raises(VocabularyError, match="to_str\\(\\) did not return JSON text"):
        Vocabulary.from_huggingface(Odd(b"{}"))
    with pytest.raises(VocabularyError, match="gave invalid JSON"):
        Vocabulary.from_huggingface(Odd("{"))

    class ListVocab(FakeGPT2Tokenizer):
        def get_vocab(self) -> dict[str, int]:
            return [("a", 0)]  # type: ignore[return-value]

    with pytest.raises(VocabularyError, match=r"ListVocab.get_vocab\(\) did not return a mapping"):
        Vocabulary.from_huggingface(ListVocab({}, {}))
