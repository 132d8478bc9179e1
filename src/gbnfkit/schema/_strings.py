"""JSON string contents: character classes as they may be written inside ``"..."``.

A decoded character may appear raw (unless it is ``"``, ``\\`` or a control
character), as a short escape (``\\n``, ``\\/``...), as ``\\uXXXX`` (hex digits in
either case) or, outside the BMP, as a surrogate pair ``\\uD8xx\\uDCxx``.  Every
form is accepted, so a class matches exactly the JSON spellings of its characters.
A class that holds surrogate code points (any character, ``.``, a negated class) also
accepts them as lone ``\\uD800``-``\\uDFFF`` escapes: JSON's grammar allows any four hex
digits, and Python's ``json`` reads them into the string (never raw: UTF-8 cannot carry
them); unless ``lone_surrogates`` is off (``SchemaOptions.lone_surrogates``, Pydantic's
parser refuses them): then a surrogate is only ever the half of a pair.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from gbnfkit.schema._gbnf import (
    Recorder,
    RuleTable,
    alt,
    char_class,
    current_recorder,
    group,
    joined,
    literal,
    name_part,
    paren,
    recording,
    seq,
)
from gbnfkit.schema._numbers import digit_range, hex_digits
from gbnfkit.schema._regex_parse import ANY_CHAR, Ranges, complement, normalize

__all__ = ["JsonChars", "LLAMA_CHAR"]

LLAMA_CHAR = '[^"\\\\\\x7F\\x00-\\x1F] | [\\\\] (["\\\\bfnrt] | "u" [0-9a-fA-F]{4})'
_SHORT = {0x22: '"', 0x5C: "\\", 0x2F: "/", 8: "b", 12: "f", 10: "n", 13: "r", 9: "t"}
_SHORT_ORDER = tuple(sorted(_SHORT))  # the code points with a short escape, in order
_SURROGATES = ((0xD800, 0xDFFF),)
_NOT_RAW = normalize([(0x22, 0x22), (0x5C, 0x5C), (0, 0x1F), *_SURROGATES])
# the longest suffixes (characters in all) an "other key" rule is kept by (``not_in``)
_KEYED_SUFFIXES = 256


def _intersect(a: Sequence[tuple[int, int]], lo: int, hi: int) -> list[tuple[int, int]]:
    return [(max(x, lo), min(y, hi)) for x, y in a if max(x, lo) <= min(y, hi)]


def _holds(ranges: Ranges, cp: int) -> bool:
    """Whether the sorted, disjoint ``ranges`` hold the code point ``cp``."""
    for lo, hi in ranges:
        if cp <= hi:
            return lo <= cp
    return False


def _minus(a: Ranges, b: Ranges) -> list[tuple[int, int]]:
    out = list(a)
    for blo, bhi in b:
        nxt = []
        for lo, hi in out:
            if bhi < lo or blo > hi:
                nxt.append((lo, hi))
                continue
            if lo < blo:
                nxt.append((lo, blo - 1))
            if hi > bhi:
                nxt.append((bhi + 1, hi))
        out = nxt
    return out


class _Static:
    """The spellings that every conversion meets, built once (pure functions of
    constants, not caches): the class of each hex digit range, and the ``\\u``
    spellings of the spans that the classes of property names keep meeting
    (``JsonChars.not_in`` takes the complement of a few ASCII characters): one ASCII code
    point, everything below or above one, the whole BMP, all of it from U+0100 on (with
    and without the surrogates) and the two surrogate halves of a pair; and the JSON
    spelling (``JsonChars._body``) of any character (with and without lone surrogates:
    every schema with a string meets it), of each printable ASCII character and of every
    character but one of them (with lone surrogates, the default), the classes of the
    "other key" tries' nodes: a schema's objects meet dozens.  Those complements call the
    rule of the escapes from U+0100 on, named ``wide_name`` here.  ``notes`` records how
    they were composed, for the conversions that build grammar IR directly
    (:mod:`gbnfkit.schema._direct`)."""

    def __init__(self) -> None:
        self.notes = Recorder()
        with recording(self.notes):
            self.classes = {(lo, hi): hex_digits(lo, hi) for lo in range(16)
                            for hi in range(lo, 16)}
            self.spans = {
                span: self.hex4(*span)
                for span in [(0xD800, 0xDBFF), (0xDC00, 0xDFFF), (0, 0xFFFF),
                             (0x100, 0xFFFF), (0x100, 0xD7FF), (0xE000, 0xFFFF),
                             *((cp, cp) for cp in range(0x80)),
                             *((0, cp) for cp in range(0x80)),
                             *((cp, 0xFFFF) for cp in range(0x80))]
            }
            chars = JsonChars(RuleTable(), static=self)
            self.bodies: dict[Ranges, str] = {}
            for ranges in [ANY_CHAR, tuple(_minus(ANY_CHAR, _SURROGATES)),
                           *(((cp, cp),) for cp in range(0x20, 0x7F)),
                           *(complement(((cp, cp),)) for cp in range(0x20, 0x7F))]:
                self.bodies[ranges] = chars._body(ranges)
        self.wide_name = chars._wide_name  # (the rule that the bodies of complements call)

    def hex4(self, lo: int, hi: int) -> str:
        """``lo..hi`` as four hex digits in either case (what follows ``\\u``)."""
        if hi <= 0xFF:
            return self._hex4_byte(lo, hi)
        return digit_range(lo, hi, 4, 16, self._hex_class)

    def _hex4_byte(self, lo: int, hi: int) -> str:
        """:meth:`hex4` of a span below U+0100 (the gaps between the next characters of
        an "other key" trie node: a conversion meets a few that no static span holds),
        the text and the notes of ``digit_range`` without its recursion, which is
        interpreted (``_numbers`` is not compiled): ``"0"`` twice, then the two low
        digits as ``digit_range``'s ``_fixed`` writes them for these spans."""
        cls = self.classes
        zero = cls[0, 0]
        a1, a0, b1, b0 = lo >> 4, lo & 15, hi >> 4, hi & 15
        # (the classes are atoms without a space: ``joined`` writes and notes what
        # ``seq`` would, without its checks for parts to group)
        if lo == 0 and hi == 0xFF:
            low = cls[0, 15] + "{2}"
        elif a0 == 0 and b0 == 15:
            low = joined(cls[a1, b1], cls[0, 15])
        elif a1 == b1:
            low = joined(cls[a1, a1], cls[a0, b0])
        else:
            options = []
            if a0 != 0:
                options.append(joined(cls[a1, a1], cls[a0, 15]))
            mid_lo = a1 if a0 == 0 else a1 + 1
            mid_hi = b1 if b0 == 15 else b1 - 1
            if mid_lo <= mid_hi:
                options.append(joined(cls[mid_lo, mid_hi], cls[0, 15]))
            if b0 != 15:
                options.append(joined(cls[b1, b1], cls[0, b0]))
            low = alt(options)
        # ``seq(zero, seq(zero, low))``: a part holding " | " (never an atom here) grouped
        inner = joined(zero, paren(low) if " | " in low else low)
        return joined(zero, paren(inner) if " | " in inner else inner)

    def _hex_class(self, lo: int, hi: int) -> str:
        return self.classes[lo, hi]


