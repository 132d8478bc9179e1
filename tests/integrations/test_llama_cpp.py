"""gbnfkit on llama-cpp-python with the bundled model (SmolLM2-135M-Instruct)."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import llama_cpp
import numpy as np
import pytest
from model_schemas import PROMPTS, SCHEMAS

from gbnfkit import (
    ArgumentError,
    Grammar,
    GrammarCompiler,
    InputRejected,
    MatchStatus,
    SamplingParams,
    Trigger,
    Vocabulary,
    VocabularyError,
)
from gbnfkit.integrations import Decoder, StopReason
from gbnfkit.integrations import llama_cpp as integration

TOOL_CALL = Grammar.from_gbnf(
    r'root ::= "<tool_call>" "{\"name\": \"" [a-z_]{1,12} "\"}" "</tool_call>"'
)
FEW_SHOT_TOOLS = (
    'User: What is the weather in Paris?\nAssistant: <tool_call>{"name": "get_weather"}'
    "</tool_call>\n"
    'User: What time is it in Tokyo?\nAssistant: <tool_call>{"name": "get_time"}</tool_call>\n'
    "User: Convert 10 euros to dollars.\nAssistant:"
)


def test_vocabulary_from_llama_is_the_gguf_vocabulary(llama: Any) -> None:
    vocabulary = Vocabulary.from_llama(llama)
    from_file = Vocabulary.from_gguf(integration.default_model_path())
    assert vocabulary.size == llama.n_vocab() == from_file.size
    assert vocabulary.tokens == from_file.tokens
    assert vocabulary.special_token_ids == from_file.special_token_ids
    # llama.cpp's end-of-generation set: the GGUF's end ids and more
    assert from_file.eos_token_ids <= vocabulary.eos_token_ids
    assert llama.token_eos() in vocabulary.eos_token_ids
    assert integration.vocabulary_from_llama(llama) == vocabulary


def test_vocabulary_from_something_else_is_a_vocabulary_error() -> None:
    from gbnfkit import VocabularyError

    with pytest.raises(VocabularyError, match="expected a loaded llama_cpp.Llama"):
        Vocabulary.from_llama(object())


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_schema_outputs_validate(llama_decoder: Decoder, name: str) -> None:
    schema = SCHEMAS[name]
    grammar = Grammar.from_json_schema(schema)
    for seed in (1, 2):
        result = llama_decoder.generate(
            PROMPTS[name], grammar=grammar, params=SamplingParams(seed=seed), max_tokens=80
        )
        assert result.stop is StopReason.EOS, result.text
        assert result.complete
        jsonschema.validate(json.loads(result.text), schema)


@pytest.mark.parametrize("builtin", ["json", "arithmetic", "list"])
def test_builtin_grammar_outputs_match(llama_decoder: Decoder, builtin: str) -> None:
    grammar = Grammar.builtin(builtin)
    prompts = {
        "json": "A JSON object describing a cat.",
        "arithmetic": "Write an arithmetic expression.",
        "list": "List three fruits.",
    }
    for seed in (1, 2):
        result = llama_decoder.generate(
            prompts[builtin], grammar=grammar, params=SamplingParams(seed=seed), max_tokens=30
        )
        status = grammar.match(result.text).status
        # cut short by max_tokens the text is a valid beginning; ended by EOS it is whole
        assert status == (MatchStatus.ACCEPT if result.complete else MatchStatus.PREFIX)
        if result.stop is StopReason.EOS:
            assert status == MatchStatus.ACCEPT


def test_seeds_reproduce(llama_decoder: Decoder) -> None:
    grammar = Grammar.from_json_schema(SCHEMAS["cat"])

    def run(seed: int) -> str:
        params = SamplingParams(seed=seed, temperature=1.0)
        return llama_decoder.generate(
            PROMPTS["cat"], grammar=grammar, params=params, max_tokens=60
        ).text

    first = run(7)
    assert run(7) == first
    assert len({first, run(8), run(9)}) > 1  # the seed, not the prompt, decides


def test_greedy_paths_agree(llama: Any, llama_decoder: Decoder) -> None:
    # the same model, grammar and prompt, greedy: gbnfkit's loop (both grammar modes),
    # its stream, and llama-cpp-python's own loop held by the LogitsProcessor take the
    # same tokens
    grammar = Grammar.builtin("json")
    prompt = "<|im_start|>user\nA cat as JSON<|im_end|>\n<|im_start|>assistant\n"
    greedy = SamplingParams(temperature=0.0)
    results = [
        llama_decoder.generate(prompt, grammar=grammar, params=params, max_tokens=12, raw=True)
        for params in (greedy, greedy.replace(grammar_first=True))
    ]
    stream = llama_decoder.stream(prompt, grammar=grammar, params=greedy, max_tokens=12, raw=True)
    assert "".join(stream) == results[0].text == results[1].text
    assert stream.result.token_ids == results[0].token_ids == results[1].token_ids
    processor = integration.LogitsProcessor(llama_decoder.compiler.compile(grammar))
    ids = llama_decoder.runner.encode_prompt(prompt, raw=True)
    own: list[int] = []
    for token in llama.generate(
        ids, temp=0.0, reset=True, logits_processor=llama_cpp.LogitsProcessorList([processor])
    ):
        own.append(token)
        if len(own) == 12:
            break
    assert tuple(own) == results[0].token_ids


def test_a_paused_stream_survives_other_uses_of_its_llama(llama: Any) -> None:
    # one Llama holds one sequence: a paused stream resumed after another decoder on the
    # same Llama, or the Llama's own create_completion, had run went on from their
    # sequence ("The fruit I mentioned is the Banana" came out as "Them, a terrestrial
    # exoplanet orbiting"); the runner now evaluates its own again (found by bughunt10)
    mine, other = integration.decoder(llama), integration.decoder(llama)
    greedy = SamplingParams(temperature=0.0)
    alone = mine.generate("Name a fruit.", params=greedy, max_tokens=6).text
    for interrupt in (
        lambda: other.generate("Name a planet.", params=greedy, max_tokens=3),
        lambda: llama.create_completion("The planet", max_tokens=3, temperature=0.0),
    ):
        stream = mine.stream("Name a fruit.", params=greedy, max_tokens=6)
        first = next(stream)
        interrupt()
        assert first + "".join(stream) == alone


def test_a_prompt_that_begins_as_the_last_one_evaluates_only_what_differs(
    llama: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Llama's cache keeps the shared beginning (a chat's system prompt and tools);
    the logits after it are those of evaluating the whole prompt afresh."""
    runner = integration.LlamaRunner(llama)
    system = runner.encode_prompt("You answer briefly. Tools: weather(city), time(zone).", raw=True)
    first = system + llama.tokenize(b" Q: weather in Paris?", add_bos=False)
    second = system + llama.tokenize(b" Q: time in Rome?", add_bos=False)
    llama.reset()
    llama.eval(second)
    fresh = runner._logits()
    evaluated: list[int] = []
    eval_ = llama.eval

    def counting(tokens: list[int]) -> None:
        evaluated.append(len(tokens))
        eval_(tokens)

    monkeypatch.setattr(llama, "eval", counting)
    runner.start(first)
    shared = runner.start(second)
    common = next(i for i, (a, b) in enumerate(zip(first, second, strict=False)) if a != b)
    assert common >= len(system)
    assert evaluated[-1] == len(second) - common  # the system prompt was kept
    assert np.allclose(shared, fresh, atol=1e-4)
    assert int(np.argmax(shared)) == int(np.argmax(fresh))
    again = runner.start(second)  # the same prompt: its last token is evaluated again
    assert evaluated[-1] == 1
    assert np.allclose(again, fresh, atol=1e-4)
    unrelated = runner.encode_prompt("Something else entirely.", raw=True)
    assert unrelated[0] != second[0]
    runner.start(unrelated)  # nothing in common: all of it evaluated
    assert evaluated[-1] == len(unrelated)


