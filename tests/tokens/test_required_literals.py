"""The required strings of a pattern trigger: every match holds one of them."""

from __future__ import annotations

import re
import sys

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from gbnfkit.chat import grammar_for
from gbnfkit.tokens._required_literals import required_literals

GROUPS = ["(%s)", "(?:%s)", "(?:%s|%s)", "(?=%s)", "(?!%s)", "(?i:%s)", "(?>%s)", "(?:%s|)",
          "(?P<g%d>%s)"]  # fmt: skip
ATOMS = ["a", "b", "<", ">", "ab", "<a>", "[ab]", "[^a]", ".", r"\w", "[a<]", r"\b", "$", "^"]


@st.composite
def patterns(draw: st.DrawFn, depth: int = 0) -> str:
    """Patterns over a small alphabet with the constructs the walk reads or gives up on."""
    parts = []
    for _ in range(draw(st.integers(1, 4))):
        if depth < 3 and draw(st.booleans()):
            inner = draw(patterns(depth + 1))
            kind = draw(st.sampled_from(GROUPS))
            if kind == "(?:%s|%s)":
                part = kind % (inner, draw(patterns(depth + 1)))
            elif kind == "(?P<g%d>%s)":
                part = kind % (depth * 100 + len(parts), inner)
            else:
                part = kind % inner
        else:
            part = draw(st.sampled_from(ATOMS))
        part += draw(st.sampled_from(["", "", "*", "+", "?", "{2}", "{0,2}", "{1,3}", "*?",
                                      "+?", "++", "*+"]))  # fmt: skip
        parts.append(part)
    return "".join(parts)


def _compiles(pattern: str) -> re.Pattern[str] | None:
    try:
        return re.compile(pattern)
    except re.error:
        return None


@settings(max_examples=1500, deadline=None)
@example(pattern="(?i:ab)<", text="AB<")  # a case-insensitive group is no requirement
@example(pattern="(?:ab)?<", text="<")  # nor an optional one
@example(pattern="(?:ab|(?=a))<", text="<")  # nor a branch with an alternative without one
@given(pattern=patterns(), text=st.text(alphabet="ab<>A", max_size=14))
def test_every_match_holds_a_required_string(pattern: str, text: str) -> None:
    regex = _compiles(pattern)
    if regex is None:
        return
    need = required_literals(regex)
    if need is None:
        return
    assert need and all(need)
    for match in [regex.fullmatch(text), *regex.finditer(text)]:
        if match is not None:
            assert any(s in match.group() for s in need), (pattern, text, need)


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        (r"[\s\S]*?(<tool_call>)[\s\S]*", ("<tool_call>",)),
        (r"[ \t]*(<\|python_tag\|>|\{[ \t]*\"name\")[\s\S]*", ('"name"', "<|python_tag|>")),
        ("x{2,3}yz", ("yz",)),
        ("(a|)b", ("b",)),
        ("a|b", ("a", "b")),
        *([("(?>abc)d", ("abc",))] if sys.version_info >= (3, 11) else []),  # atomic: 3.11
        # nothing every match holds, or nothing the walk can vouch for
        (r"[\s\S]*", None),
        ("(ab)*", None),
        ("(?i)abc", None),
        ("(?i:abc)", None),
        ("(?=abc)", None),
        ("|".join(f"{i:02}w" for i in range(40)), None),  # too many to look for
    ],
)
def test_required_strings_of_known_patterns(pattern: str, expected: tuple[str, ...] | None) -> None:
    assert required_literals(re.compile(pattern)) == expected


@pytest.mark.parametrize("fmt", ["hermes", "deepseek-r1", "llama3", "mistral", "qwen3-coder"])
def test_the_chat_formats_triggers_have_required_strings(fmt: str) -> None:
    """Each format's own pattern triggers skip their regular expression until a tag
    appears, so a long reasoning costs a string search per step, not a full match."""
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    for trigger in grammar_for(fmt, tools=tools).triggers:
        if trigger.kind.name.startswith("PATTERN"):
            assert isinstance(trigger.value, str)
            assert required_literals(re.compile(trigger.value)) is not None, trigger


def test_a_pattern_nested_beyond_the_stack_left_gives_no_requirement() -> None:
    """Compiled where the stack allowed it, walked where it does not: no error."""
    import inspect

    regex = re.compile("(?:" * 300 + "ab" + ")" * 300)
    assert required_literals(regex) == ("ab",)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(len(inspect.stack()) + 150)
    try:
        assert required_literals(regex) is None
    finally:
        sys.setrecursionlimit(limit)
