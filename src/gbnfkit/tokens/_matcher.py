"""Matcher: the grammar state of one sequence being decoded, and its token masks."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from gbnfkit._deprecation import callable_bool
from gbnfkit._errors import ArgumentError, InputRejected
from gbnfkit.tokens._bitmask import write_mask_row
from gbnfkit.tokens._bytestate import ByteAutomaton, ByteState

if TYPE_CHECKING:
    from gbnfkit.tokens._compiled import CompiledGrammar
    from gbnfkit.tokens._vocabulary import Vocabulary

__all__ = ["Matcher", "locate_refusal"]

_MAX_EXPECTED = 40


class Matcher:
    """Where one sequence is in the grammar; made by :meth:`CompiledGrammar.matcher`.

    Not thread-safe (one per sequence); :meth:`fork` copies it cheaply.
    Every accepted token (and each :meth:`accept_text` call) is one step that
    :meth:`rollback` can undo.  Input the grammar refuses raises
    :class:`~gbnfkit.InputRejected` and leaves the matcher unchanged;
    :meth:`is_allowed` checks a token without advancing.  After an end-of-sequence
    token the matcher is terminated: only end-of-sequence ids stay allowed (so a
    finished row of a batch keeps a valid mask) and accepting one again changes nothing.
    """

    __slots__ = ("_compiled", "_automaton", "_history", "_state", "_terminated", "_vocab")

    def __init__(self, compiled: CompiledGrammar) -> None:
        self._compiled = compiled
        self._automaton = compiled.automaton
        self._vocab = compiled.vocabulary
        self._state: ByteState = self._automaton.initial
        self._history: list[tuple[ByteState, bool]] = []
        self._terminated = False

    # -- masks --------------------------------------------------------------
    def _words(self) -> npt.NDArray[np.int32]:
        if self._terminated:
            return self._compiled.index.eos.view(np.int32)
        return self._compiled.mask(self._state)

    def fill_bitmask(self, bitmask: Any, row: int = 0) -> None:
        """Write this step's mask into row ``row`` of ``bitmask`` (shape ``(batch, ceil(V/32))``).

        Bit ``i % 32`` of word ``i // 32`` is set iff token ``i`` is allowed.  ``bitmask``
        is an int32 numpy array or a CPU torch tensor (from :func:`allocate_bitmask`).

        Raises:
            ArgumentError: ``bitmask`` is not an int32 array of 1 or 2 dimensions, or
                ``row`` is not one of its rows.
            VocabularyError: the rows are not ``ceil(V / 32)`` words wide.
        """
        write_mask_row(bitmask, row, self._words(), self._vocab.size)

    def allowed_token_ids(self) -> npt.NDArray[np.int64]:
        """The allowed token ids, ascending."""
        bits = np.unpackbits(self._words().view(np.uint8), bitorder="little")
        return np.flatnonzero(bits[: self._vocab.size]).astype(np.int64)

    def is_allowed(self, token_id: int) -> bool:
        """Whether ``token_id`` is allowed now (checks this one token only)."""
        data = self._check_id(token_id)
        if token_id in self._vocab.eos_token_ids:
            return self._terminated or self._state.complete
        if self._terminated or data is None or token_id in self._vocab.special_token_ids:
            return False
        return self._automaton.feed(self._state, data) is not None

    # -- advancing ----------------------------------------------------------
    def accept_token(self, token_id: int) -> bool:
        """Advance by ``token_id``; returns ``True`` (so ``assert m.accept_token(t)`` works).

        Accepting an end-of-sequence id again after termination changes nothing.

        Raises:
            InputRejected: the grammar does not allow ``token_id`` here; the matcher is
                unchanged.  ``token_id`` names the token; ``position`` / ``character``
                give the first refused character of its text (``reason`` says why a
                whole token was refused: end of sequence too early, a special token,
                anything after end of sequence).
            VocabularyError: ``token_id`` is not an id of the vocabulary.
        """
        data = self._check_id(token_id)
        if token_id in self._vocab.eos_token_ids:
            if self._terminated:
                return True
            if not self._state.complete:
                raise InputRejected(
                    0,
                    "",
                    self._expected(self._state),
                    token_id=token_id,
                    reason="end of sequence before the text is complete",
                )
            self._history.append((self._state, self._terminated))
            self._terminated = True
            return True
        if self._terminated:
            raise InputRejected(
                0, "", [], token_id=token_id, reason="the sequence has already ended"
            )
        if data is None or token_id in self._vocab.special_token_ids:
            raise InputRejected(
                0,
                "",
                self._expected(self._state),
                token_id=token_id,
                reason="a special token the grammar does not contain",
            )
        nxt = self._automaton.feed(self._state, data)
        if nxt is None:
            raise self._token_rejected(token_id, data)
        self._history.append((self._state, self._terminated))
        self._state = nxt
        return True

    def _token_rejected(self, token_id: int, data: bytes) -> InputRejected:
        """The error for token bytes ``data``: where in them the automaton stopped."""
        position, character, state = locate_refusal(self._automaton, self._state, data)
        shown = data.decode("utf-8", "replace")
        return InputRejected(
            position,
            character,
            self._expected(state),
            token_id=token_id,
            reason=(
                f"unexpected {character!r} at position {position} of its text {shown!r}"
            ),
        )

    def accept_text(self, text: str) -> None:
        """Advance by ``text`` (one step for :meth:`rollback`).

        Raises:
            InputRejected: with the position (in code points) of the first character
                that is not allowed; the matcher is then unchanged.
            ArgumentError: ``text`` is not a ``str``.
        """
        if not isinstance(text, str):
            raise ArgumentError(f"text must be a str, not {type(text).__name__}")
        if self._terminated:
            if text:
                raise InputRejected(
                    0, text[0], [], text=text, reason="the sequence has already ended"
                )
            return
        automaton = self._automaton
        state = self._state
        for pos, ch in enumerate(text):
            nxt = automaton.feed(state, ch.encode("utf-8", "surrogatepass"))
            if nxt is None:
                raise InputRejected(pos, ch, self._expected(state), text=text)
            state = nxt
        self._history.append((self._state, self._terminated))
        self._state = state

    def accept_bytes(self, data: bytes | bytearray) -> None:
        """Advance by raw UTF-8 bytes (one step for :meth:`rollback`), which may start or
        end inside a character: what :meth:`jump_forward_bytes` returns, say.

        Raises:
            InputRejected: ``position`` is the index of the code point the first refused
                byte starts or continues, ``character`` that character (``bytes`` when
                it is not UTF-8); the matcher is then unchanged.
            ArgumentError: ``data`` is not ``bytes`` or ``bytearray``.
        """
        if not isinstance(data, (bytes, bytearray)):
            raise ArgumentError(f"data must be bytes, not {type(data).__name__}")
        data = bytes(data)
        if self._terminated:
            if data:
                raise InputRejected(
                    0, data[:1], [], text=data.decode("utf-8", "replace"),
                    reason="the sequence has already ended",
                )
            return
        nxt = self._automaton.feed(self._state, data)
        if nxt is None:
            position, character, state = locate_refusal(self._automaton, self._state, data)
            raise InputRejected(
                position, character, self._expected(state), text=data.decode("utf-8", "replace")
            )
        self._history.append((self._state, self._terminated))
        self._state = nxt

    def _expected(self, state: ByteState) -> list[str]:
        allowed = self._automaton.allowed_bytes(state)
        out = [repr(chr(b)) if b < 0x80 else f"byte 0x{b:02X}" for b in allowed]
        if state.complete:
            out.append("end of input")
        return out[:_MAX_EXPECTED]

    def rollback(self, n: int = 1) -> None:
        """Undo the last ``n`` steps (accepted tokens or texts).

        Raises:
            ArgumentError: ``n`` is not an integer, is negative or is more than the steps
                taken (a ``ValueError``).
        """
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
            raise ArgumentError(f"n must be an integer, not {type(n).__name__}")
        if n < 0 or n > len(self._history):
            raise ArgumentError(f"cannot roll back {n} steps; {len(self._history)} were taken")
        if n == 0:
            return
        self._state, self._terminated = self._history[-n]
        del self._history[-n:]

    def reset(self) -> None:
        """Back to the start of the grammar, history cleared."""
        self._state = self._automaton.initial
        self._history.clear()
        self._terminated = False

    def fork(self) -> Matcher:
        """An independent copy (same state and history)."""
        other = Matcher(self._compiled)
        other._state = self._state
        other._history = list(self._history)
        other._terminated = self._terminated
        return other

    def __copy__(self) -> Matcher:
        """``copy.copy`` is :meth:`fork` (a copy sharing the history would roll back both)."""
        return self.fork()

    def __deepcopy__(self, memo: dict[int, object]) -> Matcher:
        """``copy.deepcopy`` is :meth:`fork`: the compiled grammar is shared, not copied."""
        return self.fork()

    def __reduce__(self) -> tuple[object, ...]:
        raise ArgumentError(
            "a Matcher does not pickle (its state and history are positions of this "
            "process's compiled grammar): pickle the CompiledGrammar and the token ids "
            "accepted, and accept them again on a new matcher"
        )

    # -- queries ------------------------------------------------------------
    @property
    def is_terminated(self) -> bool:
        """Whether an end-of-sequence token was accepted (a property; see :class:`CallableBool`).

        The old call ``matcher.is_terminated()`` still works, with a DeprecationWarning.
        """
        return callable_bool(self._terminated, "Matcher.is_terminated")

    @property
    def is_complete(self) -> bool:
        """Whether the text so far is a complete match (end-of-sequence is allowed).

        A property; the old call ``matcher.is_complete()`` still works, with a
        DeprecationWarning.
        """
        return callable_bool(self._terminated or self._state.complete, "Matcher.is_complete")

    @property
    def steps(self) -> int:
        """How many steps :meth:`rollback` can undo."""
        return len(self._history)

    @property
    def vocabulary(self) -> Vocabulary:
        """The vocabulary the grammar was compiled for (whose token ids this takes)."""
        return self._vocab

    def jump_forward(self) -> str:
        """The longest text every valid continuation must start with ('' if none).

        Bytes that finish a character already started by the tokens so far are
        skipped, and the text stops before a character that is not fully forced, so
        that it can be given to :meth:`accept_text`; :meth:`jump_forward_bytes` has
        every forced byte.
        """
        forced = self.jump_forward_bytes()
        start = 0
        while start < len(forced) and 0x80 <= forced[start] <= 0xBF:
            start += 1
        return forced[start:].decode("utf-8", "ignore")

    def jump_forward_bytes(self) -> bytes:
        """Every byte each valid continuation must start with (``b""`` if none), at most
        4,096: the bytes finishing a character the tokens so far started included, and
        a character's first bytes when only they are forced.  :meth:`accept_bytes`
        takes them (one step), wherever they start and end.
        """
        if self._terminated:
            return b""
        automaton = self._automaton
        state = self._state
        forced = bytearray()
        limit = 4096
        while not state.complete and len(forced) < limit:
            allowed = automaton.allowed_bytes(state)
            live = [b for b in allowed if automaton.step(state, b) is not None]
            if len(live) != 1:
                break
            forced.append(live[0])
            nxt = automaton.step(state, live[0])
            assert nxt is not None
            state = nxt
        return bytes(forced)

    def _check_id(self, token_id: int) -> bytes | None:
        return self._vocab.token_bytes(token_id)

    def __repr__(self) -> str:
        return f"Matcher(steps={len(self._history)}, terminated={self._terminated})"


def locate_refusal(
    automaton: ByteAutomaton, state: ByteState, data: bytes
) -> tuple[int, str | bytes, ByteState]:
    """Where ``state`` stops accepting ``data`` (which it refuses): the code point index of
    the refused byte (a continuation byte counts with its lead), the refused character
    (``bytes`` when it is not UTF-8), and the state just before it."""
    fail = 0
    for fail, byte in enumerate(data):  # noqa: B007 - the index is the result
        nxt = automaton.step(state, byte)
        if nxt is None:
            break
        state = nxt
    leads = sum(1 for b in data[: fail + 1] if not 0x80 <= b <= 0xBF)
    position = max(leads - 1, 0)
    start = fail
    while start > 0 and 0x80 <= data[start] <= 0xBF:
        start -= 1
    end = fail + 1
    while end < len(data) and 0x80 <= data[end] <= 0xBF:
        end += 1
    character: str | bytes
    try:
        character = data[start:end].decode("utf-8")
        if len(character) != 1:
            character = data[fail : fail + 1]
    except UnicodeDecodeError:
        character = data[fail : fail + 1]
    return position, character, state
