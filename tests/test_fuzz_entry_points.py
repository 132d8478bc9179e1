"""Seeded fuzzing of every public entry point: only gbnfkit's own exceptions come out.

A few seconds' worth of inputs (``bench/fuzz.py`` runs the same generator for 100,000
inputs and more, and records its figures in ``bench/README.md``).  A failure prints each
distinct foreign exception with the input that raised it and its traceback; the seed and
the input count reproduce it: ``Fuzzer(seed, workdir).run(count)``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzz_cases import Fuzzer

INPUTS = 1_700  # every entry point 100 times


@pytest.mark.parametrize("seed", [20261123])
def test_no_foreign_exception_from_any_entry_point(seed: int, tmp_path: Path) -> None:
    fuzzer = Fuzzer(seed, tmp_path)
    report = fuzzer.run(INPUTS)
    assert report.inputs == INPUTS
    assert set(report.per_entry) == {name for name, _ in fuzzer.entries}
    distinct = report.distinct()
    assert not distinct, report.summary() + "\n\n" + "\n\n".join(
        finding.trace for finding in distinct.values()
    )
    # the inputs reach the errors they are meant to reach, not only the happy paths
    for error in ("GrammarError", "SchemaError", "VocabularyError", "InputRejected",
                  "ArgumentError", "LoadError"):  # fmt: skip
        assert report.gbnfkit_errors[error] > 0, (error, report.gbnfkit_errors)


def test_a_foreign_exception_is_reported(tmp_path: Path) -> None:
    """The harness itself can fail: an entry point raising KeyError is a finding."""
    fuzzer = Fuzzer(1, tmp_path)

    def broken(rng: object) -> None:
        fuzzer.note(case="broken")
        raise KeyError("boom")

    fuzzer.entries = [("broken", broken)]
    report = fuzzer.run(3)
    assert len(report.findings) == 3 and len(report.distinct()) == 1
    assert "KeyError" in report.summary() and "case='broken'" in report.summary()
