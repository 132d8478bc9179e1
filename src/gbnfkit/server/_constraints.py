"""What holds a request's output: ``response_format``, ``grammar``, ``json_schema``,
``tools`` + ``tool_choice``, ``grammar_lazy`` + ``grammar_triggers``.

Every mistake is an :class:`ApiError` naming the field and, for a grammar, the line and
column, for a schema, the JSON pointer.
"""

from __future__ import annotations

import enum
import json
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from gbnfkit._errors import ChatError, GbnfkitError, GrammarError, SchemaError
from gbnfkit._grammar import Grammar
from gbnfkit.chat import ChatFormat, ChatGrammar, ChatParser, ToolChoice
from gbnfkit.server._errors import ApiError
from gbnfkit.server._fields import optional_bool, reject_unknown_type
from gbnfkit.tokens._trigger import Trigger

__all__ = ["Constraint", "OutputKind", "RequestCache", "constraint_for", "tools_offered"]

_SCHEMA_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
"""OpenAI's rule for ``response_format.json_schema.name``."""

_T = TypeVar("_T")

TokenOf = Callable[[str], int | None]
"""The id of a token written as text (``None`` when the text is not one token)."""


class OutputKind(enum.Enum):
    """How the generated text becomes the response message."""

    RAW = "raw"
    """The text is the content as is (a grammar or schema holds it)."""
    CHAT = "chat"
    """The text is read in the chat format: reasoning, content, tool calls."""


@dataclass(frozen=True)
class Constraint:
    """The grammar of a request (``None``: free text), its triggers (lazy when any), how
    the output is read, and the chat parser that reads it (with the request's tools)."""

    grammar: Grammar | None
    triggers: tuple[Trigger, ...]
    kind: OutputKind
    parser: ChatParser | None


def _grammar_error(param: str, exc: GrammarError) -> ApiError:
    where = f" at line {exc.line}, column {exc.column}" if exc.line is not None else ""
    return ApiError(
        f"'{param}': invalid grammar{where}: {exc.message}", param=param, code="invalid_grammar"
    )


def _schema_grammar(param: str, schema: object, cache: RequestCache) -> Grammar:
    """The grammar of ``schema`` in compact JSON: with whitespace allowed, small models
    write runs of blanks until ``max_tokens`` (measured on SmolLM2-135M)."""
    if isinstance(schema, bool):
        schema = {} if schema else {"not": {}}
    if not isinstance(schema, dict):
        raise reject_unknown_type(param, schema, "a JSON Schema (an object)")
    return cache.made(_json_key("schema", schema), lambda: _converted(param, schema))


def _converted(param: str, schema: dict[str, Any]) -> Grammar:
    try:
        return Grammar.from_json_schema(schema, whitespace="compact")
    except SchemaError as exc:
        pointer = exc.pointer or "/"
        raise ApiError(
            f"'{param}': invalid JSON Schema at {pointer}: {exc.message}",
            param=param,
            code="invalid_schema",
        ) from None
    except GrammarError as exc:
        raise _grammar_error(param, exc) from None
    except (GbnfkitError, RecursionError, ValueError, TypeError) as exc:
        raise ApiError(
            f"'{param}': unsupported JSON Schema: {exc}", param=param, code="invalid_schema"
        ) from None


def _response_format(value: object, cache: RequestCache) -> Grammar | None:
    if not isinstance(value, dict):
        raise reject_unknown_type("response_format", value, "an object")
    kind = value.get("type")
    if kind == "text":
        return None
    if kind == "json_object":
        schema = value.get("schema")
        return _schema_grammar(
            "response_format.schema", schema if schema is not None else {"type": "object"}, cache
        )
    if kind == "json_schema":
        inner = value.get("json_schema")
        if not isinstance(inner, dict):
            raise reject_unknown_type("response_format.json_schema", inner, "an object")
        name = inner.get("name")
        if name is not None and not (isinstance(name, str) and _SCHEMA_NAME.fullmatch(name)):
            raise ApiError(
                "'response_format.json_schema.name' must be 1 to 64 letters, digits, '_' or "
                f"'-', not {json.dumps(name)[:80]}",
                param="response_format.json_schema.name",
            )
        # always strict (the grammar holds the schema), but a 'strict' that is not a
        # boolean is still the request's mistake
        optional_bool(inner, "strict", path="response_format.json_schema.strict")
        schema = inner.get("schema", {})
        return _schema_grammar("response_format.json_schema.schema", schema, cache)
    raise ApiError(
        f"'response_format.type' must be 'text', 'json_object' or 'json_schema', not "
        f"{json.dumps(kind)}",
        param="response_format.type",
    )


def _gbnf(value: object, cache: RequestCache) -> Grammar:
    if not isinstance(value, str):
        raise reject_unknown_type("grammar", value, "a string (GBNF)")
    return cache.made(f"gbnf\n{value}", lambda: _parsed(value))


