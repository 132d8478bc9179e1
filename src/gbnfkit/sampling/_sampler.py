"""Sampler: the sampler chain of one sequence, with an optional grammar matcher in it."""

from __future__ import annotations

import copy
import math
from collections.abc import Iterable, Sequence
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from gbnfkit._errors import ArgumentError, SamplingError, VocabularyError
from gbnfkit.sampling._candidates import Candidates
from gbnfkit.sampling._chain import ChainState, draw, probabilities, run_chain
from gbnfkit.sampling._logits import to_rows
from gbnfkit.sampling._params import MAX_INT, Mirostat, SamplingParams
from gbnfkit.tokens._vocabulary import Vocabulary, require_same_vocabulary

__all__ = ["Sampler", "TokenMatcher", "sample_batch"]

# grammar-masked candidates stay dense unless the grammar allows at most 1/_SPARSE_RATIO
# of the vocabulary
_SPARSE_RATIO = 8


class TokenMatcher(Protocol):
    """What a :class:`Sampler` needs of a matcher (:class:`gbnfkit.Matcher` has it)."""

    def is_allowed(self, token_id: int) -> bool: ...

    def accept_token(self, token_id: int) -> bool: ...

    def fill_bitmask(self, bitmask: Any, row: int = 0) -> None: ...

    def reset(self) -> None: ...


_MATCHER_METHODS = ("is_allowed", "accept_token", "fill_bitmask", "reset")