def test_lazy_grammar_sleeps_through_plain_text(llama_decoder: Decoder) -> None:
    params = SamplingParams(seed=3)
    free = llama_decoder.generate("Say hello to Ada.", params=params, max_tokens=25)
    compiled = llama_decoder.compiler.compile(TOOL_CALL)
    matcher = compiled.matcher(triggers=[Trigger.word("<tool_call>")])
    lazy = llama_decoder.generate(
        "Say hello to Ada.", grammar=matcher, params=params, max_tokens=25
    )
    assert "<tool_call>" not in free.text
    assert not matcher.is_active
    assert lazy.text == free.text and lazy.token_ids == free.token_ids


def test_lazy_grammar_constrains_after_its_trigger(llama_decoder: Decoder) -> None:
    for seed in (0, 1):
        compiled = llama_decoder.compiler.compile(TOOL_CALL)
        matcher = compiled.matcher(triggers=[Trigger.word("<tool_call>")])
        result = llama_decoder.generate(
            FEW_SHOT_TOOLS,
            grammar=matcher,
            params=SamplingParams(seed=seed),
            max_tokens=30,
            raw=True,
        )
        assert matcher.is_active
        call = result.text[result.text.index("<tool_call>") :]
        assert TOOL_CALL.match(call).status == MatchStatus.ACCEPT, result.text
        assert result.stop is StopReason.EOS


