"""gbnfkit on transformers with the bundled model (its GGUF, dequantized by transformers)."""

from __future__ import annotations

import io
import json
import sys
import warnings
from typing import Any

import jsonschema
import numpy as np
import pytest
import torch
from model_schemas import PROMPTS, SCHEMAS
from transformers import LogitsProcessorList

from gbnfkit import (
    ArgumentError,
    Grammar,
    GrammarCompiler,
    MatchStatus,
    SamplingParams,
    Vocabulary,
    VocabularyError,
    compile,
)
from gbnfkit.cli import main
from gbnfkit.integrations import Decoder, StopReason
from gbnfkit.integrations import llama_cpp as llama_integration
from gbnfkit.integrations import transformers as integration
from gbnfkit.integrations.transformers import GrammarLogitsProcessor, RowState

YES_NO = Grammar.from_gbnf('root ::= "yes" | "no"')


def test_vocabulary_from_the_tokenizer_is_the_gguf_vocabulary(hf_model: tuple[Any, Any]) -> None:
    model, tokenizer = hf_model
    vocabulary = integration.vocabulary_from_tokenizer(tokenizer, model)
    from_file = Vocabulary.from_gguf(llama_integration.default_model_path())
    assert vocabulary.tokens == from_file.tokens
    assert vocabulary.size == model.config.vocab_size
    assert tokenizer.eos_token_id in vocabulary.eos_token_ids


def test_batch_of_two_rows_with_two_grammars(hf_model: tuple[Any, Any]) -> None:
    model, tokenizer = hf_model
    compiler = GrammarCompiler(integration.vocabulary_from_tokenizer(tokenizer, model))
    schema = SCHEMAS["person"]
    processor = GrammarLogitsProcessor(
        [compiler.compile(Grammar.from_json_schema(schema)), compiler.compile(YES_NO)]
    )
    prompts = [PROMPTS["person"], "Is the sky blue? Answer yes or no."]
    texts = [
        tokenizer.apply_chat_template(
            [{"role": "user", "content": p}], add_generation_prompt=True, tokenize=False
        )
        for p in prompts
    ]
    tokenizer.padding_side = "left"
    batch = tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=False)
    torch.manual_seed(0)
    out = model.generate(
        **batch,
        max_new_tokens=40,
        do_sample=True,
        temperature=0.8,
        logits_processor=LogitsProcessorList([processor]),
        pad_token_id=tokenizer.pad_token_id,
    )
    start = batch["input_ids"].shape[1]
    person, answer = (tokenizer.decode(row[start:], skip_special_tokens=True) for row in out)
    jsonschema.validate(json.loads(person), schema)
    assert answer in ("yes", "no")
    # the yes/no row ended first, and generate padded it while the other row went on;
    # the last row's end token is the last token, after the last call
    assert processor.row_states[1] is RowState.FINISHED
    person_matcher = processor.matchers[0]
    assert person_matcher is not None and person_matcher.is_complete
    assert processor.rejections == {}


def test_processor_masks_logits_wider_than_the_vocabulary() -> None:
    vocabulary = Vocabulary([b"yes", b"no", b"y", None], eos_token_ids=[3])
    compiled = compile(YES_NO, vocabulary)
    processor = GrammarLogitsProcessor([compiled, None])
    for scores in (np.zeros((2, 40), dtype=np.float32), torch.zeros(2, 40)):
        processor(torch.zeros((2, 3), dtype=torch.long), scores)
        finite = np.isfinite(np.asarray(scores))
        assert finite[0].tolist() == [True, True, True] + [False] * 37
        assert finite[1].all()  # the free row is left alone
        assert processor.row_states == (RowState.ACTIVE, RowState.FREE)


