"""A parser for the regular-expression subset shared by ECMA-262 and Python ``re``.

The result is a small tree (:class:`Chars`, :class:`Cat`, :class:`Or`, :class:`Rep`)
for each top-level alternative, with flags saying whether that alternative was
anchored at its start (``^``/``\\A``) and end (``$``/``\\Z``/``\\z``); a group that
starts a top-level alternative and holds anchors is spread into top-level alternatives.
Constructs that change the language in ways a grammar cannot follow (lookaround,
backreferences, word boundaries, inline flags, anchors in the middle) raise
:class:`RegexUnsupported` with the position.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Branch", "Cat", "Chars", "Node", "Or", "RegexUnsupported", "Rep", "parse_regex",
           "complement", "DOT", "ANY_CHAR", "python_regex"]


# the largest count of a {m,n} quantifier (Python's re refuses more: OverflowError)
_MAX_REPEAT = 2**32 - 1


def _digits(text: str) -> bool:
    return text.isascii() and text.isdigit()


class RegexUnsupported(Exception):
    """A pattern that is invalid or outside the supported subset."""

    def __init__(self, message: str, position: int) -> None:
        self.message = message
        self.position = position
        super().__init__(f"{message} (at position {position})")


Ranges = tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class Chars:
    """One code point in the (sorted, merged) ranges."""

    ranges: Ranges


@dataclass(frozen=True)
class Cat:
    items: tuple[Node, ...]


@dataclass(frozen=True)
class Or:
    options: tuple[Node, ...]


@dataclass(frozen=True)
class Rep:
    item: Node
    min: int
    max: int | None


Node = Chars | Cat | Or | Rep


@dataclass(frozen=True)
class Branch:
    """One top-level alternative and its anchors."""

    node: Node
    start_anchored: bool
    end_anchored: bool


def normalize(ranges: list[tuple[int, int]]) -> Ranges:
    spans = sorted((lo, hi) for lo, hi in ranges if lo <= hi)
    out: list[tuple[int, int]] = []
    for lo, hi in spans:
        if out and lo <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(hi, out[-1][1]))
        else:
            out.append((lo, hi))
    return tuple(out)


def complement(ranges: Ranges) -> Ranges:
    out = []
    prev = 0
    for lo, hi in ranges:
        if lo > prev:
            out.append((prev, lo - 1))
        prev = hi + 1
    if prev <= 0x10FFFF:
        out.append((prev, 0x10FFFF))
    return tuple(out)


ANY_CHAR: Ranges = ((0, 0x10FFFF),)
DOT: Ranges = complement(normalize([(10, 10), (13, 13), (0x2028, 0x2029)]))
_DIGIT: Ranges = ((48, 57),)
_WORD: Ranges = normalize([(48, 57), (65, 90), (95, 95), (97, 122)])
_SPACE: Ranges = normalize(
    [(9, 13), (32, 32), (0xA0, 0xA0), (0x1680, 0x1680), (0x2000, 0x200A), (0x2028, 0x2029),
     (0x202F, 0x202F), (0x205F, 0x205F), (0x3000, 0x3000), (0xFEFF, 0xFEFF)]
)
_CLASS_ESCAPES = {"d": _DIGIT, "w": _WORD, "s": _SPACE}
_SIMPLE = {"t": 9, "n": 10, "r": 13, "f": 12, "v": 11, "0": 0, "a": 7}


class _Parser:
    def __init__(self, pattern: str, max_count: int | None = None) -> None:
        self.p = pattern
        self.i = 0
        self.groups = 0
        self.max_count = max_count

    def error(self, message: str, pos: int | None = None) -> RegexUnsupported:
        return RegexUnsupported(message, self.i if pos is None else pos)

    def peek(self) -> str:
        return self.p[self.i] if self.i < len(self.p) else ""

    # ------------------------------------------------------------ top level
    def parse(self) -> list[Branch]:
        branches = self.branches(inside=False)
        if self.peek() == ")":
            raise self.error("unbalanced ')'")
        return branches

    def branches(self, inside: bool) -> list[Branch]:
        """Top-level alternatives (or those of a group that is a whole one's start, when
        ``inside``: ``^`` at their start and ``$`` at their end are anchors there too)."""
        branches: list[Branch] = []
        while True:
            start = False
            if self.p.startswith("^", self.i) or self.p.startswith("\\A", self.i):
                start = True
                self.i += 1 if self.p[self.i] == "^" else 2
            leading = self.leading_group() if self.peek() == "(" else None
            if leading is None:
                node, end = self.sequence(top=True, inside=inside)
                branches.append(Branch(node, start, end))
            else:
                branches += [Branch(b.node, start or b.start_anchored, b.end_anchored)
                             for b in leading]
            if self.peek() == "|":
                self.i += 1
                continue
            return branches

    def leading_group(self) -> list[Branch] | None:
        """A group at the start of a top-level alternative whose own alternatives hold
        anchors (``^$|(^a+$)``): each of them becomes a top-level alternative, followed by
        the rest of the enclosing one, so the anchors keep their meaning exactly.  None
        (nothing read) for a group without anchors or one that is repeated."""
        save, groups = self.i, self.groups
        start = self.i
        self.group_header()
        inner = self.branches(inside=True)
        if self.peek() != ")":
            raise self.error("missing ')'", start)
        self.i += 1
        c = self.peek()
        repeated = c != "" and c in "*+?"
        if c == "{":
            after = self.i
            repeated = self.braces() is not None
            self.i = after
        if repeated or not any(b.start_anchored or b.end_anchored for b in inner):
            self.i, self.groups = save, groups
            return None
        rest, end = self.sequence(top=True, inside=True)
        empty = isinstance(rest, Cat) and not rest.items
        out = []
        for b in inner:
            if b.end_anchored and not empty:
                raise self.error("'$' is supported only at the end of the pattern", start)
            node = b.node if empty else Cat((b.node, rest))
            out.append(Branch(node, b.start_anchored, b.end_anchored or end))
        return out

    def sequence(self, top: bool = False, inside: bool = False) -> tuple[Node, bool]:
        items: list[Node] = []
        end = False
        while self.i < len(self.p) and self.p[self.i] not in "|)":
            c = self.p[self.i]
            if c == "$" or self.p.startswith("\\Z", self.i) or self.p.startswith("\\z", self.i):
                pos = self.i
                self.i += 1 if c == "$" else 2
                ends = "|)" if inside else "|"
                if not top or (self.i < len(self.p) and self.p[self.i] not in ends):
                    raise self.error("'$' is supported only at the end of the pattern", pos)
                end = True
                break
            if c == "^" or self.p.startswith("\\A", self.i):
                raise self.error("'^' is supported only at the start of the pattern")
            atom = self.atom()
            items.append(self.quantified(atom))
        node: Node = items[0] if len(items) == 1 else Cat(tuple(items))
        return node, end

    def alternation(self) -> Node:
        options = []
        while True:
            node, _ = self.sequence()
            options.append(node)
            if self.peek() == "|":
                self.i += 1
                continue
            break
        return options[0] if len(options) == 1 else Or(tuple(options))

    # ------------------------------------------------------------ quantifiers
    def quantified(self, atom: Node) -> Node:
        while True:
            c = self.peek()
            pos = self.i
            if c in ("*", "+", "?"):
                self.i += 1
                lo, hi = {"*": (0, None), "+": (1, None), "?": (0, 1)}[c]
            elif c == "{":
                bounds = self.braces()
                if bounds is None:
                    return atom
                lo, hi = bounds
            else:
                return atom
            if self.peek() == "?":
                self.i += 1  # lazy: same language
            elif self.peek() == "+":
                raise self.error("possessive quantifiers are not supported")
            if isinstance(atom, Rep) and pos > 0 and self.p[pos - 1] in "*+?}":
                raise self.error("multiple repeat", pos)
            atom = Rep(atom, lo, hi)

    def braces(self) -> tuple[int, int | None] | None:
        j = self.p.find("}", self.i)
        if j < 0:
            return None
        body = self.p[self.i + 1 : j]
        lo_s, comma, hi_s = body.partition(",")
        # ASCII digits only (str.isdigit also takes '٣' and '²'): otherwise, as in Python's
        # re and ECMA-262, the brace is a literal
        if not (_digits(lo_s) or (comma and lo_s == "" and _digits(hi_s))):
            return None
        if hi_s and not _digits(hi_s):
            return None
        if len(lo_s) > 10 or len(hi_s) > 10 or max(int(lo_s or 0), int(hi_s or 0)) > _MAX_REPEAT:
            raise self.error("the repetition number is too large")
        lo = int(lo_s) if lo_s else 0
        hi: int | None = int(hi_s) if hi_s else (None if comma else lo)
        if hi is not None and hi < lo:
            raise self.error("numbers out of order in {} quantifier")
        limit = self.max_count
        if limit is not None and max(lo, hi or 0) > limit:
            raise self.error(
                f"the repetition count {max(lo, hi or 0)} is above the limit "
                f"max_repetition={limit}; use a smaller count, or raise Limits.max_repetition"
            )
        self.i = j + 1
        return lo, hi

    # ------------------------------------------------------------ atoms
    def atom(self) -> Node:
        c = self.p[self.i]
        if c == "(":
            return self.group()
        if c == "[":
            return Chars(self.char_class())
        if c == ".":
            self.i += 1
            return Chars(DOT)
        if c == "\\":
            return Chars(self.escape(in_class=False))
        if c in "*+?":
            raise self.error("nothing to repeat")
        start = self.i
        if c == "{" and self.braces() is not None:
            # a count with nothing before it ('{2}', 'a|{1,3}') is an error in re and
            # ECMA-262 alike, not a literal brace
            raise self.error("nothing to repeat", start)
        self.i += 1
        return Chars(((ord(c), ord(c)),))

    def group(self) -> Node:
        start = self.i
        self.group_header()
        node = self.alternation()
        if self.peek() != ")":
            raise self.error("missing ')'", start)
        self.i += 1
        return node

    def group_header(self) -> None:
        start = self.i
        self.i += 1
        if self.p.startswith("?", self.i):
            rest = self.p[self.i + 1 :]
            if rest.startswith(":"):
                self.i += 2
            elif rest.startswith("P<") or (rest.startswith("<") and rest[1:2] not in ("=", "!")):
                close = self.p.find(">", self.i)
                if close < 0:
                    raise self.error("unterminated group name")
                self.i = close + 1
            elif rest[:1] in ("=", "!") or rest[:2] in ("<=", "<!"):
                raise self.error("lookaround assertions are not supported", start)
            elif rest.startswith("P="):
                raise self.error("backreferences are not supported", start)
            else:
                raise self.error("inline flags and other (?...) groups are not supported", start)

    def escape(self, in_class: bool) -> Ranges:
        start = self.i
        self.i += 1
        if self.i >= len(self.p):
            raise self.error("pattern ends with a backslash", start)
        c = self.p[self.i]
        self.i += 1
        if c.lower() in _CLASS_ESCAPES:
            r = _CLASS_ESCAPES[c.lower()]
            return complement(r) if c.isupper() else r
        if c in _SIMPLE:
            if c == "0" and self.peek().isdigit():
                raise self.error("octal escapes are not supported", start)
            return ((_SIMPLE[c], _SIMPLE[c]),)
        if c == "b" and in_class:
            return ((8, 8),)
        if c in "bB":
            raise self.error("word boundaries (\\b, \\B) are not supported", start)
        if c.isdigit() or c == "k":
            raise self.error("backreferences are not supported", start)
        if c in "pP":
            raise self.error("Unicode property escapes (\\p, \\P) are not supported", start)
        if c == "x":
            return self.hex_escape(2, start)
        if c == "u":
            if self.peek() == "{":
                close = self.p.find("}", self.i)
                digits = self.p[self.i + 1 : close] if close > 0 else ""
                if not digits or any(ch not in "0123456789abcdefABCDEF" for ch in digits):
                    raise self.error("bad \\u{...} escape", start)
                self.i = close + 1
                cp = int(digits, 16)
                if cp > 0x10FFFF:
                    raise self.error("code point out of range", start)
                return ((cp, cp),)
            return self.hex_escape(4, start)
        if c == "U":
            return self.hex_escape(8, start)
        if c == "c" and self.peek().isascii() and self.peek().isalpha():
            cp = ord(self.p[self.i]) % 32
            self.i += 1
            return ((cp, cp),)
        if c.isalnum():
            # ECMA-262 Annex B reads any other escaped character as itself ('\\_', '\\-',
            # '\\!'); a letter or digit with no meaning is refused, as with the u flag
            raise self.error(f"unknown escape \\{c}", start)
        return ((ord(c), ord(c)),)

    def hex_escape(self, n: int, start: int) -> Ranges:
        digits = self.p[self.i : self.i + n]
        if len(digits) != n or any(ch not in "0123456789abcdefABCDEF" for ch in digits):
            raise self.error("bad hexadecimal escape", start)
        self.i += n
        cp = int(digits, 16)
        if cp > 0x10FFFF:
            raise self.error("code point out of range", start)
        return ((cp, cp),)

    def char_class(self) -> Ranges:
        start = self.i
        self.i += 1
        negated = self.peek() == "^"
        if negated:
            self.i += 1
        ranges: list[tuple[int, int]] = []
        first = True
        while True:
            if self.i >= len(self.p):
                raise self.error("unterminated character class", start)
            c = self.p[self.i]
            if c == "]" and not first:
                self.i += 1
                break
            if c == "]" and first:
                # Python takes a leading ']' literally; ECMA's [] is empty. Refuse both.
                raise self.error("a ']' right after '[' is ambiguous; escape it", self.i)
            first = False
            lo_r = self.class_atom()
            if (
                self.peek() == "-"
                and self.i + 1 < len(self.p)
                and self.p[self.i + 1] != "]"
                and len(lo_r) == 1
                and lo_r[0][0] == lo_r[0][1]
            ):
                dash = self.i
                self.i += 1
                hi_r = self.class_atom()
                if len(hi_r) != 1 or hi_r[0][0] != hi_r[0][1]:
                    raise self.error("bad character range", dash)
                if hi_r[0][0] < lo_r[0][0]:
                    raise self.error("bad character range (reversed)", dash)
                ranges.append((lo_r[0][0], hi_r[0][0]))
            else:
                ranges.extend(lo_r)
        result = normalize(ranges)
        return complement(result) if negated else result

    def class_atom(self) -> Ranges:
        c = self.p[self.i]
        if c == "\\":
            return self.escape(in_class=True)
        if c == "[" and self.p.startswith("[:", self.i):
            raise self.error("POSIX classes are not supported")
        self.i += 1
        return ((ord(c), ord(c)),)


def parse_regex(pattern: str, max_count: int | None = None) -> list[Branch]:
    """Parse ``pattern``; raises :class:`RegexUnsupported` with the position, also for
    a ``{m,n}`` count above ``max_count`` (when given)."""
    return _Parser(pattern, max_count).parse()


def _python_node(node: Node) -> str:
    if isinstance(node, Chars):
        if not node.ranges:
            return "(?!)"
        return "[" + "".join(
            f"\\U{lo:08x}" if lo == hi else f"\\U{lo:08x}-\\U{hi:08x}" for lo, hi in node.ranges
        ) + "]"
    if isinstance(node, Cat):
        return "".join(f"(?:{_python_node(item)})" for item in node.items)
    if isinstance(node, Or):
        return "|".join(f"(?:{_python_node(option)})" for option in node.options)
    high = "" if node.max is None else str(node.max)
    return f"(?:{_python_node(node.item)}){{{node.min},{high}}}"


def python_regex(branches: list[Branch]) -> str:
    """A Python ``re`` pattern that reads the text as ``branches`` do (ECMA-262's classes,
    ``.`` and ``$``, as the grammar does), each class written as explicit code points."""
    return "|".join(
        ("\\A" if b.start_anchored else "") + f"(?:{_python_node(b.node)})"
        + ("\\Z" if b.end_anchored else "")
        for b in branches
    )
