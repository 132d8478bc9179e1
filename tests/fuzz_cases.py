"""Seeded fuzzing of every public entry point of gbnfkit (shared by tests and bench/fuzz.py).

One *input* is one generated call (or, for matchers, one sequence of calls) of an entry
point.  Whatever the input, only gbnfkit's own exceptions (subclasses of
:class:`gbnfkit.GbnfkitError`) may come out; anything else is a *foreign* exception, a
finding.  The CLI must answer with a documented exit status and no traceback (status 70,
"internal error", is a finding).  Inputs are derived from valid seeds (grammars, schemas,
regular expressions, vocabulary files, saved compiled grammars) by random mutations, and
from random values of every type for every argument.

``Fuzzer(seed, workdir).run(n)`` is deterministic for a seed: the same inputs in the same
order (timings aside).
"""

from __future__ import annotations

import base64
import copy
import io
import json
import math
import random
import signal
import struct
import sys
import time
import traceback
import warnings
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from enum import Enum
from pathlib import Path
from typing import Any

import numpy as np

import gbnfkit
from gbnfkit import (
    GbnfkitError,
    Grammar,
    Limits,
    SchemaLimits,
    SchemaOptions,
    Vocabulary,
    json_schema_to_gbnf,
    regex_to_gbnf,
)
from gbnfkit.cli import main as cli_main

# small limits keep every input fast; reaching one is a LimitError, a gbnfkit exception
FUZZ_LIMITS = Limits(
    max_stacks=2_000, max_repetition=200, max_grammar_size=20_000, max_cached_states=2_000
)

# -- seeds -------------------------------------------------------------------------------

GBNF_SEEDS = [
    'root ::= "yes" | "no"',
    'root ::= "(" number ("," number)* ")"\nnumber ::= "-"? [0-9]+',
    'root ::= [a-z]{2,5} ("." [a-z]+)?',
    'root ::= item+\nitem ::= "a" | [^\\n"] | "\\u00e9" | "\\x41"',
    'root ::= x\nx ::= "(" x ")" | ""',
    'root ::= ( [^"\\\\] | "\\\\" [nrt"] )* # comment\n',
    'root ::= "a"{0,3} "b"{2} "c"{1,} .',
]

REGEX_SEEDS = [
    r"[A-Z]{2}-\d{3,5}",
    r"(a|b)*c",
    r"^\w+@\w+\.com$",
    r"[^x]?(?:ab)+",
    r"\d{4}-\d{2}-\d{2}",
    r"(?i)hello",
    r"[\u00e9-\u00ff]+\s*",
    r"a.b|c{2,}",
]

SCHEMA_SEEDS: list[Any] = [
    {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
     "required": ["name", "age"]},
    {"type": "array", "items": {"type": "number", "minimum": 0}, "minItems": 1, "maxItems": 3},
    {"enum": ["red", "green", 3, None, {"a": [1]}]},
    {"const": "caf\u00e9"},
    {"type": "string", "pattern": "^[a-z]+$", "minLength": 2, "maxLength": 6},
    {"type": "string", "format": "date-time"},
    {"anyOf": [{"type": "string"}, {"type": "integer", "maximum": 10}]},
    {"oneOf": [{"type": "boolean"}, {"type": "null"}]},
    {"allOf": [{"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
               {"properties": {"b": {"enum": [1, 2]}}, "required": ["b"]}]},
    {"$defs": {"node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/node"}}}},
     "$ref": "#/$defs/node"},
    {"type": "object", "additionalProperties": {"type": "integer"}, "minProperties": 1},
    {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}], "items": False},
    {"type": ["string", "null"]},
    {"type": "number", "exclusiveMinimum": 0, "multipleOf": 0.5},
    {"type": "integer", "minimum": -5, "maximum": 1234},
    {"type": "object", "patternProperties": {"^x": {"type": "string"}},
     "additionalProperties": False},
    True,
    {},
]  # fmt: skip

SCHEMA_KEYWORDS = [
    "type", "properties", "required", "additionalProperties", "items", "prefixItems",
    "minItems", "maxItems", "enum", "const", "pattern", "format", "minLength", "maxLength",
    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "allOf",
    "anyOf", "oneOf", "not", "$ref", "$defs", "definitions", "patternProperties",
    "propertyNames", "minProperties", "maxProperties", "uniqueItems", "contains", "if",
    "then", "else", "dependentRequired", "dependentSchemas", "unevaluatedProperties",
    "additionalItems", "title", "description", "default", "examples", "$schema", "$id",
    "nullable", "discriminator", "contentEncoding", "minContains", "maxContains",
]  # fmt: skip

TYPES = ["string", "integer", "number", "boolean", "null", "object", "array"]
FORMATS = ["date", "time", "date-time", "uuid", "email", "uri", "ipv4", "ipv6", "duration", "x"]

GBNF_PIECES = [
    "root", " ::= ", "::=", "|", "(", ")", "*", "+", "?", "{", "}", "{2}", "{1,3}", "{0,}",
    "{,2}", "{3,1}", "{99999}", '"', '"a"', '""', "\\", "\\x41", "\\u00e9", "\\U0001F600",
    "\\UFFFFFFFF", "\\n", "\\q", "[", "]", "^", "-", "[a-z]", "[^\\n]", "[]", "[z-a]", ".",
    "#", "\n", "\r\n", "\t", " ", "x", "x ::= x", "\nx ::= ", "é", "😀", "\x00", "\ud800",
]  # fmt: skip

REGEX_PIECES = [
    "(", ")", "[", "]", "{", "}", "|", "*", "+", "?", ".", "^", "$", "\\", "-", ",", "0",
    "9", "a", "Z", "\\d", "\\w", "\\s", "\\b", "\\B", "\\D", "(?:", "(?=", "(?!", "(?<=",
    "(?P<n>", "(?P=n)", "\\1", "\\u00e9", "\\x41", "\\p{L}", "{2,3}", "{,}", "{99999}",
    "{3,1}", "[^", "[]", "\\Z", "\\A", "(?i)", "(?x)", "é", "\x00", "\ud800", "*?", "+?",
]  # fmt: skip

