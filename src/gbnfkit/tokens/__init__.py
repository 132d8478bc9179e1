"""Vocabularies, compiled grammars and token masks."""

from __future__ import annotations

from gbnfkit.tokens._vocabulary import Vocabulary

__all__ = ["Vocabulary"]
