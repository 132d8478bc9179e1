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


@pytest.mark.parametrize("key", ["", "clé", " k"])
def test_an_api_key_no_client_can_send_is_a_usage_error(
    key: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--api-key ''`` (``--api-key "$KEY"`` with KEY unset) served without any key."""
    import uvicorn

    import gbnfkit.server as server

    served: list[object] = []
    monkeypatch.setattr(server, "Engine", lambda config: pytest.fail("the model was loaded"))
    monkeypatch.setattr(uvicorn.Server, "run", lambda self, sockets: served.append(self))
    assert main(["serve", "--port", "0", "--api-key", key]) == 4
    err = capsys.readouterr().err
    assert "--api-key: expected a key" in err and "Traceback" not in err
    assert served == []


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

    def fake_run(self: object, sockets: object) -> None:
        # frozen objects are outside every generation the collector traverses
        collected.append(any(o is engines[0].loaded for o in gc.get_objects()))

    monkeypatch.setattr(server, "Engine", make_engine)
    monkeypatch.setattr(server, "create_app", lambda config, engine: object())
    monkeypatch.setattr(uvicorn.Server, "run", fake_run)
    try:
        assert main(["serve", "--port", "0"]) == 0
    finally:
        gc.unfreeze()
    assert collected == [False]
    assert any(o is engines[0].loaded for o in gc.get_objects())


def test_serve_help_lists_the_chat_template_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--help"]) == 0
    out = capsys.readouterr().out
    assert "--chat-template-file PATH" in out and "4  usage error" in out


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (None, "gbnfkit serve: cannot read the chat template"),
        (b"\xfe", "not valid UTF-8"),
        (b"", "the chat template is empty"),
        (b"{% for m in messages %}\n{{ m.content }\n", "line 2: not valid Jinja: unexpected '}'"),
    ],
)
def test_a_bad_chat_template_file_exits_4_with_one_message(
    tmp_path: Path, content: bytes | None, words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "t.jinja"
    if content is not None:
        path.write_bytes(content)
    assert main(["serve", "--chat-template-file", str(path), "--threads", "1"]) == 4
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err and len(err.splitlines()) == 1, err
    assert err.startswith("gbnfkit serve: ") and repr(str(path)) in err
    if words.startswith(("the chat template", "line")):  # read, but not a template
        assert err.startswith(f"gbnfkit serve: --chat-template-file {str(path)!r}: ")


def test_serve_gives_the_chat_template_file_to_the_engine_as_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import uvicorn

    import gbnfkit.server as server
    from gbnfkit.chat import ChatFormat

    template = "{{ bos_token }}\r\n{% for m in messages %}[INST] {{ m.content }}{% endfor %}\n"
    path = tmp_path / "mistral.jinja"
    path.write_bytes(template.encode("utf-8"))
    configs: list[server.ServerConfig] = []

    class FakeEngine:
        model_id = "fake"
        chat_format = ChatFormat.MISTRAL

        def __init__(self, config: server.ServerConfig) -> None:
            configs.append(config)

        def close(self) -> None:
            pass

    monkeypatch.setattr(server, "Engine", FakeEngine)
    monkeypatch.setattr(server, "create_app", lambda config, engine: object())
    monkeypatch.setattr(uvicorn.Server, "run", lambda self, sockets: None)
    import gc

    try:
        assert main(["serve", "--port", "0", "--chat-template-file", str(path)]) == 0
    finally:
        gc.unfreeze()
    assert configs[0].chat_template == template  # CRLF, the final newline: as in the file
    assert configs[0].chat_format is None  # chosen by the engine from the template
    err = capsys.readouterr().err
    assert f"(mistral chat format, chat template {path}, 1 slot(s))" in err
