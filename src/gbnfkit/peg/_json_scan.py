"""A fast path for ``json()``, ``json_object()`` and ``json_array()``.

The JSON parsers are defined with combinators (``_json.py``): that definition gives their
grammar, and the error messages.  Parsing runs this hand-written scanner instead, which
returns exactly what the combinator definition returns -- status, end, and whether the
end of the text was looked at -- but with one Python frame per nesting level instead of a
dozen (``tests/peg`` checks the two against each other).  Every value is memoised at its
position, and an object or array that is still open keeps a resume point after its last
member that did not depend on the end of the text.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from gbnfkit.peg import _frontier as fr
from gbnfkit.peg._scan import JSON_STRING_RUN, PARTIAL_ESCAPE, SPACE_RUN

if TYPE_CHECKING:
    from gbnfkit.peg._eval import Res

__all__ = ["JsonScanner"]

FAIL, OK, MORE = 0, 1, 2
_DIGITS = re.compile(r"[0-9]*")
_WORDS = {"t": "true", "f": "false", "n": "null"}


class JsonScanner:
    """Mixin of :class:`gbnfkit.peg._eval.Evaluator` (uses its text, memo and resume)."""

    t: str
    n: int
    partial: bool
    nops: int
    stable: dict[int, Res]
    volatile: dict[int, Res]
    resume: dict[int, Any]
    json_id: int
    first: fr.Record | None
    bad: bool

    def touch(self, record: fr.Record) -> None: ...  # see Evaluator

    def json_value(self, pos: int) -> Res:
        """A JSON value at ``pos`` (memoised)."""
        key = pos * self.nops + self.json_id
        res = self.stable.get(key) or self.volatile.get(key)
        if res is not None:
            return res
        res = self.scan_value(pos, key)
        if res[3]:
            self.volatile[key] = res
        else:
            self.stable[key] = res
        return res

    def at_end(self) -> Res:
        """A literal (or anything that needs a character) at the end of the text."""
        self.touch(fr.OTHER_RECORD)
        if self.partial:
            return (MORE, self.n, None, True)
        return (FAIL, 0, None, True)

    def json_kind(self, kind: str, pos: int) -> Res:
        """``json()`` (``kind`` "value"), ``json_object()`` ("{") or ``json_array()`` ("[")."""
        if kind == "value":
            return self.json_value(pos)
        if pos >= self.n:
            return self.at_end()
        if self.t[pos] != kind:
            return (FAIL, pos, None, False)
        return self.json_value(pos)

    def scan_value(self, pos: int, key: int) -> Res:
        t, n = self.t, self.n
        if pos >= n:
            return self.at_end()
        c = t[pos]
        if c == "{" or c == "[":
            return self.scan_container(pos, key, c == "{")
        if c == '"':
            return self.scan_string(pos, key)
        if c == "-" or "0" <= c <= "9":
            return self.scan_number(pos)
        word = _WORDS.get(c)
        if word is not None:
            if t.startswith(word, pos):
                return (OK, pos + len(word), None, False)
            if n - pos < len(word) and word.startswith(t[pos:]):
                if self.first is None:
                    self.first = fr.literal_record(pos, n, word)
                return self.at_end()
        return (FAIL, pos, None, False)

    def scan_string(self, pos: int, key: int) -> Res:
        """``"`` content ``"`` at ``pos`` (``t[pos]`` is the opening quote)."""
        t, n = self.t, self.n
        k = JSON_STRING_RUN.match(t, self.resume.get(key, pos + 1)).end()  # type: ignore[union-attr]
        if k < n:
            c = t[k]
            if c == '"':
                return (OK, k + 1, None, False)
            if c == "\\" and PARTIAL_ESCAPE.fullmatch(t, k):
                self.resume[key] = k
                self.touch(fr.OTHER_RECORD)
                return (MORE, k, None, True) if self.partial else (FAIL, pos, None, True)
            return (FAIL, pos, None, False)
        self.resume[key] = k
        if self.partial:
            if self.first is None:
                self.first = fr.string_record(pos, k)
            return (MORE, k, None, True)
        self.touch(fr.OTHER_RECORD)
        return (FAIL, pos, None, True)

    def scan_number(self, pos: int) -> Res:
        t, n, partial = self.t, self.n, self.partial
        p = pos + 1 if t[pos] == "-" else pos
        if p >= n:
            return self.at_end()
        c = t[p]
        if c == "0":
            p += 1
        elif "1" <= c <= "9":
            p = _DIGITS.match(t, p + 1).end()  # type: ignore[union-attr]
        else:
            return (FAIL, pos, None, False)
        if p >= n:
            # more digits lengthen the number, except after a leading 0
            self.touch(fr.digits_record(pos, p) if c != "0" else fr.OTHER_RECORD)
            return (OK, p, None, True)
        touched = False
        if t[p] == ".":
            q = p + 1
            m = _DIGITS.match(t, q).end()  # type: ignore[union-attr]
            if m > q:
                p = m
                if m >= n:
                    self.touch(fr.digits_record(pos, p))
                    return (OK, p, None, True)
            elif q >= n:
                self.touch(fr.OTHER_RECORD)
                if partial:
                    return (MORE, n, None, True)
                touched = True  # no fraction after all
        if t[p] in "eE":
            q = p + 1
            if q < n and t[q] in "+-":
                q += 1
            m = _DIGITS.match(t, q).end()  # type: ignore[union-attr]
            if m > q:
                if m >= n:
                    self.touch(fr.digits_record(pos, m))
                return (OK, m, None, m >= n)
            if q >= n:
                self.touch(fr.OTHER_RECORD)
                if partial:
                    return (MORE, n, None, True)
                touched = True  # no exponent after all
        return (OK, p, None, touched)

    def space(self, p: int) -> int:
        t = self.t
        if p >= self.n or t[p] not in " \t\n\r":
            return p
        return SPACE_RUN.match(t, p).end()  # type: ignore[union-attr]

    def member(self, p: int, is_object: bool) -> Res:
        """One object member (``"key" : value``) or array item at ``p``."""
        if not is_object:
            return self.json_value(p)
        key = p * self.nops + self.json_id
        start = self.resume.get(-key - 1)  # where the value starts, once that is decided
        if start is not None:
            return self.json_value(start)
        t, n = self.t, self.n
        if p >= n:
            return self.at_end()
        if t[p] != '"':
            return (FAIL, p, None, False)
        r = self.scan_string(p, key)
        if r[0] != OK:
            return r
        q = self.space(r[1])
        if q >= n:
            if self.first is None:
                self.first = fr.space_record(r[1], n)
            return self.at_end()
        if t[q] != ":":
            return (FAIL, p, None, False)
        start = self.space(q + 1)
        if start < n:
            self.resume[-key - 1] = start
        elif self.first is None:
            self.first = fr.space_record(q + 1, n)
        return self.json_value(start)

    def scan_container(self, pos: int, key: int, is_object: bool) -> Res:
        t, n, partial = self.t, self.n, self.partial
        close = "}" if is_object else "]"
        touched = False
        saved = self.resume.get(key)
        if saved is not None:
            p = saved  # just after a member that did not depend on the end of the text
        else:
            p = self.space(pos + 1)
            if p >= n:
                self.touch(fr.space_record(pos + 1, n))
                if partial:
                    return (MORE, n, None, True)
                touched = True
            else:
                r = self.member(p, is_object)
                touched = r[3]
                if r[0] == MORE:
                    return r
                if r[0] == FAIL:
                    # no members: the closing bracket must come now
                    return self.close(p, close, pos, touched)
                p = r[1]
                if not touched:
                    self.resume[key] = p
        # zero or more of: space "," space member
        while True:
            if p >= n and partial:
                self.touch(fr.space_record(p, n))  # close() needs more input
                touched = True
                break
            q = self.space(p)
            if q >= n:
                self.touch(fr.space_record(p, n))
                if partial:
                    return (MORE, n, None, True)
                touched = True
                break
            if t[q] != ",":
                break
            item = self.space(q + 1)
            if item >= n and partial:
                self.touch(fr.space_record(q + 1, n))
                return (MORE, n, None, True)
            r = self.member(item, is_object)
            if r[3]:
                touched = True
            if r[0] == MORE:
                return (MORE, r[1], None, True)
            if r[0] == FAIL:
                break
            p = r[1]
            if not touched:
                self.resume[key] = p
        return self.close(self.space(p), close, pos, touched)

    def close(self, p: int, close: str, pos: int, touched: bool) -> Res:
        """The closing bracket at ``p`` (whitespace already skipped)."""
        if p < self.n:
            if self.t[p] == close:
                return (OK, p + 1, None, touched)
            if touched:
                self.bad = True
            return (FAIL, pos, None, touched)
        self.touch(fr.OTHER_RECORD)
        if self.partial:
            return (MORE, self.n, None, True)
        self.bad = True
        return (FAIL, pos, None, True)
