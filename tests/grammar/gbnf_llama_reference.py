"""A line-by-line Python port of llama.cpp's GBNF parser, left-recursion check and matcher.

Used only as a test oracle: it builds llama.cpp's flat rules (with its generated rules
for groups and repetitions) and runs ``llama_grammar_detect_left_recursion`` on them, so
the parser's verdicts can be compared with llama.cpp's on random grammars; and it feeds
text one code point at a time through llama.cpp's stacks (``llama_grammar_advance_stack``,
``llama_grammar_match_char``, ``llama_grammar_accept``), so the engine's verdicts can be
compared too.  The
repetition-size thresholds (2000) are left out: gbnfkit diverges there on purpose.
"""

from __future__ import annotations

CHAR, CHAR_NOT, CHAR_ALT, RNG_UPPER, ANY, REF, ALT, END = range(8)
Element = tuple[int, int]


class LlamaError(Exception):
    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class LlamaCrashes(ValueError):
    """llama.cpp builds this grammar's rules, then crashes: nothing to compare with."""


def _word(c: str) -> bool:
    return ("a" <= c <= "z") or ("A" <= c <= "Z") or ("0" <= c <= "9") or c == "-"


class _Parser:
    def __init__(self, text: str) -> None:
        self.s = text + "\0"  # the C string terminator
        self.symbol_ids: dict[str, int] = {}
        self.rules: dict[int, list[Element]] = {}

    def symbol(self, name: str) -> int:
        return self.symbol_ids.setdefault(name, len(self.symbol_ids))

    def generate(self, base: str) -> int:
        sid = len(self.symbol_ids)
        self.symbol_ids[f"{base}_{sid}"] = sid
        return sid

    def space(self, i: int, newline_ok: bool) -> int:
        s = self.s
        while s[i] in " \t#" or (newline_ok and s[i] in "\r\n"):
            if s[i] == "#":
                while s[i] not in "\0\r\n":
                    i += 1
            else:
                i += 1
        return i

    def name(self, i: int) -> int:
        j = i
        while _word(self.s[j]):
            j += 1
        if j == i:
            raise LlamaError("syntax", "expecting name")
        return j

    def hex(self, i: int, size: int) -> tuple[int, int]:
        value = 0
        end = i + size
        while i < end and self.s[i] != "\0":
            c = self.s[i]
            if c in "0123456789abcdefABCDEF":
                value = value * 16 + int(c, 16)
            else:
                break
            i += 1
        if i != end:
            raise LlamaError("syntax", "expecting hex chars")
        return value, i

    def char(self, i: int) -> tuple[int, int]:
        s = self.s
        if s[i] == "\\":
            e = s[i + 1]
            if e in "xuU":
                return self.hex(i + 2, {"x": 2, "u": 4, "U": 8}[e])
            if e in "trn":
                return ord({"t": "\t", "r": "\r", "n": "\n"}[e]), i + 2
            if e in '\\"[]-':
                return ord(e), i + 2
            raise LlamaError("syntax", "unknown escape")
        if s[i] != "\0":
            return ord(s[i]), i + 1
        raise LlamaError("syntax", "unexpected end of input")

    def sequence(self, i: int, rule_name: str, rule: list[Element], nested: bool) -> int:
        s = self.s
        last = len(rule)

        def repeat(lo: int, hi: int) -> None:
            if last == len(rule):
                raise LlamaError("syntax", "expecting preceding item")
            prev = rule[last:]
            if lo == 0:
                del rule[last:]
            else:
                for _ in range(1, lo):
                    rule.extend(prev)
            last_rec = 0
            n_opt = 1 if hi < 0 else hi - lo
            for k in range(n_opt):
                rec = list(prev)
                rec_id = self.generate(rule_name)
                if k > 0 or hi < 0:
                    rec.append((REF, rec_id if hi < 0 else last_rec))
                rec.append((ALT, 0))
                rec.append((END, 0))
                self.rules[rec_id] = rec
                last_rec = rec_id
            if n_opt > 0:
                rule.append((REF, last_rec))

        while s[i] != "\0":
            c = s[i]
            if c == '"':
                i += 1
                last = len(rule)
                while s[i] != '"':
                    if s[i] == "\0":
                        raise LlamaError("syntax", "unexpected end of input")
                    cp, i = self.char(i)
                    rule.append((CHAR, cp))
                i = self.space(i + 1, nested)
            elif c == "[":
                i += 1
                start_type = CHAR
                if s[i] == "^":
                    i += 1
                    start_type = CHAR_NOT
                last = len(rule)
                while s[i] != "]":
                    if s[i] == "\0":
                        raise LlamaError("syntax", "unexpected end of input")
                    cp, i = self.char(i)
                    rule.append((CHAR_ALT if last < len(rule) else start_type, cp))
                    if s[i] == "-" and s[i + 1] != "]":
                        if s[i + 1] == "\0":
                            raise LlamaError("syntax", "unexpected end of input")
                        cp, i = self.char(i + 1)
                        rule.append((RNG_UPPER, cp))
                i = self.space(i + 1, nested)
            elif _word(c):
                end = self.name(i)
                ref = self.symbol(s[i:end])
                i = self.space(end, nested)
                last = len(rule)
                rule.append((REF, ref))
            elif c == "(":
                i = self.space(i + 1, True)
                sub = self.generate(rule_name)
                i = self.alternates(i, rule_name, sub, True)
                last = len(rule)
                rule.append((REF, sub))
                if s[i] != ")":
                    raise LlamaError("syntax", "expecting ')'")
                i = self.space(i + 1, nested)
            elif c == ".":
                last = len(rule)
                rule.append((ANY, 0))
                i = self.space(i + 1, nested)
            elif c in "*+?":
                i = self.space(i + 1, nested)
                repeat(*{"*": (0, -1), "+": (1, -1), "?": (0, 1)}[c])
            elif c == "{":
                i = self.space(i + 1, nested)
                if not s[i].isdigit() or not s[i].isascii():
                    raise LlamaError("syntax", "expecting an int")
                j = i
                while "0" <= s[j] <= "9":
                    j += 1
                lo = int(s[i:j])
                i = self.space(j, nested)
                hi = -1
                if s[i] == "}":
                    hi = lo
                    i = self.space(i + 1, nested)
                elif s[i] == ",":
                    i = self.space(i + 1, nested)
                    if "0" <= s[i] <= "9":
                        j = i
                        while "0" <= s[j] <= "9":
                            j += 1
                        hi = int(s[i:j])
                        i = self.space(j, nested)
                    if s[i] != "}":
                        raise LlamaError("syntax", "expecting '}'")
                    i = self.space(i + 1, nested)
                else:
                    raise LlamaError("syntax", "expecting ','")
                repeat(lo, hi)
            else:
                break
        return i

    def alternates(self, i: int, rule_name: str, rule_id: int, nested: bool) -> int:
        rule: list[Element] = []
        i = self.sequence(i, rule_name, rule, nested)
        while self.s[i] == "|":
            rule.append((ALT, 0))
            i = self.space(i + 1, True)
            i = self.sequence(i, rule_name, rule, nested)
        rule.append((END, 0))
        self.rules[rule_id] = rule
        return i

    def rule(self, i: int) -> int:
        end = self.name(i)
        j = self.space(end, False)
        name = self.s[i:end]
        rule_id = self.symbol(name)
        if self.s[j : j + 3] != "::=":
            raise LlamaError("syntax", "expecting ::=")
        j = self.space(j + 3, True)
        j = self.alternates(j, name, rule_id, False)
        if self.s[j] == "\r":
            j += 2 if self.s[j + 1] == "\n" else 1
        elif self.s[j] == "\n":
            j += 1
        elif self.s[j] != "\0":
            raise LlamaError("syntax", "expecting newline or end")
        return self.space(j, True)

    def parse(self) -> None:
        i = self.space(0, True)
        while self.s[i] != "\0":
            i = self.rule(i)
        # llama.cpp checks its vector of rules, as long as the highest rule id defined:
        # a hole in it, or a reference to a symbol without a rule, is undefined; a symbol
        # only the discarded first definition of a rule referred to may stay undefined
        size = self.size()
        for rule_id in range(size):
            if rule_id not in self.rules:
                raise LlamaError("undefined_rule", "Undefined rule")
            for kind, value in self.rules[rule_id]:
                if kind == REF and value not in self.rules:
                    raise LlamaError("undefined_rule", "Undefined rule identifier")

    def size(self) -> int:
        """The length of llama.cpp's vector of rules."""
        return max(self.rules, default=-1) + 1


