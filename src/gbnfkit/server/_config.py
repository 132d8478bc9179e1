"""The server's settings (``gbnfkit serve``'s flags)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from gbnfkit._arguments import expect, usable_api_key
from gbnfkit._errors import ArgumentError
from gbnfkit.chat import ChatFormat

__all__ = ["ServerConfig"]


@dataclass(frozen=True)
class ServerConfig:
    """How the server runs.

    Attributes:
        model: the GGUF file (``None``: the bundled SmolLM2-135M-Instruct).
        api_key: when set, every request needs ``Authorization: Bearer <api_key>``:
            printable ASCII (what an HTTP header carries), not empty, no space at either
            end. Left out of the repr, which ends up in logs and tracebacks.
        parallel: generations decoded at once; each has its own model instance (slot);
            further requests wait in a queue.
        chat_format: how the model writes tool calls (``None``: chosen from the chat
            template in use, ``chat_template`` when given).
        chat_template: Jinja text that replaces the model's chat template for every
            prompt (``gbnfkit serve --chat-template-file``; ``None``: the GGUF's own).
        max_tokens: the most tokens one request may ask for (and the default).
        ctx_size: each slot's context, in tokens (prompt and output).
        threads: llama.cpp threads per slot (``None``: half the CPUs divided among the
            slots, at least one; more threads than free cores make llama.cpp crawl).
        grammar_cache: compiled grammars kept by the shared ``GrammarCompiler``, and
            entries of what recent requests' constraints were made of (tool sets' chat
            parsers and grammars, schemas' and GBNF texts' grammars), reused when sent again.
        max_body_bytes: the largest request body accepted.

    A field of the wrong type or out of range raises :class:`~gbnfkit.ArgumentError`
    (a ``ValueError``) naming it; ``model`` may be given as a ``str`` (kept as a
    ``Path``), ``chat_format`` as a format's name (kept as the ``ChatFormat``; an
    unknown name is a :class:`~gbnfkit.ChatError`).
    """

    model: Path | None = None
    api_key: str | None = field(default=None, repr=False)  # a secret: not in logs
    parallel: int = 1
    chat_format: ChatFormat | None = None
    chat_template: str | None = None
    max_tokens: int = 512
    ctx_size: int = 2048
    threads: int | None = None
    grammar_cache: int = 64
    max_body_bytes: int = 1 << 20

    def __post_init__(self) -> None:
        # the fields are read only when the engine loads or a request comes: a wrong type
        # found then was a bare TypeError, or a 500 on every request (a chat_format given
        # as its name has no .value)
        if self.model is not None:
            expect(self.model, (str, os.PathLike), "ServerConfig.model")
            object.__setattr__(self, "model", Path(self.model))
        for name in ("api_key", "chat_template"):
            expect(getattr(self, name), (str, type(None)), f"ServerConfig.{name}")
        key = self.api_key
        if key is not None and not usable_api_key(key):
            # an empty key turned the check off: the server answered everyone
            raise ArgumentError(
                "ServerConfig.api_key must be printable ASCII without spaces at its ends, "
                f"not {'an empty string' if not key else 'this text'} (None: no key)"
            )
        if self.chat_format is not None:
            expect(self.chat_format, (str, ChatFormat), "ServerConfig.chat_format")
            object.__setattr__(self, "chat_format", ChatFormat.parse(self.chat_format))
        names = ("parallel", "max_tokens", "ctx_size", "grammar_cache", "max_body_bytes")
        for name in (*names, "threads"):
            value = getattr(self, name)
            if value is None and name == "threads":
                continue
            expect(value, int, f"ServerConfig.{name}")
            if value < 1:
                raise ArgumentError(f"ServerConfig.{name} must be at least 1, not {value}")
