"""Reading model output in chat formats: reasoning, content and tool calls, whole or
streaming, and the grammars that constrain tool calls (see docs/chat.md).

>>> from gbnfkit.chat import parse_message
>>> message = parse_message(
...     '<tool_call>\\n{"name": "get_weather", "arguments": {"city": "Paris"}}\\n</tool_call>',
...     "hermes",
... )
>>> message.tool_calls[0].name, message.tool_calls[0].arguments
('get_weather', '{"city": "Paris"}')
"""

from __future__ import annotations

from gbnfkit._errors import ChatError, ChatParseError, ChatTemplateError
from gbnfkit.chat._api import ChatGrammar, ChatParser, formats, grammar_for, parse_message
from gbnfkit.chat._stream import MessageStream
from gbnfkit.chat._types import (
    ChatFormat,
    Message,
    MessageDelta,
    ToolCall,
    ToolCallDelta,
    ToolChoice,
)

__all__ = [
    "ChatError",
    "ChatFormat",
    "ChatGrammar",
    "ChatParser",
    "ChatParseError",
    "ChatTemplateError",
    "Message",
    "MessageDelta",
    "MessageStream",
    "ToolCall",
    "ToolCallDelta",
    "ToolChoice",
    "formats",
    "grammar_for",
    "parse_message",
]
