"""The vocabulary of a model: the exact bytes of every token id.

A :class:`Vocabulary` is what token masks are computed from. It knows, for every token
id the model can emit (``0 <= id < size``):

* the bytes the token adds to the output text, or ``None`` when it adds none that a
  grammar could match (special/control tokens, unused and padding ids);
* which ids end generation (:attr:`Vocabulary.eos_token_ids`);
* which ids are special/control tokens (:attr:`Vocabulary.special_token_ids`).

A grammar never allows a special token or a ``None`` id as text; end-of-sequence ids are
allowed only where the grammar is complete.

Choice for special tokens: the loaders store ``None`` for special/control tokens (their
names, like ``<|im_end|>``, are not text the model writes), and list them in
``special_token_ids``. The constructor also accepts bytes for a special id; such bytes
are kept for display but the id is still never allowed as text. Every end-of-sequence id
is special.
"""

from __future__ import annotations

import hashlib
import os
import struct
from collections.abc import Iterable, Mapping, Sequence
from operator import index
from typing import Any

from gbnfkit._errors import VocabularyError

__all__ = ["Vocabulary", "require_same_vocabulary"]

_PLAIN_TOKEN_TYPES = frozenset({bytes, type(None)})


MAX_VOCABULARY_SIZE = 1 << 24
"""The most token ids a vocabulary may have (16,777,216; models have up to ~260k): a larger
id or size read from a file means the file is corrupt, and would cost gigabytes."""


def check_count(count: int, source: str) -> None:
    """VocabularyError if ``count`` token ids are more than :data:`MAX_VOCABULARY_SIZE`."""
    if count > MAX_VOCABULARY_SIZE:
        raise VocabularyError(
            f"{source}: token id {count - 1} is above the largest supported "
            f"({MAX_VOCABULARY_SIZE - 1}); the file is corrupt"
        )


def _user_ids(ids: Iterable[int] | None, what: str) -> tuple[int, ...] | None:
    """Ids given to a loader, checked before the loader uses them (range checked later)."""
    if ids is None:
        return None
    return tuple(sorted(_check_ids(ids, what, MAX_VOCABULARY_SIZE)))


def _check_ids(ids: Iterable[int], what: str, size: int) -> frozenset[int]:
    """``ids`` as a frozenset of ints in ``[0, size)``, else VocabularyError."""
    if isinstance(ids, (str, bytes)):
        raise VocabularyError(f"{what} must be an iterable of token ids, not {type(ids).__name__}")
    try:
        items = list(ids)
    except TypeError:
        raise VocabularyError(
            f"{what} must be an iterable of token ids, not {type(ids).__name__}"
        ) from None
    out: set[int] = set()
    for item in items:
        if isinstance(item, bool):
            raise VocabularyError(f"{what} holds {item!r}, which is not a token id")
        try:
            value = index(item)
        except TypeError:
            raise VocabularyError(f"{what} holds {item!r}, which is not a token id") from None
        if not 0 <= value < size:
            raise VocabularyError(
                f"{what} holds token id {value}, outside the vocabulary (0..{size - 1})"
            )
        out.add(value)
    return frozenset(out)


