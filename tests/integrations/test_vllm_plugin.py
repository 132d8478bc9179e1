"""The vLLM plugin against a stand-in of vLLM's logits-processor interface (vLLM does not
install here: see vllm_standin.py), driven like vLLM's engine drives it: batch updates
(added, removed, moved), new output tokens, then ``apply`` on the batch's logits."""

from __future__ import annotations

import json
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
import torch
import vllm_standin
from vllm_standin import BatchUpdate, MoveDirectionality, SamplingParams

from gbnfkit import ArgumentError, Grammar, Vocabulary
from gbnfkit.integrations.llama_cpp import default_model_path

PADDING = 64
SCHEMA = {
    "type": "object",
    "properties": {"ok": {"type": "boolean"}},
    "required": ["ok"],
    "additionalProperties": False,
}


@pytest.fixture(scope="module")
def plugin() -> Iterator[Any]:
    with vllm_standin.installed() as module:
        yield module


@pytest.fixture(scope="module")
def vocabulary() -> Vocabulary:
    return Vocabulary.from_gguf(default_model_path())


@pytest.fixture(scope="module")
def processor(plugin: Any, vocabulary: Vocabulary) -> Any:
    model_config = SimpleNamespace(
        tokenizer=str(default_model_path()), get_vocab_size=lambda: vocabulary.size + PADDING
    )
    return plugin.GrammarLogitsProcessor(
        SimpleNamespace(model_config=model_config), torch.device("cpu"), False
    )


def text_of(vocabulary: Vocabulary, tokens: list[int]) -> str:
    return b"".join(
        vocabulary.token_bytes(t) or b"" for t in tokens if t not in vocabulary.eos_token_ids
    ).decode("utf-8", "replace")


def test_is_a_vllm_logits_processor(plugin: Any, processor: Any) -> None:
    assert isinstance(processor, vllm_standin.LogitsProcessor)
    assert processor.is_argmax_invariant() is False
    assert processor.compiler.vocabulary.size == processor._vocabulary.size


def test_validate_params_names_the_fault(plugin: Any) -> None:
    validate = plugin.GrammarLogitsProcessor.validate_params
    validate(SamplingParams())
    validate(SamplingParams({"json_schema": json.dumps(SCHEMA)}))
    with pytest.raises(ValueError, match="line 1, column"):
        validate(SamplingParams({"grammar": 'root ::= "a'}))
    with pytest.raises(ValueError, match="/properties/x"):
        validate(SamplingParams({"json_schema": {"properties": {"x": {"type": "nope"}}}}))
    # JSON text is read by the schema converter: too deep or an over-long number is
    # gbnfkit's error (a bare RecursionError was a 500 in vLLM; found by bughunt7)
    with pytest.raises(ArgumentError, match="nests too deeply"):
        validate(SamplingParams({"json_schema": "[" * 100_000}))
    with pytest.raises(ArgumentError, match="not valid JSON"):
        validate(SamplingParams({"json_schema": '{"maxLength": ' + "9" * 5000 + "}"}))
    with pytest.raises(ArgumentError, match="not valid JSON"):
        validate(SamplingParams({"json_schema": '{"type": "string"'}))
    with pytest.raises(ArgumentError, match="not both"):
        validate(SamplingParams({"grammar": 'root ::= "a"', "json_schema": {}}))
    with pytest.raises(ArgumentError, match="TYPE:VALUE"):
        validate(SamplingParams({"grammar": 'root ::= "a"', "grammar_triggers": ["x"]}))
    request = plugin.grammar_request(
        {
            "grammar": 'root ::= "a"',
            "grammar_triggers": ["word:go", {"type": "token", "value": "7"}],
        }
    )
    assert [t.value for t in request.triggers] == ["go", 7]


def test_a_batch_decodes_within_its_grammars(processor: Any, vocabulary: Vocabulary) -> None:
    rng = np.random.default_rng(0)
    width = vocabulary.size + PADDING
    outputs: list[list[int]] = [[], [], []]
    lazy = {"grammar": 'root ::= "Z" [0-9]', "grammar_triggers": ["word:Z"]}
    added = [
        (0, SamplingParams({"json_schema": SCHEMA}), [1, 2], outputs[0]),
        (1, SamplingParams(), [1], outputs[1]),
        (2, SamplingParams(lazy), [1], outputs[2]),
    ]
    processor.update_state(BatchUpdate(3, [], added, []))
    rows = {0: 0, 1: 1, 2: 2}  # request -> batch row
    z_token = next(i for i in range(vocabulary.size) if vocabulary.token_bytes(i) == b"Z")
    done: set[int] = set()
    for step in range(400):
        logits = torch.from_numpy(rng.normal(size=(3, width)).astype(np.float32))
        if step == 3:
            logits[rows[2], z_token] = 1e4  # the lazy request writes its trigger
        processor.apply(logits)
        for request, row in rows.items():
            if request in done:
                continue
            token = int(torch.argmax(logits[row]))
            assert token < vocabulary.size or request == 1
            outputs[request].append(token)
            if token in vocabulary.eos_token_ids or len(outputs[request]) >= 300:
                done.add(request)
        moved: list[Any] = []
        if step == 5:  # vLLM condenses the batch: rows 0 and 2 trade places
            moved = [(0, 2, MoveDirectionality.SWAP)]
            rows[0], rows[2] = rows[2], rows[0]
        processor.update_state(BatchUpdate(3, [], [], moved) if moved else None)
        if {0, 2} <= done:
            break
    assert outputs[0][-1] in vocabulary.eos_token_ids
    data = json.loads(text_of(vocabulary, outputs[0]))
    assert data.keys() == {"ok"} and isinstance(data["ok"], bool)
    lazy_text = text_of(vocabulary, outputs[2])
    assert Grammar.from_gbnf('root ::= "Z" [0-9]').match(lazy_text[lazy_text.index("Z") :]).accepted
    assert outputs[2][-1] in vocabulary.eos_token_ids
    processor.update_state(BatchUpdate(1, [0, 2], [], []))
    assert list(processor._rows) == []


@pytest.mark.parametrize("layout", ["index first", "prompt first"])
def test_added_requests_are_read_in_either_layout_vllm_has_used(
    plugin: Any, vocabulary: Vocabulary, layout: str
) -> None:
    model_config = SimpleNamespace(
        tokenizer=str(default_model_path()), get_vocab_size=lambda: vocabulary.size + PADDING
    )
    processor = plugin.GrammarLogitsProcessor(
        SimpleNamespace(model_config=model_config), torch.device("cpu"), False
    )
    params, output = SamplingParams({"grammar": 'root ::= "yes" | "no"'}), []
    entry = (1, params, [5], output) if layout == "index first" else ([5], 1, params, output)
    processor.update_state(BatchUpdate(2, [], [entry], []))
    logits = torch.zeros((2, vocabulary.size + PADDING))
    processor.apply(logits)
    assert torch.isfinite(logits[0]).all()  # row 0 has no grammar
    allowed = {vocabulary.token_bytes(int(i)) for i in torch.nonzero(torch.isfinite(logits[1]))}
    assert allowed and all(b"yes".startswith(t) or b"no".startswith(t) for t in allowed if t)
    with pytest.raises(ArgumentError, match="4 fields"):
        processor.update_state(BatchUpdate(2, [], [(1, params, output)], []))
