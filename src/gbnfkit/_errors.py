"""Exceptions raised by gbnfkit.

Every exception subclasses :class:`GbnfkitError` and a built-in exception, so
``except ValueError`` keeps working for callers that do not know gbnfkit.
Positions are attributes, never only part of the message text.
"""

from __future__ import annotations

import copyreg
import re
import unicodedata
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gbnfkit.tokens._trigger import Trigger

__all__ = [
    "ArgumentError",
    "ChatError",
    "ChatParseError",
    "ChatTemplateError",
    "GbnfkitError",
    "GrammarError",
    "InputRejected",
    "LimitError",
    "LoadError",
    "MissingDependencyError",
    "ParseError",
    "PegError",
    "SamplingError",
    "SchemaError",
    "TriggerRejected",
    "VocabularyError",
]


GRAMMAR_LINE_BREAK = re.compile(r"\r\n?|\n")
"""Where a line of grammar text ends (as its rules do): ``\n``, ``\r\n`` or a lone
``\r``; the parser's positions and :attr:`GrammarError.excerpt` count lines by it."""


class GbnfkitError(Exception):
    """Base class of every exception gbnfkit raises on purpose.

    Every one pickles and copies with its message and attributes (an exception raised
    in a worker process reaches the parent whole), whatever its constructor takes.
    """

    def __reduce__(self) -> tuple[object, ...]:
        # Exception pickles as ``cls(*self.args)``, which calls a constructor that takes
        # other arguments (InputRejected's position, character, expected) with the
        # rendered message: unpickling raised TypeError. Made without ``__init__``
        # instead, then given its args and attributes (``BaseException.__setstate__``).
        state = dict(self.__dict__)
        state["args"] = self.args
        if isinstance(self, ImportError):  # its fields are not in __dict__
            state.update(msg=self.msg, name=self.name, path=self.path)
        return (copyreg.__newobj__, (type(self),), state)  # type: ignore[attr-defined]


def _excerpt(source: str, line: int, column: int, *, lone_cr_breaks: bool = False) -> str:
    """The source line at ``line`` (1-based) with a caret under ``column`` (1-based).

    Lines end at ``\\n`` (and a ``\\r`` before it); with ``lone_cr_breaks`` (grammar
    text, whose rules a lone ``\\r`` ends too) also at a lone ``\\r``.
    """
    lines = GRAMMAR_LINE_BREAK.split(source) if lone_cr_breaks else source.split("\n")
    if not 1 <= line <= len(lines):
        return ""
    text = lines[line - 1].rstrip("\r")
    # keep long lines readable: a window of 80 characters around the column
    start = 0
    if len(text) > 80:
        start = max(0, min(column - 1 - 40, len(text) - 80))
        text = ("..." if start else "") + text[start : start + 80]
        column = column - start + (3 if start else 0)
    text = text.replace("\t", " ")
    before = _visible(text[: column - 1])
    pad = _display_width(before) + max(0, column - 1 - len(text))
    return f"{_visible(text)}\n{' ' * pad}^"


def _visible(text: str) -> str:
    """``text`` with control characters and lone surrogates written as escapes, so that
    an excerpt neither drives the terminal nor fails to print (``\x1b`` -> ``\\x1b``)."""
    if text.isprintable():
        return text
    return "".join(
        ch.encode("unicode_escape").decode("ascii")
        if unicodedata.category(ch) in ("Cc", "Cs")
        else ch
        for ch in text
    )


def _display_width(text: str) -> int:
    """Columns ``text`` takes in a terminal: wide and full-width characters (CJK, most
    emoji) two, combining marks and format characters none, others one."""
    width = 0
    for char in text:
        if unicodedata.combining(char) or unicodedata.category(char) in ("Me", "Cf"):
            continue
        width += 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
    return width


class GrammarError(GbnfkitError, ValueError):
    """A grammar that cannot be built.

    Attributes:
        message: what is wrong and, where possible, how to fix it.
        line, column: 1-based position in the grammar text (lines end at ``\\n``,
            ``\\r\\n`` or a lone ``\\r``, as rules do; a column counts code points), or
            ``None`` when the grammar did not come from text (a grammar built from
            rules) or the problem has no single place (an empty grammar).
        source: the grammar text, when there is one.
        rules: rule names the problem is about (an undefined name, a left-recursive cycle).
    """

    def __init__(
        self,
        message: str,
        *,
        line: int | None = None,
        column: int | None = None,
        source: str | None = None,
        rules: Sequence[str] = (),
    ) -> None:
        self.message = message
        self.line = line
        self.column = column
        self.source = source
        self.rules = tuple(rules)
        super().__init__(self._render())

    @property
    def excerpt(self) -> str:
        """The offending source line with a caret under the column ('' if unknown)."""
        if self.source is None or self.line is None or self.column is None:
            return ""
        return _excerpt(self.source, self.line, self.column, lone_cr_breaks=True)

    def _render(self) -> str:
        if self.line is None:
            return self.message
        where = f"line {self.line}, column {self.column}"
        excerpt = self.excerpt
        return f"{self.message} (at {where})" + (f"\n{excerpt}" if excerpt else "")


