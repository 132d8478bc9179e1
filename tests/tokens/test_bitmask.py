"""allocate_bitmask / apply_bitmask on numpy arrays and torch tensors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gbnfkit
from gbnfkit import ArgumentError, Grammar, Vocabulary, VocabularyError


def test_allocate_bitmask_shape_and_all_bits_set() -> None:
    mask = gbnfkit.allocate_bitmask(3, 65)
    assert mask.shape == (3, 3)
    assert mask.dtype == np.int32
    assert (mask == -1).all()
    with pytest.raises(VocabularyError):
        gbnfkit.allocate_bitmask(1, 0)


def _pack(allowed: np.ndarray) -> np.ndarray:
    width = (allowed.shape[-1] + 31) // 32 * 32
    padded = np.zeros(allowed.shape[:-1] + (width,), dtype=bool)
    padded[..., : allowed.shape[-1]] = allowed
    return np.packbits(padded, axis=-1, bitorder="little").view(np.int32)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 4), st.integers(1, 100), st.randoms(use_true_random=False))
def test_apply_bitmask_numpy(batch: int, vocab: int, rng: object) -> None:
    gen = np.random.default_rng(abs(hash(rng)) % 2**32)
    allowed = gen.random((batch, vocab)) < 0.5
    logits = gen.standard_normal((batch, vocab)).astype(np.float32)
    original = logits.copy()
    gbnfkit.apply_bitmask(logits, _pack(allowed))
    assert np.array_equal(np.isneginf(logits), ~allowed)
    assert np.array_equal(logits[allowed], original[allowed])


def test_apply_bitmask_numpy_one_row_and_indices() -> None:
    # XGrammar's semantics: for each listed i, bitmask[i] applies to logits[i]
    allowed = np.array([[True, False, True], [False, True, True], [True, True, False]])
    logits = np.zeros((3, 3), dtype=np.float32)
    gbnfkit.apply_bitmask(logits, _pack(allowed), indices=[2, 0])
    assert np.isneginf(logits).tolist() == [
        [False, True, False],
        [False, False, False],
        [False, False, True],
    ]
    for bad in ([3], [-1], ["x"], [0.5]):
        with pytest.raises(ArgumentError):
            gbnfkit.apply_bitmask(logits, _pack(allowed), indices=bad)
    with pytest.raises(ArgumentError):  # the bitmask has no row 2
        gbnfkit.apply_bitmask(logits, _pack(allowed[:2]), indices=[2])
    row = np.zeros(3, dtype=np.float64)
    gbnfkit.apply_bitmask(row, _pack(allowed[:1]))
    assert np.isneginf(row).tolist() == [False, True, False]


def test_apply_bitmask_too_narrow_mask_is_an_error() -> None:
    with pytest.raises(VocabularyError):
        gbnfkit.apply_bitmask(np.zeros((1, 40)), np.zeros((1, 1), dtype=np.int32))


def test_apply_bitmask_bad_arguments_are_argument_errors() -> None:
    mask = np.zeros((1, 1), dtype=np.int32)
    for logits in ([0.0] * 8, np.zeros((1, 8), dtype=np.int64), np.zeros((1, 1, 8))):
        with pytest.raises(ArgumentError):
            gbnfkit.apply_bitmask(logits, mask)
    for bitmask in ([[0]], np.zeros((1, 1)), np.zeros((1, 0), dtype=np.int32)):
        with pytest.raises(ArgumentError):
            gbnfkit.apply_bitmask(np.zeros((1, 8)), bitmask)
    # a one-dimensional view that is not contiguous is still masked in place
    base = np.zeros((8, 2))
    gbnfkit.apply_bitmask(base[:, 0], np.array([0b1], dtype=np.int32))
    assert np.isneginf(base[:, 0]).tolist() == [False] + [True] * 7


def test_apply_bitmask_torch_matches_numpy() -> None:
    torch = pytest.importorskip("torch")
    gen = np.random.default_rng(0)
    allowed = gen.random((3, 70)) < 0.3
    mask = _pack(allowed)
    logits = torch.zeros((3, 70), dtype=torch.float32)
    gbnfkit.apply_bitmask(logits, mask)
    assert np.array_equal(torch.isneginf(logits).numpy(), ~allowed)
    logits = torch.zeros((3, 70), dtype=torch.bfloat16)
    gbnfkit.apply_bitmask(logits, torch.from_numpy(mask), indices=torch.tensor([2, 0]))
    got = torch.isneginf(logits).numpy()
    assert np.array_equal(got[2], ~allowed[2]) and np.array_equal(got[0], ~allowed[0])
    assert not got[1].any()
    with pytest.raises(ArgumentError):
        gbnfkit.apply_bitmask(logits, torch.from_numpy(mask[:2]), indices=[2])
    with pytest.raises(ArgumentError):
        gbnfkit.apply_bitmask(torch.zeros((3, 70), dtype=torch.int64), mask)
    one = torch.zeros(70)
    gbnfkit.apply_bitmask(one, mask[1])
    assert np.array_equal(torch.isneginf(one).numpy(), ~allowed[1])


def test_matcher_fill_bitmask_rows_and_width_check() -> None:
    vocabulary = Vocabulary([b"a", b"b", b"c", None], eos_token_ids=[3], size=40)
    matcher = gbnfkit.compile(Grammar.from_gbnf('root ::= "b"'), vocabulary).matcher()
    mask = gbnfkit.allocate_bitmask(2, vocabulary.size)
    matcher.fill_bitmask(mask, row=1)
    assert mask[0].tolist() == [-1, -1]
    assert mask[1].tolist() == [0b10, 0]
    logits = np.zeros((2, 40), dtype=np.float32)
    gbnfkit.apply_bitmask(logits, mask)
    assert np.flatnonzero(~np.isneginf(logits[1])).tolist() == [1]
    with pytest.raises(VocabularyError):
        matcher.fill_bitmask(gbnfkit.allocate_bitmask(1, 100))


def test_fill_bitmask_checks_every_layout_the_same_way() -> None:
    """One-row and batched, numpy ints as rows; other dtypes, shapes and rows refused."""
    vocabulary = Vocabulary([b"a", b"b", b"c", None], eos_token_ids=[3], size=40)
    matcher = gbnfkit.compile(Grammar.from_gbnf('root ::= "b"'), vocabulary).matcher()
    flat = np.full(2, -1, dtype=np.int32)
    matcher.fill_bitmask(flat)
    assert flat.tolist() == [0b10, 0]
    batch = np.full((3, 2), -1, dtype=np.int32)
    matcher.fill_bitmask(batch, np.int64(2))
    assert batch.tolist() == [[-1, -1], [-1, -1], [0b10, 0]]
    strided = np.full((2, 4), -1, dtype=np.int32)[:, ::2]  # rows not contiguous
    matcher.fill_bitmask(strided, 1)
    assert strided.tolist() == [[-1, -1], [0b10, 0]]
    for bad_array in (
        np.zeros((1, 2), dtype=np.int64),
        np.zeros((1, 2), dtype=">i4"),
        np.zeros((1, 1, 2), dtype=np.int32),
    ):
        with pytest.raises(ArgumentError):
            matcher.fill_bitmask(bad_array)
    for bad_row in (True, 3, -1, 1.0):
        with pytest.raises(ArgumentError):
            matcher.fill_bitmask(batch, bad_row)  # type: ignore[arg-type]
    with pytest.raises(ArgumentError):
        matcher.fill_bitmask(flat, 1)
    with pytest.raises(VocabularyError):
        matcher.fill_bitmask(np.zeros(3, dtype=np.int32))


def test_fill_bitmask_into_a_read_only_array_is_an_argument_error() -> None:
    vocabulary = Vocabulary([b"a", b"b", b"c", None], eos_token_ids=[3], size=40)
    matcher = gbnfkit.compile(Grammar.from_gbnf('root ::= "b"'), vocabulary).matcher()
    for mask in (gbnfkit.allocate_bitmask(2, 40), np.full(2, -1, dtype=np.int32)):
        mask.flags.writeable = False
        for row in (0, np.int64(0)):
            with pytest.raises(ArgumentError, match="read-only"):
                matcher.fill_bitmask(mask, row)  # type: ignore[arg-type]


def test_a_sleeping_lazy_matcher_fills_a_torch_bitmask_without_warnings() -> None:
    torch = pytest.importorskip("torch")
    import warnings

    vocabulary = Vocabulary([b"a", b"b", b"c", None], eos_token_ids=[3], size=40)
    compiled = gbnfkit.compile(Grammar.from_gbnf('root ::= "b"'), vocabulary)
    lazy = gbnfkit.LazyMatcher(compiled, [gbnfkit.Trigger.word("c")])
    mask = torch.zeros((1, 2), dtype=torch.int32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lazy.fill_bitmask(mask)
    assert mask[0].tolist() == [0b1111, 0]


def test_apply_bitmask_refuses_read_only_logits_and_boolean_masks() -> None:
    logits = np.zeros(40, dtype=np.float32)
    logits.flags.writeable = False
    with pytest.raises(ArgumentError, match="writable"):
        gbnfkit.apply_bitmask(logits, gbnfkit.allocate_bitmask(1, 40)[0])
    assert not np.isinf(logits).any()
    with pytest.raises(ArgumentError, match="int32"):
        gbnfkit.apply_bitmask(np.zeros(40, dtype=np.float32), np.ones(2, dtype=bool))
    torch = pytest.importorskip("torch")
    with pytest.raises(ArgumentError, match="int32"):  # it was read as words of 0 and 1
        gbnfkit.apply_bitmask(torch.zeros(40), torch.ones(2, dtype=torch.bool))