def test_after_think_leaves_the_reasoning_free(llama_decoder: Decoder) -> None:
    prompt = (
        'Question: What is 2+2?\n<think>Two plus two makes four.</think>{"answer": 4}\n'
        'Question: What is 3+5?\n<think>Three plus five makes eight.</think>{"answer": 8}\n'
        "Question: What is 6+1?\n<think>"
    )
    answer = Grammar.from_gbnf(r'root ::= "{\"answer\": " [0-9]{1,3} "}"')
    for seed in (0, 1):
        result = llama_decoder.generate(
            prompt,
            grammar=answer,
            triggers=[Trigger.after("</think>")],
            params=SamplingParams(seed=seed),
            max_tokens=40,
            raw=True,
        )
        reasoning, _, rest = result.text.partition("</think>")
        assert reasoning and answer.match(reasoning).status == MatchStatus.REJECT
        assert answer.match(rest).status == MatchStatus.ACCEPT, result.text
        assert result.complete and result.stop is StopReason.EOS


def test_a_vocabulary_of_another_model_is_refused(llama: Any) -> None:
    # decoder(llm, compiler=...) took the compiler's vocabulary as the model's, whatever
    # its size: logits were cut to it and token ids misread (found by bughunt7)
    other = GrammarCompiler(Vocabulary([b"a", b"b", None], eos_token_ids=[2]))
    with pytest.raises(VocabularyError, match="another model's"):
        integration.decoder(llama, compiler=other)
    with pytest.raises(VocabularyError, match="another model's"):
        integration.LlamaRunner(llama, vocabulary=other.vocabulary)
    own = Vocabulary.from_llama(llama)
    assert integration.LlamaRunner(llama, vocabulary=own).vocabulary is own


def test_logits_processor_in_create_chat_completion(llama: Any) -> None:
    schema = SCHEMAS["person"]
    compiler = GrammarCompiler(Vocabulary.from_llama(llama))
    processor = integration.LogitsProcessor(compiler.compile(Grammar.from_json_schema(schema)))
    for seed in (1, 2):  # one processor, two requests: the second starts over
        response = llama.create_chat_completion(
            [{"role": "user", "content": PROMPTS["person"]}],
            max_tokens=60,
            seed=seed,
            temperature=0.8,
            logits_processor=llama_cpp.LogitsProcessorList([processor]),
        )
        text = response["choices"][0]["message"]["content"]
        assert response["choices"][0]["finish_reason"] == "stop", text
        jsonschema.validate(json.loads(text), schema)


def test_logits_processor_compiles_a_grammar_for_the_model(llama: Any) -> None:
    processor = integration.LogitsProcessor(Grammar.from_gbnf('root ::= "yes" | "no"'), llama)
    prompt = llama.tokenize(b"Is water wet? Answer:", add_bos=True)
    scores = np.zeros(llama.n_vocab() + 8, dtype=np.float32)
    processor(np.asarray(prompt, dtype=np.intc), scores)
    allowed = set(np.flatnonzero(np.isfinite(scores)).tolist())
    assert allowed == set(processor.matcher.allowed_token_ids().tolist())
    assert all(llama.detokenize([t]) in (b"y", b"ye", b"yes", b"n", b"no") for t in allowed)
    assert not np.isfinite(scores[llama.n_vocab() :]).any()  # beyond the vocabulary


