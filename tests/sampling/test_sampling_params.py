"""SamplingParams: llama.cpp's names and defaults, and every bad value refused by field."""

from __future__ import annotations

import math
import pickle

import pytest

import gbnfkit
from gbnfkit import Mirostat, SamplerType, SamplingError, SamplingParams
from gbnfkit.sampling import DEFAULT_SAMPLERS


def test_defaults_are_llama_cpp_defaults() -> None:
    p = SamplingParams()
    assert (p.temperature, p.top_k, p.top_p, p.min_p, p.typical_p, p.min_keep) == (
        0.8,
        40,
        0.95,
        0.05,
        1.0,
        0,
    )
    assert (p.repeat_penalty, p.repeat_last_n, p.frequency_penalty, p.presence_penalty) == (
        1.0,
        64,
        0.0,
        0.0,
    )
    assert (p.dry_multiplier, p.dry_base, p.dry_allowed_length, p.dry_penalty_last_n) == (
        0.0,
        1.75,
        2,
        -1,
    )
    assert p.dry_sequence_breakers == ("\n", ":", '"', "*")
    assert (p.top_n_sigma, p.xtc_probability, p.xtc_threshold) == (-1.0, 0.0, 0.1)
    assert (p.dynatemp_range, p.dynatemp_exponent) == (0.0, 1.0)
    assert (p.mirostat, p.mirostat_tau, p.mirostat_eta) == (Mirostat.OFF, 5.0, 0.1)
    assert dict(p.logit_bias) == {} and p.seed is None and p.grammar_first is False
    assert tuple(p.samplers) == DEFAULT_SAMPLERS
    assert [s.value for s in p.samplers] == [
        "penalties",
        "dry",
        "top_n_sigma",
        "top_k",
        "typ_p",
        "top_p",
        "min_p",
        "xtc",
        "temperature",
    ]


def test_frozen_hashable_and_normalised() -> None:
    p = SamplingParams(
        logit_bias={7: -math.inf, 2: 1.5},
        samplers=["top_k", SamplerType.TEMPERATURE],
        dry_sequence_breakers=["\n"],
        mirostat=2,
    )
    assert dict(p.logit_bias) == {2: 1.5, 7: -math.inf}
    assert list(p.logit_bias) == [2, 7]
    assert p.samplers == (SamplerType.TOP_K, SamplerType.TEMPERATURE)
    assert p.dry_sequence_breakers == ("\n",)
    assert p.mirostat is Mirostat.V2
    assert hash(p) == hash(SamplingParams(**{**vars(p)}))
    assert p == SamplingParams(**{**vars(p)})
    with pytest.raises(AttributeError):
        p.top_k = 3  # type: ignore[misc]
    assert pickle.loads(pickle.dumps(p)) == p
    assert p.replace(top_k=5).top_k == 5 and p.top_k == 40


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("temperature", math.nan),
        ("temperature", "hot"),
        ("top_k", 2.5),
        ("top_k", True),
        ("top_p", 1.5),
        ("top_p", -0.1),
        ("min_p", 2.0),
        ("typical_p", -1.0),
        ("min_keep", -1),
        ("repeat_penalty", 0.0),
        ("repeat_penalty", math.inf),
        ("repeat_last_n", -2),
        ("frequency_penalty", math.nan),
        ("presence_penalty", None),
        ("dry_multiplier", -1.0),
        ("dry_base", 0.0),
        ("dry_allowed_length", -1),
        ("dry_penalty_last_n", -5),
        ("dry_sequence_breakers", "\n"),
        ("dry_sequence_breakers", ["\n", ""]),
        ("top_n_sigma", math.inf),
        ("xtc_probability", 1.5),
        ("xtc_threshold", -0.5),
        ("dynatemp_range", -1.0),
        ("dynatemp_exponent", math.nan),
        ("mirostat", 3),
        ("mirostat", True),
        ("mirostat_tau", -1.0),
        ("mirostat_eta", -0.1),
        ("logit_bias", {-1: 0.0}),
        ("logit_bias", {1: math.inf}),
        ("logit_bias", {1: math.nan}),
        ("logit_bias", {1: "x"}),
        ("logit_bias", [(1, 0.0), (1, 2.0)]),
        ("logit_bias", 5),
        ("seed", -1),
        ("seed", 1.5),
        ("grammar_first", 1),
        ("samplers", ["top_k", "nucleus"]),
        ("samplers", "top_k"),
    ],
)
def test_bad_values_raise_naming_the_field(field: str, value: object) -> None:
    with pytest.raises(SamplingError) as caught:
        SamplingParams(**{field: value})
    assert caught.value.field == field
    assert field in str(caught.value)
    assert isinstance(caught.value, ValueError)
    assert isinstance(caught.value, gbnfkit.GbnfkitError)


def test_integers_too_long_to_print_are_named_not_a_bare_value_error() -> None:
    # repr() refuses integers of more than 4,300 digits (ValueError); not parametrized,
    # since pytest could not print the ids either
    huge = 10**5000
    cases = [("temperature", huge), ("top_k", -huge), ("seed", huge),
             ("logit_bias", {1: huge}), ("logit_bias", {huge: 1.0})]
    for field, value in cases:
        with pytest.raises(SamplingError, match="bits") as caught:
            SamplingParams(**{field: value})
        assert caught.value.field == field


def test_replace_refuses_unknown_fields() -> None:
    with pytest.raises(SamplingError) as caught:
        SamplingParams().replace(temp=0.5)
    assert caught.value.field == "temp"


def test_edges_that_llama_cpp_accepts_are_accepted() -> None:
    p = SamplingParams(
        temperature=-1.0,  # greedy
        top_k=-1,  # disabled
        top_p=1.0,
        min_p=0.0,
        repeat_last_n=-1,  # the whole history
        dry_penalty_last_n=-1,
        seed=2**40,
        logit_bias={3: -math.inf},
    )
    assert p.top_k == -1 and p.seed == 2**40


def test_a_large_logit_bias_has_a_short_repr() -> None:
    """A bias banning 20,000 ids printed every pair (about 330 KB) in the repr of the
    params, which logs and error messages show; now the first eight and a count."""
    params = SamplingParams(logit_bias={i: -100.0 for i in range(20_000)})
    text = repr(params)
    assert len(text) < 1_500 and "... (19992 more)" in text
    assert repr(SamplingParams(logit_bias={3: 1.5, 1: -1.0}).logit_bias) == (
        "LogitBias({1: -1.0, 3: 1.5})"
    )
