"""Vocabulary.from_gguf on small GGUF files written by the test itself."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gbnfkit import Vocabulary, VocabularyError
from gbnfkit.tokens._token_text import bytes_to_unicode

# GGUF value types
U8, I8, U16, I16, U32, I32, F32, BOOL, STRING, ARRAY, U64, I64, F64 = range(13)
FORMATS = {U8: "B", I8: "b", U16: "H", I16: "h", U32: "I", I32: "i", F32: "f", BOOL: "?",
           U64: "Q", I64: "q", F64: "d"}  # fmt: skip
# llama.cpp token types
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6

BYTE_CHAR = bytes_to_unicode()


def encode_value(kind: int, value: Any, order: str) -> bytes:
    if kind == STRING:
        data = value if isinstance(value, bytes) else value.encode("utf-8")
        return struct.pack(order + "Q", len(data)) + data
    if kind == ARRAY:
        inner, items = value
        head = struct.pack(order + "IQ", inner, len(items))
        return head + b"".join(encode_value(inner, item, order) for item in items)
    if kind not in FORMATS:  # a type GGUF does not define: the value is given as raw bytes
        assert isinstance(value, bytes)
        return value
    return struct.pack(order + FORMATS[kind], value)


def gguf_bytes(
    metadata: list[tuple[str, int, Any]], *, version: int = 3, order: str = "<", tensors: int = 0
) -> bytes:
    """A minimal GGUF file: header and metadata (no tensor data, which loaders never read)."""
    out = [b"GGUF", struct.pack(order + "IQQ", version, tensors, len(metadata))]
    for key, kind, value in metadata:
        out.append(encode_value(STRING, key, order))
        out.append(struct.pack(order + "I", kind))
        out.append(encode_value(kind, value, order))
    return b"".join(out)


def nested(depth: int) -> tuple[int, list[Any]]:
    """An array value holding one array, ``depth`` levels down."""
    value: tuple[int, list[Any]] = (U8, [1])
    for _ in range(depth):
        value = (ARRAY, [value])
    return value


def write_gguf(path: Path, metadata: list[tuple[str, int, Any]], **kwargs: Any) -> Path:
    path.write_bytes(gguf_bytes(metadata, **kwargs))
    return path


def bl(text: str) -> str:
    return "".join(BYTE_CHAR[b] for b in text.encode("utf-8"))


GPT2_TOKENS = ["<|endoftext|>", "<|im_end|>", "<unk>", bl(" hello"), bl("é"), bl("\n"),
               "<tool>", "[PAD0]", bl("日本"), "<|eot|>", "<|eom|>", bl(""), "ñ x"]  # fmt: skip
GPT2_TYPES = [CONTROL, CONTROL, UNKNOWN, NORMAL, NORMAL, NORMAL, USER_DEFINED, UNUSED, NORMAL,
              CONTROL, CONTROL, NORMAL, USER_DEFINED]  # fmt: skip


def gpt2_metadata(**overrides: Any) -> list[tuple[str, int, Any]]:
    """A byte-level BPE model's metadata, with one key of every value type around it."""
    meta: list[tuple[str, int, Any]] = [
        ("general.architecture", STRING, "smol"),
        ("general.u8", U8, 7),
        ("general.i8", I8, -7),
        ("general.u16", U16, 700),
        ("general.i16", I16, -700),
        ("general.i32", I32, -70000),
        ("general.f32", F32, 0.5),
        ("general.bool", BOOL, True),
        ("general.u64", U64, 2**40),
        ("general.i64", I64, -(2**40)),
        ("general.f64", F64, 0.25),
        ("general.tags", ARRAY, (STRING, ["a", "bc"])),
        ("general.matrix", ARRAY, (ARRAY, [(U16, [1, 2]), (STRING, ["x"]), (ARRAY, [])])),
        ("general.floats", ARRAY, (F32, [1.0, 2.0])),
        ("smol.vocab_size", U32, 16),
        ("tokenizer.ggml.model", STRING, "gpt2"),
        ("tokenizer.ggml.tokens", ARRAY, (STRING, GPT2_TOKENS)),
        ("tokenizer.ggml.token_type", ARRAY, (I32, GPT2_TYPES)),
        ("tokenizer.ggml.merges", ARRAY, (STRING, ["Ġ h", "h e"])),
        ("tokenizer.ggml.eos_token_id", U32, 9),
        ("tokenizer.ggml.eot_token_id", U32, 1),
        ("tokenizer.ggml.eom_token_id", U32, 10),
    ]
    for key, (kind, value) in overrides.items():
        full = "tokenizer.ggml." + key
        meta = [m for m in meta if m[0] != full]
        if kind is not None:
            meta.append((full, kind, value))
    return meta


