"""gbnfkit: grammar-constrained decoding for large language models.

Import everything from here; modules whose names start with ``_`` are private.
Integrations with other libraries, when they are added, live in submodules that this
package never imports (so ``import gbnfkit`` needs only numpy); see CONTRIBUTING.md.
"""

from __future__ import annotations

import gbnfkit._native  # noqa: F401  first: compiled modules or their sources (see the module)
from gbnfkit import (
    chat,  # the submodule gbnfkit.chat (pure Python)
    peg,  # the submodule gbnfkit.peg (pure Python)
)
from gbnfkit._errors import (
    ArgumentError,
    ChatError,
    ChatParseError,
    ChatTemplateError,
    GbnfkitError,
    GrammarError,
    InputRejected,
    LimitError,
    LoadError,
    MissingDependencyError,
    ParseError,
    PegError,
    SamplingError,
    SchemaError,
    TriggerRejected,
    VocabularyError,
)
from gbnfkit._grammar import Grammar
from gbnfkit._limits import Limits
from gbnfkit._public import publish_loaded as _publish_loaded
from gbnfkit.engine import (
    CharExcludeRule,
    CharRule,
    EndRule,
    MatchResult,
    MatchStatus,
    State,
)
from gbnfkit.sampling import Mirostat, Sampler, SamplerType, SamplingParams, sample_batch
from gbnfkit.schema import SchemaLimits, SchemaOptions, json_schema_to_gbnf, regex_to_gbnf
from gbnfkit.tokens._bitmask import allocate_bitmask, apply_bitmask
from gbnfkit.tokens._compiled import CompiledGrammar
from gbnfkit.tokens._compiler import GrammarCompiler, compile
from gbnfkit.tokens._lazy import LazyMatcher
from gbnfkit.tokens._matcher import Matcher
from gbnfkit.tokens._trigger import Trigger, TriggerKind
from gbnfkit.tokens._vocabulary import Vocabulary

__version__ = "0.1.0"

__all__ = [
    "ArgumentError",
    "CharExcludeRule",
    "CharRule",
    "ChatError",
    "ChatParseError",
    "ChatTemplateError",
    "CompiledGrammar",
    "EndRule",
    "GbnfkitError",
    "Grammar",
    "GrammarCompiler",
    "GrammarError",
    "InputRejected",
    "LazyMatcher",
    "LimitError",
    "Limits",
    "LoadError",
    "MatchResult",
    "MatchStatus",
    "Matcher",
    "Mirostat",
    "MissingDependencyError",
    "ParseError",
    "PegError",
    "Sampler",
    "SamplerType",
    "SamplingError",
    "SamplingParams",
    "SchemaError",
    "SchemaLimits",
    "SchemaOptions",
    "State",
    "Trigger",
    "TriggerKind",
    "TriggerRejected",
    "Vocabulary",
    "VocabularyError",
    "__version__",
    "allocate_bitmask",
    "apply_bitmask",
    "chat",
    "compile",
    "json_schema_to_gbnf",
    "peg",
    "regex_to_gbnf",
    "sample_batch",
]

# classes and functions name the public module users import them from (see _public.py)
_publish_loaded(__name__, globals(), __all__)
