"""Every gbnfkit exception pickles and copies whole: message, attributes, class (an
exception raised in a worker process reaches the parent through pickle)."""

from __future__ import annotations

import copy
import pickle

import pytest

import gbnfkit
from gbnfkit import _errors

_TRIGGER = gbnfkit.Trigger(gbnfkit.TriggerKind.WORD, "<tool>")

ERRORS: list[BaseException] = [
    gbnfkit.ArgumentError("count must be an int"),
    gbnfkit.ChatError("unknown format 'x'"),
    gbnfkit.ChatParseError("unknown tool 'g'", position=3, text="ab\ncd", expected=("'f'",)),
    gbnfkit.ChatTemplateError("undefined name", line=2, refused=True),
    gbnfkit.GbnfkitError("base"),
    gbnfkit.GrammarError("undefined rule", line=1, column=10, source='root ::= x', rules=["x"]),
    gbnfkit.InputRejected(1, "b", ["'a'"], text="ab", token_id=7),
    gbnfkit.InputRejected(0, b"\xff", (), reason="a special token"),
    gbnfkit.LimitError("too many rules", limit="max_rules", value=10),
    gbnfkit.LoadError("truncated", path="/tmp/x.gbnfc"),
    gbnfkit.MissingDependencyError("torch", "pip install torch", needed_for="the processor"),
    gbnfkit.ParseError(4, ["'}'"], "{\"a\"\n    ^"),
    gbnfkit.PegError("undefined rule 'x'"),
    gbnfkit.SamplingError("must be positive", field="temperature"),
    gbnfkit.SchemaError("bad type", keyword="type", pointer="/properties/a", limit=None),
    gbnfkit.TriggerRejected(_TRIGGER, 2, "x", ["'{'"], text="<tool>x", token_id=3),
    gbnfkit.VocabularyError("token id 99 outside the vocabulary"),
]


def _raised() -> list[BaseException]:
    """Exceptions as the library raises them."""
    out: list[BaseException] = []
    grammar = gbnfkit.Grammar.from_gbnf('root ::= "ab"')
    vocab = gbnfkit.Vocabulary([b"a", b"b", None], eos_token_ids=[2])
    calls = [
        lambda: gbnfkit.Grammar.from_gbnf('root ::= "a" x'),
        lambda: grammar.start().feed("b"),
        lambda: gbnfkit.compile(grammar, vocab).matcher().accept_token(1),
        lambda: gbnfkit.compile(grammar, vocab).matcher().accept_token(99),
        lambda: gbnfkit.json_schema_to_gbnf({"type": 5}),
        lambda: gbnfkit.peg.json().parse("{").raise_for_failure(),
    ]
    for call in calls:
        with pytest.raises(gbnfkit.GbnfkitError) as info:
            call()
        out.append(info.value)
    return out


def _same(a: BaseException, b: BaseException) -> None:
    assert type(b) is type(a)
    assert str(b) == str(a)
    assert b.args == a.args
    assert vars(b) == vars(a)
    if isinstance(a, ImportError):
        assert (b.msg, b.name, b.path) == (a.msg, a.name, a.path)  # type: ignore[attr-defined]


def test_every_exception_class_is_checked() -> None:
    assert {type(e).__name__ for e in ERRORS} == set(_errors.__all__)


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_exceptions_pickle_whole(protocol: int) -> None:
    for error in ERRORS + _raised():
        _same(error, pickle.loads(pickle.dumps(error, protocol)))


def test_exceptions_copy_whole() -> None:
    for error in ERRORS + _raised():
        _same(error, copy.copy(error))
        _same(error, copy.deepcopy(error))
        if isinstance(error, gbnfkit.InputRejected):
            assert copy.copy(error).expected == error.expected
