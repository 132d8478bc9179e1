"""A stand-in for the part of vLLM that a logits-processor plugin sees, for a machine where
vLLM does not install (vLLM 0.33 pins torch 2.14; this project allows only torch 2.13.0).

Copied in substance from vLLM 0.33's ``vllm/v1/sample/logits_processor/interface.py``
(read from the released wheel): ``LogitsProcessor`` (``validate_params``, ``__init__(
vllm_config, device, is_pin_memory)``, ``apply``, ``is_argmax_invariant``,
``update_state``), ``BatchUpdate`` (``batch_size``, ``removed``, ``added`` as ``(index,
params, prompt_ids, output_ids)`` whose ``output_ids`` is the live list vLLM appends to,
``moved`` as ``(i1, i2, MoveDirectionality)``; processed removed, added, moved) and
``SamplingParams.extra_args``.
"""

from __future__ import annotations

import sys
import types
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from enum import Enum, auto
from typing import Any


class MoveDirectionality(Enum):
    UNIDIRECTIONAL = auto()
    SWAP = auto()


@dataclass(frozen=True)
class BatchUpdate:
    batch_size: int
    removed: Sequence[int]
    added: Sequence[tuple[int, Any, list[int] | None, list[int]]]
    moved: Sequence[tuple[int, int, MoveDirectionality]]


@dataclass
class SamplingParams:
    extra_args: dict[str, Any] | None = None


class LogitsProcessor(ABC):
    @classmethod
    def validate_params(cls, sampling_params: SamplingParams) -> None:
        return None

    @abstractmethod
    def __init__(self, vllm_config: Any, device: Any, is_pin_memory: bool) -> None:
        raise NotImplementedError

    @abstractmethod
    def apply(self, logits: Any) -> Any:
        raise NotImplementedError

    @abstractmethod
    def is_argmax_invariant(self) -> bool:
        raise NotImplementedError

    @abstractmethod
    def update_state(self, batch_update: BatchUpdate | None) -> None:
        raise NotImplementedError


@contextmanager
def installed() -> Iterator[types.ModuleType]:
    """The stand-in as ``vllm`` in ``sys.modules``; yields ``gbnfkit.integrations.vllm``
    imported against it (both removed again afterwards)."""
    names = ["vllm", "vllm.v1", "vllm.v1.sample", "vllm.v1.sample.logits_processor"]
    saved = {name: sys.modules.get(name) for name in [*names, "gbnfkit.integrations.vllm"]}
    modules = {name: types.ModuleType(name) for name in names}
    modules["vllm"].SamplingParams = SamplingParams  # type: ignore[attr-defined]
    interface = modules["vllm.v1.sample.logits_processor"]
    for item in (LogitsProcessor, BatchUpdate, MoveDirectionality):
        setattr(interface, item.__name__, item)
    sys.modules.update(modules)
    sys.modules.pop("gbnfkit.integrations.vllm", None)
    try:
        import gbnfkit.integrations.vllm as plugin

        yield plugin
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module