# any value of any type, for arguments fuzzed "with anything"
ODD_VALUES: list[Any] = [
    None, True, False, 0, 1, -1, 2, 31, 32, 33, 2**31, 2**63, -(2**70), 1.5, math.nan,
    math.inf, -0.0, "", "a", "root", "\x00", "\ud800", "é", b"", b"a", b"\xff", [], [1],
    [None], ["a"], {}, {"a": 1}, (), (1, 2), {1, 2}, object(), np.int64(3), np.int32(-1),
    np.float32(2.0), np.array([1, 2]), np.zeros((2, 2)), np.zeros(0), Path("."), Enum,
    int, str, lambda: None,
]  # fmt: skip


def _pick(rng: random.Random, items: list[Any]) -> Any:
    return items[rng.randrange(len(items))]


def random_text(rng: random.Random, alphabet: str | None = None, size: int = 12) -> str:
    pool = alphabet or 'ab01 {}[]":,\\-.\ne\u00e9\u0000\U0001f600xyz<>|()*+?'
    return "".join(rng.choice(pool) for _ in range(rng.randrange(size + 1)))


def mutate_text(rng: random.Random, text: str, pieces: list[str], rounds: int = 3) -> str:
    """Insert pieces, delete or duplicate slices, swap two slices, at random."""
    for _ in range(rng.randint(1, rounds)):
        n = len(text)
        i, j = sorted((rng.randint(0, n), rng.randint(0, n)))
        op = rng.randrange(6)
        if op == 0:
            text = text[:i] + _pick(rng, pieces) + text[i:]
        elif op == 1:
            text = text[:i] + text[j:]
        elif op == 2:
            text = text[:i] + text[i:j] * 2 + text[j:]
        elif op == 3 and n:
            k = rng.randrange(n)
            text = text[:k] + chr(rng.choice([0, 0x7F, 0xE9, 0xD800, 0x10FFFF, 32, 92])) + text[k:]
        elif op == 4:
            text = text[i:j] + text[:i] + text[j:]
        else:
            text = "".join(_pick(rng, pieces) for _ in range(rng.randrange(12)))
    return text


def mutate_bytes(rng: random.Random, data: bytes, rounds: int = 3) -> bytes:
    """Flip, overwrite, delete, duplicate bytes; truncate; write big integers."""
    buf = bytearray(data)
    for _ in range(rng.randint(1, rounds)):
        n = len(buf)
        op = rng.randrange(6)
        if op == 0 and n:
            buf[rng.randrange(n)] ^= 1 << rng.randrange(8)
        elif op == 1 and n:
            k = rng.randrange(n)
            buf[k : k + 8] = struct.pack("<Q", rng.choice([0, 1, 2**31, 2**63, 2**64 - 1]))
        elif op == 2:
            buf = buf[: rng.randint(0, n)]
        elif op == 3 and n:
            i = rng.randrange(n)
            del buf[i : i + rng.randint(1, 16)]
        elif op == 4 and n:
            i = rng.randrange(n)
            buf[i:i] = buf[i : i + rng.randint(1, 32)]
        else:
            buf[rng.randint(0, n) : rng.randint(0, n)] = bytes(
                rng.randrange(256) for _ in range(rng.randrange(16))
            )
    return bytes(buf)


def random_json(rng: random.Random, depth: int = 2) -> Any:
    """A JSON-like value, sometimes of a type JSON does not have."""
    r = rng.randrange(14)
    if r == 0:
        return None
    if r == 1:
        return rng.choice([True, False])
    if r == 2:
        return rng.choice([0, 1, -1, 5, 2**53 + 1, -(2**70), 10**400])
    if r == 3:
        return rng.choice([0.5, -1e300, 1e-300, math.nan, math.inf, -0.0])
    if r in (4, 5):
        return rng.choice(["", "a", "string", "#", "#/", "#/$defs/x", "\ud800", "caf\u00e9",
                           "^[a-z]+$", "(", "\\", "\x00"] + TYPES + FORMATS)  # fmt: skip
    if r == 6 or depth <= 0:
        return rng.choice([[], {}, (), b"x", {1: 2}, object()])
    if r in (7, 8, 9):
        return [random_json(rng, depth - 1) for _ in range(rng.randrange(4))]
    keys = SCHEMA_KEYWORDS + ["a", "b", "", "\x00"]
    return {_pick(rng, keys): random_json(rng, depth - 1) for _ in range(rng.randrange(4))}


def plausible_value(rng: random.Random, keyword: str) -> Any:
    """A value of roughly the right shape for ``keyword`` (often subtly wrong)."""
    if keyword == "type":
        return rng.choice([_pick(rng, TYPES), rng.sample(TYPES, rng.randint(0, 3)), "any", 5])
    if keyword in ("properties", "$defs", "definitions", "patternProperties",
                   "dependentSchemas"):  # fmt: skip
        return {rng.choice(["a", "b", "^x", "é", ""]): random_schema(rng, 1)
                for _ in range(rng.randrange(3))}  # fmt: skip
    if keyword in ("required", "enum", "examples", "type_list"):
        return rng.choice([["a"], ["a", "a"], [], [1, None], "a", 5, None, [["x"]]])
    if keyword in ("allOf", "anyOf", "oneOf", "prefixItems"):
        return [random_schema(rng, 1) for _ in range(rng.randrange(4))]
    if keyword in ("items", "additionalProperties", "not", "contains", "propertyNames",
                   "if", "then", "else", "additionalItems", "unevaluatedProperties"):  # fmt: skip
        return rng.choice([random_schema(rng, 1), True, False, [], 3])
    if keyword in ("pattern",):
        return mutate_text(rng, _pick(rng, REGEX_SEEDS), REGEX_PIECES, 1)
    if keyword == "format":
        return _pick(rng, FORMATS)
    if keyword == "$ref":
        return rng.choice(["#", "#/$defs/node", "#/properties/a", "#/definitions/x",
                           "other.json#/a", "#/$defs/%25", "#/items/0", "", "#/a~1b"])  # fmt: skip
    if keyword == "const":
        return random_json(rng, 2)
    return rng.choice([0, 1, 3, -1, 2.5, 10**30, -(10**30), True, None, "3", math.nan])