def test_logits_processor_refuses_a_grammar_compiled_for_another_model(llama: Any) -> None:
    # the Llama was ignored beside a compiled grammar, so a grammar compiled for another
    # vocabulary masked other tokens than it meant, silently (LlamaRunner refuses it;
    # found by bughunt10)
    other = GrammarCompiler(Vocabulary([b"y", b"n", None], eos_token_ids=[2]))
    compiled = other.compile(Grammar.from_gbnf('root ::= "y" | "n"'))
    with pytest.raises(VocabularyError, match="another model's"):
        integration.LogitsProcessor(compiled, llama)
    integration.LogitsProcessor(compiled)  # without the model there is nothing to check
    own = GrammarCompiler(Vocabulary.from_llama(llama)).compile(Grammar.from_gbnf('root ::= "y"'))
    assert integration.LogitsProcessor(own, llama).matcher.steps == 0


def test_logits_processor_starts_over_at_a_chat_turn_that_extends_the_last() -> None:
    # a chat's next prompt holds the previous prompt and answer and more tokens (the end
    # of turn the processor never saw, the next message): it was taken as more output,
    # and the InputRejected it raised inside llama-cpp-python's sampler callback was
    # printed and ignored, leaving that turn unconstrained (found by bughunt7)
    tokens: list[bytes | None] = [b"Q", b"?", b"y", b"es", b"n", b"o", b" ", None]
    eos = len(tokens) - 1
    vocabulary = Vocabulary(tokens, eos_token_ids=[eos])
    compiled = GrammarCompiler(vocabulary).compile(Grammar.from_gbnf('root ::= "yes" | "no"'))
    processor = integration.LogitsProcessor(compiled)

    def allowed(ids: list[int]) -> set[int]:
        scores = np.zeros(vocabulary.size, dtype=np.float32)
        processor(np.asarray(ids, dtype=np.intc), scores)
        return set(np.flatnonzero(np.isfinite(scores)).tolist())

    first = [0, 1]
    assert allowed(first) == {2, 4}
    assert allowed([*first, 2]) == {3}
    assert allowed([*first, 2, 3]) == {eos}
    second = [*first, 2, 3, eos, 6, 0, 1]  # the answer, its end, the next question
    assert allowed(second) == {2, 4}
    assert allowed([*second, 4]) == {5}
    assert processor.matcher.steps == 1


def test_logits_processor_stops_constraining_after_a_refused_token_not_restart() -> None:
    # a token the grammar refuses (here: "{\n" fires the lazy word "{" on text the grammar
    # refuses; masks while asleep allow it) raised inside llama-cpp-python's callback, and
    # the next call, two tokens past the last one seen, was taken for a new generation:
    # the grammar restarted in the middle of the output, so the rest was held to the
    # grammar from its start and the matcher could end "complete" on an output that is no
    # match (found by bughunt10)
    tokens: list[bytes | None] = [b"Q", b"{", b"{\n", b"a", b"}", None]
    eos = len(tokens) - 1
    vocabulary = Vocabulary(tokens, eos_token_ids=[eos])
    compiled = GrammarCompiler(vocabulary).compile(Grammar.from_gbnf('root ::= "{" [a-z]* "}"'))
    for triggers, refused in (([Trigger.word("{")], 2), ([], 0)):
        processor = integration.LogitsProcessor(compiled, triggers=triggers)

        def allowed(ids: list[int], processor: Any = processor) -> set[int]:
            scores = np.zeros(vocabulary.size, dtype=np.float32)
            processor(np.asarray(ids, dtype=np.intc), scores)
            return set(np.flatnonzero(np.isfinite(scores)).tolist())

        prompt = [0, 0]
        allowed(prompt)
        with pytest.raises(InputRejected):
            allowed([*prompt, refused])  # llama-cpp-python prints it, samples unconstrained
        everything = set(range(vocabulary.size))
        steps = processor.matcher.steps
        for more in ([3], [3, 1], [3, 1, 3], [3, 1, 3, 4]):  # the output goes on: left alone
            assert allowed([*prompt, refused, *more]) == everything
        assert processor.matcher.steps == steps
        assert isinstance(processor.rejection, InputRejected)
        # a new generation (not one token more) is constrained again from the start
        assert allowed([0]) == (everything if triggers else {1})
        assert processor.rejection is None


