"""Logits from numpy arrays or torch tensors, as read-only numpy rows on the CPU.

Torch is never imported here: a tensor is recognised by its type's module, moved to the
CPU once (the whole batch in one copy) and viewed as numpy.  The caller's logits are
never modified.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from gbnfkit._errors import ArgumentError

__all__ = ["Row", "to_rows"]

Row = npt.NDArray[np.floating[Any]]


def _is_torch(value: object) -> bool:
    return type(value).__module__.startswith("torch")


def _torch_to_numpy(tensor: Any) -> npt.NDArray[Any]:
    tensor = tensor.detach()
    if tensor.device.type != "cpu":
        tensor = tensor.to("cpu")
    name = str(tensor.dtype)
    if "complex" in name or name == "torch.bool":
        raise ArgumentError(f"logits must be real numbers, not {name}")
    if name not in ("torch.float32", "torch.float64"):
        tensor = tensor.float()
    return np.asarray(tensor.numpy())


def to_rows(logits: Any) -> npt.NDArray[np.floating[Any]]:
    """``logits`` as a 2-D numpy array ``(batch, V)`` of float32 or float64 (no copy if possible).

    Accepts a numpy array or a torch tensor (any device, any float dtype) of shape
    ``(V,)`` or ``(batch, V)``.

    Raises:
        ArgumentError: ``logits`` is neither a numpy array nor a torch tensor, is not
            numbers, or its shape is not ``(V,)`` or ``(batch, V)`` with ``V >= 1``.
    """
    if _is_torch(logits):
        array = _torch_to_numpy(logits)
    elif isinstance(logits, np.ndarray):
        array = logits
    else:
        raise ArgumentError(f"logits must be a numpy array or a torch tensor, not {type(logits)}")
    if array.ndim == 1:
        array = array[np.newaxis, :]
    if array.ndim != 2 or array.shape[1] == 0:
        raise ArgumentError(f"logits must have shape (V,) or (batch, V), not {array.shape}")
    if array.dtype not in (np.float32, np.float64):
        if not (
            np.issubdtype(array.dtype, np.floating) or np.issubdtype(array.dtype, np.integer)
        ):
            raise ArgumentError(f"logits must be real numbers, not {array.dtype}")
        array = array.astype(np.float32)
    return array
