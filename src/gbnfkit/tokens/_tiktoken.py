"""Vocabularies from tiktoken: a ``tiktoken.Encoding`` or a ``.tiktoken`` ranks file.

A ranks file has one token per line: the token's bytes in base64, a space, its rank (the
token id). It holds no special tokens; pass them as ``special_tokens`` (name -> id). The
``tiktoken`` package is not needed to read a ranks file.
"""

from __future__ import annotations

import binascii
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from gbnfkit._errors import VocabularyError
from gbnfkit.tokens._token_text import END_MARKERS
from gbnfkit.tokens._vocabulary import check_count

__all__ = ["load_tiktoken", "read_ranks_file"]

_LINE = re.compile(rb"^([A-Za-z0-9+/]+={0,2})[ \t]+([0-9]+)[ \t]*\r?$", re.MULTILINE)

Loaded = tuple[list[bytes | None], frozenset[int], frozenset[int], "int | None"]


def read_ranks_file(path: Path) -> dict[int, bytes]:
    """Token id -> bytes of a ``.tiktoken`` ranks file."""
    try:
        content = path.read_bytes()
    except FileNotFoundError:
        raise VocabularyError(f"tiktoken ranks file {path} does not exist") from None
    except (OSError, ValueError) as exc:  # ValueError: a NUL in the path
        raise VocabularyError(f"cannot read tiktoken ranks file {path}: {exc}") from None
    lines = _LINE.findall(content)
    if len(lines) != content.count(b"\n") + (not content.endswith(b"\n")):
        # blank lines, or lines that are not '<base64> <rank>': find the first bad one
        for lineno, line in enumerate(content.splitlines(), 1):
            if line.strip() and _LINE.fullmatch(line.rstrip(b"\r")) is None:
                shown = line[:60].decode("utf-8", "replace")
                raise VocabularyError(
                    f"{path}, line {lineno}: expected '<base64 token> <rank>', got {shown!r}"
                )
        if len(lines) != sum(1 for line in content.splitlines() if line.strip()):
            raise VocabularyError(
                f"{path}: stray line breaks; expected '<base64 token> <rank>' lines"
            )
    if not lines:
        raise VocabularyError(f"tiktoken ranks file {path} holds no tokens")
    encoded, rank_text = zip(*lines, strict=True)
    try:
        tokens = list(map(binascii.a2b_base64, encoded))
    except binascii.Error as exc:  # bad padding
        raise VocabularyError(f"{path}: a token is not valid base64 ({exc})") from None
    ids = list(map(int, rank_text))
    ranks = dict(zip(ids, tokens, strict=True))
    if len(ranks) != len(lines):
        seen: set[int] = set()
        for rank in ids:
            if rank in seen:
                raise VocabularyError(f"{path}: rank {rank} appears twice")
            seen.add(rank)
    return ranks


def _from_encoding(encoding: Any) -> tuple[dict[int, bytes], dict[str, int]]:
    """(id -> bytes, special name -> id) of a tiktoken.Encoding, through its public API."""
    special_names: dict[str, int] = {
        name: encoding.encode_single_token(name) for name in encoding.special_tokens_set
    }
    special_ids = set(special_names.values())
    decode = encoding.decode_single_token_bytes
    ranks: dict[int, bytes] = {}
    for tid in range(encoding.n_vocab):
        if tid in special_ids:
            continue
        try:
            ranks[tid] = decode(tid)
        except KeyError:  # ids between the ranks and the special tokens may be unused
            continue
    return ranks, special_names


def load_tiktoken(
    source: Any,
    *,
    special_tokens: Mapping[str, int] | None,
    eos: Iterable[int] | None,
    size: int | None,
) -> Loaded:
    """(tokens, eos ids, special ids, size) of a tiktoken Encoding or ranks file."""
    if hasattr(source, "decode_single_token_bytes") and hasattr(source, "n_vocab"):
        ranks, names = _from_encoding(source)
        where = f"tiktoken encoding {getattr(source, 'name', '?')!r}"
    else:
        try:
            path = Path(os.fspath(source))
        except TypeError:
            raise VocabularyError(
                "from_tiktoken needs a tiktoken.Encoding or the path of a .tiktoken file, "
                f"not {type(source).__name__}"
            ) from None
        ranks, names = read_ranks_file(path), {}
        where = str(path)
    if special_tokens is not None:
        if not isinstance(special_tokens, Mapping):
            raise VocabularyError(
                f"special_tokens must map names to ids, not {type(special_tokens).__name__}"
            )
        names = dict(names)
        for name, tid in special_tokens.items():
            if not isinstance(tid, int) or isinstance(tid, bool) or tid < 0:
                raise VocabularyError(f"special token {name!r} has id {tid!r}, not a token id")
            if tid in ranks:
                raise VocabularyError(
                    f"special token {name!r} has id {tid}, which is already a token of {where}"
                )
            names[str(name)] = tid
    count = 1 + max(max(ranks), max(names.values(), default=-1))
    check_count(count, where)
    tokens: list[bytes | None] = [None] * count
    for tid, data in ranks.items():
        tokens[tid] = data or None
    eos_ids = {tid for name, tid in names.items() if name in END_MARKERS} if eos is None else eos
    return tokens, frozenset(eos_ids), frozenset(names.values()), size
