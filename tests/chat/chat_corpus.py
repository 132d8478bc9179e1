"""Test tools, a writer of messages in each chat format (the reference the parsers must read
back), and hypothesis strategies for random messages."""

from __future__ import annotations

import json
import re
from typing import Any

from hypothesis import strategies as st

from gbnfkit import Trigger
from gbnfkit.chat import ChatFormat, Message, ToolCall

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather forecast for a city",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "days": {"type": "integer", "minimum": 1, "maximum": 14},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            },
            "required": ["city"],
            "additionalProperties": False,
        },
    },
}
SEARCH = {
    "type": "function",
    "function": {
        "name": "search",
        "parameters": {
            "type": "object",
            "properties": {
                "query": {"type": "string"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "verbatim": {"type": "boolean"},
            },
            "required": ["query"],
            "additionalProperties": False,
        },
    },
}
GET = {  # a name that is a prefix of another tool's name
    "type": "function",
    "function": {"name": "get", "parameters": {"type": "object", "properties": {}}},
}
TOOLS = [WEATHER, SEARCH, GET]

FORMATS = list(ChatFormat)
TOOL_FORMATS = [f for f in ChatFormat if f is not ChatFormat.CONTENT]
REASONING_FORMATS = {ChatFormat.CONTENT, ChatFormat.HERMES, ChatFormat.DEEPSEEK_R1}

DEEPSEEK_CALLS_BEGIN = "<｜tool▁calls▁begin｜>"
DEEPSEEK_CALLS_END = "<｜tool▁calls▁end｜>"
DEEPSEEK_CALL_BEGIN = "<｜tool▁call▁begin｜>"
DEEPSEEK_CALL_END = "<｜tool▁call▁end｜>"
DEEPSEEK_SEP = "<｜tool▁sep｜>"

DELIMITERS = {
    ChatFormat.CONTENT: (),
    ChatFormat.HERMES: ("<tool_call>",),
    ChatFormat.LLAMA3: (),
    ChatFormat.MISTRAL: ("[TOOL_CALLS]",),
    ChatFormat.QWEN3_CODER: ("<tool_call>",),
    ChatFormat.DEEPSEEK_R1: (DEEPSEEK_CALLS_BEGIN,),
}


def _args_text(arguments: dict[str, Any]) -> str:
    return json.dumps(arguments, ensure_ascii=False)


def _xml_value(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def render(message: Message, fmt: ChatFormat, compact: bool = False) -> str:
    """``message`` as a model writing ``fmt`` would write it (``compact``: fewer newlines)."""
    nl = "" if compact else "\n"
    out = ""
    if message.reasoning_content:
        assert fmt in REASONING_FORMATS
        out += f"<think>{nl}{message.reasoning_content}{nl}</think>{nl}{nl}"
    out += message.content
    calls = message.tool_calls
    if not calls:
        return out
    sep = nl if message.content else ""
    if fmt is ChatFormat.HERMES:
        for call in calls:
            out += f"{sep}<tool_call>{nl}"
            out += f'{{"name": {json.dumps(call.name)}, "arguments": {call.arguments}}}'
            out += f"{nl}</tool_call>"
            sep = nl
    elif fmt is ChatFormat.LLAMA3:
        (call,) = calls
        prefix = "<|python_tag|>" if compact else ""
        out += f'{prefix}{{"name": {json.dumps(call.name)}, "parameters": {call.arguments}}}'
    elif fmt is ChatFormat.MISTRAL:
        items = []
        for call in calls:
            item = f'{{"name": {json.dumps(call.name)}, "arguments": {call.arguments}'
            if call.id is not None:
                item += f', "id": {json.dumps(call.id)}'
            items.append(item + "}")
        out += f"{sep}[TOOL_CALLS][" + ", ".join(items) + "]"
    elif fmt is ChatFormat.QWEN3_CODER:
        for call in calls:
            out += f"{sep}<tool_call>\n<function={call.name}>\n"
            for name, value in json.loads(call.arguments).items():
                out += f"<parameter={name}>\n{_xml_value(value)}\n</parameter>\n"
            out += "</function>\n</tool_call>"
            sep = "\n"
    elif fmt is ChatFormat.DEEPSEEK_R1:
        out += sep + DEEPSEEK_CALLS_BEGIN
        for i, call in enumerate(calls):
            out += ("\n" if i and not compact else "") + DEEPSEEK_CALL_BEGIN + "function"
            out += f"{DEEPSEEK_SEP}{call.name}\n```json\n{call.arguments}\n```{DEEPSEEK_CALL_END}"
        out += DEEPSEEK_CALLS_END
    else:
        raise AssertionError(fmt)
    return out


def constrained_part(text: str, triggers: tuple[Trigger, ...]) -> str | None:
    """The part of ``text`` a lazy grammar constrains: from the earliest trigger on."""
    starts = []
    for trigger in triggers:
        if trigger.kind.value == "word":
            at = text.find(str(trigger.value))
            if at >= 0:
                starts.append(at)
        elif trigger.kind.value == "pattern_full":
            for end in range(len(text) + 1):
                m = re.fullmatch(str(trigger.value), text[:end])
                if m:
                    starts.append(m.start(1) if m.groups() else 0)
                    break
        else:
            raise AssertionError(trigger)
    return text[min(starts) :] if starts else None


# -- strategies -------------------------------------------------------------------------

_TEXT_ALPHABET = st.sampled_from(
    list('ab c\n\t<>[]{}"\\/_=|:,`') + ["é", "ß", "日", "🙂", "\u2028"] + list("xyz.")
)
# pieces of the formats' tags, so that texts often hold what looks like the start of one
_TAG_PIECES = st.sampled_from(
    [
        "<tool_",
        "<tool_call",
        "</tool_call>",
        "[TOOL_",
        "[TOOL_CALLS",
        "<think",
        "</think",
        "<think>",
        "</parameter",
        "<function=",
        "<|python_tag|",
        "<｜tool▁calls",
        "<｜tool▁call▁begin｜>",
        '{"name"',
    ]
)
_plain = st.lists(st.one_of(_TEXT_ALPHABET, _TAG_PIECES), max_size=20).map("".join)


# reasoning may write any format's tool-call tag: it stays reasoning, and the lazy grammar
# must not wake inside it
_reasoning = st.lists(
    st.one_of(
        _TEXT_ALPHABET,
        _TAG_PIECES,
        st.sampled_from(["<tool_call>", "[TOOL_CALLS]", DEEPSEEK_CALLS_BEGIN, '{"name": "get"']),
    ),
    max_size=20,
).map("".join)


def _free_text(fmt: ChatFormat, forbidden: tuple[str, ...]) -> st.SearchStrategy[str]:
    return _plain.filter(lambda s: not any(d in s for d in forbidden))


def _string_value() -> st.SearchStrategy[str]:
    pieces = st.lists(st.one_of(_TEXT_ALPHABET, _TAG_PIECES), max_size=12).map("".join)
    return pieces.filter(lambda s: "</parameter>" not in s)


def _weather_args() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {"city": _string_value()},
        optional={
            "days": st.integers(1, 14),
            "unit": st.sampled_from(["celsius", "fahrenheit"]),
        },
    )


def _search_args() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {"query": _string_value()},
        optional={"verbatim": st.booleans(), "tags": st.lists(_string_value(), max_size=3)},
    )


