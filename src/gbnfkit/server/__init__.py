"""An OpenAI-compatible server for grammar-constrained decoding (``pip install 'gbnfkit[server]'``).

``gbnfkit serve`` runs it; :func:`create_app` is the ASGI app (Starlette) for any ASGI
server. ``POST /v1/chat/completions`` (``response_format``, ``tools``, llama.cpp's
``grammar`` / ``json_schema`` / ``grammar_triggers``, streaming), ``POST /v1/completions``,
``GET /v1/models``, ``GET /health``. See README, "Serving".

Not imported by ``import gbnfkit``; needs starlette (and uvicorn for ``gbnfkit serve``).
"""

from __future__ import annotations

from gbnfkit._public import publish as _publish
from gbnfkit.server._app import create_app
from gbnfkit.server._config import ServerConfig
from gbnfkit.server._engine import Engine
from gbnfkit.server._errors import ApiError, ErrorType

__all__ = ["ApiError", "Engine", "ErrorType", "ServerConfig", "create_app"]

_publish(__name__, globals(), __all__)
