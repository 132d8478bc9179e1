"""The server's settings (``gbnfkit serve``'s flags)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from gbnfkit.chat import ChatFormat

__all__ = ["ServerConfig"]


@dataclass(frozen=True)
class ServerConfig:
    """How the server runs.

    Attributes:
        model: the GGUF file (``None``: the bundled SmolLM2-135M-Instruct).
        api_key: when set, every request needs ``Authorization: Bearer <api_key>``.
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
        grammar_cache: compiled grammars kept by the shared ``GrammarCompiler``.
        max_body_bytes: the largest request body accepted.
    """

    model: Path | None = None
    api_key: str | None = None
    parallel: int = 1
    chat_format: ChatFormat | None = None
    chat_template: str | None = None
    max_tokens: int = 512
    ctx_size: int = 2048
    threads: int | None = None
    grammar_cache: int = 64
    max_body_bytes: int = 1 << 20

    def __post_init__(self) -> None:
        for name in ("parallel", "max_tokens", "ctx_size", "grammar_cache", "max_body_bytes"):
            if getattr(self, name) < 1:
                raise ValueError(f"ServerConfig.{name} must be at least 1")
        if self.threads is not None and self.threads < 1:
            raise ValueError("ServerConfig.threads must be at least 1")