class InputRejected(GbnfkitError, ValueError):
    """Text that the grammar does not allow.

    Attributes:
        position: index (in code points, from the start of the text given to the
            call that raised) of the first character that was not allowed; for
            bytes input, the index of the code point that the offending byte starts
            or continues.
        character: the offending character (a one-character ``str``), or for bytes
            input that is not valid UTF-8 a ``bytes`` object with the offending byte.
        expected: readable descriptions of what was allowed instead.
        text: the text given to the call that raised, when known.
        token_id: for :meth:`Matcher.accept_token`, the rejected token id (else ``None``);
            ``position`` and ``character`` then point into that token's bytes.
        reason: why a whole token was refused (an end-of-sequence token before the text
            is complete, a special token, any token after end of sequence), else ``None``.
    """

    def __init__(
        self,
        position: int,
        character: str | bytes,
        expected: Sequence[str],
        *,
        text: str | None = None,
        token_id: int | None = None,
        reason: str | None = None,
    ) -> None:
        self.position = position
        self.character = character
        self.expected = tuple(expected)
        self.text = text
        self.token_id = token_id
        self.reason = reason
        if reason is not None:
            what = reason
        else:
            what = f"unexpected {character!r} at position {position}"
        if token_id is not None:
            what = f"token {token_id} rejected: {what}"
        if self.expected:
            exp = ", ".join(self.expected[:12]) + (", ..." if len(self.expected) > 12 else "")
            msg = f"{what}; expected {exp}"
        else:
            msg = f"{what}; nothing more is allowed"
        if text is not None:
            line_start = text.rfind("\n", 0, position) + 1
            line_no = text.count("\n", 0, position) + 1
            excerpt = _excerpt(text, line_no, position - line_start + 1)
            if excerpt:
                msg += "\n" + excerpt
        self.message = msg
        super().__init__(msg)


class VocabularyError(GbnfkitError, ValueError):
    """A vocabulary that cannot be read, or a token id outside it."""


class ArgumentError(GbnfkitError, ValueError, TypeError):
    """An argument of the wrong type or outside its range, in a call that takes no text.

    For example a rollback longer than the history, a bitmask row outside the bitmask, a
    bitmask or logits array of the wrong shape or type.  It is both a ``ValueError`` and a
    ``TypeError``, so code written for either keeps working.
    """


class LoadError(GbnfkitError, ValueError):
    """A file given to :meth:`CompiledGrammar.load` that cannot be used.

    Unreadable, truncated or corrupted, not a gbnfkit compiled grammar, written by a
    version with another file format or context depth, or saved for another grammar or
    vocabulary; the message says which.  Compile the grammar again and save it anew.

    Attributes:
        path: the file, as given.
    """

    def __init__(self, message: str, *, path: str) -> None:
        self.message = message
        self.path = path
        super().__init__(f"cannot load {path!r}: {message}")


class SamplingError(GbnfkitError, ValueError):
    """Sampling parameters out of range, or logits from which no token can be sampled.

    Attributes:
        field: the :class:`gbnfkit.SamplingParams` field at fault, or ``None`` when the
            logits are at fault (every token the grammar allows has a logit of -inf).
    """

    def __init__(self, message: str, *, field: str | None = None) -> None:
        self.message = message
        self.field = field
        super().__init__(f"{field}: {message}" if field else message)


class SchemaError(GbnfkitError, ValueError):
    """A JSON Schema that cannot be turned into a grammar.

    Attributes:
        keyword: the schema keyword at fault (``"oneOf"``), or ``None``.
        pointer: JSON pointer of the sub-schema at fault (``"/properties/age"``).
        limit: the field of :class:`gbnfkit.SchemaLimits` that was reached, or ``None``.
    """

    def __init__(self, message: str, *, keyword: str | None = None, pointer: str = "",
                 limit: str | None = None) -> None:
        self.message = message
        self.keyword = keyword
        self.pointer = pointer
        self.limit = limit
        where = f" at {pointer or '/'}" if keyword is not None or pointer else ""
        kw = f" [{keyword}]" if keyword else ""
        super().__init__(f"{message}{kw}{where}")


class LimitError(GbnfkitError, RuntimeError):
    """A documented resource limit was reached (see :class:`gbnfkit.Limits`).

    Attributes:
        limit: the name of the limit (a field of :class:`gbnfkit.Limits`).
        value: the limit's value in force.
    """

    def __init__(self, message: str, *, limit: str, value: int) -> None:
        self.message = message
        self.limit = limit
        self.value = value
        super().__init__(f"{message} (limit {limit}={value}; raise it with gbnfkit.Limits)")


