"""``gbnfkit serve``: flag errors in-process; a real run as a subprocess on loopback."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from live_server import free_port

from gbnfkit.cli import main

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--port", "70000"], "port number"),
        (["--parallel", "0"], "positive integer"),
        (["--chat-format", "xml"], "invalid choice"),
        (["--model", "/no/such/model.gguf"], "cannot load the model"),
    ],
)
def test_bad_flags_exit_4_with_one_message(
    argv: list[str], words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["serve", *argv]) == 4
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err


def test_serve_runs_until_stopped() -> None:
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    command = [
        sys.executable,
        "-m",
        "gbnfkit.cli",
        "serve",
        "--port",
        str(port),
        "--max-tokens",
        "4",
        "--threads",
        "1",
        "--api-key",
        "k",
    ]
    server = subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True)
    try:
        base = f"http://127.0.0.1:{port}"
        for _ in range(300):
            try:
                if httpx.get(f"{base}/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        reply = httpx.post(
            f"{base}/v1/chat/completions",
            timeout=60,
            headers={"Authorization": "Bearer k"},
            json={"messages": [{"role": "user", "content": "Hi"}]},
        )
        assert reply.status_code == 200
        assert reply.json()["usage"]["completion_tokens"] <= 4
    finally:
        server.terminate()
        _, err = server.communicate(timeout=30)
    assert f"on http://127.0.0.1:{port}/v1" in err


def test_serve_freezes_what_it_loaded_before_serving(monkeypatch: pytest.MonkeyPatch) -> None:
    """The model and vocabulary are moved out of the collector's reach (``gc.freeze()``)
    before the first request: a full collection would otherwise traverse the
    vocabulary's trie whenever a request's grammar triggers one."""
    import gc

    import uvicorn

    import gbnfkit.server as server
    from gbnfkit.chat import ChatFormat

    class FakeEngine:
        model_id = "fake"
        chat_format = next(iter(ChatFormat))

        def __init__(self, config: object) -> None:
            self.loaded: list[object] = [object()]  # stands for the model and vocabulary

        def close(self) -> None:
            pass

    engines: list[FakeEngine] = []
    collected: list[bool] = []

    def make_engine(config: object) -> FakeEngine:
        engines.append(FakeEngine(config))
        return engines[-1]

    def fake_run(app: object, **kwargs: object) -> None:
        # frozen objects are outside every generation the collector traverses
        collected.append(any(o is engines[0].loaded for o in gc.get_objects()))

    monkeypatch.setattr(server, "Engine", make_engine)
    monkeypatch.setattr(server, "create_app", lambda config, engine: object())
    monkeypatch.setattr(uvicorn, "run", fake_run)
    try:
        assert main(["serve", "--port", "0"]) == 0
    finally:
        gc.unfreeze()
    assert collected == [False]
    assert any(o is engines[0].loaded for o in gc.get_objects())
