"""The chat formats by :class:`~gbnfkit.chat.ChatFormat`."""

from __future__ import annotations

from gbnfkit.chat._formats._base import Syntax
from gbnfkit.chat._formats._content import ContentSyntax
from gbnfkit.chat._formats._deepseek_r1 import DeepSeekR1Syntax
from gbnfkit.chat._formats._hermes import HermesSyntax
from gbnfkit.chat._formats._llama3 import Llama3Syntax
from gbnfkit.chat._formats._mistral import MistralSyntax
from gbnfkit.chat._formats._qwen3_coder import Qwen3CoderSyntax
from gbnfkit.chat._types import ChatFormat

__all__ = ["syntax_of"]

_SYNTAXES: dict[ChatFormat, Syntax] = {
    s.format: s
    for s in (
        ContentSyntax(),
        HermesSyntax(),
        Llama3Syntax(),
        MistralSyntax(),
        Qwen3CoderSyntax(),
        DeepSeekR1Syntax(),
    )
}


def syntax_of(fmt: ChatFormat) -> Syntax:
    """The (stateless) definition of format ``fmt``."""
    return _SYNTAXES[fmt]
