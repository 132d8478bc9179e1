"""Vocabularies from Hugging Face tokenizers: ``tokenizer.json`` files and tokenizer objects.

Token bytes follow what the tokenizer's decoder writes for the token, so that the bytes of a
token are the text the model adds when it emits it:

* byte-level BPE (a ``ByteLevel`` decoder or pre-tokenizer): GPT-2 byte alphabet;
* sentencepiece style (``Metaspace`` / ``Replace ▁`` / ``ByteFallback`` decoders, or a
  ``Metaspace`` pre-tokenizer): ``▁`` is a space, ``<0xXX>`` is one byte when the model
  or decoder uses byte fallback.

Added tokens marked ``special`` are special ids with no text (``None``); other added tokens
are text. Tokens with no text at all (an empty string) become ``None``. Context-dependent
decoder steps (stripping the leading space of the first token) are not part of a token's
bytes: the mask engine sees a sentencepiece ``▁Hello`` as `` Hello``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gbnfkit._errors import VocabularyError
from gbnfkit.tokens._token_text import (
    END_MARKERS,
    byte_level_many,
    byte_level_table,
    sentencepiece_bytes,
)
from gbnfkit.tokens._vocabulary import check_count

__all__ = ["load_huggingface", "load_tokenizer_json", "parse_tokenizer_json"]

Loaded = tuple[list[bytes | None], frozenset[int], frozenset[int], "int | None"]

_SPACE_MARK = "\u2581"


@dataclass
class ParsedTokenizer:
    """What a ``tokenizer.json`` says, ready for :class:`~gbnfkit.Vocabulary`."""

    tokens: list[bytes | None]
    special: set[int] = field(default_factory=set)
    ids_by_name: dict[str, int] = field(default_factory=dict)
    special_names: dict[str, int] = field(default_factory=dict)


def _as_path(path: object, what: str) -> Path:
    try:
        return Path(os.fspath(path))  # type: ignore[call-overload]
    except TypeError:
        raise VocabularyError(f"{what} must be a path, not {type(path).__name__}") from None


def _read_json(path: Path, what: str) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise VocabularyError(f"{what} {path} does not exist") from None
    except (OSError, ValueError) as exc:  # not UTF-8, or a NUL in the path
        raise VocabularyError(f"cannot read {what} {path}: {exc}") from None
    try:
        return json.loads(text)
    except RecursionError:
        raise VocabularyError(f"{what} {path} nests too deeply to read") from None
    except json.JSONDecodeError as exc:
        raise VocabularyError(
            f"{what} {path} is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        ) from None


def _decoder_steps(node: Any) -> list[Mapping[str, Any]]:
    """The decoder (or pre-tokenizer) steps of a tokenizer.json node, flattened."""
    if not isinstance(node, Mapping):
        return []
    inner = node.get("decoders", node.get("pretokenizers"))
    if node.get("type") == "Sequence" and isinstance(inner, list):
        steps: list[Mapping[str, Any]] = []
        for child in inner:
            steps.extend(_decoder_steps(child))
        return steps
    return [node]


def _space_replacement(steps: list[Mapping[str, Any]]) -> str | None:
    """The character a sentencepiece-style decoder turns into a space, if any."""
    for step in steps:
        kind = step.get("type")
        if kind == "Metaspace":
            rep = step.get("replacement", _SPACE_MARK)
            return rep if isinstance(rep, str) and rep else _SPACE_MARK
        if kind == "Replace" and step.get("content") == " ":
            pattern = step.get("pattern")
            if isinstance(pattern, Mapping) and isinstance(pattern.get("String"), str):
                return str(pattern["String"])
    return None


def _model_vocab(model: Mapping[str, Any], source: str) -> tuple[str, list[tuple[str, int]]]:
    """(model type, [(token string, id)]) of a tokenizer.json ``model``."""
    kind = model.get("type")
    vocab = model.get("vocab")
    if kind is None:  # old files name no type: BPE has merges, Unigram a list vocabulary
        kind = "BPE" if "merges" in model else "Unigram" if isinstance(vocab, list) else None
    if kind == "BPE":
        if not isinstance(vocab, Mapping):
            raise VocabularyError(f"{source}: model.vocab of a BPE model must be an object")
        pairs = list(vocab.items())
        for piece, tid in pairs:
            if not isinstance(tid, int) or isinstance(tid, bool) or tid < 0:
                raise VocabularyError(f"{source}: token {piece!r} has id {tid!r}, not an id")
        if len({tid for _, tid in pairs}) != len(pairs):
            # two strings for one id: which one the model means cannot be told (tokenizers
            # keeps either, as its hash order falls), so the file is corrupt
            first: dict[int, str] = {}
            for piece, tid in pairs:
                if tid in first:
                    raise VocabularyError(
                        f"{source}: tokens {first[tid]!r} and {piece!r} both have id {tid}; "
                        "the file is corrupt"
                    )
                first[tid] = piece
        return "BPE", pairs
    if kind == "Unigram":
        if not isinstance(vocab, list):
            raise VocabularyError(f"{source}: model.vocab of a Unigram model must be a list")
        out: list[tuple[str, int]] = []
        for i, entry in enumerate(vocab):
            if not (isinstance(entry, list) and entry and isinstance(entry[0], str)):
                raise VocabularyError(f"{source}: Unigram vocab entry {i} is not [piece, score]")
            out.append((entry[0], i))
        return "Unigram", out
    if kind in ("WordPiece", "WordLevel"):
        raise VocabularyError(
            f"{source}: {kind} vocabularies are not supported (their decoder joins tokens "
            "with spaces that depend on the neighbouring tokens, so a token has no fixed bytes)"
        )
    raise VocabularyError(f"{source}: unknown tokenizer model type {kind!r}")


def parse_tokenizer_json(data: Any, source: str) -> ParsedTokenizer:
    """Token bytes and special ids of a parsed ``tokenizer.json`` document."""
    if not isinstance(data, Mapping) or not isinstance(data.get("model"), Mapping):
        raise VocabularyError(f"{source}: not a tokenizer.json document (no 'model' object)")
    model: Mapping[str, Any] = data["model"]
    kind, pairs = _model_vocab(model, source)

    decoder_steps = _decoder_steps(data.get("decoder"))
    pre_steps = _decoder_steps(data.get("pre_tokenizer"))
    decoder_kinds = {str(step.get("type")) for step in decoder_steps}
    byte_level = "ByteLevel" in decoder_kinds or (
        not decoder_steps and any(step.get("type") == "ByteLevel" for step in pre_steps)
    )
    space_mark = _space_replacement(decoder_steps) or (
        None if decoder_steps else _space_replacement(pre_steps)
    )
    byte_fallback = bool(model.get("byte_fallback")) or "ByteFallback" in decoder_kinds
    if not byte_level and space_mark is None and not byte_fallback:
        shown = sorted(str(k) for k in decoder_kinds) or ["none"]
        raise VocabularyError(
            f"{source}: cannot tell how {kind} token strings map to bytes "
            f"(decoder: {', '.join(shown)}; expected ByteLevel, Metaspace, Replace or ByteFallback)"
        )

    added = data.get("added_tokens") or []
    if not isinstance(added, list):
        raise VocabularyError(f"{source}: added_tokens must be a list")
    added_entries: list[tuple[int, str, bool]] = []
    for i, entry in enumerate(added):
        if not isinstance(entry, Mapping):
            raise VocabularyError(f"{source}: added_tokens[{i}] is not an object")
        tid, content = entry.get("id"), entry.get("content")
        if not isinstance(tid, int) or isinstance(tid, bool) or tid < 0:
            raise VocabularyError(f"{source}: added_tokens[{i}] has id {tid!r}, not an id")
        if not isinstance(content, str):
            raise VocabularyError(f"{source}: added_tokens[{i}] has no string content")
        marked = entry.get("special", False)
        if not isinstance(marked, bool):
            raise VocabularyError(
                f"{source}: added_tokens[{i}] has special {marked!r}, not true or false"
            )
        added_entries.append((tid, content, marked))

    count = 1 + max(
        max((tid for _, tid in pairs), default=-1),
        max((t for t, _, _ in added_entries), default=-1),
    )
    if count == 0:
        raise VocabularyError(f"{source}: the vocabulary has no tokens")
    check_count(count, source)

    def to_bytes(pieces: list[str]) -> list[bytes]:
        if byte_level:
            return byte_level_many(pieces, table)
        mark = space_mark or _SPACE_MARK
        if mark == _SPACE_MARK:
            return [sentencepiece_bytes(p, byte_fallback=byte_fallback) for p in pieces]
        return [
            sentencepiece_bytes(p.replace(mark, _SPACE_MARK), byte_fallback=byte_fallback)
            for p in pieces
        ]

    table = byte_level_table()
    tokens: list[bytes | None] = [None] * count
    ids_by_name: dict[str, int] = {}
    for (piece, tid), data_bytes in zip(pairs, to_bytes([p for p, _ in pairs]), strict=True):
        tokens[tid] = data_bytes or None
        ids_by_name[piece] = tid
    special: set[int] = set()
    special_names: dict[str, int] = {}
    added_bytes = to_bytes([content for _, content, _ in added_entries])
    for (tid, content, is_special), data_bytes in zip(added_entries, added_bytes, strict=True):
        ids_by_name[content] = tid
        if is_special:
            tokens[tid] = None
            special.add(tid)
            special_names[content] = tid
        else:
            tokens[tid] = data_bytes or None
            special.discard(tid)
    return ParsedTokenizer(tokens, special, ids_by_name, special_names)


def _token_name(value: Any) -> str | None:
    """The token text of a tokenizer_config.json entry (a string or an AddedToken object)."""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping) and isinstance(value.get("content"), str):
        return str(value["content"])
    return None


def _config_ids(value: Any, config: Path) -> set[int]:
    items = value if isinstance(value, list) else [value]
    for item in items:
        if not isinstance(item, int) or isinstance(item, bool) or item < 0:
            raise VocabularyError(f"{config}: eos_token_id holds {item!r}, not a token id")
    return set(items)


def default_eos(special_names: Mapping[str, int]) -> set[int]:
    """End-of-sequence ids guessed from well-known end-marker names among special tokens."""
    return {tid for name, tid in special_names.items() if name in END_MARKERS}


def _eos_beside(path: Path, parsed: ParsedTokenizer) -> set[int]:
    """End ids from tokenizer_config.json and generation_config.json next to ``path``."""
    found = False
    eos: set[int] = set()
    config = path.with_name("tokenizer_config.json")
    if config.is_file():
        data = _read_json(config, "tokenizer config")
        if isinstance(data, Mapping) and data.get("eos_token") is not None:  # null: none named
            name = _token_name(data["eos_token"])
            if name is None:
                raise VocabularyError(
                    f"{config}: eos_token is {data['eos_token']!r:.60}, not a token's text "
                    "or an AddedToken object"
                )
            if name not in parsed.ids_by_name:
                raise VocabularyError(f"{config}: eos_token {name!r} is not a token of {path}")
            eos.add(parsed.ids_by_name[name])
            found = True
    generation = path.with_name("generation_config.json")
    if generation.is_file():
        data = _read_json(generation, "generation config")
        if isinstance(data, Mapping) and data.get("eos_token_id") is not None:
            eos |= _config_ids(data["eos_token_id"], generation)
            found = True
    return eos if found else default_eos(parsed.special_names)


def load_tokenizer_json(
    path: str | os.PathLike[str], *, size: int | None, eos: Iterable[int] | None
) -> Loaded:
    """(tokens, eos ids, special ids, size) of a ``tokenizer.json`` file or model directory."""
    file = _as_path(path, "tokenizer.json path")
    if file.is_dir():
        file = file / "tokenizer.json"
    parsed = parse_tokenizer_json(_read_json(file, "tokenizer file"), str(file))
    eos_ids = _eos_beside(file, parsed) if eos is None else eos
    width = _logits_width_beside(file, len(parsed.tokens)) if size is None else size
    return parsed.tokens, frozenset(eos_ids), frozenset(parsed.special), width


def _logits_width_beside(path: Path, count: int) -> int | None:
    """The model's ``vocab_size`` from config.json next to ``path``, if wider than ``count``."""
    config = path.with_name("config.json")
    if not config.is_file():
        return None
    data = _read_json(config, "model config")
    width = data.get("vocab_size") if isinstance(data, Mapping) else None
    if isinstance(width, int) and not isinstance(width, bool) and width > count:
        return width
    return None