def test_gpt2_model(tmp_path: Path) -> None:
    vocab = Vocabulary.from_gguf(write_gguf(tmp_path / "m.gguf", gpt2_metadata()))
    assert vocab.size == 16  # smol.vocab_size is wider than the 13 tokens
    assert len(vocab.tokens) == 13
    assert vocab.token_bytes(3) == b" hello"
    assert vocab.token_bytes(4) == "é".encode()
    assert vocab.token_bytes(5) == b"\n"
    assert vocab.token_bytes(8) == "日本".encode()
    assert vocab.token_bytes(6) == b"<tool>"  # user-defined: its own text
    assert vocab.token_bytes(12) == "ñ x".encode()  # user-defined text is not byte-decoded
    assert vocab.token_bytes(7) is None and 7 not in vocab.special_token_ids  # unused
    assert vocab.token_bytes(11) is None and 11 not in vocab.special_token_ids  # empty
    assert vocab.special_token_ids == {0, 1, 2, 9, 10}  # control and unknown
    # eos, eot and eom ids, and control tokens named like end markers (<|endoftext|>)
    assert vocab.eos_token_ids == {0, 1, 9, 10}
    assert all(vocab.token_bytes(i) is None for i in vocab.special_token_ids)
    assert all(vocab.token_bytes(i) is None for i in range(13, 16))


def test_explicit_size_and_eos(tmp_path: Path) -> None:
    path = write_gguf(tmp_path / "m.gguf", gpt2_metadata())
    vocab = Vocabulary.from_gguf(path, size=20, eos_token_ids=[3])
    assert vocab.size == 20 and vocab.eos_token_ids == {3}
    assert vocab.special_token_ids == {0, 1, 2, 3, 9, 10}


def test_without_token_types_every_token_is_text(tmp_path: Path) -> None:
    meta = gpt2_metadata(token_type=(None, None), eos_token_id=(None, None),
                         eot_token_id=(None, None), eom_token_id=(None, None))  # fmt: skip
    vocab = Vocabulary.from_gguf(write_gguf(tmp_path / "m.gguf", meta))
    assert vocab.special_token_ids == frozenset() and vocab.eos_token_ids == frozenset()
    assert vocab.token_bytes(0) == b"<|endoftext|>"


SPM_TOKENS = ["<unk>", "<s>", "</s>", "<0x0A>", "<0xE6>", "<0xff>", "▁hello", "▁", "wörld",
              "<pad>", "<|im_end|>", "<0x41>"]  # fmt: skip
SPM_TYPES = [UNKNOWN, CONTROL, CONTROL, BYTE, BYTE, BYTE, NORMAL, NORMAL, NORMAL, UNUSED,
             USER_DEFINED, NORMAL]  # fmt: skip


@pytest.mark.parametrize("model", ["llama", "t5"])
def test_sentencepiece_models(tmp_path: Path, model: str) -> None:
    meta: list[tuple[str, int, Any]] = [
        ("tokenizer.ggml.model", STRING, model),
        ("tokenizer.ggml.tokens", ARRAY, (STRING, SPM_TOKENS)),
        ("tokenizer.ggml.token_type", ARRAY, (U8, SPM_TYPES)),
        ("tokenizer.ggml.eos_token_id", U32, 2),
    ]
    vocab = Vocabulary.from_gguf(write_gguf(tmp_path / "m.gguf", meta))
    assert vocab.size == len(SPM_TOKENS)
    assert [vocab.token_bytes(i) for i in range(3, 9)] == [
        b"\n",
        b"\xe6",
        b"\xff",
        b" hello",
        b" ",
        "wörld".encode(),
    ]
    assert vocab.token_bytes(9) is None and vocab.token_bytes(10) == b"<|im_end|>"
    assert vocab.token_bytes(11) == b"<0x41>"  # a normal token that only looks like a byte
    assert vocab.special_token_ids == {0, 1, 2} and vocab.eos_token_ids == {2}


@pytest.mark.parametrize("version", [2, 3])
def test_versions_and_big_endian(tmp_path: Path, version: int) -> None:
    little = Vocabulary.from_gguf(write_gguf(tmp_path / "l.gguf", gpt2_metadata(), version=version))
    big = Vocabulary.from_gguf(
        write_gguf(tmp_path / "b.gguf", gpt2_metadata(), version=version, order=">")
    )
    assert little == big


def test_every_truncation_is_reported(tmp_path: Path) -> None:
    data = gguf_bytes(gpt2_metadata())
    path = tmp_path / "cut.gguf"
    reported = 0
    for cut in range(len(data)):
        path.write_bytes(data[:cut])
        try:  # (pytest.raises is too slow for a thousand cuts)
            Vocabulary.from_gguf(path)
        except VocabularyError as exc:
            message = str(exc)
            assert "cut.gguf" in message
            assert ("truncated" if cut >= 8 else "is not a GGUF file") in message, cut
            reported += 1
    assert reported == len(data)