@functools.cache
def _static() -> _Static:
    """The static spellings, built by the first conversion (about 4 ms) rather than by
    every ``import gbnfkit``."""
    return _Static()


class JsonChars:
    """Names GBNF rules for the JSON spellings of character classes."""

    def __init__(self, table: RuleTable, *, llama: bool = False,
                 lone_surrogates: bool = True, static: _Static | None = None) -> None:
        self.table = table
        self.llama = llama
        self.lone_surrogates = lone_surrogates
        self._names: dict[Ranges, str] = {}
        # this run's \\u spellings of code point spans: the classes of one schema (the
        # complements in ``not_in``) keep meeting the same spans
        self._hex: dict[tuple[int, int], str] = {}
        self._ones: dict[str, str] = {}
        self._others: dict[str, str] = {}
        # this run's classes of short escapes (by their letters) and surrogate pairs (by
        # span): the same few for every class of the schema, each recorded once
        self._shorts: dict[str, str] = {}
        self._pair_texts: dict[tuple[int, int], list[str]] = {}
        # the "other key" rule of each set of forbidden suffixes (``not_in``)
        self._not_in: dict[frozenset[str], str] = {}
        # (that of one suffix, by the suffix)
        self._not_in_one: dict[str, str] = {}
        # (``static``: the one being built, which composes its bodies with this class)
        # every character a class may spell, and those from U+0100 on; the rule of the
        # latter's escapes after ``\\u``, once made (``_wide_escapes``)
        self._any = ANY_CHAR if lone_surrogates else tuple(_minus(ANY_CHAR, _SURROGATES))
        self._wide = _intersect(self._any, 0x100, 0x10FFFF)
        self._wide_name = ""
        self._static = static if static is not None else _static()
        self._static_hex = self._static.spans
        self._static_bodies = self._static.bodies if static is None else {}
        recorder = current_recorder()
        if recorder is not None and recorder is not self._static.notes:
            recorder.base = self._static.notes

    def _hex4(self, lo: int, hi: int) -> str:
        found = self._static_hex.get((lo, hi)) or self._hex.get((lo, hi))
        if found is None:
            found = self._hex[lo, hi] = self._static.hex4(lo, hi)
        return found

    def one(self, ch: str) -> str:
        """``of`` the one character ``ch`` (kept by character)."""
        found = self._ones.get(ch)
        if found is None:
            cp = ord(ch)
            found = self._ones[ch] = self._named(((cp, cp),))
        return found

    def other_than(self, chars: str) -> str:
        """``of`` every character but the sorted, distinct ``chars`` (kept by ``chars``)."""
        found = self._others.get(chars)
        if found is None:
            found = self._others[chars] = self._named(complement(tuple((ord(c), ord(c))
                                                                       for c in chars)))
        return found

    def char(self) -> str:
        """The rule for any one JSON string character."""
        if self.llama and self.lone_surrogates:
            return self.table.add("char", LLAMA_CHAR)
        if self.llama:  # llama.cpp's rule, its surrogate escapes in pairs only
            hexes = alt([self._hex4(0, 0xD7FF), self._hex4(0xE000, 0xFFFF),
                         seq(self._hex4(0xD800, 0xDBFF), '"\\\\u"', self._hex4(0xDC00, 0xDFFF))])
            return self.table.add("char", '[^"\\\\\\x7F\\x00-\\x1F] | [\\\\] (["\\\\bfnrt] | '
                                  f'"u" {paren(hexes)})')
        return self.of(ANY_CHAR)

    def of(self, ranges: Ranges) -> str:
        """A rule name matching one character of ``ranges`` in any JSON spelling."""
        found = self._names.get(ranges)
        if found is not None:  # (the keys are normalized: so is ``ranges``)
            return found
        return self._named(normalize(list(ranges)))

    def _named(self, ranges: Ranges) -> str:
        """:meth:`of` the normalized ``ranges`` (sorted, disjoint, not adjacent)."""
        found = self._names.get(ranges)
        if found is not None:
            return found
        hint = "char" if ranges == ANY_CHAR else "char-class"
        if len(ranges) == 1 and ranges[0][0] == ranges[0][1] and 0x21 <= ranges[0][0] < 0x7F:
            ch = chr(ranges[0][0])
            hint = "char-" + (ch if ch.isalnum() else f"x{ranges[0][0]:02x}")
        spelled = ranges if self.lone_surrogates else tuple(_minus(ranges, _SURROGATES))
        body = self._static_bodies.get(spelled)
        if body is not None and self._calls_wide(spelled) and \
                self._wide_escapes() != self._static.wide_name:
            body = None  # (the static body calls a rule this table names otherwise)
        name = self.table.add(hint, body if body is not None else self._body(spelled))
        self._names[ranges] = name
        return name

    def not_in(self, words: list[str]) -> str:
        """The inside of a JSON string whose decoded value is none of ``words``.

        One rule per node of the words' trie: the node's word is refused (no ``""``
        option) if forbidden, each next character of a forbidden word leads to its child,
        any other character to any string.  A node's rule depends only on the suffixes of
        the forbidden words below it, so the conversion keeps the rule of each suffix set:
        the objects of a schema that list the same or overlapping property names share the
        tails of their tries without recomputing them (the table would return the same
        rule for the same body anyway).  The trie is walked with a stack, not by
        recursion (a word is as long as a user makes it, and this module is compiled:
        its recursion would run on the C stack); a node's rule is made after its
        children's, in the order of its sorted next characters.  Below the last branch
        of a word its nodes form a chain (one suffix each), made by :meth:`_chain` without
        a trie node each.

        A node stands for the words below it and its depth, never for copies of their
        suffixes, and a suffix set is kept (and looked up) whole at the root and below it
        only while its characters are at most ``_KEYED_SUFFIXES``: a key of a long
        name's every suffix made the work and memory quadratic in the name's length (a
        100,000-character name took 13 s and 5 GB before the grammar's size refused it).
        What is not kept is made again, and the table gives the same rule for the same
        body, so the grammar is the same either way."""
        char = self.char()
        if not words:
            return f"{char}*"
        distinct = sorted(set(words))
        if len(distinct) == 1:
            return self._chain("other-key", distinct[0], 0, char)
        known = self._not_in
        root = frozenset(distinct)
        found = known.get(root)
        if found is not None:
            return found
        stack = [_TrieNode("other-key", 0, distinct, root)]
        made = ""  # the rule of the node last finished
        while stack:
            node = stack[-1]
            if node.pending:  # its child at index ``next - 1`` is finished
                node.options.append(joined(node.pending, made))
                node.pending = ""
            if node.next < len(node.children):
                ch = node.children[node.next]
                node.next += 1
                first = self.one(ch)
                below = node.below[ch]
                depth = node.depth + 1
                hint = _child_hint(node.hint, node.depth, ch)
                if len(below) == 1:  # a chain: made at once
                    node.options.append(joined(first, self._chain(hint, below[0], depth, char)))
                    continue
                key = _suffix_key(below, depth)
                found = known.get(key) if key is not None else None
                if found is not None:
                    node.options.append(joined(first, found))
                else:
                    node.pending = first
                    stack.append(_TrieNode(hint, depth, below, key))
                continue
            stack.pop()
            made = self._not_in_rule(node.hint, node.options, node.children, char)
            if node.key is not None:
                known[node.key] = made
        return made

    def _chain(self, hint: str, word: str, depth: int, char: str) -> str:
        """The rule of the trie node of :meth:`not_in` whose one suffix is
        ``word[depth:]`` (named after ``hint``, ``depth`` characters below the root), and
        those of the nodes below it, made in the order a trie node each would be: down
        the word (``one`` of each character) until a suffix whose rule is kept, then up.
        The rules of single suffixes are kept by the suffix (``_not_in_one``: the same as
        ``_not_in`` would by the one-element set): the whole word at the root, and
        below it the suffixes of at most ``_KEYED_SUFFIXES`` characters (``not_in``)."""
        kept = self._not_in_one
        if depth == 0:
            found = kept.get(word)
        elif len(word) - depth <= _KEYED_SUFFIXES:
            found = kept.get(word[depth:])
        else:
            found = None
        if found is not None:
            return found
        hints = [hint]
        firsts: list[str] = []
        made = ""  # the kept rule below the last node, if the walk stopped at one
        size = len(word)
        keyed = size - _KEYED_SUFFIXES  # from this index on a suffix may be kept
        i = depth
        while i < size:
            firsts.append(self.one(word[i]))
            if i + 1 >= keyed:
                found = kept.get(word[i + 1:])
                if found is not None:
                    made = found
                    break
            hints.append(_child_hint(hints[-1], i, word[i]))
            i += 1
        # ``i``: the last node made here (``size``: the word's end, no child)
        while i >= depth:
            at = i - depth
            options = ['""'] if i < size else []
            children: list[str] = []
            if i < size:
                options.append(joined(firsts[at], made))
                children.append(word[i])
            made = self._not_in_rule(hints[at], options, children, char)
            if i >= keyed:
                kept[word[i:]] = made
            elif i == 0:
                kept[word] = made
            i -= 1
        return made

    def _not_in_rule(self, hint: str, options: list[str], children: list[str],
                     char: str) -> str:
        """The rule of a trie node of :meth:`not_in` (its sorted next characters
        ``children``) whose children's ``options`` are made."""
        # a character outside the BMP may be written as a surrogate pair; its high half
        # alone is any other character only when the next escape is not the low half
        # of a child (``"\\ud83d\\ude00"`` is 😀, not a lone surrogate and another
        # character)
        highs: dict[int, list[tuple[int, int]]] = {}
        for ch in children:
            if ord(ch) > 0xFFFF and self.lone_surrogates and chr(_high(ord(ch))) not in children:
                low = 0xDC00 + ((ord(ch) - 0x10000) & 0x3FF)
                highs.setdefault(_high(ord(ch)), []).append((low, low))
        others = "".join(sorted(children + [chr(h) for h in highs])) if highs else \
            "".join(children)
        options.append(joined(self.other_than(others), f"{char}*"))
        for high, lows in highs.items():
            after = alt(['""', seq(self.of(complement(tuple(lows))), f"{char}*")])
            options.append(seq(self.of(((high, high),)), group(after)))
        return self.table.add(hint, alt(options))

    def _body(self, ranges: Ranges) -> str:
        options = []
        raw = _minus(ranges, _NOT_RAW)
        if raw:
            options.append(char_class(raw))
        shorts = "".join([_SHORT[cp] for cp in _SHORT_ORDER if _holds(ranges, cp)])
        escapes = []
        if shorts:
            found = self._shorts.get(shorts)
            if found is None:
                found = self._shorts[shorts] = char_class([(ord(c), ord(c)) for c in shorts])
            escapes.append(found)
        if self._calls_wide(ranges):
            # every character from U+0100 on, as in "any character but a few ASCII or
            # Latin-1 ones" (the "other key" tries' classes: a schema meets dozens): their
            # escapes are one rule that all such classes call, and only the two digits
            # after ``\\u00`` are the class's own
            after_u = [self._wide_escapes()]
            low = _intersect(ranges, 0, 0xFF)
            if low:
                after_u.insert(0, joined('"00"', group(_low_digits(low))))
            escapes.append(joined('"u"', paren(alt(after_u))))
        else:
            escapes.extend(self._escapes(ranges))
        if escapes:
            options.append(joined('"\\\\"', paren(alt(escapes))) if len(escapes) > 1
                           else seq('"\\\\"', escapes[0]))
        return alt(options) if options else "[^\\x00-\\U0010FFFF]"

    def _calls_wide(self, ranges: Ranges) -> bool:
        """Whether the body of (spelled) ``ranges`` calls :meth:`_wide_escapes`: it holds
        every character from U+0100 on, and not all."""
        return ranges != self._any and _intersect(ranges, 0x100, 0x10FFFF) == self._wide

    def _escapes(self, ranges: Ranges) -> list[str]:
        """What may follow ``\\`` to spell a character of ``ranges`` with four hex
        digits: every BMP code point as ``\\uXXXX``, lone surrogates included (JSON's
        grammar allows them and Python's json reads them), then surrogate pairs."""
        escapes = []
        bmp = _intersect(ranges, 0, 0xFFFF)
        hexes = [self._hex4(lo, hi) for lo, hi in bmp]
        if hexes:
            # (a group built here is one atom: what ``seq`` would check by scanning it)
            escapes.append(joined('"u"', paren(alt(hexes))) if len(hexes) > 1
                           else seq('"u"', hexes[0]))
        for lo, hi in _intersect(ranges, 0x10000, 0x10FFFF):
            pairs = self._pair_texts.get((lo, hi))
            if pairs is None:
                pairs = self._pair_texts[lo, hi] = self._pairs(lo, hi)
            escapes.extend(pairs)
        return escapes

    def _wide_escapes(self) -> str:
        """The rule for what may follow ``\\u`` to spell any character from U+0100 on
        (the surrogate pairs' ``u`` included)."""
        name = self._wide_name
        if not name:
            options = [self._hex4(lo, hi) for lo, hi in _intersect(self._wide, 0x100, 0xFFFF)]
            for lo, hi in _intersect(self._wide, 0x10000, 0x10FFFF):
                options.extend(self._pairs(lo, hi, ""))
            name = self._wide_name = self.table.add("char-wide-hex", alt(options))
        return name

    def _pairs(self, lo: int, hi: int, lead: str = '"u"') -> list[str]:
        """The surrogate pairs of ``lo..hi`` after ``\\``: ``lead`` (``""`` after
        ``\\u``) and the two halves."""
        hs_lo, hs_hi = (lo - 0x10000) >> 10, (hi - 0x10000) >> 10
        a, b = (lo - 0x10000) & 0x3FF, (hi - 0x10000) & 0x3FF

        def pair(h1: int, h2: int, l1: int, l2: int) -> str:
            return seq(lead, self._hex4(0xD800 + h1, 0xD800 + h2), '"\\\\u"',
                       self._hex4(0xDC00 + l1, 0xDC00 + l2))

        if hs_lo == hs_hi:
            return [pair(hs_lo, hs_lo, a, b)]
        out = []
        first = hs_lo if a == 0 else hs_lo + 1
        last = hs_hi if b == 0x3FF else hs_hi - 1
        if a != 0:
            out.append(pair(hs_lo, hs_lo, a, 0x3FF))
        if first <= last:
            out.append(pair(first, last, 0, 0x3FF))
        if b != 0x3FF:
            out.append(pair(hs_hi, hs_hi, 0, b))
        return out


