"""Vocabularies from GGUF model files, read directly (no llama.cpp needed).

Only the metadata at the head of the file is read (memory-mapped); tensors are never
touched. Token bytes follow llama.cpp's ``token_to_piece`` without special rendering:

* ``tokenizer.ggml.model`` ``gpt2`` (byte-level BPE): normal tokens are written in the GPT-2
  byte alphabet; user-defined tokens are their own UTF-8 text; other types have no text.
* ``llama`` / ``t5`` (sentencepiece style): normal tokens with ``▁`` as a space; byte tokens
  ``<0xXX>`` are one byte; user-defined tokens are their own text.
* Control and unknown tokens are special ids (``None``); unused and undefined ones are
  ``None`` and not special.

End ids: ``tokenizer.ggml.eos_token_id``, ``eot_token_id`` and ``eom_token_id``, plus (as
llama.cpp's end-of-generation detection does) control tokens named like a well-known end
marker such as ``<|endoftext|>`` or ``<|im_end|>``.
"""

from __future__ import annotations

import mmap
import os
import re
import struct
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from gbnfkit._errors import VocabularyError
from gbnfkit.tokens._token_text import END_MARKERS, byte_level_many, byte_level_table
from gbnfkit.tokens._vocabulary import MAX_VOCABULARY_SIZE

__all__ = ["load_gguf"]

Loaded = tuple[list[bytes | None], frozenset[int], frozenset[int], "int | None"]

_MAGIC = b"GGUF"
_STRING, _ARRAY = 8, 9
#: GGUF value type -> struct format character (7 is bool)
_SCALAR = {
    0: "B",
    1: "b",
    2: "H",
    3: "h",
    4: "I",
    5: "i",
    6: "f",
    7: "?",
    10: "Q",
    11: "q",
    12: "d",
}
#: GGUF value type -> numpy dtype (without byte order)
_NUMPY = {0: "u1", 1: "i1", 2: "u2", 3: "i2", 4: "u4", 5: "i4", 6: "f4", 7: "u1", 10: "u8",
          11: "i8", 12: "f8"}  # fmt: skip

# llama.cpp token types
_NORMAL, _UNKNOWN, _CONTROL, _USER_DEFINED, _UNUSED, _BYTE = 1, 2, 3, 4, 5, 6
_BYTE_TOKEN = re.compile(rb"<0x([0-9A-Fa-f]{2})>")
_SPACE_MARK = "\u2581".encode()
_EOS_KEYS = (
    "tokenizer.ggml.eos_token_id",
    "tokenizer.ggml.eot_token_id",
    "tokenizer.ggml.eom_token_id",
)
_MAX_NESTING = 16
_WANTED_ARRAYS = ("tokenizer.ggml.tokens", "tokenizer.ggml.token_type")


class _SkippedArray:
    """The value kept for an array whose items are not read (its key is not wanted)."""

    def __repr__(self) -> str:
        return "an array"


_SKIPPED_ARRAY = _SkippedArray()


class _Truncated(Exception):
    """The metadata runs past the end of the file."""


class _BadValue(Exception):
    """A metadata value of a type GGUF does not define."""


