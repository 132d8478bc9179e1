"""SamplingParams: the settings of a sampler chain, named and defaulted as llama.cpp's.

Field names follow llama.cpp's command line and server (``temperature``, ``top_k``,
``repeat_penalty``, ...); defaults are those of llama.cpp's ``common_params_sampling``.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from enum import Enum, IntEnum
from typing import Any

import numpy as np

from gbnfkit._arguments import as_float
from gbnfkit._errors import SamplingError

__all__ = ["DEFAULT_SAMPLERS", "LogitBias", "Mirostat", "SamplerType", "SamplingParams"]


class SamplerType(Enum):
    """One stage of the sampler chain (the values are llama.cpp's names)."""

    PENALTIES = "penalties"
    DRY = "dry"
    TOP_N_SIGMA = "top_n_sigma"
    TOP_K = "top_k"
    TYPICAL_P = "typ_p"
    TOP_P = "top_p"
    MIN_P = "min_p"
    XTC = "xtc"
    TEMPERATURE = "temperature"


class Mirostat(IntEnum):
    """Mirostat mode: off (the sampler chain), version 1 or version 2."""

    OFF = 0
    V1 = 1
    V2 = 2


DEFAULT_SAMPLERS: tuple[SamplerType, ...] = (
    SamplerType.PENALTIES,
    SamplerType.DRY,
    SamplerType.TOP_N_SIGMA,
    SamplerType.TOP_K,
    SamplerType.TYPICAL_P,
    SamplerType.TOP_P,
    SamplerType.MIN_P,
    SamplerType.XTC,
    SamplerType.TEMPERATURE,
)

_DRY_BREAKERS = ("\n", ":", '"', "*")

MAX_INT = 2**31 - 1  # integer fields and token ids are int32 in llama.cpp


@dataclass(frozen=True)
class SamplingParams:
    """How the next token is chosen from the logits (frozen; checked when made).

    Every field, its default and what disables it are listed in ``docs/sampling.md``.
    A value out of range raises :class:`gbnfkit.SamplingError` (a ``ValueError``) whose
    ``field`` names the field.  Sequences are stored as tuples and ``logit_bias`` as
    a read-only mapping, so parameters are hashable; ``mirostat`` is stored as a
    :class:`Mirostat`.
    """

    temperature: float = 0.8
    top_k: int = 40
    top_p: float = 0.95
    min_p: float = 0.05
    typical_p: float = 1.0
    min_keep: int = 0
    repeat_penalty: float = 1.0
    repeat_last_n: int = 64
    frequency_penalty: float = 0.0
    presence_penalty: float = 0.0
    dry_multiplier: float = 0.0
    dry_base: float = 1.75
    dry_allowed_length: int = 2
    dry_penalty_last_n: int = -1
    dry_sequence_breakers: Sequence[str] = _DRY_BREAKERS
    top_n_sigma: float = -1.0
    xtc_probability: float = 0.0
    xtc_threshold: float = 0.1
    dynatemp_range: float = 0.0
    dynatemp_exponent: float = 1.0
    mirostat: int = Mirostat.OFF
    mirostat_tau: float = 5.0
    mirostat_eta: float = 0.1
    logit_bias: Mapping[int, float] = field(default_factory=lambda: LogitBias(()))
    seed: int | None = None
    grammar_first: bool = False
    samplers: Sequence[SamplerType] = DEFAULT_SAMPLERS

    def __post_init__(self) -> None:
        for f in fields(self):
            checker = _CHECKS.get(f.name)
            if checker is not None:
                object.__setattr__(self, f.name, checker(f.name, getattr(self, f.name)))

    def replace(self, **changes: Any) -> SamplingParams:
        """A copy with some fields changed (checked like a new one)."""
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        unknown = sorted(set(changes) - set(values))
        if unknown:
            raise SamplingError("not a SamplingParams field", field=unknown[0])
        values.update(changes)
        return SamplingParams(**values)


_SHOWN_BIASES = 8
"""Pairs a LogitBias shows in its repr (readability, not a tuning knob)."""


class LogitBias(Mapping[int, float]):
    """A read-only, hashable ``{token_id: bias}`` mapping, ids ascending."""

    __slots__ = ("_pairs", "_map")

    def __init__(self, pairs: Iterable[tuple[int, float]]) -> None:
        self._pairs = tuple(sorted(pairs))
        self._map = dict(self._pairs)

    def __getitem__(self, token_id: int) -> float:
        return self._map[token_id]

    def __iter__(self) -> Iterator[int]:
        return iter(self._map)

    def __len__(self) -> int:
        return len(self._pairs)

    def __hash__(self) -> int:
        return hash(self._pairs)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Mapping):
            return dict(self._map) == dict(other)
        return NotImplemented

    def __repr__(self) -> str:
        # a bias over much of a vocabulary (banning thousands of ids) printed every pair:
        # hundreds of KB in a SamplingParams' repr, in logs and error messages
        shown = ", ".join(f"{t!r}: {b!r}" for t, b in self._pairs[:_SHOWN_BIASES])
        more = len(self._pairs) - _SHOWN_BIASES
        return f"LogitBias({{{shown}{f', ... ({more} more)' if more > 0 else ''}}})"


# -- checks -------------------------------------------------------------------


def _is_bool(value: object) -> bool:
    return isinstance(value, (bool, np.bool_))


def _shown(value: object) -> str:
    """``repr(value)``, but an integer too long to print (Python converts at most 4,300
    digits to text: ``repr`` raises ValueError) by its number of bits."""
    if isinstance(value, int) and value.bit_length() > 10_000:
        return f"an integer of {value.bit_length()} bits"
    return repr(value)