class _TrieNode:
    """A node of :meth:`JsonChars.not_in`'s trie while its children are made: the
    forbidden words below it (those whose first ``depth`` characters are its prefix),
    grouped by their next character."""

    __slots__ = ("below", "children", "depth", "hint", "key", "next", "options", "pending")

    def __init__(self, hint: str, depth: int, words: list[str],
                 key: frozenset[str] | None) -> None:
        self.hint = hint  # the name of its rule: ``other-key-`` and the first 30 characters
        self.depth = depth  # of its prefix (the word it stands for), ``depth`` long
        self.key = key  # its suffixes, if short enough to keep its rule by them
        below: dict[str, list[str]] = {}
        ends = False
        for word in words:
            if len(word) > depth:
                below.setdefault(word[depth], []).append(word)
            else:
                ends = True
        self.below = below
        self.children = sorted(below)
        self.options: list[str] = [] if ends else ['""']
        self.next = 0  # the index of the next child to make
        self.pending = ""  # the first part of the option of the child being made


def _suffix_key(words: list[str], depth: int) -> frozenset[str] | None:
    """The suffixes after ``depth`` characters of ``words``, as the key of their
    "other key" rule, or ``None`` when they are more than ``_KEYED_SUFFIXES``
    characters in all (:meth:`JsonChars.not_in`)."""
    if sum(len(word) for word in words) - depth * len(words) > _KEYED_SUFFIXES:
        return None
    return frozenset(word[depth:] for word in words)