def _end_of_sequence(element: Element) -> bool:
    return element[0] in (END, ALT)


def _detect(
    rules: list[list[Element]],
    index: int,
    visited: list[bool],
    in_progress: list[bool],
    may_be_empty: list[bool],
) -> bool:
    if in_progress[index]:
        return True
    in_progress[index] = True
    rule = rules[index]
    at_start = True
    for element in rule:
        if _end_of_sequence(element):
            if at_start:
                may_be_empty[index] = True
                break
            at_start = True
        else:
            at_start = False
    recurse = True
    for element in rule:
        if element[0] == REF and recurse:
            if _detect(rules, element[1], visited, in_progress, may_be_empty):
                return True
            if not may_be_empty[element[1]]:
                recurse = False
        elif _end_of_sequence(element):
            recurse = True
        else:
            recurse = False
    in_progress[index] = False
    visited[index] = True
    return False


def llama_verdict(text: str) -> str | None:
    """``None`` if llama.cpp builds the grammar, else the corpus' ``error_kind``."""
    if "\0" in text:
        raise ValueError("NUL ends a C string; not comparable")
    parser = _Parser(text)
    try:
        parser.parse()
    except LlamaError as err:
        return err.kind
    if not parser.rules:
        return "empty_grammar"
    if "root" not in parser.symbol_ids:
        return "missing_root"
    if parser.symbol_ids["root"] not in parser.rules:
        # only a discarded definition refers to root: llama.cpp reads past its rules
        raise LlamaCrashes("llama.cpp reads past its rules on this grammar")
    rules = [parser.rules[i] for i in range(parser.size())]
    n = len(rules)
    visited, in_progress, may_be_empty = [False] * n, [False] * n, [False] * n
    for index in range(n):
        if not visited[index] and _detect(rules, index, visited, in_progress, may_be_empty):
            return "left_recursion"
    return None


