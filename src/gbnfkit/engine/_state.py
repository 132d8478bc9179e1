"""Immutable parse states.

A :class:`State` is ``(grammar, core, pending)``: ``core`` is the engine's interned set of
parse stacks (see :mod:`gbnfkit.engine._engine` for the stack and cache internals) and
``pending`` the bytes of an incomplete UTF-8 character fed through ``feed(bytes)``.
States never change; ``feed`` returns a new one, so a state that raised
:class:`~gbnfkit.InputRejected` stays usable. Two states are equal (and hash equal) iff
they belong to equal grammars and hold the same stacks and pending bytes, whatever text
led to them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, overload

from gbnfkit._errors import ArgumentError, InputRejected
from gbnfkit.engine._engine import AllowedRule, Core, Engine
from gbnfkit.engine._ranges import intersect, overlaps
from gbnfkit.engine._rules import CharRule
from gbnfkit.engine._utf8 import encodable, lead_bytes, next_bytes, partial_range

if TYPE_CHECKING:
    from gbnfkit._grammar import Grammar

__all__ = ["State"]


class State:
    """Where a parse stands after some input (immutable, hashable)."""

    __slots__ = ("_core", "_engine", "_grammar", "_pending")
    _core: Core
    _engine: Engine
    _grammar: Grammar
    _pending: bytes

    def __init__(self, grammar: Grammar, engine: Engine, core: Core, pending: bytes = b"") -> None:
        object.__setattr__(self, "_grammar", grammar)
        object.__setattr__(self, "_engine", engine)
        object.__setattr__(self, "_core", core)
        object.__setattr__(self, "_pending", pending)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("State is immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError("State is immutable")

    def __copy__(self) -> State:
        return self  # immutable: a copy is the state itself

    def __deepcopy__(self, memo: object) -> State:
        return self

    def __reduce__(self) -> tuple[object, ...]:
        raise ArgumentError(
            "a State does not pickle (its stacks are positions of this process's compiled "
            "program): pickle the Grammar and the text, and feed the text again"
        )

    # -- properties --------------------------------------------------------------------
    @property
    def grammar(self) -> Grammar:
        """The grammar this state belongs to."""
        return self._grammar

    @property
    def is_complete(self) -> bool:
        """Whether the input so far is a complete match of the start rule."""
        return self._core.complete and not self._pending

    @property
    def pending_bytes(self) -> bytes:
        """Bytes of an incomplete UTF-8 character fed so far (``b""`` if none)."""
        return self._pending

    # -- feeding -----------------------------------------------------------------------
    @overload
    def feed(self, text: str) -> State: ...
    @overload
    def feed(self, text: bytes | bytearray | memoryview) -> State: ...
    def feed(self, text: object) -> State:
        """The state after ``text``; raises :class:`~gbnfkit.InputRejected` if not allowed.

        ``bytes`` (or ``bytearray``, ``memoryview``) are decoded as UTF-8 incrementally:
        an incomplete character at the end is kept in :attr:`pending_bytes`. A ``str``
        fed to a state with pending bytes is encoded and fed as bytes (so it is rejected
        unless it completes them, which a ``str`` cannot). Anything else is an
        :class:`~gbnfkit.ArgumentError`.
        """
        # the argument is typed ``object`` so that a compiled build checks it here too
        # (mypyc would raise TypeError for an annotated type), and an int is never read
        # as ``bytes(n)``, n NUL bytes
        if isinstance(text, str):
            if not self._pending:
                core, fail = self._engine.run(self._core, text)
                if fail >= 0:
                    ch = text[fail]
                    reason = _lone_surrogate(ch, fail)
                    raise InputRejected(
                        fail, ch, self._expected(core), text=text, reason=reason
                    )
                return self._with(core, b"")
            return self._feed_bytes(text.encode("utf-8", "surrogatepass"), text)
        if isinstance(text, (bytes, bytearray, memoryview)):
            return self._feed_bytes(bytes(text), None)
        raise ArgumentError(f"text must be a str or bytes, not {type(text).__name__}")

    def _with(self, core: Core, pending: bytes) -> State:
        if core is self._core and pending == self._pending:
            return self
        return State(self._grammar, self._engine, core, pending)

    def _expected(self, core: Core, pending: bytes = b"") -> list[str]:
        return [r.describe() for r in _allowed(self._engine, core, pending)]

    def _feed_bytes(self, data: bytes, text: str | None) -> State:
        engine = self._engine
        buf = self._pending + data
        try:
            decoded = buf.decode("utf-8")
            rest = b""
        except UnicodeDecodeError as exc:
            decoded = buf[: exc.start].decode("utf-8")
            rest = buf[exc.start :]
        core, fail = engine.run(self._core, decoded)
        if fail >= 0:
            raise InputRejected(fail, decoded[fail], self._expected(core), text=text)
        # the tail: an incomplete character or invalid UTF-8, checked byte by byte
        for i in range(len(rest)):
            prefix = rest[: i + 1]
            r = partial_range(prefix)
            if r is None:
                raise InputRejected(
                    len(decoded),
                    rest[i : i + 1],
                    ["valid UTF-8"] if i == 0 else ["a UTF-8 continuation byte"],
                    text=text,
                )
            lo, hi, need = r
            ok = encodable(engine.allowed_ranges(core))
            if not overlaps(ok, lo, hi):
                raise InputRejected(
                    len(decoded), prefix, self._expected(core, rest[:i]), text=text
                )
            if len(prefix) == need:  # pragma: no cover - the decoder takes complete ones
                raise AssertionError("complete character left undecoded")
        return self._with(core, rest)

    # -- what is allowed ---------------------------------------------------------------
    def allowed(self) -> tuple[AllowedRule, ...]:
        """What may come next: merged CharRule / CharExcludeRule / EndRule.

        A character is allowed iff one of the rules matches it; :class:`EndRule` is present
        iff :attr:`is_complete`. With pending bytes, one :class:`CharRule` of the characters
        that complete them (if any).
        """
        return _allowed(self._engine, self._core, self._pending)

    @overload
    def allows(self, text: str) -> bool: ...
    @overload
    def allows(self, text: bytes | bytearray | memoryview) -> bool: ...
    def allows(self, text: object) -> bool:
        """Whether :meth:`feed` of ``text`` (usually one character) would succeed (a
        ``text`` that is not a ``str`` or bytes is an :class:`~gbnfkit.ArgumentError`)."""
        if not isinstance(text, (str, bytes, bytearray, memoryview)):
            raise ArgumentError(f"text must be a str or bytes, not {type(text).__name__}")
        try:
            self.feed(text)
        except InputRejected:
            return False
        return True

    def allowed_bytes(self) -> frozenset[int]:
        """Bytes that can come next: each continues a UTF-8 encoding of an allowed character."""
        ranges = self._engine.allowed_ranges(self._core)
        if not self._pending:
            return lead_bytes(ranges)
        return next_bytes(ranges, self._pending)

    # -- identity ----------------------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        if not isinstance(other, State):
            return NotImplemented
        if self._pending != other._pending:
            return False
        a, b = self._core, other._core
        if a is b:
            return True
        if self._engine is other._engine:
            if a.gen == b.gen:
                return False
            return self._engine.migrate(a) is self._engine.migrate(b)
        return self._grammar == other._grammar and a.structure() == b.structure()

    def __hash__(self) -> int:
        return hash((self._core.shash, self._pending))

    def __repr__(self) -> str:
        rules = " | ".join(str(r) for r in self.allowed()) or "nothing"
        pending = f", pending={self._pending!r}" if self._pending else ""
        return f"<State stacks={len(self._core.stacks)} allows {rules}{pending}>"


def _allowed(engine: Engine, core: Core, pending: bytes) -> tuple[AllowedRule, ...]:
    if not pending:
        return engine.allowed(core)
    r = partial_range(pending)
    assert r is not None
    inside = intersect(encodable(engine.allowed_ranges(core)), ((r[0], r[1]),))
    return (CharRule(inside),) if inside else ()


def _lone_surrogate(ch: str, position: int) -> str | None:
    """Why ``ch`` is refused whatever the grammar says, if it is a lone surrogate."""
    if 0xD800 <= ord(ch) <= 0xDFFF:
        return (
            f"{ch!r} at position {position} is a lone surrogate, not a character "
            "(UTF-8 cannot encode it)"
        )
    return None
