"""``gbnfkit serve`` before any model loads: the listening address."""

from __future__ import annotations

import socket
from collections.abc import Callable
from typing import Any

import pytest

from gbnfkit.cli._exit import ExitCode

Cli = Callable[..., Any]  # the ``cli`` fixture of conftest.py

pytest.importorskip("uvicorn")  # the [server] extra


def test_a_port_in_use_is_a_usage_error_before_the_model_loads(
    cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    # found by bughunt12: uvicorn exited with its status 3 (here: an invalid grammar) after
    # the model had loaded
    from gbnfkit import server

    def no_engine(*args: object, **kwargs: object) -> None:
        raise AssertionError("the model was loaded for a port that cannot be used")

    monkeypatch.setattr(server, "Engine", no_engine)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        run = cli("serve", "--host", "127.0.0.1", "--port", str(port))
    assert run.status == ExitCode.USAGE
    reason = "Address already in use"
    assert run.err == f"gbnfkit serve: cannot listen on 127.0.0.1 port {port}: {reason}\n"
    assert run.out == ""


def test_port_0_names_the_port_the_system_chose(
    cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    # found by bughunt12: 'serve --port 0' said it served on http://127.0.0.1:0/v1
    import uvicorn

    from gbnfkit import server
    from gbnfkit.chat import ChatFormat

    class FakeEngine:
        model_id = "fake"
        chat_format = ChatFormat.HERMES

        def __init__(self, config: object) -> None:
            pass

        def close(self) -> None:
            pass

    served: list[int] = []

    def run(self: object, sockets: list[socket.socket]) -> None:
        served.extend(sock.getsockname()[1] for sock in sockets)

    monkeypatch.setattr(server, "Engine", FakeEngine)
    monkeypatch.setattr(server, "create_app", lambda config, engine: None)
    monkeypatch.setattr(uvicorn.Server, "run", run)
    result = cli("serve", "--port", "0")
    assert result.status == ExitCode.OK, result.err
    assert len(served) == 1 and served[0] != 0
    assert f"on http://127.0.0.1:{served[0]}/v1\n" in result.err