def _float(name: str, value: object) -> float:
    if _is_bool(value) or not isinstance(value, numbers.Real):
        raise SamplingError(f"must be a number, not {value!r}", field=name)
    result = as_float(value)
    if not math.isfinite(result):
        raise SamplingError(f"must be finite, not {_shown(value)}", field=name)
    return result


def _int(name: str, value: object, limit: int = MAX_INT) -> int:
    """An integer (numpy's too) of at most ``limit`` in magnitude (llama.cpp's are int32)."""
    if _is_bool(value) or not isinstance(value, numbers.Integral):
        raise SamplingError(f"must be an integer, not {value!r}", field=name)
    result = int(value)
    if abs(result) > limit:
        raise SamplingError(
            f"must be at most {limit} in magnitude, not {_shown(value)}", field=name
        )
    return result


def _between(low: float, high: float = math.inf) -> Any:
    def check(name: str, value: object) -> float:
        result = _float(name, value)
        if not low <= result <= high:
            bounds = f"at least {low}" if high == math.inf else f"between {low} and {high}"
            raise SamplingError(f"must be {bounds}, not {value!r}", field=name)
        return result

    return check


def _positive(name: str, value: object) -> float:
    result = _float(name, value)
    if result <= 0:
        raise SamplingError(f"must be greater than 0, not {value!r}", field=name)
    return result


def _int_at_least(low: int) -> Any:
    def check(name: str, value: object) -> int:
        result = _int(name, value)
        if result < low:
            raise SamplingError(f"must be at least {low}, not {value!r}", field=name)
        return result

    return check


def _any_int(name: str, value: object) -> int:
    return _int(name, value)


def _bool(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise SamplingError(f"must be True or False, not {value!r}", field=name)
    return value


def _seed(name: str, value: object) -> int | None:
    if value is None:
        return None
    result = _int(name, value, 2**64 - 1)
    if result < 0:
        raise SamplingError(f"must be a non-negative integer or None, not {value!r}", field=name)
    return result


def _mirostat(name: str, value: object) -> Mirostat:
    if isinstance(value, bool):
        raise SamplingError(f"must be 0, 1 or 2, not {value!r}", field=name)
    try:
        return Mirostat(value)  # type: ignore[call-overload,arg-type,unused-ignore]
    except (ValueError, TypeError):
        raise SamplingError(f"must be 0, 1 or 2, not {value!r}", field=name) from None


def _breakers(name: str, value: object) -> tuple[str, ...]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise SamplingError(f"must be a sequence of strings, not {value!r}", field=name)
    out: list[str] = []
    for item in value:
        if not isinstance(item, str) or not item:
            raise SamplingError(
                f"every breaker must be a non-empty string, not {item!r}", field=name
            )
        try:
            item.encode("utf-8")
        except UnicodeEncodeError:
            raise SamplingError(f"breaker {item!r} is not valid Unicode text", field=name) from None
        out.append(item)
    return tuple(out)


def _logit_bias(name: str, value: object) -> LogitBias:
    if isinstance(value, Mapping):
        pairs: Iterable[Any] = value.items()
    elif isinstance(value, Iterable) and not isinstance(value, (str, bytes)):
        pairs = value
    else:
        raise SamplingError(f"must map token ids to biases, not {value!r}", field=name)
    result: dict[int, float] = {}
    for pair in pairs:
        try:
            token, bias = pair
        except (TypeError, ValueError):
            raise SamplingError(f"must map token ids to biases, not {pair!r}", field=name) from None
        token_id = _int(name, token)
        if token_id < 0:
            raise SamplingError(f"token id {token_id} is negative", field=name)
        if _is_bool(bias) or not isinstance(bias, numbers.Real):
            raise SamplingError(f"bias of token {token_id} must be a number", field=name)
        value_f = as_float(bias)
        if math.isnan(value_f) or value_f == math.inf:
            raise SamplingError(
                f"bias of token {token_id} must be finite or -inf (a ban), not {_shown(bias)}",
                field=name,
            )
        if token_id in result:
            raise SamplingError(f"token id {token_id} is given twice", field=name)
        result[token_id] = value_f
    return LogitBias(result.items())


def _samplers(name: str, value: object) -> tuple[SamplerType, ...]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise SamplingError(f"must be a sequence of SamplerType, not {value!r}", field=name)
    out: list[SamplerType] = []
    for item in value:
        try:
            out.append(SamplerType(item))
        except ValueError:
            names = ", ".join(t.value for t in SamplerType)
            raise SamplingError(f"unknown sampler {item!r} (one of {names})", field=name) from None
    return tuple(out)


_CHECKS: dict[str, Any] = {
    "temperature": _float,
    "top_k": _any_int,
    "top_p": _between(0.0, 1.0),
    "min_p": _between(0.0, 1.0),
    "typical_p": _between(0.0, 1.0),
    "min_keep": _int_at_least(0),
    "repeat_penalty": _positive,
    "repeat_last_n": _int_at_least(-1),
    "frequency_penalty": _float,
    "presence_penalty": _float,
    "dry_multiplier": _between(0.0),
    "dry_base": _positive,
    "dry_allowed_length": _int_at_least(0),
    "dry_penalty_last_n": _int_at_least(-1),
    "dry_sequence_breakers": _breakers,
    "top_n_sigma": _float,
    "xtc_probability": _between(0.0, 1.0),
    "xtc_threshold": _between(0.0, 1.0),
    "dynatemp_range": _between(0.0),
    "dynatemp_exponent": _float,
    "mirostat": _mirostat,
    "mirostat_tau": _between(0.0),
    "mirostat_eta": _between(0.0),
    "logit_bias": _logit_bias,
    "seed": _seed,
    "grammar_first": _bool,
    "samplers": _samplers,
}