def test_processor_marks_ended_rows_instead_of_failing() -> None:
    vocabulary = Vocabulary([b"yes", b"no", b"y", None], eos_token_ids=[3])
    processor = GrammarLogitsProcessor(compile(YES_NO, vocabulary))
    prompt = [[2, 2], [2, 2], [2, 2]]
    steps = [[0, 1, 2], [3, 3, 0], [3, 3, 0]]  # row 0: yes, EOS, then padding (EOS)
    ids = torch.tensor(prompt)
    processor(ids, torch.zeros(3, 4))
    for step in steps:
        ids = torch.cat([ids, torch.tensor(step).unsqueeze(1)], dim=1)
        processor(ids, torch.zeros(3, 4))
    # row 2 took "y", then EOS where the grammar cannot end: stopped, with the reason
    assert processor.row_states == (RowState.FINISHED, RowState.FINISHED, RowState.STOPPED)
    assert set(processor.rejections) == {2}
    # a shorter input starts a new generation
    processor(torch.tensor(prompt), torch.zeros(3, 4))
    assert processor.row_states == (RowState.ACTIVE,) * 3


def test_processor_masks_active_rows_after_free_or_ended_ones() -> None:
    # the bitmask has a row per batch row: with one per *active* row, a free or ended
    # row before an active one sent index 1 past the bitmask (ArgumentError mid-generate)
    vocabulary = Vocabulary([b"yes", b"no", b"y", b"es", None], eos_token_ids=[4])
    compiled = compile(YES_NO, vocabulary)
    free_first = GrammarLogitsProcessor([None, compiled])
    scores = torch.zeros(2, 6)
    free_first(torch.zeros((2, 1), dtype=torch.long), scores)
    assert torch.isfinite(scores).tolist() == [[True] * 6, [True, True, True, False, False, False]]
    for make_scores in (lambda: np.zeros((2, 5), dtype=np.float32), lambda: torch.zeros(2, 5)):
        processor = GrammarLogitsProcessor(compiled)
        ids = torch.tensor([[2], [2]])
        processor(ids, make_scores())
        for step, allowed in (([0, 2], [[4], [3]]), ([4, 3], [None, [4]])):
            ids = torch.cat([ids, torch.tensor(step).unsqueeze(1)], dim=1)
            scores = make_scores()
            processor(ids, scores)
            finite = np.isfinite(np.asarray(scores))
            for row, ids_allowed in enumerate(allowed):
                want = range(5) if ids_allowed is None else ids_allowed
                assert np.flatnonzero(finite[row]).tolist() == list(want), (step, row)
        assert processor.row_states == (RowState.FINISHED, RowState.ACTIVE)


def test_processor_starts_anew_on_an_input_that_is_not_one_token_longer() -> None:
    # generate adds one token per call; the next generate's prompt may be longer than the
    # last output and even extend it (a chat's next turn): it was taken as more tokens of
    # the finished rows, and the whole second generation went unconstrained
    vocabulary = Vocabulary([b"yes", b"no", b"y", b"es", None, b"x"], eos_token_ids=[4])
    processor = GrammarLogitsProcessor(compile(YES_NO, vocabulary))
    for ids in ([[5]], [[5, 0]], [[5, 0, 4]]):
        processor(torch.tensor(ids), torch.zeros(1, 6))
    assert processor.row_states == (RowState.FINISHED,)
    scores = torch.zeros(1, 6)
    processor(torch.tensor([[5, 0, 4, 5, 5]]), scores)
    assert processor.row_states == (RowState.ACTIVE,)
    assert torch.isfinite(scores).tolist() == [[True, True, True, False, False, False]]
    # a new prompt one token longer than the last call, by chance: not the next step
    processor(torch.tensor([[5, 0]]), torch.zeros(1, 6))  # a new generation, prompt "x", "yes"
    scores = torch.zeros(1, 6)
    processor(torch.tensor([[5, 5, 5]]), scores)
    assert processor.row_states == (RowState.ACTIVE,)
    assert torch.isfinite(scores).tolist() == [[True, True, True, False, False, False]]


def test_processor_stops_a_row_on_an_id_beyond_the_vocabulary_with_the_reason() -> None:
    vocabulary = Vocabulary([b"yes", b"no", None], eos_token_ids=[2])
    processor = GrammarLogitsProcessor(compile(YES_NO, vocabulary))
    processor(torch.zeros((1, 1), dtype=torch.long), torch.zeros(1, 8))
    processor(torch.tensor([[0, 7]]), torch.zeros(1, 8))
    assert processor.row_states == (RowState.STOPPED,)
    rejection = processor.rejections[0]
    # it was an InputRejected of "unexpected '' at position 0" with the reason as its text
    assert (rejection.token_id, rejection.text) == (7, None)
    assert str(rejection).startswith("token 7 rejected: token id 7 is outside the vocabulary")


