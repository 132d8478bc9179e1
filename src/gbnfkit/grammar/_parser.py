"""GBNF text -> grammar IR, following llama.cpp's ``llama_grammar_parser`` exactly.

The syntax accepted is llama.cpp's (``src/llama-grammar.cpp``), including its quirks:
rule names are ASCII letters, digits and ``-`` (and may start with a digit); a newline
ends a rule except inside parentheses, right after ``::=`` or right after ``|``;
only the escapes ``\\x.. \\u.... \\U........ \\t \\r \\n \\\\ \\" \\[ \\] \\-`` exist;
``""`` is the empty sequence; a repetition needs something before it.

Deliberate differences (each raises :class:`GrammarError` where llama.cpp silently
does something surprising): a reversed range ``[z-a]``, ``{m,n}`` with ``m > n``, an
empty class ``[]``/``[^]``, a rule defined twice; repetition bounds are exact, and a
bound above ``Limits.max_repetition`` is refused.  A reversed range or an empty class is
reported only once llama.cpp's own checks after its parse (undefined rules, the start
rule, its left recursion) pass, so a grammar llama.cpp refuses is refused for its reason.
Besides llama.cpp's own left-recursion check, left recursion through empty-able items
that llama.cpp misses is refused too (see :mod:`gbnfkit.grammar._checks`).
"""

from __future__ import annotations

import bisect
import re
from typing import Final

from gbnfkit._errors import GRAMMAR_LINE_BREAK, GrammarError
from gbnfkit._limits import DEFAULT_LIMITS, Limits
from gbnfkit.grammar._checks import (
    check_llama_errors,
    check_parsed_grammar,
    undefined_message,
)
from gbnfkit.grammar._ir import (
    ANY,
    MAX_CODE_POINT,
    Alt,
    CharClass,
    Expr,
    GrammarIR,
    Literal,
    Repeat,
    RuleRef,
    Seq,
)
from gbnfkit.grammar._normalize import make_alt, make_seq, normalize
from gbnfkit.grammar._text import class_char, describe_char

__all__ = ["parse_fragment", "parse_gbnf", "raw_rules"]

_VALID_ESCAPES = '\\x.. \\u.... \\U........ \\t \\r \\n \\\\ \\" \\[ \\] \\-'
_SIMPLE_ESCAPES = {"t": "\t", "r": "\r", "n": "\n"} | {c: c for c in '\\"[]-'}
_HEX_SIZES = {"x": 2, "u": 4, "U": 8}
_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")
_MAX_DEPTH: Final = 200  # nesting of the raw tree (groups, sequences, repetitions)
_OPERATORS: dict[str, tuple[int, int | None]] = {"*": (0, None), "+": (1, None), "?": (0, 1)}
_REPEAT_CHARS = frozenset("*+?{")

# each may match the empty string, so .match() never gives None
_NAME = re.compile(r"[a-zA-Z0-9-]*")
_BLANKS = re.compile(r"(?:[ \t]+|#[^\n\r]*)*")  # and comments
_BLANKS_NEWLINES = re.compile(r"(?:[ \t\n\r]+|#[^\n\r]*)*")
_PLAIN_STRING = re.compile(r'[^"\\]*')  # the characters of a literal up to '"' or '\\'


_WORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-")


def _is_word_char(c: str) -> bool:
    return ("a" <= c <= "z") or ("A" <= c <= "Z") or ("0" <= c <= "9") or c == "-"