def _parsed(value: str) -> Grammar:
    try:
        return Grammar.from_gbnf(value)
    except GrammarError as exc:
        raise _grammar_error("grammar", exc) from None
    except GbnfkitError as exc:
        raise ApiError(f"'grammar': {exc}", param="grammar", code="invalid_grammar") from None


def _trigger(index: int, item: object, token_of: TokenOf, vocab_size: int | None) -> Trigger:
    param = f"grammar_triggers[{index}]"
    if not isinstance(item, dict):
        raise reject_unknown_type(param, item, "an object {type, value}")
    kind, value = item.get("type"), item.get("value")
    try:
        if kind == "token":
            if isinstance(value, str):
                token = token_of(value)
                if token is None:
                    raise ApiError(
                        f"'{param}.value': {value!r} is not one token of the model",
                        param=f"{param}.value",
                    )
                return Trigger.token(token)
            if isinstance(value, int) and not isinstance(value, bool):
                if vocab_size is not None and not 0 <= value < vocab_size:
                    raise ApiError(
                        f"'{param}.value': {value} is not a token id of the model "
                        f"(0 to {vocab_size - 1})",
                        param=f"{param}.value",
                    )
                return Trigger.token(value)
            raise reject_unknown_type(f"{param}.value", value, "a token id or a token's text")
        if not isinstance(value, str) or not value:
            raise reject_unknown_type(f"{param}.value", value, "a non-empty string")
        if kind == "word":
            return Trigger.word(value)
        if kind == "pattern":
            return Trigger.pattern(value)
        if kind == "pattern_full":
            return Trigger.pattern_full(value)
    except (GbnfkitError, ValueError) as exc:
        if isinstance(exc, ApiError):
            raise
        raise ApiError(f"'{param}': {exc}", param=param) from None
    raise ApiError(
        f"'{param}.type' must be 'word', 'pattern', 'pattern_full' or 'token', not "
        f"{json.dumps(kind)}",
        param=f"{param}.type",
    )


def _triggers(
    body: Mapping[str, Any], token_of: TokenOf, vocab_size: int | None
) -> tuple[Trigger, ...]:
    lazy = optional_bool(body, "grammar_lazy")
    items = body.get("grammar_triggers")
    if items is None:
        items = []
    if not isinstance(items, list):
        raise reject_unknown_type("grammar_triggers", items, "an array")
    triggers = tuple(_trigger(i, item, token_of, vocab_size) for i, item in enumerate(items))
    if lazy and not triggers:
        raise ApiError("'grammar_lazy' needs 'grammar_triggers'", param="grammar_triggers")
    if triggers and lazy is False:
        raise ApiError("'grammar_triggers' go with 'grammar_lazy': true", param="grammar_lazy")
    return triggers


def _tool_choice(body: Mapping[str, Any]) -> str | dict[str, Any]:
    choice = body.get("tool_choice")
    if choice is None:
        return "auto"
    if isinstance(choice, str):
        if choice not in ("none", "auto", "required"):
            raise ApiError(
                f"'tool_choice' must be 'none', 'auto', 'required' or a named function, not "
                f"{choice!r}",
                param="tool_choice",
            )
        return choice
    if isinstance(choice, dict):
        return choice
    raise reject_unknown_type("tool_choice", choice, "a string or an object")


def tools_offered(body: Mapping[str, Any]) -> bool:
    """Whether chat request ``body`` shows the model tools to call: ``tools`` (an array) and
    a ``tool_choice`` other than ``none``. (With a grammar besides, :func:`constraint_for`
    refuses the request.)"""
    tools = body.get("tools")
    return isinstance(tools, list) and bool(tools) and _tool_choice(body) != "none"


class RequestCache:
    """What recent requests' constraints were made of, kept for the requests that send the
    same again: an agent sends its tools with every turn (their chat parser and grammar
    took 0.13 s for 20 tools, 0.32 s for 50, hermes), a client its schema with every
    request (1.5 ms at the median of MaskBench's, 8 ms at p90, 91 ms at most). Entries:
    the chat parser of a tool set, its grammar per ``tool_choice``, the grammar of a JSON
    Schema or of a GBNF text, each by its text (JSON with its keys sorted: written
    otherwise, it is made again); the least recently used dropped past ``size``. What is
    refused is never kept. Thread-safe."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._kept: OrderedDict[str, object] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._kept)

    def made(self, key: str, make: Callable[[], _T]) -> _T:
        """The value kept under ``key``, or ``make()``'s, then kept."""
        with self._lock:
            found = self._kept.get(key)
            if found is not None:
                self._kept.move_to_end(key)
                return cast(_T, found)
        value = make()
        with self._lock:
            self._kept[key] = value
            while len(self._kept) > self._size:
                self._kept.popitem(last=False)
        return value


