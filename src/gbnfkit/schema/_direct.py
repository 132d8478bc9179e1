"""The grammar IR of a converted schema, built without parsing its GBNF text again.

The converter composes its rules as GBNF text with the helpers of
:mod:`gbnfkit.schema._gbnf`.  While it runs under a :class:`Recorder`, each helper notes
how it built its result (a :data:`~gbnfkit.schema._gbnf.Note`): a literal's text, a
class's ranges, the parts of a sequence, the options of an alternative, a group.  The IR
of a rule body is then put together from those notes, exactly as the parser would read
the text (``make_seq``/``make_alt`` give the canonical form the parser gives); a piece
written some other way (an f-string such as ``f"{atom}*"``, a constant) is parsed on its
own, once per conversion, by :func:`gbnfkit.grammar._parser.parse_fragment`.  The IR of
the static ``\\u`` spellings of :mod:`gbnfkit.schema._strings` (composed once, under
their own recorder) is built once and shared while ``Limits.max_repetition`` admits
their bounds.

Whenever the pieces might not mean on their own what they mean in the text (a sequence
holding an alternation that ``seq`` did not group, a piece the fragment parser refuses),
or the text might be refused by the parser (a rule nested too deeply, a repetition bound
above ``Limits.max_repetition``, an undefined rule, a body over several lines), or the
notes nest deeper than :data:`MAX_NOTE_DEPTH` (this module is compiled: its recursion
runs on the C stack, so it is bounded here rather than by ``RecursionError``), the
whole text is parsed instead: the result, and every error message, are then those of
:func:`gbnfkit.grammar.parse_gbnf` (the checks that follow are the ones it runs, on the
same IR).  ``bench/schema_compile.py --check`` compares the two on every MaskBench dev
schema, ``tests/schema/test_direct_ir.py`` on a quarter of them and other options.
"""

from __future__ import annotations

import re
from typing import Any

from gbnfkit._limits import DEFAULT_LIMITS, Limits
from gbnfkit.grammar._checks import check_reference_complete_grammar
from gbnfkit.grammar._ir import CharClass, Expr, GrammarIR, Literal, RuleRef
from gbnfkit.grammar._normalize import EMPTY, make_alt, make_seq
from gbnfkit.grammar._parser import _MAX_DEPTH, parse_fragment, parse_gbnf, raw_rules
from gbnfkit.schema._convert import Converter
from gbnfkit.schema._gbnf import ClassNote, Recorder, recording
from gbnfkit.schema._options import SchemaOptions

__all__ = ["MAX_NOTE_DEPTH", "STATIC_MAX_BOUND", "RecordedConversion"]

_NAME = re.compile(r"[a-zA-Z0-9-]+")
# a literal of printable ASCII whose only escapes are \\ and \"
_PLAIN_LITERAL = re.compile(r'"(?:[ !#-\[\]-~]|\\[\\"])*"')
_QUOTE_ESCAPE = re.compile(r'\\([\\"])')
STATIC_MAX_BOUND = 4
"""The largest repetition bound in the static spellings of ``_strings`` (``{4}`` hex
digits; ``tests/schema/test_direct_ir.py`` checks it)."""
MAX_NOTE_DEPTH = _MAX_DEPTH
"""How deep :class:`_Builder` follows notes within notes (the deepest of the MaskBench dev
schemas: 54) before it parses the whole text instead; the parser bounds its own
nesting."""


class _Fallback(Exception):
    """The text has to be parsed as a whole."""


class RecordedConversion:
    """One schema converted while recording how its text was composed."""

    __slots__ = ("_recorder", "_rules", "text")

    def __init__(self, schema: Any, options: SchemaOptions) -> None:
        self._recorder = Recorder()
        with recording(self._recorder):
            conv = Converter(schema, options)
            self.text: str = conv.convert()
            """The GBNF text, as :func:`gbnfkit.json_schema_to_gbnf` returns it."""
        self._rules = conv.table.rules

    def ir(self, limits: Limits = DEFAULT_LIMITS) -> GrammarIR:
        """The checked grammar IR, equal to ``parse_gbnf(self.text, limits=limits)``
        (which raises the same errors)."""
        text = self.text
        try:
            built: GrammarIR | None = _Builder(self._recorder, limits).grammar(self._rules, text)
        except (_Fallback, RecursionError):
            built = None
        if built is None:  # (parsed outside the handler: its errors chain nothing of ours)
            return parse_gbnf(text, limits=limits)
        check_reference_complete_grammar(built, text, lambda: raw_rules(text, limits))
        return built


