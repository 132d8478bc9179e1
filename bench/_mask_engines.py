"""Engine adapters for ``bench/masks.py``: gbnfkit, llguidance and XGrammar behind one interface.

Every adapter fills the same kind of bitmask (numpy int32, shape ``(1, ceil(V/32))``, bit
``i % 32`` of word ``i // 32`` is token ``i``), so the harness reads allowed tokens the same way
for all of them. Only :meth:`Engine.fill` is timed per token.
"""

from __future__ import annotations

import importlib.util
import json
import re
import time
from typing import Any

import numpy as np

from _workloads import BenchVocab, builtin_text


class Unsupported(Exception):
    """The engine refuses this grammar or schema (a compile error, not a crash)."""


class Engine:
    """What the harness needs from an engine. Subclasses override every method."""

    name = "engine"
    version = ""
    note = ""

    def setup(self, vocab: BenchVocab) -> None:
        """Load the vocabulary (timed as vocabulary setup)."""
        raise NotImplementedError

    def compile_gbnf(self, text: str, builtin: str | None) -> Any:
        raise NotImplementedError

    def compile_schema(self, schema: dict[str, Any]) -> Any:
        raise NotImplementedError

    def matcher(self, compiled: Any) -> Any:
        raise NotImplementedError

    def fill(self, matcher: Any, bitmask: np.ndarray) -> None:
        raise NotImplementedError

    def accept(self, matcher: Any, token: int) -> bool:
        raise NotImplementedError

    def eos_ids(self) -> list[int]:
        raise NotImplementedError

    def forget(self) -> None:
        """Drop what the engine shares between grammars (a first request sees none of it)."""

    def close(self) -> None:
        """Drop the vocabulary and compiled grammars."""


_EMPTY_ALT = [
    (re.compile(r"::=(\s*)\|"), r'::=\1"" |'),
    (re.compile(r"\((\s*)\|"), r'(\1"" |'),
    (re.compile(r"\|(\s*)\)"), r'| ""\1)'),
    (re.compile(r"\|(\s*)\|"), r'| ""\1|'),
]


def _spell_empty_alternatives(text: str) -> str:
    """Write each empty alternative of a GBNF text as `""` (outside quotes and classes)."""
    out = []
    for i, chunk in enumerate(re.split(r'("(?:[^"\\]|\\.)*"|\[(?:[^\]\\]|\\.)*\])', text)):
        if i % 2 == 0:
            for pattern, repl in _EMPTY_ALT:
                chunk = pattern.sub(repl, chunk)
        out.append(chunk)
    return "".join(out)


def installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


# --------------------------------------------------------------------------- gbnfkit


