"""gbnfkit's own decoding loop: prompt -> model steps -> Sampler (with the grammar) -> text.

The loop is the same for every runtime; a :class:`ModelRunner` hides the runtime (it
turns a prompt into token ids and token ids into logits). Text streams as it is decoded:
the bytes of each token go through an incremental UTF-8 decoder, so a character split
across tokens is printed whole once its last byte arrives.
"""

from __future__ import annotations

import codecs
import enum
import time
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from gbnfkit._arguments import expect
from gbnfkit._errors import ArgumentError, SamplingError, TriggerRejected
from gbnfkit._grammar import Grammar
from gbnfkit.sampling import Sampler, SamplingParams
from gbnfkit.sampling._logits import to_rows
from gbnfkit.tokens._compiled import CompiledGrammar
from gbnfkit.tokens._compiler import GrammarCompiler
from gbnfkit.tokens._lazy import LazyMatcher
from gbnfkit.tokens._matcher import Matcher
from gbnfkit.tokens._trigger import Trigger, TriggerKind
from gbnfkit.tokens._vocabulary import Vocabulary, require_same_vocabulary

__all__ = [
    "AnyMatcher",
    "DecodeStats",
    "Decoder",
    "Generation",
    "GenerationResult",
    "GrammarSpec",
    "ModelRunner",
    "StopReason",
    "take_token",
]

AnyMatcher = Matcher | LazyMatcher
"""A matcher, plain or lazy."""

GrammarSpec = Grammar | CompiledGrammar | Matcher | LazyMatcher | None
"""What constrains a generation: a grammar (compiled for the model's vocabulary on the
way), a grammar already compiled for it, a ready matcher (used as it is, so its state
can be read afterwards; ``reset()`` it to start over), or nothing."""


class ModelRunner(Protocol):
    """One model of a runtime, as the decoding loop sees it (one sequence at a time)."""

    @property
    def vocabulary(self) -> Vocabulary:
        """The model's vocabulary (its logits width is ``vocabulary.size`` or more)."""
        ...

    @property
    def context_size(self) -> int | None:
        """How many tokens (prompt and output) fit, or ``None`` when unbounded."""
        ...

    def encode_prompt(self, prompt: str, *, raw: bool) -> list[int]:
        """The token ids of ``prompt``: through the model's chat template unless ``raw``."""
        ...

    def start(self, prompt_ids: Sequence[int]) -> Any:
        """Forget any previous sequence, evaluate ``prompt_ids``; the next token's logits."""
        ...

    def step(self, token_id: int) -> Any:
        """Append ``token_id`` to the sequence; the next token's logits."""
        ...


class StopReason(enum.Enum):
    """Why a generation ended."""

    EOS = "eos"
    """The model sampled an end-of-sequence token (allowed only where the grammar may end)."""
    MAX_TOKENS = "max_tokens"
    """``max_tokens`` tokens were generated."""
    CONTEXT = "context"
    """The model's context is full."""
    GRAMMAR = "grammar"
    """The grammar is complete and allows no more tokens, and the vocabulary has no
    end-of-sequence token to end with (with one, the model samples it: :attr:`EOS`)."""