class _Builder:
    def __init__(self, recorder: Recorder, limits: Limits) -> None:
        self.notes = recorder.notes
        base = recorder.base
        self.base = base.notes if base is not None else None
        # the IR of the static spellings, built by earlier conversions: the same for
        # every conversion whose limits admit their repetition bounds
        self.shared = base.built if base is not None and \
            limits.max_repetition >= STATIC_MAX_BOUND else None
        self.limits = limits
        self.done: dict[str, tuple[Expr, bool]] = {}
        self.refs: set[str] = set()
        self.ref_count = 0  # references met so far (a shared entry must have none)
        self.depth = 0  # calls of expr in progress, at most MAX_NOTE_DEPTH
        self.parsed_texts: list[str] = []  # the pieces parsed on their own, in order

    def grammar(self, rules: dict[str, str], text: str) -> GrammarIR:
        if "\0" in text or text.count("\n") != len(rules):
            raise _Fallback
        order = ["root", *(name for name in rules if name != "root")]
        out: dict[str, Expr] = {}
        for name in order:
            body = rules[name]
            if "(" in body and 3 + 2 * body.count("(") + sum(
                    body.count(c) for c in "*+?{") > _MAX_DEPTH:
                raise _Fallback  # the parser (its bound, _MAX_DEPTH) may refuse it as too deep
            out[name] = self.expr(body)[0]
        if not self.refs.issubset(rules):
            raise _Fallback  # undefined: the parser's message points at the reference
        positions = {name: (line, 1) for line, name in enumerate(order, 1)}
        return GrammarIR(out, "root", positions)

    def expr(self, text: str) -> tuple[Expr, bool]:
        """The canonical IR of ``text`` and whether it is an alternation at its top level."""
        found = self.done.get(text)
        if found is not None:
            return found
        shared = self.shared
        if shared is not None:
            found = shared.get(text)
            if found is not None:
                return found
        depth = self.depth + 1
        if depth > MAX_NOTE_DEPTH:
            raise _Fallback
        self.depth = depth
        note = self.notes.get(text)
        static = False
        if note is None and self.base is not None:
            note = self.base.get(text)
            static = note is not None
            refs_before = self.ref_count
        if note is None:
            if _NAME.fullmatch(text):
                self.refs.add(text)
                self.ref_count += 1
                found = (RuleRef(text), False)
            elif _PLAIN_LITERAL.fullmatch(text):  # a constant such as '"{"' or '"\\""'
                inner = text[1:-1]
                if "\\" in inner:
                    inner = _QUOTE_ESCAPE.sub(r"\1", inner)
                found = (Literal(inner) if inner else EMPTY, False)
            else:
                found = self.parsed(text)
        elif isinstance(note, str):
            found = (Literal(note) if note else EMPTY, False)
        elif isinstance(note, list):
            done = self.done
            found = (make_alt([(done.get(option) or self.expr(option))[0] for option in note]),
                     True)
        elif isinstance(note, ClassNote):
            ranges, negated = note
            if ranges and all(lo <= hi for lo, hi in ranges):
                found = (CharClass.of(ranges, negated), False)
            else:  # the parser refuses it
                found = self.parsed(text)
        elif len(note) == 1:  # a group
            found = (self.expr(note[0])[0], False)
        else:
            items = []
            done = self.done
            for part in note:  # (a part already built is looked up without a call)
                item, top_alt = done.get(part) or self.expr(part)
                if top_alt:  # an ungrouped alternation: the text reads differently
                    found = self.parsed(text)
                    break
                items.append(item)
            else:
                found = (make_seq(items), False)
        self.done[text] = found
        if static and shared is not None and self.ref_count == refs_before:
            shared[text] = found
        self.depth = depth - 1  # (after a _Fallback the builder is dropped)
        return found

    def parsed(self, text: str) -> tuple[Expr, bool]:
        self.parsed_texts.append(text)
        got = parse_fragment(text, self.limits)
        if got is None:
            raise _Fallback
        expr, top_alt, refs = got
        self.refs.update(refs)
        self.ref_count += len(refs)
        return expr, top_alt