def parse_gbnf(text: str, root: str = "root", *, limits: Limits = DEFAULT_LIMITS) -> GrammarIR:
    """Parse GBNF ``text`` and check it (undefined rules, start rule, left recursion).

    Raises:
        GrammarError: with ``line``/``column`` (1-based), ``source`` and, for
            undefined rules and left recursion, ``rules``.
    """
    if not isinstance(text, str):
        raise GrammarError(f"grammar text must be a str, not {type(text).__name__}")
    parser = _Parser(text, limits)
    raw = parser.parse_deferring()
    ir = GrammarIR(parser.canonical, root, parser.positions)
    if raw:
        parser.check_references()
    if parser.deferred is not None:
        # llama.cpp's own errors after its parse come first, so a grammar llama.cpp
        # refuses is refused for the same reason
        check_llama_errors(ir, text, raw)
        raise parser.deferred
    # last of them llama.cpp's own left-recursion check, on the tree that still has every
    # group
    check_parsed_grammar(ir, text, raw)
    return ir


def raw_rules(text: str, limits: Limits = DEFAULT_LIMITS) -> dict[str, Expr]:
    """The raw parse tree of each rule (groups kept as :class:`Alt`), unchecked."""
    parser = _Parser(text, limits)
    rules = parser.parse_deferring()
    if parser.deferred is not None:
        raise parser.deferred
    return rules


_QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"|\[(?:[^\]\\]|\\.)*\]', re.S)


def parse_fragment(
    text: str, limits: Limits = DEFAULT_LIMITS
) -> tuple[Expr, bool, list[str]] | None:
    """A piece of a rule body on its own: its canonical IR, whether it is an alternation
    at its top level (``a | b``), and the rule names it refers to.

    None unless ``text`` is a well-formed piece that means the same wherever a body
    holds it between blanks or ``|``: no comment (it would swallow what follows), no
    line break outside a group, no NUL, nothing left over, no error (a repetition at
    its start, a bound above ``limits.max_repetition``...).  Rule-level checks (nesting
    depth, undefined rules) are the caller's.
    """
    if "\0" in text:
        return None
    parser = _Parser(text, limits)
    try:
        raw, canonical, end = parser.alternates(0, nested=False)
    except GrammarError:
        return None
    if parser.deferred is not None or end != len(text):
        return None
    if "#" in text and "#" in _QUOTED.sub("", text):
        return None
    assert isinstance(raw, Alt)
    return canonical, len(raw.options) > 1, list(parser.first_ref)


