"""Checks every grammar passes, whatever front end built its IR.

In llama.cpp's order: the grammar has rules, every referenced rule is defined, the start
rule exists, and no rule is left-recursive.  Left recursion is refused in two ways:

1. as llama.cpp's ``llama_grammar_detect_left_recursion`` does (see
   :mod:`gbnfkit.grammar._llama_leftrec`; the GBNF parser runs the exact version on its
   raw parse tree, which still knows where the parentheses were);
2. additionally, with true nullability, any cycle of rules reachable at the left edge in
   which some reference has a continuation after it: a pushdown matcher would push that
   continuation forever.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Collection, Mapping

from gbnfkit._errors import GrammarError
from gbnfkit.grammar._ir import (
    MAX_NESTING,
    Alt,
    CharClass,
    Expr,
    GrammarIR,
    Literal,
    Repeat,
    RuleRef,
    Seq,
    too_deep,
)
from gbnfkit.grammar._llama_leftrec import llama_left_recursion

__all__ = [
    "check_grammar",
    "check_llama_errors",
    "check_parsed_grammar",
    "check_reference_complete_grammar",
    "left_recursion_error",
    "nullable_rules",
    "undefined_message",
]

_FIX_HINT = (
    'rewrite the recursion as a repetition, e.g. `expr ::= term ("+" term)*` '
    'instead of `expr ::= expr "+" term | term`'
)


def check_grammar(ir: GrammarIR, source: str | None = None) -> None:
    """Raise :class:`GrammarError` if ``ir`` cannot be used as a grammar.

    ``source`` is the grammar text, when there is one, so errors can show it.
    """
    for name, expr in ir.rules.items():
        if too_deep(expr):
            raise GrammarError(
                f"rule {name!r} nests expressions more than {MAX_NESTING} levels deep; "
                "split deeply nested groups into named rules"
            )
    _check(ir, source, None)


def check_parsed_grammar(ir: GrammarIR, source: str, raw: Mapping[str, Expr]) -> None:
    """:func:`check_grammar` for the GBNF parser, which has checked the repetition bounds
    and references already (refusing them with its own messages); ``raw`` is its raw
    tree, on which llama.cpp's exact left-recursion check then runs (see
    :mod:`gbnfkit.grammar._llama_leftrec`)."""
    _check(ir, source, raw)


def check_llama_errors(ir: GrammarIR, source: str, raw: Mapping[str, Expr]) -> None:
    """Only the errors llama.cpp finds after its parse, in its order: a missing start
    rule, then its left recursion (exact, on the parser's ``raw`` tree); for a grammar
    with an error of gbnfkit's own, to raise llama.cpp's instead where it has one."""
    if ir.root not in ir.rules:
        raise _missing_root(ir, source)
    cycle = llama_left_recursion(raw, exact=True)
    if cycle is not None:
        raise left_recursion_error(ir, source, cycle)


def check_reference_complete_grammar(
    ir: GrammarIR, source: str, raw: Callable[[], Mapping[str, Expr]]
) -> None:
    """:func:`check_parsed_grammar` for an IR built without parsing ``source``, known
    to have no undefined rule and no repetition bound that the parser refuses: ``raw()``
    parses the raw tree, only when llama.cpp's exact left-recursion check may fire."""
    _check(ir, source, raw)


def _check(
    ir: GrammarIR,
    source: str | None,
    raw: Mapping[str, Expr] | Callable[[], Mapping[str, Expr]] | None,
) -> None:
    if not ir.rules:
        raise GrammarError(
            "empty grammar: it defines no rules; write at least `root ::= ...`",
            source=source,
        )
    if raw is not None:
        _check_start_and_recursion(ir, source, raw)
        return
    _check_repeats(ir, source)
    missing: list[str] = []
    first_user: dict[str, str] = {}
    for name, body in ir.rules.items():
        for ref in ir.referenced(body):
            if ref not in ir.rules and ref not in first_user:
                missing.append(ref)
                first_user[ref] = name
    if missing:
        user = first_user[missing[0]]
        line, column = ir.positions.get(user, (None, None))
        raise GrammarError(
            undefined_message(missing, ir.rules) + f" (used in rule {user!r})",
            line=line,
            column=column,
            source=source,
            rules=missing,
        )
    _check_start_and_recursion(ir, source, None)


def _check_start_and_recursion(
    ir: GrammarIR,
    source: str | None,
    raw: Mapping[str, Expr] | Callable[[], Mapping[str, Expr]] | None,
) -> None:
    if ir.root not in ir.rules:
        raise _missing_root(ir, source)
    users, stars = _scan(ir.rules)
    nullable = _nullable_rules(ir.rules, users)
    edges: dict[str, list[tuple[str, bool]]] = {
        name: _left_refs(body, False, nullable) for name, body in ir.rules.items()
    }
    if not _has_cycle(edges):
        # The usual grammar.  llama.cpp's reading of canonical IR (``exact=False``)
        # follows the first item of a sequence only, so its edges between named rules
        # are left edges: it finds no cycle either.  Every component is one rule
        # without an edge to itself: no pushdown loop, and of _may_loop_for_llama only
        # the repeated nullable items are left to look at.
        if raw is not None and _nullable_star(stars, nullable):
            cycle = llama_left_recursion(raw() if callable(raw) else raw, exact=True)
            if cycle is not None:
                raise left_recursion_error(ir, source, cycle)
        return
    cycle = llama_left_recursion(ir.rules, exact=False)
    if cycle is not None:
        raise left_recursion_error(ir, source, cycle)
    component = _components(edges)
    loop = _pushdown_left_recursion(edges, component)
    if loop is not None:
        names = loop
        raise GrammarError(
            f"left recursion: {' -> '.join(names)} can come back to {names[0]!r} before "
            f"consuming any character (the items before the recursion may match the empty "
            f"string), so matching would never end; {_FIX_HINT}",
            line=ir.positions.get(names[0], (None, None))[0],
            column=ir.positions.get(names[0], (None, None))[1],
            source=source,
            rules=names[:-1],
        )
    if raw is not None and _may_loop_for_llama(stars, edges, component, nullable):
        cycle = llama_left_recursion(raw() if callable(raw) else raw, exact=True)
        if cycle is not None:
            raise left_recursion_error(ir, source, cycle)


def _may_loop_for_llama(
    stars: list[Expr],
    edges: Mapping[str, list[tuple[str, bool]]],
    component: Mapping[str, int],
    nullable: Collection[str],
) -> bool:
    """False only if llama.cpp's exact left-recursion check cannot find a cycle.

    That check follows a reference past the elements before it only when they may be
    empty (an empty alternative), which implies they are nullable; so each of its steps
    from rule to rule is a left edge of ``edges``.  A cycle of its generated rules alone
    needs a ``*``-like repetition (``x{m,}``) of something nullable: only those loop back.
    """
    if any(len(out) > 1 for out in _members(component).values()):
        return True
    if any(target == name for name, out in edges.items() for target, _ in out):
        return True
    return _nullable_star(stars, nullable)


def _nullable_star(stars: list[Expr], nullable: Collection[str]) -> bool:
    """Whether some item repeated without an upper bound (``stars``) may be empty."""
    return any(_nullable(item, nullable) for item in stars)


def _has_cycle(edges: Mapping[str, list[tuple[str, bool]]]) -> bool:
    """Whether the graph of left edges has a cycle (a rule's edge to itself included;
    a target without edges of its own is no part of one): rules that no rule left
    refers to are taken away, with their edges, until none is left (no cycle) or each
    left has such a reference (Kahn's order)."""
    indegree: dict[str, int] = dict.fromkeys(edges, 0)
    for out in edges.values():
        for target, _ in out:
            if target in indegree:
                indegree[target] += 1
    free = [name for name, count in indegree.items() if count == 0]
    removed = 0
    while free:
        name = free.pop()
        removed += 1
        for target, _ in edges[name]:
            if target in indegree:
                count = indegree[target] - 1
                indegree[target] = count
                if count == 0:
                    free.append(target)
    return removed < len(indegree)


def _members(component: Mapping[str, int]) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    for name, index in component.items():
        out.setdefault(index, []).append(name)
    return out


def undefined_message(missing: list[str], defined: Collection[str]) -> str:
    """'undefined rule 'x'; did you mean 'y'?' for the names in ``missing``."""
    shown = ", ".join(repr(name) for name in missing)
    plural = "s" if len(missing) > 1 else ""
    message = f"undefined rule{plural} {shown}"
    close = difflib.get_close_matches(missing[0], list(defined), n=1, cutoff=0.6)
    if close:
        message += f"; did you mean {close[0]!r}?"
    else:
        message += f"; define it with `{missing[0]} ::= ...`"
    return message


def _check_repeats(ir: GrammarIR, source: str | None) -> None:
    for name, body in ir.rules.items():
        for expr in _walk(body):
            if isinstance(expr, Repeat) and (
                expr.min < 0 or (expr.max is not None and expr.max < expr.min)
            ):
                line, column = ir.positions.get(name, (None, None))
                raise GrammarError(
                    f"rule {name!r}: invalid repetition bounds {{{expr.min},{expr.max}}}",
                    line=line,
                    column=column,
                    source=source,
                    rules=(name,),
                )


def _walk(expr: Expr) -> list[Expr]:
    """Every node of ``expr`` (a list: cheaper to build than to yield one by one)."""
    out: list[Expr] = []
    stack = [expr]
    while stack:
        e = stack.pop()
        out.append(e)
        if isinstance(e, Seq):
            stack.extend(e.items)
        elif isinstance(e, Alt):
            stack.extend(e.options)
        elif isinstance(e, Repeat):
            stack.append(e.item)
    return out


def _missing_root(ir: GrammarIR, source: str | None) -> GrammarError:
    root = ir.root
    near = [name for name in ir.rules if name.lower() == root.lower()]
    if not near:
        near = difflib.get_close_matches(root, list(ir.rules), n=1, cutoff=0.6)
    message = f"no rule named {root!r}: the grammar starts at rule {root!r}"
    if near:
        message += f"; did you mean {near[0]!r}? (rule names are case-sensitive)"
        line, column = ir.positions.get(near[0], (None, None))
    else:
        message += f"; add `{root} ::= ...` or choose another start rule"
        line, column = None, None
    return GrammarError(message, line=line, column=column, source=source, rules=(root,))


def left_recursion_error(ir: GrammarIR, source: str | None, cycle: list[str]) -> GrammarError:
    """``cycle``: named rules of the llama.cpp cycle, or one name for a repetition loop."""
    first = cycle[0]
    line, column = ir.positions.get(first, (None, None))
    if len(cycle) == 1:
        message = (
            f"left recursion in rule {first!r}: a repetition ('*', '+', '{{m,}}') repeats "
            "an item that can match the empty string (llama.cpp refuses this as left "
            "recursion); make the repeated item non-empty, e.g. `x+` instead of `(x?)+`, "
            "or move the empty alternative out of the repeated rule"
        )
        return GrammarError(message, line=line, column=column, source=source, rules=(first,))
    message = (
        f"left recursion: {' -> '.join(cycle)} reaches {first!r} again before consuming "
        f"any character; {_FIX_HINT}"
    )
    return GrammarError(message, line=line, column=column, source=source, rules=cycle[:-1])


def nullable_rules(rules: Mapping[str, Expr]) -> set[str]:
    """Names of the rules that can match the empty string (a worklist fixpoint)."""
    return _nullable_rules(rules, _scan(rules)[0])


def _nullable_rules(rules: Mapping[str, Expr], users: Mapping[str, list[str]]) -> set[str]:
    """``users``: the rules referring to each rule (see :func:`_scan`)."""
    nullable: set[str] = set()
    pending = list(rules)
    while pending:
        name = pending.pop()
        if name not in nullable and _nullable(rules[name], nullable):
            nullable.add(name)
            pending.extend(user for user in users.get(name, ()) if user not in nullable)
    return nullable


def _scan(rules: Mapping[str, Expr]) -> tuple[dict[str, list[str]], list[Expr]]:
    """The rules referring to each rule referred to (each once, in rule order), and the
    items repeated without an upper bound (one pass over each rule; exact type tests
    first, the IR's own classes being the usual ones)."""
    users: dict[str, list[str]] = {}
    stars: list[Expr] = []
    stack: list[Expr] = []
    for name, body in rules.items():
        stack.append(body)
        while stack:
            e = stack.pop()
            t = type(e)
            if t is Literal or t is CharClass:
                continue
            if t is RuleRef or isinstance(e, RuleRef):
                # (a rule's references are met one after another: it is the last user
                # of a rule it referred to already)
                found = users.get(e.name)  # type: ignore[union-attr]
                if found is None:
                    users[e.name] = [name]  # type: ignore[union-attr]
                elif found[-1] != name:
                    found.append(name)
            elif t is Seq:
                stack.extend(e.items)  # type: ignore[union-attr]
            elif t is Alt:
                stack.extend(e.options)  # type: ignore[union-attr]
            elif isinstance(e, Repeat):
                if e.max is None:
                    stars.append(e.item)
                stack.append(e.item)
            elif isinstance(e, Seq):
                stack.extend(e.items)
            elif isinstance(e, Alt):
                stack.extend(e.options)
    return users, stars


def _nullable(expr: Expr, nullable: Collection[str]) -> bool:
    t = type(expr)  # exact type tests first: the IR's own classes are the usual ones
    if t is CharClass:
        return False
    if t is RuleRef:
        return expr.name in nullable  # type: ignore[union-attr]
    if isinstance(expr, Literal):
        return not expr.text
    if isinstance(expr, CharClass):
        return False
    if isinstance(expr, RuleRef):
        return expr.name in nullable
    if isinstance(expr, Seq):
        return all(_nullable(item, nullable) for item in expr.items)
    if isinstance(expr, Alt):
        return any(_nullable(option, nullable) for option in expr.options)
    return expr.min == 0 or expr.max == 0 or _nullable(expr.item, nullable)


def _left_refs(expr: Expr, cont: bool, nullable: Collection[str]) -> list[tuple[str, bool]]:
    """Rules referenced at the left edge of ``expr``; ``True`` if something follows them."""
    if isinstance(expr, RuleRef):
        return [(expr.name, cont)]
    if isinstance(expr, Seq):
        out: list[tuple[str, bool]] = []
        last = len(expr.items) - 1
        for index, item in enumerate(expr.items):
            t = type(item)  # the usual items first, without a call
            if t is CharClass:
                break
            if t is Literal:
                if item.text:  # type: ignore[union-attr]
                    break
                continue
            if t is RuleRef:
                out.append((item.name, cont or index < last))  # type: ignore[union-attr]
                if item.name not in nullable:  # type: ignore[union-attr]
                    break
                continue
            out.extend(_left_refs(item, cont or index < last, nullable))
            if not _nullable(item, nullable):
                break
        return out
    if isinstance(expr, Alt):
        return [ref for option in expr.options for ref in _left_refs(option, cont, nullable)]
    if isinstance(expr, Repeat):
        if expr.max == 0:
            return []
        again = expr.max is None or expr.max > 1
        return _left_refs(expr.item, cont or again, nullable)
    return []


def _pushdown_left_recursion(
    edges: Mapping[str, list[tuple[str, bool]]], component: Mapping[str, int]
) -> list[str] | None:
    """A left-recursive cycle in which some reference leaves a continuation, or None;
    ``edges``: each rule's left references (:func:`_left_refs`), ``component``: their
    strongly connected components."""
    for start, out in edges.items():
        for target, cont in out:
            if cont and component.get(target) == component[start]:
                path = _path(edges, target, start)
                if path is not None:
                    return [start, *path]
    return None


def _components(edges: Mapping[str, list[tuple[str, bool]]]) -> dict[str, int]:
    """Strongly connected component of every node (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    component: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    for root in edges:
        if root in index:
            continue
        work: list[tuple[str, int]] = [(root, 0)]
        while work:
            node, position = work.pop()
            if position == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            targets = [t for t, _ in edges.get(node, ())]
            for i in range(position, len(targets)):
                target = targets[i]
                if target not in index:
                    work.append((node, i + 1))
                    work.append((target, 0))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                if low[node] == index[node]:
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component[member] = index[node]
                        if member == node:
                            break
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
    return component


def _path(edges: Mapping[str, list[tuple[str, bool]]], src: str, dst: str) -> list[str] | None:
    """Shortest path ``src -> ... -> dst`` along left edges (both ends included)."""
    previous: dict[str, str | None] = {src: None}
    queue = [src]
    for node in queue:
        if node == dst:
            path = [node]
            while (before := previous[path[-1]]) is not None:
                path.append(before)
            return path[::-1]
        for target, _ in edges.get(node, ()):
            if target not in previous:
                previous[target] = node
                queue.append(target)
    return None
