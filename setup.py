"""Build of gbnfkit: the pure-Python package, plus the hot modules compiled by mypyc.

The modules listed in ``src/gbnfkit/_native.py`` (``COMPILED``) are compiled from
their own Python source when mypyc (shipped with mypy, a build requirement) and a C
compiler work; anything failing (mypy not importable, a type error, no compiler) gives
a warning and the pure-Python install, never a failed install.  Environment at
install time:

* ``GBNFKIT_PURE=1``: skip the compile (pure-Python install);
* ``GBNFKIT_REQUIRE_COMPILED=1``: a failed compile fails the install (CI uses it).

The build writes ``gbnfkit/_native.json`` (each compiled source's SHA-256) next to the
extensions; ``gbnfkit._native`` uses it to run the sources when they changed since.
"""

from __future__ import annotations

import hashlib
import json
import os
import runpy
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent
SRC = HERE / "src"
NATIVE = runpy.run_path(str(SRC / "gbnfkit" / "_native.py"))
COMPILED: tuple[str, ...] = NATIVE["COMPILED"]
MANIFEST: str = NATIVE["MANIFEST"]
# mypyc's shared library, a top-level module gbnfkit__mypyc (mypyc sets the compiled
# modules' __file__ relative to it, so it must sit at the top)
GROUP = "gbnfkit"


def _flag(name: str) -> bool:
    return os.environ.get(name, "") not in ("", "0")


REQUIRE = _flag("GBNFKIT_REQUIRE_COMPILED")


def _give_up(what: str, exc: BaseException) -> None:
    if REQUIRE:
        raise SystemExit(f"gbnfkit: {what} failed and GBNFKIT_REQUIRE_COMPILED is set: {exc}")
    print(f"WARNING gbnfkit: {what} failed ({exc!r}); installing the pure-Python modules",
          file=sys.stderr)


def _sources() -> list[str]:
    return [os.path.join("src", *m.split(".")) + ".py" for m in COMPILED]


def _clean_inplace() -> None:
    """Remove compiled modules and the manifest left in ``src`` by an earlier build."""
    (SRC / "gbnfkit" / MANIFEST).unlink(missing_ok=True)
    for module in (*COMPILED, GROUP + "__mypyc"):
        stem = SRC.joinpath(*module.split("."))
        for path in stem.parent.glob(stem.name + ".*"):
            if path.suffix in (".so", ".pyd"):
                path.unlink()


def _mypycify() -> list[Any]:
    """mypyc's extensions for :data:`COMPILED` (it type-checks them and writes C into
    ``build/``), or ``[]`` when it fails."""
    start = time.monotonic()
    try:
        from mypyc.build import mypycify

        # one C file per module (not one file of every module): build_extension
        # compiles them in parallel
        exts = list(mypycify(_sources(), opt_level="3", group_name=GROUP, multi_file=True))
    except (Exception, SystemExit) as exc:  # mypy's type errors end in SystemExit
        _give_up("mypyc", exc)
        return []
    print(f"gbnfkit: mypyc generated C for {len(COMPILED)} modules in "
          f"{time.monotonic() - start:.0f} s", file=sys.stderr)
    return exts


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _manifest() -> dict[str, Any]:
    modules = {}
    for module, path in zip(COMPILED, _sources(), strict=True):
        data = (HERE / path).read_bytes()
        st = (HERE / path).stat()
        modules[module] = {"sha256": hashlib.sha256(data).hexdigest(), "size": st.st_size,
                           "mtime_ns": st.st_mtime_ns}
    return {"builder": "mypyc", "modules": modules}


# stands for mypyc's extensions until build_ext runs, so that only a build (not every
# evaluation of this file by pip) pays for mypyc's type check
PLACEHOLDER = Extension(GROUP + "__mypyc", sources=[])


class BuildExt(build_ext):
    """``build_ext`` that runs mypyc, falls back to the pure install when the compile
    fails, and writes the manifest beside the extensions it built."""

    def finalize_options(self) -> None:
        dist = self.distribution
        if dist.ext_modules == [PLACEHOLDER]:
            # pip also runs egg_info / dist_info (metadata only), which finalize build_ext
            if set(dist.commands) <= {"egg_info", "dist_info", "sdist"}:
                dist.ext_modules = []
            else:
                _clean_inplace()  # a failed build must leave no old extension in src
                dist.ext_modules = _mypycify()
        super().finalize_options()

    def run(self) -> None:
        if not self.extensions:
            return
        start = time.monotonic()
        try:
            super().run()
        except Exception as exc:
            _give_up("compiling mypyc's C code", exc)
            for path in self.get_outputs():
                Path(path).unlink(missing_ok=True)
            _clean_inplace()
            self.extensions = []
            return
        print(f"gbnfkit: C compile in {time.monotonic() - start:.0f} s", file=sys.stderr)
        text = json.dumps(_manifest(), indent=1, sort_keys=True) + "\n"
        targets = [Path(self.build_lib) / "gbnfkit" / MANIFEST]
        if self.inplace:
            targets.append(SRC / "gbnfkit" / MANIFEST)
        for target in targets:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")

    def build_extension(self, ext: Any) -> None:
        # distutils compiles an extension's sources one after the other; mypyc's group
        # is one extension of ~50 C files, so they are compiled by a pool of threads
        # (each runs the C compiler as a process), the largest first
        jobs = min(os.cpu_count() or 1, len(ext.sources))
        if jobs < 2:
            super().build_extension(ext)
            return
        serial = self.compiler.compile

        def parallel(sources: list[str], *args: Any, **kwargs: Any) -> list[str]:
            order = sorted(range(len(sources)), key=lambda i: -_size(sources[i]))
            with ThreadPoolExecutor(jobs) as pool:
                done = dict(zip(order, pool.map(
                    lambda i: serial([sources[i]], *args, **kwargs), order), strict=True))
            return [obj for i in range(len(sources)) for obj in done[i]]

        self.compiler.compile = parallel
        try:
            super().build_extension(ext)
        finally:
            del self.compiler.compile

    def get_outputs(self) -> list[str]:
        outputs = list(super().get_outputs())
        if self.extensions:
            outputs.append(str(Path(self.build_lib) / "gbnfkit" / MANIFEST))
        return outputs


if _flag("GBNFKIT_PURE"):
    print("gbnfkit: GBNFKIT_PURE is set, pure-Python install", file=sys.stderr)
    _clean_inplace()
    EXTENSIONS = []
else:
    EXTENSIONS = [PLACEHOLDER]

setup(ext_modules=EXTENSIONS, cmdclass={"build_ext": BuildExt})
