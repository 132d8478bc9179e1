"""Chat messages -> prompt text: the model's chat template, the tools described to the
model in its chat format, and the chat format chosen from the template."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from gbnfkit.chat import ChatFormat
from gbnfkit.server._errors import ApiError
from gbnfkit.server._fields import reject_unknown_type

__all__ = [
    "ChatPrompt",
    "format_from_template",
    "normalize_messages",
    "opens_reasoning",
    "tools_instruction",
]

# a marker the template writes -> the chat format it implies (first match wins)
_TEMPLATE_MARKERS: tuple[tuple[str, ChatFormat], ...] = (
    ("<function=", ChatFormat.QWEN3_CODER),
    ("<tool_call>", ChatFormat.HERMES),
    ("[TOOL_CALLS]", ChatFormat.MISTRAL),
    ("<|python_tag|>", ChatFormat.LLAMA3),
    ("tool▁calls▁begin", ChatFormat.DEEPSEEK_R1),
    ("<|im_start|>", ChatFormat.HERMES),  # ChatML: Hermes' tool calls are ChatML's
)

_ROLES = ("system", "developer", "user", "assistant", "tool")


def format_from_template(template: str | None) -> ChatFormat:
    """The chat format a chat template implies (``content``: no tool calls known)."""
    for marker, fmt in _TEMPLATE_MARKERS:
        if template and marker in template:
            return fmt
    return ChatFormat.CONTENT


def opens_reasoning(prompt: str) -> bool:
    """Whether ``prompt`` ends inside a reasoning block it opened: the generation prompt of
    DeepSeek-R1's, QwQ's and thinking Qwen3 templates ends with ``<think>`` (and a newline),
    so the model's output starts inside the reasoning."""
    return prompt.rstrip().endswith("<think>")


@dataclass(frozen=True)
class ChatPrompt:
    """Messages rendered through the chat template: the ``text`` and its token ``ids``."""

    text: str
    ids: list[int]

    @property
    def reasoning_open(self) -> bool:
        """Whether the output starts inside the reasoning (see :func:`opens_reasoning`)."""
        return opens_reasoning(self.text)


def tools_instruction(fmt: ChatFormat, tools: Sequence[Any]) -> str:
    """A system-prompt paragraph that shows the model ``tools`` and how to call them."""
    listing = "\n".join(json.dumps(tool, ensure_ascii=False) for tool in tools)
    examples = {
        ChatFormat.HERMES: '<tool_call>\n{"name": <function-name>, "arguments": <args-json>}\n'
        "</tool_call>",
        ChatFormat.QWEN3_CODER: "<tool_call>\n<function=NAME>\n<parameter=P>\nVALUE\n"
        "</parameter>\n</function>\n</tool_call>",
        ChatFormat.MISTRAL: '[TOOL_CALLS][{"name": <function-name>, "arguments": <args-json>}]',
        ChatFormat.LLAMA3: '{"name": <function-name>, "parameters": <args-json>}',
        ChatFormat.DEEPSEEK_R1: "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>"
        "NAME\n```json\n<args-json>\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
    }
    example = examples.get(fmt, "")
    return (
        "You may call one or more functions to help with the user query. The functions:\n"
        f"<tools>\n{listing}\n</tools>\n"
        f"To call a function, write:\n{example}"
    )


def _text(index: int, content: object) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for j, part in enumerate(content):
            if not isinstance(part, dict) or part.get("type") != "text":
                raise ApiError(
                    f"'messages[{index}].content[{j}]': only text parts are supported",
                    param=f"messages[{index}].content",
                )
            text = part.get("text")
            if not isinstance(text, str):
                raise reject_unknown_type(f"messages[{index}].content[{j}].text", text, "a string")
            parts.append(text)
        return "".join(parts)
    raise reject_unknown_type(f"messages[{index}].content", content, "a string or an array")


def _calls_text(index: int, calls: object) -> str:
    if not isinstance(calls, list):
        raise reject_unknown_type(f"messages[{index}].tool_calls", calls, "an array")
    out = []
    for call in calls:
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise ApiError(
                f"'messages[{index}].tool_calls': each call is "
                '{"type": "function", "function": {"name", "arguments"}}',
                param=f"messages[{index}].tool_calls",
            )
        arguments = function.get("arguments", "{}")
        try:
            parsed = json.loads(arguments) if isinstance(arguments, str) else arguments
        except (ValueError, RecursionError):  # not JSON, too deep, an int too long
            parsed = arguments
        call_json = json.dumps({"name": function["name"], "arguments": parsed}, ensure_ascii=False)
        out.append(f"<tool_call>\n{call_json}\n</tool_call>")
    return "\n".join(out)


def normalize_messages(messages: object, system_extra: str | None) -> list[dict[str, str]]:
    """OpenAI ``messages`` as ``{role, content}`` string pairs a chat template renders.

    Assistant tool calls are written out as Hermes ``<tool_call>`` blocks, tool results
    as ``<tool_response>`` blocks in a user turn; ``system_extra`` (the tools) is added
    to the system message (one is made when there is none).
    """
    if not isinstance(messages, list) or not messages:
        raise reject_unknown_type("messages", messages, "a non-empty array of messages")
    out: list[dict[str, str]] = []
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            raise reject_unknown_type(f"messages[{i}]", message, "an object")
        role = message.get("role")
        if role not in _ROLES:
            raise ApiError(
                f"'messages[{i}].role' must be one of {', '.join(_ROLES)}, not {json.dumps(role)}",
                param=f"messages[{i}].role",
            )
        text = _text(i, message.get("content"))
        if role == "developer":
            role = "system"
        if role == "assistant" and message.get("tool_calls"):
            calls = _calls_text(i, message["tool_calls"])
            text = f"{text}\n{calls}" if text else calls
        if role == "tool":
            role, text = "user", f"<tool_response>\n{text}\n</tool_response>"
        out.append({"role": role, "content": text})
    if system_extra:
        if out[0]["role"] == "system":
            out[0] = {"role": "system", "content": f"{out[0]['content']}\n\n{system_extra}"}
        else:
            out.insert(0, {"role": "system", "content": system_extra})
    return out