class Gbnfkit(Engine):
    name = "gbnfkit"

    def __init__(self, cache_dir: str | None = None) -> None:
        import gbnfkit

        self.gk = gbnfkit
        self.version = gbnfkit.__version__
        self.vocab: Any = None
        self.loader_note = ""
        self.cache_dir = cache_dir

    @staticmethod
    def missing_api() -> list[str]:
        import gbnfkit

        need = ["Vocabulary", "Grammar", "compile", "allocate_bitmask"]
        return [n for n in need if not hasattr(gbnfkit, n)]

    def setup(self, vocab: BenchVocab) -> None:
        voc = self.gk.Vocabulary
        loader = {
            "tiktoken": "from_tiktoken",
            "tokenizer_json": "from_tokenizer_json",
            "gguf": "from_gguf",
        }[vocab.kind]
        if hasattr(voc, loader):
            kwargs: dict[str, Any] = {"eos_token_ids": vocab.eos_ids}
            if vocab.kind == "tiktoken":  # a ranks file has no special tokens
                kwargs["special_tokens"] = {
                    vocab.tokens[i].decode("utf-8"): i for i in vocab.special_ids
                }
            self.vocab = getattr(voc, loader)(vocab.path, **kwargs)
            self.loader_note = f"Vocabulary.{loader}"
            self.loader_note += self._agreement(vocab)
        else:
            special = set(vocab.special_ids)
            tokens = [None if i in special else t for i, t in enumerate(vocab.tokens)]
            self.vocab = voc(tokens, eos_token_ids=vocab.eos_ids, special_token_ids=special)
            self.loader_note = f"Vocabulary(...) from the bench tokens ({loader} missing)"
        self.compiler = None
        if hasattr(self.gk, "GrammarCompiler"):
            # One compiler per vocabulary shares the token index between grammars, as
            # XGrammar's GrammarCompiler and llguidance's LLTokenizer do; cache_size=0 so no
            # compile is ever served from its cache of compiled grammars.
            t0 = time.perf_counter()
            if self.cache_dir is not None:
                self.compiler = self.gk.GrammarCompiler(
                    self.vocab, cache_size=0, cache_dir=self.cache_dir
                )
                self.loader_note += f"; cache_dir {self.cache_dir}"
            else:
                self.compiler = self.gk.GrammarCompiler(self.vocab, cache_size=0)
            self.loader_note += f"; GrammarCompiler {time.perf_counter() - t0:.2f} s"

    def _agreement(self, vocab: BenchVocab) -> str:
        """Whether our loader reads the same ids, bytes and specials as the bench."""
        ours = self.vocab
        problems = []
        if ours.size != vocab.size:
            problems.append(f"size {ours.size} != {vocab.size}")
        special = set(vocab.special_ids)
        if set(ours.special_token_ids) != special:
            problems.append(
                f"special ids differ ({len(set(ours.special_token_ids) ^ special)} ids)"
            )
        bad = [
            i for i in range(min(ours.size, vocab.size))
            if i not in special and ours.token_bytes(i) != vocab.tokens[i]
        ]
        if bad:
            examples = ", ".join(
                f"{i}: {ours.token_bytes(i)!r} vs {vocab.tokens[i]!r}" for i in bad[:3]
            )
            problems.append(f"{len(bad)} token byte strings differ ({examples})")
        if not problems:
            return ", same ids and bytes as the bench tokenizer"
        return "; MISMATCH with the bench tokenizer: " + "; ".join(problems)

    def grammar(self, text: str, builtin: str | None) -> Any:
        g = self.gk.Grammar
        if builtin is not None:
            return g.builtin(builtin)
        return g.from_gbnf(text)

    def _compile(self, grammar: Any) -> Any:
        if self.compiler is not None:
            return self.compiler.compile(grammar)
        return self.gk.compile(grammar, self.vocab)

    def compile_gbnf(self, text: str, builtin: str | None) -> Any:
        return self._compile(self.grammar(text, builtin))

    def compile_schema(self, schema: dict[str, Any]) -> Any:
        try:
            # instances come in any key order (as in bench/maskbench_coverage.py)
            grammar = self.gk.Grammar.from_json_schema(schema, property_order="any")
        except self.gk.SchemaError as exc:
            raise Unsupported(f"SchemaError: {exc}") from exc
        return self._compile(grammar)

    def cold_first_mask(self, builtin: str) -> float:
        """Seconds for a one-shot ``gbnfkit.compile`` (fresh index) plus the first mask."""
        t0 = time.perf_counter()
        compiled = self.gk.compile(self.gk.Grammar.builtin(builtin), self.vocab)
        bitmask = self.gk.allocate_bitmask(1, self.vocab.size)
        compiled.matcher().fill_bitmask(bitmask, 0)
        return time.perf_counter() - t0

    def matcher(self, compiled: Any) -> Any:
        return compiled.matcher()

    def fill(self, matcher: Any, bitmask: np.ndarray) -> None:
        matcher.fill_bitmask(bitmask, 0)

    def accept(self, matcher: Any, token: int) -> bool:
        try:
            return bool(matcher.accept_token(token))
        except self.gk.InputRejected:
            return False

    def eos_ids(self) -> list[int]:
        return sorted(self.vocab.eos_token_ids)

    def forget(self) -> None:
        if self.compiler is not None:
            self.compiler.clear_cache()

    def close(self) -> None:
        self.vocab = None
        self.compiler = None


# --------------------------------------------------------------------------- llguidance


class _LLTokenizerSource:
    """What llguidance.TokenizerWrapper reads: token bytes, eos/bos, special ids, encoder."""

    def __init__(self, vocab: BenchVocab) -> None:
        self.tokens = vocab.tokens
        self.eos_token_id = vocab.eos_ids[0]
        self.bos_token_id = None
        self.special_token_ids = vocab.special_ids
        self._encode = vocab.encode

    def __call__(self, text: str) -> list[int]:
        return self._encode(text)


