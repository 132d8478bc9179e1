"""Trigger values: constructors, validation, equality."""

from __future__ import annotations

import pytest

import gbnfkit
from gbnfkit import Trigger, TriggerKind


def test_constructors_set_kind_and_value() -> None:
    assert Trigger.word("<tool_call>") == Trigger(TriggerKind.WORD, "<tool_call>")
    assert Trigger.token(7).kind is TriggerKind.TOKEN
    assert Trigger.pattern(r"<f=(\w+)>").value == r"<f=(\w+)>"
    assert Trigger.pattern_full(r"\s*\{").kind is TriggerKind.PATTERN_FULL
    assert Trigger.after("</think>").kind is TriggerKind.AFTER
    assert repr(Trigger.after("</think>")) == "Trigger.after('</think>')"
    assert len({Trigger.word("a"), Trigger.word("a"), Trigger.after("a")}) == 2


@pytest.mark.parametrize(
    ("make", "error"),
    [
        (lambda: Trigger.word(""), ValueError),
        (lambda: Trigger.after(""), ValueError),
        (lambda: Trigger.token(-1), ValueError),
        (lambda: Trigger.token(True), TypeError),
        (lambda: Trigger.token("3"), TypeError),  # type: ignore[arg-type]
        (lambda: Trigger.word(3), TypeError),  # type: ignore[arg-type]
        (lambda: Trigger.pattern("(unclosed"), ValueError),
        # counts re cannot hold: OverflowError past 2**32-1, ValueError past 4,300 digits
        (lambda: Trigger.pattern("a{4294967296}"), ValueError),
        (lambda: Trigger.pattern_full("a{" + "9" * 5000 + "}"), ValueError),
        (lambda: Trigger("word", "x"), TypeError),  # type: ignore[arg-type]
    ],
)
def test_bad_values_are_refused(make: object, error: type[Exception]) -> None:
    with pytest.raises(error) as info:
        make()  # type: ignore[operator]
    assert isinstance(info.value, gbnfkit.GbnfkitError)  # and a gbnfkit exception


def test_an_empty_text_names_the_trigger() -> None:
    with pytest.raises(gbnfkit.ArgumentError, match=r"^Trigger\.after needs a non-empty text"):
        Trigger.after("")


def test_pattern_error_names_the_position() -> None:
    with pytest.raises(gbnfkit.GrammarError, match="column 1") as info:
        Trigger.pattern("*x")
    assert info.value.column == 1


def test_a_token_trigger_takes_numpy_integers_as_ints() -> None:
    import numpy as np

    trigger = Trigger.token(np.int64(5))  # type: ignore[arg-type]
    assert trigger == Trigger.token(5) and type(trigger.value) is int
    assert hash(trigger) == hash(Trigger.token(5))
    for bad in (5.0, "5", True, np.float32(5)):
        with pytest.raises(gbnfkit.ArgumentError, match="token id"):
            Trigger.token(bad)  # type: ignore[arg-type]
