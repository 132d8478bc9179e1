"""The grammar of ``until_one_of(delimiters)``: the texts that contain no delimiter.

The rules are the states of the delimiters' Aho-Corasick automaton: a state is the
longest suffix of the text so far that is a proper prefix of some delimiter; a character
that would complete a delimiter has no transition.  Every state may end the text.
"""

from __future__ import annotations

from gbnfkit.grammar._ir import Alt, CharClass, Expr, Literal, Repeat, RuleRef, Seq

__all__ = ["until_rules"]


def until_rules(name: str, delimiters: tuple[str, ...]) -> dict[str, Expr]:
    """Rules ``name``, ``name-1``, ... for the texts without any of ``delimiters``."""
    prefixes: list[str] = [""]
    for d in delimiters:
        for i in range(1, len(d)):
            if d[:i] not in prefixes:
                prefixes.append(d[:i])
    index = {p: i for i, p in enumerate(prefixes)}
    alphabet = sorted({c for d in delimiters for c in d})

    def step(state: str, c: str) -> str | None:
        w = state + c
        if any(w.endswith(d) for d in delimiters):
            return None
        for i in range(len(w) + 1):
            if w[i:] in index:
                return w[i:]
        return ""  # unreachable: "" is a prefix

    def rule_name(state: str) -> str:
        i = index[state]
        return name if i == 0 else f"{name}-{i}"

    rules: dict[str, Expr] = {}
    for state in prefixes:
        options: list[Expr] = []
        special: list[int] = []  # characters that do not just go back to the start state
        for c in alphabet:
            target = step(state, c)
            if target == "":
                continue
            special.append(ord(c))
            if target is not None:
                options.append(Seq((Literal(c), RuleRef(rule_name(target)))))
        others = CharClass.of([(cp, cp) for cp in special], negated=True)
        if state == "":
            tail = Alt((*options, Literal(""))) if options else Literal("")
            rules[rule_name(state)] = Seq((Repeat(others, 0, None), tail))
        else:
            options.append(Seq((others, RuleRef(name))))
            options.append(Literal(""))
            rules[rule_name(state)] = Alt(tuple(options))
    return rules
