"""Shared test data: ``../shared`` beside the clone (conformance records, MaskBench schemas).

The project requires that data (conformance with llama.cpp must pass), so a test that needs
it FAILS when it is missing, with a message saying where to put it; it never crashes at
import nor is skipped.

* A module that reads the data when it is imported declares it on a line of its own,
  ``# shared data: conformance/gbnf.jsonl`` (several paths separated by commas).  When a
  file is missing the module is not imported; one failing test stands in for it.
* A test that reads the data when it runs asks for the ``shared_file`` fixture:
  ``shared_file("conformance/gbnf.jsonl")`` is the path, or a failure with the same message.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest
from hypothesis import settings

# Property tests draw the same examples on every run (CI must not fail on an example a
# previous run never drew); HYPOTHESIS_PROFILE=explore draws new ones each run and keeps
# the failures it finds in .hypothesis/ to replay them
settings.register_profile("repeatable", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto`` (pyproject's addopts): a worker per core this process may run on (a
    cpuset or ``taskset`` counts, the machine's core count does not); on one core the
    tests run in this process, with no worker."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return cores if cores and cores > 1 else 0


SHARED = Path(__file__).resolve().parents[1].parent / "shared"
_DECLARED = re.compile(r"^# shared data: (.+)$", re.MULTILINE)


def missing_message(paths: Iterable[str]) -> str:
    listed = ", ".join(str(SHARED / p) for p in paths)
    return (
        f"shared test data missing: {listed}. Put the project's `shared/` folder beside the "
        f"clone (at {SHARED}: conformance/gbnf.jsonl, conformance/schema.jsonl, "
        "maskbench/dev.jsonl); these tests must run, they are not optional."
    )


class _MissingData(pytest.Item):
    def __init__(self, *, missing: list[str], **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.missing = missing

    def runtest(self) -> None:
        pytest.fail(missing_message(self.missing), pytrace=False)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"{self.path.name}: shared test data"


class _ModuleNeedingData(pytest.File):
    def __init__(self, *, missing: list[str], **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.missing = missing

    def collect(self) -> Iterable[pytest.Item]:
        yield _MissingData.from_parent(self, name="shared_data_present", missing=self.missing)


def pytest_pycollect_makemodule(module_path: Path, parent: pytest.Collector) -> pytest.File | None:
    declared = _DECLARED.search(module_path.read_text(encoding="utf-8"))
    if declared is None:
        return None
    needed = [p.strip() for p in declared.group(1).split(",")]
    missing = [p for p in needed if not (SHARED / p).is_file()]
    if not missing:
        return None
    return _ModuleNeedingData.from_parent(parent, path=module_path, missing=missing)


@pytest.fixture
def shared_file() -> Callable[[str], Path]:
    """``shared_file("conformance/gbnf.jsonl")``: the path, or a failure saying where to put it."""

    def locate(relative: str) -> Path:
        path = SHARED / relative
        if not path.is_file():
            pytest.fail(missing_message([relative]), pytrace=False)
        return path

    return locate
