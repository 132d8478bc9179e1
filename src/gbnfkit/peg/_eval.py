"""The evaluator: packrat parsing with memo entries that survive a growing text.

Every evaluation returns ``(status, end, nodes, touched)``: ``nodes`` is a chain of
:class:`AstNode` (``None``, a node, or a ``(left, right)`` pair, so that concatenation is
O(1)), and ``touched`` says whether the result looked at the end of the text.  A result
that did not touch the end is the same for every longer text with the same beginning, in
partial mode or not: it goes to the *stable* memo, which an :class:`IncrementalParser`
keeps between calls.  Results that touched the end go to a memo of the current call only.

Loops that may run over the whole text (repetitions, character runs, ``until``, JSON
string content) also keep *resume* points: how far they got on the stable part of the
text, so that a longer text continues from there instead of starting over.

Every result that looked at the end of the text records itself in ``first`` if it is the
first one, and a lookahead or failure that looked at it sets ``bad``: the frontier of the
parse (``_frontier.py``), which lets an incremental parser skip the next parses.
"""

from __future__ import annotations

from typing import Any

from gbnfkit._errors import PegError
from gbnfkit.peg import _frontier as fr
from gbnfkit.peg._json_scan import JsonScanner
from gbnfkit.peg._program import SIMPLE, Program
from gbnfkit.peg._result import AstNode
from gbnfkit.peg._scan import JSON_STRING_RUN, PARTIAL_ESCAPE, SPACE_RUN

__all__ = ["FAIL", "MORE", "OK", "Evaluator", "flatten"]

FAIL, OK, MORE = 0, 1, 2

Res = tuple[int, int, Any, bool]


class _Run:
    """Nodes of a chain already listed: what a repetition kept of its stable part, so
    that a longer text lists them again in one copy, not one step per node."""

    __slots__ = ("nodes",)

    def __init__(self, nodes: tuple[AstNode, ...]) -> None:
        self.nodes = nodes


def flatten(chain: Any) -> tuple[AstNode, ...]:
    """The nodes of a chain, in order."""
    if chain is None:
        return ()
    kind = type(chain)
    if kind is AstNode:
        return (chain,)
    if kind is _Run:
        return chain.nodes  # type: ignore[no-any-return]
    out: list[AstNode] = []
    stack = [chain]
    while stack:
        c = stack.pop()
        kind = type(c)
        if kind is tuple:
            stack.append(c[1])
            stack.append(c[0])
        elif kind is _Run:
            out.extend(c.nodes)
        else:
            out.append(c)
    return tuple(out)


def _cat(a: Any, b: Any) -> Any:
    if b is None:
        return a
    if a is None:
        return b
    return (a, b)


def _quote(text: str) -> str:
    from json import dumps

    return dumps(text, ensure_ascii=False)


