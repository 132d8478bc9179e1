"""The server's error: an HTTP status and OpenAI's error body."""

from __future__ import annotations

import enum

from gbnfkit._errors import GbnfkitError

__all__ = ["ApiError", "ErrorType"]


class ErrorType(enum.Enum):
    """OpenAI's ``error.type`` values the server uses."""

    INVALID_REQUEST = "invalid_request_error"
    AUTHENTICATION = "authentication_error"
    NOT_FOUND = "not_found_error"
    SERVER = "server_error"


class ApiError(GbnfkitError):
    """A request the server refuses (or, status 500, failed on): ``{"error": {...}}``.

    A :class:`gbnfkit.GbnfkitError`, so ``except GbnfkitError`` around the public
    ``Engine`` calls that raise it (``compiled``, ``generate``) catches it too.

    Attributes:
        status: the HTTP status.
        message: what is wrong, naming the field and, for grammars and schemas, the
            position (line, column) or JSON pointer.
        type: OpenAI's error type.
        param: the request field at fault (``None`` when there is none).
        code: a short machine-readable code (``None`` when there is none).
    """

    def __init__(
        self,
        message: str,
        *,
        status: int = 400,
        type: ErrorType = ErrorType.INVALID_REQUEST,  # noqa: A002
        param: str | None = None,
        code: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.type = type
        self.param = param
        self.code = code

    def body(self) -> dict[str, object]:
        """OpenAI's error body."""
        return {
            "error": {
                "message": self.message,
                "type": self.type.value,
                "param": self.param,
                "code": self.code,
            }
        }