class Vocabulary:
    """The bytes of every token id of a model, and its end-of-sequence and special ids.

    Args:
        tokens: ``tokens[i]`` is the bytes of token ``i``, or ``None`` for an id with no
            text (padding, unused, special/control tokens).
        eos_token_ids: ids that end generation. They are special (added to
            ``special_token_ids``); they may be ``None`` in ``tokens``.
        special_token_ids: ids of special/control tokens, never allowed as text.
        size: the model's logits width when larger than ``len(tokens)``; the extra ids
            are padding (``None``, never allowed). Defaults to ``len(tokens)``.

    Raises:
        VocabularyError: naming what is wrong (a token that is not bytes, an id out of
            range, a size smaller than the token list, an empty vocabulary).

    ``len(vocabulary)`` is :attr:`size`, the number of token ids. Two vocabularies are
    equal when their :attr:`fingerprint` is (same bytes, end and special ids, and size).
    Empty byte strings are accepted; the loaders never produce one for a text token
    (a token with no text becomes ``None``).
    """

    __slots__ = ("_tokens", "_size", "_eos", "_special", "_fingerprint")

    def __init__(
        self,
        tokens: Sequence[bytes | None],
        eos_token_ids: Iterable[int] = (),
        special_token_ids: Iterable[int] = (),
        *,
        size: int | None = None,
    ) -> None:
        if isinstance(tokens, (str, bytes, bytearray, Mapping)):
            raise VocabularyError(
                f"tokens must be a sequence of bytes or None, not {type(tokens).__name__}"
            )
        try:
            token_list = list(tokens)
        except TypeError:
            raise VocabularyError(
                f"tokens must be a sequence of bytes or None, not {type(tokens).__name__}"
            ) from None
        if not set(map(type, token_list)) <= _PLAIN_TOKEN_TYPES:  # fast path: all plain
            for i, tok in enumerate(token_list):
                if tok is None or type(tok) is bytes:
                    continue
                if isinstance(tok, (bytes, bytearray, memoryview)):
                    token_list[i] = bytes(tok)
                    continue
                raise VocabularyError(
                    f"token {i} is {type(tok).__name__} {tok!r:.40}; expected bytes or None"
                )
        if size is None:
            width = len(token_list)
        else:
            if isinstance(size, bool):
                raise VocabularyError(f"size must be an int, not {size!r}")
            try:
                width = index(size)
            except TypeError:
                raise VocabularyError(f"size must be an int, not {size!r}") from None
            if width < len(token_list):
                raise VocabularyError(
                    f"size {width} is smaller than the number of tokens ({len(token_list)})"
                )
        if width > MAX_VOCABULARY_SIZE:
            raise VocabularyError(
                f"size {width} is above the largest supported ({MAX_VOCABULARY_SIZE})"
            )
        if width == 0:
            raise VocabularyError("the vocabulary is empty (no token ids)")
        eos = _check_ids(eos_token_ids, "eos_token_ids", width)
        special = _check_ids(special_token_ids, "special_token_ids", width)
        self._tokens: tuple[bytes | None, ...] = tuple(token_list)
        self._size = width
        self._eos = eos
        self._special = special | eos
        self._fingerprint: str | None = None

    # accessors ---------------------------------------------------------------------------

    @property
    def size(self) -> int:
        """The number of token ids (the model's logits width), ``>= len(tokens)``."""
        return self._size

    @property
    def tokens(self) -> tuple[bytes | None, ...]:
        """The bytes of each token id below ``len(tokens)`` (ids above are padding)."""
        return self._tokens

    @property
    def eos_token_ids(self) -> frozenset[int]:
        """Ids that end generation (always also in :attr:`special_token_ids`)."""
        return self._eos

    @property
    def special_token_ids(self) -> frozenset[int]:
        """Ids of special/control tokens, including the end-of-sequence ids."""
        return self._special

    def token_bytes(self, token_id: int) -> bytes | None:
        """The bytes of ``token_id``, or ``None`` if it has no text.

        Raises:
            VocabularyError: ``token_id`` is not an id of this vocabulary.
        """
        if isinstance(token_id, bool):
            raise VocabularyError(f"{token_id!r} is not a token id")
        try:
            i = index(token_id)
        except TypeError:
            raise VocabularyError(f"{token_id!r} is not a token id") from None
        if not 0 <= i < self._size:
            raise VocabularyError(f"token id {i} is outside the vocabulary (0..{self._size - 1})")
        return self._tokens[i] if i < len(self._tokens) else None

    def is_text_token(self, token_id: int) -> bool:
        """True when ``token_id`` has bytes and is not special (a grammar may allow it)."""
        data = self.token_bytes(token_id)
        return data is not None and token_id not in self._special

    @property
    def fingerprint(self) -> str:
        """SHA-256 (hex) over tokens, end ids, special ids and size: a key for caches."""
        if self._fingerprint is None:
            h = hashlib.sha256()
            h.update(b"gbnfkit-vocabulary-v1\0")
            h.update(struct.pack("<QQ", self._size, len(self._tokens)))
            pack = struct.Struct("<q").pack
            for tok in self._tokens:
                if tok is None:
                    h.update(pack(-1))
                else:
                    h.update(pack(len(tok)))
                    h.update(tok)
            for ids in (self._eos, self._special):
                ordered = sorted(ids)
                h.update(struct.pack("<Q", len(ordered)))
                h.update(struct.pack(f"<{len(ordered)}Q", *ordered))
            self._fingerprint = h.hexdigest()
        return self._fingerprint

    # protocols ---------------------------------------------------------------------------

    def __len__(self) -> int:
        return self._size

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Vocabulary):
            return NotImplemented
        if self is other:
            return True
        if self._size != other._size or len(self._tokens) != len(other._tokens):
            return False
        return self.fingerprint == other.fingerprint

    def __hash__(self) -> int:
        return hash(self.fingerprint)

    def __repr__(self) -> str:
        text = sum(
            1 for i, t in enumerate(self._tokens) if t is not None and i not in self._special
        )
        eos = sorted(self._eos)
        shown = ", ".join(map(str, eos[:4])) + (", ..." if len(eos) > 4 else "")
        return (
            f"Vocabulary(size={self._size}, text_tokens={text}, "
            f"special={len(self._special)}, eos=[{shown}])"
        )

    # loaders (implemented in sibling modules) -------------------------------------------

    @classmethod
    def from_tokenizer_json(
        cls,
        path: str | os.PathLike[str],
        *,
        size: int | None = None,
        eos_token_ids: Iterable[int] | None = None,
    ) -> Vocabulary:
        """Read a Hugging Face ``tokenizer.json`` (or the one in a model directory).

        Byte-level BPE (GPT-2 byte alphabet) and sentencepiece-style vocabularies
        (``▁`` for space, ``<0xXX>`` byte-fallback tokens) are told apart from the model
        type, the decoder and ``byte_fallback``. Added tokens marked ``special`` are
        special ids with no text; other added tokens are text. End-of-sequence ids come
        from ``tokenizer_config.json`` and ``generation_config.json`` beside the file,
        unless ``eos_token_ids`` is given (with neither file, the well-known end markers
        among the special tokens). Unless ``size`` is given, the size is the model's
        ``vocab_size`` from a ``config.json`` beside the file when that is wider than the
        token list (models often have more logits than tokens).

        Raises:
            VocabularyError: the file is missing or unreadable, or its kind is unknown.
        """
        from gbnfkit.tokens._huggingface import load_tokenizer_json

        given = _user_ids(eos_token_ids, "eos_token_ids")
        tokens, eos, special, width = load_tokenizer_json(path, size=size, eos=given)
        return cls(tokens, eos, special, size=width)

    @classmethod
    def from_huggingface(
        cls,
        tokenizer: Any,
        *,
        size: int | None = None,
        eos_token_ids: Iterable[int] | None = None,
    ) -> Vocabulary:
        """From a ``transformers`` tokenizer (fast or slow) or a ``tokenizers.Tokenizer``.

        End-of-sequence ids default to the tokenizer's ``eos_token_id`` (for a bare
        ``tokenizers.Tokenizer``, the well-known end markers among its special tokens).

        Raises:
            VocabularyError: the object is not a tokenizer this function can read.
        """
        from gbnfkit.tokens._huggingface import load_huggingface

        given = _user_ids(eos_token_ids, "eos_token_ids")
        tokens, eos, special, width = load_huggingface(tokenizer, size=size, eos=given)
        return cls(tokens, eos, special, size=width)

    @classmethod
    def from_tiktoken(
        cls,
        encoding_or_ranks_file: Any,
        *,
        special_tokens: Mapping[str, int] | None = None,
        eos_token_ids: Iterable[int] | None = None,
        size: int | None = None,
    ) -> Vocabulary:
        """From a ``tiktoken.Encoding`` or a ``.tiktoken`` ranks file (base64 token, rank).

        ``special_tokens`` (name -> id) adds special ids (a ranks file has none; for an
        Encoding they default to its own). End-of-sequence ids default to the well-known
        end markers among the special tokens (``<|endoftext|>``, ``<|im_end|>``,
        ``<|eot_id|>``, ...).

        Raises:
            VocabularyError: the file is missing or malformed, or ids collide.
        """
        from gbnfkit.tokens._tiktoken import load_tiktoken

        tokens, eos, special, width = load_tiktoken(
            encoding_or_ranks_file,
            special_tokens=special_tokens,
            eos=_user_ids(eos_token_ids, "eos_token_ids"),
            size=size,
        )
        return cls(tokens, eos, special, size=width)

    @classmethod
    def from_gguf(
        cls,
        path: str | os.PathLike[str],
        *,
        size: int | None = None,
        eos_token_ids: Iterable[int] | None = None,
    ) -> Vocabulary:
        """Read the ``tokenizer.ggml.*`` metadata of a GGUF model file (no llama.cpp needed).

        ``tokenizer.ggml.model`` ``gpt2`` is byte-level BPE; ``llama`` (and ``t5``) are
        sentencepiece style with ``<0xXX>`` byte tokens. Token types decide: control and
        unknown tokens are special, unused tokens have no text, user-defined tokens are
        text as written. End-of-sequence ids are ``tokenizer.ggml.eos_token_id`` and the
        ``eot``/``eom`` ids when present, plus (as llama.cpp does) control tokens named
        like a well-known end marker (``<|endoftext|>``, ``<|im_end|>``, ...), unless
        ``eos_token_ids`` is given. The size is ``<arch>.vocab_size`` when that is larger
        than the token list.

        Raises:
            VocabularyError: the file is missing, truncated, not GGUF, or has no vocabulary.
        """
        from gbnfkit.tokens._gguf import load_gguf

        given = _user_ids(eos_token_ids, "eos_token_ids")
        tokens, eos, special, width = load_gguf(path, size=size, eos=given)
        return cls(tokens, eos, special, size=width)

    @classmethod
    def from_llama(cls, llm: Any) -> Vocabulary:
        """The vocabulary of a loaded ``llama_cpp.Llama``, read through llama.cpp itself.

        Pieces as llama.cpp writes them, control tokens special, llama.cpp's
        end-of-generation tokens as the end-of-sequence ids (see
        :func:`gbnfkit.integrations.llama_cpp.vocabulary_from_llama`; needs the
        ``[llama-cpp]`` extra).

        Raises:
            VocabularyError: ``llm`` is not a loaded ``Llama``.
            MissingDependencyError: llama-cpp-python is not installed.
        """
        from gbnfkit.integrations.llama_cpp import vocabulary_from_llama

        return vocabulary_from_llama(llm)


def require_same_vocabulary(
    got: Vocabulary, expected: Vocabulary, what: str, expected_what: str, hint: str = ""
) -> None:
    """Raise VocabularyError unless ``what`` (a matcher or compiled grammar, of ``got``)
    was compiled for ``expected``: token ids mean nothing across vocabularies, so it
    would constrain the wrong tokens (or fail on ids it does not have)."""
    if got != expected:
        raise VocabularyError(
            f"{what} was compiled for another vocabulary ({len(got)} tokens) than "
            f"{expected_what} ({len(expected)} tokens){hint}"
        )