class Evaluator(JsonScanner):
    """One parse of one text (``stable`` and ``resume`` may come from earlier, shorter
    texts with the same beginning).  With ``track``, failures record the farthest
    position and what was expected there."""

    def __init__(
        self,
        program: Program,
        text: str,
        partial: bool,
        stable: dict[int, Res],
        resume: dict[int, Any],
        track: bool = False,
    ) -> None:
        self.ops = program.ops
        self.json_id = len(program.ops)  # the memo slot of JSON values at each position
        self.nops = len(program.ops) + 1
        self.t = text
        self.n = len(text)
        self.partial = partial
        self.stable = stable
        self.volatile: dict[int, Res] = {}
        self.resume = resume
        self.track = track
        self.far = -1
        self.expected: list[str] = []
        self.first: fr.Record | None = None  # the first result that looked at the end
        self.bad = False  # a lookahead or a failure looked at the end

    def touch(self, record: fr.Record) -> None:
        """A result looked at the end of the text (``record``: see ``_frontier.py``)."""
        if self.first is None:
            self.first = record

    def run(self, nid: int) -> Res:
        """Evaluate op ``nid`` at position 0."""
        try:
            return self.ev(nid, 0)
        except RecursionError:
            raise PegError(
                "the text nests too deeply for the parser (Python's recursion limit)"
            ) from None

    def fail_at(self, pos: int, what: str) -> None:
        if pos > self.far:
            self.far = pos
            self.expected = [what]
        elif pos == self.far and what not in self.expected:
            self.expected.append(what)

    # -- dispatch ----------------------------------------------------------------------
    def ev(self, nid: int, pos: int) -> Res:
        code, arg, kids = self.ops[nid]
        if code == 0:  # literal: not memoised
            t = self.t
            if t.startswith(arg, pos):
                return (OK, pos + len(arg), None, False)
            n = self.n
            if n - pos < len(arg) and arg.startswith(t[pos:]):
                if self.partial:
                    if self.first is None:
                        self.first = fr.literal_record(pos, n, arg)
                    return (MORE, n, None, True)
                self.touch(fr.OTHER_RECORD)
                if self.track:
                    self.fail_at(pos, _quote(arg))
                return (FAIL, pos, None, True)
            if self.track:
                self.fail_at(pos, _quote(arg))
            return (FAIL, pos, None, False)
        if code >= SIMPLE:
            return self.simple(code, pos)
        key = pos * self.nops + nid
        res = self.stable.get(key)
        if res is not None:
            return res
        return self.miss(nid, pos, key)

    def miss(self, nid: int, pos: int, key: int) -> Res:
        """Evaluate memoised op ``nid`` at ``pos`` (not in the stable memo; ``key`` is its
        memo key) and remember the result."""
        res = self.volatile.get(key)
        if res is not None:
            return res
        code, arg, kids = self.ops[nid]
        if code == 1:
            res = self.sequence(kids, pos)
        elif code == 2:
            res = self.choice(kids, pos)
        elif code == 3:
            res = self.repeat(key, arg, kids[0], pos)
        elif code == 4:
            res = self.chars(key, arg, pos)
        elif code == 5:
            res = self.chars(key, (SPACE_RUN, 0, None, "whitespace"), pos)
        elif code == 6:
            res = self.until(key, arg, pos)
        elif code == 7:
            res = self.string_content(key, pos)
        elif code == 9:
            res = self.tag(arg, kids[0], pos)
        elif code == 10:
            res = self.ev(kids[0], pos)
            if res[0] == MORE:
                res = (MORE, res[1], None, res[3])
        elif code == 13:
            # the combinator definition in track mode: it names what was expected
            if self.track:
                res = self.ev(kids[0], pos)
            elif self.first is None:
                res = self.json_kind(arg, pos)
                if res[0] == MORE and self.first is not None and pos < self.n \
                        and self.t[pos] in "{[":
                    # an open object or array (it holds what looked at the end first)
                    self.first = fr.json_record(pos, self.n)
            else:
                res = self.json_kind(arg, pos)
        else:
            res = self.lookahead(code, kids[0], pos)
        if res[3]:
            self.volatile[key] = res
        else:
            self.stable[key] = res
        return res

    # -- the ops ------------------------------------------------------------------------
    def simple(self, code: int, pos: int) -> Res:
        n = self.n
        if code == 14:  # any
            if pos < n:
                return (OK, pos + 1, None, False)
            self.touch(fr.OTHER_RECORD)
            if self.partial:
                return (MORE, pos, None, True)
            if self.track:
                self.fail_at(pos, "any character")
            return (FAIL, pos, None, True)
        if code == 15:  # eps
            return (OK, pos, None, False)
        if code == 16:  # start
            if pos == 0:
                return (OK, pos, None, False)
            if self.track:
                self.fail_at(pos, "the start of the text")
            return (FAIL, pos, None, False)
        if code == 17:  # end
            if pos >= n:
                self.touch(fr.OTHER_RECORD)
                return (OK, pos, None, True)
            if self.track:
                self.fail_at(pos, "the end of the text")
            return (FAIL, pos, None, False)
        if self.first is None:  # rest
            self.first = fr.rest_record(pos, n)
        return (OK, n, None, True)

    def sequence(self, kids: tuple[int, ...], pos: int) -> Res:
        ops, t, stable, nops = self.ops, self.t, self.stable, self.nops
        p = pos
        nodes = None
        touched = False
        for c in kids:
            code, arg, _k = ops[c]
            if code == 0:
                if t.startswith(arg, p):
                    p += len(arg)
                    continue
                r = self.ev(c, p)
            elif code < SIMPLE:
                key = p * nops + c
                r = stable.get(key) or self.miss(c, p, key)
            else:
                r = self.simple(code, p)
            if r[3]:
                touched = True
            s = r[0]
            if s == FAIL:
                if touched:
                    self.bad = True
                return (FAIL, pos, None, touched)
            if r[2] is not None:
                nodes = _cat(nodes, r[2])
            if s == MORE:
                return (MORE, r[1], nodes, touched)
            p = r[1]
        return (OK, p, nodes, touched)

    def choice(self, kids: tuple[int, ...], pos: int) -> Res:
        ops, stable, base = self.ops, self.stable, pos * self.nops
        touched = False
        for c in kids:
            code = ops[c][0]
            if 0 < code < SIMPLE:
                r = stable.get(base + c) or self.miss(c, pos, base + c)
            else:
                r = self.ev(c, pos)
            if r[3]:
                touched = True
            if r[0] != FAIL:
                return (r[0], r[1], r[2], touched) if touched else r
        if touched:
            self.bad = True
        return (FAIL, pos, None, touched)

    def repeat(self, key: int, arg: tuple[int, int | None], child: int, pos: int) -> Res:
        lo, hi = arg
        saved = self.resume.get(key)
        if saved is not None:
            count, p, nodes = saved
        else:
            count, p, nodes = 0, pos, None
        n = self.n
        partial = self.partial
        touched = False
        empty = False
        progress = None
        result: Res | None = None
        memoised = 0 < self.ops[child][0] < SIMPLE
        stable, nops = self.stable, self.nops
        while hi is None or count < hi:
            if p >= n and partial:
                self.touch(fr.OTHER_RECORD)
                touched = True
                break
            if memoised:
                r = stable.get(p * nops + child) or self.miss(child, p, p * nops + child)
            else:
                r = self.ev(child, p)
            if r[3]:
                touched = True
            s = r[0]
            if s == OK:
                if r[1] == p:
                    if r[3]:
                        self.bad = True  # the item might not match nothing on more text
                    empty = True
                    break
                nodes = _cat(nodes, r[2])
                p = r[1]
                count += 1
                if not touched:
                    progress = (count, p, nodes)
                continue
            if s == MORE:
                result = (MORE, r[1], _cat(nodes, r[2]), True)
            break
        if progress is not None and touched:
            kept = progress[2]
            if type(kept) is tuple:  # listed once, read by every longer text
                progress = (progress[0], progress[1], _Run(flatten(kept)))
            self.resume[key] = progress
        if result is not None:
            return result
        if count < lo and not empty:
            if p >= n and partial:
                return (MORE, p, nodes, True)
            if touched:
                self.bad = True
            return (FAIL, pos, None, touched)
        return (OK, p, nodes, touched)

    def chars(self, key: int, arg: Any, pos: int) -> Res:
        rx, lo, hi, desc = arg
        begin = pos
        if hi is None:
            saved = self.resume.get(key)
            if saved is not None:
                begin = saved
        k = rx.match(self.t, begin).end()
        n = self.n
        count = k - pos
        if hi is not None and count > hi:  # a maximum too large for the pattern
            k, count = pos + hi, hi
        touched = k >= n and (hi is None or count < hi)
        if touched:
            if hi is None:
                self.resume[key] = k
                if self.first is None and count >= lo:
                    self.first = fr.run_record(pos, k, rx)
            self.touch(fr.OTHER_RECORD)
        if count >= lo:
            if self.track and k < n and (hi is None or count < hi) and desc != "whitespace":
                self.fail_at(k, desc)  # the run could have gone on
            return (OK, k, None, touched)
        if touched and self.partial:
            return (MORE, k, None, True)
        if self.track:
            self.fail_at(k, desc)
        return (FAIL, pos, None, touched)

    def until(self, key: int, arg: tuple[Any, ...], pos: int) -> Res:
        delims, maxlen, firsts, firsts_rx = arg
        t, n = self.t, self.n
        scan_from = self.resume.get(key, pos)
        best = -1
        for d in delims:
            i = t.find(d, scan_from)
            if i != -1 and (best == -1 or i < best):
                best = i
        held = -1  # where a delimiter may start but the text stops inside it
        tail_from = max(scan_from, n - maxlen + 1)
        for d in delims:
            i = t.find(d[0], tail_from)
            while i != -1 and (held == -1 or i < held) and (best == -1 or i < best):
                if len(d) > n - i and d.startswith(t[i:]):
                    held = i
                    break
                i = t.find(d[0], i + 1)
        if best == -1:
            self.resume[key] = max(scan_from, n - maxlen + 1)
        if held != -1:
            if self.first is None:
                self.first = (fr.held_record(held, n, delims, t[held:]) if self.partial
                              else fr.OTHER_RECORD)
            if self.partial:
                return (MORE, held, None, True)
            return (OK, best if best != -1 else n, None, True)
        if best != -1:
            return (OK, best, None, False)
        if self.first is None:
            self.first = fr.until_record(pos, n, delims, firsts, firsts_rx)
        return (OK, n, None, True)

    def string_content(self, key: int, pos: int) -> Res:
        t, n = self.t, self.n
        k = JSON_STRING_RUN.match(t, self.resume.get(key, pos)).end()  # type: ignore[union-attr]
        if k < n:
            c = t[k]
            if c == '"':
                return (OK, k, None, False)
            if c == "\\" and PARTIAL_ESCAPE.fullmatch(t, k):
                self.resume[key] = k
                self.touch(fr.OTHER_RECORD)
                if self.partial:
                    return (MORE, k, None, True)
                if self.track:
                    self.fail_at(n, "the rest of an escape sequence")
                return (FAIL, pos, None, True)
            if self.track:
                self.fail_at(k, "a JSON string character or '\"'")
            return (FAIL, pos, None, False)
        self.resume[key] = k
        if self.partial:
            if self.first is None:
                self.first = fr.string_record(pos, k)
            return (MORE, k, None, True)
        self.touch(fr.OTHER_RECORD)
        if self.track:
            self.fail_at(k, "a JSON string character or '\"'")
        return (FAIL, pos, None, True)

    def tag(self, name: str, child: int, pos: int) -> Res:
        r = self.ev(child, pos)
        if r[0] == FAIL:
            return r
        node = AstNode._make(name, pos, r[1], self.t[pos : r[1]], flatten(r[2]), r[0] == MORE)
        return (r[0], r[1], node, r[3])

    def lookahead(self, code: int, child: int, pos: int) -> Res:
        r = self.ev(child, pos)
        s, touched = r[0], r[3]
        if touched:
            self.bad = True
        if code == 11:  # peek
            return (s, pos, None, touched)
        # negate
        if s == MORE or (s == OK and touched and self.partial):
            return (MORE, pos, None, True)
        if s == OK:
            if self.track:
                self.fail_at(pos, "something else")
            return (FAIL, pos, None, touched)
        return (OK, pos, None, touched)