def _from_backend(backend: Any, what: str) -> ParsedTokenizer:
    try:
        text = backend.to_str()
    except Exception as exc:  # the tokenizers library raises its own exception types
        raise VocabularyError(f"cannot serialise the {what}: {exc}") from None
    if not isinstance(text, str):
        raise VocabularyError(f"the {what}'s to_str() did not return JSON text")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise VocabularyError(f"the {what} gave invalid JSON: {exc.msg}") from None
    return parse_tokenizer_json(data, f"the {what}")


def _from_slow(tokenizer: Any) -> ParsedTokenizer:
    """A slow ``transformers`` tokenizer: byte-level (GPT-2 family) or sentencepiece."""
    name = type(tokenizer).__name__
    vocab = tokenizer.get_vocab()
    if not isinstance(vocab, Mapping):
        raise VocabularyError(f"{name}.get_vocab() did not return a mapping")
    added_decoder = getattr(tokenizer, "added_tokens_decoder", None) or {}
    added = {int(tid): tok for tid, tok in added_decoder.items()}
    base = [(p, int(t)) for p, t in vocab.items() if int(t) not in added]
    if hasattr(tokenizer, "byte_encoder"):
        table = byte_level_table()
        base_bytes = byte_level_many([p for p, _ in base], table)
    elif hasattr(tokenizer, "sp_model"):
        base_bytes = [sentencepiece_bytes(p, byte_fallback=True) for p, _ in base]
    else:
        raise VocabularyError(
            f"cannot tell how the tokens of {name} map to bytes "
            "(neither byte-level BPE nor sentencepiece)"
        )
    count = 1 + max([t for _, t in base] + list(added), default=-1)
    if count == 0:
        raise VocabularyError(f"{name} has an empty vocabulary")
    check_count(count, name)
    tokens: list[bytes | None] = [None] * count
    for (_, tid), data in zip(base, base_bytes, strict=True):
        tokens[tid] = data or None
    parsed = ParsedTokenizer(tokens, ids_by_name={p: t for p, t in vocab.items()})
    for tid, tok in added.items():
        content = str(getattr(tok, "content", tok))
        if getattr(tok, "special", False):
            tokens[tid] = None
            parsed.special.add(tid)
            parsed.special_names[content] = tid
        else:
            tokens[tid] = content.encode("utf-8") or None
    return parsed