class _Parser:
    """A recursive-descent parser over the code points of the text.

    It builds a *raw* tree that mirrors llama.cpp's rules: every sequence is a
    :class:`Seq`, every alternation (a rule body or a parenthesised group) an
    :class:`Alt`, even of one option; and, as it goes, the canonical form of each rule
    (``normalize`` of the raw tree), which :func:`parse_gbnf` returns.
    """

    def __init__(self, text: str, limits: Limits) -> None:
        self.s = text
        self.n = len(text)
        self.limits = limits
        self.rules: dict[str, Expr] = {}
        self.canonical: dict[str, Expr] = {}  # the rules in canonical form
        self.positions: dict[str, tuple[int, int]] = {}
        self.first_ref: dict[str, int] = {}
        self.depth = 0
        # bounds of the current rule's raw nesting (see rule())
        self.deepest_group = 0
        self.repetitions = 0
        self.line_starts: list[int] | None = None
        # the first of the errors that only gbnfkit makes (a reversed range, an empty
        # class): raised once the text is parsed and llama.cpp's own checks pass
        self.deferred: GrammarError | None = None

    # -- helpers ---------------------------------------------------------------

    def at(self, i: int) -> str:
        return self.s[i] if i < self.n else ""

    def where(self, i: int) -> tuple[int, int]:
        """1-based (line, column) of index ``i``.

        Lines end where rules do: at ``\\n``, ``\\r\\n`` or a lone ``\\r``.
        """
        if self.line_starts is None:
            self.line_starts = [0] + [m.end() for m in GRAMMAR_LINE_BREAK.finditer(self.s)]
        line = bisect.bisect_right(self.line_starts, i)
        return line, i - self.line_starts[line - 1] + 1

    def error(self, message: str, i: int, rules: tuple[str, ...] = ()) -> GrammarError:
        line, column = self.where(min(i, self.n))
        return GrammarError(message, line=line, column=column, source=self.s, rules=rules)

    def space(self, i: int, newline_ok: bool) -> int:
        """Skip blanks and ``#`` comments (and newlines when ``newline_ok``)."""
        return (_BLANKS_NEWLINES if newline_ok else _BLANKS).match(self.s, i).end()  # type: ignore[union-attr]

    def name_end(self, i: int) -> int:
        return _NAME.match(self.s, i).end()  # type: ignore[union-attr]

    # -- grammar and rules -----------------------------------------------------

    def parse(self) -> dict[str, Expr]:
        nul = self.s.find("\0")
        if nul >= 0:
            raise self.error("the grammar text contains a NUL character; write it as \\x00", nul)
        i = self.space(0, True)
        while i < self.n:
            i = self.rule(i)
        return self.rules

    def parse_deferring(self) -> dict[str, Expr]:
        """:meth:`parse`, where a syntax error after a deferred one raises the deferred
        one (the first in the text); the caller raises a deferred error itself."""
        try:
            return self.parse()
        except GrammarError:
            if self.deferred is not None:
                raise self.deferred from None
            raise

    def rule(self, start: int) -> int:
        end = self.name_end(start)
        if end == start:
            raise self.error(self.missing_name_message(start), start)
        name = self.s[start:end]
        i = self.space(end, False)
        if self.s.startswith("::=", i):
            pass
        elif self.at(i) == "_":
            raise self.error(_underscore_message(self.s, i), i)
        else:
            found = self.at(i)
            shown = f"found {describe_char(found)}" if found else "found the end of the grammar"
            hint = " (GBNF defines rules with '::=', not '=' or ':=')" if found in "=:" else ""
            raise self.error(f"expected '::=' after rule name {name!r}, {shown}{hint}", i)
        if name in self.rules:
            first_line = self.positions[name][0]
            line = self.where(start)[0]
            raise self.error(
                f"rule {name!r} is defined twice (lines {first_line} and {line}); "
                "remove or rename one of the definitions",
                start,
                (name,),
            )
        self.positions[name] = self.where(start)
        self.rules[name] = Seq(())  # reserve the definition order
        self.canonical[name] = Seq(())
        i = self.space(i + 3, True)
        self.deepest_group = self.repetitions = 0
        body, canonical, i = self.alternates(i, nested=False)
        # the rule's Alt and Seq, two levels per group, one per repetition, and a literal's
        # Seq bound the nesting: only a rule that may be too deep is measured
        bound = 3 + 2 * self.deepest_group + self.repetitions
        if bound > _MAX_DEPTH and _depth(body) > _MAX_DEPTH:
            raise self.error(
                f"rule {name!r} is nested too deeply (more than {_MAX_DEPTH} levels, a "
                "group of parentheses counting two and a repetition one); split it into "
                "smaller rules",
                start,
                (name,),
            )
        self.rules[name] = body
        self.canonical[name] = canonical
        c = self.at(i)
        if c == "\r":
            i += 2 if self.at(i + 1) == "\n" else 1
        elif c == "\n":
            i += 1
        elif c:
            raise self.error(self.after_rule_message(i), i)
        return self.space(i, True)

    def missing_name_message(self, i: int) -> str:
        c = self.at(i)
        if c == "|":
            return (
                "a line cannot start with '|': a newline ends the rule; put the '|' at the end "
                "of the previous line, or wrap the alternatives in parentheses"
            )
        if c == "_":
            return "'_' is not allowed in rule names; use '-' instead (e.g. my-rule)"
        if self.s.startswith("::=", i):
            return "expected a rule name before '::='"
        if c == "\ufeff" and i == 0:
            return (
                "the grammar starts with a byte order mark (U+FEFF), which GBNF does not "
                "allow (llama.cpp refuses it too); save the file as UTF-8 without a BOM"
            )
        return f"expected a rule name (ASCII letters, digits and '-'), found {describe_char(c)}"

    def group_error(self, i: int, opener: int) -> GrammarError:
        c = self.at(i)
        if not c:
            return self.error("unbalanced '(': the group opened here is never closed", opener)
        if c == "_":
            return self.error(_underscore_message(self.s, i), i)
        return self.error(
            f"unexpected {describe_char(c)} inside a group; expected ')' to close the group "
            f"opened at column {self.where(opener)[1]}",
            i,
        )

    def after_rule_message(self, i: int) -> str:
        c = self.at(i)
        if c == "_":
            return _underscore_message(self.s, i)
        if c == ")":
            return "unbalanced ')': there is no '(' to close"
        if self.s.startswith("::=", i):
            return (
                "unexpected '::=': the previous rule ran on into this line "
                "(does the line before end with '|'? a trailing '|' continues the rule)"
            )
        return (
            f"unexpected {describe_char(c)} after the rule body; expected a newline, "
            "the end of the grammar, or another item"
        )

    # -- expressions -----------------------------------------------------------

    def alternates(self, i: int, nested: bool) -> tuple[Expr, Expr, int]:
        """The raw tree of the alternatives at ``i``, its canonical form, the index after."""
        s, n = self.s, self.n
        seq, canonical, i = self.sequence(i, nested)
        options = [seq]
        canonicals = [canonical]
        while i < n and s[i] == "|":
            i = _BLANKS_NEWLINES.match(s, i + 1).end()  # type: ignore[union-attr]
            seq, canonical, i = self.sequence(i, nested)
            options.append(seq)
            canonicals.append(canonical)
        return Alt(tuple(options)), make_alt(canonicals), i

    def sequence(self, i: int, nested: bool) -> tuple[Expr, Expr, int]:
        """Like :meth:`alternates`, for one sequence."""
        s, n = self.s, self.n
        skip = (_BLANKS_NEWLINES if nested else _BLANKS).match
        items: list[Expr] = []
        canonical: list[Expr] = []  # the canonical forms of the items
        # like llama.cpp's last_sym_start: does the last item produce any element?
        has_last = False
        while i < n:
            c = s[i]
            start = i
            if c in _WORD_CHARS:
                end = _NAME.match(s, i).end()  # type: ignore[union-attr]
                name = s[i:end]
                if name not in self.first_ref:
                    self.first_ref[name] = i
                item: Expr = RuleRef(name)
                items.append(item)
                canonical.append(item)
                has_last = True
                i = skip(s, end).end()  # type: ignore[union-attr]
            elif c == '"':
                item, i = self.literal(i)
                items.append(item)
                canonical.append(normalize(item))
                has_last = not isinstance(item, Literal) or item.text != ""
                i = skip(s, i).end()  # type: ignore[union-attr]
            elif c == "[":
                item, i = self.char_class(i)
                items.append(item)
                canonical.append(item)
                has_last = not isinstance(item, Literal)  # [] is no element in llama.cpp
                i = skip(s, i).end()  # type: ignore[union-attr]
            elif c == "(":
                self.depth += 1
                if self.depth > _MAX_DEPTH // 2:
                    raise self.error(
                        f"parentheses nested more than {_MAX_DEPTH // 2} deep; "
                        "split the rule into smaller rules",
                        i,
                    )
                if self.depth > self.deepest_group:
                    self.deepest_group = self.depth
                i = _BLANKS_NEWLINES.match(s, i + 1).end()  # type: ignore[union-attr]
                item, group, i = self.alternates(i, nested=True)
                if i >= n or s[i] != ")":
                    raise self.group_error(i, start)
                self.depth -= 1
                items.append(item)
                canonical.append(group)
                has_last = True
                i = skip(s, i + 1).end()  # type: ignore[union-attr]
            elif c == ".":
                items.append(ANY)
                canonical.append(ANY)
                has_last = True
                i = skip(s, i + 1).end()  # type: ignore[union-attr]
            elif c in _REPEAT_CHARS:
                if not has_last:
                    raise self.error(
                        f"nothing to repeat before {c!r}: put the repetition after an item "
                        '(a literal, class, rule name or group; "" is empty)',
                        i,
                    )
                if c == "{":
                    lo, hi, i = self.braces(i, nested)
                else:
                    lo, hi = _OPERATORS[c]
                    i += 1
                i = skip(s, i).end()  # type: ignore[union-attr]
                items[-1] = Repeat(items[-1], lo, hi)
                canonical[-1] = Repeat(canonical[-1], lo, hi)
                self.repetitions += 1
                has_last = hi != 0
            else:
                break
        return Seq(tuple(items)), make_seq(canonical), i

    def braces(self, start: int, nested: bool) -> tuple[int, int | None, int]:
        """``{m}``, ``{m,}`` or ``{m,n}`` at ``start``: (min, max, index after '}')."""
        i = self.space(start + 1, nested)
        lo, i = self.integer(i, start)
        i = self.space(i, nested)
        hi: int | None
        if self.at(i) == "}":
            hi = lo
        elif self.at(i) == ",":
            i = self.space(i + 1, nested)
            if "0" <= self.at(i) <= "9":
                hi, i = self.integer(i, start)
                i = self.space(i, nested)
            else:
                hi = None
            if self.at(i) != "}":
                raise self.error("expected '}' to close the repetition '{m,n}'", i)
        else:
            raise self.error("expected ',' or '}' in the repetition '{m,n}'", i)
        limit = self.limits.max_repetition
        for bound in (lo, hi):
            if bound is not None and bound > limit:
                raise self.error(
                    f"repetition bound {bound} is above the limit max_repetition={limit}; "
                    "use a smaller bound, '*' for no upper bound, or raise Limits.max_repetition",
                    start,
                )
        if hi is not None and lo > hi:
            raise self.error(
                f"repetition {{{lo},{hi}}} has its minimum above its maximum; "
                f"did you mean {{{hi},{lo}}}?",
                start,
            )
        return lo, hi, i + 1

    def integer(self, i: int, brace: int) -> tuple[int, int]:
        j = i
        while j < self.n and "0" <= self.s[j] <= "9":
            j += 1
        if j == i:
            hint = " ({,n} is not allowed: write {0,n})" if self.at(i) == "," else ""
            raise self.error(f"expected a number in the repetition '{{m,n}}'{hint}", i)
        if j - i > 18 and len(self.s[i:j].lstrip("0")) > 18:  # leading zeros are fine
            raise self.error(
                f"repetition bound is above the limit max_repetition={self.limits.max_repetition}",
                brace,
            )
        return int(self.s[i:j]), j

    def literal(self, start: int) -> tuple[Expr, int]:
        s, n = self.s, self.n
        i = start + 1
        chars: list[str] = []
        parts: list[Expr] = []
        while True:
            plain = _PLAIN_STRING.match(s, i).end()  # type: ignore[union-attr]
            if plain > i:
                chars.append(s[i:plain])
                i = plain
            if i >= n:
                raise self.error("unterminated string literal: add the closing '\"'", start)
            if s[i] == '"':
                break
            cp, i = self.char(i, start, "string literal")
            if cp > MAX_CODE_POINT:
                if chars:
                    parts.append(Literal("".join(chars)))
                    chars = []
                parts.append(CharClass.of([(cp, cp)]))
            else:
                chars.append(chr(cp))
        if chars or not parts:
            parts.append(Literal("".join(chars)))
        return (parts[0] if len(parts) == 1 else Seq(tuple(parts))), i + 1

    def char_class(self, start: int) -> tuple[Expr, int]:
        s, n = self.s, self.n
        i = start + 1
        negated = False
        if self.at(i) == "^":
            negated = True
            i += 1
        ranges: list[tuple[int, int]] = []
        while True:
            if i >= n:
                raise self.error("unterminated character class: add the closing ']'", start)
            if s[i] == "]":
                break
            char_start = i
            lo, i = self.char(i, start, "character class")
            hi = lo
            if self.at(i) == "-" and self.at(i + 1) != "]":
                if i + 1 >= n:
                    raise self.error("unterminated character class: add the closing ']'", start)
                hi, i = self.char(i + 1, start, "character class")
                if hi < lo:
                    a, b = class_char(lo), class_char(hi)
                    self.defer(
                        f"reversed range {a}-{b} in character class; did you mean {b}-{a}?",
                        char_start,
                    )
                    continue  # it matches nothing, as in llama.cpp
            ranges.append((lo, hi))
        if i == start + 1 + negated:
            if negated:
                message = "empty negated character class [^]; use . to match any character"
            else:
                message = (
                    'empty character class []; it would match nothing: use "" for the empty '
                    "string, or list the characters"
                )
            self.defer(message, start)
            return Literal(""), i + 1  # no element at all, as in llama.cpp
        return CharClass.of(ranges, negated), i + 1

    def defer(self, message: str, i: int) -> None:
        """Keep the first of gbnfkit's own syntax errors for later (see ``deferred``)."""
        if self.deferred is None:
            self.deferred = self.error(message, i)

    def char(self, i: int, opener: int, what: str) -> tuple[int, int]:
        """One (possibly escaped) character at ``i``: (code point, next index)."""
        s = self.s
        c = s[i]
        if c != "\\":
            return ord(c), i + 1
        e = self.at(i + 1)
        if e in _HEX_SIZES:
            size = _HEX_SIZES[e]
            digits = s[i + 2 : i + 2 + size]
            if len(digits) != size or not all(d in _HEX_DIGITS for d in digits):
                raise self.error(
                    f"bad escape \\{e}: expected exactly {size} hex digits after \\{e}", i
                )
            return int(digits, 16), i + 2 + size
        if e in _SIMPLE_ESCAPES:
            return ord(_SIMPLE_ESCAPES[e]), i + 2
        if not e:
            raise self.error(f"unterminated {what}: the text ends after '\\'", opener)
        raise self.error(
            f"unknown escape \\{e} in {what}; valid escapes are {_VALID_ESCAPES} "
            f"(write a literal {e!r} without the backslash)",
            i,
        )

    # -- references --------------------------------------------------------------

    def check_references(self) -> None:
        """Undefined rule names, pointing at the first reference (llama.cpp order)."""
        missing = [name for name in self.first_ref if name not in self.rules]
        if missing:
            first = min(missing, key=lambda name: self.first_ref[name])
            raise self.error(
                undefined_message(missing, self.rules), self.first_ref[first], tuple(missing)
            )


def _underscore_message(text: str, at: int) -> str:
    """Message for a '_' at ``at`` inside what was meant to be a rule name."""
    start = at
    while start > 0 and (_is_word_char(text[start - 1]) or text[start - 1] == "_"):
        start -= 1
    end = at
    while end < len(text) and (_is_word_char(text[end]) or text[end] == "_"):
        end += 1
    bad = text[start:end]
    return f"'_' is not allowed in rule names ({bad!r}); use '-' instead: {bad.replace('_', '-')!r}"


def _depth(expr: Expr) -> int:
    """Nesting depth of a raw tree, computed without recursion."""
    deepest = 0
    stack: list[tuple[Expr, int]] = [(expr, 1)]
    while stack:
        node, level = stack.pop()
        deepest = max(deepest, level)
        if isinstance(node, Seq):
            stack.extend((item, level + 1) for item in node.items)
        elif isinstance(node, Alt):
            stack.extend((option, level + 1) for option in node.options)
        elif isinstance(node, Repeat):
            stack.append((node.item, level + 1))
    return deepest
