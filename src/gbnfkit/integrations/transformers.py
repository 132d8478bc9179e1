"""gbnfkit with Hugging Face transformers (``pip install 'gbnfkit[transformers]'``).

* :class:`GrammarLogitsProcessor`: constrains ``model.generate(..., logits_processor=
  LogitsProcessorList([processor]))``, batched: one matcher per row, each row its own
  grammar (or none); rows that have ended are marked, never an error.
* :func:`vocabulary_from_tokenizer`: the vocabulary of a tokenizer, as wide as the
  model's logits.
* :func:`load_model`: a local model directory, or a GGUF file (dequantized by
  transformers), never downloaded; :class:`TransformersRunner` and :func:`decoder`:
  gbnfkit's own decoding loop on it.

transformers and torch are imported when one of these is used, never when this module is.
"""

from __future__ import annotations

import enum
import inspect
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from gbnfkit._errors import ArgumentError, InputRejected, VocabularyError
from gbnfkit.integrations._decode import AnyMatcher, Decoder
from gbnfkit.integrations._requires import TRANSFORMERS, require
from gbnfkit.tokens._bitmask import allocate_bitmask, apply_bitmask
from gbnfkit.tokens._compiled import CompiledGrammar
from gbnfkit.tokens._compiler import GrammarCompiler
from gbnfkit.tokens._trigger import Trigger
from gbnfkit.tokens._vocabulary import Vocabulary

__all__ = [
    "GrammarLogitsProcessor",
    "RowState",
    "TransformersRunner",
    "decoder",
    "load_model",
    "set_threads",
    "vocabulary_from_tokenizer",
]


def _torch() -> Any:
    return require("torch", "torch", TRANSFORMERS, needed_for="transformers decoding")


def _transformers() -> Any:
    return require("transformers", "transformers", TRANSFORMERS, needed_for="transformers decoding")


def _eos_ids(value: Any) -> set[int]:
    if isinstance(value, int) and not isinstance(value, bool):
        return {value}
    if isinstance(value, (list, tuple, set)):
        return {int(v) for v in value}
    return set()


def vocabulary_from_tokenizer(tokenizer: Any, model: Any = None) -> Vocabulary:
    """The vocabulary of a transformers ``tokenizer``, sized for ``model``'s logits.

    With ``model``, the size is at least ``model.config.vocab_size`` (models often have
    more logits than tokens; the extra ids are never allowed) and the end-of-sequence
    ids include ``model.generation_config.eos_token_id`` (what ``generate`` stops on).
    """
    eos = _eos_ids(getattr(tokenizer, "eos_token_id", None))
    size: int | None = None
    if model is not None:
        config = getattr(model, "generation_config", None)
        eos |= _eos_ids(getattr(config, "eos_token_id", None))
        width = getattr(getattr(model, "config", None), "vocab_size", None)
        if isinstance(width, int):
            size = max(width, len(tokenizer))
    return Vocabulary.from_huggingface(tokenizer, size=size, eos_token_ids=eos or None)


class RowState(enum.Enum):
    """Where one row of a batch is, for :class:`GrammarLogitsProcessor`."""

    ACTIVE = "active"
    """Being decoded under its grammar."""
    FINISHED = "finished"
    """It accepted an end-of-sequence token; what ``generate`` appends after (padding)
    is ignored and its logits are left alone."""
    STOPPED = "stopped"
    """A token its grammar does not allow arrived without an end-of-sequence token
    before it (another processor or a beam reordering let it through); the row is no
    longer constrained, and :attr:`GrammarLogitsProcessor.rejections` says why."""
    FREE = "free"
    """The row has no grammar."""


