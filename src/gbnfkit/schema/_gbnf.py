"""Helpers that write GBNF text: literals, character classes and a rule table.

While a :class:`Recorder` is active (:func:`recording`), each helper also notes how it
composed its result (a literal, a class, a sequence or alternative of other strings, a
group), so that the grammar IR of the converter's rules can be built from those notes
without parsing the text again; see :mod:`gbnfkit.schema._direct`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from gbnfkit.grammar._ir import Expr

__all__ = ["ClassNote", "Note", "Recorder", "RuleTable", "alt", "char_class",
           "current_recorder", "group", "joined", "literal", "name_part", "paren", "recording",
           "seq"]


class ClassNote(NamedTuple):
    """The note of a character class: its ranges as given."""

    ranges: tuple[tuple[int, int], ...]
    negated: bool


Note = str | ClassNote | tuple[str, ...] | list[str]
"""How a text was composed: a literal (its decoded text, a ``str``), a class, a
sequence (a tuple of two or more parts, as joined: a part holding ``" | "`` is grouped),
a group ``(x)`` (the 1-tuple ``(x,)``), or an alternative (a list of two or more
options)."""


class Recorder:
    """How the texts of one conversion were composed (see :mod:`gbnfkit.schema._direct`).

    ``notes`` maps each GBNF text to its :data:`Note`; the same text always means the
    same thing, so a text composed twice (or by two helpers) is noted once.  ``base``:
    a recorder of texts composed before (the static spellings of ``_strings``), whose
    notes are consulted after this recorder's own.  ``built``, for a recorder whose
    notes never change (that one): the IR built from them so far, (expression, whether
    an alternation at the top level), kept for the next conversions.
    """

    __slots__ = ("base", "built", "notes")

    def __init__(self) -> None:
        self.notes: dict[str, Note] = {}
        self.base: Recorder | None = None
        self.built: dict[str, tuple[Expr, bool]] = {}


_RECORDER: ContextVar[Recorder | None] = ContextVar("gbnfkit_schema_recorder", default=None)


def current_recorder() -> Recorder | None:
    """The recorder of :func:`recording` in force, if any."""
    return _RECORDER.get()


@contextmanager
def recording(recorder: Recorder) -> Iterator[Recorder]:
    """Note into ``recorder`` what the helpers compose while the block runs (this
    thread or task only)."""
    token = _RECORDER.set(recorder)
    try:
        yield recorder
    finally:
        _RECORDER.reset(token)

_SAFE = re.compile(r"[^a-zA-Z0-9-]+")
_PLAIN = re.compile(r'[ !#-\[\]-~]*')  # printable ASCII but '"' and '\\': written as is
# printable ASCII that a class writes as is (not "]-[^\\"), by code point
_CLASS_CHARS = {cp: chr(cp) for cp in range(0x20, 0x7F) if chr(cp) not in "]-[^\\"}
_NAME = re.compile(r"[a-zA-Z0-9-]+")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_CLASS = re.compile(r"\[(?:[^\]\\]|\\.)*\]")
# what _is_atom steps over in a group: an escape, a string or class (perhaps unclosed)
_GROUP_TOKENS = re.compile(r'\\.|"(?:[^"\\]|\\.)*"?|\[(?:[^\]\\]|\\.)*\]?|[()]', re.S)


def _escape_char(cp: int, special: str) -> str:
    ch = chr(cp)
    if ch == "\\":
        return "\\\\"
    if ch == "^" and "^" in special:
        return "\\x5E"
    if ch in special:
        return "\\" + ch
    if ch == "\n":
        return "\\n"
    if ch == "\t":
        return "\\t"
    if ch == "\r":
        return "\\r"
    if cp < 0x20 or cp == 0x7F or 0xD800 <= cp <= 0xDFFF:
        return f"\\x{cp:02X}" if cp < 0x100 else f"\\u{cp:04X}"
    if not ch.isprintable() and ch != " ":
        return f"\\u{cp:04X}" if cp < 0x10000 else f"\\U{cp:08X}"
    return ch


def name_part(text: str) -> str:
    """``text`` for a rule name: each character other than a letter or digit as ``-``."""
    return "".join(c if c.isalnum() else "-" for c in text)


def literal(text: str) -> str:
    """A GBNF string literal for ``text`` (``""`` for the empty string)."""
    if _PLAIN.fullmatch(text):
        out = f'"{text}"'
    else:
        out = '"' + "".join(_escape_char(ord(c), '"') for c in text) + '"'
    rec = _RECORDER.get()
    if rec is not None:
        rec.notes[out] = text
    return out


def char_class(ranges: Iterable[tuple[int, int]], negated: bool = False) -> str:
    """A GBNF character class; ranges must be non-empty unless ``negated``."""
    ranges = tuple(ranges)
    parts = []
    for lo, hi in ranges:
        a = _CLASS_CHARS.get(lo) or _escape_char(lo, "]-[^")
        if lo == hi:
            parts.append(a)
        elif hi == lo + 1:
            parts.append(a + (_CLASS_CHARS.get(hi) or _escape_char(hi, "]-[^")))
        else:
            parts.append(a + "-" + (_CLASS_CHARS.get(hi) or _escape_char(hi, "]-[^")))
    out = "[" + ("^" if negated else "") + "".join(parts) + "]"
    rec = _RECORDER.get()
    if rec is not None:
        rec.notes[out] = ClassNote(ranges, negated)
    return out


def group(expr: str) -> str:
    """``expr`` wrapped in parentheses unless it is already one atom."""
    if _is_atom(expr):
        return expr
    return paren(expr)


def paren(expr: str) -> str:
    """``(expr)``."""
    out = f"({expr})"
    rec = _RECORDER.get()
    if rec is not None:
        rec.notes[out] = (expr,)
    return out


def _is_atom(expr: str) -> bool:
    if _NAME.fullmatch(expr) or _STRING.fullmatch(expr) or _CLASS.fullmatch(expr):
        return True
    if expr.startswith("(") and expr.endswith(")"):
        depth = 0
        last = len(expr)
        for token in _GROUP_TOKENS.finditer(expr):
            c = token.group()
            if c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
                if depth == 0 and token.end() != last:
                    return False
        return True
    return False


def seq(*items: str) -> str:
    """Concatenation of the non-empty items (``""`` when nothing is left)."""
    parts = [group(i) if " | " in i and not _is_atom(i) else i for i in items if i and i != '""']
    if len(parts) < 2:
        return parts[0] if parts else '""'
    out = " ".join(parts)
    rec = _RECORDER.get()
    if rec is not None:
        rec.notes[out] = tuple(parts)
    return out


def joined(*parts: str) -> str:
    """Concatenation of two or more ``parts`` that need no group (atoms, sequences):
    :func:`seq` without its checks."""
    out = " ".join(parts)
    rec = _RECORDER.get()
    if rec is not None:
        rec.notes[out] = parts
    return out


def alt(options: Iterable[str]) -> str:
    """Alternatives, without duplicates, in first-seen order."""
    out: list[str] = []
    seen: set[str] = set()  # (not ``in out``: an enum of 30,000 strings took 6 s)
    for o in options:
        if o not in seen:
            seen.add(o)
            out.append(o)
    if not out:
        raise ValueError("alt() of nothing")
    if len(out) == 1:
        return out[0]
    text = " | ".join(out)
    rec = _RECORDER.get()
    if rec is not None:
        rec.notes[text] = out
    return text


class RuleTable:
    """Named GBNF rules in definition order; identical bodies share one rule."""

    def __init__(self) -> None:
        self.rules: dict[str, str] = {}
        self._by_body: dict[str, str] = {}
        # per base name, the suffix to try first: names are never released, so every
        # smaller one is taken (a schema's many "other-key-..." rules scanned from 2 before)
        self._next: dict[str, int] = {}
        self.size = 0
        """Characters of rule bodies defined so far."""

    def fresh(self, hint: str) -> str:
        """A rule name derived from ``hint`` that is not used yet (and reserve it)."""
        # (a hint of ASCII letters, digits and "-" needs no substitution: most do not)
        safe = hint.isascii() and hint.replace("-", "").isalnum()
        base = (hint if safe else _SAFE.sub("-", hint)).strip("-") or "rule"
        name = base
        if name in self.rules:
            n = self._next.get(base, 2)
            name = f"{base}-{n}"
            while name in self.rules:
                n += 1
                name = f"{base}-{n}"
            self._next[base] = n + 1
        self.rules[name] = ""
        return name

    def define(self, name: str, body: str) -> None:
        """Set the body of a reserved rule."""
        self.rules[name] = body
        self.size += len(body)
        self._by_body.setdefault(body, name)

    def add(self, hint: str, body: str) -> str:
        """A rule with ``body``: an existing one with the same body, or a new one."""
        found = self._by_body.get(body)
        if found is not None:
            return found
        name = self.fresh(hint)
        self.define(name, body)
        return name

    def text(self, root: str = "root") -> str:
        """All rules as GBNF text, the root first."""
        lines = []
        order = [root] + [n for n in self.rules if n != root]
        for name in order:
            if name in self.rules:
                lines.append(f"{name} ::= {self.rules[name]}")
        return "\n".join(lines) + "\n"