def random_schema(rng: random.Random, depth: int = 2) -> Any:
    if depth <= 0 or rng.random() < 0.3:
        return copy.deepcopy(_pick(rng, SCHEMA_SEEDS))
    schema: dict[str, Any] = {}
    for _ in range(rng.randint(1, 4)):
        keyword = _pick(rng, SCHEMA_KEYWORDS)
        schema[keyword] = plausible_value(rng, keyword) if depth > 0 else random_json(rng, 1)
    return schema


def _nodes(value: Any, out: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
    """Every (container, key) position of a nested dict/list value."""
    if isinstance(value, dict):
        for key in list(value):
            out.append((value, key))
            _nodes(value[key], out)
    elif isinstance(value, list):
        for i in range(len(value)):
            out.append((value, i))
            _nodes(value[i], out)
    return out


def mutate_json(rng: random.Random, value: Any, make: Callable[[random.Random], Any]) -> Any:
    """Replace, delete, wrap or add to a random position of ``value`` (a deep copy)."""
    value = copy.deepcopy(value)
    for _ in range(rng.randint(1, 3)):
        spots = _nodes(value, [])
        if not spots or rng.random() < 0.1:
            value = make(rng) if rng.random() < 0.5 else {"allOf": [value, make(rng)]}
            continue
        parent, key = _pick(rng, spots)
        op = rng.randrange(6)
        if op == 0:
            parent[key] = random_json(rng)
        elif op == 1 and isinstance(parent, dict):
            del parent[key]
        elif op == 2:
            parent[key] = {"allOf": [parent[key], make(rng)]}
        elif op == 3 and isinstance(parent[key], dict):
            keyword = _pick(rng, SCHEMA_KEYWORDS)
            parent[key][keyword] = plausible_value(rng, keyword)
        elif op == 4:
            parent[key] = make(rng)
        else:
            other = _pick(rng, spots)
            parent[key] = copy.deepcopy(other[0][other[1]]) if other[0] is not parent else None
    return value


# -- vocabulary files --------------------------------------------------------------------


def _byte_chars() -> dict[int, str]:
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 256))
    chars = {b: chr(b) for b in keep}
    extra = 0
    for b in range(256):
        if b not in chars:
            chars[b] = chr(256 + extra)
            extra += 1
    return chars


BYTE_CHAR = _byte_chars()


def _bl(data: bytes) -> str:
    return "".join(BYTE_CHAR[b] for b in data)


TOKEN_TEXTS = [b"a", b"b", b" ", b"ab", b"yes", b"no", b'{"', b'"', b":", b",", b"}", b"1",
               b"23", b"\xc3", b"\xa9", b"\xc3\xa9", b"\n", b"-", b".", b"x"]  # fmt: skip


def tokenizer_json_doc(rng: random.Random) -> dict[str, Any]:
    """A small tokenizer.json of one of the kinds the loader reads."""
    texts = TOKEN_TEXTS + [bytes([b]) for b in range(256)]
    if rng.random() < 0.5:
        vocab = {_bl(t): i for i, t in enumerate(dict.fromkeys(texts))}
        return {
            "version": "1.0",
            "added_tokens": [{"id": len(vocab), "content": "<|endoftext|>", "special": True}],
            "model": {"type": "BPE", "vocab": vocab, "merges": ["a b"]},
            "decoder": {"type": "ByteLevel"},
            "pre_tokenizer": {"type": "ByteLevel"},
        }
    pieces = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)] + ["▁a", "b", "é"]
    return {
        "version": "1.0",
        "added_tokens": [{"id": 2, "content": "</s>", "special": True}],
        "model": {"type": "BPE", "vocab": {p: i for i, p in enumerate(pieces)}, "merges": [],
                  "byte_fallback": True},  # fmt: skip
        "decoder": {"type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
            {"type": "ByteFallback"}]},  # fmt: skip
    }


GGUF_STRING, GGUF_ARRAY, GGUF_U32, GGUF_I32 = 8, 9, 4, 5


def _gguf_value(kind: int, value: Any) -> bytes:
    if kind == GGUF_STRING:
        data = value.encode("utf-8", "surrogatepass")
        return struct.pack("<Q", len(data)) + data
    if kind == GGUF_ARRAY:
        inner, items = value
        body = b"".join(_gguf_value(inner, v) for v in items)
        return struct.pack("<IQ", inner, len(items)) + body
    return struct.pack("<I" if kind == GGUF_U32 else "<i", value)


def gguf_file(rng: random.Random) -> bytes:
    tokens = ["<|endoftext|>"] + [_bl(t) for t in dict.fromkeys(TOKEN_TEXTS)]
    types = [3] + [1] * (len(tokens) - 1)
    meta = [
        ("general.architecture", GGUF_STRING, "smol"),
        ("smol.vocab_size", GGUF_U32, len(tokens) + rng.randrange(3)),
        ("tokenizer.ggml.model", GGUF_STRING, rng.choice(["gpt2", "llama", "bert"])),
        ("tokenizer.ggml.tokens", GGUF_ARRAY, (GGUF_STRING, tokens)),
        ("tokenizer.ggml.token_type", GGUF_ARRAY, (GGUF_I32, types)),
        ("tokenizer.ggml.eos_token_id", GGUF_U32, 0),
    ]
    out = [b"GGUF", struct.pack("<IQQ", 3, 0, len(meta))]
    for key, kind, value in meta:
        out += [_gguf_value(GGUF_STRING, key), struct.pack("<I", kind), _gguf_value(kind, value)]
    return b"".join(out)


def tiktoken_file(rng: random.Random) -> bytes:
    ranks = list(dict.fromkeys([bytes([b]) for b in range(256)] + TOKEN_TEXTS))
    lines = [base64.b64encode(t) + b" " + str(i).encode() for i, t in enumerate(ranks)]
    return b"\n".join(lines) + b"\n"


