"""How canonical forms are written, and their signatures (``docs/masks.md``,
"Canonical sharing").

A form is ``(frames, body)``: the context's frames renumbered, then each number's
description in turn.  A description's head is a test's byte set (``>= 0``),
``_SIGNED_END``, ``_SIGNED_CALL`` minus the called rule's number of alternatives, or
``_FAR`` for a position no token reaches.  A signature is cheap to compute from a
context key and equal for equal forms, so an index that counts the signatures of the
forms it keeps can skip computing a form that cannot match.
"""

from __future__ import annotations

from typing import Final

from gbnfkit.tokens._byteprogram import END, TEST
from gbnfkit.tokens._bytestate import Stack

__all__ = ["_FAR", "_SIGNED_CALL", "_SIGNED_END", "_UNSEEN", "_form_signature", "_key_signature"]

_FAR: Final = -3  # a canonical form's description of a position no token reaches
# heads of descriptions in a canonical form (and in signatures): a test's byte set (>= 0),
# an end, or a call (_SIGNED_CALL minus its number of alternatives); _UNSEEN: not yet
_SIGNED_END: Final = -4
_UNSEEN: Final = -5  # never in a form
_SIGNED_CALL: Final = -6


def _form_signature(form: tuple[object, ...]) -> tuple[int, ...]:
    """The signature of a canonical form (``docs/masks.md``, "Canonical sharing"): per
    frame of its key, the separator or bottom marker as it is, else the head of the
    frame's description (its byte set if a test, ``_SIGNED_END``, or ``_SIGNED_CALL``
    minus the called rule's number of alternatives).  The frames are numbered first, so
    their descriptions open the form's body.  :func:`_key_signature` computes the same
    from a context key without its form."""
    frames, body = form
    assert isinstance(frames, tuple) and isinstance(body, tuple)
    wanted = 0
    for f in frames:
        assert isinstance(f, int)
        wanted = max(wanted, f + 1)
    heads: list[int] = []
    at = 0
    while len(heads) < wanted:
        h = body[at]
        assert isinstance(h, int)
        heads.append(h)
        if h >= 0:
            at += 2
        elif h <= _SIGNED_CALL:
            at += _SIGNED_CALL - h + 2
        else:
            at += 1  # an end (frames are read before any byte: never _FAR)
    out: list[int] = []
    for f in frames:
        assert isinstance(f, int)
        out.append(f if f < 0 else heads[f])
    return tuple(out)


def _key_signature(key: Stack, kind: tuple[int, ...], arg: tuple[int, ...],
                   rules: tuple[tuple[int, ...], ...]) -> tuple[int, ...]:
    """:func:`_form_signature` of ``key``'s canonical form, read from the program
    (``kind``, ``arg``, ``rules``) in one step per frame."""
    out: list[int] = []
    for p in key:
        if p < 0:
            out.append(p)
        else:
            k = kind[p]
            if k == TEST:
                out.append(arg[p])
            elif k == END:
                out.append(_SIGNED_END)
            else:
                out.append(_SIGNED_CALL - len(rules[arg[p]]))
    return tuple(out)