def test_logits_processor_constrains_every_turn_of_a_chat(llama: Any) -> None:
    processor = integration.LogitsProcessor(Grammar.from_gbnf('root ::= "yes" | "no"'), llama)
    messages = [{"role": "user", "content": "Is the sky blue? Answer yes or no."}]
    for question in ("Is grass red?", "Is snow cold?"):
        response = llama.create_chat_completion(
            messages,
            max_tokens=8,
            temperature=0,
            logits_processor=llama_cpp.LogitsProcessorList([processor]),
        )
        answer = response["choices"][0]["message"]["content"]
        assert answer in ("yes", "no"), answer
        # the matcher took this turn's answer (the end of sequence is sampled, not seen)
        assert processor.matcher.is_complete
        assert processor.matcher.steps == len(llama.tokenize(answer.encode(), add_bos=False))
        messages.append({"role": "assistant", "content": answer})
        messages.append({"role": "user", "content": question})


@pytest.mark.parametrize("triggers", [Trigger.word("x"), "word:x", 5, None])
def test_logits_processor_triggers_that_are_not_a_list_are_an_argument_error(
    triggers: object,
) -> None:
    # a single Trigger, a number or None raised a bare TypeError (not iterable); a
    # grammar that is neither a Grammar nor compiled was said to need the Llama
    # (found by bughunt7)
    compiled = GrammarCompiler(Vocabulary([b"a", None], eos_token_ids=[1])).compile(
        Grammar.from_gbnf('root ::= "a"')
    )
    with pytest.raises(ArgumentError, match="list of Trigger values"):
        integration.LogitsProcessor(compiled, triggers=triggers)  # type: ignore[arg-type]
    with pytest.raises(ArgumentError, match="grammar must be Grammar or CompiledGrammar"):
        integration.LogitsProcessor('root ::= "a"')  # type: ignore[arg-type]
    lazy = integration.LogitsProcessor(compiled, triggers=(t for t in [Trigger.word("a")]))
    assert lazy.matcher.triggers == (Trigger.word("a"),)


def test_logits_processor_needs_the_model_for_a_grammar() -> None:
    with pytest.raises(TypeError, match="pass llm"):
        integration.LogitsProcessor(Grammar.builtin("json"))


# a template unlike SmolLM2's own (which writes ChatML with a default system message)
MARKED_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}[{{ m.role | upper }}] {{ m.content }}\n{% endfor %}"
    "{% if add_generation_prompt %}[ASSISTANT] {% endif %}"
)


def test_a_given_chat_template_renders_the_prompt(llama: Any) -> None:

    runner = integration.LlamaRunner(llama, chat_template=MARKED_TEMPLATE)
    assert runner.chat_template == MARKED_TEMPLATE and runner.has_chat_template
    bos = llama.detokenize([llama.token_bos()], special=True).decode()
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
    text = runner.format_chat(messages)
    assert text == f"{bos}[SYSTEM] Be brief.\n[USER] Hi\n[ASSISTANT] "
    # generation (Decoder, `gbnfkit generate`) encodes the same text, BOS written once
    ids = runner.encode_prompt("Hi", raw=False)
    expected = f"{bos}[USER] Hi\n[ASSISTANT] ".encode()
    assert ids == list(llama.tokenize(expected, add_bos=False, special=True))
    assert ids.count(llama.token_bos()) == 1
    # raw skips any template; without chat_template the GGUF's is used
    assert runner.encode_prompt("Hi", raw=True) == list(
        llama.tokenize(b"Hi", add_bos=True, special=True)
    )
    own = integration.LlamaRunner(llama)
    assert own.chat_template == llama.metadata["tokenizer.chat_template"]
    assert "<|im_start|>user\nHi<|im_end|>" in own.format_chat([{"role": "user", "content": "Hi"}])


