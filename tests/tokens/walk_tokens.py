"""The tokens and grammars of the random-walk tests of the matcher: every single byte,
multi-byte tokens, a character split across tokens and a token that starts inside one."""

from __future__ import annotations

from gbnfkit import Grammar

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

# what both walks compile: structure, a character choice, CJK and digits, an ambiguity
WALK_GRAMMARS: list[Grammar] = [
    Grammar.builtin("json"),
    Grammar.from_gbnf('root ::= "abc" ("é" | "è") "xyz" | "abd"'),
    Grammar.from_gbnf('root ::= "日本語" [0-9]+ "end"'),
    Grammar.from_gbnf('root ::= ("ab" | "abc")* "."'),
]
