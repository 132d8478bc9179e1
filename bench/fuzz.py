"""A long seeded fuzzing run of every public entry point (the generator of the tests).

Prints the inputs per entry point, the gbnfkit exceptions reached, every distinct foreign
exception (anything that is not a gbnfkit exception, with its input and traceback), the
slowest input, the run time and the peak memory (max RSS).  With ``--shared`` the seeds
also include the schemas and grammars of ``../shared/conformance`` and MaskBench.

    python bench/fuzz.py [--inputs 100000] [--seed 1] [--shared]

Exit status 1 if a foreign exception was found.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from fuzz_cases import Fuzzer, Report  # noqa: E402


def _shared_seeds(limit: int) -> tuple[list[object], list[str]]:
    shared = ROOT.parent / "shared"
    schemas: list[object] = []
    grammars: list[str] = []
    for name in ("conformance/schema.jsonl", "maskbench/dev.jsonl"):
        path = shared / name
        if path.is_file():
            for line in path.read_text(encoding="utf-8").splitlines()[:limit]:
                record = json.loads(line)
                schema = record.get("schema")
                if isinstance(schema, str):
                    schema = json.loads(schema)
                schemas.append(schema)
    path = shared / "conformance" / "gbnf.jsonl"
    if path.is_file():
        grammars = [json.loads(line)["grammar"] for line in path.read_text("utf-8").splitlines()]
    return schemas, grammars


def _progress(report: Report) -> None:
    print(f"  {report.inputs} inputs, {report.seconds:.0f} s, "
          f"{len(report.findings)} foreign", file=sys.stderr, flush=True)  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--inputs", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--shared", action="store_true", help="add ../shared seeds")
    parser.add_argument("--shared-limit", type=int, default=300, help="records per file")
    args = parser.parse_args()
    schemas, grammars = _shared_seeds(args.shared_limit) if args.shared else ([], [])
    with tempfile.TemporaryDirectory() as workdir:
        fuzzer = Fuzzer(args.seed, Path(workdir), extra_schemas=schemas, extra_grammars=grammars)
        report = fuzzer.run(args.inputs, progress=_progress)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"seed {args.seed}, {len(schemas)} extra schemas, {len(grammars)} extra grammars")
    print(report.summary())
    print(f"{report.inputs / report.seconds:.0f} inputs/s; peak memory (max RSS) {peak_mb:.0f} MB")
    print(f"slowest input: {report.slowest[1]}: {report.slowest[2]}")
    print("inputs per entry point:")
    for name, count in report.per_entry.items():
        print(f"  {name}: {count}")
    print("gbnfkit exceptions reached:", dict(report.gbnfkit_errors.most_common()))
    for finding in report.distinct().values():
        print("\n" + finding.trace)
    return 1 if report.findings else 0


if __name__ == "__main__":
    raise SystemExit(main())
