"""The decoding loop on a scripted model: streaming, stop reasons, the grammar's hold."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import pytest

from gbnfkit import (
    ArgumentError,
    Grammar,
    SamplingError,
    SamplingParams,
    Trigger,
    TriggerRejected,
    Vocabulary,
    VocabularyError,
    compile,
)
from gbnfkit.integrations import Decoder, StopReason

# 0 "{", 1 "}", 2 first byte of "é", 3 its second byte, 4 "a", 5 end of sequence
VOCABULARY = Vocabulary([b"{", b"}", b"\xc3", b"\xa9", b"a", None], eos_token_ids=[5])
GREEDY = SamplingParams(temperature=0.0)


class ScriptedModel:
    """A model that prefers the next token of ``script`` (then the end), 6 logits wide."""

    def __init__(self, script: Sequence[int], context_size: int | None = None) -> None:
        self._script = list(script)
        self._context = context_size
        self._position = 0
        self.seen: list[int] = []

    @property
    def vocabulary(self) -> Vocabulary:
        return VOCABULARY

    @property
    def context_size(self) -> int | None:
        return self._context

    def encode_prompt(self, prompt: str, *, raw: bool) -> list[int]:
        return [4] * len(prompt) if raw else [0, *([4] * len(prompt)), 1]

    def _logits(self) -> npt.NDArray[np.float32]:
        logits = np.zeros(6 + 2, dtype=np.float32)  # two padding logits beyond the vocabulary
        wanted = self._script[self._position] if self._position < len(self._script) else 5
        logits[wanted] = 10.0
        logits[6:] = 50.0  # padding ids must never be sampled
        return logits

    def start(self, prompt_ids: Sequence[int]) -> npt.NDArray[np.float32]:
        self._position = 0
        self.seen = list(prompt_ids)
        return self._logits()

    def step(self, token_id: int) -> npt.NDArray[np.float32]:
        self.seen.append(token_id)
        self._position += 1
        return self._logits()


def test_a_character_split_across_tokens_streams_whole() -> None:
    decoder = Decoder(ScriptedModel([4, 2, 3, 4]))
    generation = decoder.stream("x", params=GREEDY)
    assert list(generation) == ["a", "é", "a"]
    result = generation.result
    assert result.text == "aéa"
    assert result.token_ids == (4, 2, 3, 4, 5)
    assert result.stop is StopReason.EOS and result.complete
    assert result.stats.tokens == 5 and result.stats.prompt_tokens == 3


def test_the_grammar_holds_the_model() -> None:
    model = ScriptedModel([4, 4, 4])  # wants "aaa", the grammar wants "{a}"
    decoder = Decoder(model)
    result = decoder.generate(
        "x", grammar=Grammar.from_gbnf('root ::= "{" "a"* "}"'), params=GREEDY, max_tokens=10
    )
    assert result.text.startswith("{") and result.text.endswith("}")
    assert result.stop is StopReason.EOS and result.complete
    assert 0.0 < result.stats.grammar_share < 1.0


def test_a_finished_generation_keeps_its_result_when_asked_for_more() -> None:
    # a next() after the end set the result to None: .result then said "not finished"
    # (found by bughunt7)
    generation = Decoder(ScriptedModel([0, 4, 1])).stream(
        "x", grammar=Grammar.from_gbnf('root ::= "{" "a"* "}"'), params=GREEDY
    )
    assert "".join(generation) == "{a}"
    assert next(generation, None) is None and list(generation) == []
    assert generation.result.text == "{a}" and generation.result.stop is StopReason.EOS


def test_max_tokens_cuts_short_and_says_so() -> None:
    decoder = Decoder(ScriptedModel([0, 4, 4, 4, 4]))
    pieces: list[str] = []
    result = decoder.generate(
        "x",
        grammar=Grammar.from_gbnf('root ::= "{" "a"* "}"'),
        params=GREEDY,
        max_tokens=3,
        on_text=pieces.append,
    )
    assert result.text == "".join(pieces) == "{aa"
    assert result.stop is StopReason.MAX_TOKENS and not result.complete


class NoEndModel:
    """A model whose vocabulary ("{", "}", "a") has no end-of-sequence token."""

    vocabulary = Vocabulary([b"{", b"}", b"a"])
    context_size = None

    def encode_prompt(self, prompt: str, *, raw: bool) -> list[int]:
        return [2]

    def start(self, prompt_ids: Sequence[int]) -> npt.NDArray[np.float32]:
        return np.array([0.0, 0.0, 1.0], dtype=np.float32)  # "a" where it may come

    def step(self, token_id: int) -> npt.NDArray[np.float32]:
        return self.start([])


def test_a_grammar_that_ends_ends_a_generation_without_an_end_of_sequence_token() -> None:
    # the loop asked for one more token, the grammar allowed none, and the SamplingError
    # lost the whole generation (found by bughunt7)
    decoder = Decoder(NoEndModel())
    for gbnf, text in (('root ::= "{" "a"? "a"? "}"', "{aa}"), ('root ::= ""', "")):
        result = decoder.generate("x", grammar=Grammar.from_gbnf(gbnf), params=GREEDY)
        assert (result.text, result.stop, result.complete) == (text, StopReason.GRAMMAR, True)
    endless = decoder.generate(
        "x", grammar=Grammar.from_gbnf('root ::= "a"+'), params=GREEDY, max_tokens=4
    )
    assert endless.text == "aaaa" and endless.stop is StopReason.MAX_TOKENS
    with pytest.raises(SamplingError):  # stuck, not finished: still an error
        decoder.generate("x", grammar=Grammar.from_gbnf('root ::= "a" "b"'), params=GREEDY)


def test_the_context_bounds_the_output() -> None:
    model = ScriptedModel([4] * 10, context_size=6)
    result = Decoder(model).generate("xy", params=GREEDY, raw=True)
    assert result.stop is StopReason.CONTEXT and len(result.token_ids) == 4
    with pytest.raises(ValueError, match="context"):
        Decoder(ScriptedModel([], context_size=2)).generate("xyz", raw=True)


def test_raw_skips_the_template_and_bad_arguments_raise() -> None:
    model = ScriptedModel([])
    Decoder(model).generate("ab", params=GREEDY, raw=True)
    assert model.seen[:2] == [4, 4]
    with pytest.raises(ArgumentError, match="max_tokens"):
        Decoder(model).stream("x", max_tokens=0)
    with pytest.raises(RuntimeError, match="not finished"):
        _ = Decoder(model).stream("x").result


# 0 "x", 1 "{", 2 "a", 3 "}", 4 "{}}" (wakes the grammar below on text it refuses), 5 the end
LAZY_VOCABULARY = Vocabulary([b"x", b"{", b"a", b"}", b"{}}", None], eos_token_ids=[5])


class LazyScriptedModel(ScriptedModel):
    @property
    def vocabulary(self) -> Vocabulary:
        return LAZY_VOCABULARY


def test_a_token_that_wakes_a_lazy_grammar_on_refused_text_is_resampled() -> None:
    # the model wants "x" then "{}}": "{}}" fires the trigger "{" but "{}}" is not a match
    # of the grammar; the loop must ban it and sample again (greedy: "x", the first of the
    # rest), not stop on TriggerRejected
    grammar = Grammar.from_gbnf('root ::= "x"* "{" "a"* "}"')
    model = LazyScriptedModel([0, 4, 1, 2, 3])
    result = Decoder(model).generate(
        "p", grammar=grammar, triggers=[Trigger.word("{")], params=GREEDY, max_tokens=8
    )
    assert result.token_ids == (0, 0, 1, 2, 3, 5)
    assert result.text == "xx{a}"
    assert result.stop is StopReason.EOS and result.complete


def test_a_grammar_that_refuses_its_trigger_word_itself_is_still_an_error() -> None:
    # every firing of "}" would be refused: a mistake in the grammar, not in the model,
    # so it is reported instead of the model being kept away from the word forever
    grammar = Grammar.from_gbnf('root ::= "x"* "{" "a"* "}"')
    model = LazyScriptedModel([0, 3, 1])
    with pytest.raises(TriggerRejected, match="Trigger.word"):
        Decoder(model).generate(
            "p", grammar=grammar, triggers=[Trigger.word("}")], params=GREEDY, max_tokens=8
        )


def test_the_server_loop_resamples_a_token_whose_trigger_text_is_refused() -> None:
    from gbnfkit.server._decode import Finish, Job, Piece, run_job

    compiled = compile(Grammar.from_gbnf('root ::= "x"* "{" "a"* "}"'), LAZY_VOCABULARY)
    job = Job(
        prompt_ids=[0],
        matcher=compiled.matcher(triggers=[Trigger.word("{")]),
        params=GREEDY,
        max_tokens=8,
        stop=(),
        cancel=threading.Event(),
    )
    pieces: list[Piece] = []
    outcome = run_job(LazyScriptedModel([0, 4, 1, 2, 3]), job, pieces.append)
    assert outcome.finish is Finish.STOP
    assert outcome.text == "xx{a}" and outcome.completion_tokens == 5
    assert "".join(piece.text for piece in pieces) == outcome.text


@pytest.mark.parametrize(
    "arguments",
    [
        {"prompt": 5},
        {"prompt": b"x"},
        {"prompt": None},
        {"max_tokens": "5"},
        {"max_tokens": 2.5},
        {"max_tokens": None},
        {"max_tokens": True},
        {"triggers": 5},
        {"triggers": "<tool>", "grammar": Grammar.from_gbnf('root ::= "a"*')},
        {"raw": "yes"},
        {"on_text": "print"},
    ],
)
def test_arguments_of_the_wrong_type_raise_argument_error(arguments: dict[str, object]) -> None:
    prompt = arguments.pop("prompt", "x")
    with pytest.raises(ArgumentError):
        Decoder(ScriptedModel([4])).generate(prompt, params=GREEDY, **arguments)  # type: ignore[arg-type]
    decoder = Decoder(ScriptedModel([4]))
    assert decoder.generate("x", params=GREEDY, max_tokens=np.int64(3)).text == "a"


def test_a_grammar_compiled_for_another_vocabulary_is_refused_up_front() -> None:
    grammar = Grammar.from_gbnf('root ::= "{" "a"* "}"')
    # the same size, "{" and "}" swapped: the ids would have been silently misread
    swapped = Vocabulary([b"}", b"{", b"\xc3", b"\xa9", b"a", None], eos_token_ids=[5])
    smaller = Vocabulary([b"{", b"}", b"a", None], eos_token_ids=[3])
    for vocabulary in (swapped, smaller):
        compiled = compile(grammar, vocabulary)
        for spec in (compiled, compiled.matcher(), compiled.matcher(triggers=[Trigger.word("{")])):
            with pytest.raises(VocabularyError, match="another vocabulary"):
                Decoder(ScriptedModel([0, 4, 1])).generate("x", grammar=spec, params=GREEDY)
    # an equal vocabulary (another object) is fine
    same = Vocabulary(list(VOCABULARY.tokens), eos_token_ids=[5])
    result = Decoder(ScriptedModel([0, 4, 1])).generate(
        "x", grammar=compile(grammar, same), params=GREEDY
    )
    assert result.text == "{a}"


def test_an_empty_prompt_is_an_argument_error_before_the_model_runs() -> None:
    model = ScriptedModel([4])  # encodes a raw "" as no tokens, like a model without BOS
    with pytest.raises(ArgumentError, match="prompt is empty"):
        Decoder(model).generate("", raw=True)
    assert Decoder(model).generate("", params=GREEDY).text == "a"  # the template's tokens


def test_the_server_loop_ends_where_the_grammar_ends_without_an_end_token() -> None:
    from gbnfkit.server._decode import Finish, Job, Piece, run_job

    compiled = compile(Grammar.from_gbnf('root ::= "{" "a"? "a"? "}"'), NoEndModel.vocabulary)
    job = Job([2], compiled.matcher(), GREEDY, 8, (), threading.Event())
    pieces: list[Piece] = []
    outcome = run_job(NoEndModel(), job, pieces.append)
    assert (outcome.text, outcome.finish, outcome.completion_tokens) == ("{aa}", Finish.STOP, 4)
    stuck = compile(Grammar.from_gbnf('root ::= "a" "b"'), NoEndModel.vocabulary)
    with pytest.raises(SamplingError):
        run_job(NoEndModel(), Job([2], stuck.matcher(), GREEDY, 8, (), threading.Event()), print)


def test_penalties_count_the_prompt_as_llama_cpp_does() -> None:
    # llama.cpp's command line and server push the prompt's tokens into the sampler's
    # history (common_sampler_accept(..., false)) before sampling, so a penalty also holds
    # back what the prompt said; gbnfkit's loops started with an empty history, and
    # `gbnfkit generate --presence-penalty` (named after llama.cpp's flag) did not (found
    # by bughunt10)
    from gbnfkit.server._decode import Job, run_job

    penalised = SamplingParams(temperature=0.0, presence_penalty=20.0)

    def first(script: list[int], params: SamplingParams) -> str:
        decoder = Decoder(ScriptedModel(script))
        return decoder.generate("aa", raw=True, params=params, max_tokens=1).text

    assert first([4], penalised) == "{"  # wants "a"; the raw prompt "aa" is two "a" tokens
    job = Job([4, 4], None, penalised, 1, (), threading.Event())
    assert run_job(ScriptedModel([4]), job, print).text == "{"
    # a token the prompt does not hold is not penalised, and without a penalty nothing is
    assert first([1], penalised) == "}"
    assert first([4], GREEDY) == "a"


class FirstTokenModel:
    """A model that holds its sequence and wants the sequence's first token again until
    the sequence has 6 tokens, then the end: what it writes depends on what it holds."""

    vocabulary = VOCABULARY
    context_size = None

    def __init__(self) -> None:
        self.held: list[int] = []
        self.starts = 0

    def encode_prompt(self, prompt: str, *, raw: bool) -> list[int]:
        return [4] * len(prompt) if raw else [0, *([4] * len(prompt)), 1]

    def _logits(self) -> npt.NDArray[np.float32]:
        logits = np.zeros(6, dtype=np.float32)
        logits[self.held[0] if len(self.held) < 6 else 5] = 10.0
        return logits

    def start(self, prompt_ids: Sequence[int]) -> npt.NDArray[np.float32]:
        self.held = list(prompt_ids)
        self.starts += 1
        return self._logits()

    def step(self, token_id: int) -> npt.NDArray[np.float32]:
        self.held.append(token_id)
        return self._logits()


def test_interleaved_generations_each_get_their_own_sequence() -> None:
    # the model holds one sequence: a stream resumed after another generation had run
    # went on from the other one's sequence ("The fruit I mentioned is the Banana" came
    # out as "Them, a terrestrial exoplanet orbiting" on SmolLM2 after a stream about a
    # planet); it now has the model evaluate its own again (found by bughunt10)
    model = FirstTokenModel()
    decoder = Decoder(model)
    alone = [decoder.generate("x", raw=raw, params=GREEDY).text for raw in (True, False)]
    assert alone == ["aaaaa", "{{{"]
    first = decoder.stream("x", raw=True, params=GREEDY)
    pieces = [next(first), next(first)]
    assert decoder.generate("x", params=GREEDY).text == "{{{"  # runs while first waits
    starts = model.starts
    pieces += list(first)
    assert "".join(pieces) == first.result.text == "aaaaa"
    assert model.starts == starts + 1  # evaluated again once, then stepped
    one, two = decoder.stream("x", raw=True, params=GREEDY), decoder.stream("x", params=GREEDY)
    texts = ["", ""]
    for a, b in itertools.zip_longest(one, two, fillvalue=""):  # piece by piece, in turn
        texts[0] += a
        texts[1] += b
    assert texts == alone


def test_mirostat_moves_once_when_a_refused_trigger_token_is_resampled() -> None:
    # "{}}" (4) wakes the grammar on text it refuses: take_token draws again without it,
    # and mu must move once, for the token kept ("x", the only other one: surprise 0),
    # not also for the token thrown away (docs/sampling.md)
    from gbnfkit import Mirostat, Sampler
    from gbnfkit.integrations._decode import take_token

    logits = np.full(6, -np.inf)
    logits[[0, 4]] = 0.0  # "x" and "{}}", equally likely
    compiled = compile(Grammar.from_gbnf('root ::= "x"* "{" "a"* "}"'), LAZY_VOCABULARY)

    def params(seed: int) -> SamplingParams:
        return SamplingParams(mirostat=Mirostat.V2, mirostat_tau=5.0, mirostat_eta=0.1, seed=seed)

    seed = next(s for s in range(200) if Sampler(params(s)).sample(logits) == 4)
    sampler = Sampler(params(seed), compiled.matcher(triggers=[Trigger.word("{")]))
    start = sampler.mu
    assert take_token(sampler, logits) == 0
    assert sampler.mu == pytest.approx(start - 0.1 * (0.0 - 5.0))
