"""``ToolSets``: the chat parsers and grammars of recent tool sets, reused by the requests
that offer the same tools again (an agent sends them with every turn; 50 tools took
0.35 s to parse and turn into a grammar before each request's first token)."""

from __future__ import annotations

from typing import Any

import pytest

from gbnfkit.chat import ChatFormat
from gbnfkit.server._constraints import ToolSets, constraint_for
from gbnfkit.server._errors import ApiError


def _tools(names: list[str]) -> list[dict[str, Any]]:
    return [{"type": "function", "function": {"name": name, "parameters": {
        "type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}}
        for name in names]  # fmt: skip


def _constraint(sets: ToolSets | None, tools: Any, choice: Any = "auto",
                fmt: ChatFormat = ChatFormat.HERMES, reasoning_open: bool = False) -> Any:
    body = {"messages": [{"role": "user", "content": "Hi"}], "tools": tools, "tool_choice": choice}
    return constraint_for(body, fmt, lambda _: None, chat=True, reasoning_open=reasoning_open,
                          tool_sets=sets)


def test_the_same_tools_reuse_the_parser_and_the_grammar_of_each_choice() -> None:
    sets = ToolSets(4)
    first = _constraint(sets, _tools(["read", "write"]))
    again = _constraint(sets, _tools(["read", "write"]))
    assert again.parser is first.parser and again.grammar is first.grammar
    assert again.triggers == first.triggers
    # the tools' JSON with its keys in another order is the same set
    shuffled = [{"function": {"parameters": t["function"]["parameters"],
                              "name": t["function"]["name"]}, "type": "function"}
                for t in _tools(["read", "write"])]  # fmt: skip
    assert _constraint(sets, shuffled).parser is first.parser
    required = _constraint(sets, _tools(["read", "write"]), "required")
    assert required.parser is first.parser and required.grammar is not first.grammar
    assert required.grammar == _constraint(None, _tools(["read", "write"]), "required").grammar
    assert len(sets) == 1
    other = _constraint(sets, _tools(["read"]))
    assert other.parser is not first.parser and len(sets) == 2
    opened = _constraint(sets, _tools(["read", "write"]), fmt=ChatFormat.DEEPSEEK_R1,
                         reasoning_open=True)
    assert opened.parser is not first.parser and opened.parser.reasoning_open


def test_the_least_recently_used_set_is_dropped_past_the_size() -> None:
    sets = ToolSets(2)
    a = _constraint(sets, _tools(["a"]))
    _constraint(sets, _tools(["b"]))
    assert _constraint(sets, _tools(["a"])).parser is a.parser  # a is the newest again
    _constraint(sets, _tools(["c"]))  # drops b
    assert len(sets) == 2
    assert _constraint(sets, _tools(["a"])).parser is a.parser
    b = _constraint(sets, _tools(["b"]))  # made again, dropping c
    assert _constraint(sets, _tools(["b"])).parser is b.parser


def test_refused_tools_are_refused_every_time_and_never_kept() -> None:
    sets = ToolSets(4)
    bad = [{"type": "function", "function": {"name": "f", "parameters": {"type": "wat"}}}]
    for _ in range(2):
        with pytest.raises(ApiError) as info:
            _constraint(sets, bad)
        assert info.value.param == "tools" and info.value.code == "invalid_tools"
    with pytest.raises(ApiError) as info:
        _constraint(sets, _tools(["a"]), {"type": "function", "function": {"name": "zzz"}})
    assert info.value.param == "tool_choice"
    assert _constraint(sets, _tools(["a"])).parser is not None
    with pytest.raises(ApiError):
        _constraint(sets, "not a list")
