"""A live uvicorn server on 127.0.0.1 (a free port) in a thread, for real HTTP clients."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn

from gbnfkit.server import Engine, ServerConfig, create_app

_START_SECONDS = 20.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def live_server(engine: Engine, config: ServerConfig) -> Iterator[str]:
    """The base URL (``http://127.0.0.1:PORT/v1``) of a server running until the block ends."""
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(
            create_app(config, engine=engine),
            host="127.0.0.1",
            port=port,
            log_level="warning",
            lifespan="on",
        )
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + _START_SECONDS
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the test server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        server.should_exit = True
        thread.join(_START_SECONDS)
