"""The model slots: ``parallel`` llama.cpp instances of one GGUF (a ``Llama`` is not
thread-safe, so each generation owns one for its duration), one shared vocabulary and
one shared ``GrammarCompiler``, and the free slots (``_slots.SlotPool``)."""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from gbnfkit._errors import GbnfkitError, LimitError, TriggerRejected
from gbnfkit._grammar import Grammar
from gbnfkit.integrations._decode import AnyMatcher
from gbnfkit.integrations.llama_cpp import LlamaRunner, load_llama, vocabulary_from_llama
from gbnfkit.server._config import ServerConfig
from gbnfkit.server._constraints import RequestCache
from gbnfkit.server._decode import Job, Outcome, Piece, run_job
from gbnfkit.server._errors import ApiError
from gbnfkit.server._prompt import ChatPrompt, format_from_template
from gbnfkit.server._slots import SlotPool
from gbnfkit.tokens._compiled import CompiledGrammar
from gbnfkit.tokens._compiler import GrammarCompiler
from gbnfkit.tokens._trigger import Trigger

__all__ = ["Engine"]


class Engine:
    """The model, loaded ``config.parallel`` times, and what the requests share."""

    def __init__(self, config: ServerConfig) -> None:
        """Load the model ``config.parallel`` times.

        Raises:
            MissingDependencyError: llama-cpp-python (or the bundled model) is missing.
            FileNotFoundError: ``config.model`` does not exist.
            ChatTemplateError: ``config.chat_template`` (or, without it, the model's own
                template) is empty or not valid Jinja.
        """
        from gbnfkit.integrations.llama_cpp import default_model_path

        self.path = Path(config.model) if config.model is not None else default_model_path()
        self.model_id = self.path.stem
        threads = config.threads or max((os.cpu_count() or 1) // (2 * config.parallel), 1)
        first = load_llama(self.path, n_ctx=config.ctx_size, n_threads=threads)
        self.vocabulary = vocabulary_from_llama(first)
        # the first slot reads the chat template before the others load: a template that
        # is not valid Jinja stops the engine at once
        runner = LlamaRunner(first, vocabulary=self.vocabulary, chat_template=config.chat_template)
        self._runners = [runner] + [
            LlamaRunner(
                load_llama(self.path, n_ctx=config.ctx_size, n_threads=threads),
                vocabulary=self.vocabulary,
                chat_template=config.chat_template,
            )
            for _ in range(config.parallel - 1)
        ]
        self.compiler = GrammarCompiler(self.vocabulary, cache_size=config.grammar_cache)
        # what recent requests' constraints were made of: tool sets' chat parsers and
        # grammars, schemas' and GBNF texts' grammars (as many entries)
        self.request_cache = RequestCache(config.grammar_cache)
        self._compile_lock = threading.Lock()
        self._llm: Any = first
        # the template that renders the prompts: the chat format follows it
        self.template: str | None = runner.chat_template
        self.chat_format = config.chat_format or format_from_template(self.template)
        self.context_size = config.ctx_size
        self._executor = ThreadPoolExecutor(config.parallel, thread_name_prefix="gbnfkit-slot")
        self._free: SlotPool | None = None
        self._free_loop: asyncio.AbstractEventLoop | None = None
        self.waiting = 0
        self.busy = 0

    def _slots(self) -> SlotPool:
        """The free slots, of the running event loop (made for each new loop: an engine
        outlives the loop of one test client or one ``uvicorn.run``)."""
        loop = asyncio.get_running_loop()
        if self._free is None or self._free_loop is not loop:
            if self.busy:
                raise RuntimeError("an engine serves one event loop at a time")
            self._free, self._free_loop = SlotPool(self._runners), loop
        return self._free

    @property
    def slots(self) -> int:
        """How many requests generate at once (``ServerConfig.parallel``: one model each)."""
        return len(self._runners)

    def render_chat(self, messages: list[dict[str, str]]) -> ChatPrompt:
        """``messages`` through the chat template (``ServerConfig.chat_template``, else the
        model's; ChatML without one), with the generation prompt: the text and its tokens.

        Raises:
            ChatTemplateError: the template fails on ``messages`` (or refuses them).
        """
        runner = self._runners[0]
        if runner.has_chat_template:
            text = runner.format_chat(messages)  # the template writes the BOS token, if any
            return ChatPrompt(text, self.tokenize(text, add_bos=False))
        text = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages)
        text += "<|im_start|>assistant\n"
        return ChatPrompt(text, self.tokenize(text, add_bos=True))

    def chat_prompt(self, messages: list[dict[str, str]]) -> list[int]:
        """The tokens of ``messages`` through the model's chat template (ChatML without one)."""
        return self.render_chat(messages).ids

    def tokenize(self, text: str, *, add_bos: bool, special: bool = True) -> list[int]:
        """The token ids of ``text``; ``special``: special tokens' text is read as them."""
        return list(self._llm.tokenize(text.encode("utf-8"), add_bos=add_bos, special=special))

    def detokenize(self, ids: list[int]) -> bytes:
        """The bytes of ``ids``, special tokens written as their text (``<|im_end|>``)."""
        return bytes(self._llm.detokenize(ids, special=True))

    def token_of(self, text: str) -> int | None:
        """The id of the one token ``text`` is (special tokens included), else ``None``."""
        ids = self.tokenize(text, add_bos=False)
        return ids[0] if len(ids) == 1 else None

    def compile(self, grammar: Grammar) -> CompiledGrammar:
        """``grammar`` compiled for the model's vocabulary (blocking; the compiler's cache
        serves a grammar seen before). :meth:`compiled` is the form for the event loop."""
        with self._compile_lock:
            return self.compiler.compile(grammar)

    async def compiled(self, grammar: Grammar | None) -> CompiledGrammar | None:
        """``grammar`` compiled for the model (off the event loop), or ``None``.

        Raises:
            ApiError: the grammar cannot be compiled (a resource limit).
        """
        if grammar is None:
            return None
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(None, self.compile, grammar)
        except GbnfkitError as exc:
            raise ApiError(
                f"the grammar cannot be compiled: {exc}", code="grammar_too_large"
            ) from None

    @staticmethod
    def matcher(
        compiled: CompiledGrammar | None, triggers: tuple[Trigger, ...]
    ) -> AnyMatcher | None:
        """A fresh matcher (lazy when ``triggers``) for ``compiled``, or ``None``."""
        if compiled is None:
            return None
        return compiled.matcher(triggers=list(triggers)) if triggers else compiled.matcher()

    async def generate(self, job: Job) -> AsyncIterator[Piece | Outcome]:
        """Wait for a free slot, run ``job`` there; yields text pieces, then the Outcome.

        Closing the iterator early (a client that went away) cancels the generation; the
        slot is freed when its thread has stopped.
        """
        loop = asyncio.get_running_loop()
        free = self._slots()
        self.waiting += 1
        try:
            runner = await free.take(job.prompt_ids)
        finally:
            self.waiting -= 1
        self.busy += 1
        pieces: asyncio.Queue[Piece | Outcome | BaseException] = asyncio.Queue()

        def emit(piece: Piece) -> None:
            loop.call_soon_threadsafe(pieces.put_nowait, piece)

        def release() -> None:
            self.busy -= 1
            free.give(runner)

        def work() -> None:
            try:
                outcome: Outcome | BaseException = run_job(runner, job, emit)
            except BaseException as exc:  # handed to the request, which reports it
                outcome = exc
            # the slot is free before the outcome is seen (callbacks run in order)
            loop.call_soon_threadsafe(release)
            loop.call_soon_threadsafe(pieces.put_nowait, outcome)

        loop.run_in_executor(self._executor, work)
        try:
            while True:
                item = await pieces.get()
                if isinstance(item, TriggerRejected):  # the request's grammar and triggers
                    raise ApiError(
                        f"the grammar refuses its trigger: {item}", param="grammar_triggers"
                    ) from None
                if isinstance(item, LimitError):  # the request's grammar, on this output
                    raise ApiError(
                        f"the grammar cannot be followed further: {item}",
                        code="grammar_too_large",
                    ) from None
                if isinstance(item, BaseException):
                    raise item
                yield item
                if isinstance(item, Outcome):
                    return
        finally:
            job.cancel.set()

    def close(self) -> None:
        """Stop generating (running jobs finish, queued ones are dropped) and free the
        models; the engine is unusable afterwards."""
        self._executor.shutdown(wait=True, cancel_futures=True)
        for runner in self._runners:
            close = getattr(runner.llm, "close", None)
            if close is not None:
                close()