@dataclass
class _Reader:
    """Sequential reader of GGUF metadata values over a buffer."""

    buf: Any  # mmap or bytes
    order: str  # "<" or ">"
    pos: int = 0
    end: int = field(init=False)

    def __post_init__(self) -> None:
        self.end = len(self.buf)
        self._u64 = struct.Struct(self.order + "Q").unpack_from
        self._u32 = struct.Struct(self.order + "I").unpack_from

    def take(self, n: int) -> int:
        start = self.pos
        if n < 0 or start + n > self.end:
            raise _Truncated
        self.pos = start + n
        return start

    def u32(self) -> int:
        value: int = self._u32(self.buf, self.take(4))[0]
        return value

    def u64(self) -> int:
        value: int = self._u64(self.buf, self.take(8))[0]
        return value

    def raw_string(self) -> bytes:
        n = self.u64()
        start = self.take(n)
        return bytes(self.buf[start : start + n])

    def scalar(self, kind: int) -> Any:
        fmt = self.order + _SCALAR[kind]
        return struct.unpack_from(fmt, self.buf, self.take(struct.calcsize(fmt)))[0]

    def string_array(self, count: int) -> list[bytes]:
        buf, end, pos = self.buf, self.end, self.pos
        u64 = self._u64
        out: list[bytes] = []
        append = out.append
        for _ in range(count):
            if pos + 8 > end:
                raise _Truncated
            n = u64(buf, pos)[0]
            pos += 8
            if pos + n > end:
                raise _Truncated
            append(buf[pos : pos + n])
            pos += n
        self.pos = pos
        return out

    def numeric_array(self, kind: int, count: int) -> np.ndarray[Any, Any]:
        dtype = np.dtype(self.order + _NUMPY[kind])
        start = self.take(dtype.itemsize * count)
        array: np.ndarray[Any, Any] = np.frombuffer(
            self.buf, dtype=dtype, count=count, offset=start
        ).copy()
        return array

    def skip_array(self, depth: int = 0) -> None:
        """Move past an array value (its element type and count come first)."""
        inner, count = self.u32(), self.u64()
        if inner in _SCALAR:
            self.take(struct.calcsize(_SCALAR[inner]) * count)
        elif inner == _STRING:
            buf, end, pos, u64 = self.buf, self.end, self.pos, self._u64
            for _ in range(count):
                if pos + 8 > end:
                    raise _Truncated
                pos += 8 + u64(buf, pos)[0]
            if pos > end:
                raise _Truncated
            self.pos = pos
        elif inner == _ARRAY and depth < _MAX_NESTING:
            for _ in range(count):
                self.skip_array(depth + 1)
        elif inner == _ARRAY:
            raise _BadValue(f"arrays nested more than {_MAX_NESTING} deep")
        else:
            raise _BadValue(f"an array of unknown type {inner}")


def _read_metadata(buf: Any, where: str) -> dict[str, Any]:
    """The metadata keys a vocabulary needs (scalars, strings, tokens and token types)."""
    if len(buf) < 8 or bytes(buf[:4]) != _MAGIC:
        raise VocabularyError(f"{where} is not a GGUF file (bad magic {bytes(buf[:4])!r})")
    (version,) = struct.unpack_from("<I", buf, 4)
    order = "<"
    if version & 0xFFFF == 0 and version:  # written big-endian
        order, version = ">", struct.unpack_from(">I", buf, 4)[0]
    if version not in (2, 3):
        raise VocabularyError(f"{where}: GGUF version {version} is not supported (only 2 and 3)")
    reader = _Reader(buf, order, pos=8)
    meta: dict[str, Any] = {}
    try:
        reader.u64()  # tensor count
        n_kv = reader.u64()
        for _ in range(n_kv):
            key_bytes = reader.raw_string()
            key = key_bytes.decode("utf-8", "replace")
            kind = reader.u32()
            if kind not in _SCALAR and kind not in (_STRING, _ARRAY):
                raise VocabularyError(f"{where}: metadata key {key!r} has unknown type {kind}")
            if kind == _ARRAY and key in _WANTED_ARRAYS:
                inner, count = reader.u32(), reader.u64()
                if inner == _STRING:
                    meta[key] = reader.string_array(count)
                elif inner in _NUMPY:
                    meta[key] = reader.numeric_array(inner, count)
                else:
                    raise VocabularyError(f"{where}: metadata {key!r} holds arrays of type {inner}")
            elif kind == _ARRAY:
                try:
                    reader.skip_array()
                except _BadValue as exc:
                    raise VocabularyError(f"{where}: metadata key {key!r} holds {exc}") from None
                meta[key] = _SKIPPED_ARRAY
            elif kind == _STRING:
                meta[key] = reader.raw_string()
            else:
                meta[key] = reader.scalar(kind)
    except _Truncated:
        raise VocabularyError(
            f"{where} is truncated: the file ends inside its metadata (at byte {reader.pos})"
        ) from None
    return meta


def _text(value: Any) -> str | None:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else None


