"""gbnfkit in vLLM: a logits-processor plugin (vLLM's v1 ``LogitsProcessor`` interface).

Install gbnfkit beside vLLM; its ``vllm.logits_processors`` entry point registers
:class:`GrammarLogitsProcessor`, so ``vllm serve MODEL`` loads it (or name it:
``vllm serve MODEL --logits-processors gbnfkit.integrations.vllm:GrammarLogitsProcessor``).
A request asks for a grammar through ``SamplingParams.extra_args`` (``vllm_xargs`` in the
OpenAI API's request body):

* ``grammar``: GBNF text; or ``json_schema``: a JSON Schema (an object or its JSON text);
* ``grammar_triggers`` (optional): make it lazy, woken by any of these triggers:
  ``{"type": "word"|"pattern"|"pattern_full"|"token", "value": ...}`` objects, or
  ``"word:<tool_call>"`` strings (vLLM's ``vllm_xargs`` values are strings or lists).

Requests without these run unconstrained. One :class:`~gbnfkit.GrammarCompiler` per
engine serves every request. vLLM is imported when this module is, never by ``import
gbnfkit``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gbnfkit._errors import ArgumentError, GbnfkitError
from gbnfkit._grammar import Grammar
from gbnfkit.integrations._decode import AnyMatcher
from gbnfkit.integrations._requires import VLLM, require
from gbnfkit.tokens._bitmask import allocate_bitmask, apply_bitmask
from gbnfkit.tokens._compiler import GrammarCompiler
from gbnfkit.tokens._trigger import Trigger
from gbnfkit.tokens._vocabulary import Vocabulary

__all__ = ["GrammarLogitsProcessor", "GrammarRequest", "grammar_request"]

_interface = require(
    "vllm.v1.sample.logits_processor", "vllm", VLLM, needed_for="the vLLM logits processor"
)
_BaseProcessor: Any = _interface.LogitsProcessor
_MoveDirectionality: Any = _interface.MoveDirectionality

_TRIGGER_KINDS = {
    "word": Trigger.word,
    "pattern": Trigger.pattern,
    "pattern_full": Trigger.pattern_full,
}


@dataclass(frozen=True)
class GrammarRequest:
    """What a request's ``extra_args`` ask for: the grammar and its triggers (lazy when any)."""

    grammar: Grammar
    triggers: tuple[Trigger, ...] = ()


def _trigger(item: object) -> Trigger:
    if isinstance(item, str):
        kind_text, sep, value_text = item.partition(":")
        if not sep:
            raise ArgumentError(f"a grammar trigger string is 'TYPE:VALUE', not {item!r}")
        item = {"type": kind_text, "value": value_text}
    if not isinstance(item, Mapping):
        raise ArgumentError(f"a grammar trigger is an object {{type, value}}, not {item!r}")
    kind, value = item.get("type"), item.get("value")
    if kind == "token":
        try:
            return Trigger.token(int(str(value)))
        except ValueError:
            raise ArgumentError(f"a 'token' trigger's value is a token id, not {value!r}") from None
    make = _TRIGGER_KINDS.get(str(kind))
    if make is None or not isinstance(value, str):
        raise ArgumentError(
            f"a grammar trigger's type is word, pattern, pattern_full or token, with a "
            f"string value: {item!r}"
        )
    return make(value)


def grammar_request(extra_args: Mapping[str, Any] | None) -> GrammarRequest | None:
    """The grammar request in ``extra_args`` (``None``: the request is unconstrained).

    Raises:
        ValueError: a broken grammar, schema or trigger (vLLM answers HTTP 400); the
            message is gbnfkit's, with the position or JSON pointer.
    """
    args = extra_args or {}
    gbnf, schema = args.get("grammar"), args.get("json_schema")
    if gbnf is None and schema is None:
        if args.get("grammar_triggers"):
            raise ArgumentError("grammar_triggers need a grammar or json_schema")
        return None
    if gbnf is not None and schema is not None:
        raise ArgumentError("give grammar or json_schema, not both")
    try:
        if gbnf is not None:
            if not isinstance(gbnf, str):
                raise ArgumentError("grammar is GBNF text")
            grammar = Grammar.from_gbnf(gbnf)
        else:  # an object, or its JSON text (read by the converter, nesting bounded)
            grammar = Grammar.from_json_schema(schema)
    except GbnfkitError as exc:
        raise ArgumentError(str(exc)) from None
    items = args.get("grammar_triggers") or []
    if not isinstance(items, Sequence) or isinstance(items, str):
        items = [items]
    return GrammarRequest(grammar, tuple(_trigger(item) for item in items))


