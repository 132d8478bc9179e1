"""The Vocabulary class itself: construction, validation, accessors, identity."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import gbnfkit
from gbnfkit import Vocabulary, VocabularyError


def small() -> Vocabulary:
    return Vocabulary([b"a", b"b", None, b"ab", None], eos_token_ids=[2], special_token_ids=[4])


def test_exported_from_package() -> None:
    assert gbnfkit.Vocabulary is Vocabulary
    assert "Vocabulary" in gbnfkit.__all__


def test_accessors() -> None:
    v = small()
    assert v.size == 5 and len(v) == 5
    assert v.token_bytes(0) == b"a"
    assert v.token_bytes(3) == b"ab"
    assert v.token_bytes(2) is None
    assert v.eos_token_ids == frozenset({2})
    assert v.special_token_ids == frozenset({2, 4})
    assert isinstance(v.eos_token_ids, frozenset)
    assert v.tokens == (b"a", b"b", None, b"ab", None)
    assert [v.is_text_token(i) for i in range(5)] == [True, True, False, True, False]


def test_size_adds_padding_ids() -> None:
    v = Vocabulary([b"x", b"y"], size=8)
    assert v.size == 8 and len(v) == 8
    assert v.token_bytes(7) is None
    assert not v.is_text_token(5)
    with pytest.raises(VocabularyError, match="outside"):
        v.token_bytes(8)


def test_eos_ids_are_special_and_may_be_padding() -> None:
    v = Vocabulary([b"x", b"<eos>"], eos_token_ids=[1, 3], size=4)
    assert v.special_token_ids == frozenset({1, 3})
    # a special id keeps its bytes for display but is not a text token
    assert v.token_bytes(1) == b"<eos>"
    assert not v.is_text_token(1)


def test_accepts_bytearray_and_numpy_ids() -> None:
    tokens: list[object] = [bytearray(b"q"), memoryview(b"r")]
    v = Vocabulary(tokens, eos_token_ids=[np.int64(1)], size=np.int32(3))  # type: ignore[arg-type]
    assert v.token_bytes(np.int64(0)) == b"q"
    assert type(v.token_bytes(1)) is bytes
    assert v.eos_token_ids == frozenset({1}) and v.size == 3


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"tokens": [b"a", "b"]}, "token 1 is str"),
        ({"tokens": [b"a", 3]}, "token 1 is int"),
        ({"tokens": "ab"}, "sequence of bytes"),
        ({"tokens": b"ab"}, "sequence of bytes"),
        ({"tokens": 5}, "sequence of bytes"),
        ({"tokens": []}, "empty"),
        ({"tokens": [b"a"], "eos_token_ids": [1]}, "eos_token_ids holds token id 1, outside"),
        ({"tokens": [b"a"], "eos_token_ids": [-1]}, "outside"),
        ({"tokens": [b"a"], "special_token_ids": [5]}, "special_token_ids holds token id 5"),
        ({"tokens": [b"a"], "special_token_ids": ["0"]}, "not a token id"),
        ({"tokens": [b"a"], "special_token_ids": [True]}, "not a token id"),
        ({"tokens": [b"a"], "eos_token_ids": 0}, "iterable of token ids"),
        ({"tokens": [b"a"], "eos_token_ids": "0"}, "iterable of token ids"),
        ({"tokens": [b"a", b"b"], "size": 1}, "size 1 is smaller than the number of tokens"),
        ({"tokens": [b"a"], "size": 2.0}, "size must be an int"),
        ({"tokens": [b"a"], "size": True}, "size must be an int"),
    ],
)
def test_bad_input_names_the_problem(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(VocabularyError, match=message):
        Vocabulary(**kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", [-1, 5, 2.0, "1", None, True])
def test_token_bytes_rejects_non_ids(bad: object) -> None:
    with pytest.raises(VocabularyError):
        small().token_bytes(bad)  # type: ignore[arg-type]


def test_equality_and_hash_follow_content() -> None:
    a, b = small(), small()
    assert a == a and a.fingerprint == a.fingerprint
    assert a == b and hash(a) == hash(b) and a.fingerprint == b.fingerprint
    assert len(a.fingerprint) == 64 and int(a.fingerprint, 16) >= 0
    assert a != Vocabulary([b"a", b"b", None, b"ab", None], eos_token_ids=[2])
    assert a != Vocabulary(
        [b"a", b"b", None, b"ab", None], eos_token_ids=[2], special_token_ids=[4], size=6
    )
    assert a != Vocabulary(
        [b"a", b"b", None, b"ba", None], eos_token_ids=[2], special_token_ids=[4]
    )
    assert a != "not a vocabulary"
    assert len({a, b}) == 1


def test_pickle_and_copy_keep_identity() -> None:
    v = small()
    for other in (pickle.loads(pickle.dumps(v)), copy.deepcopy(v), copy.copy(v)):
        assert other == v and other.fingerprint == v.fingerprint
        assert other.tokens == v.tokens and other.eos_token_ids == v.eos_token_ids


def test_repr_is_short() -> None:
    text = repr(Vocabulary([b"t%d" % i for i in range(1000)], eos_token_ids=range(10)))
    assert text.startswith("Vocabulary(size=1000,") and "..." in text and len(text) < 120


token_lists = st.lists(st.one_of(st.none(), st.binary(max_size=4)), min_size=1, max_size=8)


@given(token_lists, token_lists)
def test_fingerprint_distinguishes_token_lists(
    x: list[bytes | None], y: list[bytes | None]
) -> None:
    # None, b"" and token boundaries must all matter (no ambiguous concatenation)
    assert (Vocabulary(x).fingerprint == Vocabulary(y).fingerprint) == (x == y)