def test_processor_needs_a_batch_that_fits_the_grammars() -> None:
    vocabulary = Vocabulary([b"yes", b"no", None], eos_token_ids=[2])
    compiled = compile(YES_NO, vocabulary)
    processor = GrammarLogitsProcessor([compiled, compiled])
    with pytest.raises(ArgumentError, match="not a multiple"):
        processor(torch.zeros((3, 1), dtype=torch.long), torch.zeros(3, 3))


@pytest.mark.parametrize("name", ["person", "cat"])
def test_decoder_schema_outputs_validate(hf_decoder: Decoder, name: str) -> None:
    schema = SCHEMAS[name]
    grammar = Grammar.from_json_schema(schema)
    result = hf_decoder.generate(
        PROMPTS[name], grammar=grammar, params=SamplingParams(seed=1), max_tokens=60
    )
    assert result.stop is StopReason.EOS, result.text
    jsonschema.validate(json.loads(result.text), schema)


def test_decoder_seeds_reproduce_and_builtins_match(hf_decoder: Decoder) -> None:
    grammar = Grammar.builtin("arithmetic")
    params = SamplingParams(seed=5, temperature=1.0)
    first = hf_decoder.generate(
        "An arithmetic expression:", grammar=grammar, params=params, max_tokens=12
    )
    again = hf_decoder.generate(
        "An arithmetic expression:", grammar=grammar, params=params, max_tokens=12
    )
    assert first.token_ids == again.token_ids
    status = grammar.match(first.text).status
    assert status == (MatchStatus.ACCEPT if first.complete else MatchStatus.PREFIX)


def test_cli_generate_with_the_transformers_backend(
    hf_model: tuple[Any, Any], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    loaded: list[str] = []

    def load_once(path: Any) -> tuple[Any, Any]:  # the session's model, not a second load
        loaded.append(str(path))
        return hf_model

    monkeypatch.setattr(integration, "load_model", load_once)
    schema = SCHEMAS["person"]
    stdin = io.TextIOWrapper(io.BytesIO(json.dumps(schema).encode("utf-8")), "utf-8")
    monkeypatch.setattr(sys, "stdin", stdin)
    argv = ["generate", "--backend", "transformers", "--seed", "1", "--schema", "-"]
    status = main([*argv, PROMPTS["person"]])
    out, err = capsys.readouterr()
    assert status == 0, err
    assert loaded == [str(llama_integration.default_model_path())]
    jsonschema.validate(json.loads(out), schema)
    assert "tokens/s" in err.splitlines()[-1]


def test_a_vocabulary_of_another_model_is_refused(hf_model: tuple[Any, Any]) -> None:
    # the runner took any vocabulary: a compiler of another model's gave a decoder that
    # sampled among that vocabulary's first ids only (the logits cut to it), silently
    # (LlamaRunner refuses it; found by bughunt10)
    model, tokenizer = hf_model
    other = GrammarCompiler(Vocabulary([b"y", b"n", None], eos_token_ids=[2]))
    with pytest.raises(VocabularyError, match="another model's"):
        integration.decoder(model, tokenizer, compiler=other)
    own = GrammarCompiler(integration.vocabulary_from_tokenizer(tokenizer, model))
    assert integration.decoder(model, tokenizer, compiler=own).vocabulary is own.vocabulary


def test_the_decoder_steps_the_model_without_deprecated_arguments(hf_decoder: Decoder) -> None:
    # transformers 5 renamed forward's past_key_values to cache (the old name warns on every
    # step, and goes in 5.40): the runner uses the name the model's forward takes
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        warnings.simplefilter("error", DeprecationWarning)
        result = hf_decoder.generate(
            "Pick a number",
            grammar=Grammar.from_regex("[0-9]{1,3}"),
            params=SamplingParams(seed=1),
            max_tokens=4,
        )
    assert Grammar.from_regex("[0-9]{1,3}").match(result.text).status in (
        MatchStatus.ACCEPT,
        MatchStatus.PREFIX,
    )
