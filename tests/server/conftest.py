"""The server's tests share one engine: the bundled SmolLM2-135M-Instruct, loaded once for
the session in two slots (one llama.cpp thread each), served by apps of any config."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from serve_cases import MAX_TOKENS
from starlette.testclient import TestClient

from gbnfkit.server import Engine, ServerConfig, create_app


@pytest.fixture(scope="session")
def engine() -> Iterator[Engine]:
    loaded = Engine(ServerConfig(parallel=2, ctx_size=512, threads=1))
    yield loaded
    loaded.close()


@pytest.fixture(scope="module")
def client(engine: Engine) -> Iterator[TestClient]:
    app = create_app(ServerConfig(max_tokens=MAX_TOKENS), engine=engine)
    with TestClient(app) as test_client:
        yield test_client
