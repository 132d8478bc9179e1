"""How the token strings of tokenizer families map back to the bytes they stand for.

* Byte-level BPE (GPT-2, Llama 3, Qwen, DeepSeek, SmolLM...): every byte is written as one
  printable character of the GPT-2 byte alphabet (``bytes_to_unicode``), e.g. ``Ġ`` for a
  space. A token string with a character outside that alphabet (added tokens such as
  ``<｜User｜>``) stands for its own UTF-8 bytes, as the ``tokenizers`` ByteLevel decoder does.
* Sentencepiece style (Llama 2, Mistral, Gemma...): ``▁`` stands for a space and the
  byte-fallback tokens ``<0x00>`` ... ``<0xFF>`` for one byte each; the rest is UTF-8.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = [
    "END_MARKERS",
    "bytes_to_unicode",
    "byte_level_many",
    "byte_level_table",
    "sentencepiece_bytes",
]

#: Names of special tokens that end a turn or a document in well-known model families:
#: llama.cpp's end-of-generation list (llama-vocab.cpp) plus the Llama 3 and sentencepiece
#: end-of-sequence names. Used for end ids when the vocabulary's own files do not name them
#: (tiktoken, bare tokenizers) and, as llama.cpp does, added to a GGUF file's end ids.
END_MARKERS = frozenset(
    {
        "<|eot_id|>",
        "<|im_end|>",
        "<|end|>",
        "<end_of_turn>",
        "<|endoftext|>",
        "<EOT>",
        "_<EOT>",
        "<｜end▁of▁sentence｜>",
        "<|return|>",
        "<|call|>",
        "<|eom_id|>",
        "<|end_of_text|>",
        "</s>",
    }
)

_SPACE_MARK = "\u2581"  # ▁
_BYTE_TOKEN = re.compile(r"<0x([0-9A-Fa-f]{2})>")


def bytes_to_unicode() -> dict[int, str]:
    """The GPT-2 byte alphabet: byte value -> the printable character written for it."""
    printable = (
        list(range(ord("!"), ord("~") + 1))
        + list(range(ord("¡"), ord("¬") + 1))
        + list(range(ord("®"), ord("ÿ") + 1))
    )
    table = {b: chr(b) for b in printable}
    extra = 0
    for b in range(256):
        if b not in table:
            table[b] = chr(256 + extra)
            extra += 1
    return table


def byte_level_table() -> dict[int, int]:
    """A ``str.translate`` table turning alphabet characters into code points 0-255.

    Characters below 256 that are *not* in the alphabet (a plain space, control
    characters) are sent to a code point above 255, so that ``encode("latin-1")`` of the
    translated string fails exactly when the token is not written in the alphabet.
    """
    table: dict[int, int] = {ord(ch): b for b, ch in bytes_to_unicode().items()}
    for c in range(256):
        if c not in table:
            table[c] = 0x110000 - 256 + c  # some code point > 255; never produced otherwise
    return table


def byte_level_many(pieces: Iterable[str], table: dict[int, int]) -> list[bytes]:
    """The bytes of byte-level BPE token strings (see the module docstring)."""
    out: list[bytes] = []
    append = out.append
    for piece in pieces:
        try:
            append(piece.translate(table).encode("latin-1"))
        except UnicodeEncodeError:
            append(piece.encode("utf-8", "surrogatepass"))
    return out


def sentencepiece_bytes(piece: str, *, byte_fallback: bool) -> bytes:
    """The bytes of a sentencepiece-style token string (see the module docstring)."""
    if byte_fallback and len(piece) == 6:
        m = _BYTE_TOKEN.fullmatch(piece)
        if m is not None:
            return bytes((int(m.group(1), 16),))
    return piece.replace(_SPACE_MARK, " ").encode("utf-8", "surrogatepass")