@dataclass(frozen=True)
class DecodeStats:
    """Timings of one generation (seconds, from ``time.perf_counter``).

    Attributes:
        tokens: tokens sampled (the final end-of-sequence token included).
        prompt_tokens: tokens of the prompt (after the chat template).
        first_token_seconds: from the start (prompt evaluation included) to the first
            sampled token: the latency a user sees.
        decode_seconds: from the prompt's logits to the end: sampling and model steps
            (and whatever the consumer of a streamed generation does between pieces).
        grammar_seconds: the part of ``decode_seconds`` spent in the grammar (masks,
            token checks, advancing the matcher).
    """

    tokens: int
    prompt_tokens: int
    first_token_seconds: float
    decode_seconds: float
    grammar_seconds: float

    @property
    def tokens_per_second(self) -> float:
        """Sampled tokens per second of decoding (prompt evaluation excluded)."""
        return self.tokens / self.decode_seconds if self.decode_seconds > 0 else 0.0

    @property
    def grammar_share(self) -> float:
        """The fraction of decoding time spent in the grammar (0 without one)."""
        return self.grammar_seconds / self.decode_seconds if self.decode_seconds > 0 else 0.0

    def summary(self) -> str:
        """One line: ``42 tokens, 131.0 tokens/s, grammar 2.1% of decode time, ...``."""
        return (
            f"{self.tokens} tokens, {self.tokens_per_second:.1f} tokens/s, "
            f"grammar {100 * self.grammar_share:.1f}% of decode time, "
            f"first token {1000 * self.first_token_seconds:.0f} ms"
        )


@dataclass(frozen=True)
class GenerationResult:
    """The outcome of one generation.

    Attributes:
        text: the generated text (special tokens left out).
        token_ids: the sampled tokens, the final end-of-sequence token included.
        stop: why it ended.
        complete: whether the text is a complete match of the grammar (always true
            without one; false when ``max_tokens`` or the context cut it short).
        stats: timings.
    """

    text: str
    token_ids: tuple[int, ...]
    stop: StopReason
    complete: bool
    stats: DecodeStats