class MissingDependencyError(GbnfkitError, ImportError):
    """An optional package (an extra such as ``gbnfkit[llama-cpp]``) or the bundled model
    that a feature needs is not installed.

    Attributes:
        package: the distribution that is missing (``"llama-cpp-python"``).
        install: the command that installs it (``"pip install 'gbnfkit[llama-cpp]'"``).
    """

    def __init__(self, package: str, install: str, *, needed_for: str) -> None:
        self.package = package
        self.install = install
        super().__init__(f"{needed_for} needs {package}, which is not installed: {install}")


class TriggerRejected(InputRejected):
    """A lazy grammar's trigger fired, but the grammar rejects the text it starts.

    An :class:`InputRejected` whose ``text`` is the text replayed into the grammar
    (from where the trigger's constrained text starts) and whose ``position`` and
    ``character`` point into it; ``token_id`` is the token that fired it, if a token did.

    Attributes:
        trigger: the :class:`gbnfkit.Trigger` that fired.
    """

    def __init__(
        self,
        trigger: Trigger,
        position: int,
        character: str | bytes,
        expected: Sequence[str],
        *,
        text: str | None = None,
        token_id: int | None = None,
    ) -> None:
        super().__init__(position, character, expected, text=text, token_id=token_id)
        self.trigger = trigger
        self.message = f"{trigger!r} fired, but the grammar rejects its text: {self.message}"
        self.args = (self.message,)


class ChatError(GbnfkitError, ValueError):
    """A chat format, tool definition or ``tool_choice`` that cannot be used
    (:mod:`gbnfkit.chat`).

    Attributes:
        tool: the name of the tool whose definition is at fault (its parameters schema
            has no grammar), ``None`` when the error is not one tool's.
    """

    tool: str | None = None


class ChatParseError(ChatError):
    """Model output that does not follow its chat format (see :mod:`gbnfkit.chat`).

    Attributes:
        message: what is wrong (an unknown tool, arguments that are not JSON...).
        position: index (in code points) in the output where the problem is.
        expected: readable descriptions of what was allowed there (may be empty).
        text: the output that was parsed.
    """

    def __init__(
        self, message: str, *, position: int, text: str, expected: Sequence[str] = ()
    ) -> None:
        self.message = message
        self.position = position
        self.expected = tuple(expected)
        self.text = text
        line_no = text.count("\n", 0, position) + 1
        column = position - (text.rfind("\n", 0, position) + 1) + 1
        rendered = f"{message} at position {position} (line {line_no}, column {column})"
        if self.expected:
            shown = ", ".join(self.expected[:12]) + (", ..." if len(self.expected) > 12 else "")
            rendered += f"; expected {shown}"
        excerpt = _excerpt(text, line_no, column)
        if excerpt:
            rendered += "\n" + excerpt
        super().__init__(rendered)

    @property
    def excerpt(self) -> str:
        """The offending line of the output with a caret under the position."""
        line_no = self.text.count("\n", 0, self.position) + 1
        column = self.position - (self.text.rfind("\n", 0, self.position) + 1) + 1
        return _excerpt(self.text, line_no, column)


class ChatTemplateError(ChatError):
    """A chat template (Jinja) that cannot be used: empty, not valid Jinja, or one that
    fails while it renders messages (a name it cannot use, or its own
    ``raise_exception``).

    Attributes:
        message: what is wrong (Jinja's message, or the text the template raised).
        line: 1-based line in the template where it went wrong, or ``None`` when it is
            not known (an empty template, an error outside the template's code).
        refused: ``True`` when the template itself refused the messages with
            ``raise_exception`` (roles that do not alternate...), ``False`` otherwise.
    """

    def __init__(self, message: str, *, line: int | None = None, refused: bool = False) -> None:
        self.message = message
        self.line = line
        self.refused = refused
        super().__init__(f"line {line}: {message}" if line is not None else message)


class PegError(GbnfkitError, ValueError):
    """A PEG parser that cannot be built, run or turned into a grammar (:mod:`gbnfkit.peg`):
    a bad combinator argument, an undefined or twice-defined rule, left recursion, or a
    ``negate`` where a grammar is asked for."""


class ParseError(GbnfkitError, ValueError):
    """Text that a PEG parser (:mod:`gbnfkit.peg`) does not accept.

    Attributes:
        position: index (in code points) where parsing could go no further.
        expected: readable descriptions of what was allowed there.
        excerpt: the line of the text at ``position`` with a caret under it.
    """

    def __init__(self, position: int, expected: Sequence[str], excerpt: str) -> None:
        self.position = position
        self.expected = tuple(expected)
        self.excerpt = excerpt
        if self.expected:
            exp = ", ".join(self.expected[:12]) + (", ..." if len(self.expected) > 12 else "")
            msg = f"parse failed at position {position}; expected {exp}"
        else:
            msg = f"parse failed at position {position}"
        self.message = msg + (f"\n{excerpt}" if excerpt else "")
        super().__init__(self.message)


def text_excerpt(text: str, position: int) -> str:
    """The line of ``text`` holding code point ``position`` with a caret under it."""
    line_start = text.rfind("\n", 0, position) + 1
    line_no = text.count("\n", 0, position) + 1
    return _excerpt(text, line_no, position - line_start + 1)