class LLGuidance(Engine):
    name = "llguidance"

    def __init__(self) -> None:
        import llguidance

        self.ll = llguidance
        self.version = llguidance.__version__
        self.tok: Any = None
        self.eos: list[int] = []

    def setup(self, vocab: BenchVocab) -> None:
        wrapper = self.ll.TokenizerWrapper(_LLTokenizerSource(vocab))
        self.tok = self.ll.LLTokenizer(wrapper, n_vocab=vocab.size, eos_token=vocab.eos_ids)
        self.eos = list(vocab.eos_ids)

    def _matcher_from(self, grammar: str) -> Any:
        m = self.ll.LLMatcher(self.tok, grammar, log_level=0)
        if m.is_error():
            raise Unsupported(m.get_error())
        return m

    def compile_gbnf(self, text: str, builtin: str | None) -> Any:
        if builtin is not None:
            text = builtin_text(builtin)
        try:
            grammar = self.ll.grammar_from("gbnf", text)
        except ValueError as exc:
            raise Unsupported(str(exc)) from exc
        # llguidance builds its parser when a matcher is made: that is its compile step. The
        # pristine matcher is the compiled grammar; each document replays a deep copy of it.
        return self._matcher_from(grammar)

    def compile_schema(self, schema: dict[str, Any]) -> Any:
        try:
            grammar = self.ll.LLMatcher.grammar_from_json_schema(schema)
        except ValueError as exc:
            raise Unsupported(str(exc)) from exc
        return self._matcher_from(grammar)

    def matcher(self, compiled: Any) -> Any:
        return compiled.deep_copy()

    def fill(self, matcher: Any, bitmask: np.ndarray) -> None:
        row = bitmask[0]
        matcher.unsafe_compute_mask_ptr(row.ctypes.data, row.nbytes)

    def accept(self, matcher: Any, token: int) -> bool:
        return bool(matcher.consume_token(token)) and not matcher.is_error()

    def eos_ids(self) -> list[int]:
        return self.eos

    def close(self) -> None:
        self.tok = None


# --------------------------------------------------------------------------- XGrammar


class XGrammar(Engine):
    name = "xgrammar"

    def __init__(self) -> None:
        import xgrammar

        self.xg = xgrammar
        self.version = getattr(xgrammar, "__version__", "")
        if not self.version:
            from importlib.metadata import version

            self.version = version("xgrammar")
        self.compiler: Any = None
        self.eos: list[int] = []

    def setup(self, vocab: BenchVocab) -> None:
        # XGrammar takes an empty token for a special one (never allowed as text).
        special = set(vocab.special_ids) - set(vocab.eos_ids)
        tokens = [b"" if i in special else t for i, t in enumerate(vocab.tokens)]
        info = self.xg.TokenizerInfo(
            encoded_vocab=tokens,
            vocab_type=self.xg.VocabType.RAW,
            vocab_size=vocab.size,
            stop_token_ids=vocab.eos_ids,
        )
        # One thread, as for the other engines; the cache is per compiler and every grammar
        # of a run is compiled once, so it never serves a timed compile.
        self.compiler = self.xg.GrammarCompiler(info, max_threads=1)
        self.eos = list(vocab.eos_ids)

    def compile_gbnf(self, text: str, builtin: str | None) -> Any:
        if builtin is not None:
            text = builtin_text(builtin)
        try:
            return self.compiler.compile_grammar(text)
        except RuntimeError as exc:
            # XGrammar's GBNF parser refuses an empty alternative (`ws ::= | " "`), which
            # llama.cpp accepts; spelled as "" it means the same, so retry once that way.
            respelled = _spell_empty_alternatives(text)
            if respelled == text:
                raise Unsupported(str(exc)) from exc
            try:
                compiled = self.compiler.compile_grammar(respelled)
            except RuntimeError as exc2:
                raise Unsupported(str(exc2)) from exc2
            self.note = 'empty alternatives spelled as "" for XGrammar'
            return compiled

    def compile_schema(self, schema: dict[str, Any]) -> Any:
        try:
            return self.compiler.compile_json_schema(json.dumps(schema))
        except (RuntimeError, ValueError) as exc:
            raise Unsupported(str(exc)) from exc

    def matcher(self, compiled: Any) -> Any:
        return self.xg.GrammarMatcher(compiled)

    def fill(self, matcher: Any, bitmask: np.ndarray) -> None:
        matcher.fill_next_token_bitmask(bitmask, 0)

    def accept(self, matcher: Any, token: int) -> bool:
        return bool(matcher.accept_token(token))

    def eos_ids(self) -> list[int]:
        return self.eos

    def forget(self) -> None:
        self.compiler.clear_cache()

    def close(self) -> None:
        self.compiler = None


PEERS: dict[str, tuple[str, type[Engine]]] = {
    "llguidance": ("llguidance", LLGuidance),
    "xgrammar": ("xgrammar", XGrammar),
}