def _token_id(value: object, size: int | None) -> int:
    """``value`` as a token id, checked against the vocabulary's size when known."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ArgumentError(f"a token id must be an integer, not {value!r}")
    token_id = int(value)
    limit = size if size is not None else MAX_INT + 1
    if not 0 <= token_id < limit:
        raise VocabularyError(
            f"token id {token_id} is outside the vocabulary"
            + (f" of {size} tokens" if size is not None else "")
        )
    return token_id


def _vocabulary_of(matcher: TokenMatcher) -> Vocabulary:
    found = getattr(matcher, "vocabulary", None)  # Matcher.vocabulary, LazyMatcher.vocabulary
    if not isinstance(found, Vocabulary):
        raise ArgumentError(
            "cannot tell the matcher's vocabulary; pass it as Sampler(..., vocabulary=...)"
        )
    return found


def _sanitized(row: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """``row``, or a copy with NaN as -inf and +inf as the largest finite value.

    Raises:
        SamplingError: every logit is -inf (or NaN).
    """
    top = row.max()
    if np.isnan(top) or top == np.inf:
        row = row.copy()
        row[np.isnan(row)] = -np.inf
        row[row == np.inf] = np.finfo(row.dtype).max
        top = row.max()
    if top == -np.inf:
        raise SamplingError("no token can be sampled: every logit is -inf or NaN")
    return row


class Sampler:
    """Chooses the next token of one sequence from the model's logits.

    ``Sampler(params, matcher)`` runs the sampler chain of ``params`` (llama.cpp's order
    and semantics, see ``docs/sampling.md``).  With a matcher, every sampled token is
    one the grammar allows, and an end-of-sequence token only where the grammar may end:

    * ``params.grammar_first=False`` (default, llama.cpp's fast path): run the chain on
      the raw logits, check the one sampled token; only if the grammar rejects it,
      mask the logits and run the chain again.
    * ``params.grammar_first=True``: mask the logits, then run the chain.

    Logits are numpy arrays or torch tensors (any device), shape ``(V,)`` or ``(1, V)``.
    When the vocabulary is known (from the matcher, or ``vocabulary=``), ``V`` may be
    larger than it: ids from the vocabulary's size on are never sampled.
    Call :meth:`accept` with each token the sequence takes (sampled or forced).
    """

    __slots__ = ("_params", "_matcher", "_vocabulary", "_size", "_state", "_bitmask")

    def __init__(
        self,
        params: SamplingParams | None = None,
        matcher: TokenMatcher | None = None,
        *,
        vocabulary: Vocabulary | None = None,
    ) -> None:
        if params is not None and not isinstance(params, SamplingParams):
            raise ArgumentError(f"params must be SamplingParams, not {type(params).__name__}")
        if vocabulary is not None and not isinstance(vocabulary, Vocabulary):
            raise ArgumentError(f"vocabulary must be a Vocabulary, not {type(vocabulary).__name__}")
        if matcher is not None:
            missing = [m for m in _MATCHER_METHODS if not callable(getattr(matcher, m, None))]
            if missing:
                raise ArgumentError(
                    f"matcher must be a gbnfkit matcher; {type(matcher).__name__} has no "
                    + ", ".join(missing)
                )
        self._params = params if params is not None else SamplingParams()
        self._matcher = matcher
        if vocabulary is None and matcher is not None:
            vocabulary = _vocabulary_of(matcher)
        elif vocabulary is not None and matcher is not None:
            own = getattr(matcher, "vocabulary", None)
            if isinstance(own, Vocabulary):
                require_same_vocabulary(own, vocabulary, "the matcher", "vocabulary=")
        self._vocabulary = vocabulary
        self._size = vocabulary.size if vocabulary is not None else None
        self._bitmask: npt.NDArray[np.int32] | None = None  # the grammar's mask, reused
        self._state = ChainState.create(self._params, vocabulary)

    def __copy__(self) -> Sampler:
        """An independent sampler at the same point: the matcher forked (as
        ``copy.deepcopy`` of a matcher does), the histories, ``mu`` and the random
        generator copied.  A shallow copy would share them: accepting a token on one
        advanced the other's matcher and penalties, and both drew from one generator."""
        other = Sampler.__new__(Sampler)
        other._params = self._params
        other._matcher = copy.deepcopy(self._matcher)
        other._vocabulary = self._vocabulary
        other._size = self._size
        other._bitmask = None
        other._state = copy.deepcopy(self._state)
        return other

    def __deepcopy__(self, memo: dict[int, object]) -> Sampler:
        return self.__copy__()

    # -- properties ------------------------------------------------------------
    @property
    def params(self) -> SamplingParams:
        """The sampling parameters."""
        return self._params

    @property
    def matcher(self) -> TokenMatcher | None:
        """The grammar matcher, or ``None`` for unconstrained sampling."""
        return self._matcher

    @property
    def vocabulary(self) -> Vocabulary | None:
        """The vocabulary, when known."""
        return self._vocabulary

    @property
    def mu(self) -> float:
        """Mirostat's current target surprise ``mu`` (``2 * mirostat_tau`` at the start).

        Settable: a loop that throws a drawn token away and draws again (as
        ``gbnfkit.integrations``' loops do for a token whose lazy trigger the grammar
        refuses) sets it back first, so that ``mu`` moves once, for the token kept.
        """
        return self._state.mirostat.mu

    @mu.setter
    def mu(self, value: float) -> None:
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
        ):
            raise ArgumentError(f"mu must be a finite number, not {value!r}")
        self._state.mirostat.mu = float(value)

    # -- sampling --------------------------------------------------------------
    def sample(self, logits: Any) -> int:
        """The next token id, drawn from ``logits`` (shape ``(V,)`` or ``(1, V)``).

        Does not advance anything but the random generator (and mirostat's ``mu``):
        call :meth:`accept` with the token the sequence takes.

        Raises:
            SamplingError: no token can be sampled (every token the grammar allows has
                a logit of -inf, or the grammar allows no token at all).
            VocabularyError: the logits are narrower than the vocabulary.
        """
        rows = to_rows(logits)
        if rows.shape[0] != 1:
            raise ArgumentError(
                f"Sampler.sample takes one row of logits, not {rows.shape[0]}; "
                "use gbnfkit.sample_batch with one Sampler per row"
            )
        return self._sample_row(rows[0])

    def _row(self, row: npt.NDArray[Any]) -> npt.NDArray[Any]:
        width = row.shape[0]
        if self._size is not None:
            if width < self._size:
                raise VocabularyError(
                    f"the logits have {width} entries but the vocabulary has {self._size} tokens"
                )
            row = row[: self._size]
        return _sanitized(row)

    def _masked(self, row: npt.NDArray[Any]) -> Candidates:
        """The logits with the grammar applied: sparse if it allows few tokens, else dense."""
        assert self._matcher is not None and self._size is not None
        words = self._bitmask
        if words is None:
            words = self._bitmask = np.empty((self._size + 31) // 32, dtype=np.int32)
        self._matcher.fill_bitmask(words)
        allowed = np.unpackbits(words.view(np.uint8), count=self._size, bitorder="little")
        allowed = allowed.view(np.bool_)
        count = int(np.count_nonzero(allowed))
        if count == 0:
            raise SamplingError("the grammar allows no token here")
        if count * _SPARSE_RATIO <= self._size:
            ids = np.flatnonzero(allowed).astype(np.int64)
            return Candidates.sparse(ids, row[ids])
        return Candidates(np.where(allowed, row, -np.inf).astype(row.dtype, copy=False), owned=True)

    def _draw(self, cands: Candidates) -> tuple[int, float]:
        """The chain, then the draw: ``(token, its probability among the last candidates)``."""
        return draw(run_chain(cands, self._params, self._state), self._state.rng)

    def _draw_masked(self, row: npt.NDArray[Any]) -> tuple[int, float]:
        cands = self._masked(row)
        try:
            return self._draw(cands)
        except SamplingError:
            raise SamplingError(
                "no token can be sampled: every token the grammar allows has a logit of -inf "
                "(from the model or logit_bias)"
            ) from None

    def _sample_row(self, row: npt.NDArray[Any]) -> int:
        # logits far apart (a +inf read as the largest float next to a very negative one)
        # overflow when shifted by the largest: the result (-inf, weight 0) is right, and
        # numpy's RuntimeWarning would be an error under -W error; a penalty past the float
        # range (inf - inf) is held in range by the chain itself
        with np.errstate(over="ignore", invalid="ignore"):
            return self._sample_sanitized(self._row(row))

    def _sample_sanitized(self, x: npt.NDArray[Any]) -> int:
        matcher = self._matcher
        if matcher is None:
            token, probability = self._draw(Candidates(x, known_nonempty=True))
        elif self._params.grammar_first:
            token, probability = self._draw_masked(x)
        else:
            try:
                token, probability = self._draw(Candidates(x, known_nonempty=True))
                allowed = matcher.is_allowed(token)
            except SamplingError:
                allowed = False
            if not allowed:
                token, probability = self._draw_masked(x)
        if self._params.mirostat != Mirostat.OFF:
            self._state.mirostat.update(probability)
        return token

    def distribution(self, logits: Any) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
        """``(token ids, probabilities)`` the next draw would pick from, grammar applied first.

        This is the distribution of ``grammar_first=True``; it does not change the
        sampler, except that an enabled XTC draws its random number.
        """
        rows = to_rows(logits)
        if rows.shape[0] != 1:
            raise ArgumentError(f"one row of logits expected, not {rows.shape[0]}")
        x = self._row(rows[0])
        if self._matcher is not None:
            cands = self._masked(x)
        else:
            cands = Candidates(x, known_nonempty=True)
        with np.errstate(over="ignore", invalid="ignore"):  # as in sample
            return probabilities(run_chain(cands, self._params, self._state))

    # -- advancing -------------------------------------------------------------
    def accept(self, token_id: int) -> None:
        """The sequence took ``token_id``: advance the matcher and the penalty histories.

        Raises:
            InputRejected: the grammar does not allow ``token_id`` (nothing changes).
            VocabularyError: ``token_id`` is not an id of the vocabulary.
        """
        token_id = _token_id(token_id, self._size)
        if self._matcher is not None:
            self._matcher.accept_token(token_id)
        self._state.penalties.push(token_id)
        self._state.dry.push(token_id)

    def extend_history(self, token_ids: Iterable[int]) -> None:
        """Add tokens (a prompt, say) to the penalty and DRY histories; the matcher is not moved."""
        ids = [_token_id(token_id, self._size) for token_id in token_ids]
        for token_id in ids:
            self._state.penalties.push(token_id)
            self._state.dry.push(token_id)

    def reset(self) -> None:
        """Start over: histories emptied, ``mu`` reset, generator re-seeded, matcher reset.

        With a ``seed``, the same logits then give the same tokens again; with
        ``seed=None`` the generator takes fresh entropy.
        """
        state = self._state
        state.penalties.clear()
        state.dry.clear()
        state.mirostat.reset()
        state.rng = np.random.default_rng(self._params.seed)
        if self._matcher is not None:
            self._matcher.reset()

    def __repr__(self) -> str:
        grammar = "with a matcher" if self._matcher is not None else "unconstrained"
        return f"Sampler({grammar}, vocabulary size {self._size})"


def sample_batch(samplers: Sequence[Sampler], logits: Any) -> list[int]:
    """One token per row of ``logits`` (``(batch, V)``), row ``i`` sampled by ``samplers[i]``.

    Torch logits are copied to the CPU once for the whole batch.
    """
    if not isinstance(samplers, Sequence) or not all(isinstance(s, Sampler) for s in samplers):
        raise ArgumentError("samplers must be a sequence of Sampler, one per row")
    rows = to_rows(logits)
    if rows.shape[0] != len(samplers):
        raise ArgumentError(f"{len(samplers)} samplers for {rows.shape[0]} rows of logits")
    return [sampler._sample_row(rows[i]) for i, sampler in enumerate(samplers)]
