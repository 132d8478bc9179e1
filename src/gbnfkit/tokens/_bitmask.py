"""Packed token bitmasks (XGrammar / llguidance layout) and applying them to logits.

Row ``r`` of a bitmask holds ``ceil(V / 32)`` int32 words; bit ``i % 32`` of word
``i // 32`` is set iff token ``i`` is allowed.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np
import numpy.typing as npt

from gbnfkit._errors import ArgumentError, VocabularyError
from gbnfkit.tokens._vocabulary import MAX_VOCABULARY_SIZE

__all__ = ["allocate_bitmask", "apply_bitmask", "write_mask_row"]

_MAX_WORDS = 1 << 28  # 1 GiB: far above any batch of masks, so a bigger request is a mistake
_INT32 = np.dtype(np.int32)


def allocate_bitmask(batch: int, vocab_size: int) -> npt.NDArray[np.int32]:
    """A ``(batch, ceil(vocab_size / 32))`` int32 array with every bit set (all allowed).

    Raises:
        ArgumentError: ``batch`` or ``vocab_size`` is not an integer, or the array would
            take more than 1 GiB (or not fit in memory).
        VocabularyError: ``batch`` is negative, or ``vocab_size`` is not in
            ``1..MAX_VOCABULARY_SIZE``.
    """
    batch = _integer(batch, "batch")
    vocab_size = _integer(vocab_size, "vocab_size")
    if batch < 0 or not 0 < vocab_size <= MAX_VOCABULARY_SIZE:
        raise VocabularyError(f"bad bitmask shape: batch={batch}, vocab_size={vocab_size}")
    words = (vocab_size + 31) // 32
    if batch * words > _MAX_WORDS:
        raise ArgumentError(
            f"a bitmask of {batch} rows of {words} words is above the largest supported "
            f"({_MAX_WORDS * 4 >> 30} GiB)"
        )
    try:
        return np.full((batch, words), -1, dtype=np.int32)
    except MemoryError:
        raise ArgumentError(f"cannot allocate a bitmask of {batch} rows") from None


def _integer(value: object, name: str) -> int:
    if isinstance(value, bool):
        raise ArgumentError(f"{name} must be an integer, not bool")
    try:
        return operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        raise ArgumentError(f"{name} must be an integer, not {type(value).__name__}") from None


def write_mask_row(bitmask: Any, row: int, words: npt.NDArray[np.int32], vocab_size: int) -> None:
    """Copy the packed mask ``words`` into row ``row`` of ``bitmask`` (``fill_bitmask``).

    Raises:
        ArgumentError: ``bitmask`` is not an int32 array (numpy, or a CPU torch tensor) of 1
            or 2 dimensions, or ``row`` is not one of its rows.
        VocabularyError: the rows are not ``len(words)`` words wide.
    """
    if type(bitmask) is np.ndarray and bitmask.dtype is _INT32 and type(row) is int:
        # the usual call, checked without formatting the dtype (2 of a cached mask's 4 µs)
        shape = bitmask.shape
        try:
            if len(shape) == 2 and 0 <= row < shape[0] and shape[1] == len(words):
                bitmask[row] = words
                return
            if len(shape) == 1 and row == 0 and shape[0] == len(words):
                bitmask[...] = words
                return
        except ValueError:
            if not bitmask.flags.writeable:
                raise ArgumentError("bitmask is read-only; give a writeable array") from None
            raise
    is_torch = type(bitmask).__module__.startswith("torch")
    if not (isinstance(bitmask, np.ndarray) or is_torch):
        raise ArgumentError(f"bitmask must be an int32 array, not {type(bitmask).__name__}")
    if str(bitmask.dtype) not in ("int32", "torch.int32") or bitmask.ndim not in (1, 2):
        raise ArgumentError(
            f"bitmask must be an int32 array of 1 or 2 dimensions, not {bitmask.dtype} "
            f"of shape {tuple(bitmask.shape)}"
        )
    if isinstance(row, bool) or not isinstance(row, (int, np.integer)):
        raise ArgumentError(f"row must be an integer, not {type(row).__name__}")
    rows = 1 if bitmask.ndim == 1 else int(bitmask.shape[0])
    if not 0 <= row < rows:
        raise ArgumentError(f"row {row} is outside the bitmask ({rows} rows)")
    if not is_torch and not bitmask.flags.writeable:
        raise ArgumentError("bitmask is read-only; give a writeable array")
    target = bitmask if bitmask.ndim == 1 else bitmask[int(row)]
    if target.shape[-1] != words.shape[0]:
        raise VocabularyError(
            f"bitmask rows have {target.shape[-1]} words; this vocabulary needs "
            f"{words.shape[0]} (ceil({vocab_size} / 32))"
        )
    if is_torch:
        import torch  # type: ignore[import-not-found,unused-ignore]

        # a writeable copy where ``words`` is read-only (torch warns on those)
        target.copy_(torch.from_numpy(np.require(words, requirements=["C", "W"])))
    else:
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


def _rows(indices: Any, logit_rows: int, mask_rows: int) -> list[int]:
    """The listed row numbers, checked against both arrays (XGrammar's ``indices``)."""
    try:
        listed = [operator.index(i) for i in np.asarray(indices).reshape(-1).tolist()]
    except (TypeError, ValueError):
        raise ArgumentError(f"indices must be integers, not {indices!r:.80}") from None
    for i in listed:
        if not (0 <= i < logit_rows and i < mask_rows):
            raise ArgumentError(
                f"index {i} is outside the logits ({logit_rows} rows) "
                f"or the bitmask ({mask_rows} rows)"
            )
    return listed


def apply_bitmask(logits: Any, bitmask: Any, *, indices: Any = None) -> None:
    """Set disallowed logits to -inf, in place.

    ``logits`` is ``(V,)`` or ``(batch, V)``; ``bitmask`` is ``(ceil(V/32),)`` or
    ``(batch, ceil(V/32))``.  ``indices`` (optional) lists the rows to mask, as in
    XGrammar's ``apply_token_bitmask_inplace``: for each listed ``i``, row ``i`` of
    ``bitmask`` applies to row ``i`` of ``logits`` (other rows are left alone).  Works on
    numpy arrays and, when torch is installed, on torch tensors on any device (the small
    bitmask is moved to the logits' device; logits are never copied to the CPU).

    Raises:
        ArgumentError: ``logits`` is not a writable floating-point numpy array or torch
            tensor of one or two dimensions, ``bitmask`` is not an integer array (booleans
            are not packed words), or an index is outside either.
        VocabularyError: the bitmask covers fewer tokens than the logits, or (without
            ``indices``) has another number of rows.
    """
    if type(logits).__module__.startswith("torch"):
        _apply_torch(logits, bitmask, indices)
        return
    if not isinstance(logits, np.ndarray):
        raise ArgumentError(
            f"logits must be a numpy array or torch tensor, not {type(logits).__name__}"
        )
    if logits.ndim not in (1, 2) or logits.dtype.kind != "f":
        raise ArgumentError(
            f"logits must be a floating-point array of 1 or 2 dimensions, "
            f"not {logits.dtype} of shape {logits.shape}"
        )
    if not logits.flags.writeable:
        raise ArgumentError("logits must be writable: apply_bitmask masks them in place")
    mask = _mask_array(bitmask)
    width = logits.shape[-1]
    allowed = _unpack(mask.reshape(-1, mask.shape[-1]), width)
    table = logits[np.newaxis, :] if logits.ndim == 1 else logits
    if indices is None:
        if allowed.shape[0] != table.shape[0]:
            raise VocabularyError(
                f"bitmask has {allowed.shape[0]} rows but logits have {table.shape[0]}"
            )
        table[~allowed] = -np.inf
        return
    for i in _rows(indices, table.shape[0], allowed.shape[0]):
        table[i, ~allowed[i]] = -np.inf


def _mask_array(bitmask: Any) -> npt.NDArray[np.int32]:
    if type(bitmask).__module__.startswith("torch"):
        bitmask = bitmask.detach().cpu().numpy()
    if not isinstance(bitmask, np.ndarray) or bitmask.dtype.kind not in "iu":
        raise ArgumentError(f"bitmask must be an int32 array, not {type(bitmask).__name__}")
    if bitmask.ndim not in (1, 2) or bitmask.shape[-1] == 0:
        raise ArgumentError(f"bitmask must have 1 or 2 dimensions, not shape {bitmask.shape}")
    return bitmask.astype(np.int32, copy=False)


def _apply_torch(logits: Any, bitmask: Any, indices: Any) -> None:
    import torch  # type: ignore[import-not-found,unused-ignore]

    if logits.dim() not in (1, 2) or not logits.is_floating_point():
        raise ArgumentError(
            f"logits must be a floating-point tensor of 1 or 2 dimensions, "
            f"not {logits.dtype} of shape {tuple(logits.shape)}"
        )
    width = logits.shape[-1]
    if isinstance(bitmask, np.ndarray):
        bitmask = torch.from_numpy(np.ascontiguousarray(_mask_array(bitmask)))
    elif (
        not type(bitmask).__module__.startswith("torch")
        or bitmask.is_floating_point()
        or bitmask.dtype == torch.bool  # a boolean mask would be read as words of 0 and 1
    ):
        raise ArgumentError(
            f"bitmask must be an int32 array, not {type(bitmask).__name__} "
            f"of {getattr(bitmask, 'dtype', '?')}"
        )
    mask = bitmask.to(device=logits.device, dtype=torch.int32, non_blocking=True)
    if mask.dim() not in (1, 2) or mask.shape[-1] == 0:
        raise ArgumentError(
            f"bitmask must have 1 or 2 dimensions, not shape {tuple(mask.shape)}"
        )
    mask = mask.reshape(-1, mask.shape[-1])
    if mask.shape[-1] * 32 < width:
        raise VocabularyError(
            f"the bitmask covers {mask.shape[-1] * 32} tokens but the logits have {width}"
        )
    shifts = torch.arange(32, device=logits.device, dtype=torch.int32)
    bits = ((mask.unsqueeze(-1) >> shifts) & 1).reshape(mask.shape[0], -1)[:, :width]
    disallowed = bits == 0
    table = logits.unsqueeze(0) if logits.dim() == 1 else logits
    if indices is None:
        if disallowed.shape[0] != table.shape[0]:
            raise VocabularyError(
                f"bitmask has {disallowed.shape[0]} rows but logits have {table.shape[0]}"
            )
        table.masked_fill_(disallowed, float("-inf"))
        return
    if type(indices).__module__.startswith("torch"):
        indices = indices.detach().cpu().numpy()
    listed = _rows(indices, table.shape[0], disallowed.shape[0])
    if not listed:
        return
    rows = torch.as_tensor(listed, device=logits.device, dtype=torch.long)
    sub = table.index_select(0, rows)
    sub.masked_fill_(disallowed.index_select(0, rows), float("-inf"))
    table.index_copy_(0, rows, sub)
