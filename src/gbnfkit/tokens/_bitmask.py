"""Packed token bitmasks (XGrammar / llguidance layout) and applying them to logits.

Row ``r`` of a bitmask holds ``ceil(V / 32)`` int32 words; bit ``i % 32`` of word
``i // 32`` is set iff token ``i`` is allowed.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from gbnfkit._errors import VocabularyError

__all__ = ["allocate_bitmask", "apply_bitmask", "write_mask_row"]


def allocate_bitmask(batch: int, vocab_size: int) -> npt.NDArray[np.int32]:
    """A ``(batch, ceil(vocab_size / 32))`` int32 array with every bit set (all allowed)."""
    if batch < 0 or vocab_size <= 0:
        raise VocabularyError(f"bad bitmask shape: batch={batch}, vocab_size={vocab_size}")
    return np.full((batch, (vocab_size + 31) // 32), -1, dtype=np.int32)


def write_mask_row(
    bitmask: npt.NDArray[np.int32], row: int, words: npt.NDArray[np.int32], vocab_size: int
) -> None:
    """Copy the packed mask ``words`` into row ``row`` of ``bitmask`` (or into a 1-D one).

    Raises:
        IndexError: ``row`` is not 0 for a one-dimensional ``bitmask``.
        VocabularyError: the rows of ``bitmask`` do not have ``len(words)`` words.
    """
    if bitmask.ndim == 1:
        if row != 0:
            raise IndexError("row must be 0 for a one-dimensional bitmask")
        target = bitmask
    else:
        target = bitmask[row]
    if target.shape[-1] != words.shape[0]:
        raise VocabularyError(
            f"bitmask rows have {target.shape[-1]} words; this vocabulary needs "
            f"{words.shape[0]} (ceil({vocab_size} / 32))"
        )
    target[...] = words


def _unpack(bitmask: npt.NDArray[np.int32], width: int) -> npt.NDArray[np.bool_]:
    """Boolean ``(rows, width)`` array: True where the token is allowed."""
    words = np.ascontiguousarray(bitmask, dtype=np.int32)
    bits = np.unpackbits(words.view(np.uint8), axis=-1, bitorder="little")
    if bits.shape[-1] < width:
        raise VocabularyError(
            f"the bitmask covers {bits.shape[-1]} tokens but the logits have {width}"
        )
    return bits[..., :width].astype(bool)


def apply_bitmask(logits: Any, bitmask: Any, *, indices: Any = None) -> None:
    """Set disallowed logits to -inf, in place.

    ``logits`` is ``(V,)`` or ``(batch, V)``; ``bitmask`` is ``(ceil(V/32),)`` or
    ``(batch, ceil(V/32))``.  ``indices`` (optional) lists the rows of ``logits`` to
    mask, row ``k`` of ``bitmask`` going to row ``indices[k]``.  Works on numpy
    arrays and, when torch is installed, on torch tensors on any device (the small
    bitmask is moved to the logits' device; logits are never copied to the CPU).
    """
    if type(logits).__module__.startswith("torch"):
        _apply_torch(logits, bitmask, indices)
        return
    if not isinstance(logits, np.ndarray):
        raise TypeError(f"logits must be a numpy array or torch tensor, not {type(logits)}")
    mask = np.asarray(bitmask, dtype=np.int32)
    width = logits.shape[-1]
    allowed = _unpack(mask.reshape(-1, mask.shape[-1]), width)
    if logits.ndim == 1:
        logits[~allowed[0]] = -np.inf
        return
    if indices is None:
        if allowed.shape[0] != logits.shape[0]:
            raise VocabularyError(
                f"bitmask has {allowed.shape[0]} rows but logits have {logits.shape[0]}"
            )
        logits[~allowed] = -np.inf
        return
    rows = np.asarray(indices, dtype=np.int64)
    sub = logits[rows]
    sub[~allowed[: len(rows)]] = -np.inf
    logits[rows] = sub


def _apply_torch(logits: Any, bitmask: Any, indices: Any) -> None:
    import torch  # type: ignore[import-not-found,unused-ignore]

    width = logits.shape[-1]
    if isinstance(bitmask, np.ndarray):
        bitmask = torch.from_numpy(np.ascontiguousarray(bitmask, dtype=np.int32))
    mask = bitmask.to(device=logits.device, dtype=torch.int32, non_blocking=True)
    mask = mask.reshape(-1, mask.shape[-1])
    if mask.shape[-1] * 32 < width:
        raise VocabularyError(
            f"the bitmask covers {mask.shape[-1] * 32} tokens but the logits have {width}"
        )
    shifts = torch.arange(32, device=logits.device, dtype=torch.int32)
    bits = ((mask.unsqueeze(-1) >> shifts) & 1).reshape(mask.shape[0], -1)[:, :width]
    disallowed = bits == 0
    if logits.dim() == 1:
        logits.masked_fill_(disallowed[0], float("-inf"))
        return
    if indices is None:
        logits.masked_fill_(disallowed, float("-inf"))
        return
    rows = torch.as_tensor(indices, device=logits.device, dtype=torch.long)
    sub = logits.index_select(0, rows)
    sub.masked_fill_(disallowed[: rows.shape[0]], float("-inf"))
    logits.index_copy_(0, rows, sub)
