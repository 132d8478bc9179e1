"""Context splits kept on disk (``GrammarCompiler(cache_dir=...)``): reused, never wrong."""

from __future__ import annotations

import os
import random
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from test_masks import _walk_compiled, synthetic_vocabulary

import gbnfkit
from gbnfkit._grammar import Grammar
from gbnfkit.tokens._splitstore import SplitRecord, SplitStore, _checksum

GRAMMARS = ("json", "json_arr", "c")


def _walk_all(compiler: gbnfkit.GrammarCompiler, seed: int) -> None:
    for name in GRAMMARS:
        grammar = Grammar.builtin(name)
        _walk_compiled(compiler.compile(grammar), grammar, random.Random(seed), steps=12)


def _files(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


def test_splits_written_once_and_reused_by_another_compiler(tmp_path: Path) -> None:
    vocabulary = synthetic_vocabulary(seed=51)
    first = gbnfkit.GrammarCompiler(vocabulary, cache_dir=tmp_path)
    _walk_all(first, seed=53)
    written = _files(tmp_path)
    assert written, "free-text contexts of JSON were not stored"
    assert not [n for n in written if not n.endswith(".npz")]

    second = gbnfkit.GrammarCompiler(vocabulary, cache_dir=tmp_path)
    loaded: list[SplitRecord] = []
    store = second._index.store
    assert store is not None
    original_get = store.get

    def get(key: tuple[object, ...]) -> SplitRecord | None:
        record = original_get(key)
        if record is not None:
            loaded.append(record)
        return record

    store.get = get  # type: ignore[method-assign]
    _walk_all(second, seed=53)  # the same walk: masks checked against the reference
    assert loaded, "no split was read back from the cache directory"
    assert _files(tmp_path) == written  # nothing recomputed or rewritten


def test_a_stored_split_round_trips_exactly(tmp_path: Path) -> None:
    store = SplitStore(tmp_path, "fingerprint", nwords=5)
    words = np.array([0, 7, 0, 1 << 31, 3], dtype=np.uint32)
    tails = ((b"", b'"x'), np.array([1, 2, 3], dtype=np.int64), np.array([0, 1, 3], dtype=np.int64))
    record = SplitRecord(words, (4, 9), (1, 2, 3), tails, 3)
    key = ((0, 1, -1), ((5, 1), 2))
    assert store.get(key) is None
    store.put(key, record)
    got = store.get(key)
    assert got is not None
    assert np.array_equal(got.words, words)
    assert (got.uncertain, got.uncertain_tokens, got.depth) == (
        record.uncertain,
        record.uncertain_tokens,
        record.depth,
    )
    assert got.tails is not None
    assert got.tails[0] == tails[0]
    assert np.array_equal(got.tails[1], tails[1]) and np.array_equal(got.tails[2], tails[2])
    other_vocabulary = SplitStore(tmp_path, "another fingerprint", nwords=5)
    assert other_vocabulary.get(key) is None
    assert store.get(((0, 1, -1), ((5, 1), 3))) is None


def _damage(path: Path, how: int) -> None:
    data = path.read_bytes()
    if how == 0:
        path.write_bytes(data[: len(data) // 2])  # truncated
    elif how == 1:
        path.write_bytes(b"")  # empty
    elif how == 2:
        middle = len(data) // 2
        path.write_bytes(data[:middle] + bytes([data[middle] ^ 0xFF]) + data[middle + 1 :])
    else:
        path.write_bytes(b"not a numpy file at all")


def test_damaged_or_foreign_files_are_ignored_and_rebuilt(tmp_path: Path) -> None:
    vocabulary = synthetic_vocabulary(seed=57)
    _walk_all(gbnfkit.GrammarCompiler(vocabulary, cache_dir=tmp_path), seed=59)
    names = sorted(tmp_path.iterdir())
    assert names
    for k, path in enumerate(names):
        _damage(path, k % 4)
    # a file of another vocabulary under a name this one looks up: its header differs
    other = synthetic_vocabulary(seed=61)
    other_dir = tmp_path / "other"
    _walk_all(gbnfkit.GrammarCompiler(other, cache_dir=other_dir), seed=59)
    foreign = sorted(other_dir.iterdir())
    assert foreign
    foreign[0].replace(names[0])

    again = gbnfkit.GrammarCompiler(vocabulary, cache_dir=tmp_path)
    _walk_all(again, seed=59)  # masks equal the reference at every step
    store = again._index.store
    assert store is not None
    # every entry met again was rewritten whole
    readable = SplitStore(tmp_path, vocabulary.fingerprint, store.nwords)
    keys = list(again._index.shared)
    assert keys and all(readable.get(key) is not None for key in keys)


def test_concurrent_writers_leave_whole_files(tmp_path: Path) -> None:
    vocabulary = synthetic_vocabulary(seed=63)
    errors: list[BaseException] = []

    def work(seed: int) -> None:
        try:
            _walk_all(gbnfkit.GrammarCompiler(vocabulary, cache_dir=tmp_path), seed=seed)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(67,)) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert not [p for p in tmp_path.iterdir() if not p.name.endswith(".npz")]
    _walk_all(gbnfkit.GrammarCompiler(vocabulary, cache_dir=tmp_path), seed=67)


def test_the_store_is_bounded(tmp_path: Path) -> None:
    store = SplitStore(tmp_path, "fingerprint", nwords=1, max_entries=2)
    record = SplitRecord(np.array([1], dtype=np.uint32), (), (), None, 3)
    for k in range(5):
        store.put((k,), record)
    assert len(list(tmp_path.glob("*.npz"))) == 2
    assert store.get((0,)) is not None and store.get((4,)) is None


def test_a_cache_dir_that_cannot_be_a_directory_is_an_argument_error(tmp_path: Path) -> None:
    vocabulary = synthetic_vocabulary(seed=51)
    a_file = tmp_path / "file"
    a_file.write_text("not a directory")
    for bad in ("", a_file, a_file / "sub", str(tmp_path / "a\0b")):
        with pytest.raises(gbnfkit.ArgumentError, match="cache_dir"):
            gbnfkit.GrammarCompiler(vocabulary, cache_dir=bad)
    assert a_file.read_text() == "not a directory"


def _rewrite_header(directory: Path, field: int, value: str, *, checksum: bool) -> None:
    """Set header ``field`` of every entry to ``value``, the checksum recomputed or not."""
    for path in directory.glob("*.npz"):
        with np.load(path) as data:
            arrays = {k: data[k] for k in data.files}
        header = arrays["header"].tolist()
        header[field] = value
        if checksum:
            payload = {k: v for k, v in arrays.items() if k != "header"}
            header[-1] = _checksum(payload, header[:-1])
        arrays["header"] = np.array(header)
        with open(path, "wb") as fh:
            np.savez(fh, **arrays)  # type: ignore[arg-type]


@pytest.mark.parametrize(("field", "value"), [(4, "0"), (4, "9"), (4, "x"), (5, "no-tails")])
def test_a_file_whose_header_was_rewritten_is_not_used(
    tmp_path: Path, field: int, value: str
) -> None:
    """found by bughunt9: the header's depth and tails flag were outside the checksum, so
    a file whose depth differed from what was written gave wrong masks (depth 0 or 9) or
    a bare ValueError out of fill_bitmask (depth 'x'); the checksum covers the header."""
    vocabulary = synthetic_vocabulary(seed=51)
    _walk_all(gbnfkit.GrammarCompiler(vocabulary, cache_dir=tmp_path), seed=53)
    _rewrite_header(tmp_path, field, value, checksum=False)
    for seed in (53, 54):  # masks equal the reference at every step
        _walk_all(gbnfkit.GrammarCompiler(vocabulary, cache_dir=tmp_path), seed=seed)


def test_a_header_that_does_not_parse_is_a_miss(tmp_path: Path) -> None:
    """A file whose checksum matches but whose header does not parse (hand-made) is a
    miss, never an error."""
    store = SplitStore(tmp_path, "fingerprint", nwords=1)
    store.put((0,), SplitRecord(np.array([1], dtype=np.uint32), (), (), None, 3))
    assert store.get((0,)) is not None
    for value in ("x", "-1", "", "\u0663"):  # "\u0663" (Arabic-Indic 3) is a digit to str.isdigit
        _rewrite_header(tmp_path, 4, value, checksum=True)
        assert store.get((0,)) is None


def test_the_bound_holds_per_directory_not_per_store(tmp_path: Path) -> None:
    """found by bughunt9: each store counted the directory once, at its first put, then
    only its own writes, so N stores sharing a directory (one per compiler or process)
    wrote up to N * max_entries files; leftover temporary files counted and stayed."""
    record = SplitRecord(np.array([1], dtype=np.uint32), (), (), None, 3)
    a = SplitStore(tmp_path, "fingerprint", nwords=1, max_entries=2)
    b = SplitStore(tmp_path, "fingerprint", nwords=1, max_entries=2)
    a.put(("a0",), record)
    b.put(("b0",), record)
    a.put(("a1",), record)
    b.put(("b1",), record)
    assert len(list(tmp_path.glob("*.npz"))) == 2


def test_stale_temporary_files_are_removed_and_not_counted(tmp_path: Path) -> None:
    record = SplitRecord(np.array([1], dtype=np.uint32), (), (), None, 3)
    stale, fresh = tmp_path / ".tmp-stale.npz", tmp_path / ".tmp-fresh.npz"
    for path in (stale, fresh):
        path.write_bytes(b"half a file")
    old = time.time() - 3600
    os.utime(stale, (old, old))
    store = SplitStore(tmp_path, "fingerprint", nwords=1, max_entries=2, stale_after=600)
    store.put((0,), record)
    assert not stale.exists() and fresh.exists()  # a live writer's file stays
    store.put((1,), record)
    store.put((2,), record)
    entries = [p for p in tmp_path.iterdir() if not p.name.startswith(".tmp-")]
    assert len(entries) == 2
    assert store.get((0,)) is not None and store.get((1,)) is not None
