"""LazyMatcher: a grammar that sleeps until a trigger appears in the output.

Until one of its triggers fires, a lazy matcher allows every token (end of sequence
included) and only buffers the bytes of the output.  When a trigger fires, the buffered
bytes from where the constrained text starts (the trigger's first byte, or just after an
``after`` text) are replayed into the grammar, and from then on it is an ordinary
:class:`~gbnfkit.Matcher`.  ``docs/lazy.md`` gives the rules (which trigger wins, what
a pattern sees) and how they differ from llama.cpp's lazy grammars.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from gbnfkit._deprecation import callable_bool
from gbnfkit._errors import ArgumentError, InputRejected, TriggerRejected, VocabularyError
from gbnfkit.tokens._bitmask import write_mask_row
from gbnfkit.tokens._bytestate import ByteState
from gbnfkit.tokens._matcher import Matcher, locate_refusal
from gbnfkit.tokens._required_literals import required_literals
from gbnfkit.tokens._trigger import Trigger, TriggerKind

if TYPE_CHECKING:
    from gbnfkit.tokens._compiled import CompiledGrammar
    from gbnfkit.tokens._vocabulary import Vocabulary

__all__ = ["LazyMatcher"]


@dataclass(frozen=True)
class _Snapshot:
    """What an inactive step changes, as it was before the step (for rollback)."""

    buffer_len: int
    text_len: int
    decoded_len: int
    terminated: bool


@dataclass(frozen=True)
class _Triggers:
    """The triggers of a lazy matcher, grouped by how they are searched for.

    ``literals`` holds ``(order, bytes, skip)`` for word and after triggers, ``skip``
    being how far the constrained text starts after the match (0 for a word, the
    length for ``after``); ``patterns`` holds ``(order, regex, full)`` and ``needs``, for
    each pattern, the strings one of which every match of it contains (``None``: not
    known; ``_required_literals``); ``tokens`` maps a token id to the order of its
    (first) trigger.  ``order`` is the trigger's index in the list given, which breaks
    ties.
    """

    triggers: tuple[Trigger, ...]
    literals: tuple[tuple[int, bytes, int], ...]
    patterns: tuple[tuple[int, re.Pattern[str], bool], ...]
    tokens: dict[int, int]
    needs: tuple[tuple[str, ...] | None, ...]

    @staticmethod
    def of(triggers: Iterable[Trigger], compiled: CompiledGrammar) -> _Triggers:
        vocab = compiled.vocabulary
        if isinstance(triggers, (Trigger, str)) or not isinstance(triggers, Iterable):
            raise ArgumentError(
                f"triggers must be a list of Trigger values, not {type(triggers).__name__}"
            )
        items = tuple(triggers)
        if not items:
            raise ArgumentError("a lazy matcher needs at least one trigger")
        literals: list[tuple[int, bytes, int]] = []
        patterns: list[tuple[int, re.Pattern[str], bool]] = []
        tokens: dict[int, int] = {}
        for order, trigger in enumerate(items):
            if not isinstance(trigger, Trigger):
                raise ArgumentError(
                    f"triggers must be Trigger values, not {type(trigger).__name__}"
                )
            value = trigger.value
            if trigger.kind is TriggerKind.TOKEN:
                assert isinstance(value, int)
                vocab.token_bytes(value)  # VocabularyError outside the vocabulary
                if value in vocab.eos_token_ids:
                    raise VocabularyError(
                        f"{trigger!r}: token {value} ends the sequence and cannot be a trigger"
                    )
                tokens.setdefault(value, order)
                continue
            assert isinstance(value, str)
            if trigger.kind in (TriggerKind.WORD, TriggerKind.AFTER):
                data = value.encode("utf-8", "surrogatepass")
                skip = len(data) if trigger.kind is TriggerKind.AFTER else 0
                literals.append((order, data, skip))
            else:
                full = trigger.kind is TriggerKind.PATTERN_FULL
                patterns.append((order, re.compile(value), full))
        needs = tuple(required_literals(regex) for _, regex, _ in patterns)
        return _Triggers(items, tuple(literals), tuple(patterns), tokens, needs)


class LazyMatcher:
    """A :class:`~gbnfkit.Matcher` that constrains nothing until a trigger fires.

    Made by ``CompiledGrammar.matcher(triggers=[...])``; same interface as
    :class:`~gbnfkit.Matcher`, plus :attr:`is_active`.

    While inactive every token id of the vocabulary is allowed (end of sequence and
    special tokens included; padding ids above the token list are not) and the bytes
    of the output are buffered.  After each accepted token (or :meth:`accept_text`)
    the triggers are looked for; the one that starts earliest in the output fires
    (on a tie, the first in the list given).  The buffered bytes from where its
    constrained text starts are replayed into the grammar, and masks constrain from
    there.  Every accepted token is one step for :meth:`rollback`, before and after
    activation; rolling back the step that fired the trigger makes the matcher
    inactive again.

    Args:
        compiled: the grammar.
        triggers: at least one :class:`~gbnfkit.Trigger`.
        pattern_window: a ``pattern`` trigger is searched for in the last
            ``pattern_window`` characters of the output only (after each token), so
            its cost per token stays bounded; a match must start inside the window.
            ``pattern_full`` triggers always see the whole output.

    Raises:
        VocabularyError: a token trigger's id is outside the vocabulary or ends the
            sequence.
        ArgumentError: ``triggers`` is not a non-empty list of triggers, or
            ``pattern_window`` is not a positive integer.
    """

    __slots__ = (
        "_compiled",
        "_vocab",
        "_triggers",
        "_window",
        "_buffer",
        "_text",
        "_decoded",
        "_terminated",
        "_history",
        "_inner",
        "_open_words",
        "_needs_at",
    )

    def __init__(
        self,
        compiled: CompiledGrammar,
        triggers: Iterable[Trigger],
        *,
        pattern_window: int = 4096,
    ) -> None:
        if (
            isinstance(pattern_window, bool)
            or not isinstance(pattern_window, (int, np.integer))
            or pattern_window < 1
        ):
            raise ArgumentError(f"pattern_window must be a positive int, not {pattern_window!r}")
        self._compiled = compiled
        self._vocab = compiled.vocabulary
        self._triggers = _Triggers.of(triggers, compiled)
        self._window = pattern_window
        self._buffer = bytearray()  # the output so far (kept up to activation)
        self._text = ""  # its decoded prefix, for pattern triggers only
        self._decoded = 0  # bytes of the buffer decoded into _text
        self._terminated = False  # end of sequence accepted while inactive
        self._history: list[_Snapshot] = []  # inactive steps, then the activating one
        self._inner: Matcher | None = None  # the grammar, once a trigger fired
        self._open_words: npt.NDArray[np.int32] | None = None
        # per pattern: where the first of its required strings to end in _text ends, or -1
        self._needs_at = self._unseen()

    # -- state --------------------------------------------------------------
    @property
    def triggers(self) -> tuple[Trigger, ...]:
        """The triggers, in the order given."""
        return self._triggers.triggers

    @property
    def is_active(self) -> bool:
        """Whether a trigger has fired (masks constrain)."""
        return self._inner is not None

    @property
    def is_terminated(self) -> bool:
        """Whether an end-of-sequence token was accepted (a property, as on Matcher)."""
        if self._inner is not None:
            return self._inner.is_terminated
        return callable_bool(self._terminated, "LazyMatcher.is_terminated")

    @property
    def is_complete(self) -> bool:
        """Whether end of sequence is allowed now (always, while inactive)."""
        if self._inner is not None:
            return self._inner.is_complete
        return callable_bool(True, "LazyMatcher.is_complete")

    @property
    def steps(self) -> int:
        """How many steps :meth:`rollback` can undo (before and after activation)."""
        return len(self._history) + (self._inner.steps if self._inner is not None else 0)

    @property
    def vocabulary(self) -> Vocabulary:
        """The vocabulary the grammar was compiled for (whose token ids this takes)."""
        return self._vocab

    # -- masks --------------------------------------------------------------
    def _words(self) -> npt.NDArray[np.int32]:
        """The packed mask while inactive."""
        index = self._compiled.index
        if self._terminated:
            return index.eos.view(np.int32)
        if self._open_words is None:
            ids = np.arange(len(self._vocab.tokens), dtype=np.int64)
            words = index.pack_ids(ids).view(np.int32)
            words.flags.writeable = False
            self._open_words = words
        return self._open_words

    def fill_bitmask(self, bitmask: Any, row: int = 0) -> None:
        """Write this step's mask into row ``row`` of ``bitmask`` (all allowed while inactive).

        Raises:
            ArgumentError: ``bitmask`` is not an int32 array of 1 or 2 dimensions, or
                ``row`` is not one of its rows.
            VocabularyError: the rows are not ``ceil(V / 32)`` words wide.
        """
        if self._inner is not None:
            self._inner.fill_bitmask(bitmask, row)
            return
        write_mask_row(bitmask, row, self._words(), self._vocab.size)

    def allowed_token_ids(self) -> npt.NDArray[np.int64]:
        """The allowed token ids, ascending."""
        if self._inner is not None:
            return self._inner.allowed_token_ids()
        if self._terminated:
            return np.array(sorted(self._vocab.eos_token_ids), dtype=np.int64)
        return np.arange(len(self._vocab.tokens), dtype=np.int64)

    def is_allowed(self, token_id: int) -> bool:
        """Whether ``token_id`` is allowed now (every token of the vocabulary while inactive).

        Raises:
            VocabularyError: ``token_id`` is not an id of the vocabulary.
        """
        if self._inner is not None:
            return self._inner.is_allowed(token_id)
        self._vocab.token_bytes(token_id)
        if self._terminated:
            return token_id in self._vocab.eos_token_ids
        return token_id < len(self._vocab.tokens)

    # -- advancing ----------------------------------------------------------
    def accept_token(self, token_id: int) -> bool:
        """Advance by ``token_id``; returns ``True``.

        While inactive any token is accepted and its bytes are buffered; an
        end-of-sequence id terminates the matcher without a trigger.

        Raises:
            TriggerRejected: the token fired a trigger whose text the grammar does not
                allow (an :class:`~gbnfkit.InputRejected`; the matcher is unchanged).
            InputRejected: the grammar (active) does not allow the token, the sequence
                has ended, or the id is padding; the matcher is unchanged.
            VocabularyError: ``token_id`` is not an id of the vocabulary.
        """
        if self._inner is not None:
            return self._inner.accept_token(token_id)
        data = self._vocab.token_bytes(token_id)
        vocab = self._vocab
        if token_id in vocab.eos_token_ids:
            if not self._terminated:
                self._history.append(self._snapshot())
                self._terminated = True
            return True
        if self._terminated:
            raise InputRejected(
                0, "", [], token_id=token_id, reason="the sequence has already ended"
            )
        if token_id >= len(vocab.tokens):
            raise InputRejected(
                0, "", [], token_id=token_id, reason="a padding id, never a model's output"
            )
        if data is None or token_id in vocab.special_token_ids:
            data = b""  # a special token's name is not text the model wrote
        self._advance(data, token_id)
        return True

    def accept_text(self, text: str) -> None:
        """Advance by ``text`` (one step for :meth:`rollback`).

        Raises:
            TriggerRejected: the text fired a trigger whose text the grammar does not
                allow; the matcher is unchanged.
            InputRejected: the grammar (active) does not allow the text, or the
                sequence has ended; the matcher is unchanged.
            ArgumentError: ``text`` is not a ``str``.
        """
        if self._inner is not None:
            self._inner.accept_text(text)
            return
        if not isinstance(text, str):
            raise ArgumentError(f"text must be a str, not {type(text).__name__}")
        if self._terminated:
            if text:
                raise InputRejected(
                    0, text[0], [], text=text, reason="the sequence has already ended"
                )
            return
        self._advance(text.encode("utf-8", "surrogatepass"), None)

    def accept_bytes(self, data: bytes | bytearray) -> None:
        """Advance by raw UTF-8 bytes (one step), which may start or end inside a
        character: inactive, they are buffered as a token's bytes are.

        Raises:
            TriggerRejected: the bytes fired a trigger whose text the grammar does not
                allow; the matcher is unchanged.
            InputRejected: the grammar (active) does not allow the bytes, or the
                sequence has ended; the matcher is unchanged.
            ArgumentError: ``data`` is not ``bytes`` or ``bytearray``.
        """
        if self._inner is not None:
            self._inner.accept_bytes(data)
            return
        if not isinstance(data, (bytes, bytearray)):
            raise ArgumentError(f"data must be bytes, not {type(data).__name__}")
        if self._terminated:
            if data:
                raise InputRejected(
                    0, bytes(data[:1]), [], text=bytes(data).decode("utf-8", "replace"),
                    reason="the sequence has already ended",
                )
            return
        self._advance(bytes(data), None)

    def _snapshot(self) -> _Snapshot:
        return _Snapshot(len(self._buffer), len(self._text), self._decoded, self._terminated)

    def _advance(self, data: bytes, token_id: int | None) -> None:
        """One inactive step: buffer ``data``, look for triggers, activate if one fired."""
        before = self._snapshot()
        start = len(self._buffer)
        self._buffer += data
        grew = bool(self._triggers.patterns) and self._decode()
        if grew:
            self._look_for_needs(before.text_len)
        found = self._find(start, token_id, grew)
        if found is not None:
            order, begin = found
            try:
                state = self._replay(order, begin, token_id)
            except TriggerRejected:
                self._restore(before)
                raise
            inner = Matcher(self._compiled)
            inner._state = state  # the replayed text is part of this step, not of its history
            self._inner = inner
        self._history.append(before)

    def _decode(self) -> bool:
        """Extend the decoded text by the characters completed in the buffer; whether
        there were any.

        Bytes that are not UTF-8 become lone surrogates (``surrogateescape``), so every
        character maps back to its bytes; an unfinished character at the end waits.
        """
        decoder = codecs.getincrementaldecoder("utf-8")("surrogateescape")
        more = decoder.decode(bytes(self._buffer[self._decoded :]))
        self._text += more
        self._decoded = len(self._buffer) - len(decoder.getstate()[0])
        return bool(more)

    def _unseen(self) -> list[int]:
        """``_needs_at`` for an empty output (0 for a pattern that needs nothing known)."""
        return [-1 if need is not None else 0 for need in self._triggers.needs]

    def _look_for_needs(self, old_len: int) -> None:
        """Note where each pattern's required strings first end in ``_text``, which grew
        from ``old_len`` characters: none ended in those, so only the strings ending
        after them are looked for, from ``len(string) - 1`` characters before."""
        text = self._text
        at = self._needs_at
        for k, need in enumerate(self._triggers.needs):
            if at[k] >= 0 or need is None:
                continue
            for string in need:
                found = text.find(string, max(0, old_len - len(string) + 1))
                if found >= 0 and (at[k] < 0 or found + len(string) < at[k]):
                    at[k] = found + len(string)

    def _find(self, start: int, token_id: int | None, grew: bool) -> tuple[int, int] | None:
        """The trigger that fires now, as ``(order, constrained start)``, or ``None``.

        ``start`` is where the bytes of this step begin: no trigger matched before
        them, so a word can only end after ``start``; patterns are searched again only
        when the decoded text ``grew`` (the same text gives the same answer: none), and
        only once one of the strings every match of the pattern holds is in the text.
        """
        triggers = self._triggers
        buffer = self._buffer
        best: tuple[int, int, int] | None = None  # (match start, order, constrained start)
        if token_id is not None and token_id in triggers.tokens:
            best = (start, triggers.tokens[token_id], start)
        if len(buffer) > start:
            for order, word, skip in triggers.literals:
                at = buffer.find(word, max(0, start - len(word) + 1))
                if at >= 0 and (best is None or (at, order) < best[:2]):
                    best = (at, order, at + skip)
        for k, (order, regex, full) in enumerate(triggers.patterns if grew else ()):
            if self._needs_at[k] < 0:
                continue  # no match can be there yet
            text = self._text
            if full:
                match = regex.fullmatch(text)
            else:
                match = regex.search(text, max(0, len(text) - self._window))
            if match is None:
                continue
            at = self._byte_offset(match.start())
            if best is not None and (at, order) >= best[:2]:
                continue
            begin = match.start()
            for group in range(1, regex.groups + 1):
                if match.start(group) >= 0:  # the first group that took part, maybe empty
                    begin = match.start(group)
                    break
            best = (at, order, self._byte_offset(begin) if begin != match.start() else at)
        return None if best is None else (best[1], best[2])

    def _byte_offset(self, char_index: int) -> int:
        return len(self._text[:char_index].encode("utf-8", "surrogateescape"))

    def _replay(self, order: int, begin: int, token_id: int | None) -> ByteState:
        """The grammar state after the constrained text ``buffer[begin:]``.

        Raises:
            TriggerRejected: naming the trigger, the first character refused and what
                the grammar expected there.
        """
        automaton = self._compiled.automaton
        data = bytes(self._buffer[begin:])
        state = automaton.initial
        nxt = automaton.feed(state, data)
        if nxt is not None:
            return nxt
        position, character, state = locate_refusal(automaton, state, data)
        text = data.decode("utf-8", "replace")
        expected = Matcher(self._compiled)._expected(state)
        raise TriggerRejected(
            self._triggers.triggers[order],
            position,
            character,
            expected,
            text=text,
            token_id=token_id,
        )

    def _restore(self, snapshot: _Snapshot) -> None:
        del self._buffer[snapshot.buffer_len :]
        self._text = self._text[: snapshot.text_len]
        self._decoded = snapshot.decoded_len
        self._terminated = snapshot.terminated
        # a string ending past the cut is gone, and none ended before where it did
        self._needs_at = [-1 if end > snapshot.text_len else end for end in self._needs_at]

    def rollback(self, n: int = 1) -> None:
        """Undo the last ``n`` steps (accepted tokens or texts), across activation.

        Raises:
            ArgumentError: ``n`` is not an integer, is negative or is more than the steps
                taken (a ``ValueError``).
        """
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
            raise ArgumentError(f"n must be an integer, not {type(n).__name__}")
        if n < 0 or n > self.steps:
            raise ArgumentError(f"cannot roll back {n} steps; {self.steps} were taken")
        if n == 0:
            return
        if self._inner is not None:
            k = min(n, self._inner.steps)
            self._inner.rollback(k)
            n -= k
            if n == 0:
                return
            self._inner = None  # undo the step that fired the trigger too
        snapshot = self._history[-n]
        del self._history[-n:]
        self._restore(snapshot)

    def reset(self) -> None:
        """Back to the start: inactive, nothing buffered, history cleared."""
        self._buffer.clear()
        self._text = ""
        self._decoded = 0
        self._terminated = False
        self._history.clear()
        self._inner = None
        self._needs_at = self._unseen()

    def fork(self) -> LazyMatcher:
        """An independent copy (same state and history)."""
        other = LazyMatcher.__new__(LazyMatcher)
        other._compiled = self._compiled
        other._vocab = self._vocab
        other._triggers = self._triggers
        other._window = self._window
        other._buffer = bytearray(self._buffer)
        other._text = self._text
        other._decoded = self._decoded
        other._terminated = self._terminated
        other._history = list(self._history)
        other._inner = self._inner.fork() if self._inner is not None else None
        other._open_words = self._open_words
        other._needs_at = list(self._needs_at)
        return other

    def __copy__(self) -> LazyMatcher:
        """``copy.copy`` is :meth:`fork` (a copy sharing the buffer would see both's text)."""
        return self.fork()

    def __deepcopy__(self, memo: dict[int, object]) -> LazyMatcher:
        """``copy.deepcopy`` is :meth:`fork`: the compiled grammar is shared, not copied."""
        return self.fork()

    def __reduce__(self) -> tuple[object, ...]:
        raise ArgumentError(
            "a LazyMatcher does not pickle (its state and history are positions of this "
            "process's compiled grammar): pickle the CompiledGrammar, the triggers and the "
            "token ids accepted, and accept them again on a new matcher"
        )

    def jump_forward(self) -> str:
        """The text every valid continuation must start with ('' while inactive)."""
        if self._inner is not None:
            return self._inner.jump_forward()
        return ""

    def jump_forward_bytes(self) -> bytes:
        """The bytes every valid continuation must start with (``b""`` while inactive);
        see :meth:`Matcher.jump_forward_bytes`."""
        if self._inner is not None:
            return self._inner.jump_forward_bytes()
        return b""

    def __repr__(self) -> str:
        return (
            f"LazyMatcher(active={self.is_active}, steps={self.steps}, "
            f"terminated={self.is_terminated}, triggers={list(self.triggers)!r})"
        )