# -- matching: llama.cpp's pushdown stacks -----------------------------------------------

Position = tuple[int, int]  # (rule id, element index)
Stack = tuple[Position, ...]


class TooManyStacks(Exception):
    """The port gave up: more live stacks than the caller's bound (an ambiguous grammar)."""


def _ends(rules: list[list[Element]], position: Position) -> bool:
    return _end_of_sequence(rules[position[0]][position[1]])


def _advance(rules: list[list[Element]], stack: Stack, out: list[Stack], bound: int) -> None:
    """``llama_grammar_advance_stack``: expand rule references at the top until a
    character element or the empty stack, each new stack once (its ``seen`` set)."""
    todo = [stack]
    seen: set[Stack] = set()
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        if current and rules[current[-1][0]][current[-1][1]][0] == REF:
            rule, index = current[-1]
            sub = rules[rule][index][1]
            j = 0
            expanded: list[Stack] = []
            while True:
                new = list(current[:-1])
                if not _ends(rules, (rule, index + 1)):
                    new.append((rule, index + 1))
                if not _ends(rules, (sub, j)):
                    new.append((sub, j))
                expanded.append(tuple(new))
                while not _ends(rules, (sub, j)):
                    j += 1
                if rules[sub][j][0] != ALT:
                    break
                j += 1
            todo.extend(reversed(expanded))
        elif current not in out:
            out.append(current)
            if len(out) > bound:
                raise TooManyStacks


def _match_char(rules: list[list[Element]], position: Position, cp: int) -> tuple[bool, Position]:
    rule_id, i = position
    rule = rules[rule_id]
    positive = rule[i][0] in (CHAR, ANY)
    found = False
    while True:
        if rule[i + 1][0] == RNG_UPPER:
            found = found or rule[i][1] <= cp <= rule[i + 1][1]
            i += 2
        elif rule[i][0] == ANY:
            found = True
            i += 1
        else:
            found = found or rule[i][1] == cp
            i += 1
        if rule[i][0] != CHAR_ALT:
            return found == positive, (rule_id, i)


def llama_match(text: str, subject: str, bound: int = 2000) -> tuple[str, int | None]:
    """llama.cpp's verdict on ``subject`` for the grammar ``text`` (which it must build):
    ``("accept" | "prefix", None)`` or ``("reject", index of the refused code point)``,
    as the conformance corpus records them. Raises :class:`TooManyStacks` past ``bound``
    live stacks."""
    parser = _Parser(text)
    parser.parse()
    rules = [parser.rules[i] for i in range(parser.size())]
    root = parser.symbol_ids["root"]
    stacks: list[Stack] = []
    j = 0
    while True:  # llama_grammar_init_impl: one stack per alternative of root
        _advance(rules, () if _ends(rules, (root, j)) else ((root, j),), stacks, bound)
        while not _ends(rules, (root, j)):
            j += 1
        if rules[root][j][0] != ALT:
            break
        j += 1
    for k, character in enumerate(subject):
        following: list[Stack] = []
        for stack in stacks:
            if not stack:
                continue
            ok, position = _match_char(rules, stack[-1], ord(character))
            if ok:
                top = () if _ends(rules, position) else (position,)
                _advance(rules, stack[:-1] + top, following, bound)
        stacks = following
        if not stacks:
            return "reject", k
    return ("accept" if () in stacks else "prefix"), None
