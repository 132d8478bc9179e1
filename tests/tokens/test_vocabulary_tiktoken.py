"""Vocabulary.from_tiktoken on small handmade ranks files and tiktoken encodings."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import pytest
import tiktoken

from gbnfkit import Vocabulary, VocabularyError

RANKS = [bytes([b]) for b in range(256)] + [b" h", b" hi", "日".encode(), b"\xe6\x97", b"\n\n"]


def write_ranks(path: Path, ranks: list[bytes], *, newline: str = "\n") -> Path:
    lines = [f"{base64.b64encode(tok).decode()} {i}" for i, tok in enumerate(ranks)]
    path.write_text(newline.join(lines) + newline, encoding="ascii", newline="")
    return path


def encoding(special: dict[str, int]) -> tiktoken.Encoding:
    return tiktoken.Encoding(
        "handmade",
        pat_str=r"""'s|'t| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""",
        mergeable_ranks={tok: i for i, tok in enumerate(RANKS)},
        special_tokens=special,
    )


def test_ranks_file(tmp_path: Path) -> None:
    path = write_ranks(tmp_path / "small.tiktoken", RANKS)
    vocab = Vocabulary.from_tiktoken(path)
    assert vocab.size == len(RANKS)
    assert [vocab.token_bytes(i) for i in range(len(RANKS))] == RANKS
    assert vocab.special_token_ids == frozenset() and vocab.eos_token_ids == frozenset()


def test_ranks_file_with_special_tokens_and_size(tmp_path: Path) -> None:
    path = write_ranks(tmp_path / "small.tiktoken", RANKS, newline="\r\n")
    n = len(RANKS)
    special = {"<|endoftext|>": n, "<|im_start|>": n + 1, "<|im_end|>": n + 2, "<|x|>": n + 5}
    vocab = Vocabulary.from_tiktoken(str(path), special_tokens=special, size=n + 10)
    assert vocab.size == n + 10
    assert vocab.special_token_ids == set(special.values())
    assert vocab.eos_token_ids == {n, n + 2}  # the well-known end markers
    assert all(vocab.token_bytes(i) is None for i in range(n, n + 10))
    explicit = Vocabulary.from_tiktoken(path, special_tokens=special, eos_token_ids=[n + 5])
    assert explicit.eos_token_ids == {n + 5} and explicit.size == n + 6


def test_encoding_matches_ranks_file(tmp_path: Path) -> None:
    n = len(RANKS)
    special = {"<|endoftext|>": n, "<|fim|>": n + 3}
    enc = encoding(special)
    from_enc = Vocabulary.from_tiktoken(enc)
    from_file = Vocabulary.from_tiktoken(
        write_ranks(tmp_path / "r.tiktoken", RANKS), special_tokens=special
    )
    assert from_enc == from_file
    assert from_enc.size == n + 4 and from_enc.token_bytes(n + 1) is None
    for text in ["hi hi", "日本語 🙂\n\n"]:
        ids = enc.encode(text)
        assert b"".join(from_enc.token_bytes(i) or b"?" for i in ids) == text.encode()
    for i in range(n):
        assert from_enc.token_bytes(i) == enc.decode_single_token_bytes(i)
    # caller's special tokens are added to the encoding's own
    more = Vocabulary.from_tiktoken(enc, special_tokens={"<|im_end|>": n + 4})
    assert more.special_token_ids == {n, n + 3, n + 4} and more.eos_token_ids == {n, n + 4}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "holds no tokens"),
        (b"\n  \n", "holds no tokens"),
        (b"YQ== 0\nYg==\n", r"line 2: expected '<base64 token> <rank>', got 'Yg=='"),
        (b"YQ== 0\nY*== 1\n", r"line 2: expected"),
        (b"YQ== 0\nYg== -1\n", r"line 2: expected"),
        (b"YQ== 0\nYg== 1 2\n", r"line 2: expected"),
        (b"YQ== 0\n 1\n", r"line 2: expected"),  # a token of no bytes
        (b"YQ== 0\rYg== 1\n", "stray line breaks"),
        (b"YQ== 0\nYQ 1\n", "not valid base64"),
        (b"YQ== 0\nYg== 0\n", "rank 0 appears twice"),
        (b"YQ== 0\nYg== 1\n\nYw== 01\n", "rank 1 appears twice"),
    ],
)
def test_malformed_ranks_files(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "bad.tiktoken"
    path.write_bytes(content)
    with pytest.raises(VocabularyError, match=message) as info:
        Vocabulary.from_tiktoken(path)
    assert str(path) in str(info.value)


def test_bad_arguments(tmp_path: Path) -> None:
    missing = tmp_path / "missing.tiktoken"
    with pytest.raises(VocabularyError, match=r"ranks file .*missing\.tiktoken does not exist"):
        Vocabulary.from_tiktoken(missing)
    with pytest.raises(VocabularyError, match="cannot read tiktoken ranks file"):
        Vocabulary.from_tiktoken(tmp_path)
    with pytest.raises(VocabularyError, match="needs a tiktoken.Encoding or the path"):
        Vocabulary.from_tiktoken(3.5)
    path = write_ranks(tmp_path / "r.tiktoken", RANKS)
    with pytest.raises(VocabularyError, match="special_tokens must map names to ids"):
        Vocabulary.from_tiktoken(path, special_tokens=[("<|a|>", 300)])  # type: ignore[arg-type]
    with pytest.raises(VocabularyError, match=re.escape("special token '<|a|>' has id '300'")):
        Vocabulary.from_tiktoken(path, special_tokens={"<|a|>": "300"})  # type: ignore[dict-item]
    with pytest.raises(VocabularyError, match="has id 5, which is already a token of .*r.tiktoken"):
        Vocabulary.from_tiktoken(path, special_tokens={"<|a|>": 5})
    with pytest.raises(VocabularyError, match="size 3 is smaller"):
        Vocabulary.from_tiktoken(path, size=3)