def _vocabulary(vllm_config: Any) -> Vocabulary:
    """The model's vocabulary: a local ``tokenizer.json`` (or its directory), a GGUF file,
    or a Hugging Face tokenizer loaded with ``transformers``."""
    model_config = vllm_config.model_config
    name = str(model_config.tokenizer)
    size = int(model_config.get_vocab_size())
    path = Path(name)
    if path.suffix == ".gguf" and path.is_file():
        vocabulary = Vocabulary.from_gguf(path)
    elif path.exists():
        return Vocabulary.from_tokenizer_json(path, size=size)
    else:
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(
            name,
            revision=getattr(model_config, "tokenizer_revision", None),
            trust_remote_code=bool(getattr(model_config, "trust_remote_code", False)),
        )
        return Vocabulary.from_huggingface(tokenizer, size=size)
    if vocabulary.size >= size:
        return vocabulary
    ids = range(vocabulary.size)
    return Vocabulary(
        [vocabulary.token_bytes(i) for i in ids],
        vocabulary.eos_token_ids,
        vocabulary.special_token_ids,
        size=size,
    )


@dataclass
class _Row:
    """One constrained request in the batch: its matcher, the list vLLM appends its
    output tokens to, and how many of them the matcher has taken."""

    matcher: AnyMatcher
    output: list[int]
    seen: int = 0
    failed: bool = field(default=False)


def _added_request(entry: Sequence[Any]) -> tuple[int, Any, list[int]]:
    """``(index, params, output ids)`` of a ``BatchUpdate.added`` entry, in either layout
    vLLM has used: ``(index, params, prompt_ids, output_ids)`` and the earlier
    ``(prompt_ids, index, params, output_ids)`` (the batch index is the one int)."""
    if len(entry) != 4:
        raise ArgumentError(f"a vLLM added request has 4 fields, not {len(entry)}")
    first, second, third, output = entry
    if isinstance(first, int) and not isinstance(first, bool):
        return first, second, output
    return int(second), third, output


class GrammarLogitsProcessor(_BaseProcessor):  # type: ignore[misc]
    """vLLM's logits processor for gbnfkit grammars (see the module's documentation).

    Each step vLLM calls :meth:`update_state` (new, finished and moved requests; new
    output tokens) and then :meth:`apply` with the batch's logits: the rows of
    constrained requests get ``-inf`` on every token their grammar does not allow.
    """

    @classmethod
    def validate_params(cls, sampling_params: Any) -> None:
        grammar_request(getattr(sampling_params, "extra_args", None))

    def __init__(self, vllm_config: Any, device: Any, is_pin_memory: bool) -> None:
        self._vocabulary = _vocabulary(vllm_config)
        self._compiler = GrammarCompiler(self._vocabulary)
        self._rows: dict[int, _Row] = {}
        self._device = device

    def is_argmax_invariant(self) -> bool:
        return False  # masking changes the greedy choice

    @property
    def compiler(self) -> GrammarCompiler:
        """The compiler every request shares."""
        return self._compiler

    def _add(self, index: int, params: Any, output: list[int]) -> None:
        self._rows.pop(index, None)
        request = grammar_request(getattr(params, "extra_args", None))
        if request is None:
            return
        compiled = self._compiler.compile(request.grammar)
        matcher: AnyMatcher = (
            compiled.matcher(triggers=list(request.triggers))
            if request.triggers
            else compiled.matcher()
        )
        self._rows[index] = _Row(matcher, output)

    def update_state(self, batch_update: Any) -> None:
        if batch_update is not None:
            for index in batch_update.removed:
                self._rows.pop(index, None)
            for entry in batch_update.added:
                self._add(*_added_request(entry))
            for first, second, direction in batch_update.moved:
                a, b = self._rows.pop(first, None), self._rows.pop(second, None)
                if a is not None:
                    self._rows[second] = a
                if b is not None and direction == _MoveDirectionality.SWAP:
                    self._rows[first] = b
        for row in self._rows.values():
            if row.failed:
                continue
            for token in row.output[row.seen :]:
                if row.matcher.is_terminated:
                    break
                try:
                    row.matcher.accept_token(token)
                except GbnfkitError:  # another processor let it through: stop holding it
                    row.failed = True
                    break
            row.seen = len(row.output)

    def apply(self, logits: Any) -> Any:
        live = [
            (index, row)
            for index, row in self._rows.items()
            if not row.failed and not row.matcher.is_terminated and index < logits.shape[0]
        ]
        if not live:
            return logits
        bitmask = allocate_bitmask(int(logits.shape[0]), self._vocabulary.size)
        for index, row in live:
            row.matcher.fill_bitmask(bitmask, index)
        indices = [index for index, _ in live]
        width = min(int(logits.shape[-1]), self._vocabulary.size)
        apply_bitmask(logits[:, :width], bitmask, indices=indices)
        if logits.shape[-1] > width:  # padding logits: never a token
            logits[indices, width:] = float("-inf")
        return logits
