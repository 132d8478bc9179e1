"""Trigger: what wakes a lazy grammar (a word, a token, a pattern, or text to start after)."""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from operator import index

from gbnfkit._errors import ArgumentError, GrammarError

__all__ = ["Trigger", "TriggerKind"]


class TriggerKind(enum.Enum):
    """How a :class:`Trigger` is recognised in the output."""

    WORD = "word"
    """A literal text anywhere in the output; the grammar constrains from its first character."""
    TOKEN = "token"
    """A token id; the grammar constrains from the text of that token."""
    PATTERN = "pattern"
    """A regular expression found anywhere in the output; the grammar constrains from the
    start of its first capture group if it has one, else from the start of the match."""
    PATTERN_FULL = "pattern_full"
    """A regular expression that the whole output so far must match; the grammar constrains
    from the start of its first capture group if it has one, else from the start of the output."""
    AFTER = "after"
    """A literal text anywhere in the output; the grammar constrains from just after it
    (deferred activation, e.g. after ``</think>``)."""


@dataclass(frozen=True)
class Trigger:
    """One trigger of a lazy grammar; make one with the class methods.

    >>> Trigger.word("<tool_call>")
    Trigger.word('<tool_call>')
    """

    kind: TriggerKind
    value: str | int

    def __post_init__(self) -> None:
        kind, value = self.kind, self.value
        if not isinstance(kind, TriggerKind):
            raise ArgumentError(f"kind must be a TriggerKind, not {type(kind).__name__}")
        if kind is TriggerKind.TOKEN:
            try:  # an int, or a numpy integer as accept_token takes (stored as an int)
                token = index(value) if not isinstance(value, (bool, str)) else None
            except TypeError:
                token = None
            if token is None:
                raise ArgumentError(f"a token trigger takes an int token id, not {value!r}")
            if token < 0:
                raise ArgumentError(f"a token id is never negative: {token}")
            object.__setattr__(self, "value", token)
            return
        if not isinstance(value, str):
            raise ArgumentError(f"Trigger.{kind.value} takes a str, not {type(value).__name__}")
        if not value:
            raise ArgumentError(f"Trigger.{kind.value} needs a non-empty text")
        if kind in (TriggerKind.PATTERN, TriggerKind.PATTERN_FULL):
            try:
                re.compile(value)
            except RecursionError:
                raise GrammarError(
                    f"the regular expression of a {kind.value} trigger nests too deeply",
                    line=1,
                    column=1,
                    source=value,
                ) from None
            except re.error as error:
                raise GrammarError(
                    f"invalid regular expression for a {kind.value} trigger: {error.msg}",
                    line=1,
                    column=(error.pos or 0) + 1,
                    source=value,
                ) from None
            except (OverflowError, ValueError) as error:
                # a count past what re holds (2**32-1) or too long to read as an int
                raise GrammarError(
                    f"invalid regular expression for a {kind.value} trigger: {error}",
                    line=1,
                    column=1,
                    source=value,
                ) from None

    @classmethod
    def word(cls, text: str) -> Trigger:
        """Wake when ``text`` appears; the grammar constrains from its first character."""
        return cls(TriggerKind.WORD, text)

    @classmethod
    def token(cls, token_id: int) -> Trigger:
        """Wake when the token ``token_id`` is accepted."""
        return cls(TriggerKind.TOKEN, token_id)

    @classmethod
    def pattern(cls, regex: str) -> Trigger:
        """Wake when ``regex`` matches anywhere in the output (Python ``re`` syntax)."""
        return cls(TriggerKind.PATTERN, regex)

    @classmethod
    def pattern_full(cls, regex: str) -> Trigger:
        """Wake when the whole output so far matches ``regex`` (Python ``re`` syntax)."""
        return cls(TriggerKind.PATTERN_FULL, regex)

    @classmethod
    def after(cls, text: str) -> Trigger:
        """Wake after ``text``: the grammar constrains what follows it."""
        return cls(TriggerKind.AFTER, text)

    def __repr__(self) -> str:
        return f"Trigger.{self.kind.value}({self.value!r})"
