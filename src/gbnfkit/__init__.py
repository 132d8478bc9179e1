"""gbnfkit: grammar-constrained decoding for large language models.

Import everything from here; modules whose names start with ``_`` are private.
Integrations (transformers, llama-cpp-python, server) live in submodules that this
package never imports.
"""

from __future__ import annotations

from gbnfkit._errors import (
    GbnfkitError,
    GrammarError,
    InputRejected,
    LimitError,
    SchemaError,
    VocabularyError,
)
from gbnfkit._grammar import Grammar
from gbnfkit._limits import Limits
from gbnfkit.engine import (
    CharExcludeRule,
    CharRule,
    EndRule,
    MatchResult,
    MatchStatus,
    State,
)
from gbnfkit.tokens._vocabulary import Vocabulary

__version__ = "0.1.0"

__all__ = [
    "CharExcludeRule",
    "CharRule",
    "EndRule",
    "GbnfkitError",
    "Grammar",
    "GrammarError",
    "InputRejected",
    "LimitError",
    "Limits",
    "MatchResult",
    "MatchStatus",
    "SchemaError",
    "State",
    "Vocabulary",
    "VocabularyError",
    "__version__",
]