def small_vocabulary(rng: random.Random) -> Vocabulary:
    tokens: list[bytes | None] = [bytes([b]) for b in range(256)]
    tokens += list(TOKEN_TEXTS) + [None, None]
    rng.shuffle(tokens)
    nones = [i for i, t in enumerate(tokens) if t is None]
    return Vocabulary(tokens, eos_token_ids=nones[:1], special_token_ids=nones[1:],
                      size=len(tokens) + rng.randrange(40))  # fmt: skip


# -- the fuzzer --------------------------------------------------------------------------


@dataclass
class Finding:
    """A foreign exception: which entry point, the input, and where it was raised."""

    entry: str
    error: str
    where: str
    case: str
    trace: str

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.entry, self.error.split(":")[0], self.where)


@dataclass
class Report:
    inputs: int = 0
    seconds: float = 0.0
    per_entry: Counter[str] = field(default_factory=Counter)
    gbnfkit_errors: Counter[str] = field(default_factory=Counter)
    findings: list[Finding] = field(default_factory=list)
    slowest: tuple[float, str, str] = (0.0, "", "")

    def distinct(self) -> dict[tuple[str, str, str], Finding]:
        return {f.key: f for f in self.findings}

    def summary(self) -> str:
        lines = [
            f"{self.inputs} inputs in {self.seconds:.1f} s; {len(self.findings)} foreign "
            f"exceptions ({len(self.distinct())} distinct); slowest input "
            f"{self.slowest[0] * 1000:.0f} ms ({self.slowest[1]})"
        ]
        for key, finding in sorted(self.distinct().items()):
            lines.append(f"  {key[0]}: {finding.error} at {finding.where}\n    {finding.case}")
        return "\n".join(lines)


class InputTimeout(BaseException):  # noqa: N818 - named after what is reported
    """An input ran longer than the fuzzer's ``timeout`` (a BaseException, so that no
    ``except Exception`` inside the code under test swallows it)."""


def _raise_timeout(signum: int, frame: object) -> None:
    raise InputTimeout("the input ran longer than the timeout")


def _apart(options: dict[str, Any]) -> dict[str, Any]:
    """Schema ``options`` whose ``limits`` (SchemaLimits) go in ``options=``, beside the
    grammar's ``limits=FUZZ_LIMITS``."""
    if "limits" not in options:
        return options
    rest = {k: v for k, v in options.items() if k != "limits"}
    return {**rest, "options": SchemaOptions(limits=options["limits"])}


def _signature_error(exc: TypeError) -> bool:
    """Python's own error for a call with an unknown keyword or too many arguments, raised
    before any code of gbnfkit runs (not wrapped: see CONTRIBUTING.md, Exceptions)."""
    frames = traceback.extract_tb(exc.__traceback__)
    inside = [f for f in frames if "gbnfkit" in f.filename and "fuzz_cases" not in f.filename]
    text = str(exc)
    return not inside and ("unexpected keyword argument" in text or "positional argument" in text)