class GrammarLogitsProcessor:
    """A ``transformers`` logits processor holding each row of a batch to its grammar.

    Args:
        grammars: one compiled grammar for every row, or one per row (``None`` leaves
            that row free). With ``num_return_sequences=n`` the batch has ``n`` rows per
            grammar, in order (as ``generate`` expands them).
        triggers: make every grammar lazy (free text until a trigger fires).

    Called by ``generate`` with the tokens so far ``(batch, length)`` and the next
    logits ``(batch, V)`` (``V`` may exceed the vocabulary: the extra ids are set to
    ``-inf``). The first call takes its tokens as the prompts; each later call that is
    the last call's tokens plus one more per row (``generate`` adds one per step) first
    advances every row by that token. Any other call starts a new generation: the next
    ``generate``, whose prompt may be longer than the last output, extend it (a chat's
    next turn) or be one token longer by chance. Works on logits on any device.
    """

    def __init__(
        self,
        grammars: CompiledGrammar | Sequence[CompiledGrammar | None],
        *,
        triggers: Iterable[Trigger] = (),
    ) -> None:
        self._grammars = [grammars] if isinstance(grammars, CompiledGrammar) else list(grammars)
        if not self._grammars:
            raise ArgumentError("give at least one grammar (None for a free row)")
        sizes = {g.vocabulary.size for g in self._grammars if g is not None}
        if len(sizes) > 1:
            raise ArgumentError(
                f"the grammars are compiled for vocabularies of sizes {sorted(sizes)}"
            )
        self._size = sizes.pop() if sizes else 0
        self._triggers = list(triggers)
        self._matchers: list[AnyMatcher | None] = []
        self._states: list[RowState] = []
        self._length = -1
        self._ids: Any = None  # the last call's tokens
        self.rejections: dict[int, InputRejected] = {}
        """Row -> the rejection that stopped it (rows in :attr:`RowState.STOPPED`)."""

    @property
    def row_states(self) -> tuple[RowState, ...]:
        """The state of each row (empty before the first call)."""
        return tuple(self._states)

    @property
    def matchers(self) -> tuple[AnyMatcher | None, ...]:
        """Each row's matcher (``None`` for a free row; empty before the first call)."""
        return tuple(self._matchers)

    def _start(self, batch: int) -> None:
        if batch % len(self._grammars):
            raise ArgumentError(
                f"the batch has {batch} rows, not a multiple of the {len(self._grammars)} grammars"
            )
        per = batch // len(self._grammars)
        self._matchers = []
        for row in range(batch):
            grammar = self._grammars[row // per]
            if grammar is None:
                self._matchers.append(None)
            elif self._triggers:
                self._matchers.append(grammar.matcher(triggers=self._triggers))
            else:
                self._matchers.append(grammar.matcher())
        self._states = [RowState.ACTIVE if m else RowState.FREE for m in self._matchers]
        self.rejections = {}

    def _advance(self, row: int, tokens: list[int]) -> None:
        matcher = self._matchers[row]
        assert matcher is not None
        for token in tokens:
            try:
                matcher.accept_token(token)
            except InputRejected as error:
                self._states[row] = RowState.STOPPED
                self.rejections[row] = error
                return
            except ValueError as error:  # VocabularyError: an id beyond the vocabulary
                self._states[row] = RowState.STOPPED
                self.rejections[row] = InputRejected(0, "", [], token_id=token, reason=str(error))
                return
            if matcher.is_terminated:
                self._states[row] = RowState.FINISHED
                return

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        batch, length = int(input_ids.shape[0]), int(input_ids.shape[1])
        if (
            length != self._length + 1
            or batch != len(self._states)
            or not bool((input_ids[:, :-1] == self._ids).all())
        ):
            self._length = -1  # not generate's next step: a new generation
        if self._length < 0:
            self._start(batch)
        else:
            new = input_ids[:, self._length :].tolist()
            for row, state in enumerate(self._states):
                if state is RowState.ACTIVE:
                    self._advance(row, new[row])
        self._length = length
        self._ids = input_ids  # generate makes a new tensor at each step
        active = [row for row, state in enumerate(self._states) if state is RowState.ACTIVE]
        if not active:
            return scores
        # a bitmask row per batch row: apply_bitmask's indices name rows of both arrays
        bitmask = allocate_bitmask(len(self._states), self._size)
        for row in active:
            matcher = self._matchers[row]
            assert matcher is not None
            matcher.fill_bitmask(bitmask, row)
        width = min(int(scores.shape[-1]), self._size)
        apply_bitmask(scores[:, :width], bitmask, indices=active)
        if scores.shape[-1] > width:
            if isinstance(scores, np.ndarray):
                scores[np.asarray(active), width:] = -np.inf
            else:
                rows = _torch().as_tensor(active, device=scores.device)
                scores[rows, width:] = float("-inf")
        return scores


def set_threads(count: int) -> None:
    """Let torch use ``count`` threads in this process (``torch.set_num_threads``)."""
    _torch().set_num_threads(count)


def load_model(path: str | os.PathLike[str], **kwargs: Any) -> tuple[Any, Any]:
    """``(model, tokenizer)`` from a local Hugging Face model directory or a GGUF file.

    Never downloads (``local_files_only``). A ``.gguf`` file is dequantized by
    transformers (its ``gguf_file`` support, which needs the ``gguf`` package). ``kwargs``
    go to ``AutoModelForCausalLM.from_pretrained``. The model is put in eval mode.

    Raises:
        MissingDependencyError: transformers, torch or gguf is not installed.
        FileNotFoundError: ``path`` does not exist.
    """
    transformers = _transformers()
    _torch()
    file = Path(path)
    if not file.exists():
        raise FileNotFoundError(f"no model file or directory {str(file)!r}")
    options: dict[str, Any] = {"local_files_only": True}
    folder = file
    if file.is_file():
        require("gguf", "gguf", TRANSFORMERS, needed_for="loading a GGUF file with transformers")
        folder, options["gguf_file"] = file.parent, file.name
    logging = transformers.utils.logging
    bars = logging.is_progress_bar_enabled()
    logging.disable_progress_bar()
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(str(folder), **options)
        model = transformers.AutoModelForCausalLM.from_pretrained(str(folder), **options, **kwargs)
    finally:
        if bars:
            logging.enable_progress_bar()
    model.eval()
    return model, tokenizer


def _cache_argument(model: Any) -> str:
    """The name of the key/value cache in the model's ``forward`` and output: ``cache``
    since transformers 5 renamed it (``past_key_values`` then warns, and goes in 5.40),
    ``past_key_values`` before."""
    try:
        parameters = inspect.signature(model.forward).parameters
    except (AttributeError, TypeError, ValueError):
        return "past_key_values"
    return "cache" if "cache" in parameters else "past_key_values"


class TransformersRunner:
    """A transformers causal LM as a :class:`~gbnfkit.integrations.ModelRunner`.

    Runs the model one token at a time with its key/value cache, under
    ``torch.inference_mode``; the chat template is the tokenizer's, when it has one.

    Raises:
        VocabularyError: ``vocabulary`` (or :func:`decoder`'s compiler's) has fewer
            tokens than the tokenizer: it is another model's.
    """

    def __init__(self, model: Any, tokenizer: Any, *, vocabulary: Vocabulary | None = None):
        self._torch = _torch()
        self._model = model
        self._tokenizer = tokenizer
        if vocabulary is not None and vocabulary.size < len(tokenizer):
            # the tokenizer's ids past it would be out of the vocabulary, and the
            # logits cut to it (as LlamaRunner, which knows the model's exact width)
            raise VocabularyError(
                f"the vocabulary has {vocabulary.size} tokens but the tokenizer "
                f"{len(tokenizer)}: it is another model's (use "
                "vocabulary_from_tokenizer(tokenizer, model))"
            )
        self._vocabulary = vocabulary or vocabulary_from_tokenizer(tokenizer, model)
        self._past: Any = None
        self._device = getattr(model, "device", None)
        self._cache_name = _cache_argument(model)

    @property
    def model(self) -> Any:
        """The model."""
        return self._model

    @property
    def tokenizer(self) -> Any:
        """The tokenizer."""
        return self._tokenizer

    @property
    def vocabulary(self) -> Vocabulary:
        return self._vocabulary

    @property
    def context_size(self) -> int | None:
        width = getattr(self._model.config, "max_position_embeddings", None)
        return int(width) if isinstance(width, int) else None

    @property
    def has_chat_template(self) -> bool:
        """Whether the tokenizer has a chat template."""
        return bool(getattr(self._tokenizer, "chat_template", None))

    def encode_prompt(self, prompt: str, *, raw: bool) -> list[int]:
        if raw or not self.has_chat_template:
            return list(self._tokenizer(prompt)["input_ids"])
        text = self._tokenizer.apply_chat_template(
            [{"role": "user", "content": prompt}], add_generation_prompt=True, tokenize=False
        )
        return list(self._tokenizer(text, add_special_tokens=False)["input_ids"])

    def _forward(self, ids: Sequence[int]) -> npt.NDArray[np.float32]:
        torch = self._torch
        with torch.inference_mode():
            tensor = torch.tensor([list(ids)], dtype=torch.long, device=self._device)
            out = self._model(input_ids=tensor, use_cache=True, **{self._cache_name: self._past})
            self._past = getattr(out, self._cache_name)
            logits = out.logits[0, -1].float().cpu().numpy()
        return np.asarray(logits, dtype=np.float32)

    def start(self, prompt_ids: Sequence[int]) -> npt.NDArray[np.float32]:
        self._past = None
        return self._forward(prompt_ids)

    def step(self, token_id: int) -> npt.NDArray[np.float32]:
        return self._forward([token_id])


def decoder(model: Any, tokenizer: Any, *, compiler: GrammarCompiler | None = None) -> Decoder:
    """gbnfkit's decoding loop on a transformers model: a :class:`~gbnfkit.integrations.Decoder`."""
    runner = TransformersRunner(
        model, tokenizer, vocabulary=compiler.vocabulary if compiler else None
    )
    return Decoder(runner, compiler=compiler)