def _token_bytes(
    pieces: list[bytes], types: np.ndarray[Any, Any], model: str, where: str
) -> tuple[list[bytes | None], set[int]]:
    """Token bytes and special ids from token strings and llama.cpp token types."""
    tokens: list[bytes | None] = [None] * len(pieces)
    special = {int(i) for i in np.flatnonzero((types == _CONTROL) | (types == _UNKNOWN))}
    normal = np.flatnonzero(types == _NORMAL).tolist()
    for i in np.flatnonzero(types == _USER_DEFINED).tolist():
        tokens[i] = pieces[i] or None
    if model == "gpt2":
        try:
            texts = [pieces[i].decode("utf-8") for i in normal]
        except UnicodeDecodeError:
            bad = next(i for i in normal if not _is_utf8(pieces[i]))
            raise VocabularyError(f"{where}: token {bad} is not valid UTF-8") from None
        for i, data in zip(normal, byte_level_many(texts, byte_level_table()), strict=True):
            tokens[i] = data or None
    else:  # sentencepiece style
        for i in normal:
            tokens[i] = pieces[i].replace(_SPACE_MARK, b" ") or None
        for i in np.flatnonzero(types == _BYTE).tolist():
            m = _BYTE_TOKEN.fullmatch(pieces[i])
            if m is None:
                shown = pieces[i][:20].decode("utf-8", "replace")
                raise VocabularyError(f"{where}: byte token {i} is {shown!r}, not <0xXX>")
            tokens[i] = bytes((int(m.group(1), 16),))
    return tokens, special


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def load_gguf(
    path: str | os.PathLike[str], *, size: int | None, eos: Iterable[int] | None
) -> Loaded:
    """(tokens, eos ids, special ids, size) of a GGUF file's tokenizer metadata."""
    try:
        file = Path(os.fspath(path))
    except TypeError:
        raise VocabularyError(f"GGUF path must be a path, not {type(path).__name__}") from None
    where = f"GGUF file {file}"
    try:
        with open(file, "rb") as handle:
            length = os.fstat(handle.fileno()).st_size
            if length < 8:
                raise VocabularyError(f"{where} is not a GGUF file ({length} bytes)")
            with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as buf:
                meta = _read_metadata(buf, where)
    except FileNotFoundError:
        raise VocabularyError(f"{where} does not exist") from None
    except (OSError, ValueError) as exc:  # ValueError: a NUL in the path
        raise VocabularyError(f"cannot read {where}: {exc}") from None

    model = _text(meta.get("tokenizer.ggml.model"))
    if model is None:
        raise VocabularyError(f"{where} has no tokenizer (no tokenizer.ggml.model)")
    if model not in ("gpt2", "llama", "t5"):
        raise VocabularyError(
            f"{where}: tokenizer model {model!r} is not supported (gpt2, llama, t5)"
        )
    pieces = meta.get("tokenizer.ggml.tokens")
    if not isinstance(pieces, list) or not pieces:
        raise VocabularyError(f"{where} has no token list (tokenizer.ggml.tokens)")
    types = meta.get("tokenizer.ggml.token_type")
    if types is None:
        types = np.full(len(pieces), _NORMAL, dtype=np.int32)
    elif not isinstance(types, np.ndarray) or len(types) != len(pieces):
        raise VocabularyError(
            f"{where}: tokenizer.ggml.token_type does not have one entry per token"
        )
    tokens, special = _token_bytes(pieces, types, model, where)

    if eos is None:
        eos_ids: set[int] = set()
        for key in _EOS_KEYS:
            value = meta.get(key)
            if value is None:
                continue
            if not isinstance(value, int) or isinstance(value, bool) or \
                    not 0 <= value < len(tokens):
                raise VocabularyError(f"{where}: {key} = {value!r} is not a token id")
            eos_ids.add(value)
        # as llama.cpp does: control tokens named like a well-known end marker also end
        eos_ids.update(i for i in special if pieces[i].decode("utf-8", "replace") in END_MARKERS)
        eos = eos_ids
    width = size
    arch = _text(meta.get("general.architecture"))
    declared = meta.get(f"{arch}.vocab_size") if arch else None
    if width is None and isinstance(declared, int) and declared > len(tokens):
        if declared > MAX_VOCABULARY_SIZE:
            raise VocabularyError(
                f"{where}: {arch}.vocab_size = {declared} is above the largest supported "
                f"({MAX_VOCABULARY_SIZE})"
            )
        width = declared
    return tokens, frozenset(eos), frozenset(special), width