class _TimedMatcher:
    """A matcher that adds the time spent in its methods to ``seconds`` (the grammar share)."""

    __slots__ = ("_inner", "seconds")

    def __init__(self, inner: AnyMatcher) -> None:
        self._inner = inner
        self.seconds = 0.0

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._inner, name)
        if not callable(value):
            return value

        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return value(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - start

        return timed


def take_token(sampler: Sampler, logits: Any) -> int:
    """Sample the next token and accept it (advancing the grammar and the histories).

    A lazy grammar's masks allow every token while it sleeps, including one that wakes
    it on text the grammar refuses (``TriggerRejected``, ``docs/lazy.md``): such a token
    is banned for this step and another one sampled, so the loop never stops on it.

    Raises:
        TriggerRejected: the grammar refuses a trigger word itself (it can never follow
            its trigger: a mistake in the grammar or the triggers, not in the model).
        SamplingError: no token is left (every other one is banned or refused).
    """
    mu = sampler.mu
    token = sampler.sample(logits)
    banned: Any = None
    while True:
        try:
            sampler.accept(token)
            return token
        except TriggerRejected as error:
            trigger = error.trigger
            if trigger.kind is TriggerKind.WORD and error.position < len(str(trigger.value)):
                raise  # the replay starts with the word: the grammar refuses the word
            if banned is None:
                banned = np.array(to_rows(logits)[0], copy=True)
            banned[token] = -np.inf
            sampler.mu = mu  # mirostat moves once, for the token kept
            token = sampler.sample(banned)


def _finished(matcher: AnyMatcher | None, eos: frozenset[int]) -> bool:
    """Whether ``matcher``'s text is complete and can take no token at all, in a vocabulary
    without an end-of-sequence token: the generation is over, not stuck."""
    if matcher is None or eos or not matcher.is_complete:
        return False
    return matcher.allowed_token_ids().size == 0


class Generation(Iterator[str]):
    """The text of a generation as it is decoded, piece by piece.

    Iterate for the pieces; once exhausted, :attr:`result` holds the whole
    :class:`GenerationResult`. Breaking out early leaves the result unset.
    """

    def __init__(self, steps: Generator[str, None, GenerationResult]) -> None:
        self._steps = steps
        self._result: GenerationResult | None = None

    def __iter__(self) -> Generation:
        return self

    def __next__(self) -> str:
        try:
            return next(self._steps)
        except StopIteration as stop:
            if self._result is None:  # an exhausted generator stops again with no value
                self._result = stop.value
            raise

    @property
    def result(self) -> GenerationResult:
        """The finished generation.

        Raises:
            RuntimeError: the generation has not been iterated to its end.
        """
        if self._result is None:
            raise RuntimeError("the generation is not finished: iterate over it first")
        return self._result


class Decoder:
    """Constrained generation on one model: prompt in, text out (streamed).

    The model holds one sequence at a time. Generations may still be interleaved (a
    stream left unfinished while another one runs, then resumed): a generation that
    resumes after another one used the model has the model evaluate its prompt and
    tokens again (once per switch) and goes on as if it had never been interrupted.

    Args:
        runner: the model (see :class:`ModelRunner`; the runtime integrations make one).
        compiler: compiles grammars for the model's vocabulary (default: a new
            :class:`~gbnfkit.GrammarCompiler`, made at the first grammar, which keeps
            recent grammars compiled).
    """

    def __init__(self, runner: ModelRunner, *, compiler: GrammarCompiler | None = None) -> None:
        self._runner = runner
        self._compiler = compiler
        self._sequence: object = None  # the generation whose sequence the model holds

    @property
    def runner(self) -> ModelRunner:
        """The model."""
        return self._runner

    @property
    def vocabulary(self) -> Vocabulary:
        """The model's vocabulary."""
        return self._runner.vocabulary

    @property
    def compiler(self) -> GrammarCompiler:
        """The grammar compiler for the model's vocabulary (made when first needed)."""
        if self._compiler is None:
            self._compiler = GrammarCompiler(self._runner.vocabulary)
        return self._compiler

    def matcher(
        self, grammar: GrammarSpec, *, triggers: Iterable[Trigger] = ()
    ) -> AnyMatcher | None:
        """A fresh matcher for ``grammar`` (lazy when ``triggers`` are given), or ``None``."""
        if isinstance(triggers, (str, bytes)) or not isinstance(triggers, Iterable):
            raise ArgumentError(
                f"triggers must be a list of Trigger values, not {type(triggers).__name__}"
            )
        trigger_list = list(triggers)
        if grammar is None:
            if trigger_list:
                raise ArgumentError("triggers need a grammar to wake")
            return None
        if isinstance(grammar, (Matcher, LazyMatcher)):
            if trigger_list:
                raise ArgumentError("give triggers with a grammar, not with a ready matcher")
            self._check_vocabulary(grammar.vocabulary, "the matcher")
            return grammar
        if isinstance(grammar, CompiledGrammar):
            self._check_vocabulary(grammar.vocabulary, "the compiled grammar")
            compiled = grammar
        else:
            compiled = self.compiler.compile(grammar)
        if trigger_list:
            return compiled.matcher(triggers=trigger_list)
        return compiled.matcher()

    def _check_vocabulary(self, vocabulary: Vocabulary, what: str) -> None:
        require_same_vocabulary(
            vocabulary, self.vocabulary, what, "the model's",
            "; compile the grammar with this decoder's compiler, or pass the Grammar itself",
        )

    def stream(
        self,
        prompt: str,
        *,
        grammar: GrammarSpec = None,
        triggers: Iterable[Trigger] = (),
        params: SamplingParams | None = None,
        max_tokens: int = 256,
        raw: bool = False,
    ) -> Generation:
        """The generation for ``prompt`` as an iterator of text pieces.

        Args:
            prompt: the user's message (through the model's chat template unless ``raw``).
            grammar: what the output must match (see :data:`GrammarSpec`).
            triggers: make the grammar lazy: free text until one of them fires.
            params: the sampling chain (default: :class:`~gbnfkit.SamplingParams`'s defaults).
            max_tokens: the most tokens to generate (at least 1).
            raw: give ``prompt`` to the model as it is, without the chat template.
        """
        expect(prompt, str, "prompt")
        expect(max_tokens, (int, np.integer), "max_tokens")
        if max_tokens < 1:
            raise ArgumentError(f"max_tokens must be at least 1, not {max_tokens}")
        expect(raw, bool, "raw")
        matcher = self.matcher(grammar, triggers=triggers)
        return Generation(self._run(prompt, matcher, params or SamplingParams(), max_tokens, raw))

    def generate(
        self,
        prompt: str,
        *,
        grammar: GrammarSpec = None,
        triggers: Iterable[Trigger] = (),
        params: SamplingParams | None = None,
        max_tokens: int = 256,
        raw: bool = False,
        on_text: Callable[[str], object] | None = None,
    ) -> GenerationResult:
        """Generate for ``prompt`` (arguments as :meth:`stream`); ``on_text`` gets each piece."""
        if on_text is not None and not callable(on_text):
            raise ArgumentError(f"on_text must be callable, not {type(on_text).__name__}")
        generation = self.stream(
            prompt,
            grammar=grammar,
            triggers=triggers,
            params=params,
            max_tokens=max_tokens,
            raw=raw,
        )
        for piece in generation:
            if on_text is not None:
                on_text(piece)
        return generation.result

    def _run(
        self,
        prompt: str,
        matcher: AnyMatcher | None,
        params: SamplingParams,
        max_tokens: int,
        raw: bool,
    ) -> Generator[str, None, GenerationResult]:
        runner = self._runner
        vocabulary = runner.vocabulary
        eos = vocabulary.eos_token_ids
        timed = _TimedMatcher(matcher) if matcher is not None else None
        sampler = Sampler(params, matcher=timed, vocabulary=vocabulary)
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        pieces: list[str] = []
        token_ids: list[int] = []

        started = time.perf_counter()
        prompt_ids = runner.encode_prompt(prompt, raw=raw)
        if not prompt_ids:
            raise ArgumentError(
                "the prompt is empty: it has no tokens (the model adds no BOS token), and "
                "the model needs at least one to start from"
            )
        room = max_tokens
        if runner.context_size is not None:
            room = min(room, runner.context_size - len(prompt_ids))
            if room < 1:
                raise ArgumentError(
                    f"the prompt has {len(prompt_ids)} tokens; the model's context holds "
                    f"{runner.context_size}"
                )
        # as llama.cpp's command line and server, the prompt is the penalties' and DRY's
        # history to start with (the grammar does not see it)
        sampler.extend_history(prompt_ids)
        sequence = self._sequence = object()
        logits = runner.start(prompt_ids)
        decoding = time.perf_counter()
        first_token = 0.0
        stop = StopReason.MAX_TOKENS if room == max_tokens else StopReason.CONTEXT
        while True:
            try:
                token = take_token(sampler, logits)
            except SamplingError:
                if not _finished(matcher, eos):
                    raise
                stop = StopReason.GRAMMAR
                break
            if not token_ids:
                first_token = time.perf_counter() - started
            token_ids.append(token)
            if token in eos:
                stop = StopReason.EOS
                break
            data = vocabulary.token_bytes(token)
            if data and token not in vocabulary.special_token_ids:
                piece = decoder.decode(data)
                if piece:
                    pieces.append(piece)
                    yield piece
            if len(token_ids) >= room:
                break
            if self._sequence is sequence:
                logits = runner.step(token)
            else:  # another generation used the model while this one was paused
                self._sequence = sequence
                logits = runner.start([*prompt_ids, *token_ids])
        tail = decoder.decode(b"", final=True)
        if tail:
            pieces.append(tail)
            yield tail
        stats = DecodeStats(
            tokens=len(token_ids),
            prompt_tokens=len(prompt_ids),
            first_token_seconds=first_token,
            decode_seconds=time.perf_counter() - decoding,
            grammar_seconds=timed.seconds if timed is not None else 0.0,
        )
        complete = matcher is None or bool(matcher.is_complete)
        return GenerationResult("".join(pieces), tuple(token_ids), stop, complete, stats)