class Fuzzer:
    """Generates inputs for every entry point from ``seed``; files go to ``workdir``."""

    def __init__(self, seed: int, workdir: Path, *, extra_schemas: list[Any] = (),
                 extra_grammars: list[str] = ()) -> None:  # fmt: skip
        self.rng = random.Random(seed)
        self.workdir = workdir
        self.schemas = list(SCHEMA_SEEDS) + list(extra_schemas)
        self.grammars = list(GBNF_SEEDS) + list(extra_grammars)
        self.grammars += [Grammar.builtin(name).to_gbnf() for name in Grammar.builtin_names()]
        setup = random.Random(seed ^ 0x5EED)
        self.vocabularies = [small_vocabulary(setup) for _ in range(2)]
        self.compilers = [gbnfkit.GrammarCompiler(v, cache_size=8) for v in self.vocabularies]
        self.case = ""
        self.saved: list[tuple[Path, Grammar, Vocabulary]] = []
        self.entries: list[tuple[str, Callable[[random.Random], None]]] = [
            ("Grammar.from_gbnf", self.fuzz_gbnf),
            ("Grammar.from_json_schema", self.fuzz_schema),
            ("json_schema_to_gbnf", self.fuzz_schema_text),
            ("SchemaOptions", self.fuzz_options),
            ("Grammar.from_regex", self.fuzz_regex),
            ("regex_to_gbnf", self.fuzz_regex_text),
            ("Grammar.from_pydantic", self.fuzz_pydantic),
            ("Vocabulary", self.fuzz_vocabulary),
            ("Vocabulary.from_tokenizer_json", self.fuzz_tokenizer_json),
            ("Vocabulary.from_gguf", self.fuzz_gguf),
            ("Vocabulary.from_tiktoken", self.fuzz_tiktoken),
            ("Vocabulary.from_huggingface", self.fuzz_huggingface),
            ("compile", self.fuzz_compile),
            ("Matcher", self.fuzz_matcher),
            ("bitmasks", self.fuzz_bitmask),
            ("CompiledGrammar.load", self.fuzz_load),
            ("cli", self.fuzz_cli),
            ("peg", self.fuzz_peg),
        ]

    # -- running ---------------------------------------------------------------------
    def run(
        self,
        n: int,
        *,
        progress: Callable[[Report], None] | None = None,
        timeout: float | None = None,
    ) -> Report:
        """Run ``n`` inputs; with ``timeout`` (seconds, Unix only) an input that takes
        longer is stopped and reported as a finding (``InputTimeout``)."""
        report = Report()
        start = time.perf_counter()
        if timeout is not None:
            signal.signal(signal.SIGALRM, _raise_timeout)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for i in range(n):
                name, fn = self.entries[i % len(self.entries)]
                self.case = ""
                t0 = time.perf_counter()
                if timeout is not None:
                    signal.setitimer(signal.ITIMER_REAL, timeout)
                try:
                    fn(self.rng)
                except GbnfkitError as exc:
                    report.gbnfkit_errors[type(exc).__name__] += 1
                except TypeError as exc:
                    if _signature_error(exc):
                        report.gbnfkit_errors["TypeError (call signature)"] += 1
                    else:
                        report.findings.append(self._finding(name, exc))
                except (Exception, InputTimeout) as exc:  # noqa: BLE001 - anything else is a finding
                    report.findings.append(self._finding(name, exc))
                finally:
                    if timeout is not None:
                        signal.setitimer(signal.ITIMER_REAL, 0)
                took = time.perf_counter() - t0
                if took > report.slowest[0]:
                    report.slowest = (took, name, self.case[:200])
                report.per_entry[name] += 1
                report.inputs += 1
                if progress is not None and report.inputs % 1000 == 0:
                    report.seconds = time.perf_counter() - start
                    progress(report)
        report.seconds = time.perf_counter() - start
        return report

    def _finding(self, name: str, exc: BaseException) -> Finding:
        frames = traceback.extract_tb(exc.__traceback__)
        inside = [f for f in frames if "gbnfkit" in f.filename and "fuzz_cases" not in f.filename]
        last = (inside or frames)[-1]
        where = f"{Path(last.filename).name}:{last.lineno} ({last.name})"
        return Finding(
            entry=name,
            error=f"{type(exc).__name__}: {str(exc)[:200]}",
            where=where,
            case=self.case[:500],
            trace="".join(traceback.format_exception(type(exc), exc, exc.__traceback__))[-3000:],
        )

    def note(self, **parts: Any) -> None:
        try:
            self.case = ", ".join(f"{k}={v!r:.300}" for k, v in parts.items())
        except RecursionError:
            self.case = ", ".join(f"{k}=<nested too deeply to show>" for k in parts)

    def odd(self, rng: random.Random) -> Any:
        return _pick(rng, ODD_VALUES)

    # -- grammars --------------------------------------------------------------------
    def gbnf_text(self, rng: random.Random) -> str:
        if rng.random() < 0.01:
            depth = rng.choice([500, 5_000, 50_000])
            return "root ::= " + "(" * depth + '"a"' + ")" * depth
        if rng.random() < 0.1:
            return random_text(rng, None, 40)
        return mutate_text(rng, _pick(rng, self.grammars), GBNF_PIECES)

    def exercise(self, rng: random.Random, grammar: Grammar) -> None:
        """Match and step through random texts (rejections raise InputRejected)."""
        text = random_text(rng)
        grammar.match(text if rng.random() < 0.8 else text.encode("utf-8", "surrogatepass"))
        state = grammar.start()
        for piece in (text[:3], text[3:].encode("utf-8", "surrogatepass")):
            state.allowed()
            state = state.feed(piece)
        state.is_complete  # noqa: B018 - a property read is part of the call sequence

    def fuzz_gbnf(self, rng: random.Random) -> None:
        text = self.gbnf_text(rng) if rng.random() > 0.03 else self.odd(rng)
        root = "root" if rng.random() < 0.9 else rng.choice(["x", "", "1", "root ", self.odd(rng)])
        self.note(text=text, root=root)
        grammar = Grammar.from_gbnf(text, root, limits=FUZZ_LIMITS)
        self.exercise(rng, grammar)

    def schema(self, rng: random.Random) -> Any:
        if rng.random() < 0.01:
            depth = rng.choice([300, 3_000, 30_000])
            key = rng.choice(["items", "not", "additionalProperties"])
            if rng.random() < 0.5:
                text = f'{{"{key}": ' * depth + '{"type": "integer"}' + "}" * depth
                return text[: rng.randrange(1, len(text) + 1)]
            deep: Any = {"type": "integer"}
            for _ in range(depth):
                deep = {key: deep}
            return deep
        seed = _pick(rng, self.schemas)
        if rng.random() < 0.05:
            return rng.choice([json.dumps(seed)[: rng.randrange(40)], self.odd(rng)])
        return mutate_json(rng, seed, random_schema)

    def options(self, rng: random.Random) -> dict[str, Any]:
        names = [
            "whitespace", "max_whitespace", "property_order", "closed_objects",
            "compact_constants", "strict", "max_integer_digits", "max_fraction_digits",
            "untyped_means_object", "max_required_any_order", "limits", "lone_surrogates",
        ]  # fmt: skip
        good: dict[str, list[Any]] = {
            "whitespace": ["compact", "flexible", "pretty", "llama"],
            "property_order": ["schema", "any"],
            "max_whitespace": [None, 1, 4], "max_integer_digits": [None, 3],
            "max_fraction_digits": [None, 2], "max_required_any_order": [0, 3, 8],
            "limits": [SchemaLimits(), SchemaLimits(max_dfa_states=20, max_product_states=40,
                                                    max_unique_values=2, max_alternatives=8,
                                                    max_grammar_chars=2_000)],
        }  # fmt: skip
        out: dict[str, Any] = {}
        for _ in range(rng.randrange(3)):
            name = _pick(rng, names) if rng.random() < 0.95 else rng.choice(["bogus", ""])
            if rng.random() < 0.8:
                out[name] = _pick(rng, good.get(name, [True, False]))
            else:
                out[name] = self.odd(rng)
        return out

    def fuzz_schema(self, rng: random.Random) -> None:
        schema, options = self.schema(rng), self.options(rng)
        options.setdefault("strict", rng.random() < 0.5)
        self.note(schema=schema, options=options)
        grammar = Grammar.from_json_schema(schema, limits=FUZZ_LIMITS, **_apart(options))
        self.exercise(rng, grammar)

    def fuzz_schema_text(self, rng: random.Random) -> None:
        schema, options = self.schema(rng), self.options(rng)
        base = None if rng.random() < 0.7 else rng.choice([SchemaOptions.llama_compat(), 3])
        self.note(schema=schema, options=options, base=base)
        json_schema_to_gbnf(schema, options=base, **options)

    def fuzz_options(self, rng: random.Random) -> None:
        options = self.options(rng)
        self.note(options=options)
        if rng.random() < 0.5:
            SchemaOptions(**options)
        else:
            SchemaOptions.llama_compat(**options)
        limits = {rng.choice([*(f.name for f in fields(Limits)), "bogus"]): self.odd(rng)}
        self.note(options=options, limits=limits)
        Grammar.from_gbnf('root ::= "[" root "]" | "a"', limits=Limits(**limits)).match("[[a]]")
        names = [f.name for f in fields(SchemaLimits)]
        schema_limits = {rng.choice([*names, "bogus"]): self.odd(rng)}
        self.note(options=options, limits=limits, schema_limits=schema_limits)
        SchemaOptions(limits=SchemaLimits(**schema_limits))

    def regex(self, rng: random.Random) -> Any:
        if rng.random() < 0.03:
            return self.odd(rng)
        if rng.random() < 0.01:
            depth = rng.choice([300, 3_000, 30_000])
            return "(" * depth + "a" + ")" * depth + rng.choice(["", "*", "{2}"])
        return mutate_text(rng, _pick(rng, REGEX_SEEDS), REGEX_PIECES)

    def fuzz_regex(self, rng: random.Random) -> None:
        pattern = self.regex(rng)
        self.note(pattern=pattern)
        self.exercise(rng, Grammar.from_regex(pattern, limits=FUZZ_LIMITS))

    def fuzz_regex_text(self, rng: random.Random) -> None:
        pattern = self.regex(rng)
        self.note(pattern=pattern)
        regex_to_gbnf(pattern)

    def fuzz_pydantic(self, rng: random.Random) -> None:
        import typing

        import pydantic

        pool: list[Any] = [int, str, float, bool, list[int], dict[str, int], str | None,
                           typing.Literal["a", 1], tuple[int, str], set[str], bytes,
                           int | list[str], Any]  # fmt: skip
        fields = {f"f{i}": (_pick(rng, pool), ...) for i in range(rng.randrange(4))}
        model: Any = pydantic.create_model("M", **fields)  # type: ignore[call-overload]
        if rng.random() < 0.3:
            model = pydantic.create_model("N", inner=(model, ...), items=(list[model], []))
        if rng.random() < 0.1:
            model = self.odd(rng)
        self.note(model=model, fields=list(fields.values()))
        options = self.options(rng) if rng.random() < 0.3 else {}
        self.exercise(rng, Grammar.from_pydantic(model, limits=FUZZ_LIMITS, **_apart(options)))

    # -- vocabularies ----------------------------------------------------------------
    def fuzz_vocabulary(self, rng: random.Random) -> None:
        pool: list[Any] = [b"a", b"\xff", None, b"", bytearray(b"x"), "a", 3, memoryview(b"m")]
        tokens: Any = [_pick(rng, pool) if rng.random() < 0.1 else _pick(rng, TOKEN_TEXTS)
                       for _ in range(rng.randrange(12))]  # fmt: skip
        if rng.random() < 0.05:
            tokens = self.odd(rng)
        ids = [rng.choice([0, 1, -1, 5, 2**40, "1", None, 1.0]) for _ in range(rng.randrange(3))]
        kwargs: dict[str, Any] = {}
        if rng.random() < 0.5:
            kwargs["eos_token_ids"] = ids if rng.random() < 0.9 else self.odd(rng)
        if rng.random() < 0.3:
            kwargs["special_token_ids"] = ids[::-1] if rng.random() < 0.9 else self.odd(rng)
        if rng.random() < 0.3:
            kwargs["size"] = rng.choice([None, 0, 5, 20, -1, 2.0, "9", True])
        self.note(tokens=tokens, kwargs=kwargs)
        vocab = Vocabulary(tokens, **kwargs)
        vocab.fingerprint  # noqa: B018
        repr(vocab)
        vocab.token_bytes(rng.choice([0, len(vocab) - 1, len(vocab), -1]))

    def _write(self, name: str, data: bytes) -> Path:
        path = self.workdir / name
        path.write_bytes(data)
        return path

    def _loader_kwargs(self, rng: random.Random) -> dict[str, Any]:
        kwargs: dict[str, Any] = {}
        if rng.random() < 0.2:
            kwargs["size"] = rng.choice([None, 1, 10**6, 0, -3, "x", 2.5])
        if rng.random() < 0.2:
            kwargs["eos_token_ids"] = rng.choice([[0], [-1], [10**9], "0", None, [None], 5])
        return kwargs

    def fuzz_tokenizer_json(self, rng: random.Random) -> None:
        doc = tokenizer_json_doc(rng)
        if rng.random() < 0.6:
            doc = mutate_json(rng, doc, lambda r: random_json(r, 2))
        data = json.dumps(doc, ensure_ascii=rng.random() < 0.5, default=repr).encode(
            "utf-8", "surrogatepass"
        )
        if rng.random() < 0.02:
            depth = rng.choice([2_000, 200_000])
            nested = b'{"type": "Sequence", "decoders": [' * depth
            data = data[:-1] + b', "decoder": ' + nested + b"{}" + b"]}" * depth + b"}"
        if rng.random() < 0.4:
            data = mutate_bytes(rng, data)
        path = self._write("tokenizer.json", data)
        kwargs = self._loader_kwargs(rng)
        target: Any = path if rng.random() < 0.95 else rng.choice(
            [self.workdir, self.workdir / "missing.json", self.odd(rng)]
        )
        self.note(data=data[:300], kwargs=kwargs, target=target)
        Vocabulary.from_tokenizer_json(target, **kwargs)

    def fuzz_gguf(self, rng: random.Random) -> None:
        data = gguf_file(rng)
        if rng.random() < 0.9:
            data = mutate_bytes(rng, data)
        path = self._write("model.gguf", data)
        kwargs = self._loader_kwargs(rng)
        self.note(data=data[:300], kwargs=kwargs)
        Vocabulary.from_gguf(path if rng.random() < 0.97 else self.odd(rng), **kwargs)

    def fuzz_tiktoken(self, rng: random.Random) -> None:
        data = tiktoken_file(rng)
        if rng.random() < 0.9:
            data = mutate_bytes(rng, data)
        path = self._write("ranks.tiktoken", data)
        kwargs = self._loader_kwargs(rng)
        if rng.random() < 0.3:
            kwargs["special_tokens"] = rng.choice(
                [{"<|endoftext|>": 300}, {"<|x|>": 0}, {"a": -1}, {"a": "b"}, {1: 2}, [], None]
            )
        self.note(data=data[:300], kwargs=kwargs)
        Vocabulary.from_tiktoken(path if rng.random() < 0.97 else self.odd(rng), **kwargs)

    def fuzz_huggingface(self, rng: random.Random) -> None:
        target = self.odd(rng)
        self.note(tokenizer=target)
        Vocabulary.from_huggingface(target, **self._loader_kwargs(rng))

    # -- compiled grammars, matchers, bitmasks ---------------------------------------
    def grammar(self, rng: random.Random) -> Grammar:
        for _ in range(20):
            try:
                return Grammar.from_gbnf(self.gbnf_text(rng), limits=FUZZ_LIMITS)
            except GbnfkitError:
                continue
        return Grammar.from_gbnf(_pick(rng, GBNF_SEEDS), limits=FUZZ_LIMITS)

    def fuzz_compile(self, rng: random.Random) -> None:
        k = rng.randrange(len(self.vocabularies))
        grammar: Any = self.grammar(rng) if rng.random() < 0.95 else self.odd(rng)
        vocab: Any = self.vocabularies[k] if rng.random() < 0.95 else self.odd(rng)
        self.note(grammar=getattr(grammar, "to_gbnf", lambda: grammar)(), vocab=vocab)
        if rng.random() < 0.5:
            compiled = gbnfkit.compile(grammar, vocab)
        else:
            compiled = self.compilers[k].compile(grammar)
        compiled.matcher().allowed_token_ids()

    def _arg(self, rng: random.Random, vocab: Vocabulary) -> Any:
        r = rng.random()
        if r < 0.6:
            return rng.randrange(vocab.size)
        if r < 0.8:
            return rng.choice([-1, vocab.size, 10**12, np.int64(1), np.uint8(3)])
        return self.odd(rng)

    def fuzz_matcher(self, rng: random.Random) -> None:
        k = rng.randrange(len(self.vocabularies))
        vocab = self.vocabularies[k]
        compiled = self.compilers[k].compile(self.grammar(rng))
        triggers: Any = None
        if rng.random() < 0.3:
            triggers = [self.trigger(rng, vocab) for _ in range(rng.randint(0, 3))]
            if rng.random() < 0.05:
                triggers = self.odd(rng)
        ops: list[str] = []
        self.note(grammar=compiled.grammar.to_gbnf(), triggers=triggers, ops=ops)
        matcher: Any = compiled.matcher() if triggers is None else compiled.matcher(triggers)
        for _ in range(rng.randrange(1, 12)):
            op = rng.randrange(14)
            ops.append(str(op))
            try:
                if op == 0:
                    allowed = matcher.allowed_token_ids()
                    if len(allowed):
                        matcher.accept_token(int(rng.choice(list(allowed))))
                elif op == 1:
                    matcher.accept_token(self._arg(rng, vocab))
                elif op == 2:
                    matcher.accept_text(random_text(rng) if rng.random() < 0.9 else self.odd(rng))
                elif op == 3:
                    matcher.is_allowed(self._arg(rng, vocab))
                elif op == 4:
                    matcher.rollback(rng.choice([0, 1, 2, 50, -1, 1.5, "1", None]))
                elif op == 5:
                    matcher.reset()
                elif op == 6:
                    matcher = matcher.fork()
                elif op == 7:
                    matcher.jump_forward()
                    matcher.accept_bytes(matcher.jump_forward_bytes())
                elif op == 8:
                    bool(matcher.is_complete) and bool(matcher.is_terminated)
                    matcher.steps  # noqa: B018
                elif op == 9:
                    shape = rng.choice([(1, (vocab.size + 31) // 32), (2, (vocab.size + 31) // 32),
                                        ((vocab.size + 31) // 32,), (1, 3), (0, 9)])  # fmt: skip
                    dtype = rng.choice([np.int32, np.int32, np.int64, np.float32, np.uint32])
                    matcher.fill_bitmask(np.zeros(shape, dtype=dtype),
                                         rng.choice([0, 0, 1, -1, 5, "0", None]))  # fmt: skip
                elif op == 10:
                    for eos in vocab.eos_token_ids:
                        matcher.accept_token(eos)
                elif op == 11:
                    matcher.fill_bitmask(self.odd(rng))
                elif op == 12:
                    repr(matcher)
                    getattr(matcher, "is_active", None)
                else:
                    matcher.accept_token(self.odd(rng))
            except GbnfkitError:
                continue

    def trigger(self, rng: random.Random, vocab: Vocabulary) -> Any:
        kind = rng.randrange(6)
        if kind == 0:
            return gbnfkit.Trigger.word(rng.choice(["<tool>", "{", "", "é", "\ud800", 5]))
        if kind == 1:
            return gbnfkit.Trigger.token(self._arg(rng, vocab))
        if kind == 2:
            return gbnfkit.Trigger.pattern(self.regex(rng))
        if kind == 3:
            return gbnfkit.Trigger.pattern_full(self.regex(rng))
        if kind == 4:
            return gbnfkit.Trigger.after(rng.choice(["<tool>", "", "x", None]))
        return self.odd(rng)

    def fuzz_peg(self, rng: random.Random) -> None:
        from gbnfkit import peg

        atoms: list[Callable[[], Any]] = [
            lambda: peg.literal(rng.choice(["<a>", "", "é", "{", "\ud800"])),
            lambda: peg.until(rng.choice(["</a>", "x", "é"])),
            peg.json_object, peg.json_string, peg.json_number, peg.json, peg.space, peg.end,
            lambda: peg.chars(rng.choice(["[a-z]", "[^x]", "[", "[z-a]", "a"])),
        ]
        parser: Any = _pick(rng, atoms)()
        for _ in range(rng.randrange(4)):
            other = _pick(rng, atoms)()
            r = rng.randrange(5)
            if r == 0:
                parser = parser + other
            elif r == 1:
                parser = peg.choice(parser, other)
            elif r == 2:
                parser = peg.optional(parser)
            elif r == 3:
                parser = peg.tag(rng.choice(["t", ""]), parser)
            else:
                parser = peg.zero_or_more(parser) if rng.random() < 0.5 else peg.atomic(parser)
        text: Any = random_text(rng, '<a>/{}"é x:1,[]\\', 30)
        if rng.random() < 0.03:
            text = self.odd(rng)
        self.note(parser=parser, text=text)
        result = parser.parse(text, partial=rng.random() < 0.5)
        result.find("t")
        if rng.random() < 0.2:
            grammar = parser.to_grammar(lazy=rng.random() < 0.5)
            repr(grammar)

    def fuzz_bitmask(self, rng: random.Random) -> None:
        vocab_size = rng.choice([1, 31, 32, 33, 100])
        batch = rng.choice([0, 1, 2, 3])
        args: list[Any] = [batch, vocab_size]
        if rng.random() < 0.1:
            args[rng.randrange(2)] = self.odd(rng)
        self.note(allocate=args)
        bitmask: Any = gbnfkit.allocate_bitmask(*args)
        shape = rng.choice([(batch, vocab_size), (vocab_size,), (batch + 1, vocab_size),
                            (batch, vocab_size + 40), (batch, 1, vocab_size)])  # fmt: skip
        dtype = rng.choice([np.float32, np.float64, np.float16, np.int64, np.bool_])
        logits: Any = np.zeros(shape, dtype=dtype)
        indices: Any = None
        if rng.random() < 0.4:
            indices = rng.choice([[0], [1, 0], [], [5], [-1], ["a"], [0.5], np.array([0]), 3])
        if rng.random() < 0.1:
            bitmask = self.odd(rng)
        if rng.random() < 0.1:
            logits = self.odd(rng)
        if rng.random() < 0.2 and isinstance(bitmask, np.ndarray) and bitmask.ndim:
            bitmask = bitmask[..., : rng.randrange(3)]
        self.note(allocate=args, logits=getattr(logits, "shape", logits), indices=indices,
                  bitmask=getattr(bitmask, "shape", bitmask))  # fmt: skip
        gbnfkit.apply_bitmask(logits, bitmask, indices=indices)

    def fuzz_load(self, rng: random.Random) -> None:
        if len(self.saved) < 3 or rng.random() < 0.05:
            k = rng.randrange(len(self.vocabularies))
            grammar = self.grammar(rng)
            compiled = self.compilers[k].compile(grammar)
            matcher = compiled.matcher()
            for _ in range(3):
                allowed = matcher.allowed_token_ids()
                text = [t for t in allowed.tolist() if t not in self.vocabularies[k].eos_token_ids]
                if not text:
                    break
                matcher.accept_token(rng.choice(text))
            path = self.workdir / f"saved{len(self.saved)}.npz"
            compiled.save(path)
            self.saved.append((path, grammar, self.vocabularies[k]))
        path, grammar, vocab = _pick(rng, self.saved)
        data = path.read_bytes()
        r = rng.random()
        if r < 0.5:
            data = mutate_bytes(rng, data)
        elif r < 0.7:
            buf = io.BytesIO()
            with np.load(path) as saved:
                fields = {name: saved[name] for name in saved.files}
            name = _pick(rng, sorted(fields))
            choice = rng.randrange(4)
            if choice == 0:
                del fields[name]
            elif choice == 1:
                fields[name] = np.asarray(rng.choice([np.zeros((2, 3)), np.array("x"),
                                                      np.array([-5, 10**9]), np.array(7)]))
            elif choice == 2:
                fields["extra"] = np.zeros(1)
            else:
                flat = fields[name].reshape(-1)
                fields[name] = flat[: max(0, flat.size - 1)]
            np.savez(buf, **fields)
            data = buf.getvalue()
        target = self._write("fuzzed.npz", data)
        other_grammar = grammar if rng.random() < 0.9 else self.grammar(rng)
        other_vocab = vocab if rng.random() < 0.9 else _pick(rng, self.vocabularies)
        self.note(data=data[:200], same_grammar=other_grammar is grammar)
        loaded = gbnfkit.CompiledGrammar.load(target, other_grammar, other_vocab)
        matcher = loaded.matcher()
        for _ in range(4):
            allowed = matcher.allowed_token_ids()
            text = [t for t in allowed.tolist() if t not in other_vocab.eos_token_ids]
            if not text:
                break
            matcher.accept_token(rng.choice(text))

    # -- the command line ----------------------------------------------------------------
    def fuzz_cli(self, rng: random.Random) -> None:
        schema = self.schema(rng)
        try:
            text = schema if isinstance(schema, str) else json.dumps(schema, default=str)
        except RecursionError:
            text = "[" * 100_000
        schema_path = self._write("schema.json", text.encode("utf-8", "surrogatepass"))
        grammar_path = self._write("g.gbnf", self.gbnf_text(rng).encode("utf-8", "surrogatepass"))
        words = ["check", "next", "fmt", "schema", "builtins", "json", "arithmetic", "--root",
                 "--schema", "--grammar", "--file", "-", "--compact", "--whitespace", "compact",
                 "--strict", "--no-strict", "--property-order", "any", "--help", "--version",
                 "--max-whitespace", "0", "x", "", "--", str(schema_path), str(grammar_path),
                 '{"a": 1}', "root ::= x", "\ud800", "-x", "--json"]  # fmt: skip
        argv = [_pick(rng, words) for _ in range(rng.randint(0, 5))]
        if rng.random() < 0.7:
            argv.insert(0, rng.choice(["check", "next", "fmt", "schema", "builtins"]))
        stdin = random_text(rng, None, 30).encode("utf-8", "surrogatepass")
        if rng.random() < 0.2:
            stdin = mutate_bytes(rng, stdin + b"\xff\xfe")
        self.note(argv=argv, stdin=stdin)
        out, err = io.StringIO(), io.StringIO()
        old = sys.stdin, sys.stdout, sys.stderr
        sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), "utf-8")
        sys.stdout, sys.stderr = out, err
        try:
            status = cli_main(argv)
        except SystemExit as exc:  # argparse --help/--version paths: must not escape main
            status = -1000 - (exc.code if isinstance(exc.code, int) else 1)
        finally:
            sys.stdin, sys.stdout, sys.stderr = old
        text = out.getvalue() + err.getvalue()
        if status == 70 or status < 0 or "Traceback" in text:
            raise AssertionError(f"cli exit status {status}: {err.getvalue()[-300:]}")
        if status not in (0, 1, 2, 3, 4, 5):
            raise AssertionError(f"undocumented cli exit status {status}")
