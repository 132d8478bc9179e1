"""The public surface of ``gbnfkit``: ``__all__``, import cost, typing marker."""

from __future__ import annotations

import importlib
import importlib.resources
import inspect
import json
import pkgutil
import subprocess
import sys
import types
import typing
from pathlib import Path

import gbnfkit

if sys.version_info >= (3, 11):
    import tomllib
else:  # a declared dev dependency on Python 3.10 (pyproject.toml)
    import tomli as tomllib

HEAVY = ("transformers", "torch", "pydantic", "tokenizers", "jsonschema")


def test_all_is_sorted_and_unique() -> None:
    names = list(gbnfkit.__all__)
    assert names == sorted(names)
    assert len(names) == len(set(names))


def test_every_public_name_exists_and_is_importable() -> None:
    module = importlib.import_module("gbnfkit")
    for name in gbnfkit.__all__:
        assert hasattr(module, name), name
        namespace: dict[str, object] = {}
        exec(f"from gbnfkit import {name}", namespace)  # noqa: S102 - the import itself is tested
        assert namespace[name] is getattr(module, name)


def _public_packages() -> list[types.ModuleType]:
    """gbnfkit and every public module below it that imports without optional extras."""
    found = [gbnfkit]
    for info in pkgutil.walk_packages(gbnfkit.__path__, "gbnfkit."):
        if any(part.startswith("_") for part in info.name.split(".")):
            continue
        try:
            found.append(importlib.import_module(info.name))
        except ImportError:  # an integration whose extra is not installed
            continue
    return found


def test_public_names_are_not_private_modules() -> None:
    """Every public class and function names the public module that exports it (the
    shallowest one), never the private module that defines it: reprs, tracebacks, docs
    and pickles then show what users import; and typing.get_type_hints still works."""
    checked = 0
    for package in _public_packages():
        for name in getattr(package, "__all__", ()):
            value = getattr(package, name)
            assert not name.startswith("_") or name == "__version__", name
            if not (isinstance(value, type) or inspect.isfunction(value)):
                continue
            module = value.__module__
            assert not any(part.startswith("_") for part in module.split(".")), (name, module)
            assert package.__name__.startswith(module), (name, module, package.__name__)
            home = importlib.import_module(module)
            assert getattr(home, value.__qualname__) is value, (name, module)
            if isinstance(value, type):
                typing.get_type_hints(value)
            checked += 1
    assert checked >= 40


def test_public_classes_pickle_by_their_public_name() -> None:
    import pickle

    grammar = gbnfkit.Grammar.from_gbnf('root ::= "a"')
    for value in (
        gbnfkit.MatchStatus.ACCEPT,
        gbnfkit.SchemaOptions(),
        gbnfkit.GrammarError("bad", line=1, column=2, source="x"),
        grammar.match("a"),
    ):
        data = pickle.dumps(value)
        assert b"gbnfkit._" not in data and b"gbnfkit.engine._" not in data, data[:200]
        again = pickle.loads(data)
        assert type(again) is type(value)


def test_exceptions_share_the_base_class() -> None:
    for name in ("GrammarError", "InputRejected", "LimitError", "SchemaError", "VocabularyError"):
        assert issubclass(getattr(gbnfkit, name), gbnfkit.GbnfkitError)


def test_version_matches_the_installed_distribution() -> None:
    from importlib.metadata import version

    assert gbnfkit.__version__ == version("gbnfkit")


def test_import_does_not_load_heavy_optional_dependencies() -> None:
    code = (
        "import json, sys\n"
        "import gbnfkit, gbnfkit.cli\n"
        f"print(json.dumps(sorted(m for m in {list(HEAVY)!r} if m in sys.modules)))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert json.loads(proc.stdout) == []


def test_py_typed_marker_ships() -> None:
    marker = importlib.resources.files("gbnfkit") / "py.typed"
    assert marker.is_file()
    # and the wheel includes it: setuptools copies only the declared package data
    pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
    config = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    assert "py.typed" in config["tool"]["setuptools"]["package-data"]["gbnfkit"]


def test_modules_the_tests_import_on_old_pythons_are_declared() -> None:
    """tomllib is new in 3.11; on 3.10 these tests import tomli, so [dev] must install it."""
    pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
    config = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    declared = config["project"]["optional-dependencies"]["dev"]
    dev = [d.replace(" ", "").replace('"', "'") for d in declared]
    assert any(d.startswith("tomli") and "python_version<'3.11'" in d for d in dev), dev