def load_huggingface(tokenizer: Any, *, size: int | None, eos: Iterable[int] | None) -> Loaded:
    """(tokens, eos ids, special ids, size) of a transformers or tokenizers tokenizer."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is not None:  # transformers PreTrainedTokenizerFast
        parsed = _from_backend(backend, f"backend tokenizer of {type(tokenizer).__name__}")
    elif hasattr(tokenizer, "to_str") and hasattr(tokenizer, "id_to_token"):  # tokenizers
        parsed = _from_backend(tokenizer, "tokenizers.Tokenizer")
    elif hasattr(tokenizer, "get_vocab") and hasattr(tokenizer, "convert_ids_to_tokens"):
        parsed = _from_slow(tokenizer)
    else:
        raise VocabularyError(
            f"cannot read a vocabulary from {type(tokenizer).__name__}: expected a transformers "
            "tokenizer or a tokenizers.Tokenizer (use from_tiktoken for tiktoken encodings)"
        )
    if eos is None:
        eos_id = getattr(tokenizer, "eos_token_id", None)
        if isinstance(eos_id, int) and not isinstance(eos_id, bool):
            eos = {eos_id}
        elif isinstance(eos_id, list):
            eos = {int(i) for i in eos_id}
        else:
            eos = default_eos(parsed.special_names)
    width = size
    is_transformers = backend is not None or hasattr(tokenizer, "convert_ids_to_tokens")
    if width is None and is_transformers and hasattr(tokenizer, "__len__"):
        width = max(len(tokenizer), len(parsed.tokens))
    return parsed.tokens, frozenset(eos), frozenset(parsed.special), width
