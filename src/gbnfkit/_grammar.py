"""The :class:`Grammar` facade: syntax, checks and the engine tied together."""

from __future__ import annotations

import hashlib
from typing import Any

from gbnfkit._arguments import expect
from gbnfkit._errors import ArgumentError, InputRejected
from gbnfkit._limits import DEFAULT_LIMITS, Limits
from gbnfkit.engine._engine import Engine
from gbnfkit.engine._match import MatchResult, MatchStatus
from gbnfkit.engine._program import Program, compile_program
from gbnfkit.engine._state import State
from gbnfkit.grammar._ir import GrammarIR
from gbnfkit.schema._limits import SchemaLimits

__all__ = ["Grammar"]


class Grammar:
    """A compiled, immutable grammar (GBNF semantics of llama.cpp).

    Build one with :meth:`from_gbnf`, :meth:`from_ir` or :meth:`builtin`. Each grammar
    owns its compiled program and its bounded caches. Grammars are equal (and hash
    equal) iff their :attr:`fingerprint` is equal.
    """

    # A grammar made from GBNF text (``from_gbnf``, ``from_json_schema``, ``builtin``,
    # ``from_regex``, unpickling) keeps that text instead of its IR: matching reads only
    # the program, and the IR (a schema's is 10,000-20,000 objects) would otherwise stay
    # alive with the grammar, for the garbage collector to traverse in every full
    # collection and in a server's cache.  ``ir``, ``to_gbnf`` and ``fingerprint``
    # parse the text again when asked (it gives an equal IR: same rules, same
    # positions).  A grammar made from an IR (``Grammar(ir)``, ``from_ir``) keeps it.
    __slots__ = ("_engine", "_fingerprint", "_ir", "_limits", "_program", "_root",
                 "_rule_count", "_text")
    _engine: Engine
    _fingerprint: str | None
    _ir: GrammarIR | None
    _limits: Limits
    _program: Program
    _root: str
    _rule_count: int
    _text: str | None

    def __init__(self, ir: GrammarIR, *, limits: Limits | None = None) -> None:
        """Compile an already checked IR; use :meth:`from_ir` to check it first."""
        expect(ir, GrammarIR, "ir")
        expect(limits, (Limits, type(None)), "limits")
        self._build(ir, limits if limits is not None else DEFAULT_LIMITS, None)

    @classmethod
    def _from_text(cls, ir: GrammarIR, text: str, limits: Limits) -> Grammar:
        """The grammar of ``ir``, parsed from (or equal to the parse of) ``text`` with
        ``ir.root`` as start rule and ``limits``, keeping ``text`` instead of ``ir``."""
        grammar = cls.__new__(cls)
        grammar._build(ir, limits, text)
        return grammar

    def _build(self, ir: GrammarIR, limits: Limits, text: str | None) -> None:
        # the parse of GBNF text nests no deeper than the parser allows: not measured again
        program = compile_program(ir, limits, nesting_checked=text is not None)
        object.__setattr__(self, "_ir", ir if text is None else None)
        object.__setattr__(self, "_text", text)
        object.__setattr__(self, "_root", ir.root)
        object.__setattr__(self, "_rule_count", len(ir.rules))
        object.__setattr__(self, "_limits", limits)
        object.__setattr__(self, "_program", program)
        object.__setattr__(self, "_engine", Engine(program, limits))
        object.__setattr__(self, "_fingerprint", None)

    def _current_ir(self) -> GrammarIR:
        """The IR: the one kept, or the text parsed again (not kept)."""
        ir = self._ir
        if ir is None:
            from gbnfkit.grammar._parser import parse_gbnf

            assert self._text is not None
            ir = parse_gbnf(self._text, self._root, limits=self._limits)
        return ir

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Grammar is immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError("Grammar is immutable")

    def __copy__(self) -> Grammar:
        return self  # immutable: a copy is the grammar itself

    def __deepcopy__(self, memo: object) -> Grammar:
        return self

    def __reduce__(self) -> tuple[object, ...]:
        # pickled as GBNF text, which gives this grammar back and reads the same in pure
        # and compiled builds of any version: the text it was made from, else to_gbnf's
        text = self._text if self._text is not None else self.to_gbnf()
        return (_from_pickle, (text, self._root, self._limits))

    # -- construction ------------------------------------------------------------------
    @classmethod
    def from_gbnf(cls, text: str, root: str = "root", *, limits: Limits | None = None) -> Grammar:
        """Parse and check GBNF ``text`` with start rule ``root``; raises GrammarError."""
        from gbnfkit.grammar._parser import parse_gbnf

        expect(text, str, "text")
        expect(root, str, "root")
        expect(limits, (Limits, type(None)), "limits")
        lim = limits if limits is not None else DEFAULT_LIMITS
        return cls._from_text(parse_gbnf(text, root, limits=lim), text, lim)

    @classmethod
    def from_ir(cls, ir: GrammarIR, *, limits: Limits | None = None) -> Grammar:
        """Check ``ir`` (made of IR expressions with values of the right types, undefined
        rules, missing root, left recursion, rule names GBNF can write) and compile it."""
        from gbnfkit.grammar._entry import check_grammar
        from gbnfkit.grammar._printer import check_rule_name

        expect(ir, GrammarIR, "ir")
        check_grammar(ir)
        # a grammar prints itself as GBNF for its fingerprint (equality, hashing, the
        # compiler's cache, saved files) and its pickle: a name GBNF cannot write made
        # every one of those raise, long after the grammar was built
        for name in ir.rules:
            check_rule_name(name)
        grammar = cls(ir, limits=limits)
        # and so is a nesting too deep to print (checked by printing it, once: the
        # fingerprint is kept)
        grammar.fingerprint  # noqa: B018
        return grammar

    @classmethod
    def from_json_schema(
        cls, schema: Any, *, limits: Limits | SchemaLimits | None = None, **options: Any
    ) -> Grammar:
        """The JSON texts valid for ``schema`` (dict, bool or JSON text); options as in
        :func:`gbnfkit.json_schema_to_gbnf`.  ``limits`` is the grammar's
        :class:`gbnfkit.Limits`, or the converter's :class:`gbnfkit.SchemaLimits` (the
        ``limits`` option; both: ``options=SchemaOptions(limits=...)``). Raises
        SchemaError."""
        from gbnfkit.schema._api import convert_schema

        if isinstance(limits, SchemaLimits):  # the option of the same name
            options["limits"], limits = limits, None
        converted = convert_schema(schema, **options)
        expect(limits, (Limits, type(None)), "limits")
        lim = limits if limits is not None else DEFAULT_LIMITS
        # the IR from the converter's notes is the parse of its text (RecordedConversion)
        return cls._from_text(converted.ir(lim), converted.text, lim)

    @classmethod
    def from_regex(cls, pattern: str, *, search: bool = False,
                   limits: Limits | None = None) -> Grammar:
        """The texts ``pattern`` matches as a whole, or with ``search=True`` the texts it
        occurs in (see :func:`gbnfkit.regex_to_gbnf`)."""
        from gbnfkit.schema._regex import regex_gbnf

        expect(search, bool, "search")
        expect(limits, (Limits, type(None)), "limits")
        lim = limits if limits is not None else DEFAULT_LIMITS
        # a count above the limit is refused where the pattern has it, not in the GBNF
        return cls.from_gbnf(regex_gbnf(pattern, search, lim.max_repetition), limits=lim)

    @classmethod
    def from_pydantic(
        cls, model: Any, *, limits: Limits | SchemaLimits | None = None, **options: Any
    ) -> Grammar:
        """The JSON that the Pydantic v2 ``model`` validates, via its JSON schema;
        ``limits`` and ``options`` as in :meth:`from_json_schema`, with
        ``lone_surrogates=False`` (Pydantic refuses lone surrogate escapes) and
        ``max_integer_digits`` at most 4,300 (the most its parser reads; 1,000 with the
        default limits) unless given. A field no grammar can hold to what Pydantic checks
        (a ``PastDate``, ``Json``...) raises a SchemaError naming it (see docs/schema.md)."""
        from gbnfkit.schema._pydantic import pydantic_options, pydantic_schema

        schema_limits = limits if isinstance(limits, SchemaLimits) else None
        return cls.from_json_schema(pydantic_schema(model), limits=limits,
                                    **pydantic_options(options, limits=schema_limits))

    @classmethod
    def builtin(cls, name: str, *, limits: Limits | None = None) -> Grammar:
        """One of the grammars shipped with gbnfkit (see :meth:`builtin_names`)."""
        from gbnfkit.grammar._builtins import builtin_text

        return cls.from_gbnf(builtin_text(name), limits=limits)

    @staticmethod
    def builtin_names() -> tuple[str, ...]:
        """Names accepted by :meth:`builtin`."""
        from gbnfkit.grammar._builtins import builtin_names

        return tuple(builtin_names())

    # -- properties --------------------------------------------------------------------
    @property
    def ir(self) -> GrammarIR:
        """The grammar IR (of a grammar made from text, its text parsed again at the
        first ask, then kept)."""
        ir = self._ir
        if ir is None:
            ir = self._current_ir()
            object.__setattr__(self, "_ir", ir)
        return ir

    @property
    def root(self) -> str:
        """Name of the start rule."""
        return self._root

    @property
    def limits(self) -> Limits:
        """Resource limits in force."""
        return self._limits

    @property
    def program(self) -> Program:
        """The compiled program (format in :mod:`gbnfkit.engine._program`)."""
        return self._program

    @property
    def engine(self) -> Engine:
        """The character-level engine holding this grammar's caches (internals)."""
        return self._engine

    def to_gbnf(self) -> str:
        """Canonical GBNF text of the grammar.

        GBNF text does not name its start rule: ``Grammar.from_gbnf(text, root=self.root,
        limits=self.limits)`` gives this grammar back (``root="root"``, the default, when
        it starts there; the limits matter when a repetition bound is above the default
        ``max_repetition``, which the parser refuses)."""
        from gbnfkit.grammar._printer import to_gbnf

        return to_gbnf(self._current_ir())

    @property
    def fingerprint(self) -> str:
        """sha256 hex digest of the start rule name and the plain canonical GBNF text."""
        fp = self._fingerprint
        if fp is None:
            from gbnfkit.grammar._printer import canonical_gbnf

            data = f"root={self.root}\n{canonical_gbnf(self._current_ir())}".encode()
            fp = hashlib.sha256(data).hexdigest()
            object.__setattr__(self, "_fingerprint", fp)
        return fp

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Grammar):
            return NotImplemented
        if self is other:
            return True
        if (self._text is not None and self._text == other._text
                and self._root == other._root and self._limits == other._limits):
            return True  # the same text parses to the same IR: no need to parse it
        return self.fingerprint == other.fingerprint

    def __hash__(self) -> int:
        return hash(self.fingerprint)

    def __repr__(self) -> str:
        return f"<Grammar root={self.root!r} rules={self._rule_count}>"

    # -- matching ----------------------------------------------------------------------
    def start(self) -> State:
        """The state before any input."""
        return State(self, self._engine, self._engine.start())

    def match(self, text: str | bytes) -> MatchResult:
        """Match a whole text: accept, prefix (alive but incomplete) or reject.

        ``text`` is a ``str``, or UTF-8 ``bytes`` (``bytearray``, ``memoryview``);
        anything else is an :class:`~gbnfkit.ArgumentError`.
        """
        if not isinstance(text, (str, bytes, bytearray, memoryview)):
            raise ArgumentError(f"text must be a str or bytes, not {type(text).__name__}")
        engine = self._engine
        start = engine.start()
        if isinstance(text, str):
            core, fail = engine.run(start, text)
            if fail >= 0:
                expected = tuple(r.describe() for r in engine.allowed(core))
                return MatchResult(MatchStatus.REJECT, fail, expected)
            status = MatchStatus.ACCEPT if core.complete else MatchStatus.PREFIX
            return MatchResult(status)
        try:
            state = State(self, engine, start).feed(text)
        except InputRejected as exc:
            return MatchResult(MatchStatus.REJECT, exc.position, exc.expected)
        return MatchResult(MatchStatus.ACCEPT if state.is_complete else MatchStatus.PREFIX)


def _from_pickle(text: str, root: str, limits: Limits) -> Grammar:
    """A pickled :class:`Grammar` (see ``Grammar.__reduce__``)."""
    return Grammar.from_gbnf(text, root, limits=limits)
