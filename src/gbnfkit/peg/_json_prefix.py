"""An incremental check of an open JSON object or array, for the frontier of a parse.

While the text stops inside a JSON object or array (the JSON parsers' scanner says
NEED_MORE_INPUT), a chunk that keeps the value open and well formed so far leaves the
result of the parse as it was, with the end at the new end of the text (or at the
backslash of an escape that is not finished, where the scanner stops).  :class:`JsonPrefix`
follows the value character by character with the scanner's rules (RFC 8259: the same
whitespace, numbers, escapes and words) and says whether a chunk is such a chunk.
"""

from __future__ import annotations

import re

__all__ = ["JsonPrefix"]

# what the value expects next
(VALUE, VALUE_OR_CLOSE, KEY, KEY_OR_CLOSE, COLON, AFTER, STRING, ESCAPE, UNICODE, MINUS,
 ZERO, INT, DOT, FRACTION, EXP, EXP_SIGN, EXP_DIGITS, WORD) = range(18)

_WS = " \t\n\r"
_HEX = "0123456789abcdefABCDEF"
_DIGITS = "0123456789"
_ESCAPES = '"\\/bfnrt'
_WORDS = {"t": "rue", "f": "alse", "n": "ull"}
_STRING_RUN = re.compile(r'[^"\\\x00-\x1f]*')
_DIGIT_RUN = re.compile(r"[0-9]*")
_WS_RUN = re.compile(r"[ \t\n\r]*")
_NUMBER_END = (ZERO, INT, FRACTION, EXP_DIGITS)  # a number may end here


class JsonPrefix:
    """The state of an open JSON object or array that starts at ``start``: the open
    containers, what comes next, and where an unfinished escape began."""

    __slots__ = ("escape_at", "key", "mode", "pos", "stack", "start", "word")

    def __init__(self, start: int) -> None:
        self.start = start
        self.pos = start  # how far the text has been checked
        self.stack = ""  # the open containers, "{" or "[", outermost first
        self.mode = VALUE
        self.key = False  # the string is a key
        self.word = ""  # the rest of a word (true, false, null), or of a \\u escape
        self.escape_at = -1

    def end(self) -> int:
        """Where the scanner's NEED_MORE_INPUT ends: at an unfinished escape, or at the
        end of the text checked."""
        return self.escape_at if self.mode == ESCAPE or self.mode == UNICODE else self.pos

    def advance(self, chunk: str) -> bool:
        """Follow ``chunk``; ``False`` (and the state unchanged) if the value would end
        or go wrong in it."""
        stack, mode, key, word, escape_at = (self.stack, self.mode, self.key, self.word,
                                             self.escape_at)
        i, n = 0, len(chunk)
        while i < n:
            c = chunk[i]
            if mode == STRING:
                j = _STRING_RUN.match(chunk, i).end()  # type: ignore[union-attr]
                if j == n:
                    break
                c = chunk[j]
                if c == '"':
                    i = j + 1
                    if key:
                        mode = COLON
                        continue
                    mode = AFTER  # a string value ends
                    continue
                if c == "\\":
                    mode = ESCAPE
                    escape_at = self.pos + j
                    i = j + 1
                    continue
                return False  # a control character
            if mode == AFTER or mode == VALUE or mode == KEY or mode == COLON \
                    or mode == VALUE_OR_CLOSE or mode == KEY_OR_CLOSE:
                if c in _WS:
                    i = _WS_RUN.match(chunk, i).end()  # type: ignore[union-attr]
                    continue
                i += 1
                if mode == AFTER:
                    if c == ",":
                        mode = KEY if stack[-1] == "{" else VALUE
                    elif (c == "}" and stack[-1] == "{") or (c == "]" and stack[-1] == "["):
                        stack = stack[:-1]
                        if not stack:
                            return False  # the value is complete
                    else:
                        return False
                elif mode == COLON:
                    if c != ":":
                        return False
                    mode = VALUE
                elif mode == KEY or mode == KEY_OR_CLOSE:
                    if c == '"':
                        mode, key = STRING, True
                    elif c == "}" and mode == KEY_OR_CLOSE:
                        stack = stack[:-1]
                        if not stack:
                            return False
                        mode = AFTER
                    else:
                        return False
                elif c == "]" and mode == VALUE_OR_CLOSE:
                    stack = stack[:-1]
                    if not stack:
                        return False
                    mode = AFTER
                elif c == "{":
                    stack += c
                    mode = KEY_OR_CLOSE
                elif c == "[":
                    stack += c
                    mode = VALUE_OR_CLOSE
                elif c == '"':
                    mode, key = STRING, False
                elif c == "-":
                    mode = MINUS
                elif c == "0":
                    mode = ZERO
                elif "1" <= c <= "9":
                    mode = INT
                elif c in _WORDS:
                    mode, word = WORD, _WORDS[c]
                else:
                    return False
                continue
            if mode == ESCAPE:
                if c == "u":
                    mode, word = UNICODE, "xxxx"  # one x a hex digit to come
                elif c in _ESCAPES:
                    mode = STRING
                else:
                    return False
                i += 1
                continue
            if mode == UNICODE:
                if c not in _HEX:
                    return False
                i += 1
                word = word[1:]
                if not word:
                    mode = STRING
                continue
            if mode == WORD:
                if c != word[0]:
                    return False
                i += 1
                word = word[1:]
                if not word:
                    mode = AFTER
                continue
            # numbers
            if c in _DIGITS:
                if mode == ZERO:
                    return False  # a leading 0 takes no digits after it
                if mode == MINUS:
                    if c == "0":
                        mode = ZERO
                        i += 1
                        continue
                    mode = INT
                elif mode == DOT:
                    mode = FRACTION
                elif mode == EXP or mode == EXP_SIGN:
                    mode = EXP_DIGITS
                i = _DIGIT_RUN.match(chunk, i).end()  # type: ignore[union-attr]
                continue
            if mode == EXP and c in "+-":
                mode = EXP_SIGN
                i += 1
                continue
            if c == "." and (mode == ZERO or mode == INT):
                mode = DOT
                i += 1
                continue
            if c in "eE" and (mode == ZERO or mode == INT or mode == FRACTION):
                mode = EXP
                i += 1
                continue
            if mode in _NUMBER_END:
                mode = AFTER  # the number ends before c, which comes after it
                continue
            return False
        self.stack, self.mode, self.key, self.word, self.escape_at = (stack, mode, key, word,
                                                                      escape_at)
        self.pos += n
        return True
