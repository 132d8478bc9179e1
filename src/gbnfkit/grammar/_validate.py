"""That an IR handed in from outside is made of the IR's own types, with values GBNF can
hold: a readable :class:`GrammarError` instead of an ``AttributeError`` or ``TypeError``
from deep inside the checks, the compiler or the printer.

Not compiled (see ``gbnfkit/_native.py``): a compiled function checks its annotated
types itself and would raise ``TypeError`` before this could say what is wrong.
"""

from __future__ import annotations

from collections.abc import Mapping

from gbnfkit._errors import GrammarError
from gbnfkit.grammar._ir import Alt, CharClass, GrammarIR, Literal, Repeat, RuleRef, Seq

__all__ = ["MAX_WRITABLE_CODE_POINT", "validate_ir"]

MAX_WRITABLE_CODE_POINT = 0xFFFFFFFF
"""The largest code point GBNF text can write (``\\UFFFFFFFF``)."""


def _count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _code_point(value: object) -> bool:
    return _count(value) and 0 <= value <= MAX_WRITABLE_CODE_POINT  # type: ignore[operator]


# node type, its field, the field's type (Repeat and CharClass are checked field by field)
_FIELDS: tuple[tuple[type, str, type], ...] = (
    (Literal, "text", str),
    (RuleRef, "name", str),
    (Seq, "items", tuple),
    (Alt, "options", tuple),
)


def _problem(node: object) -> str | None:
    """What is wrong with ``node`` itself (not its children), or None."""
    for kind, field, wanted in _FIELDS:
        if isinstance(node, kind):
            value = getattr(node, field)
            if not isinstance(value, wanted):
                return (
                    f"{kind.__name__} {field} must be a {wanted.__name__}, "
                    f"not {type(value).__name__}"
                )
            return None
    if isinstance(node, Repeat):
        if not _count(node.min) or (node.max is not None and not _count(node.max)):
            bounds = f"{node.min!r:.40}, {node.max!r:.40}"
            return f"Repeat bounds must be int (max may be None), not {bounds}"
    elif isinstance(node, CharClass):
        if not isinstance(node.negated, bool):
            return f"CharClass negated must be a bool, not {type(node.negated).__name__}"
        ranges = node.ranges
        if not isinstance(ranges, tuple):
            return f"CharClass ranges must be a tuple, not {type(ranges).__name__}"
        for pair in ranges:
            if not (isinstance(pair, tuple) and len(pair) == 2):
                return f"CharClass ranges must be (low, high) pairs, not {pair!r:.40}"
            if not (_code_point(pair[0]) and _code_point(pair[1])):
                return (
                    f"CharClass range {pair!r:.60} holds something that is not a code point "
                    f"(an int from 0 to 0x{MAX_WRITABLE_CODE_POINT:X}, as GBNF writes them)"
                )
    else:
        return (
            f"{type(node).__name__} is not a grammar expression "
            "(Literal, CharClass, RuleRef, Seq, Alt or Repeat)"
        )
    return None


def validate_ir(ir: object) -> None:
    """Raise :class:`GrammarError` unless ``ir`` is a :class:`GrammarIR` of str rule names
    whose bodies are IR expressions with values of the right types (rule references,
    repetition bounds and left recursion are :func:`check_grammar`'s)."""
    if not isinstance(ir, GrammarIR):
        raise GrammarError(f"expected a GrammarIR, not {type(ir).__name__}")
    if not isinstance(ir.root, str):
        raise GrammarError(f"the start rule name must be a str, not {type(ir.root).__name__}")
    if not isinstance(ir.rules, Mapping):
        raise GrammarError(f"GrammarIR rules must be a mapping, not {type(ir.rules).__name__}")
    for name, body in ir.rules.items():
        if not isinstance(name, str):
            raise GrammarError(f"rule names must be str, not {type(name).__name__} {name!r:.40}")
        stack: list[object] = [body]
        while stack:
            node = stack.pop()
            problem = _problem(node)
            if problem is not None:
                raise GrammarError(f"rule {name!r}: {problem}", rules=(name,))
            if isinstance(node, Seq):
                stack.extend(node.items)
            elif isinstance(node, Alt):
                stack.extend(node.options)
            elif isinstance(node, Repeat):
                stack.append(node.item)
