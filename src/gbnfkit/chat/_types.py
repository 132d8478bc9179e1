"""The values of the chat layer: messages, tool calls, streaming deltas, formats."""

from __future__ import annotations

import enum
from dataclasses import dataclass

__all__ = [
    "ChatFormat",
    "Message",
    "MessageDelta",
    "ToolCall",
    "ToolCallDelta",
    "ToolChoice",
]


class ChatFormat(enum.Enum):
    """How a model family writes reasoning, content and tool calls (see docs/chat.md)."""

    CONTENT = "content"
    """Optional ``<think>…</think>`` reasoning, then content; no tool calls."""
    HERMES = "hermes"
    """Hermes 2 Pro, Qwen 2.5 / Qwen3: ``<tool_call>{"name": …, "arguments": …}</tool_call>``."""
    LLAMA3 = "llama3"
    """Llama 3.x: the whole output is one ``{"name": …, "parameters": …}`` (optionally
    after ``<|python_tag|>``), or content."""
    MISTRAL = "mistral"
    """Mistral: content, then ``[TOOL_CALLS]`` and a JSON array of calls."""
    QWEN3_CODER = "qwen3-coder"
    """Qwen3-Coder: ``<tool_call><function=NAME><parameter=P>value</parameter>…``."""
    DEEPSEEK_R1 = "deepseek-r1"
    """DeepSeek-R1: ``<think>`` reasoning, then DeepSeek's tool-call tokens."""

    @classmethod
    def parse(cls, value: str | ChatFormat) -> ChatFormat:
        """The format called ``value``; raises ChatError naming the known formats."""
        if isinstance(value, ChatFormat):
            return value
        for member in cls:
            if member.value == value:
                return member
        from gbnfkit._errors import ChatError

        known = ", ".join(m.value for m in cls)
        raise ChatError(f"unknown chat format {value!r} (known formats: {known})")

    @property
    def has_reasoning(self) -> bool:
        """Whether output in this format may open with ``<think>…</think>`` reasoning
        (``content``, ``hermes``, ``deepseek-r1``): only these take ``reasoning_open``."""
        from gbnfkit.chat._formats import syntax_of

        return syntax_of(self).has_reasoning


class ToolChoice(enum.Enum):
    """What :func:`gbnfkit.chat.grammar_for` lets the model do with its tools."""

    AUTO = "auto"
    """Write freely; the grammar wakes (lazily) when a tool call starts."""
    REQUIRED = "required"
    """Call one or more tools (the grammar constrains from the first character)."""


@dataclass(frozen=True)
class ToolCall:
    """One tool call of a message.

    Attributes:
        id: the call id the model wrote (Mistral), or ``None`` when the format has none.
        name: the tool's name.
        arguments: the arguments as JSON text (an object), as OpenAI's API carries them.
            In a partial message, the part of that text written so far.
    """

    id: str | None
    name: str
    arguments: str


@dataclass(frozen=True)
class Message:
    """What an assistant turn says: content, reasoning and tool calls.

    ``content`` is the text outside reasoning and tool calls, without the whitespace that
    separates it from them; ``reasoning_content`` is the text of the ``<think>`` block.
    """

    content: str = ""
    reasoning_content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()

    def to_dict(self) -> dict[str, object]:
        """An OpenAI-style assistant message (``role``, ``content``, ``tool_calls``...).

        A tool call carries ``"id"`` only when the model wrote one: OpenAI's ``id`` is a
        string, never ``null``, and llama.cpp's message (``to_json_oaicompat``) leaves it
        out too; a server that must answer with an id makes one up (``gbnfkit serve``
        does, as llama-server does).
        """
        out: dict[str, object] = {"role": "assistant", "content": self.content}
        if self.reasoning_content:
            out["reasoning_content"] = self.reasoning_content
        if self.tool_calls:
            calls: list[dict[str, object]] = []
            for call in self.tool_calls:
                item: dict[str, object] = {} if call.id is None else {"id": call.id}
                item["type"] = "function"
                item["function"] = {"name": call.name, "arguments": call.arguments}
                calls.append(item)
            out["tool_calls"] = calls
        return out


@dataclass(frozen=True)
class ToolCallDelta:
    """A piece of one tool call in a stream (as in OpenAI's ``delta.tool_calls[i]``).

    ``index`` says which call; ``name`` comes once (in the call's first delta), ``id``
    once when the model writes one, and ``arguments`` is the next fragment of the
    arguments' JSON text.
    """

    index: int
    id: str | None = None
    name: str | None = None
    arguments: str = ""


@dataclass(frozen=True)
class MessageDelta:
    """What a stream learned from one chunk: text to append to each part of the message."""

    content: str = ""
    reasoning_content: str = ""
    tool_calls: tuple[ToolCallDelta, ...] = ()

    def to_dict(self) -> dict[str, object]:
        """An OpenAI-style ``delta`` object (only the fields that carry something)."""
        out: dict[str, object] = {}
        if self.content:
            out["content"] = self.content
        if self.reasoning_content:
            out["reasoning_content"] = self.reasoning_content
        if self.tool_calls:
            calls: list[dict[str, object]] = []
            for call in self.tool_calls:
                item: dict[str, object] = {"index": call.index}
                if call.id is not None:
                    item["id"] = call.id
                function: dict[str, str] = {"arguments": call.arguments}
                if call.name is not None:
                    item["type"] = "function"
                    function["name"] = call.name
                item["function"] = function
                calls.append(item)
            out["tool_calls"] = calls
        return out
