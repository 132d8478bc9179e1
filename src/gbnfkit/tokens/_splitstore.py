"""A directory of context splits shared across processes (``GrammarCompiler(cache_dir=...)``).

Only splits keyed by a *canonical context* are stored (the program reachable from a
context's frames, renumbered; see ``docs/masks.md``): such a split depends on nothing but
that canonical form and the vocabulary, so it is valid for every grammar, in every
process, that meets the same context -- the string bodies, numbers and whitespace of
JSON grammars, typically.

* **Content-addressed.** An entry's file name is the SHA-256 of the store format, the
  vocabulary's fingerprint and the canonical key; the file repeats all three in its
  header, with the other header fields (depth, tails) and a BLAKE2 checksum of the
  header and the arrays.  An entry is used only when all of them match and the header
  parses, so a truncated, corrupted, foreign or colliding file is ignored (the split is
  computed again and the file rewritten); it can never give a wrong mask or an error.
* **Safe under concurrent writers.** A file is written under a unique temporary name in
  the same directory and renamed into place (atomic on POSIX and Windows); readers
  see either no file or a whole one, and two writers of one entry write equal content.
* **Bounded.** At most ``max_entries`` entries (default 4,096) per directory: before
  writing a new entry a store counts the entries in the directory (whoever wrote them;
  2.3 ms at 4,096 entries), and once it finds ``max_entries`` it writes no new entry
  again (new splits are kept in memory only; replacing a damaged entry adds none).  The
  bound holds across processes, exceeded only by writers racing for the last places:
  at most one entry more per other store (process or thread) putting at that moment.
  Temporary files (``.tmp-*.npz``) are not entries; one older than ``stale_after``
  seconds (default 600; a writer's lives milliseconds) was left by a writer that died
  and is removed when counting (a live writer whose file was removed loses only that
  entry: its rename fails and is ignored).  An entry holds the accepted bits
  (sparse: 8 bytes per non-zero 32-token word, at most ``4 * ceil(V / 32)`` bytes
  dense), 4 bytes per uncertain token and its tails' bytes: 226 KB on average on a
  129k vocabulary (MaskBench), so about 0.9 GB at the default bound.
  Delete the directory to reclaim it; nothing else ever removes entries.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from gbnfkit._errors import ArgumentError

__all__ = ["SplitRecord", "SplitStore"]

_FORMAT = "gbnfkit-split-v2"  # v2: the checksum covers the header too
_TEMPORARY = ".tmp-"  # the prefix of a file being written
_ARRAYS = (
    "word_index",
    "word_bits",
    "uncertain",
    "uncertain_tokens",
    "tail_bytes",
    "tail_offsets",
    "tail_positions",
    "tail_counts",
    "header",
)


@dataclass(frozen=True)
class SplitRecord:
    """A context split in plain values (what a file holds)."""

    words: npt.NDArray[np.uint32]
    uncertain: tuple[int, ...]
    uncertain_tokens: tuple[int, ...]
    # the distinct tails, their tokens tail by tail, where each tail's tokens start
    tails: tuple[tuple[bytes, ...], npt.NDArray[np.int64], npt.NDArray[np.int64]] | None
    depth: int


class SplitStore:
    """Context splits of one vocabulary kept in ``directory`` (created if missing)."""

    def __init__(
        self,
        directory: str | os.PathLike[str],
        vocabulary_fingerprint: str,
        nwords: int,
        *,
        max_entries: int = 4096,
        stale_after: float = 600.0,
    ) -> None:
        if not os.fspath(directory):
            raise ArgumentError("cache_dir must name a directory, not ''")
        self.directory = Path(directory)
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except (OSError, ValueError) as exc:  # a file there, no permission, a NUL in it
            raise ArgumentError(
                f"cache_dir {os.fspath(directory)!r} cannot be used as a directory: {exc}"
            ) from None
        self.vocabulary = vocabulary_fingerprint
        self.nwords = nwords
        self.max_entries = max_entries
        self.stale_after = stale_after
        self._full = False  # the directory held max_entries entries when last counted

    def _name(self, key_text: str) -> Path:
        digest = hashlib.sha256(f"{_FORMAT}\0{self.vocabulary}\0{key_text}".encode()).hexdigest()
        return self.directory / f"{digest}.npz"

    def get(self, key: tuple[object, ...]) -> SplitRecord | None:
        """The stored split of canonical ``key``, or ``None`` (missing or not valid)."""
        key_text = repr(key)
        path = self._name(key_text)
        try:
            with np.load(path, allow_pickle=False) as data:
                arrays = {name: data[name] for name in _ARRAYS}
            return self._decode(arrays, key_text)
        except (OSError, ValueError, KeyError, EOFError, TypeError, IndexError):
            return None
        except Exception:  # a damaged zip raises zipfile.BadZipFile and others
            return None

    def put(self, key: tuple[object, ...], record: SplitRecord) -> None:
        """Store ``record`` under canonical ``key`` (best effort: errors are ignored)."""
        key_text = repr(key)
        path = self._name(key_text)
        # an existing file is a damaged or foreign one (else it was read): replace it
        if not path.exists() and not self._room():
            return
        arrays = self._encode(record, key_text)
        tmp = None
        try:
            fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=_TEMPORARY, suffix=".npz")
            with os.fdopen(fd, "wb") as fh:
                np.savez(fh, **arrays)  # type: ignore[arg-type]
            os.replace(tmp, path)
            tmp = None
        except OSError:
            pass
        finally:
            if tmp is not None:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass

    def _room(self) -> bool:
        """Whether the directory holds fewer than ``max_entries`` entries, counted now
        (so the entries of every store sharing it count); stale temporary files are
        removed on the way."""
        if self._full:
            return False
        try:
            names = os.listdir(self.directory)
        except OSError:
            return False
        now = time.time()
        for name in names:
            if name.startswith(_TEMPORARY):
                self._remove_if_stale(self.directory / name, now)
        # an entry's name: 64 hex digits and .npz (see _name)
        entries = sum(1 for name in names if len(name) == 68 and name.endswith(".npz"))
        if entries >= self.max_entries:
            self._full = True
        return not self._full

    def _remove_if_stale(self, path: Path, now: float) -> None:
        """Remove the temporary file ``path`` if not written for ``stale_after`` seconds
        (its writer died); another store may remove it at the same time."""
        try:
            if now - path.stat().st_mtime > self.stale_after:
                path.unlink()
        except OSError:
            pass

    # -- encoding ----------------------------------------------------------------
    def _encode(self, record: SplitRecord, key_text: str) -> dict[str, npt.NDArray[np.generic]]:
        words = record.words
        index = np.flatnonzero(words).astype(np.int64)
        if record.tails is not None:
            tails, positions, starts = record.tails
        else:
            tails, positions, starts = (), np.zeros(0, np.int64), np.zeros(1, np.int64)
        arrays: dict[str, npt.NDArray[np.generic]] = {
            "word_index": index.astype(np.int32),
            "word_bits": words[index].astype(np.uint32),
            "uncertain": np.array(record.uncertain, dtype=np.int32),
            "uncertain_tokens": np.array(record.uncertain_tokens, dtype=np.int32),
            "tail_bytes": np.frombuffer(b"".join(tails), dtype=np.uint8),
            "tail_offsets": np.cumsum([0] + [len(t) for t in tails], dtype=np.int64),
            "tail_positions": positions.astype(np.int32),
            "tail_counts": np.diff(starts).astype(np.int64),
        }
        header = [
            _FORMAT,
            self.vocabulary,
            key_text,
            str(self.nwords),
            str(record.depth),
            "tails" if record.tails is not None else "no-tails",
        ]
        arrays["header"] = np.array([*header, _checksum(arrays, header)])
        return arrays

    def _decode(
        self, arrays: dict[str, npt.NDArray[np.generic]], key_text: str
    ) -> SplitRecord | None:
        header = arrays["header"].tolist()
        if (
            not isinstance(header, list)
            or len(header) != 7
            or not all(isinstance(field, str) for field in header)
        ):
            return None
        fmt, vocabulary, stored_key, nwords, depth, has_tails, checksum = header
        if (
            (fmt, vocabulary, stored_key, nwords)
            != (_FORMAT, self.vocabulary, key_text, str(self.nwords))
            or has_tails not in ("tails", "no-tails")
            or not (depth.isascii() and depth.isdigit())
        ):
            return None
        payload = {name: arrays[name] for name in _ARRAYS if name != "header"}
        if checksum != _checksum(payload, header[:-1]):
            return None
        index = payload["word_index"]
        if len(index) and (int(index.min()) < 0 or int(index.max()) >= self.nwords):
            return None
        words = np.zeros(self.nwords, dtype=np.uint32)
        words[index] = payload["word_bits"]
        tails = None
        if has_tails == "tails":
            data = payload["tail_bytes"].tobytes()
            offsets = payload["tail_offsets"].tolist()
            counts = payload["tail_counts"].astype(np.int64)
            flat = payload["tail_positions"].astype(np.int64)
            if len(offsets) != len(counts) + 1 or int(counts.sum()) != len(flat):
                return None
            tails = (
                tuple(data[offsets[i] : offsets[i + 1]] for i in range(len(counts))),
                flat,
                np.concatenate(([0], np.cumsum(counts))).astype(np.int64),
            )
        return SplitRecord(
            words,
            tuple(payload["uncertain"].tolist()),
            tuple(payload["uncertain_tokens"].tolist()),
            tails,
            int(depth),
        )


def _checksum(arrays: dict[str, npt.NDArray[np.generic]], header: list[str]) -> str:
    """BLAKE2 of the header's fields (all but the checksum) and of the arrays."""
    digest = hashlib.blake2b(digest_size=16)
    for field in header:
        digest.update(f"{len(field)}:{field};".encode())
    for name in sorted(arrays):
        array = np.ascontiguousarray(arrays[name])
        digest.update(f"{name}:{array.dtype.str}:{array.shape}".encode())
        digest.update(array.tobytes())
    return digest.hexdigest()