def _child_hint(hint: str, depth: int, ch: str) -> str:
    """The hint of the child at ``ch`` of the node named after ``hint``, ``depth``
    characters below the root: ``name_part`` of the first 30 characters of its prefix
    after ``other-key-``."""
    if depth >= 30:
        return hint
    return hint + ("-" if depth == 0 else "") + name_part(ch)


def _low_digits(low: Sequence[tuple[int, int]]) -> str:
    """The two hex digits after ``\\u00`` of the code points ``low`` (below U+0100):
    the first digits grouped by the second digits each allows."""
    seconds = [0] * 16  # by first digit, the second digits it allows (bit d: digit d)
    for lo, hi in low:
        for first in range(lo >> 4, (hi >> 4) + 1):
            a, b = max(lo, first << 4) & 15, min(hi, (first << 4) | 15) & 15
            seconds[first] |= ((2 << b) - 1) ^ ((1 << a) - 1)
    firsts: dict[int, int] = {}  # by second digits, in order: the first digits
    for first in range(16):
        if seconds[first]:
            firsts[seconds[first]] = firsts.get(seconds[first], 0) | (1 << first)
    return alt([joined(_hex_set(digits), _hex_set(second))
                for second, digits in firsts.items()])


def _hex_set(digits: int) -> str:
    """The class of the hex digits whose bits are set in ``digits``, in either case,
    written as ``hex_digits`` writes a range of them (a decimal digit alone: a literal;
    the decimal digits, then the lower-case letters, then the upper-case ones)."""
    if digits & (digits - 1) == 0 and digits < 1 << 10:
        return literal(str(digits.bit_length() - 1))
    ranges: list[tuple[int, int]] = []
    for first, bits, width in ((ord("0"), digits & 0x3FF, 10), (ord("a"), digits >> 10, 6),
                               (ord("A"), digits >> 10, 6)):
        d = 0
        while d < width:
            start = d
            while d < width and bits >> d & 1:
                d += 1
            if d > start:
                ranges.append((first + start, first + d - 1))
            else:
                d += 1
    return char_class(ranges)


def _high(cp: int) -> int:
    """The high surrogate of ``cp`` (outside the BMP)."""
    return 0xD800 + ((cp - 0x10000) >> 10)


def string_literal(value: str) -> str:
    """The canonical (compact, ``ensure_ascii=False``) JSON spelling of ``value``."""
    import json

    return literal(json.dumps(value, ensure_ascii=False))
