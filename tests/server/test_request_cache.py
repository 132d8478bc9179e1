"""``RequestCache``: what recent requests' constraints were made of (tool sets' chat
parsers and grammars, schemas' and GBNF texts' grammars), reused by the requests that send
the same again (an agent sends its tools with every turn: 50 tools took 0.32 s to parse
and turn into a grammar before each request's first token)."""

from __future__ import annotations

from typing import Any

import pytest

from gbnfkit.chat import ChatFormat
from gbnfkit.server._constraints import RequestCache, constraint_for
from gbnfkit.server._errors import ApiError


def _tools(names: list[str]) -> list[dict[str, Any]]:
    return [{"type": "function", "function": {"name": name, "parameters": {
        "type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}}
        for name in names]  # fmt: skip


def _constraint(sets: RequestCache | None, tools: Any, choice: Any = "auto",
                fmt: ChatFormat = ChatFormat.HERMES, reasoning_open: bool = False) -> Any:
    body = {"messages": [{"role": "user", "content": "Hi"}], "tools": tools, "tool_choice": choice}
    return constraint_for(body, fmt, lambda _: None, chat=True, reasoning_open=reasoning_open,
                          cache=sets)


def test_the_same_tools_reuse_the_parser_and_the_grammar_of_each_choice() -> None:
    sets = RequestCache(8)
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
    assert len(sets) == 3  # the parser, its grammars for "auto" and "required"
    other = _constraint(sets, _tools(["read"]))
    assert other.parser is not first.parser and len(sets) == 5
    opened = _constraint(sets, _tools(["read", "write"]), fmt=ChatFormat.DEEPSEEK_R1,
                         reasoning_open=True)
    assert opened.parser is not first.parser and opened.parser.reasoning_open


def test_the_least_recently_used_set_is_dropped_past_the_size() -> None:
    sets = RequestCache(4)  # two tool sets: a parser and a grammar each
    a = _constraint(sets, _tools(["a"]))
    _constraint(sets, _tools(["b"]))
    assert _constraint(sets, _tools(["a"])).parser is a.parser  # a is the newest again
    _constraint(sets, _tools(["c"]))  # drops b
    assert len(sets) == 4
    assert _constraint(sets, _tools(["a"])).parser is a.parser
    b = _constraint(sets, _tools(["b"]))  # made again, dropping c
    assert _constraint(sets, _tools(["b"])).parser is b.parser


def test_refused_tools_are_refused_every_time_and_never_kept() -> None:
    sets = RequestCache(4)
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


def _schema_constraint(cache: RequestCache | None, schema: Any, how: str = "json_schema") -> Any:
    body: dict[str, Any] = {"messages": [{"role": "user", "content": "Hi"}]}
    if how == "json_schema":
        body["json_schema"] = schema
    elif how == "response_format":
        body["response_format"] = {"type": "json_schema", "json_schema": {"schema": schema}}
    else:
        body["grammar"] = schema
    return constraint_for(body, ChatFormat.HERMES, lambda _: None, chat=True, cache=cache)


def test_a_schema_or_gbnf_sent_again_reuses_its_grammar() -> None:
    cache = RequestCache(8)
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    first = _schema_constraint(cache, schema)
    assert _schema_constraint(cache, dict(reversed(list(schema.items())))).grammar is first.grammar
    # under another field the same schema is the same grammar
    assert _schema_constraint(cache, schema, "response_format").grammar is first.grammar
    assert first.grammar == _schema_constraint(None, schema).grammar
    other = _schema_constraint(cache, {"type": "string"})
    assert other.grammar is not first.grammar
    gbnf = _schema_constraint(cache, 'root ::= "a"', "grammar")
    assert _schema_constraint(cache, 'root ::= "a"', "grammar").grammar is gbnf.grammar
    assert len(cache) == 3
    for bad, how in [({"type": "wat"}, "json_schema"), ("root ::= (", "grammar")]:
        for _ in range(2):
            with pytest.raises(ApiError):
                _schema_constraint(cache, bad, how)
    assert len(cache) == 3