def _json_key(kind: str, value: object) -> str:
    return f"{kind}\n{json.dumps(value, sort_keys=True, ensure_ascii=False)}"


def _tools_parser(fmt: ChatFormat, tools: object, reasoning_open: bool = False) -> ChatParser:
    if not isinstance(tools, list) or not tools:
        raise reject_unknown_type("tools", tools, "a non-empty array of tool definitions")
    try:
        return ChatParser(fmt, tools, reasoning_open=reasoning_open)
    except (GbnfkitError, ValueError, TypeError) as exc:
        raise ApiError(f"'tools': {exc}", param="tools", code="invalid_tools") from None


def _tools_key(fmt: ChatFormat, tools: object, reasoning_open: bool) -> str:
    """The cache key of a tool set's parser; its grammars' keys are this one, a newline and
    the ``tool_choice`` (JSON text holds no raw newline)."""
    return _json_key("tools", [fmt.value, reasoning_open, tools])


def _tools_grammar(parser: ChatParser, choice: str | Mapping[str, Any]) -> ChatGrammar:
    try:
        return parser.grammar(choice)
    except (ChatError, GbnfkitError, ValueError) as exc:
        if isinstance(exc, ChatError) and exc.tool is not None:  # a tool's definition
            raise ApiError(f"'tools': {exc}", param="tools", code="invalid_tools") from None
        raise ApiError(f"'tool_choice': {exc}", param="tool_choice") from None


def constraint_for(
    body: Mapping[str, Any],
    fmt: ChatFormat,
    token_of: TokenOf,
    *,
    chat: bool,
    reasoning_open: bool = False,
    vocab_size: int | None = None,
    cache: RequestCache | None = None,
) -> Constraint:
    """The constraint of request ``body`` (``chat``: a chat completion, else a completion).

    ``reasoning_open``: the chat prompt ended with ``<think>``, so the output starts inside
    the reasoning; the chat parser reads it so and the tool-call grammar wakes (lazy) or
    starts its calls (eager) only after the ``</think>``. In a format without reasoning
    (llama3, mistral, qwen3-coder) it is ignored: such output is read as content.
    ``vocab_size``: token ids a ``token`` trigger may name are below it. ``cache``: what
    recent requests' constraints were made of, reused (none: all made for this one).
    """
    if cache is None:
        cache = RequestCache(0)
    sources: list[tuple[str, Grammar | None]] = []
    if body.get("response_format") is not None:
        sources.append(("response_format", _response_format(body["response_format"], cache)))
    if body.get("json_schema") is not None:
        sources.append(("json_schema", _schema_grammar("json_schema", body["json_schema"], cache)))
    if body.get("grammar") is not None:
        sources.append(("grammar", _gbnf(body["grammar"], cache)))
    triggers = _triggers(body, token_of, vocab_size)
    tools = body.get("tools") if chat else None
    choice = _tool_choice(body) if chat else "none"
    named = [name for name, grammar in sources if grammar is not None]
    if len(named) > 1 or (named and tools is not None and choice != "none"):
        both = named + (["tools"] if tools is not None and choice != "none" else [])
        raise ApiError(
            f"give one of 'response_format', 'json_schema', 'grammar' and 'tools', not "
            f"{' and '.join(repr(n) for n in both)}",
            param=both[1],
        )
    grammar = next((g for _, g in sources if g is not None), None)
    if triggers and grammar is None:
        raise ApiError(
            "'grammar_triggers' need a 'grammar' or 'json_schema' to wake", param="grammar_triggers"
        )
    if grammar is not None:
        return Constraint(grammar, triggers, OutputKind.RAW, None)
    if not chat:
        return Constraint(None, (), OutputKind.RAW, None)
    if tools is None or choice == "none":
        if tools is not None:  # still validated
            cache.made(_tools_key(fmt, tools, False), lambda: _tools_parser(fmt, tools))
        if isinstance(choice, dict) or choice == "required":
            raise ApiError(f"'tool_choice' {json.dumps(choice)} needs 'tools'", param="tool_choice")
        content = ChatParser(ChatFormat.CONTENT, reasoning_open=reasoning_open)
        return Constraint(None, (), OutputKind.CHAT, content)
    opened = reasoning_open and fmt.has_reasoning
    key = _tools_key(fmt, tools, opened)  # (the tools' JSON written once)
    parser = cache.made(key, lambda: _tools_parser(fmt, tools, opened))
    chat_grammar = cache.made(
        f"{key}\n{json.dumps(choice, sort_keys=True)}", lambda: _tools_grammar(parser, choice)
    )
    lazy = choice == "auto" or choice == ToolChoice.AUTO.value
    return Constraint(
        chat_grammar.grammar, chat_grammar.triggers if lazy else (), OutputKind.CHAT, parser
    )
