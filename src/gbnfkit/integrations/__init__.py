"""Runtimes gbnfkit decodes with: optional extras, never imported by ``import gbnfkit``.

* :mod:`gbnfkit.integrations.llama_cpp` (``pip install 'gbnfkit[llama-cpp]'``): the
  vocabulary of a ``llama_cpp.Llama``, a logits processor for ``Llama.generate`` /
  ``create_completion``, and gbnfkit's own decoding loop on a ``Llama``.
* :mod:`gbnfkit.integrations.transformers` (``pip install 'gbnfkit[transformers]'``): a
  batched ``LogitsProcessor`` for ``model.generate`` and the same decoding loop on a
  transformers causal language model.

Both decoding loops are a :class:`~gbnfkit.integrations.Decoder` (prompt -> constrained
text, streamed), which needs neither runtime itself; importing this package imports
no runtime either.
"""

from __future__ import annotations

from gbnfkit._public import publish as _publish
from gbnfkit.integrations._decode import (
    Decoder,
    DecodeStats,
    Generation,
    GenerationResult,
    ModelRunner,
    StopReason,
)

__all__ = [
    "DecodeStats",
    "Decoder",
    "Generation",
    "GenerationResult",
    "ModelRunner",
    "StopReason",
]

_publish(__name__, globals(), __all__)
