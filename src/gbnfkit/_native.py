"""Which hot modules run compiled (mypyc) and which run from their Python source.

The modules in :data:`COMPILED` may be compiled by mypyc at install time (``setup.py``);
the compiled extension sits next to the ``.py`` it was built from and Python imports it
first.  The build records each source's SHA-256 in ``_native.json``; when
``gbnfkit`` is imported this module compares it with the sources on disk, and runs
*every* compiled module from its ``.py`` (with one warning) when any source changed
since the build or an extension is missing, so an edited source is never shadowed by
stale compiled code.  It is all or nothing because compiled modules call each other
directly, not through ``sys.modules``.

``GBNFKIT_PURE=1`` in the environment makes an install skip the compile, and makes an
import of a compiled install run the Python sources (same masks, slower).

This module must import nothing from gbnfkit: ``setup.py`` reads :data:`COMPILED`
from it, and ``gbnfkit/__init__.py`` imports it before any compiled module.
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import sys
import warnings
from collections.abc import Mapping, Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType

__all__ = ["COMPILED", "MANIFEST", "Choice", "choose", "status"]

# the modules mypyc compiles (one group: calls between them are native)
COMPILED = (
    "gbnfkit.engine._engine",
    "gbnfkit.engine._program",
    "gbnfkit.engine._ranges",
    "gbnfkit.engine._rules",
    "gbnfkit.engine._state",
    "gbnfkit.engine._utf8",
    "gbnfkit.grammar._checks",
    "gbnfkit.grammar._ir",
    "gbnfkit.grammar._llama_leftrec",
    "gbnfkit.grammar._normalize",
    "gbnfkit.grammar._parser",
    "gbnfkit.schema._direct",
    "gbnfkit.schema._gbnf",
    "gbnfkit.schema._strings",
    "gbnfkit.tokens._byteprogram",
    "gbnfkit.tokens._bytestate",
    "gbnfkit.tokens._chains",
    "gbnfkit.tokens._compiled",
    "gbnfkit.tokens._follow",
    "gbnfkit.tokens._forms",
    "gbnfkit.tokens._index",
    "gbnfkit.tokens._keywalk",
    "gbnfkit.tokens._pacing",
    "gbnfkit.tokens._slices",
    "gbnfkit.tokens._tails",
    "gbnfkit.tokens._trie",
    "gbnfkit.tokens._vecwalk",
    "gbnfkit.tokens._walk",
    "gbnfkit.tokens._within",
)
MANIFEST = "_native.json"  # written by the build next to this file
PURE_ENV = "GBNFKIT_PURE"


class Choice:
    """What :func:`choose` decided: ``compiled`` (the build's extensions are used) and,
    when they are not although a build made them, ``reason``."""

    def __init__(self, compiled: bool, reason: str | None) -> None:
        self.compiled = compiled
        self.reason = reason

    def __repr__(self) -> str:
        return f"Choice(compiled={self.compiled!r}, reason={self.reason!r})"


def _source(package_dir: str, module: str) -> str:
    return os.path.join(package_dir, *module.split(".")[1:]) + ".py"


def _has_extension(package_dir: str, module: str) -> bool:
    # the build names extensions with the first suffix (this interpreter's EXT_SUFFIX)
    stem = os.path.join(package_dir, *module.split(".")[1:])
    return os.path.exists(stem + importlib.machinery.EXTENSION_SUFFIXES[0])


def _unchanged(path: str, entry: dict[str, object]) -> bool:
    try:
        st = os.stat(path)
    except OSError:
        return False
    if st.st_size != entry.get("size"):
        return False
    if st.st_mtime_ns == entry.get("mtime_ns"):
        return True
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest() == entry.get("sha256")


def choose(package_dir: str, environ: Mapping[str, str]) -> Choice:
    """Whether the compiled extensions under ``package_dir`` may be used."""
    try:
        with open(os.path.join(package_dir, MANIFEST), encoding="utf-8") as f:
            manifest = json.load(f)
    except FileNotFoundError:
        if any(_has_extension(package_dir, module) for module in COMPILED):
            return Choice(False, f"compiled modules without {MANIFEST} (an interrupted build?)")
        return Choice(False, None)  # a pure install: nothing to choose
    except (OSError, ValueError) as exc:
        return Choice(False, f"unreadable {MANIFEST} ({exc})")
    if environ.get(PURE_ENV, "") not in ("", "0"):
        return Choice(False, f"{PURE_ENV} is set")
    modules: dict[str, dict[str, object]] = manifest.get("modules", {})
    for module in COMPILED:
        entry = modules.get(module)
        if entry is None:
            return Choice(False, f"{module} is not in {MANIFEST}")
        if not _has_extension(package_dir, module):
            return Choice(False, f"the compiled {module} is missing")
        if not _unchanged(_source(package_dir, module), entry):
            return Choice(False, f"{_source(package_dir, module)} changed since the build")
    return Choice(True, None)


class _SourceFinder(importlib.abc.MetaPathFinder):
    """Finds the ``.py`` of each compiled module, so its extension is never loaded."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = frozenset(names)

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname not in self.names or not path:
            return None
        leaf = fullname.rpartition(".")[2] + ".py"
        for entry in path:
            candidate = os.path.join(entry, leaf)
            if os.path.isfile(candidate):
                return importlib.util.spec_from_file_location(fullname, candidate)
        return None


def _install(package_dir: str) -> Choice:
    choice = choose(package_dir, os.environ)
    if not choice.compiled and choice.reason is not None:
        sys.meta_path.insert(0, _SourceFinder(COMPILED))
        if not choice.reason.startswith(PURE_ENV):
            warnings.warn(
                f"gbnfkit runs its Python sources, not the compiled modules: {choice.reason}. "
                "Rebuild (pip install -e .) or set GBNFKIT_PURE=1; see CONTRIBUTING.md.",
                RuntimeWarning,
                stacklevel=3,
            )
    return choice


def status() -> dict[str, bool]:
    """``module -> compiled`` for every module in :data:`COMPILED` (imports them)."""
    out = {}
    for name in COMPILED:
        module = importlib.import_module(name)
        origin = getattr(module, "__file__", None) or ""
        out[name] = origin.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))
    return out


CHOICE: Choice | None = None
if __name__ == "gbnfkit._native":
    CHOICE = _install(os.path.dirname(os.path.abspath(__file__)))