def _ordered(args: dict[str, Any], order: list[str]) -> dict[str, Any]:
    return {k: args[k] for k in order if k in args}


def _call(fmt: ChatFormat, index: int) -> st.SearchStrategy[ToolCall]:
    weather = _weather_args().map(lambda a: ("get_weather", _ordered(a, ["city", "days", "unit"])))
    search = _search_args().map(lambda a: ("search", _ordered(a, ["query", "tags", "verbatim"])))
    get = st.just(("get", {}))
    ids = (
        st.one_of(
            st.none(), st.text("abcdefghijklmnopqrstuvwxyz0123456789", min_size=9, max_size=9)
        )
        if fmt is ChatFormat.MISTRAL
        else st.none()
    )
    return st.builds(
        lambda pair, call_id: ToolCall(call_id, pair[0], _args_text(pair[1])),
        st.one_of(weather, search, get),
        ids,
    )


@st.composite
def messages(draw: st.DrawFn, fmt: ChatFormat) -> Message:
    """A random message that ``fmt`` can carry, normalised as parsing returns it."""
    reasoning = ""
    if fmt in REASONING_FORMATS and draw(st.booleans()):
        reasoning = draw(_reasoning.filter(lambda s: "</think>" not in s)).strip(" \t\r\n")
    max_calls = 0 if fmt is ChatFormat.CONTENT else 1 if fmt is ChatFormat.LLAMA3 else 3
    count = draw(st.integers(0, max_calls))
    calls = tuple(draw(_call(fmt, i)) for i in range(count))
    content = draw(_free_text(fmt, DELIMITERS[fmt]))
    if reasoning:
        content = content.lstrip(" \t\r\n")
    if calls:
        content = content.rstrip(" \t\r\n")
        if fmt is ChatFormat.LLAMA3:
            content = ""
    if fmt is ChatFormat.LLAMA3 and not calls:
        opening = content.lstrip(" \t\r\n")
        if re.match(r'\{\s*"name"', opening) or opening.startswith("<|python_tag|>"):
            content = "x" + content
    if (
        fmt in REASONING_FORMATS
        and not reasoning
        and content.lstrip(" \t\r\n").startswith("<think>")
    ):
        content = "x" + content
    return Message(content, reasoning, calls)