# the file is rewritten on every example, so sharing tmp_path between examples is safe
@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.data())
def test_corrupted_files_raise_only_vocabulary_error(tmp_path: Path, data: st.DataObject) -> None:
    blob = bytearray(gguf_bytes(gpt2_metadata()))
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(4, len(blob) - 1))
        blob[at] = data.draw(st.integers(0, 255))
    path = tmp_path / "fuzz.gguf"
    path.write_bytes(bytes(blob))
    try:
        vocab = Vocabulary.from_gguf(path)
    except VocabularyError as exc:
        assert "fuzz.gguf" in str(exc)
    else:
        assert vocab.size >= len(vocab.tokens) > 0


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "is not a GGUF file"),
        (b"GGUF\x03\x00", "is not a GGUF file"),
        (b"GGML" + bytes(20), "is not a GGUF file \\(bad magic b'GGML'\\)"),
        (gguf_bytes([], version=1), "GGUF version 1 is not supported"),
        (gguf_bytes([("general.x", 13, b"")]), "key 'general.x' has unknown type 13"),
        (gguf_bytes([("general.x", ARRAY, (14, []))]), "holds an array of unknown type 14"),
        (gguf_bytes([("general.name", STRING, "no tokenizer")]), "no tokenizer.ggml.model"),
        (gguf_bytes([("general.x", ARRAY, nested(20))]), "arrays nested more than 16 deep"),
    ],
)
def test_not_a_usable_gguf(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "bad.gguf"
    path.write_bytes(content)
    with pytest.raises(VocabularyError, match=message) as info:
        Vocabulary.from_gguf(path)
    assert str(path) in str(info.value)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"model": (STRING, "bert")}, "tokenizer model 'bert' is not supported"),
        ({"tokens": (None, None)}, "has no token list"),
        ({"tokens": (ARRAY, (STRING, []))}, "has no token list"),
        ({"tokens": (ARRAY, (ARRAY, []))}, "holds arrays of type 9"),
        ({"tokens": (ARRAY, (U32, [1, 2]))}, "has no token list"),
        ({"token_type": (ARRAY, (I32, [1, 1]))}, "does not have one entry per token"),
        ({"token_type": (ARRAY, (STRING, ["1"] * 13))}, "does not have one entry per token"),
        ({"eos_token_id": (U32, 13)}, "eos_token_id = 13 is not a token id"),
        ({"eot_token_id": (F32, 1.0)}, "eot_token_id = 1.0 is not a token id"),
        ({"eos_token_id": (BOOL, True)}, "eos_token_id = True is not a token id"),
        ({"eom_token_id": (ARRAY, (U32, [1, 2]))}, "eom_token_id = an array is not a token id"),
        (
            {"tokens": (ARRAY, (STRING, [*GPT2_TOKENS[:3], b"\xff", *GPT2_TOKENS[4:]]))},
            "token 3 is not valid UTF-8",
        ),
    ],
)
def test_bad_tokenizer_metadata(tmp_path: Path, overrides: dict[str, Any], message: str) -> None:
    if "tokens" in overrides and overrides["tokens"][0] is not None:
        types = [NORMAL] + GPT2_TYPES[1:]
        overrides.setdefault("token_type", (ARRAY, (I32, types)))
    path = write_gguf(tmp_path / "bad.gguf", gpt2_metadata(**overrides))
    with pytest.raises(VocabularyError, match=message) as info:
        Vocabulary.from_gguf(path)
    assert str(path) in str(info.value)


def test_bad_byte_token(tmp_path: Path) -> None:
    meta: list[tuple[str, int, Any]] = [
        ("tokenizer.ggml.model", STRING, "llama"),
        ("tokenizer.ggml.tokens", ARRAY, (STRING, ["a", "<0xZZ>"])),
        ("tokenizer.ggml.token_type", ARRAY, (I32, [NORMAL, BYTE])),
    ]
    with pytest.raises(VocabularyError, match="byte token 1 is '<0xZZ>', not <0xXX>"):
        Vocabulary.from_gguf(write_gguf(tmp_path / "m.gguf", meta))


def test_unreadable_paths(tmp_path: Path) -> None:
    with pytest.raises(VocabularyError, match=r"GGUF file .*missing\.gguf does not exist"):
        Vocabulary.from_gguf(tmp_path / "missing.gguf")
    with pytest.raises(VocabularyError, match="cannot read GGUF file"):
        Vocabulary.from_gguf(tmp_path)
    with pytest.raises(VocabularyError, match="GGUF path must be a path"):
        Vocabulary.from_gguf(None)  # type: ignore[arg-type]
