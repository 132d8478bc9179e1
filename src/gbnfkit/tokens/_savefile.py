"""The file :meth:`CompiledGrammar.save` writes and :meth:`CompiledGrammar.load` reads.

A ``.npz`` archive (written at exactly the path given, whatever its suffix) of the
header fields (format, grammar and vocabulary fingerprints, context depth, digest) and
the arrays of the context splits (:data:`ARRAY_FIELDS`); reading checks everything, so
a damaged or foreign file raises :class:`~gbnfkit.LoadError`, never builds a wrong cache.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from gbnfkit._arguments import expect
from gbnfkit._errors import LoadError
from gbnfkit.tokens._bytestate import ByteAutomaton
from gbnfkit.tokens._index import VocabularyIndex

__all__ = [
    "ARRAY_FIELDS",
    "SAVED_FIELDS",
    "check_arrays",
    "digest",
    "read_npz",
    "scalar_int",
    "write_npz",
]

ARRAY_FIELDS = (
    "key_lengths",
    "keys",
    "accepted",
    "uncertain_lengths",
    "uncertain",
    "depths",
    "token_lengths",
    "uncertain_tokens",
)
SAVED_FIELDS = ("format", "grammar", "vocabulary", "context_depth", "digest", *ARRAY_FIELDS)


def write_npz(path: str | os.PathLike[str], arrays: dict[str, npt.NDArray[Any]]) -> None:
    """Write ``arrays`` as a ``.npz`` archive at exactly ``path`` (``np.savez`` given a
    name appends ``.npz`` to one that lacks it; given an open file, it writes there)."""
    expect(path, (str, os.PathLike), "path")
    with open(path, "wb") as fh:
        np.savez(fh, **arrays)  # type: ignore[arg-type]


def digest(arrays: dict[str, npt.NDArray[Any]]) -> str:
    """SHA-256 of the saved arrays (names, dtypes, shapes and bytes), in a fixed order."""
    h = hashlib.sha256()
    for name in ARRAY_FIELDS:
        arr = np.ascontiguousarray(arrays[name])
        h.update(f"{name}:{arr.dtype.str}:{arr.shape};".encode())
        h.update(arr.tobytes())
    return h.hexdigest()


def read_npz(path: str | os.PathLike[str], where: str) -> dict[str, npt.NDArray[Any]]:
    """Every array of the ``.npz`` file at ``path``; :class:`LoadError` if it cannot be read."""
    try:
        data = np.load(Path(path), allow_pickle=False)
        if not isinstance(data, np.lib.npyio.NpzFile):
            raise LoadError("not a .npz file (a single array)", path=where)
        with data:
            names = list(data.files)
            unknown = sorted(set(names) - set(SAVED_FIELDS))
            if unknown:
                raise LoadError(f"unknown fields: {', '.join(unknown[:5])}", path=where)
            return {name: np.asarray(data[name]) for name in names}
    except LoadError:
        raise
    except MemoryError:
        raise LoadError("the file declares arrays too large to read", path=where) from None
    except Exception as exc:  # zipfile.BadZipFile, EOFError, zlib.error, OSError, ValueError
        raise LoadError(f"unreadable ({type(exc).__name__}: {exc})", path=where) from None


def scalar_int(value: Any, name: str, where: str) -> int:
    value = np.asarray(value)
    if value.shape != () or value.dtype.kind not in "iu":
        raise LoadError(f"field {name} is not an integer", path=where)
    return int(value)


def check_arrays(
    arrays: dict[str, npt.NDArray[Any]],
    index: VocabularyIndex,
    automaton: ByteAutomaton,
    separator: int,
    where: str,
) -> None:
    """Shapes, dtypes and ranges of the saved arrays (so rebuilding cannot go astray):
    ``index`` and ``automaton`` are those of the compiled grammar they are loaded into,
    ``separator`` the value between the stacks of a context key."""
    for name in ARRAY_FIELDS:
        arr = arrays[name]
        if arr.dtype.kind not in "iu" or arr.ndim != (2 if name == "accepted" else 1):
            raise LoadError(f"field {name} has the wrong type or shape", path=where)
    rows = arrays["key_lengths"].shape[0]
    nwords = index.nwords
    if arrays["accepted"].shape != (rows, nwords):
        raise LoadError("field accepted has the wrong shape", path=where)
    for lengths, values in (
        ("key_lengths", "keys"),
        ("uncertain_lengths", "uncertain"),
        ("token_lengths", "uncertain_tokens"),
    ):
        counts = arrays[lengths]
        if (
            counts.shape[0] != rows
            or (counts < 0).any()
            or int(counts.sum()) != len(arrays[values])
        ):
            raise LoadError(f"fields {lengths} and {values} do not agree", path=where)
    if arrays["depths"].shape[0] != rows or (arrays["depths"] < 0).any():
        raise LoadError("field depths is out of range", path=where)
    if (arrays["key_lengths"] == 0).any():
        raise LoadError("field key_lengths holds an empty key", path=where)
    positions = len(automaton.program.kind)
    keys = arrays["keys"]
    if keys.size and (keys.min() < separator or keys.max() >= positions):
        raise LoadError("field keys holds positions outside the grammar", path=where)
    trie = index.trie
    unc = arrays["uncertain"]
    if unc.size and (unc.min() < 0 or unc.max() >= len(trie.depth)):
        raise LoadError("field uncertain holds nodes outside the vocabulary", path=where)
    tokens = arrays["uncertain_tokens"]
    if tokens.size and (tokens.min() < 0 or tokens.max() >= len(trie.sorted_bytes)):
        raise LoadError("field uncertain_tokens holds tokens outside the vocabulary", path=where)