def test_decoder_takes_the_chat_template(llama: Any) -> None:
    from gbnfkit import SamplingParams

    dec = integration.decoder(llama, chat_template=MARKED_TEMPLATE)
    assert dec.runner.chat_template == MARKED_TEMPLATE  # type: ignore[attr-defined]
    result = dec.generate("Hi", max_tokens=2, params=SamplingParams(seed=1))
    bos = llama.detokenize([llama.token_bos()], special=True).decode()
    prompt = f"{bos}[USER] Hi\n[ASSISTANT] ".encode()
    assert result.stats.prompt_tokens == len(llama.tokenize(prompt, add_bos=False, special=True))


@pytest.mark.parametrize(
    ("template", "line", "words"),
    [
        ("{% for m in messages %}\n{{ m.content }\n{% endfor %}", 2, "Jinja: unexpected '}'"),
        ("Hi\n{% if %}", 2, "not valid Jinja"),
        ("{% for m in messages %}{{ m.content }}", 1, "not valid Jinja"),  # no endfor
        ("", None, "the chat template is empty"),
        ("  \n", None, "the chat template is empty"),
    ],
)
def test_a_chat_template_that_does_not_parse_is_one_error(
    llama: Any, template: str, line: int | None, words: str
) -> None:
    from gbnfkit import ChatTemplateError

    with pytest.raises(ChatTemplateError) as caught:
        integration.LlamaRunner(llama, chat_template=template)
    assert caught.value.line == line and not caught.value.refused
    assert words in str(caught.value)
    if line is not None:
        assert str(caught.value).startswith(f"line {line}: ")


def test_a_chat_template_that_is_not_text_is_an_argument_error(llama: Any) -> None:
    from gbnfkit import ArgumentError

    with pytest.raises(ArgumentError, match="the template's text"):
        integration.LlamaRunner(llama, chat_template=b"{{ messages }}")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("template", "line", "refused", "words"),
    [
        ("{% if messages[0].role != 'system' %}\n{{ raise_exception('a system message first') }}"
         "{% endif %}", 2, True, "a system message first"),
        ("\n\n{{ messages[0].content + 1 }}", 3, False, "TypeError: can only concatenate"),
        ("{{ messages[0].nope.deeper }}", 1, False, "'dict object' has no attribute 'nope'"),
    ],
)
def test_a_chat_template_that_fails_on_the_messages_is_one_error(
    llama: Any, template: str, line: int, refused: bool, words: str
) -> None:
    from gbnfkit import ChatTemplateError

    runner = integration.LlamaRunner(llama, chat_template=template)
    for render in (
        lambda: runner.format_chat([{"role": "user", "content": "Hi"}]),
        lambda: runner.encode_prompt("Hi", raw=False),
    ):
        with pytest.raises(ChatTemplateError) as caught:
            render()
        assert (caught.value.line, caught.value.refused) == (line, refused)
        assert words in caught.value.message


def test_the_context_is_the_one_asked_for_not_llama_cpps_rounded_one() -> None:
    # llama.cpp rounds n_ctx=8 up to 256, but the Llama holds the ids of 8 tokens only: a
    # longer prompt was an internal ValueError inside llama-cpp-python (exit 70 in the CLI)
    llm = integration.load_llama(n_ctx=8, n_threads=1, n_threads_batch=1)
    try:
        decoder = integration.decoder(llm)
        assert decoder.runner.context_size == 8
        with pytest.raises(ArgumentError, match="context holds 8"):
            decoder.generate("one two three four five six seven eight nine ten", raw=True)
        result = decoder.generate("one", raw=True, params=SamplingParams(seed=1))
        assert len(result.token_ids) <= 8 - result.stats.prompt_tokens
        assert result.stop is StopReason.CONTEXT or result.stop is StopReason.EOS
    finally:
        llm.close()
