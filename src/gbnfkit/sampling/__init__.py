"""Sampling: llama.cpp's sampler chain, with a grammar matcher in it.

:class:`SamplingParams` holds the settings (llama.cpp's names and defaults);
:class:`Sampler` picks each next token of one sequence from the model's logits.
"""

from __future__ import annotations

from gbnfkit.sampling._params import (
    DEFAULT_SAMPLERS,
    LogitBias,
    Mirostat,
    SamplerType,
    SamplingParams,
)
from gbnfkit.sampling._sampler import Sampler, TokenMatcher, sample_batch

__all__ = [
    "DEFAULT_SAMPLERS",
    "LogitBias",
    "Mirostat",
    "Sampler",
    "SamplerType",
    "SamplingParams",
    "TokenMatcher",
    "sample_batch",
]
