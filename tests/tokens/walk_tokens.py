"""The tokens of the random-walk tests of the matcher: every single byte, multi-byte
tokens, a character split across tokens and a token that starts inside one."""

from __future__ import annotations

WALK_TOKENS: list[bytes] = [bytes([b]) for b in range(256)] + [
    b"ab",
    b"abc",
    "é".encode(),
    "éx".encode(),
    b"\xa9x",
    b'{"',
    b'":',
    b"null",
    b"12",
    "日本".encode(),
    "日".encode()[:2],
    "日".encode()[2:],
]
